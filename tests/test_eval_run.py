"""The evaluation run end to end: every baseline, reports, online replay, resume and its safety checks."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from baselines.bm25 import FlatBM25
from baselines.registry import REGISTRY, SystemSpec
from conftest import ROOT
from eval.metrics import KS
from eval.run import RunError, Settings, run

SAMPLE = ROOT / "data/sample"
TIMING = ("retrieve_p50_ms", "retrieve_p95_ms", "ingest_seconds", "ingest_messages_per_s", "peak_rss_mb")


@pytest.fixture(scope="module")
def everything(tmp_path_factory):
    out = tmp_path_factory.mktemp("run")
    return out, run(Settings(data=SAMPLE, out=out, systems=list(REGISTRY)))


@pytest.fixture
def temporary_system():
    added: list[str] = []

    def register(name: str, factory) -> str:
        REGISTRY[name] = SystemSpec(name, factory, "test system")
        added.append(name)
        return name

    yield register
    for name in added:
        REGISTRY.pop(name, None)


def test_every_registered_baseline_runs_on_the_sample(everything):
    _, summary = everything
    assert set(summary["systems"]) == set(REGISTRY)
    for metrics in summary["systems"].values():
        assert metrics["questions"] > 0 and "recall_any@10" in metrics


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
    run(Settings(data=SAMPLE, out=tmp_path, systems=[name], mode="online"))
    assert Spy.seen and all(newest <= now for newest, now in Spy.seen)


def _without_timing(summary: dict) -> dict:
    systems = {}
    for name, metrics in summary["systems"].items():
        systems[name] = {k: v for k, v in metrics.items() if k not in TIMING}
    return summary | {"systems": systems}


def test_a_killed_run_resumes_to_the_same_summary(tmp_path):
    cmd = [sys.executable, "-m", "keme.cli", "eval", "--data", str(SAMPLE), "--systems", "bm25,recency",
           "--out", str(tmp_path / "killed")]
    killed = subprocess.run(cmd, env=os.environ | {"KEME_EVAL_FAULT_AFTER": "40"}, capture_output=True)
    assert killed.returncode == -9
    records = (tmp_path / "killed/bm25/retrieve.jsonl").read_text().splitlines()
    assert 0 < len(records) < 64
    resumed = subprocess.run(cmd, capture_output=True, text=True)
    assert resumed.returncode == 0, resumed.stderr
    whole = run(Settings(data=SAMPLE, out=tmp_path / "whole", systems=["bm25", "recency"]))
    again = json.loads((tmp_path / "killed/summary.json").read_text())
    assert _without_timing(again) | {"dataset": ""} == _without_timing(json.loads(json.dumps(whole))) | {"dataset": ""}


class Forgetful(FlatBM25):
    """Saves fine, but loads nothing back: a broken store."""

    def save(self, scope, path: Path):
        path.mkdir(parents=True, exist_ok=True)
        (path / "marker").write_text("saved")

    def load(self, scope, path: Path):
        self.reset(scope)


def test_a_resumed_empty_store_fails_loudly(tmp_path, temporary_system):
    name = temporary_system("forgetful", lambda: Forgetful())
    run(Settings(data=SAMPLE, out=tmp_path, systems=[name]))
    log = tmp_path / name / "retrieve.jsonl"
    log.write_text(log.read_text().splitlines()[0] + "\n")
    with pytest.raises(RunError, match="empty"):
        run(Settings(data=SAMPLE, out=tmp_path, systems=[name]))


def test_a_run_directory_with_other_settings_is_refused(tmp_path):
    run(Settings(data=SAMPLE, out=tmp_path, systems=["recency"], limit=3))
    from keme.errors import KemeError

    with pytest.raises(KemeError, match="other settings"):
        run(Settings(data=SAMPLE, out=tmp_path, systems=["recency"], k=5, limit=3))


def test_cli_evaluates_all_systems_in_one_command(tmp_path):
    result = subprocess.run([sys.executable, "-m", "keme.cli", "eval", "--data", str(SAMPLE), "--systems", "all",
                             "--out", str(tmp_path), "--limit", "5"], capture_output=True, text=True)
    assert result.returncode == 0, result.stderr
    assert "oracle †" in result.stdout and "retrieval-only" in result.stdout
    assert (tmp_path / "leaderboard.png").exists()
