"""The persona's schedule, and the planner keeping every moment where and when it can happen."""

from __future__ import annotations

import random
from datetime import date, datetime, time, timedelta

import pytest
from conftest import ROOT

from keme.days import BLOCKS, Slot, block_of, days, is_workday
from keme.models import Event, EventGraph
from keme.synth.context import PlanContext
from keme.synth.limits import load_config, parse_config
from keme.synth.moments import NoRoom, expand_episode, place_moments, shrink_to_leaf_if_single
from keme.synth.pipeline import start_trajectory, synthesize_persona
from keme.synth.state import Trajectory
from keme.synth.where import anchors_at_home
from keme.text import resources
from keme.text.lang import period_name
from keme.world.places import OCCASION_EPISODES, VENUE_MOMENTS, TripSpan, slot_allowed, trip_blocks, where
from keme.world.schedule import block_at, schedule_of, trip_spans, where_slots

YEAR_SEEDS = (1, 2, 3, 4, 5)


def _year(seed: int):
    cfg = load_config(ROOT / "configs/year.yaml")
    return synthesize_persona(0, cfg.model_copy(update={"seed": seed}))


@pytest.fixture(scope="module")
def worlds():
    """Persona-years over several seeds and the demo's two personas, each with its schedule."""
    trajs = [_year(seed) for seed in YEAR_SEEDS]
    demo = load_config(ROOT / "configs/demo.yaml")
    trajs += [synthesize_persona(i, demo) for i in range(len(demo.personas))]
    return [(t, schedule_of(t.persona, t.graph, t.persona.country, t.sessions)) for t in trajs]


def _trip_of(day: date, trips: list[TripSpan]) -> TripSpan | None:
    return next((t for t in trips if t.covers(day)), None)


# ---------------------------------------------------------------- the schedule
def test_blocks_tile_the_trajectory_without_overlap(worlds):
    for traj, schedule in worlds:
        assert schedule[0].start == datetime.combine(traj.persona.start.date(), time())
        assert schedule[-1].end == datetime.combine(traj.persona.end.date() + timedelta(days=1), time())
        for before, after in zip(schedule, schedule[1:]):
            assert before.start < before.end == after.start, (before.id, after.id)


def test_every_message_lies_in_a_block(worlds):
    for traj, schedule in worlds:
        for session in traj.sessions:
            for message in session.messages:
                assert block_at(schedule, message.timestamp) is not None, message.id


def test_a_trip_holds_the_persona_for_its_whole_span(worlds):
    for traj, schedule in worlds:
        trips = trip_spans(traj.graph.events)
        assert trips
        for trip in trips:
            away = datetime.combine(trip.start, time(12))
            back = datetime.combine(trip.end, time(12))
            inside = [b for b in schedule if b.start < back and b.end > away]
            assert inside and all(b.place == "trip" and b.city == trip.city for b in inside), trip
            assert all(b.companions == list(trip.companions) and b.event_id == trip.event_id for b in inside)
            assert block_at(schedule, away - timedelta(minutes=1)).place == "transit"
            assert block_at(schedule, back).place == "transit"
            assert block_at(schedule, datetime.combine(trip.end, time(20))).place == "home"


def test_office_only_on_workdays_while_employed(worlds):
    for traj, schedule in worlds:
        country = traj.persona.country
        for block in schedule:
            if block.place == "office":
                assert is_workday(block.start.date(), country), block
                assert traj.persona.value_at("career.company", block.start) is not None
                assert time(9) <= block.start.time() and block.end.time() <= time(18), block


def test_a_workday_is_home_office_home():
    traj = _year(1)
    persona = traj.persona
    quiet = EventGraph(persona_id=persona.id, events=[], edges=[])
    schedule = schedule_of(persona, quiet, persona.country)
    monday = date(2026, 1, 12)
    day = [b for b in schedule if b.start.date() <= monday <= (b.end - timedelta(seconds=1)).date()]
    assert [b.place for b in day] == ["home", "office", "home"]
    assert day[1].start == datetime.combine(monday, time(9)) and day[1].end == datetime.combine(
        monday, time(18)
    )


def test_a_reported_visit_is_a_venue_block_just_before_its_session(worlds):
    visits = 0
    for traj, schedule in worlds:
        for session in traj.sessions:
            if session.pattern not in VENUE_MOMENTS:
                continue
            before = block_at(schedule, session.start - timedelta(minutes=21))
            if before is None or before.place != "venue":
                continue
            visits += 1
            assert before.event_id == session.event_id and before.activity == session.pattern
            assert before.city == traj.persona.value_at("home.city", session.start)
            assert all(block_at(schedule, m.timestamp).place != "venue" for m in session.messages)
    assert visits >= 10


def test_block_at_outside_the_trajectory_is_none(worlds):
    traj, schedule = worlds[0]
    assert block_at(schedule, traj.persona.start - timedelta(days=1)) is None


# ---------------------------------------------------------------- where moments happen
def test_no_office_or_home_city_moment_on_a_trip_day(worlds):
    for traj, _ in worlds:
        trips = trip_spans(traj.graph.events)
        for session in traj.sessions:
            leaf = traj.events[session.event_id]
            if _trip_of(session.start.date(), trips) is not None:
                assert where(leaf.kind) in ("anywhere", "trip"), (session.id, leaf.kind)


def test_trip_moments_happen_in_the_trip_city(worlds):
    for traj, schedule in worlds:
        trips = trip_spans(traj.graph.events)
        for session in traj.sessions:
            if where(session.pattern) != "trip":
                continue
            trip = _trip_of(session.start.date(), trips)
            assert trip is not None and block_of(session.start) in trip_blocks(trip, session.start.date())
            assert all(block_at(schedule, m.timestamp).place == "trip" for m in session.messages), session.id


def test_office_moments_fall_on_workdays(worlds):
    for traj, _ in worlds:
        for session in traj.sessions:
            if where(session.pattern) == "office":
                assert is_workday(session.start.date(), traj.persona.country), session.id


def test_trips_keep_clear_of_anchors_that_place_the_persona_at_home(worlds):
    for traj, _ in worlds:
        home = anchors_at_home(traj)
        for trip in trip_spans(traj.graph.events):
            assert not any(trip.covers(day) for day in home), trip


def test_home_city_occasions_are_not_planned_inside_a_trip(worlds):
    for traj, _ in worlds:
        trips = trip_spans(traj.graph.events)
        for event in traj.graph.events:
            kind = event.params.get("_episode", event.kind)
            if event.depth == 1 and kind in OCCASION_EPISODES:
                first, last = event.start.date(), event.end.date()
                assert not any(t.start <= last and first <= t.end for t in trips), event.id


def test_slot_rules():
    trip = TripSpan("p01-c01-e01", date(2026, 5, 1), date(2026, 5, 4), "Lijiang")
    assert not slot_allowed("work_meeting_prep", date(2026, 5, 1), "afternoon", [trip], "CN")
    assert not slot_allowed("social_recap", date(2026, 5, 3), "evening", [trip], "CN")
    assert slot_allowed("show_discuss", date(2026, 5, 3), "evening", [trip], "CN")
    assert slot_allowed("trip_during", date(2026, 5, 2), "morning", [trip], "CN", own_trip=trip)
    assert not slot_allowed("trip_during", date(2026, 5, 1), "morning", [trip], "CN", own_trip=trip)
    assert not slot_allowed("trip_during", date(2026, 5, 4), "evening", [trip], "CN", own_trip=trip)
    assert not slot_allowed("trip_packing", date(2026, 5, 5), "evening", [], "CN", own_trip=trip)
    assert not slot_allowed("first_day", date(2026, 5, 9), "morning", [], "CN")  # a Saturday


def _late_may_full_but(free: set[Slot], bills: float = 0.0) -> tuple[Trajectory, PlanContext]:
    """A US persona's May 2026 (chapters May 1-15 and 16-31; `bills` a month, else no anchors) with every
    block of its second chapter taken but `free`."""
    cfg = parse_config(
        "name: t\nseed: 1\npersonas:\n  - {language: en, start: 2026-05-01, months: 1, country: US}\n"
        f"anchors:\n  per_month: {{bill: {bills}}}\n"
    )
    traj = start_trajectory(0, cfg, resources.get("en"))
    for day in days(date(2026, 5, 16), date(2026, 5, 31)):
        for block in BLOCKS:
            if (day, block) not in free:
                traj.occupied[(day, block)] = "p01-c02-e99"
    return traj, PlanContext(cfg, resources.get("en"))


def _episode(kind: str, first: date, last: date, **params: str) -> Event:
    return Event(
        id="p01-c02-e01",
        parent_id="p01-c02",
        depth=1,
        kind=kind,
        title="",
        summary="",
        start=datetime.combine(first, time()),
        end=datetime.combine(last, time(23, 59, 59)),
        params=params,
        change=params.pop("change", None),
    )


def test_a_crowded_episode_keeps_its_office_moments_on_workdays():
    """Thursday to Sunday at the end of May with only Thursday's afternoon and evening left on workdays: the
    meeting's prep goes on Thursday evening, not to the free weekend its half of the window falls in."""
    weekend = {(day, block) for day in (date(2026, 5, 30), date(2026, 5, 31)) for block in BLOCKS}
    traj, ctx = _late_may_full_but(
        {(date(2026, 5, 28), "afternoon"), (date(2026, 5, 28), "evening")} | weekend
    )
    episode = _episode(
        "work_project", date(2026, 5, 28), date(2026, 5, 31), _moments="work_deadline,work_meeting_prep"
    )
    traj.add_event(episode)
    leaves = expand_episode(episode, traj, ctx, random.Random(0))
    assert [(leaf.kind, leaf.start) for leaf in leaves] == [
        ("work_deadline", datetime(2026, 5, 28, 12)),
        ("work_meeting_prep", datetime(2026, 5, 28, 18)),
    ]


def test_the_first_moment_leaves_its_own_anchors_last_block_to_the_second():
    """A purchase episode from Sunday to Tuesday with two blocks free, Monday morning and its own bill's
    block on Tuesday afternoon, its last: the comparison never takes the bill's block, whatever the draw,
    or the purchase after it would have none."""
    bill = (date(2026, 5, 26), "afternoon")
    traj, ctx = _late_may_full_but({(date(2026, 5, 25), "morning"), bill}, bills=4.0)
    own = frozenset(a.id for a in traj.anchors if traj.anchor_slot(a.id) == bill)
    episode = _episode("shopping", date(2026, 5, 24), date(2026, 5, 26))
    moments = ["purchase_compare", "purchase_done"]
    for seed in range(10):
        slots = place_moments(
            traj, moments, date(2026, 5, 24), date(2026, 5, 26), episode, ctx, random.Random(seed), own, {}
        )
        assert slots == [(date(2026, 5, 25), "morning"), bill], seed


def test_a_one_moment_office_episode_with_only_a_weekend_left_is_not_planned():
    """A commute change's talk, with nothing free in its chapter but the last weekend: no talk of the
    commute on a Saturday; the planner plans something else, as when the days are full."""
    weekend = {(day, block) for day in (date(2026, 5, 30), date(2026, 5, 31)) for block in BLOCKS}
    traj, ctx = _late_may_full_but(weekend)
    episode = _episode("commute_change", date(2026, 5, 30), date(2026, 5, 31), change="commute_change")
    with pytest.raises(NoRoom):
        shrink_to_leaf_if_single(episode, traj, ctx, random.Random(0))


def test_where_slots_hold_for_the_whole_leaf():
    traj = _year(1)
    persona = traj.persona

    def leaf(start: datetime, end: datetime) -> Event:
        return Event(
            id="p01-c01-e09",
            parent_id="p01-c01",
            depth=1,
            kind="work_deadline",
            title="",
            summary="",
            start=start,
            end=end,
        )

    afternoon = leaf(datetime(2026, 1, 13, 12), datetime(2026, 1, 13, 17, 59, 59))
    morning = leaf(datetime(2026, 1, 13, 7), datetime(2026, 1, 13, 11, 59, 59))
    city = persona.value_at("home.city", afternoon.start)
    assert where_slots(persona, [], afternoon, "US", "en") == {"city": city, "where": "at the office"}
    assert where_slots(persona, [], morning, "US", "en") == {"city": city}  # home, then the office


# ---------------------------------------------------------------- career
def test_a_new_job_starts_on_a_workday_the_offer_names(worlds):
    found = 0
    for traj, _ in worlds:
        for session in traj.sessions:
            if session.pattern != "first_day":
                continue
            found += 1
            assert is_workday(session.start.date(), traj.persona.country), session.id
            leaf = traj.events[session.event_id]
            episode = traj.events[leaf.parent_id]
            assert episode.params["job_start_date"].endswith(f" {session.start.day}") or episode.params[
                "job_start_date"
            ].endswith(f"月{session.start.day}日")
    assert found


def test_career_changes_are_paced(worlds):
    for traj, _ in worlds:
        title = traj.persona.attribute("career.job_title").versions
        changes = [v.valid_from for v in title if v.valid_from > traj.persona.start]
        for before, after in zip(changes, changes[1:]):
            assert after - before >= timedelta(days=60), (traj.persona.id, before, after)


# ---------------------------------------------------------------- chapters
def test_half_month_chapters_are_titled_by_their_dates(sample_config):
    for index, lang in ((0, "Apr"), (1, "2026年4月")):
        traj = synthesize_persona(index, sample_config)
        titles = [c.title for c in traj.children(None)]
        assert len(set(titles)) == len(titles) == 2
        assert all(lang in t for t in titles), titles
    assert period_name(date(2026, 4, 1), date(2026, 4, 15), "en") == "Apr 1–15, 2026"
    assert period_name(date(2026, 4, 16), date(2026, 4, 30), "zh") == "2026年4月16日–30日"


def test_calendar_month_chapters_keep_the_month_name(worlds):
    traj, _ = worlds[0]
    titles = [c.title for c in traj.children(None)]
    assert titles[0] == "January 2026" and len(set(titles)) == 12


def test_period_names():
    assert period_name(date(2026, 3, 1), date(2026, 5, 31), "en") == "March–May 2026"
    assert period_name(date(2026, 12, 1), date(2027, 2, 28), "zh") == "2026年12月–2027年2月"
    assert period_name(date(2026, 3, 15), date(2026, 4, 14), "en") == "Mar 15–Apr 14, 2026"
    assert period_name(date(2026, 12, 20), date(2027, 1, 5), "zh") == "2026年12月20日–2027年1月5日"
