"""no_memory: retrieves nothing; answers by the reader alone, or offline by a blind heuristic."""

from __future__ import annotations

from datetime import datetime

import pytest
from conftest import sample_dataset

from baselines.no_memory import BlindReader, NoMemory, best_strategy
from eval.contract import Answering, Query, Usage
from eval.judge import RuleJudge
from eval.registry import REGISTRY, create
from eval.run import Settings, run
from keme.errors import KemeError
from keme.models import AnswerSpec, QAItem
from keme.models.proof import ValueProof
from keme.qa.blind import blind_scores


def choice(number: int, options: list[str], gold: str, language: str = "en") -> QAItem:
    return QAItem(
        id=f"p01-q{number:04d}",
        persona_id="p01",
        question="Which phone did I buy in April?",
        answer=f"{gold}. {options[ord(gold) - ord('A')]}",
        spec=AnswerSpec(kind="choice", value=gold),
        type="single_hop",
        subtype="purchase.item",
        evidence=["p01-s0001-m01"],
        evidence_sessions=["p01-s0001"],
        asked_at=datetime(2026, 4, 23, 7, 30),
        hops=1,
        difficulty="easy",
        language=language,
        format="single_choice",
        options=options,
        node="p01-c01-e06",
        proof=ValueProof(op="value", quotes=[]),
    )


def abstention(number: int) -> QAItem:
    return choice(number, ["x", "y"], "A").model_copy(
        update={"format": "open", "options": [], "spec": AnswerSpec(kind="abstain"), "evidence": []}
    )


# every gold is B, and B is never the longest option: position bias is the shortcut here
BIASED = [
    choice(1, ["Galaxy S23 Ultra", "Pixel 8"], "B"),
    choice(2, ["an iPhone 15 Pro Max", "a Pixel 8", "a OnePlus 12"], "B"),
    choice(3, ["$143.73 in total", "$21.49", "$107.80"], "B"),
]


class Configured:
    name = "llm:test:model"

    def answer(self, question: QAItem, context: str) -> tuple[str, Usage]:
        return "B", Usage()


def test_it_retrieves_nothing():
    system = NoMemory()
    result = system.retrieve("p01", Query(text="anything", now=datetime(2026, 5, 1)), 10)
    assert (result.hits, result.context, result.context_message_ids) == ([], "", [])


def test_it_is_registered_as_a_context_window_that_answers_for_itself():
    for name in ("no_memory", "no_memory_abstain"):
        assert REGISTRY[name].query_based is False and isinstance(create(name), Answering)


def test_with_a_reader_configured_no_memory_is_the_reader_alone():
    reader = Configured()
    assert create("no_memory").reader_for(BIASED, reader) is reader


def test_the_abstain_row_abstains_even_with_a_reader():
    reader = create("no_memory_abstain").reader_for(BIASED, Configured())
    assert isinstance(reader, BlindReader) and reader.name == "blind:always_abstain"
    answer, _ = reader.answer(abstention(9), "")
    assert RuleJudge().judge(abstention(9), answer).correct


def test_offline_it_takes_the_heuristic_that_scores_best_on_the_run():
    assert best_strategy(BIASED) == "position"
    reader = create("no_memory").reader_for(BIASED, None)
    assert reader.name == "blind:position"
    assert [RuleJudge().judge(q, reader.answer(q, "")[0]).correct for q in BIASED] == [True] * 3


def test_a_strategy_can_be_chosen_by_name():
    reader = NoMemory(strategy="longest").reader_for(BIASED, None)
    assert reader.answer(BIASED[0], "")[0] == "A. Galaxy S23 Ultra"


def test_an_unknown_strategy_is_refused_by_name():
    with pytest.raises(KemeError, match="unknown strategy 'loudest'; known: best, position"):
        NoMemory(strategy="loudest")


def test_offline_run_scores_the_blind_rows_and_says_what_always_abstaining_gets(tmp_path):
    data = sample_dataset()
    systems = ["no_memory", "no_memory_abstain", "full_context"]
    summary = run(Settings(data=data, out=tmp_path, systems=systems))
    questions = [q for view in data.views() for q in view.qa]
    share = sum(q.spec.kind == "abstain" for q in questions) / len(questions)
    abstain = summary["systems"]["no_memory_abstain"]
    assert abstain["answered_by"] == "blind:always_abstain"
    assert abstain["accuracy"] >= round(share, 4)  # the summary rounds to 4 places
    assert abstain["evidence_in_context"] == 0.0
    assert "recall_any@5" not in abstain and "accuracy" not in summary["systems"]["full_context"]
    assert (
        f"always abstaining is right on the {sum(q.spec.kind == 'abstain' for q in questions)}"
        in (summary["note"])
    )
    assert "no_memory_abstain by always_abstain" in (tmp_path / "leaderboard.md").read_text()


class Recording(Configured):
    """A reader that notes the context it is given."""

    def __init__(self) -> None:
        self.contexts: list[str] = []

    def answer(self, question: QAItem, context: str) -> tuple[str, Usage]:
        self.contexts.append(context)
        return "B", Usage()


def test_with_a_reader_the_run_asks_it_with_no_memories(tmp_path):
    reader = Recording()
    summary = run(
        Settings(data=sample_dataset(), out=tmp_path, systems=["no_memory"], limit=2, reader=reader)
    )
    assert summary["systems"]["no_memory"]["answered_by"] == "llm:test:model"
    assert reader.contexts and set(reader.contexts) == {""}


def test_the_position_guesser_learns_the_letter_from_the_other_personas():
    """Each persona's golds are all one letter, a different one per persona: the letter learned from
    the other persona is always wrong, so a dataset whose position bias does not carry over from one
    persona to the next is not credited with one."""
    own = [choice(n, ["a", "b", "c"], "B") for n in (1, 2, 3)]
    other = [
        q.model_copy(update={"persona_id": "p02", "spec": AnswerSpec(kind="choice", value="C")}) for q in own
    ]
    assert blind_scores(own + other)["position"]["correct"] == 0
    assert blind_scores(own)["position"]["correct"] == 3  # one persona: its own letters
