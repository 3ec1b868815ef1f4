"""Memory systems: generic baselines and the seed systems, all behind eval.contract.MemorySystem.

The harness finds them by name in eval.registry, which names each by its "module:Class" string.
"""
