"""When the life changes of a trajectory happen: which are picked, which chapter holds each, and what one
brings with it (a move to another city brings a new job; a second career change waits; a promotion only
where the persona's career ladder goes up). Split from the planner along the lifecycle seam: the rules
are the catalog's (keme.world.lifecycle), applied through keme.synth.lifecycle.
"""

from __future__ import annotations

import random
from datetime import date, timedelta

from keme.models import Event, Persona
from keme.models.catalog import CHANGES
from keme.synth import lifecycle
from keme.synth.context import PlanContext

FOLLOW_UP_ONLY = frozenset({"commute_change", "gym_change"})
BIG_CHANGES = frozenset({"job_change", "relocate"})
MIN_CHANGE_DAYS = 7  # shorter chapters get no life change
CAREER_CHANGES = ("job_change", "promotion")
CAREER_GAP_DAYS = 60  # the least time between two career changes (a new job, a promotion)


def schedule_changes(persona: Persona, chapters: list[Event], ctx: PlanContext, rng: random.Random) -> None:
    """Pick the life changes of the trajectory and spread them over the chapters."""
    months = (persona.end - persona.start).days / 30.4
    count = max(1, round(ctx.cfg.changes.per_month * months)) if ctx.cfg.changes.allowed else 0
    pool = [c for c in ctx.cfg.changes.allowed if c not in FOLLOW_UP_ONLY]
    pool = [c for c in pool if all(not persona.attribute(k).versions for k in CHANGES[c].requires_absent)]
    life = ctx.catalog.lifecycle
    if not lifecycle.can_promote(life, persona.value_at("career.job_title", persona.start)):
        pool = [c for c in pool if c != "promotion"]
    rng.shuffle(pool)
    chosen = lifecycle.pair_relocation(pool[:count])
    slots: list[list[str]] = [[] for _ in chapters]
    for i, change in enumerate(chosen):
        position = (i + rng.uniform(0.15, 0.85)) * len(chapters) / max(1, len(chosen))
        index = _long_enough(chapters, min(len(chapters) - 1, int(position)))
        while (
            change in BIG_CHANGES
            and any(c in BIG_CHANGES for c in slots[index])
            and index + 1 < len(chapters)
        ):
            index += 1
        slots[index].append(change)
    lifecycle.place_job_with_move(slots, lambda i: holds_changes(chapters[i]))
    _pace_career(chapters, slots)
    for chapter, changes in zip(chapters, slots):
        chapter.params["changes"] = ",".join(changes)


def _pace_career(chapters: list[Event], slots: list[list[str]]) -> None:
    """A second career change (a job change, a promotion) goes to the first chapter that starts
    CAREER_GAP_DAYS after the chapter of the first ends, or is dropped: titles do not change every month."""
    placed = [(i, c) for i, names in enumerate(slots) for c in names if c in CAREER_CHANGES]
    if len(placed) < 2:
        return
    (first, _), (index, name) = placed[0], placed[1]
    slots[index].remove(name)
    gap = timedelta(days=CAREER_GAP_DAYS)
    later = [
        k
        for k in range(index, len(chapters))
        if chapters[k].start - chapters[first].end >= gap and holds_changes(chapters[k])
    ]
    if later:
        slots[later[0]].append(name)


def holds_changes(chapter: Event) -> bool:
    """A chapter of a few days (a trajectory starting on the 30th) has no room for a change's moments."""
    return (chapter.end.date() - chapter.start.date()).days + 1 >= MIN_CHANGE_DAYS


def _long_enough(chapters: list[Event], index: int) -> int:
    """`index`, or the nearest chapter that holds changes (later ones first)."""
    for step in range(len(chapters)):
        for candidate in (index + step, index - step):
            if 0 <= candidate < len(chapters) and holds_changes(chapters[candidate]):
                return candidate
    return index


def follow_up_due(cause: Event, ctx: PlanContext) -> date:
    """The last day a change that follows `cause` may take: half the catalog's relocation window after it."""
    return (cause.end + timedelta(days=ctx.catalog.lifecycle.relocation_window // 2)).date()


def due_dates(chapter: Event) -> list[tuple[str, date]]:
    """The changes a chapter was handed as follow-ups, each with the last day it may end."""
    return [
        (name, date.fromisoformat(day))
        for name, _, day in (p.partition("=") for p in chapter.params.get("_due", "").split(",") if p)
    ]


def with_due(chapter: Event, name: str, due: date) -> str:
    """The chapter's `_due` param (read by `due_dates`) with `name` due on `due`."""
    return ",".join(f"{k}={v.isoformat()}" for k, v in (dict(due_dates(chapter)) | {name: due}).items())
