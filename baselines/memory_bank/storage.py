"""Local-first persistence in one SQLite file, and the no-op stand-in when storage is unavailable.

The seed's iron rules: read failures return empty, write failures are dropped,
and nothing may break the caller; when the store cannot be opened the bank
degrades to a no-op memory with a single warning. Once a store is open, a
failing write raises `StorageError` instead of vanishing: this bank's callers
are a benchmark harness (a dropped write there is a wrong score) and an MCP
server (whose client was told "saved"), and both must be able to say so.

Several processes may share one file (two MCP servers on one `--db`). So the
database, not a process, is the authority: every write is a `BEGIN IMMEDIATE`
transaction (the file's one write lock, waited for up to `BUSY_SECONDS`),
rolled back whole when any part fails; ids are allocated from a counter row in
the same database, never reused, and a new entry is a plain INSERT, so a
collision is an error rather than an overwrite; and each write appends the
rows it touched to a change log, from which another process brings its
in-memory index up to date (`changes`) before it reads or writes.
"""

from __future__ import annotations

import json
import logging
import sqlite3
from collections.abc import Iterable, Iterator
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
CREATE TABLE IF NOT EXISTS counters (kind TEXT PRIMARY KEY, value INTEGER NOT NULL);
CREATE TABLE IF NOT EXISTS changes (
    seq INTEGER PRIMARY KEY AUTOINCREMENT, tbl TEXT NOT NULL, id TEXT NOT NULL
);
"""
TABLES = ("semantic", "episodic")
BUSY_SECONDS = 60.0  # how long a write waits for another process's transaction before it fails
KEEP_CHANGES = 10_000  # change-log rows kept; a process further behind rebuilds from the tables


class StorageError(KemeError):
    """A write (or a read after opening) failed; the message names the database and the cause."""


def _semantic(r: tuple) -> SemanticEntry:
    return SemanticEntry(
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


def _episode(r: tuple) -> Episode:
    return Episode(
        id=r[0],
        goal=r[1],
        status=r[2],
        events=json.loads(r[3]),
        summary=r[4],
        created_at=r[5],
        message_ids=json.loads(r[6]),
        session_ids=json.loads(r[7]),
    )


class SqliteStore:
    def __init__(self, path: Path, busy_seconds: float = BUSY_SECONDS):
        self.path = path
        path.parent.mkdir(parents=True, exist_ok=True)
        # autocommit mode: transactions are the explicit BEGIN IMMEDIATE ... COMMIT of `transaction`
        self.db = sqlite3.connect(str(path), timeout=busy_seconds, isolation_level=None)
        self.db.execute("PRAGMA journal_mode=WAL")
        self.db.execute("PRAGMA synchronous=NORMAL")
        self.db.executescript(SCHEMA)
        self.seen: int | None = None  # the last change-log row this connection's caller has applied
        self._depth = 0

    @contextmanager
    def _guard(self, action: str) -> Iterator[None]:
        try:
            yield
        except sqlite3.Error as exc:
            raise StorageError(
                f"Memory Bank database {self.path}: cannot {action} ({exc}); nothing was changed"
            ) from exc

    @contextmanager
    def transaction(self) -> Iterator[None]:
        """One `BEGIN IMMEDIATE` transaction (nested calls join it), committed whole or rolled back whole.

        A rollback forgets what the caller had applied (`seen` = None), so the caller rebuilds its
        memory from the tables instead of keeping changes the database no longer has.
        """
        if self._depth:
            self._depth += 1
            try:
                yield
            finally:
                self._depth -= 1
            return
        with self._guard("start a write (another process may hold the database's write lock)"):
            self.db.execute("BEGIN IMMEDIATE")
        self._depth = 1
        try:
            start = self._last()
            yield
            with self._guard("commit"):
                if self.seen == start:  # the caller was up to date: our own changes need no replay
                    self.seen = self._last()
                self.db.execute("COMMIT")
        except BaseException:
            self.seen = None
            if self.db.in_transaction:
                try:
                    self.db.execute("ROLLBACK")
                except sqlite3.Error:
                    pass
            raise
        finally:
            self._depth = 0

    @property
    def in_transaction(self) -> bool:
        return self._depth > 0

    def _last(self) -> int:
        return self.db.execute("SELECT coalesce(max(seq), 0) FROM changes").fetchone()[0]

    def _log(self, table: str, ids: Iterable[str]) -> None:
        rows = [(table, i) for i in ids]
        if rows:
            self.db.executemany("INSERT INTO changes (tbl, id) VALUES (?, ?)", rows)
            self.db.execute("DELETE FROM changes WHERE seq <= ?", (self._last() - KEEP_CHANGES,))

    def load(self) -> tuple[list[SemanticEntry], list[Episode]]:
        """Every entry, as of one snapshot; from here on `changes` reports what others write."""
        with self._guard("read"), self.transaction():
            semantic = [
                _semantic(r) for r in self.db.execute("SELECT * FROM semantic ORDER BY created_at, id")
            ]
            episodes = [
                _episode(r) for r in self.db.execute("SELECT * FROM episodic ORDER BY created_at, id")
            ]
            self.seen = self._last()
        return semantic, episodes

    def changes(self) -> list[tuple[str, str]] | None:
        """(table, id) of each row written since the caller last looked, oldest first; None when the
        caller must rebuild from `load` (it never loaded, rolled back, or fell behind the kept log).
        Call it inside `transaction` so nothing slips in between it and the caller's writes."""
        if self.seen is None:
            return None
        with self._guard("read the change log"):
            rows = self.db.execute(
                "SELECT seq, tbl, id FROM changes WHERE seq > ? ORDER BY seq", (self.seen,)
            ).fetchall()
        if rows and rows[0][0] != self.seen + 1:
            return None
        if rows:
            self.seen = rows[-1][0]
        return [(table, entry_id) for _, table, entry_id in rows]

    def get(self, table: str, entry_id: str) -> SemanticEntry | Episode | None:
        """One row as its record, or None if it is not (or no longer) there."""
        if table not in TABLES:
            raise ValueError(f"unknown table {table!r}")
        with self._guard("read"):
            row = self.db.execute(f"SELECT * FROM {table} WHERE id = ?", (entry_id,)).fetchone()
        if row is None:
            return None
        return _semantic(row) if table == "semantic" else _episode(row)

    def allocate(self, kind: str) -> str:
        """A new id `kind-N` from the database's counter: unique across every process on this file,
        and never one already taken (an old database's ids, or one a caller chose)."""
        with self._guard("allocate an id"), self.transaction():
            row = self.db.execute("SELECT value FROM counters WHERE kind = ?", (kind,)).fetchone()
            value = row[0] if row else self._highest(kind)
            while True:
                value += 1
                candidate = f"{kind}-{value}"
                if not any(
                    self.db.execute(f"SELECT 1 FROM {table} WHERE id = ?", (candidate,)).fetchone()
                    for table in TABLES
                ):
                    break
            self.db.execute(
                "INSERT INTO counters VALUES (?, ?) ON CONFLICT(kind) DO UPDATE SET value = excluded.value",
                (kind, value),
            )
        return candidate

    def _highest(self, kind: str) -> int:
        """The largest N of the ids `kind-N` already stored (a database from before the counter)."""
        prefix = f"{kind}-"
        numbers = [
            int(entry_id[len(prefix) :])
            for table in TABLES
            for (entry_id,) in self.db.execute(
                f"SELECT id FROM {table} WHERE substr(id, 1, ?) = ?", (len(prefix), prefix)
            )
            if entry_id[len(prefix) :].isdigit() and len(entry_id) - len(prefix) < 19
        ]
        return max(numbers, default=0)

    def _put_semantic(self, e: SemanticEntry, replace: bool) -> None:
        verb = "INSERT OR REPLACE" if replace else "INSERT"
        self.db.execute(
            f"{verb} INTO semantic VALUES (?,?,?,?,?,?,?,?,?,?,?)",
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

    def _put_episode(self, e: Episode, replace: bool) -> None:
        verb = "INSERT OR REPLACE" if replace else "INSERT"
        self.db.execute(
            f"{verb} INTO episodic VALUES (?,?,?,?,?,?,?,?)",
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
        replace: bool = False,
    ) -> None:
        """Put entries and delete ids (table -> ids) in one transaction.

        An entry is INSERTed: an id already stored is an error, never silently overwritten, unless
        the caller says the entries `replace` the stored ones (an update of a known entry)."""
        with self._guard("write"), self.transaction():
            for table, ids in (delete or {}).items():
                if table not in TABLES:
                    raise ValueError(f"unknown table {table!r}")
                self.db.executemany(f"DELETE FROM {table} WHERE id = ?", [(i,) for i in ids])
                self._log(table, ids)
            for entry in semantic:
                self._put_semantic(entry, replace)
            for episode in episodes:
                self._put_episode(episode, replace)
            self._log("semantic", [e.id for e in semantic])
            self._log("episodic", [e.id for e in episodes])

    def touch(self, uses: dict[str, tuple[int, int | None]]) -> None:
        """Record uses (id -> (hits to add, lastUsedAt)): the hits are added to the stored count, so
        two processes' uses of one entry both count."""
        with self._guard("record hits"), self.transaction():
            self.db.executemany(
                "UPDATE semantic SET hits = hits + ?, last_used_at = ? WHERE id = ?",
                [(hits, used, entry_id) for entry_id, (hits, used) in uses.items()],
            )
            self._log("semantic", uses)

    def backup(self, target: Path) -> None:
        """A consistent copy of the whole database in one file (SQLite's online backup)."""
        with self._guard(f"copy to {target}"):
            copy = sqlite3.connect(str(target))
            try:
                self.db.backup(copy)
            finally:
                copy.close()

    def size_bytes(self) -> int:
        return sum(p.stat().st_size for p in self.path.parent.glob(self.path.name + "*") if p.exists())

    def close(self) -> None:
        self.db.close()


def warn_unavailable(reason: str) -> None:
    """The single warning a degraded bank gives; its operations stay silent afterwards."""
    log.warning("Memory Bank storage unavailable (%s); continuing without memory", reason)
