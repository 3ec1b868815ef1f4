"""The planner: top-down expansion of the event graph.

Level 0 (chapters) covers the trajectory month by month and carries the life
changes scheduled for it. A chapter expands into episodes (level 1) that follow
the persona (job, routines, trips, purchases, health, social life) and the
calendar (workdays, weekends, holidays). An episode expands into leaf moments
(level 2), one session each. Episodes with a single moment are leaves themselves.

This module plans chapters and their episodes. An episode's details are drawn in keme.synth.params, its
moments placed in day blocks in keme.synth.moments, and where the persona is (trips, home anchors) read
in keme.synth.where.
"""

from __future__ import annotations

import random
from collections.abc import Callable
from datetime import date, datetime, time, timedelta

from keme.days import days, holidays_between, is_workday
from keme.models import Event, Persona
from keme.models.catalog import CHANGES, EPISODE_KINDS
from keme.seeding import rng_for
from keme.synth.capacity import ROOMY_PER_KIND, chapter_windows, roomy_kinds
from keme.synth.changes import due_dates, schedule_changes
from keme.synth.context import PlanContext
from keme.synth.moments import NoRoom, one_employer, shrink_to_leaf_if_single
from keme.synth.params import change_params, episode_params
from keme.synth.state import Trajectory
from keme.synth.where import overlaps_trip, own_trip_of, trip_fits
from keme.text import lang as fmt
from keme.text.titles import title_and_summary
from keme.world.cues import load_cues
from keme.world.lifecycle import holiday_days
from keme.world.party import record_party, with_party
from keme.world.places import OCCASION_EPISODES, TripSpan


# ---------------------------------------------------------------- chapters
def plan_chapters(persona: Persona, ctx: PlanContext, rng: random.Random) -> list[Event]:
    chapters = []
    for number, (start, end) in enumerate(
        chapter_windows(persona.start, persona.end, ctx.cfg.graph.max_events), start=1
    ):
        # titled by what it spans: a calendar month by name, half a month by its dates
        params = {"month_name": fmt.period_name(start.date(), end.date(), ctx.lang), "changes": ""}
        chapters.append(
            Event(
                id=f"{persona.id}-c{number:02d}",
                parent_id=None,
                depth=0,
                kind="chapter",
                title=params["month_name"],
                summary="",
                start=start,
                end=end,
                params=params,
            )
        )
    schedule_changes(persona, chapters, ctx, rng)
    for chapter in chapters:
        _describe_chapter(chapter, persona, ctx)
    return chapters


def _describe_chapter(chapter: Event, persona: Persona, ctx: PlanContext) -> None:
    themes = [title_and_summary(c, ctx.lang, {})[0] for c in chapter_changes(chapter)]
    themes += sorted(
        {n for _, n in holidays_between(chapter.start.date(), chapter.end.date(), persona.country, ctx.lang)}
    )[:2]
    joiner = "、" if ctx.lang == "zh" else "; "
    default = "日常" if ctx.lang == "zh" else "everyday life"
    chapter.params["themes"] = joiner.join(themes) or default
    chapter.title, chapter.summary = title_and_summary("chapter", ctx.lang, chapter.params)
    chapter.requirements = [f"scheduled change: {c}" for c in chapter_changes(chapter)]


def chapter_changes(chapter: Event) -> list[str]:
    return [c for c in chapter.params.get("changes", "").split(",") if c]


# ---------------------------------------------------------------- helpers
def next_child_id(traj: Trajectory, parent: Event, prefix: str) -> str:
    """Ids are never reused, not even for deleted events named in the revision log."""
    seen = [e.id for e in traj.graph.events] + [r.event_id for r in traj.graph.revisions]
    base = f"{parent.id}-{prefix}"
    numbers = [int(i[len(base) :]) for i in seen if i.startswith(base) and i[len(base) :].isdigit()]
    return (
        f"{base}{max(numbers, default=0) + 1:02d}"
        if prefix == "e"
        else f"{base}{max(numbers, default=0) + 1}"
    )


MIN_TRIP_NIGHTS = 2  # a trip is never a single night away
TRIP_NIGHTS = (2, 4)  # nights of a trip to a destination the catalog does not list
TRIP_TRIES = (
    12  # windows tried for a trip around a weekend (a long one needs many days clear of home anchors)
)
TRIP_ROOM = 9  # days of an episode besides the trip's nights: planning, the wait for its weekend, a recap


# ---------------------------------------------------------------- chapter expansion
def _clip_window(chapter: Event, first: date, length: int) -> tuple[date, date]:
    lo, hi = chapter.start.date(), chapter.end.date()
    first = max(lo, min(first, hi))
    last = min(hi, first + timedelta(days=length - 1))
    return first, last


def _holiday_clusters(chapter: Event, country: str, lang: str) -> list[tuple[date, date, str]]:
    """Runs of days off (holidays joined with adjacent weekends) that contain a holiday."""
    lo, hi = chapter.start.date(), chapter.end.date()
    named = dict(holidays_between(lo, hi, country, lang))
    if not named:
        return []
    clusters = []
    run: list[date] = []
    for day in days(lo, hi):
        if not is_workday(day, country):
            run.append(day)
            continue
        if run and any(d in named for d in run):
            clusters.append((run[0], run[-1], next(named[d] for d in run if d in named)))
        run = []
    if run and any(d in named for d in run):
        clusters.append((run[0], run[-1], next(named[d] for d in run if d in named)))
    return clusters


# The holidays a person lives with family and talks about (the `holidays` package's names, as the person says
# them); a holiday's days off get such an episode at HOLIDAY_RATE, 0.6 for the rest.
LIVED_HOLIDAYS: dict[str, dict[str, str]] = {
    "zh": {"春节": "春节", "清明节": "清明", "端午节": "端午", "中秋节": "中秋", "国庆节": "国庆"},
    "en": {
        "Thanksgiving": "Thanksgiving",
        "Christmas Day": "Christmas",
        "Independence Day": "the Fourth of July",
        "Memorial Day": "Memorial Day",
        "Labor Day": "Labor Day",
    },
}
HOLIDAY_RATE = {"春节": 0.95, "Christmas": 0.95, "Thanksgiving": 0.9}


FAMILY_TIME = frozenset({"春节", "Christmas", "Thanksgiving"})  # no tour over these: they are lived at home


def _family_time(trip: TripSpan, country: str, lang: str) -> bool:
    """Whether a trip's days away hold a holiday spent with family (FAMILY_TIME)."""
    lived = _lived_holiday(trip.start, trip.end, country, lang)
    return lived is not None and lived[0] in FAMILY_TIME


def _lived_holiday(first: date, last: date, country: str, lang: str) -> tuple[str, date] | None:
    """The lived holiday a run of days off holds (除夕 belongs to 春节), as said, with its first day."""
    names = LIVED_HOLIDAYS.get(lang, {})
    for name, spoken in names.items():
        for day in holiday_days(name, country, lang, range(first.year, last.year + 1)):
            if first - timedelta(days=1) <= day <= last:
                return spoken, day
    return None


def episode_event(
    traj: Trajectory,
    parent: Event,
    kind: str,
    first: date,
    last: date,
    params: dict[str, str],
    ctx: PlanContext,
    change: str | None = None,
    requirements: list[str] | None = None,
) -> Event:
    title, summary = title_and_summary(change or kind, ctx.lang, params)
    return Event(
        id=next_child_id(traj, parent, "e"),
        parent_id=parent.id,
        depth=parent.depth + 1,
        kind=kind,
        title=title,
        summary=summary,
        start=datetime.combine(first, time()),
        end=datetime.combine(last, time(23, 59, 59)),
        params=params,
        change=change,
        requirements=requirements or [],
    )


def _weights(traj: Trajectory, ctx: PlanContext, when: datetime) -> dict[str, float]:
    weights = {}
    for kind in EPISODE_KINDS.values():
        if any(traj.persona.value_at(k, when) is None for k in kind.requires):
            continue
        weights[kind.name] = ctx.cfg.episodes.weights.get(kind.name, kind.weight)
    if traj.persona.value_at("social_circle.partner", when):
        weights["social"] = weights.get("social", 0) * 1.3
    return {k: w for k, w in weights.items() if w > 0}


def expand_chapter(chapter: Event, traj: Trajectory, ctx: PlanContext, rng: random.Random) -> list[Event]:
    """Plan a chapter's episodes: its scheduled changes, holiday plans, then everyday life.

    At depth 2, when that plan leaves no place for some of the chapter's anchors, the chapter is
    planned again with episodes that take anchors down to their moments (`keme.synth.capacity`).
    """
    planned = _plan_chapter(chapter, traj, ctx, rng)
    need = len(chapter.pending_anchors)
    if ctx.cfg.graph.max_depth == 2 and anchor_room(planned, ctx.cfg.graph.max_events) < need:
        for event in planned:
            traj.remove_event(event.id)
        planned = _plan_chapter(
            chapter, traj, ctx, rng_for(ctx.cfg.seed, traj.persona.id, "plan-room", chapter.id), room_for=need
        )
    return planned


def anchor_room(children: list[Event], max_events: int) -> int:
    """How many anchors a just-planned chapter can ground: one per free child place and per leaf, and per
    place an episode has left for leaves (see `keme.synth.grounder.ground`)."""
    free = max_events - len(children)
    leaves = sum(1 for e in children if "_moments" not in e.params)
    inner = sum(
        max(0, max_events - len(e.params["_moments"].split(","))) for e in children if "_moments" in e.params
    )
    return free + leaves + inner


def _plan_chapter(
    chapter: Event, traj: Trajectory, ctx: PlanContext, rng: random.Random, room_for: int | None = None
) -> list[Event]:
    """One plan of a chapter; with `room_for`, only changes and episodes that make room for that many
    anchors."""
    persona, lang = traj.persona, ctx.lang
    graph = ctx.cfg.graph
    now = chapter.start
    lo, hi = chapter.start.date(), chapter.end.date()
    span = (hi - lo).days + 1
    planned: list[Event] = []
    own = frozenset(chapter.pending_anchors)

    def commit(event: Event) -> None:
        shrink_to_leaf_if_single(event, traj, ctx, rng, own)
        traj.add_event(event)
        planned.append(event)

    weights = _weights(traj, ctx, now)
    target = round(span / 30.4 * graph.episodes_per_month)
    # leave room for the leaves the grounder may add for anchors (every anchor needs its own leaf at depth 1)
    reserve = len(chapter.pending_anchors) if graph.max_depth == 1 else 3
    budget = max(graph.min_events, min(target, graph.max_events - reserve))
    clusters = _holiday_clusters(chapter, persona.country, lang)
    trip_cluster = None
    if room_for is None:  # trips first: what else the chapter holds is placed around them
        trip_cluster = _plan_holiday_trip(chapter, clusters, traj, ctx, rng, commit)
        share = weights.get("trip", 0) / max(sum(weights.values()), 1e-9)
        if trip_cluster is None and rng.random() < 1 - (1 - share) ** budget:
            _plan_regular_trip(chapter, traj, ctx, rng, commit)

    due = dict(due_dates(chapter))
    for name in chapter_changes(chapter):
        commit(plan_change_episode(name, chapter, traj, ctx, rng, earliest=lo, latest=due.get(name)))

    if room_for is not None:
        roomy = [
            k
            for k in roomy_kinds(ctx.cfg.episodes.weights)
            if k in weights and EPISODE_KINDS[k].days[0] <= span
        ]
        per_kind = dict.fromkeys(roomy, 0)
        added = 0
        while (
            roomy
            and added < graph.max_events // 2
            and len(planned) < graph.max_events
            and (anchor_room(planned, graph.max_events) < room_for or len(planned) < graph.min_events)
        ):
            kind = EPISODE_KINDS[rng.choices(roomy, [weights[k] for k in roomy])[0]]
            length = rng.randint(kind.days[0], min(kind.days[1], span))
            first = lo + timedelta(days=rng.randint(0, span - length))
            event = regular_episode(kind.name, *_clip_window(chapter, first, length), chapter, traj, ctx, rng)
            if event is None:  # a work episode with every project taken (trips are not roomy)
                roomy.remove(kind.name)
                continue
            commit(event)
            added += 1
            per_kind[kind.name] += 1
            if per_kind[kind.name] == ROOMY_PER_KIND:
                roomy.remove(kind.name)
        return planned

    for first, last, holiday in clusters:
        if (first, last, holiday) == trip_cluster or overlaps_trip(first, last, traj):
            continue
        lived = _lived_holiday(first, last, persona.country, lang)
        if rng.random() < (HOLIDAY_RATE.get(lived[0], 0.6) if lived else 0.6):
            params = episode_params("family", rng, traj, ctx, now)
            ep_first, ep_last = first, last
            if lived is not None:  # its days before (plans, tickets, 年货) and after (back to work) too
                spoken, day = lived
                params |= {"holiday": spoken, "holiday_date": fmt.format_date(day, lang)}
                ep_first = max(lo, min(first, day - timedelta(days=rng.randint(4, 14))))
                ep_last = min(hi, max(last, day + timedelta(days=rng.randint(1, 3))))
                if overlaps_trip(ep_first, ep_last, traj):
                    ep_first, ep_last = first, last
            needs = [f"holiday: {lived[0] if lived else holiday}"]
            commit(episode_event(traj, chapter, "family", ep_first, ep_last, params, ctx, requirements=needs))

    counts: dict[str, int] = {}
    attempts = 0
    everyday = {k: w for k, w in weights.items() if k != "trip"}
    while everyday and len(planned) < budget and attempts < 100:
        attempts += 1
        kind = EPISODE_KINDS[rng.choices(list(everyday), list(everyday.values()))[0]]
        if counts.get(kind.name, 0) >= 2:
            continue
        length = rng.randint(*kind.days)
        if length > span:
            continue
        first = lo + timedelta(days=rng.randint(0, span - length))
        first, last = _clip_window(chapter, first, length)
        if kind.name in OCCASION_EPISODES and overlaps_trip(first, last, traj):
            continue  # a dinner or an outing in the home city cannot happen while away
        event = regular_episode(kind.name, first, last, chapter, traj, ctx, rng)
        if event is None:
            continue
        try:
            commit(event)
        except NoRoom:  # every block of its days is taken already: plan something else
            continue
        counts[kind.name] = counts.get(kind.name, 0) + 1
    return planned


def _plan_holiday_trip(
    chapter: Event,
    clusters: list[tuple[date, date, str]],
    traj: Trajectory,
    ctx: PlanContext,
    rng: random.Random,
    commit: Callable[[Event], None],
) -> tuple[date, date, str] | None:
    """A trip over a holiday's days off (three in four chances), clear of home anchors; the cluster used."""
    for first, last, holiday in clusters:
        if last <= first or rng.random() >= 0.75:
            continue
        if (lived := _lived_holiday(first, last, traj.persona.country, ctx.lang)) and lived[0] in FAMILY_TIME:
            continue  # 春节, Christmas, Thanksgiving are spent with family, not on a tour
        ep_first, ep_last = _clip_window(
            chapter, first - timedelta(days=rng.randint(3, 6)), (last - first).days + 8
        )
        trip_start = max(first, ep_first + timedelta(days=2))
        trip_end = min(last, ep_last - timedelta(days=1))
        nights = (trip_end - trip_start).days
        if nights < MIN_TRIP_NIGHTS or not trip_fits(trip_start, trip_end, traj):
            continue
        params = episode_params("trip", rng, traj, ctx, chapter.start, nights)
        if (ctx.catalog.nights(params["destination"]) or (1, 1))[0] > nights:
            continue  # the holiday is too short to go anywhere listed
        params |= _trip_dates(trip_start, trip_end, ctx.lang)
        requirements = [f"holiday: {holiday}"]
        commit(
            episode_event(traj, chapter, "trip", ep_first, ep_last, params, ctx, requirements=requirements)
        )
        return first, last, holiday
    return None


def _plan_regular_trip(
    chapter: Event, traj: Trajectory, ctx: PlanContext, rng: random.Random, commit: Callable[[Event], None]
) -> None:
    """A trip around a weekend, on dates clear of home anchors (a few windows tried, else no trip)."""
    lo, hi = chapter.start.date(), chapter.end.date()
    span = (hi - lo).days + 1
    kind = EPISODE_KINDS["trip"]
    for _ in range(TRIP_TRIES):
        params = episode_params("trip", rng, traj, ctx, chapter.start)
        nights = rng.randint(*(ctx.catalog.nights(params["destination"]) or TRIP_NIGHTS))
        # planning days before, the weekend it starts on, the nights away, and a recap after
        length = max(rng.randint(*kind.days), nights + TRIP_ROOM)
        if length > span:
            continue
        first, last = _clip_window(chapter, lo + timedelta(days=rng.randint(0, span - length)), length)
        event = regular_episode(
            "trip", first, last, chapter, traj, ctx, rng, params | {"nights": str(nights)}
        )
        if event is None:
            continue
        trip = own_trip_of(event)
        if trip is None or _family_time(trip, traj.persona.country, ctx.lang):
            continue
        if trip_fits(trip.start, trip.end, traj):
            commit(event)
            return


def regular_episode(
    kind: str,
    first: date,
    last: date,
    chapter: Event,
    traj: Trajectory,
    ctx: PlanContext,
    rng: random.Random,
    params: dict[str, str] | None = None,
) -> Event | None:
    """An everyday episode in [first, last] with its details (`params`, else drawn); None if a trip does
    not fit the window or a work episode has no project left. A trip lasts the `nights` its params ask, or
    as many as its destination takes."""
    if kind == "work_project":
        window = one_employer(traj, first, last)
        if window is None:
            return None
        first, last = window
    if params is None:  # the persona as it is when the episode begins, changes planned by then included
        begin = max(chapter.start, datetime.combine(first, time()))
        params = episode_params(kind, rng, traj, ctx, begin, until=datetime.combine(last, time.max))
    params = dict(params)
    people = record_party(traj.anchors, first, last, load_cues(ctx.lang)) if "party_size" in params else None
    if people is not None:  # the note the episode holds says how many were there (keme.world.party)
        params = with_party(params, people, ctx.lang)
    if kind == "trip":
        length = (last - first).days + 1
        nights = int(params.pop("nights", 0)) or rng.randint(
            *(ctx.catalog.nights(params["destination"]) or TRIP_NIGHTS)
        )
        trip_start = first + timedelta(days=min(2 + rng.randint(0, 2), max(0, length - 3)))
        while trip_start.weekday() not in (4, 5) and trip_start < last - timedelta(days=2):
            trip_start += timedelta(days=1)
        trip_end = trip_start + timedelta(days=nights)
        if trip_end > last - timedelta(days=1) or trip_end <= trip_start:
            return None
        params |= _trip_dates(trip_start, trip_end, ctx.lang)
    if kind == "work_project":
        if not params.get("project"):
            return None  # every project is taken: it was delivered already
        params["deadline"] = fmt.format_date(last, ctx.lang)
    return episode_event(traj, chapter, kind, first, last, params, ctx)


def _trip_dates(start: date, end: date, lang: str) -> dict[str, str]:
    return {
        "start_date": fmt.format_date(start, lang),
        "end_date": fmt.format_date(end, lang),
        "nights": str((end - start).days),
        "_trip_start": start.isoformat(),
        "_trip_end": end.isoformat(),
    }


def plan_change_episode(
    name: str,
    parent: Event,
    traj: Trajectory,
    ctx: PlanContext,
    rng: random.Random,
    earliest: date,
    window: tuple[date, date] | None = None,
    latest: date | None = None,
) -> Event:
    """The milestone episode of a life change, in `window` or a random one after `earliest` (and over by
    `latest`, a follow-up's due day, where the chapter leaves the change's shortest length before it)."""
    change = CHANGES[name]
    lo, hi = max(parent.start.date(), earliest), parent.end.date()
    if latest is not None:
        hi = min(hi, max(latest, lo + timedelta(days=change.days[0] - 1)))
    span = (hi - lo).days + 1
    length = min(span, rng.randint(*change.days))
    first = lo + timedelta(days=rng.randint(0, max(0, span - length)))
    first, last = window or _clip_window(parent, first, length)
    params = change_params(
        change, rng, traj, ctx, datetime.combine(first, time()), datetime.combine(last, time.max)
    )
    if "project" in params:
        params["deadline"] = fmt.format_date(last, ctx.lang)
    return episode_event(
        traj,
        parent,
        name,
        first,
        last,
        params,
        ctx,
        change=name,
        requirements=[f"reveals change {name}: " + ", ".join(change.attributes)],
    )
