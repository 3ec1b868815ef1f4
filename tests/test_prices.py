"""Prices come from the world: per-category, per-country ranges (keme/world/prices), one provider per
utility per household."""

from __future__ import annotations

import random
import re
from decimal import Decimal
from pathlib import Path

import pytest

from keme.prior.anchors import build_anchors
from keme.prior.persona import build_persona
from keme.synth.limits import parse_config
from keme.text import resources
from keme.text.template import Context, compile_template, render
from keme.world.prices import PriceError, PriceTable, bounded, choose_providers, load_prices

TEXT = Path(__file__).resolve().parents[1] / "keme" / "text"
MONEY = re.compile(r"\{money:\d+-\d+@([a-z_][a-z_0-9.]*)\}")

# What no one pays in the country, whatever the line: written apart from the table, from what things cost
# (a Chinese bus ride is 1-2 yuan, a 沙县小吃 meal a few dozen; a US bus ride a few dollars).
CEILINGS: dict[str, dict[str, int]] = {
    "zh": {"bus_fare": 20, "metro_fare": 20, "bike_ride": 10, "snack_meal": 80, "tea_drink": 60, "coffee": 80,
           "fast_food": 150, "gas": 400, "water": 200, "power": 800, "canteen_meal": 50,
           "takeout": 200, "parking": 100, "movie_ticket": 300},
    "en": {"coffee": 15, "fast_casual_meal": 40, "ride": 120, "parking": 60, "streaming_month": 30,
           "internet": 150, "mobile": 200, "movie_ticket": 80, "copay": 100, "bag_fee": 80},
}  # fmt: skip


def money_slots(lang: str) -> set[str]:
    """Every named money quantity the text banks of `lang` write (patterns, anchors, persona, filler)."""
    return {m for path in (TEXT / lang).rglob("*.yaml") for m in MONEY.findall(path.read_text("utf-8"))}


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_every_money_slot_of_the_text_banks_has_a_price_category(lang):
    table = load_prices(lang)
    assert money_slots(lang), "the scan found no money slot"
    assert sorted(money_slots(lang) - table.slots.keys()) == []


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_every_bill_merchant_has_a_price_category(lang):
    table = load_prices(lang)
    merchants = {m for c in resources.get(lang).anchors.bill.categories.values() for m in c.merchants}
    assert sorted(merchants - table.merchants.keys()) == []


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_no_category_costs_more_than_anyone_pays_in_the_country(lang):
    table = load_prices(lang)
    for category, ceiling in CEILINGS[lang].items():
        low, high = table.categories[category]
        assert high <= ceiling, f"{lang} {category}: up to {high} (no one pays over {ceiling})"
        assert low * 20 >= high or high <= 60, f"{lang} {category}: [{low}, {high}] is no one kind of thing"


def test_the_currency_is_the_countrys():
    assert load_prices("en").currency == resources.get("en").anchors.bill.currency == "USD"
    assert load_prices("zh").currency == resources.get("zh").anchors.bill.currency == "CNY"


def test_a_table_naming_an_unknown_category_is_refused():
    with pytest.raises(ValueError, match="unknown category 'bus'"):
        PriceTable(currency="CNY", categories={"bus_fare": (1, 5)}, merchants={"公交乘车码": "bus"})


def test_a_broken_price_file_names_itself(tmp_path):
    (tmp_path / "zh.yaml").write_text("currency: CNY\ncategories: {bus_fare: [5, 1]}\n", "utf-8")
    with pytest.raises(PriceError, match="zh.yaml"):
        load_prices("zh", tmp_path)


def test_a_lines_range_is_kept_inside_its_category():
    assert bounded(30, 90, (10, 150)) == (30, 90)  # inside: the line's own range
    assert bounded(80, 200, (40, 150)) == (80, 150)  # overlapping: the overlap
    assert bounded(200, 300, (10, 150)) == (10, 150)  # wholly outside: the category's
    assert bounded(200, 300, None) == (200, 300)  # no category: the line's


@pytest.mark.parametrize(
    ("lang", "line", "most"),
    [
        ("zh", "打车花了{money:200-300@taxi_spend_today}", 150),
        ("en", "the ride was {money:200-300@ride_price}", 80),
    ],
)
def test_the_renderer_draws_a_named_amount_from_its_category(lang, line, most):
    table = load_prices(lang)
    said: list[str] = []
    for seed in range(30):
        ctx = Context(lang=lang, rng=random.Random(seed), persona={}, bound=table.bound)
        render(compile_template(line), ctx, on_said=lambda kind, name, value, text: said.append(value))
    assert said and all(int(v) <= most for v in said)


def test_without_a_table_the_renderer_keeps_the_lines_range():
    ctx = Context(lang="zh", rng=random.Random(1), persona={})
    said: list[str] = []
    render(compile_template("{money:200-300@taxi_spend_today}"), ctx, on_said=lambda *a: said.append(a[2]))
    assert 200 <= int(said[0]) <= 300


def test_a_household_has_one_provider_per_utility():
    table = load_prices("zh")
    merchants = ["国家电网", "南方电网", "华润燃气", "港华燃气", "新奥燃气", "市自来水公司", "电信宽带"]
    providers = choose_providers(table, merchants, random.Random(3))
    assert set(providers) == {"power", "gas", "water", "internet"}
    assert providers["gas"] in {"华润燃气", "港华燃气", "新奥燃气"}
    assert providers["water"] == "市自来水公司"


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_a_personas_bills_come_from_one_company_per_utility_at_the_merchants_price(lang):
    cfg = parse_config(
        f"name: t\nseed: 4\npersonas:\n  - {{language: {lang}, start: 2026-01-01, months: 12}}\n"
        "anchors:\n  per_month: {bill: 9}\n"
    )
    res = resources.get(lang)
    table = load_prices(lang)
    bills = [a.record for a in build_anchors(build_persona(cfg.personas[0], 0, 4, res), cfg, res)]
    by_kind: dict[str, set[str]] = {}
    for bill in bills:
        kind = table.merchants[bill.merchant]
        if kind in table.providers:
            by_kind.setdefault(kind, set()).add(bill.merchant)
        low, high = table.categories[kind]
        assert low <= bill.amount <= high, f"{bill.merchant} {bill.amount} outside {kind} [{low}, {high}]"
    assert by_kind, "a year of bills pays no utility"
    assert all(len(companies) == 1 for companies in by_kind.values()), by_kind


def test_a_fare_is_charged_in_whole_yuan_a_meal_to_the_fen():
    table = load_prices("zh")
    assert table.charge("公交乘车码", Decimal("2.12")) == Decimal("2.00")
    assert table.charge("地铁乘车码", Decimal("4.50")) == Decimal("5.00")
    assert table.charge("沙县小吃", Decimal("23.47")) == Decimal("23.47")


def test_a_household_has_one_mobile_carrier_and_one_property_manager():
    assert {"mobile", "property_fee", "rent_month"} <= set(load_prices("zh").providers)
    assert {"mobile", "internet"} <= set(load_prices("en").providers)
