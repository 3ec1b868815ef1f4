"""Bad `keme eval` options: every one is refused by name before anything runs; a resumed run must be the same
run."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from probe import ROOT, refused, refuses, worked

pytestmark = pytest.mark.fault

SAMPLE = ROOT / "data/sample"


@pytest.fixture(autouse=True)
def _no_debug(monkeypatch):
    monkeypatch.delenv("KEME_DEBUG", raising=False)


def evaluate(tmp_path: Path, *extra: str, systems: str = "bm25") -> list[str]:
    return ["eval", "--data", str(SAMPLE), "--systems", systems, "--out", str(tmp_path / "run"), *extra]


# ---------------------------------------------------------------- option values
@pytest.mark.parametrize(
    ("extra", "match"),
    [
        (["--k", "-5"], r"--k: Input should be greater than or equal to 1 \(got -5\)"),
        (["--k", "0"], r"--k: .*greater than or equal to 1"),
        (["--depth", "0"], r"--depth: .*greater than or equal to 1"),
        (["--limit", "-1"], r"--limit: .*greater than or equal to 1"),
        (["--limit", "0"], r"--limit: .*greater than or equal to 1"),
        (["--roles", "bogus"], r"--roles: Input should be 'user', 'assistant' or 'system' \(got 'bogus'\)"),
        (["--roles", "user,robot"], r"--roles: .*\(got 'robot'\)"),
        (["--roles", ","], r"--roles: names none"),
        (["--judge-runs", "0"], r"--judge-runs: .*greater than or equal to 1"),
        (
            ["--images", "bogus"],
            r"Invalid value for '--images'.*'caption'.*'none'",
        ),  # typer refuses a choice not listed
        (["--mode", "bogus"], r"Invalid value for '--mode'.*'offline'.*'online'"),
        (["--reader", "bogus"], r"Invalid value for '--reader'"),
        (["--judge", "bogus"], r"Invalid value for '--judge'"),
        (["--judge-prompts", "bogus"], r"--judge-prompts: one of mobilemem, longmemeval, locomo"),
        (["--k", "abc"], r"Invalid value for '--k'"),
    ],
    ids=lambda v: " ".join(v) if isinstance(v, list) else None,
)
def test_a_bad_option_value_is_refused_by_name(tmp_path, extra, match):
    refused(evaluate(tmp_path, *extra), match=match, code=2)
    assert not (tmp_path / "run").exists()


def test_every_bad_option_is_named_at_once(tmp_path):
    refused(
        evaluate(tmp_path, "--k", "0", "--depth", "-1", "--judge-runs", "0"),
        match=r"--k: .*--depth: .*--judge-runs: ",
    )


@pytest.mark.parametrize(
    ("systems", "match"),
    [
        ("", r"--systems names no memory system"),
        (" , ", r"--systems names no memory system"),
        ("bm25,nosuch", r"unknown memory systems \['nosuch'\]"),
        ("subprocess:", r"subprocess: needs the name"),
        ("subprocess:../../escape", r"cannot name a directory"),
    ],
)
def test_a_bad_system_list_is_refused(tmp_path, systems, match):
    refused(evaluate(tmp_path, systems=systems), match=match, code=2)


def test_a_system_named_twice_runs_once(tmp_path):
    worked(evaluate(tmp_path, "--limit", "2", systems="bm25,bm25"))
    assert list(json.loads((tmp_path / "run/summary.json").read_text())["systems"]) == ["bm25"]


# ---------------------------------------------------------------- --params
def params_file(tmp_path: Path, text: str | bytes) -> Path:
    path = tmp_path / "params.yaml"
    path.write_bytes(text if isinstance(text, bytes) else text.encode())
    return path


@pytest.mark.parametrize(
    ("text", "match"),
    [
        ("memory_bnak: {semantic_limit: 10}\n", r"--params: unknown memory system 'memory_bnak'"),
        (
            "memory_bank: {limt: 10}\n",
            (
                r"--params: memory_bank has no parameter 'limt' "
                r"\(parameters: root, semantic_limit, episodic_limit\)"
            ),
        ),
        (
            "memory_bank: {semantic_limit: many}\n",
            r"--params: memory_bank.semantic_limit: Input should be a valid integer",
        ),
        ("memory_bank: {semantic_limit: 2.5}\n", r"memory_bank.semantic_limit: .*integer \(got 2.5\)"),
        ("bm25: {k1: [1, 2]}\n", r"--params: bm25.k1: Input should be a valid number"),
        ("- bm25\n- recency\n", r"expected a mapping of system name to its parameters, got list"),
        ("memory_bank: 5\n", r"memory_bank: expected a mapping of parameter to value, got int"),
        (
            "memory_bank: [semantic_limit]\n",
            r"memory_bank: expected a mapping of parameter to value, got list",
        ),
        ("1: {k1: 1}\n", r"system names are strings"),
        ("memory_bank: {semantic_limit: 10\n", r"params.yaml:\d+:\d+: not valid YAML"),
        ("bm25: {k1: 1}\n\tb: 2\n", r"not valid YAML"),
        (b"bm25: {k1: \xff}\n", r"--params .*: not valid UTF-8"),
        ("subprocess:bm25: {command: 5}\n", r"subprocess:bm25.command: a list of strings"),
        ("subprocess:bm25: {k9: 1}\n", r"bm25 has no parameter 'k9'"),
        ("[" * 5000 + "]" * 5000 + "\n", r"--params .*(nested too deeply|expected a mapping)"),
    ],
    ids=lambda v: v[:30] if isinstance(v, str) else None,
)
def test_bad_params_are_refused_naming_the_system_and_parameter(tmp_path, text, match):
    path = params_file(tmp_path, text)
    refused(evaluate(tmp_path, "--params", str(path), systems="bm25,memory_bank"), match=match, code=2)


def test_an_unreadable_params_file_is_named(tmp_path):
    refused(
        evaluate(tmp_path, "--params", str(tmp_path / "nowhere.yaml")),
        match=r"--params .*nowhere.yaml: cannot read",
    )
    refused(
        evaluate(tmp_path, "--params", str(tmp_path)), match=r"--params .*: is a directory; pass a YAML file"
    )


def test_declared_params_reach_the_system(tmp_path):
    path = params_file(tmp_path, "recency: {sessions: 2}\nbm25: {k1: 1}\n")
    worked(evaluate(tmp_path, "--params", str(path), "--limit", "2", systems="recency"))
    assert json.loads((tmp_path / "run/run.json").read_text())["params"] == {"recency": {"sessions": 2}}


# ---------------------------------------------------------------- --config
@pytest.mark.parametrize(
    ("text", "match"),
    [
        ("top_k: 30\n", r"--config .*: top_k: not a setting \(known: systems, k, depth"),
        ("k: thirty\n", r"--config .*: k: Input should be a valid integer"),
        ("k: {text: 30}\n", r"--config .*: k.omni: Field\s*required"),
        ("k: {text: 30, omni: 15, video: 4}\n", r"k.video: not a setting"),
        ("depth: 0\n", r"depth: Input should be greater than or equal to 1"),
        ("mode: sometimes\n", r"mode: Input should be 'offline' or 'online'"),
        ("judge: maybe\n", r"judge: Input should be 'rule', 'llm' or 'both'"),
        ("judge_prompts: bogus\n", r"--judge-prompts: one of mobilemem, longmemeval, locomo"),
        ("roles: [robot]\n", r"--roles: .*\(got 'robot'\)"),
        ("systems: [bm25, nope]\n", r"nope"),
        ("params: {bm25: {k9: 1}}\n", r"bm25 has no parameter 'k9'"),
        ("params: [bm25]\n", r"params: Input should be a valid dictionary"),
        ("reader: openai\nllm: {temperature: 9}\n", r"--config .*: llm: temperature: "),
        ("reader: openai\nllm: [local]\n", r"llm: Input should be a valid dictionary"),
        ("- k\n- 30\n", r"expected a mapping of setting to value, got list"),
        ("k: {text: 30\n", r"--config .*eval.yaml:\d+:\d+: not valid YAML"),
        (b"k: \xff\n", r"--config .*: not valid UTF-8"),
    ],
    ids=lambda v: v[:30] if isinstance(v, str) else None,
)
def test_a_bad_config_file_is_refused_naming_the_setting(tmp_path, text, match):
    path = tmp_path / "eval.yaml"
    path.write_bytes(text if isinstance(text, bytes) else text.encode())
    args = ["eval", "--data", str(SAMPLE), "--out", str(tmp_path / "run"), "--config", str(path)]
    if not (isinstance(text, str) and text.startswith("systems")):
        args += ["--systems", "bm25"]
    refused(args, match=match, code=2)
    assert not (tmp_path / "run").exists()


def test_an_unreadable_config_file_is_named(tmp_path):
    refused(
        evaluate(tmp_path, "--config", str(tmp_path / "nowhere.yaml")),
        match=r"--config .*nowhere.yaml: cannot read",
    )


def test_a_subprocess_that_cannot_start_is_named(tmp_path):
    path = params_file(tmp_path, "subprocess:bm25: {command: [/nonexistent/python]}\n")
    refused(
        evaluate(tmp_path, "--params", str(path), "--limit", "2", systems="subprocess:bm25"),
        match=r"subprocess:bm25: cannot start .*nonexistent",
    )


# ---------------------------------------------------------------- the run directory
def test_out_that_is_a_file_is_refused(tmp_path):
    (tmp_path / "run").write_text("not a directory")
    refused(evaluate(tmp_path), match=r"--out .*exists and is not a directory")


def test_out_inside_the_dataset_is_refused(tmp_path):
    data = tmp_path / "d"
    shutil.copytree(SAMPLE, data)
    for out in (data, data / "run"):
        refused(
            ["eval", "--data", str(data), "--systems", "bm25", "--out", str(out)], match=r"inside the dataset"
        )
    assert sorted(p.name for p in data.iterdir()) == sorted(p.name for p in SAMPLE.iterdir())


def test_a_run_with_other_options_is_not_resumed(tmp_path):
    worked(evaluate(tmp_path, "--limit", "2"))
    refused(
        evaluate(tmp_path, "--limit", "2", "--k", "5"), match=r"other settings \(k was 10, now 5\).*--force"
    )
    refused(evaluate(tmp_path, "--limit", "3"), match=r"limit was 2, now 3")
    worked(evaluate(tmp_path, "--limit", "2", "--k", "5", "--force"))


def test_an_unreadable_run_marker_is_not_resumed(tmp_path):
    worked(evaluate(tmp_path, "--limit", "2"))
    (tmp_path / "run/run.json").write_text("{torn")
    refused(evaluate(tmp_path, "--limit", "2"), match=r"run.json is unreadable.*--force")


def test_logs_without_a_run_marker_are_not_resumed(tmp_path):
    worked(evaluate(tmp_path, "--limit", "2"))
    (tmp_path / "run/run.json").unlink()
    refused(evaluate(tmp_path, "--limit", "2", "--k", "3"), match=r"run.json is missing.*--force")


def test_force_deletes_only_what_a_run_wrote(tmp_path):
    worked(evaluate(tmp_path, "--limit", "2"))
    keep = tmp_path / "run/notes.txt"
    keep.write_text("mine")
    (tmp_path / "run/photos").mkdir()
    worked(evaluate(tmp_path, "--limit", "2", "--k", "4", "--force"))
    assert keep.read_text() == "mine" and (tmp_path / "run/photos").is_dir()


def test_the_real_console_refuses_a_bad_option(tmp_path):
    refuses(
        [
            "keme",
            "eval",
            "--data",
            str(SAMPLE),
            "--systems",
            "bm25",
            "--out",
            str(tmp_path / "run"),
            "--k",
            "-5",
        ],
        match=r"--k: Input should be greater than or equal to 1",
        env={"COLUMNS": "400"},
    )
