"""A persona's days as non-overlapping blocks: where it is (home, the office, a venue, a trip city, in
transit), in which city, doing what, with whom.

The schedule is read off the final event graph, so it is what the planner placed: nights and days off at
home; workdays at the office during working hours while employed (never on a public holiday or a trip);
a trip's departure day in transit out, the trip city for its whole span, transit back on the return day;
a visit that a session reports ("back from the clinic", "workout done") a venue block just before that
session. Blocks are half-open [start, end) and tile the trajectory, so every session lies in blocks.
"""

from __future__ import annotations

import bisect
from collections.abc import Iterable
from dataclasses import dataclass, replace
from datetime import date, datetime, time, timedelta

from keme.days import is_workday
from keme.models import Anchor, Event, EventGraph, Persona, Session
from keme.models.world import Place, ScheduleBlock
from keme.world.catalog import load_catalog
from keme.world.places import VENUE_MOMENTS, TripSpan

WORK_HOURS = (time(9, 0), time(18, 0))
LUNCH = (time(12, 0), time(13, 30))  # on a workday, the office is left only then (a lunch, a store run)
DEPART = (time(9, 0), time(12, 0))  # home until the first, in transit until the second, then the trip city
RETURN = (time(12, 0), time(18, 0))  # the trip city until the first, in transit until the second, then home
ACTIVITY = {"home": "home", "office": "work", "trip": "trip", "transit": "travel"}
VISIT_GAP = timedelta(minutes=20)  # from leaving a venue to the message that reports the visit
MIN_VISIT = timedelta(minutes=20)
SHOPPING = timedelta(minutes=25)  # at the merchant before a charge paid in person
PAID_AND_GONE = timedelta(seconds=30)  # the charge's record lands, then the persona leaves


@dataclass(frozen=True)
class _Venue:
    start: datetime
    end: datetime
    activity: str
    event_id: str | None
    venue: str
    companions: tuple[str, ...]


@dataclass(frozen=True)
class _Spot:
    place: Place
    city: str
    venue: str | None
    activity: str
    companions: tuple[str, ...]
    event_id: str | None


def trip_spans(events: Iterable[Event]) -> list[TripSpan]:
    """The trips of a graph (episodes, or depth-1 trip leaves, that carry trip dates), in time order."""
    spans = [
        TripSpan(
            e.id,
            date.fromisoformat(e.params["_trip_start"]),
            date.fromisoformat(e.params["_trip_end"]),
            e.params.get("destination", ""),
            companions_of(e.params),
        )
        for e in events
        if "_trip_start" in e.params and "_trip_end" in e.params
    ]
    return sorted(spans, key=lambda t: (t.start, t.event_id))


def _params(leaf: Event, events: dict[str, Event]) -> dict[str, str]:
    parent = events.get(leaf.parent_id) if leaf.parent_id else None
    return (dict(parent.params) if parent is not None and parent.depth > 0 else {}) | leaf.params


def venue_of(leaf: Event, params: dict[str, str], persona: Persona, when: datetime) -> str | None:
    """The venue a venue moment reports a visit to (the clinic, the gym); None if it names none."""
    key = VENUE_MOMENTS.get(leaf.kind, ("", 0))[0]
    if not key:
        return None
    return params.get(key) or (_value(persona, key, when) if "." in key else None)


def _value(persona: Persona, key: str, when: datetime) -> str | None:
    dimension, name = key.split(".", 1)
    attr = persona.dimensions.get(dimension, {}).get(name)
    return attr.value_at(when) if attr is not None else None


def companions_of(params: dict[str, str]) -> tuple[str, ...]:
    return tuple(params[k] for k in ("companion", "person") if params.get(k))


def _charges(anchors: Iterable[Anchor], lang: str) -> list[_Venue]:
    """The stops that charges paid in person make (catalog `in_person`): at the merchant for SHOPPING up to
    the record's time."""
    catalog = load_catalog(lang)
    found = []
    for anchor in anchors:
        record = anchor.record
        if record.kind != "bill" or not catalog.in_person(record.merchant):
            continue
        start, end = anchor.timestamp - SHOPPING, anchor.timestamp + PAID_AND_GONE
        found.append(_Venue(start, end, "paying", None, record.merchant, ()))
    return found


def _apart(venues: list[_Venue]) -> list[_Venue]:
    """Venue stops in time order, a stop that overlaps an earlier one left out; a charge paid in person
    is kept, shortened to start when the stop before it ends (the record places the persona there)."""
    kept: list[_Venue] = []
    for venue in sorted(venues, key=lambda v: (v.start, v.end)):
        if kept and venue.start < kept[-1].end and venue.activity == "paying":
            if kept[-1].end < venue.end - PAID_AND_GONE:
                venue = replace(venue, start=kept[-1].end)
        if not kept or venue.start >= kept[-1].end:
            kept.append(venue)
    return kept


def _venues(persona: Persona, graph: EventGraph, sessions: list[Session]) -> list[_Venue]:
    """The visits venue moments report: each ends VISIT_GAP before its session and starts after the session
    before it; a visit with less than MIN_VISIT left is not placed."""
    events = {e.id: e for e in graph.events}
    ordered = sorted(sessions, key=lambda s: s.start)
    found = []
    for previous, session in zip([None, *ordered], ordered):
        leaf = events.get(session.event_id)
        if leaf is None or leaf.kind not in VENUE_MOMENTS:
            continue
        params = _params(leaf, events)
        venue = venue_of(leaf, params, persona, session.start)
        end = session.start - VISIT_GAP
        start = end - timedelta(minutes=VENUE_MOMENTS[leaf.kind][1])
        if previous is not None:
            start = max(start, previous.end + VISIT_GAP)
        start = max(start, datetime.combine(session.start.date(), time(6)))
        if venue and end - start >= MIN_VISIT:
            found.append(_Venue(start, end, leaf.kind, leaf.id, venue, companions_of(params)))
    return found


class _Day:
    """What a calendar day holds before venues are laid over it."""

    def __init__(self, persona: Persona, trips: dict[date, TripSpan], country: str):
        self.persona, self.trips, self.country = persona, trips, country

    def home(self, at: datetime) -> str:
        return _value(self.persona, "home.city", at) or ""

    def cuts(self, day: date) -> list[time]:
        if day in self.trips:
            trip = self.trips[day]
            if day == trip.start and day == trip.end:
                return [*DEPART, *RETURN]
            return list(DEPART if day == trip.start else RETURN if day == trip.end else ())
        return list(WORK_HOURS)

    def spot(self, at: datetime) -> _Spot:
        trip = self.trips.get(at.date())
        if trip is not None:
            place = self._trip_place(trip, at)
            city = (
                self.home(at)
                if place == "home" or (place == "transit" and at.date() == trip.end)
                else trip.city
            )
            away = place != "home"
            return _Spot(
                place,
                city,
                None,
                ACTIVITY[place],
                trip.companions if away else (),
                trip.event_id if away else None,
            )
        day = at.date()
        working = (
            is_workday(day, self.country)
            and WORK_HOURS[0] <= at.time() < WORK_HOURS[1]
            and _value(self.persona, "career.company", datetime.combine(day, WORK_HOURS[0])) is not None
        )
        place = "office" if working else "home"
        return _Spot(place, self.home(at), None, ACTIVITY[place], (), None)

    @staticmethod
    def _trip_place(trip: TripSpan, at: datetime) -> Place:
        clock = at.time()
        if at.date() == trip.start and clock < DEPART[1]:
            return "home" if clock < DEPART[0] else "transit"
        if at.date() == trip.end and clock >= RETURN[0]:
            return "transit" if clock < RETURN[1] else "home"
        return "trip"


def schedule_of(
    persona: Persona,
    graph: EventGraph,
    country: str,
    sessions: Iterable[Session] = (),
    anchors: Iterable[Anchor] = (),
) -> list[ScheduleBlock]:
    """The persona's blocks from the first day of its trajectory to the end of its last, in time order.

    The venue visits that sessions report are placed from `sessions`, the stops of charges paid in person
    from `anchors` (a lunch at a restaurant, a store run); without them there are none.
    """
    trips = trip_spans(graph.events)
    by_day = {day: t for t in trips for day in _days(t.start, t.end)}
    days = _Day(persona, by_day, country)
    venues = _apart(_venues(persona, graph, list(sessions)) + _charges(anchors, persona.language))
    first = datetime.combine(persona.start.date(), time())
    last = datetime.combine(persona.end.date() + timedelta(days=1), time())
    points = {first, last}
    for day in _days(first.date(), persona.end.date()):
        points.add(datetime.combine(day, time()))
        points.update(datetime.combine(day, t) for t in days.cuts(day))
    for key in ("home.city", "career.company"):
        dimension, name = key.split(".", 1)
        attr = persona.dimensions.get(dimension, {}).get(name)
        points.update(v.valid_from for v in (attr.versions if attr is not None else []))
    for venue in venues:
        points.update((venue.start, venue.end))
    ordered = sorted(p for p in points if first <= p <= last)
    starts = [v.start for v in venues]
    spans: list[tuple[datetime, datetime, _Spot]] = []
    for lo, hi in zip(ordered, ordered[1:]):
        spot = _venue_spot(venues, starts, lo, days) or days.spot(lo)
        if spans and spans[-1][2] == spot and spans[-1][1] == lo:
            spans[-1] = (spans[-1][0], hi, spot)
        else:
            spans.append((lo, hi, spot))
    return [
        ScheduleBlock(
            id=f"{persona.id}-b{n:04d}",
            persona_id=persona.id,
            start=lo,
            end=hi,
            place=spot.place,
            city=spot.city,
            venue=spot.venue,
            activity=spot.activity,
            companions=list(spot.companions),
            event_id=spot.event_id,
        )
        for n, (lo, hi, spot) in enumerate(spans, start=1)
    ]


def _venue_spot(venues: list[_Venue], starts: list[datetime], at: datetime, days: _Day) -> _Spot | None:
    i = bisect.bisect_right(starts, at) - 1
    if i < 0 or not venues[i].start <= at < venues[i].end:
        return None
    venue = venues[i]
    base = days.spot(at)
    city = base.city
    return _Spot("venue", city, venue.venue, venue.activity, venue.companions, venue.event_id)


def _days(lo: date, hi: date) -> list[date]:
    return [lo + timedelta(n) for n in range((hi - lo).days + 1)]


def block_at(schedule: list[ScheduleBlock], moment: datetime) -> ScheduleBlock | None:
    """The block holding `moment` in a persona's time-ordered schedule; None outside the trajectory."""
    i = bisect.bisect_right([b.start for b in schedule], moment) - 1
    if i >= 0 and schedule[i].start <= moment < schedule[i].end:
        return schedule[i]
    return None


WHERE_TEXT = {
    "en": {
        "home": "at home",
        "office": "at the office",
        "venue": "at {venue}",  # not said today: a venue moment's session comes after the visit
        "trip": "in {city}",
        "transit": "on the way to {city}",
    },
    "zh": {
        "home": "在家",
        "office": "在公司",
        "venue": "在{venue}",
        "trip": "在{city}",
        "transit": "在去{city}的路上",
    },
}
SAMPLE_EVERY = timedelta(minutes=30)


def where_slots(
    persona: Persona, events: list[Event], leaf: Event, country: str, lang: str
) -> dict[str, str]:
    """The realizer's slots for where a leaf is lived, from the graph as planned so far: `{city}` (the city
    the persona is in) and `{where}` ('at the office', '在丽江'), each given only when it holds for the whole
    leaf window, so a line that says it is true at any timestamp the session gets."""
    trips = trip_spans(events)
    days = _Day(persona, {d: t for t in trips for d in _days(t.start, t.end)}, country)
    spots: set[tuple[Place, str, str | None]] = set()
    moment = leaf.start
    while True:
        spot = days.spot(moment)
        spots.add((spot.place, spot.city, None))
        if moment >= leaf.end:
            break
        moment = min(leaf.end, moment + SAMPLE_EVERY)
    slots: dict[str, str] = {}
    if len({city for _, city, _ in spots}) == 1:
        slots["city"] = next(iter(spots))[1]
    if len(spots) == 1:
        place, city, named = next(iter(spots))
        slots["where"] = WHERE_TEXT[lang][place].format(city=city, venue=named or "")
    return slots
