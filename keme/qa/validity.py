"""The validity section of `keme validate`: is each question answerable one way, and can a guesser
with no memory beat chance?

It counts what the QA stage kept and rejected (by reason, from the manifest), how many items state
what they ask of the ledger, the uniqueness failures `keme validate` found (must be 0), the gold-letter
histogram of the choice items with its χ² p, and the blind baselines' scores against chance.
"""

from __future__ import annotations

from collections import Counter

from pydantic import BaseModel

from keme.models import QAItem
from keme.qa.blind import SHAPE_STRATEGIES, blind_scores, position_histogram, position_p

UNIQUENESS = ("not_unique", "shared_title", "same_text_other_gold")
CHANCE_MARGIN = 0.05  # blind baselines on choice items stay within chance ± 5 points


class Validity(BaseModel):
    items: int
    rejected: dict[str, int]
    resolved: dict[str, tuple[int, int]]  # per type: (items resolved against the ledger, items)
    uniqueness_failures: dict[str, int]
    gold_letters: dict[int, dict[str, int]]
    gold_letters_p: dict[int, float]
    blind: dict[str, dict]

    @property
    def blind_off_chance(self) -> list[str]:
        """Choice strategies whose accuracy is more than the margin away from chance."""
        return [
            name
            for name, score in self.blind.items()
            if name not in ("always_abstain", "never_abstain")
            and score["n"]
            and abs(score["accuracy"] - score["chance"]) > CHANCE_MARGIN
        ]


def validity(items: list[QAItem], stage: dict, messages: list[str]) -> Validity:
    """`stage`: the manifest's qa stage record; `messages`: the texts of validate's QA violations."""
    types = Counter(i.type for i in items)
    resolved = Counter(i.type for i in items if i.queries)
    failures = {name: sum(1 for m in messages if m.startswith(f"{name}:")) for name in UNIQUENESS}
    return Validity(
        items=len(items),
        rejected=dict(sorted(stage.get("rejected_by_reason", {}).items())),
        resolved={t: (resolved[t], n) for t, n in sorted(types.items())},
        uniqueness_failures=failures,
        gold_letters=position_histogram(items),
        gold_letters_p=position_p(items),
        blind=blind_scores(items),
    )


def lines(report: Validity) -> list[str]:
    """The section as `keme validate` prints it."""
    rejected = report.rejected
    unique = {k: v for k, v in rejected.items() if k.startswith(("not_unique", "same_text_other_gold"))}
    other = {k: v for k, v in rejected.items() if k not in unique}
    out = [f"validity: {report.items} items kept"]
    if unique:
        out.append(
            f"  rejected as not uniquely answerable: {sum(unique.values())} ("
            + ", ".join(f"{k} {v}" for k, v in unique.items())
            + ")"
        )
    if other:
        out.append("  rejected otherwise: " + ", ".join(f"{k} {v}" for k, v in other.items()))
    done = sum(a for a, _ in report.resolved.values())
    out.append(
        f"  resolved against the whole ledger: {done} of {report.items} ("
        + ", ".join(f"{t} {a}/{n}" for t, (a, n) in report.resolved.items())
        + ")"
    )
    out.append(
        f"  uniqueness failures: {sum(report.uniqueness_failures.values())} ("
        + " · ".join(f"{k} {v}" for k, v in report.uniqueness_failures.items())
        + ")"
    )
    for n, histogram in report.gold_letters.items():
        p = report.gold_letters_p.get(n, 1.0)
        out.append(
            f"  gold letters, {n} options: "
            + " · ".join(f"{k} {v}" for k, v in histogram.items())
            + f" — χ² p {p:.2f}"
        )
    blind = report.blind
    skip = ("always_abstain", "never_abstain", *SHAPE_STRATEGIES)
    choice = [k for k in blind if k not in skip and blind[k]["n"]]
    shapes = [k for k in SHAPE_STRATEGIES if k in blind and blind[k]["n"]]
    for title, names in (("blind baselines on choice items", choice), ("blind baselines on the traps' shape", shapes)):
        if names:
            out.append(
                f"  {title}: "
                + " · ".join(
                    f"{k} {blind[k]['accuracy']:.2f} (chance {blind[k]['chance']:.2f}, n {blind[k]['n']})"
                    for k in names
                )
            )
    for k in ("always_abstain", "never_abstain"):
        if k in blind:
            out.append(f"  {k.replace('_', ' ')}: {blind[k]['accuracy']:.2f} of all {blind[k]['n']} items")
    for name in report.blind_off_chance:
        score = blind[name]
        error = (score["chance"] * (1 - score["chance"]) / score["n"]) ** 0.5
        gap = score["accuracy"] - score["chance"]
        out.append(
            f"  ⚠ {name} is {gap:+.2f} from chance, beyond ± {CHANCE_MARGIN:.2f} "
            f"(on {score['n']} items one standard error at chance is ± {error:.2f})"
        )
    return out
