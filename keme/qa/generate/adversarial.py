"""Questions without an answer in the data (abstentions) and questions on a false premise
(adversarials).
"""

from __future__ import annotations

import random
from collections.abc import Sequence
from datetime import date, timedelta
from decimal import Decimal

from keme.models import Query, Quote
from keme.models.attributes import claim_predicate
from keme.qa import draft as d
from keme.qa.blind import simple_ratio
from keme.qa.draft import Draft
from keme.qa.generate.atoms import SOCIAL_NAMES, _queries
from keme.qa.generate.composition import ACCOUNT_CATEGORIES, FEE_MERCHANTS, _event_query
from keme.qa.generate.context import Gen
from keme.qa.generate.episode import _matching_system
from keme.qa.ops import NEAR_DAYS
from keme.text import lang as fmt
from keme.text import resources


def abstentions(g: Gen, node: str) -> list[Draft]:
    persona = g.world.persona
    res = resources.get(g.lang)
    drafts: list[Draft] = []
    final = d.final_time(g.world)
    answer = g.say.answer("abstain")

    for key in ("pets.pet_name", "social_circle.partner"):
        if not persona.attribute(key).versions:
            drafts.append(
                Draft(
                    "abstention",
                    f"abs.{key}",
                    g.say.question(f"abs.{key}", g.rng),
                    answer,
                    d.abstain(),
                    d.proof("absent", [], key=key, terms=""),
                    final,
                    1,
                    node,
                    queries=[Query(subject="persona", target=claim_predicate(key), expect=[])],
                )
            )
    pools = res.pools
    sources = {
        "abs.merchant": ("merchant", shop_merchants(g)),
        "abs.destination": ("destination", [x.name for x in pools.destinations]),
        "abs.project": ("project", pools.lists["projects"]),
        "abs.person": ("person", friend_names(g)),
    }
    for generator, (slot, candidates) in sources.items():
        for value in unseen_sample(g, candidates, 6):
            drafts.append(
                Draft(
                    "abstention",
                    generator,
                    g.say.question(generator, g.rng, **{slot: value}),
                    answer,
                    d.abstain(),
                    d.proof("absent", [], terms=value),
                    final,
                    1,
                    node,
                    # nothing in the ledger or the text names it: no day it was talked about
                    queries=[Query(subject="any", target="said_on", where={slot: value}, expect=[])],
                )
            )
    return drafts


# bill categories that are not shops one goes to ("How much did I spend at One Medical?" is no question
# about a shop): accounts, fees, care and travel bookings
NOT_SHOPS = ACCOUNT_CATEGORIES | {"transport", "travel", "health", "medical"}


def unseen_sample(g: Gen, candidates: list[str], k: int) -> list[str]:
    """Up to k candidates the persona's chats never mention, in random order (checked lazily: the
    Chinese name pool holds thousands)."""
    picked: list[str] = []
    for value in g.rng.sample(candidates, len(candidates)):
        if len(picked) == k:
            break
        if not g.world.mentions(value):
            picked.append(value)
    return picked


def shop_merchants(g: Gen) -> list[str]:
    """Shops of the persona's own country and kind: the merchants of the shop categories the persona
    pays in (a coffee chain for a persona who buys coffee), never a utility, a fee or a clinic."""
    categories = resources.get(g.lang).anchors.bill.categories
    spent = {f.context.get("category_value") for f in g.world.facts if f.kind == "bill"}
    return sorted(
        {
            m
            for key, c in categories.items()
            if key not in NOT_SHOPS and c.label in spent
            for m in c.merchants
            if "{" not in m and m not in FEE_MERCHANTS
        }
    )


def friend_names(g: Gen) -> list[str]:
    """Names a friend of the persona would have, as the persona's chats name friends: a given name in
    English, a full name of the Chinese pools in Chinese (every family and given name, so a never-said
    name is no rarer than the friends' own)."""
    names = resources.get(g.lang).pools.names
    given = sorted(set(names.given_female + names.given_male))
    if g.lang != "zh":
        return given
    return [names.format.format(family=f, given=n) for f in names.family for n in given]


def adversarials(g: Gen, node: str, atoms: list[Draft]) -> list[Draft]:
    persona = g.world.persona
    res = resources.get(g.lang)
    drafts: list[Draft] = []
    final = d.final_time(g.world)
    app = res.anchors.bill.app_name
    bills = [a for a in atoms if a.subtype == "bill.amount"]
    active = active_days(g)
    for atom in g.rng.sample(bills, min(12, len(bills))):
        fact = atom.fact
        merchant = fact.context["merchant"]
        true_day = fact.when.date()
        if g.rng.random() < 0.5:
            false_day = false_bill_day(g, app, merchant, true_day, active)
            if false_day is None:
                continue
            slots = {
                "merchant": merchant,
                "false_date": g.day(false_day),
                "amount": fact.value,
                "date": g.day(true_day),
            }
            quotes = [
                Quote(message_id=fact.message_id, text=merchant, on=true_day),
                Quote(message_id=fact.message_id, text=fact.value),
            ]
            drafts.append(
                Draft(
                    "adversarial",
                    "adv.bill_date",
                    g.say.question("adv.bill_date", g.rng, **slots),
                    g.say.answer("adv.bill_date", **slots),
                    d.day_spec(true_day, aliases=[g.day(true_day)]),
                    d.proof(
                        "premise",
                        quotes,
                        base="date",
                        false=false_day.isoformat(),
                        check="no_record_on",
                        app=app,
                        needle=merchant,
                    ),
                    final,
                    2,
                    node,
                    sub=[atom],
                    queries=_queries(_event_query(g, fact, "verb")),
                )
            )
        else:
            true_amount = Decimal(fact.context["amount_value"])
            label = fact.context.get("category_value", "")
            category = next((c for c in res.anchors.bill.categories.values() if c.label == label), None)
            if category is None:
                continue
            others = category_charges(g, label, true_amount)
            false_amount = false_charge(true_amount, others, category.amount, g.rng)
            if false_amount is None:
                continue
            slots = {
                "merchant": merchant,
                "false_amount": fmt.format_money(false_amount, g.lang),
                "amount": fact.value,
                "date": g.day(true_day),
            }
            quotes = [
                Quote(message_id=fact.message_id, text=fact.value),
                Quote(message_id=fact.message_id, text=merchant, on=true_day),
            ]
            drafts.append(
                Draft(
                    "adversarial",
                    "adv.bill_amount",
                    g.say.question("adv.bill_amount", g.rng, **slots),
                    g.say.answer("adv.bill_amount", **slots),
                    d.number(true_amount, unit=fmt.CURRENCY[g.lang], aliases=[fact.value]),
                    d.proof(
                        "premise",
                        quotes,
                        base="value",
                        parse="money",
                        false=slots["false_amount"],
                        check="amount_differs",
                    ),
                    final,
                    2,
                    node,
                    sub=[atom],
                    queries=list(atom.queries),
                )
            )
    companions = [a for a in atoms if a.subtype == "rel.companion"]
    people = [persona.value_at(k, persona.end) for k in SOCIAL_NAMES] + [
        d2 for d2 in res.pools.names.given_female[:5]
    ]
    for atom in g.rng.sample(companions, min(6, len(companions))):
        fact = atom.fact
        sessions = {
            s.id
            for s in g.world.sessions
            if s.event_id in g.world.events  # filler belongs to no episode
            and g.world.events[s.event_id].parent_id == g.world.events[fact.event_id].parent_id
        }
        texts = [m.content for s in sessions for m in g.world.sessions_by_id[s].messages]
        false = next((p for p in people if p and p != fact.value and not any(p in t for t in texts)), None)
        if false is None:
            continue
        slots = {
            "false_person": false,
            "destination": fact.context.get("destination", ""),
            "companion": fact.value,
        }
        drafts.append(
            Draft(
                "adversarial",
                "adv.companion",
                g.say.question("adv.companion", g.rng, **slots),
                g.say.answer("adv.companion", **slots),
                d.entity(fact.value),
                d.proof(
                    "premise",
                    [d.quote(fact)] + atom.proof.quotes[1:],
                    base="value",
                    false=false,
                    check="not_in_sessions",
                ),
                final,
                2,
                node,
                sub=[atom],
                queries=list(atom.queries),
            )
        )
    for key, generator, slot, answer_slot in (
        ("career.company", "adv.company", "false_company", "company"),
        ("home.city", "adv.city", "false_city", "city"),
    ):
        attr = persona.attribute(key)
        version = attr.versions[-1] if attr.versions else None
        if version is None or not version.evidence:
            continue
        held = {v.value for v in attr.versions}
        pool = (
            [c.name for c in res.pools.cities] if key == "home.city" else res.persona.attributes[key].values
        )
        false = next((v for v in g.rng.sample(pool, len(pool)) if v not in held), None)
        if false is None:
            continue
        slots = {slot: false, answer_slot: version.value}
        drafts.append(
            Draft(
                "adversarial",
                generator,
                g.say.question(generator, g.rng, **slots),
                g.say.answer(generator, **slots),
                d.entity(version.value),
                d.proof(
                    "premise",
                    [Quote(message_id=version.evidence[0], text=version.value)],
                    base="attribute",
                    key=key,
                    false=false,
                    check="never_value",
                ),
                final,
                2,
                node,
                queries=[
                    Query(subject="persona", target=claim_predicate(key), expect=[version.value]),
                    Query(  # the false premise's value was never said to hold
                        subject="persona",
                        target=claim_predicate(key),
                        aggregate="history",
                        expect=[v.value for v in attr.versions if v.evidence],
                    ),
                ],
            )
        )
    return drafts


# ---------------------------------------------------------------- plausible false values
def active_days(g: Gen) -> set[date]:
    """The days the user wrote to the assistant: a false date on one of them reads like any other day of
    the persona's (a day off the calendar of chats would tell itself apart)."""
    return {m.timestamp.date() for s in g.world.sessions for m in s.messages if m.role == "user"}


def false_bill_day(g: Gen, app: str, merchant: str, true_day: date, active: set[date]) -> date | None:
    """A day the persona was active, up to a week either side of the payment, with no payment at the
    merchant and the true one the only one near it (so the correction names it). Any offset within the
    week is as likely as any other: a false date is not always 1-3 days off."""
    start, end = g.world.persona.start.date(), g.world.persona.end.date()
    week = timedelta(days=NEAR_DAYS)
    candidates = [
        day
        for day in sorted(active)
        if day != true_day
        and abs((day - true_day).days) <= NEAR_DAYS
        and start <= day <= end  # "December 31" of the year before reads as this year's
        and not _matching_system(g, app, merchant, day, day)
        and len(_matching_system(g, app, merchant, day - week, day + week)) == 1
    ]
    return g.rng.choice(candidates) if candidates else None


def category_charges(g: Gen, label: str, true_amount: Decimal) -> list[Decimal]:
    """The persona's other real charges of the category (by its label on the record), the true one left
    out: a false amount drawn from them is one the persona really pays for such things."""
    amounts = {
        Decimal(f.context["amount_value"])
        for f in g.world.facts
        if f.kind == "bill" and f.context.get("amount_value") and f.context.get("category_value") == label
    }
    return sorted(amounts - {true_amount})


def plausible_false(true_amount: Decimal, candidate: Decimal) -> bool:
    """A false amount a reader cannot tell from the true one by arithmetic: not the true one, at least
    15 % away from it (a cent off reads as a typo), and not a simple ratio of it (0.5x, 1.5x, 2x, 3x,
    4/3x ... would give the true amount back from the question alone)."""
    gap = abs(candidate - true_amount)
    return (
        candidate > 0
        and gap >= max(true_amount * Decimal("0.15"), Decimal(1))
        and not simple_ratio(candidate, true_amount)
    )


def false_charge(
    true_amount: Decimal, others: Sequence[Decimal], bounds: tuple[float, float], rng: random.Random
) -> Decimal | None:
    """A false amount for a payment: half the time another real charge of its category, otherwise a draw
    from the category's range (kept within a third to three times the true one, so it stays a plausible
    price for the same thing), at the true amount's precision (whole yuan stay whole)."""
    fitting = [o for o in others if plausible_false(true_amount, o)]
    if fitting and rng.random() < 0.5:
        return rng.choice(fitting)
    low = max(Decimal(str(bounds[0])), true_amount / 3)
    high = min(Decimal(str(bounds[1])), true_amount * 3)
    step = Decimal(1) if true_amount == true_amount.to_integral_value() else Decimal("0.01")
    for _ in range(40):
        if high <= low:
            break
        candidate = Decimal(str(rng.uniform(float(low), float(high)))).quantize(step)
        if plausible_false(true_amount, candidate):
            return candidate
    return rng.choice(fitting) if fitting else None
