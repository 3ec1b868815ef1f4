"""`keme eval --config FILE`: a run's settings from a YAML file; the command line wins over it."""

from __future__ import annotations

import json

import pytest
from conftest import ROOT
from typer.testing import CliRunner

from eval.config import load_eval_config
from eval.registry import REGISTRY
from keme.cli import app
from keme.errors import KemeError

PAPER = ROOT / "configs/eval-paper.yaml"


def test_the_paper_config_retrieves_30_for_text_and_15_for_omni():
    config = load_eval_config(PAPER)
    assert config.k_for(has_screenshots=False) == 30 and config.k_for(has_screenshots=True) == 15


def test_the_paper_config_judges_with_an_llm_and_the_mobilemem_prompt():
    config = load_eval_config(PAPER)
    assert (config.reader, config.judge, config.judge_prompts) == ("openai", "llm", "mobilemem")
    assert config.llm["provider"] == "openai" and config.llm["base_url"].endswith("/v1")


def test_the_paper_config_names_registered_systems_with_checked_parameters():
    config = load_eval_config(PAPER)
    assert set(config.systems) <= set(REGISTRY) and {"mem0", "mem0_raw", "langmem"} <= set(config.systems)
    assert config.params["mem0"]["base_url"] == config.llm["base_url"]


def test_a_plain_k_applies_to_every_dataset(tmp_path):
    path = tmp_path / "eval.yaml"
    path.write_text("k: 7\n")
    config = load_eval_config(path)
    assert config.k_for(True) == config.k_for(False) == 7


def test_an_unknown_setting_is_refused_naming_it_and_the_known_ones(tmp_path):
    path = tmp_path / "eval.yaml"
    path.write_text("top_k: 30\n")
    with pytest.raises(KemeError, match=r"top_k: not a setting \(known: systems, k, "):
        load_eval_config(path)


def test_a_k_below_one_is_refused_naming_the_modality(tmp_path):
    path = tmp_path / "eval.yaml"
    path.write_text("k: {text: 0, omni: 15}\n")
    with pytest.raises(KemeError, match=r"k\.text: Input should be greater than or equal to 1"):
        load_eval_config(path)


def test_inline_params_are_checked_against_what_the_system_declares(tmp_path):
    path = tmp_path / "eval.yaml"
    path.write_text("params:\n  bm25: {no_such_knob: 3}\n")
    with pytest.raises(KemeError, match="no_such_knob"):
        load_eval_config(path)


def test_a_config_that_is_not_a_mapping_is_refused(tmp_path):
    path = tmp_path / "eval.yaml"
    path.write_text("- k\n- 30\n")
    with pytest.raises(KemeError, match="expected a mapping of setting to value, got list"):
        load_eval_config(path)


def _eval(args: list[str]):
    return CliRunner().invoke(
        app, ["eval", "--data", str(ROOT / "data/sample"), *args], env={"COLUMNS": "200"}
    )


def test_the_file_fills_what_the_command_line_leaves_out(tmp_path):
    path = tmp_path / "eval.yaml"
    path.write_text("systems: [bm25]\nk: {text: 12, omni: 4}\ndepth: 20\n")
    result = _eval(["--out", str(tmp_path / "run"), "--config", str(path)])
    assert result.exit_code == 0, result.output
    recorded = json.loads((tmp_path / "run/run.json").read_text())
    assert (recorded["k"], recorded["depth"], list(recorded["fingerprints"])) == (12, 20, ["bm25"])
    assert "k=12 from --config (text: no screenshots)" in result.output


def test_a_flag_on_the_command_line_wins_over_the_file(tmp_path):
    result = _eval(
        ["--out", str(tmp_path / "run"), "--config", str(PAPER), "--systems", "bm25", "--reader", "none",
         "--judge", "rule", "--k", "5"]
    )  # fmt: skip
    assert result.exit_code == 0, result.output
    recorded = json.loads((tmp_path / "run/run.json").read_text())
    assert (recorded["k"], recorded["reader"], recorded["judges"]) == (5, None, ["rule"])
    assert list(recorded["fingerprints"]) == ["bm25"]


def test_without_systems_anywhere_the_run_asks_for_them(tmp_path):
    result = _eval(["--out", str(tmp_path / "run")])
    assert result.exit_code != 0 and "--systems: name the memory systems to run" in result.output
