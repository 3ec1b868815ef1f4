"""Hard negatives, measured (issue #14): the same questions on their original trajectories and on the hard
ones that `keme hardneg` builds around them, side by side, per memory system.

Prints per system recall_any@5, recall_all@5, MRR and the evidence's normalized rank (the rank of the
first gold hit over the messages the question could see; evidence not ranked counts as the whole
haystack), with the haystack sizes (sessions, messages, tokens before the question), and how long
`keme hardneg` took. `--locomo` runs it on the LoCoMo-shaped version of the dataset: exported with
`keme export locomo` and imported back, so that only free text is left (no claim ledger: the rule
check proves the gold).

    python bench/hardneg.py [--config configs/demo.yaml | --data D] [--sample 50] [--locomo]
        [--systems bm25,dense,memory_bank] [--without KINDS] [--asks N] [--likes N] [--json F] [--plot F]
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path[:] = [p for p in sys.path if Path(p or ".").resolve() != Path(__file__).resolve().parent]

METRICS = ("recall_any@5", "recall_all@5", "mrr", "norm_rank")


def haystacks(data) -> dict[str, tuple[int, int, int]]:
    """(sessions, messages, tokens) each question could see: its persona's, before it was asked."""
    from keme.text.tokens import count_tokens

    out = {}
    for view in data.views():
        for item in view.qa:
            seen = [s for s in view.sessions if s.end <= item.asked_at]
            messages = [m for s in seen for m in s.messages]
            out[item.id] = (len(seen), len(messages), sum(count_tokens(m.content) for m in messages))
    return out


def measure(data, systems: list[str], work: Path) -> dict[str, dict[str, float]]:
    """Per system, the mean of each metric over the questions with evidence. Systems rank the whole
    haystack (depth: its size), so that the evidence's normalized rank is its rank, not a cut-off."""
    from eval.run import Settings, run

    sizes = haystacks(data)
    depth = max(messages for _, messages, _ in sizes.values())
    run(Settings(data=data, out=work, systems=systems, depth=depth, bootstrap=200))
    rows: dict[str, list[dict]] = {s: [] for s in systems}
    for line in (work / "results.jsonl").read_text().split("\n"):
        if not line.strip():
            continue
        record = json.loads(line)
        if record["system"] in rows and "mrr" in record:
            rows[record["system"]].append(record)
    table = {}
    for system, records in rows.items():
        stats = {m: sum(r[m] for r in records) / len(records) for m in METRICS[:3]}
        # the first gold hit's rank over the haystack; not ranked at all: the whole haystack
        ranks = [
            min(1.0, (1 / r["mrr"]) / max(1, sizes[r["question_id"]][1])) if r["mrr"] else 1.0
            for r in records
        ]
        stats["norm_rank"] = sum(ranks) / len(ranks)
        stats["n"] = len(records)
        table[system] = stats
    return table


def sizes_of(data) -> dict[str, float]:
    values = list(haystacks(data).values())
    return {
        k: sum(v[i] for v in values) / len(values) for i, k in enumerate(("sessions", "messages", "tokens"))
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--config", default=str(ROOT / "configs/demo.yaml"))
    parser.add_argument("--data", help="an existing dataset instead of synthesizing --config")
    parser.add_argument("--sample", type=int, default=50)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--locomo", action="store_true", help="measure on the LoCoMo-shaped dataset")
    parser.add_argument("--systems", default="bm25,dense,memory_bank")
    parser.add_argument("--without", default="", help="distractor kinds not to make (comma-separated)")
    parser.add_argument("--asks", type=int, default=3, help="other people who asked the same question")
    parser.add_argument("--likes", type=int, default=2, help="like questions asked before, unanswered")
    parser.add_argument("--json", help="write the figures here")
    parser.add_argument("--plot", help="write the side-by-side plot here (PNG)")
    args = parser.parse_args()

    from eval.importers.locomo import export_locomo, import_locomo
    from keme.cli import synthesize_dataset
    from keme.dataset import Dataset
    from keme.hardneg import HardnegSettings, harden
    from keme.synth.limits import load_config
    from keme.validate import verified_dataset

    work = Path(tempfile.mkdtemp(prefix="keme-bench-hardneg-"))
    source = Path(args.data) if args.data else work / "original"
    if not args.data:
        synthesize_dataset(load_config(Path(args.config)), source)
    if args.locomo:
        export_locomo(verified_dataset(source), work / "locomo.json")
        import_locomo(work / "locomo.json", work / "locomo")
        source = work / "locomo"
    data = verified_dataset(source)
    started = time.perf_counter()
    hard, stats = harden(
        data,
        HardnegSettings(
            sample=args.sample,
            seed=args.seed,
            asks=args.asks,
            likes=args.likes,
            without=[k for k in args.without.split(",") if k],
        ),
    )
    took = time.perf_counter() - started
    hard.write(work / "hard")
    hard = verified_dataset(work / "hard")
    asked = {q.source_question_id for q in hard.qa}
    original = Dataset.load(source)
    original.qa = [q for q in original.qa if q.id in asked]
    systems = [s.strip() for s in args.systems.split(",") if s.strip()]
    before = measure(original, systems, work / "run-original")
    after = measure(hard, systems, work / "run-hard")
    size_before, size_after = sizes_of(original), sizes_of(hard)
    report = stats["hardneg"]
    print(
        f"keme hardneg: {report['kept']} of {report['selected']} questions kept in {stats['personas']} "
        f"trajectories in {took:.1f} s; distractors {report['distractors']}"
    )
    print(
        "haystack per question (original -> hard): "
        + ", ".join(f"{k} {size_before[k]:.0f} -> {size_after[k]:.0f}" for k in size_before)
    )
    print(f"\n{'system':<12} {'n':>3}" + "".join(f" {m:>22}" for m in METRICS))
    for system in systems:
        b, a = before[system], after[system]
        cells = "".join(f" {b[m]:>6.3f} -> {a[m]:.3f} ({a[m] - b[m]:+.3f})" for m in METRICS)
        print(f"{system:<12} {b['n']:>3}{cells}")
    figures = {
        "seconds": took,
        "hardneg": report,
        "haystack": {"original": size_before, "hard": size_after},
        "original": before,
        "hard": after,
    }
    if args.json:
        Path(args.json).write_text(json.dumps(figures, indent=2))
    if args.plot:
        plot(figures, systems, Path(args.plot), "LoCoMo-shaped" if args.locomo else Path(args.config).stem)


def plot(figures: dict, systems: list[str], path: Path, title: str) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(1, 3, figsize=(11, 3.4))
    for ax, metric in zip(axes, ("recall_any@5", "mrr", "norm_rank"), strict=True):
        x = range(len(systems))
        ax.bar([i - 0.2 for i in x], [figures["original"][s][metric] for s in systems], 0.4, label="original")
        ax.bar([i + 0.2 for i in x], [figures["hard"][s][metric] for s in systems], 0.4, label="hard")
        ax.set_xticks(list(x), systems)
        ax.set_title(metric + (" (lower is better)" if metric == "norm_rank" else ""))
        ax.set_ylim(0, 1)
    axes[0].legend()
    fig.suptitle(f"hard negatives, {title}: the same questions on original and hard trajectories")
    fig.tight_layout()
    fig.savefig(path, dpi=110)


if __name__ == "__main__":
    main()
