"""Which predicate each template slot says, by where the slot's value comes from.

A slot's value comes from the session (its date, weekday, part of day, the user's name), from the
session's app record (keme.prior.anchors.anchor_slots), from the reveal being said (`{value}`), or from
the episode's details (the planner's params). The ledger turns each into a claim on the right
subject; the template check (keme.world.predicates.check_templates) accepts a slot only if it is one
of these or a registered predicate.
"""

from __future__ import annotations

# session slot -> predicate (subject: the session's leaf event; `user_name` is the persona's)
SESSION_SLOTS: dict[str, str] = {
    "date": "date",
    "weekday": "weekday",
    "part_of_day": "part_of_day",
    "user_name": "name",
    "city": "city",  # the city the schedule has the persona in (keme.world.schedule.where_slots)
    "where": "where",
}

# app record slot -> predicate (subject: anchor:<id>); the canonical value is the record's field
ANCHOR_SLOTS: dict[str, str] = {
    "amount": "amount",
    "attendees": "attendees",
    "body": "body",
    "category": "expense_category",
    "doc_type": "doc_type",
    "due_date": "date",
    "duration": "duration_seconds",
    "event_date": "date",
    "event_time": "time",
    "list_name": "list_name",
    "location": "location",
    "merchant": "merchant",
    "pages": "pages",
    "payment_method": "payment_method",
    "priority": "priority",
    "source_app": "source_app",
    "summary": "summary",
    "text": "screen_text",
    "title": "title",
    "transcript": "transcript",
}

# the reveal beat's slot: the persona attribute being revealed
REVEAL_SLOT = "value"

# episode detail slots whose name is not their predicate (all others say the predicate of their name)
EVENT_SLOTS: dict[str, str] = {
    "place": "venue",  # the weekend outing's place ("the park"); `place` is home|office|venue|trip|transit
}


def event_predicate(slot: str) -> str:
    return EVENT_SLOTS.get(slot, slot)


# the moment slots that name the object a line's declared condition is about (`says: {condition: worn}`:
# in a purchase, the old item of the category being replaced; in tech help, the device), and its states
OBJECT_SLOTS = ("device", "product_category")
OBJECT_STATES = ("working", "worn", "broken", "repaired", "replaced")
