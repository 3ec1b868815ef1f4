"""What is said together goes together: catalog-backed claims of one message or one episode pair as the
catalog allows (`compatible(...) is False` is a violation, an unknown item is not), catalog items
named in one message do too, a dish is not said with another cooking method's words, and a fitness
goal fits the main sport in force when it is said, and an occasion fits whose it is."""

from __future__ import annotations

import functools
import re

from keme.models import Claim
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


# relation -> (left param keys, right param keys) of an episode's params (what the planner chose for it)
PARAMS: dict[str, tuple[tuple[str, ...], tuple[str, ...]]] = {
    "activity@venue": (("activity", "occasion"), ("place", "venue", "restaurant")),
    "dish~method": (("dish",), ("method", "cooking_method")),
    "condition~remedy": (("symptom", "condition"), ("remedy",)),
    "product@store": (("product", "gift"), ("store", "shop")),
    "merchant~category": (("merchant",), ("expense_category", "category")),
}


def check(world: World) -> list[Finding]:
    out = _claims(world) + _params(world) + _bills(world) + _named(world) + _methods(world)
    out += _trips(world) + _charge_kinds(world) + _goals(world) + _seasons(world) + _occasions(world)
    return out + _dishes(world)


def _charge_kinds(world: World) -> list[Finding]:
    """What a user says a charge was fits the charge: a treat ("worth it", "开心就好") is of a category
    that can be one, not a broadband bill; something bought is not a bill paid on a schedule; a place one
    goes to often is a merchant paid in person."""
    out = []
    for claim in world.view.claims:
        if claim.predicate not in ("treat", "paid_in_person", "bought") or not claim.subject.startswith(
            "anchor:"
        ):
            continue
        anchor = world.view.anchors.get(claim.subject.removeprefix("anchor:"))
        if anchor is None or anchor.record.kind != "bill":
            continue
        record = anchor.record
        if claim.predicate == "treat":
            category = world.catalog.category(record.category)
            if category is None or category.treat:
                continue
            what = f"calls the {record.category} charge at {record.merchant} a treat"
        elif claim.predicate == "bought":
            category = world.catalog.category(record.category)
            if category is None or not category.recurring:
                continue
            what = f"speaks of buying something with the {record.category} bill from {record.merchant}"
        else:
            if world.catalog.in_person(record.merchant) is not False:
                continue
            what = f"speaks of going to {record.merchant}, a merchant paid from anywhere"
        out.append(world.finding(RULE, [claim.message_id], f"{claim.message_id} {what} ({anchor.id})"))
    return out


def _trips(world: World) -> list[Finding]:
    """A trip lasts at least the nights its destination takes (catalog `destinations`: a flight to another
    continent is not an overnight)."""
    out = []
    for trip in world.trips:
        nights = world.catalog.nights(trip.city)
        stayed = (trip.last - trip.first).days
        if nights is None or stayed >= nights[0]:
            continue
        said = [
            s.messages[0].id
            for s in world.view.sessions
            if s.messages and (episode := world.episode(s)) is not None and episode.id == trip.event.id
        ]
        reach = next(d.reach for d in world.catalog.destinations if d.name == trip.city).replace("_", "-")
        out.append(
            world.finding(
                RULE,
                said[:1],
                f"the {trip.city} trip {trip.first}–{trip.last} ({trip.event.id}) lasts {stayed} night(s); a "
                f"{reach} destination takes at least {nights[0]}",
            )
        )
    return out


def _seasons(world: World) -> list[Finding]:
    """A seasonal occasion is said in its months or the month after (a recap of the December party on
    January 2): no holiday party in June."""
    seasonal = {o.name: o for o in world.catalog.occasions if o.months}
    out = []
    for session, message in world.messages:
        for claim in world.claims_of.get(message.id, []):
            occasion = seasonal.get(claim.value) if claim.predicate == "occasion" else None
            month = message.timestamp.month
            if occasion is not None and not (
                occasion.in_season(month) or occasion.in_season((month - 2) % 12 + 1)
            ):
                out.append(
                    world.finding(
                        RULE,
                        [message.id],
                        f"{message.id} speaks of the {occasion.name!r} in month {message.timestamp.month} "
                        f"(it falls in {', '.join(map(str, occasion.months))}): {quote(message.content)}",
                    )
                )
                break
    return out


# one birthday (anniversary) of a person a year: two of them closer than this are in one year
YEAR_APART = 330
# the persona attributes that name a person, and the relation (catalog Occasion.people) each gives them
RELATIONS = {
    "social_circle.best_friend": "friend",
    "social_circle.sibling": "sibling",
    "social_circle.partner": "partner",
}


def _occasions(world: World) -> list[Finding]:
    """An occasion is one its person can have: no retirement party for the best friend since school, no
    anniversary for the new partner (anyone the persona names no relation for is an acquaintance); and
    one birthday (anniversary) of a person a year, not a party in March and a brunch in August."""
    by_name = {o.name: o for o in world.catalog.occasions}
    persons: dict[str, set[str]] = {}
    for claim in world.view.claims:
        if claim.predicate == "person":
            persons.setdefault(claim.subject, set()).add(claim.value)
    out = []
    persona = world.view.persona
    yearly: dict[tuple[str, str], dict[str, Claim]] = {}  # (person, yearly kind) -> event -> its first claim
    for claim in world.view.claims:
        occasion = by_name.get(claim.value) if claim.predicate == "occasion" else None
        if occasion is None:
            continue
        for person in sorted(persons.get(claim.subject, ())):
            role = next(
                (r for key, r in RELATIONS.items() if _value_at(persona, key, claim.valid_from) == person),
                "acquaintance",
            )
            if role not in occasion.people:
                out.append(
                    world.finding(
                        RULE,
                        [claim.message_id],
                        f"{claim.message_id} speaks of {person}'s {occasion.name!r}, and {person} is the "
                        f"persona's {role} (it is an occasion of: {', '.join(occasion.people)})",
                    )
                )
            if occasion.yearly:
                yearly.setdefault((person, occasion.yearly), {}).setdefault(claim.subject, claim)
    for (person, kind), events in yearly.items():
        held = sorted(events.values(), key=lambda c: c.valid_from)
        for earlier, later in zip(held, held[1:]):
            if (later.valid_from - earlier.valid_from).days < YEAR_APART:
                out.append(
                    world.finding(
                        RULE,
                        [earlier.message_id, later.message_id],
                        f"{person} has two {kind} occasions within a year: {earlier.value!r} "
                        f"({earlier.message_id}) and {later.value!r} ({later.message_id})",
                    )
                )
    return out


def _dishes(world: World) -> list[Finding]:
    """A dish the persona cooks goes with their allergy and diet then: no shrimp omelette for a shellfish
    allergy, no carbonara while dairy-free (catalog Dish.avoid)."""
    avoid = {d.name: set(d.avoid) for d in world.catalog.dishes if d.avoid}
    out = []
    persona = world.view.persona
    for claim in world.view.claims:
        ruled = avoid.get(claim.value) if claim.predicate == "dish" else None
        if not ruled:
            continue
        held = {_value_at(persona, key, claim.valid_from) for key in ("health.allergy", "diet.diet_type")}
        clash = sorted(ruled & {h for h in held if h})
        if clash:
            out.append(
                world.finding(
                    RULE,
                    [claim.message_id],
                    f"{claim.message_id} has the persona cook {claim.value!r}, which does not go with "
                    f"{' and '.join(clash)} (theirs then)",
                )
            )
    return out


def _value_at(persona, key: str, when) -> str | None:
    """The persona's value of `key` at `when`: who is the best friend, which allergy (None for a persona
    without that attribute at all)."""
    try:
        return persona.value_at(key, when)
    except KeyError:
        return None


SPORT = "sport.main_sport"


def _goals(world: World) -> list[Finding]:
    """A goal claim fits the main sport the persona holds at the message's time, or the one its episode
    sets (a new sport's plan may name its goal before the message that announces the sport)."""
    out = []
    try:
        sport = world.view.persona.attribute(SPORT)
    except KeyError:
        return out
    for session, message in world.messages:
        for claim in world.claims_of.get(message.id, []):
            if claim.predicate != "goal":
                continue
            held = sport.value_at(message.timestamp)
            episode = world.episode(session)
            sets = episode.params.get("set:" + SPORT) if episode is not None else None
            verdicts = [world.catalog.compatible("goal~sport", claim.value, s) for s in (held, sets) if s]
            if verdicts and all(v is False for v in verdicts):
                out.append(
                    world.finding(
                        RULE,
                        [message.id],
                        f"{message.id} sets the goal {claim.value!r} while the main sport is {held!r} "
                        f"(goal~sport): {quote(message.content)}",
                    )
                )
    return out


def _params(world: World) -> list[Finding]:
    """An episode's own choices pair as the catalog allows (a 剧本杀 planned at a zoo)."""
    out = []
    first_of: dict[str, str] = {}
    for session in world.view.sessions:
        episode = world.episode(session)
        if episode is not None and session.messages:
            first_of.setdefault(episode.id, session.messages[0].id)
    for event in world.view.graph.events:
        for relation, (left_keys, right_keys) in PARAMS.items():
            for left_key in left_keys:
                for right_key in right_keys:
                    left, right = event.params.get(left_key), event.params.get(right_key)
                    if (
                        left is None
                        or right is None
                        or world.catalog.compatible(relation, left, right) is not False
                    ):
                        continue
                    out.append(
                        world.finding(
                            RULE,
                            [first_of[event.id]] if event.id in first_of else [],
                            f"event {event.id} “{event.title}” puts {left_key} {left!r} with {right_key} "
                            f"{right!r}, which do not go together ({relation})",
                        )
                    )
    return out


def _bills(world: World) -> list[Finding]:
    """A bill's merchant charges in its category."""
    out = []
    for anchor in world.view.anchors.values():
        record = anchor.record
        if record.kind != "bill":
            continue
        if world.catalog.compatible("merchant~category", record.merchant, record.category) is False:
            holders = [
                m.id for _, m in world.messages if m.role == "system" and m.timestamp == anchor.timestamp
            ]
            out.append(
                world.finding(
                    RULE,
                    holders[:1],
                    f"bill {anchor.id} files {record.merchant!r} under {record.category!r} "
                    "(merchant~category)",
                )
            )
    return out


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
    for name in _longest_first(names):
        key = name.casefold()
        if not key:
            continue
        if key.isascii():
            # a capitalised name is a proper noun: "Away" the store is not "away" the word
            proper = name != key
            where = text if proper else lowered
            # the substring test rules out nearly every name before the word-boundary search
            hit = (name if proper else key) in where and _word(name if proper else key).search(where)
        else:
            hit = key in lowered
        if hit and not any(key in f.casefold() for f in found):
            found.append(name)
    return found


@functools.lru_cache(maxsize=64)
def _longest_first(names: frozenset[str]) -> list[str]:
    return sorted(names, key=lambda n: (-len(n), n))


@functools.lru_cache(maxsize=8192)
def _word(word: str) -> re.Pattern[str]:
    return re.compile(rf"\b{re.escape(word)}\b")


def _named(world: World) -> list[Finding]:
    """Catalog items named in one message: a left item none of whose named partners is compatible."""
    out = []
    for _, message in world.said(("user", "assistant")):
        # category labels are common words (交通 in 交通银行, "Dining" in a sentence): bills are held to the
        # catalog through their records and claims instead
        # and method words are single characters (炒, 拌 in 拌饭): dishes are held to their method by _methods
        # judged sentence by sentence: 「…喜欢街角那家咖啡馆。…送过羊绒围巾」 puts no scarf in the café
        for relation in (r for r in PREDICATES if r not in ("merchant~category", "dish~method")):
            lefts, rights = world.catalog.known[relation]
            named: set[str] = set()
            for clause in world.clauses(message.content):
                said_left = _mentions(clause, lefts)
                said_right = _mentions(clause, rights) if said_left else []
                for left in said_left:
                    verdicts = [world.catalog.compatible(relation, left, right) for right in said_right]
                    if verdicts and all(v is False for v in verdicts) and left not in named:
                        named.add(left)
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
    """A dish said with the words of a cooking method that is not its own ("清蒸鲈鱼" with 翻炒): in the
    message that names it, or in the assistant's steps of a session about that one dish."""
    dishes = {d.name: d.technique for d in world.catalog.dishes}
    names = frozenset(dishes)
    out = []
    for session in world.view.sessions:
        episode = world.episode(session)
        about = set(_mentions(" ".join(m.content for m in session.messages), names))
        if episode is not None and episode.params.get("dish") in dishes:
            about.add(episode.params["dish"])
        for message in session.messages:
            if message.role not in ("user", "assistant"):
                continue
            named = _mentions(message.content, names)
            said = {c.predicate for c in world.claims_of.get(message.id, [])}
            if world.claims_of and not said & {"steps", "cooking_method"}:
                continue  # with claims, method words count where the dish's steps or method are said
            if not named and message.role == "assistant" and len(about) == 1:
                named = sorted(about)  # the steps of the session's one dish
            for dish in named:
                found = _other_method(world, dishes[dish], message.content.replace(dish, " "))
                if found is not None:
                    out.append(
                        world.finding(
                            RULE,
                            [message.id],
                            f"{message.id} cooks {dish!r} ({dishes[dish]}) with “{found[1]}” ({found[0]}): "
                            f"{quote(message.content)}",
                        )
                    )
                    break
    return out


def _other_method(world: World, method: str, text: str) -> tuple[str, str] | None:
    """Another method's words in `text`, unless the dish's own method is said too (then the other words
    are likely about a side dish)."""
    cues = world.cues
    if cues.any(cues.methods.get(method, []), text):
        return None
    for other, words in cues.methods.items():
        if other != method:
            found = cues.search(words, text)
            if found:
                return other, found.group(0)
    return None
