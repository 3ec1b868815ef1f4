"""Leaf questions: one fact each (a persona attribute, an app record, an episode parameter),
with the attribute answer specs and distractors the other generators reuse.
"""

from __future__ import annotations

from datetime import datetime, timedelta
from decimal import Decimal

from keme.models import Event, Query, Quote, Session
from keme.models.attributes import claim_predicate
from keme.qa import draft as d
from keme.qa.draft import Draft
from keme.qa.facts import Fact
from keme.qa.generate.context import Gen
from keme.text import lang as fmt
from keme.text import resources
from keme.text.dates import parse_display_date
from keme.text.normalize import parse_money

MONEY_ATTRS = frozenset({"finance.monthly_budget", "finance.savings_goal"})


NUMBER_ATTRS = (
    frozenset({"basic_info.age", "routine.training_per_week", "routine.commute_minutes"}) | MONEY_ATTRS
)


SOCIAL_NAMES = ("social_circle.best_friend", "social_circle.sibling", "social_circle.partner")


# episode param facts that make single-hop questions: (episode kind, param) -> (generator, question slots,
# parse)
PARAM_QUESTIONS: dict[tuple[str, str], tuple[str, tuple[str, ...], str]] = {
    ("trip", "destination"): ("trip.destination", ("date",), "text"),
    ("trip", "attraction"): ("trip.attraction", ("destination",), "text"),
    ("trip", "local_food"): ("trip.local_food", ("destination",), "text"),
    ("work_project", "deadline"): ("work_project.deadline", ("project",), "date"),
    ("health", "symptom"): ("health.symptom", ("date",), "text"),
    ("health", "clinic"): ("health.clinic", ("symptom",), "text"),
    ("social", "restaurant"): ("social.restaurant", ("person", "occasion"), "text"),
    ("social", "gift"): ("social.gift", ("person", "occasion"), "text"),
    ("shopping", "product"): ("shopping.product", ("date",), "text"),
    ("shopping", "price"): ("shopping.price", ("product",), "money"),
    ("cooking", "dish"): ("cooking.dish", ("date",), "text"),
    ("diet_change", "dish"): ("cooking.dish", ("date",), "text"),
    ("entertainment", "title"): ("entertainment.title", ("date",), "text"),
    ("learning", "resource"): ("learning.resource", ("date",), "text"),
    ("new_course", "resource"): ("learning.resource", ("date",), "text"),
    ("family", "relative"): ("family.relative", ("date",), "text"),
    ("weekend", "place"): ("weekend.place", ("activity",), "text"),
    ("tech", "issue"): ("tech.issue", ("device",), "text"),
    ("pet", "vet_clinic"): ("pet.vet_clinic", (), "text"),
    ("adopt_pet", "vet_clinic"): ("pet.vet_clinic", (), "text"),
    ("fitness", "goal"): ("fitness.goal", ("date",), "text"),
    ("trip", "companion"): ("rel.companion", ("destination",), "text"),
    ("work_project", "colleague"): ("rel.colleague", ("project",), "text"),
    # "who was I thinking of getting a board game for?": a gift is drawn once a trajectory (synth.params)
    ("social", "person"): ("rel.gift_for", ("gift", "occasion"), "text"),
}


# Param questions a fact the assistant stated answers: those worded as what "we talked about"
ASSISTANT_SAID = frozenset({"entertainment.title"})
# "who went with me to Rome?" is asked of a trip long enough ago to have blurred (an independent review read
# it asked days after her return as a quiz)
COMPANION_AFTER = timedelta(days=30)


RECORD_QUESTIONS: dict[tuple[str, str], tuple[str, tuple[str, ...], str, str]] = {
    # (app, field) -> (generator, question slots, parse, spec kind)
    ("bill", "amount"): ("bill.amount", ("merchant", "date"), "money", "number"),
    ("bill", "merchant"): ("bill.merchant", ("amount", "date"), "text", "entity"),
    # the method question names the amount too: the wording adversarial items use with a false one. What a
    # payment was filed under is not asked: the merchant gives it away (Safeway: Groceries)
    ("bill", "payment_method"): ("bill.method", ("amount", "merchant", "date"), "text", "entity"),
    ("calendar", "event_date"): ("calendar.date", ("title",), "date", "date"),
    ("calendar", "location"): ("calendar.location", ("title",), "text", "entity"),
    ("todo", "due_date"): ("todo.due", ("title",), "date", "date"),
    ("todo", "list_name"): ("todo.list", ("title",), "text", "entity"),
    ("voice_memo", "duration"): ("voice_memo.duration", ("title",), "duration", "duration"),
    ("voice_memo", "title"): ("voice_memo.title", ("date",), "text", "entity"),
    ("screen", "source_app"): ("screen.app", ("title",), "text", "entity"),
    ("document", "pages"): ("document.pages", ("title",), "int", "number"),
    ("document", "doc_type"): ("document.type", ("title",), "text", "entity"),
}


# a record field's predicate in the claim ledger (where it differs from the field's name)
RECORD_PREDICATES = {
    "category": "expense_category",
    "event_date": "date",
    "due_date": "date",
    "duration": "duration_seconds",
    "place": "venue",  # a weekend outing's place is a venue of the catalog
}


# ================================================================ leaves
def _attr_spec(key: str, value: str, lang: str):
    if key in MONEY_ATTRS:
        return d.number(
            Decimal(value), unit=fmt.CURRENCY[lang], aliases=[fmt.format_money(Decimal(value), lang)]
        ), fmt.format_money(Decimal(value), lang)
    if key in NUMBER_ATTRS:
        return d.number(int(value)), value
    return d.entity(value), value


def _attr_distractors(key: str, value: str, lang: str) -> list[str]:
    values = resources.get(lang).persona.attributes[key].values
    if key in MONEY_ATTRS:
        return [fmt.format_money(Decimal(v), lang) for v in values if v != value]
    return [v for v in values if v != value]


def attribute_atoms(g: Gen, session: Session, node: str) -> list[Draft]:
    persona = g.world.persona
    drafts = []
    for fact in g.world.by_session[session.id]:
        if fact.kind != "attr":
            continue
        attr = persona.attribute(fact.key)
        version = attr.versions[fact.version]
        if version.evidence[0] != fact.message_id or fact.key in ("social_circle.sibling_relation",):
            continue
        stated = None
        if fact.key in RELATION_WORDS.get(g.lang, {}):
            stated = _stating(g, fact.key, fact.value)
            if stated is None or stated.message_id != fact.message_id:
                continue  # "who is my best friend?" cites the message that says so, not one naming the person
        slots = {}
        quotes = [d.quote(fact)] + ([stated] if stated else [])
        if fact.key == "social_circle.sibling":
            relation = persona.attribute("social_circle.sibling_relation").version_at(fact.when)
            if (
                relation is None
                or not relation.evidence
                or g.world.messages[relation.evidence[0]].timestamp > fact.when
            ):
                continue
            slots["relation"] = relation.value
            quotes.append(Quote(message_id=relation.evidence[0], text=relation.value))
        following = (
            attr.versions[fact.version + 1].valid_from if fact.version + 1 < len(attr.versions) else None
        )
        last = max(g.world.messages[q.message_id].timestamp for q in quotes)
        asked = g.when(last, following)
        if asked is None:
            continue
        question = g.say.attribute(fact.key, "ask", g.rng, **slots)
        spec, answer = _attr_spec(fact.key, fact.value, g.lang)
        kind = "relationship" if fact.key in SOCIAL_NAMES else "single_hop"
        drafts.append(
            Draft(
                kind,
                f"attribute.{fact.key}",
                question or "",
                answer,
                spec,
                d.proof("attribute", quotes, key=fact.key),
                asked,
                1,
                node,
                fact=fact,
                queries=[Query(subject="persona", target=claim_predicate(fact.key), expect=[version.value])],
                distractors=_attr_distractors(fact.key, fact.value, g.lang)
                if fact.key not in SOCIAL_NAMES
                else [],
            )
        )
    return drafts


def _premise_quotes(g: Gen, session: Session, fact: Fact, slots: tuple[str, ...]) -> list[Quote] | None:
    """Quotes for the details the question itself states (they must be true too)."""
    quotes = []
    for slot in slots:
        if slot == "date":
            quotes.append(Quote(message_id=fact.message_id, on=fact.when.date()))
            continue
        holder = next(
            (f for f in g.world.by_session[session.id] if f.key == slot and f.kind == fact.kind), None
        )
        if holder is None:
            if fact.context.get(slot) and fact.context[slot] in g.world.messages[fact.message_id].content:
                quotes.append(Quote(message_id=fact.message_id, text=fact.context[slot]))
                continue
            return None
        quotes.append(d.quote(holder))
    return quotes


def _qualifiers(fact: Fact, slot_names: tuple[str, ...]) -> dict[str, str]:
    """The claims a question's slots name: a day it was said on, or a detail of the same subject."""
    where = {}
    for slot in slot_names:
        if slot == "date":
            where["said_on"] = fact.when.date().isoformat()
        elif slot == "amount" and "amount_value" in fact.context:
            where["amount"] = fact.context["amount_value"]
        elif fact.context.get(slot):
            where[RECORD_PREDICATES.get(slot, slot)] = fact.context[slot]
    return where


def _queries(*queries: Query | None) -> list[Query]:
    """Every query of a composed question, or a marker that one part cannot be stated (then the
    question is not asked: `unstated` resolves to nothing)."""
    if any(q is None for q in queries):
        return [Query(subject="any", target="unstated", expect=["stated"])]
    return [q for q in queries if q is not None]


def _record_query(fact: Fact, slot_names: tuple[str, ...], spec) -> Query:
    expect = spec.value if spec.kind in ("number", "date", "duration") else fact.value
    return Query(
        subject="anchor",
        target=RECORD_PREDICATES.get(fact.key, fact.key),
        where=_qualifiers(fact, slot_names),
        expect=[expect or ""],
    )


# Bill categories that are payments to an account, not purchases at a shop: "I paid AT&T $115.74", not
# "I paid $115.74 at AT&T" (and 「付中国移动那笔¥58」, not 「在中国移动付¥58」)
ACCOUNT_CATEGORIES = frozenset({"utilities", "telecom", "housing", "subscriptions"})
# merchants on a bill that are a fee or a fare, not a shop (「在ETC通行费付」 reads as a place)
FEE_MERCHANTS = frozenset({"ETC通行费", "停车场缴费", "地铁乘车码", "公交乘车码", "SpotHero", "Zocdoc copay"})
# a single fare (a ¥3 bus tap) is never asked about: no one wants one back from their assistant months later
FARES = frozenset({"地铁乘车码", "公交乘车码"})
# 腾讯视频VIP, 哔哩哔哩大会员: a subscription paid, not a shop (山姆会员店 is a shop: it ends otherwise)
MEMBERSHIP_ENDINGS = ("VIP", "会员")


def pays_account(fact: Fact, lang: str) -> bool:
    """Whether a bill is a payment to an account or a fee (a utility, a plan, a subscription, a toll), not
    a purchase at a shop."""
    label = fact.context.get("category_value", "")
    categories = resources.get(lang).anchors.bill.categories
    key = next((k for k, c in categories.items() if c.label == label), "")
    merchant = fact.context.get("merchant", "")
    return key in ACCOUNT_CATEGORIES or merchant in FEE_MERCHANTS or merchant.endswith(MEMBERSHIP_ENDINGS)


def record_atoms(g: Gen, session: Session, node: str) -> list[Draft]:
    drafts = []
    for fact in g.world.by_session[session.id]:
        spec_row = RECORD_QUESTIONS.get((fact.kind, fact.key))
        if spec_row is None or (fact.kind == "bill" and fact.context.get("merchant") in FARES):
            continue
        generator, slot_names, parse, kind = spec_row
        premises = _premise_quotes(g, session, fact, slot_names)
        if premises is None:
            continue
        slots = {s: fact.context.get(s, "") for s in slot_names}
        slots["date"] = g.day(fact.when)
        answer = fact.value
        if kind == "number" and parse == "money":
            spec = d.number(
                Decimal(fact.context["amount_value"]), unit=fmt.CURRENCY[g.lang], aliases=[fact.value]
            )
        elif kind == "number":
            spec = d.number(int(fact.value))
        elif kind == "date":
            value = fact.context.get("start_value") or fact.context.get("due_value")
            spec = d.day_spec(datetime.fromisoformat(value).date(), aliases=[fact.value])
            if fact.kind == "calendar":
                answer = f"{fact.value} {fact.context.get('event_time', '')}".strip()
        elif kind == "duration":
            spec = d.duration(int(fact.context["duration_value"]), aliases=[fact.value])
        else:
            spec = d.entity(fact.value)
        quotes = [d.quote(fact)] + premises
        # "what day is the plumber on my calendar?" is asked before the plumber comes, not after
        start = fact.context.get("start_value") if fact.kind == "calendar" else None
        asked = g.when(fact.when, datetime.fromisoformat(start) if start else None)
        if asked is None:
            continue
        drafts.append(
            Draft(
                "single_hop",
                generator,
                g.say.question(generator, g.rng, **slots),
                answer,
                spec,
                d.proof("value", quotes, parse=parse),
                asked,
                1,
                node,
                fact=fact,
                queries=[_record_query(fact, slot_names, spec)],
            )
        )
    # note and screenshot contents: key points
    for fact in g.world.by_session[session.id]:
        if fact.kind in ("note", "screen") and fact.key == "title" and fact.context.get("lines"):
            lines = [line for line in fact.context["lines"].split("\n") if line.strip()]
            message = g.world.messages[fact.message_id]
            # "what did it say" is answered by all of it: a long page is not asked about
            if not lines or len(lines) > 6 or not all(line in message.content for line in lines):
                continue
            generator = "note.body" if fact.kind == "note" else "screen.text"
            predicate = "body" if fact.kind == "note" else "screen_text"
            subject = f"anchor:{fact.context.get('anchor_id')}"
            content = next(
                (c.value for c in g.world.claims if c.subject == subject and c.predicate == predicate), None
            )
            query = (
                Query(subject="anchor", target=predicate, where={"title": fact.value}, expect=[content])
                if content
                else None
            )
            quotes = [Quote(message_id=fact.message_id, text=line) for line in lines] + [d.quote(fact)]
            asked = g.when(fact.when)
            if asked is None:
                continue
            drafts.append(
                Draft(
                    "single_hop",
                    generator,
                    g.say.question(generator, g.rng, title=fact.value),
                    "\n".join(lines),
                    d.key_points(lines),
                    d.proof("key_points", quotes),
                    asked,
                    1,
                    node,
                    fact=fact,
                    queries=_queries(query),
                )
            )
    return drafts


def param_atoms(g: Gen, session: Session, node: str) -> list[Draft]:
    drafts = []
    for fact in g.world.by_session[session.id]:
        row = PARAM_QUESTIONS.get((fact.kind, fact.key))
        if row is None or fact.kind == "attr":
            continue
        generator, slot_names, parse = row
        if generator == "shopping.product" and fact.context.get("moment") != "purchase_done":
            continue
        if generator == "trip.destination" and fact.context.get("moment") != "trip_planning":
            continue
        if g.by_assistant(fact) and generator not in ASSISTANT_SAID:
            continue
        if "date" in slot_names and _others_named_that_day(g, fact):
            continue  # "which show did we talk about on May 5?" has one answer only if one was named
        premises = _premise_quotes(g, session, fact, slot_names)
        if premises is None:
            continue
        slots = {s: fact.context.get(s, "") for s in slot_names} | {"date": g.day(fact.when)}
        if parse == "money":
            spec = d.number(_money_value(fact.value), unit=fmt.CURRENCY[g.lang], aliases=[fact.value])
        elif parse == "date":
            day = parse_display_date(fact.value, fact.when)
            if day is None:
                continue
            spec = d.day_spec(day, aliases=[fact.value])
        else:
            spec = d.entity(fact.value)
        asked = g.when(fact.when)
        if generator == "rel.companion":  # asked once the trip is a memory, not days after it
            asked = d.final_time(g.world)
            if asked - fact.when < COMPANION_AFTER:
                continue
        if asked is None:
            continue
        if generator == "rel.gift_for" and _named_elsewhere(g, fact.context.get("gift", ""), fact.value):
            continue  # "Mom's lipstick is ordered" in a memo: the lipstick was for two people
        kind = "relationship" if generator.startswith("rel.") else "single_hop"
        drafts.append(
            Draft(
                kind,
                generator,
                g.say.question(generator, g.rng, **slots),
                fact.value,
                spec,
                d.proof("value", [d.quote(fact)] + premises, parse=parse),
                asked,
                1,
                node,
                fact=fact,
                queries=[
                    Query(
                        subject="event",
                        target=RECORD_PREDICATES.get(fact.key, fact.key),
                        where=_qualifiers(fact, slot_names),
                        expect=[spec.value or fact.value],
                    )
                ],
            )
        )
    return drafts


def _named_elsewhere(g: Gen, thing: str, person: str) -> bool:
    """Whether `thing` is named in a session where no social fact is about `person` (a memo, another
    occasion): who it was for would have two answers."""
    if not thing:
        return True
    ours = {f.session_id for f in g.world.facts if f.kind == "social" and f.context.get("person") == person}
    return any(thing in m.content and g.world.session_of[m.id] not in ours for m in g.world.messages.values())


def _money_value(text: str) -> Decimal:
    value = parse_money(text)
    if value is None:
        raise ValueError(f"no amount in {text!r}")
    return value


def leaf_drafts(g: Gen, leaf: Event) -> list[Draft]:
    session = g.world.sessions_by_id.get(leaf.session_id or "")
    if session is None:
        return []
    return (
        attribute_atoms(g, session, leaf.id)
        + record_atoms(g, session, leaf.id)
        + param_atoms(g, session, leaf.id)
    )


# words that state a relationship (not only name the person): a relationship question cites one, and its
# answer (questions.yaml `answers`) must be what the message says: "好朋友" (a good friend) or "死党" do
# not state "我最好的朋友", "另一半" is not "我的对象"
RELATION_WORDS = {
    "en": {"social_circle.best_friend": ("best friend",), "social_circle.partner": ("partner",)},
    "zh": {"social_circle.best_friend": ("最好的朋友",), "social_circle.partner": ("对象",)},
}


def _stating(g: Gen, key: str, name: str, before: datetime | None = None) -> Quote | None:
    """The relation word, quoted from the first user message that names `name` and says in words that
    they are the persona's `key` relation (the sibling's relation is its own attribute), sent before
    `before`. The user's own words: the assistant only knows what it was told."""
    words = RELATION_WORDS.get(g.lang, {}).get(key)
    if words is None:
        return None
    for session in g.world.sessions:
        for message in session.messages:
            if before is not None and message.timestamp > before:
                return None
            if message.role != "user" or name not in message.content:
                continue
            lowered = message.content.lower()
            for word in words:
                at = lowered.find(word)
                if at >= 0:
                    return Quote(message_id=message.id, text=message.content[at : at + len(word)])
    return None


def _others_named_that_day(g: Gen, fact: Fact) -> bool:
    """Whether a message of the fact's day names another value of its kind: another show, book or film
    (the user's favourite, said while asking for something like it), another destination (an itinerary
    for the next trip), another product, dish or symptom the persona ever talks about."""
    res = resources.get(g.lang)
    rivals = {f.value for f in g.world.facts if f.kind == fact.kind and f.key == fact.key}
    if (fact.kind, fact.key) == ("entertainment", "title"):
        rivals |= {t.title for t in res.pools.titles}
        rivals |= set(res.persona.attributes["entertainment.favorite_show"].values)
    if (fact.kind, fact.key) == ("trip", "destination"):
        rivals |= {d.name for d in res.pools.destinations}
    rivals.discard(fact.value)
    rivals = {r for r in rivals if r and fact.value not in r}  # "Kyoto" is not a rival of "Kyoto Station"
    day = fact.when.date()
    return any(
        rival in message.content
        for session in g.world.sessions
        if session.start.date() <= day <= session.end.date()
        for message in session.messages
        if message.timestamp.date() == day
        for rival in rivals
    )


# A value asked of a date ("my savings goal on January 17") must be plainly in force then: not in the
# week before a change of it (the chats may already speak of it: "my first yoga session this weekend"),
# nor while the change is under way (between leaving a job and the first day at the next)
UNSETTLED_BEFORE = timedelta(days=7)


def settled(g: Gen, key: str, when: datetime) -> bool:
    """Whether no change of `key` is near or under way at `when`."""
    return not any(
        f"set:{key}" in event.params
        and event.start - UNSETTLED_BEFORE <= when <= event.end + timedelta(days=1)
        for event in g.world.graph.events
    )
