"""Evaluation harness speed on a persona-year (issue #4).

Synthesizes `configs/year.yaml` (1 persona, 12 months), then runs every
non-dense baseline through the full harness (ingest, retrieve at depth 50,
metrics, reports), retrieval-only, in one process. Target: <= 30 s for all of
them together. The dense baseline's throughput is measured apart: embeddings
per second of MiniLM on the CPU over the year's messages.

`--haystack` (issue #17) runs the six systems that matter at scale (bm25, memory_bank, vibebrowser,
factmem, dense, hybrid) on the persona-year buried in haystacks of growing size: the persona alone
(about 92k tokens) and haystack.tokens 500k, 1M and 1.5M (`--sizes`). For each size and system: ingest
seconds and messages/s, retrieval p50/p95, and the harness's own time per question. The harness time is
measured, not inferred: every call the harness makes around a retrieval (building the query, counting the
context's tokens, the durable log line) is timed apart from the system's `retrieve`; "whole run" adds
everything else the run does per question (metrics, reports, the leaderboard's bootstrap intervals), as
(run wall - ingest - retrieval) / questions. Target: the harness time per question <= 10 % of the
fastest system's retrieval. Dense and hybrid share the embedding cache (a fresh one per bench run), so
hybrid's ingest reads the vectors dense computed. `--repeats N` runs each system N times and prints
medians (sub-millisecond timings are noisy on a shared machine).

    python bench/eval.py [--dense-sample 1500]
    python bench/eval.py --haystack [--sizes 0,500000,1000000,1500000] [--systems bm25,...] [--repeats 1]
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
# this file is named eval.py: keep its folder off the path so `import eval` finds the harness package
sys.path[:] = [p for p in sys.path if Path(p or ".").resolve() != Path(__file__).resolve().parent]


SCALE_SYSTEMS = "bm25,memory_bank,vibebrowser,factmem,dense,hybrid"
SIZES = "0,500000,1000000,1500000"


def _median(values: list[float]) -> float:
    return sorted(values)[len(values) // 2]


def haystack(sizes: list[int], systems: list[str], repeats: int) -> None:
    """The six systems on the persona-year at each haystack size (0: no haystack)."""
    from eval import run as harness
    from eval.run import Settings, run
    from keme.cli import synthesize_dataset
    from keme.config import HaystackSpec
    from keme.synth.filler import persona_tokens
    from keme.synth.limits import load_config
    from keme.validate import verified_dataset

    work = Path(tempfile.mkdtemp(prefix="keme-bench-haystack-"))
    os.environ.setdefault("KEME_EMBED_CACHE", str(work / "embed-cache"))

    # time what the harness does around each retrieval, apart from the system's own call
    around: list[float] = []
    inner = harness.SystemRun._retrieve

    def timed(self, scope, question):
        started = time.perf_counter()
        inner(self, scope, question)
        around.append(time.perf_counter() - started)

    harness.SystemRun._retrieve = timed
    for size in sizes:
        cfg = load_config(ROOT / "configs/year.yaml")
        spec = HaystackSpec(tokens=size or None)
        cfg = cfg.model_copy(update={"haystack": spec, "name": f"year-{size}"})
        data_dir = work / f"data-{size}"
        started = time.perf_counter()
        synthesize_dataset(cfg, data_dir)
        synthesized = time.perf_counter() - started
        data = verified_dataset(data_dir)
        print(
            f"\n== haystack.tokens {size or 'none'}: {persona_tokens(data.sessions):,} tokens, "
            f"{len(data.sessions):,} sessions ({sum(s.filler for s in data.sessions):,} filler), "
            f"{sum(len(s.messages) for s in data.sessions):,} messages, {len(data.qa)} questions "
            f"(synthesized in {synthesized:.1f} s)"
        )
        rows = []
        for name in systems:
            runs = []
            for attempt in range(repeats):
                around.clear()
                out = work / f"run-{size}-{name}-{attempt}"
                started = time.perf_counter()
                summary = run(Settings(data=data, out=out, systems=[name]))
                wall = time.perf_counter() - started
                m = summary["systems"][name]
                records = [json.loads(line) for line in (out / name / "retrieve.jsonl").open()]
                retrieve_s = sum(r["seconds"] for r in records)
                questions = len(records)
                runs.append(
                    {
                        "ingest_s": m["ingest_seconds"],
                        "msg_per_s": m["ingest_messages_per_s"] or 0,
                        "p50": m["retrieve_p50_ms"],
                        "p95": m["retrieve_p95_ms"],
                        "mean": retrieve_s / questions * 1000,
                        "loop_ms": (sum(around) - retrieve_s) / questions * 1000,
                        "run_ms": (wall - m["ingest_seconds"] - retrieve_s) / questions * 1000,
                        "r5": m["recall_any@5"],
                    }
                )
            rows.append({"system": name} | {key: _median([r[key] for r in runs]) for key in runs[0]})
        print(
            f"{'system':<12} {'ingest s':>9} {'msg/s':>8} {'p50 ms':>8} {'p95 ms':>8} {'mean ms':>8} "
            f"{'harness ms/q':>12} {'whole run ms/q':>14} {'R-any@5':>8}"
        )
        for r in rows:
            print(
                f"{r['system']:<12} {r['ingest_s']:>9.1f} {r['msg_per_s']:>8,.0f} {r['p50']:>8.2f} "
                f"{r['p95']:>8.2f} {r['mean']:>8.2f} {r['loop_ms']:>12.3f} {r['run_ms']:>14.2f} "
                f"{r['r5']:>8.3f}"
            )
        fastest = min(rows, key=lambda r: r["p50"])
        worst = max(rows, key=lambda r: r["loop_ms"])
        ratio = worst["loop_ms"] / fastest["p50"]
        print(
            f"harness time per question: at most {worst['loop_ms']:.3f} ms ({worst['system']}) = "
            f"{ratio:.1%} of the fastest system's p50 retrieval "
            f"({fastest['system']}, {fastest['p50']:.2f} ms; "
            f"{worst['loop_ms'] / fastest['mean']:.1%} of its mean, {fastest['mean']:.2f} ms); "
            "target on the 1M-token persona: <= 10 %"
        )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--dense-sample", type=int, default=1500, help="messages embedded for the dense figure"
    )
    parser.add_argument("--haystack", action="store_true", help="the six systems at growing haystack sizes")
    parser.add_argument("--sizes", default=SIZES, help="haystack.tokens values, comma-separated (0: none)")
    parser.add_argument("--systems", default=SCALE_SYSTEMS, help="systems of --haystack")
    parser.add_argument("--repeats", type=int, default=1, help="--haystack runs per system; medians")
    args = parser.parse_args()
    if args.haystack:
        haystack([int(s) for s in args.sizes.split(",")], args.systems.split(","), args.repeats)
        return

    from eval.registry import REGISTRY
    from eval.run import Settings, run
    from keme.cli import synthesize_dataset
    from keme.synth.limits import load_config
    from keme.validate import verified_dataset

    work = Path(tempfile.mkdtemp(prefix="keme-bench-eval-"))
    started = time.perf_counter()
    manifest = synthesize_dataset(load_config(ROOT / "configs/year.yaml"), work / "year")
    print(
        f"dataset: {manifest.stats['sessions']} sessions, {manifest.stats['messages']} messages, "
        f"{manifest.stats['qa']} questions (synthesized in {time.perf_counter() - started:.1f} s)"
    )

    systems = [name for name, spec in REGISTRY.items() if not spec.dense]
    started = time.perf_counter()
    summary = run(Settings(data=verified_dataset(work / "year"), out=work / "run", systems=systems))
    total = time.perf_counter() - started
    print(f"\n{'system':<14} {'ingest s':>9} {'msg/s':>10} {'p50 ms':>8} {'p95 ms':>8} {'R-any@10':>9}")
    for name in systems:
        m = summary["systems"][name]
        print(
            f"{name:<14} {m['ingest_seconds']:>9.3f} {m['ingest_messages_per_s'] or 0:>10,.0f} "
            f"{m['retrieve_p50_ms']:>8.3f} {m['retrieve_p95_ms']:>8.3f} {m['recall_any@10']:>9.3f}"
        )
    print(f"\nall {len(systems)} non-dense baselines, whole harness: {total:.1f} s (target <= 30 s)")

    from baselines.dense import MiniLM
    from keme.dataset.io import read_jsonl
    from keme.models import Session

    texts = [m.content for s in read_jsonl(work / "year/sessions.jsonl", Session) for m in s.messages][
        : args.dense_sample
    ]
    started = time.perf_counter()
    embedder = MiniLM()
    loaded = time.perf_counter() - started
    started = time.perf_counter()
    embedder.embed(texts)
    seconds = time.perf_counter() - started
    print(
        f"dense (MiniLM, CPU): model load {loaded:.1f} s; {len(texts)} messages in {seconds:.1f} s = "
        f"{len(texts) / seconds:,.0f} embeddings/s"
    )


if __name__ == "__main__":
    main()
