"""Per-question rows score evidence by groups; context-window systems by whether their context holds it."""

from __future__ import annotations

import json
from datetime import datetime
from pathlib import Path

import pytest

from eval.report import NOT_A_RANKING, leaderboard_rows, question_results
from keme.models import AnswerSpec, QAItem
from keme.models.proof import ValueProof


def item(evidence: list[str], also: dict[str, list[str]] | None = None, kind: str = "number") -> QAItem:
    return QAItem(
        id="p01-q0001",
        persona_id="p01",
        question="What did my Spotify payment on April 4 come to?",
        answer="$21.49",
        spec=AnswerSpec(kind=kind, value="21.49"),
        type="single_hop",
        subtype="bill.amount",
        evidence=evidence,
        also_supported_by=also or {},
        evidence_sessions=sorted({m.rsplit("-m", 1)[0] for m in evidence}),
        asked_at=datetime(2026, 4, 23, 7, 30),
        hops=1,
        difficulty="easy",
        language="en",
        node="p01-c01-e06",
        proof=ValueProof(op="value", quotes=[]),
    )


SESSION_OF = {
    "p01-s0001-m01": "p01-s0001",
    "p01-s0004-m03": "p01-s0004",
    "p01-s0009-m02": "p01-s0009",
    "p01-s0009-m05": "p01-s0009",
}


def write_run(directory: Path, hits: list[list[str]], query_based: bool = True, **record) -> Path:
    """A system's directory as the harness leaves it: one retrieve record, and system.json."""
    directory.mkdir()
    line = {
        "question_id": "p01-q0001",
        "persona_id": "p01",
        "seconds": 0.001,
        "context_tokens": 40,
        "hits": [{"m": m, "s": sorted({SESSION_OF[i] for i in m}), "score": 1.0} for m in hits],
    } | record
    (directory / "retrieve.jsonl").write_text(json.dumps(line) + "\n")
    (directory / "system.json").write_text(json.dumps({"name": "x", "query_based": query_based}))
    return directory


def test_a_hit_on_a_restatement_counts_as_a_hit_on_the_evidence(tmp_path):
    question = item(["p01-s0001-m01"], {"p01-s0001-m01": ["p01-s0009-m05"]})
    run = write_run(tmp_path / "bm25", [["p01-s0004-m03"], ["p01-s0009-m05"]])
    (row,) = question_results(run, {question.id: question}, SESSION_OF)
    assert (row["recall_any@1"], row["recall_any@3"], row["mrr"]) == (0.0, 1.0, 0.5)
    assert row["session_recall_any@3"] == 1.0  # the restatement's session is a session of the group


def test_without_alternatives_the_restatement_is_a_miss(tmp_path):
    question = item(["p01-s0001-m01"])
    run = write_run(tmp_path / "bm25", [["p01-s0004-m03"], ["p01-s0009-m05"]])
    (row,) = question_results(run, {question.id: question}, SESSION_OF)
    assert (row["recall_any@50"], row["session_recall_any@50"]) == (0.0, 0.0)


def test_a_context_window_system_gets_evidence_in_context_and_no_rank_metric(tmp_path):
    question = item(["p01-s0001-m01", "p01-s0004-m03"], {"p01-s0001-m01": ["p01-s0009-m05"]})
    context = ["p01-s0009-m02", "p01-s0009-m05", "p01-s0004-m03"]
    run = write_run(tmp_path / "full_context", [["p01-s0004-m03"]], query_based=False, context_m=context)
    (row,) = question_results(run, {question.id: question}, SESSION_OF)
    assert row["evidence_in_context"] == 1.0
    assert not any(key.startswith(("recall", "ndcg", "mrr", "locomo", "session_")) for key in row)


def test_evidence_in_context_needs_every_group(tmp_path):
    question = item(["p01-s0001-m01", "p01-s0004-m03"])
    run = write_run(tmp_path / "recency", [["p01-s0004-m03", "p01-s0009-m02"]], query_based=False)
    (row,) = question_results(run, {question.id: question}, SESSION_OF)  # no context_m: the hits
    assert row["evidence_in_context"] == 0.0


def test_a_question_without_evidence_has_no_retrieval_score(tmp_path):
    question = item([], kind="abstain")
    run = write_run(tmp_path / "recency", [["p01-s0004-m03"]], query_based=False)
    (row,) = question_results(run, {question.id: question}, SESSION_OF)
    assert "evidence_in_context" not in row and "recall_any@1" not in row


def test_the_leaderboard_shows_a_dash_for_a_context_windows_rank_metrics():
    summary = {
        "systems": {
            "full_context": {"query_based": False, "evidence_in_context": 1.0, "publishable": True},
            "bm25": {"query_based": True, "recall_any@5": 0.6, "mrr": 0.4, "publishable": True},
        }
    }
    bm25, full = leaderboard_rows(summary)
    assert (full["system"], full["R-any@5"], full["MRR"], full["in ctx"]) == (
        "full_context",
        NOT_A_RANKING,
        NOT_A_RANKING,
        1.0,
    )
    assert bm25["R-any@5"] == pytest.approx(0.6) and "in ctx" not in bm25
