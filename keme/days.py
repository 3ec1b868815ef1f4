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


# How far a reader may put the day parts' borders from ours: lunch at 12:40 is "midday" to some, 17:30
# "evening" to others
BORDER_SLACK = timedelta(hours=1)


def _block_shifted(moment: datetime, shift: timedelta) -> Block | None:
    """The block of `moment` with the borders between blocks moved later by `shift` (earlier where
    negative); the waking day's own ends stay where they are."""
    if block_of(moment) is None:
        return None
    clock = moment - shift
    if clock.date() < moment.date() or clock.time() < BLOCK_HOURS["morning"][0]:
        return "morning"
    if clock.date() > moment.date() or clock.time() > BLOCK_HOURS["evening"][1]:
        return "evening"
    return block_of(clock)


def _readings(times: list[datetime]) -> list[Counter[Block]]:
    """The block counts a careful reader might make of `times`: by chat or by day, each with the borders
    where we put them or an hour either way."""
    counts = []
    for shift in (-BORDER_SLACK, timedelta(0), BORDER_SLACK):
        placed = [(m.date(), b) for m in times if (b := _block_shifted(m, shift)) is not None]
        counts.append(Counter(b for _, b in placed))
        counts.append(Counter(b for _, b in set(placed)))
    return counts


def steady_block(chosen: list[datetime], every: list[datetime]) -> Block | None:
    """The block that is a habit however a careful reader counts the chats she opened herself (`chosen`):
    more than half of them and clearly ahead (clear_leader), and still clearly ahead counted by days rather
    than chats and with the borders between blocks moved by an hour either way. Counted over every session
    (`every`: those a notification opened keep the app's hour) it must still come first under each of those
    readings, so that a reader who counts every chat does not name another block. A habit that holds only
    on our borders and our way of counting is none a reader would agree with: None then."""
    usual = clear_leader(Counter(block_of(m) for m in chosen))
    if usual is None:
        return None
    for counts, lead in [(c, clear_lead) for c in _readings(chosen)] + [
        (c, _ahead) for c in _readings(every)
    ]:
        (top, most), (_, runner_up) = (counts.most_common(2) + [(None, 0)] * 2)[:2]
        if top != usual or not lead(most, runner_up):
            return None
    return usual


def _ahead(top: int, other: int) -> bool:
    return top > other


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
