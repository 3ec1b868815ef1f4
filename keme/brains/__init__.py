"""Brains: who does the thinking for each KEME agent.

The procedural brain is the offline default. The LLM brain asks a model for
each agent's output, checks it against the same invariants, feeds violations
back, and after `brain.retries` failed rounds falls back as configured. The
hybrid brain plans procedurally and lets the LLM write the dialogue.
"""

from __future__ import annotations

from keme.brains.base import Brain, BrainStats
from keme.brains.llm import LLMBrain
from keme.brains.procedural import ProceduralBrain
from keme.llm import LLMClient


def make_brain(cfg, client=None) -> Brain:
    """The brain the config asks for; `client` (an LLMClient) is created from `cfg.llm` if not given."""
    if cfg.brain.mode == "procedural":
        return ProceduralBrain()

    return LLMBrain(cfg, client or LLMClient(cfg.llm), hybrid=cfg.brain.mode == "hybrid")


__all__ = ["Brain", "BrainStats", "ProceduralBrain", "make_brain"]
