"""Build the initial persona: one value per attribute, valid from the trajectory start."""

from __future__ import annotations

from datetime import datetime, time, timedelta

from keme.config import PersonaSpec
from keme.days import add_months
from keme.models.attributes import ATTRIBUTES
from keme.models.persona import Attribute, AttributeVersion, Persona
from keme.prior.habits import draw_habits
from keme.prior.people import distinct_names, gender_of_relation, person_name, taken_names
from keme.seeding import rng_for
from keme.text.resources import Resources

PARTNER_AT_START = 0.35


def persona_id(index: int) -> str:
    return f"p{index + 1:02d}"


def trajectory_window(spec: PersonaSpec) -> tuple[datetime, datetime]:
    start = datetime.combine(spec.start, time())
    end = datetime.combine(add_months(spec.start, spec.months), time()) - timedelta(seconds=1)
    return start, end


def build_persona(spec: PersonaSpec, index: int, seed: int, res: Resources) -> Persona:
    rng = rng_for(seed, persona_id(index), "persona")
    start, end = trajectory_window(spec)
    gender = rng.choice(("female", "male"))
    family = rng.choice(res.pools.names.family)
    name = person_name(rng, res, full=True, gender=gender, family=family)
    city = rng.choice(res.pools.cities)
    friend, partner = distinct_names(rng, res, 2, avoid={name})
    relation = rng.choice(res.persona.attributes["social_circle.sibling_relation"].values)
    taken = taken_names({name, friend, partner})
    sibling = name
    for _ in range(50):  # a sibling shares the family name and has the gender the relation word implies
        sibling = person_name(rng, res, gender=gender_of_relation(relation), family=family)
        if sibling not in taken:
            break
    generated = {
        "home.city": city.name,
        "home.neighborhood": rng.choice(city.neighborhoods),
        "social_circle.best_friend": friend,
        "social_circle.sibling": sibling,
        "social_circle.partner": partner,
        "social_circle.sibling_relation": relation,
    }
    dimensions: dict[str, dict[str, Attribute]] = {}
    for attr in ATTRIBUTES:
        if attr.initial == "absent" and not (
            attr.key == "social_circle.partner" and rng.random() < PARTNER_AT_START
        ):
            versions: list[AttributeVersion] = []
        else:
            text = res.persona.attributes[attr.key]
            held = {key: v for key in text.fits if (v := _initial(dimensions, key)) is not None}
            value = generated.get(attr.key) or rng.choice(text.fitting(held))
            versions = [AttributeVersion(value=value, valid_from=start)]
        dim, _, field = attr.key.partition(".")
        dimensions.setdefault(dim, {})[field] = Attribute(
            key=attr.key, mutable=attr.mutable, versions=versions
        )
    persona = Persona(
        id=persona_id(index),
        name=name,
        language=spec.language,
        country=spec.holiday_country,
        start=start,
        end=end,
        dimensions=dimensions,
    )
    # her habits draw on her attributes (the bank on her card, the sleep that sets her chat time)
    return persona.model_copy(update={"habits": draw_habits(persona, seed, res)})


def _initial(dimensions: dict[str, dict[str, Attribute]], key: str) -> str | None:
    """The starting value of attribute `key` among those built so far (an attribute that must fit it,
    a usual lunch and the diet, comes after it in ATTRIBUTES)."""
    dim, _, field = key.partition(".")
    attr = dimensions.get(dim, {}).get(field)
    return attr.versions[0].value if attr is not None and attr.versions else None
