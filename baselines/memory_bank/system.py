"""Memory Bank as a harness memory system: one SQLite bank per scope, sessions distilled on ingest.

retrieve(k) returns, in order: the injected entries (app knowledge 5, positive
3, negative 2 — the seed's quotas, which also update hits and lastUsedAt),
then the other semantic entries by score, then matching episodes (whole
sessions), until k hits. Only the injected entries count as used: the extra
ones exist so retrieval can be measured deeper than an agent's context.

Without a `root`, the banks live in a temporary directory that this object
created and `close()` removes (the harness always closes; a finalizer covers
an object dropped without it). A bank whose storage cannot be opened is an
error here, not the seed's silent no-op memory: a benchmark must not score a
memory that drops every write.
"""

from __future__ import annotations

import glob
import shutil
import tempfile
import weakref
from pathlib import Path

from baselines.memory_bank.bank import MemoryBank, open_bank
from baselines.memory_bank.distill import distill
from baselines.memory_bank.records import from_ms, ms
from baselines.store import fingerprint
from eval.contract import Hit, Query, Retrieval, Usage
from keme.dataset.paths import scope_path
from keme.errors import KemeError
from keme.models import Session

SNAPSHOT = "bank.sqlite"


class MemoryBankSystem:
    def __init__(self, root: str | Path | None = None, semantic_limit: int = 500, episodic_limit: int = 200):
        self.name = "memory_bank"
        for label, value in (("semantic_limit", semantic_limit), ("episodic_limit", episodic_limit)):
            if not isinstance(value, int) or isinstance(value, bool) or value < 1:
                raise KemeError(f"memory_bank: {label} must be a whole number of at least 1, not {value!r}")
        self.root = Path(root) if root else Path(tempfile.mkdtemp(prefix="memory-bank-"))
        # a temporary root of our own goes with the system
        self._cleanup = weakref.finalize(self, shutil.rmtree, self.root, True) if not root else None
        self.limits = {"semantic_limit": semantic_limit, "episodic_limit": episodic_limit}
        self.banks: dict[str, MemoryBank] = {}

    def config_fingerprint(self) -> str:
        return fingerprint(self.name, **self.limits)

    def _path(self, scope: str) -> Path:
        return scope_path(self.root, scope, ".sqlite")

    def bank(self, scope: str) -> MemoryBank:
        if scope not in self.banks:
            bank = open_bank(self._path(scope), **self.limits)
            if not bank.available:
                raise KemeError(
                    f"memory_bank: cannot open the bank for {scope}: {getattr(bank, 'reason', '')}; "
                    "give it a writable `root` directory"
                )
            self.banks[scope] = bank
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
            Hit(
                text=f"{s.entry.title}\n{s.entry.content}",
                score=s.score,
                timestamp=from_ms(s.entry.created_at),
                message_ids=s.entry.message_ids,
                session_ids=s.entry.session_ids,
            )
            for s in injected + rest
            if s.entry.created_at <= now_ms
        ]
        for episode, score in bank.search_episodes(query.text, limit=k):
            if episode.created_at <= now_ms:
                hits.append(
                    Hit(
                        text=f"{episode.goal}\n{episode.summary}",
                        score=score,
                        timestamp=from_ms(episode.created_at),
                        message_ids=episode.message_ids,
                        session_ids=episode.session_ids,
                    )
                )
        return Retrieval(hits=hits[:k])

    def size(self, scope: str) -> int:
        bank = self.bank(scope)
        return len(bank.semantic) + len(bank.episodes)

    def storage_bytes(self, scope: str) -> int:
        bank = self.bank(scope)
        return bank.store.size_bytes() if bank.store is not None else 0

    def save(self, scope: str, path: Path) -> None:
        """One consistent SQLite file (the online backup API; copying a live WAL database is not)."""
        bank = self.bank(scope)
        bank.commit()
        path.mkdir(parents=True, exist_ok=True)
        target = path / SNAPSHOT
        target.unlink(missing_ok=True)
        bank.store.backup(target)

    def load(self, scope: str, path: Path) -> None:
        snapshot = path / SNAPSHOT
        if not snapshot.is_file():
            raise KemeError(f"memory_bank: no saved bank at {snapshot}")
        self._close(scope)
        target = self._path(scope)
        target.parent.mkdir(parents=True, exist_ok=True)
        for stale in target.parent.glob(glob.escape(target.name) + "*"):
            stale.unlink()
        shutil.copyfile(snapshot, target)
        self.bank(scope)

    def _close(self, scope: str) -> None:
        bank = self.banks.pop(scope, None)
        if bank is not None and bank.store is not None:
            bank.store.close()

    def close(self) -> None:
        """Close every bank; a temporary root this object created is removed with its contents."""
        for scope in list(self.banks):
            self._close(scope)
        if self._cleanup is not None:
            self._cleanup()
