"""A relative or friend whose name the persona knows is called by it, never 「TA」 or "them" (issue 36)."""

from __future__ import annotations

import re

import pytest

from keme.text import resources

PRONOUNS = {
    "zh": re.compile(r"(?<![A-Za-z])(?:TA|Ta|ta)(?![A-Za-z])"),
    "en": re.compile(r"\b(?:them|their|theirs|themselves)\b", re.IGNORECASE),
}


def _people_lines(lang: str) -> list[tuple[str, str]]:
    """(attribute, line source) of every persona line that reveals or updates a person of the circle."""
    res = resources.get(lang)
    found = []
    for key, options in list(res.reveals.items()) + list(res.updates.items()):
        if key.startswith("social_circle"):
            found += [(key, t.source) for ex in options for t in (ex.u, ex.a)]
    return found


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_a_person_of_the_circle_is_never_a_pronoun_in_place_of_the_known_name(lang):
    lines = _people_lines(lang)
    assert lines
    assert [(key, line) for key, line in lines if PRONOUNS[lang].search(line)] == []
