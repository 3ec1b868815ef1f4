"""The evaluation run end to end: every baseline, reports, online replay, resume and its safety checks."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import ROOT, sample_dataset

from baselines.bm25 import FlatBM25
from eval.metrics import KS
from eval.registry import REGISTRY, default_names
from eval.report import MEASURED
from eval.run import RunError, Settings, resolve_systems, run

SAMPLE = ROOT / "data/sample"


@pytest.fixture(scope="module")
def everything(tmp_path_factory):
    out = tmp_path_factory.mktemp("run")
    return out, run(Settings(data=sample_dataset(), out=out, systems=default_names()))


def test_every_registered_baseline_runs_on_the_sample(everything):
    _, summary = everything
    assert set(summary["systems"]) == set(default_names())  # the field's LLM systems: test_field_systems
    for name, metrics in summary["systems"].items():
        scored = "recall_any@10" if REGISTRY[name].query_based else "evidence_in_context"  # a context window
        assert metrics["questions"] > 0 and scored in metrics


def test_the_oracle_recalls_everything_and_is_flagged(everything):
    _, summary = everything
    oracle = summary["systems"]["oracle"]
    assert all(oracle[f"recall_any@{k}"] == 1.0 for k in KS)
    assert oracle["recall_all@50"] == 1.0 and oracle["publishable"] is False


def test_reports_are_written(everything):
    out, summary = everything
    for name in ("summary.json", "leaderboard.csv", "leaderboard.md", "leaderboard.png", "results.jsonl"):
        assert (out / name).stat().st_size > 0
    assert json.loads((out / "summary.json").read_text())["systems"].keys() == summary["systems"].keys()
    assert "oracle: unpublishable" in (out / "leaderboard.md").read_text()


def test_a_run_without_reader_says_it_is_retrieval_only(everything):
    _, summary = everything
    assert summary["retrieval_only"] is True and "retrieval-only" in summary["note"]
    assert "accuracy" not in summary["systems"]["bm25"]


def test_breakdowns_by_type_language_and_hops(everything):
    _, summary = everything
    bm25 = summary["systems"]["bm25"]
    assert {"single_hop", "abstention"} <= set(bm25["by_type"])
    assert set(bm25["by_language"]) == {"en", "zh"}
    assert "1" in bm25["by_hops"] and "2" in bm25["by_hops"]


def test_efficiency_figures_are_reported(everything):
    _, summary = everything
    bm25 = summary["systems"]["bm25"]
    assert bm25["ingest_messages_per_s"] > 0 and bm25["retrieve_p95_ms"] > 0
    assert bm25["storage_bytes"] > 0 and bm25["peak_rss_mb"] > 0 and bm25["context_tokens_mean"] > 0


def test_every_question_missed_in_a_retrieval_run_has_a_retrieval_failure(everything):
    out, summary = everything
    rows = [json.loads(line) for line in (out / "results.jsonl").read_text().splitlines()]
    bm25 = [r for r in rows if r["system"] == "bm25"]
    missed = [r for r in bm25 if r["gold_messages"] and r["recall_all@10"] < 1]
    assert missed and all(r["failure"] in ("stale", "not_retrieved", "ranked_out") for r in missed)
    assert summary["systems"]["bm25"]["failures"] == {
        c: sum(1 for r in bm25 if r["failure"] == c) for c in summary["systems"]["bm25"]["failures"]
    }
    assert sum(summary["systems"]["oracle"]["failures"].values()) == 0


def test_the_failure_analysis_is_in_the_report_and_its_chart(everything):
    out, _ = everything
    assert "### Why questions were got wrong" in (out / "leaderboard.md").read_text()
    assert (out / "failures.png").stat().st_size > 0


class Spy(FlatBM25):
    """Records, at every retrieval, the newest message it holds."""

    seen: list[tuple[str, str]] = []

    def retrieve(self, scope, query, k):
        newest = max(d.timestamp for d in self.scopes.get(scope))
        Spy.seen.append((newest.isoformat(), query.now.isoformat()))
        return super().retrieve(scope, query, k)


def test_online_replay_never_shows_the_future(tmp_path, temporary_system):
    name = temporary_system("spy", lambda: Spy())
    Spy.seen.clear()
    run(Settings(data=sample_dataset(), out=tmp_path, systems=[name], mode="online"))
    assert Spy.seen and all(newest <= now for newest, now in Spy.seen)


def _without_timing(summary: dict) -> dict:
    systems = {}
    for name, metrics in summary["systems"].items():
        systems[name] = {k: v for k, v in metrics.items() if k not in MEASURED}
    return summary | {"systems": systems}


def test_a_killed_run_resumes_to_the_same_summary(tmp_path):
    cmd = [
        sys.executable,
        "-m",
        "keme.cli",
        "eval",
        "--data",
        str(SAMPLE),
        "--systems",
        "bm25,recency",
        "--out",
        str(tmp_path / "killed"),
    ]
    killed = subprocess.run(cmd, env=os.environ | {"KEME_EVAL_FAULT_AFTER": "40"}, capture_output=True)
    assert killed.returncode == -9
    records = (tmp_path / "killed/bm25/retrieve.jsonl").read_text().splitlines()
    assert 0 < len(records) < 64
    resumed = subprocess.run(cmd, capture_output=True, text=True)
    assert resumed.returncode == 0, resumed.stderr
    whole = run(Settings(data=sample_dataset(), out=tmp_path / "whole", systems=["bm25", "recency"]))
    again = json.loads((tmp_path / "killed/summary.json").read_text())
    assert _without_timing(again) | {"dataset": ""} == _without_timing(json.loads(json.dumps(whole))) | {
        "dataset": ""
    }


class Forgetful(FlatBM25):
    """Saves fine, but loads nothing back: a broken store."""

    def save(self, scope, path: Path):
        path.mkdir(parents=True, exist_ok=True)
        (path / "marker").write_text("saved")

    def load(self, scope, path: Path):
        self.reset(scope)


def test_a_resumed_empty_store_fails_loudly(tmp_path, temporary_system):
    name = temporary_system("forgetful", lambda: Forgetful())
    run(Settings(data=sample_dataset(), out=tmp_path, systems=[name]))
    log = tmp_path / name / "retrieve.jsonl"
    log.write_text(log.read_text().splitlines()[0] + "\n")
    with pytest.raises(RunError, match="empty"):
        run(Settings(data=sample_dataset(), out=tmp_path, systems=[name]))


def test_a_run_directory_with_other_settings_is_refused(tmp_path):
    run(Settings(data=sample_dataset(), out=tmp_path, systems=["recency"], limit=3))
    from keme.errors import KemeError

    with pytest.raises(KemeError, match="other settings"):
        run(Settings(data=sample_dataset(), out=tmp_path, systems=["recency"], k=5, limit=3))


def test_cli_evaluates_all_systems_in_one_command(tmp_path):
    result = subprocess.run(
        [
            sys.executable,
            "-m",
            "keme.cli",
            "eval",
            "--data",
            str(SAMPLE),
            "--systems",
            "all",
            "--out",
            str(tmp_path),
            "--limit",
            "5",
        ],
        capture_output=True,
        text=True,
    )
    assert result.returncode == 0, result.stderr
    assert "oracle †" in result.stdout and "retrieval-only" in result.stdout
    assert (tmp_path / "leaderboard.png").exists()


# ---------------------------------------------------------------- logs and resume
def test_a_log_ignores_an_unterminated_last_line(tmp_path):
    from eval.run import Log

    path = tmp_path / "retrieve.jsonl"
    # complete JSON, but its newline never came
    path.write_text('{"question_id": "q1"}\n{"question_id": "q2"}')
    assert Log(path).records() == [{"question_id": "q1"}]


def test_an_append_after_a_torn_line_starts_on_a_line_of_its_own(tmp_path):
    from eval.run import Log

    path = tmp_path / "retrieve.jsonl"
    path.write_text('{"question_id": "q1"}\n{"question_id": "q2", "hi')
    log = Log(path)
    log.append({"question_id": "q2"})
    assert path.read_text() == '{"question_id": "q1"}\n{"question_id":"q2"}\n'
    assert [r["question_id"] for r in log.records()] == ["q1", "q2"]


def test_a_corrupt_line_before_the_last_names_file_and_line(tmp_path):
    from eval.run import Log

    path = tmp_path / "judge.jsonl"
    path.write_text('{"question_id": "q1"}\n{oops\n{"question_id": "q3"}\n')
    with pytest.raises(RunError, match=r"judge\.jsonl:2: not a JSON record"):
        Log(path).records()


def test_a_record_without_a_required_key_is_an_error(tmp_path):
    from eval.run import Log

    path = tmp_path / "ingest.jsonl"
    path.write_text('{"persona_id": "p01"}\n')
    with pytest.raises(RunError, match=r"ingest\.jsonl:1: record lacks messages"):
        Log(path, ("persona_id", "messages")).records()


def _cut(log: Path, keep: int) -> None:
    """Leave the first `keep` records, as a kill after them would (plus a torn line)."""
    lines = log.read_text().splitlines(keepends=True)
    log.write_text("".join(lines[:keep]) + lines[keep][:20])


@pytest.mark.parametrize("mode", ["offline", "online"])
def test_memory_bank_resumed_mid_retrieval_retrieves_what_an_uninterrupted_run_did(tmp_path, mode):
    """Injection changes hits and lastUsedAt; the resume replays the logged retrievals to rebuild them."""
    whole = run(
        Settings(data=sample_dataset(), out=tmp_path / "whole", systems=["memory_bank"], mode=mode, limit=8)
    )
    settings = Settings(
        data=sample_dataset(), out=tmp_path / "cut", systems=["memory_bank"], mode=mode, limit=8
    )
    run(settings)
    _cut(tmp_path / "cut/memory_bank/retrieve.jsonl", 5)
    resumed = run(settings)
    hits = [
        json.loads(line)["hits"]
        for line in (tmp_path / "whole/memory_bank/retrieve.jsonl").read_text().splitlines()
    ]
    again = [
        json.loads(line)["hits"]
        for line in (tmp_path / "cut/memory_bank/retrieve.jsonl").read_text().splitlines()
    ]
    assert again == hits
    assert _without_timing(resumed) | {"dataset": ""} == _without_timing(whole) | {"dataset": ""}


class Counting(FlatBM25):
    """Counts its retrievals, replays included."""

    calls = 0

    def retrieve(self, scope, query, k):
        Counting.calls += 1
        return super().retrieve(scope, query, k)


def test_a_persona_whose_questions_are_all_logged_is_not_replayed(tmp_path, temporary_system):
    name = temporary_system("counting", lambda: Counting())
    settings = Settings(data=sample_dataset(), out=tmp_path, systems=[name], limit=3)
    run(settings)
    log = tmp_path / name / "retrieve.jsonl"
    log.write_text("".join(log.read_text().splitlines(keepends=True)[:4]))  # p01 done, p02 one of three
    Counting.calls = 0
    run(settings)
    assert Counting.calls == 3  # p02: one replayed, two new; p01 untouched


def test_a_saved_state_is_put_in_place_whole(tmp_path):
    from eval.registry import REGISTRY
    from eval.run import SystemRun

    class Half(FlatBM25):
        def save(self, scope, path: Path):
            path.mkdir(parents=True, exist_ok=True)
            (path / "part").write_text("1")
            raise RuntimeError("killed while saving")

        def load(self, scope, path: Path):
            raise AssertionError("a half-written state must never be loaded")

    state = tmp_path / "state" / "p01"
    system_run = SystemRun(
        REGISTRY["bm25"], Half(), Settings(data=sample_dataset(), out=tmp_path, systems=["bm25"]), tmp_path
    )
    with pytest.raises(RuntimeError):
        system_run._save_state("p01", state)
    assert not state.exists()


def test_all_leaves_out_the_systems_whose_extra_is_not_installed(monkeypatch):
    """A core install has no embeddings: `--systems all` runs what can run and names what it left out."""
    import eval.systems
    from eval.run import unavailable_defaults

    monkeypatch.setattr(eval.systems, "_present", lambda module: module not in ("sentence_transformers",))
    names = resolve_systems("all")
    assert "bm25" in names and "dense" not in names and "hybrid" not in names
    assert unavailable_defaults()["dense"] == ("embed",)
