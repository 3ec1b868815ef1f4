"""Per-stage accounting: calls, cache hits, tokens, latency, retries and estimated cost."""

from __future__ import annotations

import threading
from collections import defaultdict
from dataclasses import dataclass, field

from keme.llm.config import Price


@dataclass
class StageUsage:
    calls: int = 0
    cache_hits: int = 0
    retries: int = 0
    failures: int = 0  # requests that got no reply
    unusable: int = 0  # replies the caller could not use (an unreadable verdict)
    prompt_tokens: int = 0
    completion_tokens: int = 0
    latency_s: float = 0.0
    cost_usd: float = 0.0
    prompt_tokens_per_call: list[int] = field(default_factory=list)

    def as_dict(self) -> dict:
        data = {
            k: (round(v, 6) if isinstance(v, float) else v)
            for k, v in self.__dict__.items()
            if k != "prompt_tokens_per_call"
        }
        return data


class Ledger:
    def __init__(self) -> None:
        self.stages: dict[str, StageUsage] = defaultdict(StageUsage)
        self.lock = threading.Lock()

    def record(
        self, stage: str, *, prompt: int, completion: int, latency: float, cached: bool, price: Price | None
    ) -> None:
        with self.lock:
            usage = self.stages[stage]
            usage.prompt_tokens_per_call.append(prompt)
            if cached:  # served from the cache: nothing was spent
                usage.cache_hits += 1
                return
            usage.calls += 1
            usage.latency_s += latency
            usage.prompt_tokens += prompt
            usage.completion_tokens += completion
            if price is not None:
                usage.cost_usd += (
                    prompt * price.prompt_per_mtok + completion * price.completion_per_mtok
                ) / 1e6

    def count(self, stage: str, field_name: str) -> None:
        with self.lock:
            setattr(self.stages[stage], field_name, getattr(self.stages[stage], field_name) + 1)

    def merge(self, stages: dict[str, StageUsage]) -> None:
        """Add another ledger's stages (a Ray worker's, in a distributed run) to this one's."""
        with self.lock:
            for stage, other in stages.items():
                usage = self.stages[stage]
                for name, value in other.__dict__.items():
                    setattr(usage, name, getattr(usage, name) + value)

    def as_dict(self) -> dict:
        return {stage: usage.as_dict() for stage, usage in sorted(self.stages.items())}

    def total_calls(self) -> int:
        return sum(u.calls for u in self.stages.values())
