"""Evaluation harness speed on a persona-year (issue #4).

Synthesizes `configs/year.yaml` (1 persona, 12 months), then runs every
non-dense baseline through the full harness (ingest, retrieve at depth 50,
metrics, reports), retrieval-only, in one process. Target: <= 30 s for all of
them together. The dense baseline's throughput is measured apart: embeddings
per second of MiniLM on the CPU over the year's messages.

    python bench/eval.py [--dense-sample 1500]
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
# this file is named eval.py: keep its folder off the path so `import eval` finds the harness package
sys.path[:] = [p for p in sys.path if Path(p or ".").resolve() != Path(__file__).resolve().parent]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--dense-sample", type=int, default=1500, help="messages embedded for the dense figure"
    )
    args = parser.parse_args()

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
