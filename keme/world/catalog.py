"""The typed catalog: which activities happen at which venues, how each dish is cooked, what treats
which condition, which store sells which product, which merchant bills which expense category.

One YAML file per language (keme/world/catalog/<lang>.yaml). Generation only combines items the
catalog pairs; the coherence checker holds the text to the same pairs. A relation is a set of
(left, right) pairs: `catalog.compatible("activity@venue", "go kayaking", "Green Lake")`.
"""

from __future__ import annotations

import functools
from pathlib import Path

import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError

from keme.errors import KemeError

ROOT = Path(__file__).parent / "catalog"

RELATIONS = (
    "activity@venue",  # an activity can be done at a venue
    "dish~method",  # a dish is cooked by a method (its real one)
    "condition~remedy",  # a remedy is a sensible answer to a condition
    "product@store",  # a store sells a product
    "merchant~category",  # a merchant's charges fall in an expense category
)


class CatalogError(KemeError, ValueError):
    """A catalog file is missing or malformed: fix keme/world/catalog/<lang>.yaml."""


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
    method: str = Field(description="how it is really cooked: steam, stir_fry, braise, bake, ...")
    steps: list[str] = Field(default_factory=list, description="cooking steps that fit the method")


class Condition(_Strict):
    name: str
    remedies: list[str] = Field(min_length=1)


class Product(_Strict):
    name: str
    category: str
    stores: list[str] = Field(min_length=1)


class Category(_Strict):
    name: str
    merchants: list[str] = Field(min_length=1)


class Catalog(_Strict):
    """Everything one language's generation may combine, typed."""

    venues: list[Venue] = Field(default_factory=list)
    activities: list[Activity] = Field(default_factory=list)
    dishes: list[Dish] = Field(default_factory=list)
    conditions: list[Condition] = Field(default_factory=list)
    products: list[Product] = Field(default_factory=list)
    categories: list[Category] = Field(default_factory=list)

    @functools.cached_property
    def pairs(self) -> dict[str, frozenset[tuple[str, str]]]:
        """Each relation as its set of compatible (left, right) pairs."""
        venue_types = {v.name: v.type for v in self.venues}
        return {
            "activity@venue": frozenset(
                (a.name, v) for a in self.activities for v, t in venue_types.items() if t in a.venue_types
            ),
            "dish~method": frozenset((d.name, d.method) for d in self.dishes),
            "condition~remedy": frozenset((c.name, r) for c in self.conditions for r in c.remedies),
            "product@store": frozenset((p.name, s) for p in self.products for s in p.stores),
            "merchant~category": frozenset((m, c.name) for c in self.categories for m in c.merchants),
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
                frozenset(r for c in self.conditions for r in c.remedies),
            ),
            "product@store": (
                frozenset(p.name for p in self.products),
                frozenset(s for p in self.products for s in p.stores),
            ),
            "merchant~category": (
                frozenset(m for c in self.categories for m in c.merchants),
                frozenset(c.name for c in self.categories),
            ),
        }

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


@functools.cache
def load_catalog(lang: str, root: Path = ROOT) -> Catalog:
    path = root / f"{lang}.yaml"
    try:
        data = yaml.safe_load(path.read_text(encoding="utf-8")) or {}
    except FileNotFoundError:
        raise CatalogError(f"{path}: no catalog for language {lang!r}") from None
    except yaml.YAMLError as exc:
        raise CatalogError(f"{path}: not valid YAML: {exc}") from None
    try:
        return Catalog.model_validate(data)
    except ValidationError as exc:
        raise CatalogError(f"{path}: {exc}") from None
