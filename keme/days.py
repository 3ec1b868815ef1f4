"""Days, day parts and holidays: the calendar that events must follow.

A day has three blocks (morning, afternoon, evening). A leaf event occupies one
block, so two sessions of a persona never overlap.
"""

from __future__ import annotations

import functools
from collections import Counter
from datetime import date, datetime, time, timedelta
from typing import Literal, TypeVar

import holidays as holiday_lib

Block = Literal["morning", "afternoon", "evening"]
BLOCKS: tuple[Block, ...] = ("morning", "afternoon", "evening")
BLOCK_HOURS: dict[Block, tuple[time, time]] = {
    "morning": (time(7, 0), time(11, 59, 59)),
    "afternoon": (time(12, 0), time(17, 59, 59)),
    "evening": (time(18, 0), time(23, 30)),
}
# the hours a persona is awake and may chat: from the first block's start to the last one's end
WAKING: tuple[time, time] = (BLOCK_HOURS["morning"][0], BLOCK_HOURS["evening"][1])
Slot = tuple[date, Block]
T = TypeVar("T")
# "Usually" / "most often": at least USUAL_MIN times, and clearly more often than anything else
USUAL_MIN = 3


def clear_lead(top: int, other: int) -> bool:
    """Whether `top` times (chats in a block, payments in a category) against `other` for the runner-up is a
    habit, not noise: at least two more and 40 % more (9 against 7 is no habit to anyone reading)."""
    return top >= USUAL_MIN and top - other >= 2 and top >= 1.4 * other


def clear_leader(counts: Counter[T]) -> T | None:
    """The value counted most, where it is a habit: more than half of everything counted (`majority`)
    and clearly ahead of the runner-up (`clear_lead`); else None.

    "Usually" on a plurality is not what anyone means by it: 43 % of the chats in the evening against
    30 % in the morning is no habit, and a reader who counts would not agree with the gold."""
    (top, most), (_, runner_up) = (counts.most_common(2) + [(None, 0)] * 2)[:2]
    return top if majority(most, sum(counts.values())) and clear_lead(most, runner_up) else None


def majority(top: int, total: int) -> bool:
    """Whether `top` of `total` is more than half: the least a "usually" can rest on."""
    return 2 * top > total


def block_of(moment: datetime) -> Block | None:
    for block, (start, end) in BLOCK_HOURS.items():
        if start <= moment.time() <= end:
            return block
    return None


def block_window(day: date, block: Block) -> tuple[datetime, datetime]:
    start, end = BLOCK_HOURS[block]
    return datetime.combine(day, start), datetime.combine(day, end)


HOLIDAY_LANGUAGE = {"en": "en_US", "zh": "zh_CN"}


@functools.cache
def _holidays(country: str, year: int, lang: str) -> dict[date, str]:
    try:
        table = holiday_lib.country_holidays(country, years=year, language=HOLIDAY_LANGUAGE[lang])
    except NotImplementedError:
        table = holiday_lib.country_holidays(country, years=year)
    return dict(table)


def holiday_name(day: date, country: str, lang: str = "en") -> str | None:
    return _holidays(country, day.year, lang).get(day)


def holidays_between(start: date, end: date, country: str, lang: str = "en") -> list[tuple[date, str]]:
    found: list[tuple[date, str]] = []
    for year in range(start.year, end.year + 1):
        found += [(d, n) for d, n in _holidays(country, year, lang).items() if start <= d <= end]
    return sorted(found)


def is_workday(day: date, country: str) -> bool:
    return day.weekday() < 5 and holiday_name(day, country) is None


def days(start: date, end: date) -> list[date]:
    return [start + timedelta(n) for n in range((end - start).days + 1)]


def add_months(day: date, months: int) -> date:
    month = day.month - 1 + months
    year = day.year + month // 12
    month = month % 12 + 1
    return date(year, month, 1) if day.day == 1 else date(year, month, min(day.day, 28))


def quarters_within(start: date, end: date) -> list[tuple[date, date]]:
    """The calendar quarters wholly inside [start, end], as (first day, last day): a quarter's payments
    and chats show a habit or a total where a month's few do not."""
    found = []
    quarter = date(start.year, 3 * ((start.month - 1) // 3) + 1, 1)
    while quarter <= end:
        following = add_months(quarter, 3)
        last = following - timedelta(days=1)
        if start <= quarter and last <= end:
            found.append((quarter, last))
        quarter = following
    return found


def month_windows(start: datetime, end: datetime) -> list[tuple[datetime, datetime]]:
    """The calendar months of [start, end], the first and last clipped to it (anchors and chapters follow
    them)."""
    windows = []
    cursor = start.date()
    while datetime.combine(cursor, time()) <= end:
        nxt = add_months(cursor.replace(day=1), 1)
        windows.append(
            (datetime.combine(cursor, time()), min(datetime.combine(nxt, time()) - timedelta(seconds=1), end))
        )
        cursor = nxt
    return windows
