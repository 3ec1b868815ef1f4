"""The memory-system contract: adapters store and retrieve; the harness owns answering, judging and timing.

A system is any object with these methods (structural typing: no base class
to inherit). `scope` isolates users: one scope per persona, never shared.
Times are the replay clock (message and question timestamps), never the wall
clock, so a system that ranks by recency sees the trajectory's "now".
"""

from __future__ import annotations

from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING, Protocol, runtime_checkable

from pydantic import BaseModel, ConfigDict, Field

from keme.models import QAItem, Session

if TYPE_CHECKING:  # eval.reader imports this module
    from eval.reader import Reader


class Usage(BaseModel):
    """What an operation cost, beyond wall time (which the harness measures)."""

    model_config = ConfigDict(extra="forbid")

    llm_calls: int = 0  # replies the LLM endpoint gave
    prompt_tokens: int = 0
    completion_tokens: int = 0
    embedded_texts: int = 0
    llm_unparseable: int = 0  # replies the system's library could not read (it stored nothing from them)
    llm_retries: int = 0  # requests sent again after a failed attempt or an unusable reply

    def __add__(self, other: Usage) -> Usage:
        return Usage(**{k: getattr(self, k) + getattr(other, k) for k in Usage.model_fields})


class Hit(BaseModel):
    """One retrieved memory, traced back to the messages and sessions it came from."""

    model_config = ConfigDict(extra="forbid")

    text: str
    score: float
    timestamp: datetime | None = None
    message_ids: list[str] = Field(default_factory=list)
    session_ids: list[str] = Field(default_factory=list)


class Query(BaseModel):
    """A question as the system sees it. `gold` is filled only for systems registered as oracles."""

    model_config = ConfigDict(extra="forbid")

    text: str
    now: datetime
    question_id: str = ""
    gold: list[str] | None = None


class Retrieval(BaseModel):
    model_config = ConfigDict(extra="forbid")

    hits: list[Hit]
    context: str | None = Field(
        default=None, description="the system's own rendering of its hits, if it has one"
    )
    context_message_ids: list[str] | None = Field(
        default=None,
        description="the messages `context` is rendered from, when they are more than the hits (a "
        "context-window system's whole window; scored as evidence_in_context)",
    )
    usage: Usage = Field(default_factory=Usage)


@runtime_checkable
class MemorySystem(Protocol):
    name: str

    def config_fingerprint(self) -> str: ...

    def reset(self, scope: str) -> None: ...

    def ingest(self, scope: str, session: Session) -> Usage: ...

    def flush(self, scope: str) -> None: ...

    def retrieve(self, scope: str, query: Query, k: int) -> Retrieval: ...


@runtime_checkable
class Persistent(Protocol):
    """Optional: systems that can save and reload a scope (lets a killed run skip re-ingesting)."""

    def save(self, scope: str, path: Path) -> None: ...

    def load(self, scope: str, path: Path) -> None: ...


@runtime_checkable
class Answering(Protocol):
    """Optional: a system that answers without the harness's reader (a blind baseline).

    `reader_for` gets every question of the run (a blind heuristic may use the dataset's statistics) and
    the configured reader (None offline), and returns the reader to answer with, or None for none.
    """

    def reader_for(self, questions: list[QAItem], configured: Reader | None) -> Reader | None: ...


@runtime_checkable
class Closeable(Protocol):
    """Optional: systems that hold more than their scopes (a child process, temporary files, open databases).

    The harness calls `close()` once, when it is done with the system, even after a failure.
    """

    def close(self) -> None: ...


@runtime_checkable
class Sized(Protocol):
    """Optional: how much a scope holds (items, bytes); a resumed run uses it to refuse an empty store."""

    def size(self, scope: str) -> int: ...

    def storage_bytes(self, scope: str) -> int: ...
