"""Computed figures (keme/world/figures.py): a count or total the assistant states is what the bill records
give at that moment, and a line needing a figure the records cannot give is not drawn."""

from __future__ import annotations

import random
from datetime import datetime
from decimal import Decimal

import pytest

from keme.models import Anchor
from keme.models.anchor import BillRecord
from keme.text.template import Context, compile_template, render
from keme.world.figures import Records, figures_at, figures_first, unsayable

T = datetime.fromisoformat
CATEGORY = {"en": ("Bills & Utilities", "Dining"), "zh": ("水电燃气", "餐饮")}


def bill(aid: str, when: str, amount: str, category: str, method: str = "card") -> Anchor:
    record = BillRecord(
        merchant="m", amount=Decimal(amount), currency="CNY", category=category, payment_method=method
    )
    return Anchor(
        id=aid, persona_id="p01", app="bill", app_name="Wallet", timestamp=T(when), record=record
    ).sealed()


def bills(lang: str) -> list[Anchor]:
    utilities, dining = CATEGORY[lang]
    return [
        bill("p01-a001", "2026-03-02T12:00", "80.00", dining),
        bill("p01-a002", "2026-04-01T09:30", "20.00", dining, "cash"),
        bill("p01-a003", "2026-04-03T09:00", "10.00", utilities),
        bill("p01-a004", "2026-04-03T19:00", "34.47", utilities),  # the one the session is about
        bill("p01-a005", "2026-04-20T19:00", "500.00", utilities),  # later: not seen on April 3
    ]


def at_april_3(lang: str, since: str = "2026-03-01") -> dict[str, str]:
    anchors = bills(lang)
    return figures_at(Records(anchors, T("2026-04-03T19:00"), anchors[3], T(since).date()))


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_a_months_category_total_and_count_are_the_records_up_to_now(lang):
    figures = at_april_3(lang)
    assert figures["category_month_total"] == "44"  # 10.00 this morning + 34.47 now; not the 20th's
    assert figures["bill_count_month"] == "2"
    assert figures["category_month_share_percent"] == "69"  # 44.47 of 64.47
    assert figures["payment_method_month_total"] == "44"  # the cash charge is another method
    assert figures["bill_count_today"] == "2"


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_a_first_charge_gives_no_count_and_a_lone_category_no_share(lang):
    utilities, _ = CATEGORY[lang]
    anchors = [bill("p01-a001", "2026-04-03T19:00", "34.47", utilities)]
    figures = figures_at(Records(anchors, T("2026-04-03T19:00"), anchors[0], T("2026-04-01").date()))
    assert figures == {"category_month_total": "34", "payment_method_month_total": "34"}  # no March either


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_a_rise_over_last_month_compares_the_same_days_and_is_said_only_when_it_is_a_rise(lang):
    assert "month_over_month_increase" not in at_april_3(lang)  # March 1-3: 80.00, April 1-3: 64.47
    anchors = [bill("p01-a000", "2026-03-10T12:00", "80.00", CATEGORY[lang][1]), *bills(lang)[1:]]
    figures = figures_at(Records(anchors, T("2026-04-03T19:00"), anchors[3], T("2026-03-01").date()))
    assert figures["month_over_month_increase"] == "64"  # the dinner on March 10 is after the same days


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_no_rise_is_said_without_a_last_month(lang):
    figures = at_april_3(lang, since="2026-04-01")
    assert "month_over_month_increase" not in figures and "month_over_month_percent" not in figures


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_a_record_arriving_during_the_session_leaves_no_figure(lang):
    anchors = bills(lang)
    records = Records(anchors, T("2026-04-20T18:00"), None, T("2026-03-01").date(), T("2026-04-20T20:00"))
    assert figures_at(records) == {}


def test_a_line_needing_an_absent_figure_is_unsayable():
    assert unsayable({"month_over_month_increase", "party_size"}, {"bill_count_month": "2"})
    assert not unsayable({"month_over_month_increase"}, {"month_over_month_increase": "40"})
    assert not unsayable({"party_size"}, {})  # a drawn quantity is no figure


@pytest.mark.parametrize(
    ("lang", "line", "said"),
    [
        ("en", "Counting this one, {num:3-12@bill_count_month}.", "Counting this one, 2."),
        ("zh", "{category}本月累计大概{money:300-1500@category_month_total}", "水电燃气本月累计大概¥44"),
    ],
)
def test_the_renderer_says_the_computed_figure_not_a_draw(lang, line, said):
    recall = figures_first(at_april_3(lang), None)
    ctx = Context(lang=lang, rng=random.Random(1), persona={}, slots={"category": "水电燃气"}, recall=recall)
    assert render(compile_template(line), ctx) == said
