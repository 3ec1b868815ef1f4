"""The skill layer (seed §3.2): procedures stored compressed, loaded on demand, forgotten when idle.

A skill is the seed's four elements — trigger (regex), context (required context features), steps,
version (semver). Storage and lifecycle, all on the replay clock:

- stored: the whole skill as zlib-compressed JSON (the seed uses LZ4 + mmap; zlib is in the standard
  library). name, version, trigger and context stay as plain columns, so the catalogue is queryable and
  a request can be matched without decompressing anything; context sits there too because it must be
  checked *before* loading.
- loaded: `match` decompresses a skill into the in-memory cache when its trigger matches the request
  and every required context feature is present (a chain "skill.load" event per cache miss; a cache
  hit is not a write). Only the highest matching version of each name is used.
- unloaded: a cached skill idle for `idle_after` (default 30 min — the seed gives no figure; roughly
  one conversation) is dropped from the cache by `sweep`; its row stays.
- archived: a skill unused for `archive_after` (30 days, the seed's figure) since its last use — or its
  creation if never used — is marked ARCHIVED (the seed moves it to archive/; here a status) with a
  chain "skill.archive" event; archived skills are never matched until `restore`d.
"""

from __future__ import annotations

import json
import re
import sqlite3
import zlib
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Any, Literal

from baselines.factmem.chain import WriteChain
from baselines.factmem.db import atomic, from_millis, to_millis

SkillStatus = Literal["STORED", "ARCHIVED"]
_SEMVER = re.compile(r"v?(0|[1-9]\d*)\.(0|[1-9]\d*)\.(0|[1-9]\d*)")

SCHEMA = """
CREATE TABLE IF NOT EXISTS skills (
    name TEXT NOT NULL,
    version TEXT NOT NULL,
    trigger TEXT NOT NULL,
    context TEXT NOT NULL,
    body BLOB NOT NULL,
    raw_bytes INTEGER NOT NULL,
    status TEXT NOT NULL CHECK (status IN ('STORED', 'ARCHIVED')),
    created INTEGER NOT NULL,
    last_used INTEGER,
    ref TEXT,
    PRIMARY KEY (name, version)
);
"""


def parse_version(version: str) -> tuple[int, int, int]:
    """MAJOR.MINOR.PATCH with an optional leading 'v' (the seed writes v2.1.0); nothing else."""
    match = _SEMVER.fullmatch(version)
    if match is None:
        raise ValueError(f"not a semantic version: {version!r}")
    return int(match.group(1)), int(match.group(2)), int(match.group(3))


@dataclass(frozen=True)
class Skill:
    name: str
    trigger: str
    context: tuple[str, ...]
    steps: tuple[Any, ...]  # JSON values: the seed's {action, x, y} dicts, or plain instructions
    version: str = "1.0.0"

    def __post_init__(self) -> None:
        parse_version(self.version)
        re.compile(self.trigger)

    def to_json(self) -> str:
        return json.dumps(
            {
                "name": self.name,
                "trigger": self.trigger,
                "context": list(self.context),
                "steps": list(self.steps),
                "version": self.version,
            },
            ensure_ascii=False,
            separators=(",", ":"),
        )

    @staticmethod
    def from_json(text: str) -> Skill:
        data = json.loads(text)
        return Skill(
            data["name"], data["trigger"], tuple(data["context"]), tuple(data["steps"]), data["version"]
        )


@dataclass(frozen=True)
class SkillMeta:
    """What stays queryable while a skill's body is not loaded."""

    name: str
    version: str
    trigger: str
    context: tuple[str, ...]
    status: SkillStatus
    created: datetime
    last_used: datetime | None
    stored_bytes: int
    raw_bytes: int
    ref: str | None

    @property
    def last_activity(self) -> datetime:
        return self.last_used or self.created


_META = "name, version, trigger, context, status, created, last_used, length(body), raw_bytes, ref"


def _meta(row: tuple) -> SkillMeta:
    name, version, trigger, context, status, created, last_used, stored, raw, ref = row
    return SkillMeta(
        name,
        version,
        trigger,
        tuple(json.loads(context)),
        status,
        from_millis(created),
        from_millis(last_used) if last_used is not None else None,
        stored,
        raw,
        ref,
    )


@dataclass
class SkillStore:
    conn: sqlite3.Connection
    chain: WriteChain
    idle_after: timedelta = timedelta(minutes=30)
    archive_after: timedelta = timedelta(days=30)
    source: str = "factmem.skills"
    _cache: dict[tuple[str, str], tuple[Skill, datetime]] = field(
        default_factory=dict, init=False, repr=False
    )

    def __post_init__(self) -> None:
        self.conn.executescript(SCHEMA)

    # -- catalogue
    def add(self, skill: Skill, at: datetime, *, context: str = "", ref: str | None = None) -> SkillMeta:
        """Store a new (name, version); a version is immutable once stored."""
        raw = skill.to_json().encode("utf-8")
        body = zlib.compress(raw, 9)
        with atomic(self.conn):
            try:
                self.conn.execute(
                    "INSERT INTO skills"
                    " (name, version, trigger, context, body, raw_bytes, status, created, ref)"
                    " VALUES (?, ?, ?, ?, ?, ?, 'STORED', ?, ?)",
                    (
                        skill.name,
                        skill.version,
                        skill.trigger,
                        json.dumps(list(skill.context), ensure_ascii=False),
                        body,
                        len(raw),
                        to_millis(at),
                        ref,
                    ),
                )
            except sqlite3.IntegrityError as error:
                raise ValueError(f"skill {skill.name}@{skill.version} already exists") from error
            self.chain.append(
                body,
                at,
                self.source,
                context or f"{skill.name}@{skill.version}",
                "skill.add",
                f"{skill.name}@{skill.version}",
            )
        return self.meta(skill.name, skill.version)

    def catalog(self) -> list[SkillMeta]:
        return [
            _meta(row)
            for row in self.conn.execute(f"SELECT {_META} FROM skills ORDER BY created, name, version")
        ]

    def meta(self, name: str, version: str) -> SkillMeta:
        row = self.conn.execute(
            f"SELECT {_META} FROM skills WHERE name = ? AND version = ?", (name, version)
        ).fetchone()
        if row is None:
            raise KeyError(f"{name}@{version}")
        return _meta(row)

    def next_version(self, name: str) -> str:
        """1.0.0 for a new name, else the highest stored version with its patch number bumped."""
        versions = [
            parse_version(v)
            for (v,) in self.conn.execute("SELECT version FROM skills WHERE name = ?", (name,))
        ]
        if not versions:
            return "1.0.0"
        major, minor, patch = max(versions)
        return f"{major}.{minor}.{patch + 1}"

    def count(self) -> int:
        return self.conn.execute("SELECT COUNT(*) FROM skills").fetchone()[0]

    # -- lifecycle
    def loaded(self) -> set[tuple[str, str]]:
        return set(self._cache)

    def match(self, request: str, features: set[str] | frozenset[str], now: datetime) -> list[Skill]:
        """Skills whose trigger matches `request` and whose context ⊆ `features`, loaded on demand.

        Sweeps first, so idle skills are unloaded and stale ones archived as of `now`; skills created
        after `now` do not exist yet. Using a skill sets its last use to `now`.
        """
        self.sweep(now)
        best: dict[str, SkillMeta] = {}
        for meta in self.catalog():
            if meta.status != "STORED" or meta.created > now or not set(meta.context) <= set(features):
                continue
            if re.search(meta.trigger, request) is None:
                continue
            if meta.name not in best or parse_version(meta.version) > parse_version(best[meta.name].version):
                best[meta.name] = meta
        used = [self._use(meta, now) for meta in best.values()]
        return used

    def sweep(self, now: datetime) -> None:
        """Unload skills idle for `idle_after`; archive those unused for `archive_after`."""
        for key, (_, last_access) in list(self._cache.items()):
            if now - last_access >= self.idle_after:
                del self._cache[key]
        cutoff = to_millis(now - self.archive_after)
        stale = self.conn.execute(
            "SELECT name, version FROM skills WHERE status = 'STORED' AND COALESCE(last_used, created) <= ?",
            (cutoff,),
        ).fetchall()
        for name, version in stale:
            with atomic(self.conn):
                self.conn.execute(
                    "UPDATE skills SET status = 'ARCHIVED' WHERE name = ? AND version = ?", (name, version)
                )
                self.chain.append(
                    f"archive|{name}|{version}",
                    now,
                    self.source,
                    f"{name}@{version}",
                    "skill.archive",
                    f"{name}@{version}",
                )
            self._cache.pop((name, version), None)

    def restore(self, name: str, version: str, at: datetime) -> None:
        """Bring an archived skill back; its idle time restarts at `at`."""
        with atomic(self.conn):
            changed = self.conn.execute(
                "UPDATE skills SET status = 'STORED', last_used = ?"
                " WHERE name = ? AND version = ? AND status = 'ARCHIVED'",
                (to_millis(at), name, version),
            ).rowcount
            if not changed:
                raise KeyError(f"no archived skill {name}@{version}")
            self.chain.append(
                f"restore|{name}|{version}",
                at,
                self.source,
                f"{name}@{version}",
                "skill.restore",
                f"{name}@{version}",
            )

    def _use(self, meta: SkillMeta, now: datetime) -> Skill:
        key = (meta.name, meta.version)
        with atomic(self.conn):
            if key in self._cache:
                skill = self._cache[key][0]
            else:
                (body,) = self.conn.execute(
                    "SELECT body FROM skills WHERE name = ? AND version = ?", key
                ).fetchone()
                skill = Skill.from_json(zlib.decompress(body).decode("utf-8"))
                self.chain.append(
                    body,
                    now,
                    self.source,
                    f"{meta.name}@{meta.version}",
                    "skill.load",
                    f"{meta.name}@{meta.version}",
                )
            self.conn.execute(
                "UPDATE skills SET last_used = MAX(COALESCE(last_used, 0), ?) WHERE name = ? AND version = ?",
                (to_millis(now), *key),
            )
        previous = self._cache.get(key)
        self._cache[key] = (skill, max(now, previous[1]) if previous else now)
        return skill
