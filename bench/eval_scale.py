"""Evaluation at haystack scale: six systems on one persona-year buried in a 1M-token haystack (issue #17).

Synthesizes configs/year.yaml with `haystack.tokens` (default 1,000,000), then runs bm25, memory_bank,
vibebrowser, factmem, dense and hybrid through the whole harness, retrieval only, one run each, and
prints per system: ingest seconds and messages/s, retrieval p50/p95, and the harness's own time per
question. The harness time is measured, not inferred: every call the harness makes around a retrieval
(building the query, rendering the context, counting its tokens, the durable log line) is timed apart
from the system's `retrieve`; "whole run" adds everything else the run does per question (metrics,
reports, the leaderboard's bootstrap intervals), as (run wall - ingest - retrieval) / questions.
Target: the per-question harness time <= 10 % of the fastest system's p50 retrieval. With --repeats N each
system runs N times and each figure is the median of its N runs (sub-millisecond timings are noisy on a
shared machine).

    python bench/eval_scale.py [--tokens 1000000] [--systems bm25,...] [--data DIR] [--repeats 1]
"""

from __future__ import annotations

import sys
from pathlib import Path

# bench/eval.py would shadow the `eval` package: keep this folder off the import path
sys.path[:] = [p for p in sys.path if Path(p or ".").resolve() != Path(__file__).resolve().parent]

import argparse
import json
import tempfile
import time

ROOT = Path(__file__).resolve().parents[1]
SYSTEMS = "bm25,memory_bank,vibebrowser,factmem,dense,hybrid"


def _median(values: list[float]) -> float:
    return sorted(values)[len(values) // 2]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tokens", type=int, default=1_000_000, help="haystack.tokens of the persona-year")
    parser.add_argument("--systems", default=SYSTEMS)
    parser.add_argument("--data", type=Path, help="use this dataset instead of synthesizing one")
    parser.add_argument("--repeats", type=int, default=1, help="runs per system; figures are medians")
    args = parser.parse_args()

    from eval import run as harness
    from eval.run import Settings, run
    from keme.cli import synthesize_dataset
    from keme.config import HaystackSpec
    from keme.synth.filler import persona_tokens
    from keme.synth.limits import load_config
    from keme.validate import verified_dataset

    work = Path(tempfile.mkdtemp(prefix="keme-bench-scale-"))
    data_dir = args.data
    if data_dir is None:
        cfg = load_config(ROOT / "configs/year.yaml")
        cfg = cfg.model_copy(update={"haystack": HaystackSpec(tokens=args.tokens), "name": "year-scale"})
        data_dir = work / "data"
        started = time.perf_counter()
        synthesize_dataset(cfg, data_dir)
        print(f"synthesized in {time.perf_counter() - started:.1f} s")
    data = verified_dataset(data_dir)
    print(
        f"dataset: {persona_tokens(data.sessions):,} tokens, {len(data.sessions):,} sessions "
        f"({sum(s.filler for s in data.sessions):,} filler), "
        f"{sum(len(s.messages) for s in data.sessions):,} messages, {len(data.qa)} questions"
    )

    # time what the harness does around each retrieval, apart from the system's own call
    around: list[float] = []
    inner = harness.SystemRun._retrieve

    def timed(self, scope, question):
        started = time.perf_counter()
        inner(self, scope, question)
        around.append(time.perf_counter() - started)

    harness.SystemRun._retrieve = timed
    rows = []
    for name in args.systems.split(","):
        runs = []
        for attempt in range(args.repeats):
            around.clear()
            out = work / f"run-{name}-{attempt}"
            started = time.perf_counter()
            summary = run(Settings(data=data, out=out, systems=[name]))
            wall = time.perf_counter() - started
            m = summary["systems"][name]
            records = [json.loads(line) for line in (out / name / "retrieve.jsonl").open()]
            retrieve_s = sum(r["seconds"] for r in records)
            questions = len(records)
            runs.append(
                {
                    "system": name,
                    "ingest_s": m["ingest_seconds"],
                    "msg_per_s": m["ingest_messages_per_s"] or 0,
                    "p50": m["retrieve_p50_ms"],
                    "p95": m["retrieve_p95_ms"],
                    "mean": retrieve_s / questions * 1000,
                    "loop_ms": (sum(around) - retrieve_s) / questions * 1000,
                    "run_ms": (wall - m["ingest_seconds"] - retrieve_s) / questions * 1000,
                    "wall": wall,
                    "r5": m["recall_any@5"],
                }
            )
        rows.append({key: _median([r[key] for r in runs]) if key != "system" else name for key in runs[0]})
    print(
        f"\n{'system':<12} {'ingest s':>9} {'msg/s':>8} {'p50 ms':>8} {'p95 ms':>8} {'harness ms/q':>12} "
        f"{'whole run ms/q':>14} {'run s':>7} {'R-any@5':>8}"
    )
    for r in rows:
        print(
            f"{r['system']:<12} {r['ingest_s']:>9.1f} {r['msg_per_s']:>8,.0f} "
            f"{r['p50']:>8.2f} {r['p95']:>8.2f} "
            f"{r['loop_ms']:>12.3f} {r['run_ms']:>14.2f} {r['wall']:>7.1f} {r['r5']:>8.3f}"
        )
    fastest = min(rows, key=lambda r: r["p50"])
    worst = max(r["loop_ms"] for r in rows)
    print(
        f"\nharness time per question: at most {worst:.3f} ms = {worst / fastest['p50']:.1%} of the fastest "
        f"system's p50 retrieval ({fastest['system']}, {fastest['p50']:.2f} ms; "
        f"{worst / fastest['mean']:.1%} of its mean, {fastest['mean']:.2f} ms); target <= 10 %"
    )


if __name__ == "__main__":
    main()
