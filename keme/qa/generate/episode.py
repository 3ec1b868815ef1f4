"""Questions over an episode or a chapter: summaries, salient moments, bills of the period, counts
and totals of app records, the usual time of day.
"""

from __future__ import annotations

import random
from collections import Counter
from dataclasses import dataclass, replace
from datetime import date
from decimal import Decimal

from keme.days import block_of, clear_leader, quarters_within, steady_block
from keme.models import Attribute, Event, Persona, Query, Quote, Session
from keme.qa import draft as d
from keme.qa.draft import Draft
from keme.qa.facts import Fact
from keme.qa.generate.context import Gen
from keme.qa.phrasing import PointPhrase
from keme.text import lang as fmt
from keme.text import resources
from keme.text.normalize import norm_text

# The details an episode recap may name, most salient first (the outcome, who it was with, then the rest):
# each becomes a point only where the language phrases it as something that happened (`episode_point`)
SUMMARY_KEYS: dict[str, tuple[str, ...]] = {
    "trip": ("companion", "attraction", "local_food"),
    "work_project": ("project", "colleague", "deadline"),
    "health": ("clinic",),
    "fitness": (),
    "social": ("restaurant", "gift"),
    "shopping": ("product", "price"),
    "entertainment": (),
    "job_change": ("target_title",),
    "relocate": ("target_neighborhood",),
}


# Life changes by how big a reviewer would call them: a recap of the year names a new employer, city,
# partner or pet before a new phone or show, and a new usual lunch (which follows a diet) last
BIG_CHANGES = (
    "career.company",
    "home.city",
    "social_circle.partner",
    "pets.pet_name",
    "career.job_title",
    "diet.diet_type",
    "learning.current_course",
    "sport.main_sport",
    "tech.phone",
    "entertainment.favorite_show",
)


def life_change(persona: Persona, attr: Attribute, index: int) -> bool:
    """Whether version `index` of `attr` is a change a recap names: a value the persona changed to (not
    the one held from the start), said in the chats, and not a bare number ("4" is no key point)."""
    version = attr.versions[index]
    return (
        (index > 0 or version.valid_from > persona.start)
        and bool(version.evidence)
        and not version.value.replace(".", "").isdigit()
    )


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


@dataclass(frozen=True)
class Detail:
    """An episode recap's point: as said, the fact that quotes it, and whether it is said as happened."""

    text: str
    fact: Fact
    done: bool = False


def episode_point(g: Gen, kind: str, fact: Fact, facts: list[Fact]) -> Detail | None:
    """An episode recap's point about `fact`'s detail as a person says what happened ("went with Malik",
    "got the churn analysis done"): the phrase of what happened where the world records that it did
    (`_happened`), quoted by that message; the phrase every mention holds where the mention itself tells
    it (a colleague named is one the project was done with). None where the language has no phrase for
    the detail (a bare value is no summary) or the messages only plan, wish or ask."""
    phrase = g.say.text.points.get(f"{kind}.{fact.key}")
    if phrase is None:
        return None
    proof = _happened(g, phrase, fact, facts)
    if proof is not None:
        said = g.say.point(f"{kind}.{fact.key}", done=True, value=fact.value)
        return Detail(said, proof, True) if said else None
    said = g.say.point(f"{kind}.{fact.key}", value=fact.value)
    return Detail(said, fact) if said else None


def _happened(g: Gen, phrase: PointPhrase, fact: Fact, facts: list[Fact]) -> Fact | None:
    """The user's message that shows `fact`'s detail happened, by how the world records it: the value
    named in a session of a moment whose lines all tell it happened, the first such moment first (a trip's
    recap names the sight it went to, and says "we" of the companion more plainly than its days there),
    or said in a message holding a claim of a predicate that records it (`local_food_times`: the times
    the user ate the food there). None where the messages only plan, wish or ask."""
    named = [f for f in facts if f.key == fact.key and f.value == fact.value and said_as(g, f)]
    shown = next((f for m in phrase.moments for f in named if f.context.get("moment") == m), None)
    if shown is not None or not phrase.claims:
        return shown
    sessions = {f.session_id for f in facts}
    for claim in g.world.claims:
        message = g.world.messages.get(claim.message_id)
        if (
            claim.predicate in phrase.claims
            and claim.speaker == "user"
            and message is not None
            and fact.value in message.content
            and g.world.session_of[message.id] in sessions
        ):
            return replace(
                fact, message_id=message.id, session_id=g.world.session_of[message.id], when=message.timestamp
            )
    return None


def episode_details(g: Gen, kind: str, facts: list[Fact], topic: str) -> list[Detail]:
    """An episode recap's points, most salient first: each detail of SUMMARY_KEYS the user named, as
    `episode_point` phrases it. The subject the question names (`topic`) is a point only as the outcome
    the user reports ("got the churn analysis done"); said as it was planned it would only echo the
    question."""
    details: list[Detail] = []
    for key in SUMMARY_KEYS.get(kind, ()):
        fact = next((f for f in facts if f.key == key and said_as(g, f)), None)
        point = None if fact is None else episode_point(g, kind, fact, facts)
        if point is not None and (point.done or fact.value not in topic):
            details.append(point)
    return details


def said_as(g: Gen, fact: Fact) -> bool:
    """Whether the user's message says `fact`'s value as that detail of the episode (the ledger holds a
    user claim of the detail there): "Isaac remembered something I said" names the companion as the best
    friend, and tells nothing of who went on the trip."""
    message = g.world.messages[fact.message_id]
    return message.role == "user" and any(
        (claim := g.world.claims_by_id.get(c)) is not None
        and claim.speaker == "user"
        and claim.predicate == fact.key
        for c in message.claims
    )


def balanced_wrong(
    by_key: dict[str, list[str]], keys: list[str], rng: random.Random, k: int = 3
) -> list[str]:
    """Up to `k` wrong options for a recap, one of each kind its points are first (a colleague beside the
    colleague, a date beside the deadline), then any: with only one person among the options, "who was on
    it" needs no memory."""
    pools = {key: rng.sample(values, len(values)) for key, values in by_key.items()}
    picked = [pools[key].pop() for key in dict.fromkeys(keys) if pools.get(key)]
    rest = [v for key in sorted(pools) for v in pools[key]]
    picked += rng.sample(rest, max(0, min(k - len(picked), len(rest))))
    return picked[:k]


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
    where = {s: params[s] for s in topic_slots if params.get(s)}  # the episode the question names
    details = episode_details(g, kind, facts, topic)
    points = [p.fact for p in details]
    last = max(f.when for f in [*facts, *points])
    if len(points) >= 2:
        asked = g.when(last)
        if asked is not None:
            items = [p.text for p in details]
            values = [f.value for f in points]
            # another episode's details, said the way this recap says each (a wish beside a wish)
            done = {p.fact.key: p.done for p in details}
            by_key: dict[str, list[str]] = {}
            for f in g.world.facts:
                # another episode's outcome names its own subject: no wrong option, a give-away
                if f.kind == kind and f.key in done and f.key not in topic_slots and f.value not in values:
                    text = g.say.point(f"{kind}.{f.key}", done=done[f.key], value=f.value) or f.value
                    if text not in by_key.setdefault(f.key, []):
                        by_key[f.key].append(text)
            others = balanced_wrong(by_key, [p.fact.key for p in details], g.rng)
            # what did not happen to this very subject (returned it, got it shelved) goes first: beside
            # "bought the iPad Air" it leaves no option decided by naming the question's subject
            unhappened = [
                text
                for p in details
                if p.done
                for text in g.say.not_done(f"{kind}.{p.fact.key}", value=p.fact.value)
            ]
            others = [*g.rng.sample(unhappened, len(unhappened)), *others]
            drafts.append(
                Draft(
                    "summarization",
                    "sum.episode",
                    g.say.question("sum.episode", g.rng, topic=topic),
                    "; ".join(items),
                    d.key_points(items).model_copy(update={"cover": cover_of(len(items))}),
                    d.proof("key_points", [d.quote(f) for f in points]),
                    asked,
                    len(points),
                    episode.id,
                    distractors=others,
                    queries=[
                        Query(subject="event", target="*", where=where, aggregate="covers", expect=values)
                    ],
                )
            )
    firsts = sorted({s.id: s for s in sessions}.values(), key=lambda s: s.start)
    anchor_facts = [
        next((f for f in g.world.by_session[s.id] if f.kind == kind), None) for s in (firsts[0], firsts[-1])
    ]
    # how long she weighed a purchase: from its first mention to the session she bought it in, when that is
    # the last one ("how many days between the first and the last time I talked to you about X" asks of the
    # chat log, and no one does)
    bought = kind == "shopping" and any(
        f.context.get("moment") == "purchase_done"
        for f in g.world.by_session[firsts[-1].id]
        if f.kind == kind
    )
    if (
        bought
        and len(firsts) >= 2
        and all(anchor_facts)
        and anchor_facts[0].when.date() != anchor_facts[1].when.date()
    ):
        first, second = anchor_facts
        asked = g.when(second.when)
        if asked is not None:
            days = (second.when.date() - first.when.date()).days
            drafts.append(
                Draft(
                    "temporal_reasoning",
                    "tmp.purchase_span",
                    g.say.question("tmp.purchase_span", g.rng, product=params.get("product", "")),
                    g.say.answer("days", n=days),
                    d.number(days, unit="days"),
                    d.proof("days_between", [d.dated(first), d.dated(second)]),
                    asked,
                    2,
                    episode.id,
                    queries=[
                        Query(
                            subject="event",
                            target="said_on",
                            where=where,
                            aggregate="span",
                            expect=[str(days)],
                        )
                    ],
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
    drafts += _month_recap(g, chapter, month)
    bills = _bills(g, start, end)
    # the category that shows up most (implicit preference)
    counts = Counter(ctx["category"] for _, ctx in bills)
    label = clear_leader(counts)
    if label is not None:
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
                queries=[by_records("expense_category", start, end, "mode", label)],
            )
        )
    drafts += record_totals(g, start, end, chapter.id, month)
    drafts += _paid_in(g, start, end, chapter.id, month)
    drafts += _time_of_day(g, start, end, chapter.id, "imp.time_of_day.month", month=month)
    return drafts


PAID_IN = (2, 6)  # merchants a month's "who did I pay" lists: one is no list, seven no one reads through


def _paid_in(g: Gen, start: date, end: date, node: str, period: str) -> list[Draft]:
    """Who she paid in a month, as the Wallet shows it ("I'm going over my March spending: who did I pay?"):
    every merchant of the period's payment records, quoted by their records. Its wrong options are
    merchants she paid in other months and not in this one, by the time it is asked (her own, never a
    made-up one): only the month's records tell them apart."""
    bills = _bills(g, start, end)
    merchants = list(dict.fromkeys(ctx["merchant"] for _, ctx in bills))
    if not PAID_IN[0] <= len(merchants) <= PAID_IN[1]:
        return []
    final = d.final_time(g.world)
    app = resources.get(g.lang).anchors.bill.app_name
    quotes = [
        Quote(message_id=m, text=merchant)
        for merchant in merchants
        for m in _matching_system(g, app, merchant, start, end)[:1]
    ]
    if len(quotes) != len(merchants):  # a merchant whose record does not name it: not quoted, not asked
        return []
    elsewhere = [
        ctx["merchant"]
        for fact, ctx in _bills(g, g.world.persona.start.date(), final.date())
        if not start <= fact.when.date() <= end and fact.when <= final
    ]
    wrong = [m for m in dict.fromkeys(elsewhere) if m not in merchants]
    return [
        Draft(
            "multi_hop",
            "mh.paid_month",
            g.say.question("mh.paid_month", g.rng, month=period),
            fmt.join_list(merchants, g.lang),
            d.set_spec(merchants),
            d.proof("key_points", quotes),
            final,
            len(merchants),
            node,
            distractors=g.rng.sample(wrong, len(wrong)),
            queries=[
                Query(
                    subject="anchor",
                    target="merchant",
                    source="app",
                    start=start,
                    end=end,
                    aggregate="values",
                    expect=merchants,
                )
            ],
        )
    ]


def _retold(g: Gen, bill: Fact) -> bool:
    """Whether the user told the payment as not her own spending ("这笔别记成话费宽带，实际上是替同事带的",
    "we went halves"): the app's category total and the total she would give differ, and a total over it
    has two answers."""
    session = g.world.session_of[bill.message_id]
    return any(
        c.predicate == "purpose" and c.value != "own" and g.world.session_of.get(c.message_id) == session
        for c in g.world.claims
    )


def record_totals(g: Gen, start: date, end: date, node: str, period: str) -> list[Draft]:
    """Counts and totals over a period's payments, as the Wallet app shows them: how often a merchant paid
    twice or more was paid, what a category with several payments came to ("how many times did I pay
    Blue Bottle in January-March?"). The period's name fills the questions' {month} slot."""
    drafts: list[Draft] = []
    final = d.final_time(g.world)
    bills = _bills(g, start, end)
    counts = Counter(ctx["category"] for _, ctx in bills)
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
                    g.say.question("mh.count_merchant", g.rng, merchant=merchant, month=period),
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
                    node,
                    queries=[by_records("merchant", start, end, "count", str(count), merchant=merchant)],
                )
            )
    for label, count in counts.items():
        if count < 2 or any(_retold(g, f) for f, ctx in bills if ctx["category"] == label):
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
                g.say.question("mh.total_category", g.rng, category=label, month=period),
                fmt.format_money(total, g.lang),
                d.number(total, unit=fmt.CURRENCY[g.lang], aliases=[fmt.format_money(total, g.lang)]),
                d.proof(
                    "sum_where", quotes, app=app, needle=label, start=start.isoformat(), end=end.isoformat()
                ),
                final,
                count,
                node,
                queries=[by_records("amount", start, end, "sum", str(total), expense_category=label)],
            )
        )
    return drafts


def quarter_totals(g: Gen, node: str) -> list[Draft]:
    """`record_totals` over each calendar quarter of the trajectory (over the whole of it where it spans
    more than a month and no quarter fits, as March-May does): a regular place paid a dozen times a
    quarter is counted where a month holds one or two visits."""
    start, end = g.world.persona.start.date(), g.world.persona.end.date()
    periods = quarters_within(start, end) or ([(start, end)] if (end - start).days > 40 else [])
    return [
        draft
        for first, last in periods
        for draft in record_totals(g, first, last, node, g.period(first, last))
    ]


# What a person dates a month by, most salient first: a life change, their health, a family or friend's
# occasion, a trip, a work milestone. Every other episode (a recipe, a purchase, a show, a lesson, a chat
# about the budget) is a detail a recap leaves out, and so are the minor changes (a new phone, a new show).
RECAP_CHANGES = tuple(k for k in BIG_CHANGES if k not in ("tech.phone", "entertainment.favorite_show"))
RECAP_EPISODES = ("health", "social", "trip", "work_project")
RECAP_SLOT = {"health": "symptom", "social": "person", "trip": "destination", "work_project": "project"}
RECAP_POINTS = 5


@dataclass(frozen=True)
class Point:
    """A recap's key point: how salient it is (lower first), the fact it is quoted by, as a person says it."""

    rank: int
    fact: Fact
    text: str


def recap_points(g: Gen, chapter: Event) -> list[Point]:
    """`chapter_points`, found once per chapter (kept in `g.recaps`)."""
    if chapter.id not in g.recaps:
        g.recaps[chapter.id] = chapter_points(g, chapter)
    return g.recaps[chapter.id]


def chapter_points(g: Gen, chapter: Event) -> list[Point]:
    """Every key point a recap of the chapter may have, most salient first: the life changes said in it,
    then its health episodes, friends' and family's occasions, trips and work projects, each phrased at
    the level a person summarizes ("moved to Denver", "Noah's housewarming") and quoted by the fact its
    phrase names, said by the user or an app (never the assistant alone)."""
    start, end = chapter.start.date(), chapter.end.date()
    persona = g.world.persona
    points: list[Point] = []
    for fact in g.world.facts:
        if (
            fact.kind == "attr"
            and fact.key in RECAP_CHANGES
            and start <= fact.when.date() <= end
            and life_change(persona, persona.attribute(fact.key), fact.version)
            and persona.attribute(fact.key).versions[fact.version].evidence[0] == fact.message_id
        ):
            text = g.say.point(f"attr.{fact.key}", value=fact.value)
            if text and fact.value in text:
                points.append(Point(RECAP_CHANGES.index(fact.key), fact, text))
    for episode in [e for e in g.world.graph.events if e.parent_id == chapter.id]:
        kind = episode.params.get("_episode", episode.change or episode.kind)
        if kind not in RECAP_EPISODES:
            continue
        slot = RECAP_SLOT[kind]
        sessions = {
            e.session_id
            for e in g.world.graph.events
            if e.session_id and (e.id == episode.id or e.parent_id == episode.id)
        }
        fact = next(
            (
                f
                for s in sorted(sessions)
                for f in g.world.by_session[s]
                if f.kind == kind and f.key == slot and not g.by_assistant(f)
            ),
            None,
        )
        params = {k: v for k, v in episode.params.items() if not k.startswith("_")}
        text = g.say.point(kind, **params) if fact is not None else None
        if fact is not None and text and fact.value in text:
            points.append(Point(len(RECAP_CHANGES) + RECAP_EPISODES.index(kind), fact, text))
    ranked = sorted(points, key=lambda p: (p.rank, p.fact.when))
    distinct: list[Point] = []
    for point in ranked:
        if all(point.fact.value != p.fact.value and point.text != p.text for p in distinct):
            distinct.append(point)
    return distinct


def cover_of(points: int) -> int:
    """How many of a recap's points a good answer covers: two thirds of them, rounded up."""
    return -(-2 * points // 3)


def _month_recap(g: Gen, chapter: Event, month: str) -> list[Draft]:
    """A month's recap whose key points are its most salient episodes, told in time order: a hospital
    visit outranks any salad recipe, which never becomes a point."""
    start, end = chapter.start.date(), chapter.end.date()
    chosen = recap_points(g, chapter)[:RECAP_POINTS]
    if len(chosen) < 3:
        return []
    chosen.sort(key=lambda p: p.fact.when)
    items = [p.text for p in chosen]
    spec = d.key_points(items).model_copy(update={"cover": cover_of(len(items))})
    return [
        Draft(
            "summarization",
            "sum.month",
            g.say.question("sum.month", g.rng, month=month),
            "; ".join(items),
            spec,
            d.proof("key_points", [d.quote(p.fact) for p in chosen]),
            d.final_time(g.world),
            len(items),
            chapter.id,
            queries=[
                Query(
                    subject="any",
                    target="*",
                    start=start,
                    end=end,
                    aggregate="covers",
                    expect=[p.fact.value for p in chosen],
                )
            ],
            distractors=other_months_points(g, chapter),
        )
    ]


def other_months_points(g: Gen, chapter: Event) -> list[str]:
    """Wrong options for a month's recap asked as multiple choice: the key points of her other months in
    random order, phrased as its own are, whose thing is never named in this month's chats (a project that
    ran on into it is no wrong option): something that happened to her, just not then."""
    start, end = chapter.start.date(), chapter.end.date()
    said = " ".join(
        norm_text(m.content) for s in g.world.sessions if start <= s.start.date() <= end for m in s.messages
    )
    points = [
        point.text
        for other in g.world.graph.events
        if other.depth == 0 and other.id != chapter.id
        for point in recap_points(g, other)
        if norm_text(point.fact.value) not in said
    ]
    # in random order: in month order, January's trip was a wrong option of every other month's recap, and
    # a reader who skips an option seen wrong before got them right without memory
    return g.rng.sample(points, len(points))


def by_records(target: str, start: date, end: date, aggregate: str, expect: str, **where: str) -> Query:
    """A question over the app's records of a period ("by my bill records"): a count, a total, a majority."""
    return Query(
        subject="anchor",
        target=target,
        where=where,
        source="app",
        start=start,
        end=end,
        aggregate=aggregate,
        expect=[expect],
    )


def _matching_system(g: Gen, app: str, needle: str, start: date, end: date) -> list[str]:
    return [
        m.id
        for s in g.world.sessions
        for m in s.messages
        if m.role == "system" and m.app == app and start <= m.timestamp.date() <= end and needle in m.content
    ]


def _time_of_day(g: Gen, start: date, end: date, node: str, generator: str, **slots: str) -> list[Draft]:
    # the sessions the user opened herself (one an app's notification opened keeps the app's time)
    period = [s for s in g.world.sessions if start <= s.start.date() <= end]
    chats = [m for s in period if (m := s.opened_by_user) is not None]
    usual = steady_block([m.timestamp for m in chats], [s.start for s in period])
    if usual is None:
        return []
    block = str(usual)
    chosen = [m for m in chats if block_of(m.timestamp) == block]
    sample = g.rng.sample(chosen, min(8, len(chosen)))
    quotes = [
        Quote(message_id=m.id, on=m.timestamp.date()) for m in sorted(sample, key=lambda m: m.timestamp)
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
            queries=[
                Query(
                    subject="any",
                    target="session_start",
                    start=start,
                    end=end,
                    aggregate="sessions",
                    expect=[block],
                )
            ],
        )
    ]
