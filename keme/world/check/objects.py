"""Objects and events hold together: a party's size matches the split of its bill, an object that broke
works again only after a repair, a charge is either for someone else or shared, and a health bill is
not split with a friend."""

from __future__ import annotations

from keme.models import Claim, Session
from keme.world.check.base import Finding, World, quote

RULE = "objects"
BAD = {"broken", "worn"}
MENDED = {"repaired", "replaced"}


def check(world: World) -> list[Finding]:
    return _party(world) + _conditions(world) + _condition_text(world) + _purposes(world)


def _count(world: World, patterns: list[str], text: str) -> tuple[int, str] | None:
    found = world.cues.search(patterns, text)
    if found is None:
        return None
    number = world.cues.number(found.group("n"))
    return (number, found.group(0)) if number is not None else None


def _party(world: World) -> list[Finding]:
    """Within one episode, every head count (claims `party_size`, "table for 8", "split 5 ways") agrees."""
    by_episode: dict[str, list[tuple[int, str, str]]] = {}
    for session, message in world.messages:
        episode = world.episode(session)
        key = episode.id if episode is not None else session.id
        counts = by_episode.setdefault(key, [])
        for claim in world.claims_of.get(message.id, []):
            if claim.predicate == "party_size" and claim.value.isdigit():
                counts.append((int(claim.value), message.id, f"party_size {claim.value}"))
        if message.role == "system":
            continue
        for clause in world.clauses(message.content):
            for patterns in (world.cues.party_size, world.cues.split):
                said = _count(world, patterns, clause)
                if said is not None and said[0] > 1:
                    counts.append((said[0], message.id, said[1]))
    out = []
    for episode_id, counts in by_episode.items():
        sizes = {n for n, _, _ in counts}
        if len(sizes) > 1:
            first = counts[0]
            other = next(c for c in counts if c[0] != first[0])
            out.append(
                world.finding(
                    RULE,
                    [first[1], other[1]],
                    f"{episode_id}: {first[0]} people (“{first[2]}”, {first[1]}) but {other[0]} "
                    f"(“{other[2]}”, {other[1]})",
                )
            )
    return out


def _conditions(world: World) -> list[Finding]:
    """An object claimed broken or worn is claimed working again only after a repair or a replacement."""
    by_object: dict[str, list[Claim]] = {}
    for claim in world.view.claims:
        if claim.subject.startswith("object:") and claim.predicate == "condition":
            by_object.setdefault(claim.subject, []).append(claim)
    out = []
    for subject, claims in by_object.items():
        claims.sort(key=lambda c: (c.valid_from, c.id))
        bad: Claim | None = None
        for claim in claims:
            if claim.value in BAD:
                bad = bad or claim
            elif claim.value in MENDED:
                bad = None
            elif claim.value == "working" and bad is not None:
                out.append(
                    world.finding(
                        RULE,
                        [bad.message_id, claim.message_id],
                        f"{subject[7:]} is {bad.value} in {bad.message_id} ({quote(bad.said, 60)}) and "
                        f"working in {claim.message_id} ({quote(claim.said, 60)}) with no repair between",
                    )
                )
                bad = None
    return out


def _condition_text(world: World) -> list[Finding]:
    """The user says an object gave out, and later that it still works, with no repair said between."""
    cues = world.cues
    out = []
    for name, nouns in cues.objects.items():
        broke: tuple[str, str] | None = None
        for session in world.view.sessions:
            named = False  # the object was named earlier in the session: "it" may be it
            for message in session.messages:
                if message.role != "user":
                    named = named or cues.any(nouns, message.content)
                    continue
                in_message = cues.any(nouns, message.content)
                for clause in world.clauses(message.content):
                    if not (
                        cues.any(nouns, clause)
                        or ((in_message or named) and not _names_other(cues, name, clause))
                    ):
                        continue
                    if cues.any(cues.repaired, clause):
                        broke = None
                    elif cues.any(cues.broken, clause) and cues.any(nouns, clause):
                        broke = broke or (message.id, message.content)
                    elif cues.any(cues.working, clause) and broke is not None:
                        out.append(
                            world.finding(
                                RULE,
                                [broke[0], message.id],
                                f"the {name} gave out in {broke[0]} ({quote(broke[1], 60)}) and works in "
                                f"{message.id} ({quote(message.content, 60)}) with no repair between",
                            )
                        )
                        broke = None
                named = named or in_message
    return out


def _names_other(cues, name: str, clause: str) -> bool:
    return any(cues.any(nouns, clause) for other, nouns in cues.objects.items() if other != name)


def _purposes(world: World) -> list[Finding]:
    """A charge is own, for someone else or shared, not two of them; a health charge is not shared."""
    said: dict[str, dict[str, str]] = {}  # anchor id -> purpose -> message id
    for claim in world.view.claims:
        if claim.subject.startswith("anchor:") and claim.predicate == "purpose":
            said.setdefault(claim.subject[7:], {}).setdefault(claim.value, claim.message_id)
    for session in world.view.sessions:
        if session.anchor_id is None:
            continue
        for purpose, message_id in _purpose_text(world, session).items():
            said.setdefault(session.anchor_id, {}).setdefault(purpose, message_id)
    out = []
    for anchor_id, purposes in said.items():
        anchor = world.view.anchors.get(anchor_id)
        label = anchor_id
        if anchor is not None and anchor.record.kind == "bill":
            label = f"{anchor_id} ({anchor.record.merchant}, {anchor.record.amount} {anchor.record.currency})"
        if "for_someone" in purposes and "shared" in purposes:
            out.append(
                world.finding(
                    RULE,
                    [purposes["for_someone"], purposes["shared"]],
                    f"charge {label} is for someone else ({purposes['for_someone']}) and shared "
                    f"({purposes['shared']})",
                )
            )
        if "shared" in purposes and _health(world, anchor_id):
            out.append(
                world.finding(
                    RULE,
                    [purposes["shared"]],
                    f"health charge {label} is split with others ({purposes['shared']})",
                )
            )
    return out


def _purpose_text(world: World, session: Session) -> dict[str, str]:
    cues = world.cues
    out: dict[str, str] = {}
    anchor = world.view.anchors.get(session.anchor_id or "")
    bill = anchor.record if anchor is not None and anchor.record.kind == "bill" else None
    for message in session.messages:
        if message.role != "user":
            continue
        # a purpose is the charge's when the session is about the charge or the message names it (a
        # dinner split said in a session that also shows an unrelated bill is the dinner's)
        leaf = world.leaf(session)
        kind = leaf.kind if leaf is not None else session.pattern
        about = anchor is not None and kind == f"anchor_{anchor.record.kind}"
        if bill is not None and not about:
            about = bill.merchant in message.content or str(bill.amount) in message.content
        if not about:
            continue
        # a message that states something else (a persona fact: "all my eggs in one bank, should I split
        # it?") speaks of that, not of the charge
        subjects = {c.subject for c in world.claims_of.get(message.id, [])}
        if subjects and anchor is not None and f"anchor:{anchor.id}" not in subjects:
            continue
        for clause in world.clauses(message.content):
            if cues.any(cues.purpose_not_shared, clause):
                continue
            if cues.any(cues.purpose_for_someone, clause):
                out.setdefault("for_someone", message.id)
            elif cues.any(cues.purpose_shared, clause):
                out.setdefault("shared", message.id)
    return out


def _health(world: World, anchor_id: str) -> bool:
    categories = {c.casefold() for c in world.cues.health_categories}
    for claim in world.view.claims:
        if claim.subject == f"anchor:{anchor_id}" and claim.predicate == "expense_category":
            if claim.value.casefold() in categories:
                return True
    anchor = world.view.anchors.get(anchor_id)
    return (
        anchor is not None
        and anchor.record.kind == "bill"
        and anchor.record.category.casefold() in categories
    )
