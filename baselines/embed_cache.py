"""An on-disk cache of embedding vectors, shared by re-runs and by systems running in other processes.

Keyed by (embedder identity, sha256 of the text); the value is the float32 vector's exact bytes with a
checksum. The identity names the weights' hash, backend, precision, library version and a probe of this
machine's kernels, so vectors of another model or precision are never handed out.

One SQLite file in WAL mode: readers never block, writers queue behind a busy timeout, and each write is
INSERT OR IGNORE (the first writer wins; since a vector is a pure function of its text, see
baselines/embedding.py, every writer holds the same bytes anyway). Within a process the cache is used from
any thread (LangMem's store embeds in the worker threads of langchain's executor): one connection opened
with check_same_thread off, and a lock around each use, so that no two threads are ever inside it at once.

Where: KEME_EMBED_CACHE (a folder; `off` disables the cache), else $XDG_CACHE_HOME/keme/embeddings, else
~/.cache/keme/embeddings. Anything wrong with it (unwritable place, a file that is not a database, a row
whose size or checksum is off) is said on stderr and the vectors are computed instead: never a wrong
vector, never a failed run because of the cache.
"""

from __future__ import annotations

import hashlib
import os
import sqlite3
import sys
import threading
from collections.abc import Iterable
from pathlib import Path

import numpy as np

CACHE_ENV = "KEME_EMBED_CACHE"
OFF = {"off", "0", "no", "none", "false", "disabled"}
FILENAME = "vectors.sqlite3"
BUSY_TIMEOUT_MS = 60_000
CHUNK = 500  # keys per SELECT (SQLite's parameter limit is higher; this keeps statements small)


def warn(message: str) -> None:
    print(f"keme: warning: embedding cache: {message}", file=sys.stderr, flush=True)


def cache_dir() -> Path | None:
    """The cache folder, or None when KEME_EMBED_CACHE turns it off."""
    chosen = os.environ.get(CACHE_ENV)
    if chosen is not None and chosen.strip().lower() in OFF | {""}:
        return None
    if chosen:
        return Path(chosen).expanduser()
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "keme" / "embeddings"


def text_key(text: str) -> bytes:
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).digest()


def checksum(identity: str, key: bytes, vector: bytes) -> bytes:
    return hashlib.blake2b(identity.encode() + b"\0" + key + vector, digest_size=8).digest()


class EmbeddingCache:
    """One embedder identity's vectors in one SQLite file; `get` and `put` never raise for its sake."""

    def __init__(self, folder: Path, identity: str, dim: int):
        self.path = folder / FILENAME
        self.identity, self.dim = identity, dim
        self.db: sqlite3.Connection | None = None
        # one connection for every thread of the process (sqlite3 refuses that by default), used under a lock
        self.lock = threading.RLock()
        try:
            folder.mkdir(parents=True, exist_ok=True)
            db = sqlite3.connect(
                self.path, timeout=BUSY_TIMEOUT_MS / 1000, isolation_level=None, check_same_thread=False
            )
            db.execute(f"PRAGMA busy_timeout = {BUSY_TIMEOUT_MS}")
            db.execute("PRAGMA journal_mode = WAL")
            db.execute("PRAGMA synchronous = NORMAL")
            db.execute(
                "CREATE TABLE IF NOT EXISTS vectors (model TEXT NOT NULL, key BLOB NOT NULL, "
                "vector BLOB NOT NULL, checksum BLOB NOT NULL, PRIMARY KEY (model, key)) WITHOUT ROWID"
            )
            self.db = db
        except (OSError, sqlite3.Error) as exc:
            self._disable(f"cannot use {self.path} ({exc}); embedding without a disk cache")

    @property
    def enabled(self) -> bool:
        return self.db is not None

    def _disable(self, message: str) -> None:
        warn(f"{message} (set {CACHE_ENV} to another folder, or {CACHE_ENV}=off)")
        if self.db is not None:
            try:
                self.db.close()
            except sqlite3.Error:
                pass
        self.db = None

    def get(self, texts: Iterable[str]) -> dict[str, np.ndarray]:
        """The cached vectors of those texts that have a sound entry (others are left to compute)."""
        with self.lock:
            return self._get(texts)

    def _get(self, texts: Iterable[str]) -> dict[str, np.ndarray]:
        if self.db is None:
            return {}
        wanted = {text_key(t): t for t in texts}
        keys = list(wanted)
        found: dict[str, np.ndarray] = {}
        bad = 0
        try:
            for start in range(0, len(keys), CHUNK):
                chunk = keys[start : start + CHUNK]
                rows = self.db.execute(
                    f"SELECT key, vector, checksum FROM vectors WHERE model = ? AND key IN "
                    f"({','.join('?' * len(chunk))})",
                    [self.identity, *chunk],
                ).fetchall()
                for key, blob, check in rows:
                    if len(blob) != 4 * self.dim or checksum(self.identity, key, blob) != check:
                        bad += 1
                        continue
                    found[wanted[key]] = np.frombuffer(blob, dtype=np.float32).copy()
        except sqlite3.Error as exc:
            self._disable(f"cannot read {self.path} ({exc}); embedding without a disk cache")
            return {}
        if bad:
            warn(f"{bad} damaged entries in {self.path} (wrong size or checksum): recomputing them")
            self._drop_damaged([k for k in keys if wanted[k] not in found])
        return found

    def _drop_damaged(self, keys: list[bytes]) -> None:
        """Remove the unsound rows among `keys`, so that the recomputed vectors take their place."""
        try:
            self.db.execute("BEGIN IMMEDIATE")
            for key in keys:
                row = self.db.execute(
                    "SELECT vector, checksum FROM vectors WHERE model = ? AND key = ?", (self.identity, key)
                ).fetchone()
                if row and (len(row[0]) != 4 * self.dim or checksum(self.identity, key, row[0]) != row[1]):
                    self.db.execute("DELETE FROM vectors WHERE model = ? AND key = ?", (self.identity, key))
            self.db.execute("COMMIT")
        except sqlite3.Error as exc:
            self._rollback()
            self._disable(f"cannot repair {self.path} ({exc}); embedding without a disk cache")

    def put(self, texts: list[str], vectors: np.ndarray) -> None:
        """Store vectors not yet cached (a row already there, from another writer, is kept)."""
        with self.lock:
            self._put(texts, vectors)

    def _put(self, texts: list[str], vectors: np.ndarray) -> None:
        if self.db is None or not texts:
            return
        rows = []
        for text, vector in zip(texts, np.ascontiguousarray(vectors, dtype=np.float32)):
            key, blob = text_key(text), vector.tobytes()
            rows.append((self.identity, key, blob, checksum(self.identity, key, blob)))
        try:
            self.db.execute("BEGIN IMMEDIATE")
            self.db.executemany(
                "INSERT OR IGNORE INTO vectors (model, key, vector, checksum) VALUES (?, ?, ?, ?)", rows
            )
            self.db.execute("COMMIT")
        except sqlite3.Error as exc:
            self._rollback()
            self._disable(f"cannot write {self.path} ({exc}); embedding without a disk cache")

    def _rollback(self) -> None:
        try:
            if self.db is not None and self.db.in_transaction:
                self.db.execute("ROLLBACK")
        except sqlite3.Error:
            pass

    def close(self) -> None:
        with self.lock:
            if self.db is not None:
                self.db.close()
                self.db = None


def open_cache(identity: str, dim: int) -> EmbeddingCache | None:
    """The disk cache for `identity`, or None when it is turned off or cannot be used (said on stderr)."""
    folder = cache_dir()
    if folder is None:
        return None
    cache = EmbeddingCache(folder, identity, dim)
    return cache if cache.enabled else None
