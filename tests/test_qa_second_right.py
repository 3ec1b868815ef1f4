"""Options proved against the whole persona and the catalog (keme.qa.second_right): a choice item's
options are right only where the persona at the question's time and the catalog say so."""

from __future__ import annotations

from datetime import datetime

from keme.models import Persona
from keme.models.persona import Attribute, AttributeVersion
from keme.qa.second_right import off_kind, prove_item, prove_options, right_values
from keme.validate import check_second_right
from keme.world.catalog import load_catalog

START = datetime(2026, 3, 1)
ASKED = datetime(2026, 4, 10, 19, 0)


def persona(lang: str = "en", **values: str) -> Persona:
    """A persona holding `values` (attribute keys with '__' for '.') from the start."""
    dimensions: dict[str, dict[str, Attribute]] = {}
    for name, value in values.items():
        key = name.replace("__", ".")
        dimension, attr = key.split(".", 1)
        dimensions.setdefault(dimension, {})[attr] = Attribute(
            key=key, mutable=True, versions=[AttributeVersion(value=value, valid_from=START, evidence=[])]
        )
    return Persona(
        id="p01",
        name="Maya",
        language=lang,
        country="US" if lang == "en" else "CN",
        start=START,
        end=datetime(2026, 6, 1),
        dimensions=dimensions,
    )


def snack(value: str) -> str:
    return f"a snack that contains {value}"


VENDING = "I'm grabbing something from the vending machine. Which one should I not eat?"
SHEETS = "I need new sheets. Where would I most likely order them from?"


def test_a_vegan_persona_must_not_eat_the_shellfish_snack_beside_the_allergen():
    vegan = persona(health__allergy="kiwi", diet__diet_type="vegan")
    options = [snack("kiwi"), snack("shellfish"), snack("sesame"), snack("soy")]
    proof = prove_options(
        "health.allergy", VENDING, options, 0, vegan, ASKED, load_catalog("en"), "en",
        templates=("a snack that contains {value}",),
    )  # fmt: skip
    assert proof.also_right == ("a snack that contains shellfish",)
    assert not proof.ok


def test_the_diet_in_force_rules_out_foods_the_allergy_does_not():
    vegan = persona(health__allergy="kiwi", diet__diet_type="vegan")
    assert right_values("health.allergy", vegan, ASKED, load_catalog("en")) == {"kiwi", "shellfish", "eggs"}


def test_a_pescatarian_persona_may_be_offered_the_shellfish_snack():
    pescatarian = persona(health__allergy="kiwi", diet__diet_type="pescatarian")
    options = [snack("kiwi"), snack("shellfish"), snack("sesame"), snack("soy")]
    proof = prove_options(
        "health.allergy", VENDING, options, 0, pescatarian, ASKED, load_catalog("en"), "en",
        templates=("a snack that contains {value}",),
    )  # fmt: skip
    assert proof.ok


def test_a_chinese_seafood_allergy_also_keeps_shrimp_and_crab_away():
    allergic = persona("zh", health__allergy="海鲜")
    assert right_values("health.allergy", allergic, ASKED, load_catalog("zh")) == {"海鲜", "虾蟹"}


def test_a_store_that_sells_no_sheets_is_not_where_the_sheets_are_ordered():
    fan = persona(shopping__favorite_platform="Best Buy")
    proof = prove_options(
        "shopping.favorite_platform", SHEETS, ["Best Buy", "Target", "IKEA", "Wayfair"], 0, fan, ASKED,
        load_catalog("en"), "en", needs="bedding",
    )  # fmt: skip
    assert proof.gold_wrong == "Best Buy sells no bedding"


def test_a_store_that_sells_the_thing_is_the_answer():
    fan = persona(shopping__favorite_platform="Target")
    proof = prove_options(
        "shopping.favorite_platform", SHEETS, ["Target", "Best Buy", "IKEA", "Wayfair"], 0, fan, ASKED,
        load_catalog("en"), "en", needs="bedding",
    )  # fmt: skip
    assert proof.ok


def test_a_grocery_app_is_no_place_for_bed_sheets_in_chinese():
    assert load_catalog("zh").sells("盒马", "bedding") is False
    assert load_catalog("zh").sells("淘宝", "bedding") is True


def test_a_restaurant_question_wants_restaurant_options_not_cuisines():
    question = "We're choosing a restaurant for my birthday dinner. Which would I enjoy more?"
    assert off_kind(question, ["Thai food", "Mexican food"], "en") == ["Thai food", "Mexican food"]
    assert off_kind(question, ["a Thai restaurant", "a Mexican restaurant"], "en") == []
    assert off_kind("在挑我生日晚饭的餐厅，哪家我会更喜欢？", ["火锅", "一家川菜馆子"], "zh") == ["火锅"]


def test_a_vegan_menu_is_right_too_for_a_vegetarian():
    vegetarian = persona(diet__diet_type="vegetarian")
    assert "vegan" in right_values("diet.diet_type", vegetarian, ASKED, load_catalog("en"))


def _item(question: str, options: list[str], letter: str, subtype: str, lang: str = "en"):
    from keme.models import QAItem

    return QAItem(
        id="p01-q0001",
        persona_id="p01",
        question=question,
        answer=f"{letter}. {options['ABCD'.index(letter)]}",
        spec={"kind": "choice", "value": letter, "aliases": [options["ABCD".index(letter)]]},
        type="preference_generalization",
        subtype=subtype,
        evidence=[],
        evidence_sessions=[],
        difficulty="medium",
        asked_at=ASKED,
        hops=2,
        language=lang,
        format="single_choice",
        options=options,
        node="p01-root",
        proof={"op": "preference", "quotes": [], "args": {"key": subtype[4:], "mode": "match"}},
    )


def test_an_item_with_a_second_right_option_is_rejected_by_validate():
    vegan = persona(health__allergy="kiwi", diet__diet_type="vegan")
    options = [snack("kiwi"), snack("shellfish"), snack("sesame"), snack("soy")]
    item = _item(VENDING, options, "A", "gen.health.allergy")
    violations = check_second_right([item], {"p01": vegan})
    assert [v.where for v in violations] == ["p01-q0001"]
    assert "also right: 'a snack that contains shellfish'" in violations[0].message


def test_an_item_with_one_right_option_passes_validate():
    vegan = persona(health__allergy="kiwi", diet__diet_type="vegan")
    options = [snack("kiwi"), snack("sesame"), snack("soy"), snack("peanuts")]
    item = _item(VENDING, options, "A", "gen.health.allergy")
    assert prove_item(item, vegan, load_catalog("en")).ok
    assert check_second_right([item], {"p01": vegan}) == []
