"""What is said together goes together: catalog-backed claims of one message or one episode pair as the
catalog allows (`compatible(...) is False` is a violation, an unknown item is not), catalog items
named in one message do too, and a dish is not said with another cooking method's words."""

from __future__ import annotations

import re

from keme.world.check.base import Finding, World, quote

RULE = "catalog"

# relation -> (left predicate, right predicate), the shared predicate names
PREDICATES: dict[str, tuple[str, str]] = {
    "activity@venue": ("activity", "venue"),
    "dish~method": ("dish", "cooking_method"),
    "condition~remedy": ("condition", "remedy"),
    "product@store": ("product", "store"),
    "merchant~category": ("merchant", "expense_category"),
}


def check(world: World) -> list[Finding]:
    return _claims(world) + _named(world) + _methods(world)


def _claims(world: World) -> list[Finding]:
    """Pairs from the same message first, then from the same episode and subject."""
    out = []
    seen: set[tuple[str, str, str]] = set()
    scopes: dict[
        str, list[tuple[str, str, str, str]]
    ] = {}  # scope -> (subject, predicate, value, message id)
    for session, message in world.messages:
        episode = world.episode(session)
        for claim in world.claims_of.get(message.id, []):
            if claim.predicate == "condition" and claim.subject.startswith("object:"):
                continue  # an object's state, not an illness
            item = (claim.subject, claim.predicate, claim.value, message.id)
            scopes.setdefault(f"m:{message.id}", []).append(item)
            scopes.setdefault(f"e:{episode.id if episode else session.id}", []).append(item)
    for scope, items in scopes.items():
        for relation, (left_p, right_p) in PREDICATES.items():
            for subject, predicate, left, left_id in items:
                if predicate != left_p:
                    continue
                for other_subject, other_predicate, right, right_id in items:
                    if other_predicate != right_p or (scope[0] == "e" and other_subject != subject):
                        continue
                    key = (relation, left, right)
                    if key in seen or world.catalog.compatible(relation, left, right) is not False:
                        continue
                    seen.add(key)
                    ids = sorted({left_id, right_id})
                    out.append(
                        world.finding(
                            RULE,
                            ids,
                            f"{left_p} {left!r} and {right_p} {right!r} do not go together ({relation}; "
                            f"{', '.join(ids)})",
                        )
                    )
    return out


def _mentions(text: str, names: frozenset[str]) -> list[str]:
    """Catalog names said in `text`, longest first, a shorter one inside a longer one not counted."""
    found: list[str] = []
    lowered = text.casefold()
    for name in sorted(names, key=len, reverse=True):
        key = name.casefold()
        if not key:
            continue
        pattern = re.escape(key)
        if key.isascii():
            pattern = rf"\b{pattern}\b"
        if re.search(pattern, lowered) and not any(key in f.casefold() for f in found):
            found.append(name)
    return found


def _named(world: World) -> list[Finding]:
    """Catalog items named in one message: a left item none of whose named partners is compatible."""
    out = []
    for _, message in world.said(("user", "assistant")):
        for relation in PREDICATES:
            lefts, rights = world.catalog.known[relation]
            said_left = _mentions(message.content, lefts)
            said_right = _mentions(message.content, rights) if said_left else []
            for left in said_left:
                verdicts = [world.catalog.compatible(relation, left, right) for right in said_right]
                if verdicts and all(v is False for v in verdicts):
                    out.append(
                        world.finding(
                            RULE,
                            [message.id],
                            f"{message.id} puts {left!r} with "
                            f"{' / '.join(repr(r) for r in said_right)}, which "
                            f"do not go together ({relation}): {quote(message.content)}",
                        )
                    )
    return out


def _methods(world: World) -> list[Finding]:
    """A dish named with the words of a cooking method that is not its own ("清蒸鲈鱼" with 翻炒)."""
    cues = world.cues
    dishes = {d.name: d.method for d in world.catalog.dishes}
    out = []
    for _, message in world.said(("user", "assistant")):
        for dish in _mentions(message.content, frozenset(dishes)):
            method = dishes[dish]
            rest = message.content.replace(dish, " ")
            if cues.any(cues.methods.get(method, []), rest):
                continue  # its own method is said too: the other words are likely about another dish
            for other, words in cues.methods.items():
                if other == method:
                    continue
                found = cues.search(words, rest)
                if found:
                    out.append(
                        world.finding(
                            RULE,
                            [message.id],
                            f"{message.id} cooks {dish!r} ({method}) with “{found.group(0)}” ({other}): "
                            f"{quote(message.content)}",
                        )
                    )
                    break
    return out
