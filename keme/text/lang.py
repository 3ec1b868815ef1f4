"""Locale formatting for the two trajectory languages."""

from __future__ import annotations

from datetime import date, datetime
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
