"""A state holds until an announced change: claims on one subject and predicate agree while both are
valid, a persona attribute claim says the version valid then, and the routine numbers said in text
(training a week) do not jump without a change; counts said in one session agree."""

from __future__ import annotations

from datetime import datetime

from keme.models import Claim
from keme.models.attributes import BY_KEY
from keme.world.check.base import Finding, World, day, quote

RULE = "state"


def check(world: World) -> list[Finding]:
    return (
        _claims(world)
        + _attributes(world)
        + _stale_text(world)
        + _routine_text(world)
        + _session_counts(world)
    )


def same(a: str, b: str) -> bool:
    """Two canonical values say the same thing (case, spacing and number form aside)."""
    a, b = " ".join(a.split()).casefold(), " ".join(b.split()).casefold()
    if a == b:
        return True
    try:
        return float(a) == float(b)
    except ValueError:
        return False


def announced(world: World, predicate: str, value: str, after: datetime, until: datetime) -> bool:
    """A change to `value` is announced between `after` and `until`: a persona attribute version with
    evidence, or an event that sets the predicate (params `set:<key>`)."""
    if predicate in BY_KEY:
        attr = world.view.persona.attribute(predicate)
        for version in attr.versions:
            if after < version.valid_from <= until and version.evidence and same(version.value, value):
                return True
    for event in world.view.graph.events:
        for key, said in event.params.items():
            if not key.startswith("set:"):
                continue
            target = key[4:]
            if (target == predicate or target.endswith("." + predicate)) and same(said, value):
                if event.start <= until and event.end >= after:
                    return True
    return False


def _claims(world: World) -> list[Finding]:
    """Claims on one subject and predicate whose validity overlaps agree, unless a change is announced.
    Object conditions are the objects rule's."""
    groups: dict[tuple[str, str], list[Claim]] = {}
    for claim in world.view.claims:
        if claim.subject.startswith("object:") and claim.predicate == "condition":
            continue
        groups.setdefault((claim.subject, claim.predicate), []).append(claim)
    out = [
        world.finding(RULE, [c.message_id], f"claim {c.id} is valid until {c.valid_to}, before it is said")
        for c in world.view.claims
        if c.valid_to is not None and c.valid_to < c.valid_from
    ]
    for (subject, predicate), claims in groups.items():
        claims.sort(key=lambda c: (c.valid_from, c.id))
        held = claims[0]
        for claim in claims[1:]:
            if same(claim.value, held.value):
                continue
            overlaps = held.valid_to is None or held.valid_to > claim.valid_from
            if overlaps and not announced(world, predicate, claim.value, held.valid_from, claim.valid_from):
                out.append(
                    world.finding(
                        RULE,
                        [held.message_id, claim.message_id],
                        f"{subject} {predicate} is {held.value!r} in {held.message_id} "
                        f"({quote(held.said, 60)}) and {claim.value!r} in {claim.message_id} "
                        f"({quote(claim.said, 60)}) with no announced change between",
                    )
                )
            held = claim
    return out


def _attributes(world: World) -> list[Finding]:
    """A claim on a persona attribute states the version valid when it is said."""
    out = []
    persona = world.view.persona
    for claim in world.view.claims:
        if claim.subject != "persona" or claim.predicate not in BY_KEY:
            continue
        try:
            valid = persona.value_at(claim.predicate, claim.valid_from)
        except KeyError:
            continue
        if valid is not None and not same(valid, claim.value):
            out.append(
                world.finding(
                    RULE,
                    [claim.message_id],
                    f"{claim.message_id} says {claim.predicate} {claim.value!r} ({quote(claim.said, 60)}) on "
                    f"{day(claim.valid_from)}, when the persona's {claim.predicate} is {valid!r}",
                )
            )
    return out


def _stale_text(world: World) -> list[Finding]:
    """The user says, as their present one, a value the attribute held at another time ("我现在是行政主管"
    while the title is 品牌策划)."""
    cues = world.cues
    persona = world.view.persona
    out = []
    changing = [a for a in persona.attributes() if len({v.value for v in a.versions}) > 1]
    for _, message in world.said(("user",)):
        for attr in changing:
            current = attr.value_at(message.timestamp)
            for clause in world.clauses(message.content):
                if current is not None and current in clause:
                    continue
                if not cues.any(cues.present, clause) or cues.any(cues.past, clause):
                    continue
                other = next(
                    (v.value for v in attr.versions if v.value != current and v.value in clause), None
                )
                # a value the message's claims say as something else (an episode's show title) is not
                # the attribute said
                elsewhere = {
                    c.value
                    for c in world.claims_of.get(message.id, [])
                    if not (c.subject == "persona" and c.predicate == attr.key)
                }
                if other is not None and other not in elsewhere:
                    out.append(
                        world.finding(
                            RULE,
                            [message.id],
                            f"{message.id} says {attr.key} {other!r} as the present one "
                            f"({quote(message.content)}) on {day(message.timestamp)}, when it is {current!r}",
                        )
                    )
                    break
    return out


def _routine_text(world: World) -> list[Finding]:
    """What the user says about their own training a week, from one statement to the next."""
    cues = world.cues
    said: list[tuple[int, str, str]] = []  # (times a week, message id, text)
    for _, message in world.said(("user",)):
        count = None
        for clause in world.clauses(message.content):
            if cues.any(cues.training_none, clause):
                count = 0
                break
            found = cues.search(cues.training_per_week, clause)
            if found and cues.any(cues.training_not, clause):
                continue
            if found and cues.number(found.group("n")) is not None:
                count = cues.number(found.group("n"))
                break
        if count is not None:
            said.append((count, message.id, message.content))
    out = []
    for (a, a_id, a_text), (b, b_id, b_text) in zip(said, said[1:], strict=False):
        if a == b:
            continue
        when_a = world.view.messages[a_id].timestamp
        when_b = world.view.messages[b_id].timestamp
        if announced(world, "training_per_week", str(b), when_a, when_b):
            continue
        out.append(
            world.finding(
                RULE,
                [a_id, b_id],
                f"training a week is {a} in {a_id} ({quote(a_text, 60)}) and {b} in {b_id} "
                f"({quote(b_text, 60)}, {day(when_b)}) with no announced change",
            )
        )
    return out


def _session_counts(world: World) -> list[Finding]:
    """This week's count said twice in one session agrees."""
    cues = world.cues
    out = []
    for session in world.view.sessions:
        first: tuple[int, str, str] | None = None
        for message in session.messages:
            if message.role != "user":
                continue
            found = cues.search(cues.week_count, message.content)
            count = cues.number(found.group("n")) if found else None
            if count is None:
                continue
            if first is None:
                first = (count, message.id, found.group(0))
            elif count != first[0]:
                out.append(
                    world.finding(
                        RULE,
                        [first[1], message.id],
                        f"{session.id} counts this week's sessions as {first[0]} "
                        f"(“{first[2]}”, {first[1]}) and "
                        f"{count} (“{found.group(0)}”, {message.id}) minutes apart",
                    )
                )
                break
    return out
