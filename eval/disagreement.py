"""Where the judges disagree: per question, and per system as a rate with a warning above a threshold.

A judge talked into a verdict (a prompt injection in the reader's answer, or a lenient small model) shows
up as the rule judge saying WRONG where the LLM judge says CORRECT. Neither judge is taken as right; the
report shows how often they part and which questions to read by hand.
"""

from __future__ import annotations

from typing import Any

THRESHOLD_DEFAULT = 0.2  # the share of judged questions above which a run's accuracy is flagged


def disagree(verdicts: dict[str, bool]) -> bool | None:
    """Whether the judges of one question gave different verdicts; None with fewer than two judges."""
    if len(verdicts) < 2:
        return None
    return len(set(verdicts.values())) > 1


def disagreement_summary(rows: list[dict[str, Any]], threshold: float = THRESHOLD_DEFAULT) -> dict[str, Any]:
    """The rate of disagreement over questions judged by two or more judges, the questions concerned, and
    `judge_disagreement_warning` when the rate is above `threshold`; {} when no question had two judges."""
    judged = [r for r in rows if r.get("judges_disagree") is not None]
    if not judged:
        return {}
    parted = sorted(r["question_id"] for r in judged if r["judges_disagree"])
    rate = len(parted) / len(judged)
    out: dict[str, Any] = {
        "judge_disagreement_rate": round(rate, 4),
        "judge_disagreement_threshold": threshold,
        "judge_disagreements": parted,
    }
    if rate > threshold:
        out["judge_disagreement_warning"] = (
            f"the judges disagree on {len(parted)} of {len(judged)} questions ({rate:.0%}, above "
            f"{threshold:.0%}): its accuracy is not trustworthy until those answers are read "
            "(judge_disagreements in summary.json, judges_disagree in results.jsonl)"
        )
    return out
