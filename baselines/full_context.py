"""Full context: everything, newest first, cut to a token budget (the long-context baseline).

Hits are the newest k messages; the rendered context is every kept message in
chronological order, as a long-context reader would see them, and
`context_message_ids` lists them all: the harness scores this system by whether
the evidence is in that context (`evidence_in_context`), not by rank.
"""

from __future__ import annotations

from baselines.store import Scopes, docs_of, fingerprint
from eval.contract import Query, Retrieval, Usage
from keme.models import Session
from keme.text.tokens import count_tokens


class FullContext:
    def __init__(self, budget_tokens: int = 16_000):
        self.name = "full_context"
        self.budget = budget_tokens
        self.scopes = Scopes()
        self.costs: dict[str, list[int]] = {}

    def config_fingerprint(self) -> str:
        return fingerprint(self.name, budget_tokens=self.budget)

    def reset(self, scope: str) -> None:
        self.scopes.reset(scope)
        self.costs[scope] = []

    def ingest(self, scope: str, session: Session) -> Usage:
        docs = docs_of(session, "message")
        self.scopes.get(scope).extend(docs)
        self.costs.setdefault(scope, []).extend(count_tokens(self._line(d)) for d in docs)
        return Usage()

    def flush(self, scope: str) -> None:
        pass

    def retrieve(self, scope: str, query: Query, k: int) -> Retrieval:
        docs, costs = self.scopes.get(scope), self.costs.get(scope, [])
        kept, used = [], 0
        for doc, cost in zip(reversed(docs), reversed(costs)):
            if doc.timestamp > query.now:
                continue
            if used + cost > self.budget:
                break
            kept.append(doc)
            used += cost
        context = "\n".join(self._line(d) for d in reversed(kept))
        return Retrieval(
            hits=[d.hit(1.0 / (i + 1)) for i, d in enumerate(kept[:k])],
            context=context,
            context_message_ids=[m for d in kept for m in d.message_ids],
        )

    @staticmethod
    def _line(doc) -> str:
        return f"[{doc.timestamp:%Y-%m-%d %H:%M}] {doc.text}"

    def size(self, scope: str) -> int:
        return self.scopes.size(scope)

    def storage_bytes(self, scope: str) -> int:
        return self.scopes.storage_bytes(scope)
