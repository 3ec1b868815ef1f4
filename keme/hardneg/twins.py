"""Twins: an evidence session told again about another subject — the same app record with other values,
the same kind of event with other people, places or amounts, or the same event on another day.

A twin is made from the evidence session's own messages and claims, so every fact it states is
recorded: each value a claim states verbatim in its message is swapped for another value of the same
predicate (the persona's own values first, as a confusable entity would be), every subject becomes a
new subject, and the session moves to another day. What cannot be swapped safely is left out rather
than guessed: a message with a claim about the persona or the world at large (a twin must not say
something new about the persona), and a chat message stating a date or time in words the twin cannot
move (a "tomorrow" would then mean another day than its claim). The twin's text must not name any
value it swapped away; one that does is not made.
"""

from __future__ import annotations

import random
import re
from collections import defaultdict
from dataclasses import dataclass
from datetime import timedelta
from decimal import Decimal, InvalidOperation

from keme.models import Claim, Message, Session
from keme.text.dates import dates_in

SUBJECT_KINDS = ("anchor:", "event:")  # subjects a twin can stand in for with a new one
_DATE = re.compile(r"^\d{4}-\d{2}-\d{2}")
_TIME = re.compile(r"^\d{1,2}:\d{2}$")
_NUMBER = re.compile(r"^\d+(?:\.\d+)?$")
MIN_SWAP = 2  # shorter values ("4", "80") are too likely to occur inside other text to swap safely


@dataclass(frozen=True)
class Twin:
    """A twin session and the claims its messages state; `kind` says what differs from the original."""

    session: Session
    claims: list[Claim]
    kind: str
    swapped: dict[str, str]  # original value -> the value the twin says instead


def _pattern(value: str) -> re.Pattern[str]:
    """`value` where it stands as a whole (not inside a longer word or number)."""
    return re.compile(rf"(?<![0-9A-Za-z.]){re.escape(value)}(?![0-9A-Za-z]|\.\d)")


def other_value(value: str, predicate: str, pool: dict[str, list[str]], rng: random.Random) -> str | None:
    """Another value of `predicate`: one the persona's ledger holds for another subject, or for a number
    none does, a nearby number written like the original (same decimals, never a simple ratio)."""
    known = [v for v in pool.get(predicate, []) if v != value and len(v) >= MIN_SWAP and value not in v]
    if known:
        return rng.choice(sorted(set(known)))
    if _NUMBER.match(value):
        try:
            number = Decimal(value)
        except InvalidOperation:
            return None
        places = len(value.split(".")[1]) if "." in value else 0
        for _ in range(20):
            factor = Decimal(str(rng.choice([0.62, 0.71, 0.78, 0.86, 1.17, 1.29, 1.38, 1.46])))
            candidate = (number * factor).quantize(Decimal(1).scaleb(-places))
            text = f"{candidate:.{places}f}"
            if text != value and len(text) >= MIN_SWAP and Decimal(text) > 0:
                return text
    return None


def _movable(claim: Claim, message: Message) -> bool:
    """Whether the twin can state this claim on another day. A value said as written moves with the swap;
    a date or time the text words otherwise cannot be moved (a chat "tomorrow" or "4月2日" would then
    mean another day than its claim), except an app record's own date and time when its text names no
    day (they move with the record)."""
    if claim.value in message.content or not (_DATE.match(claim.value) or _TIME.match(claim.value)):
        return True
    if claim.speaker != "app":
        return False
    derived = claim.predicate in ("date", "time") and claim.value in (
        message.timestamp.date().isoformat(),
        message.timestamp.strftime("%H:%M"),
    )
    if derived:
        return not dates_in(message.content, message.timestamp.year)
    return True  # a record's own field (a calendar entry's day) is absolute and stays as it is


def _moved(claim: Claim, message: Message, delta: timedelta) -> str:
    """The claim's value in the twin: a value derived from the record's time moves with it."""
    if claim.predicate == "date" and claim.value == message.timestamp.date().isoformat():
        return (message.timestamp + delta).date().isoformat()
    return claim.value


def make_twin(
    session: Session,
    claims_of: dict[str, list[Claim]],
    swap: set[str] | None,
    pool: dict[str, list[str]],
    delta: timedelta,
    tag: str,
    persona_id: str,
    kind: str,
    rng: random.Random,
    kind_of: dict[str, str] | None = None,
) -> Twin | None:
    """The twin of `session`, `delta` later (whole days), with ids suffixed by `tag`.

    `swap`: the predicates whose values change (None: every value that can). None when nothing would
    differ, or a swapped value would survive in the text.
    """
    kept: list[Message] = []
    for message in session.messages:
        own = claims_of.get(message.id, [])
        if any(not c.subject.startswith(SUBJECT_KINDS) for c in own):
            continue  # a statement about the persona or the world: the twin says nothing new of them
        if not all(_movable(c, message) for c in own):
            continue
        kept.append(message)
    if not any(claims_of.get(m.id) for m in kept):
        return None
    # one new value per original value, the same in every message of the session (the twin agrees with
    # itself), longest values first so that a value inside another is replaced as part of it
    mapping: dict[str, str] = {}
    for message in kept:
        for claim in claims_of.get(message.id, []):
            value = claim.value
            if (
                value in mapping
                or len(value) < MIN_SWAP
                or (swap is not None and claim.predicate not in swap)
            ):
                continue
            if _pattern(value).search(message.content) is None:
                continue
            kind = kind_of.get(claim.subject) if kind_of else None
            new = None
            if kind and len(set(pool.get(f"{kind}/{claim.predicate}", [])) - {value}) >= 1:
                new = other_value(value, f"{kind}/{claim.predicate}", pool, rng)
            new = new or other_value(value, claim.predicate, pool, rng)
            if new is not None and new not in mapping.values():
                mapping[value] = new
    if not mapping:
        return None
    order = sorted(mapping, key=len, reverse=True)
    marks = {value: f"\x00{i}\x00" for i, value in enumerate(order)}

    def rewrite(text: str) -> str:
        for value in order:
            text = _pattern(value).sub(marks[value], text)
        for value in order:
            text = text.replace(marks[value], mapping[value])
        return text

    sid = f"{session.id}{tag}"
    messages: list[Message] = []
    claims: list[Claim] = []
    for message in kept:
        content = rewrite(message.content)
        new_id = f"{message.id}{tag}"
        own = []
        for claim in claims_of.get(message.id, []):
            value = mapping.get(claim.value, _moved(claim, message, delta))
            kind_, _, name = claim.subject.partition(":")
            own.append(
                Claim.model_construct(
                    id=f"{new_id}-c{len(own) + 1}",
                    persona_id=persona_id,
                    message_id=new_id,
                    speaker=claim.speaker,
                    subject=f"{kind_}:{name}{tag}",
                    predicate=claim.predicate,
                    value=value,
                    valid_from=claim.valid_from + delta,
                    valid_to=claim.valid_to + delta if claim.valid_to is not None else None,
                    said=content,
                )
            )
        messages.append(
            message.model_copy(
                update={
                    "id": new_id,
                    "content": content,
                    "timestamp": message.timestamp + delta,
                    "images": [],
                    "captions": [],
                    "claims": [c.id for c in own],
                }
            )
        )
        claims += own
    text = "\n".join(m.content for m in messages)
    if any(_pattern(value).search(text) for value in mapping):
        return None  # a swapped value is still said (inside a form the swap did not reach)
    for claim in claims:
        if claim.value in mapping.values() and claim.value not in claim.said:
            return None
    twin = session.model_copy(
        update={
            "id": sid,
            "persona_id": persona_id,
            "event_id": f"{session.event_id}{tag}",
            "anchor_id": None,
            "start": messages[0].timestamp,
            "end": messages[-1].timestamp,
            "messages": messages,
        }
    )
    return Twin(twin, claims, kind, mapping)


def value_pool(claims: list[Claim], kind_of: dict[str, str] | None = None) -> dict[str, list[str]]:
    """Every value each predicate takes in a persona's ledger (what a confusable entity is drawn from),
    also keyed `<kind>/<predicate>` by the kind of subject (`kind_of`: an anchor's app), so that a voice
    memo's title is swapped for another voice memo's."""
    pool: dict[str, list[str]] = defaultdict(list)
    for claim in claims:
        keys = [claim.predicate]
        kind = (kind_of or {}).get(claim.subject)
        if kind:
            keys.append(f"{kind}/{claim.predicate}")
        for key in keys:
            if claim.value not in pool[key]:
                pool[key].append(claim.value)
    return dict(pool)
