"""Where the rule judge and the LLM judge part, the report says so: per question (`judges_disagree`), and
per system as a rate with a visible warning and the questions listed when it passes the threshold."""

from __future__ import annotations

import json
import shutil

import pytest
from conftest import ROOT

from eval.disagreement import disagree, disagreement_summary
from eval.judge import RuleJudge
from eval.llm_judge import LLMJudge
from eval.reader import LLMReader
from eval.run import Settings, run
from keme.errors import KemeError
from keme.llm import LLMClient, LLMConfig
from keme.validate import verified_dataset

pytest.importorskip("openai")


def rows(*verdicts: dict[str, bool]) -> list[dict]:
    return [
        {"question_id": f"q{i}"} | ({"judges_disagree": disagree(v)} if disagree(v) is not None else {})
        for i, v in enumerate(verdicts)
    ]


def test_one_question_disagrees_when_its_judges_give_different_verdicts():
    assert disagree({"rule": False, "llm": True}) is True
    assert disagree({"rule": True, "llm": True}) is False


def test_a_single_judge_cannot_disagree():
    assert disagree({"rule": True}) is None


def test_the_rate_counts_questions_with_two_judges_and_lists_the_ones_that_part():
    summary = disagreement_summary(
        rows({"rule": False, "llm": True}, {"rule": True, "llm": True}, {"rule": True}), threshold=0.5
    )
    assert summary["judge_disagreement_rate"] == 0.5 and summary["judge_disagreements"] == ["q0"]
    assert "judge_disagreement_warning" not in summary  # 50 % is not above 50 %


def test_above_the_threshold_the_summary_carries_a_warning():
    summary = disagreement_summary(rows({"rule": False, "llm": True}, {"rule": True, "llm": True}), 0.2)
    assert "disagree on 1 of 2 questions (50%, above 20%)" in summary["judge_disagreement_warning"]


def test_without_two_judges_there_is_no_disagreement_figure():
    assert disagreement_summary(rows({"rule": True}, {"rule": False})) == {}


def test_a_threshold_outside_zero_to_one_is_refused(tmp_path):
    shutil.copytree(ROOT / "data/sample", tmp_path / "data")
    with pytest.raises(KemeError, match="--disagreement-threshold"):
        Settings(
            data=verified_dataset(tmp_path / "data"),
            out=tmp_path / "run",
            systems=["bm25"],
            disagreement_threshold=1.5,
        )


class Yesman:
    """A reader that never knows, and a judge that calls every answer CORRECT."""

    name = "local"

    def complete(self, messages, params, schema, timeout=None):
        content = '{"label": "CORRECT"}' if schema else "I do not know."
        return {"content": content, "prompt_tokens": 3, "completion_tokens": 2, "model": "m"}


def yes_run(tmp_path, threshold: float = 0.2) -> dict:
    shutil.copytree(ROOT / "data/sample", tmp_path / "data")
    client = LLMClient(LLMConfig(cache_dir=str(tmp_path / "cache")), provider=Yesman(), sleep=lambda s: None)
    return run(
        Settings(
            data=verified_dataset(tmp_path / "data"),
            out=tmp_path / "run",
            systems=["bm25"],
            limit=2,
            reader=LLMReader(client),
            judges=[RuleJudge(), LLMJudge(client, runs=1)],
            disagreement_threshold=threshold,
        )
    )


def test_a_run_whose_judges_disagree_is_flagged_in_summary_leaderboard_and_results(tmp_path):
    summary = yes_run(tmp_path)
    bm25 = summary["systems"]["bm25"]
    results = [json.loads(line) for line in (tmp_path / "run/results.jsonl").read_text().splitlines()]
    parted = sorted(r["question_id"] for r in results if r["judges_disagree"])
    assert bm25["judge_disagreement_rate"] > 0.2 and bm25["judge_disagreements"] == parted
    assert "WARNING: bm25: the judges disagree" in summary["note"]
    board = (tmp_path / "run/leaderboard.md").read_text()
    assert board.startswith("**WARNING — bm25: the judges disagree") and parted[0] in board


def test_a_run_below_its_threshold_reports_the_rate_without_a_warning(tmp_path):
    summary = yes_run(tmp_path, threshold=1.0)
    assert "judge_disagreement_rate" in summary["systems"]["bm25"]
    assert "disagree" not in summary["note"]
    assert "judges disagree" not in (tmp_path / "run/leaderboard.md").read_text()
