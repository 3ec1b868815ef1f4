"""One scope's memory on disk: a single SQLite file (facts, skills, write chain) and its key file
next to it. Scopes never share a file, a key or a connection."""

from __future__ import annotations

import os
import shutil
import sqlite3
from dataclasses import dataclass
from datetime import timedelta
from pathlib import Path

from baselines.factmem import crypto
from baselines.factmem.chain import WriteChain
from baselines.factmem.db import connect
from baselines.factmem.facts import FactStore
from baselines.factmem.skills import SkillStore

DB_FILE = "memory.sqlite3"
KEY_FILE = "memory.key"


@dataclass
class ScopeMemory:
    directory: Path
    conn: sqlite3.Connection
    chain: WriteChain
    facts: FactStore
    skills: SkillStore

    @classmethod
    def open(cls, directory: Path, idle_after: timedelta, archive_after: timedelta) -> ScopeMemory:
        """Open (creating if needed) the database and key in `directory`."""
        directory.mkdir(parents=True, exist_ok=True)
        key = crypto.load_or_create_key(directory / KEY_FILE)
        conn = connect(directory / DB_FILE)
        chain = WriteChain(conn)
        return cls(
            directory,
            conn,
            chain,
            FactStore(conn, key, chain),
            SkillStore(conn, chain, idle_after=idle_after, archive_after=archive_after),
        )

    def close(self) -> None:
        self.conn.close()

    def storage_bytes(self) -> int:
        """Bytes of the database file (the key file is a constant 32 bytes and not memory)."""
        return sum(path.stat().st_size for path in self.directory.glob(DB_FILE + "*"))

    def save(self, destination: Path) -> None:
        """A consistent copy of the database (SQLite's online backup) and of the key file (0600)."""
        destination.mkdir(parents=True, exist_ok=True)
        target = destination / DB_FILE
        target.unlink(missing_ok=True)
        with sqlite3.connect(str(target)) as copy:
            self.conn.backup(copy)
        copy.close()
        key_copy = destination / KEY_FILE
        key_copy.unlink(missing_ok=True)
        fd = os.open(key_copy, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        with os.fdopen(fd, "wb") as handle:
            handle.write((self.directory / KEY_FILE).read_bytes())


def install_copy(source: Path, directory: Path) -> None:
    """Replace `directory`'s files with a saved copy (the scope must be closed)."""
    for name in (DB_FILE, KEY_FILE):
        if not (source / name).exists():
            raise FileNotFoundError(source / name)
    if directory.exists():
        shutil.rmtree(directory)
    directory.mkdir(parents=True)
    shutil.copyfile(source / DB_FILE, directory / DB_FILE)
    fd = os.open(directory / KEY_FILE, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    with os.fdopen(fd, "wb") as handle:
        handle.write((source / KEY_FILE).read_bytes())
