"""Retrieval and answer metrics against hand-computed values."""

from __future__ import annotations

import math

import pytest

from eval.contract import Hit
from eval.metrics import (
    bleu1,
    dcg,
    evidence_groups,
    evidence_in_context,
    percentile,
    ranked_ids,
    retrieval_scores,
    session_groups,
    token_f1,
)


def gold(*ids: str, also: dict[str, list[str]] | None = None):
    """Evidence groups of an item with evidence `ids` and restatements `also`."""
    return evidence_groups(list(ids), also or {})


def test_recall_any_and_all_at_k():
    scores = retrieval_scores(["x", "g1", "y", "g2"], gold("g1", "g2"), ks=(1, 2, 4))
    assert (scores["recall_any@1"], scores["recall_any@2"]) == (0.0, 1.0)
    assert (scores["recall_all@2"], scores["recall_all@4"]) == (0.0, 1.0)


def test_locomo_partial_recall_is_the_fraction_of_gold_found():
    scores = retrieval_scores(["g1", "x", "y"], gold("g1", "g2", "g3"), ks=(3,))
    assert scores["locomo_recall@3"] == pytest.approx(1 / 3)


def test_dcg_uses_the_jarvelin_kekalainen_discount():
    # rel_1 + rel_2/log2(2) + rel_3/log2(3)
    assert dcg([1, 1, 1]) == pytest.approx(1 + 1 + 1 / math.log2(3))
    assert dcg([0, 0, 1]) == pytest.approx(1 / math.log2(3))


def test_ndcg_ideal_counts_all_gold_items():
    # gold {a, b}; ranking puts one gold item at position 3 and misses the other.
    # DCG = 1/log2(3); ideal DCG@3 = 1 + 1 (two gold items at positions 1 and 2)
    scores = retrieval_scores(["x", "y", "a"], gold("a", "b"), ks=(3,))
    assert scores["ndcg_any@3"] == pytest.approx((1 / math.log2(3)) / 2)


def test_ndcg_ideal_is_truncated_at_k():
    # three gold items but k = 1: ideal DCG@1 = 1, and a gold hit at rank 1 scores 1
    assert retrieval_scores(["a"], gold("a", "b", "c"), ks=(1,))["ndcg_any@1"] == 1.0


def test_mrr_is_the_reciprocal_rank_of_the_first_gold_item():
    assert retrieval_scores(["x", "y", "g", "g2"], gold("g", "g2"), ks=(1,))["mrr"] == pytest.approx(1 / 3)
    assert retrieval_scores(["x"], gold("g"), ks=(1,))["mrr"] == 0.0


# ---------------------------------------------------------------- evidence groups (restatements)
def test_a_group_is_the_evidence_message_and_its_restatements():
    groups = gold("bill", "chat", also={"bill": ["said-1", "said-2"]})
    assert groups == [frozenset({"bill", "said-1", "said-2"}), frozenset({"chat"})]


def test_an_evidence_message_without_an_entry_has_no_alternatives():
    assert gold("bill", also={"other": ["x"]}) == [frozenset({"bill"})]


def test_recall_any_counts_a_restatement_of_the_evidence():
    scores = retrieval_scores(["x", "said"], gold("bill", also={"bill": ["said"]}), ks=(1, 2))
    assert (scores["recall_any@1"], scores["recall_any@2"]) == (0.0, 1.0)


def test_recall_all_needs_one_member_of_every_group():
    groups = gold("bill", "chat", also={"bill": ["said"]})
    scores = retrieval_scores(["said", "y", "chat"], groups, ks=(2, 3))
    assert (scores["recall_all@2"], scores["recall_all@3"]) == (0.0, 1.0)


def test_two_members_of_one_group_are_one_statement_found():
    # the bill and its restatement cover the first statement only: recall_all 0, LoCoMo 1/2
    scores = retrieval_scores(["bill", "said"], gold("bill", "chat", also={"bill": ["said"]}), ks=(2,))
    assert (scores["recall_all@2"], scores["locomo_recall@2"]) == (0.0, 0.5)


def test_locomo_recall_is_the_fraction_of_groups_hit():
    groups = gold("e1", "e2", "e3", also={"e2": ["r2"]})
    assert retrieval_scores(["r2", "x", "e3"], groups, ks=(3,))["locomo_recall@3"] == pytest.approx(2 / 3)


def test_mrr_is_the_first_rank_at_which_any_group_is_hit():
    groups = gold("e1", "e2", also={"e2": ["r2"]})
    assert retrieval_scores(["x", "r2", "e1"], groups, ks=(1,))["mrr"] == pytest.approx(1 / 2)


def test_ndcg_counts_a_group_once_so_restatements_do_not_inflate_it():
    groups = gold("e1", "e2", also={"e1": ["r1"]})
    # rel = [1, 0, 1]: r1 repeats the group e1 found; DCG = 1 + 1/log2(3), ideal = 1 + 1
    repeated = retrieval_scores(["e1", "r1", "e2"], groups, ks=(3,))["ndcg_any@3"]
    assert repeated == pytest.approx((1 + 1 / math.log2(3)) / 2)
    assert retrieval_scores(["r1", "e2", "e1"], groups, ks=(3,))["ndcg_any@3"] == 1.0


def test_a_message_that_stands_for_two_groups_counts_once_in_ndcg():
    # m restates both statements: it meets both groups (recall_all 1) but is one relevant position
    groups = gold("e1", "e2", also={"e1": ["m"], "e2": ["m"]})
    scores = retrieval_scores(["m", "x"], groups, ks=(1, 2))
    assert (scores["recall_all@1"], scores["ndcg_any@1"]) == (1.0, 1.0)
    assert scores["ndcg_any@2"] == pytest.approx(1 / 2)


def test_without_alternatives_the_scores_are_the_plain_set_ones():
    # one group per evidence id: recall_all, LoCoMo and nDCG as over the set {a, b}
    scores = retrieval_scores(["a", "x", "b"], gold("a", "b"), ks=(2, 3))
    assert (scores["recall_all@2"], scores["recall_all@3"], scores["locomo_recall@2"]) == (0.0, 1.0, 0.5)
    assert scores["ndcg_any@3"] == pytest.approx((1 + 1 / math.log2(3)) / 2)


def test_session_groups_are_the_sessions_of_each_groups_members():
    groups = gold("s1-m1", "s3-m2", also={"s1-m1": ["s2-m5"]})
    session_of = {"s1-m1": "s1", "s2-m5": "s2", "s3-m2": "s3"}
    assert session_groups(groups, session_of) == [frozenset({"s1", "s2"}), frozenset({"s3"})]
    scores = retrieval_scores(["s2", "s3"], session_groups(groups, session_of), ks=(2,))
    assert scores["recall_all@2"] == 1.0


def test_two_evidence_messages_of_one_session_are_one_session_group():
    groups = session_groups(gold("s1-m1", "s1-m4"), {"s1-m1": "s1", "s1-m4": "s1"})
    assert groups == [frozenset({"s1"})]
    assert retrieval_scores(["s1"], groups, ks=(1,))["ndcg_any@1"] == 1.0


def test_evidence_in_context_needs_a_member_of_every_group():
    groups = gold("bill", "chat", also={"bill": ["said"]})
    assert evidence_in_context(["x", "said", "chat"], groups) == 1.0
    assert evidence_in_context(["bill", "said"], groups) == 0.0


def test_ranked_ids_expand_session_hits_and_drop_repeats():
    hits = [
        Hit(text="", score=2, message_ids=["m3", "m4"], session_ids=["s2"]),
        Hit(text="", score=1, message_ids=["m1"], session_ids=["s1"]),
        Hit(text="", score=0.5, message_ids=["m4"], session_ids=["s2"]),
    ]
    assert ranked_ids(hits, "message") == ["m3", "m4", "m1"]
    assert ranked_ids(hits, "session") == ["s2", "s1"]


def test_token_f1_hand_computed():
    # prediction tokens: the, cat, sat ; gold: the, cat, ran, away -> overlap 2, P = 2/3, R = 2/4
    assert token_f1("The cat sat.", "the cat ran away") == pytest.approx(
        2 * (2 / 3) * (1 / 2) / (2 / 3 + 1 / 2)
    )


def test_token_f1_counts_chinese_characters():
    assert token_f1("在杭州", "杭州") == pytest.approx(2 * (2 / 3) * 1 / (2 / 3 + 1))


def test_bleu1_applies_the_brevity_penalty():
    # prediction "cat" against "the cat sat": precision 1, BP = exp(1 - 3/1)
    assert bleu1("cat", "the cat sat") == pytest.approx(math.exp(-2))
    assert bleu1("the cat sat on", "the cat sat") == pytest.approx(3 / 4)


def test_percentile_interpolates_like_numpy():
    assert percentile([1, 2, 3, 4], 50) == 2.5
    assert percentile([10, 20, 30, 40, 50], 95) == pytest.approx(48.0)
