"""From a question to facts: exact keys derived from its words and dates, and a BM25 fallback.

Exact keys, in this order:
1. dated record keys: every date written in the question (keme.text.dates.dates_in: "March 4",
   "3月4日", "2026-03-04", "3/4"; the year defaults to the question's year) × every record kind its
   words ask about (lexicon.APP_WORDS: pay/付/花 -> bill …). A date with no kind word asks about that
   day in general: every known kind and the day's "said" notes. The caller probes each base key and
   its ":2", ":3" … suffixes by exact lookup (never a prefix query).
2. attribute keys: the persona attributes the question names (lexicon.ATTRIBUTES). No first-person or
   statement test here: a question is meant to name what it asks about.

The BM25 fallback (Lucene IDF, k1 1.2, b 0.75 by default, bm25s like baselines/bm25.py) runs over the
plaintext of every fact version. That plaintext index lives in memory only and is rebuilt from the
encrypted store when the store changes or is reloaded; it never touches disk.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

import bm25s
import numpy as np

from baselines.factmem import lexicon
from keme.text.dates import dates_in
from keme.text.tokens import search_terms


@dataclass(frozen=True)
class KeyProbe:
    key: str
    dated: bool  # probe key, key:2, key:3 … (record kinds); else the key alone (attributes)


def query_keys(text: str, year: int) -> list[KeyProbe]:
    """Exact keys a question asks about, most specific first, without duplicates."""
    days = list(dict.fromkeys(dates_in(text, year)))
    kinds = lexicon.app_kinds_named(text) or [*dict.fromkeys(lexicon.APP_KINDS.values()), lexicon.SAID]
    probes = [KeyProbe(f"{kind}:{day.isoformat()}", True) for day in days for kind in kinds]
    probes += [KeyProbe(key, False) for key in lexicon.attribute_keys(text)]
    return list(dict.fromkeys(probes))


@dataclass(frozen=True)
class FactDoc:
    fact_id: int
    key: str
    text: str
    at: datetime
    ref: str | None


class FactIndex:
    """BM25 over fact values; `scores` gives one score per doc, in `docs` order."""

    def __init__(self, docs: list[FactDoc], k1: float = 1.2, b: float = 0.75):
        self.docs = docs
        self.model: bm25s.BM25 | None = None
        if docs:
            self.model = bm25s.BM25(k1=k1, b=b, method="lucene")
            self.model.index([search_terms(d.text) or ["\u0000"] for d in docs], show_progress=False)

    def scores(self, text: str) -> np.ndarray:
        if self.model is None:
            return np.zeros(0)
        tokens = [t for t in search_terms(text) if t in self.model.vocab_dict]
        if not tokens:
            return np.zeros(len(self.docs))
        return np.asarray(self.model.get_scores(tokens), dtype=float)
