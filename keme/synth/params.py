"""What an episode holds: its details (params) drawn from the pools, the catalog and the persona as it is
then, and the new values a life change sets. Split from the planner, which decides which episodes happen
and when; this module only fills them in.
"""

from __future__ import annotations

import random
from datetime import datetime, timedelta

from keme.models import Persona
from keme.models.catalog import Change
from keme.prior.people import distinct_names
from keme.seeding import rng_for
from keme.synth import lifecycle
from keme.synth.context import PlanContext
from keme.synth.state import Trajectory
from keme.text import lang as fmt
from keme.text.resources import ResourceError, Resources
from keme.world.catalog import DINING, Catalog, Occasion, Product, Role
from keme.world.venues import load_local

PHONE_LABEL = {"en": "phone", "zh": "手机"}  # the catalog category of phones (bought only in new_phone)
GIFT_LABEL = {"en": "gift", "zh": "礼物"}  # the catalog category of gifts (social episodes)
MEAL_AFTER = ("restaurant", "hotpot", "bbq")  # where the dinner after a non-dining occasion is had
PER_HEAD = {"en": (25, 80), "zh": (60, 200)}  # what an occasion meal costs a head
SHOW_GENRE = {"en": "series", "zh": "剧集"}
SET = "set:"  # params prefix for the new value of a changed attribute


def colleagues(seed: int, persona: Persona, company: str, res: Resources) -> list[str]:
    """The people at a company: stable for as long as the persona works there, and none of them her best
    friend, sibling or partner ("how do I know Trevor?" had two answers when her best friend was also on
    her project)."""
    circle = {
        v.value
        for key in ("social_circle.best_friend", "social_circle.sibling", "social_circle.partner")
        for v in persona.attribute(key).versions
    }
    return distinct_names(
        rng_for(seed, persona.id, "colleagues", company), res, 4, avoid={persona.name} | circle
    )


def _companion(rng: random.Random, persona: Persona, when: datetime) -> str:
    options = [
        persona.value_at("social_circle.best_friend", when),
        persona.value_at("social_circle.sibling", when),
    ]
    partner = persona.value_at("social_circle.partner", when)
    if partner:
        options += [partner, partner]
    return rng.choice([o for o in options if o])


def fitness_goal(rng: random.Random, catalog: Catalog, sport: str, *others: str) -> str:
    """A fitness goal that fits `sport` (catalog goal~sport): no bench press for a pilates person; and
    `others` too (the sports an episode's window spans), when the catalog has a goal that fits them all."""
    goals = catalog.goals_for(sport)
    if not goals:
        raise ResourceError(f"the catalog has no fitness goal for {sport!r}: add goals to keme/world/catalog")
    common = [g for g in goals if all(g in catalog.goals_for(other) for other in others)]
    return rng.choice(common or goals)


def _sports_over(traj: Trajectory, when: datetime, until: datetime) -> list[str]:
    """Every main sport the persona has between `when` and `until`, planned changes included: the one at
    `when` first, then the one before and after each change planned in the window."""
    key = "sport.main_sport"
    sports = [planned_value(traj, key, when) or ""]
    for event in traj.events.values():
        if f"set:{key}" in event.params and when < event.end and event.start <= until:
            sports += [planned_value(traj, key, event.start - timedelta(microseconds=1)) or ""]
            sports += [event.params[f"set:{key}"]]
    sports.append(planned_value(traj, key, until) or "")
    return list(dict.fromkeys(sports))


def planned_value(traj: Trajectory, key: str, when: datetime) -> str | None:
    """`key` as it will be at `when`: the value a change planned to start by then sets (its update is not
    realized yet while later episodes are planned), else the persona's value."""
    planned = [e for e in traj.events.values() if f"set:{key}" in e.params and e.start <= when]
    if planned:
        return max(planned, key=lambda e: (e.start, e.id)).params[f"set:{key}"]
    return traj.persona.value_at(key, when)


def _next_planned(traj: Trajectory, key: str, when: datetime) -> str | None:
    """The value the first change planned to start after `when` sets for `key`, if any."""
    later = [e for e in traj.events.values() if f"set:{key}" in e.params and e.start > when]
    return min(later, key=lambda e: (e.start, e.id)).params[f"set:{key}"] if later else None


def _money(rng: random.Random, low: int, high: int, lang: str) -> str:
    step = 10 if high - low > 100 else 1
    return fmt.format_money(rng.randrange(low, high + 1, step) if high > low else low, lang)


def episode_params(
    kind: str,
    rng: random.Random,
    traj: Trajectory,
    ctx: PlanContext,
    when: datetime,
    nights: int | None = None,
    until: datetime | None = None,
) -> dict[str, str]:
    """Concrete details of an episode, drawn from the pools and the persona as it is at `when`; a trip of
    `nights` goes only as far as that many nights allow (catalog `destinations`); a fitness goal suits the
    main sport all the way to `until` (a sport change planned inside the window does not orphan it)."""
    res, lang, persona, catalog = ctx.res, ctx.lang, traj.persona, ctx.catalog
    lists = res.pools.lists
    if kind == "trip":
        home = persona.value_at("home.city", when)
        away = [d for d in res.pools.destinations if d.name != home] or res.pools.destinations
        # a trip is a one-off: a place she went to in this trajectory is not drawn again while others are left
        # ("before I went to Sanya, which sight did I want to see?" would have two answers)
        been = {e.params.get("destination") for e in traj.events.values() if e.kind == "trip"}
        away = [d for d in away if d.name not in been] or away
        if nights is not None:  # only where a trip of that many nights can go
            away = [d for d in away if (catalog.nights(d.name) or (1, 1))[0] <= nights] or away
        dest = rng.choice(away)
        return {
            "destination": dest.name,
            "attraction": rng.choice(dest.attractions),
            "local_food": rng.choice(dest.foods),
            "companion": _companion(rng, persona, when),
        }
    if kind in ("work_project", "promotion"):
        # a project is delivered once: a work episode with no project left is not planned (regular_episode),
        # and the ones a promotion still to come needs are kept for it
        company = planned_value(traj, "career.company", when) or ""
        events, life = list(traj.events.values()), catalog.lifecycle
        reserve = lifecycle.promotions_ahead(events) if kind == "work_project" else 0
        project = lifecycle.project_for(rng, events, life, lists["projects"], when, reserve, until)
        if project is None and kind == "promotion":
            project = lifecycle.reused_project(events, lists["projects"])
        params = {"project": project} if project else {}
        return params | {"colleague": rng.choice(colleagues(ctx.cfg.seed, persona, company, res))}
    if kind == "health":
        return _health(rng, catalog)
    if kind in ("fitness", "gym_change", "new_sport"):
        # new_sport: change_params draws the goal again for the sport it sets
        return {"goal": fitness_goal(rng, catalog, *_sports_over(traj, when, until or when))}
    if kind == "social":
        people = [
            (persona.value_at("social_circle.best_friend", when), "friend"),
            (persona.value_at("social_circle.sibling", when), "sibling"),
        ]
        people += [(persona.value_at("social_circle.partner", when), "partner")] * 2
        known = {persona.name, *(p for p, _ in people if p)}
        people += [(name, "acquaintance") for name in distinct_names(rng, res, 1, known)] * 2
        people = [p for p in people if p[0]]
        # someone with an occasion left to have (a once-only one is not held twice)
        person, role = rng.choice([p for p in people if _occasions(traj, catalog, when, until, *p)] or people)
        return social_params(rng, traj, ctx, when, person, role, until)
    if kind == "shopping":
        goods = [p for p in catalog.products if p.category not in (PHONE_LABEL[lang], GIFT_LABEL[lang])]
        bought = _drawn(traj, "shopping", "product")
        return _purchase(rng, rng.choice([p for p in goods if p.name not in bought] or goods), lang)
    if kind in ("cooking", "diet_change"):
        # diet_change: the diet the change sets (its update is not realized yet)
        keys = {a.key for a in traj.persona.attributes()}
        held = {planned_value(traj, key, when) or "" for key in DISH_LIMITS if key in keys}
        return _cooking(rng, catalog, lang, held)
    if kind == "entertainment":
        seen = _drawn(traj, "entertainment", "title")
        title = rng.choice([t for t in res.pools.titles if t.title not in seen] or res.pools.titles)
        return {"title": title.title, "genre": title.genre}
    if kind in ("learning", "new_course"):
        return {"resource": rng.choice(lists["learning_resources"])}
    if kind == "family":
        return {"relative": rng.choice(lists["relatives"])}
    if kind == "weekend":
        city = persona.value_at("home.city", when)  # at a venue of the persona's own city (keme.world.venues)
        activity, venue = load_local(lang).choose(
            rng, catalog.activities, lambda a: catalog.venues_of(a.venue_types), city
        )
        return {"activity": activity.name, "venue": venue.name, "place": venue.name}
    if kind == "tech":
        return {"device": rng.choice(lists["devices"]), "issue": rng.choice(lists["tech_issues"])}
    if kind in ("pet", "adopt_pet"):
        return {"vet_clinic": rng.choice(catalog.venues_of(["vet"])).name}
    return {}


def _drawn(traj: Trajectory, kind: str, key: str) -> set[str]:
    """The `key` values the trajectory's episodes of `kind` already hold: a thing bought or a film watched is
    a one-off, not drawn again while others are left ("when did I buy the Peloton Bike?" had two answers)."""
    return {e.params[key] for e in traj.events.values() if e.kind == kind and key in e.params}


# Catalog-backed params: each episode combines only items the catalog pairs (keme.world.catalog).
def _health(rng: random.Random, catalog: Catalog) -> dict[str, str]:
    condition = rng.choice(catalog.conditions)
    return {
        "symptom": condition.name,
        "clinic": rng.choice(catalog.venues_of(condition.clinic_types)).name,
        "remedy": rng.choice(condition.remedies),
    }


# occasions of one yearly kind (a birthday) for one person this many days apart are in different years
YEAR_APART = 330


def _yearly_held(traj: Trajectory, catalog: Catalog, person: str, when: datetime) -> set[str]:
    """The yearly kinds (birthday, anniversary) `person` already has an occasion of within a year of
    `when`: a second birthday party in the same year would contradict the first."""
    kinds = {o.name: o.yearly for o in catalog.occasions if o.yearly}
    return {
        kinds[event.params["occasion"]]
        for event in traj.events.values()
        if event.kind == "social"
        and event.params.get("person") == person
        and event.params.get("occasion") in kinds
        and abs((event.start - when).days) < YEAR_APART
    }


def _occasions(
    traj: Trajectory, catalog: Catalog, when: datetime, until: datetime | None, person: str, role: Role
) -> list[Occasion]:
    """`person`'s occasions that can fall from `when` to `until`: of the season, theirs by `role`, no
    yearly kind they had this year, no once-only one they had, none out of their life order
    (keme.synth.lifecycle), and none whose name may not be said on one of those days (`_in_time`)."""
    held = _yearly_held(traj, catalog, person, when)
    once = lifecycle.once_held(traj.events.values(), catalog.lifecycle, person)
    had = lifecycle.occasions_of(traj.events.values(), person)
    return _in_time(
        traj,
        catalog,
        [
            o
            for o in catalog.occasions_in(when.month, role)
            if o.yearly not in held
            and lifecycle.open_occasion(catalog.lifecycle, o.name, once)
            and lifecycle.in_life_order(catalog.lifecycle, o.name, when.date(), had)
        ],
        when,
        until,
    )


def _in_time(
    traj: Trajectory, catalog: Catalog, occasions: list[Occasion], when: datetime, until: datetime | None
) -> list[Occasion]:
    """The `occasions` whose names may be said on every day from `when` to `until` (a holiday's: near the
    holiday, as the checks hold it, not in the month it falls in: 中秋团圆饭 in October is after 中秋 some
    years and not others)."""
    last = (until or when).date()
    life = catalog.lifecycle
    return [o for o in occasions if lifecycle.named_throughout(o.name, when.date(), last, life, traj.persona)]


def social_params(
    rng: random.Random,
    traj: Trajectory,
    ctx: PlanContext,
    when: datetime,
    person: str,
    role: Role,
    until: datetime | None = None,
) -> dict[str, str]:
    """`person`'s occasion from `when` to `until`: one of the season that can be theirs (by `role`, their
    relation to the persona; none of a yearly kind they already had this year) at a venue that holds it;
    the meal is there when the venue is a dining one, else at a restaurant after (the dinner after a
    graduation); a gift from a store that sells it, at its price."""
    catalog, lang = ctx.catalog, ctx.lang
    held = _yearly_held(traj, catalog, person, when)
    local, city = load_local(lang), traj.persona.value_at("home.city", when)  # keme.world.venues
    anyone = [o for o in catalog.occasions_in(when.month, role) if o.yearly not in held]
    occasions = _occasions(traj, catalog, when, until, person, role) or (
        _in_time(traj, catalog, anyone, when, until) or anyone
    )
    occasion, venue = local.choose(rng, occasions, lambda o: catalog.venues_of(o.venue_types), city)
    meal = local.local(catalog.venues_of(MEAL_AFTER), city) or catalog.venues_of(MEAL_AFTER)
    restaurant = venue if venue.type in DINING else rng.choice(meal)
    gifts = [p for p in catalog.products if p.category == GIFT_LABEL[lang]]
    given = _drawn(traj, "social", "gift")  # one gift given thrice: a reader of the year sees it repeat
    gift = rng.choice([p for p in gifts if p.name not in given] or gifts)
    price = rng.randint(*gift.price)
    step = 100 if lang == "zh" else 10
    return {
        "person": person,
        "occasion": occasion.name,
        "venue": venue.name,
        "restaurant": restaurant.name,
        "gift": gift.name,
        "gift_store": rng.choice(gift.stores),
        "gift_price": fmt.format_money(price, lang),
        "gift_budget": fmt.format_money((price // step + 1) * step, lang),  # the gift fits the budget
    } | _meal(rng, lang)


def _meal(rng: random.Random, lang: str) -> dict[str, str]:
    """The occasion meal: how many were there, the per-head budget, and a bill that adds up to both."""
    people = rng.randint(2, 8)
    per_head = rng.randint(*PER_HEAD[lang])
    total = round(people * per_head * rng.uniform(0.85, 1.15))
    return {
        "party_size": str(people),
        "budget_per_person": fmt.format_money(per_head, lang),
        "dinner_total": fmt.format_money(total, lang),
    }


def _purchase(rng: random.Random, product: Product, lang: str) -> dict[str, str]:
    return {
        "product": product.name,
        "product_category": product.category,
        "price": _money(rng, *product.price, lang),
        "store": rng.choice(product.stores),
        "care": rng.choice(product.care) if product.care else "",
    }


# what a dish must go with (catalog Dish.avoid): the persona's allergy and diet
DISH_LIMITS = ("health.allergy", "diet.diet_type")


def _cooking(rng: random.Random, catalog: Catalog, lang: str, held: set[str]) -> dict[str, str]:
    """A dish none of `held` (the persona's allergy and diet then) rules out: no shrimp and eggs for
    a shellfish allergy, no carbonara for the dairy-free."""
    dish = rng.choice([d for d in catalog.dishes if not held & set(d.avoid)] or catalog.dishes)
    return {
        "dish": dish.name,
        "ingredient": rng.choice(dish.ingredients),
        "cooking_method": dish.method,
        "steps": _steps(dish.steps, lang),
    }


def _steps(steps: list[str], lang: str) -> str:
    """A dish's steps as one line: "1) ... 2) ..." / "1. ……；2. ……"."""
    if lang == "zh":
        return "；".join(f"{i}. {step}" for i, step in enumerate(steps, 1))
    return " ".join(f"{i}) {step[0].upper()}{step[1:]}." for i, step in enumerate(steps, 1))


def _new_value(
    key: str,
    rng: random.Random,
    current: str | None,
    res: Resources,
    held: dict[str, str] | None = None,
    following: str | None = None,
) -> str:
    """Another value of `key` (not `current`, nor the `following` one a later change sets), one that fits
    what the persona will hold (`held`: the usual lunch fits the new diet)."""
    fitting = res.persona.attributes[key].fitting(held or {})
    # with two values only, the later change repeats this one; keep going
    options = [v for v in fitting if v not in (current, following)] or [v for v in fitting if v != current]
    if not options:
        raise ResourceError(
            f"no new value of {key} fits {held}: give each value its options in "
            f"keme/text/{res.lang}/persona.yaml attributes.{key}.fits"
        )
    return rng.choice(options)


def change_params(
    change: Change,
    rng: random.Random,
    traj: Trajectory,
    ctx: PlanContext,
    when: datetime,
    until: datetime | None = None,
) -> dict[str, str]:
    """The new attribute values a change will set (as `set:<key>`) and its slot params."""
    persona, res, lang = traj.persona, ctx.res, ctx.lang
    params = episode_params(change.name, rng, traj, ctx, when, until=until)
    # the value just before and just after `when`, counting changes planned but not realized yet: a new
    # value differs from both (two changes in a row must not set the same number of workouts a week)
    current = {key: planned_value(traj, key, when) for key in change.attributes}
    after = {key: _next_planned(traj, key, when) for key in change.attributes}
    new: dict[str, str] = {}
    if change.name == "relocate":
        city = rng.choice([c for c in res.pools.cities if c.name != current["home.city"]])
        new = {"home.city": city.name, "home.neighborhood": rng.choice(city.neighborhoods)}
        params |= {"target_city": city.name, "target_neighborhood": new["home.neighborhood"]}
    elif change.name == "relationship":
        avoid = {persona.name} | {a.versions[-1].value for a in persona.attributes() if a.versions}
        new = {"social_circle.partner": distinct_names(rng, res, 1, avoid)[0]}
    elif change.name == "new_phone":
        new = {"tech.phone": _new_value("tech.phone", rng, current["tech.phone"], res)}
        params |= _purchase(rng, ctx.catalog.item("products", new["tech.phone"]), lang)
    elif change.name == "new_show":
        new = {
            "entertainment.favorite_show": _new_value(
                "entertainment.favorite_show", rng, current["entertainment.favorite_show"], res
            )
        }
        genres = {t.title: t.genre for t in res.pools.titles}
        params |= {
            "title": new["entertainment.favorite_show"],
            "genre": genres.get(new["entertainment.favorite_show"], SHOW_GENRE[lang]),
        }
    for key in change.attributes:
        if key not in new:
            fits = res.persona.attributes[key].fits
            held = {k: new.get(k) or persona.value_at(k, when) or "" for k in fits}
            new[key] = _new_value(key, rng, current[key], res, held, after[key])
    if change.name == "promotion":  # up the ladder the persona stands on, not into another career
        title = lifecycle.promotion_title(
            rng, ctx.catalog.lifecycle, current["career.job_title"], [after["career.job_title"] or ""]
        )
        new["career.job_title"] = title or new["career.job_title"]
    if change.name == "new_sport":
        params["goal"] = fitness_goal(rng, ctx.catalog, new["sport.main_sport"])
    if change.name == "job_change":
        params |= {"target_company": new["career.company"], "target_title": new["career.job_title"]}
    params |= {SET + key: value for key, value in new.items()}
    return params
