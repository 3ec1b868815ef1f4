"""Where the persona is: the trips of the event graph and the days an anchor keeps the persona at home,
and whether a moment can happen on a day block (keme.world.places). The planner plans trips around them,
the moment placement and the grounder ask them before they put a moment on a block.
"""

from __future__ import annotations

from datetime import date

from keme.days import Slot
from keme.models import Event
from keme.synth.state import Trajectory
from keme.world.places import TripSpan, slot_allowed, where
from keme.world.schedule import trip_spans


def own_trip_of(event: Event) -> TripSpan | None:
    """The trip an episode (or a depth-1 trip leaf) is about, from its params."""
    spans = trip_spans([event])
    return spans[0] if spans else None


def leaf_allowed(traj: Trajectory, leaf: Event, slot: Slot) -> bool:
    """Whether a leaf moved or stretched onto `slot` (by the grounder) still happens where it can."""
    parent = traj.events.get(leaf.parent_id) if leaf.parent_id else None
    own = own_trip_of(leaf) or (own_trip_of(parent) if parent is not None else None)
    trips = trip_spans(traj.graph.events)
    return slot_allowed(leaf.kind, slot[0], slot[1], trips, traj.persona.country, own)


def overlaps_trip(first: date, last: date, traj: Trajectory) -> bool:
    return any(t.start <= last and first <= t.end for t in trip_spans(traj.graph.events))


def anchors_at_home(traj: Trajectory) -> set[date]:
    """Days an anchor puts the persona in the home city: a bill paid in person at a home merchant, the day
    of a calendar event there. A trip is planned around them (its dates never cover one)."""
    found: set[date] = set()
    for anchor in traj.anchors:
        if anchor.app == "bill":
            found.add(anchor.timestamp.date())
        elif anchor.app == "calendar":
            found.add(anchor.record.start.date())  # type: ignore[union-attr]
    return found


def trip_fits(start: date, end: date, traj: Trajectory) -> bool:
    """A trip over [start, end] keeps clear of home anchors, other trips and the home-bound moments already
    placed on its days."""
    if any(start <= d <= end for d in anchors_at_home(traj)) or overlaps_trip(start, end, traj):
        return False
    return not any(
        start <= slot[0] <= end and where(traj.events[owner].kind) != "anywhere"
        for slot, owner in traj.occupied.items()
        if owner in traj.events
    )
