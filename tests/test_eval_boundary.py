"""The typed eval boundary: Settings, the optional close() of the contract, judges told apart by type."""

from __future__ import annotations

import dataclasses
from pathlib import Path
from types import SimpleNamespace

import pytest
from conftest import sample_dataset
from typer.testing import CliRunner

from baselines.recency import Recency
from eval.contract import Closeable, MemorySystem
from eval.judge import RuleJudge, Verdict
from eval.llm_judge import LLMJudge
from eval.run import Settings, run
from keme.cli import app

ROOT = Path(__file__).resolve().parents[1]


class ClosedOnce(Recency):
    closed = 0

    def close(self) -> None:
        ClosedOnce.closed += 1


def test_settings_cannot_change_after_they_are_checked(tmp_path):
    settings = Settings(data=sample_dataset(), out=tmp_path, systems=["bm25"])
    with pytest.raises(dataclasses.FrozenInstanceError):
        settings.mode = "later"  # type: ignore[misc]


def test_close_is_part_of_the_contract_and_optional():
    assert isinstance(ClosedOnce(), Closeable) and isinstance(ClosedOnce(), MemorySystem)
    assert not isinstance(Recency(), Closeable)


def test_the_harness_closes_a_system_that_declares_close(tmp_path, temporary_system):
    ClosedOnce.closed = 0
    run(
        Settings(
            data=sample_dataset(),
            out=tmp_path,
            systems=[temporary_system("closed_once", ClosedOnce)],
            limit=1,
        )
    )
    assert ClosedOnce.closed == 1


class Counting:
    """Not an LLM judge, though it has a `runs` and a `client` attribute."""

    name = "counting"
    runs = 3
    client = None

    def judge(self, item, prediction: str) -> Verdict:
        return Verdict(correct=True, label="CORRECT")


def test_only_an_llm_judge_adds_its_prompts_and_runs_to_the_run_identity(tmp_path):
    llm = LLMJudge(client=SimpleNamespace(), prompts="locomo", runs=2)  # type: ignore[arg-type]
    settings = Settings(
        data=sample_dataset(), out=tmp_path, systems=["bm25"], judges=[RuleJudge(), Counting(), llm]
    )
    identity = settings.identity(
        SimpleNamespace(dataset_sha="x", roles=None, speakers=True, include_flagged=False)
    )
    assert identity["judges"] == ["rule", "counting", "llm:locomo:2"]


@pytest.mark.parametrize("choices", ["<offline|online>", "<caption|none>", "<rule|llm|both>"])
def test_eval_help_lists_the_choices(choices):
    result = CliRunner().invoke(app, ["eval", "--help"], env={"COLUMNS": "200"})
    assert choices in result.output
