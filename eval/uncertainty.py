"""How sure a leaderboard figure is: bootstrap intervals of per-question means, and paired comparisons.

A question set of a few dozen items gives a recall figure a margin of about ±0.13, so a point mean alone
ranks systems that one question separates. Questions of one persona are not independent (one
trajectory, one writing style, one language), so the default resampling is by persona, in two stages:
draw personas with replacement, then draw each drawn persona's questions with replacement. With many
personas this is close to the plain cluster bootstrap (`scheme="cluster"`: all of a drawn persona's
questions); with the two or three personas of a demo the cluster bootstrap has only a handful of
distinct resamples and gives intervals far too narrow, and the second stage keeps the question-level
noise in. With one persona both persona schemes become the question bootstrap, and `Resamples.scheme`
says so.

Every replicate is a row of inclusion counts over the same question list, so one set of resamples
serves every metric and every system, and a comparison of two systems is paired by construction.
A value a system lacks is NaN: a mean is taken over the questions that have a value, and a paired
comparison over the questions both systems have a value for (or, with `missing="zero"`, a lacking
value counts as 0), with the counts left out reported on each side.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

import numpy as np

from keme.dataset.limits import Limits, check

Scheme = Literal["persona", "cluster", "question"]
Missing = Literal["exclude", "zero"]
B_DEFAULT = 2000
SEED_DEFAULT = 13
LEVEL = 0.95


@dataclass(frozen=True)
class Resamples:
    """B bootstrap replicates of one question list: `weights[b, i]` is how often question i is in
    replicate b."""

    question_ids: tuple[str, ...]
    persona_ids: tuple[str, ...]
    weights: np.ndarray
    scheme: str  # what was done: "persona", "cluster", or "question" (also the fallback with one persona)
    seed: int

    @property
    def b(self) -> int:
        return int(self.weights.shape[0])

    @property
    def personas(self) -> int:
        return len(set(self.persona_ids))

    def describe(self) -> str:
        """One phrase for a report's footnote."""
        how = {
            "persona": "personas drawn with replacement, then each drawn persona's questions",
            "cluster": "personas drawn with replacement, with all their questions",
            "question": "questions drawn with replacement"
            + (" (one persona, so not resampled by persona)" if self.personas == 1 else ""),
        }[self.scheme]
        return f"95 % bootstrap interval ({how}; B = {self.b}, seed {self.seed})"


@dataclass(frozen=True)
class Interval:
    mean: float | None
    low: float | None
    high: float | None
    questions: int
    personas: int

    def as_dict(self) -> dict[str, object]:
        return {
            "mean": _round(self.mean),
            "ci95": [_round(self.low), _round(self.high)],
            "questions": self.questions,
            "personas": self.personas,
        }


@dataclass(frozen=True)
class Comparison:
    """System A minus system B on the same questions."""

    diff: float | None
    low: float | None
    high: float | None
    p: float | None
    questions: int  # paired questions the difference rests on
    missing_a: int  # questions B has a value for and A has not (left out, or counted as 0)
    missing_b: int

    @property
    def significant(self) -> bool:
        """The difference's 95 % interval does not cover 0."""
        return self.low is not None and self.high is not None and (self.low > 0 or self.high < 0)

    def as_dict(self) -> dict[str, object]:
        return {
            "diff": _round(self.diff),
            "ci95": [_round(self.low), _round(self.high)],
            "p": _round(self.p),
            "significant": self.significant,
            "questions": self.questions,
            "missing": {"a": self.missing_a, "b": self.missing_b},
        }


def _round(value: float | None) -> float | None:
    return None if value is None else round(float(value), 4)


def resamples(
    question_ids: Sequence[str],
    persona_ids: Sequence[str],
    *,
    b: int = B_DEFAULT,
    seed: int = SEED_DEFAULT,
    scheme: Scheme = "persona",
    limits: Limits | None = None,
) -> Resamples:
    """Inclusion counts of `b` replicates. The same ids, seed and scheme give the same replicates."""
    if len(question_ids) != len(persona_ids):
        raise ValueError("one persona id per question id")
    if b < 1:
        raise ValueError(f"the number of bootstrap replicates must be at least 1, not {b}")
    limits = Limits.from_env() if limits is None else limits
    check("bootstrap replicates", b, "bootstrap", limits)
    check(
        f"bootstrap replicates x {len(question_ids)} questions",
        b * len(question_ids),
        "bootstrap_cells",
        limits,
    )
    rng = np.random.default_rng(seed)
    n = len(question_ids)
    personas = sorted(set(persona_ids))
    done = "question" if len(personas) <= 1 else scheme
    weights = np.zeros((b, n), dtype=np.int32)
    if n == 0:
        pass
    elif done == "question":
        weights = rng.multinomial(n, np.full(n, 1 / n), size=b).astype(np.int32)
    else:
        members = [np.flatnonzero(np.asarray(persona_ids) == p) for p in personas]
        drawn = rng.multinomial(len(personas), np.full(len(personas), 1 / len(personas)), size=b)
        for column, index in enumerate(members):
            if done == "cluster":
                weights[:, index] = drawn[:, [column]]
            else:  # each draw of the persona brings len(index) draws among its questions
                size = len(index)
                weights[:, index] = rng.multinomial(drawn[:, column] * size, np.full(size, 1 / size))
    return Resamples(tuple(question_ids), tuple(persona_ids), weights, done, seed)


def _values(values: Sequence[float | None], draws: Resamples) -> np.ndarray:
    out = np.array([np.nan if v is None else float(v) for v in values], dtype=float)
    if out.shape != (len(draws.question_ids),):
        raise ValueError(f"{len(out)} values for {len(draws.question_ids)} questions")
    return out


def _replicate_means(values: np.ndarray, mask: np.ndarray, draws: Resamples) -> np.ndarray:
    """Each replicate's mean over the questions in `mask` (NaN for a replicate that drew none)."""
    counts = draws.weights @ mask.astype(float)
    sums = draws.weights @ np.where(mask, values, 0.0)
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(counts > 0, sums / np.where(counts > 0, counts, 1), np.nan)


def _bounds(replicates: np.ndarray) -> tuple[float | None, float | None]:
    valid = replicates[~np.isnan(replicates)]
    if not valid.size:
        return None, None
    tail = (1 - LEVEL) / 2 * 100
    low, high = np.percentile(valid, [tail, 100 - tail])
    return float(low), float(high)


def interval(values: Sequence[float | None], draws: Resamples) -> Interval:
    """The mean of the values (None or NaN: the question has none) and its 95 % percentile interval."""
    x = _values(values, draws)
    mask = ~np.isnan(x)
    personas = len({p for p, m in zip(draws.persona_ids, mask) if m})
    if not mask.any():
        return Interval(None, None, None, 0, 0)
    low, high = _bounds(_replicate_means(x, mask, draws))
    return Interval(float(x[mask].mean()), low, high, int(mask.sum()), personas)


def paired(
    a: Sequence[float | None],
    b: Sequence[float | None],
    draws: Resamples,
    *,
    missing: Missing = "exclude",
) -> Comparison:
    """A minus B over the same replicates: the difference, its 95 % interval and a two-sided p.

    p is twice the smaller share of replicates on either side of 0 (counting ties on both sides, and
    with the usual +1 so a finite B never claims p = 0)."""
    x, y = _values(a, draws), _values(b, draws)
    has_x, has_y = ~np.isnan(x), ~np.isnan(y)
    missing_a, missing_b = int((has_y & ~has_x).sum()), int((has_x & ~has_y).sum())
    if missing == "zero":
        mask = has_x | has_y
        x, y = np.where(has_x, x, 0.0), np.where(has_y, y, 0.0)
    else:
        mask = has_x & has_y
    if not mask.any():
        return Comparison(None, None, None, None, 0, missing_a, missing_b)
    d = np.where(mask, x - y, 0.0)
    replicates = _replicate_means(d, mask, draws)
    low, high = _bounds(replicates)
    valid = replicates[~np.isnan(replicates)]
    below, above = int((valid <= 0).sum()), int((valid >= 0).sum())
    p = min(1.0, 2 * (min(below, above) + 1) / (valid.size + 1))
    return Comparison(float(d[mask].mean()), low, high, p, int(mask.sum()), missing_a, missing_b)
