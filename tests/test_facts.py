"""Stable facts are said the same way every time: a store's return window is one value per store for the
persona, whatever episode mentions it (keme/world/facts.py through the ledger)."""

from __future__ import annotations

from datetime import datetime

import pytest

from keme.models import Attribute, AttributeVersion, Event, Persona
from keme.world.facts import STABLE_FACTS, holder
from keme.world.ledger import Ledger, Scene
from keme.world.predicates import default_predicates

T = datetime.fromisoformat


def _persona(lang: str) -> Persona:
    city = Attribute(
        key="home.city",
        mutable=True,
        versions=[
            AttributeVersion(value="Austin" if lang == "en" else "成都", valid_from=T("2026-01-01T00:00")),
            AttributeVersion(value="Denver" if lang == "en" else "杭州", valid_from=T("2026-06-01T00:00")),
        ],
    )
    return Persona(
        id="p01",
        name="Dana Reyes" if lang == "en" else "林晓",
        language=lang,
        country="US" if lang == "en" else "CN",
        start=T("2026-01-01T00:00"),
        end=T("2026-12-31T23:59"),
        dimensions={"home": {"city": city}},
    )


def _episode(eid: str, day: str, **params: str) -> Event:
    return Event(
        id=eid,
        parent_id="p01-c01",
        depth=1,
        kind="shopping",
        title=eid,
        summary="",
        start=T(f"{day}T09:00"),
        end=T(f"{day}T21:00"),
        params=params,
    )


def _say(ledger: Ledger, lang: str, episode: Event, predicate: str, drawn: str) -> str:
    ledger.begin(Scene(_persona(lang), episode, episode, None, lang, dict(episode.params)))
    value = ledger.recall(predicate, lambda: drawn)
    ledger.keep(episode.id)
    return value


STORES = {"en": ("Best Buy", "Target"), "zh": ("京东", "天猫")}


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_a_stores_return_window_is_one_value_in_every_episode(lang):
    ledger = Ledger(default_predicates())
    store, _ = STORES[lang]
    said = [
        _say(ledger, lang, _episode(f"p01-c0{i}-e01", f"2026-0{i}-10", store=store), "return_window_days", d)
        for i, d in ((1, "14"), (3, "21"), (5, "30"))
    ]
    assert said == ["14", "14", "14"]


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_another_store_has_its_own_return_window(lang):
    ledger = Ledger(default_predicates())
    one, other = STORES[lang]
    window = "return_window_days"
    first = _say(ledger, lang, _episode("p01-c01-e01", "2026-01-10", store=one), window, "14")
    second = _say(ledger, lang, _episode("p01-c02-e01", "2026-02-10", store=other), window, "30")
    assert (first, second) == ("14", "30")


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_a_city_fact_holds_while_the_persona_lives_there_and_changes_with_a_move(lang):
    ledger = Ledger(default_predicates())
    before = [
        _say(ledger, lang, _episode(f"p01-c0{i}-e01", f"2026-0{i}-10"), "bad_weather_days", d)
        for i, d in ((1, "20"), (3, "35"))
    ]
    after = _say(ledger, lang, _episode("p01-c07-e01", "2026-07-10"), "bad_weather_days", "50")
    assert before == ["20", "20"] and after == "50"


def test_a_stable_fact_is_in_what_the_ledger_holds_for_the_session():
    ledger = Ledger(default_predicates())
    _say(ledger, "en", _episode("p01-c01-e01", "2026-01-10", store="Target"), "return_window_days", "21")
    ledger.begin(Scene(_persona("en"), *([_episode("p01-c04-e01", "2026-04-10", store="Target")] * 2), None,
                       "en", {"store": "Target"}))  # fmt: skip
    assert ("return_window_days", "21") in ledger.held()


def test_an_episode_quantity_that_is_no_stable_fact_is_still_drawn_per_episode():
    ledger = Ledger(default_predicates())
    first = _say(ledger, "en", _episode("p01-c01-e01", "2026-01-10", store="Target"), "party_size", "4")
    second = _say(ledger, "en", _episode("p01-c02-e01", "2026-02-10", store="Target"), "party_size", "6")
    assert (first, second) == ("4", "6")


def test_a_stable_fact_without_its_holder_keeps_its_own_scope():
    assert holder("return_window_days", {}, lambda key: None) is None
    assert holder("return_window_days", {"store": "REI"}, lambda key: None) == "store=REI"
    assert holder("replace_age_years", {}, lambda key: None) == "persona"
    assert holder("party_size", {"store": "REI"}, lambda key: None) is None


def test_every_stable_fact_is_a_registered_predicate():
    registry = default_predicates()
    assert sorted(p for p in STABLE_FACTS if p not in registry) == []
