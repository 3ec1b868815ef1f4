"""The tokenizers of keme.text.tokens, one behaviour per test."""

from __future__ import annotations

from keme.text.tokens import (
    approx_tokens,
    count_tokens,
    han_count,
    has_han,
    memory_bank_terms,
    search_terms,
    shingles,
)


def test_a_han_run_becomes_its_character_bigrams():
    assert search_terms("打开抖音搜索") == ["打开", "开抖", "抖音", "音搜", "搜索"]


def test_a_lone_han_character_stays_a_unigram():
    assert search_terms("买") == ["买"]
    assert search_terms("去 买 了") == ["去", "买", "了"]


def test_latin_words_and_numbers_are_casefolded_words():
    assert search_terms("Paid $12.50 at Blue_Bottle") == ["paid", "12", "50", "at", "blue_bottle"]


def test_han_and_latin_in_one_text_keep_their_order():
    assert search_terms("在Costco买了iPhone15") == ["在", "costco", "买了", "iphone15"]


def test_letters_outside_ascii_form_runs_of_their_own():
    assert search_terms("Café Ürün") == ["caf", "é", "ü", "r", "ü", "n"]
    assert search_terms("Привет мир") == ["привет", "мир"]


def test_the_memory_bank_variant_drops_letters_outside_its_two_scripts():
    assert memory_bank_terms("Café Ürün 打开抖音") == ["caf", "r", "n", "打开", "开抖", "抖音"]


def test_the_memory_bank_variant_keeps_english_numbers_and_underscores():
    assert memory_bank_terms("Paid $12.50 at Blue_Bottle") == ["paid", "12", "50", "at", "blue_bottle"]


def test_the_memory_bank_variant_splits_han_into_bigrams():
    assert memory_bank_terms("打开抖音搜索") == ["打开", "开抖", "抖音", "音搜", "搜索"]
    assert memory_bank_terms("买") == ["买"]


def test_every_han_or_kana_character_counts_as_one_token():
    assert count_tokens("打开抖音") == 4
    assert count_tokens("ひらがな") == 4


def test_a_run_of_letters_or_digits_counts_as_one_token_and_punctuation_as_none():
    assert count_tokens("Hello, world! 42 times.") == 4
    assert approx_tokens("Hello, 世界") == ["hello", "世", "界"]


def test_ascii_text_counts_as_the_token_pattern_does():
    """The ASCII fast path agrees with `approx_tokens` on every ASCII character, underscores and controls."""
    every_ascii = "".join(map(chr, range(128)))
    texts = [
        every_ascii,
        "snake_case and kebab-case, 3.14 or 3,000 (x2)!",
        "I'm at the gym: 07:30-08:15\tthen coffee\n\nok?",
        "__init__ ___ a_b_c 1_000",
        "",
        "   ",
    ]
    for text in texts:
        assert count_tokens(text) == len(approx_tokens(text)), text


def test_han_is_recognised_with_its_extension_and_compatibility_blocks():
    assert has_han("抖音") and has_han("\u3400") and has_han("\uf900")
    assert not has_han("ひらがな abc")
    assert han_count("在Costco买了") == 3


def test_shingles_are_normalised_words_without_han():
    assert shingles("What did I buy, at Costco?") == {"what", "did", "i", "buy", "at", "costco"}


def test_shingles_are_bigrams_of_the_compacted_text_with_han():
    assert shingles("我 在哪") == {"我在", "在哪"}
