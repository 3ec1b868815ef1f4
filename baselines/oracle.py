"""Oracle: returns exactly the gold evidence. An upper bound for readers; never publishable as a memory
system."""

from __future__ import annotations

from baselines.store import Scopes, docs_of, fingerprint
from eval.contract import Query, Retrieval, Usage
from keme.models import Session


class Oracle:
    def __init__(self) -> None:
        self.name = "oracle"
        self.scopes = Scopes()

    def config_fingerprint(self) -> str:
        return fingerprint(self.name)

    def reset(self, scope: str) -> None:
        self.scopes.reset(scope)

    def ingest(self, scope: str, session: Session) -> Usage:
        self.scopes.get(scope).extend(docs_of(session, "message"))
        return Usage()

    def flush(self, scope: str) -> None:
        pass

    def retrieve(self, scope: str, query: Query, k: int) -> Retrieval:
        gold = set(query.gold or [])
        hits = [d.hit(1.0) for d in self.scopes.get(scope) if gold.intersection(d.message_ids)]
        return Retrieval(hits=hits[:k])

    def size(self, scope: str) -> int:
        return self.scopes.size(scope)

    def storage_bytes(self, scope: str) -> int:
        return self.scopes.storage_bytes(scope)
