"""Relationship questions a person would ask an assistant: "who is X to me?" is never asked of the people
close to her (her best friend, a sibling, her partner: no one asks who their own cousin is), nor "how do I
know the person who went to Kyoto with me?" (always one of them); the "who is" wordings stay, many enough,
for the never-mentioned names the traps ask about (keme.qa.twins)."""

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

ASKED = ("rel.who_is",)
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


@pytest.mark.parametrize(("lang", "seed"), [("en", 1), ("zh", 1), ("en", 2), ("zh", 3)])
def test_no_one_close_to_her_is_asked_who_they_are(lang, seed):
    drafts = relationships(Gen(_world(lang, seed), phrasing.get(lang), random.Random(1), 0.3), "root")
    assert not [x.question for x in drafts if x.subtype in ("rel.who_is", "rel.companion_relation")]
