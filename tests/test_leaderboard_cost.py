"""The leaderboard's cost columns: what a memory system's own LLM use cost (mem0, LangMem), per run."""

from __future__ import annotations

import json

from eval.report import leaderboard_rows, summarize


def system_dir(tmp_path, name: str, ingest_usage: dict, retrieve_usage: dict, answer_usage: dict):
    folder = tmp_path / name
    folder.mkdir()
    ingest = {"persona_id": "p01", "sessions": 4, "messages": 40, "seconds": 20.0, "usage": ingest_usage}
    (folder / "ingest.jsonl").write_text(json.dumps(ingest) + "\n")
    (folder / "retrieve.jsonl").write_text(json.dumps({"question_id": "q1", "usage": retrieve_usage}) + "\n")
    (folder / "answer.jsonl").write_text(json.dumps({"question_id": "q1", "usage": answer_usage}) + "\n")
    return folder


ROW = {
    "question_id": "q1",
    "type": "single_hop",
    "language": "en",
    "hops": 1,
    "gold_messages": 1,
    "retrieve_ms": 2.0,
    "context_tokens": 100,
    "recall_any@5": 1.0,
}


def test_the_memory_systems_cost_excludes_the_readers(tmp_path):
    folder = system_dir(
        tmp_path,
        "mem0",
        {"llm_calls": 4, "prompt_tokens": 1000, "completion_tokens": 100},
        {"llm_calls": 1, "prompt_tokens": 50, "completion_tokens": 5},
        {"llm_calls": 1, "prompt_tokens": 700, "completion_tokens": 20},  # the reader answering
    )
    summary = summarize(folder, [ROW])
    assert (summary["memory_llm_calls"], summary["memory_llm_tokens"]) == (5, 1155)
    assert summary["usage"]["llm_calls"] == 6  # everything the run spent, the reader's call included
    assert summary["ingest_s_per_session"] == 5.0


def _summary(calls: dict[str, int]) -> dict:
    systems = {
        name: {
            "recall_any@5": 0.5,
            "memory_llm_calls": n,
            "memory_llm_tokens": 10 * n,
            "ingest_s_per_session": 1.0,
        }
        for name, n in calls.items()
    }
    return {"systems": systems}


def test_the_cost_columns_appear_when_a_system_calls_an_llm():
    rows = {r["system"]: r for r in leaderboard_rows(_summary({"mem0": 5, "bm25": 0}))}
    assert (rows["mem0"]["LLM calls"], rows["mem0"]["LLM tok"]) == (5, 50)
    assert (rows["bm25"]["LLM calls"], rows["bm25"]["s/session"]) == (0, 1.0)


def test_without_an_llm_system_the_cost_columns_stay_out():
    rows = leaderboard_rows(_summary({"bm25": 0, "dense": 0}))
    assert all("LLM calls" not in r and "s/session" not in r for r in rows)
