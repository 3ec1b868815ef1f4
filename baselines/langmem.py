"""LangMem (the `langmem` library) as a memory system: its memory store manager over each session, on
langgraph's `InMemoryStore` with a MiniLM embedding index, one namespace per scope.

What is LangMem's own: `create_memory_store_manager` (it searches the scope's memories relevant to the
session, then its memory manager — trustcall tool calls — inserts or updates memories with its default
instructions), the store's semantic search. What is ours: the chat model is an OpenAI-compatible endpoint
through langchain-openai's `ChatOpenAI` (default: the shipped SmolLM2 behind llama.cpp's server,
baselines.field_llm), the embedder is the shipped MiniLM (the store embeds in the threads of langchain's
executor: calls are serialized, and the vector cache works from any thread), and a side map traces each
memory to the messages of the sessions that wrote or updated it (LangMem's values hold only the content).

For the local model the request names the tool to call (llama.cpp does not choose tools by itself), and
names the insert tool (`Memory`): once a scope has memories, trustcall's first tool is `PatchDoc`, whose
`json_doc_id` a 135M model cannot know; named, it patched ids that do not exist ("Could not find existing
schema", once per session) and nothing after the first session was stored. Its string arguments are bounded
to fit `max_tokens`.

A reply LangMem cannot read (no tool call, or arguments that are not JSON: langchain files them as invalid
tool calls, which trustcall ignores) is counted (`llm_unparseable`); trustcall asks again, up to its three
attempts, only after arguments that fail its schema (`PatchFunctionErrors`), and those requests are counted
as retries (`llm_retries`), beside the SDK's own retries after a failed attempt.
"""

from __future__ import annotations

import logging
import os
import threading
import warnings
from dataclasses import dataclass, field
from datetime import datetime
from importlib.metadata import PackageNotFoundError, version
from typing import Any

from baselines.dense import shared_minilm
from baselines.field_llm import (
    BUDGET_S,
    DEADLINE_S,
    MAX_RETRIES,
    Endpoint,
    LocalModel,
    Replies,
    check_limits,
    explain,
    local_dialect,
    open_endpoint,
    reply_message,
    since,
)
from baselines.store import fingerprint
from baselines.text import message_text
from eval.contract import Hit, Query, Retrieval, Usage
from keme.errors import KemeError
from keme.models import Session

EMBEDDING_DIMS = 384
NAMESPACE = "memories"
EVERYTHING = 1_000_000  # a limit above any scope's size (InMemoryStore lists by search)
# trustcall's tools that a forced choice skips: patching or removing needs an id the tiny model cannot know
NOT_FORCED = ("PatchDoc", "RemoveDoc")
REPAIR_TOOL = "PatchFunctionErrors"  # trustcall's request to fix arguments that failed validation
ARGUMENT_TOKENS = 40  # a tool call's own braces and keys, beside its string arguments
MAX_MEMORY_CHARS = 400


def tool_names(request: dict[str, Any]) -> list[str]:
    return [(t.get("function") or {}).get("name", "") for t in request.get("tools") or []]


def langmem_reads(request: dict[str, Any], reply: dict[str, Any]) -> bool:
    """Whether LangMem gets a tool call out of a reply: a request with tools needs at least one call, and
    each call's arguments must be JSON (langchain's own parser, as langchain-openai applies it)."""
    if not request.get("tools"):
        return True
    from langchain_core.exceptions import OutputParserException
    from langchain_core.output_parsers.openai_tools import parse_tool_call

    calls = reply_message(reply).get("tool_calls") or []
    for call in calls:
        try:
            parsed = parse_tool_call(call, return_id=True)
        except OutputParserException:  # langchain files it as an invalid tool call; trustcall skips those
            return False
        if parsed is None or not isinstance(parsed.get("args"), dict):
            return False
    return bool(calls)


LANGMEM_REPLIES = Replies(
    readable=langmem_reads, asks_again=lambda request: REPAIR_TOOL in tool_names(request)
)


def import_langmem() -> tuple[Any, Any, Any]:
    """(create_memory_store_manager, ChatOpenAI, InMemoryStore); a KemeError naming what is missing."""
    # LangSmith tracing stays off unless asked for: nothing leaves the machine by default
    os.environ.setdefault("LANGCHAIN_TRACING_V2", "false")
    try:
        with warnings.catch_warnings():  # trustcall imports a name langgraph 1.x deprecates: not ours to fix
            warnings.simplefilter("ignore", DeprecationWarning)
            warnings.filterwarnings("ignore", message=".*langgraph.constants.*")
            from langchain_openai import ChatOpenAI
            from langgraph.store.memory import InMemoryStore
            from langmem import create_memory_store_manager
    except ImportError as exc:
        raise KemeError(
            f"langmem needs `langmem` and `langchain-openai` ({exc}): pip install -e '.[langmem]' "
            "(scripts/setup.sh does)"
        ) from exc
    logging.getLogger("langmem").setLevel(logging.ERROR)
    return create_memory_store_manager, ChatOpenAI, InMemoryStore


@dataclass
class Trace:
    """Where a memory came from: every message of the sessions that wrote or updated it."""

    message_ids: list[str] = field(default_factory=list)
    session_ids: list[str] = field(default_factory=list)
    timestamp: datetime | None = None

    def add(self, session: Session) -> None:
        self.message_ids += [m.id for m in session.messages if m.id not in self.message_ids]
        if session.id not in self.session_ids:
            self.session_ids.append(session.id)
        self.timestamp = session.start


def memory_text(value: dict[str, Any]) -> str:
    """The text of a stored LangMem value ({"kind": "Memory", "content": {"content": ...}})."""
    content = value.get("content")
    if isinstance(content, dict) and isinstance(content.get("content"), str):
        return content["content"]
    return str(content if content is not None else value)


class LangMem:
    def __init__(
        self,
        base_url: str | None = None,
        model: str | None = None,
        api_key_env: str | None = "OPENAI_API_KEY",
        max_tokens: int = 1024,
        temperature: float = 0.1,
        query_limit: int = 5,
        force_tool: bool | None = None,
        deadline_s: float = DEADLINE_S,  # one attempt's wall-clock deadline (connect, headers, whole body)
        budget_s: float = BUDGET_S,  # one call's wall-clock limit over all its attempts
        max_retries: int = MAX_RETRIES,  # attempts after a failed one (timeout, connection, 429, 5xx)
        timeout_s: float | None = None,  # the earlier name of deadline_s
        local_model: LocalModel | None = None,  # injected by the harness: the endpoint without base_url
    ):
        deadline_s = deadline_s if timeout_s is None else timeout_s
        check_limits("langmem", deadline_s, budget_s, max_retries)
        self.name = "langmem"
        self.base_url, self.model, self.api_key_env = base_url, model, api_key_env
        self.max_tokens, self.temperature, self.query_limit = max_tokens, temperature, query_limit
        self.force_tool = force_tool  # None: only for the local model
        self.deadline_s, self.budget_s, self.max_retries = deadline_s, budget_s, max_retries
        self.local_model = local_model
        self.manager: Any = None  # built on first use
        self.store: Any = None
        self.endpoint: Endpoint | None = None
        self.embedded = 0
        self.traces: dict[str, dict[str, Trace]] = {}

    def config_fingerprint(self) -> str:
        try:
            library = version("langmem")
        except PackageNotFoundError:
            library = None
        return fingerprint(
            self.name,
            library=library,
            llm=(self.base_url, self.model, self.max_tokens, self.temperature, self.force_tool),
            query_limit=self.query_limit,
            embedder="all-MiniLM-L6-v2",
            forced=(NOT_FORCED, MAX_MEMORY_CHARS),  # which tool a forced choice names, how long its strings
        )

    # -- building
    def _build(self) -> None:
        create_memory_store_manager, ChatOpenAI, InMemoryStore = import_langmem()

        self.endpoint = open_endpoint(
            self.name, self.base_url, self.model, self.api_key_env, self.local_model
        )
        self.endpoint.deadline_s, self.endpoint.budget_s = self.deadline_s, self.budget_s
        self.endpoint.max_retries = self.max_retries
        embedder = shared_minilm()  # a KemeError naming the `embed` extra when it is missing
        chat = ChatOpenAI(
            model=self.endpoint.model,
            base_url=self.endpoint.base_url,
            api_key=self.endpoint.api_key,
            max_tokens=self.max_tokens,
            temperature=self.temperature,
            max_retries=self.endpoint.max_retries,
            timeout=self.endpoint.deadline_s,
            http_client=self.endpoint.http_client(self._rewrite(), LANGMEM_REPLIES),
        )
        lock = threading.Lock()  # the store embeds from the executor's threads: one at a time

        def embed(texts: list[str]) -> list[list[float]]:
            with lock:
                self.embedded += len(texts)
                return embedder.embed(list(texts)).tolist()

        self.store = InMemoryStore(index={"dims": EMBEDDING_DIMS, "embed": embed})
        self.manager = create_memory_store_manager(
            chat, namespace=(NAMESPACE, "{langgraph_user_id}"), store=self.store, query_limit=self.query_limit
        )

    def _rewrite(self):
        """How requests are translated: for the local model (or when force_tool says so) the insert tool is
        named and its strings bounded to fit max_tokens; a capable endpoint gets LangMem's requests."""
        local = self.endpoint.local
        force = local if self.force_tool is None else self.force_tool
        if not (local or force):
            return None
        chars = max(20, min(MAX_MEMORY_CHARS, self.max_tokens - ARGUMENT_TOKENS))

        def rewrite(body: dict) -> dict:
            return local_dialect(body, force_tool=force, avoid=NOT_FORCED, max_chars=chars if force else None)

        return rewrite

    def _ready(self) -> None:
        if self.manager is None:
            self._build()

    def _marks(self) -> tuple[Usage, int]:
        return self.endpoint.meter.snapshot(), self.embedded

    def _usage(self, llm_before: Usage, embedded_before: int) -> Usage:
        return since(self.endpoint.meter, llm_before) + Usage(embedded_texts=self.embedded - embedded_before)

    def _failed(self, what: str, exc: Exception) -> KemeError:
        if isinstance(exc, KemeError):
            return exc
        known = explain(self.name, self.endpoint, exc) if self.endpoint is not None else None
        return known or KemeError(
            f"{self.name}: LangMem failed to {what}: {type(exc).__name__}: {str(exc)[:300]}"
        )

    def _items(self, scope: str) -> list[Any]:
        if self.store is None:
            return []
        return self.store.search((NAMESPACE, scope), limit=EVERYTHING)

    # -- the contract
    def reset(self, scope: str) -> None:
        self._ready()
        for item in self._items(scope):
            self.store.delete((NAMESPACE, scope), item.key)
        self.traces[scope] = {}

    def ingest(self, scope: str, session: Session) -> Usage:
        self._ready()
        if not session.messages:
            return Usage()
        marks = self._marks()
        messages = [
            {"role": m.role if m.role in ("user", "assistant") else "user", "content": message_text(m)}
            for m in session.messages
        ]
        try:
            puts = self.manager.invoke(
                {"messages": messages}, config={"configurable": {"langgraph_user_id": scope}}
            )
        except Exception as exc:  # noqa: BLE001 - every failure becomes one KemeError naming the cause
            raise self._failed(f"manage the memories of session {session.id} of {scope}", exc) from exc
        traces = self.traces.setdefault(scope, {})
        for put in puts:
            traces.setdefault(put["key"], Trace()).add(session)
        return self._usage(*marks)

    def flush(self, scope: str) -> None:
        pass  # the store indexes on put

    def retrieve(self, scope: str, query: Query, k: int) -> Retrieval:
        self._ready()
        marks = self._marks()
        try:
            found = self.store.search((NAMESPACE, scope), query=query.text, limit=k)
        except Exception as exc:  # noqa: BLE001
            raise self._failed(f"search {scope}", exc) from exc
        traces = self.traces.get(scope, {})
        hits = []
        for item in found:
            trace = traces.get(item.key, Trace())
            if trace.timestamp is not None and trace.timestamp > query.now:
                continue
            hits.append(
                Hit(
                    text=memory_text(item.value),
                    score=float(item.score or 0.0),
                    timestamp=trace.timestamp,
                    message_ids=list(trace.message_ids),
                    session_ids=list(trace.session_ids),
                )
            )
        return Retrieval(hits=hits, usage=self._usage(*marks))

    def size(self, scope: str) -> int:
        return len(self._items(scope))

    def storage_bytes(self, scope: str) -> int:
        return sum(len(memory_text(item.value).encode()) for item in self._items(scope))

    def close(self) -> None:
        """Drop the store (the shared local model server lives on for the process's other systems)."""
        self.manager = self.store = None
        self.traces = {}
