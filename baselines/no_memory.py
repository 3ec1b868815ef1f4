"""No memory: retrieves nothing, so its score is what a question can be answered without remembering.

A blind baseline belongs on every leaderboard: a memory system is only worth what it adds over it.
With a reader configured, `no_memory` is the reader alone (question and options, no memories). With
none (the offline default), it answers by a structural heuristic from `keme.qa.blind`: choice items by
the option's position, value or length, open items by abstaining or not. `strategy="best"` takes the
heuristic that scores highest on this run's choice items (an upper bound of what structure alone
gives away); `use_reader=False` answers by the heuristic even when a reader is configured (the
always-abstain row).
"""

from __future__ import annotations

from typing import Any

from baselines.store import fingerprint
from eval.contract import Query, Retrieval, Usage
from keme.errors import KemeError
from keme.models import QAItem, Session
from keme.qa.blind import CHOICE_STRATEGIES, STRATEGIES, blind_answer, blind_scores, blind_stats

BEST = "best"


class BlindReader:
    """Answers every question by one blind strategy; `name` says which (it goes into the reports)."""

    def __init__(self, strategy: str, questions: list[QAItem]):
        self.strategy = strategy
        self.name = f"blind:{strategy}"
        self.stats = blind_stats(questions)

    def answer(self, question: QAItem, context: str) -> tuple[str, Usage]:
        return blind_answer(question, self.strategy, self.stats), Usage()


def best_strategy(questions: list[QAItem]) -> str:
    """The choice heuristic with the highest accuracy on the run's choice items (the first on a tie)."""
    scores = blind_scores(questions)
    return max(CHOICE_STRATEGIES, key=lambda s: scores.get(s, {}).get("accuracy") or 0.0)


class NoMemory:
    def __init__(self, strategy: str = BEST, use_reader: bool = True):
        if strategy != BEST and strategy not in STRATEGIES:
            raise KemeError(
                f"no_memory: unknown strategy {strategy!r}; known: {BEST}, {', '.join(STRATEGIES)}"
            )
        self.name = "no_memory"
        self.strategy = strategy
        self.use_reader = use_reader

    def config_fingerprint(self) -> str:
        return fingerprint(self.name, strategy=self.strategy, use_reader=self.use_reader)

    def reset(self, scope: str) -> None:
        pass

    def ingest(self, scope: str, session: Session) -> Usage:
        return Usage()

    def flush(self, scope: str) -> None:
        pass

    def retrieve(self, scope: str, query: Query, k: int) -> Retrieval:
        return Retrieval(hits=[], context="", context_message_ids=[])

    def reader_for(self, questions: list[QAItem], configured: Any) -> Any:  # eval.reader.Reader | None
        """The configured reader alone when there is one (and it may be used), else a blind heuristic."""
        if configured is not None and self.use_reader:
            return configured
        strategy = best_strategy(questions) if self.strategy == BEST else self.strategy
        return BlindReader(strategy, questions)
