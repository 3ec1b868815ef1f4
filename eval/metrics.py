"""Retrieval and answer metrics, defined once and tested by hand-computed cases.

Retrieval is scored against gold evidence at two granularities: messages and
sessions. A ranked list of hits becomes a ranked list of distinct ids at each
granularity (a session-level hit contributes all its messages, in order). With
gold set E and the top-k ids R_k:

- recall_any@k = 1 if E ∩ R_k ≠ ∅           - recall_all@k = 1 if E ⊆ R_k
- locomo_recall@k = |E ∩ R_k| / |E|          (LoCoMo's partial recall)
- ndcg_any@k = DCG(R_k) / IDCG_k, with DCG in the Järvelin–Kekäläinen form that
  LongMemEval uses (rel_1 + Σ_{i≥2} rel_i / log2 i) and the ideal ranking putting
  *all* gold items first (so IDCG counts min(k, |E|) gold items)
- mrr = 1 / rank of the first gold id in the whole ranked list (0 if none)

Items without gold evidence (abstention) are left out of retrieval averages.
"""

from __future__ import annotations

import math
from collections import Counter

from eval.contract import Hit
from keme.text.tokens import approx_tokens

KS = (1, 3, 5, 10, 30, 50)


def ranked_ids(hits: list[Hit], granularity: str) -> list[str]:
    seen: dict[str, None] = {}
    for hit in hits:
        for item in hit.message_ids if granularity == "message" else hit.session_ids:
            seen.setdefault(item, None)
    return list(seen)


def dcg(relevances: list[int]) -> float:
    if not relevances:
        return 0.0
    return relevances[0] + sum(rel / math.log2(i) for i, rel in enumerate(relevances[1:], start=2))


def retrieval_scores(ranking: list[str], gold: set[str], ks: tuple[int, ...] = KS) -> dict[str, float]:
    """All retrieval metrics of one ranked list against one gold set."""
    scores: dict[str, float] = {}
    for k in ks:
        top = ranking[:k]
        hit = gold.intersection(top)
        relevances = [1 if item in gold else 0 for item in top]
        ideal = dcg([1] * min(k, len(gold)))
        scores[f"recall_any@{k}"] = float(bool(hit))
        scores[f"recall_all@{k}"] = float(gold <= set(top))
        scores[f"locomo_recall@{k}"] = len(hit) / len(gold)
        scores[f"ndcg_any@{k}"] = dcg(relevances) / ideal if ideal else 0.0
    first = next((i for i, item in enumerate(ranking, start=1) if item in gold), None)
    scores["mrr"] = 1.0 / first if first else 0.0
    return scores


# ---------------------------------------------------------------- answers
def token_f1(prediction: str, gold: str) -> float:
    """SQuAD-style F1 over normalised tokens (CJK characters count as tokens)."""
    pred, ref = approx_tokens(prediction), approx_tokens(gold)
    if not pred or not ref:
        return float(pred == ref)
    common = Counter(pred) & Counter(ref)
    overlap = sum(common.values())
    if overlap == 0:
        return 0.0
    precision, recall = overlap / len(pred), overlap / len(ref)
    return 2 * precision * recall / (precision + recall)


def bleu1(prediction: str, gold: str) -> float:
    """Unigram BLEU: clipped unigram precision times the brevity penalty."""
    pred, ref = approx_tokens(prediction), approx_tokens(gold)
    if not pred or not ref:
        return 0.0
    clipped = sum((Counter(pred) & Counter(ref)).values())
    precision = clipped / len(pred)
    penalty = 1.0 if len(pred) > len(ref) else math.exp(1 - len(ref) / len(pred))
    return precision * penalty


def percentile(values: list[float], q: float) -> float:
    """Linear-interpolated percentile (q in 0..100), as numpy's default."""
    if not values:
        return 0.0
    ordered = sorted(values)
    position = (len(ordered) - 1) * q / 100
    low = math.floor(position)
    high = min(low + 1, len(ordered) - 1)
    return ordered[low] + (ordered[high] - ordered[low]) * (position - low)
