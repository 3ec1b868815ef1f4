"""How she paid one bill is asked so that her usual card does not answer it: keme.qa.blind scores the
reader who answers every bill.method item with the method her bills use most, and keme.qa.methods holds
the selection to one such item in k (k the methods her bills use), the chance of a guess among them."""

from __future__ import annotations

import random
from collections import Counter
from datetime import datetime

from keme.models import AnswerSpec, QAItem, Quote
from keme.models.proof import ValueProof
from keme.qa import draft as d
from keme.qa.blind import usual_method_score
from keme.qa.draft import Draft
from keme.qa.methods import hold_usual, thin_usual, usual_method, usual_quota
from keme.qa.twins import Wordings

CARD, OTHERS = "Chase debit card", ["Chase credit card", "Apple Pay"]
QUESTION = "How did I pay the ${n}.00 at Shell on May {day}?"


def _item(n: int, method: str, options: list[str] | None = None) -> QAItem:
    answer = method if options is None else "ABCD"[options.index(method)]
    return QAItem(
        id=f"p01-q{n:04d}",
        persona_id="p01",
        question=QUESTION.format(n=10 + n, day=n + 1),
        answer=method,
        spec=AnswerSpec(kind="entity" if options is None else "choice", value=answer),
        type="single_hop",
        subtype="bill.method",
        evidence=["p01-s0001-m01"],
        evidence_sessions=["p01-s0001"],
        asked_at=datetime(2026, 6, 1, 20),
        hops=1,
        difficulty="easy",
        language="en",
        node="p01-e1",
        proof=ValueProof(op="value", quotes=[Quote(message_id="p01-s0001-m01", text=method)]),
        format="open" if options is None else "single_choice",
        options=options or [],
    )


def _draft(n: int, method: str, subtype: str = "bill.method") -> Draft:
    return Draft(
        "single_hop",
        subtype,
        QUESTION.format(n=10 + n, day=n % 28 + 1) if subtype == "bill.method" else f"Question {n}?",
        method,
        d.entity(method),
        d.proof("absent", [], terms=""),
        datetime(2026, 6, 1, 20),
        1,
        "p01-root",
    )


# ---------------------------------------------------------------- the baseline
def test_the_usual_card_answers_what_her_bills_mostly_used():
    bills = {"p01": Counter({CARD: 18, OTHERS[0]: 1, OTHERS[1]: 1})}
    items = [_item(0, CARD), _item(1, CARD), _item(2, CARD), _item(3, OTHERS[0])]
    score = usual_method_score(items, bills)
    assert (score["correct"], score["n"]) == (3, 4)
    assert score["chance"] == round(1 / 3, 4)  # a guess at one of her three methods


def test_on_a_choice_item_chance_is_one_in_the_options():
    bills = {"p01": Counter({CARD: 8, OTHERS[0]: 2})}
    options = [OTHERS[0], CARD, OTHERS[1], "PayPal"]
    score = usual_method_score([_item(0, OTHERS[0], options)], bills)
    assert (score["correct"], score["chance"]) == (0, 0.25)


# ---------------------------------------------------------------- the selection
def test_her_usual_method_is_the_most_used_and_counts_her_methods():
    assert usual_method([CARD, CARD, OTHERS[0], CARD, OTHERS[1]]) == (CARD, 3)
    assert usual_method([]) is None


def test_the_quota_is_one_in_k_on_average():
    quotas = [usual_quota(5, 3, random.Random(seed)) for seed in range(3000)]
    assert set(quotas) == {1, 2}
    assert abs(sum(quotas) / len(quotas) - 5 / 3) < 0.05


def test_a_persona_who_pays_with_one_card_for_nearly_everything_is_not_answered_by_it():
    """Six questions about bills on her usual card, candidates on her other two: after the hold, her
    usual card answers at most one in three, and the selection keeps its size."""
    chosen_drafts = [_draft(n, CARD) for n in range(6)]
    spare = [_draft(10 + n, CARD) for n in range(10)] + [_draft(30 + n, OTHERS[n % 2]) for n in range(4)]
    chosen = {id(x): x for x in chosen_drafts}
    book = Wordings(chosen, chosen_drafts + spare, "en", random.Random(1))
    hold_usual(book, chosen_drafts + spare, (CARD, 3), random.Random(1))
    answers = [x.answer for x in book.chosen.values()]
    assert len(answers) == 6
    assert answers.count(CARD) <= 2
    items = [_item(n, x.answer) for n, x in enumerate(book.chosen.values())]
    score = usual_method_score(items, {"p01": Counter({CARD: 40, OTHERS[0]: 3, OTHERS[1]: 2})})
    assert score["accuracy"] <= score["chance"] + 0.05


def test_a_persona_with_one_method_is_never_asked_how_she_paid():
    chosen_drafts = [_draft(n, CARD) for n in range(3)]
    spare = [_draft(50 + n, "", subtype="bill.amount") for n in range(3)]
    chosen = {id(x): x for x in chosen_drafts}
    book = Wordings(chosen, chosen_drafts + spare, "en", random.Random(1))
    hold_usual(book, chosen_drafts + spare, (CARD, 1), random.Random(1))
    assert [x.subtype for x in book.chosen.values()] == ["bill.amount"] * 3


def test_the_candidates_keep_as_many_on_her_usual_card_as_on_each_other_method():
    drafts = [_draft(n, CARD) for n in range(12)] + [_draft(20 + n, OTHERS[n % 2]) for n in range(4)]
    kept = thin_usual(drafts, (CARD, 3), random.Random(1))
    assert Counter(x.answer for x in kept) == {CARD: 2, OTHERS[0]: 2, OTHERS[1]: 2}
