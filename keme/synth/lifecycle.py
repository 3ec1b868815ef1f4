"""Generation obeys the catalog's lifecycles (keme.world.lifecycle): what the planner picks and which lines
the realizer may draw.

The planner asks here for a project no other episode had (in its season), occasions a person has not had
yet, a promotion that climbs the persona's career ladder, and a schedule of changes in which a move to
another city comes with a new job. The realizer asks a `LifeMemory` (what the persona has said of each
cued event so far) whether a line may be said at a moment: yearly things in their season and as often as
a year has them, incidents at their rate and, once told, only as a repeat, thanks for a move only after
one, "take today off" only on a working day.
"""

from __future__ import annotations

import functools
import random
import re
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from datetime import date, datetime, time, timedelta
from typing import TYPE_CHECKING

from keme.models import Event, Persona, Session
from keme.world.catalog import Catalog
from keme.world.check.calendar import holiday_word_off
from keme.world.cues import Cues, load_cues
from keme.world.lifecycle import (
    After,
    Lifecycle,
    Once,
    Recurring,
    Workday,
    Yearly,
    changed_within,
    day_off,
    in_season,
    season_year,
    yearly_fits,
)

if TYPE_CHECKING:
    from keme.synth.state import Trajectory

SAME_TIME = timedelta(days=14)
"""Mentions of one event this close to the first are the same occurrence (a symptom and its follow-up)."""


# ---------------------------------------------------------------- the planner's choices
def project_for(
    rng: random.Random,
    events: Iterable[Event],
    life: Lifecycle,
    pool: Sequence[str],
    when: datetime,
    reserve: int = 0,
    until: datetime | None = None,
) -> str | None:
    """A project for an episode from `when` to `until`: in its season on both (a one-moment episode may
    happen on any day of its window, and its day is when the project is begun), and one no other event
    names (a project is delivered once; a promotion's project counts, whatever moment its episode shrank
    to). `reserve` all-year projects are left for the promotions still to plan. None when no project is
    left: the caller plans something else."""
    ends = {when.date(), (until or when).date()}
    fits = [
        p for p in pool if (rule := life.project(p)) is None or all(in_season(rule.season, d) for d in ends)
    ]
    taken = {event.params["project"] for event in events if event.params.get("project")}
    fresh = [p for p in fits if p not in taken]
    if reserve and sum(1 for p in fresh if life.project(p) is None) <= reserve:
        fresh = [p for p in fresh if life.project(p) is not None]
    return rng.choice(fresh) if fresh else None


def may_name(text: str, day: date, life: Lifecycle, persona: Persona) -> bool:
    """Whether a detail (an occasion, a holiday) may be said on `day` by its words alone: the realizer's
    gate (`line_gate`) of a persona who has said nothing yet. 中秋团圆饭 is said from 75 days before 中秋
    to 7 after (the lifecycle and calendar checks), whatever month the episode falls in."""
    return line_gate(LifeMemory(), life, persona, datetime.combine(day, time(12)))(text)


def named_throughout(text: str, first: date, last: date, life: Lifecycle, persona: Persona) -> bool:
    """Whether `text` may be said on every day of [first, last] (an episode's window: its sessions may
    fall on any of them)."""
    days = (first + timedelta(days=n) for n in range((last - first).days + 1))
    return all(may_name(text, day, life, persona) for day in days)


def details_hold(params: dict[str, str], life: Lifecycle, persona: Persona) -> Callable[[date], bool] | None:
    """Whether an episode with these details can happen on a day, where they bind it to a time of year: a
    seasonal project in its season, an occasion or a holiday that names a holiday near that holiday. None
    when nothing binds it (most episodes): the planner's fallbacks may then move a moment anywhere in its
    chapter, which once put a 618 project's only session after 618 and a 中秋 dinner 12 days after 中秋."""
    rule = life.project(params.get("project", ""))
    names = [params[key] for key in ("occasion", "holiday") if params.get(key)]
    if rule is None and not any(
        _carries_cue(n, life) or _carries_holiday(n, load_cues(persona.language)) for n in names
    ):
        return None

    @functools.cache
    def holds(day: date) -> bool:
        in_time = rule is None or in_season(rule.season, day)
        return in_time and all(may_name(name, day, life, persona) for name in names)

    return holds


def promotions_ahead(events: Iterable[Event]) -> int:
    """Promotions the chapters schedule that have no episode yet (each needs a project of its own)."""
    events = list(events)
    scheduled = sum(e.params.get("changes", "").split(",").count("promotion") for e in events if e.depth == 0)
    planned = sum(1 for e in events if e.change == "promotion")
    return max(0, scheduled - planned)


def reused_project(events: Iterable[Event], pool: Sequence[str]) -> str:
    """The project named longest ago: only for a promotion when every project is taken (the reserve of
    `project_for` keeps this from happening in a trajectory of a year; the checker names the repeat)."""
    last: dict[str, datetime] = {}
    for event in events:
        if name := event.params.get("project"):
            last[name] = max(last.get(name, event.start), event.start)
    return min(pool, key=lambda p: (last.get(p, datetime.min), p))


def once_held(events: Iterable[Event], life: Lifecycle, person: str) -> set[str]:
    """The once-rules `person` already had an occasion of: a second launch party contradicts the first."""
    held = set()
    for event in events:
        if event.kind == "social" and event.params.get("person") == person:
            rule = life.once_for(event.params.get("occasion", ""))
            if rule is not None:
                held.add(rule.name)
    return held


def occasions_of(events: Iterable[Event], person: str) -> list[tuple[str, date]]:
    """(occasion, day) of each of `person`'s occasions planned so far, whenever they fall."""
    return [
        (event.params["occasion"], event.start.date())
        for event in events
        if event.kind == "social" and event.params.get("person") == person and event.params.get("occasion")
    ]


def in_life_order(life: Lifecycle, occasion: str, day: date, had: Iterable[tuple[str, date]]) -> bool:
    """Whether `occasion` on `day` keeps the person's life events in order with the ones they `had` (an
    engagement party not after their wedding anniversary; episodes are planned out of time order, so
    later ones count too)."""
    return all(life.out_of_order((occasion, day), other) is None for other in had)


def open_occasion(life: Lifecycle, occasion: str, held: set[str]) -> bool:
    rule = life.once_for(occasion)
    return rule is None or rule.name not in held


def promotion_title(
    rng: random.Random, life: Lifecycle, current: str | None, avoid: Iterable[str]
) -> str | None:
    """A title higher on a ladder `current` stands on (not one of `avoid`); None when there is none."""
    if current is None:
        return None
    options = life.promotions_from(current)
    options = [t for t in options if t not in set(avoid)] or options
    return rng.choice(options) if options else None


def can_promote(life: Lifecycle, title: str | None) -> bool:
    return title is not None and bool(life.promotions_from(title))


def pair_relocation(chosen: list[str]) -> list[str]:
    """The changes to schedule, with a move to another city's consequence: a new job goes with it (no
    promotion at the job left behind in the same year). Like the new commute a move brings, the job
    change comes on top of the changes a config allows."""
    if "relocate" not in chosen:
        return chosen
    kept = [c for c in chosen if c != "promotion"]
    return kept if "job_change" in kept else [*kept, "job_change"]


def place_job_with_move(slots: list[list[str]], holds: Callable[[int], bool]) -> None:
    """Put the job change in the chapter right after the move's (or right before it, when the move is in
    the last chapter that holds changes): the new job is in the new city."""
    move = next((i for i, names in enumerate(slots) if "relocate" in names), None)
    job = next((i for i, names in enumerate(slots) if "job_change" in names), None)
    if move is None or job is None or abs(job - move) == 1:
        return
    later = [i for i in range(move + 1, len(slots)) if holds(i)]
    earlier = [i for i in range(move - 1, -1, -1) if holds(i)]
    target = (later or earlier or [job])[0]
    slots[job].remove("job_change")
    slots[target].append("job_change")


# ---------------------------------------------------------------- the realizer's gate
@dataclass
class LifeMemory:
    """When the persona has said each cued event so far (rule name -> times); catches up on the sessions
    realized since it last looked, so a resumed trajectory rebuilds it from its sessions."""

    said: dict[str, list[datetime]] = field(default_factory=dict)
    seen: int = 0

    def catch_up(self, sessions: Sequence[Session], life: Lifecycle) -> None:
        for session in sessions[self.seen :]:
            for message in session.messages:
                if message.role != "user" or not _any_cue(life).search(message.content):
                    continue
                for rule in life.cued:
                    if rule.said_in(message.content):
                        self.said.setdefault(rule.name, []).append(message.timestamp)
        self.seen = len(sessions)

    def occurrences(self, name: str) -> list[datetime]:
        """First mentions of each occurrence: mentions within SAME_TIME of one are that one."""
        starts: list[datetime] = []
        for moment in sorted(self.said.get(name, [])):
            if not starts or moment - starts[-1] > SAME_TIME:
                starts.append(moment)
        return starts

    def allows(self, line: str, when: datetime, persona: Persona, lang: str, life: Lifecycle) -> bool:
        """Whether a user line (a template) may be said at `when`, by every rule whose cue it carries."""
        if not _carries_cue(line, life):
            return True
        return all(self._allows(rule, line, when, persona, lang) for rule in life.cued if rule.said_in(line))

    def _allows(self, rule: object, line: str, when: datetime, persona: Persona, lang: str) -> bool:
        past = [t for t in self.occurrences(rule.name) if t <= when]  # type: ignore[attr-defined]
        ongoing = bool(past) and when - past[-1] <= SAME_TIME
        if isinstance(rule, Yearly):
            if not yearly_fits(rule, when.date(), persona.country, lang):
                return False
            if rule.per_year and not ongoing and rule.season is not None:
                year = season_year(rule.season, when.date())
                return sum(season_year(rule.season, t.date()) == year for t in past) < rule.per_year
            return True
        if isinstance(rule, Recurring):
            if ongoing:  # the first occurrence, told as new, is not later told as a repeat of itself
                return len(past) > 1 or not rule.told_again(line)
            recent = [t for t in past if when - t < timedelta(days=365)]
            if len(recent) >= rule.per_year or (past and when - past[-1] < timedelta(days=rule.gap_days)):
                return False
            # the first told in the trajectory is not "again, the second time"; a later one is
            return rule.told_again(line) if past else not rule.told_again(line)
        if isinstance(rule, After):
            dimension, name = rule.attribute.split(".", 1)
            attribute = persona.dimensions.get(dimension, {}).get(name)
            versions = [(v.valid_from, v.value) for v in attribute.versions] if attribute else []
            return changed_within(versions, when - timedelta(days=rule.within), when)
        if isinstance(rule, Workday):
            return not day_off(when.date(), persona.country)
        if isinstance(rule, Once):
            return not past or ongoing
        return True


def gate_for(traj: Trajectory, catalog: Catalog, when: datetime) -> Callable[[str], bool]:
    """The realizer's test of a user line at `when` (the session's start) for `traj`'s persona: the
    catalog's lifecycle rules, and the holiday words the calendar check holds to their season."""
    memory = traj.lifecycle
    memory.catch_up(traj.sessions, catalog.lifecycle)
    return line_gate(memory, catalog.lifecycle, traj.persona, when)


def line_gate(memory: LifeMemory, life: Lifecycle, persona: Persona, when: datetime) -> Callable[[str], bool]:
    """Whether a user line (or a pool value) may be said at `when`: no holiday word far from its holiday
    (keme.world.check.calendar.holiday_word_off, the checker's own test), and every lifecycle rule whose cue
    it carries allows it."""
    lang = persona.language
    cues = load_cues(lang)

    def allows(line: str) -> bool:
        if _carries_holiday(line, cues) and holiday_word_off(line, when.date(), persona.country, lang, cues):
            return False
        return memory.allows(line, when, persona, lang, life)

    return allows


def gated_pools(
    pools: dict[str, list[str]], life: Lifecycle, allows: Callable[[str], bool], lang: str
) -> dict[str, list[str]]:
    """`pools` without the values `allows` refuses now ("春节前的年货大促" in April), a pool never emptied:
    a line's words come from its pools too."""
    out = pools
    for name, values in _cued_values(pools, life, lang).items():
        kept = [v for v in pools[name] if v not in values or allows(v)]
        if kept and len(kept) < len(pools[name]):
            out = dict(out) if out is pools else out
            out[name] = kept
    return out


_CUED: dict[tuple[int, int, str], dict[str, set[str]]] = {}


def _cued_values(pools: dict[str, list[str]], life: Lifecycle, lang: str) -> dict[str, set[str]]:
    """The pool values that carry a lifecycle cue or a holiday word, by pool (found once per pools and
    rules)."""
    key = (id(pools), id(life), lang)
    found = _CUED.get(key)
    if found is None:
        pattern, cues = _any_cue(life), load_cues(lang)
        found = {
            n: {v for v in vs if pattern.search(v) or _carries_holiday(v, cues)} for n, vs in pools.items()
        }
        found = _CUED[key] = {n: vs for n, vs in found.items() if vs}
    return found


def _carries_holiday(line: str, cues: Cues) -> bool:
    """Whether a line holds any holiday word at all (most do not: they are let through at once)."""
    return bool(_holiday_words(tuple(p for cue in cues.holidays for p in cue.patterns)).search(line))


@functools.lru_cache(maxsize=16)
def _holiday_words(patterns: tuple[str, ...]) -> re.Pattern[str]:
    """One pattern of every holiday word, keyed by the words themselves (never by an object's id)."""
    return re.compile("|".join(f"(?:{w})" for w in patterns or ("(?!)",)), re.IGNORECASE)


_ANY: dict[int, re.Pattern[str]] = {}
_CARRIES: dict[tuple[int, str], bool] = {}


def _carries_cue(line: str, life: Lifecycle) -> bool:
    """Whether a template carries any cue, looked up once per template (the bank is drawn from again and
    again)."""
    key = (id(life), line)
    found = _CARRIES.get(key)
    if found is None:
        found = _CARRIES[key] = bool(_any_cue(life).search(line))
    return found


def _any_cue(life: Lifecycle) -> re.Pattern[str]:
    """One pattern of every cue: most lines carry none and are let through at once."""
    found = _ANY.get(id(life))
    if found is None:
        cues = [c for rule in life.cued for c in rule.cues] or ["(?!)"]
        found = _ANY[id(life)] = re.compile("|".join(f"(?:{c})" for c in cues), re.IGNORECASE)
    return found
