"""Deterministic randomness: every decision draws from an RNG derived from (seed, path).

Deriving instead of sharing one RNG makes results independent of processing
order, which is what lets an interrupted run resume to the same bytes.
"""

from __future__ import annotations

import hashlib
import random


def derive_seed(seed: int, *path: object) -> int:
    key = ":".join([str(seed), *map(str, path)]).encode()
    return int.from_bytes(hashlib.sha256(key).digest()[:8], "big")


def rng_for(seed: int, *path: object) -> random.Random:
    return random.Random(derive_seed(seed, *path))
