"""Retrieval and answer metrics against hand-computed values."""

from __future__ import annotations

import math

import pytest

from eval.contract import Hit
from eval.metrics import bleu1, dcg, percentile, ranked_ids, retrieval_scores, token_f1


def test_recall_any_and_all_at_k():
    scores = retrieval_scores(["x", "g1", "y", "g2"], {"g1", "g2"}, ks=(1, 2, 4))
    assert (scores["recall_any@1"], scores["recall_any@2"]) == (0.0, 1.0)
    assert (scores["recall_all@2"], scores["recall_all@4"]) == (0.0, 1.0)


def test_locomo_partial_recall_is_the_fraction_of_gold_found():
    scores = retrieval_scores(["g1", "x", "y"], {"g1", "g2", "g3"}, ks=(3,))
    assert scores["locomo_recall@3"] == pytest.approx(1 / 3)


def test_dcg_uses_the_jarvelin_kekalainen_discount():
    # rel_1 + rel_2/log2(2) + rel_3/log2(3)
    assert dcg([1, 1, 1]) == pytest.approx(1 + 1 + 1 / math.log2(3))
    assert dcg([0, 0, 1]) == pytest.approx(1 / math.log2(3))


def test_ndcg_ideal_counts_all_gold_items():
    # gold {a, b}; ranking puts one gold item at position 3 and misses the other.
    # DCG = 1/log2(3); ideal DCG@3 = 1 + 1 (two gold items at positions 1 and 2)
    scores = retrieval_scores(["x", "y", "a"], {"a", "b"}, ks=(3,))
    assert scores["ndcg_any@3"] == pytest.approx((1 / math.log2(3)) / 2)


def test_ndcg_ideal_is_truncated_at_k():
    # three gold items but k = 1: ideal DCG@1 = 1, and a gold hit at rank 1 scores 1
    assert retrieval_scores(["a"], {"a", "b", "c"}, ks=(1,))["ndcg_any@1"] == 1.0


def test_mrr_is_the_reciprocal_rank_of_the_first_gold_item():
    assert retrieval_scores(["x", "y", "g", "g2"], {"g", "g2"}, ks=(1,))["mrr"] == pytest.approx(1 / 3)
    assert retrieval_scores(["x"], {"g"}, ks=(1,))["mrr"] == 0.0


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
