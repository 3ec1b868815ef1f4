"""The sentences a generated persona-year says again, per role and language, and the pattern lines they
come from (issue #36, point 4).

Every user and assistant message is split into sentences (English: at sentence ends, kept when >= 6
words; Chinese: at clause ends, kept when >= 6 characters), the persona's own names, places and numbers
masked (keme.stats.entity_strings -> <E>, digit runs -> #; case and spacing folded), and counted only if
still long enough once masked. The splitting and
masking rule is keme.synth.said's, the one the realizer steers by (a copy of the issue's rule: the measure
worker's keme.stats sentence measure was not available on this branch).

`again %` is the share of sentences whose masked form was said before by the same role (the first saying
is new, every later one is said again); `rep %` counts every saying of a sentence said more than once
(the first included: the issue's 60 % / 78 % figures read this way); `max` is the most times one
sentence was said. Targets over a persona-year, both languages: user <= 10 %, assistant <= 20 %,
max <= 5; over 3 months, user <= 3 %.
`lines again %` and `lines max` are the same over the sentences that pattern lines said (small talk, the
measure worker's part, left out). `--top N` lists the N most repeated sentences per role with the
pattern line (template source) that said them most, `small talk` when no pattern line did.

    python bench/repeats.py [--seed 11] [--months 3 12] [--top 15] [--langs en zh] [--json]
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
from collections import Counter, defaultdict

ROOT = Path(__file__).resolve().parents[1]
TARGETS = {("user", 3): 0.03, ("user", 12): 0.10, ("assistant", 12): 0.20}
MAX_YEAR = 5


@contextlib.contextmanager
def recording_sources():
    """The pattern lines each session accepts, as (template source, body text)."""
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


def measure(language: str, months: int, seed: int | None, top: int) -> dict:
    from keme.stats import entity_strings
    from keme.synth.limits import load_config
    from keme.synth.pipeline import synthesize_persona
    from keme.synth.said import long_enough, masker, sentences

    cfg = load_config(ROOT / "configs/year.yaml")
    persona = cfg.personas[0].model_copy(update={"language": language, "months": months})
    update: dict = {"personas": [persona]}
    if seed is not None:
        update["seed"] = seed
    cfg = cfg.model_copy(update=update)
    with recording_sources() as bodies:
        traj = synthesize_persona(0, cfg)
    view = traj.view()
    mask = masker(entity_strings(view))

    def said(text: str) -> list[str]:
        """The masked sentences the measure counts: long enough once the values are masked (a clause
        that is only an amount, "¥128.00", is no sentence)."""
        return [m for m in (mask(s) for s in sentences(text, language)) if long_enough(m, language)]

    origin: dict[str, Counter[str]] = defaultdict(Counter)
    for source, body in bodies:
        for sentence in said(body):
            origin[sentence][source] += 1
    row: dict = {"language": language, "months": months, "sessions": len(traj.sessions)}
    for role in ("user", "assistant"):
        counts: Counter[str] = Counter()
        for session in view.sessions:
            for message in session.messages:
                if message.role == role:
                    counts.update(said(message.content))
        total = sum(counts.values())
        again = sum(n - 1 for n in counts.values())
        # a sentence small talk says too (「有问题随时喊我」) counts only as often as pattern lines said it
        lined = Counter({k: min(n, sum(origin[k].values())) for k, n in counts.items() if k in origin})
        row[role] = {
            "sentences": total,
            # the same share over the sentences pattern lines said (small talk left out)
            "line_again_share": round(sum(n - 1 for n in lined.values()) / max(1, sum(lined.values())), 4),
            "line_max": max(lined.values(), default=0),
            "again_share": round(again / max(1, total), 4),
            "repeated_share": round(sum(n for n in counts.values() if n > 1) / max(1, total), 4),
            "thrice_share": round(sum(n for n in counts.values() if n >= 3) / max(1, total), 4),
            "max": max(counts.values(), default=0),
            "top": [
                (n, s, (origin[s].most_common(1)[0][0] if origin.get(s) else "small talk"))
                for s, n in counts.most_common(top)
                if n > 1
            ],
        }
    return row


def verdict(role: str, months: int, share: float, most: int) -> str:
    ceiling = TARGETS.get((role, months))
    ok = ceiling is None or share <= ceiling
    if months == 12:
        ok = ok and most <= MAX_YEAR
    return "ok" if ok else "MISS"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seed", type=int, default=None, help="override configs/year.yaml's seed")
    parser.add_argument("--months", type=int, nargs="*", default=[3, 12])
    parser.add_argument("--langs", nargs="*", default=["en", "zh"])
    parser.add_argument("--top", type=int, default=10, help="most repeated sentences to list per role")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    rows = [measure(lang, m, args.seed, args.top) for lang in args.langs for m in args.months]
    if args.json:
        for row in rows:
            print(json.dumps(row, ensure_ascii=False))
        return
    print(
        f"{'lang':>4} {'months':>6} {'role':>9} {'sentences':>9} {'again %':>7} {'rep %':>6} {'>=3× %':>6} "
        f"{'max':>4} {'lines again %':>13} {'lines max':>9}"
    )
    for row in rows:
        for role in ("user", "assistant"):
            r = row[role]
            print(
                f"{row['language']:>4} {row['months']:>6} {role:>9} {r['sentences']:>9} "
                f"{100 * r['again_share']:>7.1f} {100 * r['repeated_share']:>6.1f} "
                f"{100 * r['thrice_share']:>6.1f} {r['max']:>4} "
                f"{100 * r['line_again_share']:>13.1f} {r['line_max']:>9} "
                f"{verdict(role, row['months'], r['again_share'], r['max'])}"
            )
    for row in rows:
        for role in ("user", "assistant"):
            if not args.top:
                continue
            print(f"\n{row['language']} {row['months']} months, {role}: most repeated sentences")
            for n, sentence, source in row[role]["top"]:
                print(f"  {n:>4} × {sentence}\n         <- {source}")


if __name__ == "__main__":
    main()
