"""The coherence checker: reads a persona's world back, without the generator, and reports every
incoherence it finds, from the recorded claims and from the message text itself.

Each rule is a module with `RULE` (its name) and `check(world) -> list[Finding]`; `RULES` is their
report order. `keme validate` turns findings into violations and prints the count per rule.
"""

from __future__ import annotations

from collections.abc import Callable

from keme.dataset.views import PersonaView
from keme.world.catalog import Catalog
from keme.world.check import (
    calendar,
    catalog,
    chapters,
    documents,
    lifecycle,
    objects,
    occupancy,
    presup,
    state,
    told,
    values,
)
from keme.world.check.base import Finding, World
from keme.world.cues import Cues, load_cues

_MODULES = (
    occupancy,
    state,
    objects,
    calendar,
    catalog,
    chapters,
    lifecycle,
    presup,
    documents,
    told,
    values,
)
RULES: tuple[str, ...] = tuple(m.RULE for m in _MODULES)
CHECKS: dict[str, Callable[[World], list[Finding]]] = {m.RULE: m.check for m in _MODULES}

__all__ = ["RULES", "Cues", "Finding", "check_world", "load_cues"]


def check_world(view: PersonaView, catalog: Catalog, cues: Cues) -> list[Finding]:
    """Every finding of every rule for one persona, in rule order."""
    world = World(view, catalog, cues)
    return [finding for rule in RULES for finding in CHECKS[rule](world)]
