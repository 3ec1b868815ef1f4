"""Local-first persistence in one SQLite file, and the no-op stand-in when storage is unavailable.

The seed's iron rules: read failures return empty, write failures are dropped,
and nothing may break the caller; when the store cannot be opened the bank
degrades to a no-op memory with a single warning.
"""

from __future__ import annotations

import json
import logging
import sqlite3
from pathlib import Path

from baselines.memory_bank.records import Episode, SemanticEntry

log = logging.getLogger("memory_bank")

SCHEMA = """
CREATE TABLE IF NOT EXISTS semantic (
    id TEXT PRIMARY KEY, title TEXT NOT NULL, content TEXT NOT NULL, keywords TEXT NOT NULL,
    polarity TEXT NOT NULL, app TEXT, hits INTEGER NOT NULL, last_used_at INTEGER, created_at INTEGER NOT NULL,
    message_ids TEXT NOT NULL, session_ids TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS episodic (
    id TEXT PRIMARY KEY, goal TEXT NOT NULL, status TEXT NOT NULL, events TEXT NOT NULL, summary TEXT NOT NULL,
    created_at INTEGER NOT NULL, message_ids TEXT NOT NULL, session_ids TEXT NOT NULL
);
"""


class SqliteStore:
    def __init__(self, path: Path):
        self.path = path
        path.parent.mkdir(parents=True, exist_ok=True)
        self.db = sqlite3.connect(str(path))
        self.db.execute("PRAGMA journal_mode=WAL")
        self.db.execute("PRAGMA synchronous=NORMAL")
        self.db.executescript(SCHEMA)
        self.db.commit()

    def load(self) -> tuple[list[SemanticEntry], list[Episode]]:
        semantic = [
            SemanticEntry(id=r[0], title=r[1], content=r[2], keywords=json.loads(r[3]), polarity=r[4], app=r[5],
                          hits=r[6], last_used_at=r[7], created_at=r[8], message_ids=json.loads(r[9]),
                          session_ids=json.loads(r[10]))
            for r in self.db.execute("SELECT * FROM semantic ORDER BY created_at, id")
        ]
        episodes = [
            Episode(id=r[0], goal=r[1], status=r[2], events=json.loads(r[3]), summary=r[4], created_at=r[5],
                    message_ids=json.loads(r[6]), session_ids=json.loads(r[7]))
            for r in self.db.execute("SELECT * FROM episodic ORDER BY created_at, id")
        ]
        return semantic, episodes

    def put_semantic(self, e: SemanticEntry) -> None:
        self.db.execute(
            "INSERT OR REPLACE INTO semantic VALUES (?,?,?,?,?,?,?,?,?,?,?)",
            (e.id, e.title, e.content, json.dumps(e.keywords, ensure_ascii=False), e.polarity, e.app, e.hits,
             e.last_used_at, e.created_at, json.dumps(e.message_ids), json.dumps(e.session_ids)),
        )

    def put_episode(self, e: Episode) -> None:
        self.db.execute(
            "INSERT OR REPLACE INTO episodic VALUES (?,?,?,?,?,?,?,?)",
            (e.id, e.goal, e.status, json.dumps(e.events, ensure_ascii=False, default=str), e.summary, e.created_at,
             json.dumps(e.message_ids), json.dumps(e.session_ids)),
        )

    def touch(self, entries: list[SemanticEntry]) -> None:
        self.db.executemany("UPDATE semantic SET hits = ?, last_used_at = ? WHERE id = ?",
                            [(e.hits, e.last_used_at, e.id) for e in entries])

    def delete(self, table: str, ids: list[str]) -> None:
        self.db.executemany(f"DELETE FROM {table} WHERE id = ?", [(i,) for i in ids])

    def clear(self) -> None:
        self.db.execute("DELETE FROM semantic")
        self.db.execute("DELETE FROM episodic")

    def commit(self) -> None:
        self.db.commit()

    def size_bytes(self) -> int:
        return sum(p.stat().st_size for p in self.path.parent.glob(self.path.name + "*") if p.exists())

    def close(self) -> None:
        self.db.commit()
        self.db.close()


def warn_unavailable(reason: str) -> None:
    """The single warning a degraded bank gives; its operations stay silent afterwards."""
    log.warning("Memory Bank storage unavailable (%s); continuing without memory", reason)
