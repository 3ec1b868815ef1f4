"""Every memory system by name, with what the harness must know about it."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from eval.contract import MemorySystem
from keme.errors import KemeError


@dataclass(frozen=True)
class SystemSpec:
    name: str
    factory: Callable[..., MemorySystem]
    description: str
    needs_gold: bool = False  # oracle: the harness passes gold evidence with the query
    publishable: bool = True  # False: flagged in every report
    dense: bool = False  # loads an embedding model
    query_based: bool = True  # False: ignores the query (recency, full context)


def _bm25(**params: Any):
    from baselines.bm25 import FlatBM25

    return FlatBM25(granularity="message", **params)


def _bm25_session(**params: Any):
    from baselines.bm25 import FlatBM25

    return FlatBM25(granularity="session", **params)


def _recency(**params: Any):
    from baselines.recency import Recency

    return Recency(**params)


def _full_context(**params: Any):
    from baselines.full_context import FullContext

    return FullContext(**params)


def _dense(**params: Any):
    from baselines.dense import Dense

    return Dense(**params)


def _hybrid(**params: Any):
    from baselines.hybrid import Hybrid

    return Hybrid(**params)


def _vibebrowser(**params: Any):
    from baselines.vibebrowser import VibeBrowser

    return VibeBrowser(**params)


def _openclaw(**params: Any):
    from baselines.openclaw import OpenClaw

    return OpenClaw(**params)


def _factmem(**params: Any):
    from baselines.factmem.system import FactMem

    return FactMem(**params)


def _oracle(**params: Any):
    from baselines.oracle import Oracle

    return Oracle(**params)


def _memory_bank(**params: Any):
    from baselines.memory_bank.system import MemoryBankSystem

    return MemoryBankSystem(**params)


REGISTRY: dict[str, SystemSpec] = {
    spec.name: spec
    for spec in (
        SystemSpec("full_context", _full_context, "every message, newest first, cut to a 16k-token budget",
                   query_based=False),
        SystemSpec("recency", _recency, "the last 10 sessions", query_based=False),
        SystemSpec("bm25", _bm25, "flat BM25 over messages (bm25s, Lucene IDF)"),
        SystemSpec("bm25_session", _bm25_session, "flat BM25 over whole sessions"),
        SystemSpec("memory_bank", _memory_bank, "Memory Bank: three-layer BM25F memory (the reference seed system)"),
        SystemSpec("vibebrowser", _vibebrowser,
                   "VibeBrowser memory: durable/daily entries, stemmed BM25, tag boost, 30-day decay"),
        SystemSpec("factmem", _factmem,
                   "fact/skill/write-chain memory: encrypted exact-key facts, on-demand skills, BM25 fallback"),
        SystemSpec("oracle", _oracle, "gold evidence only (upper bound)", needs_gold=True, publishable=False),
        SystemSpec("dense", _dense, "MiniLM embeddings over messages, exact cosine", dense=True),
        SystemSpec("hybrid", _hybrid, "reciprocal rank fusion of bm25 and dense", dense=True),
        SystemSpec("openclaw", _openclaw,
                   "OpenClaw memory: Markdown files, FTS5 + MiniLM hybrid (0.7/0.3), decay, MMR", dense=True),
    )
}


def names() -> list[str]:
    return list(REGISTRY)


def create(name: str, **params: Any) -> MemorySystem:
    spec = REGISTRY.get(name)
    if spec is None:
        raise KemeError(f"unknown memory system {name!r}; known: {', '.join(REGISTRY)}")
    return spec.factory(**params)


def register(spec: SystemSpec) -> None:
    """Add a system (plugins and tests); a name can be registered once."""
    if spec.name in REGISTRY:
        raise KemeError(f"memory system {spec.name!r} is already registered")
    REGISTRY[spec.name] = spec
