"""Recency: the last N sessions, most recent first. The floor any memory should beat."""

from __future__ import annotations

from baselines.store import Scopes, docs_of, fingerprint
from eval.contract import Query, Retrieval, Usage
from keme.models import Session


class Recency:
    def __init__(self, sessions: int = 10):
        self.name = "recency"
        self.sessions = sessions
        self.scopes = Scopes()

    def config_fingerprint(self) -> str:
        return fingerprint(self.name, sessions=self.sessions)

    def reset(self, scope: str) -> None:
        self.scopes.reset(scope)

    def ingest(self, scope: str, session: Session) -> Usage:
        self.scopes.get(scope).extend(docs_of(session, "session"))
        return Usage()

    def flush(self, scope: str) -> None:
        pass

    def retrieve(self, scope: str, query: Query, k: int) -> Retrieval:
        docs = [d for d in self.scopes.get(scope) if d.timestamp <= query.now]
        recent = docs[::-1][: min(k, self.sessions)]
        return Retrieval(hits=[d.hit(1.0 / (i + 1)) for i, d in enumerate(recent)])

    def size(self, scope: str) -> int:
        return self.scopes.size(scope)

    def storage_bytes(self, scope: str) -> int:
        return self.scopes.storage_bytes(scope)
