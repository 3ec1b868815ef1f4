"""The typed catalog: which activities happen at which venues, how each dish is cooked, what treats
which condition, which store sells which product, which merchant bills which expense category.

One YAML file per language (keme/world/catalog/<lang>.yaml). Generation only combines items the
catalog pairs; the coherence checker holds the text to the same pairs. A relation is a set of
(left, right) pairs: `catalog.compatible("activity@venue", "go kayaking", "Green Lake")`.
"""

from __future__ import annotations

import functools
from collections.abc import Iterable
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator

from keme.errors import KemeError
from keme.world.lifecycle import Lifecycle
from keme.world.yamlfile import read_model

ROOT = Path(__file__).parent / "catalog"

RELATIONS = (
    "activity@venue",  # an activity can be done at a venue
    "dish~method",  # a dish is cooked by a method (its real one)
    "condition~remedy",  # a remedy is a sensible answer to a condition
    "product@store",  # a store sells a product
    "merchant~category",  # a merchant's charges fall in an expense category
    "occasion@venue",  # an occasion can be held at a venue
    "condition@clinic",  # a clinic (a venue) treats a condition
    "goal~sport",  # a fitness goal is one a person doing the sport works toward
)

DINING = frozenset({"restaurant", "banquet_hall", "hotpot", "bbq", "cafe", "bar", "fast_food"})
"""Venue types where a meal is had: a social episode's restaurant is one of these."""


class CatalogError(KemeError, ValueError):
    """A catalog file is missing or malformed: fix keme/world/catalog/<lang>.yaml."""


Technique = Literal["steam", "stir_fry", "braise", "bake", "deep_fry", "grill", "boil", "pan_fry", "raw"]


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid")


class Venue(_Strict):
    name: str
    type: str = Field(description="what kind of place: park, museum, restaurant, gym, office, ...")


class Activity(_Strict):
    name: str
    venue_types: list[str] = Field(min_length=1, description="the venue types where it can happen")


class Dish(_Strict):
    name: str
    method: str = Field(
        description="how it is really cooked, as the language says it: steam / 蒸, braise / 红烧"
    )
    technique: Technique = Field(
        description="the kind of method, language-neutral (what the cue words for methods are keyed by)"
    )
    steps: list[str] = Field(min_length=3, description="cooking steps that fit the method, in order")
    ingredients: list[str] = Field(min_length=1, description="what goes into it (the ingredient a user has)")
    avoid: list[str] = Field(
        default_factory=list,
        description="the allergies and diets (persona.yaml health.allergy / diet.diet_type values) it does "
        "not go with: no shrimp and eggs for a shellfish allergy, no carbonara for the dairy-free",
    )


class Condition(_Strict):
    name: str
    remedies: list[str] = Field(min_length=1)
    clinic_types: list[str] = Field(min_length=1, description="venue types of the places that treat it")


class Product(_Strict):
    name: str
    category: str
    stores: list[str] = Field(min_length=1)
    price: tuple[int, int] = Field(description="what it usually costs, low and high, in the currency's units")
    care: list[str] = Field(default_factory=list, description="care tips that fit this product")


class Category(_Strict):
    name: str = Field(description="the category label a bill shows (anchors.yaml bill.categories.*.label)")
    merchants: list[str] = Field(min_length=1)
    shareable: bool = Field(default=True, description="whether a charge can be split with others")
    in_person: bool = Field(
        default=False,
        description="its charges are paid at a place in the home city (a shop, a restaurant, a clinic): the "
        "persona is there at the charge's time, so not on a trip or at the office",
    )
    online: list[str] = Field(
        default_factory=list,
        description="merchants of an in-person category paid from anywhere (a delivery app, an online shop)",
    )
    recurring: bool = Field(
        default=False,
        description="its charges are bills paid on a schedule (a phone plan, rent, a subscription), not "
        "something bought: no 'what did I buy?'",
    )
    treat: bool = Field(
        default=False,
        description="a charge of it can be a treat, a want paid gladly (a dinner, a show), not a bill",
    )
    hours: tuple[int, int] = Field(
        default=(10, 21), description="[open, close) on the hour: when its places take a charge in person"
    )


Reach = Literal["near", "far", "long_haul"]
NIGHTS: dict[str, tuple[int, int]] = {"near": (2, 3), "far": (3, 4), "long_haul": (5, 7)}
"""How many nights a trip of each reach lasts, fewest and most: a flight abroad is not an overnight."""


class Destination(_Strict):
    name: str = Field(description="a trip destination as pools.yaml destinations names it")
    reach: Reach = Field(
        description="how far it is from the persona's home country: near (same country, a short hop), "
        "far (a long domestic flight or a nearby country), long_haul (another continent)"
    )

    @property
    def nights(self) -> tuple[int, int]:
        return NIGHTS[self.reach]


Role = Literal["friend", "sibling", "partner", "acquaintance"]
ROLES: tuple[Role, ...] = ("friend", "sibling", "partner", "acquaintance")


class Occasion(_Strict):
    name: str
    venue_types: list[str] = Field(min_length=1, description="the venue types where it is held")
    people: list[Role] = Field(
        default=list(ROLES),
        min_length=1,
        description="whose occasion it can be, by their relation to the persona: the best friend since "
        "school has no retirement party, the partner no surprise engagement party of their own; an "
        "acquaintance (a colleague, a neighbour) can be of any age",
    )
    yearly: str | None = Field(
        default=None,
        description="what it marks once a year for its person (birthday, anniversary): a person has one "
        "occasion of each such kind a year",
    )
    months: list[int] = Field(
        default_factory=list,
        description="the months (1-12) it falls in, for a seasonal one (a holiday party in December, not "
        "June); empty: any month",
    )

    def in_season(self, month: int) -> bool:
        return not self.months or month in self.months


class Goal(_Strict):
    name: str = Field(
        description="a verb phrase as the patterns say it: run a sub-25-minute 5K / 5公里跑进28分钟"
    )
    sports: list[str] = Field(
        min_length=1, description="the main sports (persona.yaml sport.main_sport values) it belongs to"
    )


class Diet(_Strict):
    """What a diet rules out and which other diets' menus suit a person on it, so that a choice item's
    options are proved against the diet in force and not only the attribute the question is about (a
    vegan persona must not eat the shellfish snack either)."""

    name: str = Field(description="a diet as persona.yaml diet.diet_type names it")
    excludes: list[str] = Field(
        default_factory=list,
        description="food allergens (questions.yaml food_allergens) a person on it does not eat; when in "
        "doubt listed, so that no such food is ever offered as the one safe option",
    )
    suits: list[str] = Field(
        default_factory=list,
        description="other diets whose menus suit a person on it too (a vegan menu suits a vegetarian)",
    )


class Allergen(_Strict):
    """A food allergen and the other allergens a person allergic to it keeps away from as well."""

    name: str = Field(description="a food allergen as questions.yaml food_allergens names it")
    with_: list[str] = Field(
        default_factory=list,
        alias="with",
        description="allergens avoided along with it (虾蟹 with 海鲜, tree nuts with peanuts: cross-contact)",
    )


class Platform(_Strict):
    """A shop a persona may favour (persona.yaml shopping.favorite_platform) and the kinds of goods it
    sells: a question about ordering sheets has no store that sells none as its answer."""

    name: str
    sells: list[str] = Field(min_length=1, description="kinds of goods (bedding, gifts, electronics, ...)")


class Cuisine(_Strict):
    """A cuisine a persona may favour and the ones a fan of it enjoys as well (火锅 for a 川菜 fan)."""

    name: str
    with_: list[str] = Field(default_factory=list, alias="with")


class Catalog(_Strict):
    """Everything one language's generation may combine, typed."""

    venues: list[Venue] = Field(default_factory=list)
    activities: list[Activity] = Field(default_factory=list)
    dishes: list[Dish] = Field(default_factory=list)
    conditions: list[Condition] = Field(default_factory=list)
    products: list[Product] = Field(default_factory=list)
    categories: list[Category] = Field(default_factory=list)
    occasions: list[Occasion] = Field(default_factory=list)
    destinations: list[Destination] = Field(default_factory=list)
    general_remedies: list[str] = Field(
        default_factory=list,
        description="care that suits any condition (rest, fluids, sleep): never a mismatch",
    )
    goals: list[Goal] = Field(default_factory=list)
    general_goals: list[str] = Field(
        default_factory=list,
        description="fitness goals that suit any sport (lose 10 pounds): never a mismatch",
    )
    diets: list[Diet] = Field(default_factory=list)
    allergens: list[Allergen] = Field(default_factory=list)
    platforms: list[Platform] = Field(default_factory=list)
    cuisines: list[Cuisine] = Field(default_factory=list)
    confusable: list[list[str]] = Field(
        default_factory=list,
        description="words that name one kind of thing (onboarding, new-hire, training): a made-up name "
        "holding one of a group is no unseen name once the persona said any word of it",
    )
    lifecycle: Lifecycle = Field(
        default_factory=Lifecycle,
        description="what happens once, yearly or at a rate, and what changes bring (keme.world.lifecycle)",
    )

    @model_validator(mode="after")
    def _types_are_served(self) -> Catalog:
        """Every venue type an activity, occasion or condition names has a venue; names are unique."""
        types = {v.type for v in self.venues}
        missing = sorted(
            {
                (item.name, t)
                for item in self.activities + self.occasions
                for t in item.venue_types
                if t not in types
            }
            | {(c.name, t) for c in self.conditions for t in c.clinic_types if t not in types}
        )
        if missing:
            raise ValueError("no venue of type: " + ", ".join(f"{t} (for {n!r})" for n, t in missing))
        stray = sorted(m for c in self.categories for m in c.online if m not in c.merchants)
        if stray:
            raise ValueError("online merchants not among their category's merchants: " + ", ".join(stray))
        kinds = (
            "venues",
            "activities",
            "dishes",
            "conditions",
            "products",
            "categories",
            "occasions",
            "goals",
        )
        for kind in (*kinds, "destinations", "diets", "allergens", "platforms", "cuisines"):
            names = [entry.name for entry in getattr(self, kind)]
            twice = sorted({n for n in names if names.count(n) > 1})
            if twice:
                raise ValueError(f"{kind} named twice: {', '.join(twice)}")
        known = {o.name for o in self.occasions}
        unknown = sorted({n for r in self.lifecycle.order for n in r.first + r.then} - known)
        if unknown:
            raise ValueError("lifecycle order names no occasion: " + ", ".join(unknown))
        return self

    def confusable_with(self, name: str) -> list[str]:
        """The words of every group one of whose words `name` holds (lower case)."""
        low = name.lower()
        return [w for group in self.confusable if any(w.lower() in low for w in group) for w in group]

    def diet(self, name: str | None) -> Diet | None:
        return next((d for d in self.diets if d.name == name), None)

    def avoided_with(self, allergen: str | None) -> frozenset[str]:
        """The allergen and every other one a person allergic to it keeps away from too."""
        if allergen is None:
            return frozenset()
        entry = next((a for a in self.allergens if a.name == allergen), None)
        return frozenset({allergen, *(entry.with_ if entry else [])})

    def sells(self, platform: str, goods: str) -> bool | None:
        """Whether a platform sells a kind of goods; None for a platform the catalog does not list."""
        entry = next((p for p in self.platforms if p.name == platform), None)
        return None if entry is None else goods in entry.sells

    def cuisines_with(self, cuisine: str | None) -> frozenset[str]:
        """The cuisine and the ones a fan of it enjoys as well."""
        if cuisine is None:
            return frozenset()
        entry = next((c for c in self.cuisines if c.name == cuisine), None)
        return frozenset({cuisine, *(entry.with_ if entry else [])})

    def in_person(self, merchant: str) -> bool | None:
        """Whether a charge from `merchant` is paid there, in the home city; None for an unlisted merchant."""
        for category in self.categories:
            if merchant in category.merchants:
                return category.in_person and merchant not in category.online
        return None

    def nights(self, destination: str) -> tuple[int, int] | None:
        """The fewest and most nights a trip to `destination` lasts; None for a destination not listed."""
        for entry in self.destinations:
            if entry.name == destination:
                return entry.nights
        return None

    def category(self, name: str) -> Category | None:
        return next((c for c in self.categories if c.name == name), None)

    def hours(self, merchant: str) -> tuple[int, int] | None:
        """The hours a merchant paid in person takes a charge; None when it is paid from anywhere."""
        for category in self.categories:
            if merchant in category.merchants:
                return category.hours if self.in_person(merchant) else None
        return None

    def occasions_in(self, month: int, role: Role | None = None) -> list[Occasion]:
        """The occasions that can fall in `month` (and be of a person of `role`), in file order (what
        generation picks from)."""
        return [o for o in self.occasions if o.in_season(month) and (role is None or role in o.people)]

    def venues_of(self, types: Iterable[str]) -> list[Venue]:
        """The venues of any of `types`, in file order (what generation picks from)."""
        wanted = set(types)
        return [v for v in self.venues if v.type in wanted]

    def item(self, kind: str, name: str) -> Any:
        """The named item of a list (`venues`, `dishes`, ...); KeyError names what is missing."""
        for entry in getattr(self, kind):
            if entry.name == name:
                return entry
        raise KeyError(f"{name!r} is not among the catalog's {kind}")

    @functools.cached_property
    def pairs(self) -> dict[str, frozenset[tuple[str, str]]]:
        """Each relation as its set of compatible (left, right) pairs."""
        venue_types = {v.name: v.type for v in self.venues}
        return {
            "activity@venue": frozenset(
                (a.name, v) for a in self.activities for v, t in venue_types.items() if t in a.venue_types
            ),
            "dish~method": frozenset((d.name, d.method) for d in self.dishes),
            "condition~remedy": frozenset(
                (c.name, r) for c in self.conditions for r in [*c.remedies, *self.general_remedies]
            ),
            "product@store": frozenset((p.name, s) for p in self.products for s in p.stores),
            "merchant~category": frozenset((m, c.name) for c in self.categories for m in c.merchants),
            "occasion@venue": frozenset(
                (o.name, v) for o in self.occasions for v, t in venue_types.items() if t in o.venue_types
            ),
            "condition@clinic": frozenset(
                (c.name, v) for c in self.conditions for v, t in venue_types.items() if t in c.clinic_types
            ),
            "goal~sport": frozenset((g.name, s) for g in self.goals for s in g.sports)
            | frozenset((g, s) for g in self.general_goals for s in self.sports),
        }

    @functools.cached_property
    def known(self) -> dict[str, tuple[frozenset[str], frozenset[str]]]:
        """Each relation's declared left and right items, so an unknown item is told apart from a mismatch."""
        return {
            "activity@venue": (
                frozenset(a.name for a in self.activities),
                frozenset(v.name for v in self.venues),
            ),
            "dish~method": (frozenset(d.name for d in self.dishes), frozenset(d.method for d in self.dishes)),
            "condition~remedy": (
                frozenset(c.name for c in self.conditions),
                frozenset(r for c in self.conditions for r in c.remedies) | frozenset(self.general_remedies),
            ),
            "product@store": (
                frozenset(p.name for p in self.products),
                frozenset(s for p in self.products for s in p.stores),
            ),
            "merchant~category": (
                frozenset(m for c in self.categories for m in c.merchants),
                frozenset(c.name for c in self.categories),
            ),
            "occasion@venue": (
                frozenset(o.name for o in self.occasions),
                frozenset(v.name for v in self.venues),
            ),
            "condition@clinic": (
                frozenset(c.name for c in self.conditions),
                frozenset(v.name for v in self.venues),
            ),
            "goal~sport": (
                frozenset(g.name for g in self.goals) | frozenset(self.general_goals),
                self.sports,
            ),
        }

    @functools.cached_property
    def sports(self) -> frozenset[str]:
        """The sports the goals name (a general goal suits each of them)."""
        return frozenset(s for g in self.goals for s in g.sports)

    def goals_for(self, sport: str) -> list[str]:
        """The goals that suit `sport`, its own before the general ones, in file order (what generation
        picks from); only the general ones for a sport the catalog does not know."""
        return [g.name for g in self.goals if sport in g.sports] + list(self.general_goals)

    def compatible(self, relation: str, left: str, right: str) -> bool | None:
        """True or False when the catalog knows both items, None when it knows either not."""
        if relation not in RELATIONS:
            raise KeyError(f"unknown catalog relation {relation!r} (one of {', '.join(RELATIONS)})")
        lefts, rights = self.known[relation]
        if left not in lefts or right not in rights:
            return None
        return (left, right) in self.pairs[relation]

    def partners(self, relation: str, left: str) -> list[str]:
        """The right-hand items compatible with `left`, in a stable order (what generation picks from)."""
        return sorted(b for a, b in self.pairs[relation] if a == left)


def _without_shared(data: dict) -> dict:
    data.pop("shared", None)  # YAML anchors the items refer to (care tips), not catalog items
    return data


@functools.cache
def load_catalog(lang: str, root: Path = ROOT) -> Catalog:
    return read_model(
        root / f"{lang}.yaml", Catalog, CatalogError, f"no catalog for language {lang!r}", _without_shared
    )
