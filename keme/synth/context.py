"""The context every planning step reads: the synthesis config and the language's resources (and,
through them, the catalog). Its own module so that the modules the planner imports (params, moments,
changes) can take it without importing the planner.
"""

from __future__ import annotations

from dataclasses import dataclass

from keme.config import SynthConfig
from keme.text.resources import Resources
from keme.world.catalog import Catalog, load_catalog


@dataclass(frozen=True)
class PlanContext:
    cfg: SynthConfig
    res: Resources

    @property
    def lang(self) -> str:
        return self.res.lang

    @property
    def catalog(self) -> Catalog:
        """What generation may combine (loaded once per language)."""
        return load_catalog(self.res.lang)
