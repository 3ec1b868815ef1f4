"""The validity section of `keme validate`: is each question answerable one way, and can a guesser
with no memory beat chance?

It counts what the QA stage kept and rejected (by reason, from the manifest), how many items state
what they ask of the ledger, the uniqueness failures `keme validate` found (must be 0), the gold-letter
histogram of the choice items with its χ² p, and the blind baselines' scores against chance: a baseline
off chance beyond the margin and beyond noise (`breaches`) fails `keme validate`.
"""

from __future__ import annotations

import math
from collections import Counter
from dataclasses import dataclass

from pydantic import BaseModel

from keme.models import QAItem
from keme.qa.blind import (
    HABIT_STRATEGIES,
    SHAPE_STRATEGIES,
    blind_scores,
    position_histogram,
    position_p,
)

UNIQUENESS = ("not_unique", "shared_title", "same_text_other_gold")
CHANCE_MARGIN = 0.05  # every blind baseline stays within chance ± 5 points
SIGNIFICANCE = 2.0  # ... and a gap counts only beyond this many standard errors of a guess at chance
MIN_ITEMS = 20  # ... on at least this many items: below, the normal approximation says nothing


@dataclass(frozen=True)
class Breach:
    """A blind baseline that beats (or trails) chance by more than the margin, beyond noise."""

    name: str
    accuracy: float
    chance: float
    n: int

    @property
    def error(self) -> float:
        return standard_error(self.chance, self.n)

    def line(self) -> str:
        """The ✗ line `keme validate` prints: the baseline, its figure and chance."""
        return (
            f"✗ blind baseline {self.name}: {self.accuracy:.2f} against chance {self.chance:.2f} "
            f"({self.accuracy - self.chance:+.2f}, beyond ± {CHANCE_MARGIN:.2f}; on {self.n} items one "
            f"standard error at chance is ± {self.error:.2f}): a guesser with no memory beats the questions"
        )


def standard_error(chance: float, n: int) -> float:
    """The standard error of the accuracy of n independent guesses that are each right with p = chance."""
    return math.sqrt(chance * (1 - chance) / n) if n else math.inf


def breaches(blind: dict[str, dict]) -> list[Breach]:
    """Every blind baseline (keme.qa.blind: position, median, longest, the abstain strategies, and any
    added there) whose accuracy is off chance by more than CHANCE_MARGIN *and* by more than SIGNIFICANCE
    standard errors of a guess at chance, sqrt(p (1 - p) / n).

    The standard-error rule is why a small dataset is not failed by noise: 4 choice items at chance 0.25
    have a standard error of 0.22, so one lucky guess (+0.25) is 1.2 errors and no breach; on 300 items
    (error 0.025) a gap of 0.06 is 2.4 errors and fails. A baseline that applies to no item is no breach."""
    found = []
    for name, score in blind.items():
        n, accuracy, chance = score["n"], score["accuracy"], score["chance"]
        gap = abs(accuracy - chance)
        if n >= MIN_ITEMS and gap > CHANCE_MARGIN and gap > SIGNIFICANCE * standard_error(chance, n):
            found.append(Breach(name, accuracy, chance, n))
    return found


class Validity(BaseModel):
    items: int
    rejected: dict[str, int]
    resolved: dict[str, tuple[int, int]]  # per type: (items resolved against the ledger, items)
    uniqueness_failures: dict[str, int]
    gold_letters: dict[int, dict[str, int]]
    gold_letters_p: dict[int, float]
    blind: dict[str, dict]
    short_of_mix: dict[str, dict[str, int]] = {}  # per type the selection could not fill: wanted, built

    @property
    def blind_breaches(self) -> list[Breach]:
        """The blind baselines off chance beyond the margin and beyond noise (`breaches`): a failure."""
        return breaches(self.blind)


def validity(
    items: list[QAItem], stage: dict, messages: list[str], bills: dict[str, Counter] | None = None
) -> Validity:
    """`stage`: the manifest's qa stage record; `messages`: the texts of validate's QA violations;
    `bills`: per persona, her bills counted by payment method (keme.qa.blind.bill_methods), for the
    usual-method baseline."""
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
        blind=blind_scores(items, bills),
        short_of_mix=stage.get("short_of_mix", {}),
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
    skip = ("always_abstain", "never_abstain", *SHAPE_STRATEGIES, *HABIT_STRATEGIES)
    choice = [k for k in blind if k not in skip and blind[k]["n"]]
    shapes = [k for k in SHAPE_STRATEGIES if k in blind and blind[k]["n"]]
    habits = [k for k in HABIT_STRATEGIES if k in blind and blind[k]["n"]]
    for title, names in (
        ("blind baselines on choice items", choice),
        ("blind baselines on the traps' shape", shapes),
        ("blind baselines on her habits", habits),
    ):
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
    for kind, counts in report.short_of_mix.items():
        out.append(
            f"  short of the mix: {kind} {counts['built']} of the {counts['wanted']} wanted (no more "
            "candidates hold; the selection shrank to keep the others near their shares)"
        )
    return out
