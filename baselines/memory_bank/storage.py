"""Local-first persistence in one SQLite file, and the no-op stand-in when storage is unavailable.

The seed's iron rules: read failures return empty, write failures are dropped,
and nothing may break the caller; when the store cannot be opened the bank
degrades to a no-op memory with a single warning. Once a store is open, a
failing write raises `StorageError` instead of vanishing: this bank's callers
are a benchmark harness (a dropped write there is a wrong score) and an MCP
server (whose client was told "saved"), and both must be able to say so.
Each write is one transaction, rolled back whole when any part fails.
"""

from __future__ import annotations

import json
import logging
import sqlite3
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from baselines.memory_bank.records import Episode, SemanticEntry
from keme.errors import KemeError

log = logging.getLogger("memory_bank")

SCHEMA = """
CREATE TABLE IF NOT EXISTS semantic (
    id TEXT PRIMARY KEY, title TEXT NOT NULL, content TEXT NOT NULL, keywords TEXT NOT NULL,
    polarity TEXT NOT NULL, app TEXT, hits INTEGER NOT NULL, last_used_at INTEGER,
    created_at INTEGER NOT NULL, message_ids TEXT NOT NULL, session_ids TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS episodic (
    id TEXT PRIMARY KEY, goal TEXT NOT NULL, status TEXT NOT NULL, events TEXT NOT NULL,
    summary TEXT NOT NULL, created_at INTEGER NOT NULL, message_ids TEXT NOT NULL, session_ids TEXT NOT NULL
);
"""
TABLES = ("semantic", "episodic")


class StorageError(KemeError):
    """A write (or a read after opening) failed; the message names the database and the cause."""


class SqliteStore:
    def __init__(self, path: Path):
        self.path = path
        path.parent.mkdir(parents=True, exist_ok=True)
        self.db = sqlite3.connect(str(path))
        self.db.execute("PRAGMA journal_mode=WAL")
        self.db.execute("PRAGMA synchronous=NORMAL")
        self.db.executescript(SCHEMA)
        self.db.commit()

    @contextmanager
    def _guard(self, action: str) -> Iterator[None]:
        try:
            yield
        except sqlite3.Error as exc:
            try:
                self.db.rollback()
            except sqlite3.Error:
                pass
            raise StorageError(
                f"Memory Bank database {self.path}: cannot {action} ({exc}); nothing was changed"
            ) from exc

    def load(self) -> tuple[list[SemanticEntry], list[Episode]]:
        semantic = [
            SemanticEntry(
                id=r[0],
                title=r[1],
                content=r[2],
                keywords=json.loads(r[3]),
                polarity=r[4],
                app=r[5],
                hits=r[6],
                last_used_at=r[7],
                created_at=r[8],
                message_ids=json.loads(r[9]),
                session_ids=json.loads(r[10]),
            )
            for r in self.db.execute("SELECT * FROM semantic ORDER BY created_at, id")
        ]
        episodes = [
            Episode(
                id=r[0],
                goal=r[1],
                status=r[2],
                events=json.loads(r[3]),
                summary=r[4],
                created_at=r[5],
                message_ids=json.loads(r[6]),
                session_ids=json.loads(r[7]),
            )
            for r in self.db.execute("SELECT * FROM episodic ORDER BY created_at, id")
        ]
        return semantic, episodes

    def _put_semantic(self, e: SemanticEntry) -> None:
        self.db.execute(
            "INSERT OR REPLACE INTO semantic VALUES (?,?,?,?,?,?,?,?,?,?,?)",
            (
                e.id,
                e.title,
                e.content,
                json.dumps(e.keywords, ensure_ascii=False),
                e.polarity,
                e.app,
                e.hits,
                e.last_used_at,
                e.created_at,
                json.dumps(e.message_ids),
                json.dumps(e.session_ids),
            ),
        )

    def _put_episode(self, e: Episode) -> None:
        self.db.execute(
            "INSERT OR REPLACE INTO episodic VALUES (?,?,?,?,?,?,?,?)",
            (
                e.id,
                e.goal,
                e.status,
                json.dumps(e.events, ensure_ascii=False, default=str),
                e.summary,
                e.created_at,
                json.dumps(e.message_ids),
                json.dumps(e.session_ids),
            ),
        )

    def write(
        self,
        semantic: list[SemanticEntry] = (),
        episodes: list[Episode] = (),
        delete: dict[str, list[str]] | None = None,
    ) -> None:
        """Put entries and delete ids (table -> ids) in one committed transaction."""
        with self._guard("write"):
            for table, ids in (delete or {}).items():
                if table not in TABLES:
                    raise ValueError(f"unknown table {table!r}")
                self.db.executemany(f"DELETE FROM {table} WHERE id = ?", [(i,) for i in ids])
            for entry in semantic:
                self._put_semantic(entry)
            for episode in episodes:
                self._put_episode(episode)
            self.db.commit()

    def touch(self, entries: list[SemanticEntry]) -> None:
        """Write back hit counts and lastUsedAt values (batched by the bank)."""
        with self._guard("record hits"):
            self.db.executemany(
                "UPDATE semantic SET hits = ?, last_used_at = ? WHERE id = ?",
                [(e.hits, e.last_used_at, e.id) for e in entries],
            )
            self.db.commit()

    def commit(self) -> None:
        with self._guard("commit"):
            self.db.commit()

    def backup(self, target: Path) -> None:
        """A consistent copy of the whole database in one file (SQLite's online backup)."""
        with self._guard(f"copy to {target}"):
            self.db.commit()
            copy = sqlite3.connect(str(target))
            try:
                self.db.backup(copy)
            finally:
                copy.close()

    def size_bytes(self) -> int:
        return sum(p.stat().st_size for p in self.path.parent.glob(self.path.name + "*") if p.exists())

    def close(self) -> None:
        try:
            self.db.commit()
        finally:
            self.db.close()


def warn_unavailable(reason: str) -> None:
    """The single warning a degraded bank gives; its operations stay silent afterwards."""
    log.warning("Memory Bank storage unavailable (%s); continuing without memory", reason)
