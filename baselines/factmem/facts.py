"""The fact layer (seed §3.1): exact-key, encrypted, versioned facts.

- Lookup is by exact key only, with bound parameters. There is no LIKE, GLOB or prefix query:
  the seed forbids fuzzy lookups because the agent's inputs (speech, OCR, other apps) are
  untrusted and a pattern query is an injection surface.
- Values are AES-GCM encrypted (see crypto.py for where the key lives and what that protects);
  keys, times, status and the opaque `ref` (provenance ids) stay in plaintext so lookups need no
  decryption.
- An update never deletes: the ACTIVE row becomes DEPRECATED (kept for audit) and the new value is
  inserted ACTIVE, so each key has exactly one ACTIVE row (a partial unique index enforces it).
- Every write appends a chain event whose payload is key ‖ ciphertext. The seed hashes the
  plaintext instead; a bare SHA-256 of a short value ("shellfish") is brute-forceable from the
  chain, so this keeps the chain free of plaintext digests while still vouching for the stored bytes.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import datetime
from typing import Literal

from baselines.factmem import crypto
from baselines.factmem.chain import WriteChain, digest
from baselines.factmem.db import atomic, from_millis, to_millis

Status = Literal["ACTIVE", "DEPRECATED"]

SCHEMA = """
CREATE TABLE IF NOT EXISTS facts (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    key TEXT NOT NULL,
    value BLOB NOT NULL,
    status TEXT NOT NULL CHECK (status IN ('ACTIVE', 'DEPRECATED')),
    at INTEGER NOT NULL,
    source TEXT NOT NULL,
    ref TEXT,
    chain_id INTEGER NOT NULL REFERENCES write_chain(id)
);
CREATE UNIQUE INDEX IF NOT EXISTS facts_one_active ON facts(key) WHERE status = 'ACTIVE';
CREATE INDEX IF NOT EXISTS facts_by_key ON facts(key, id);
"""


@dataclass(frozen=True)
class FactVersion:
    id: int
    key: str
    value: str
    status: Status
    at: datetime
    source: str
    ref: str | None
    chain_id: int


def _payload(key: str, blob: bytes) -> bytes:
    return key.encode("utf-8") + b"|" + blob


class FactStore:
    """One scope's facts, sharing the scope's connection and write chain."""

    def __init__(self, conn: sqlite3.Connection, key: bytes, chain: WriteChain):
        self.conn, self._key, self.chain = conn, key, chain
        conn.executescript(SCHEMA)

    def put(
        self,
        key: str,
        value: str,
        at: datetime,
        *,
        source: str = "factmem",
        context: str = "",
        ref: str | None = None,
    ) -> FactVersion:
        """Write `value` as the ACTIVE version of `key`, deprecating the previous one, atomically."""
        if not key:
            raise ValueError("a fact key may not be empty")
        blob = crypto.encrypt(self._key, value, key.encode("utf-8"))
        with atomic(self.conn):
            replaced = self.conn.execute(
                "UPDATE facts SET status = 'DEPRECATED' WHERE key = ? AND status = 'ACTIVE'", (key,)
            ).rowcount
            event = self.chain.append(
                _payload(key, blob), at, source, context, "fact.update" if replaced else "fact.put", key
            )
            cursor = self.conn.execute(
                "INSERT INTO facts (key, value, status, at, source, ref, chain_id)"
                " VALUES (?, ?, 'ACTIVE', ?, ?, ?, ?)",
                (key, blob, to_millis(at), source, ref, event.id),
            )
        return FactVersion(
            int(cursor.lastrowid), key, value, "ACTIVE", from_millis(to_millis(at)), source, ref, event.id
        )

    def get(self, key: str) -> str | None:
        """The ACTIVE value of exactly `key`, or None."""
        row = self.conn.execute(
            "SELECT value FROM facts WHERE key = ? AND status = 'ACTIVE'", (key,)
        ).fetchone()
        return crypto.decrypt(self._key, row[0], key.encode("utf-8")) if row else None

    def has(self, key: str) -> bool:
        return self.conn.execute("SELECT 1 FROM facts WHERE key = ? LIMIT 1", (key,)).fetchone() is not None

    def history(self, key: str) -> list[FactVersion]:
        """Every version of exactly `key`, oldest first, with its status."""
        rows = self.conn.execute(
            "SELECT id, key, value, status, at, source, ref, chain_id FROM facts WHERE key = ? ORDER BY id",
            (key,),
        ).fetchall()
        return [self._version(row) for row in rows]

    def keys(self) -> list[str]:
        return [row[0] for row in self.conn.execute("SELECT DISTINCT key FROM facts ORDER BY key")]

    def versions(self) -> Iterator[FactVersion]:
        """Every row of every key in write order (for full-text indexing, which needs plaintext)."""
        cursor = self.conn.execute(
            "SELECT id, key, value, status, at, source, ref, chain_id FROM facts ORDER BY id"
        )
        for row in cursor:
            yield self._version(row)

    def count(self) -> int:
        return self.conn.execute("SELECT COUNT(*) FROM facts").fetchone()[0]

    def audit(self) -> list[int]:
        """Ids of fact rows whose stored ciphertext no longer matches the payload digest their chain
        event sealed (the chain itself is checked by WriteChain.verify)."""
        rows = self.conn.execute(
            "SELECT f.id, f.key, f.value, w.payload_hash FROM facts f"
            " LEFT JOIN write_chain w ON w.id = f.chain_id"
            " ORDER BY f.id"
        ).fetchall()
        return [fid for fid, key, blob, sealed in rows if sealed != digest(_payload(key, blob))]

    def _version(self, row: tuple) -> FactVersion:
        fid, key, blob, status, at, source, ref, chain_id = row
        value = crypto.decrypt(self._key, blob, key.encode("utf-8"))
        return FactVersion(fid, key, value, status, from_millis(at), source, ref, chain_id)
