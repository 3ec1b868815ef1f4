"""What the speaker's name is worth (issue #15): the same systems on the same LoCoMo-shaped questions, each
turn indexed as "speaker: text" (what `keme eval` replays) and as the bare text, side by side in one run.

The LoCoMo-shaped dataset is a keme dataset exported with `keme export locomo` and imported back (every
turn then has a named speaker); `--locomo FILE` measures a LoCoMo file instead (e.g. locomo10.json).
Prints, per system, recall_any@5 (dialog level: a gold turn among the first five hits), recall_all@5
and MRR over the questions with evidence.

    python bench/speakers.py [--config configs/demo.yaml | --locomo FILE] [--systems dense,bm25] [--json F]
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path[:] = [p for p in sys.path if Path(p or ".").resolve() != Path(__file__).resolve().parent]

METRICS = ("recall_any@5", "recall_all@5", "mrr")


def measure(data, systems: list[str], work: Path, speakers: bool) -> dict[str, dict[str, float]]:
    from eval.replay import replay_of
    from eval.run import Settings, run

    run(
        Settings(data=data, out=work, systems=systems, bootstrap=200),
        replay_of(data, speakers=speakers),
    )
    rows: dict[str, list[dict]] = {s: [] for s in systems}
    for line in (work / "results.jsonl").read_text().split("\n"):
        if not line.strip():
            continue
        record = json.loads(line)
        if record["system"] in rows and "mrr" in record:
            rows[record["system"]].append(record)
    return {
        system: {"n": len(records), **{m: sum(r[m] for r in records) / len(records) for m in METRICS}}
        for system, records in rows.items()
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--config", default=str(ROOT / "configs/demo.yaml"))
    parser.add_argument("--locomo", help="a LoCoMo JSON file to import instead of synthesizing --config")
    parser.add_argument("--systems", default="dense,bm25")
    parser.add_argument("--json", help="write the figures here")
    args = parser.parse_args()

    from eval.importers.locomo import export_locomo, import_locomo
    from keme.cli import synthesize_dataset
    from keme.synth.limits import load_config
    from keme.validate import verified_dataset

    work = Path(tempfile.mkdtemp(prefix="keme-bench-speakers-"))
    if args.locomo:
        source = Path(args.locomo)
    else:
        synthesize_dataset(load_config(Path(args.config)), work / "original")
        source = work / "locomo.json"
        export_locomo(verified_dataset(work / "original"), source)
    import_locomo(source, work / "locomo")
    # a real LoCoMo file asks some questions twice with different golds: flagged as source findings and
    # left out of the scores, as `keme eval` does
    data = verified_dataset(work / "locomo")
    flagged = sum(1 for q in data.qa if q.flags)
    if flagged:
        print(f"{flagged} questions flagged with source findings (left out), e.g. {data.qa[0].flags or ''}")
    systems = [s.strip() for s in args.systems.split(",") if s.strip()]
    bare = measure(data, systems, work / "run-bare", False)
    named = measure(data, systems, work / "run-named", True)
    print(f"\n{'system':<10} {'n':>4}" + "".join(f" {m + ' bare -> named':>30}" for m in METRICS))
    for system in systems:
        cells = "".join(
            f" {b:>13.3f} -> {n:.3f} ({100 * (n - b):+.1f})"
            for b, n in ((bare[system][m], named[system][m]) for m in METRICS)
        )
        print(f"{system:<10} {bare[system]['n']:>4}{cells}")
    if args.json:
        Path(args.json).write_text(json.dumps({"bare": bare, "named": named}, indent=1))


if __name__ == "__main__":
    main()
