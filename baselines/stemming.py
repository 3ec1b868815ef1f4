"""Search terms for lexical memory: stop words dropped, English words Porter-stemmed, CJK as character
bigrams.

VibeBrowser's memory search (seed: vibebrowser-openclaw-memory.txt) matches on stems so that
"running" finds "run" and "preferences" finds "prefer", and ignores common English words.
Stemming uses the `snowballstemmer` package's 'porter' algorithm (the original Porter stemmer,
which gives the seed's own example "configured" -> "configur"). Only ASCII words are stemmed and
stop-filtered; CJK runs become character bigrams as in `keme.text.tokens.search_terms`, and words of
other scripts pass through unchanged.
"""

from __future__ import annotations

import functools

import snowballstemmer

from keme.text.tokens import search_terms

# A compact English list (the usual function words), plus the fragments that `search_terms` leaves
# when it splits contractions at the apostrophe ("don't" -> "don", "t").
STOP_WORDS: frozenset[str] = frozenset(
    (
        "a",
        "about",
        "above",
        "after",
        "again",
        "against",
        "all",
        "am",
        "an",
        "and",
        "any",
        "are",
        "as",
        "at",
        "be",
        "because",
        "been",
        "before",
        "being",
        "below",
        "between",
        "both",
        "but",
        "by",
        "can",
        "could",
        "did",
        "do",
        "does",
        "doing",
        "down",
        "during",
        "each",
        "few",
        "for",
        "from",
        "further",
        "had",
        "has",
        "have",
        "having",
        "he",
        "her",
        "here",
        "hers",
        "herself",
        "him",
        "himself",
        "his",
        "how",
        "i",
        "if",
        "in",
        "into",
        "is",
        "it",
        "its",
        "itself",
        "just",
        "me",
        "more",
        "most",
        "my",
        "myself",
        "no",
        "nor",
        "not",
        "now",
        "of",
        "off",
        "on",
        "once",
        "only",
        "or",
        "other",
        "our",
        "ours",
        "ourselves",
        "out",
        "over",
        "own",
        "same",
        "she",
        "should",
        "so",
        "some",
        "such",
        "than",
        "that",
        "the",
        "their",
        "theirs",
        "them",
        "themselves",
        "then",
        "there",
        "these",
        "they",
        "this",
        "those",
        "through",
        "to",
        "too",
        "under",
        "until",
        "up",
        "very",
        "was",
        "we",
        "were",
        "what",
        "when",
        "where",
        "which",
        "while",
        "who",
        "whom",
        "why",
        "will",
        "with",
        "would",
        "you",
        "your",
        "yours",
        "yourself",
        "yourselves",
        "s",
        "t",
        "d",
        "ll",
        "m",
        "re",
        "ve",
        "don",
        "didn",
        "doesn",
        "isn",
        "wasn",
        "aren",
        "weren",
        "won",
        "couldn",
        "shouldn",
        "wouldn",
        "hasn",
        "haven",
        "hadn",
    )
)


@functools.cache
def _porter() -> snowballstemmer.stemmer:
    return snowballstemmer.stemmer("porter")


@functools.lru_cache(maxsize=200_000)
def stem(word: str) -> str:
    """Porter stem of one lower-case ASCII word (cached: a memory store stems the same words again and
    again)."""
    return _porter().stemWord(word)


def analyze(text: str) -> list[str]:
    """The terms a text is indexed and searched by, in order, repeats kept (BM25 counts them)."""
    terms: list[str] = []
    for token in search_terms(text):
        if token.isascii():
            if token in STOP_WORDS:
                continue
            token = stem(token)
        terms.append(token)
    return terms
