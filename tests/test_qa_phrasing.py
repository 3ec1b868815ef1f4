"""Question phrasing: both languages offer the same questions with the same slots."""

from __future__ import annotations

import string

import pytest

from keme.qa.phrasing import get
from keme.text.fill import PhrasingError, fill


def _slots(template: str) -> set[str]:
    return {name for _, name, _, _ in string.Formatter().parse(template) if name}


def _templates(lang: str) -> dict[str, set[str]]:
    text = get(lang).text
    found: dict[str, set[str]] = {}
    for key, forms in text.attributes.items():
        for form, templates in forms.model_dump().items():
            for t in templates:
                found.setdefault(f"attributes.{key}.{form}", set()).update(_slots(t))
    for kind, phrases in text.events.items():
        for form, t in phrases.model_dump().items():
            found[f"events.{kind}.{form}"] = _slots(t)
    for key, templates in text.questions.items():
        for t in templates:
            found.setdefault(f"questions.{key}", set()).update(_slots(t))
    for key, t in text.answers.items():
        found[f"answers.{key}"] = _slots(t)
    for key, gen in text.generalize.items():
        found[f"generalize.{key}.option"] = _slots(gen.option)
    return found


def test_chinese_offers_every_english_question():
    assert set(_templates("zh")) == set(_templates("en"))


@pytest.mark.parametrize("key", sorted(_templates("en")))
def test_chinese_uses_only_slots_the_english_template_gets(key):
    assert _templates("zh")[key] <= _templates("en")[key] or key.startswith("answers.")


def test_generalization_options_show_the_value():
    for lang in ("en", "zh"):
        for gen in get(lang).text.generalize.values():
            assert "value" in _slots(gen.option)


def test_a_missing_slot_is_an_error_not_a_blank():
    with pytest.raises(PhrasingError, match="merchant"):
        fill("How much at {merchant}?", {})


@pytest.mark.parametrize("lang", ["en", "zh"])
@pytest.mark.parametrize("key", ["tmp.order", "tmp.order_later"])
def test_an_order_question_has_five_wordings_each_way(lang, key):
    """A dataset asks many order questions: two wordings a direction read like one person asking them all."""
    wordings = get(lang).text.questions[key]
    assert len(set(wordings)) >= 5


def test_a_bill_paid_to_an_account_is_asked_as_a_bill_not_as_paying_a_person():
    """ "When did I pay Max $22.77?" reads as paying a man named Max."""
    say = get("en")
    assert say.event("bill_account", "verb", merchant="Max", amount="$22.77") == "pay the $22.77 Max bill"
    assert say.event("bill_account_once", "verb", merchant="Max") == "pay the Max bill"
    assert get("zh").event("bill_account_once", "verb", merchant="中国电信") == "交中国电信的费用"
