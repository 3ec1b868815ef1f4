"""The two persisted layers' records. Times are epoch milliseconds, as in the seed's LRU formula."""

from __future__ import annotations

from datetime import datetime
from typing import Literal

from pydantic import BaseModel, Field


def ms(moment: datetime) -> int:
    return int(moment.timestamp() * 1000)


def from_ms(value: int) -> datetime:
    return datetime.fromtimestamp(value / 1000)


class SemanticEntry(BaseModel):
    """Long-term experience. `message_ids` / `session_ids` (our addition) trace it to the trajectory."""

    id: str
    title: str
    content: str
    keywords: list[str] = Field(default_factory=list)
    polarity: Literal["positive", "negative"] = "positive"
    app: str | None = None
    hits: int = 0
    last_used_at: int | None = None
    created_at: int
    message_ids: list[str] = Field(default_factory=list)
    session_ids: list[str] = Field(default_factory=list)

    def lru_score(self) -> int:
        """The seed's eviction score: (lastUsedAt ?? createdAt) + hits × 86_400_000; lowest is evicted."""
        return (
            self.last_used_at if self.last_used_at is not None else self.created_at
        ) + self.hits * 86_400_000


class Episode(BaseModel):
    """One task (here: one session) with its event stream and the working-memory snapshot."""

    id: str
    goal: str
    status: str = "completed"
    events: list[dict] = Field(default_factory=list)
    summary: str = ""
    created_at: int
    message_ids: list[str] = Field(default_factory=list)
    session_ids: list[str] = Field(default_factory=list)

    def text(self) -> str:
        return self.summary + "\n" + "\n".join(str(e.get("text", "")) for e in self.events)
