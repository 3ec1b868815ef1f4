"""What things cost in the persona's country: per-category price ranges (keme/world/prices/<lang>.yaml).

A bus fare is a few yuan and a snack-bar meal a few dozen, whatever range a pattern line or a bill category
writes. The table gives each category a plausible range per country, names the category of every bill
merchant and of every named money quantity of the text banks (`{money:320-480@flight_price_nonstop}`),
and lists the utilities a household has exactly one provider of. The renderer draws a named amount from
its inline range bounded by its category's (`bounded`), and a bill from its merchant's category.
"""

from __future__ import annotations

import functools
import random
from decimal import ROUND_HALF_UP, Decimal
from pathlib import Path

from pydantic import BaseModel, ConfigDict, model_validator

from keme.errors import KemeError
from keme.world.yamlfile import read_model

ROOT = Path(__file__).parent / "prices"


class PriceError(KemeError, ValueError):
    """keme/world/prices/<lang>.yaml is missing or malformed, or names a category it does not define."""


class PriceTable(BaseModel):
    """One country's prices: category -> [low, high] in whole currency units, and what falls in each."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    currency: str
    categories: dict[str, tuple[int, int]]
    providers: tuple[str, ...] = ()
    whole: tuple[str, ...] = ()  # categories paid in whole units (a fare, a monthly plan)
    merchants: dict[str, str] = {}
    slots: dict[str, str] = {}

    @model_validator(mode="after")
    def _known(self) -> PriceTable:
        for name, (low, high) in self.categories.items():
            if not 0 < low <= high:
                raise ValueError(f"category {name}: empty or non-positive range [{low}, {high}]")
        for where, table in (("merchants", self.merchants), ("slots", self.slots)):
            for key, category in table.items():
                if category not in self.categories:
                    raise ValueError(f"{where}.{key}: unknown category {category!r}")
        for where, kinds in (("providers", self.providers), ("whole", self.whole)):
            for kind in kinds:
                if kind not in self.categories:
                    raise ValueError(f"{where}: unknown category {kind!r}")
        return self

    def slot_range(self, predicate: str) -> tuple[int, int] | None:
        """The category range of a named money quantity, or None when the table does not know it."""
        category = self.slots.get(predicate)
        return self.categories[category] if category is not None else None

    def merchant_range(self, merchant: str) -> tuple[int, int] | None:
        category = self.merchants.get(merchant)
        return self.categories[category] if category is not None else None

    def charge(self, merchant: str, amount: Decimal) -> Decimal:
        """`amount` as the merchant charges it: in whole units where its category is (a ¥2 bus ride)."""
        if self.merchants.get(merchant) in self.whole:
            return amount.quantize(Decimal("1"), rounding=ROUND_HALF_UP).quantize(Decimal("0.01"))
        return amount

    def bound(self, predicate: str, low: int, high: int) -> tuple[int, int]:
        """The range a named amount is drawn from (what `keme.text.template.Context.bound` takes)."""
        return bounded(low, high, self.slot_range(predicate))


def bounded(low: int, high: int, category: tuple[int, int] | None) -> tuple[int, int]:
    """The inline range `low`-`high` kept inside the category's: their overlap (a line's own narrower range
    keeps its meaning, a nonstop flight dearer than one with a layover), or the category's range when the
    line's lies wholly outside it."""
    if category is None:
        return low, high
    lo, hi = max(low, category[0]), min(high, category[1])
    return (lo, hi) if lo <= hi else category


@functools.cache
def load_prices(lang: str, root: Path = ROOT) -> PriceTable:
    return read_model(root / f"{lang}.yaml", PriceTable, PriceError, "missing price table")


def choose_providers(table: PriceTable, merchants: list[str], rng: random.Random) -> dict[str, str]:
    """One provider per utility kind for one household, drawn once from the merchants of that kind:
    every later bill of the kind is from this company."""
    out: dict[str, str] = {}
    for kind in table.providers:
        candidates = sorted({m for m in merchants if table.merchants.get(m) == kind})
        if candidates:
            out[kind] = rng.choice(candidates)
    return out


def household_merchant(table: PriceTable, merchant: str, providers: dict[str, str]) -> str:
    """`merchant`, or the household's own provider when the merchant is a provider of a utility it has."""
    return providers.get(table.merchants.get(merchant, ""), merchant)
