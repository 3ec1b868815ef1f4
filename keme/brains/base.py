"""The brain interface the pipeline drives, and the counters every brain keeps."""

from __future__ import annotations

import random
from collections import Counter
from dataclasses import dataclass, field
from datetime import datetime
from typing import Protocol

from keme.models import Event, Session


@dataclass
class BrainStats:
    """Per role: LLM attempts, validation retries, accepted outputs, fallbacks and anomalies."""

    counts: Counter = field(default_factory=Counter)

    def add(self, role: str, what: str, n: int = 1) -> None:
        self.counts[f"{role}.{what}"] += n

    def as_dict(self) -> dict[str, int]:
        return dict(sorted(self.counts.items()))

    def merge(self, other: dict[str, int]) -> None:
        self.counts.update(other)


class Brain(Protocol):
    name: str
    stats: BrainStats

    def expand_chapter(self, chapter: Event, traj, ctx, rng: random.Random) -> list[Event]: ...

    def expand_episode(self, episode: Event, traj, ctx, rng: random.Random) -> list[Event]: ...

    def ground(self, parent: Event, traj, ctx, now: datetime) -> None: ...

    def realize(self, leaf: Event, traj, cfg, res, rng: random.Random) -> Session: ...

    def revise(self, event: Event, traj, ctx, rng: random.Random, now: datetime) -> None: ...
