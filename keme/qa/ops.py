"""The proof operations: one function per `Proof.op`, registered by name, each re-deriving an answer.

An operation takes the world it reads (`Context`), the item (its quotes, options, answer spec and
question time) and its typed arguments (keme/models/proof.py), and returns the answer the proof
yields on the data as it is now — or raises ProofError saying which premise no longer holds.
`derive` looks the operation up; `keme.qa.verify.Verifier` compares the result with the answer spec.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from datetime import date, datetime, timedelta
from decimal import Decimal
from typing import Any, TypeVar

from keme.days import block_of, clear_leader, steady_block
from keme.errors import KemeError
from keme.models import ARGS_OF, OP_NAMES, Message, QAItem, Quote
from keme.models.image import ImageRecord
from keme.models.proof import (
    AbsentArgs,
    Args,
    AttributeArgs,
    CountArgs,
    DateArgs,
    DaysBeforeArgs,
    DaysBetweenArgs,
    HistoryArgs,
    ImageCountArgs,
    ImageFactArgs,
    ImageSumArgs,
    ImportedArgs,
    KeyPointsArgs,
    MajorityArgs,
    OrderArgs,
    PreferenceArgs,
    PremiseArgs,
    RelationArgs,
    SumArgs,
    SumWhereArgs,
    TimeOfDayArgs,
    ValueArgs,
)
from keme.qa.facts import World
from keme.text.dates import parse_display_date, parse_duration
from keme.text.lang import format_date
from keme.text.normalize import contains, numbers_in, parse_money
from keme.world.catalog import load_catalog

Answer = str | list[str]
A = TypeVar("A", bound=Args)


class ProofError(KemeError, ValueError):
    """A QA item's proof does not hold against the trajectory (a quote, a date, a value it names)."""


class Context:
    """What the operations read: one persona's world, with the look-ups they share."""

    def __init__(self, world: World):
        self.world = world

    def message(self, message_id: str) -> Message:
        message = self.world.messages.get(message_id)
        if message is None:
            raise ProofError(f"message {message_id} is not in this persona's trajectory")
        return message

    def sent(self, item: QAItem, index: int) -> datetime:
        """When the message of the item's quote `index` was sent."""
        if index >= len(item.proof.quotes):
            raise ProofError(f"the proof has no quote {index} (it has {len(item.proof.quotes)})")
        return self.message(item.proof.quotes[index].message_id).timestamp

    def sent_on(self, item: QAItem, index: int) -> date:
        return self.sent(item, index).date()

    def parse(self, text: str, how: str, sent: datetime) -> str:
        """`text` read as `how` (keme.models.proof.Parse), canonically: an amount, int, seconds or ISO
        date."""
        if how == "money":
            value = parse_money(text)
            if value is None:
                raise ProofError(f"no amount in {text!r}")
            return str(value)
        if how == "int":
            numbers = numbers_in(text)
            if not numbers:
                raise ProofError(f"no number in {text!r}")
            return str(int(numbers[0]))
        if how == "duration":
            seconds = parse_duration(text)
            if seconds is None:
                raise ProofError(f"no duration in {text!r}")
            return str(seconds)
        if how == "date":
            day = parse_display_date(text, sent)
            if day is None:
                raise ProofError(f"no date in {text!r}")
            return day.isoformat()
        return text

    def amount(self, quote: Quote) -> Decimal:
        return Decimal(self.parse(quote.text or "", "money", self.message(quote.message_id).timestamp))

    def system_messages(self, app: str, needle: str, start: date, end: date) -> Iterator[Message]:
        """The app's records (system messages) of the period that contain `needle`."""
        for session in self.world.sessions:
            for message in session.messages:
                if (
                    message.role == "system"
                    and message.app == app
                    and start <= message.timestamp.date() <= end
                    and needle in message.content
                ):
                    yield message

    def image_for(self, quote: Quote) -> ImageRecord:
        """The screenshot a quoted message shares, with the text read back from its rendered page."""
        message = self.message(quote.message_id)
        found = [
            r for r in self.world.images.values() if r.message_id == message.id and r.path in message.images
        ]
        if not found:
            raise ProofError(f"message {quote.message_id} shares no rendered screenshot")
        return found[0]

    def images_in(self, template: str, start: date, end: date) -> list[ImageRecord]:
        return [
            r
            for r in self.world.images.values()
            if r.template == template
            and r.message_id in self.world.messages
            and start <= self.world.messages[r.message_id].timestamp.date() <= end
        ]


# ---------------------------------------------------------------- the registry
Derivation = Callable[[Context, QAItem, A], Answer]


@dataclass(frozen=True)
class Op:
    name: str
    args: type[Args]
    derive: Callable[[Context, QAItem, Any], Answer]


OPS: dict[str, Op] = {}


def op(name: str, args: type[A]) -> Callable[[Derivation[A]], Derivation[A]]:
    """Register a derivation for `name`, which takes `args` (the arguments model its proof declares)."""

    def register(derive: Derivation[A]) -> Derivation[A]:
        if name not in ARGS_OF:
            raise TypeError(f"{name!r} is not a proof operation (keme.models.proof.OpName)")
        if ARGS_OF[name] is not args:
            raise TypeError(f"{name!r} takes {ARGS_OF[name].__name__}, not {args.__name__}")
        if name in OPS:
            raise TypeError(f"{name!r} is registered twice")
        OPS[name] = Op(name, args, derive)
        return derive

    return register


def derive(context: Context, item: QAItem) -> Answer:
    """The answer the item's proof yields on the current data."""
    entry = OPS.get(item.proof.op)
    if entry is None:  # the model admits only registered names; a forged model_copy could get here
        raise ProofError(f"unknown proof operation {item.proof.op!r}")
    return entry.derive(context, item, item.proof.args)


# ---------------------------------------------------------------- values and attributes
@op("value", ValueArgs)
def value(ctx: Context, item: QAItem, args: ValueArgs) -> Answer:
    sent = ctx.sent(item, args.index)
    return ctx.parse(item.proof.quotes[args.index].text or "", args.parse, sent)


def _quoted(item: QAItem, key: str, version) -> None:
    if not any(q.message_id in version.evidence and q.text == version.value for q in item.proof.quotes):
        raise ProofError(f"no quote is evidence of {key}={version.value!r}")


@op("attribute", AttributeArgs)
def attribute(ctx: Context, item: QAItem, args: AttributeArgs) -> Answer:
    at = args.at or item.asked_at
    versions = [v for v in ctx.world.persona.attribute(args.key).versions if v.valid_from <= at]
    if not versions:
        raise ProofError(f"{args.key} has no value at {at}")
    if args.version == "previous":
        if len(versions) < 2:
            raise ProofError(f"{args.key} has no previous value at {at}")
        version = versions[-2]
    else:
        version = versions[-1]
    _quoted(item, args.key, version)
    return version.value


@op("history", HistoryArgs)
def history(ctx: Context, item: QAItem, args: HistoryArgs) -> Answer:
    versions = [v for v in ctx.world.persona.attribute(args.key).versions if v.valid_from <= item.asked_at]
    for version in versions:
        _quoted(item, args.key, version)
    return [v.value for v in versions]


@op("preference", PreferenceArgs)
def preference(ctx: Context, item: QAItem, args: PreferenceArgs) -> Answer:
    persona = ctx.world.persona
    held = persona.value_at(args.key, item.asked_at)
    version = persona.attribute(args.key).version_at(item.asked_at)
    if held is None or version is None:
        raise ProofError(f"{args.key} has no value at the question time")
    if not any(q.message_id in version.evidence for q in item.proof.quotes):
        raise ProofError("the preference is not quoted from its evidence")
    holding = [i for i, option in enumerate(item.options) if held in option]
    chosen = holding if args.mode == "match" else [i for i in range(len(item.options)) if i not in holding]
    if len(chosen) != 1:
        raise ProofError("the options do not single out one answer")
    return "ABCDEFGH"[chosen[0]]


@op("relation", RelationArgs)
def relation(ctx: Context, item: QAItem, args: RelationArgs) -> Answer:
    persona = ctx.world.persona
    holder = persona.value_at(args.name_key, item.asked_at)
    if holder != args.name:
        raise ProofError(f"{args.name_key} is {holder!r}, not {args.name!r}")
    if not any(q.text == args.name for q in item.proof.quotes):
        raise ProofError("the person is not quoted")
    if args.label_key is not None:
        label = persona.value_at(args.label_key, item.asked_at)
        if not any(q.text == label for q in item.proof.quotes):
            raise ProofError("the relation is not quoted")
        return label or ""
    if not _relation_said(ctx, item, args.name, args.label or ""):
        raise ProofError(f"no message naming {args.name!r} says {args.label!r}")
    return args.label or ""


# "my best friend" / "我最好的朋友": the relation a message must state is the label without its possessive
POSSESSIVES = ("my ", "我的", "我")


def _relation_said(ctx: Context, item: QAItem, name: str, label: str) -> bool:
    """Whether a user message quoted for `name` also has the label quoted from it: the answer says no
    more than the user did (not "my best friend" where the chats only say "a good friend")."""
    core = label.casefold()
    for possessive in POSSESSIVES:
        if core.startswith(possessive):
            core = core[len(possessive) :]
            break
    naming = {
        q.message_id for q in item.proof.quotes if q.text == name and ctx.message(q.message_id).role == "user"
    }
    return any(q.message_id in naming and (q.text or "").casefold() == core for q in item.proof.quotes)


@op("key_points", KeyPointsArgs)
def key_points(ctx: Context, item: QAItem, args: KeyPointsArgs) -> Answer:
    for point in item.spec.items:  # "moved to Denver" is quoted by a message saying "Denver"
        if not any(q.text and q.text in point for q in item.proof.quotes):
            raise ProofError(f"key point {point!r} is not quoted")
    return list(item.spec.items)


# ---------------------------------------------------------------- time
@op("date", DateArgs)
def sent_date(ctx: Context, item: QAItem, args: DateArgs) -> Answer:
    return ctx.sent_on(item, args.index).isoformat()


@op("days_between", DaysBetweenArgs)
def days_between(ctx: Context, item: QAItem, args: DaysBetweenArgs) -> Answer:
    return str(abs((ctx.sent_on(item, 1) - ctx.sent_on(item, 0)).days))


@op("days_before", DaysBeforeArgs)
def days_before(ctx: Context, item: QAItem, args: DaysBeforeArgs) -> Answer:
    return str((item.asked_at.date() - ctx.sent_on(item, 0)).days)


@op("order", OrderArgs)
def order(ctx: Context, item: QAItem, args: OrderArgs) -> Answer:
    first = "A" if ctx.sent(item, 0) < ctx.sent(item, 1) else "B"
    return ("B" if first == "A" else "A") if args.later else first


@op("time_of_day", TimeOfDayArgs)
def time_of_day(ctx: Context, item: QAItem, args: TimeOfDayArgs) -> Answer:
    """The block more than half of the sessions the user opened herself began in, clearly ahead of the
    next however a reader counts (keme.days.steady_block); a session an app's notification opened is not
    her choice of time."""
    period = [s for s in ctx.world.sessions if args.start <= s.start.date() <= args.end]
    chosen = [m.timestamp for s in period if (m := s.opened_by_user) is not None]
    usual = steady_block(chosen, [s.start for s in period])
    if usual is None:
        raise ProofError(f"no steady usual time of day: {dict(Counter(block_of(m) for m in chosen))}")
    return str(usual)


# ---------------------------------------------------------------- amounts and app records
def _cents(total: Decimal) -> str:
    return str(total.quantize(Decimal("0.01")))


@op("sum", SumArgs)
def total(ctx: Context, item: QAItem, args: SumArgs) -> Answer:
    return _cents(sum((ctx.amount(q) for q in item.proof.quotes[: args.n]), Decimal("0")))


def _records(ctx: Context, item: QAItem, args: CountArgs) -> list[Message]:
    found = list(ctx.system_messages(args.app, args.needle, args.start, args.end))
    if {m.id for m in found} != {q.message_id for q in item.proof.quotes}:
        raise ProofError("quoted messages are not exactly the matching records")
    return found


@op("count", CountArgs)
def count(ctx: Context, item: QAItem, args: CountArgs) -> Answer:
    return str(len(_records(ctx, item, args)))


@op("sum_where", SumWhereArgs)
def sum_where(ctx: Context, item: QAItem, args: SumWhereArgs) -> Answer:
    found = _records(ctx, item, args)
    return _cents(sum((Decimal(ctx.parse(m.content, "money", m.timestamp)) for m in found), Decimal("0")))


@op("majority", MajorityArgs)
def majority(ctx: Context, item: QAItem, args: MajorityArgs) -> Answer:
    counts = Counter(
        getattr(a.record, args.field)
        for a in ctx.world.anchors.values()
        if a.app == "bill"
        and args.start <= a.timestamp.date() <= args.end
        and args.category in (None, a.record.category)
    )
    most = clear_leader(counts)
    if most is None:
        raise ProofError(f"no clearly most frequent {args.field}: {dict(counts)}")
    return most


# ---------------------------------------------------------------- what is not there
@op("absent", AbsentArgs)
def absent(ctx: Context, item: QAItem, args: AbsentArgs) -> Answer:
    kinds = load_catalog(ctx.world.lang).confusable_with if ctx.world.lang in ("en", "zh") else (lambda t: [])
    for term in filter(None, args.terms):
        if ctx.world.mentions(term):
            raise ProofError(f"{term!r} is mentioned in the trajectory")
        # "the new-hire training program" where she talked about her onboarding plan: she may mean it
        said = next((word for word in kinds(term) if ctx.world.mentions(word)), None)
        if said is not None:
            raise ProofError(f"{term!r} is of a kind the trajectory talks about ({said!r})")
    if args.key is not None and ctx.world.persona.attribute(args.key).versions:
        raise ProofError(f"{args.key} does exist")
    return "abstain"


# a wrong date is corrected to the one record of that merchant within this many days of it
NEAR_DAYS = 7


@op("premise", PremiseArgs)
def premise(ctx: Context, item: QAItem, args: PremiseArgs) -> Answer:
    base = OPS[args.base]
    own = PremiseArgs.model_fields
    shared = {name: getattr(args, name) for name in base.args.model_fields if name in own}
    truth = base.derive(ctx, item, base.args.model_validate(shared))
    false = args.false
    # the question states its premise: one that asks the true question is no trap, and its gold correction
    # ("not $94.06") answers what was not asked
    stated = format_date(date.fromisoformat(false), ctx.world.lang) if args.check == "no_record_on" else false
    if not contains(item.question, stated):
        raise ProofError(f"the question does not state its false premise {stated!r}")
    if args.check == "no_record_on":
        day = date.fromisoformat(false)
        if list(ctx.system_messages(args.app or "", args.needle or "", day, day)):
            raise ProofError(f"there is a matching record on {day}")
        # the correction names the record: it must be the only one of its merchant near the false day
        week = timedelta(days=NEAR_DAYS)
        near = list(ctx.system_messages(args.app or "", args.needle or "", day - week, day + week))
        if len(near) != 1:
            raise ProofError(f"{len(near)} matching records within {NEAR_DAYS} days of {day}, not one")
        if truth == false:
            raise ProofError("the false premise is true")
    elif args.check == "not_in_sessions":
        sessions = {ctx.world.session_of[q.message_id] for q in item.proof.quotes}
        if any(contains(m.content, false) for s in sessions for m in ctx.world.sessions_by_id[s].messages):
            raise ProofError(f"{false!r} does appear in the quoted sessions")
    elif args.check == "never_value":
        if any(v.value == false for v in ctx.world.persona.attribute(args.key or "").versions):
            raise ProofError(f"{args.key} did take the value {false!r}")
    elif args.check == "amount_differs":
        if parse_money(false) == Decimal(str(truth)):
            raise ProofError("the false amount is the true one")
    return truth


# ---------------------------------------------------------------- screenshots
@op("image_fact", ImageFactArgs)
def image_fact(ctx: Context, item: QAItem, args: ImageFactArgs) -> Answer:
    if not item.proof.quotes:
        raise ProofError("the proof quotes no message")
    record = ctx.image_for(item.proof.quotes[0])
    if record.id != args.image:
        raise ProofError(f"message {record.message_id} shares {record.id}, not {args.image}")
    if args.parse == "lines":
        lines = [v for k, v in record.facts.items() if k.startswith("line-")]
        missing = [v for v in lines if v not in record.dom_text]
        if missing:
            raise ProofError(f"{record.id}: {missing} not on the rendered page")
        return str(len(lines))
    text = record.facts.get(args.fact or "")
    if text is None or text not in record.dom_text:
        raise ProofError(f"{record.id}: fact {args.fact!r} is not on the rendered page")
    if args.contains is not None:
        if args.contains not in text:
            raise ProofError(f"{record.id}: {args.fact!r} does not say {args.contains!r}")
        return args.contains
    return ctx.parse(text, args.parse, ctx.message(record.message_id).timestamp)


def _screenshots(ctx: Context, item: QAItem, args: ImageCountArgs) -> list[ImageRecord]:
    found = ctx.images_in(args.template, args.start, args.end)
    if {r.message_id for r in found} != {q.message_id for q in item.proof.quotes}:
        raise ProofError(
            f"quoted messages are not exactly the {args.template} screenshots of {args.start}..{args.end}"
        )
    return found


@op("image_count", ImageCountArgs)
def image_count(ctx: Context, item: QAItem, args: ImageCountArgs) -> Answer:
    return str(len(_screenshots(ctx, item, args)))


@op("image_sum", ImageSumArgs)
def image_sum(ctx: Context, item: QAItem, args: ImageSumArgs) -> Answer:
    sum_ = Decimal("0")
    for record in _screenshots(ctx, item, args):
        text = record.facts.get(args.fact, "")
        if not text or text not in record.dom_text:
            raise ProofError(f"{record.id}: fact {args.fact!r} is not on the rendered page")
        sum_ += Decimal(ctx.parse(text, "money", ctx.message(record.message_id).timestamp))
    return _cents(sum_)


# ---------------------------------------------------------------- public benchmarks
@op("imported", ImportedArgs)
def imported(ctx: Context, item: QAItem, args: ImportedArgs) -> Answer:
    """The gold is taken as given; `Verifier.check` still checks that the evidence exists."""
    if item.spec.kind == "choice" and item.spec.option_value is not None:
        return item.spec.option_value  # a choice item keme made from an open question, exported and back
    return list(item.spec.items) if item.spec.items else (item.spec.value or "")


_unregistered = sorted(set(OP_NAMES) - set(OPS))
if _unregistered:  # pragma: no cover - a new OpName without its derivation
    raise TypeError(f"proof operations without a derivation: {_unregistered}")
