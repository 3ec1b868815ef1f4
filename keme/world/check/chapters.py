"""Chapters (depth-0 events) are named for the months they span, each title once, one after another;
a chapter titled for a whole month the trajectory covers spans that month."""

from __future__ import annotations

import re
from datetime import date, datetime, timedelta
from itertools import pairwise

from keme.days import add_months
from keme.world.check.base import Finding, World

RULE = "chapters"


def check(world: World) -> list[Finding]:
    chapters = sorted((e for e in world.view.graph.events if e.depth == 0), key=lambda e: (e.start, e.id))
    out = []
    titles: dict[str, str] = {}
    for chapter in chapters:
        if chapter.title in titles:
            out.append(
                world.finding(
                    RULE,
                    [],
                    f"chapters {titles[chapter.title]} and {chapter.id} share the title {chapter.title!r}",
                )
            )
        titles.setdefault(chapter.title, chapter.id)
        out += _months(world, chapter.id, chapter.title, chapter.start, chapter.end)
    for a, b in pairwise(chapters):
        if b.start <= a.end:
            out.append(
                world.finding(RULE, [], f"chapters {a.id} (to {a.end}) and {b.id} (from {b.start}) overlap")
            )
    return out


def _month_name(world: World, month: int) -> str:
    name = world.cues.months[month - 1]
    return name.capitalize() if world.view.lang == "en" else name


def _said_months(world: World, title: str) -> set[int]:
    """The months a title names: English month names (full or short), or Chinese "4月"; a range between
    two of them ("April–June 2026", "2026年4月–6月") names every month from the first to the last."""
    if world.view.lang == "zh":
        named = [int(n) for n in re.findall(r"(?<!\d)(1[0-2]|[1-9])月", title)]
    else:
        words = re.findall(r"[a-z]+", title.casefold())
        named = [m for m in (world.cues.month_of(w) for w in words) if m is not None]
    said = set(named)
    if len(named) == 2 and re.search(r"[–—-]", title):
        first, last = named
        said |= {(first - 1 + k) % 12 + 1 for k in range((last - first) % 12 + 1)}
    return said


def _said_days(world: World, title: str) -> tuple[int, int] | None:
    """The first and last day of the month a title names, when it names them."""
    if world.view.lang == "zh":
        found = re.search(r"(\d{1,2})日\s*[–—-]\s*(?:\d{1,2}月)?(\d{1,2})日", title)
    else:
        found = re.search(r"[a-z]+\.? (\d{1,2})\s*[–—-]\s*(?:[a-z]+\.? )?(\d{1,2})\b", title.casefold())
    return (int(found.group(1)), int(found.group(2))) if found else None


def _months(world: World, chapter_id: str, title: str, start: datetime, end: datetime) -> list[Finding]:
    spanned = []
    month = date(start.year, start.month, 1)
    while month <= end.date():
        spanned.append(month)
        month = add_months(month, 1)
    said = _said_months(world, title)
    out = []
    missing = [m for m in spanned if m.month not in said]
    if missing:
        out.append(
            world.finding(
                RULE,
                [],
                f"chapter {chapter_id} {title!r} spans {start.date()}–{end.date()} but does not name "
                + ", ".join(_month_name(world, m.month) for m in missing),
            )
        )
    extra = sorted(said - {m.month for m in spanned})
    if extra:
        out.append(
            world.finding(
                RULE,
                [],
                f"chapter {chapter_id} {title!r} names {', '.join(_month_name(world, m) for m in extra)} "
                f"but spans {start.date()}–{end.date()}",
            )
        )
    days = _said_days(world, title)
    if days is not None:  # a title that names its days ("Apr 1–14, 2026", "2026年4月1日–14日") says its span
        if days != (start.day, end.day):
            out.append(
                world.finding(
                    RULE,
                    [],
                    f"chapter {chapter_id} {title!r} names days {days[0]}–{days[1]} but spans "
                    f"{start.date()}–{end.date()}",
                )
            )
        return out
    if len(spanned) == 1 and said == {spanned[0].month}:
        # the part of the month the trajectory covers; a chapter titled for the month spans all of it
        persona = world.view.persona
        first = max(spanned[0], persona.start.date())
        last = min(add_months(spanned[0], 1) - timedelta(days=1), persona.end.date())
        if (start.date() - first).days > 1 or (last - end.date()).days > 1:
            out.append(
                world.finding(
                    RULE,
                    [],
                    f"chapter {chapter_id} {title!r} is titled for the month but covers only "
                    f"{start.date()}–{end.date()} of its {first}–{last}",
                )
            )
    return out
