"""Dates and durations written in text: the one reader for synthesis, the verifier, the judge and the
importers.

A date may be written 'March 4', 'Mar 4, 2026', '4th of March', '3月4日',
'2026-03-04' or '3/4' (a year left out is the caller's); a duration as the
dialogue writes it, '2 min 5 s' or '2分5秒'. Formatting the other way is
`keme.text.lang`.
"""

from __future__ import annotations

import re
from datetime import date, datetime, timedelta

from keme.text.lang import MONTHS_EN

_MONTHS = {m.lower(): i for i, m in enumerate(MONTHS_EN, start=1)}
_MONTHS |= {name[:3]: i for name, i in list(_MONTHS.items())}
_MONTH_NAMES = "|".join(sorted(_MONTHS, key=len, reverse=True))
_EN_DATE = re.compile(
    r"\b(" + _MONTH_NAMES + r")\.?\s+(\d{1,2})(?!\d)(?:st|nd|rd|th)?(?:,?\s+(\d{4}))?", re.I
)
_EN_DATE_DAY_FIRST = re.compile(
    r"\b(\d{1,2})(?:st|nd|rd|th)?\s+(?:of\s+)?(" + _MONTH_NAMES + r")\b\.?(?:,?\s+(\d{4}))?", re.I
)
_ZH_DATE = re.compile(r"(?:(\d{4})年)?(\d{1,2})月(\d{1,2})[日号]")
_ISO_DATE = re.compile(r"\b(\d{4})-(\d{2})-(\d{2})\b")
_SLASH_DATE = re.compile(r"\b(\d{1,2})/(\d{1,2})(?:/(\d{2,4}))?\b")


def dates_in(text: str, default_year: int) -> list[date]:
    """Dates written as 'March 4', 'Mar 4, 2026', '3月4日', '2026-03-04' or '3/4'."""
    found: list[date] = []

    def add(year: int, month: int, day: int) -> None:
        try:
            found.append(date(year, month, day))
        except ValueError:
            pass

    for m in _ISO_DATE.finditer(text):
        add(int(m.group(1)), int(m.group(2)), int(m.group(3)))
    for m in _EN_DATE.finditer(text):
        add(int(m.group(3) or default_year), _MONTHS[m.group(1).lower()], int(m.group(2)))
    for m in _EN_DATE_DAY_FIRST.finditer(text):
        add(int(m.group(3) or default_year), _MONTHS[m.group(2).lower()], int(m.group(1)))
    for m in _ZH_DATE.finditer(text):
        add(int(m.group(1) or default_year), int(m.group(2)), int(m.group(3)))
    for m in _SLASH_DATE.finditer(text):
        year = m.group(3)
        year_value = int(year) + (2000 if year and len(year) == 2 else 0) if year else default_year
        add(year_value, int(m.group(1)), int(m.group(2)))
    return found


_MONTH_YEAR = re.compile(r"\b(?:" + _MONTH_NAMES + r")\.?\s+\d{4}\b|\d{4}年\d{1,2}月(?!\d)", re.I)


def date_phrases(text: str) -> list[str]:
    """The dates and months as `text` writes them ('May 10', '7 May 2023', '4月11日', 'April 2026'), in
    the order they appear."""
    spans: list[tuple[int, int]] = []
    for pattern in (_ISO_DATE, _EN_DATE, _EN_DATE_DAY_FIRST, _ZH_DATE, _MONTH_YEAR):
        for m in pattern.finditer(text):
            if not any(a <= m.start() < b or m.start() <= a < m.end() for a, b in spans):
                spans.append((m.start(), m.end()))
    return [text[a:b] for a, b in sorted(spans)]


def parse_display_date(text: str, sent: datetime) -> date | None:
    """The first date in `text`, as meant by a message sent at `sent`: 'January 3' written in December is next
    year's."""
    found = dates_in(text, sent.year)
    if not found:
        return None
    day = found[0]
    if day < sent.date() - timedelta(days=180):
        day = day.replace(year=day.year + 1)
    return day


_DURATION_EN = re.compile(r"(?:(\d+)\s*min)?\s*(?:(\d+)\s*s)?")
_DURATION_ZH = re.compile(r"(?:(\d+)分)?(?:(\d+)秒)?")


def parse_duration(text: str) -> int | None:
    """Seconds of the first duration written '2 min 5 s' / '2分5秒' (either part may be left out), or None."""
    for pattern in (_DURATION_ZH, _DURATION_EN):
        for match in pattern.finditer(text):
            if match.group(1) or match.group(2):
                return int(match.group(1) or 0) * 60 + int(match.group(2) or 0)
    return None


def strip_dates(text: str) -> str:
    """`text` with its dates blanked out, so that the numbers left in it are amounts and counts, not days."""
    text = re.sub(r"\d{4}-\d{2}-\d{2}", " ", text)
    text = re.sub(r"(?:\d{4}年)?\d{1,2}月\d{1,2}[日号]?|\d{4}年\d{1,2}月", " ", text)
    text = re.sub(
        r"\b(?:Jan|Feb|Mar|Apr|May|Jun|Jul|Aug|Sep|Oct|Nov|Dec)[a-z]*\.?\s+\d{1,2}(?:,\s*\d{4})?", " ", text
    )
    text = re.sub(
        r"\b(?:January|February|March|April|May|June|July|August|September|October|November|December)\s+\d{4}",
        " ",
        text,
    )
    return text
