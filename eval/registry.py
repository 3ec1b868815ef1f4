"""Every memory system by name ("module:Class", imported when built), with what the harness must know about
it."""

from __future__ import annotations

import importlib
import inspect
import typing
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from pydantic import PydanticSchemaGenerationError, TypeAdapter, ValidationError

from eval.contract import MemorySystem
from eval.local_model import LOCAL_MODEL
from keme.errors import KemeError


@dataclass(frozen=True)
class SystemSpec:
    name: str
    factory: Callable[..., MemorySystem]
    description: str
    needs_gold: bool = False  # oracle: the harness passes gold evidence with the query
    publishable: bool = True  # False: flagged in every report
    dense: bool = False  # loads an embedding model
    # False: ignores the query (recency, full context); scored by evidence_in_context, not by rank
    query_based: bool = True
    blind: bool = False  # True: stores and retrieves nothing, answers without memories (no_memory)
    needs_llm: bool = False  # calls an LLM while it stores or retrieves (an OpenAI-compatible endpoint)
    extra: str | None = None  # the pyproject extra its library comes in (pip install -e '.[extra]')


@dataclass(frozen=True)
class Lazy:
    """A factory for `module:Class` that imports it only when a system is built (the dense ones pull in
    torch).

    Its constructor's signature is what a params file may set (see `parameters`).
    """

    target: str
    preset: tuple[tuple[str, Any], ...] = ()  # keyword arguments fixed by the registry entry

    def resolve(self) -> type:
        module, _, attr = self.target.partition(":")
        return getattr(importlib.import_module(module), attr)

    def __call__(self, **params: Any) -> MemorySystem:
        return self.resolve()(**dict(self.preset), **params)


REGISTRY: dict[str, SystemSpec] = {
    spec.name: spec
    for spec in (
        SystemSpec(
            "full_context",
            Lazy("baselines.full_context:FullContext"),
            "every message, newest first, cut to a 16k-token budget",
            query_based=False,
        ),
        SystemSpec("recency", Lazy("baselines.recency:Recency"), "the last 10 sessions", query_based=False),
        SystemSpec(
            "no_memory",
            Lazy("baselines.no_memory:NoMemory"),
            "no memories: the reader alone; offline, the best blind heuristic on the run's choice items",
            query_based=False,
            blind=True,
        ),
        SystemSpec(
            "no_memory_abstain",
            Lazy("baselines.no_memory:NoMemory", (("strategy", "always_abstain"), ("use_reader", False))),
            "no memories, always abstains (what an item set gives away to a system that never answers)",
            query_based=False,
            blind=True,
        ),
        SystemSpec(
            "bm25",
            Lazy("baselines.bm25:FlatBM25", (("granularity", "message"),)),
            "flat BM25 over messages (bm25s, Lucene IDF)",
        ),
        SystemSpec(
            "bm25_session",
            Lazy("baselines.bm25:FlatBM25", (("granularity", "session"),)),
            "flat BM25 over whole sessions",
        ),
        SystemSpec(
            "memory_bank",
            Lazy("baselines.memory_bank.system:MemoryBankSystem"),
            "Memory Bank: three-layer BM25F memory (the reference seed system)",
        ),
        SystemSpec(
            "vibebrowser",
            Lazy("baselines.vibebrowser:VibeBrowser"),
            "VibeBrowser memory: durable/daily entries, stemmed BM25, tag boost, 30-day decay",
        ),
        SystemSpec(
            "factmem",
            Lazy("baselines.factmem.system:FactMem"),
            "fact/skill/write-chain memory: encrypted exact-key facts, on-demand skills, BM25 fallback",
        ),
        SystemSpec(
            "oracle",
            Lazy("baselines.oracle:Oracle"),
            "gold evidence only (upper bound)",
            needs_gold=True,
            publishable=False,
        ),
        SystemSpec(
            "dense",
            Lazy("baselines.dense:Dense"),
            "MiniLM embeddings over messages, exact cosine",
            dense=True,
        ),
        SystemSpec(
            "hybrid", Lazy("baselines.hybrid:Hybrid"), "reciprocal rank fusion of bm25 and dense", dense=True
        ),
        SystemSpec(
            "openclaw",
            Lazy("baselines.openclaw:OpenClaw"),
            "OpenClaw memory: Markdown files, FTS5 + MiniLM hybrid (0.7/0.3), decay, MMR",
            dense=True,
        ),
        SystemSpec(
            "mem0",
            Lazy("baselines.mem0:Mem0", (("infer", True),)),
            "Mem0 (mem0ai): LLM-extracted facts per session, MiniLM + qdrant (local) search",
            dense=True,
            needs_llm=True,
            extra="mem0",
        ),
        SystemSpec(
            "mem0_raw",
            Lazy("baselines.mem0:Mem0", (("infer", False),)),
            "Mem0 (mem0ai) with infer=False: every message stored as it is, MiniLM + qdrant (local) search",
            dense=True,
            extra="mem0",
        ),
        SystemSpec(
            "langmem",
            Lazy("baselines.langmem:LangMem"),
            "LangMem: its memory store manager (LLM tool calls) per session, langgraph store + MiniLM",
            dense=True,
            needs_llm=True,
            extra="langmem",
        ),
    )
}


def names() -> list[str]:
    return list(REGISTRY)


def default_names() -> list[str]:
    """What `--systems all` and the demo run: every system that needs neither an LLM endpoint nor an
    optional extra. The field's systems (mem0, LangMem) are named explicitly: their ingest costs LLM calls
    (or, for mem0_raw, a mem0 write per message)."""
    return [name for name, spec in REGISTRY.items() if not spec.needs_llm and spec.extra is None]


def create(name: str, **params: Any) -> MemorySystem:
    """Build `name` with `params`; a system that calls an LLM also gets the shipped model's endpoint
    (`local_model`), which it uses when no `base_url` is set."""
    spec = REGISTRY.get(name)
    if spec is None:
        raise KemeError(f"unknown memory system {name!r}; known: {', '.join(REGISTRY)}")
    if spec.needs_llm and "local_model" in _signature(spec).parameters:
        params.setdefault("local_model", LOCAL_MODEL)
    return spec.factory(**params)


def _signature(spec: SystemSpec) -> inspect.Signature:
    factory = spec.factory
    build = factory.resolve() if isinstance(factory, Lazy) else factory
    try:
        return inspect.signature(build)
    except (TypeError, ValueError):  # a builtin or C callable: nothing declared
        return inspect.Signature()


def register(spec: SystemSpec) -> None:
    """Add a system (plugins and tests); a name can be registered once."""
    if spec.name in REGISTRY:
        raise KemeError(f"memory system {spec.name!r} is already registered")
    REGISTRY[spec.name] = spec


def parameters(spec: SystemSpec) -> dict[str, TypeAdapter]:
    """What a params file may set for `spec`: its constructor's keyword arguments that plain data can fill.

    Declared by the constructor's signature, so there is no second list to keep in step; an argument
    whose type is an object (an injected embedder) is not settable from a file.
    """
    factory = spec.factory
    build, preset = (factory.resolve(), dict(factory.preset)) if isinstance(factory, Lazy) else (factory, {})
    signature = _signature(spec)
    try:
        hints = typing.get_type_hints(build.__init__ if inspect.isclass(build) else build)
    except Exception:  # noqa: BLE001 - an annotation that does not resolve: treat every parameter as untyped
        hints = {}
    declared = {}
    for name, parameter in signature.parameters.items():
        if name in preset or parameter.kind in (parameter.VAR_POSITIONAL, parameter.VAR_KEYWORD):
            continue
        try:
            declared[name] = TypeAdapter(hints.get(name, Any))
        except PydanticSchemaGenerationError:
            continue
    return declared


def check_params(name: str, values: dict[str, Any]) -> dict[str, Any]:
    """`values` checked (and converted) against `name`'s declared parameters; a KemeError names the first
    misfit."""
    spec = REGISTRY.get(name)
    if spec is None:
        raise KemeError(
            f"--params: unknown memory system {name!r}; known: {', '.join(REGISTRY)} (or subprocess:<name>)"
        )
    declared = parameters(spec)
    checked = {}
    for key, value in values.items():
        if key not in declared:
            listing = ", ".join(declared) or "none"
            raise KemeError(f"--params: {name} has no parameter {key!r} (parameters: {listing})")
        try:
            checked[key] = declared[key].validate_python(value, strict=True)
        except ValidationError as exc:
            raise KemeError(f"--params: {name}.{key}: {exc.errors()[0]['msg']} (got {value!r})") from exc
    return checked
