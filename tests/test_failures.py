"""Failure analysis: each wrong question gets the first pipeline step that failed (eval/failures.py).

The questions are the shipped sample's: PHONE_NOW asks which phone the persona has now (the phone after
an update); its gold evidence is the message with the old phone and the one with the update
(conftest.sample_phone_update derives both, so a regenerated sample moves no test).
"""

from __future__ import annotations

import pytest
from conftest import sample_dataset, sample_phone_update

from eval.failures import CATEGORIES, Ledger, Outcome, breakdown, classify, verdict_of
from eval.metrics import evidence_groups

PHONE = sample_phone_update()
PHONE_NOW = PHONE.question
OLD_PHONE = PHONE.old_message  # "... my <old phone>" (gold: the phone before the update)
NEW_PHONE = PHONE.new_message  # "I got the <new phone>" (gold: the update)
NOISE = PHONE.noise


@pytest.fixture(scope="module")
def world():
    data = sample_dataset()
    return {q.id: q for q in data.qa}, Ledger(data.claims)


def category(world, qid: str, ranked: list[str], k: int = 3, answer: str | None = None, correct=None):
    questions, ledger = world
    item = questions[qid]
    groups = evidence_groups(item.evidence, item.also_supported_by)
    return classify(item, groups, Outcome(ranked, ranked[:k], answer, correct), ledger)


def test_the_sample_question_is_what_the_tests_assume(world):
    questions, _ = world
    item = questions[PHONE_NOW]
    assert item.answer == PHONE.new and set(item.evidence) == {OLD_PHONE, NEW_PHONE}


def test_only_the_old_value_in_context_is_stale(world):
    assert category(world, PHONE_NOW, [OLD_PHONE, *NOISE]) == "stale"


def test_the_current_value_in_context_is_not_stale(world):
    assert category(world, PHONE_NOW, [NEW_PHONE, *NOISE]) == "not_retrieved"


def test_gold_nowhere_in_the_ranking_is_not_retrieved(world):
    assert category(world, PHONE_NOW, NOISE) == "not_retrieved"


def test_gold_below_k_is_ranked_out(world):
    assert category(world, PHONE_NOW, [*NOISE, OLD_PHONE, NEW_PHONE]) == "ranked_out"


def test_evidence_in_context_and_a_wrong_answer_is_answered_wrong(world):
    ranked = [OLD_PHONE, NEW_PHONE, *NOISE]
    assert category(world, PHONE_NOW, ranked, answer=PHONE.old, correct=False) == "answered_wrong"


def test_evidence_in_context_and_i_dont_know_is_abstained_answerable(world):
    ranked = [OLD_PHONE, NEW_PHONE, *NOISE]
    verdict = category(world, PHONE_NOW, ranked, answer="I don't know.", correct=False)
    assert verdict == "abstained_answerable"


def test_a_right_answer_has_no_failure(world):
    assert category(world, PHONE_NOW, NOISE, answer=PHONE.new, correct=True) is None


def test_an_answer_to_an_unanswerable_question_is_answered_unanswerable(world):
    questions, _ = world
    qid = next(q.id for q in questions.values() if q.spec.kind == "abstain")
    assert category(world, qid, NOISE, answer="Paris", correct=False) == "answered_unanswerable"


def test_without_a_reader_the_unanswerable_and_the_retrieved_are_not_classified(world):
    questions, _ = world
    qid = next(q.id for q in questions.values() if q.spec.kind == "abstain")
    assert category(world, qid, NOISE) is None
    assert category(world, PHONE_NOW, [OLD_PHONE, NEW_PHONE, *NOISE]) is None


def test_a_question_about_the_history_of_a_fact_has_no_stale_value(world):
    questions, _ = world
    history = next(q for q in questions.values() if any(x.aggregate == "history" for x in q.queries))
    assert category(world, history.id, [OLD_PHONE, *NOISE]) != "stale"


def test_the_breakdown_counts_every_category_in_pipeline_order():
    counts = breakdown(["stale", None, "ranked_out", "stale"])
    assert list(counts) == list(CATEGORIES) and counts["stale"] == 2 and counts["answered_wrong"] == 0


def test_the_llm_judges_verdict_is_read_before_the_rules():
    assert verdict_of({"rule": True, "llm": False}) is False and verdict_of({}) is None
