"""Variety of the generated text: near- and exact-duplicate shares for 1, 3 and 12 months per language.

A message is a near-duplicate when its text equals another message's of the same persona after the
persona's entity strings become <E> and digit runs become # (keme.stats.line_diversity). Targets, both
languages, user and assistant messages: <= 10 % near-duplicates over 3 months, <= 20 % over a
persona-year, no exact line more than 3 times in a persona-year (issue #12).

`body %` is the same near-duplicate share over the bodies only: each pattern line as its template
rendered it, before small talk (openers, acks, follow-ups, closers) dressed it, so that a wrapper's
variety does not hide a body said again and again; `>3× %` is the share of body lines whose template
was drawn more than 3 times. `--bodies N` lists the N most drawn body templates.

    python bench/diversity.py [--seed 11] [--top 5] [--bodies 10] [--lengths 12] [--json]
"""

from __future__ import annotations

import sys
from pathlib import Path

# bench/eval.py would shadow the `eval` package: keep this folder off the import path
sys.path[:] = [p for p in sys.path if Path(p or ".").resolve() != Path(__file__).resolve().parent]
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import argparse
import contextlib
import json
from collections import Counter

ROOT = Path(__file__).resolve().parents[1]
LENGTHS = (1, 3, 12)
TARGETS = {3: 0.10, 12: 0.20}  # near-duplicate share ceilings by length
MAX_EXACT_YEAR = 3


@contextlib.contextmanager
def recording_bodies():
    """The pattern lines each session accepts, as (template source, body text) in the order said."""
    from keme.synth.variety import Talk

    bodies: list[tuple[str, str]] = []
    accept = Talk.accept

    def record(self, *lines):
        bodies.extend((line.source, line.body) for line in lines if line.source)
        return accept(self, *lines)

    Talk.accept = record
    try:
        yield bodies
    finally:
        Talk.accept = accept


def body_figures(bodies: list[tuple[str, str]], entities: set[str]) -> dict:
    """Near-duplicate share of the body lines, the share drawn from a template said more than
    MAX_EXACT_YEAR times, and the most drawn body templates."""
    from keme.stats import line_diversity

    report = line_diversity([body for _, body in bodies], entities)
    drawn = Counter(source for source, _ in bodies)
    return {
        "body_lines": report.messages,
        "body_near_duplicate_share": report.near_duplicates / max(1, report.messages),
        "body_overdrawn_share": sum(n for n in drawn.values() if n > MAX_EXACT_YEAR) / max(1, len(bodies)),
        "body_templates": len(drawn),
        "most_drawn_bodies": dict(drawn.most_common(50)),
    }


def measure(language: str, months: int, seed: int | None) -> dict:
    from keme.stats import entity_strings, persona_diversity
    from keme.synth.limits import load_config
    from keme.synth.pipeline import synthesize_persona

    cfg = load_config(ROOT / "configs/year.yaml")
    persona = cfg.personas[0].model_copy(update={"language": language, "months": months})
    update: dict = {"personas": [persona]}
    if seed is not None:
        update["seed"] = seed
    cfg = cfg.model_copy(update=update)
    with recording_bodies() as bodies:
        traj = synthesize_persona(0, cfg)
    view = traj.view()
    report = persona_diversity(view)
    return {
        "language": language,
        "months": months,
        "sessions": len(traj.sessions),
        **report.summary(),
        **body_figures(bodies, entity_strings(view)),
    }


def verdict(row: dict) -> str:
    ceiling = TARGETS.get(row["months"])
    ok = ceiling is None or row["near_duplicate_share"] <= ceiling
    if row["months"] == 12:
        ok = ok and row["max_exact_repeats"] <= MAX_EXACT_YEAR
    return "ok" if ok else "MISS"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seed", type=int, default=None, help="override configs/year.yaml's seed")
    parser.add_argument("--top", type=int, default=5, help="most repeated normalized lines to print")
    parser.add_argument("--bodies", type=int, default=0, help="most drawn body templates to print")
    parser.add_argument("--lengths", type=int, nargs="*", default=list(LENGTHS), help="months to measure")
    parser.add_argument("--json", action="store_true", help="one JSON object per row")
    args = parser.parse_args()
    rows = [measure(lang, months, args.seed) for lang in ("en", "zh") for months in args.lengths]
    if args.json:
        for row in rows:
            print(json.dumps(row, ensure_ascii=False))
        return
    print(
        f"{'lang':>4} {'months':>6} {'sessions':>8} {'messages':>8} {'near %':>7} {'exact %':>7} "
        f"{'distinct':>8} {'max exact':>9} {'body %':>6} {'>3× %':>6} {'target':>6}"
    )
    for row in rows:
        print(
            f"{row['language']:>4} {row['months']:>6} {row['sessions']:>8} {row['messages']:>8} "
            f"{100 * row['near_duplicate_share']:>7.1f} {100 * row['exact_duplicate_share']:>7.1f} "
            f"{row['distinct_lines']:>8} {row['max_exact_repeats']:>9} "
            f"{100 * row['body_near_duplicate_share']:>6.1f} {100 * row['body_overdrawn_share']:>6.1f} "
            f"{verdict(row):>6}"
        )
    for row in rows:
        print(f"\n{row['language']} {row['months']} months, most repeated normalized lines:")
        for line, count in list(row["most_repeated"].items())[: args.top]:
            print(f"  {count:>4} × {line}")
        if args.bodies:
            print(f"{row['language']} {row['months']} months, most drawn body templates:")
            for source, count in list(row["most_drawn_bodies"].items())[: args.bodies]:
                print(f"  {count:>4} × {source}")


if __name__ == "__main__":
    main()
