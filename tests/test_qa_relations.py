"""Relationship questions a person would ask an assistant: "who is X to me?" is asked of a best friend or
a sibling as a test of what the assistant remembers, never of her partner (no one asks who the person
they date is), and its wordings are many enough for the traps that borrow them (keme.qa.twins)."""

from __future__ import annotations

import random
import re
from functools import cache

import pytest

from keme.qa import phrasing
from keme.qa.facts import World, world_of
from keme.qa.generate.adversarial import trap_templates
from keme.qa.generate.context import Gen
from keme.qa.generate.persona import relationships
from keme.synth.limits import parse_config
from keme.synth.pipeline import synthesize_persona
from keme.text.fill import fill

ASKED = ("rel.who_is", "rel.companion_relation")
# every slot a relationship wording or a trap borrowing it may be filled with
SLOTS = {
    "name": "Priya",
    "destination": "Kyoto",
    "person": "Priya",
    "occasion": "birthday",
    "date": "May 3",
    "event": "met up with Priya",
}


@cache
def _world(lang: str, seed: int) -> World:
    text = f"name: rel\nseed: {seed}\npersonas:\n  - {{language: {lang}, start: 2026-05-01, months: 2}}\n"
    return world_of(synthesize_persona(0, parse_config(text, "<test>")).view())


@pytest.mark.parametrize("lang", ["en", "zh"])
@pytest.mark.parametrize("key", ASKED)
def test_a_relationship_question_has_five_wordings(lang, key):
    assert len(set(phrasing.get(lang).text.questions[key])) >= 5


@pytest.mark.parametrize("lang", ["en", "zh"])
@pytest.mark.parametrize("key", [*ASKED, "abs.person"])
def test_every_wording_fills_with_the_slots_it_is_given(lang, key):
    text = phrasing.get(lang).text
    forms = trap_templates(text, key) if key.startswith("abs.") else text.questions[key]
    for form in forms:
        said = fill(form, SLOTS)
        assert "{" not in said and ("Priya" in said or "Kyoto" in said)


def test_an_english_relationship_question_asks_the_assistant_what_it_remembers():
    """The bare "Who is Priya to me?" reads as if she had forgotten her own friend."""
    for form in phrasing.get("en").text.questions["rel.who_is"]:
        assert not re.fullmatch(r"Who is \{name\} to me\?|How do I know \{name\}\?", form)


@pytest.mark.parametrize(("lang", "seed"), [("en", 2), ("zh", 3)])
def test_her_partner_is_never_asked_who_he_is(lang, seed):
    world = _world(lang, seed)
    partner = world.persona.attribute("social_circle.partner").versions
    assert partner, "the fixture persona has a partner"
    names = {v.value for v in partner}
    label = phrasing.get(lang).answer("partner")
    drafts = relationships(Gen(world, phrasing.get(lang), random.Random(1), 0.3), "root")
    asked = [x for x in drafts if x.subtype in ASKED]
    assert all(x.answer != label for x in asked)
    assert not [x.question for x in asked if any(n in x.question for n in names)]


@pytest.mark.parametrize(("lang", "seed"), [("en", 1), ("zh", 1)])
def test_a_best_friend_or_sibling_is_still_asked_about(lang, seed):
    drafts = relationships(Gen(_world(lang, seed), phrasing.get(lang), random.Random(1), 0.3), "root")
    kinds = {x.subtype for x in drafts}
    assert set(ASKED) <= kinds
