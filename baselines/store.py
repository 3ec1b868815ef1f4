"""A per-scope document store: what most baselines keep, and how they turn it into hits."""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass, field
from datetime import datetime

from baselines.text import message_text, session_text
from eval.contract import Hit
from keme.models import Session


@dataclass(frozen=True)
class Doc:
    text: str
    timestamp: datetime
    message_ids: tuple[str, ...]
    session_ids: tuple[str, ...]

    def hit(self, score: float) -> Hit:
        return Hit(
            text=self.text,
            score=float(score),
            timestamp=self.timestamp,
            message_ids=list(self.message_ids),
            session_ids=list(self.session_ids),
        )


def docs_of(session: Session, granularity: str) -> list[Doc]:
    if granularity == "session":
        if not session.messages:
            return []
        return [
            Doc(session_text(session), session.start, tuple(m.id for m in session.messages), (session.id,))
        ]
    return [Doc(message_text(m), m.timestamp, (m.id,), (session.id,)) for m in session.messages]


@dataclass
class Scopes:
    """Documents per scope; scopes never see each other's data."""

    docs: dict[str, list[Doc]] = field(default_factory=dict)

    def reset(self, scope: str) -> None:
        self.docs[scope] = []

    def get(self, scope: str) -> list[Doc]:
        return self.docs.setdefault(scope, [])

    def size(self, scope: str) -> int:
        return len(self.docs.get(scope, []))

    def storage_bytes(self, scope: str) -> int:
        return sum(len(d.text.encode()) for d in self.docs.get(scope, []))


def fingerprint(name: str, **params: object) -> str:
    blob = json.dumps({"name": name, **params}, sort_keys=True, default=str)
    return hashlib.sha256(blob.encode()).hexdigest()[:16]
