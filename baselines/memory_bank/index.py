"""A field-weighted BM25 index (BM25F) with incremental add and delete.

Scoring, per the seed: BM25 with k1 = 1.2, b = 0.75 and field weights title ×3,
keywords ×2 (each keyword one whole term), body ×1. The seed does not say how
the weights combine; this is BM25F: a term's frequency is the weighted sum of
its per-field counts, a document's length the weighted sum of its field
lengths, and the IDF is per document, Lucene-style:
idf(t) = ln(1 + (N − df + 0.5) / (df + 0.5)),
score(d) = Σ_t idf(t) · tf'(k1 + 1) / (tf' + k1 · (1 − b + b · dl' / avgdl')).
With all weights 1 this is exactly BM25 over the concatenated fields, which is
what `bench/memory_bank.py` checks against bm25s (method "lucene").

Postings are kept per term and turned into numpy arrays lazily, so adds and
deletes stay O(terms of the document) and a query is a few vector operations.
"""

from __future__ import annotations

import math
from collections import defaultdict
from dataclasses import dataclass

import numpy as np

from keme.text.tokens import memory_bank_terms

K1 = 1.2
B = 0.75


@dataclass(frozen=True)
class Weights:
    title: float = 3.0
    keywords: float = 2.0
    body: float = 1.0


FLAT = Weights(1.0, 1.0, 1.0)


def keyword_term(keyword: str) -> str:
    """Keywords are indexed whole (not split): one term per keyword, lowercased and space-normalised.

    Titles and bodies are split by the seed's tokenization (`keme.text.tokens.memory_bank_terms`).
    """
    return " ".join(keyword.lower().split())


class FieldIndex:
    def __init__(self, weights: Weights = Weights(), k1: float = K1, b: float = B):
        self.weights, self.k1, self.b = weights, k1, b
        self.slot_of: dict[str, int] = {}
        self.ids: list[str | None] = []
        self.length = np.zeros(64)
        self.terms_of: dict[int, dict[str, float]] = {}
        self.postings: dict[str, dict[int, float]] = defaultdict(dict)
        self.cache: dict[str, tuple[np.ndarray, np.ndarray]] = {}
        self.total_length = 0.0
        self.phrases: dict[str, set[str]] = defaultdict(set)  # first word -> multi-word keyword terms

    def __len__(self) -> int:
        return len(self.slot_of)

    def terms(self, title: str, keywords: list[str], body: str) -> dict[str, float]:
        weighted: dict[str, float] = defaultdict(float)
        for token in memory_bank_terms(title):
            weighted[token] += self.weights.title
        for keyword in keywords:
            term = keyword_term(keyword)
            if term:
                weighted[term] += self.weights.keywords
        for token in memory_bank_terms(body):
            weighted[token] += self.weights.body
        return dict(weighted)

    def add(self, doc_id: str, title: str, keywords: list[str], body: str) -> None:
        if doc_id in self.slot_of:
            self.delete(doc_id)
        slot = len(self.ids)
        self.ids.append(doc_id)
        self.slot_of[doc_id] = slot
        if slot >= len(self.length):
            self.length = np.concatenate([self.length, np.zeros(len(self.length))])
        weighted = self.terms(title, keywords, body)
        dl = (
            self.weights.title * len(memory_bank_terms(title))
            + self.weights.keywords * sum(1 for k in keywords if keyword_term(k))
            + self.weights.body * len(memory_bank_terms(body))
        )
        self.length[slot] = dl
        self.total_length += dl
        self.terms_of[slot] = weighted
        for term, tf in weighted.items():
            self.postings[term][slot] = tf
            self.cache.pop(term, None)
            if " " in term:
                self.phrases[term.split(" ", 1)[0]].add(term)

    def delete(self, doc_id: str) -> bool:
        slot = self.slot_of.pop(doc_id, None)
        if slot is None:
            return False
        self.ids[slot] = None
        self.total_length -= self.length[slot]
        self.length[slot] = 0.0
        for term in self.terms_of.pop(slot):
            posting = self.postings[term]
            posting.pop(slot, None)
            self.cache.pop(term, None)
            if not posting:
                del self.postings[term]
        return True

    def query_terms(self, query: str) -> list[str]:
        """Unique query tokens, plus any multi-word keyword that appears in the query as a phrase."""
        tokens = memory_bank_terms(query)
        found = list(dict.fromkeys(tokens))
        lowered = " " + " ".join(tokens) + " "
        for token in dict.fromkeys(tokens):
            for phrase in self.phrases.get(token, ()):
                if f" {phrase} " in lowered and phrase not in found:
                    found.append(phrase)
        return found

    def _posting(self, term: str) -> tuple[np.ndarray, np.ndarray] | None:
        cached = self.cache.get(term)
        if cached is None:
            posting = self.postings.get(term)
            if not posting:
                return None
            cached = (
                np.fromiter(posting.keys(), dtype=np.int64, count=len(posting)),
                np.fromiter(posting.values(), dtype=np.float64, count=len(posting)),
            )
            self.cache[term] = cached
        return cached

    def idf(self, term: str) -> float:
        n, df = len(self.slot_of), len(self.postings.get(term, ()))
        return math.log(1 + (n - df + 0.5) / (df + 0.5))

    def scores(self, terms: list[str]) -> np.ndarray:
        """BM25F score of every slot (deleted slots score 0)."""
        scores = np.zeros(len(self.ids))
        if not self.slot_of:
            return scores
        avgdl = self.total_length / len(self.slot_of)
        for term in terms:
            posting = self._posting(term)
            if posting is None:
                continue
            slots, tf = posting
            norm = self.k1 * (1 - self.b + self.b * self.length[slots] / avgdl)
            scores[slots] += self.idf(term) * tf * (self.k1 + 1) / (tf + norm)
        return scores
