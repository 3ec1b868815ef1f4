"""An episode's moments: which leaf moments it expands into, and the free day block each goes on, in
order, where and when it can happen (level 2 of the event graph; a one-moment episode becomes that leaf
itself). Split from the planner, which plans chapters and their episodes and calls in here.
"""

from __future__ import annotations

import bisect
import itertools
import random
from collections.abc import Callable
from datetime import date, datetime, time, timedelta

from keme.days import BLOCKS, Slot, block_window, days
from keme.errors import NoFit
from keme.models import Event
from keme.models.catalog import CHANGES, EPISODE_KINDS, EpisodeKind
from keme.synth.context import PlanContext
from keme.synth.lifecycle import details_hold
from keme.synth.state import Trajectory
from keme.synth.timing import (
    DEFAULT_TIMING,
    HABIT_REACH_DAYS,
    TIMING,
    block_order,
    candidate_days,
    day_ok,
    slot_key,
    usual_block,
)
from keme.synth.where import own_trip_of
from keme.text import lang as fmt
from keme.text.titles import leaf_title
from keme.world.places import slot_allowed, where
from keme.world.schedule import trip_spans


class NoRoom(NoFit):
    """No free day block is left for a one-moment episode in its window."""


def moments_for(event: Event, rng: random.Random, max_depth: int = 2) -> list[str]:
    """The leaf moments an episode expands into; with max_depth 1 the episode is one moment."""
    if event.change:
        change = CHANGES[event.change]
        return [change.moments[change.update_index]] if max_depth == 1 else list(change.moments)
    kind: EpisodeKind = EPISODE_KINDS[event.kind]
    if max_depth == 1:
        return [rng.choice(kind.moments)]
    return [m for m in kind.moments if m not in kind.optional or rng.random() < 0.6]


def shrink_to_leaf_if_single(
    event: Event,
    traj: Trajectory,
    ctx: PlanContext,
    rng: random.Random,
    own: frozenset[str] = frozenset(),
    not_before: date | None = None,
) -> None:
    """An episode with one moment is a leaf itself: its window becomes one day block, never before
    `not_before` (an episode the reviser adds follows its cause: it may not land in the past)."""
    moments = moments_for(event, rng, ctx.cfg.graph.max_depth)
    if len(moments) != 1:
        event.params["_moments"] = ",".join(moments)
        return
    moment = moments[0]
    lo, hi = event.start.date(), event.end.date()
    parent = traj.events.get(event.parent_id or "")
    # its window, then the rest of its chapter (a commute talk the weekend cannot hold goes to Monday), then
    # the whole chapter; never where the moment cannot happen (an office moment on a Sunday): with no such
    # block left the episode is not planned (NoRoom), as when its days are full
    tries: list[tuple[date, date, dict]] = [(lo, hi, {}), (lo, hi, {"strict": False})]
    if parent is not None and parent.depth == 0:
        chapter = parent.start.date(), parent.end.date()
        tries += [(lo, chapter[1], {"strict": False}), (*chapter, {}), (*chapter, {"strict": False})]
    if not_before is not None:
        tries = [(max(first, not_before), last, how) for first, last, how in tries if last >= not_before]
    slots: list[Slot] = []
    for first, last, how in tries:
        slots = place_moments(traj, [moment], first, last, event, ctx, rng, own, {}, **how)
        if slots:
            break
    if not slots:
        raise NoRoom(
            f"no free day block for {event.id} ({moment}) in {event.start.date()}..{event.end.date()}"
        )
    day, block = slots[0]
    event.params["_episode"] = event.kind
    event.kind = moment
    event.start, event.end = block_window(day, block)


# ---------------------------------------------------------------- episode expansion
def _ranges(moments: list[str], event: Event) -> list[tuple[date, date]]:
    """Allowed day range for each moment, in order."""
    lo, hi = event.start.date(), event.end.date()
    if event.kind == "trip" and "_trip_start" in event.params:
        start, end = (
            date.fromisoformat(event.params["_trip_start"]),
            date.fromisoformat(event.params["_trip_end"]),
        )
        table = {
            "trip_planning": (lo, max(lo, start - timedelta(days=2))),
            "trip_packing": (max(lo, start - timedelta(days=1)), max(lo, start - timedelta(days=1))),
            "trip_during": (start, end),
            "trip_recap": (min(hi, end + timedelta(days=1)), hi),
        }
        return [table[m] for m in moments]
    n = len(moments)
    span = (hi - lo).days + 1
    ranges = []
    for i in range(n):
        first = lo + timedelta(days=(span * i) // n)
        last = lo + timedelta(days=max((span * (i + 1)) // n - 1, (span * i) // n))
        ranges.append((first, last))
    return ranges


def place_moments(
    traj: Trajectory,
    moments: list[str],
    lo: date,
    hi: date,
    event: Event,
    ctx: PlanContext,
    rng: random.Random,
    own: frozenset[str],
    fixed: dict[int, tuple[date, date]],
    strict: bool = True,
    day_rules: bool = True,
) -> list[Slot]:
    """One free day block per moment, in increasing order; own pending anchors' blocks are welcome.

    A moment only goes where and when it can happen (`_allowed`), whatever else is relaxed. Day rules
    (`keme.synth.timing.day_ok`: "the meeting is tomorrow") give way where they must (not `strict`, or no
    `day_rules`); the realizer's presuppositions then keep the lines that would assume them.
    """
    allowed = _allowed(traj, event, ctx)

    ranges = [fixed.get(i, (lo, hi)) for i in range(len(moments))]
    anchor_days = {traj.anchor_slot(a): a for a in own}
    free = free_slots(traj, lo, hi, own)

    def leaves_room(i: int, slot: Slot) -> bool:
        # greedy placement must not paint itself into a corner: the moments after this one need as many free
        # blocks after it (without this, an own anchor on the window's last block took the first moment)
        return len(free) - bisect.bisect_right(free, slot_key(slot)) >= len(moments) - 1 - i

    chosen: list[Slot] = []
    previous: Slot | None = None
    for i, moment in enumerate(moments):
        rule, weights = TIMING.get(moment, DEFAULT_TIMING)
        first, last = ranges[i]
        if previous is not None:
            first = max(first, previous[0])
        if first > last:
            last = first if first <= hi else hi
        found = None
        # an own anchor inside the range: let this moment happen right there (the grounder will assign it)
        anchored = [
            s
            for s in anchor_days
            if first <= s[0] <= last and (previous is None or slot_key(s) > slot_key(previous))
        ]
        if anchored and rng.random() < 0.5:
            found = min(anchored, key=slot_key)
            if found in traj.occupied or not allowed(moment, found) or not leaves_room(i, found):
                found = None
        # strict: anywhere in the moment's range; relaxed: as early as possible, leaving room for the rest
        spread = (last - first).days if strict else min(1, (last - first).days)
        target = first + timedelta(days=rng.randint(0, max(0, spread)))
        passes = (False,) if strict else (False, True)  # relax the day rule only after trying to keep it
        # her usual chat block first, within a day of the day drawn (she waits for the evening she chats
        # in, never long enough to crowd the moments after it); a crowded window (not `strict`) places
        # moments as early as they fit instead
        usual = usual_block(rng, traj.persona.habits, weights) if strict else None
        sweeps = [(usual, passes[0] if day_rules else True)] if usual else []
        sweeps += [(None, relax) for relax in (passes if day_rules else (True,))]
        for only, relax in sweeps:
            if found:
                break
            for day in candidate_days(first, last, target):
                if only and abs((day - target).days) > HABIT_REACH_DAYS:
                    break  # nearest first: every later day is further still
                if not relax and not day_ok(rule, day, traj.persona.country):
                    continue
                for block in (only,) if only else block_order(rng, weights):
                    slot = (day, block)
                    if previous is not None and slot_key(slot) <= slot_key(previous):
                        continue
                    if (
                        traj.slot_free(slot, own_anchors=own)
                        and allowed(moment, slot)
                        and leaves_room(i, slot)
                    ):
                        found = slot
                        break
                if found:
                    break
        if found is None:
            return [] if strict else chosen
        chosen.append(found)
        previous = found
    return chosen


def free_slots(traj: Trajectory, lo: date, hi: date, own: frozenset[str]) -> list[tuple[date, int]]:
    """The keys (`slot_key`) of the free day blocks in [lo, hi], in order (own pending anchors' blocks are
    free)."""
    return [
        slot_key((day, block))
        for day in days(lo, hi)
        for block in BLOCKS
        if traj.slot_free((day, block), own_anchors=own)
    ]


def _fewer(moments: list[str], optional: tuple[str, ...]) -> list[tuple[int, ...]]:
    """Index subsets of `moments` with at least two, the largest first; of one size, those that keep the
    trip itself, then those that drop only optional moments, come first."""
    subsets = [
        keep
        for size in range(len(moments) - 1, 1, -1)
        for keep in itertools.combinations(range(len(moments)), size)
    ]

    def cost(keep: tuple[int, ...]) -> tuple[int, int, int]:
        dropped = [moments[i] for i in range(len(moments)) if i not in keep]
        return -len(keep), sum(where(m) == "trip" for m in dropped), sum(m not in optional for m in dropped)

    return sorted(subsets, key=cost)


def _crowded(
    traj: Trajectory,
    moments: list[str],
    ranges: list[tuple[date, date]],
    episode: Event,
    ctx: PlanContext,
    rng: random.Random,
    own: frozenset[str],
    update_index: int | None,
) -> list[Slot]:
    """The moments of an episode whose window is full, as many as fit: the episode may run on to its
    chapter's end, each moment as early as it fits from its own part of the window, keeping its day rule
    where it can, then on any day; else each in the first block it can happen in (`earliest_slots`). A
    moment never goes where it cannot happen: a fallback that did put a meeting's prep at the office on a
    Sunday. The most that fit, when fewer than the episode needs."""
    lo = episode.start.date()
    chapter_end = traj.events[episode.parent_id].end.date() if episode.parent_id else episode.end.date()
    needed = 2 if update_index is None else max(2, update_index + 1)
    spread = {i: (first, chapter_end) for i, (first, _) in enumerate(ranges)}
    for day_rules in (True, False):
        slots = place_moments(
            traj, moments, lo, chapter_end, episode, ctx, rng, own, spread, strict=False, day_rules=day_rules
        )
        if len(slots) >= needed:
            return slots
    return earliest_slots(traj, moments, lo, chapter_end, episode, ctx, own)


def _allowed(traj: Trajectory, event: Event, ctx: PlanContext) -> Callable[[str, Slot], bool]:
    """Whether a moment of `event` can happen on a day block: where the schedule lets it
    (`keme.world.places.slot_allowed`: not inside a trip unless it can happen anywhere, an office moment on
    a workday, a trip's own moments before, during and after it), on a day its details hold
    (`keme.synth.lifecycle.details_hold`: a seasonal project in its season, a holiday's dinner near the
    holiday). No fallback relaxes these: the data would show the moment where it cannot be."""
    country, trips, own_trip = traj.persona.country, trip_spans(traj.graph.events), own_trip_of(event)
    holds = details_hold(event.params, ctx.catalog.lifecycle, traj.persona)

    def allowed(moment: str, slot: Slot) -> bool:
        on_time = holds is None or holds(slot[0])
        return on_time and slot_allowed(moment, slot[0], slot[1], trips, country, own_trip)

    return allowed


def earliest_slots(
    traj: Trajectory,
    moments: list[str],
    lo: date,
    hi: date,
    event: Event,
    ctx: PlanContext,
    own: frozenset[str],
) -> list[Slot]:
    """Each moment in the first free block of [lo, hi] after the one before it where and when it can happen
    (`_allowed`), whatever its day rule: the longest run of the moments, in order, that any placement in
    [lo, hi] could fit (an earlier block never leaves the moments after it fewer blocks to take)."""
    allowed = _allowed(traj, event, ctx)
    free = iter(
        (day, block)
        for day in days(lo, hi)
        for block in BLOCKS
        if traj.slot_free((day, block), own_anchors=own)
    )
    chosen: list[Slot] = []
    for moment in moments:
        found = next((s for s in free if allowed(moment, s)), None)
        if found is None:
            break
        chosen.append(found)
    return chosen


def expand_episode(episode: Event, traj: Trajectory, ctx: PlanContext, rng: random.Random) -> list[Event]:
    """Plan an episode's leaf moments in their day blocks (anchors are grounded afterwards)."""
    moments = episode.params["_moments"].split(",")
    own = frozenset(episode.pending_anchors)
    ranges = _ranges(moments, episode)
    update_index = CHANGES[episode.change].update_index if episode.change else None
    lo, hi = episode.start.date(), episode.end.date()
    slots = place_moments(traj, moments, lo, hi, episode, ctx, rng, own, dict(enumerate(ranges)))
    if not slots and update_index is None:
        # crowded window: first do with fewer moments, each still where and when it can happen
        optional = EPISODE_KINDS[episode.kind].optional if episode.kind in EPISODE_KINDS else ()
        for keep in _fewer(moments, optional):
            fewer = [moments[i] for i in keep]
            fixed = {n: ranges[i] for n, i in enumerate(keep)}
            slots = place_moments(traj, fewer, lo, hi, episode, ctx, rng, own, fixed)
            if slots:
                moments, ranges = fewer, [ranges[i] for i in keep]
                break
    if not slots:
        slots = _crowded(traj, moments, ranges, episode, ctx, rng, own, update_index)
        if slots and block_window(*slots[-1])[1] > episode.end:
            traj.move_event(episode, episode.start, datetime.combine(slots[-1][0], time(23, 59, 59)))
    kept = moments[: len(slots)]
    if "first_day" in kept:  # the offer says when the new job starts: the first day's date, a workday
        episode.params["job_start_date"] = fmt.format_date(slots[kept.index("first_day")][0], ctx.lang)
    if len(kept) < 2:
        raise NoFit(f"{episode.id}: only {len(kept)} of {len(moments)} moments fit in {lo}..{hi}")
    if update_index is not None and update_index >= len(kept):
        raise NoFit(f"cannot place the update moment of {episode.id} in {lo}..{hi}")
    leaves = []
    for i, (moment, (day, block)) in enumerate(zip(kept, slots)):
        start, end = block_window(day, block)
        leaf = Event(
            id=f"{episode.id}-l{i + 1}",
            parent_id=episode.id,
            depth=episode.depth + 1,
            kind=moment,
            title=leaf_title(episode.title, moment, ctx.lang),
            summary=episode.summary,
            start=start,
            end=end,
            change=episode.change if i == update_index else None,
        )
        traj.add_event(leaf)
        leaves.append(leaf)
    return leaves


SETTLE_DAYS = 8  # a project at a new job begins a week after its first day at the soonest: a job change
# episode that must run on past its window (a crowded chapter) does not reach into one planned after it


def one_employer(traj: Trajectory, first: date, last: date) -> tuple[date, date] | None:
    """[first, last] cut to the part before (or after) a job change planned in it: a project is one
    employer's, and does not follow the persona to the next. None when nothing of it is left."""
    for event in sorted(traj.events.values(), key=lambda e: (e.start, e.id)):
        if "set:career.company" not in event.params:
            continue
        begins, ends = event.start.date(), event.end.date()
        if begins > last or ends + timedelta(days=SETTLE_DAYS - 1) < first:
            continue
        if begins > first:
            last = begins - timedelta(days=1)
        else:
            first = ends + timedelta(days=SETTLE_DAYS)
    return (first, last) if first <= last else None
