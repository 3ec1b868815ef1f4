"""The largest config the fault suite used to synthesize in a test: 25 personas (en and zh alternating) over
24 months, seed 3 (issue 10: it once crashed with "already has 15 children, all anchored"). Too slow for
the test run (minutes of CPU), so it is a benchmark: it must finish with exit 0, and it prints the wall
time and the peak memory of `keme synth` beside one persona-year for scale.

    python bench/scale.py [--personas 25] [--months 24]
"""

from __future__ import annotations

import argparse
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def config(personas: int, months: int) -> str:
    lines = ["name: big", "seed: 3", "personas:"]
    lines += [
        f"  - {{language: {'en' if i % 2 == 0 else 'zh'}, start: 2026-01-01, months: {months}}}"
        for i in range(personas)
    ]
    return "\n".join(lines) + "\n"


def synth(text: str, folder: Path, name: str) -> tuple[float, float]:
    """(wall seconds, peak MB) of one `keme synth` in a child process; exits on a failure."""
    (folder / f"{name}.yaml").write_text(text)
    before = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
    start = time.perf_counter()
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "keme.cli",
            "synth",
            "--config",
            str(folder / f"{name}.yaml"),
            "--out",
            str(folder / name),
        ],
        cwd=ROOT,
        capture_output=True,
        text=True,
    )
    wall = time.perf_counter() - start
    if done.returncode != 0:
        sys.exit(f"{name}: keme synth failed (exit {done.returncode}):\n{done.stderr[-3000:]}")
    peak = max(before, resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss) / 1024
    return wall, peak


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--personas", type=int, default=25)
    parser.add_argument("--months", type=int, default=24)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        one = synth(config(1, 12), folder, "one-year")
        big = synth(config(args.personas, args.months), folder, "big")
    print(f"{'config':<28}{'wall s':>10}{'peak MB':>10}")
    print(f"{'1 persona x 12 months':<28}{one[0]:>10.1f}{one[1]:>10.0f}")
    print(f"{f'{args.personas} personas x {args.months} months':<28}{big[0]:>10.1f}{big[1]:>10.0f}")
    print(f"ratio (persona-months {args.personas * args.months} vs 12): {big[0] / one[0]:.1f}x the wall time")


if __name__ == "__main__":
    main()
