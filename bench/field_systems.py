"""The field's systems (mem0, mem0_raw, LangMem) on one LoCoMo conversation, dense beside them, in one run.

The conversation (`--sample`, else the one with the fewest messages) is cut out of the LoCoMo file, imported
(`keme import locomo`) and checked, then `keme eval`'s harness runs each system in turn on it, offline, with
the shipped SmolLM2 behind llama.cpp's server for mem0 and LangMem. Each system starts cold: the vector
cache on disk is off (KEME_EMBED_CACHE=off) and the shared MiniLM's in-process vectors are dropped before it,
so that no system embeds a text another one has just embedded.

Prints, per system: ingest seconds (ingest and flush of every session, as the harness times it) and its
ratio to dense's, the median retrieval in ms, the LLM calls, the replies its library could not read, the
retries, the memories stored, R-any@5, and the wall time of the system's whole run.

    python bench/field_systems.py --locomo FILE [--sample conv-30] [--systems dense,mem0_raw,mem0,langmem]
                                  [--params '{"mem0": {"max_tokens": 512}}'] [--keep DIR] [--json F]
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import os
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path[:] = [p for p in sys.path if Path(p or ".").resolve() != Path(__file__).resolve().parent]
sys.path.insert(0, str(ROOT))

SYSTEMS = "dense,mem0_raw,mem0,langmem"
COLUMNS = (
    ("ingest s", "ingest_seconds"),
    ("x dense", "ingest_vs_dense"),
    ("retrieve p50 ms", "retrieve_p50_ms"),
    ("LLM calls", "memory_llm_calls"),
    ("unparseable", "memory_llm_unparseable"),
    ("retries", "memory_llm_retries"),
    ("memories", "memories"),
    ("R-any@5", "recall_any@5"),
    ("wall s", "wall_seconds"),
)


def one_conversation(locomo: Path, sample: str | None, out: Path) -> str:
    """Write the chosen conversation (the smallest when `sample` is None) as a LoCoMo file; its sample id."""
    samples = json.loads(locomo.read_text())
    if sample is None:
        chosen = min(samples, key=lambda s: sum(len(v) for k, v in s["conversation"].items() if _turns(k, v)))
    else:
        chosen = next((s for s in samples if s.get("sample_id") == sample), None)
        if chosen is None:
            known = ", ".join(str(s.get("sample_id")) for s in samples)
            raise SystemExit(f"no sample {sample!r} in {locomo} (samples: {known})")
    out.write_text(json.dumps([chosen]))
    return chosen["sample_id"]


def _turns(key: str, value: object) -> bool:
    return key.startswith("session_") and not key.endswith("date_time") and isinstance(value, list)


def cold_each(timings: dict[str, float]):
    """The harness's systems runner, one system at a time, each with the shared MiniLM's vectors dropped
    first; records each system's wall time."""
    from baselines.dense import shared_minilm
    from eval.run import run_systems

    def runner(settings, replay, state) -> None:
        for name in settings.systems:
            shared_minilm().cache.clear()
            started = time.perf_counter()
            run_systems(dataclasses.replace(settings, systems=[name]), replay, state)
            timings[name] = time.perf_counter() - started

    return runner


def figures(summary: dict, timings: dict[str, float]) -> dict[str, dict]:
    rows = {}
    dense = summary["systems"].get("dense", {}).get("ingest_seconds")
    for name, metrics in summary["systems"].items():
        row = {key: metrics.get(key) for _, key in COLUMNS}
        row["ingest_vs_dense"] = round(metrics["ingest_seconds"] / dense, 2) if dense else None
        row["wall_seconds"] = round(timings.get(name, 0.0), 1)
        row["ingest_messages"] = metrics.get("ingest_messages")
        rows[name] = row
    return rows


def cell(key: str, value: object) -> str:
    """Seconds and milliseconds to one decimal, scores to three, counts whole."""
    if value is None:
        return ""
    if key == "recall_any@5":
        return f"{value:.3f}"
    if isinstance(value, float):
        return f"{value:.1f}" if key != "ingest_vs_dense" else f"{value:.2f}"
    return str(value)


def table(rows: dict[str, dict]) -> str:
    lines = ["| system | " + " | ".join(label for label, _ in COLUMNS) + " |"]
    lines.append("|---" * (len(COLUMNS) + 1) + "|")
    for name, row in rows.items():
        lines.append(f"| {name} | " + " | ".join(cell(key, row.get(key)) for _, key in COLUMNS) + " |")
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--locomo", required=True, help="the LoCoMo JSON file (locomo10.json)")
    parser.add_argument(
        "--sample", help="the conversation's sample_id (default: the one with fewest messages)"
    )
    parser.add_argument("--systems", default=SYSTEMS)
    parser.add_argument("--params", default="{}", help="per-system parameters as JSON, as keme eval --params")
    parser.add_argument("--keep", help="run into this folder (kept) instead of a temporary one")
    parser.add_argument("--json", help="write the figures here")
    args = parser.parse_args()

    os.environ["KEME_EMBED_CACHE"] = "off"  # before the embedder is built: every system computes its vectors
    from eval.importers.locomo import import_locomo
    from eval.local_model import LOCAL_MODEL
    from eval.run import Settings, resolve_systems, run
    from keme.validate import verified_dataset

    systems = resolve_systems(args.systems)
    with tempfile.TemporaryDirectory(prefix="keme-field-bench-") as scratch:
        work = Path(args.keep) if args.keep else Path(scratch)
        work.mkdir(parents=True, exist_ok=True)
        sample = one_conversation(Path(args.locomo), args.sample, work / "conversation.json")
        import_locomo(work / "conversation.json", work / "data", force=True)
        data = verified_dataset(work / "data")
        messages = sum(len(s.messages) for s in data.sessions)
        print(
            f"{sample}: {len(data.sessions)} sessions, {messages} messages, {len(data.qa)} questions",
            flush=True,
        )
        timings: dict[str, float] = {}
        load = os.getloadavg()[0]
        try:
            summary = run(
                Settings(
                    data=data, out=work / "run", systems=systems, params=json.loads(args.params), force=True
                ),
                systems=cold_each(timings),
            )
        finally:
            LOCAL_MODEL.stop()
        rows = figures(summary, timings)
    print(table(rows))
    end = os.getloadavg()[0]
    print(f"load average (1 min) at the start {load:.2f}, at the end {end:.2f}; {os.cpu_count()} cores")
    if args.json:
        Path(args.json).write_text(
            json.dumps({"sample": sample, "messages": messages, "systems": rows}, indent=2)
        )


if __name__ == "__main__":
    main()
