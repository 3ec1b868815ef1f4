"""Retrieval and answer metrics, defined once and tested by hand-computed cases.

Retrieval is scored against gold evidence at two granularities: messages and
sessions. A ranked list of hits becomes a ranked list of distinct ids at each
granularity (a session-level hit contributes all its messages, in order).

Gold evidence is a list of *groups*, one per needed statement: an item's
`evidence = [e1, e2]` with `also_supported_by = {e1: [a, b]}` gives the groups
G1 = {e1, a, b} and G2 = {e2}. A message hits a group when it is the group's
evidence message or one of its alternatives (a restatement of the same claims
in another message), so a system that finds the user's "it came to $21.49" in
chat is not scored as missing the bill. At session granularity a group is the
set of sessions that hold its members. With groups G_1..G_n and the top-k ids
R_k:

- recall_any@k = 1 if some G_i meets R_k      - recall_all@k = 1 if every G_i meets R_k
- locomo_recall@k = |{i : G_i meets R_k}| / n   (LoCoMo's partial recall, per group)
- ndcg_any@k = DCG(R_k) / IDCG_k, with DCG in the Järvelin–Kekäläinen form that
  LongMemEval uses (rel_1 + Σ_{i≥2} rel_i / log2 i). rel_i = 1 when the i-th id
  is the *first* hit of some group not hit before it, else 0: each group counts
  once, so a restatement of what was already found adds nothing (and a message
  that is the first hit of two groups counts once). The ideal ranking puts one
  member of every group first, so IDCG counts min(k, n) relevant positions.
- mrr = 1 / the first rank at which any group is hit, over the whole ranked list
  (0 if none)

Context-window systems (full context, recency: their hits are the context the
reader is given, not a ranking) get no rank metrics. They are scored by
`evidence_in_context`: 1 when every group has a member in that context, by the
same per-group rule.

Items without gold evidence (abstention) are left out of retrieval averages.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence

from eval.contract import Hit
from keme.text.tokens import approx_tokens

KS = (1, 3, 5, 10, 30, 50)
Groups = list[frozenset[str]]


def evidence_groups(evidence: Sequence[str], also_supported_by: Mapping[str, Sequence[str]]) -> Groups:
    """One group per evidence message: itself and the messages that restate it (none when not listed)."""
    groups = (frozenset([e, *also_supported_by.get(e, ())]) for e in evidence)
    return list(dict.fromkeys(groups))  # the same group twice is one statement


def session_groups(groups: Groups, session_of: Mapping[str, str]) -> Groups:
    """The groups at session granularity: the sessions holding each group's members (a member whose
    session is unknown is left out, an empty group dropped, and groups with the same sessions are one:
    two evidence messages of one session are one session-level statement)."""
    out = (frozenset(session_of[m] for m in group if m in session_of) for group in groups)
    return list(dict.fromkeys(g for g in out if g))


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


def _first_hits(ranking: Sequence[str], groups: Groups) -> list[int]:
    """rel_i: 1 where the i-th id is the first hit of at least one group, else 0."""
    found: set[int] = set()
    relevances = []
    for item in ranking:
        new = {i for i, group in enumerate(groups) if i not in found and item in group}
        found |= new
        relevances.append(1 if new else 0)
    return relevances


def _groups_met(ids: Iterable[str], groups: Groups) -> int:
    present = set(ids)
    return sum(1 for group in groups if group & present)


def retrieval_scores(ranking: list[str], groups: Groups, ks: tuple[int, ...] = KS) -> dict[str, float]:
    """All retrieval metrics of one ranked list against one item's evidence groups."""
    if not groups:
        raise ValueError("retrieval_scores needs at least one evidence group")
    scores: dict[str, float] = {}
    relevances = _first_hits(ranking, groups)
    for k in ks:
        met = _groups_met(ranking[:k], groups)
        ideal = dcg([1] * min(k, len(groups)))
        scores[f"recall_any@{k}"] = float(met > 0)
        scores[f"recall_all@{k}"] = float(met == len(groups))
        scores[f"locomo_recall@{k}"] = met / len(groups)
        scores[f"ndcg_any@{k}"] = dcg(relevances[:k]) / ideal
    first = next((i for i, rel in enumerate(relevances, start=1) if rel), None)
    scores["mrr"] = 1.0 / first if first else 0.0
    return scores


def evidence_in_context(context_ids: Iterable[str], groups: Groups) -> float:
    """1.0 when every evidence group has a member among the ids the reader's context holds, else 0.0."""
    if not groups:
        raise ValueError("evidence_in_context needs at least one evidence group")
    return float(_groups_met(context_ids, groups) == len(groups))


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
