"""The values rule (keme.world.check.values): a figure the assistant computed agrees with the bill records
at that moment, a bill costs what its merchant charges in the country, a household pays each utility to
one company, and a stable fact has one value. Each defect the issue lists is put back into a small world
built record by record; the look-alikes that are no defect pass."""

from __future__ import annotations

from datetime import datetime
from decimal import Decimal

import pytest

from keme.dataset.views import PersonaView
from keme.models import (
    Anchor,
    Attribute,
    AttributeVersion,
    Claim,
    Event,
    EventGraph,
    Message,
    Persona,
    Session,
)
from keme.models.anchor import BillRecord
from keme.world.catalog import load_catalog
from keme.world.check import check_world
from keme.world.cues import load_cues

START = datetime(2026, 3, 1)
CURRENCY = {"en": "USD", "zh": "CNY"}
# per language: a utility company (internet in en, gas in zh), a second one of the kind, another utility,
# the bills' category, a cheap ride or parking charge, two stores
WORDS = {
    "en": {"utility": "Xfinity", "other_utility": "Spectrum", "power": "Verizon Wireless",
           "category": "Bills & Utilities", "bus": "SpotHero", "fare": "6.00", "store": "Target",
           "other_store": "REI", "method": "Chase debit card"},
    "zh": {"utility": "华润燃气", "other_utility": "港华燃气", "power": "国家电网", "category": "水电燃气",
           "bus": "公交乘车码", "fare": "2.00", "store": "京东", "other_store": "天猫", "method": "微信支付"},
}  # fmt: skip


def T(month: int, day: int, clock: str = "19:00") -> datetime:
    hour, minute = clock.split(":")
    return datetime(2026, month, day, int(hour), int(minute))


def persona(lang: str, start: datetime = START) -> Persona:
    return Persona(
        id="p01",
        name="Carlos Wilson" if lang == "en" else "林晓",
        language=lang,
        country="US" if lang == "en" else "CN",
        start=start,
        end=datetime(2026, 4, 30, 23, 59),
        dimensions={},
    )


def bill(aid: str, when: datetime, merchant: str, amount: str, lang: str, category: str = "") -> Anchor:
    record = BillRecord(
        merchant=merchant,
        amount=Decimal(amount),
        currency=CURRENCY[lang],
        category=category or WORDS[lang]["category"],
        payment_method=WORDS[lang]["method"],
    )
    return Anchor(
        id=aid, persona_id="p01", app="bill", app_name="Wallet", timestamp=when, record=record
    ).sealed()


def episode(eid: str, when: datetime, **params: str) -> Event:
    return Event(
        id=eid, parent_id=None, depth=1, kind="shopping", title=eid, summary="", start=when,
        end=when.replace(hour=23), params=params,
    )  # fmt: skip


def said(
    sid: str, event_id: str, when: datetime, text: str, claims: dict[str, str], anchor_id: str | None = None
) -> tuple[Session, list[Claim]]:
    """A session of one assistant message stating `claims` (predicate -> value)."""
    message = Message(id=f"{sid}-m01", role="assistant", content=text, timestamp=when)
    session = Session(
        id=sid, persona_id="p01", event_id=event_id, language="en", pattern="test", start=when, end=when,
        messages=[message], anchor_id=anchor_id,
    )  # fmt: skip
    made = [
        Claim(
            id=f"{message.id}-c{k}",
            persona_id="p01",
            message_id=message.id,
            speaker="assistant",
            subject=f"event:{event_id}",
            predicate=p,
            value=v,
            valid_from=when,
            said=text,
        )  # fmt: skip
        for k, (p, v) in enumerate(claims.items(), 1)
    ]
    return session, made


def findings(
    lang: str, anchors: list[Anchor], talk: list[tuple[Session, list[Claim]]], p: Persona | None = None
):
    events = {}
    for s, _ in talk:
        events.setdefault(s.event_id, episode(s.event_id, s.start))
    view = PersonaView(
        p or persona(lang),
        anchors=anchors,
        graph=EventGraph(persona_id="p01", events=list(events.values()), edges=[]),
        sessions=[s for s, _ in talk],
        claims=[c for _, cs in talk for c in cs],
    )
    return [f.text for f in check_world(view, load_catalog(lang), load_cues(lang)) if f.rule == "values"]


def april_bills(lang: str) -> list[Anchor]:
    """A March bill of one utility, then an April bill of another, the one the session is about."""
    w = WORDS[lang]
    return [
        bill("p01-a001", T(3, 5), w["power"], "120.00", lang),
        bill("p01-a002", T(4, 3), w["utility"], "64.47", lang),
    ]


def about_april(text: str, predicate: str, value: str) -> tuple[Session, list[Claim]]:
    """The assistant, in the session about the April utility bill, stating one figure."""
    return said("p01-s0001", "p01-e01", T(4, 3, "19:05"), text, {predicate: value}, "p01-a002")


# ---------------------------------------------------------------- computed figures
@pytest.mark.parametrize("lang", ["en", "zh"])
def test_a_monthly_total_the_records_do_not_hold_is_named(lang):
    talk = [about_april("about 979 this month", "category_month_total", "979")]
    [text] = findings(lang, april_bills(lang), talk)
    assert "category_month_total 979" in text and "give 64.47" in text


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_a_monthly_total_computed_from_the_records_passes(lang):
    talk = [about_april("about 64 this month", "category_month_total", "64")]
    assert findings(lang, april_bills(lang), talk) == []


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_a_count_of_this_months_charges_is_exact(lang):
    good = about_april("Counting this one, 1.", "bill_count_month", "1")
    bad = about_april("Counting this one, 7.", "bill_count_month", "7")
    assert findings(lang, april_bills(lang), [good]) == []
    [text] = findings(lang, april_bills(lang), [bad])
    assert "bill_count_month 7" in text and "give 1" in text


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_a_rise_over_last_month_needs_a_last_month(lang):
    talk = [about_april("up 64 on last month", "month_over_month_increase", "64")]
    assert findings(lang, april_bills(lang), talk) == []  # March 1-3 had no bill: April is up 64.47
    [text] = findings(lang, april_bills(lang), talk, persona(lang, start=datetime(2026, 4, 1)))
    assert "cannot give it" in text


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_a_figure_the_user_states_is_not_recomputed(lang):
    message = said(
        "p01-s0001", "p01-e01", T(4, 3, "19:05"), "takeout was 900", {"takeout_month": "900"}, "p01-a002"
    )
    assert findings(lang, april_bills(lang), [message]) == []


# ---------------------------------------------------------------- bills
@pytest.mark.parametrize("lang", ["en", "zh"])
def test_a_charge_priced_beyond_its_merchants_category_is_named(lang):
    w = WORDS[lang]
    [text] = findings(lang, [bill("p01-a001", T(4, 2), w["bus"], "278.00", lang, "Transport")], [])
    assert w["bus"] in text and "278" in text


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_a_charge_at_its_merchants_price_passes(lang):
    assert (
        findings(
            lang, [bill("p01-a001", T(4, 2), WORDS[lang]["bus"], WORDS[lang]["fare"], lang, "Transport")], []
        )
        == []
    )


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_one_utility_from_two_companies_is_named(lang):
    w = WORDS[lang]
    anchors = [
        bill("p01-a001", T(3, 5), w["utility"], "40.00", lang),
        bill("p01-a002", T(4, 5), w["other_utility"], "45.00", lang),
    ]
    [text] = findings(lang, anchors, [])
    assert w["utility"] in text and w["other_utility"] in text


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_one_company_per_utility_passes_even_for_two_utilities(lang):
    w = WORDS[lang]
    anchors = [
        bill("p01-a001", T(3, 5), w["utility"], "40.00", lang),
        bill("p01-a002", T(4, 5), w["utility"], "45.00", lang),
        bill("p01-a003", T(4, 6), w["power"], "90.00", lang),
    ]
    assert findings(lang, anchors, []) == []


# ---------------------------------------------------------------- stable facts
@pytest.mark.parametrize("lang", ["en", "zh"])
def test_a_stores_return_window_said_two_ways_is_named(lang):
    w = WORDS[lang]
    [text] = _stable(lang, (w["store"], w["store"]), ("14", "21"))
    assert f"return_window_days of {w['store']} is said as 14, 21" == text


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_two_stores_with_their_own_return_windows_pass(lang):
    w = WORDS[lang]
    assert _stable(lang, (w["store"], w["other_store"]), ("14", "30")) == []


def _stable(lang: str, stores: tuple[str, str], days: tuple[str, str]) -> list[str]:
    talk, events = [], []
    for k, (store, value) in enumerate(zip(stores, days), 1):
        talk.append(
            said(f"p01-s000{k}", f"p01-e0{k}", T(2 + k, 10), f"{value} days", {"return_window_days": value})
        )
        events.append(episode(f"p01-e0{k}", T(2 + k, 10), store=store))
    view = PersonaView(
        persona(lang),
        graph=EventGraph(persona_id="p01", events=events, edges=[]),
        sessions=[s for s, _ in talk],
        claims=[c for _, cs in talk for c in cs],
    )
    return [f.text for f in check_world(view, load_catalog(lang), load_cues(lang)) if f.rule == "values"]


# ---------------------------------------------------------------- venues
CITIES = {"en": ("San Francisco", "Seattle"), "zh": ("西安", "杭州")}  # (no lake or river walk, has one)
LANDMARK = {"en": "the boathouse on Green Lake", "zh": "环湖绿道"}
ANYWHERE = {"en": "the zoo", "zh": "动物园"}


def _outing(lang: str, city: str, venue: str) -> list[str]:
    p = persona(lang).model_copy(
        update={
            "dimensions": {
                "home": {
                    "city": Attribute(
                        key="home.city",
                        mutable=True,
                        versions=[AttributeVersion(value=city, valid_from=START)],
                    )
                }
            }
        }
    )
    outing = episode("p01-e01", T(4, 11, "10:00"), venue=venue, place=venue)
    view = PersonaView(p, graph=EventGraph(persona_id="p01", events=[outing], edges=[]))
    return [f.text for f in check_world(view, load_catalog(lang), load_cues(lang)) if f.rule == "values"]


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_another_citys_landmark_as_the_local_spot_is_named(lang):
    [text] = _outing(lang, CITIES[lang][0], LANDMARK[lang])
    assert LANDMARK[lang] in text and f"lives in {CITIES[lang][0]}" in text


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_the_landmark_in_its_own_city_passes(lang):
    assert _outing(lang, CITIES[lang][1], LANDMARK[lang]) == []


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_a_venue_found_in_every_city_passes(lang):
    assert _outing(lang, CITIES[lang][0], ANYWHERE[lang]) == []
