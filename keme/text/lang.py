"""Locale formatting for the two trajectory languages."""

from __future__ import annotations

from datetime import date, datetime, timedelta
from decimal import Decimal

WEEKDAYS = {
    "en": ("Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday"),
    "zh": ("周一", "周二", "周三", "周四", "周五", "周六", "周日"),
}
MONTHS_EN = (
    "January",
    "February",
    "March",
    "April",
    "May",
    "June",
    "July",
    "August",
    "September",
    "October",
    "November",
    "December",
)
CURRENCY = {"en": "USD", "zh": "CNY"}


def weekday(day: date, lang: str) -> str:
    return WEEKDAYS[lang][day.weekday()]


def format_date(day: date, lang: str) -> str:
    """'March 4' / '3月4日' — the form used in dialogue and anchors."""
    if lang == "zh":
        return f"{day.month}月{day.day}日"
    return f"{MONTHS_EN[day.month - 1]} {day.day}"


def period_name(start: date, end: date, lang: str) -> str:
    """What a span of days is called: a calendar month by its name ('April 2026' / '2026年4月'), whole
    months as a month range ('March–May 2026'), any other span by its dates ('Apr 1–15, 2026' /
    '2026年4月1日–15日'), so two spans that differ are never named alike."""
    whole = start.day == 1 and (end + timedelta(days=1)).day == 1
    if whole:
        if lang == "zh":
            last = f"{end.month}月" if end.year == start.year else f"{end.year}年{end.month}月"
            first = f"{start.year}年{start.month}月"
            return first if (start.year, start.month) == (end.year, end.month) else f"{first}–{last}"
        first_en = MONTHS_EN[start.month - 1]
        if (start.year, start.month) == (end.year, end.month):
            return f"{first_en} {start.year}"
        if start.year == end.year:
            return f"{first_en}–{MONTHS_EN[end.month - 1]} {end.year}"
        return f"{first_en} {start.year}–{MONTHS_EN[end.month - 1]} {end.year}"
    if lang == "zh":
        first = f"{start.year}年{start.month}月{start.day}日"
        if start.year != end.year:
            return f"{first}–{end.year}年{end.month}月{end.day}日"
        return f"{first}–{end.day}日" if start.month == end.month else f"{first}–{end.month}月{end.day}日"
    short = [m[:3] for m in MONTHS_EN]
    first = f"{short[start.month - 1]} {start.day}"
    if start.year != end.year:
        return f"{first}, {start.year}–{short[end.month - 1]} {end.day}, {end.year}"
    if start.month == end.month:
        return f"{first}–{end.day}, {end.year}" if start.day != end.day else f"{first}, {end.year}"
    return f"{first}–{short[end.month - 1]} {end.day}, {end.year}"


def format_time(moment: datetime, lang: str) -> str:
    if lang == "zh":
        return f"{moment.hour:02d}:{moment.minute:02d}"
    hour = moment.hour % 12 or 12
    suffix = "AM" if moment.hour < 12 else "PM"
    return f"{hour}:{moment.minute:02d} {suffix}"


def part_of_day(moment: datetime, lang: str) -> str:
    hour = moment.hour
    if lang == "zh":
        return "早上" if hour < 11 else "中午" if hour < 13 else "下午" if hour < 18 else "晚上"
    return "morning" if hour < 12 else "afternoon" if hour < 18 else "evening"


def format_money(amount: Decimal | int | float, lang: str) -> str:
    """'$1,234.50' / '¥1234.50'; whole amounts drop the cents."""
    value = Decimal(str(amount)).quantize(Decimal("0.01"))
    whole = value == value.to_integral_value()
    if lang == "zh":
        return f"¥{int(value)}" if whole else f"¥{value}"
    return f"${int(value):,}" if whole else f"${value:,}"


def format_duration(seconds: int, lang: str) -> str:
    minutes, secs = divmod(seconds, 60)
    if lang == "zh":
        return f"{minutes}分{secs}秒" if minutes else f"{secs}秒"
    return f"{minutes} min {secs} s" if minutes else f"{secs} s"


def join_list(items: list[str], lang: str) -> str:
    if not items:
        return ""
    if len(items) == 1:
        return items[0]
    if lang == "zh":
        return "、".join(items[:-1]) + "和" + items[-1]
    return ", ".join(items[:-1]) + " and " + items[-1]
