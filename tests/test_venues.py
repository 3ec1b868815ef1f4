"""Venues from the persona's own city (keme/world/venues): the planner's choice of a local spot."""

from __future__ import annotations

import random

import pytest

from keme.text import resources
from keme.world.catalog import load_catalog
from keme.world.venues import elsewhere, load_local

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


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_an_activity_is_drawn_only_where_the_city_has_a_venue_for_it(lang):
    catalog, table = load_catalog(lang), load_local(lang)
    elsewhere, _ = CITIES[lang]
    for seed in range(40):
        activity, venue = table.choose(
            random.Random(seed), catalog.activities, lambda a: catalog.venues_of(a.venue_types), elsewhere
        )
        assert venue.type in activity.venue_types and table.fits(venue.name, elsewhere), (activity, venue)


def test_with_no_local_venue_at_all_the_catalogs_choice_stands():
    catalog, table = load_catalog("en"), load_local("en")
    boathouse = [v for v in catalog.venues if v.name == "the boathouse on Green Lake"]
    item, venue = table.choose(random.Random(1), ["row"], lambda _: boathouse, "San Francisco")
    assert (item, venue) == ("row", boathouse[0])


@pytest.mark.parametrize(
    ("lang", "params", "city", "found"),
    [
        (
            "en",
            {"activity": "go kayaking", "venue": "the lakefront", "place": "the lakefront"},
            "Boston",
            "the lakefront",
        ),
        ("en", {"activity": "go kayaking", "venue": "the lakefront"}, "Chicago", None),
        ("en", {"venue": "the zoo", "restaurant": "Bistro Eleven"}, "Boston", None),
        ("zh", {"activity": "划桨板", "venue": "城西的湖边桨板基地"}, "西安", "城西的湖边桨板基地"),
        ("zh", {"venue": "动物园"}, "西安", None),
    ],
)
def test_after_a_move_an_outing_planned_in_another_city_is_found(lang, params, city, found):
    assert elsewhere(params, city, lang) == found
