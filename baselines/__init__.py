"""Memory systems: generic baselines and the seed systems, all behind eval.contract.MemorySystem."""

from baselines.registry import REGISTRY, SystemSpec, create, names

__all__ = ["REGISTRY", "SystemSpec", "create", "names"]
