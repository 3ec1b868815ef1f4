"""A state holds until an announced change: claims on one subject and predicate agree while both are
valid, a persona attribute claim says the version valid then, and the routine numbers said in text
(training a week) do not jump without a change; counts said in one session agree; and one name is one
person (the persona's friend, sibling and partner are not called by the persona's own name or by each
other's).

An announced change is read from the data alone: a version of the persona attribute (routines are the
`routine.*` attributes, claimed under their name, `training_per_week`) that starts between the two
statements, whose evidence message states the new value. A change the event graph plans but no message
says is not one."""

from __future__ import annotations

import re
from datetime import datetime, timedelta

from keme.models import Attribute, Claim
from keme.models.attributes import attribute_key, claim_predicate
from keme.world.check.base import Finding, World, day, quote

RULE = "state"


def check(world: World) -> list[Finding]:
    return (
        _claims(world)
        + _attributes(world)
        + _stale_text(world)
        + _routine_text(world)
        + _session_counts(world)
        + _people(world)
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


def mentions(text: str, value: str) -> bool:
    """`text` names `value` as a word of its own: "car" is not in "careers", 'UX design' not in "UX
    designer" (Chinese, written without spaces, is matched as a substring)."""
    if not value:
        return False
    edges = (r"(?<![A-Za-z0-9])" if value[0].isascii() and value[0].isalnum() else "") + re.escape(value)
    edges += r"(?![A-Za-z0-9])" if value[-1].isascii() and value[-1].isalnum() else ""
    return re.search(edges, text) is not None


def attribute_of(world: World, predicate: str) -> Attribute | None:
    """The persona attribute a claim predicate states: its key (`career.company`), or a routine named by
    its predicate (`training_per_week` is `routine.training_per_week`); None for any other predicate."""
    key = attribute_key(predicate)
    if key is None:
        return None
    try:
        return world.view.persona.attribute(key)
    except KeyError:
        return None


def announced(world: World, predicate: str, value: str, after: datetime, until: datetime) -> bool:
    """A change to `value` is announced in (`after`, `until`]: a version of the persona attribute the
    predicate names starts then, and its evidence is a message of this dataset that states the value
    (one of its claims says it, or its text does). A plan in the event graph is not an announcement:
    only what a message says is."""
    attr = attribute_of(world, predicate)
    if attr is None:
        return False
    for version in attr.versions:
        if not (after < version.valid_from <= until and same(version.value, value)):
            continue
        if any(_states(world, message_id, attr.key, version.value) for message_id in version.evidence):
            return True
    return False


def _states(world: World, message_id: str, key: str, value: str) -> bool:
    message = world.view.messages.get(message_id)
    if message is None:
        return False
    predicates = {key, claim_predicate(key)}
    if any(c.predicate in predicates and same(c.value, value) for c in world.claims_of.get(message_id, [])):
        return True
    return _contains(message.content, value)


def _contains(text: str, value: str) -> bool:
    """`value` is said in `text`: a number as a whole number ("4", not the 4 of "$4,635")."""
    if value.isdigit():
        return re.search(rf"(?<![\d,.]){value}(?![\d,.]\d|\d)", text) is not None
    return value in text


def _said_at(world: World, claim: Claim) -> datetime:
    message = world.view.messages.get(claim.message_id)
    return message.timestamp if message is not None else claim.valid_from


def _past(world: World, claim: Claim) -> bool:
    """A claim of the value an attribute held before an announced change, said after it ("能把《X》挤下去"
    in the reply to the update): it speaks of its own validity, which ends where the change begins."""
    if claim.valid_to is None or claim.valid_to > _said_at(world, claim):
        return False
    attr = attribute_of(world, claim.predicate)
    return attr is not None and any(
        v.valid_from == claim.valid_to and any(_states(world, m, attr.key, v.value) for m in v.evidence)
        for v in attr.versions
    )


def _claims(world: World) -> list[Finding]:
    """Claims on one subject and predicate whose validity overlaps agree, unless a change is announced.
    Claims about the persona (an attribute, a routine, any persona-scope quantity) hold from one said to
    the next: two that differ need an announced change between the moments they are said, whatever
    validity they record. Object conditions are the objects rule's."""
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
        persona = subject == "persona"
        if persona:
            claims = [c for c in claims if not _past(world, c)] or claims[:1]
            # an update message says the old value and the new one: the older version's claim first
            claims.sort(key=lambda c: (_said_at(world, c), c.valid_from, c.id))
        else:
            claims.sort(key=lambda c: (c.valid_from, c.id))
        held = claims[0]
        for claim in claims[1:]:
            if same(claim.value, held.value):
                continue
            if persona:
                # the change may be announced by the very message that says the old value ({old:...})
                overlaps, until = True, _said_at(world, claim)
                after = _said_at(world, held) - timedelta(microseconds=1)
            else:
                overlaps = held.valid_to is None or held.valid_to > claim.valid_from
                after, until = held.valid_from, claim.valid_from
            if overlaps and not announced(world, predicate, claim.value, after, until):
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
    for claim in world.view.claims:
        attr = attribute_of(world, claim.predicate) if claim.subject == "persona" else None
        if attr is None:
            continue
        valid = attr.value_at(claim.valid_from)
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
    # a number in text ("$4,635", "2 coffees") does not say which quantity it counts: numeric attributes
    # are judged by their claims (`_attributes`) and the training cues (`_routine_text`)
    changing = [
        a
        for a in persona.attributes()
        if len({v.value for v in a.versions}) > 1 and not all(v.value.isdigit() for v in a.versions)
    ]
    for _, message in world.said(("user",)):
        for attr in changing:
            current = attr.value_at(message.timestamp)
            for clause in world.clauses(message.content):
                if current is not None and mentions(clause, current):
                    continue
                if not cues.any(cues.present, clause) or cues.any(cues.past, clause):
                    continue
                # a value the message's claims say as something else (an episode's show title), or as a
                # word of something else ("running" in "Hoka Clifton 9 running shoes"), is not the attribute:
                # those values are taken out of the clause before it is read
                bare = clause
                elsewhere = _claimed_elsewhere(world, message.id, attr.key)
                for value in sorted(elsewhere, key=lambda v: (-len(v), v)):
                    bare = bare.replace(value, " ")
                other = next(
                    (v.value for v in attr.versions if v.value != current and mentions(bare, v.value)), None
                )
                if other is not None:
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


def _claimed_elsewhere(world: World, message_id: str, key: str) -> set[str]:
    """The values a message's claims state as something other than the attribute `key`."""
    return {
        c.value
        for c in world.claims_of.get(message_id, [])
        if c.value and not (c.subject == "persona" and c.predicate == key)
    }


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


CIRCLE = ("social_circle.best_friend", "social_circle.sibling", "social_circle.partner")


def _people(world: World) -> list[Finding]:
    """One name, one person: a social-circle name that is the persona's own (its given name: "James" for
    James Robinson) or another circle member's, named at the first message that says it."""
    persona = world.view.persona
    own = {persona.name, persona.name.split()[0]} if persona.name else set()
    holders: dict[str, list[str]] = {}  # name -> the roles it has
    for key in CIRCLE:
        try:
            versions = persona.attribute(key).versions
        except KeyError:
            continue
        for value in dict.fromkeys(v.value for v in versions):
            holders.setdefault(value, []).append(key)
    out = []
    for name, roles in holders.items():
        if name not in own and len(roles) < 2:
            continue
        said = [
            c.message_id
            for c in world.view.claims
            if c.predicate in roles and same(c.value, name) and c.subject == "persona"
        ]
        who = " and ".join(roles + (["the persona's own name"] if name in own else []))
        out.append(world.finding(RULE, sorted(said)[:1], f"{name!r} is {who}: one name for two people"))
    return out
