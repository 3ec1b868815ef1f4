"""Candidate QA items before selection, and the small builders they are made with."""

from __future__ import annotations

import random
from dataclasses import dataclass, field
from datetime import date, datetime, time, timedelta
from decimal import Decimal
from typing import get_origin

from pydantic import TypeAdapter, ValidationError

from keme.models import ARGS_OF, AnswerSpec, Proof, QAItem, Query, Quote
from keme.qa.facts import Fact, World
from keme.qa.phrasing import usual_form
from keme.text.fill import fill


@dataclass
class Draft:
    type: str
    subtype: str
    question: str
    answer: str
    spec: AnswerSpec
    proof: Proof
    asked_at: datetime
    hops: int
    node: str
    sub: list[Draft] = field(default_factory=list)
    options: list[str] = field(default_factory=list)
    distractors: list[str] = field(default_factory=list)
    fact: Fact | None = None  # the fact a single-hop item asks about (for composition)
    format: str = "open"
    open_form: tuple | None = None  # (spec, answer, options, format) before a choice format was applied
    queries: list[Query] = field(default_factory=list)  # what it asks of the ledger (keme.qa.resolve)
    # a trap's other wordings, each the wording of answerable questions (keme.qa.twins picks one), and the
    # traps asked together about one made-up name (asked twice, as real names recur)
    wordings: list[str] = field(default_factory=list)
    fallback: list[str] = field(
        default_factory=list
    )  # wordings a trap takes only where none of its own has room
    group: str = ""

    @property
    def evidence(self) -> list[str]:
        return list(dict.fromkeys(q.message_id for q in self.proof.quotes))

    def to_item(self, item_id: str, world: World, sub_ids: list[str]) -> QAItem:
        evidence = self.evidence
        sessions = list(dict.fromkeys(world.session_of[m] for m in evidence))
        return QAItem(
            id=item_id,
            persona_id=world.persona.id,
            question=self.question,
            answer=self.answer,
            spec=self.spec,
            type=self.type,
            subtype=self.subtype,
            evidence=evidence,
            evidence_sessions=sessions,  # type: ignore[arg-type]
            asked_at=self.asked_at,
            hops=self.hops,
            sub_questions=sub_ids,
            difficulty=difficulty(self, world),
            language=world.lang,
            format=self.format,  # type: ignore[arg-type]
            options=self.options,
            node=self.node,
            proof=self.proof,
            queries=self.queries,
        )


def difficulty(draft: Draft, world: World) -> str:
    stamps = [world.messages[m].timestamp for m in draft.evidence]
    spread = (max(stamps) - min(stamps)).days if stamps else 0
    if draft.type in ("summarization", "adversarial") or draft.hops >= 3 or spread > 45:
        return "hard"
    if (
        draft.hops == 2
        or spread > 7
        or draft.type in ("knowledge_update", "implicit_preference", "abstention")
    ):
        return "medium"
    return "easy"


# ---------------------------------------------------------------- specs and proofs
def quote(fact: Fact, with_text: bool = True) -> Quote:
    return Quote(message_id=fact.message_id, text=fact.value if with_text else None)


def dated(fact: Fact) -> Quote:
    return Quote(message_id=fact.message_id, text=fact.value, on=fact.when.date())


_PROOF: TypeAdapter[Proof] = TypeAdapter(Proof)


def proof(op: str, quotes: list[Quote], **args: object) -> Proof:
    """The typed proof of operation `op` (keme/models/proof.py) from keyword arguments.

    Generators pass arguments as they have them: numbers and dates as text are converted ("2" -> 2,
    an ISO date -> date), and text for a list argument is split on "|" ("a|b" -> ["a", "b"], "" -> []).
    """
    model = ARGS_OF.get(op)
    if model is None:
        raise ValueError(f"{op!r} is not a proof operation (keme.models.proof.OpName)")
    typed = {
        name: [t for t in v.split("|") if t] if isinstance(v, str) and _is_list(model, name) else v
        for name, v in args.items()
    }
    try:
        return _PROOF.validate_python({"op": op, "quotes": quotes, "args": typed}, strict=False)
    except ValidationError as exc:
        problems = "; ".join(f"{'.'.join(map(str, e['loc'][1:]))}: {e['msg']}" for e in exc.errors())
        raise ValueError(f"proof {op!r} does not take these arguments: {problems}") from None


def _is_list(model: type, name: str) -> bool:
    field = model.model_fields.get(name)
    return field is not None and get_origin(field.annotation) is list


def entity(value: str, aliases: list[str] | None = None) -> AnswerSpec:
    return AnswerSpec(kind="entity", value=value, aliases=aliases or [])


def number(value: Decimal | int, unit: str | None = None, aliases: list[str] | None = None) -> AnswerSpec:
    text = str(value.quantize(Decimal("0.01"))) if isinstance(value, Decimal) else str(value)
    return AnswerSpec(kind="number", value=text, unit=unit, aliases=aliases or [])


def day_spec(day: date, aliases: list[str] | None = None) -> AnswerSpec:
    return AnswerSpec(kind="date", value=day.isoformat(), aliases=aliases or [])


def duration(seconds: int, aliases: list[str] | None = None) -> AnswerSpec:
    return AnswerSpec(kind="duration", value=str(seconds), unit="s", tolerance=5, aliases=aliases or [])


def set_spec(items: list[str], ordered: bool = False) -> AnswerSpec:
    return AnswerSpec(kind="set", items=items, ordered=ordered)


def key_points(items: list[str]) -> AnswerSpec:
    return AnswerSpec(kind="free", items=items)


def choice(letter: str, text: str) -> AnswerSpec:
    return AnswerSpec(kind="choice", value=letter, aliases=[text])


def abstain() -> AnswerSpec:
    return AnswerSpec(kind="abstain", value="abstain")


def fill_question(rng: random.Random, forms: list[str], **slots: object) -> str:
    return fill(usual_form(rng, forms), slots)


# ---------------------------------------------------------------- question time
FINAL_HOUR = time(20, 0)  # the evening after the trajectory, when the final questions are asked


def final_time(world: World) -> datetime:
    """After the whole trajectory: the evening of the day after it ends (within the persona's chat
    hours, for one who never chats that late)."""
    first, last = world.chat_hours
    return datetime.combine(world.persona.end.date() + timedelta(days=1), min(max(FINAL_HOUR, first), last))


def ask_time(
    rng: random.Random, world: World, last: datetime, mid_share: float, until: datetime | None = None
) -> datetime | None:
    """When the question is asked: after `last`, before `until` if the answer stops being true then.

    A share of questions is asked mid-trajectory (an hour to a few weeks after
    the evidence, at a moment drawn evenly over the persona's chat hours in that time: a person asks
    her assistant when she is awake, not between midnight and seven); the rest after the trajectory
    ends. None if no time works.
    """
    end = world.persona.end
    if until is None and rng.random() >= mid_share:
        return final_time(world)
    low = last + timedelta(hours=1)
    high = min(until or end, end, last + timedelta(days=30)) - timedelta(minutes=1)
    moment = draw_within(rng, waking_spans(low, high, world.chat_hours))
    if moment is None:
        return None if until is not None else final_time(world)
    return moment


def waking_spans(low: datetime, high: datetime, hours: tuple[time, time]) -> list[tuple[datetime, datetime]]:
    """The parts of [low, high] inside the daily `hours` (from, to), one per day, in order."""
    spans = []
    day = low.date()
    while day <= high.date():
        start = max(low, datetime.combine(day, hours[0]))
        stop = min(high, datetime.combine(day, hours[1]))
        if start < stop:
            spans.append((start, stop))
        day += timedelta(days=1)
    return spans


def draw_within(rng: random.Random, spans: list[tuple[datetime, datetime]]) -> datetime | None:
    """A moment drawn evenly over the spans (to the second), None if they hold no time."""
    lengths = [int((stop - start).total_seconds()) for start, stop in spans]
    if sum(lengths) <= 0:
        return None
    offset = rng.randrange(sum(lengths))
    for (start, _), length in zip(spans, lengths):
        if offset < length:
            return (start + timedelta(seconds=offset)).replace(microsecond=0)
        offset -= length
    return None  # unreachable: the offset is below the total
