"""An English article before a slot agrees with the value the slot is filled with
(keme.text.template.agree_article): the value is only known when the line is rendered."""

from __future__ import annotations

import random

import pytest

from keme.text.template import Context, compile_template, render


def said(source: str, value: str, lang: str = "en") -> str:
    ctx = Context(lang=lang, rng=random.Random(1), persona={}, slots={"value": value})
    return render(compile_template(source), ctx)


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        ("engineer", "As an engineer, I do everything."),
        ("nurse", "As a nurse, I do everything."),
        ("UX designer", "As a UX designer, I do everything."),
        ("MBA student", "As an MBA student, I do everything."),
        ("hour-long commuter", "As an hour-long commuter, I do everything."),
        ("university lecturer", "As a university lecturer, I do everything."),
    ],
)
def test_the_article_before_a_slot_fits_the_sound_of_its_value(value, expected):
    assert said("As a {value}, I do everything.", value) == expected


def test_an_article_written_as_an_turns_to_a_before_a_consonant():
    assert said("I'm an {value} at heart.", "night owl") == "I'm a night owl at heart."
    assert said("I'm an {value} at heart.", "morning person") == "I'm a morning person at heart."


def test_a_word_ending_in_a_is_no_article():
    assert said("Ask Maria {value} question.", "easy") == "Ask Maria easy question."


def test_chinese_lines_are_left_as_written():
    assert said("a {value}", "鸡蛋", lang="zh") == "a 鸡蛋"


def test_a_value_gives_up_its_own_article_after_a_determiner():
    assert said("Hand him the {value}?", "a houseplant") == "Hand him the houseplant?"
    assert said("The {value} was a hit.", "a handmade mug") == "The handmade mug was a hit."
    assert said("book the {value} tickets", "the Louvre") == "book the Louvre tickets"
    assert said("my {value} payment", "The Home Depot") == "my Home Depot payment"


def test_an_article_the_value_drops_still_fits_the_sound():
    assert said("an {value}", "a houseplant") == "a houseplant"


def test_her_or_that_keeps_the_values_article():
    """ "her" and "that" are as often a pronoun and a conjunction: "I got her a scarf"."""
    assert said("I got her {value}.", "a scarf") == "I got her a scarf."
    assert said("Note that {value} is good for groups.", "the Rusty Anchor pub") == (
        "Note that the Rusty Anchor pub is good for groups."
    )
