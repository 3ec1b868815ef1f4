"""Synthesis speed and memory for one persona over 1, 3, 6 and 12 months, or buried in a haystack.

Each size runs in a fresh subprocess pinned to one core, so wall time and peak
RSS belong to that size alone. Targets: a persona-year with >= 300 sessions
and >= 5,000 messages in <= 5 s wall and <= 500 MB peak RSS (issue #2); its QA
synthesis (>= 300 items, verified) in <= 5 s (issue #3).

`--haystack` times the persona-year (configs/year.yaml) alone and with haystack.tokens at 500k, 1M and
1.5M (issue #17: a 1M-token persona in <= 30 s and <= 2 GB, linear in size): the trajectory with its
filler, then the whole `keme synth` (QA stage and the written dataset included), in one process each.

    python bench/synth.py [--repeat 3] [--haystack]
"""

from __future__ import annotations

import sys
from pathlib import Path

# bench/eval.py would shadow the `eval` package: keep this folder off the import path
sys.path[:] = [p for p in sys.path if Path(p or ".").resolve() != Path(__file__).resolve().parent]

import argparse
import json
import os
import resource
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def child(months: int, write_dir: str | None) -> None:
    os.sched_setaffinity(0, {sorted(os.sched_getaffinity(0))[0]})
    from keme.cli import synthesize_dataset
    from keme.synth.limits import load_config
    from keme.synth.pipeline import synthesize_persona
    from keme.text import resources

    cfg = load_config(ROOT / "configs/year.yaml")
    cfg = cfg.model_copy(update={"personas": [cfg.personas[0].model_copy(update={"months": months})]})
    resources.get(cfg.personas[0].language)  # resource loading is a one-off per process, timed apart
    started = time.perf_counter()
    if write_dir:
        manifest = synthesize_dataset(cfg, Path(write_dir), force=True)
        stats = manifest.stats
        qa_seconds = None
    else:
        from keme.qa.build import QAReport, build_items
        from keme.qa.facts import world_of

        traj = synthesize_persona(0, cfg)
        seconds = time.perf_counter() - started
        qa_started = time.perf_counter()
        world = world_of(traj.view())
        items = build_items(world, cfg.qa, cfg.seed, QAReport())
        qa_seconds = time.perf_counter() - qa_started
        stats = {
            "sessions": len(traj.sessions),
            "messages": sum(len(s.messages) for s in traj.sessions),
            "attribute_updates": traj.persona.update_count(),
            "qa": len(items),
        }
    if qa_seconds is None:
        seconds = time.perf_counter() - started
    peak_mb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(
        json.dumps(
            {
                "months": months,
                "seconds": seconds,
                "qa_seconds": qa_seconds,
                "peak_rss_mb": peak_mb,
                **{k: stats.get(k) for k in ("sessions", "messages", "attribute_updates", "qa")},
            }
        )
    )


HAYSTACK_SIZES = (None, 500_000, 1_000_000, 1_500_000)


def child_haystack(tokens: int | None, write_dir: str) -> None:
    """One persona-year at `tokens` (None: no filler): the trajectory and its filler, then `keme synth`."""
    os.sched_setaffinity(0, {sorted(os.sched_getaffinity(0))[0]})
    from keme.cli import synthesize_dataset
    from keme.config import HaystackSpec
    from keme.synth.filler import persona_tokens
    from keme.synth.limits import load_config
    from keme.synth.pipeline import synthesize_persona
    from keme.text import resources
    from keme.text.filler import load_filler

    cfg = load_config(ROOT / "configs/year.yaml")
    cfg = cfg.model_copy(update={"haystack": HaystackSpec(tokens=tokens)})
    resources.get(cfg.personas[0].language)  # resource loading is a one-off per process, timed apart
    load_filler(cfg.personas[0].language)
    started = time.perf_counter()
    traj = synthesize_persona(0, cfg)
    synth_s = time.perf_counter() - started
    filler = [s for s in traj.sessions if s.filler]
    started = time.perf_counter()
    synthesize_dataset(cfg, Path(write_dir), force=True)
    full_s = time.perf_counter() - started
    print(
        json.dumps(
            {
                "tokens": persona_tokens(traj.sessions),
                "filler_tokens": persona_tokens(filler),
                "sessions": len(traj.sessions),
                "filler_sessions": len(filler),
                "messages": sum(len(s.messages) for s in traj.sessions),
                "synth_s": synth_s,
                "keme_synth_s": full_s,
                "peak_rss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
                "bytes": sum(f.stat().st_size for f in Path(write_dir).iterdir() if f.is_file()),
            }
        )
    )


def haystack_table(repeat: int) -> None:
    print(
        f"{'target':>9} {'tokens':>9} {'filler':>9} {'sessions':>8} {'messages':>8} {'synth s':>7} "
        f"{'keme synth s':>12} {'s/100k tok':>10} {'peak MB':>8} {'MB on disk':>10}"
    )
    for tokens in HAYSTACK_SIZES:
        runs = []
        for _ in range(repeat):
            cmd = [
                sys.executable,
                __file__,
                "--child-haystack",
                str(tokens or 0),
                "--dir",
                "/tmp/keme-bench-hay",
            ]
            out = subprocess.run(cmd, check=True, capture_output=True, text=True).stdout
            runs.append(json.loads(out.strip().splitlines()[-1]))
        best = min(runs, key=lambda r: r["keme_synth_s"])
        label = f"{tokens // 1000}k" if tokens else "none"
        print(
            f"{label:>9} {best['tokens']:>9,} {best['filler_tokens']:>9,} "
            f"{best['sessions']:>8} {best['messages']:>8} {min(r['synth_s'] for r in runs):>7.2f} "
            f"{best['keme_synth_s']:>12.2f} {best['keme_synth_s'] / best['tokens'] * 1e5:>10.2f} "
            f"{max(r['peak_rss_mb'] for r in runs):>8.0f} {best['bytes'] / 1e6:>10.1f}"
        )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=3, help="runs per size; the best wall time is reported")
    parser.add_argument(
        "--write",
        action="store_true",
        help="time the full `keme synth` instead (checkpoints, files, QA stage included)",
    )
    parser.add_argument("--haystack", action="store_true", help="a persona-year at 500k, 1M and 1.5M tokens")
    parser.add_argument("--child", type=int, help=argparse.SUPPRESS)
    parser.add_argument("--child-haystack", type=int, help=argparse.SUPPRESS)
    parser.add_argument("--dir", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        child(args.child, args.dir)
        return
    if args.child_haystack is not None:
        child_haystack(args.child_haystack or None, args.dir)
        return
    if args.haystack:
        haystack_table(args.repeat)
        return
    print(
        f"{'months':>6} {'sessions':>8} {'messages':>8} {'updates':>7} {'synth s':>7} {'s/month':>7} "
        f"{'QA':>5} {'QA s':>6} {'peak MB':>8}"
    )
    for months in (1, 3, 6, 12):
        runs = []
        for _ in range(args.repeat):
            cmd = [sys.executable, __file__, "--child", str(months)]
            if args.write:
                cmd += ["--dir", f"/tmp/keme-bench-synth-{months}"]
            out = subprocess.run(cmd, check=True, capture_output=True, text=True).stdout
            runs.append(json.loads(out.strip().splitlines()[-1]))
        best = min(runs, key=lambda r: r["seconds"])
        qa_s = min((r["qa_seconds"] for r in runs if r["qa_seconds"] is not None), default=None)
        qa_col = f"{best['qa']:>5} {qa_s:>6.2f}" if qa_s is not None else f"{'-':>5} {'-':>6}"
        print(
            f"{months:>6} {best['sessions']:>8} {best['messages']:>8} {best['attribute_updates']:>7} "
            f"{best['seconds']:>7.2f} {best['seconds'] / months:>7.3f} {qa_col} "
            f"{max(r['peak_rss_mb'] for r in runs):>8.0f}"
        )


if __name__ == "__main__":
    main()
