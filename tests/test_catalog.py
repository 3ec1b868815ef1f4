"""The typed catalog: its files load, it types every pool item it replaced, generation combines only
what it pairs, and the combinations the issue names cannot be generated."""

from __future__ import annotations

import re
from decimal import Decimal
from pathlib import Path

import pytest
import yaml
from conftest import ROOT

from keme.synth.limits import load_config
from keme.synth.params import GIFT_LABEL, MEAL_AFTER, PHONE_LABEL
from keme.synth.pipeline import synthesize_persona
from keme.text import resources
from keme.world.catalog import DINING, Catalog, CatalogError, load_catalog
from keme.world.cues import load_cues
from keme.world.prices import load_prices

LANGS = ("en", "zh")
CATALOG_MOMENTS = (
    "weekend_plan",
    "recipe_help",
    "health_symptom",
    "health_followup",
    "purchase_compare",
    "purchase_done",
    "restaurant_pick",
    "social_recap",
    "gift_idea",
    "pet_care",
)
# free pools that paired with another free pool before the catalog (a remedy with any symptom, a
# retailer with any product, a restaurant with any occasion, ...)
PAIRED_POOLS = {
    "restaurants",
    "places",
    "activities",
    "dishes",
    "symptoms",
    "clinics",
    "occasions",
    "a_otc_meds",
    "b_retailers",
    "a_kitchen_tools",
    "a_desserts",
    "a_cakes",
    "packing_items",
}


def _money(text: str) -> Decimal:
    return Decimal(re.sub(r"[^\d.]", "", text))


# ---------------------------------------------------------------- the files
@pytest.mark.parametrize("lang", LANGS)
def test_catalog_file_loads_with_every_list_filled(lang):
    catalog = load_catalog(lang)
    for kind in (
        "venues",
        "activities",
        "dishes",
        "conditions",
        "products",
        "categories",
        "occasions",
        "goals",
    ):
        assert getattr(catalog, kind), f"{lang}: no {kind}"


def test_an_activity_at_a_venue_type_nobody_has_is_refused(tmp_path):
    (tmp_path / "xx.yaml").write_text(
        "venues: [{name: the zoo, type: zoo}]\n"
        "activities: [{name: play mahjong, venue_types: [mahjong_room]}]\n",
        encoding="utf-8",
    )
    with pytest.raises(CatalogError, match="no venue of type: mahjong_room"):
        load_catalog("xx", tmp_path)


@pytest.mark.parametrize("lang", LANGS)
def test_every_pool_item_the_catalog_replaced_is_typed(lang):
    catalog, pools = load_catalog(lang), resources.get(lang).pools
    venues = {v.name: v.type for v in catalog.venues}
    lists = pools.lists
    assert all(venues.get(r) in DINING for r in lists["restaurants"])
    assert all(r in venues for r in lists["places"])
    assert all(c in venues for c in lists["clinics"])
    assert all(venues.get(v) == "vet" for v in lists["vet_clinics"])
    assert set(lists["dishes"]) <= {d.name for d in catalog.dishes}
    assert set(lists["ingredients"]) <= {i for d in catalog.dishes for i in d.ingredients}
    assert set(lists["symptoms"]) <= {c.name for c in catalog.conditions}
    assert set(lists["occasions"]) <= {o.name for o in catalog.occasions}
    assert set(lists["activities"]) <= {a.name for a in catalog.activities}
    gifts = {p.name for p in catalog.products if p.category == GIFT_LABEL[lang]}
    assert set(lists["gifts"]) <= gifts
    assert {p.name for p in pools.products} <= {p.name for p in catalog.products}


@pytest.mark.parametrize("lang", LANGS)
def test_every_phone_a_persona_can_switch_to_is_a_catalog_product(lang):
    catalog = load_catalog(lang)
    phones = resources.get(lang).persona.attributes["tech.phone"].values
    assert all(catalog.item("products", p).category == PHONE_LABEL[lang] for p in phones)


@pytest.mark.parametrize("lang", LANGS)
def test_bill_categories_are_the_catalog_categories(lang):
    catalog = load_catalog(lang)
    bill = resources.get(lang).anchors.bill
    assert {c.label: set(c.merchants) for c in bill.categories.values()} == {
        c.name: set(c.merchants) for c in catalog.categories
    }


# ---------------------------------------------------------------- the named defects
def test_a_murder_mystery_game_is_played_in_a_game_room_never_at_a_zoo():
    zh = load_catalog("zh")
    assert zh.compatible("activity@venue", "去玩剧本杀", "动物园") is False
    assert zh.partners("activity@venue", "去玩剧本杀") == ["商场楼上新开的剧本杀店", "迷雾剧本杀馆"]


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_a_dishs_steps_say_its_own_method_whenever_they_say_another(lang):
    """The steps as the assistant gives them pass the catalog check themselves: a 凉拌 salad with boiled
    quinoa says 凉拌 too (else keme validate reports the dish as boiled)."""
    cues = load_cues(lang)
    for dish in load_catalog(lang).dishes:
        text = " ".join(dish.steps).replace(dish.name, " ")
        if cues.any(cues.methods.get(dish.technique, []), text):
            continue
        others = [o for o, words in cues.methods.items() if o != dish.technique and cues.search(words, text)]
        assert not others, (dish.name, dish.technique, others)


def test_wine_is_bought_at_a_wine_shop_or_supermarket_not_best_buy():
    en = load_catalog("en")
    assert en.compatible("product@store", "a nice bottle of wine", "Best Buy") is False
    assert en.compatible("product@store", "a nice bottle of wine", "Total Wine") is True


def test_steamed_sea_bass_is_steamed_and_braised_pork_has_braising_steps():
    zh = load_catalog("zh")
    assert zh.compatible("dish~method", "清蒸鲈鱼", "炒") is False
    assert zh.item("dishes", "清蒸鲈鱼").method == "蒸"
    pork = zh.item("dishes", "红烧肉")
    assert (
        pork.method == "红烧" and any("炖" in s for s in pork.steps) and any("收汁" in s for s in pork.steps)
    )


def test_a_stiff_neck_gets_heat_and_stretches_never_dayquil():
    en = load_catalog("en")
    assert en.compatible("condition~remedy", "a stiff neck", "DayQuil") is False
    assert {"a heating pad", "gentle neck stretches", "ibuprofen"} <= set(
        en.partners("condition~remedy", "a stiff neck")
    )


def test_a_graduation_is_at_a_campus_and_the_dinner_after_may_be_skewers():
    zh = load_catalog("zh")
    assert zh.compatible("occasion@venue", "毕业典礼", "很久以前羊肉串") is False
    assert zh.partners("occasion@venue", "毕业典礼") == ["大学校园"]
    assert zh.item("venues", "很久以前羊肉串").type in MEAL_AFTER


@pytest.mark.parametrize(
    ("lang", "label", "hospital"),
    [("en", "Health", "Mercy General Hospital"), ("zh", "医疗", "市第一人民医院")],
)
def test_a_hospital_bill_is_health_and_never_split(lang, label, hospital):
    catalog = load_catalog(lang)
    assert catalog.compatible("merchant~category", hospital, label) is True
    assert catalog.item("categories", label).shareable is False


def test_battery_care_is_not_given_for_a_tv():
    tv = load_catalog("en").item("products", "LG C3 55-inch OLED TV")
    assert not any("battery" in tip for tip in tv.care)


# ---------------------------------------------------------------- the patterns
def _moment_text(lang: str, moment: str) -> str:
    for path in sorted((ROOT / "keme/text" / lang).glob("patterns*.yaml")):
        patterns = yaml.safe_load(path.read_text(encoding="utf-8"))
        if moment in patterns:
            return yaml.safe_dump(patterns[moment], allow_unicode=True, width=100000)
    raise AssertionError(f"{lang}: no pattern {moment}")


@pytest.mark.parametrize("lang", LANGS)
@pytest.mark.parametrize("moment", CATALOG_MOMENTS)
def test_catalog_moments_say_paired_things_through_slots_not_free_pools(lang, moment):
    pools = set(re.findall(r"\{pool\d*\.([a-z_0-9]+)", _moment_text(lang, moment)))
    assert not pools & PAIRED_POOLS


@pytest.mark.parametrize("lang", LANGS)
@pytest.mark.parametrize("moment", CATALOG_MOMENTS)
def test_every_number_a_catalog_moment_states_is_a_registered_named_quantity(lang, moment):
    text = _moment_text(lang, moment)
    registered = yaml.safe_load((ROOT / "keme/world/predicates.yaml").read_text(encoding="utf-8"))
    assert re.findall(r"\{(?:num|money):\d+-\d+\}", text) == []
    assert set(re.findall(r"\{(?:num|money):\d+-\d+@([a-z_]+)\}", text)) <= set(registered)


# ---------------------------------------------------------------- generation over real synths
def _year_config(lang: str):
    cfg = load_config(ROOT / "configs/year.yaml")
    personas = [p.model_copy(update={"language": lang}) for p in cfg.personas]
    return cfg.model_copy(update={"personas": personas})


def _trajectories():
    demo = load_config(ROOT / "configs/demo.yaml")
    runs = [synthesize_persona(i, demo) for i in range(len(demo.personas))]
    return runs + [synthesize_persona(0, _year_config(lang)) for lang in LANGS]


@pytest.fixture(scope="module")
def trajectories():
    return _trajectories()


def _episodes(traj):
    """(kind, params) of every depth-1 event: an episode, or a one-moment episode shrunk to its leaf."""
    for event in traj.graph.events:
        if event.depth == 1:
            yield event.params.get("_episode", event.kind), event.params


def _check(kind: str, p: dict[str, str], catalog: Catalog, lang: str) -> list[str]:
    bad = []

    def need(ok: bool | None, what: str) -> None:
        if ok is not True:
            bad.append(f"{kind}: {what}")

    if kind == "weekend":
        need(
            catalog.compatible("activity@venue", p["activity"], p["venue"]), f"{p['activity']} @ {p['venue']}"
        )
        need(p["place"] == p["venue"], "place is the venue")
    elif kind in ("cooking", "diet_change"):
        dish = catalog.item("dishes", p["dish"])
        need(
            catalog.compatible("dish~method", p["dish"], p["cooking_method"]),
            f"{p['dish']} ~ {p['cooking_method']}",
        )
        need(p["ingredient"] in dish.ingredients, f"{p['ingredient']} in {p['dish']}")
        need(all(step.lower() in p["steps"].lower() for step in dish.steps), f"steps of {p['dish']}")
    elif kind == "health":
        need(
            catalog.compatible("condition~remedy", p["symptom"], p["remedy"]),
            f"{p['symptom']} ~ {p['remedy']}",
        )
        need(
            catalog.compatible("condition@clinic", p["symptom"], p["clinic"]),
            f"{p['symptom']} @ {p['clinic']}",
        )
    elif kind in ("shopping", "new_phone"):
        product = catalog.item("products", p["product"])
        need(catalog.compatible("product@store", p["product"], p["store"]), f"{p['product']} @ {p['store']}")
        low, high = product.price
        need(low <= _money(p["price"]) <= high, f"{p['product']} at {p['price']}")
        need(p["care"] in product.care, f"care {p['care']!r} for {p['product']}")
        need((product.category == PHONE_LABEL[lang]) == (kind == "new_phone"), "phones only in new_phone")
    elif kind == "social":
        need(
            catalog.compatible("occasion@venue", p["occasion"], p["venue"]), f"{p['occasion']} @ {p['venue']}"
        )
        venue = catalog.item("venues", p["venue"])
        restaurant = catalog.item("venues", p["restaurant"])
        need(
            p["restaurant"] == p["venue"] if venue.type in DINING else restaurant.type in MEAL_AFTER,
            f"meal at {p['restaurant']} for {p['occasion']} at {p['venue']}",
        )
        need(
            catalog.compatible("product@store", p["gift"], p["gift_store"]),
            f"{p['gift']} @ {p['gift_store']}",
        )
        low, high = catalog.item("products", p["gift"]).price
        need(low <= _money(p["gift_price"]) <= high, f"{p['gift']} at {p['gift_price']}")
        need(
            _money(p["gift_price"]) <= _money(p["gift_budget"]),
            f"{p['gift_price']} within {p['gift_budget']}",
        )
        per_head, total = _money(p["budget_per_person"]), _money(p["dinner_total"])
        need(
            abs(total - int(p["party_size"]) * per_head) <= total / 5,
            f"{p['party_size']} x {per_head} ~ {total}",
        )
    elif kind in ("pet", "adopt_pet"):
        need(catalog.item("venues", p["vet_clinic"]).type == "vet", f"vet {p['vet_clinic']}")
    return bad


def test_every_catalog_episode_combines_only_compatible_items(trajectories):
    checked, bad = 0, []
    kinds = {
        "weekend",
        "cooking",
        "diet_change",
        "health",
        "shopping",
        "new_phone",
        "social",
        "pet",
        "adopt_pet",
    }
    for traj in trajectories:
        lang = traj.persona.language
        catalog = load_catalog(lang)
        for kind, params in _episodes(traj):
            if kind in kinds:
                checked += 1
                bad += _check(kind, params, catalog, lang)
    assert checked > 100 and bad == []


def test_every_bill_merchant_belongs_to_its_category_and_amount_to_its_price_range(trajectories):
    bills = 0
    for traj in trajectories:
        lang = traj.persona.language
        catalog = load_catalog(lang)
        ranges = {c.label: c.amount for c in resources.get(lang).anchors.bill.categories.values()}
        prices = load_prices(lang)  # a merchant the price table knows charges its category's range
        for anchor in traj.anchors:
            if anchor.app != "bill":
                continue
            bills += 1
            record = anchor.record
            assert catalog.compatible("merchant~category", record.merchant, record.category) is True, record
            low, high = prices.merchant_range(record.merchant) or ranges[record.category]
            assert Decimal(str(low)) <= record.amount <= Decimal(str(high)), record
    assert bills > 20


def test_the_sessions_of_catalog_moments_say_the_catalog_values(trajectories):
    said = 0
    for traj in trajectories:
        events = {e.id: e for e in traj.graph.events}
        for session in traj.sessions:
            leaf = events[session.event_id]
            params = leaf.params if leaf.depth == 1 else events[leaf.parent_id].params
            text = "\n".join(m.content for m in session.messages)
            for slot in ("venue", "remedy", "store", "cooking_method"):
                if session.pattern in CATALOG_MOMENTS and slot in params and params[slot] in text:
                    said += 1
    assert said > 50


def test_catalog_files_are_utf8_yaml_mappings():
    for lang in LANGS:
        data = yaml.safe_load(Path(ROOT / f"keme/world/catalog/{lang}.yaml").read_text(encoding="utf-8"))
        assert isinstance(data, dict) and "venues" in data


# ---------------------------------------------------------------- fitness goals fit the sport
@pytest.mark.parametrize("lang", LANGS)
def test_every_main_sport_has_goals_of_its_own(lang):
    catalog = load_catalog(lang)
    for sport in resources.get(lang).persona.attributes["sport.main_sport"].values:
        own = [g for g in catalog.goals if sport in g.sports]
        assert len(own) >= 2, f"{lang}: {sport} has {len(own)} goals of its own"


def test_bench_press_is_a_crossfit_goal_never_a_pilates_one():
    catalog = load_catalog("en")
    assert catalog.compatible("goal~sport", "bench press 135 pounds", "CrossFit") is True
    assert catalog.compatible("goal~sport", "bench press 135 pounds", "pilates") is False
    assert "bench press 135 pounds" not in catalog.goals_for("pilates")


def test_a_general_goal_suits_any_sport_and_a_goal_that_counts_workouts_is_none():
    catalog = load_catalog("en")
    assert catalog.compatible("goal~sport", "lose 10 pounds", "pilates") is True
    # a weekly count would say the training routine a second time, and differently
    assert catalog.compatible("goal~sport", "work out four times a week", "running") is None


def test_every_fitness_goal_generated_fits_the_sport_it_is_set_under(trajectories):
    for traj in trajectories:
        catalog = load_catalog(traj.persona.language)
        for event in traj.graph.events:
            if event.depth != 1 or "goal" not in event.params:
                continue
            sport = event.params.get("set:sport.main_sport") or traj.persona.value_at(
                "sport.main_sport", event.start
            )
            assert catalog.compatible("goal~sport", event.params["goal"], sport), (event.id, sport)


def test_a_holiday_party_is_offered_in_december_never_in_june():
    catalog = load_catalog("en")
    assert "holiday party" in [o.name for o in catalog.occasions_in(12)]
    assert "holiday party" not in [o.name for o in catalog.occasions_in(6)]


def test_a_graduation_is_offered_in_june_never_in_march():
    catalog = load_catalog("en")
    assert "graduation" in [o.name for o in catalog.occasions_in(6)]
    assert "graduation" not in [o.name for o in catalog.occasions_in(3)]


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_every_occasion_is_one_persons(lang):
    """Lines say "{person}'s {occasion}" and "{person}的{occasion}": a class reunion (同学聚会) is no one's,
    and its session read as a birthday's (a holiday party is its host's, a holiday dinner a sibling's)."""
    names = {o.name for o in load_catalog(lang).occasions}
    assert not names & {"class reunion", "同学聚会"}


def test_every_seasonal_occasion_generated_falls_in_its_season(trajectories):
    for traj in trajectories:
        catalog = load_catalog(traj.persona.language)
        for event in traj.graph.events:
            if event.depth == 1 and "occasion" in event.params:
                occasion = catalog.item("occasions", event.params["occasion"])
                assert occasion.in_season(event.start.month), (event.id, occasion.name, event.start)
