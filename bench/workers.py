"""Distributed runs (Ray): synth and eval wall time with --workers 1 vs --workers 2, and the bytes shipped.

Each run is a fresh subprocess, as a `keme` command would be: --workers 1 runs in that process without Ray;
--workers 2 starts a local Ray with 2 CPUs (its start-up is timed apart and included in the wall time).
Every run's output is checked against the --workers 1 run's (the dataset byte for byte; the eval summary
and hits with the measured figures aside). Sizes are the pickled bytes between driver and workers
(keme.cluster.SHIPPED): objects put once in the object store, other task arguments, task results.

    python bench/workers.py [--personas 4] [--months 6] [--repeat 2]
"""

from __future__ import annotations

import sys
from pathlib import Path

# bench/eval.py would shadow the `eval` package: keep this folder off the import path
sys.path[:] = [p for p in sys.path if Path(p or ".").resolve() != Path(__file__).resolve().parent]

import argparse
import hashlib
import json
import os
import subprocess
import tempfile
import time

ROOT = Path(__file__).resolve().parents[1]
SYSTEMS = ["bm25", "memory_bank", "vibebrowser", "factmem", "recency", "full_context", "oracle"]


def config_text(personas: int, months: int) -> str:
    lines = ["name: bench-workers", "seed: 13", "personas:"]
    for i in range(personas):
        language = ("en", "zh")[i % 2]
        lines.append(f"  - {{language: {language}, start: 2026-0{1 + i % 3}-01, months: {months}}}")
    return "\n".join(lines) + "\n"


def child(stage: str, workers: int, source: str, out: str) -> None:
    import keme.cluster as cluster

    cluster.SHIPPED = {}
    started = time.perf_counter()
    ray_start = 0.0
    if workers > 1:  # connect first, to time Ray's start apart; the run reuses the connection
        with cluster.Cluster(workers):
            pass
        ray_start = time.perf_counter() - started
    if stage == "synth":
        from keme.cli import synthesize_dataset
        from keme.synth.limits import load_config

        synthesize_dataset(load_config(Path(source)), Path(out), force=True, workers=workers)
    else:
        from eval.run import Settings, run
        from eval.workers import systems_on
        from keme.validate import verified_dataset

        data = verified_dataset(Path(source))  # the check `keme eval` makes: in both runs' wall time
        systems = systems_on(workers, None) if workers > 1 else None
        run(Settings(data=data, out=Path(out), systems=SYSTEMS), systems=systems)
    print(
        json.dumps(
            {
                "seconds": time.perf_counter() - started,
                "ray_start": ray_start,
                "shipped": cluster.SHIPPED,
                "load": os.getloadavg()[0],
            }
        )
    )


def run_child(stage: str, workers: int, source: Path, out: Path) -> dict:
    done = subprocess.run(
        [sys.executable, __file__, "--child", stage, str(workers), str(source), str(out)],
        capture_output=True,
        text=True,
        env=os.environ | {"PYTHONPATH": str(ROOT)},
        check=False,
    )
    if done.returncode != 0:
        raise SystemExit(f"{stage} --workers {workers} failed:\n{done.stderr[-3000:]}")
    return json.loads(done.stdout.strip().splitlines()[-1])


def digest(directory: Path) -> str:
    h = hashlib.sha256()
    for path in sorted(p for p in directory.rglob("*") if p.is_file() and ".keme.lock" not in p.name):
        h.update(str(path.relative_to(directory)).encode() + b"\0" + path.read_bytes())
    return h.hexdigest()


def eval_result(out: Path) -> dict:
    from eval.report import MEASURED

    summary = json.loads((out / "summary.json").read_text())["systems"]
    hits = {}
    for system in SYSTEMS:
        for line in (out / system / "retrieve.jsonl").read_text().split("\n"):
            if not line.strip():
                continue
            record = json.loads(line)
            hits[(system, record["question_id"])] = record["hits"]
    skip = MEASURED | {"storage_bytes"}  # factmem's database grows with its random nonces
    return {
        "summary": {s: {k: v for k, v in m.items() if k not in skip} for s, m in summary.items()},
        "hits": hits,
    }


def _spin(n: int) -> float:
    started = time.perf_counter()
    x = 0
    for i in range(n):
        x += i * i
    return time.perf_counter() - started


def free_cores() -> float:
    """How many cores two busy processes get here now (2.0 on an idle 2-core machine; the machine may be
    shared): one spin alone vs two at once."""
    from multiprocessing import Pool

    n = 10_000_000
    alone = _spin(n)
    with Pool(2) as pool:
        started = time.perf_counter()
        pool.map(_spin, [n, n])
        both = time.perf_counter() - started
    return round(2 * alone / both, 2)


def mb(n: int) -> str:
    return f"{n / 2**20:.2f} MB"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--personas", type=int, default=4)
    parser.add_argument("--months", type=int, default=6)
    parser.add_argument(
        "--repeat", type=int, default=2, help="runs per setting; the best wall time is reported"
    )
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="keme-bench-workers-") as tmp:
        base = Path(tmp)
        config = base / "config.yaml"
        config.write_text(config_text(args.personas, args.months))
        figures: dict[tuple[str, int], dict] = {}
        reference: dict[str, object] = {}
        cores = [free_cores()]
        for stage in ("synth", "eval"):
            for workers in (1, 2):
                best = None
                for attempt in range(args.repeat):
                    out = base / f"{stage}-{workers}-{attempt}"
                    source = config if stage == "synth" else base / "synth-1-0"
                    got = run_child(stage, workers, source, out)
                    result = digest(out) if stage == "synth" else eval_result(out)
                    reference.setdefault(stage, result)
                    assert result == reference[stage], f"{stage} --workers {workers} differs from --workers 1"
                    if best is None or got["seconds"] < best["seconds"]:
                        best = got
                figures[(stage, workers)] = best
                cores.append(free_cores())
        data = json.loads((base / "synth-1-0" / "manifest.json").read_text())["stats"]
        print(
            f"config: {args.personas} personas × {args.months} months ({data['sessions']} sessions, "
            f"{data['messages']} messages, {data.get('qa', 0)} questions); eval: {len(SYSTEMS)} systems, "
            f"{len(SYSTEMS) * args.personas} (system, persona) pairs; {os.cpu_count()} cores; best of "
            f"{args.repeat}"
        )
        print("| stage | --workers 1 | --workers 2 (Ray start) | ratio 1/2 | 2, start excluded | shipped |")
        print("|---|---|---|---|---|---|")
        for stage in ("synth", "eval"):
            one, two = figures[(stage, 1)], figures[(stage, 2)]
            shipped = two["shipped"]
            sizes = (
                f"put {mb(shipped.get('put', 0))}, sent {mb(shipped.get('sent', 0))}, returned "
                f"{mb(shipped.get('returned', 0))} (largest {mb(shipped.get('largest', 0))})"
            )
            alone, work = one["seconds"], two["seconds"] - two["ray_start"]
            print(
                f"| {stage} | {alone:.1f} s | {two['seconds']:.1f} s ({two['ray_start']:.1f} s) | "
                f"{alone / two['seconds']:.2f} | {work:.1f} s ({alone / work:.2f}) | {sizes} |"
            )
        loads = [f["load"] for f in figures.values()]
        print(
            f"load average (1 min) after the runs: {min(loads):.1f}–{max(loads):.1f}; cores two processes "
            f"got between the runs: {min(cores)}–{max(cores)} of {os.cpu_count()}; outputs identical: yes"
        )


if __name__ == "__main__":
    if len(sys.argv) > 1 and sys.argv[1] == "--child":
        child(sys.argv[2], int(sys.argv[3]), sys.argv[4], sys.argv[5])
    else:
        main()
