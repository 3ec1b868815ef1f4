"""Where each leaf moment can happen, and which day blocks of a trip the persona spends in the trip city.

The planner asks `slot_allowed` before it puts a moment on a day block, and the schedule
(keme.world.schedule) uses the same table to tell venue moments from the rest, so the plan and the
schedule it is checked against cannot disagree.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import date
from typing import Literal

from keme.days import Block, is_workday

Where = Literal["office", "home_city", "trip", "before_trip", "after_trip", "anywhere"]

# moment -> where it can happen; a moment not listed happens anywhere (a chat, a call, an app record)
MOMENT_PLACES: dict[str, Where] = {
    "work_deadline": "office",
    "work_meeting_prep": "office",
    "work_win": "office",
    "first_day": "office",
    "commute_talk": "office",
    "job_interview": "home_city",
    "social_recap": "home_city",
    "restaurant_pick": "home_city",
    "gift_idea": "home_city",
    "weekend_plan": "home_city",
    "health_symptom": "home_city",
    "health_followup": "home_city",
    "moving_day": "home_city",
    "apartment_hunt": "home_city",
    "pet_adopt": "home_city",
    "pet_care": "home_city",
    "fitness_plan": "home_city",
    "fitness_log": "home_city",
    "recipe_help": "home_city",
    "date_talk": "home_city",
    "anchor_bill": "home_city",
    "trip_during": "trip",
    "trip_planning": "before_trip",
    "trip_packing": "before_trip",
    "trip_recap": "after_trip",
}

# moments that report a visit to a venue ("Back from the clinic", "Workout done!"): the schedule puts the
# visit right before the session, at the venue the param (or persona attribute) names, for so many minutes
VENUE_MOMENTS: dict[str, tuple[str, int]] = {
    "health_followup": ("clinic", 90),
    "fitness_log": ("sport.gym", 60),
}

# episode kinds whose params name an occasion in the home city (a dinner, an outing, a family visit): their
# window never overlaps a trip, so the occasion cannot fall inside it
OCCASION_EPISODES = frozenset({"social", "weekend", "family"})


def where(moment: str) -> Where:
    return MOMENT_PLACES.get(moment, "anywhere")


@dataclass(frozen=True)
class TripSpan:
    """The days a trip holds the persona: out on `start`, in the trip city, back on `end`."""

    event_id: str
    start: date
    end: date
    city: str
    companions: tuple[str, ...] = ()

    def covers(self, day: date) -> bool:
        return self.start <= day <= self.end


def trip_blocks(trip: TripSpan, day: date) -> frozenset[Block]:
    """The day blocks of `day` the persona spends in the trip city (the departure morning is at home and in
    transit, the return evening in transit and at home)."""
    if not trip.covers(day):
        return frozenset()
    blocks: set[Block] = {"morning", "afternoon", "evening"}
    if day == trip.start:
        blocks.discard("morning")
    if day == trip.end:
        blocks.discard("evening")
        blocks.discard("afternoon")
    return frozenset(blocks)


def slot_allowed(
    moment: str,
    day: date,
    block: Block,
    trips: list[TripSpan],
    country: str,
    own_trip: TripSpan | None = None,
) -> bool:
    """Whether the schedule lets `moment` happen on (`day`, `block`): a trip day takes only its own trip's
    moments or ones that can happen anywhere; office moments need a workday off any trip; the moments of a
    trip `own_trip` come before, during or after it as their names say."""
    place = where(moment)
    if place == "trip":
        return own_trip is not None and block in trip_blocks(own_trip, day)
    if any(t.covers(day) for t in trips) or (own_trip is not None and own_trip.covers(day)):
        return place == "anywhere"
    if place == "office":
        return is_workday(day, country)
    if own_trip is not None and place == "before_trip":
        return day < own_trip.start
    if own_trip is not None and place == "after_trip":
        return day > own_trip.end
    return True
