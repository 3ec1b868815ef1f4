"""Venues from the persona's own city (keme/world/venues): the planner's choice of a local spot."""

from __future__ import annotations

import pytest

from keme.text import resources
from keme.world.catalog import load_catalog
from keme.world.venues import load_local

CITIES = {"en": ("San Francisco", "Seattle"), "zh": ("西安", "杭州")}


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_every_city_bound_venue_is_a_catalog_venue_of_home_cities(lang):
    table = load_local(lang)
    venues = {v.name for v in load_catalog(lang).venues}
    cities = {c.name for c in resources.get(lang).pools.cities}
    assert sorted(set(table.only_in) - venues) == []
    assert sorted({c for where in table.only_in.values() for c in where} - cities) == []


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_a_city_gets_no_other_citys_lake(lang):
    lakes = load_catalog(lang).venues_of(["lake", "trail", "waterfront", "park"])
    elsewhere, home = CITIES[lang]
    local = {v.name for v in load_local(lang).local(lakes, elsewhere)}
    assert "the boathouse on Green Lake" not in local and "环湖绿道" not in local
    assert local, "a city without a lake still has a park"
    assert {v.name for v in load_local(lang).local(lakes, home)} >= local


def test_a_choice_is_never_empty():
    table = load_local("en")
    boathouse = [v for v in load_catalog("en").venues if v.name == "the boathouse on Green Lake"]
    assert table.local(boathouse, "San Francisco") == boathouse  # nothing local: the catalog's own choice
