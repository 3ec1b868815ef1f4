"""Second right answers: the options of a choice item proved against the whole persona and the catalog.

A preference question ("I'm grabbing something from the vending machine. Which one should I not eat?")
is built from one attribute (the allergy), but a reader answers it from everything the persona is: a
vegan persona must not eat the shellfish snack either, a store that sells no sheets is nowhere anyone
orders sheets from, a 川菜 fan enjoys 火锅 too. This module knows nothing of how options are drawn
(keme.qa.options, keme.qa.generate.persona): given the options, the persona at the question's time and
the catalog, it says which options are right besides the gold, whether the gold itself is right, and
which options are not of the kind the question names. The option builder drops what it flags and
`keme validate` fails an item it flags, so the two cannot drift apart.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import datetime

from keme.models import Persona, QAItem
from keme.qa.phrasing import Generalization
from keme.qa.phrasing import get as phrasing
from keme.world.catalog import Catalog

LETTERS = "ABCDEFGH"

# What a question asks for, by the words it names it with, and the words every option of that kind says
# ("a restaurant question has restaurant options, not cuisines")
KINDS: dict[str, tuple[tuple[str, str], ...]] = {
    "en": (
        (r"\brestaurants?\b", r"\brestaurant\b"),
        (r"\bmenus?\b", r"\bmenu\b"),
        (r"\bsnacks?\b", r"\bsnack\b"),
    ),
    "zh": (
        (r"餐厅|馆子|饭店", r"餐厅|馆子|饭店|馆|店"),
        (r"菜单", r"菜单"),
        (r"零食", r"零食"),
    ),
}


@dataclass(frozen=True)
class OptionProof:
    """What the catalog and the persona say of one choice item's options."""

    also_right: tuple[str, ...] = ()  # options besides the gold that are right too
    gold_wrong: str | None = None  # why the gold itself is not right
    off_kind: tuple[str, ...] = ()  # options not of the kind the question names

    @property
    def ok(self) -> bool:
        return not self.also_right and self.gold_wrong is None and not self.off_kind

    def problems(self) -> list[str]:
        out = [f"also right: {o!r}" for o in self.also_right]
        out += [f"not what the question asks for: {o!r}" for o in self.off_kind]
        return out + ([f"the gold is not right: {self.gold_wrong}"] if self.gold_wrong else [])


def _pattern(template: str) -> re.Pattern[str]:
    """The option template as a pattern whose one group is the value it was filled with."""
    head, _, tail = template.partition("{value}")
    return re.compile(re.escape(head) + "(.+?)" + re.escape(tail) + r"\Z")


def option_value(option: str, template: str) -> str | None:
    """The value an option was rendered from with `template` (None when it was not)."""
    match = _pattern(template).match(option)
    return match.group(1) if match else None


def _value(persona: Persona, key: str, at: datetime) -> str | None:
    """The value of `key` in force at `at`; None when the persona has no such attribute."""
    try:
        return persona.value_at(key, at)
    except KeyError:
        return None


def _held_until(persona: Persona, key: str, at: datetime) -> set[str]:
    """Every value of `key` the persona held up to `at`: a former favourite is a likely pick too."""
    return {v.value for v in persona.attribute(key).versions if v.valid_from <= at}


def right_values(
    key: str, persona: Persona, at: datetime, catalog: Catalog, needs: str | None = None
) -> set[str] | None:
    """The values an option of a `key` preference question may hold and be right, by every attribute in
    force at `at` and the catalog; None when the preference has no value then.

    An allergy question asks which to keep away from: the allergen, those avoided with it and every food
    the diet in force excludes. A menu question: the diet and the diets whose menus suit it. A cuisine:
    the favourite and the ones its fans enjoy too. A shop: the favourite, when it sells what is needed.
    """
    held = _value(persona, key, at)
    if held is None:
        return None
    right = _held_until(persona, key, at)
    if key == "health.allergy":
        diet = catalog.diet(_value(persona, "diet.diet_type", at))
        right |= catalog.avoided_with(held) | set(diet.excludes if diet else ())
    elif key == "diet.diet_type":
        diet = catalog.diet(held)
        right |= set(diet.suits if diet else ())
    elif key == "diet.favorite_cuisine":
        right |= catalog.cuisines_with(held)
    elif key == "shopping.favorite_platform" and needs is not None:
        right = {p for p in right if catalog.sells(p, needs) is not False}
    return right


def off_kind(question: str, options: list[str], lang: str) -> list[str]:
    """The options not of the kind the question asks for (cuisines for a restaurant question)."""
    for asked, shown in KINDS.get(lang, ()):
        if re.search(asked, question, re.IGNORECASE):
            return [o for o in options if not re.search(shown, o, re.IGNORECASE)]
    return []


def prove_options(
    key: str,
    question: str,
    options: list[str],
    gold: int,
    persona: Persona,
    at: datetime,
    catalog: Catalog,
    lang: str,
    needs: str | None = None,
    templates: tuple[str, ...] = ("{value}",),
) -> OptionProof:
    """The proof of a preference item's options: `gold` is the index of the option the item calls right,
    `templates` the option templates the values were rendered with."""
    right = right_values(key, persona, at, catalog, needs) or set()

    def is_right(option: str) -> bool:
        values = {v for t in templates if (v := option_value(option, t)) is not None}
        # a value written inside another ("bike" in "by e-bike") is read as that value too
        return bool(values & right) or any(r in option for r in right)

    gold_wrong = None
    held = _value(persona, key, at)
    if key == "shopping.favorite_platform" and needs is not None and held is not None:
        if catalog.sells(held, needs) is False:
            gold_wrong = f"{held} sells no {needs}"
    if gold_wrong is None and not is_right(options[gold]):
        gold_wrong = f"{options[gold]!r} is not what {key} = {held!r} picks"
    return OptionProof(
        also_right=tuple(o for i, o in enumerate(options) if i != gold and is_right(o)),
        gold_wrong=gold_wrong,
        off_kind=tuple(off_kind(question, options, lang)),
    )


def _generalization(item: QAItem) -> tuple[str, Generalization] | None:
    key = item.subtype.removeprefix("gen.")
    text = phrasing(item.language).text.generalize.get(key)
    return (key, text) if item.subtype.startswith("gen.") and text is not None else None


def prove_item(item: QAItem, persona: Persona, catalog: Catalog) -> OptionProof | None:
    """The proof of a preference-generalization item's options; None for any other item."""
    found = _generalization(item)
    if found is None or item.spec.kind != "choice" or not item.options:
        return None
    key, text = found
    situation = text.situation(item.question)
    templates = tuple(dict.fromkeys([text.option_for(situation) if situation else text.option, text.option]))
    gold = LETTERS.index(item.spec.value or "A")
    return prove_options(
        key,
        item.question,
        item.options,
        gold,
        persona,
        item.asked_at,
        catalog,
        item.language,
        needs=situation.needs if situation else None,
        templates=templates,
    )


def also_right(item: QAItem, persona: Persona, catalog: Catalog) -> list[str]:
    """The options of `item` that are right besides its gold (empty for an item this module does not
    prove)."""
    proof = prove_item(item, persona, catalog)
    return list(proof.also_right) if proof else []
