"""SQLite plumbing shared by the three layers: one connection per scope, nestable transactions,
and replay-clock times stored as integer milliseconds."""

from __future__ import annotations

import itertools
import sqlite3
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import UTC, datetime, timedelta
from pathlib import Path

EPOCH = datetime(1970, 1, 1, tzinfo=UTC)
_savepoints = itertools.count()


def connect(path: Path | str) -> sqlite3.Connection:
    """Autocommit connection (isolation_level None) so `atomic` alone decides transaction bounds."""
    conn = sqlite3.connect(str(path), isolation_level=None, check_same_thread=False)
    conn.execute("PRAGMA foreign_keys = ON")
    conn.execute("PRAGMA synchronous = NORMAL")
    return conn


@contextmanager
def atomic(conn: sqlite3.Connection) -> Iterator[None]:
    """A savepoint: the outermost one is the transaction, inner ones roll back alone on error.

    Lets a fact write (deprecate + insert + chain event) be atomic on its own and a whole ingested
    session commit once.
    """
    name = f"factmem_sp_{next(_savepoints)}"
    conn.execute(f"SAVEPOINT {name}")
    try:
        yield
    except BaseException:
        conn.execute(f"ROLLBACK TO {name}")
        conn.execute(f"RELEASE {name}")
        raise
    conn.execute(f"RELEASE {name}")


def to_millis(moment: datetime) -> int:
    """Integer Unix milliseconds. Naive replay times are read as UTC: the replay clock has no zone,
    and only a consistent reading matters."""
    aware = moment if moment.tzinfo is not None else moment.replace(tzinfo=UTC)
    return (aware - EPOCH) // timedelta(milliseconds=1)


def from_millis(millis: int) -> datetime:
    """Naive UTC datetime, the form the replay clock uses."""
    return (EPOCH + timedelta(milliseconds=millis)).replace(tzinfo=None)
