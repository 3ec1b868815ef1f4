"""Repetition of the generated text: the share of sentences a persona says again, per role, over a
persona-year and its first 3 months, per language.

Each message is split into sentences (en: >= 6 words; zh: clauses of >= 6 characters) and the persona's
own names, places, values, dates and numbers are masked (keme.stats.repetition). A sentence is said again
when the same role of the same persona said it before, exactly or but for a short lead-in or tail clause or
one swapped word (`strict %` counts exact repeats alone). `3× %` is the share of distinct sentences said
three times or more, `max` the count of the most repeated sentence. Targets (issue 36), both languages: said
again <= 10 % (user) and <= 20 % (assistant) over a year, <= 3 % (user) over 3 months, no sentence more
than 5 times.

`body %` is the same share over the bodies alone (each pattern line as its template rendered it, before
small talk dressed it, both roles), so that content said again shows apart from the small talk around it.
`--bodies N` lists the N most drawn body templates.

    python bench/diversity.py [--seed 11] [--top 3] [--bodies 10] [--json] [--data DIR ...]

Without `--data`, configs/year.yaml is synthesized in process in en and zh (the trajectory of
`python -m keme.cli synth --config configs/year.yaml --out DIR`, with `language: zh` for zh); with it, the
datasets given are measured instead.
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
TARGETS = {("user", "year"): 0.10, ("assistant", "year"): 0.20, ("user", "3_months"): 0.03}
MAX_REPEATS = 5  # no sentence said more than this many times in a persona-year


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


def rows_of(view, bodies: list[tuple[str, str]] | None = None) -> list[dict]:
    """One row per role and span (a year, its first 3 months) of one persona."""
    from keme.stats import early_end, entity_strings, persona_repetition, repetition

    entities = entity_strings(view)
    lang = view.persona.language
    body = repetition([b for _, b in bodies], lang, entities) if bodies else None
    rows = []
    own = [s for s in view.sessions if not s.filler]
    for role in ("user", "assistant"):
        for span, until in (("year", None), ("3_months", early_end(view.persona.start))):
            found = persona_repetition(view, role, until, entities)
            rows.append(
                {
                    "language": lang,
                    "role": role,
                    "span": span,
                    "sessions": sum(1 for s in own if until is None or s.start < until),
                    **found.summary(n=50),
                    "max_repeats": found.most[1],
                    "body_said_again": round(body.again_share, 4) if body and span == "year" else None,
                }
            )
    if bodies:
        rows[0]["most_drawn_bodies"] = dict(Counter(source for source, _ in bodies).most_common(50))
    return rows


def synthesized(language: str, seed: int | None) -> list[dict]:
    from keme.synth.limits import load_config
    from keme.synth.pipeline import synthesize_persona

    cfg = load_config(ROOT / "configs/year.yaml")
    persona = cfg.personas[0].model_copy(update={"language": language})
    update: dict = {"personas": [persona]}
    if seed is not None:
        update["seed"] = seed
    with recording_bodies() as bodies:
        traj = synthesize_persona(0, cfg.model_copy(update=update))
    return rows_of(traj.view(), bodies)


def measured(path: Path) -> list[dict]:
    from keme.validate import verified_dataset

    data = verified_dataset(path, questions=None)
    return [row for view in data.views() for row in rows_of(view)]


def verdict(row: dict) -> str:
    ceiling = TARGETS.get((row["role"], row["span"]))
    ok = ceiling is None or row["said_again"] <= ceiling
    if row["span"] == "year":
        ok = ok and row["max_repeats"] <= MAX_REPEATS
    return "ok" if ok else "MISS"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seed", type=int, default=None, help="override configs/year.yaml's seed")
    parser.add_argument("--top", type=int, default=3, help="most repeated sentences to print per row")
    parser.add_argument("--bodies", type=int, default=0, help="most drawn body templates to print")
    parser.add_argument("--data", type=Path, nargs="*", help="measure these datasets instead")
    parser.add_argument("--json", action="store_true", help="one JSON object per row")
    args = parser.parse_args()
    if args.data:
        rows = [row for path in args.data for row in measured(path)]
    else:
        rows = [row for lang in ("en", "zh") for row in synthesized(lang, args.seed)]
    if args.json:
        for row in rows:
            print(json.dumps(row, ensure_ascii=False))
        return
    print(
        f"{'lang':>4} {'role':>9} {'span':>8} {'sessions':>8} {'sentences':>9} {'again %':>7} "
        f"{'strict %':>8} {'3× %':>6} {'max':>4} {'body %':>6} {'target':>6}"
    )
    for row in rows:
        body = "" if row["body_said_again"] is None else f"{100 * row['body_said_again']:.1f}"
        print(
            f"{row['language']:>4} {row['role']:>9} {row['span']:>8} {row['sessions']:>8} "
            f"{row['sentences']:>9} {100 * row['said_again']:>7.1f} {100 * row['said_again_strict']:>8.1f} "
            f"{100 * row['distinct_said_3_times']:>6.1f} {row['max_repeats']:>4} {body:>6} {verdict(row):>6}"
        )
    for row in rows:
        print(f"\n{row['language']} {row['role']} {row['span']}, most repeated sentences (masked):")
        for line, count in list(row["most_repeated"].items())[: args.top]:
            print(f"  {count:>4} × {line}")
        if args.bodies and "most_drawn_bodies" in row:
            print(f"{row['language']}, most drawn body templates:")
            for source, count in list(row["most_drawn_bodies"].items())[: args.bodies]:
                print(f"  {count:>4} × {source}")


if __name__ == "__main__":
    main()
