"""Question generators, from leaf facts up to persona-level questions.

Leaves give single-hop questions about what one session states. Internal
nodes compose a sample of their children's questions into multi-hop and
temporal ones and summarise the episode or month. The root adds what needs the
whole trajectory: knowledge updates, preferences, relationships, abstention
and adversarial premises. Every draft carries the proof the verifier checks.
"""

from __future__ import annotations

import random
import re
from collections import Counter
from dataclasses import dataclass
from datetime import date, datetime, time, timedelta
from decimal import Decimal

from keme.days import block_of
from keme.models import APP_TYPES, Event, Query, Quote, Session
from keme.models.attributes import claim_predicate
from keme.qa import draft as d
from keme.qa.draft import Draft
from keme.qa.facts import Fact, World
from keme.qa.options import Balancer, pick_by_rank
from keme.qa.phrasing import Phrasing
from keme.text import lang as fmt
from keme.text import resources
from keme.text.dates import parse_display_date
from keme.text.fill import fill
from keme.text.normalize import parse_money

MONEY_ATTRS = frozenset({"finance.monthly_budget", "finance.savings_goal"})
NUMBER_ATTRS = (
    frozenset({"basic_info.age", "routine.training_per_week", "routine.commute_minutes"}) | MONEY_ATTRS
)
SOCIAL_NAMES = ("social_circle.best_friend", "social_circle.sibling", "social_circle.partner")
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
}
RECORD_QUESTIONS: dict[tuple[str, str], tuple[str, tuple[str, ...], str, str]] = {
    # (app, field) -> (generator, question slots, parse, spec kind)
    ("bill", "amount"): ("bill.amount", ("merchant", "date"), "money", "number"),
    ("bill", "merchant"): ("bill.merchant", ("amount", "date"), "text", "entity"),
    ("bill", "payment_method"): ("bill.method", ("merchant", "date"), "text", "entity"),
    ("bill", "category"): ("bill.category", ("merchant", "date"), "text", "entity"),
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
SUMMARY_KEYS: dict[str, tuple[str, ...]] = {
    "trip": ("destination", "companion", "attraction", "local_food"),
    "work_project": ("project", "colleague", "deadline"),
    "health": ("symptom", "clinic"),
    "fitness": ("goal",),
    "social": ("person", "occasion", "restaurant", "gift"),
    "shopping": ("product", "price"),
    "entertainment": ("title", "genre"),
    "job_change": ("target_company", "target_title"),
    "relocate": ("target_city", "target_neighborhood"),
}
SALIENT = (
    "destination",
    "project",
    "symptom",
    "product",
    "title",
    "dish",
    "person",
    "goal",
    "target_company",
    "target_city",
    "restaurant",
    "place",
    "resource",
    "device",
)
TOPIC_SLOTS = {
    "trip": ("destination",),
    "work_project": ("project",),
    "health": ("symptom",),
    "fitness": ("goal",),
    "social": ("person", "occasion"),
    "shopping": ("product",),
    "entertainment": ("title",),
    "job_change": ("target_company",),
    "relocate": ("target_city",),
}
EVENT_KINDS = frozenset(
    {
        "bill",
        "trip",
        "shopping",
        "health",
        "social",
        "cooking",
        "work_project",
        "entertainment",
        "calendar",
        "todo",
        "voice_memo",
        "note",
        "screen",
        "document",
    }
)


@dataclass
class Gen:
    world: World
    say: Phrasing
    rng: random.Random
    mid_share: float

    @property
    def lang(self) -> str:
        return self.world.lang

    def day(self, when: datetime | date) -> str:
        return fmt.format_date(
            when if isinstance(when, date) and not isinstance(when, datetime) else when.date(), self.lang
        )

    def period(self, start: date, end: date) -> str:
        """A chapter's span as its title names it (a month, or the dates of half a month)."""
        return fmt.period_name(start, end, self.lang)

    def month(self, start: date) -> str:
        return (
            f"{start.year}年{start.month}月"
            if self.lang == "zh"
            else f"{fmt.MONTHS_EN[start.month - 1]} {start.year}"
        )

    def when(self, last: datetime, until: datetime | None = None) -> datetime | None:
        return d.ask_time(self.rng, self.world, last, self.mid_share, until)


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
        if (
            fact.key in RELATION_WORDS.get(g.lang, {})
            and _stating(g, fact.key, fact.value) != fact.message_id
        ):
            continue  # "who is my best friend?" cites the message that says so, not one naming the person
        slots = {}
        quotes = [d.quote(fact)]
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


def record_atoms(g: Gen, session: Session, node: str) -> list[Draft]:
    drafts = []
    for fact in g.world.by_session[session.id]:
        spec_row = RECORD_QUESTIONS.get((fact.kind, fact.key))
        if spec_row is None:
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
        asked = g.when(fact.when)
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
        if asked is None:
            continue
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


# ================================================================ composition (internal nodes)
def _event_phrase(g: Gen, fact: Fact, form: str) -> str | None:
    if fact.kind not in EVENT_KINDS:
        return None
    slots = dict(fact.context)
    phrase = g.say.event(fact.kind, form, **slots)
    if phrase is None:
        return None
    needed = {
        "bill": ("amount", "merchant"),
        "calendar": ("title",),
        "todo": ("title",),
        "voice_memo": ("title",),
        "note": ("title",),
        "screen": ("title",),
        "document": ("title",),
    }.get(fact.kind)
    if needed and not all(slots.get(k) for k in needed):
        return None
    return phrase


def _event_query(g: Gen, fact: Fact, form: str, target: str = "said_on", pick: str = "all") -> Query | None:
    """The day an event phrase names: the subjects with every detail the phrase states, and the days
    they were talked about (each must be the fact's own day, or the phrase names several events)."""
    phrases = g.say.text.events.get(fact.kind)
    if phrases is None:
        return None
    names = re.findall(r"\{(\w+)", getattr(phrases, form))
    where = _qualifiers(fact, tuple(n for n in names if n != "date"))
    if len(where) != len(set(names) - {"date"}):
        return None
    subject = "anchor" if fact.kind in APP_TYPES else "event"
    return Query(
        subject=subject, target=target, where=where, expect=[fact.when.date().isoformat()], pick=pick
    )


def _event_quotes(g: Gen, atom: Draft) -> list[Quote]:
    """The atom's own quotes, dated: they prove both what happened and when."""
    assert atom.fact is not None
    return [Quote(message_id=atom.fact.message_id, text=atom.fact.value, on=atom.fact.when.date())] + [
        q for q in atom.proof.quotes if q.message_id != atom.fact.message_id or q.text != atom.fact.value
    ]


def compose_pairs(g: Gen, node: str, sample: list[Draft], limit: int) -> list[Draft]:
    """Temporal and multi-hop questions from pairs of child questions about different sessions."""
    eventful = [a for a in sample if a.fact is not None and _event_phrase(g, a.fact, "verb")]
    pairs = [
        (a, b)
        for i, a in enumerate(eventful)
        for b in eventful[i + 1 :]
        if a.fact.session_id != b.fact.session_id and a.fact.when.date() != b.fact.when.date()
    ]
    g.rng.shuffle(pairs)
    drafts: list[Draft] = []
    for a, b in pairs:
        if len(drafts) >= limit:
            break
        first, second = sorted((a, b), key=lambda x: x.fact.when)
        last = second.fact.when
        asked = g.when(last)
        if asked is None:
            continue
        choice = g.rng.random()
        if first.subtype == "bill.amount" and second.subtype == "bill.amount" and choice < 0.5:
            total = Decimal(first.spec.value) + Decimal(second.spec.value)
            slots = {
                "merchant1": first.fact.context["merchant"],
                "date1": g.day(first.fact.when),
                "merchant2": second.fact.context["merchant"],
                "date2": g.day(second.fact.when),
            }
            quotes = [
                Quote(message_id=first.fact.message_id, text=first.fact.value),
                Quote(message_id=second.fact.message_id, text=second.fact.value),
            ]
            drafts.append(
                Draft(
                    "multi_hop",
                    "mh.sum_bills",
                    g.say.question("mh.sum_bills", g.rng, **slots),
                    fmt.format_money(total, g.lang),
                    d.number(total, unit=fmt.CURRENCY[g.lang], aliases=[fmt.format_money(total, g.lang)]),
                    d.proof(
                        "sum", quotes + [q for q in first.proof.quotes[1:] + second.proof.quotes[1:]], n="2"
                    ),
                    asked,
                    2,
                    node,
                    sub=[first, second],
                )
            )
        elif choice < 0.75:
            days = (second.fact.when.date() - first.fact.when.date()).days
            event1, event2 = _event_phrase(g, first.fact, "past"), _event_phrase(g, second.fact, "past")
            if event1 == event2:
                continue
            question = g.say.question("tmp.days_between", g.rng, event1=event1, event2=event2)
            head_a, *rest_a = _event_quotes(g, first)
            head_b, *rest_b = _event_quotes(g, second)
            drafts.append(
                Draft(
                    "temporal_reasoning",
                    "tmp.days_between",
                    question,
                    g.say.answer("days", n=days),
                    d.number(days, unit="days"),
                    d.proof("days_between", [head_a, head_b] + rest_a + rest_b),
                    asked,
                    2,
                    node,
                    sub=[first, second],
                    queries=_queries(
                        _event_query(g, first.fact, "past"), _event_query(g, second.fact, "past")
                    ),
                )
            )
        else:
            shown = [first, second]
            g.rng.shuffle(shown)
            nouns = [_event_phrase(g, x.fact, "noun") for x in shown]
            if None in nouns or nouns[0] == nouns[1]:
                continue
            question = g.say.question("tmp.order", g.rng, event1=nouns[0], event2=nouns[1])
            letter = "A" if shown[0] is first else "B"
            quotes = [Quote(message_id=x.fact.message_id, text=x.fact.value) for x in shown]
            drafts.append(
                Draft(
                    "temporal_reasoning",
                    "tmp.order",
                    question,
                    f"{letter}. {nouns[0 if letter == 'A' else 1]}",
                    d.choice(letter, nouns[0 if letter == "A" else 1]),
                    d.proof("order", quotes),
                    asked,
                    2,
                    node,
                    sub=[first, second],
                    queries=_queries(
                        _event_query(g, first.fact, "noun"), _event_query(g, second.fact, "noun")
                    ),
                    options=list(nouns),
                    format="single_choice",
                )
            )
    return drafts


def compose_single(g: Gen, node: str, sample: list[Draft], limit: int) -> list[Draft]:
    """Date-of, days-ago and attribute-at-the-time questions built on one child question."""
    drafts: list[Draft] = []
    persona = g.world.persona
    changing = [
        a for a in persona.attributes() if len(a.versions) >= 2 and all(v.evidence for v in a.versions)
    ]
    for atom in sample:
        if len(drafts) >= limit or atom.fact is None or atom.fact.kind == "attr":
            continue
        verb = _event_phrase(g, atom.fact, "verb")
        roll = g.rng.random()
        # a topic talked about on several days is asked about the first time (the only one-day answer)
        days = {
            f.when.date()
            for f in g.world.facts
            if f.kind == atom.fact.kind and f.key == atom.fact.key and f.value == atom.fact.value
        }
        first = len(days) > 1
        if first and atom.fact.when.date() != min(days):
            verb = None
        suffix = "_first" if first else ""
        pick = "first" if first else "all"
        if verb and roll < 0.35:
            asked = g.when(atom.fact.when)
            if asked is None:
                continue
            day = atom.fact.when.date()
            drafts.append(
                Draft(
                    "temporal_reasoning",
                    "tmp.date_of" + suffix,
                    g.say.question("tmp.date_of" + suffix, g.rng, event=verb),
                    g.day(day),
                    d.day_spec(day),
                    d.proof("date", _event_quotes(g, atom)),
                    asked,
                    1,
                    node,
                    sub=[atom],
                    queries=_queries(_event_query(g, atom.fact, "verb", pick=pick)),
                )
            )
        elif verb and roll < 0.6:
            asked = g.when(atom.fact.when)
            if asked is None:
                continue
            days = (asked.date() - atom.fact.when.date()).days
            if days <= 0:
                continue
            drafts.append(
                Draft(
                    "temporal_reasoning",
                    "tmp.days_ago" + suffix,
                    g.say.question("tmp.days_ago" + suffix, g.rng, event=verb),
                    g.say.answer("days", n=days),
                    d.number(days, unit="days"),
                    d.proof("days_before", _event_quotes(g, atom)),
                    asked,
                    2,
                    node,
                    sub=[atom],
                    queries=_queries(_event_query(g, atom.fact, "verb", pick=pick)),
                )
            )
        elif changing:
            when = _event_phrase(g, atom.fact, "when")
            attr = g.rng.choice(changing)
            version = attr.version_at(atom.fact.when)
            forms = g.say.text.attributes[attr.key].at_event
            if not when or version is None or not forms:
                continue
            evidence = next(
                (
                    m
                    for m in version.evidence
                    if g.world.messages[m].timestamp <= max(atom.fact.when, version.valid_from)
                ),
                None,
            )
            if evidence is None:
                continue
            asked = d.final_time(g.world)
            spec, answer = _attr_spec(attr.key, version.value, g.lang)
            quotes = _event_quotes(g, atom) + [Quote(message_id=evidence, text=version.value)]
            drafts.append(
                Draft(
                    "multi_hop",
                    f"mh.attr_at_event.{attr.key}",
                    d.fill_question(g.rng, forms, event=when),
                    answer,
                    spec,
                    d.proof("attribute", quotes, key=attr.key, at=atom.fact.when.isoformat()),
                    asked,
                    2,
                    node,
                    sub=[atom],
                    queries=_queries(
                        _event_query(g, atom.fact, "when"),
                        Query(
                            subject="persona",
                            target=claim_predicate(attr.key),
                            at=atom.fact.when,
                            expect=[version.value],
                        ),
                    ),
                    distractors=_attr_distractors(attr.key, version.value, g.lang),
                )
            )
    return drafts


def episode_drafts(g: Gen, episode: Event, sessions: list[Session]) -> list[Draft]:
    """A recap and the span of an episode that had several sessions."""
    kind = episode.params.get("_episode", episode.change or episode.kind)
    facts = [f for s in sessions for f in g.world.by_session[s.id] if f.kind == kind]
    drafts: list[Draft] = []
    topic_slots = TOPIC_SLOTS.get(kind)
    if topic_slots is None or not facts:
        return drafts
    params = {k: v for k, v in episode.params.items() if not k.startswith("_")}
    topic = g.say.topic(kind, **params)
    if not topic:
        return drafts
    shown = {params.get(s, "") for s in topic_slots}
    points: list[Fact] = []
    for key in SUMMARY_KEYS.get(kind, ()):
        fact = next((f for f in facts if f.key == key), None)
        if fact is not None and fact.value not in shown and fact.value not in topic:
            points.append(fact)
    last = max(f.when for f in facts)
    if len(points) >= 2:
        asked = g.when(last)
        if asked is not None:
            items = [f.value for f in points]
            keys = {f.key for f in points}
            others = list(
                dict.fromkeys(
                    f.value
                    for f in g.world.facts
                    if f.kind == kind and f.key in keys and f.value not in items and f.value not in topic
                )
            )
            drafts.append(
                Draft(
                    "summarization",
                    "sum.episode",
                    g.say.question("sum.episode", g.rng, topic=topic),
                    "; ".join(items),
                    d.key_points(items),
                    d.proof("key_points", [d.quote(f) for f in points]),
                    asked,
                    len(points),
                    episode.id,
                    distractors=g.rng.sample(others, min(3, len(others))),
                )
            )
    firsts = sorted({s.id: s for s in sessions}.values(), key=lambda s: s.start)
    anchor_facts = [
        next((f for f in g.world.by_session[s.id] if f.kind == kind), None) for s in (firsts[0], firsts[-1])
    ]
    if len(firsts) >= 2 and all(anchor_facts) and anchor_facts[0].when.date() != anchor_facts[1].when.date():
        first, second = anchor_facts
        asked = g.when(second.when)
        if asked is not None:
            days = (second.when.date() - first.when.date()).days
            drafts.append(
                Draft(
                    "temporal_reasoning",
                    "tmp.episode_span",
                    g.say.question("tmp.episode_span", g.rng, topic=topic),
                    g.say.answer("days", n=days),
                    d.number(days, unit="days"),
                    d.proof("days_between", [d.dated(first), d.dated(second)]),
                    asked,
                    2,
                    episode.id,
                )
            )
    return drafts


def _bills(g: Gen, start: date, end: date) -> list[tuple[Fact, dict[str, str]]]:
    rows = []
    for fact in g.world.facts:
        if fact.kind == "bill" and fact.key == "amount" and start <= fact.when.date() <= end:
            rows.append((fact, fact.context))
    return rows


def chapter_drafts(g: Gen, chapter: Event) -> list[Draft]:
    """Month-level questions: a recap, habits, and counts over the month's payments."""
    start, end = chapter.start.date(), chapter.end.date()
    month = g.period(start, end)  # month-scoped questions cover exactly the chapter's days
    drafts: list[Draft] = []
    final = d.final_time(g.world)
    # recap of the month
    points: list[Fact] = []
    for episode in [e for e in g.world.graph.events if e.parent_id == chapter.id]:
        sessions = [
            g.world.sessions_by_id[e.session_id]
            for e in g.world.graph.events
            if e.session_id and (e.id == episode.id or e.parent_id == episode.id)
        ]
        facts = [
            f
            for s in sessions
            for f in g.world.by_session[s.id]
            if f.kind != "attr" and f.kind not in APP_TYPES and f.key in SALIENT
        ]
        facts.sort(key=lambda f: SALIENT.index(f.key))
        if facts and facts[0].value not in [p.value for p in points]:
            points.append(facts[0])
    if len(points) >= 3:
        # spread over the whole period: "my April" is all of April, not its first fortnight
        points.sort(key=lambda f: f.when)
        count = min(5, len(points))
        chosen = [points[round(i * (len(points) - 1) / (count - 1))] for i in range(count)]
        items = [f.value for f in chosen]
        drafts.append(
            Draft(
                "summarization",
                "sum.month",
                g.say.question("sum.month", g.rng, month=month),
                "; ".join(items),
                d.key_points(items),
                d.proof("key_points", [d.quote(f) for f in chosen]),
                final,
                len(items),
                chapter.id,
            )
        )
    bills = _bills(g, start, end)
    # the category that shows up most (implicit preference)
    counts = Counter(ctx["category"] for _, ctx in bills)
    ranked = counts.most_common(2)
    if ranked and ranked[0][1] >= 2 and (len(ranked) == 1 or ranked[0][1] > ranked[1][1]):
        label = ranked[0][0]
        quotes = [Quote(message_id=f.message_id, text=label) for f, ctx in bills if ctx["category"] == label]
        drafts.append(
            Draft(
                "implicit_preference",
                "imp.category.month",
                g.say.question("imp.category.month", g.rng, month=month),
                label,
                d.entity(label),
                d.proof("majority", quotes, field="category", start=start.isoformat(), end=end.isoformat()),
                final,
                2,
                chapter.id,
                distractors=[c for c in counts if c != label],
            )
        )
    # repeated merchant: count; category with several payments: total
    merchants = Counter(ctx["merchant"] for _, ctx in bills)
    app = resources.get(g.lang).anchors.bill.app_name
    for merchant, count in merchants.items():
        if count >= 2:
            rows = [f for f, ctx in bills if ctx["merchant"] == merchant]
            matching = _matching_system(g, app, merchant, start, end)
            if {m for m in matching} != {f.message_id for f in rows}:
                continue
            drafts.append(
                Draft(
                    "multi_hop",
                    "mh.count_merchant",
                    g.say.question("mh.count_merchant", g.rng, merchant=merchant, month=month),
                    g.say.answer("times", n=count),
                    d.number(count),
                    d.proof(
                        "count",
                        [Quote(message_id=m, text=merchant) for m in matching],
                        app=app,
                        needle=merchant,
                        start=start.isoformat(),
                        end=end.isoformat(),
                    ),
                    final,
                    count,
                    chapter.id,
                )
            )
    for label, count in counts.items():
        if count < 2:
            continue
        matching = _matching_system(g, app, label, start, end)
        rows = [f for f, ctx in bills if ctx["category"] == label]
        if set(matching) != {f.message_id for f in rows}:
            continue
        total = sum(
            (Decimal(ctx["amount_value"]) for f, ctx in bills if ctx["category"] == label), Decimal("0")
        )
        quotes = [Quote(message_id=f.message_id, text=f.value) for f in rows]
        drafts.append(
            Draft(
                "multi_hop",
                "mh.total_category",
                g.say.question("mh.total_category", g.rng, category=label, month=month),
                fmt.format_money(total, g.lang),
                d.number(total, unit=fmt.CURRENCY[g.lang], aliases=[fmt.format_money(total, g.lang)]),
                d.proof(
                    "sum_where", quotes, app=app, needle=label, start=start.isoformat(), end=end.isoformat()
                ),
                final,
                count,
                chapter.id,
            )
        )
    drafts += _time_of_day(g, start, end, chapter.id, "imp.time_of_day.month", month=month)
    return drafts


def _matching_system(g: Gen, app: str, needle: str, start: date, end: date) -> list[str]:
    return [
        m.id
        for s in g.world.sessions
        for m in s.messages
        if m.role == "system" and m.app == app and start <= m.timestamp.date() <= end and needle in m.content
    ]


def _time_of_day(g: Gen, start: date, end: date, node: str, generator: str, **slots: str) -> list[Draft]:
    sessions = [s for s in g.world.sessions if start <= s.start.date() <= end]
    counts = Counter(block_of(s.start) for s in sessions)
    ranked = counts.most_common(2)
    if not ranked or (len(ranked) > 1 and ranked[0][1] == ranked[1][1]) or ranked[0][1] < 3:
        return []
    block = str(ranked[0][0])
    chosen = [s for s in sessions if block_of(s.start) == block]
    sample = g.rng.sample(chosen, min(8, len(chosen)))
    quotes = [
        Quote(message_id=s.messages[0].id, on=s.start.date()) for s in sorted(sample, key=lambda s: s.start)
    ]
    answer = g.say.answer(block)
    return [
        Draft(
            "implicit_preference",
            generator,
            g.say.question(generator, g.rng, **slots),
            answer,
            d.AnswerSpec(kind="entity", value=block, aliases=[answer]),
            d.proof("time_of_day", quotes, start=start.isoformat(), end=end.isoformat()),
            d.final_time(g.world),
            2,
            node,
            distractors=[g.say.answer(b) for b in ("morning", "afternoon", "evening") if b != block],
        )
    ]


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
        if forms.history:
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
                )
            )
        if forms.at_time:
            for older, newer in zip(versions, versions[1:]):
                first_day = older.valid_from.date() + timedelta(days=1)
                last_day = newer.valid_from.date() - timedelta(days=1)
                if last_day < first_day or not older.evidence:
                    continue
                day = first_day + timedelta(days=g.rng.randint(0, (last_day - first_day).days))
                at = datetime.combine(day, time(12, 0))
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
                        d.fill_question(g.rng, forms.at_time, date=g.day(day)),
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


def implicit_overall(g: Gen, node: str) -> list[Draft]:
    persona = g.world.persona
    start, end = persona.start.date(), persona.end.date()
    bills = _bills(g, start, end)
    drafts: list[Draft] = []
    final = d.final_time(g.world)
    for field, generator, minimum in (
        ("category", "imp.category.all", 3),
        ("payment_method", "imp.method.all", 3),
        ("merchant", "imp.merchant.all", 3),
    ):
        counts = Counter(ctx[field] for _, ctx in bills)
        ranked = counts.most_common(2)
        if not ranked or ranked[0][1] < minimum or (len(ranked) > 1 and ranked[0][1] == ranked[1][1]):
            continue
        value = ranked[0][0]
        rows = [f for f, ctx in bills if ctx[field] == value]
        quotes = [Quote(message_id=f.message_id, text=value) for f in rows]
        drafts.append(
            Draft(
                "implicit_preference",
                generator,
                g.say.question(generator, g.rng),
                value,
                d.entity(value),
                d.proof("majority", quotes, field=field, start=start.isoformat(), end=end.isoformat()),
                final,
                2,
                node,
                distractors=[c for c in counts if c != value],
            )
        )
    drafts += _time_of_day(g, start, end, node, "imp.time_of_day.all")
    return drafts


def _conflicting(a: str, b: str, groups: list[list[str]]) -> bool:
    """Two values one option list must not hold together: one is part of the other, or a conflict group
    of the generalization names both (a vegan menu fits a vegetarian, shrimp is seafood)."""
    return a in b or b in a or any(a in group and b in group for group in groups)


def _preference_options(g: Gen, key: str, value: str, held: set[str], balance: Balancer) -> list[str]:
    """Up to three alternatives to a preference value, none of which the preference would also accept
    or the persona ever held, so only knowing the preference singles the option out (allergies: other
    food allergens, and the question asks which one to avoid); the gold's rank by length among the
    options is drawn from a balanced sequence, so it is not the longest more often than by chance."""
    text = g.say.text.generalize[key]
    pool = (
        g.say.text.food_allergens
        if key == "health.allergy"
        else resources.get(g.lang).persona.attributes[key].values
    )
    candidates = [v for v in pool if v not in held and not _conflicting(v, value, text.conflicts)]
    g.rng.shuffle(candidates)
    distinct: list[str] = []
    for candidate in candidates:
        if not any(_conflicting(candidate, c, text.conflicts) for c in distinct):
            distinct.append(candidate)
    k = min(3, len(distinct))
    if not k:
        return []
    chosen, _, _ = pick_by_rank(len(value), [(len(v), v) for v in distinct], k, balance, "length-rank", g.rng)
    return chosen


def generalizations(g: Gen, node: str) -> list[Draft]:
    """Apply a revealed preference to new situations: one single-choice question per situation, whose
    options are all plausible and only one of which the preference picks (for an allergy: the one to
    avoid)."""
    persona = g.world.persona
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
                others = _preference_options(g, key, version.value, held, balance)
                if not others:
                    break
                options = [fill(text.option, {"value": v}) for v in [version.value, *others]]
                g.rng.shuffle(options)
                holding = [i for i, o in enumerate(options) if version.value in o]
                if len(holding) != 1:
                    continue
                correct = holding[0]
                letter = "ABCD"[correct]
                asked = g.when(g.world.messages[version.evidence[0]].timestamp, until)
                if asked is None:
                    continue
                drafts.append(
                    Draft(
                        "preference_generalization",
                        f"gen.{key}",
                        situation,
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
                    )
                )
    return drafts


# words that state a relationship (not only name the person): a relationship question cites one
RELATION_WORDS = {
    "en": {"social_circle.best_friend": ("best friend",), "social_circle.partner": ("partner",)},
    "zh": {
        "social_circle.best_friend": ("最好的朋友", "死党", "好朋友"),
        "social_circle.partner": ("对象", "另一半"),
    },
}


def _stating(g: Gen, key: str, name: str, before: datetime | None = None) -> str | None:
    """The first message that says `name` is the persona's `key` relation in words (the sibling's
    relation is its own attribute), sent before `before`."""
    words = RELATION_WORDS.get(g.lang, {}).get(key)
    if words is None:
        return None
    for session in g.world.sessions:
        for message in session.messages:
            if before is not None and message.timestamp > before:
                return None
            if (
                message.role in ("user", "assistant")
                and name in message.content
                and any(w in message.content.lower() for w in words)
            ):
                return message.id
    return None


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
    for key, (mode, label) in labels.items():
        attr = persona.attribute(key)
        if not attr.versions or not attr.versions[-1].evidence:
            continue
        name = attr.versions[-1].value
        stating = attr.versions[-1].evidence[0] if mode == "label_key" else _stating(g, key, name)
        if stating is None:
            continue
        quotes = [Quote(message_id=stating, text=name)]
        args = {"name_key": key, "name": name}
        answer = _relation(mode, label, relation_version, quotes, args)
        if answer is None:
            continue
        drafts.append(
            Draft(
                "relationship",
                "rel.who_is",
                g.say.question("rel.who_is", g.rng, name=name),
                answer,
                d.entity(answer),
                d.proof("relation", quotes, **args),
                final,
                1,
                node,
            )
        )
    # who did I travel with, and how are they related to me
    for fact in g.world.facts:
        if fact.kind != "trip" or fact.key != "companion":
            continue
        for key, (mode, label) in labels.items():
            version = persona.attribute(key).version_at(fact.when)
            if version is None or version.value != fact.value or not version.evidence:
                continue
            destination = fact.context.get("destination", "")
            dest_fact = next((f for f in g.world.by_session[fact.session_id] if f.key == "destination"), None)
            stating = version.evidence[0] if mode == "label_key" else _stating(g, key, fact.value)
            if stating is None:
                continue
            quotes = [
                Quote(message_id=fact.message_id, text=fact.value),
                Quote(message_id=stating, text=fact.value),
            ]
            args = {"name_key": key, "name": fact.value}
            answer = _relation(mode, label, relation_version, quotes, args)
            if answer is None:
                continue
            if dest_fact is not None:
                quotes.append(d.quote(dest_fact))
            drafts.append(
                Draft(
                    "relationship",
                    "rel.companion_relation",
                    g.say.question("rel.companion_relation", g.rng, destination=destination),
                    answer,
                    d.entity(answer),
                    d.proof("relation", quotes, **args),
                    final,
                    2,
                    node,
                )
            )
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


def abstentions(g: Gen, node: str) -> list[Draft]:
    persona = g.world.persona
    res = resources.get(g.lang)
    drafts: list[Draft] = []
    final = d.final_time(g.world)
    answer = g.say.answer("abstain")

    def unseen(candidates: list[str]) -> list[str]:
        return [c for c in candidates if not g.world.mentions(c)]

    for key in ("pets.pet_name", "social_circle.partner"):
        if not persona.attribute(key).versions:
            drafts.append(
                Draft(
                    "abstention",
                    f"abs.{key}",
                    g.say.question(f"abs.{key}", g.rng),
                    answer,
                    d.abstain(),
                    d.proof("absent", [], key=key, terms=""),
                    final,
                    1,
                    node,
                )
            )
    merchants = sorted({m for c in res.anchors.bill.categories.values() for m in c.merchants if "{" not in m})
    pools = res.pools
    sources = {
        "abs.merchant": ("merchant", merchants),
        "abs.destination": ("destination", [x.name for x in pools.destinations]),
        "abs.project": ("project", pools.lists["projects"]),
        "abs.person": (
            "person",
            sorted(set(pools.names.given_female + pools.names.given_male))
            if g.lang == "en"
            else [
                pools.names.format.format(family=f, given=n)
                for f in pools.names.family[:8]
                for n in pools.names.given_female[:6]
            ],
        ),
    }
    for generator, (slot, candidates) in sources.items():
        fresh = unseen(candidates)
        for value in g.rng.sample(fresh, min(6, len(fresh))):
            drafts.append(
                Draft(
                    "abstention",
                    generator,
                    g.say.question(generator, g.rng, **{slot: value}),
                    answer,
                    d.abstain(),
                    d.proof("absent", [], terms=value),
                    final,
                    1,
                    node,
                )
            )
    return drafts


def adversarials(g: Gen, node: str, atoms: list[Draft]) -> list[Draft]:
    persona = g.world.persona
    res = resources.get(g.lang)
    drafts: list[Draft] = []
    final = d.final_time(g.world)
    app = res.anchors.bill.app_name
    bills = [a for a in atoms if a.subtype == "bill.amount"]
    for atom in g.rng.sample(bills, min(12, len(bills))):
        fact = atom.fact
        merchant = fact.context["merchant"]
        true_day = fact.when.date()
        if g.rng.random() < 0.5:
            false_day = true_day + timedelta(days=g.rng.choice((-3, -2, -1, 1, 2, 3)))
            if _matching_system(g, app, merchant, false_day, false_day):
                continue
            slots = {
                "merchant": merchant,
                "false_date": g.day(false_day),
                "amount": fact.value,
                "date": g.day(true_day),
            }
            quotes = [
                Quote(message_id=fact.message_id, text=merchant, on=true_day),
                Quote(message_id=fact.message_id, text=fact.value),
            ]
            drafts.append(
                Draft(
                    "adversarial",
                    "adv.bill_date",
                    g.say.question("adv.bill_date", g.rng, **slots),
                    g.say.answer("adv.bill_date", **slots),
                    d.day_spec(true_day, aliases=[g.day(true_day)]),
                    d.proof(
                        "premise",
                        quotes,
                        base="date",
                        false=false_day.isoformat(),
                        check="no_record_on",
                        app=app,
                        needle=merchant,
                    ),
                    final,
                    2,
                    node,
                    sub=[atom],
                    queries=_queries(_event_query(g, fact, "verb")),
                )
            )
        else:
            true_amount = Decimal(fact.context["amount_value"])
            false_amount = (true_amount * Decimal(g.rng.choice(("1.5", "2", "0.5", "3")))).quantize(
                Decimal("0.01")
            )
            slots = {
                "merchant": merchant,
                "false_amount": fmt.format_money(false_amount, g.lang),
                "amount": fact.value,
                "date": g.day(true_day),
            }
            quotes = [
                Quote(message_id=fact.message_id, text=fact.value),
                Quote(message_id=fact.message_id, text=merchant, on=true_day),
            ]
            drafts.append(
                Draft(
                    "adversarial",
                    "adv.bill_amount",
                    g.say.question("adv.bill_amount", g.rng, **slots),
                    g.say.answer("adv.bill_amount", **slots),
                    d.number(true_amount, unit=fmt.CURRENCY[g.lang], aliases=[fact.value]),
                    d.proof(
                        "premise",
                        quotes,
                        base="value",
                        parse="money",
                        false=slots["false_amount"],
                        check="amount_differs",
                    ),
                    final,
                    2,
                    node,
                    sub=[atom],
                    queries=list(atom.queries),
                )
            )
    companions = [a for a in atoms if a.subtype == "rel.companion"]
    people = [persona.value_at(k, persona.end) for k in SOCIAL_NAMES] + [
        d2 for d2 in res.pools.names.given_female[:5]
    ]
    for atom in g.rng.sample(companions, min(6, len(companions))):
        fact = atom.fact
        sessions = {
            s.id
            for s in g.world.sessions
            if g.world.events[s.event_id].parent_id == g.world.events[fact.event_id].parent_id
        }
        texts = [m.content for s in sessions for m in g.world.sessions_by_id[s].messages]
        false = next((p for p in people if p and p != fact.value and not any(p in t for t in texts)), None)
        if false is None:
            continue
        slots = {
            "false_person": false,
            "destination": fact.context.get("destination", ""),
            "companion": fact.value,
        }
        drafts.append(
            Draft(
                "adversarial",
                "adv.companion",
                g.say.question("adv.companion", g.rng, **slots),
                g.say.answer("adv.companion", **slots),
                d.entity(fact.value),
                d.proof(
                    "premise",
                    [d.quote(fact)] + atom.proof.quotes[1:],
                    base="value",
                    false=false,
                    check="not_in_sessions",
                ),
                final,
                2,
                node,
                sub=[atom],
                queries=list(atom.queries),
            )
        )
    for key, generator, slot, answer_slot in (
        ("career.company", "adv.company", "false_company", "company"),
        ("home.city", "adv.city", "false_city", "city"),
    ):
        attr = persona.attribute(key)
        version = attr.versions[-1] if attr.versions else None
        if version is None or not version.evidence:
            continue
        held = {v.value for v in attr.versions}
        pool = (
            [c.name for c in res.pools.cities] if key == "home.city" else res.persona.attributes[key].values
        )
        false = next((v for v in g.rng.sample(pool, len(pool)) if v not in held), None)
        if false is None:
            continue
        slots = {slot: false, answer_slot: version.value}
        drafts.append(
            Draft(
                "adversarial",
                generator,
                g.say.question(generator, g.rng, **slots),
                g.say.answer(generator, **slots),
                d.entity(version.value),
                d.proof(
                    "premise",
                    [Quote(message_id=version.evidence[0], text=version.value)],
                    base="attribute",
                    key=key,
                    false=false,
                    check="never_value",
                ),
                final,
                2,
                node,
            )
        )
    return drafts


def life_changes(g: Gen, node: str) -> list[Draft]:
    persona = g.world.persona
    points: list[tuple[Quote, str]] = []
    for attr in persona.attributes():
        for index, version in enumerate(attr.versions):
            if (
                (index > 0 or version.valid_from > persona.start)
                and version.evidence
                and attr.key not in ("home.neighborhood", "pets.pet_species")
            ):
                shown = _attr_spec(attr.key, version.value, g.lang)[1]
                points.append((Quote(message_id=version.evidence[0], text=version.value), shown))
    points.sort(key=lambda p: g.world.messages[p[0].message_id].timestamp)
    if len(points) < 3:
        return []
    chosen = [q for q, _ in points[:6]]
    months = max(1, round((persona.end - persona.start).days / 30.4))
    items = [q.text or "" for q in chosen]
    return [
        Draft(
            "summarization",
            "sum.changes",
            g.say.question("sum.changes", g.rng, n=months),
            "; ".join(s for _, s in points[:6]),
            d.key_points(items),
            d.proof("key_points", chosen),
            d.final_time(g.world),
            len(items),
            node,
        )
    ]
