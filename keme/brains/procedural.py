"""The procedural brain: deterministic agents, no model (the offline default)."""

from __future__ import annotations

from keme.brains.base import BrainStats
from keme.synth import grounder, moments, planner, realizer, reviser


class ProceduralBrain:
    name = "procedural"

    def __init__(self) -> None:
        self.stats = BrainStats()

    def expand_chapter(self, chapter, traj, ctx, rng):
        return planner.expand_chapter(chapter, traj, ctx, rng)

    def expand_episode(self, episode, traj, ctx, rng):
        return moments.expand_episode(episode, traj, ctx, rng)

    def ground(self, parent, traj, ctx, now):
        grounder.ground(parent, traj, ctx, now)

    def realize(self, leaf, traj, cfg, res, rng):
        return realizer.realize(leaf, traj, cfg, res, rng)

    def revise(self, event, traj, ctx, rng, now):
        reviser.revise(event, traj, ctx, rng, now)
