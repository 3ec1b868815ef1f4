"""The rule judge reads each kind of answer spec."""

from __future__ import annotations

from datetime import datetime

import pytest

from eval.judge import RuleJudge
from keme.models import AnswerSpec, QAItem
from keme.models.proof import ValueProof


def item(spec: AnswerSpec, answer: str = "x", language: str = "en") -> QAItem:
    return QAItem(
        id="q",
        persona_id="p",
        question="?",
        answer=answer,
        spec=spec,
        type="single_hop",
        subtype="t",
        evidence=[],
        evidence_sessions=[],
        asked_at=datetime(2026, 6, 1),
        hops=1,
        difficulty="easy",
        language=language,
        node="n",
        proof=ValueProof(op="value", quotes=[]),
    )


judge = RuleJudge()


@pytest.mark.parametrize(
    "prediction, correct",
    [
        ("You paid $5.40 there.", True),
        ("It was 5.4 dollars", True),
        ("About $6", False),
        ("On March 5 you paid", False),
    ],
)
def test_number_answers(prediction, correct):
    spec = AnswerSpec(kind="number", value="5.40", unit="USD")
    assert judge.judge(item(spec), prediction).correct is correct


def test_a_date_in_the_question_is_not_taken_for_the_number():
    spec = AnswerSpec(kind="number", value="4")
    assert not judge.judge(item(spec), "On March 4 you paid $12").correct


@pytest.mark.parametrize("prediction", ["March 4", "2026-03-04", "it was on 3/4", "3月4日", "Mar 4, 2026"])
def test_dates_in_any_common_format(prediction):
    assert judge.judge(item(AnswerSpec(kind="date", value="2026-03-04")), prediction).correct


def test_entity_matches_value_or_alias_case_insensitively():
    spec = AnswerSpec(kind="entity", value="Trader Joe's", aliases=["TJ's"])
    assert judge.judge(item(spec), "at trader joe’s").correct
    assert judge.judge(item(spec), "TJ's, I think").correct
    assert not judge.judge(item(spec), "Whole Foods").correct


def test_sets_need_every_item_and_ordered_sets_their_order():
    spec = AnswerSpec(kind="set", items=["Austin", "Denver"], ordered=True)
    assert judge.judge(item(spec), "First Austin, then Denver").correct
    assert not judge.judge(item(spec), "Denver, then Austin").correct
    assert not judge.judge(item(AnswerSpec(kind="set", items=["Austin", "Denver"])), "Austin").correct


def test_choice_by_letter_or_option_text():
    spec = AnswerSpec(kind="choice", value="B", aliases=["window seats"])
    assert judge.judge(item(spec), "B. window seats").correct
    assert judge.judge(item(spec), "(B)").correct
    assert not judge.judge(item(spec), "A").correct
    assert judge.judge(item(spec), "I'd go with window seats").correct


@pytest.mark.parametrize(
    "prediction, correct",
    [
        ("That was never mentioned.", True),
        ("I don't know.", True),
        ("没有提到过", True),
        ("It was $20.", False),
    ],
)
def test_abstention(prediction, correct):
    assert judge.judge(item(AnswerSpec(kind="abstain", value="abstain")), prediction).correct is correct


def test_duration_within_tolerance():
    spec = AnswerSpec(kind="duration", value="200", unit="s", tolerance=5)
    assert judge.judge(item(spec), "3 min 22 s").correct
    assert not judge.judge(item(spec), "5 min").correct


def test_empty_answer_is_wrong():
    assert not judge.judge(item(AnswerSpec(kind="entity", value="x")), "  ").correct
