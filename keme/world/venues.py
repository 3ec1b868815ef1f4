"""Venues from the persona's own city: a landmark, a lakefront or a waterfront exists only in some cities
(keme/world/venues/<lang>.yaml); every other venue of the catalog is anywhere.

The planner draws an occasion's venue among those of the persona's home city at the time (`local`), so a
Seattle boathouse is never the local spot of a San Francisco persona; the values rule checks it apart.
"""

from __future__ import annotations

import functools
import random
from collections.abc import Callable, Iterable, Mapping, Sequence
from pathlib import Path
from typing import TypeVar

from pydantic import BaseModel, ConfigDict

from keme.errors import KemeError
from keme.world.yamlfile import read_model

ROOT = Path(__file__).parent / "venues"
V = TypeVar("V")
Item = TypeVar("Item")


def _name(venue) -> str:
    return venue.name


class VenueError(KemeError, ValueError):
    """keme/world/venues/<lang>.yaml is missing or malformed."""


class LocalVenues(BaseModel):
    """Venue name -> the home cities it is in; a venue not listed is in every city."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    only_in: dict[str, tuple[str, ...]] = {}

    def fits(self, venue: str, city: str | None) -> bool:
        """Whether `venue` can be a local spot of `city` (an unknown city: only a venue found anywhere)."""
        cities = self.only_in.get(venue)
        return cities is None or city in cities

    def local(self, venues: Iterable[V], city: str | None, name: Callable[[V], str] = _name) -> list[V]:
        """The `venues` that are in `city` (maybe none)."""
        return [v for v in venues if self.fits(name(v), city)]

    def choose(
        self,
        rng: random.Random,
        items: Sequence[Item],
        venues_of: Callable[[Item], list[V]],
        city: str | None,
    ) -> tuple[Item, V]:
        """An item (an activity, an occasion) with a venue of `city` to hold it, and that venue: an item
        whose venues are all elsewhere (kayaking where the only lake is another city's) is not drawn."""
        fitting = [(item, local) for item in items if (local := self.local(venues_of(item), city))]
        if not fitting:  # no item has a local venue: the catalog's own choice
            item = rng.choice(items)
            return item, rng.choice(venues_of(item))
        item, local = rng.choice(fitting)
        return item, rng.choice(local)


VENUE_PARAMS = ("venue", "place", "restaurant")  # the episode details that name where it happens


def elsewhere(params: Mapping[str, str], city: str, lang: str) -> str | None:
    """The venue an episode's details name that is not in `city` (a planned outing after a move), or None."""
    table = load_local(lang)
    return next((params[k] for k in VENUE_PARAMS if params.get(k) and not table.fits(params[k], city)), None)


@functools.cache
def load_local(lang: str, root: Path = ROOT) -> LocalVenues:
    return read_model(root / f"{lang}.yaml", LocalVenues, VenueError, "missing table of local venues")
