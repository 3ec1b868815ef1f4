"""The planner: top-down expansion of the event graph.

Level 0 (chapters) covers the trajectory month by month and carries the life
changes scheduled for it. A chapter expands into episodes (level 1) that follow
the persona (job, routines, trips, purchases, health, social life) and the
calendar (workdays, weekends, holidays). An episode expands into leaf moments
(level 2), one session each. Episodes with a single moment are leaves themselves.
"""

from __future__ import annotations

import bisect
import itertools
import random
from collections.abc import Callable
from dataclasses import dataclass
from datetime import date, datetime, time, timedelta

from keme.config import SynthConfig
from keme.days import BLOCKS, Slot, block_window, days, holidays_between, is_workday
from keme.errors import NoFit
from keme.models import Event, Persona
from keme.models.catalog import CHANGES, EPISODE_KINDS, Change, EpisodeKind
from keme.prior.people import distinct_names
from keme.seeding import rng_for
from keme.synth import lifecycle
from keme.synth.capacity import ROOMY_PER_KIND, chapter_windows, roomy_kinds
from keme.synth.changes import schedule_changes
from keme.synth.state import Trajectory
from keme.synth.timing import DEFAULT_TIMING, TIMING, block_order, candidate_days, day_ok, slot_key
from keme.text import lang as fmt
from keme.text.resources import ResourceError, Resources
from keme.text.titles import leaf_title, title_and_summary
from keme.world.catalog import DINING, Catalog, Occasion, Product, Role, load_catalog
from keme.world.cues import load_cues
from keme.world.lifecycle import holiday_days
from keme.world.party import record_party, with_party
from keme.world.places import OCCASION_EPISODES, TripSpan, slot_allowed, where
from keme.world.schedule import trip_spans
from keme.world.venues import load_local

PHONE_LABEL = {"en": "phone", "zh": "手机"}  # the catalog category of phones (bought only in new_phone)
GIFT_LABEL = {"en": "gift", "zh": "礼物"}  # the catalog category of gifts (social episodes)
MEAL_AFTER = ("restaurant", "hotpot", "bbq")  # where the dinner after a non-dining occasion is had
PER_HEAD = {"en": (25, 80), "zh": (60, 200)}  # what an occasion meal costs a head
SHOW_GENRE = {"en": "series", "zh": "剧集"}
SET = "set:"  # params prefix for the new value of a changed attribute


class NoRoom(NoFit):
    """No free day block is left for a one-moment episode in its window."""


@dataclass(frozen=True)
class PlanContext:
    cfg: SynthConfig
    res: Resources

    @property
    def lang(self) -> str:
        return self.res.lang

    @property
    def catalog(self) -> Catalog:
        """What generation may combine (loaded once per language)."""
        return load_catalog(self.res.lang)


# ---------------------------------------------------------------- chapters
def plan_chapters(persona: Persona, ctx: PlanContext, rng: random.Random) -> list[Event]:
    chapters = []
    for number, (start, end) in enumerate(
        chapter_windows(persona.start, persona.end, ctx.cfg.graph.max_events), start=1
    ):
        # titled by what it spans: a calendar month by name, half a month by its dates
        params = {"month_name": fmt.period_name(start.date(), end.date(), ctx.lang), "changes": ""}
        chapters.append(
            Event(
                id=f"{persona.id}-c{number:02d}",
                parent_id=None,
                depth=0,
                kind="chapter",
                title=params["month_name"],
                summary="",
                start=start,
                end=end,
                params=params,
            )
        )
    schedule_changes(persona, chapters, ctx, rng)
    for chapter in chapters:
        _describe_chapter(chapter, persona, ctx)
    return chapters


def _describe_chapter(chapter: Event, persona: Persona, ctx: PlanContext) -> None:
    themes = [title_and_summary(c, ctx.lang, {})[0] for c in chapter_changes(chapter)]
    themes += sorted(
        {n for _, n in holidays_between(chapter.start.date(), chapter.end.date(), persona.country, ctx.lang)}
    )[:2]
    joiner = "、" if ctx.lang == "zh" else "; "
    default = "日常" if ctx.lang == "zh" else "everyday life"
    chapter.params["themes"] = joiner.join(themes) or default
    chapter.title, chapter.summary = title_and_summary("chapter", ctx.lang, chapter.params)
    chapter.requirements = [f"scheduled change: {c}" for c in chapter_changes(chapter)]


def chapter_changes(chapter: Event) -> list[str]:
    return [c for c in chapter.params.get("changes", "").split(",") if c]


# ---------------------------------------------------------------- helpers
def next_child_id(traj: Trajectory, parent: Event, prefix: str) -> str:
    """Ids are never reused, not even for deleted events named in the revision log."""
    seen = [e.id for e in traj.graph.events] + [r.event_id for r in traj.graph.revisions]
    base = f"{parent.id}-{prefix}"
    numbers = [int(i[len(base) :]) for i in seen if i.startswith(base) and i[len(base) :].isdigit()]
    return (
        f"{base}{max(numbers, default=0) + 1:02d}"
        if prefix == "e"
        else f"{base}{max(numbers, default=0) + 1}"
    )


def colleagues(seed: int, persona: Persona, company: str, res: Resources) -> list[str]:
    """The people at a company: stable for as long as the persona works there."""

    return distinct_names(rng_for(seed, persona.id, "colleagues", company), res, 4, avoid={persona.name})


def _companion(rng: random.Random, persona: Persona, when: datetime) -> str:
    options = [
        persona.value_at("social_circle.best_friend", when),
        persona.value_at("social_circle.sibling", when),
    ]
    partner = persona.value_at("social_circle.partner", when)
    if partner:
        options += [partner, partner]
    return rng.choice([o for o in options if o])


def _goal(rng: random.Random, catalog: Catalog, sport: str, *others: str) -> str:
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
    sports = [_planned_value(traj, key, when) or ""]
    for event in traj.events.values():
        if f"set:{key}" in event.params and when < event.end and event.start <= until:
            sports += [_planned_value(traj, key, event.start - timedelta(microseconds=1)) or ""]
            sports += [event.params[f"set:{key}"]]
    sports.append(_planned_value(traj, key, until) or "")
    return list(dict.fromkeys(sports))


def _planned_value(traj: Trajectory, key: str, when: datetime) -> str | None:
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
        company = _planned_value(traj, "career.company", when) or ""
        events, life = list(traj.events.values()), catalog.lifecycle
        reserve = lifecycle.promotions_ahead(events) if kind == "work_project" else 0
        project = lifecycle.project_for(rng, events, life, lists["projects"], when, reserve)
        if project is None and kind == "promotion":
            project = lifecycle.reused_project(events, lists["projects"])
        params = {"project": project} if project else {}
        return params | {"colleague": rng.choice(colleagues(ctx.cfg.seed, persona, company, res))}
    if kind == "health":
        return _health(rng, catalog)
    if kind in ("fitness", "gym_change", "new_sport"):
        # new_sport: change_params draws the goal again for the sport it sets
        return {"goal": _goal(rng, catalog, *_sports_over(traj, when, until or when))}
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
        person, role = rng.choice([p for p in people if _occasions(traj, catalog, when, *p)] or people)
        return social_params(rng, traj, ctx, when, person, role)
    if kind == "shopping":
        goods = [p for p in catalog.products if p.category not in (PHONE_LABEL[lang], GIFT_LABEL[lang])]
        return _purchase(rng, rng.choice(goods), lang)
    if kind in ("cooking", "diet_change"):
        # diet_change: the diet the change sets (its update is not realized yet)
        keys = {a.key for a in traj.persona.attributes()}
        held = {_planned_value(traj, key, when) or "" for key in DISH_LIMITS if key in keys}
        return _cooking(rng, catalog, lang, held)
    if kind == "entertainment":
        title = rng.choice(res.pools.titles)
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


def _occasions(traj: Trajectory, catalog: Catalog, when: datetime, person: str, role: Role) -> list[Occasion]:
    """`person`'s occasions that can fall at `when`: of the season, theirs by `role`, no yearly kind they had
    this year, no once-only one they had, none out of their life order (keme.synth.lifecycle)."""
    held = _yearly_held(traj, catalog, person, when)
    once = lifecycle.once_held(traj.events.values(), catalog.lifecycle, person)
    had = lifecycle.occasions_of(traj.events.values(), person)
    return [
        o
        for o in catalog.occasions_in(when.month, role)
        if o.yearly not in held
        and lifecycle.open_occasion(catalog.lifecycle, o.name, once)
        and lifecycle.in_life_order(catalog.lifecycle, o.name, when.date(), had)
    ]


def social_params(
    rng: random.Random, traj: Trajectory, ctx: PlanContext, when: datetime, person: str, role: Role
) -> dict[str, str]:
    """`person`'s occasion at `when`: one of the season that can be theirs (by `role`, their relation to
    the persona; none of a yearly kind they already had this year) at a venue that holds it; the meal is
    there when the venue is a dining one, else at a restaurant after (the dinner after a graduation); a
    gift from a store that sells it, at its price."""
    catalog, lang = ctx.catalog, ctx.lang
    held = _yearly_held(traj, catalog, person, when)
    local, city = load_local(lang), traj.persona.value_at("home.city", when)  # keme.world.venues
    occasions = _occasions(traj, catalog, when, person, role) or [
        o for o in catalog.occasions_in(when.month, role) if o.yearly not in held
    ]
    occasion, venue = local.choose(rng, occasions, lambda o: catalog.venues_of(o.venue_types), city)
    meal = local.local(catalog.venues_of(MEAL_AFTER), city) or catalog.venues_of(MEAL_AFTER)
    restaurant = venue if venue.type in DINING else rng.choice(meal)
    gift = rng.choice([p for p in catalog.products if p.category == GIFT_LABEL[lang]])
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
    current = {key: _planned_value(traj, key, when) for key in change.attributes}
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
        params["goal"] = _goal(rng, ctx.catalog, new["sport.main_sport"])
    if change.name == "job_change":
        params |= {"target_company": new["career.company"], "target_title": new["career.job_title"]}
    params |= {SET + key: value for key, value in new.items()}
    return params


# ---------------------------------------------------------------- trips and where things happen
def own_trip_of(event: Event) -> TripSpan | None:
    """The trip an episode (or a depth-1 trip leaf) is about, from its params."""
    spans = trip_spans([event])
    return spans[0] if spans else None


def leaf_allowed(traj: Trajectory, leaf: Event, slot: Slot) -> bool:
    """Whether a leaf moved or stretched onto `slot` (by the grounder) still happens where it can."""
    parent = traj.events.get(leaf.parent_id) if leaf.parent_id else None
    own = own_trip_of(leaf) or (own_trip_of(parent) if parent is not None else None)
    trips = trip_spans(traj.graph.events)
    return slot_allowed(leaf.kind, slot[0], slot[1], trips, traj.persona.country, own)


def overlaps_trip(first: date, last: date, traj: Trajectory) -> bool:
    return any(t.start <= last and first <= t.end for t in trip_spans(traj.graph.events))


def anchors_at_home(traj: Trajectory) -> set[date]:
    """Days an anchor puts the persona in the home city: a bill paid in person at a home merchant, the day
    of a calendar event there. A trip is planned around them (its dates never cover one)."""
    found: set[date] = set()
    for anchor in traj.anchors:
        if anchor.app == "bill":
            found.add(anchor.timestamp.date())
        elif anchor.app == "calendar":
            found.add(anchor.record.start.date())  # type: ignore[union-attr]
    return found


def trip_fits(start: date, end: date, traj: Trajectory) -> bool:
    """A trip over [start, end] keeps clear of home anchors, other trips and the home-bound moments already
    placed on its days."""
    if any(start <= d <= end for d in anchors_at_home(traj)) or overlaps_trip(start, end, traj):
        return False
    return not any(
        start <= slot[0] <= end and where(traj.events[owner].kind) != "anywhere"
        for slot, owner in traj.occupied.items()
        if owner in traj.events
    )


MIN_TRIP_NIGHTS = 2  # a trip is never a single night away
TRIP_NIGHTS = (2, 4)  # nights of a trip to a destination the catalog does not list
TRIP_TRIES = (
    12  # windows tried for a trip around a weekend (a long one needs many days clear of home anchors)
)
TRIP_ROOM = 9  # days of an episode besides the trip's nights: planning, the wait for its weekend, a recap


# ---------------------------------------------------------------- chapter expansion
def _clip_window(chapter: Event, first: date, length: int) -> tuple[date, date]:
    lo, hi = chapter.start.date(), chapter.end.date()
    first = max(lo, min(first, hi))
    last = min(hi, first + timedelta(days=length - 1))
    return first, last


def _holiday_clusters(chapter: Event, country: str, lang: str) -> list[tuple[date, date, str]]:
    """Runs of days off (holidays joined with adjacent weekends) that contain a holiday."""
    lo, hi = chapter.start.date(), chapter.end.date()
    named = dict(holidays_between(lo, hi, country, lang))
    if not named:
        return []
    clusters = []
    run: list[date] = []
    for day in days(lo, hi):
        if not is_workday(day, country):
            run.append(day)
            continue
        if run and any(d in named for d in run):
            clusters.append((run[0], run[-1], next(named[d] for d in run if d in named)))
        run = []
    if run and any(d in named for d in run):
        clusters.append((run[0], run[-1], next(named[d] for d in run if d in named)))
    return clusters


# The holidays a person lives with family and talks about (the `holidays` package's names, as the person says
# them); a holiday's days off get such an episode at HOLIDAY_RATE, 0.6 for the rest.
LIVED_HOLIDAYS: dict[str, dict[str, str]] = {
    "zh": {"春节": "春节", "清明节": "清明", "端午节": "端午", "中秋节": "中秋", "国庆节": "国庆"},
    "en": {
        "Thanksgiving": "Thanksgiving",
        "Christmas Day": "Christmas",
        "Independence Day": "the Fourth of July",
        "Memorial Day": "Memorial Day",
        "Labor Day": "Labor Day",
    },
}
HOLIDAY_RATE = {"春节": 0.95, "Christmas": 0.95, "Thanksgiving": 0.9}


FAMILY_TIME = frozenset({"春节", "Christmas", "Thanksgiving"})  # no tour over these: they are lived at home


def _family_time(trip: TripSpan, country: str, lang: str) -> bool:
    """Whether a trip's days away hold a holiday spent with family (FAMILY_TIME)."""
    lived = _lived_holiday(trip.start, trip.end, country, lang)
    return lived is not None and lived[0] in FAMILY_TIME


def _lived_holiday(first: date, last: date, country: str, lang: str) -> tuple[str, date] | None:
    """The lived holiday a run of days off holds (除夕 belongs to 春节), as said, with its first day."""
    names = LIVED_HOLIDAYS.get(lang, {})
    for name, spoken in names.items():
        for day in holiday_days(name, country, lang, range(first.year, last.year + 1)):
            if first - timedelta(days=1) <= day <= last:
                return spoken, day
    return None


def _episode_event(
    traj: Trajectory,
    parent: Event,
    kind: str,
    first: date,
    last: date,
    params: dict[str, str],
    ctx: PlanContext,
    change: str | None = None,
    requirements: list[str] | None = None,
) -> Event:
    title, summary = title_and_summary(change or kind, ctx.lang, params)
    return Event(
        id=next_child_id(traj, parent, "e"),
        parent_id=parent.id,
        depth=parent.depth + 1,
        kind=kind,
        title=title,
        summary=summary,
        start=datetime.combine(first, time()),
        end=datetime.combine(last, time(23, 59, 59)),
        params=params,
        change=change,
        requirements=requirements or [],
    )


def _weights(traj: Trajectory, ctx: PlanContext, when: datetime) -> dict[str, float]:
    weights = {}
    for kind in EPISODE_KINDS.values():
        if any(traj.persona.value_at(k, when) is None for k in kind.requires):
            continue
        weights[kind.name] = ctx.cfg.episodes.weights.get(kind.name, kind.weight)
    if traj.persona.value_at("social_circle.partner", when):
        weights["social"] = weights.get("social", 0) * 1.3
    return {k: w for k, w in weights.items() if w > 0}


def expand_chapter(chapter: Event, traj: Trajectory, ctx: PlanContext, rng: random.Random) -> list[Event]:
    """Plan a chapter's episodes: its scheduled changes, holiday plans, then everyday life.

    At depth 2, when that plan leaves no place for some of the chapter's anchors, the chapter is
    planned again with episodes that take anchors down to their moments (`keme.synth.capacity`).
    """
    planned = _plan_chapter(chapter, traj, ctx, rng)
    need = len(chapter.pending_anchors)
    if ctx.cfg.graph.max_depth == 2 and anchor_room(planned, ctx.cfg.graph.max_events) < need:
        for event in planned:
            traj.remove_event(event.id)
        planned = _plan_chapter(
            chapter, traj, ctx, rng_for(ctx.cfg.seed, traj.persona.id, "plan-room", chapter.id), room_for=need
        )
    return planned


def anchor_room(children: list[Event], max_events: int) -> int:
    """How many anchors a just-planned chapter can ground: one per free child place and per leaf, and per
    place an episode has left for leaves (see `keme.synth.grounder.ground`)."""
    free = max_events - len(children)
    leaves = sum(1 for e in children if "_moments" not in e.params)
    inner = sum(
        max(0, max_events - len(e.params["_moments"].split(","))) for e in children if "_moments" in e.params
    )
    return free + leaves + inner


def _plan_chapter(
    chapter: Event, traj: Trajectory, ctx: PlanContext, rng: random.Random, room_for: int | None = None
) -> list[Event]:
    """One plan of a chapter; with `room_for`, only changes and episodes that make room for that many
    anchors."""
    persona, lang = traj.persona, ctx.lang
    graph = ctx.cfg.graph
    now = chapter.start
    lo, hi = chapter.start.date(), chapter.end.date()
    span = (hi - lo).days + 1
    planned: list[Event] = []
    own = frozenset(chapter.pending_anchors)

    def commit(event: Event) -> None:
        shrink_to_leaf_if_single(event, traj, ctx, rng, own)
        traj.add_event(event)
        planned.append(event)

    weights = _weights(traj, ctx, now)
    target = round(span / 30.4 * graph.episodes_per_month)
    # leave room for the leaves the grounder may add for anchors (every anchor needs its own leaf at depth 1)
    reserve = len(chapter.pending_anchors) if graph.max_depth == 1 else 3
    budget = max(graph.min_events, min(target, graph.max_events - reserve))
    clusters = _holiday_clusters(chapter, persona.country, lang)
    trip_cluster = None
    if room_for is None:  # trips first: what else the chapter holds is placed around them
        trip_cluster = _plan_holiday_trip(chapter, clusters, traj, ctx, rng, commit)
        share = weights.get("trip", 0) / max(sum(weights.values()), 1e-9)
        if trip_cluster is None and rng.random() < 1 - (1 - share) ** budget:
            _plan_regular_trip(chapter, traj, ctx, rng, commit)

    for name in chapter_changes(chapter):
        commit(plan_change_episode(name, chapter, traj, ctx, rng, earliest=lo))

    if room_for is not None:
        roomy = [
            k
            for k in roomy_kinds(ctx.cfg.episodes.weights)
            if k in weights and EPISODE_KINDS[k].days[0] <= span
        ]
        per_kind = dict.fromkeys(roomy, 0)
        added = 0
        while (
            roomy
            and added < graph.max_events // 2
            and len(planned) < graph.max_events
            and (anchor_room(planned, graph.max_events) < room_for or len(planned) < graph.min_events)
        ):
            kind = EPISODE_KINDS[rng.choices(roomy, [weights[k] for k in roomy])[0]]
            length = rng.randint(kind.days[0], min(kind.days[1], span))
            first = lo + timedelta(days=rng.randint(0, span - length))
            event = regular_episode(kind.name, *_clip_window(chapter, first, length), chapter, traj, ctx, rng)
            if event is None:  # a work episode with every project taken (trips are not roomy)
                roomy.remove(kind.name)
                continue
            commit(event)
            added += 1
            per_kind[kind.name] += 1
            if per_kind[kind.name] == ROOMY_PER_KIND:
                roomy.remove(kind.name)
        return planned

    for first, last, holiday in clusters:
        if (first, last, holiday) == trip_cluster or overlaps_trip(first, last, traj):
            continue
        lived = _lived_holiday(first, last, persona.country, lang)
        if rng.random() < (HOLIDAY_RATE.get(lived[0], 0.6) if lived else 0.6):
            params = episode_params("family", rng, traj, ctx, now)
            ep_first, ep_last = first, last
            if lived is not None:  # its days before (plans, tickets, 年货) and after (back to work) too
                spoken, day = lived
                params |= {"holiday": spoken, "holiday_date": fmt.format_date(day, lang)}
                ep_first = max(lo, min(first, day - timedelta(days=rng.randint(4, 14))))
                ep_last = min(hi, max(last, day + timedelta(days=rng.randint(1, 3))))
                if overlaps_trip(ep_first, ep_last, traj):
                    ep_first, ep_last = first, last
            needs = [f"holiday: {lived[0] if lived else holiday}"]
            commit(
                _episode_event(traj, chapter, "family", ep_first, ep_last, params, ctx, requirements=needs)
            )

    counts: dict[str, int] = {}
    attempts = 0
    everyday = {k: w for k, w in weights.items() if k != "trip"}
    while everyday and len(planned) < budget and attempts < 100:
        attempts += 1
        kind = EPISODE_KINDS[rng.choices(list(everyday), list(everyday.values()))[0]]
        if counts.get(kind.name, 0) >= 2:
            continue
        length = rng.randint(*kind.days)
        if length > span:
            continue
        first = lo + timedelta(days=rng.randint(0, span - length))
        first, last = _clip_window(chapter, first, length)
        if kind.name in OCCASION_EPISODES and overlaps_trip(first, last, traj):
            continue  # a dinner or an outing in the home city cannot happen while away
        event = regular_episode(kind.name, first, last, chapter, traj, ctx, rng)
        if event is None:
            continue
        try:
            commit(event)
        except NoRoom:  # every block of its days is taken already: plan something else
            continue
        counts[kind.name] = counts.get(kind.name, 0) + 1
    return planned


def _plan_holiday_trip(
    chapter: Event,
    clusters: list[tuple[date, date, str]],
    traj: Trajectory,
    ctx: PlanContext,
    rng: random.Random,
    commit: Callable[[Event], None],
) -> tuple[date, date, str] | None:
    """A trip over a holiday's days off (three in four chances), clear of home anchors; the cluster used."""
    for first, last, holiday in clusters:
        if last <= first or rng.random() >= 0.75:
            continue
        if (lived := _lived_holiday(first, last, traj.persona.country, ctx.lang)) and lived[0] in FAMILY_TIME:
            continue  # 春节, Christmas, Thanksgiving are spent with family, not on a tour
        ep_first, ep_last = _clip_window(
            chapter, first - timedelta(days=rng.randint(3, 6)), (last - first).days + 8
        )
        trip_start = max(first, ep_first + timedelta(days=2))
        trip_end = min(last, ep_last - timedelta(days=1))
        nights = (trip_end - trip_start).days
        if nights < MIN_TRIP_NIGHTS or not trip_fits(trip_start, trip_end, traj):
            continue
        params = episode_params("trip", rng, traj, ctx, chapter.start, nights)
        if (ctx.catalog.nights(params["destination"]) or (1, 1))[0] > nights:
            continue  # the holiday is too short to go anywhere listed
        params |= _trip_dates(trip_start, trip_end, ctx.lang)
        requirements = [f"holiday: {holiday}"]
        commit(
            _episode_event(traj, chapter, "trip", ep_first, ep_last, params, ctx, requirements=requirements)
        )
        return first, last, holiday
    return None


def _plan_regular_trip(
    chapter: Event, traj: Trajectory, ctx: PlanContext, rng: random.Random, commit: Callable[[Event], None]
) -> None:
    """A trip around a weekend, on dates clear of home anchors (a few windows tried, else no trip)."""
    lo, hi = chapter.start.date(), chapter.end.date()
    span = (hi - lo).days + 1
    kind = EPISODE_KINDS["trip"]
    for _ in range(TRIP_TRIES):
        params = episode_params("trip", rng, traj, ctx, chapter.start)
        nights = rng.randint(*(ctx.catalog.nights(params["destination"]) or TRIP_NIGHTS))
        # planning days before, the weekend it starts on, the nights away, and a recap after
        length = max(rng.randint(*kind.days), nights + TRIP_ROOM)
        if length > span:
            continue
        first, last = _clip_window(chapter, lo + timedelta(days=rng.randint(0, span - length)), length)
        event = regular_episode(
            "trip", first, last, chapter, traj, ctx, rng, params | {"nights": str(nights)}
        )
        if event is None:
            continue
        trip = own_trip_of(event)
        if trip is None or _family_time(trip, traj.persona.country, ctx.lang):
            continue
        if trip_fits(trip.start, trip.end, traj):
            commit(event)
            return


def regular_episode(
    kind: str,
    first: date,
    last: date,
    chapter: Event,
    traj: Trajectory,
    ctx: PlanContext,
    rng: random.Random,
    params: dict[str, str] | None = None,
) -> Event | None:
    """An everyday episode in [first, last] with its details (`params`, else drawn); None if a trip does
    not fit the window or a work episode has no project left. A trip lasts the `nights` its params ask, or
    as many as its destination takes."""
    if kind == "work_project":
        window = one_employer(traj, first, last)
        if window is None:
            return None
        first, last = window
    if params is None:  # the persona as it is when the episode begins, changes planned by then included
        begin = max(chapter.start, datetime.combine(first, time()))
        params = episode_params(kind, rng, traj, ctx, begin, until=datetime.combine(last, time.max))
    params = dict(params)
    people = record_party(traj.anchors, first, last, load_cues(ctx.lang)) if "party_size" in params else None
    if people is not None:  # the note the episode holds says how many were there (keme.world.party)
        params = with_party(params, people, ctx.lang)
    if kind == "trip":
        length = (last - first).days + 1
        nights = int(params.pop("nights", 0)) or rng.randint(
            *(ctx.catalog.nights(params["destination"]) or TRIP_NIGHTS)
        )
        trip_start = first + timedelta(days=min(2 + rng.randint(0, 2), max(0, length - 3)))
        while trip_start.weekday() not in (4, 5) and trip_start < last - timedelta(days=2):
            trip_start += timedelta(days=1)
        trip_end = trip_start + timedelta(days=nights)
        if trip_end > last - timedelta(days=1) or trip_end <= trip_start:
            return None
        params |= _trip_dates(trip_start, trip_end, ctx.lang)
    if kind == "work_project":
        if not params.get("project"):
            return None  # every project is taken: it was delivered already
        params["deadline"] = fmt.format_date(last, ctx.lang)
    return _episode_event(traj, chapter, kind, first, last, params, ctx)


def one_employer(traj: Trajectory, first: date, last: date) -> tuple[date, date] | None:
    """[first, last] cut to the part before (or after) a job change planned in it: a project is one
    employer's, and does not follow the persona to the next. None when nothing of it is left."""
    for event in sorted(traj.events.values(), key=lambda e: (e.start, e.id)):
        if "set:career.company" not in event.params:
            continue
        begins, ends = event.start.date(), event.end.date()
        if begins > last or ends < first:
            continue
        if begins > first:
            last = begins - timedelta(days=1)
        else:
            first = ends + timedelta(days=1)
    return (first, last) if first <= last else None


def _trip_dates(start: date, end: date, lang: str) -> dict[str, str]:
    return {
        "start_date": fmt.format_date(start, lang),
        "end_date": fmt.format_date(end, lang),
        "nights": str((end - start).days),
        "_trip_start": start.isoformat(),
        "_trip_end": end.isoformat(),
    }


def plan_change_episode(
    name: str,
    parent: Event,
    traj: Trajectory,
    ctx: PlanContext,
    rng: random.Random,
    earliest: date,
    window: tuple[date, date] | None = None,
) -> Event:
    """The milestone episode of a life change, in `window` or a random one after `earliest`."""
    change = CHANGES[name]
    lo, hi = max(parent.start.date(), earliest), parent.end.date()
    span = (hi - lo).days + 1
    length = min(span, rng.randint(*change.days))
    first = lo + timedelta(days=rng.randint(0, max(0, span - length)))
    first, last = window or _clip_window(parent, first, length)
    params = change_params(
        change, rng, traj, ctx, datetime.combine(first, time()), datetime.combine(last, time.max)
    )
    if "project" in params:
        params["deadline"] = fmt.format_date(last, ctx.lang)
    return _episode_event(
        traj,
        parent,
        name,
        first,
        last,
        params,
        ctx,
        change=name,
        requirements=[f"reveals change {name}: " + ", ".join(change.attributes)],
    )


def moments_for(event: Event, rng: random.Random, max_depth: int = 2) -> list[str]:
    """The leaf moments an episode expands into; with max_depth 1 the episode is one moment."""
    if event.change:
        change = CHANGES[event.change]
        return [change.moments[change.update_index]] if max_depth == 1 else list(change.moments)
    kind: EpisodeKind = EPISODE_KINDS[event.kind]
    if max_depth == 1:
        return [rng.choice(kind.moments)]
    return [m for m in kind.moments if m not in kind.optional or rng.random() < 0.6]


def shrink_to_leaf_if_single(
    event: Event,
    traj: Trajectory,
    ctx: PlanContext,
    rng: random.Random,
    own: frozenset[str] = frozenset(),
    not_before: date | None = None,
) -> None:
    """An episode with one moment is a leaf itself: its window becomes one day block, never before
    `not_before` (an episode the reviser adds follows its cause: it may not land in the past)."""
    moments = moments_for(event, rng, ctx.cfg.graph.max_depth)
    if len(moments) != 1:
        event.params["_moments"] = ",".join(moments)
        return
    moment = moments[0]
    lo, hi = event.start.date(), event.end.date()
    parent = traj.events.get(event.parent_id or "")
    # its window, then the rest of its chapter (a commute talk the weekend cannot hold goes to Monday), then
    # its window again without the place rules, so that synthesis goes on
    tries: list[tuple[date, date, dict]] = [(lo, hi, {}), (lo, hi, {"strict": False})]
    if parent is not None and parent.depth == 0:
        tries += [(lo, parent.end.date(), {"strict": False}), (parent.start.date(), parent.end.date(), {})]
    tries.append((lo, hi, {"strict": False, "places": False}))
    if not_before is not None:
        tries = [(max(first, not_before), last, how) for first, last, how in tries if last >= not_before]
    slots: list[Slot] = []
    for first, last, how in tries:
        slots = place_moments(traj, [moment], first, last, event, ctx, rng, own, {}, **how)
        if slots:
            break
    if not slots:
        raise NoRoom(
            f"no free day block for {event.id} ({moment}) in {event.start.date()}..{event.end.date()}"
        )
    day, block = slots[0]
    event.params["_episode"] = event.kind
    event.kind = moment
    event.start, event.end = block_window(day, block)


# ---------------------------------------------------------------- episode expansion
def _ranges(moments: list[str], event: Event) -> list[tuple[date, date]]:
    """Allowed day range for each moment, in order."""
    lo, hi = event.start.date(), event.end.date()
    if event.kind == "trip" and "_trip_start" in event.params:
        start, end = (
            date.fromisoformat(event.params["_trip_start"]),
            date.fromisoformat(event.params["_trip_end"]),
        )
        table = {
            "trip_planning": (lo, max(lo, start - timedelta(days=2))),
            "trip_packing": (max(lo, start - timedelta(days=1)), max(lo, start - timedelta(days=1))),
            "trip_during": (start, end),
            "trip_recap": (min(hi, end + timedelta(days=1)), hi),
        }
        return [table[m] for m in moments]
    n = len(moments)
    span = (hi - lo).days + 1
    ranges = []
    for i in range(n):
        first = lo + timedelta(days=(span * i) // n)
        last = lo + timedelta(days=max((span * (i + 1)) // n - 1, (span * i) // n))
        ranges.append((first, last))
    return ranges


def place_moments(
    traj: Trajectory,
    moments: list[str],
    lo: date,
    hi: date,
    event: Event,
    ctx: PlanContext,
    rng: random.Random,
    own: frozenset[str],
    fixed: dict[int, tuple[date, date]],
    strict: bool = True,
    day_rules: bool = True,
    places: bool = True,
) -> list[Slot]:
    """One free day block per moment, in increasing order; own pending anchors' blocks are welcome.

    With `places` (always, but for a last resort) a moment only goes where the schedule lets it happen
    (`keme.world.places.slot_allowed`): not inside a trip unless it can happen anywhere, a trip's own
    moments before, during and after it.
    """
    country = traj.persona.country
    trips = trip_spans(traj.graph.events)
    own_trip = own_trip_of(event)

    def allowed(moment: str, slot: Slot) -> bool:
        return not places or slot_allowed(moment, slot[0], slot[1], trips, country, own_trip)

    ranges = [fixed.get(i, (lo, hi)) for i in range(len(moments))]
    anchor_days = {traj.anchor_slot(a): a for a in own}
    free = free_slots(traj, lo, hi, own)

    def leaves_room(i: int, slot: Slot) -> bool:
        # greedy placement must not paint itself into a corner: the moments after this one need as many free
        # blocks after it (without this, an own anchor on the window's last block took the first moment)
        return len(free) - bisect.bisect_right(free, slot_key(slot)) >= len(moments) - 1 - i

    chosen: list[Slot] = []
    previous: Slot | None = None
    for i, moment in enumerate(moments):
        rule, weights = TIMING.get(moment, DEFAULT_TIMING)
        first, last = ranges[i]
        if previous is not None:
            first = max(first, previous[0])
        if first > last:
            last = first if first <= hi else hi
        found = None
        # an own anchor inside the range: let this moment happen right there (the grounder will assign it)
        anchored = [
            s
            for s in anchor_days
            if first <= s[0] <= last and (previous is None or slot_key(s) > slot_key(previous))
        ]
        if anchored and rng.random() < 0.5:
            found = min(anchored, key=slot_key)
            if found in traj.occupied or not allowed(moment, found) or not leaves_room(i, found):
                found = None
        # strict: anywhere in the moment's range; relaxed: as early as possible, leaving room for the rest
        spread = (last - first).days if strict else min(1, (last - first).days)
        target = first + timedelta(days=rng.randint(0, max(0, spread)))
        passes = (False,) if strict else (False, True)  # relax the day rule only after trying to keep it
        for relax in passes if day_rules else (True,):
            if found:
                break
            for day in candidate_days(first, last, target):
                if not relax and not day_ok(rule, day, country):
                    continue
                for block in block_order(rng, weights):
                    slot = (day, block)
                    if previous is not None and slot_key(slot) <= slot_key(previous):
                        continue
                    if (
                        traj.slot_free(slot, own_anchors=own)
                        and allowed(moment, slot)
                        and leaves_room(i, slot)
                    ):
                        found = slot
                        break
                if found:
                    break
        if found is None:
            return [] if strict else chosen
        chosen.append(found)
        previous = found
    return chosen


def free_slots(traj: Trajectory, lo: date, hi: date, own: frozenset[str]) -> list[tuple[date, int]]:
    """The keys (`slot_key`) of the free day blocks in [lo, hi], in order (own pending anchors' blocks are
    free)."""
    return [
        slot_key((day, block))
        for day in days(lo, hi)
        for block in BLOCKS
        if traj.slot_free((day, block), own_anchors=own)
    ]


def _fewer(moments: list[str], optional: tuple[str, ...]) -> list[tuple[int, ...]]:
    """Index subsets of `moments` with at least two, the largest first; of one size, those that keep the
    trip itself, then those that drop only optional moments, come first."""
    subsets = [
        keep
        for size in range(len(moments) - 1, 1, -1)
        for keep in itertools.combinations(range(len(moments)), size)
    ]

    def cost(keep: tuple[int, ...]) -> tuple[int, int, int]:
        dropped = [moments[i] for i in range(len(moments)) if i not in keep]
        return -len(keep), sum(where(m) == "trip" for m in dropped), sum(m not in optional for m in dropped)

    return sorted(subsets, key=cost)


def expand_episode(episode: Event, traj: Trajectory, ctx: PlanContext, rng: random.Random) -> list[Event]:
    """Plan an episode's leaf moments in their day blocks (anchors are grounded afterwards)."""
    moments = episode.params["_moments"].split(",")
    own = frozenset(episode.pending_anchors)
    ranges = _ranges(moments, episode)
    update_index = CHANGES[episode.change].update_index if episode.change else None
    lo, hi = episode.start.date(), episode.end.date()
    slots = place_moments(traj, moments, lo, hi, episode, ctx, rng, own, dict(enumerate(ranges)))
    if not slots and update_index is None:
        # crowded window: first do with fewer moments, each still where and when it can happen
        optional = EPISODE_KINDS[episode.kind].optional if episode.kind in EPISODE_KINDS else ()
        for keep in _fewer(moments, optional):
            fewer = [moments[i] for i in keep]
            fixed = {n: ranges[i] for n, i in enumerate(keep)}
            slots = place_moments(traj, fewer, lo, hi, episode, ctx, rng, own, fixed)
            if slots:
                moments, ranges = fewer, [ranges[i] for i in keep]
                break
    if not slots:
        # crowded window: relax the day rules and let the episode run on (within its chapter) if it must
        chapter_end = traj.events[episode.parent_id].end.date() if episode.parent_id else hi
        relaxed = {i: (first, chapter_end) for i, (first, _) in enumerate(ranges)}
        slots = place_moments(traj, moments, lo, chapter_end, episode, ctx, rng, own, relaxed, strict=False)
        needed = 2 if update_index is None else max(2, update_index + 1)
        if len(slots) < needed:
            # honouring a day rule can put the first moment on the window's last workday (a week of
            # holidays): place them in order, as early as they fit, on any day
            slots = place_moments(
                traj, moments, lo, chapter_end, episode, ctx, rng, own, relaxed, strict=False, day_rules=False
            )
        if len(slots) < needed:  # last resort, so that synthesis goes on: the place rules too
            slots = place_moments(
                traj,
                moments,
                lo,
                chapter_end,
                episode,
                ctx,
                rng,
                own,
                relaxed,
                strict=False,
                day_rules=False,
                places=False,
            )
        if slots and block_window(*slots[-1])[1] > episode.end:
            traj.move_event(episode, episode.start, datetime.combine(slots[-1][0], time(23, 59, 59)))
    kept = moments[: len(slots)]
    if "first_day" in kept:  # the offer says when the new job starts: the first day's date, a workday
        episode.params["job_start_date"] = fmt.format_date(slots[kept.index("first_day")][0], ctx.lang)
    if len(kept) < 2:
        raise NoFit(f"{episode.id}: only {len(kept)} of {len(moments)} moments fit in {lo}..{hi}")
    if update_index is not None and update_index >= len(kept):
        raise NoFit(f"cannot place the update moment of {episode.id} in {lo}..{hi}")
    leaves = []
    for i, (moment, (day, block)) in enumerate(zip(kept, slots)):
        start, end = block_window(day, block)
        leaf = Event(
            id=f"{episode.id}-l{i + 1}",
            parent_id=episode.id,
            depth=episode.depth + 1,
            kind=moment,
            title=leaf_title(episode.title, moment, ctx.lang),
            summary=episode.summary,
            start=start,
            end=end,
            change=episode.change if i == update_index else None,
        )
        traj.add_event(leaf)
        leaves.append(leaf)
    return leaves
