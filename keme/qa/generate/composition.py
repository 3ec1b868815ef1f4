"""Questions composed from leaf atoms: two atoms (sums, days between, order) or one atom asked
another way (its date, how long ago, the attribute at that time).
"""

from __future__ import annotations

import re
from datetime import datetime, timedelta
from decimal import Decimal

from keme.models import APP_TYPES, Query, Quote
from keme.models.attributes import claim_predicate
from keme.qa import draft as d
from keme.qa.draft import Draft
from keme.qa.facts import Fact
from keme.qa.generate.atoms import _attr_distractors, _attr_spec, _qualifiers, _queries, pays_account, settled
from keme.qa.generate.context import Gen
from keme.text import lang as fmt
from keme.text.normalize import norm_text

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
# what a person dates life by (a trip, an illness, friends' occasions, a project at work, a big purchase):
# which of two came first is asked with one of these, or of two records of one occasion, never of two
# unrelated receipts
LIFE_KINDS = frozenset({"trip", "shopping", "health", "social", "work_project"})


# ================================================================ composition (internal nodes)
# The kinds whose phrase is talking about something ("talk to you about my trip"), which one does on
# several days: "when did I first ...". The others name an act done once (paying ¥31.98 at a merchant,
# adding a to-do): "the first time I paid ¥31.98" would say there were several payments.
TALKED_ABOUT = frozenset({"trip", "shopping", "health", "social", "cooking", "work_project", "entertainment"})


# What a person dates life by: a trip, an illness, a friend's or family occasion, a project at work. A
# question about the rest of life at such a time is one a person asks ("which gym was I going to when I
# went to Lisbon?"); one anchored on a receipt ("... when I paid $14.74 at Shell?") is not.
LANDMARK_KINDS = frozenset({"trip", "health", "social", "work_project"})
ATTRIBUTES_PER_LANDMARK = 2  # attribute-at-the-time questions one landmark may anchor
LANDMARK_GAP = 7  # days between two occasions asked about in one order question, the first's end to the next


def event_kind(g: Gen, fact: Fact, with_amount: bool = False) -> str:
    """The phrase family of a fact: a bill to an account or for a fee is phrased as a payment to it
    (`bill_account`: "the $22.77 Max bill"), any other bill as a payment at a place; either with its amount
    only where the persona paid there more than once (`bill_once`, `bill_account_once` name it alone)."""
    if fact.kind != "bill":
        return fact.kind
    account = pays_account(fact, g.lang)
    once = g.world.bills_at[fact.context.get("merchant", "")] == 1
    if account and once and not with_amount and "bill_account_once" in g.say.text.events:
        return "bill_account_once"
    if account and "bill_account" in g.say.text.events:
        return "bill_account"
    if once and not with_amount and "bill_once" in g.say.text.events:
        return "bill_once"
    return "bill"


# the records apps make (APP_TYPES): two of them are related only by the episode they were grounded in,
# which for an errand or a family call holds whatever the day's notifications were (a fuel charge, a memo)
APP_KINDS = frozenset(APP_TYPES)


def related(g: Gen, first: Fact, second: Fact) -> bool:
    """Whether the days between two facts mean something to the persona: both talked about, of one occasion
    of her life (booking a trip and coming back, a symptom and the clinic visit), or payments at the same
    merchant. An app record grounded in an episode is no part of it: days between a sore throat and a
    packing note is arithmetic nobody asks for."""
    if first.kind == "bill" and second.kind == "bill":
        return first.context.get("merchant") == second.context.get("merchant")
    return not {first.kind, second.kind} & APP_KINDS and _one_occasion(g, first, second)


def _one_occasion(g: Gen, first: Fact, second: Fact) -> bool:
    """Two facts of one episode that is an occasion of the persona's life, not the errands app records
    are grounded in when nothing else holds them (a W-2 saved and a plant-care memo)."""
    a, b = g.world.events.get(first.event_id), g.world.events.get(second.event_id)
    if a is None or b is None or g.world.episode_of(a).id != g.world.episode_of(b).id:
        return False
    return g.world.episode_kind(a) != "errand"


def _event_phrase(g: Gen, fact: Fact, form: str, with_amount: bool = False) -> str | None:
    """The event's phrase; None for a fact only the assistant stated ("when did I first talk to you about
    《三体》" when the assistant recommended it). `with_amount`: a payment is named with its amount even
    where its merchant tells it apart (a question whose premise is that amount)."""
    if fact.kind not in EVENT_KINDS or g.by_assistant(fact):
        return None
    slots = dict(fact.context)
    phrase = g.say.event(event_kind(g, fact, with_amount), form, **slots)
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
    phrases = g.say.text.events.get(event_kind(g, fact))
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


def compose_pairs(g: Gen, node: str, sample: list[Draft], limit: int, orders: bool = False) -> list[Draft]:
    """Temporal and multi-hop questions from pairs of child questions about different sessions; "which
    came first" only with `orders`, of `landmarks` (occasions whose days do not overlap)."""
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
        choice = 1.0 if orders else g.rng.random()
        # two payments of one kind of spending (two dinners out), as she tallies it: two unrelated charges
        # added up is a sum no one asks for
        category = first.fact.context.get("category", "")
        tallied = category and category == second.fact.context.get("category")
        if first.subtype == "bill.amount" and second.subtype == "bill.amount" and choice < 0.5 and tallied:
            total = Decimal(first.spec.value) + Decimal(second.spec.value)
            slots = {
                "category": category if g.lang == "zh" else category.lower(),
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
                    queries=first.queries + second.queries,  # a sum is unique when its parts are
                )
            )
        elif choice < 0.75:
            if not related(g, first.fact, second.fact):
                continue
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
        elif orders:
            kinds = {first.fact.kind, second.fact.kind}
            if kinds & APP_KINDS or not (kinds & LIFE_KINDS or _one_occasion(g, first.fact, second.fact)):
                continue  # never of an app's record: a life dated by a Spotify charge or a to-do is no life
            shown = [first, second]
            g.rng.shuffle(shown)
            nouns = [_event_phrase(g, x.fact, "noun") for x in shown]
            if None in nouns or nouns[0] == nouns[1]:
                continue
            later = g.rng.random() < 0.5  # asked both ways: the earlier record's kind is no tell
            key = "tmp.order_later" if later else "tmp.order"
            question = g.say.question(key, g.rng, event1=nouns[0], event2=nouns[1])
            letter = "A" if shown[0] is (second if later else first) else "B"
            quotes = [Quote(message_id=x.fact.message_id, text=x.fact.value) for x in shown]
            drafts.append(
                Draft(
                    "temporal_reasoning",
                    "tmp.order",
                    question,
                    f"{letter}. {nouns[0 if letter == 'A' else 1]}",
                    d.choice(letter, nouns[0 if letter == "A" else 1]),
                    d.proof("order", quotes, **({"later": True} if later else {})),
                    asked,
                    2,
                    node,
                    sub=[first, second],
                    queries=_queries(  # an occasion talked of on several days is dated by its first
                        _event_query(g, first.fact, "noun", pick="first"),
                        _event_query(g, second.fact, "noun", pick="first"),
                    ),
                    options=list(nouns),
                    format="single_choice",
                )
            )
    return drafts


def landmarks(g: Gen, atoms: list[Draft]) -> list[Draft]:
    """One question per occasion of her life (a trip, an illness, a friend's party, a project), the one
    asked of the day it was first talked of, each occasion's days (from its first mention to its last,
    anywhere in her chats) at least LANDMARK_GAP days from the next one's: "which came first, my trip to
    Lisbon or my bout of flu?" is asked of things a person dates life by, and has one answer only where
    the two did not overlap."""
    said: dict[tuple[str, str], list[datetime]] = {}
    for f in g.world.facts:
        said.setdefault((f.kind, f.value), []).append(f.when)
    spans: dict[tuple[str, str], tuple[Draft, datetime, datetime]] = {}
    for atom in atoms:
        fact = atom.fact
        if fact is None or fact.kind not in LIFE_KINDS or g.by_assistant(fact):
            continue
        days = said.get((fact.kind, fact.value), [fact.when])
        if fact.when.date() == min(days).date() and (fact.kind, fact.value) not in spans:
            spans[(fact.kind, fact.value)] = (atom, min(days), max(days))
    kept: list[Draft] = []
    until: datetime | None = None
    for first, start, end in sorted(spans.values(), key=lambda x: x[1]):
        if until is None or start >= until:
            kept.append(first)
            until = end + timedelta(days=LANDMARK_GAP)
    return kept


def compose_single(g: Gen, node: str, sample: list[Draft], limit: int) -> list[Draft]:
    """Date-of, days-ago and attribute-at-the-time questions built on one child question."""
    drafts: list[Draft] = []
    persona = g.world.persona
    changing = [
        a
        for a in persona.attributes()
        if len(a.versions) >= 2 and all(v.evidence for v in a.versions) and a.key.startswith(DATED_BY)
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
        if first and (atom.fact.when.date() != min(days) or atom.fact.kind not in TALKED_ABOUT):
            verb = None
        suffix = "_first" if first else ""
        pick = "first" if first else "all"
        # a trip, an illness or an occasion is mostly asked about as a time of life ("where was I working
        # when I went to Lisbon?"): the only multi-hop anchor left once receipts are not
        landmark = bool(changing) and atom.fact.kind in LANDMARK_KINDS and roll < 0.75
        # a date more often than a count of days: people ask when, seldom how long ago (SUBTYPE_CAP too)
        if verb and not landmark and roll < 0.5:
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
        elif verb and not landmark and roll < 0.6:
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
        elif changing and atom.fact.kind in LANDMARK_KINDS:  # landmark, or a roll past the dates
            when = _event_phrase(g, atom.fact, "when")
            if not when or (first and atom.fact.when.date() != min(days)):
                continue  # a trip talked about on several days is dated by its first mention
            if atom.fact.kind == "health":
                continue  # "where did I live when I had a runny nose?": a symptom dates no time of life
            # a time of life is asked about more than one way ("where was I working / living then?")
            fitting = [a for a in changing if _dated_by(a.key, atom.fact.kind)]
            for attr in g.rng.sample(fitting, min(ATTRIBUTES_PER_LANDMARK, len(fitting))):
                draft = _attr_at_event(g, node, atom, attr, when, pick)
                if draft is not None:
                    drafts.append(draft)
    return drafts


# What a person dates a time of life by and asks of one ("where was I working when I went to Lisbon?"): where
# she lived, worked, who she was with, her pet, what she was learning or playing. A routine (her usual
# lunch, workouts a week, a savings goal) tied to an unrelated trip or project is no question anyone asks.
TIMES_OF_LIFE = ("home.", "career.", "social_circle.", "pets.", "learning.", "sport.main_sport", "tech.phone")
# and what goes with a landmark of its own kind: her budget or her diet on a trip or at a party
PAIRED = {"finance.": frozenset({"trip"}), "diet.": frozenset({"trip", "social"})}
DATED_BY = TIMES_OF_LIFE + tuple(PAIRED)


def _dated_by(key: str, kind: str) -> bool:
    """Whether a landmark of `kind` dates the attribute `key` as a person would ask it."""
    return key.startswith(TIMES_OF_LIFE) or any(key.startswith(p) and kind in k for p, k in PAIRED.items())


def _said_when_otherwise(g: Gen, landmark: str, attr, value: str) -> bool:
    """Whether the user names the landmark (a symptom, a destination, a friend's occasion), or its head
    word, on a day the attribute held another value: "where did I live when my knee hurt?" has two
    answers once the knee hurts again after the move (「膝盖又难受了」 says no 膝盖疼)."""
    needle = _head(norm_text(landmark), g.lang)
    for when, text in g.world.user_lines:
        if needle in text:
            then = attr.version_at(when)
            if then is not None and then.value != value:
                return True
    return False


def _head(text: str, lang: str) -> str:
    """What a landmark is also called by: in Chinese its first two characters (膝盖 of 膝盖疼), in English
    its longest word (throat of a sore throat)."""
    if lang == "zh":
        return text[:2] if len(text) >= 3 else text
    words = re.findall(r"[a-z]{4,}", text)
    return max(words, key=len) if words else text


def _attr_at_event(g: Gen, node: str, atom: Draft, attr, when: str, pick: str) -> Draft | None:
    """The attribute's value at a landmark ("Which company was I working for when I went to Lisbon?"), as
    the chats had told it by then."""
    assert atom.fact is not None
    version = attr.version_at(atom.fact.when)
    forms = g.say.text.attributes[attr.key].at_event
    if version is None or not forms or not settled(g, attr.key, atom.fact.when):
        return None
    if _said_when_otherwise(g, atom.fact.value, attr, version.value):
        return None  # the knee that hurt in March hurt again in June, after the move
    asked = d.final_time(g.world)
    now = attr.version_at(asked)
    if now is None or now.value == version.value:
        return None  # still so when asked: "where did I live during the report?" of where she lives
    evidence = next(
        (m for m in version.evidence if g.world.messages[m].timestamp <= atom.fact.when),
        None,
    )  # said by then: the value at the event is what the chats had told of it
    if evidence is None:
        return None
    spec, answer = _attr_spec(attr.key, version.value, g.lang)
    quotes = _event_quotes(g, atom) + [Quote(message_id=evidence, text=version.value)]
    return Draft(
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
            _event_query(g, atom.fact, "when", pick=pick),
            Query(
                subject="persona",
                target=claim_predicate(attr.key),
                at=atom.fact.when,
                expect=[version.value],
            ),
        ),
        distractors=_attr_distractors(attr.key, version.value, g.lang),
    )
