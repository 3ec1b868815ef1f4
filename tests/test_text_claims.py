"""The text says facts only through the world: every number and amount is a named quantity whose predicate
is registered in keme/world/predicates.yaml, a predicate has one range per language (so two lines naming it
can say the same value), no line states a number as a literal digit, and a general fact has one value.

Until the claims helper's predicate model lands, predicates.yaml is validated with the small model below.
"""

from __future__ import annotations

import re
import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Literal

import pytest
import yaml
from pydantic import BaseModel, ConfigDict, Field

from keme.text import check, resources
from keme.text.template import Template, compile_template

PREDICATES = Path(resources.ROOT).parent / "world" / "predicates.yaml"
SHARED = (
    "activity venue dish cooking_method condition remedy product store merchant expense_category city place "
    "date time party_size nights training_per_week commute_minutes usual_lunch usual_coffee amount purpose"
).split()


class Predicate(BaseModel):
    model_config = ConfigDict(extra="forbid")
    scope: Literal["persona", "event", "session", "anchor", "general"]
    type: Literal["int", "number", "money", "text", "date", "time"]
    about: str = Field(min_length=8)


def registry() -> dict[str, Predicate]:
    raw = yaml.safe_load(PREDICATES.read_text(encoding="utf-8"))
    return {name: Predicate.model_validate(spec) for name, spec in raw.items()}


def said(lang: str) -> Iterator[tuple[str, bool, Template]]:
    """(where, is a user line, template) for every line a session can say in `lang`."""
    res = resources.get(lang)
    for name, pattern in res.patterns.items():
        for i, beat in enumerate(b for b in pattern.beats if not isinstance(b, str)):
            for j, ex in enumerate(beat.options):
                yield f"{name}.beats[{i}][{j}].u", True, ex.u
                yield f"{name}.beats[{i}][{j}].a", False, ex.a
    for kind, table in (("reveal", res.reveals), ("update", res.updates)):
        for key, exchanges in table.items():
            for j, ex in enumerate(exchanges):
                yield f"persona {kind} {key}[{j}].u", True, ex.u
                yield f"persona {kind} {key}[{j}].a", False, ex.a
    for app, exchanges in res.anchor_mentions.items():
        for j, ex in enumerate(exchanges):
            yield f"anchors {app}.mention[{j}].u", True, ex.u
            yield f"anchors {app}.mention[{j}].a", False, ex.a
    for app in ("voice_memo", "calendar", "note", "todo", "screen", "document"):
        for j, item in enumerate(getattr(res.anchors, app).items):
            for field, value in item.model_dump().items():
                for source in value if isinstance(value, list) else [value]:
                    if isinstance(source, str):
                        yield f"anchors {app}.items[{j}].{field}", False, compile_template(source)


def quantities(t: Template) -> Iterator[tuple[str, str, int, int]]:
    for part in t.parts:
        if part.kind in ("num", "money"):
            yield part.kind, part.predicate, part.low, part.high


@pytest.mark.parametrize("lang", resources.LANGUAGES)
def test_every_number_and_amount_is_a_named_quantity(lang: str) -> None:
    unnamed = [
        f"{where}: {t.source}" for where, _, t in said(lang) if any(not p for _, p, _, _ in quantities(t))
    ]
    assert not unnamed, "\n".join(unnamed)


@pytest.mark.parametrize("lang", resources.LANGUAGES)
def test_every_named_quantity_is_registered_with_its_type(lang: str) -> None:
    known = registry()
    wrong = []
    for where, _, t in said(lang):
        for kind, predicate, _, _ in quantities(t):
            expected = "money" if kind == "money" else "int"
            if predicate not in known:
                wrong.append(f"{where}: {predicate!r} is not in keme/world/predicates.yaml")
            elif known[predicate].type != expected:
                wrong.append(f"{where}: {predicate!r} is {known[predicate].type}, said as {kind}")
    assert not wrong, "\n".join(wrong)


@pytest.mark.parametrize("lang", resources.LANGUAGES)
def test_a_predicate_has_one_range_in_a_language(lang: str) -> None:
    ranges: dict[str, set[tuple[str, int, int]]] = {}
    for _, _, t in said(lang):
        for kind, predicate, low, high in quantities(t):
            ranges.setdefault(predicate, set()).add((kind, low, high))
    several = {p: sorted(r) for p, r in ranges.items() if len(r) > 1}
    assert not several, several


@pytest.mark.parametrize("lang", resources.LANGUAGES)
def test_user_lines_state_no_number_outside_a_slot(lang: str) -> None:
    digits = [
        f"{where}: {t.source}" for where, user, t in said(lang) if user and check.claim_problems(t, user=True)
    ]
    assert not digits, "\n".join(digits)


def test_the_claim_rule_names_an_unnamed_quantity_and_a_literal_digit() -> None:
    line = compile_template("Booked for 8, split {num:3-6} ways")
    problems = check.claim_problems(line, user=True)
    assert len(problems) == 2
    assert "unnamed quantity {num:3-6}" in problems[0]
    assert "literal digit" in problems[1]


def test_an_assistant_line_states_no_literal_digit_either() -> None:
    line = compile_template("Block 30 minutes for it; yours is {money:30-40@checked_bag_fee}.")
    (problem,) = check.claim_problems(line, user=False)
    assert "an assistant line" in problem and "literal digit" in problem and "{fact:" in problem


def test_general_knowledge_is_said_as_a_fact() -> None:
    line = compile_template("Liquids go in a quart bag, {fact:3.4@carry_on_liquid_oz} oz each.")
    assert check.claim_problems(line, user=False) == []


def test_a_literal_digit_in_an_assistant_line_is_refused_naming_its_file_and_line(tmp_path: Path) -> None:
    folder = tmp_path / "en"
    shutil.copytree(Path(resources.ROOT) / "en", folder)
    path = folder / "patterns_b.yaml"
    text = path.read_text(encoding="utf-8")
    path.write_text(text.replace("tech problems are mostly patience", "tech problems are 90% patience"))
    problems = check.check("en", ("patterns",), root=tmp_path)
    assert len(problems) == 1
    assert problems[0].startswith("patterns_b.yaml tech_help.beats[")
    assert ".a: an assistant line states a number with a literal digit" in problems[0]


def general_facts(lang: str) -> dict[str, set[str]]:
    general = {name for name, p in registry().items() if p.scope == "general"}
    values: dict[str, set[str]] = {}
    for _, _, t in said(lang):
        for part in t.parts:
            if part.kind == "fact" and part.predicate in general:
                values.setdefault(part.predicate, set()).add(part.value.replace(",", ""))
    return values


def test_a_general_fact_has_one_value_in_both_languages() -> None:
    merged: dict[str, set[str]] = {}
    for lang in resources.LANGUAGES:
        for name, values in general_facts(lang).items():
            merged.setdefault(name, set()).update(values)
    assert merged and {name: v for name, v in merged.items() if len(v) > 1} == {}


def test_a_general_predicate_is_said_only_as_a_fact() -> None:
    general = {name for name, p in registry().items() if p.scope == "general"}
    drawn = [
        f"{where}: {t.source}"
        for lang in resources.LANGUAGES
        for where, _, t in said(lang)
        if any(p.predicate in general and p.kind != "fact" for p in t.parts)
    ]
    assert general and drawn == []


def test_predicates_file_parses_one_sorted_line_each() -> None:
    lines = [x for x in PREDICATES.read_text(encoding="utf-8").splitlines() if x and not x.startswith("#")]
    names = [re.match(r"^([a-z_][a-z_0-9.]*):", x).group(1) for x in lines]  # type: ignore[union-attr]
    assert names == sorted(names)
    assert set(names) == set(registry())


def test_the_shared_names_are_registered() -> None:
    known = registry()
    assert [name for name in SHARED if name not in known] == []
    assert known["training_per_week"].scope == "persona"
    assert known["party_size"].scope == "event"
    assert known["amount"].scope == "anchor"


def test_no_predicate_is_a_persona_attribute_key() -> None:
    from keme.models.attributes import BY_KEY

    assert set(registry()) & set(BY_KEY) == set()
