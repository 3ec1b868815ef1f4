"""Visual reasoning questions: details on one screenshot, and statistics across screenshots.

Gold values are the text read back from the rendered page (the image record's
`facts`), never the screen's input data. A detail question is only asked when
its answer is written in no text message: the screenshot is the only source.
"""

from __future__ import annotations

import re
from collections import Counter, defaultdict
from dataclasses import dataclass
from datetime import date, timedelta
from decimal import Decimal

from keme.days import add_months
from keme.models import ImageRecord, Query, Quote
from keme.omni import scenes
from keme.qa import draft as d
from keme.qa.draft import Draft
from keme.text import lang as fmt
from keme.text.dates import parse_display_date
from keme.text.fill import fill
from keme.text.normalize import numbers_in, parse_money

VISUAL = "visual_reasoning"


@dataclass(frozen=True)
class Ask:
    key: str  # question phrasing key
    fact: str  # data-fact name on the page
    parse: str  # text | money | int | date | lines
    needs: tuple[str, ...] = ()  # `about` slots the phrasing uses, which must be non-empty


ASKS: dict[str, tuple[Ask, ...]] = {
    "train_ticket": (
        Ask("vis.train.seat", "seat", "text", ("destination", "trip_date")),
        Ask("vis.train.car", "car", "text", ("destination",)),
        Ask("vis.train.number", "train_no", "text", ("destination",)),
        Ask("vis.train.depart", "depart", "text", ("trip_date",)),
        Ask("vis.train.gate", "gate", "text", ("destination",)),
        Ask("vis.train.price", "price", "money", ("destination",)),
    ),
    "shopping_order": (
        Ask("vis.order.delivery", "delivery", "date", ("product",)),
        Ask("vis.order.total", "total", "money", ("product",)),
        Ask("vis.order.store", "store", "text", ("product",)),
        Ask("vis.order.extra", "item-1", "text", ("product",)),
    ),
    "payment_transfer": (Ask("vis.transfer.amount", "amount", "money", ("person",)),),
    "music_player": (
        Ask("vis.music.track", "track", "text"),
        Ask("vis.music.artist", "artist", "text"),
        Ask("vis.music.playlist", "playlist", "text"),
    ),
    "video_page": (
        Ask("vis.video.channel", "channel", "text"),
        Ask("vis.video.duration", "duration", "text"),
    ),
    "ebook_page": (
        Ask("vis.ebook.book", "book", "text"),
        Ask("vis.ebook.author", "author", "text"),
        Ask("vis.ebook.chapter", "chapter", "text"),
    ),
    "social_post": (
        Ask("vis.post.likes", "likes", "int", ("place",)),
        Ask("vis.post.comments", "comments_count", "int", ("place",)),
    ),
    "bill": (Ask("vis.bill.txn", "transaction_id", "text", ("merchant", "date")),),
    "note": (
        Ask("vis.note.count", "", "lines", ("title",)),
        Ask("vis.note.first", "line-0", "text", ("title",)),
    ),
}
SUMS = {
    "bill": ("vis.sum.bill", "amount", "month"),
    "payment_transfer": ("vis.sum.transfer", "amount", "all"),
}


def _spec_and_answer(text: str, parse: str, lang: str, sent) -> tuple | None:
    if parse == "money":
        value = parse_money(text)
        return (
            None
            if value is None
            else (d.number(value, unit=fmt.CURRENCY[lang], aliases=[text.lstrip("-")]), text.lstrip("-"))
        )
    if parse == "int":
        numbers = numbers_in(text)
        return None if not numbers else (d.number(int(numbers[0]), aliases=[text]), text)
    if parse == "date":
        day = parse_display_date(text, sent)
        return (
            None
            if day is None
            else (d.day_spec(day, aliases=[fmt.format_date(day, lang)]), fmt.format_date(day, lang))
        )
    return d.entity(text), text


def _details(g, record: ImageRecord, message) -> list[tuple[str, Draft]]:
    """(question text, draft) for every detail of one screenshot that only the screenshot states."""
    world, lang = g.world, g.lang
    slots = dict(record.about) | {"day": g.day(message.timestamp)}
    asks = [(ask, slots) for ask in ASKS.get(record.template, ())]
    if record.template.startswith("chat_") and record.about.get("topic"):
        asks.append(
            (
                Ask(f"vis.chat.{record.about['topic']}", record.about["value_fact"], "contains", ("person",)),
                slots,
            )
        )
    if record.template == "calendar":
        anchored = record.about.get("anchored", "")
        for i in range(len(record.screen.get("events", []))):
            title = record.facts.get(f"event-{i}-title", "")
            if title and title != anchored:
                at = slots | {"time": record.facts.get(f"event-{i}-time", ""), "title": title}
                asks += [
                    (Ask("vis.cal.title", f"event-{i}-title", "text", ("date", "time")), at),
                    (Ask("vis.cal.location", f"event-{i}-location", "text", ("date", "title")), at),
                ]
    out = []
    for ask, slots in asks:
        if any(not slots.get(n) for n in ask.needs):
            continue
        if ask.parse == "lines":
            lines = [v for k, v in record.facts.items() if k.startswith("line-")]
            if not lines or any(world.mentions(line) for line in lines):
                continue
            spec, answer, args = d.number(len(lines)), str(len(lines)), {"parse": "lines"}
        elif ask.parse == "contains":
            line, value = record.facts.get(ask.fact, ""), record.about.get("value", "")
            if not value or value not in line or world.mentions(value):
                continue
            spec, answer, args = (
                d.entity(value),
                value,
                {"fact": ask.fact, "parse": "text", "contains": value},
            )
        else:
            text = record.facts.get(ask.fact, "")
            if (
                not text
                or (ask.parse in ("text", "date") and world.mentions(text))
                or (ask.parse == "money" and world.mentions(text.lstrip("-")))
            ):
                continue
            made = _spec_and_answer(text, ask.parse, lang, message.timestamp)
            if made is None:
                continue
            spec, answer = made
            args = {"fact": ask.fact, "parse": ask.parse}
        asked = g.when(message.timestamp)
        if asked is None:
            continue
        question = g.say.question(ask.key, g.rng, **slots)
        other = _other_answer(g, record, ask, question, slots, answer, asked)
        page = _page_query(g, record, ask, question, slots, message)
        queries = [AMBIGUOUS] if page is None and other is not None else [] if page is None else [page]
        proof = d.proof("image_fact", [Quote(message_id=message.id)], image=record.id, **args)
        out.append(
            (
                question,
                Draft(
                    VISUAL,
                    ask.key.replace("vis.", "visual."),
                    question,
                    answer,
                    spec,
                    proof,
                    asked,
                    1,
                    f"{world.persona.id}-root",
                    queries=queries,
                ),
            )
        )
    return out


# a question that another screenshot answers differently: resolves to nothing, so the QA stage rejects
# it as not unique (and counts it)
AMBIGUOUS = Query(
    subject="any", target="another screenshot answers it differently", expect=["one screenshot"]
)


def _named(g, ask: Ask, question: str, slots: dict) -> list[str] | None:
    """The slots the question's phrasing names (what it tells screenshots apart by)."""
    forms = g.say.text.questions.get(ask.key, [])
    return next((re.findall(r"\{(\w+)", f) for f in forms if fill(f, slots) == question), None)


def _page_query(g, record: ImageRecord, ask: Ask, question: str, slots: dict, message) -> Query | None:
    """The question as a query over every screenshot's page (keme.qa.resolve): the screenshots of the
    same template whose details the question names, and the fact it asks for (for a chat screenshot,
    the value its line gives on the question's topic)."""
    named = _named(g, ask, question, slots)
    if named is None:
        return None
    where = {"template": record.template}
    if ask.parse == "contains":  # the phrasing names the topic: only screenshots on it fit
        where["topic"] = record.about.get("topic", "")
    for name in named:
        if name == "day":
            where["said_on"] = message.timestamp.date().isoformat()
        else:
            where[name] = str(slots.get(name, ""))
    if ask.parse == "lines":
        expect = str(sum(1 for k in record.facts if k.startswith("line-")))
        return Query(subject="image", target="lines", where=where, expect=[expect])
    if ask.parse == "contains":
        return Query(subject="image", target="about.value", where=where, expect=[record.about["value"]])
    return Query(subject="image", target=ask.fact, where=where, expect=[record.facts.get(ask.fact, "")])


def _other_answer(
    g, record: ImageRecord, ask: Ask, question: str, slots: dict, answer: str, asked
) -> str | None:
    """A screenshot of the same kind, shared before the question, that the question's details fit as
    well and whose page says something else (the question cannot tell them apart)."""
    named = _named(g, ask, question, slots)
    if named is None:
        return None
    for other in g.world.images.values():
        message = g.world.messages.get(other.message_id)
        if other.id == record.id or other.template != record.template or message is None:
            continue
        if message.timestamp > asked:
            continue
        theirs = dict(other.about) | {"day": g.day(message.timestamp)}
        if all(theirs.get(n) == slots.get(n) for n in named):
            value = other.facts.get(ask.fact, "") if ask.parse != "lines" else ""
            if ask.parse == "lines" or value != answer:
                return other.id
    return None


def _month_range(day: date) -> tuple[date, date]:
    start = day.replace(day=1)
    return start, add_months(start, 1) - timedelta(days=1)


def _shared_quotes(world, records: list[ImageRecord]) -> list[Quote]:
    """The messages that share these screenshots, in time order."""
    ordered = sorted(records, key=lambda r: world.messages[r.message_id].timestamp)
    return [Quote(message_id=r.message_id) for r in ordered]


def _statistics(g, records: list[ImageRecord]) -> list[Draft]:
    world = g.world
    noun = scenes.resources(g.lang)["noun"]
    final = d.final_time(world)
    node = f"{world.persona.id}-root"
    by_template: dict[str, list[ImageRecord]] = defaultdict(list)
    for record in records:
        by_template[record.template].append(record)
    out: list[Draft] = []
    for template, group in sorted(by_template.items()):
        months: dict[date, list[ImageRecord]] = defaultdict(list)
        for record in group:
            months[_month_range(world.messages[record.message_id].timestamp.date())[0]].append(record)
        windows = (
            [("vis.count.all", world.persona.start.date(), final.date(), group)] if len(group) >= 2 else []
        )
        windows += [
            ("vis.count.month", m, _month_range(m)[1], rs)
            for m, rs in sorted(months.items())
            if len(months) > 1
        ]
        for key, start, end, rs in windows:
            question = g.say.question(key, g.rng, noun=noun[template], month=g.month(start))
            out.append(
                Draft(
                    VISUAL,
                    key.replace("vis.", "visual."),
                    question,
                    str(len(rs)),
                    d.number(len(rs)),
                    d.proof(
                        "image_count",
                        _shared_quotes(world, rs),
                        template=template,
                        start=start.isoformat(),
                        end=end.isoformat(),
                    ),
                    final,
                    len(rs),
                    node,
                    queries=[_over_pages(template, "screenshots", "count", start, end, str(len(rs)))],
                )
            )
        if template in SUMS:
            key, fact, span = SUMS[template]
            windows = (
                [(world.persona.start.date(), final.date(), group)]
                if span == "all"
                else [(m, _month_range(m)[1], rs) for m, rs in sorted(months.items())]
            )
            for start, end, rs in windows:
                values = [parse_money(r.facts.get(fact, "")) for r in rs]
                if len(rs) < 2 or any(v is None for v in values):
                    continue
                total = sum(values, Decimal("0"))
                question = g.say.question(key, g.rng, month=g.month(start))
                money = fmt.format_money(total, g.lang)
                out.append(
                    Draft(
                        VISUAL,
                        key.replace("vis.", "visual."),
                        question,
                        money,
                        d.number(total, unit=fmt.CURRENCY[g.lang], aliases=[money]),
                        d.proof(
                            "image_sum",
                            _shared_quotes(world, rs),
                            template=template,
                            fact=fact,
                            start=start.isoformat(),
                            end=end.isoformat(),
                        ),
                        final,
                        len(rs),
                        node,
                        queries=[_over_pages(template, fact, "sum", start, end, str(total))],
                    )
                )
    return out


def _over_pages(template: str, target: str, aggregate: str, start: date, end: date, expect: str) -> Query:
    """A count or a total over every screenshot of one kind shared in a period."""
    return Query(
        subject="image",
        target=target,
        where={"template": template},
        start=start,
        end=end,
        aggregate=aggregate,
        expect=[expect],
    )


def visual_drafts(g) -> list[Draft]:
    """All visual candidates of one persona; a question two screenshots would answer differently is
    dropped."""
    world = g.world
    records = sorted(world.images.values(), key=lambda r: r.id)
    details: list[tuple[str, Draft]] = []
    for record in records:
        message = world.messages.get(record.message_id)
        if message is not None:
            details += _details(g, record, message)
    answers: dict[str, set[str]] = defaultdict(set)
    for question, draft in details:
        answers[question].add(draft.answer)
    counts = Counter(q for q, _ in details)
    unique = [draft for question, draft in details if counts[question] == 1 and len(answers[question]) == 1]
    return unique + _statistics(g, records)
