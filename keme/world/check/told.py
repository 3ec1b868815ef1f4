"""A persona fact is news once: after a user message tells the assistant a fact ("For future reference:
I'm allergic to eggs", 「对了忘了说，我对鸡蛋过敏」), a second message telling the same fact as news reads
as if the assistant had forgotten it. Told as news: a user message states the fact (its claim) in a
clause that carries a news cue (keme/world/cues/<lang>.yaml `news`)."""

from __future__ import annotations

from keme.models import Claim, Message
from keme.world.check.base import Finding, World, quote

RULE = "told"


def check(world: World) -> list[Finding]:
    out = []
    first: dict[tuple[str, str], Message] = {}
    for _, message in world.said(("user",)):
        for claim in _facts(world, message):
            fact = (claim.predicate, claim.value)
            if not _news(world, message.content, claim.value):
                continue
            if fact not in first:
                first[fact] = message
                continue
            earlier = first[fact]
            out.append(
                world.finding(
                    RULE,
                    [earlier.id, message.id],
                    f"{claim.predicate} = {claim.value!r} told as news again: {quote(message.content)} "
                    f"after {quote(earlier.content)}",
                )
            )
    return out


def _facts(world: World, message: Message) -> list[Claim]:
    """The persona attribute values the message states as held when it is said, each once (a change
    names the value left behind: that is not told as held)."""
    seen: dict[tuple[str, str], Claim] = {}
    for claim in world.claims_of.get(message.id, []):
        if claim.subject != "persona" or claim.speaker != "user":
            continue
        if _held(world, claim.predicate, message) == claim.value:
            seen.setdefault((claim.predicate, claim.value), claim)
    return list(seen.values())


def _held(world: World, key: str, message: Message) -> str | None:
    dimension, _, name = key.partition(".")
    attribute = world.view.persona.dimensions.get(dimension, {}).get(name)
    return attribute.value_at(message.timestamp) if attribute is not None else None


def _news(world: World, text: str, value: str) -> bool:
    """Whether the clause that says `value` presents it as news."""
    clauses = [c for c in world.clauses(text) if value.lower() in c.lower()] or [text]
    return any(world.cues.any(world.cues.news, c) for c in clauses)
