"""The values the world holds for a session, and what free text (the LLM brain's) says about them.

The procedural brain says a named quantity only through the ledger, so it agrees by construction. A model
writes free text instead: it is given the held values (`held_values`, listed in its prompt), its text is
read back into the reports a template line would have made (`said`: a held value it writes, a head count
it states), so its messages carry claims like the procedural ones, and a count it states for a held
quantity that disagrees with the world is a problem fed back to it (`disagreements`).
"""

from __future__ import annotations

import random
import re
from collections.abc import Iterable
from dataclasses import dataclass
from decimal import Decimal, InvalidOperation

from keme.text import lang as fmt
from keme.text.template import Template
from keme.world.cues import Cues
from keme.world.ledger import Ledger, Report, Scene, canonical
from keme.world.slots import event_predicate

# predicate -> the cue lists (keme/world/cues/<lang>.yaml) whose (?P<n>) states it in text
QUANTITY_CUES: dict[str, tuple[str, ...]] = {
    "party_size": ("party_size", "split"),
    "training_per_week": ("training_per_week",),
}
NUMERIC = ("int", "money")
_CLAUSE = re.compile(r"[^.!?;。！？；\n]+[.!?;。！？；]*")  # as keme.world.check.base.World.clauses


@dataclass(frozen=True)
class Held:
    """One value the world holds for the session: what the model must say if it names the quantity."""

    predicate: str
    value: str  # canonical (keme.world.ledger.canonical): digits, HH:MM, ...
    text: str  # as a message writes it: "$45", "¥45", "4"
    kind: str  # the report kind a template part would make: num | money | pool
    scope: str  # persona | event | session | anchor
    about: str


def held_values(
    ledger: Ledger, scene: Scene, templates: Iterable[Template], rng: random.Random
) -> list[Held]:
    """The numbers the session may state, as the world holds them: those the moment's templates name
    (drawn now from the template's range when the world holds none yet, as the procedural brain would),
    the episode's numeric details, then every value already held in the session's scopes.

    Call after `ledger.begin(scene)`; values drawn here are pending until the session is kept."""
    out: dict[str, Held] = {}

    def hold(predicate: str, draw) -> None:
        registered = ledger.predicates.get(predicate)
        if predicate in out or registered is None or registered.type not in NUMERIC:
            return
        value = ledger.recall(predicate, draw)
        money = registered.type == "money"
        out[predicate] = Held(
            predicate,
            value,
            _money_text(value, scene.lang) if money else value,
            "money" if money else "num",
            registered.scope,
            registered.about,
        )

    for template in templates:
        for part in template.parts:
            if part.kind in ("num", "money") and part.predicate:
                low, high = part.low, part.high
                hold(part.predicate, lambda low=low, high=high: str(rng.randint(low, high)))
    for slot, value in sorted(scene.params.items()):
        registered = ledger.predicates.get(event_predicate(slot))
        if slot.startswith(("_", "set:")) or registered is None or registered.type not in NUMERIC:
            continue
        amount = canonical(value, registered.type, scene)  # "$63" -> "63"
        if amount.replace(".", "", 1).isdigit():
            hold(event_predicate(slot), lambda amount=amount: amount)
    for predicate, value in ledger.held():
        hold(predicate, lambda value=value: value)
    return list(out.values())


def _money_text(value: str, lang: str) -> str:
    try:
        return fmt.format_money(Decimal(value), lang)
    except InvalidOperation:
        return value


def _number_at(value: str, text: str) -> bool:
    """`value` is written in `text` as a number of its own (not part of 145 or 4.5 or 14:05)."""
    return re.search(rf"(?<![\d.,:]){re.escape(value)}(?![\d:]|[.,]\d)", text) is not None


def _money_at(value: str, text: str) -> bool:
    """`value` is written in `text` as an amount: "$1,234", "¥45", "45元", "45 dollars"."""
    try:
        grouped = f"{Decimal(value):,}"
    except InvalidOperation:
        return False
    amounts = "|".join(re.escape(v) for v in dict.fromkeys((value, grouped)))
    end = r"(?![\d]|[.,]\d)"
    return (
        re.search(rf"[$¥]\s?(?:{amounts}){end}", text) is not None
        or re.search(rf"(?<![\d.,])(?:{amounts})\s?(?:元|块|dollars\b|bucks\b)", text) is not None
    )


def stated(cues: Cues, text: str) -> dict[str, tuple[int, str]]:
    """The counts `text` states for the quantities the cues know (party_size, training_per_week):
    predicate -> (number, the words that say it), the first one said."""
    found: dict[str, tuple[int, str]] = {}
    for clause in [c.strip() for c in _CLAUSE.findall(text) if c.strip()] or [text]:
        for predicate, lists in QUANTITY_CUES.items():
            if predicate in found:
                continue
            for name in lists:
                match = cues.search(getattr(cues, name), clause)
                number = cues.number(match.group("n")) if match is not None else None
                least = 2 if predicate == "party_size" else 1  # "just the one of us" is no party
                if number is not None and number >= least:
                    found[predicate] = (number, match.group(0))
                    break
    return found


def said(text: str, held: list[Held], cues: Cues) -> list[Report]:
    """What a free-text message says of the world, as the reports a template line would make: each held
    value it writes (a bare count only when no other held count has that value, so "4" is not claimed
    for two quantities), and each count the cues read in it."""
    reports: list[Report] = []
    counts: dict[str, int] = {}
    for h in held:
        if h.kind == "num":
            counts[h.value] = counts.get(h.value, 0) + 1
    for h in held:
        if h.kind == "money" and _money_at(h.value, text):
            reports.append(Report("money", h.predicate, h.value, h.text))
        elif h.kind == "num" and counts[h.value] == 1 and _number_at(h.value, text):
            reports.append(Report("num", h.predicate, h.value, h.text))
    named = {r.name for r in reports}
    for predicate, (number, words) in stated(cues, text).items():
        if predicate not in named:
            reports.append(Report("num", predicate, str(number), words))
    return reports


def disagreements(turns: list[tuple[str, str]], held: list[Held], cues: Cues) -> list[str]:
    """A count a message states for a held quantity that is not the value the world holds."""
    by_predicate = {h.predicate: h for h in held}
    problems = []
    for i, (_, text) in enumerate(turns, start=1):
        for predicate, (number, words) in stated(cues, text).items():
            h = by_predicate.get(predicate)
            if h is not None and h.value.isdigit() and number != int(h.value):
                problems.append(
                    f"world: message {i} says {predicate} {number} (“{words}”), but the world holds "
                    f"{predicate} = {h.text} ({h.scope}: {h.about}); write {h.text}"
                )
    return problems
