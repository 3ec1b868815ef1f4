"""The Memory Bank: semantic memory (≤ 500, LRU), episodic memory (≤ 200, FIFO) and retrieval with injection.

Retrieval follows the seed: BM25F over title ×3 / keywords ×2 / body ×1, then a
hit boost of 1 + min(hits, 20) × 0.02 and ×1.1 for entries created within 7
days of `now` (the replay clock). Injection takes, in order, up to 5 entries of
the app the request names, then 3 positive and 2 negative experiences not of
that app (the seed does not say whether the app's own entries may fill the
other quotas; they may not, so the quotas are exact); each
injected entry's hits grow by one and its lastUsedAt becomes `now`. Those
updates are written back in batches (at `commit()`), keeping a search under the
seed's millisecond budget; adds and deletes are written at once.

Capacity, and the choice the seed leaves open: when an add takes semantic
memory past its limit, the entry with the lowest LRU score
`(lastUsedAt ?? createdAt) + hits × 86_400_000` is evicted (ties: older
createdAt, then id) — but never the entry being added. Scored with the
others, a brand-new entry (no hits, createdAt = now) loses to any entry with a
hit used within the last day, so once the bank is full of used entries every
save would evict itself: the save would return an id for a memory that no
longer exists. An add therefore always keeps what it adds. Episodes are
evicted first in, first out (oldest createdAt), the new one included only if
it is the oldest — FIFO is about age, and an old episode is old however late
it arrives.

Disk and memory hold the same entries: an add writes the new entry and deletes
its victims in one transaction before memory changes, so a failed write
(storage.StorageError) leaves both as they were; opening a database that holds more
than the limits (written by an older version) evicts down to them, on disk too.

Several processes on one file (MCP servers sharing a `--db`): the database is the
authority (`storage.py`). Every write runs in `transaction()`, which takes the
file's write lock and first applies what other processes wrote since (their
saves, deletes, evictions and hits), so limits, evictions and ids are decided
on the whole bank and no acknowledged write is overwritten or forgotten. Ids
come from the database's counter. Reads outside a transaction see this
process's memory as of its last transaction: the harness (the only writer of
its bank) reads that way, the MCP server reads inside one. Uses recorded by
`inject` are kept as pending additions until `commit()` and survive a sync.
"""

from __future__ import annotations

import heapq
import itertools
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path

import numpy as np

from baselines.memory_bank.index import FieldIndex, Weights
from baselines.memory_bank.records import Episode, SemanticEntry, ms
from baselines.memory_bank.storage import SqliteStore, warn_unavailable

SEMANTIC_LIMIT = 500
EPISODIC_LIMIT = 200
HIT_BOOST_PER_HIT = 0.02
HIT_BOOST_CAP = 20
RECENCY_BOOST = 1.1
RECENCY_WINDOW_MS = 7 * 86_400_000
QUOTAS = {"app": 5, "positive": 3, "negative": 2}


@dataclass(frozen=True)
class Scored:
    entry: SemanticEntry
    score: float


class MemoryBank:
    def __init__(
        self,
        store: SqliteStore | None = None,
        weights: Weights = Weights(),
        boosts: bool = True,
        semantic_limit: int = SEMANTIC_LIMIT,
        episodic_limit: int = EPISODIC_LIMIT,
    ):
        self.store = store
        self.boosts = boosts
        self.weights = weights
        self.semantic_limit, self.episodic_limit = semantic_limit, episodic_limit
        self.counter = itertools.count(1)  # ids of a bank without storage; a stored bank's come from its file
        self.pending: dict[str, tuple[int, int | None]] = {}  # uses not yet written: id -> (hits, lastUsedAt)
        self._reset()
        if store is not None:  # rebuilt from storage at start (the transaction's sync loads it)
            with self.transaction():
                self._enforce_limits()

    def _reset(self) -> None:
        """Empty memory and indexes (before a rebuild from storage)."""
        self.semantic: dict[str, SemanticEntry] = {}
        self.episodes: dict[str, Episode] = {}
        self.index = FieldIndex(self.weights)
        # per index slot, for vectorised boosting and quotas
        self.hits = np.zeros(0, dtype=np.int64)
        self.created = np.zeros(0, dtype=np.int64)
        self.negative = np.zeros(0, dtype=bool)
        self.app_code = np.zeros(0, dtype=np.int64)
        self.apps: dict[str, int] = {}
        self.episode_index = FieldIndex(Weights(3.0, 2.0, 1.0))

    available = True  # False for the no-op bank that stands in for unusable storage

    @contextmanager
    def transaction(self) -> Iterator[None]:
        """Hold the database's write lock with memory up to date: what runs inside sees every write
        other processes committed, and none can interleave with it. Nested calls join the outer one."""
        if self.store is None:
            yield
            return
        outer = not self.store.in_transaction
        with self.store.transaction():
            if outer:
                self.sync()
            yield

    def sync(self) -> None:
        """Apply what other processes wrote since this one last looked (or rebuild from the tables)."""
        changes = self.store.changes()
        if changes is None:
            semantic, episodes = self.store.load()
            self._reset()
            for entry in semantic:
                self._index(self._with_pending(entry))
            for episode in episodes:
                self._remember(episode)
            return
        for table, entry_id in dict.fromkeys(changes):
            record = self.store.get(table, entry_id)
            self._forget(entry_id, table)
            if isinstance(record, SemanticEntry):
                self._index(self._with_pending(record))
            elif isinstance(record, Episode):
                self._remember(record)

    def _with_pending(self, entry: SemanticEntry) -> SemanticEntry:
        """A stored entry with this process's uses not yet written added on."""
        if entry.id in self.pending:
            hits, used = self.pending[entry.id]
            entry.hits += hits
            entry.last_used_at = used
        return entry

    def _remember(self, episode: Episode) -> None:
        self.episodes[episode.id] = episode
        self.episode_index.add(episode.id, episode.goal, [], episode.text())

    def _enforce_limits(self) -> None:
        """Evict down to the limits (a database from before they were kept on disk may hold more)."""
        semantic = self._semantic_victims(len(self.semantic) - self.semantic_limit)
        episodic = self._episode_victims(len(self.episodes) - self.episodic_limit)
        if not semantic and not episodic:
            return
        if self.store is not None:
            self.store.write(delete={"semantic": semantic, "episodic": episodic})
        for entry_id in semantic:
            self._forget(entry_id)
        for entry_id in episodic:
            self._forget(entry_id)

    # ---------------------------------------------------------------- writing
    def _index(self, entry: SemanticEntry) -> None:
        self.semantic[entry.id] = entry
        self.index.add(entry.id, entry.title, entry.keywords, entry.content)
        slot = self.index.slot_of[entry.id]
        if slot >= len(self.hits):
            grow = max(64, len(self.hits))
            self.hits = np.concatenate([self.hits, np.zeros(grow, dtype=np.int64)])
            self.created = np.concatenate([self.created, np.zeros(grow, dtype=np.int64)])
            self.negative = np.concatenate([self.negative, np.zeros(grow, dtype=bool)])
            self.app_code = np.concatenate([self.app_code, np.full(grow, -1, dtype=np.int64)])
        self.hits[slot] = entry.hits
        self.created[slot] = entry.created_at
        self.negative[slot] = entry.polarity == "negative"
        self.app_code[slot] = self.apps.setdefault(entry.app, len(self.apps)) if entry.app else -1

    def new_id(self, kind: str) -> str:
        """A fresh id `kind-N`; with storage, allocated by the database, so no other process on the
        file gets it too."""
        if self.store is not None:
            return self.store.allocate(kind)
        return f"{kind}-{next(self.counter)}"

    def _semantic_victims(self, count: int, keep: str | None = None) -> list[str]:
        """The `count` lowest LRU scores (ties: older createdAt, then id), never `keep`."""
        if count <= 0:
            return []
        candidates = (e for e in self.semantic.values() if e.id != keep)
        return [
            e.id
            for e in heapq.nsmallest(count, candidates, key=lambda e: (e.lru_score(), e.created_at, e.id))
        ]

    def _episode_victims(self, count: int) -> list[str]:
        if count <= 0:
            return []
        return [
            e.id for e in heapq.nsmallest(count, self.episodes.values(), key=lambda e: (e.created_at, e.id))
        ]

    def _forget(self, entry_id: str, table: str | None = None) -> None:
        """Drop an entry from memory and its index (the caller has dealt with storage)."""
        if table != "episodic" and self.semantic.pop(entry_id, None) is not None:
            self.index.delete(entry_id)
        elif table != "semantic" and self.episodes.pop(entry_id, None) is not None:
            self.episode_index.delete(entry_id)

    def add_semantic(self, entry: SemanticEntry) -> list[str]:
        """Store an entry; returns the ids evicted by LRU to stay within the limit (never the new entry's)."""
        with self.transaction():
            replacing = entry.id in self.semantic
            victims = self._semantic_victims(
                len(self.semantic) + (not replacing) - self.semantic_limit, keep=entry.id
            )
            if self.store is not None:
                self.store.write(semantic=[entry], delete={"semantic": victims}, replace=replacing)
            for victim in victims:
                self._forget(victim, "semantic")
            if replacing:
                self._forget(entry.id, "semantic")
            self._index(entry)
        return victims

    def add_episode(self, episode: Episode) -> list[str]:
        """Store an episode; returns the ids evicted first-in-first-out (oldest createdAt, the new one
        included)."""
        with self.transaction():
            replacing = episode.id in self.episodes
            incoming = {**self.episodes, episode.id: episode}
            over = len(incoming) - self.episodic_limit
            victims = [
                e.id
                for e in heapq.nsmallest(max(over, 0), incoming.values(), key=lambda e: (e.created_at, e.id))
            ]
            stored = episode.id not in victims
            if self.store is not None:
                self.store.write(
                    episodes=[episode] if stored else [],
                    delete={"episodic": [v for v in victims if v != episode.id or replacing]},
                    replace=replacing,
                )
            if replacing:
                self._forget(episode.id, "episodic")
            for victim in victims:
                self._forget(victim, "episodic")
            if stored:
                self._remember(episode)
        return victims

    def delete(self, entry_id: str) -> bool:
        with self.transaction():
            if entry_id in self.semantic:
                table = "semantic"
            elif entry_id in self.episodes:
                table = "episodic"
            else:
                return False
            if self.store is not None:
                self.store.write(delete={table: [entry_id]})
            self._forget(entry_id, table)
        return True

    def clear(self) -> None:
        with self.transaction():
            if self.store is not None:
                self.store.write(delete={"semantic": list(self.semantic), "episodic": list(self.episodes)})
            for entry_id in list(self.semantic):
                self._forget(entry_id, "semantic")
            for entry_id in list(self.episodes):
                self._forget(entry_id, "episodic")
            self.pending.clear()

    def use(self, entries: list[SemanticEntry], now_ms: int) -> None:
        """Mark entries used (hits + 1, lastUsedAt = now); written at `commit()`."""
        for entry in entries:
            entry.hits += 1
            entry.last_used_at = now_ms
            self.hits[self.index.slot_of[entry.id]] = entry.hits
            hits, _ = self.pending.get(entry.id, (0, None))
            self.pending[entry.id] = (hits + 1, now_ms)

    def commit(self) -> None:
        """Write back pending hit counts and lastUsedAt values."""
        if self.store is not None and self.pending:
            with self.transaction():
                self.store.touch({i: use for i, use in self.pending.items() if i in self.semantic})
                self.pending.clear()
        self.pending.clear()

    # ---------------------------------------------------------------- reading
    def boost(self, entry: SemanticEntry, now_ms: int) -> float:
        """The seed's two boosts for one entry (the vectorised search applies the same formula)."""
        if not self.boosts:
            return 1.0
        factor = 1 + min(entry.hits, HIT_BOOST_CAP) * HIT_BOOST_PER_HIT
        if now_ms - entry.created_at <= RECENCY_WINDOW_MS:
            factor *= RECENCY_BOOST
        return factor

    def _scores(self, query: str, now: datetime) -> tuple[np.ndarray, np.ndarray]:
        """(boosted scores, matching slots) for every slot, vectorised."""
        raw = self.index.scores(self.index.query_terms(query))
        slots = np.flatnonzero(raw > 0)
        if not self.boosts or not len(slots):
            return raw, slots
        size = len(raw)
        factor = 1 + np.minimum(self.hits[:size], HIT_BOOST_CAP) * HIT_BOOST_PER_HIT
        factor = factor * np.where(ms(now) - self.created[:size] <= RECENCY_WINDOW_MS, RECENCY_BOOST, 1.0)
        return raw * factor, slots

    def _top(self, scores: np.ndarray, slots: np.ndarray, limit: int) -> list[Scored]:
        """The best `limit` slots, ties broken by insertion order (as bm25s does)."""
        if not len(slots) or limit <= 0:
            return []
        if len(slots) > limit:
            cut = -np.partition(-scores[slots], limit - 1)[limit - 1]
            slots = slots[scores[slots] >= cut]
        order = slots[np.lexsort((slots, -scores[slots]))][:limit]
        return [Scored(self.semantic[self.index.ids[slot]], float(scores[slot])) for slot in order]

    def search(self, query: str, now: datetime, limit: int = 5) -> list[Scored]:
        """Semantic entries ranked by boosted BM25F (no side effects)."""
        scores, slots = self._scores(query, now)
        return self._top(scores, slots, limit)

    def search_episodes(self, query: str, limit: int = 5) -> list[tuple[Episode, float]]:
        raw = self.episode_index.scores(self.episode_index.query_terms(query))
        order = [slot for slot in np.argsort(-raw, kind="stable") if raw[slot] > 0][:limit]
        return [(self.episodes[self.episode_index.ids[slot]], float(raw[slot])) for slot in order]

    def inject(self, query: str, now: datetime) -> list[Scored]:
        """What goes into the agent's context: app knowledge 5, positive 3, negative 2; marks them used."""
        scores, slots = self._scores(query, now)
        lowered = query.lower()
        named = [code for app, code in self.apps.items() if app.lower() in lowered]
        of_app = np.isin(self.app_code[slots], named) if named else np.zeros(len(slots), dtype=bool)
        negative = self.negative[slots]
        chosen = self._top(scores, slots[of_app], QUOTAS["app"])
        chosen += self._top(scores, slots[~of_app & ~negative], QUOTAS["positive"])
        chosen += self._top(scores, slots[~of_app & negative], QUOTAS["negative"])
        self.use([scored.entry for scored in chosen], ms(now))
        return chosen


class NoOpMemoryBank(MemoryBank):
    """What a bank becomes when its storage cannot be opened: reads are empty, writes vanish.

    That is the seed's degradation for an agent's main flow; `reason` says why, so a caller
    that must not lose writes silently (the MCP server, the harness) can report it instead.
    """

    available = False

    def __init__(self, reason: str = "storage unavailable") -> None:
        super().__init__(store=None)
        self.reason = reason

    def add_semantic(self, entry: SemanticEntry) -> list[str]:
        return []

    def add_episode(self, episode: Episode) -> list[str]:
        return []


def open_bank(path: Path, **options) -> MemoryBank:
    """A bank persisted at `path`, or a no-op bank (with one warning) if the file cannot be used."""
    try:
        return MemoryBank(SqliteStore(path), **options)
    except Exception as exc:  # any storage failure degrades; the caller must never break
        reason = f"{path}: {exc}"
        warn_unavailable(reason)
        return NoOpMemoryBank(reason)
