"""The dialogue template language: slots, pools, ranges and evidence tracking."""

from __future__ import annotations

import random

import pytest

from keme.text.template import Context, TemplateError, compile_template, render


def ctx(**persona: str) -> Context:
    return Context(
        lang="en",
        rng=random.Random(1),
        persona=persona,
        old={"career.company": "Initech"},
        slots={"dish": "ramen"},
        pools={"fruit": ["apple", "pear", "plum"]},
    )


def test_persona_slot_renders_value_and_reports_the_attribute():
    used: list[str] = []
    text = render(
        compile_template("I work at {career.company}."), ctx(**{"career.company": "Acme"}), used.append
    )
    assert text == "I work at Acme."
    assert used == ["career.company"]


def test_old_value_and_event_slot():
    text = render(compile_template("Left {old:career.company}, cooking {dish}"), ctx())
    assert text == "Left Initech, cooking ramen"


def test_pool_of_three_is_distinct_and_joined():
    text = render(compile_template("{pool3.fruit}"), ctx())
    items = text.replace(" and ", ", ").split(", ")
    assert sorted(items) == ["apple", "pear", "plum"]


def test_single_pool_item_is_not_mistaken_for_an_attribute():
    template = compile_template("{pool.fruit}")
    assert template.pools == {"fruit"} and not template.persona_keys
    assert render(template, ctx()) in {"apple", "pear", "plum"}


def test_money_and_number_ranges():
    text = render(compile_template("{num:3-3} / {money:45-45}"), ctx())
    assert text == "3 / $45"


def test_alternation_picks_one_alternative():
    assert render(compile_template("{yes|yes}"), ctx()) == "yes"


def test_can_render_requires_every_persona_slot():
    template = compile_template("{pets.pet_name} and {dish}")
    assert not ctx().can_render(template)
    assert ctx(**{"pets.pet_name": "Mochi"}).can_render(template)


@pytest.mark.parametrize("bad", ["{Bad Slot}", "{num:5-1}", "unbalanced }", "{x"])
def test_malformed_templates_are_rejected(bad):
    with pytest.raises(TemplateError):
        compile_template(bad)


def test_a_fact_is_said_as_written_and_reported_under_its_predicate():
    said: list[tuple[str, str, str, str]] = []
    template = compile_template("Bags up to {fact:20@cn_checked_bag_kg} kg, power banks {fact:10,000@mah}.")
    text = render(template, ctx(), on_said=lambda *r: said.append(r))
    assert text == "Bags up to 20 kg, power banks 10,000."
    assert said == [("fact", "cn_checked_bag_kg", "20", "20"), ("fact", "mah", "10,000", "10,000")]
    assert template.predicates == {"cn_checked_bag_kg", "mah"}


def test_a_fact_says_the_value_the_world_already_holds():
    held = ctx()
    held.recall = lambda predicate, draw: "45"
    assert render(compile_template("{fact:30@prep_block_minutes} min"), held) == "45 min"


@pytest.mark.parametrize("bad", ["{fact:20}", "{fact:2o@x}", "{fact:1,00@x}"])
def test_a_fact_needs_a_number_and_a_predicate(bad):
    with pytest.raises(TemplateError):
        compile_template(bad)
