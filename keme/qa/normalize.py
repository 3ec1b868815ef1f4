"""Parsing and normalising values in text: money, numbers, dates, entities.

Shared by QA synthesis (to state canonical values), the verifier (to re-derive
them from messages) and the rule judge (to read them back from answers).
"""

from __future__ import annotations

import re
import unicodedata
from datetime import date
from decimal import Decimal, InvalidOperation

_MONEY = re.compile(r"[$¥￥]\s?(\d[\d,]*(?:\.\d+)?)|(\d[\d,]*(?:\.\d+)?)\s?(?:元|块|dollars?|USD|CNY|RMB)")
_NUMBER = re.compile(r"-?\d[\d,]*(?:\.\d+)?")
_MONTHS = {m.lower(): i for i, m in enumerate(
    ("January", "February", "March", "April", "May", "June", "July", "August", "September", "October",
     "November", "December"), start=1)}
_MONTHS |= {name[:3]: i for name, i in list(_MONTHS.items())}
_MONTH_NAMES = "|".join(sorted(_MONTHS, key=len, reverse=True))
_EN_DATE = re.compile(r"\b(" + _MONTH_NAMES + r")\.?\s+(\d{1,2})(?!\d)(?:st|nd|rd|th)?(?:,?\s+(\d{4}))?", re.I)
_EN_DATE_DAY_FIRST = re.compile(r"\b(\d{1,2})(?:st|nd|rd|th)?\s+(?:of\s+)?(" + _MONTH_NAMES + r")\b\.?(?:,?\s+(\d{4}))?", re.I)
_ZH_DATE = re.compile(r"(?:(\d{4})年)?(\d{1,2})月(\d{1,2})[日号]")
_ISO_DATE = re.compile(r"\b(\d{4})-(\d{2})-(\d{2})\b")
_SLASH_DATE = re.compile(r"\b(\d{1,2})/(\d{1,2})(?:/(\d{2,4}))?\b")


def parse_money(text: str) -> Decimal | None:
    """The first amount written with a currency sign or word: '$1,234.50' -> 1234.50."""
    match = _MONEY.search(text)
    if not match:
        return None
    raw = (match.group(1) or match.group(2)).replace(",", "")
    try:
        return Decimal(raw).quantize(Decimal("0.01"))
    except InvalidOperation:
        return None


def numbers_in(text: str) -> list[Decimal]:
    """All numbers in `text`, including Chinese numerals for small counts."""
    found = []
    for raw in _NUMBER.findall(text):
        try:
            found.append(Decimal(raw.replace(",", "")))
        except InvalidOperation:
            continue
    found += [Decimal(v) for v in _zh_numbers(text)]
    return found


_ZH_DIGITS = {"零": 0, "一": 1, "二": 2, "两": 2, "三": 3, "四": 4, "五": 5, "六": 6, "七": 7, "八": 8, "九": 9}


def _zh_numbers(text: str) -> list[int]:
    """Chinese numerals up to 99 ('十二', '二十', '三十五')."""
    values = []
    counters = "天次个晚元块页人岁周月年家件本部位场趟"
    pattern = rf"[零一二两三四五六七八九]?十[一二三四五六七八九]?|[零一二两三四五六七八九](?=[{counters}])"
    for match in re.finditer(pattern, text):
        token = match.group(0)
        if "十" in token:
            tens, _, ones = token.partition("十")
            values.append((_ZH_DIGITS.get(tens, 1) if tens else 1) * 10 + (_ZH_DIGITS.get(ones, 0) if ones else 0))
        else:
            values.append(_ZH_DIGITS[token])
    return values


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


def norm_text(text: str) -> str:
    """Case-, width- and punctuation-insensitive form for containment checks."""
    text = unicodedata.normalize("NFKC", text).casefold()
    text = re.sub(r"[\s\W_]+", " ", text)
    return text.strip()


def contains(haystack: str, needle: str) -> bool:
    needle_n = norm_text(needle)
    return bool(needle_n) and needle_n in norm_text(haystack)
