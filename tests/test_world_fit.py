"""Text that fits its moment (issue 12): wishes for a part of the day that is not the message's, an
in-person charge while the schedule has the persona away or at the office, a trip too short for how far
it goes. Each test feeds the checker a world with the defect and expects the rule's finding."""

from __future__ import annotations

from datetime import date, datetime, timedelta

import pytest
from test_world_check import (
    END,
    HOME,
    START,
    at,
    bill,
    claim,
    event,
    findings,
    home_schedule,
    ids,
    session,
    world,
)

from keme.dataset.views import PersonaView
from keme.models import Anchor, EventGraph, ScheduleBlock
from keme.prior.anchors import free_to_shop
from keme.world.catalog import load_catalog
from keme.world.rules import allows
from keme.world.schedule import schedule_of


@pytest.mark.parametrize(
    ("lang", "when", "text"),
    [
        ("en", at(3, "08:44"), "Alright, that settles it. Have a good evening."),
        ("en", at(3, "21:40"), "Starred and pinned. Enjoy your morning."),
        ("en", at(3, "10:15"), "Great. Enjoy the rest of your afternoon!"),
        ("zh", at(3, "08:30"), "设好了：前一天晚上一次。晚上愉快～"),
        ("zh", at(3, "22:17"), "记好了，放在备忘录最上面了。祝你早上顺利。"),
        ("zh", at(3, "19:05"), "好的，就这样。中午好"),
        ("zh", at(3, "16:45"), "还有，打卡完毕，睡觉"),
        ("en", at(3, "15:10"), "Logged it, off to bed now."),
    ],
)
def test_a_wish_for_another_part_of_the_day_is_named(lang, when, text):
    view = world(
        lang,
        [event("p01-c01-e01", "mood_checkin", START, END)],
        [session("p01-s0001", "p01-c01-e01", [("user", when, text)], lang)],
    )
    assert ids(findings(view, "calendar")) == [["p01-s0001-m01"]]


@pytest.mark.parametrize(
    ("lang", "when", "text"),
    [
        ("en", at(3, "20:29"), "Great. That's all for now. Enjoy your evening!"),
        ("en", at(3, "08:52"), "Good. Nothing else for now. Have a good morning."),
        ("en", at(3, "08:10"), "Remind me tomorrow to have a good evening planned for Elena."),
        ("zh", at(3, "22:17"), "在快递App里可以直接联系快递员改派。晚上愉快～"),
        ("zh", at(3, "09:10"), "好，祝你上午顺利。"),
    ],
)
def test_a_wish_for_the_part_of_the_day_it_is_passes(lang, when, text):
    view = world(
        lang,
        [event("p01-c01-e01", "mood_checkin", START, END)],
        [session("p01-s0001", "p01-c01-e01", [("user", when, text)], lang)],
    )
    assert findings(view, "calendar") == []


# ---------------------------------------------------------------------------------------------- occupancy


def day_blocks(
    day: int, parts: list[tuple[str, str, str, str | None]], lang: str = "en"
) -> list[ScheduleBlock]:
    """April `day` as (from, to, place, venue) blocks in the home city."""
    return [
        ScheduleBlock(
            id=f"p01-b{k:03d}",
            persona_id="p01",
            start=at(day, lo),
            end=at(day, hi),
            place=place,
            city=HOME[lang],
            venue=venue,
            activity=place,
        )
        for k, (lo, hi, place, venue) in enumerate(parts, 1)
    ]


def charge_world(lang: str, when: datetime, merchant: str, category: str, schedule, events=()) -> PersonaView:
    anchor = bill("p01-a001", merchant, "42.10", category, "USD" if lang == "en" else "CNY")
    anchor = Anchor(**(anchor.model_dump() | {"timestamp": when})).sealed()
    return world(
        lang,
        [event("p01-c01-e07", "anchor_bill", when, when + timedelta(hours=1)), *events],
        [
            session(
                "p01-s0001",
                "p01-c01-e07",
                [
                    ("system", when, f"Payment of $42.10 to {merchant}"),
                    ("user", when + timedelta(minutes=3), "Log it."),
                ],
                lang,
                anchor_id="p01-a001",
            )
        ],
        schedule=schedule,
        anchors=[anchor],
    )


def test_a_store_charge_inside_a_trip_to_another_city_is_named():
    trip = event(
        "p01-c01-e01",
        "trip",
        at(14, "00:00"),
        at(22, "23:59"),
        "Mexico City",
        destination="Mexico City",
        _trip_start="2026-04-16",
        _trip_end="2026-04-20",
    )
    view = charge_world(
        "en",
        at(18, "15:20"),
        "Target",
        "Shopping",
        home_schedule("en", [(date(2026, 4, 16), date(2026, 4, 20), "Mexico City")]),
        [trip],
    )
    found = findings(view, "occupancy", load_catalog("en"))
    assert ids(found) == [["p01-s0001-m01"]]
    assert "Target" in found[0].text and "Mexico City trip" in found[0].text


def test_a_supermarket_charge_while_the_schedule_has_the_persona_at_the_office_is_named():
    office = day_blocks(
        15,
        [
            ("00:00", "09:00", "home", None),
            ("09:00", "18:00", "office", None),
            ("18:00", "23:59", "home", None),
        ],
        "zh",
    )
    view = charge_world("zh", at(15, "10:30"), "物美超市", "买菜", office)
    found = findings(view, "occupancy", load_catalog("zh"))
    assert ids(found) == [["p01-s0001-m01"]]
    assert "office" in found[0].text


def test_a_store_run_that_leaves_the_office_mid_morning_is_named_and_one_at_lunch_passes():
    def run(clock: str, lo: str, hi: str) -> PersonaView:
        blocks = day_blocks(
            15,
            [
                ("00:00", "09:00", "home", None),
                ("09:00", lo, "office", None),
                (lo, hi, "venue", "Kroger"),
                (hi, "18:00", "office", None),
                ("18:00", "23:59", "home", None),
            ],
        )
        return charge_world("en", at(15, clock), "Kroger", "Groceries", blocks)

    assert ids(findings(run("10:30", "10:05", "10:31"), "occupancy", load_catalog("en"))) == [
        ["p01-s0001-m01"]
    ]
    assert findings(run("12:30", "12:05", "12:31"), "occupancy", load_catalog("en")) == []


def test_an_online_charge_needs_no_place():
    office = day_blocks(
        15,
        [
            ("00:00", "09:00", "home", None),
            ("09:00", "18:00", "office", None),
            ("18:00", "23:59", "home", None),
        ],
    )
    for merchant, category in (("Amazon", "Shopping"), ("Netflix", "Subscriptions"), ("DoorDash", "Dining")):
        view = charge_world("en", at(15, "10:30"), merchant, category, office)
        assert findings(view, "occupancy", load_catalog("en")) == [], merchant


# ---------------------------------------------------------------------------------------------- generation


def test_a_charge_paid_in_person_is_timed_off_work_or_at_lunch():
    assert not free_to_shop(datetime(2026, 4, 15, 10, 30), "US")  # a Wednesday, mid-morning
    assert free_to_shop(datetime(2026, 4, 15, 12, 40), "US")  # lunch
    assert free_to_shop(datetime(2026, 4, 15, 19, 5), "US")  # after work
    assert free_to_shop(datetime(2026, 4, 18, 10, 30), "US")  # a Saturday
    assert not free_to_shop(datetime(2026, 4, 18, 7, 10), "US")  # before the shops open
    assert not free_to_shop(datetime(2026, 4, 18, 9, 5), "US", hours=(11, 22))  # a restaurant at 9 am
    assert free_to_shop(datetime(2026, 4, 18, 7, 10), "US", hours=(7, 22))  # a gas station
    assert free_to_shop(datetime(2026, 10, 2, 10, 30), "CN")  # 国庆: a day off


def test_the_schedule_puts_a_store_charge_at_the_store_and_back_at_the_office():
    from test_world_check import persona

    person = persona("en")
    anchor = Anchor(
        **(
            bill("p01-a001", "Kroger", "42.10", "Groceries", "USD").model_dump()
            | {"timestamp": at(15, "12:40")}
        )
    ).sealed()
    graph = EventGraph(persona_id="p01", events=[], edges=[])
    blocks = schedule_of(person, graph, "US", [], [anchor])
    around = [b for b in blocks if b.start <= at(15, "13:00") and b.end >= at(15, "12:00")]
    assert [(b.place, b.venue) for b in around] == [("office", None), ("venue", "Kroger"), ("office", None)]


# ---------------------------------------------------------------------------------------------- catalog


def trip_world(lang: str, city: str, first: date, last: date) -> PersonaView:
    trip = event(
        "p01-c01-e01",
        "trip",
        datetime.combine(first, datetime.min.time()) - timedelta(days=3),
        datetime.combine(last, datetime.min.time()) + timedelta(days=2),
        city,
        destination=city,
        _trip_start=first.isoformat(),
        _trip_end=last.isoformat(),
    )
    during = event("p01-c01-e01-l1", "trip_during", at(first.day, "12:00"), at(first.day, "23:00"))
    text = "Just landed, the hotel is lovely." if lang == "en" else "刚落地，酒店不错。"
    return world(
        lang,
        [trip, during],
        [session("p01-s0001", "p01-c01-e01-l1", [("user", at(first.day, "20:10"), text)], lang)],
        schedule=home_schedule(lang, [(first, last, city)]),
    )


@pytest.mark.parametrize(
    ("lang", "city", "nights"),
    [("en", "Tokyo", 1), ("en", "Honolulu", 1), ("zh", "巴黎", 3), ("zh", "大理", 1)],
)
def test_a_trip_too_short_for_how_far_it_goes_is_named(lang, city, nights):
    first = date(2026, 4, 10)
    view = trip_world(lang, city, first, first + timedelta(days=nights))
    found = findings(view, "catalog", load_catalog(lang))
    assert ids(found) == [["p01-s0001-m01"]]
    assert f"{nights} night(s)" in found[0].text


@pytest.mark.parametrize(
    ("lang", "city", "nights"), [("en", "Tokyo", 6), ("en", "Miami", 2), ("zh", "厦门", 2)]
)
def test_a_trip_as_long_as_its_destination_takes_passes(lang, city, nights):
    first = date(2026, 4, 10)
    view = trip_world(lang, city, first, first + timedelta(days=nights))
    assert findings(view, "catalog", load_catalog(lang)) == []


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_every_trip_destination_has_a_reach(lang):
    from keme.text import resources

    listed = {d.name for d in load_catalog(lang).destinations}
    assert {d.name for d in resources.get(lang).pools.destinations} <= listed


def charge_claim_world(lang: str, merchant: str, category: str, predicate: str) -> PersonaView:
    view = charge_world(lang, at(18, "19:30"), merchant, category, home_schedule(lang))
    said = claim("p01-s0001-m02", 1, "anchor:p01-a001", predicate, "yes", at(18, "19:33"))
    return PersonaView(
        view.persona,
        graph=view.graph,
        sessions=view.sessions,
        schedule=view.schedule,
        claims=[said],
        anchors=list(view.anchors.values()),
    )


def test_a_broadband_bill_called_a_treat_is_named_and_a_dinner_passes():
    found = findings(charge_claim_world("zh", "电信宽带", "话费宽带", "treat"), "catalog", load_catalog("zh"))
    assert ids(found) == [["p01-s0001-m02"]]
    assert "treat" in found[0].text
    assert findings(charge_claim_world("zh", "外婆家", "餐饮", "treat"), "catalog", load_catalog("zh")) == []


def test_going_too_often_to_an_app_is_named_and_to_a_shop_passes():
    found = findings(
        charge_claim_world("zh", "美团外卖", "餐饮", "paid_in_person"), "catalog", load_catalog("zh")
    )
    assert ids(found) == [["p01-s0001-m02"]]
    assert (
        findings(charge_claim_world("zh", "外婆家", "餐饮", "paid_in_person"), "catalog", load_catalog("zh"))
        == []
    )


def test_a_treat_line_is_drawn_only_for_a_category_that_can_be_one():
    catalog = load_catalog("en")
    says = (("treat", "yes"),)
    assert allows(says, bill("p01-a001", "Nonna Rosa's", "48.00", "Dining", "USD"), catalog)
    assert not allows(says, bill("p01-a001", "Xfinity", "80.00", "Bills & Utilities", "USD"), catalog)
    assert not allows(
        (("paid_in_person", "yes"),), bill("p01-a001", "Netflix", "15.49", "Subscriptions", "USD"), catalog
    )


def test_forgetting_what_a_phone_bill_bought_is_named_and_a_dinner_passes():
    found = findings(
        charge_claim_world("zh", "中国联通", "话费宽带", "bought"), "catalog", load_catalog("zh")
    )
    assert ids(found) == [["p01-s0001-m02"]]
    assert findings(charge_claim_world("zh", "外婆家", "餐饮", "bought"), "catalog", load_catalog("zh")) == []
    assert not allows(
        (("bought", "yes"),), bill("p01-a001", "中国联通", "25.58", "话费宽带"), load_catalog("zh")
    )


@pytest.mark.parametrize(
    ("lang", "text"),
    [
        ("zh", "打算到时候在公司附近的一家日料店吃饭的时候当面给"),
        ("en", "High school reunion invite just landed. It's back in Worcester."),
    ],
)
def test_words_that_only_look_like_a_place_said_are_not_findings(lang, text):
    view = world(
        lang,
        [event("p01-c01-e01", "mood_checkin", START, END)],
        [session("p01-s0001", "p01-c01-e01", [("user", at(19, "10:21"), text)], lang)],  # a Sunday
    )
    assert findings(view) == []
