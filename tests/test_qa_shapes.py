"""No family of items is decidable by its shape: false values a persona could have, abstentions and false
premises worded like the answerable questions, multi-hop items anchored on what a person dates life by,
and a blind baseline per shape a lazy reader could exploit, held at chance."""

from __future__ import annotations

import random
import re
from datetime import datetime
from decimal import Decimal
from types import SimpleNamespace

import pytest
from conftest import ROOT

from keme.models import AnswerSpec, QAItem, Quote
from keme.models.proof import ValueProof
from keme.qa import blind, build, phrasing
from keme.qa.facts import world_of
from keme.qa.generate.adversarial import false_charge, name_parts, plausible_false, trap_templates
from keme.qa.generate.composition import _said_when_otherwise
from keme.qa.generate.persona import _lived_before
from keme.qa.validity import breaches
from keme.synth.limits import load_config
from keme.synth.pipeline import synthesize_persona

TRAP_SUBTYPES = (
    "abs.pets.pet_name",
    "abs.social_circle.partner",
    "abs.merchant",
    "abs.destination",
    "abs.person",
    "abs.project",
    "adv.bill_date",
    "adv.bill_amount",
    "adv.company",
    "adv.city",
)


@pytest.fixture(scope="module")
def demo():
    """configs/demo.yaml's two personas (English and Chinese) and their items."""
    cfg = load_config(ROOT / "configs/demo.yaml")
    worlds = [world_of(synthesize_persona(index, cfg).view()) for index in range(len(cfg.personas))]
    return build.synthesize_qa(worlds, cfg)[0]  # as `keme synth` builds them


def _item(question: str, subtype: str = "bill.merchant", kind: str = "entity", **update) -> QAItem:
    base = dict(
        id=f"p01-q{abs(hash(question)) % 10000:04d}",
        persona_id="p01",
        question=question,
        answer="Shell",
        spec=AnswerSpec(kind=kind, value="Shell"),
        type="single_hop",
        subtype=subtype,
        evidence=["p01-s0001-m01"],
        evidence_sessions=["p01-s0001"],
        asked_at=datetime(2026, 5, 1, 20),
        hops=1,
        difficulty="easy",
        language="en",
        node="p01-e1",
        proof=ValueProof(op="value", quotes=[Quote(message_id="p01-s0001-m01", text="Shell")]),
    )
    return QAItem(**(base | update))


# ---------------------------------------------------------------- false values
def test_a_false_amount_that_is_a_simple_multiple_is_never_drawn():
    true = Decimal("14.74")
    multiples = [Decimal("7.37"), Decimal("22.11"), Decimal("29.48"), Decimal("44.22")]  # 0.5x 1.5x 2x 3x
    drawn = [false_charge(true, multiples, (7.5, 74.0), random.Random(seed)) for seed in range(300)]
    assert all(x is not None for x in drawn)
    assert not any(blind.simple_ratio(x, true) for x in drawn)
    assert not set(drawn) & set(multiples)


def test_a_false_amount_is_never_an_amount_she_paid_anywhere():
    """¥1087.91 asked of the ¥251.68 train ticket was her China Eastern flight: two corrections then."""
    true = Decimal("38")
    paid = {Decimal(n) for n in range(13, 115)} - {Decimal(90)}  # every whole amount in range but one
    drawn = [false_charge(true, paid, (12.0, 460.0), random.Random(seed)) for seed in range(50)]
    assert set(drawn) <= {Decimal(90), None} and Decimal(90) in drawn


def test_a_drawn_false_amount_stays_in_the_categorys_range_and_the_true_ones_precision():
    drawn = [false_charge(Decimal("38"), [], (12.0, 460.0), random.Random(seed)) for seed in range(200)]
    assert all(x is not None and Decimal(12) <= x <= Decimal(114) for x in drawn)
    assert all(x == x.to_integral_value() for x in drawn)  # whole yuan stay whole


def test_a_false_amount_a_cent_off_the_true_one_is_not_plausible():
    assert not plausible_false(Decimal("14.74"), Decimal("14.75"))
    assert plausible_false(Decimal("14.74"), Decimal("38.12"))


# ---------------------------------------------------------------- wordings
@pytest.mark.parametrize("lang", ["en", "zh"])
@pytest.mark.parametrize("subtype", TRAP_SUBTYPES)
def test_an_abstention_or_false_premise_subtype_has_five_wordings(lang, subtype):
    assert len(set(trap_templates(phrasing.get(lang).text, subtype))) >= 5


@pytest.mark.parametrize("lang", ["en", "zh"])
@pytest.mark.parametrize("subtype", TRAP_SUBTYPES)
def test_a_trap_is_only_worded_as_an_answerable_question(lang, subtype):
    """Every template a trap can be asked in is one an answerable question is asked in too."""
    text = phrasing.get(lang).text
    answerable = {t for key, forms in text.questions.items() if not key.startswith("adv.") for t in forms}
    answerable |= {t for a in text.attributes.values() for t in a.ask + a.previous}
    normal = {re.sub(r"\{(false_)?(\w+)\}", r"{\2}", t) for t in answerable}
    for template in trap_templates(text, subtype):
        assert re.sub(r"\{(false_)?(\w+)\}", r"{\2}", template) in normal, template


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_a_false_date_is_asked_in_the_wordings_of_the_true_amount_question(lang):
    questions = phrasing.get(lang).text.questions
    false = {q.replace("{false_date}", "{date}") for q in questions["adv.bill_date"]}
    assert false == set(questions["bill.amount"])


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_no_question_says_a_shopping_talk_was_a_purchase(lang):
    text = phrasing.get(lang).text
    bought = "bought" if lang == "en" else "买{product}"
    assert bought not in text.events["shopping"].when
    assert not any(bought in q for q in text.questions["shopping.product"] if lang == "en")


def test_a_toll_is_phrased_as_a_payment_for_it_not_at_it():
    phrase = phrasing.get("zh").event("bill_account", "verb", merchant="ETC通行费", amount="¥35.20")
    assert phrase == "付ETC通行费那笔¥35.20"


# ---------------------------------------------------------------- questions people ask
def test_a_multi_hop_item_is_never_anchored_on_a_receipt(demo):
    at_event = [i for i in demo if i.subtype.startswith("mh.attr_at_event")]
    for item in at_event:
        assert not blind.amounts_in(item.question), item.question
        assert not re.search(r"'[^']+'|「", item.question), item.question  # no app record quoted


# ---------------------------------------------------------------- shape baselines
def test_the_ratio_baseline_flags_an_amount_twice_another_asked_about_that_day():
    real = _item("Where did I spend $14.74 on March 4?")
    doubled = _item("How did I pay the $29.48 at Shell on March 4?", "adv.bill_amount", type="adversarial")
    # the reader cannot tell which of the two was multiplied: both are flagged, and the false one is caught
    assert blind._ratio_traps([real, doubled]) == [("premise", "answer"), ("premise", "premise")]


def test_the_name_frequency_baseline_flags_a_name_no_other_question_carries():
    friend = [_item("Who is Noah to me?"), _item("Who went with me to Vancouver with Noah?")]
    stranger = _item("Who is Mateo to me?", "abs.person", kind="abstain", type="abstention")
    assert blind._frequency_traps([*friend, stranger])[-1] == ("trap", "trap")


def test_a_question_is_traced_to_the_template_it_was_filled_from():
    assert blind.template_of("What was the Shell payment on March 4?", "en") == (
        "What was the {merchant} payment on {date}?"
    )


def test_the_template_prior_says_abstain_for_a_wording_only_abstentions_use():
    items = [
        _item(f"What did {name} give me for my birthday?", "abs.person", kind="abstain", type="abstention")
        for name in ("Mateo", "Priya", "Grace")
    ]
    assert blind._template_traps(items) == [("abstain", "abstain")] * 3


def test_chance_agreement_is_what_predictions_independent_of_the_labels_score():
    pairs = [("trap", "trap"), ("answer", "answer"), ("answer", "answer"), ("answer", "trap")]
    score = blind._agreement_score(pairs)
    assert score["accuracy"] == 0.75
    assert score["chance"] == round((1 * 2 + 3 * 2) / 16, 4)


@pytest.mark.parametrize("strategy", ["ratio", "name_frequency", "template_prior", "near_date"])
def test_each_shape_baseline_is_at_chance_on_the_demo(demo, strategy):
    score = blind.shape_scores(demo)[strategy]
    # ratio: 7 questions name an amount (a merchant paid once is named without it), the others more
    assert score["n"] >= 5
    # within 5 points, or within the 95 % binomial band of its n where that is wider (n 128: 8 points)
    band = max(0.05, 1.96 * (score["chance"] * (1 - score["chance"]) / score["n"]) ** 0.5)
    assert abs(score["accuracy"] - score["chance"]) <= band, score


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_a_generalization_question_is_traced_to_its_situation(lang):
    """Situations carry their option kind and goods (keme.qa.phrasing.Situation): the template is its text."""
    from keme.qa import phrasing
    from keme.qa.blind import template_of

    situation = next(iter(phrasing.get(lang).text.generalize.values())).situations[0]
    assert template_of(situation.text, lang) == situation.text


@pytest.mark.parametrize("screenshots", [True, False])
def test_the_demo_holds_every_choice_heuristic_to_the_gate(screenshots):
    """configs/demo.yaml with and without screenshots (the core install's check runs it without): "pick
    the longest" was 0.53 against 0.30 once fewer order questions left the generator's choices, whose gold
    is the persona's own value and often the longest, to tip it; keme validate failed the demo."""
    cfg = load_config(ROOT / "configs/demo.yaml")
    if not screenshots:
        cfg = cfg.model_copy(update={"omni": cfg.omni.model_copy(update={"enabled": False})})
    worlds = [world_of(synthesize_persona(index, cfg).view()) for index in range(len(cfg.personas))]
    items = build.synthesize_qa(worlds, cfg)[0]
    scores = blind.blind_scores(items)
    assert breaches({k: scores[k] for k in ("position", "median", "longest")}) == []


def test_a_made_up_name_is_checked_by_what_it_is_also_called():
    """ "the Regal downtown" names Regal Cinemas, 「万科」 names 万科物业: neither is a shop never
    mentioned."""
    assert name_parts("Regal Cinemas", "en") == ["Regal Cinemas", "Regal"]
    assert name_parts("万科物业", "zh") == ["万科物业", "万科"]
    assert name_parts("Keisha", "en") == ["Keisha"]


def _moved(day: datetime) -> SimpleNamespace:
    """Wuhan until May 23, Hangzhou after."""
    return SimpleNamespace(value="武汉" if day < datetime(2026, 5, 23) else "杭州")


def test_a_landmark_named_again_after_a_move_anchors_no_where_did_i_live_question():
    """「膝盖疼」 in March, 「膝盖又难受了」 in June after the move: "where did I live when my knee hurt?"
    has two answers."""
    lines = [(datetime(2026, 3, 2), "膝盖疼得厉害"), (datetime(2026, 6, 4), "练完篮球膝盖又难受了，老毛病")]
    g = SimpleNamespace(lang="zh", world=SimpleNamespace(user_lines=lines))
    assert _said_when_otherwise(g, "膝盖疼", SimpleNamespace(version_at=_moved), "武汉")


def test_a_landmark_named_only_while_the_attribute_held_anchors_the_question():
    g = SimpleNamespace(lang="zh", world=SimpleNamespace(user_lines=[(datetime(2026, 3, 2), "膝盖疼得厉害")]))
    assert not _said_when_otherwise(g, "膝盖疼", SimpleNamespace(version_at=_moved), "武汉")


def test_which_cities_have_i_lived_in_is_not_asked_of_one_who_grew_up_elsewhere():
    """She grew up in Savannah: the city history San Diego -> Chicago would leave it out."""
    said = SimpleNamespace(versions=[SimpleNamespace(value="Savannah", evidence=["p01-s0035-m11"])])
    persona = SimpleNamespace(attribute=lambda key: said)
    assert _lived_before(persona, "home.city", "San Diego")
    assert not _lived_before(persona, "home.city", "Savannah")


def test_a_symptom_anchors_no_question_about_a_time_of_life(demo):
    """ "Which city was I living in when I was dealing with a runny nose?" is no question a person asks."""
    at_event = [i for i in demo if i.subtype.startswith("mh.attr_at_event") and i.language == "en"]
    assert at_event and not any("dealing with" in i.question for i in at_event)


def test_wrong_amounts_beside_an_amount_the_question_names_are_of_its_size():
    """ "Before I changed my budget to ¥7000, what was it?": ¥8000 among ¥3000, ¥3400 and ¥3500 is picked by
    size alone; wrong options are kept within 1.6x of both."""
    from decimal import Decimal

    from keme.qa.options import _span

    assert _span(Decimal(8000), [Decimal(7000)]) == (Decimal(5000), Decimal(11200))
    assert _span(Decimal(90), []) == (Decimal(30), Decimal(270))


def test_what_a_payment_was_filed_under_is_not_asked(demo):
    """The merchant gives the category away (Safeway: Groceries)."""
    assert not [i for i in demo if i.subtype == "bill.category"]
