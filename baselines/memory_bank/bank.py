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
"""

from __future__ import annotations

import heapq
import itertools
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
        self.semantic_limit, self.episodic_limit = semantic_limit, episodic_limit
        self.semantic: dict[str, SemanticEntry] = {}
        self.episodes: dict[str, Episode] = {}
        self.index = FieldIndex(weights)
        # per index slot, for vectorised boosting and quotas
        self.hits = np.zeros(0, dtype=np.int64)
        self.created = np.zeros(0, dtype=np.int64)
        self.negative = np.zeros(0, dtype=bool)
        self.app_code = np.zeros(0, dtype=np.int64)
        self.apps: dict[str, int] = {}
        self.episode_index = FieldIndex(Weights(3.0, 2.0, 1.0))
        self.counter = itertools.count(1)
        if store is not None:  # rebuilt from storage at start
            semantic, episodes = store.load()
            for entry in semantic:
                self._index(entry)
            for episode in episodes:
                self.episodes[episode.id] = episode
                self.episode_index.add(episode.id, episode.goal, [], episode.text())
            numbers = [
                int(i.split("-")[-1])
                for i in list(self.semantic) + list(self.episodes)
                if i.split("-")[-1].isdigit()
            ]
            self.counter = itertools.count(max(numbers, default=0) + 1)
            self._enforce_limits()

    available = True  # False for the no-op bank that stands in for unusable storage

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

    def _forget(self, entry_id: str) -> None:
        """Drop an entry from memory and its index (the caller has dealt with storage)."""
        if self.semantic.pop(entry_id, None) is not None:
            self.index.delete(entry_id)
        elif self.episodes.pop(entry_id, None) is not None:
            self.episode_index.delete(entry_id)

    def add_semantic(self, entry: SemanticEntry) -> list[str]:
        """Store an entry; returns the ids evicted by LRU to stay within the limit (never the new entry's)."""
        replacing = entry.id in self.semantic
        victims = self._semantic_victims(
            len(self.semantic) + (not replacing) - self.semantic_limit, keep=entry.id
        )
        if self.store is not None:
            self.store.write(semantic=[entry], delete={"semantic": victims})
        for victim in victims:
            self._forget(victim)
        if replacing:
            self._forget(entry.id)
        self._index(entry)
        return victims

    def add_episode(self, episode: Episode) -> list[str]:
        """Store an episode; returns the ids evicted first-in-first-out (oldest createdAt, the new one
        included)."""
        if episode.id in self.episodes:
            self._forget(episode.id)
        incoming = {**self.episodes, episode.id: episode}
        over = len(incoming) - self.episodic_limit
        victims = [
            e.id for e in heapq.nsmallest(max(over, 0), incoming.values(), key=lambda e: (e.created_at, e.id))
        ]
        stored = episode.id not in victims
        if self.store is not None:
            self.store.write(
                episodes=[episode] if stored else [],
                delete={"episodic": [v for v in victims if v != episode.id]},
            )
        for victim in victims:
            self._forget(victim)
        if stored:
            self.episodes[episode.id] = episode
            self.episode_index.add(episode.id, episode.goal, [], episode.text())
        return victims

    def delete(self, entry_id: str) -> bool:
        if entry_id in self.semantic:
            table = "semantic"
        elif entry_id in self.episodes:
            table = "episodic"
        else:
            return False
        if self.store is not None:
            self.store.write(delete={table: [entry_id]})
        self._forget(entry_id)
        return True

    def clear(self) -> None:
        if self.store is not None:
            self.store.write(delete={"semantic": list(self.semantic), "episodic": list(self.episodes)})
        for entry_id in list(self.semantic) + list(self.episodes):
            self._forget(entry_id)

    def commit(self) -> None:
        """Write back pending hit counts and lastUsedAt values."""
        if self.store is not None:
            self.store.touch(list(self.semantic.values()))

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
        now_ms = ms(now)
        for scored in chosen:
            scored.entry.hits += 1
            scored.entry.last_used_at = now_ms
            self.hits[self.index.slot_of[scored.entry.id]] = scored.entry.hits
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
