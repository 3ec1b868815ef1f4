"""Flat BM25 over messages or whole sessions, with bm25s (Lucene IDF, k1 1.2, b 0.75).

The index is rebuilt lazily: ingest only appends documents, and the first
retrieval after new documents re-indexes the scope.
"""

from __future__ import annotations

import bm25s
import numpy as np

from baselines.store import Scopes, docs_of, fingerprint
from eval.contract import Query, Retrieval, Usage
from keme.models import Session
from keme.text.tokens import search_terms


class FlatBM25:
    def __init__(self, granularity: str = "message", k1: float = 1.2, b: float = 0.75):
        if granularity not in ("message", "session"):
            raise ValueError(f"granularity must be 'message' or 'session', not {granularity!r}")
        self.name = "bm25" if granularity == "message" else "bm25_session"
        self.granularity, self.k1, self.b = granularity, k1, b
        self.scopes = Scopes()
        self.tokens: dict[str, list[list[str]]] = {}
        self.index: dict[str, tuple[bm25s.BM25, int]] = {}

    def config_fingerprint(self) -> str:
        return fingerprint(self.name, granularity=self.granularity, k1=self.k1, b=self.b)

    def reset(self, scope: str) -> None:
        self.scopes.reset(scope)
        self.tokens[scope] = []
        self.index.pop(scope, None)

    def ingest(self, scope: str, session: Session) -> Usage:
        docs = docs_of(session, self.granularity)
        self.scopes.get(scope).extend(docs)
        self.tokens.setdefault(scope, []).extend(search_terms(d.text) for d in docs)
        return Usage()

    def flush(self, scope: str) -> None:
        self._indexed(scope)

    def _indexed(self, scope: str) -> bm25s.BM25 | None:
        corpus = self.tokens.get(scope, [])
        if not corpus:
            return None
        current = self.index.get(scope)
        if current is None or current[1] != len(corpus):
            model = bm25s.BM25(k1=self.k1, b=self.b, method="lucene")
            model.index([t or ["\u0000"] for t in corpus], show_progress=False)
            self.index[scope] = (model, len(corpus))
        return self.index[scope][0]

    def scores(self, scope: str, text: str) -> np.ndarray:
        """BM25 score of every document of the scope for `text` (zeros for an empty or unknown query)."""
        model = self._indexed(scope)
        if model is None:
            return np.zeros(0)
        vocab = model.vocab_dict
        ids = [vocab[t] for t in search_terms(text) if t in vocab]
        if not ids:
            return np.zeros(len(self.tokens[scope]))
        return model.get_scores([t for t in search_terms(text) if t in vocab])

    def retrieve(self, scope: str, query: Query, k: int) -> Retrieval:
        docs = self.scopes.get(scope)
        scores = self.scores(scope, query.text)
        # only the matching documents are ranked, and only until k of them were said by `now` (a
        # million-token persona holds tens of thousands of messages; a question matches a few thousand)
        matching = np.flatnonzero(scores > 0)
        hits = []
        for i in matching[np.argsort(-scores[matching], kind="stable")]:
            if docs[i].timestamp <= query.now:
                hits.append(docs[i].hit(scores[i]))
                if len(hits) == k:
                    break
        return Retrieval(hits=hits)

    def size(self, scope: str) -> int:
        return self.scopes.size(scope)

    def storage_bytes(self, scope: str) -> int:
        return self.scopes.storage_bytes(scope)
