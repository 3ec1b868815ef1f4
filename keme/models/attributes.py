"""The persona attribute catalogue (language-independent).

`initial="absent"` attributes do not exist at the start of a trajectory and
appear through a life change (a pet, a partner); `mutable` ones may change.
Only immutable attributes may be used when generating anchors, because anchors
are fixed before the life events that change mutable ones are planned.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal


@dataclass(frozen=True)
class AttributeSpec:
    key: str
    mutable: bool
    initial: Literal["present", "absent"] = "present"

    @property
    def dimension(self) -> str:
        return self.key.split(".", 1)[0]


ATTRIBUTES: tuple[AttributeSpec, ...] = (
    AttributeSpec("basic_info.age", mutable=False),
    AttributeSpec("basic_info.hometown", mutable=False),
    AttributeSpec("home.city", mutable=True),
    AttributeSpec("home.neighborhood", mutable=True),
    AttributeSpec("career.company", mutable=True),
    AttributeSpec("career.job_title", mutable=True),
    AttributeSpec("diet.diet_type", mutable=True),
    AttributeSpec("diet.favorite_cuisine", mutable=False),
    AttributeSpec("health.allergy", mutable=False),
    AttributeSpec("health.sleep_habit", mutable=False),
    AttributeSpec("sport.main_sport", mutable=True),
    AttributeSpec("sport.gym", mutable=True),
    AttributeSpec("shopping.favorite_platform", mutable=False),
    AttributeSpec("transport.commute_mode", mutable=True),
    AttributeSpec("travel.dream_destination", mutable=False),
    AttributeSpec("travel.seat_preference", mutable=False),
    AttributeSpec("tech.phone", mutable=True),
    AttributeSpec("tech.laptop", mutable=False),
    AttributeSpec("entertainment.favorite_show", mutable=True),
    AttributeSpec("entertainment.music_genre", mutable=False),
    AttributeSpec("finance.bank", mutable=False),
    AttributeSpec("finance.monthly_budget", mutable=True),
    AttributeSpec("finance.savings_goal", mutable=True),
    AttributeSpec("social_circle.best_friend", mutable=False),
    AttributeSpec("social_circle.sibling", mutable=False),
    AttributeSpec("social_circle.sibling_relation", mutable=False),
    AttributeSpec("social_circle.partner", mutable=True, initial="absent"),
    AttributeSpec("pets.pet_name", mutable=True, initial="absent"),
    AttributeSpec("pets.pet_species", mutable=True, initial="absent"),
    AttributeSpec("learning.current_course", mutable=True),
    # routines: said through named quantities of the same name (`{num:2-4@training_per_week}`), changed
    # only by a life change whose update message states the new value
    AttributeSpec("routine.training_per_week", mutable=True),
    AttributeSpec("routine.commute_minutes", mutable=True),
    AttributeSpec("routine.usual_lunch", mutable=True),
)

BY_KEY: dict[str, AttributeSpec] = {spec.key: spec for spec in ATTRIBUTES}
DIMENSIONS: tuple[str, ...] = tuple(dict.fromkeys(spec.dimension for spec in ATTRIBUTES))
IMMUTABLE_KEYS: frozenset[str] = frozenset(spec.key for spec in ATTRIBUTES if not spec.mutable)
ROUTINE = "routine"  # the dimension whose attributes are claimed under their name, a registered predicate


def claim_predicate(key: str) -> str:
    """The predicate a claim on attribute `key` carries: `training_per_week` for
    `routine.training_per_week` (the name the templates' named quantities use), the key otherwise."""
    dimension, _, name = key.partition(".")
    return name if dimension == ROUTINE else key


def attribute_key(predicate: str) -> str | None:
    """The persona attribute a claim predicate states, if any (the inverse of `claim_predicate`)."""
    if predicate in BY_KEY:
        return predicate
    routine = f"{ROUTINE}.{predicate}"
    return routine if routine in BY_KEY else None
