"""The write chain: an append-only, hash-linked audit log in SQLite (seed §2.2, §3.3).

Record hash, exactly:

    current_hash = hex(SHA-256(UTF-8(prev_hash | payload_hash | timestamp | source | context_hash)))

i.e. the five fields joined with the character '|' (no spaces), where prev_hash is the previous
record's current_hash ("" for the first record: the genesis link is the empty string, not the seed's
RTC + SecureRandom + uptime seed, so a replay is reproducible), payload_hash and context_hash are
64-character lowercase hex SHA-256 digests, timestamp is the replay-clock time in integer Unix
milliseconds written in decimal, and source is a label that may not contain '|' (so the join is
unambiguous). `kind` and `ref` are descriptive columns outside the hash, as the formula specifies.

Enforcement: Python's sqlite3 has no sha256(), so `install` registers the deterministic Python
function factmem_chain_hash(prev, payload, ts, source, context) with connection.create_function, and
two BEFORE INSERT triggers use it to RAISE(ABORT) on a record that does not link to the last one or
whose current_hash is not its own hash (the seed's CHECK constraints, which SQLite cannot express
with a subquery). A connection without the function cannot insert at all. UPDATEs are not guarded:
they are what tampering looks like, and `verify` finds them.
"""

from __future__ import annotations

import hashlib
import re
import sqlite3
from dataclasses import dataclass
from datetime import datetime

from baselines.factmem.db import atomic, to_millis

HASH_FUNCTION = "factmem_chain_hash"
_HEX64 = re.compile(r"[0-9a-f]{64}")

SCHEMA = f"""
CREATE TABLE IF NOT EXISTS write_chain (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    prev_hash TEXT NOT NULL,
    current_hash TEXT NOT NULL UNIQUE,
    payload_hash TEXT NOT NULL,
    timestamp INTEGER NOT NULL,
    source TEXT NOT NULL,
    context_hash TEXT NOT NULL,
    kind TEXT NOT NULL,
    ref TEXT
);
CREATE TRIGGER IF NOT EXISTS write_chain_links BEFORE INSERT ON write_chain
WHEN NEW.prev_hash IS NOT COALESCE((SELECT current_hash FROM write_chain ORDER BY id DESC LIMIT 1), '')
BEGIN SELECT RAISE(ABORT, 'write_chain: prev_hash is not the current_hash of the last record'); END;
CREATE TRIGGER IF NOT EXISTS write_chain_seals BEFORE INSERT ON write_chain
WHEN NEW.current_hash IS NOT {HASH_FUNCTION}(
    NEW.prev_hash, NEW.payload_hash, NEW.timestamp, NEW.source, NEW.context_hash)
BEGIN SELECT RAISE(ABORT, 'write_chain: current_hash is not the hash of its record'); END;
"""


def digest(data: bytes | str) -> str:
    """Lowercase hex SHA-256 (strings as UTF-8)."""
    return hashlib.sha256(data.encode("utf-8") if isinstance(data, str) else data).hexdigest()


def record_hash(prev_hash: str, payload_hash: str, timestamp: int, source: str, context_hash: str) -> str:
    """The chain formula (see the module docstring)."""
    return digest("|".join((prev_hash, payload_hash, str(timestamp), source, context_hash)))


def _sql_record_hash(
    prev_hash: object, payload_hash: object, timestamp: object, source: object, context_hash: object
) -> str | None:
    """SQL face of `record_hash`: NULL or mistyped fields give NULL, which no current_hash equals."""
    if not (
        isinstance(prev_hash, str)
        and isinstance(payload_hash, str)
        and isinstance(timestamp, int)
        and isinstance(source, str)
        and isinstance(context_hash, str)
    ):
        return None
    return record_hash(prev_hash, payload_hash, timestamp, source, context_hash)


def install(conn: sqlite3.Connection) -> None:
    """Register the hash function on this connection and create the table and its triggers."""
    conn.create_function(HASH_FUNCTION, 5, _sql_record_hash, deterministic=True)
    conn.executescript(SCHEMA)


@dataclass(frozen=True)
class ChainRecord:
    id: int
    prev_hash: str
    current_hash: str
    payload_hash: str
    timestamp: int
    source: str
    context_hash: str
    kind: str
    ref: str | None

    def recomputed(self) -> str:
        return record_hash(self.prev_hash, self.payload_hash, self.timestamp, self.source, self.context_hash)


_COLUMNS = "id, prev_hash, current_hash, payload_hash, timestamp, source, context_hash, kind, ref"


class WriteChain:
    """Append, read, verify and repair the chain of one scope's database."""

    def __init__(self, conn: sqlite3.Connection):
        self.conn = conn
        install(conn)

    def head(self) -> str:
        """current_hash of the last record ("" for an empty chain): what the next record links to."""
        row = self.conn.execute("SELECT current_hash FROM write_chain ORDER BY id DESC LIMIT 1").fetchone()
        return row[0] if row else ""

    def append(
        self, payload: bytes | str, at: datetime, source: str, context: str, kind: str, ref: str | None = None
    ) -> ChainRecord:
        """Seal one event. The chain keeps digests only: SHA-256 of `payload` and of `context`
        (the seed's view-tree snapshot; here the session/message the write came from)."""
        if "|" in source:
            raise ValueError("a chain source may not contain '|' (it separates the hashed fields)")
        payload_hash, context_hash, timestamp = digest(payload), digest(context), to_millis(at)
        with atomic(self.conn):
            prev = self.head()
            current = record_hash(prev, payload_hash, timestamp, source, context_hash)
            cursor = self.conn.execute(
                "INSERT INTO write_chain"
                " (prev_hash, current_hash, payload_hash, timestamp, source, context_hash, kind, ref)"
                " VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                (prev, current, payload_hash, timestamp, source, context_hash, kind, ref),
            )
        return ChainRecord(
            int(cursor.lastrowid), prev, current, payload_hash, timestamp, source, context_hash, kind, ref
        )

    def records(self) -> list[ChainRecord]:
        rows = self.conn.execute(f"SELECT {_COLUMNS} FROM write_chain ORDER BY id").fetchall()
        return [ChainRecord(*row) for row in rows]

    def get(self, record_id: int) -> ChainRecord | None:
        row = self.conn.execute(f"SELECT {_COLUMNS} FROM write_chain WHERE id = ?", (record_id,)).fetchone()
        return ChainRecord(*row) if row else None

    def verify(self) -> int | None:
        """Id of the first record that does not link to its predecessor or whose current_hash is not
        its own hash; None when the whole chain holds.

        A record edited in place is caught at itself; one edited *and* re-hashed is caught at the next
        record's link. Rewriting every later record too is undetectable without an outside copy of
        `head()` — the limit of any unanchored hash chain.
        """
        expected_prev = ""
        for record in self.records():
            if record.prev_hash != expected_prev or record.current_hash != record.recomputed():
                return record.id
            expected_prev = record.current_hash
        return None

    def repair(self, at: datetime, source: str = "factmem.repair") -> int | None:
        """Re-seal the chain from the last good record onward and log the repair as a new record.

        Returns the id of the first broken record (None, and no change, if the chain holds). Repair
        accepts the current field values as they are — it restores verifiability, not the original
        content; the appended "repair" record (ref "from:<id>", payload = the replaced hashes) keeps
        the evidence that records from <id> on were re-sealed.
        """
        first_bad = self.verify()
        if first_bad is None:
            return None
        with atomic(self.conn):
            previous = self.conn.execute(
                "SELECT current_hash FROM write_chain WHERE id < ? ORDER BY id DESC LIMIT 1", (first_bad,)
            ).fetchone()
            prev = previous[0] if previous else ""
            replaced: list[str] = []
            for record in [r for r in self.records() if r.id >= first_bad]:
                current = record_hash(
                    prev, record.payload_hash, record.timestamp, record.source, record.context_hash
                )
                replaced.append(f"{record.id}:{record.current_hash}")
                self.conn.execute(
                    "UPDATE write_chain SET prev_hash = ?, current_hash = ? WHERE id = ?",
                    (prev, current, record.id),
                )
                prev = current
            self.append(
                "\n".join(replaced), at, source, f"repair from {first_bad}", "repair", f"from:{first_bad}"
            )
        return first_bad
