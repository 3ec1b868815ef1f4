"""The registry of what a claim can say (keme/world/predicates.yaml), and the check that every template
names only registered predicates.

A predicate's scope decides how long a recalled value holds (keme.world.ledger): one value for the
persona, per episode, per session, or per app record, or `general`: a fact of the world at large (a
checked-bag allowance, a rule of thumb), one value for every persona, said only as
`{fact:20@checked_bag_kg}` with that one value in every line of a language. Its type decides the
canonical form of the value (digits, a decimal, ISO day, HH:MM). Templates are checked once per language
before synthesis, so a misspelt `{num:2-8@party_sise}` stops the run naming the template line instead of
inventing a new fact.
"""

from __future__ import annotations

import functools
from collections.abc import Iterator
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict, ValidationError

from keme.errors import KemeError
from keme.models.catalog import all_moments
from keme.text.resources import Resources
from keme.text.template import Template
from keme.world.slots import (
    ANCHOR_SLOTS,
    OBJECT_SLOTS,
    OBJECT_STATES,
    REVEAL_SLOT,
    SESSION_SLOTS,
    event_predicate,
)
from keme.yamlload import YamlError, load

PATH = Path(__file__).parent / "predicates.yaml"
Scope = Literal["persona", "event", "session", "anchor", "general"]
Type = Literal["int", "number", "money", "text", "date", "time"]
# which predicate types each kind of named part can say
PART_TYPES: dict[str, frozenset[str]] = {
    "num": frozenset({"int"}),
    "money": frozenset({"money"}),
    "pool": frozenset({"text"}),
    "fact": frozenset({"int", "number"}),
}


class PredicateError(KemeError, ValueError):
    """A predicate is not registered, or keme/world/predicates.yaml is malformed: register it there as
    `name: {scope: event, type: int, about: "..."}` (scope persona|event|session|anchor|general, type
    int|number|money|text|date|time)."""


class Predicate(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    scope: Scope
    type: Type
    about: str


Predicates = dict[str, Predicate]


def load_predicates(path: Path = PATH) -> Predicates:
    try:
        if not path.exists():
            raise PredicateError(f"{path}: missing predicate registry")
        raw = load(path, shipped=True).data or {}
    except YamlError as exc:
        raise PredicateError(str(exc)) from exc
    if not isinstance(raw, dict):
        raise PredicateError(f"{path}: expected a mapping of predicate name -> {{scope, type, about}}")
    registry: Predicates = {}
    for name, entry in raw.items():
        try:
            registry[str(name)] = Predicate.model_validate(entry)
        except ValidationError as exc:
            details = "; ".join(f"{'.'.join(map(str, e['loc']))}: {e['msg']}" for e in exc.errors())
            raise PredicateError(f"{path}: {name}: {details}") from exc
    return registry


@functools.cache
def default_predicates() -> Predicates:
    """The shipped registry, read once per process."""
    return load_predicates()


def _templates(res: Resources) -> Iterator[tuple[str, Template]]:
    """Every dialogue template of a language with where it is written."""
    folder = f"keme/text/{res.lang}"
    for name, pattern in res.patterns.items():
        for i, beat in enumerate(pattern.beats):
            if isinstance(beat, str):
                continue
            for j, exchange in enumerate(beat.options):
                where = f"{folder}/patterns*.yaml: {name}.beats[{i}].options[{j}]"
                yield f"{where}.u", exchange.u
                yield f"{where}.a", exchange.a
    for group, table in (("attributes", res.reveals), ("changes", res.updates)):
        field = "reveal" if group == "attributes" else "update"
        for key, exchanges in table.items():
            for j, exchange in enumerate(exchanges):
                where = f"{folder}/persona.yaml: {group}.{key}.{field}[{j}]"
                yield f"{where}.u", exchange.u
                yield f"{where}.a", exchange.a
    for app, exchanges in res.anchor_mentions.items():
        for j, exchange in enumerate(exchanges):
            yield f"{folder}/anchors.yaml: {app}.mention[{j}].u", exchange.u
            yield f"{folder}/anchors.yaml: {app}.mention[{j}].a", exchange.a
    for app, template in res.anchor_messages.items():
        yield f"{folder}/anchors.yaml: {app}.message", template


def template_problems(res: Resources, registry: Predicates) -> list[str]:
    """Each named quantity or slot of `res`'s templates that no registered predicate says, and each general
    fact said other than as one `{fact:..}` value in the whole language."""
    problems = []
    known_slots = set(SESSION_SLOTS) | set(ANCHOR_SLOTS) | {REVEAL_SLOT}
    facts: dict[str, tuple[str, str]] = {}  # general predicate -> (value, where first said)
    for where, template in _templates(res):
        for part in template.parts:
            if part.predicate:
                predicate = registry.get(part.predicate)
                if predicate is not None and predicate.scope == "general" and part.kind != "fact":
                    problems.append(
                        f"{where}: {template.source!r} says the general fact {part.predicate!r} "
                        f"with a {part.kind} part: say it as {{fact:<value>@{part.predicate}}}, "
                        "one value in all lines"
                    )
                    continue
                if part.kind == "fact" and predicate is not None and predicate.scope == "general":
                    value = part.value.replace(",", "")
                    first = facts.setdefault(part.predicate, (value, where))
                    if first[0] != value:
                        problems.append(
                            f"{where}: {template.source!r} says {part.predicate!r} is {value}, but "
                            f"{first[1]} says {first[0]}: a general fact has one value; name the two apart"
                        )
                if predicate is None:
                    problems.append(
                        f"{where}: {template.source!r} names the unregistered predicate "
                        f"{part.predicate!r}; register it in keme/world/predicates.yaml as "
                        f'`{part.predicate}: {{scope: event, type: int, about: "..."}}`'
                    )
                elif predicate.type not in PART_TYPES[part.kind]:
                    problems.append(
                        f"{where}: {template.source!r} says {part.predicate!r} (type {predicate.type}) "
                        f"with a {part.kind} part, which says {'/'.join(sorted(PART_TYPES[part.kind]))}"
                    )
            elif part.kind == "slot" and part.value not in known_slots:
                name = event_predicate(part.value)
                if name not in registry:
                    problems.append(
                        f"{where}: {template.source!r} uses the slot {{{part.value}}}, which no predicate "
                        f"says; register it in keme/world/predicates.yaml as "
                        f'`{name}: {{scope: event, type: text, about: "..."}}`'
                    )
    return problems + _says_problems(res)


def _says_problems(res: Resources) -> list[str]:
    """An exchange declares an object's condition (`says: {condition: worn}`) only in a moment that names
    the object, and only as one of the object states."""
    moments = all_moments()
    problems = []
    for name, pattern in res.patterns.items():
        for i, beat in enumerate(pattern.beats):
            if isinstance(beat, str):
                continue
            for j, exchange in enumerate(beat.options):
                condition = dict(exchange.says).get("condition")
                if condition is None:
                    continue
                where = f"keme/text/{res.lang}/patterns*.yaml: {name}.beats[{i}].options[{j}]"
                if not set(OBJECT_SLOTS) & moments.get(name, set()):
                    problems.append(f"{where}: says a condition, but {name} names no object {OBJECT_SLOTS}")
                if condition not in OBJECT_STATES:
                    problems.append(f"{where}: condition {condition!r} is not one of {OBJECT_STATES}")
    return problems


_checked: dict[tuple[int, int], tuple[Resources, Predicates]] = {}


def checked_predicates(res: Resources, registry: Predicates | None = None) -> Predicates:
    """The registry, once `res`'s templates are known to name only registered predicates (checked once
    per resources object)."""
    registry = registry if registry is not None else default_predicates()
    key = (id(res), id(registry))
    cached = _checked.get(key)
    if cached is not None and cached[0] is res and cached[1] is registry:
        return cached[1]
    problems = template_problems(res, registry)
    if problems:
        more = f"\n  … and {len(problems) - 10} more" if len(problems) > 10 else ""
        shown = "\n  ".join(problems[:10]) + more
        raise PredicateError(f"{len(problems)} template values have no registered predicate:\n  {shown}")
    _checked[key] = (res, registry)
    return registry
