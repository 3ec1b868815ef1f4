"""Persona-level questions: knowledge updates, implicit preferences, generalizations, relationships
and life changes.
"""

from __future__ import annotations

from collections import Counter
from datetime import date, datetime, time, timedelta

from keme.days import add_months, clear_leader, days, quarters_within
from keme.models import Persona, Query, Quote
from keme.models.attributes import claim_predicate
from keme.qa import draft as d
from keme.qa.draft import Draft
from keme.qa.generate.atoms import _attr_distractors, _attr_spec, _stating, settled
from keme.qa.generate.context import Gen
from keme.qa.generate.episode import RECAP_CHANGES, _bills, _time_of_day, by_records, cover_of, life_change
from keme.qa.options import Balancer, pick_by_rank
from keme.qa.second_right import prove_options, right_values
from keme.qa.situations import holds as situation_holds
from keme.text import resources
from keme.text.fill import fill
from keme.text.normalize import norm_text
from keme.world.catalog import load_catalog

RECORD_FIELDS = {"category": "expense_category"}  # a bill fact's field -> the claim predicate

GENERALIZABLE = (
    "travel.seat_preference",
    "diet.favorite_cuisine",
    "sport.main_sport",
    "shopping.favorite_platform",
    "entertainment.music_genre",
    "diet.diet_type",
    "transport.commute_mode",
    "health.allergy",
)


# ================================================================ the root: persona-level questions
def knowledge_updates(g: Gen, node: str) -> list[Draft]:
    persona = g.world.persona
    drafts: list[Draft] = []
    final = d.final_time(g.world)
    for attr in persona.attributes():
        versions = attr.versions
        if len(versions) < 2 or not all(v.evidence for v in versions):
            continue
        forms = g.say.text.attributes[attr.key]
        last, previous = versions[-1], versions[-2]
        q_last = Quote(message_id=last.evidence[0], text=last.value)
        q_prev = Quote(message_id=previous.evidence[0], text=previous.value)
        spec, answer = _attr_spec(attr.key, last.value, g.lang)
        after_change = max(
            g.world.messages[last.evidence[0]].timestamp, g.world.messages[previous.evidence[0]].timestamp
        )
        asked = g.when(after_change) or final
        if forms.current:
            drafts.append(
                Draft(
                    "knowledge_update",
                    "knowledge_update.current",
                    g.rng.choice(forms.current),
                    answer,
                    spec,
                    d.proof("attribute", [q_prev, q_last], key=attr.key),
                    asked,
                    2,
                    node,
                    queries=[Query(subject="persona", target=claim_predicate(attr.key), expect=[last.value])],
                    distractors=[v.value for v in versions[:-1]]
                    + _attr_distractors(attr.key, last.value, g.lang)[:2],
                )
            )
        if forms.previous:
            spec_prev, answer_prev = _attr_spec(attr.key, previous.value, g.lang)
            current = answer
            drafts.append(
                Draft(
                    "knowledge_update",
                    "knowledge_update.previous",
                    d.fill_question(g.rng, forms.previous, current=current),
                    answer_prev,
                    spec_prev,
                    d.proof("attribute", [q_prev, q_last], key=attr.key, version="previous"),
                    asked,
                    2,
                    node,
                    queries=[
                        Query(
                            subject="persona",
                            target=claim_predicate(attr.key),
                            at=last.valid_from - timedelta(seconds=1),
                            expect=[previous.value],
                        )
                    ],
                    distractors=[last.value] + _attr_distractors(attr.key, previous.value, g.lang)[:2],
                )
            )
        if forms.history and not _lived_before(persona, attr.key, versions[0].value):
            items = [v.value for v in versions]
            quotes = [Quote(message_id=v.evidence[0], text=v.value) for v in versions]
            shown = [_attr_spec(attr.key, v, g.lang)[1] for v in items]
            drafts.append(
                Draft(
                    "knowledge_update",
                    "knowledge_update.history",
                    g.rng.choice(forms.history),
                    " → ".join(shown),
                    d.set_spec(items, ordered=True),
                    d.proof("history", quotes, key=attr.key),
                    final,
                    len(items),
                    node,
                    queries=[
                        Query(
                            subject="persona",
                            target=claim_predicate(attr.key),
                            aggregate="history",
                            expect=items,
                        )
                    ],
                )
            )
        if forms.at_time:
            for older, newer in zip(versions, versions[1:]):
                if not older.evidence:
                    continue
                # after the value was first said, and clear of any change of it
                said = g.world.messages[older.evidence[0]].timestamp
                first_day = max(older.valid_from, said).date() + timedelta(days=1)
                last_day = newer.valid_from.date() - timedelta(days=1)
                months = _months_held(g, attr.key, first_day, last_day)
                if not months:
                    continue
                month = g.rng.choice(months)
                at = datetime.combine(month.replace(day=15), time(12, 0))
                evidence = [
                    m
                    for m in older.evidence
                    if g.world.messages[m].timestamp <= datetime.combine(last_day, time(23, 59))
                ]
                if not evidence:
                    continue
                spec_at, answer_at = _attr_spec(attr.key, older.value, g.lang)
                drafts.append(
                    Draft(
                        "knowledge_update",
                        "knowledge_update.at_time",
                        d.fill_question(g.rng, forms.at_time, month=g.month(month)),
                        answer_at,
                        spec_at,
                        d.proof(
                            "attribute",
                            [Quote(message_id=evidence[0], text=older.value), q_last],
                            key=attr.key,
                            at=at.isoformat(),
                        ),
                        final,
                        2,
                        node,
                        distractors=[newer.value],
                        queries=[
                            Query(
                                subject="persona",
                                target=claim_predicate(attr.key),
                                at=at,
                                expect=[older.value],
                            )
                        ],
                    )
                )
                break
    return drafts


def _lived_before(persona: Persona, key: str, first: str) -> bool:
    """Whether the persona said she grew up somewhere other than her first city: "which cities have I
    lived in?" then has her hometown first too, which the city history does not hold."""
    if key != "home.city":
        return False
    hometown = persona.attribute("basic_info.hometown")
    return any(v.evidence and v.value != first for v in hometown.versions)


def implicit_overall(g: Gen, node: str) -> list[Draft]:
    """Habits over the whole trajectory and over each calendar quarter in it: a quarter's chats and
    payments are enough to show a habit where a month's few are not. A habit is asked only where there
    is one: more than half of the period's payments (or of the sessions the user opened herself) share
    the value, clearly ahead of the runner-up (keme.days.clear_leader); otherwise nothing is asked."""
    persona = g.world.persona
    start, end = persona.start.date(), persona.end.date()
    drafts = _habits(g, start, end, node, "all", {})
    for quarter, last in quarters_within(start, end):
        drafts += _habits(g, quarter, last, node, "quarter", {"period": g.period(quarter, last)})
    return drafts


def _habits(g: Gen, start: date, end: date, node: str, scope: str, slots: dict[str, str]) -> list[Draft]:
    bills = _bills(g, start, end)
    drafts: list[Draft] = []
    final = d.final_time(g.world)
    for field, name in (("category", "category"), ("payment_method", "method"), ("merchant", "merchant")):
        generator = f"imp.{name}.{scope}"
        counts = Counter(ctx[field] for _, ctx in bills)
        value = clear_leader(counts)
        if value is None:
            continue
        rows = [f for f, ctx in bills if ctx[field] == value]
        quotes = [Quote(message_id=f.message_id, text=value) for f in rows]
        drafts.append(
            Draft(
                "implicit_preference",
                generator,
                g.say.question(generator, g.rng, **slots),
                value,
                d.entity(value),
                d.proof("majority", quotes, field=field, start=start.isoformat(), end=end.isoformat()),
                final,
                2,
                node,
                distractors=[c for c in counts if c != value],
                queries=[by_records(RECORD_FIELDS.get(field, field), start, end, "mode", value)],
            )
        )
    drafts += _regulars(g, bills, start, end, node, scope, slots)
    drafts += _time_of_day(g, start, end, node, f"imp.time_of_day.{scope}", **slots)
    return drafts


def _regulars(
    g: Gen, bills: list, start: date, end: date, node: str, scope: str, slots: dict[str, str]
) -> list[Draft]:
    """Her regular place for a kind of spending ("where do I usually get groceries?"): the merchant more
    than half of the category's payments went to, clearly ahead of the next; asked of categories with
    several merchants only, where the habit is a choice she makes."""
    drafts: list[Draft] = []
    generator = f"imp.regular.{scope}"
    if not g.say.has(generator):
        return drafts
    by_category: dict[str, Counter[str]] = {}
    for _, ctx in bills:
        by_category.setdefault(ctx["category"], Counter())[ctx["merchant"]] += 1
    for category, counts in sorted(by_category.items()):
        value = clear_leader(counts)
        if value is None or len(counts) < 2:
            continue
        quotes = [
            Quote(message_id=f.message_id, text=value)
            for f, ctx in bills
            if ctx["category"] == category and ctx["merchant"] == value
        ]
        drafts.append(
            Draft(
                "implicit_preference",
                generator,
                g.say.question(generator, g.rng, category=category, **slots),
                value,
                d.entity(value),
                d.proof(
                    "majority",
                    quotes,
                    field="merchant",
                    start=start.isoformat(),
                    end=end.isoformat(),
                    category=category,
                ),
                d.final_time(g.world),
                2,
                node,
                distractors=[c for c in counts if c != value],
                queries=[by_records("merchant", start, end, "mode", value, expense_category=category)],
            )
        )
    return drafts


def _conflicting(a: str, b: str, groups: list[list[str]]) -> bool:
    """Two values one option list must not hold together: one is part of the other, or a conflict group
    of the generalization names both (a vegan menu fits a vegetarian, shrimp is seafood)."""
    return a in b or b in a or any(a in group and b in group for group in groups)


def _preference_options(
    g: Gen, key: str, value: str, held: set[str], balance: Balancer, right: set[str] = frozenset()
) -> list[str]:
    """Up to three alternatives to a preference value, none of which the preference would also accept
    or the persona ever held, so only knowing the preference singles the option out (allergies: other
    food allergens, and the question asks which one to avoid); the gold's rank by length among the
    options is drawn from a balanced sequence, so it is not the longest more often than by chance."""
    distinct = _preference_pool(g, key, value, held, right)
    k = min(3, len(distinct))
    if not k:
        return []
    chosen, _, _ = pick_by_rank(len(value), [(len(v), v) for v in distinct], k, balance, "length-rank", g.rng)
    return chosen


def _preference_pool(
    g: Gen, key: str, value: str, held: set[str], right: set[str] = frozenset()
) -> list[str]:
    """Every alternative a preference option list may hold (shuffled), no two of which conflict and none
    of which is right too by the whole persona and the catalog (`right`, keme.qa.second_right)."""
    text = g.say.text.generalize[key]
    pool = (
        g.say.text.food_allergens
        if key == "health.allergy"
        else resources.get(g.lang).persona.attributes[key].values
    )
    # nothing she says she does herself ("did yoga and mobility today" beside a basketball player's
    # options): it would be a second right answer
    said = g.world.user_said
    candidates = [
        v
        for v in pool
        if v not in held
        and v not in right
        and not _conflicting(v, value, text.conflicts)
        and norm_text(v) not in said
    ]
    g.rng.shuffle(candidates)
    distinct: list[str] = []
    for candidate in candidates:
        if not any(_conflicting(candidate, c, text.conflicts) for c in distinct):
            distinct.append(candidate)
    return distinct


def generalizations(g: Gen, node: str) -> list[Draft]:
    """Apply a revealed preference to new situations: one single-choice question per situation, whose
    options are all plausible and only one of which the preference picks (for an allergy: the one to
    avoid), asked only where the situation holds for the persona then (keme.qa.situations: a drive of a
    driver, a dog walk of a dog owner). Every option list is proved against the whole persona at the
    question's time and the catalog (keme.qa.second_right): an option that is right too is never drawn,
    and a list that still has one, or whose gold the catalog refutes (a shop that sells no sheets), is
    not asked."""
    persona = g.world.persona
    catalog = load_catalog(g.lang)
    drafts: list[Draft] = []
    allergens = set(g.say.text.food_allergens)
    balance = Balancer(g.rng)
    for key, text in g.say.text.generalize.items():
        attr = persona.attribute(key)
        held = {v.value for v in attr.versions}
        for version in attr.versions:
            if not version.evidence or (key == "health.allergy" and version.value not in allergens):
                continue
            until = next((v.valid_from for v in attr.versions if v.valid_from > version.valid_from), None)
            for situation in text.situations:
                asked = g.when(g.world.messages[version.evidence[0]].timestamp, until)
                if asked is None or not situation_holds(situation, persona, asked):
                    continue  # never a drive to someone who rides an e-bike
                right = right_values(key, persona, asked, catalog, situation.needs)
                if right is None or version.value not in right:
                    continue  # the catalog refutes the gold: the favourite shop sells none of it
                template = text.option_for(situation)
                others = _preference_options(g, key, version.value, held, balance, right)
                if not others:
                    break
                options = [fill(template, {"value": v}) for v in [version.value, *others]]
                g.rng.shuffle(options)
                holding = [i for i, o in enumerate(options) if version.value in o]
                if len(holding) != 1:
                    continue
                correct = holding[0]
                proof = prove_options(
                    key, situation.text, options, correct, persona, asked, catalog, g.lang,
                    needs=situation.needs, templates=(template,),
                )  # fmt: skip
                if not proof.ok:
                    continue
                letter = "ABCD"[correct]
                drafts.append(
                    Draft(
                        "preference_generalization",
                        f"gen.{key}",
                        situation.text,
                        f"{letter}. {options[correct]}",
                        d.choice(letter, options[correct]),
                        d.proof(
                            "preference",
                            [Quote(message_id=version.evidence[0], text=version.value)],
                            key=key,
                            mode="match",
                        ),
                        asked,
                        2,
                        node,
                        options=options,
                        format="single_choice",
                        queries=[
                            Query(subject="persona", target=claim_predicate(key), expect=[version.value])
                        ],
                        # every alternative the options may hold: the QA stage picks the list that
                        # keeps the blind heuristics at chance over the dataset
                        distractors=[
                            fill(template, {"value": v})
                            for v in _preference_pool(g, key, version.value, held, right)
                            if version.value not in fill(template, {"value": v})
                        ],
                    )
                )
    return drafts


def _relation(
    mode: str, label: str, relation_version, quotes: list[Quote], args: dict[str, str]
) -> str | None:
    """The relation word for a person, adding its proof: a fixed label, or the sibling relation as
    revealed."""
    if mode == "label":
        args["label"] = label
        return label
    if relation_version is None:
        return None
    quotes.append(Quote(message_id=relation_version.evidence[0], text=relation_version.value))
    args["label_key"] = label
    return relation_version.value


def _occasions_with_relation(g: Gen, labels: dict, relation_version, node: str) -> list[Draft]:
    """Where a family member's or friend's occasion was held, asked by how they are related to her ("for my
    brother's housewarming, which restaurant did we pick?"): who the relation names, then the occasion's
    restaurant, two hops a person makes without noticing."""
    persona = g.world.persona
    drafts: list[Draft] = []
    seen: set[tuple[str, str]] = set()
    for fact in g.world.facts:
        person, occasion = fact.context.get("person", ""), fact.context.get("occasion", "")
        if fact.kind != "social" or fact.key != "restaurant" or g.by_assistant(fact) or not person:
            continue
        if not occasion or (person, occasion) in seen:
            continue
        for key, (mode, label) in labels.items():
            version = persona.attribute(key).version_at(fact.when)
            if version is None or version.value != person or not version.evidence:
                continue
            quotes = [d.quote(fact)]
            if mode == "label_key":
                quotes.append(Quote(message_id=version.evidence[0], text=person))
            else:
                stated = _stating(g, key, person)
                if stated is None:
                    continue
                quotes += [Quote(message_id=stated.message_id, text=person), stated]
            relation = _relation(mode, label, relation_version, quotes, {})
            if relation is None:
                continue
            seen.add((person, occasion))
            drafts.append(
                Draft(
                    "multi_hop",
                    "mh.occasion_with_relation",
                    g.say.question("mh.occasion_with_relation", g.rng, relation=relation, occasion=occasion),
                    fact.value,
                    d.entity(fact.value),
                    d.proof("value", quotes),
                    d.final_time(g.world),
                    2,
                    node,
                    queries=[
                        Query(
                            subject="event",
                            target="restaurant",
                            where={"person": person, "occasion": occasion},
                            expect=[fact.value],
                        )
                    ],
                )
            )
    return drafts


def relationships(g: Gen, node: str) -> list[Draft]:
    persona = g.world.persona
    drafts: list[Draft] = []
    final = d.final_time(g.world)
    relation = persona.attribute("social_circle.sibling_relation").versions
    relation_version = relation[-1] if relation and relation[-1].evidence else None
    labels = {
        "social_circle.best_friend": ("label", g.say.answer("best_friend")),
        "social_circle.partner": ("label", g.say.answer("partner")),
        "social_circle.sibling": ("label_key", "social_circle.sibling_relation"),
    }
    # no "who is Ana to me?" of her best friend, sibling or partner, and no "how do I know the person who
    # went to Kyoto with me?" (always one of them): nobody asks who their own cousin is (an independent
    # review read every one as a quiz); a never-mentioned name still is asked so (abs.person)
    drafts += _occasions_with_relation(g, labels, relation_version, node)
    # who did I travel with, and how are they related to me
    for fact in g.world.facts:
        if fact.kind != "trip" or fact.key != "companion":
            continue
        for key, (mode, label) in labels.items():
            version = persona.attribute(key).version_at(fact.when)
            if version is None or version.value != fact.value or not version.evidence:
                continue
            dest_fact = next((f for f in g.world.by_session[fact.session_id] if f.key == "destination"), None)
            quotes = [Quote(message_id=fact.message_id, text=fact.value)]
            if mode == "label_key":
                quotes.append(Quote(message_id=version.evidence[0], text=fact.value))
            else:
                stated = _stating(g, key, fact.value)
                if stated is None:
                    continue
                quotes += [Quote(message_id=stated.message_id, text=fact.value), stated]
            args = {"name_key": key, "name": fact.value}
            answer = _relation(mode, label, relation_version, quotes, args)
            if answer is None:
                continue
            if dest_fact is not None:
                quotes.append(d.quote(dest_fact))
            if dest_fact is not None:
                bridge = [d.quote(dest_fact)] + quotes[:-1]
                drafts.append(
                    Draft(
                        "multi_hop",
                        "mh.trip_with_relation",
                        g.say.question("mh.trip_with_relation", g.rng, relation=answer),
                        dest_fact.value,
                        d.entity(dest_fact.value),
                        d.proof("value", bridge),
                        final,
                        2,
                        node,
                        queries=[
                            Query(
                                subject="event",
                                target="destination",
                                where={"companion": fact.value},
                                expect=[dest_fact.value],
                            )
                        ],
                    )
                )
    return drafts


def _months_held(g: Gen, key: str, first: date, last: date) -> list[date]:
    """The first days of the calendar months wholly inside `first`..`last` whose every day the value is
    settled on: "what was my main sport back in March?" is asked of a month, as a person dates a time of
    life, never of an arbitrary day ("on January 11"), and only where the whole month has one answer."""
    months = []
    start = first if first.day == 1 else add_months(first.replace(day=1), 1)
    while add_months(start, 1) - timedelta(days=1) <= last:
        end = add_months(start, 1) - timedelta(days=1)
        if all(settled(g, key, datetime.combine(day, time(12, 0))) for day in days(start, end)):
            months.append(start)
        start = add_months(start, 1)
    return months


def life_changes(g: Gen, node: str) -> list[Draft]:
    """The big changes of the whole trajectory as a person names them ("moved to Denver", "started at
    Stripe"), the biggest first, told in time order: a new favourite show, a phone or a commute that
    follows a move is no big change, and a bare value ("senior product manager") is no point. Asked where
    two or more changes were said."""
    persona = g.world.persona
    points: list[tuple[int, datetime, Quote, str]] = []  # (how big, when said, quote, as a person says it)
    for attr in persona.attributes():
        if attr.key not in RECAP_CHANGES:
            continue
        for index, version in enumerate(attr.versions):
            text = g.say.point(f"attr.{attr.key}", value=version.value)
            if life_change(persona, attr, index) and text and version.value in text:
                quote = Quote(message_id=version.evidence[0], text=version.value)
                when = g.world.messages[quote.message_id].timestamp
                points.append((RECAP_CHANGES.index(attr.key), when, quote, text))
    if len(points) < 2:
        return []
    # the six biggest, told in time order
    points = sorted(sorted(points, key=lambda p: p[:2])[:6], key=lambda p: p[1])
    chosen = [quote for _, _, quote, _ in points]
    months = max(1, round((persona.end - persona.start).days / 30.4))
    items = [text for _, _, _, text in points]
    keys = [RECAP_CHANGES[size] for size, _, _, _ in points]
    return [
        Draft(
            "summarization",
            "sum.changes",
            g.say.question("sum.changes", g.rng, n=months),
            "; ".join(items),
            d.key_points(items).model_copy(update={"cover": cover_of(len(items))}),
            d.proof("key_points", chosen),
            d.final_time(g.world),
            len(items),
            node,
            queries=[
                Query(
                    subject="persona",
                    target="*",
                    start=persona.start.date(),
                    end=persona.end.date(),
                    aggregate="covers",
                    expect=[q.text or "" for q in chosen],
                )
            ],
            distractors=_changes_not_made(g, keys),
        )
    ]


def _changes_not_made(g: Gen, keys: list[str]) -> list[str]:
    """Wrong options for the big changes, one of each kind the points are first: a change of the same kind
    to a value the persona never said (a city she never named, a company nobody mentioned; not even its head
    word: no "became a UX designer" beside her "product designer role"), phrased as the points are, so that
    only her own changes tell the right ones."""
    said = g.world.all_said
    wrong: list[str] = []
    for key in dict.fromkeys(keys):
        held = {norm_text(v.value) for v in g.world.persona.attribute(key).versions}
        pool = [
            v
            for v in _attr_distractors(key, "", g.lang)
            if norm_text(v) not in held and norm_text(v) not in said and norm_text(v.split()[-1]) not in said
        ]
        if pool:
            text = g.say.point(f"attr.{key}", value=g.rng.choice(sorted(pool)))
            if text:
                wrong.append(text)
    return wrong
