"""Hybrid: reciprocal rank fusion (RRF, k = 60) of flat BM25 and dense retrieval over the same messages."""

from __future__ import annotations

from baselines.bm25 import FlatBM25
from baselines.dense import Dense, Embedder
from baselines.store import fingerprint
from eval.contract import Query, Retrieval, Usage
from keme.models import Session


class Hybrid:
    def __init__(self, embedder: Embedder | None = None, rrf_k: int = 60, depth: int = 100):
        self.name = "hybrid"
        self.lexical = FlatBM25("message")
        self.dense = Dense(embedder)
        self.rrf_k, self.depth = rrf_k, depth

    def config_fingerprint(self) -> str:
        return fingerprint(
            self.name,
            bm25=self.lexical.config_fingerprint(),
            dense=self.dense.config_fingerprint(),
            rrf_k=self.rrf_k,
            depth=self.depth,
        )

    def reset(self, scope: str) -> None:
        self.lexical.reset(scope)
        self.dense.reset(scope)

    def ingest(self, scope: str, session: Session) -> Usage:
        self.lexical.ingest(scope, session)
        return self.dense.ingest(scope, session)

    def flush(self, scope: str) -> None:
        self.lexical.flush(scope)
        self.dense.flush(scope)

    def retrieve(self, scope: str, query: Query, k: int) -> Retrieval:
        depth = max(k, self.depth)
        runs = [self.lexical.retrieve(scope, query, depth), self.dense.retrieve(scope, query, depth)]
        fused: dict[str, float] = {}
        hits = {}
        for run in runs:
            for rank, hit in enumerate(run.hits, start=1):
                key = hit.message_ids[0]
                fused[key] = fused.get(key, 0.0) + 1.0 / (self.rrf_k + rank)
                hits[key] = hit
        order = sorted(fused, key=lambda key: (-fused[key], key))[:k]
        return Retrieval(
            hits=[hits[key].model_copy(update={"score": fused[key]}) for key in order], usage=runs[1].usage
        )

    def size(self, scope: str) -> int:
        return self.lexical.size(scope)

    def storage_bytes(self, scope: str) -> int:
        return (
            self.lexical.storage_bytes(scope)
            + self.dense.storage_bytes(scope)
            - self.dense.scopes.storage_bytes(scope)
        )
