"""Memory Bank as a harness memory system: one SQLite bank per scope, sessions distilled on ingest.

retrieve(k) returns, in order: the injected entries (app knowledge 5, positive
3, negative 2 — the seed's quotas, which also update hits and lastUsedAt),
then the other semantic entries by score, then matching episodes (whole
sessions), until k hits. Only the injected entries count as used: the extra
ones exist so retrieval can be measured deeper than an agent's context.
"""

from __future__ import annotations

import glob
import shutil
import tempfile
from pathlib import Path

from baselines.memory_bank.bank import MemoryBank, open_bank
from baselines.memory_bank.distill import distill
from baselines.memory_bank.records import from_ms, ms
from baselines.store import fingerprint
from eval.contract import Hit, Query, Retrieval, Usage
from keme.dataset.paths import scope_path
from keme.models import Session


class MemoryBankSystem:
    def __init__(self, root: str | Path | None = None, semantic_limit: int = 500, episodic_limit: int = 200):
        self.name = "memory_bank"
        self.root = Path(root) if root else Path(tempfile.mkdtemp(prefix="memory-bank-"))
        self.limits = {"semantic_limit": semantic_limit, "episodic_limit": episodic_limit}
        self.banks: dict[str, MemoryBank] = {}

    def config_fingerprint(self) -> str:
        return fingerprint(self.name, **self.limits)

    def _path(self, scope: str) -> Path:
        return scope_path(self.root, scope, ".sqlite")

    def bank(self, scope: str) -> MemoryBank:
        if scope not in self.banks:
            self.banks[scope] = open_bank(self._path(scope), **self.limits)
        return self.banks[scope]

    def reset(self, scope: str) -> None:
        self.bank(scope).clear()

    def ingest(self, scope: str, session: Session) -> Usage:
        bank = self.bank(scope)
        episode, entries = distill(session, bank.new_id)
        bank.add_episode(episode)
        for entry in entries:
            bank.add_semantic(entry)
        return Usage()

    def flush(self, scope: str) -> None:
        self.bank(scope).commit()

    def retrieve(self, scope: str, query: Query, k: int) -> Retrieval:
        bank = self.bank(scope)
        now_ms = ms(query.now)
        injected = bank.inject(query.text, query.now)
        seen = {s.entry.id for s in injected}
        rest = [s for s in bank.search(query.text, query.now, limit=k + len(seen)) if s.entry.id not in seen]
        hits = [
            Hit(text=f"{s.entry.title}\n{s.entry.content}", score=s.score, timestamp=from_ms(s.entry.created_at),
                message_ids=s.entry.message_ids, session_ids=s.entry.session_ids)
            for s in injected + rest if s.entry.created_at <= now_ms
        ]
        for episode, score in bank.search_episodes(query.text, limit=k):
            if episode.created_at <= now_ms:
                hits.append(Hit(text=f"{episode.goal}\n{episode.summary}", score=score, timestamp=from_ms(episode.created_at),
                                message_ids=episode.message_ids, session_ids=episode.session_ids))
        return Retrieval(hits=hits[:k])

    def size(self, scope: str) -> int:
        bank = self.bank(scope)
        return len(bank.semantic) + len(bank.episodes)

    def storage_bytes(self, scope: str) -> int:
        bank = self.bank(scope)
        return bank.store.size_bytes() if bank.store is not None else 0

    def save(self, scope: str, path: Path) -> None:
        self.bank(scope).commit()
        path.mkdir(parents=True, exist_ok=True)
        for file in self.root.glob(glob.escape(self._path(scope).name) + "*"):
            shutil.copy2(file, path / file.name)

    def load(self, scope: str, path: Path) -> None:
        bank = self.banks.pop(scope, None)
        if bank is not None and bank.store is not None:
            bank.store.close()
        for file in path.glob(glob.escape(self._path(scope).name) + "*"):
            shutil.copy2(file, self.root / file.name)
        self.bank(scope)

    def close(self) -> None:
        for bank in self.banks.values():
            if bank.store is not None:
                bank.store.close()
