"""Choice items have no structural shortcut: golds at uniform letters, distractors that are the
persona's own values, preference options that only the preference tells apart, blind guessers at
chance."""

from __future__ import annotations

import random
from datetime import date, datetime
from decimal import Decimal
from types import SimpleNamespace

import pytest
from conftest import ROOT

from keme.models import AnswerSpec, QAItem, Quote
from keme.models.proof import AttributeProof, OrderArgs, OrderProof, ValueProof
from keme.qa import blind, build, ops, phrasing
from keme.qa import generate as gen
from keme.qa import options as opts
from keme.qa.draft import Draft
from keme.qa.facts import world_of
from keme.qa.options import Balancer, Values, money_distractors, place_golds, simple_ratio
from keme.qa.situations import holds as situation_holds
from keme.synth.limits import load_config
from keme.synth.pipeline import synthesize_persona
from keme.text.dates import dates_in
from keme.text.normalize import numbers_in, parse_money


@pytest.fixture(scope="module")
def year():
    """configs/year.yaml's persona (seed 11), its world and its items."""
    cfg = load_config(ROOT / "configs/year.yaml")
    world = world_of(synthesize_persona(0, cfg).view())
    items = build.build_items(world, cfg.qa, cfg.seed, build.QAReport())
    return world, items


def _choice(items: list[QAItem]) -> list[QAItem]:
    return [i for i in items if blind.is_choice(i)]


def _gold(item: QAItem) -> str:
    return item.options[blind.LETTERS.index(item.spec.value or "A")]


def _item(options: list[str], letter: str = "A", **update) -> QAItem:
    base = dict(
        id="p01-q0001",
        persona_id="p01",
        question="How much did I pay at Fandango on April 14?",
        answer=f"{letter}. {options['ABCD'.index(letter)]}",
        spec=AnswerSpec(kind="choice", value=letter, aliases=[options["ABCD".index(letter)]]),
        type="single_hop",
        subtype="bill.amount",
        evidence=["p01-s0001-m01"],
        evidence_sessions=["p01-s0001"],
        asked_at=datetime(2026, 5, 1, 20),
        hops=1,
        difficulty="easy",
        language="en",
        format="single_choice",
        options=options,
        node="p01-e1",
        proof=ValueProof(op="value", quotes=[Quote(message_id="p01-s0001-m01", text=options[0])]),
    )
    return QAItem(**(base | update))


# ---------------------------------------------------------------- gold positions
def test_a_persona_years_gold_letters_fit_a_uniform_distribution(year):
    _, items = year
    for n, p in blind.position_p(items).items():
        assert p > 0.05, (n, blind.position_histogram(items)[n])


def test_four_option_golds_take_every_letter_about_equally_often(year):
    histogram = blind.position_histogram(year[1])[4]
    assert max(histogram.values()) - min(histogram.values()) <= 2, histogram


def test_balanced_draws_give_every_letter_equally_often():
    balance = Balancer(random.Random(3))
    draws = [balance.draw("position", 4) for _ in range(41)]
    counts = [draws.count(i) for i in range(4)]
    assert max(counts) - min(counts) <= 1


def test_moving_an_order_gold_moves_its_quotes_with_the_options():
    quotes = [Quote(message_id="m-early", text="x"), Quote(message_id="m-late", text="y")]
    drafts = []
    for _ in range(8):
        drafts.append(
            Draft(
                "temporal_reasoning",
                "tmp.order",
                "Which happened first: paying at Marriott or my trip to Vancouver?",
                "A. paying at Marriott",
                AnswerSpec(kind="choice", value="A", aliases=["paying at Marriott"]),
                OrderProof(op="order", quotes=quotes),
                datetime(2026, 5, 1),
                2,
                "p01-root",
                options=["paying at Marriott", "my trip to Vancouver"],
                format="single_choice",
            )
        )
    place_golds(drafts, random.Random(1))
    assert sorted(d.spec.value for d in drafts) == ["A"] * 4 + ["B"] * 4
    for draft in drafts:
        gold = blind.LETTERS.index(draft.spec.value)
        assert draft.options[gold] == "paying at Marriott"
        assert draft.proof.quotes[gold].message_id == "m-early"  # quote i belongs to option i
        assert draft.answer == f"{draft.spec.value}. paying at Marriott"


# ---------------------------------------------------------------- blind heuristics
@pytest.mark.parametrize("strategy", ["position", "median", "longest"])
def test_each_blind_heuristic_scores_within_five_points_of_chance(year, strategy):
    score = blind.blind_scores(year[1])[strategy]
    assert score["n"] >= 30
    assert abs(score["accuracy"] - score["chance"]) <= 0.05, score


def _money_drafts(items: list[QAItem]) -> list[Draft]:
    """The year's open money items as drafts, to give each of them choice options."""
    return [
        Draft(i.type, i.subtype, i.question, i.answer, i.spec, i.proof, i.asked_at, i.hops, i.node)
        for i in items
        if i.format == "open" and i.spec.kind == "number" and i.spec.unit == "USD"
    ]


def test_money_options_rarely_have_one_the_others_are_multiples_of(year):
    world, items = year
    drafts = _money_drafts(items)
    values, balance, rng = Values.of(world), Balancer(random.Random(4)), random.Random(4)
    assert len(drafts) >= 20
    based = hits = 0
    for draft in drafts:
        gold = draft.spec.value or ""
        options = [f"${Decimal(v):,.2f}" for v in [gold, *money_distractors(draft, values, rng, balance)]]
        right = options[0]
        rng.shuffle(options)  # as the items show them: a tie must not fall to the gold by its place
        pick = blind.choose(_item(options), "multiples", blind.BlindStats())
        if pick is not None:
            based += 1
            hits += options[pick] == right
    # real amounts are sometimes multiples of one another by chance; what matters is that the one the
    # others are multiples of is not the gold more often than a random option would be
    assert based / len(drafts) <= 0.3
    assert hits <= max(1, based // 2)


def test_money_distractors_are_mostly_real_amounts_of_the_persona(year):
    world, items = year
    real = {Decimal(c.value) for c in world.claims if c.predicate == "amount" or c.predicate == "price"}
    values, balance, rng = Values.of(world), Balancer(random.Random(5)), random.Random(5)
    bills = [d for d in _money_drafts(items) if d.subtype.startswith("bill.")]
    assert bills
    wrong = [Decimal(v) for d in bills for v in money_distractors(d, values, rng, balance)]
    assert sum(1 for v in wrong if v in real) / len(wrong) >= 0.9


def test_the_multiples_heuristic_finds_the_gold_of_old_style_distractors():
    item = _item(["$21.49", "$10.75", "$16.12", "$42.98"])  # 1x, 0.5x, 0.75x, 2x
    assert blind.blind_answer(item, "multiples", blind.BlindStats()) == "A. $21.49"


def test_the_median_heuristic_picks_the_option_nearest_the_others_median():
    item = _item(["$30.00", "$10.00", "$21.00"], letter="C")
    assert blind.blind_answer(item, "median", blind.BlindStats()) == "C. $21.00"


def test_the_median_heuristic_breaks_a_tie_of_the_two_middle_options_by_letter():
    item = _item(["$90.00", "$30.00", "$10.00", "$24.00"], letter="D")  # 30 and 24 are equally near
    assert blind.blind_answer(item, "median", blind.BlindStats()) == "B. $30.00"


def test_always_abstain_answers_with_the_abstain_phrase():
    item = _item(["$21.49", "$10.75", "$16.12"])
    assert blind.blind_answer(item, "always_abstain", blind.BlindStats()) == phrasing.get("en").answer(
        "abstain"
    )


def test_blind_scores_report_accuracy_chance_and_n_per_strategy():
    items = [_item(["$1.10", "$2.30", "$3.70", "$4.90"], letter=x) for x in "ABCD"]
    scores = blind.blind_scores(items)
    assert set(scores) == set(blind.STRATEGIES) | set(blind.SHAPE_STRATEGIES)
    assert scores["position"] == {"accuracy": 0.25, "chance": 0.25, "correct": 1, "n": 4}
    assert scores["always_abstain"]["accuracy"] == 0.0


# ---------------------------------------------------------------- distractors
def _is_iso_day(value: str | None) -> bool:
    """An ISO day ("2026-03-14"), not any value of ten characters ("dairy-free")."""
    try:
        return value is not None and date.fromisoformat(value).isoformat() == value
    except ValueError:
        return False


def test_date_distractors_are_days_of_the_personas_records(year):
    world, items = year
    days = set(Values.of(world).days)
    dated = [i for i in _choice(items) if _is_iso_day(i.spec.option_value)]
    if not dated:
        pytest.skip("this year asks no date as a choice item (the mix and the fair-list rule decide)")
    real = sum(1 for i in dated for o in i.options if o != _gold(i) for d in dates_in(o, 2026) if d in days)
    shown = sum(len(i.options) - 1 for i in dated)
    assert real / shown >= 0.5


def test_date_distractors_of_every_date_candidate_are_mostly_days_of_the_personas_records(year):
    """Whether or not the mix ships a date as a choice item: the distractors date_distractors draws for
    every date candidate of the year are real days of the persona's records, at least half of them."""
    world, _ = year
    values = Values.of(world)
    days = set(values.days)
    drafts = [
        x
        for x in build.candidates(world, load_config(ROOT / "configs/year.yaml").qa, 11)
        if x.spec.kind == "date"
    ]
    assert drafts
    rng, balance = random.Random(5), Balancer(random.Random(6))
    drawn = [date.fromisoformat(v) for x in drafts for v in opts.date_distractors(x, values, rng, balance)]
    assert sum(d in days for d in drawn) / len(drawn) >= 0.5


def _canonical(option: str, gold: str) -> str:
    """An option in the canonical form of its gold (ISO day, exact amount, digits, or as shown)."""
    if len(gold) == 10 and gold[4] == "-":
        days = dates_in(option, int(gold[:4]))
        return days[0].isoformat() if days else option
    money = parse_money(option)
    if money is not None:
        return str(money.quantize(Decimal("0.01")))
    numbers = numbers_in(option)
    return str(numbers[0]) if len(numbers) == 1 and "." not in gold and gold.isdigit() else option


def test_no_distractor_is_a_value_the_same_subject_and_predicate_holds(year):
    world, items = year
    values = Values.of(world)
    checked = 0
    for item in _choice(items):
        gold = item.spec.option_value
        if gold is None:
            continue
        at = getattr(item.proof.args, "at", None) or item.asked_at  # the time the question is about
        answers = [
            c for m in item.evidence for c in values.by_message.get(m, []) if c.value in (gold, _gold(item))
        ]
        held = {_canonical(v, gold) for v in values.taken(answers, at)} | set(values.taken(answers, at))
        for option in item.options:
            if option != _gold(item):
                checked += 1
                assert _canonical(option, gold) not in held - {gold}, (item.question, option)
                assert _canonical(option, gold) != gold, (item.question, option)
    assert checked >= 40  # not vacuous: a year's single-choice items give some 45-60 wrong options


def test_generated_amounts_keep_the_golds_roundness_and_no_simple_ratio():
    draft = Draft(
        "knowledge_update",
        "knowledge_update.current",
        "What's my monthly budget now?",
        "$5,000",
        AnswerSpec(kind="number", value="5000.00", unit="USD"),
        AttributeProof(op="attribute", quotes=[], args={"key": "finance.monthly_budget"}),
        datetime(2026, 6, 1),
        2,
        "p01-root",
    )
    balance, rng = Balancer(random.Random(2)), random.Random(2)
    for _ in range(20):
        wrong = [Decimal(v) for v in money_distractors(draft, None, rng, balance)]
        assert len(wrong) == 3
        assert all(v % 100 == 0 for v in wrong)
        options = [Decimal("5000"), *wrong]
        assert not any(simple_ratio(a, b) for a in options for b in options if a != b)


# ---------------------------------------------------------------- preference options
def _g(lang: str, seed: int = 1):
    return SimpleNamespace(
        say=phrasing.get(lang),
        lang=lang,
        rng=random.Random(seed),
        world=SimpleNamespace(user_lines=[], user_said="", all_said=""),
    )


@pytest.mark.parametrize(
    ("lang", "allergy", "related"), [("zh", "海鲜", "虾蟹"), ("en", "peanuts", "tree nuts")]
)
def test_allergy_alternatives_are_other_food_allergens_never_a_related_one(lang, allergy, related):
    allergens = set(phrasing.get(lang).text.food_allergens)
    for seed in range(30):
        others = gen._preference_options(
            _g(lang, seed), "health.allergy", allergy, {allergy}, Balancer(random.Random(seed))
        )
        assert len(others) == 3
        assert set(others) <= allergens - {allergy, related}


def test_an_allergy_item_asks_what_to_avoid_with_one_option_holding_the_allergen(year):
    items = [i for i in year[1] if i.subtype == "gen.health.allergy"]
    allergy = year[0].persona.attribute("health.allergy").versions[-1].value
    assert items
    for item in items:
        assert sum(1 for o in item.options if allergy in o) == 1
        assert allergy in _gold(item)
        assert not any("potato chips" in o for o in item.options)


def test_diet_alternatives_never_fit_the_persona_too():
    for seed in range(30):
        others = gen._preference_options(
            _g("en", seed), "diet.diet_type", "vegetarian", {"vegetarian"}, Balancer(random.Random(seed))
        )
        assert others and not {"vegan", "pescatarian", "flexitarian"} & set(others)


def test_preference_items_offer_up_to_four_options_of_one_kind(year):
    items = [i for i in year[1] if i.type == "preference_generalization"]
    assert items
    assert sum(1 for i in items if len(i.options) == 4) / len(items) >= 0.5


def test_every_preference_item_asks_a_situation_that_holds_for_the_persona(year):
    world, items = year
    situations = {s.text: s for g in phrasing.get("en").text.generalize.values() for s in g.situations}
    asked = [i for i in items if i.type == "preference_generalization"]
    assert asked
    assert all(situation_holds(situations[i.question], world.persona, i.asked_at) for i in asked)


# ---------------------------------------------------------------- determinism
def test_the_same_seed_gives_the_same_options(year):
    world, items = year
    cfg = load_config(ROOT / "configs/year.yaml")
    again = build.build_items(world, cfg.qa, cfg.seed, build.QAReport())
    assert [i.model_dump_json() for i in again] == [i.model_dump_json() for i in items]


def test_an_order_question_asked_for_the_later_names_the_later_record():
    """Order items are asked both ways ("which came first" / "which came later"): asked only the first
    way, the earlier of two records was the longer option 12 times in 13 (year-zh seed 12)."""
    early, late = datetime(2026, 5, 1, 9), datetime(2026, 5, 3, 9)
    ctx = SimpleNamespace(sent=lambda item, i: (early, late)[i])
    assert ops.order(ctx, None, OrderArgs()) == "A"
    assert ops.order(ctx, None, OrderArgs(later=True)) == "B"


def test_which_came_first_is_never_asked_of_two_receipts(year):
    """A person dates life by a trip, an illness, an occasion, not by which of two payments came first."""
    for item in (i for i in year[1] if i.subtype == "tmp.order"):
        assert not all(parse_money(option) for option in item.options), item.question
