"""Questions without an answer in the data (abstentions) and questions on a false premise
(adversarials).
"""

from __future__ import annotations

import random
import re
from collections.abc import Callable, Collection
from dataclasses import replace
from datetime import date, timedelta
from decimal import Decimal

from keme.models import Query, Quote
from keme.models.attributes import claim_predicate
from keme.qa import draft as d
from keme.qa.blind import simple_ratio
from keme.qa.draft import Draft
from keme.qa.generate.atoms import ACCOUNT_CATEGORIES, FEE_MERCHANTS, _queries
from keme.qa.generate.composition import _event_phrase, _event_query
from keme.qa.generate.context import Gen
from keme.qa.generate.episode import _matching_system
from keme.qa.ops import NEAR_DAYS
from keme.qa.phrasing import QuestionText
from keme.text import lang as fmt
from keme.text import resources
from keme.text.fill import fill
from keme.world.catalog import load_catalog

# what a never-mentioned name is asked in: the wordings of the answerable questions about a name of its
# kind (keme.qa.twins asks each trap in one whose answerable twins outnumber the traps), and the slots
# those wordings take it in
TWINS: dict[str, tuple[str, tuple[str, ...]]] = {
    "abs.merchant": ("merchant", ("bill.amount",)),
    "abs.destination": (
        "destination",
        ("trip.attraction", "trip.local_food", "rel.companion", "tmp.date_of", "tmp.days_ago"),
    ),
    "abs.project": ("project", ("work_project.deadline", "rel.colleague", "tmp.date_of", "tmp.days_ago")),
    "abs.person": (
        "person",
        ("rel.who_is", "social.restaurant", "social.gift", "tmp.date_of", "tmp.days_ago"),
    ),
}
# the talk a "when did I {event}?" twin asks about, per kind (keme/text/*/questions.yaml `events`)
TWIN_EVENTS = {"abs.destination": "trip", "abs.project": "work_project", "abs.person": "social"}
NAMES_PER_KIND = 8  # made-up names per kind, each asked about twice
ABSENT_ATTRIBUTES = ("pets.pet_name", "social_circle.partner")  # asked of a persona who has none
PREMISE_ATTRIBUTES = {"adv.company": "career.company", "adv.city": "home.city"}  # asked on a false present


def trap_templates(text: QuestionText, subtype: str) -> list[str]:
    """The templates a trap subtype is asked in: the answerable questions' of its kind (an absent
    attribute's questions, the questions about a name of its kind, the question about a previous value
    with a false present, the payment questions with a false date or amount)."""
    if subtype.startswith("abs.") and subtype[4:] in ABSENT_ATTRIBUTES:
        return list(dict.fromkeys(text.attributes[subtype[4:]].ask))
    if subtype in TWINS:
        return [t for key in TWINS[subtype][1] for t in text.questions[key]]
    if subtype in PREMISE_ATTRIBUTES:
        return list(text.attributes[PREMISE_ATTRIBUTES[subtype]].previous)
    return list(text.questions[subtype])


def abstentions(g: Gen, node: str) -> list[Draft]:
    """Questions about what the persona never had or never mentioned, worded as the answerable questions
    of their kind are: a pet's name where she has none, a shop, a trip, a project or a person no chat
    names. Each made-up name is asked about twice (a name asked about once would tell itself apart from
    the real ones, which recur), in two different wordings."""
    persona = g.world.persona
    drafts: list[Draft] = []
    final = d.final_time(g.world)
    answer = g.say.answer("abstain")
    for key in ABSENT_ATTRIBUTES:
        if not persona.attribute(key).versions:
            wordings = trap_templates(g.say.text, f"abs.{key}")
            drafts.append(
                Draft(
                    "abstention",
                    f"abs.{key}",
                    g.rng.choice(wordings),
                    answer,
                    d.abstain(),
                    d.proof("absent", [], key=key, terms=""),
                    final,
                    1,
                    node,
                    queries=[Query(subject="persona", target=claim_predicate(key), expect=[])],
                    wordings=wordings,
                )
            )
    pools = resources.get(g.lang).pools
    sources = {
        "abs.merchant": shop_merchants(g),
        "abs.destination": [x.name for x in pools.destinations],
        "abs.project": pools.lists["projects"],
        "abs.person": friend_names(g),
    }
    days = sorted(active_days(g))
    for subtype, candidates in sources.items():
        slot, keys = TWINS[subtype]
        kind_words = load_catalog(g.lang).confusable_with if subtype == "abs.project" else (lambda name: [])
        for value in unseen_sample(g, candidates, NAMES_PER_KIND, kind_words) if days else []:
            # two questions, not one in two wordings: two kinds of question, or one on two days
            families = g.rng.sample(keys, 2) if len(keys) > 1 else [keys[0], keys[0]]
            for n, key in enumerate(families):
                slots = {
                    slot: value,
                    "name": value,
                    "occasion": g.rng.choice(pools.lists["occasions"]),
                    "date": g.day(g.rng.choice(days)),
                }
                if subtype in TWIN_EVENTS:
                    slots["event"] = g.say.event(TWIN_EVENTS[subtype], "verb", **slots) or ""
                wordings = g.say.wordings(key, **slots)
                drafts.append(
                    Draft(
                        "abstention",
                        subtype,
                        wordings[n % len(wordings)],
                        answer,
                        d.abstain(),
                        d.proof("absent", [], terms=value),
                        final,
                        1,
                        node,
                        # nothing in the ledger or the text names it: no day it was talked about
                        queries=[Query(subject="any", target="said_on", where={slot: value}, expect=[])],
                        wordings=wordings,
                        group=f"{subtype}:{value}",
                    )
                )
    return drafts


# bill categories that are not shops one goes to ("How much did I spend at One Medical?" is no question
# about a shop): accounts, fees, care and travel bookings
NOT_SHOPS = ACCOUNT_CATEGORIES | {"transport", "travel", "health", "medical"}


def unseen_sample(
    g: Gen, candidates: list[str], k: int, confusable: Callable[[str], list[str]] = lambda name: []
) -> list[str]:
    """Up to k candidates the persona's chats never mention, not even by a short name nor by a word of
    their kind (`confusable`: "training" for a made-up "new-hire training program" where she talked about
    her onboarding), in random order (checked lazily: the Chinese name pool holds thousands)."""
    picked: list[str] = []
    for value in g.rng.sample(candidates, len(candidates)):
        if len(picked) == k:
            break
        if not any(g.world.mentions(part) for part in [*name_parts(value, g.lang), *confusable(value)]):
            picked.append(value)
    return picked


# words a shop's name shares with any other of its kind: "Cinemas" tells no cinema from another
GENERIC_NAME_WORDS = frozenset(
    "cinemas cinema center centre fitness market store stores coffee kitchen grill house club studio "
    "company group bank foods restaurant cafe bakery pharmacy salon services airlines supermarket".split()
)


def name_parts(value: str, lang: str) -> list[str]:
    """The name and what it is also called by: "the Regal downtown" names Regal Cinemas, 「万科」 names
    万科物业, so a made-up name is checked by its distinctive words too (the whole name for a short one)."""
    if lang == "zh":
        return [value, value[:2]] if len(value) >= 4 else [value]
    words = [w for w in re.findall(r"[A-Z][\w'&-]{3,}", value) if w.lower() not in GENERIC_NAME_WORDS]
    return [value, *words] if len(value.split()) > 1 else [value]


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


BILL_TRAPS_PER_MONTH = 5  # payments asked about on a false date or amount, per month of the trajectory


def adversarials(g: Gen, node: str, atoms: list[Draft]) -> list[Draft]:
    persona = g.world.persona
    res = resources.get(g.lang)
    drafts: list[Draft] = []
    final = d.final_time(g.world)
    app = res.anchors.bill.app_name
    bills = [a for a in atoms if a.subtype == "bill.amount"]
    active = active_days(g)
    months = max(1, round((persona.end - persona.start).days / 30.4))
    paid = all_charges(g)  # every amount she was charged: no false amount is one of them
    for atom in g.rng.sample(bills, min(BILL_TRAPS_PER_MONTH * months, len(bills))):
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
                    wordings=g.say.wordings("bill.amount", **(slots | {"date": slots["false_date"]})),
                )
            )
        else:
            true_amount = Decimal(fact.context["amount_value"])
            label = fact.context.get("category_value", "")
            category = next((c for c in res.anchors.bill.categories.values() if c.label == label), None)
            if category is None:
                continue
            # never an amount she really paid anywhere: "that was on another day" or "that was the flight,
            # at China Eastern" would answer it too
            false_amount = false_charge(true_amount, paid, category.amount, g.rng)
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
                    wordings=g.say.wordings("bill.method", **(slots | {"amount": slots["false_amount"]})),
                    fallback=_when_wordings(g, fact, slots) if _paid_once(g, merchant) else [],
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
        # "Which city did I live in before Lisbon?" of a persona who never lived there: the wording of the
        # answerable question of one who moved, on a false present
        wordings = [fill(t, {"current": false}) for t in trap_templates(g.say.text, generator)]
        drafts.append(
            Draft(
                "adversarial",
                generator,
                g.rng.choice(wordings),
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
                wordings=wordings,
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


def all_charges(g: Gen) -> set[Decimal]:
    """Every amount the persona was charged, anywhere."""
    return {
        Decimal(f.context["amount_value"])
        for f in g.world.facts
        if f.kind == "bill" and f.context.get("amount_value")
    }


def _paid_once(g: Gen, merchant: str) -> bool:
    """Whether the persona's records hold one payment to `merchant` in all."""
    return sum(1 for a in g.world.anchors.values() if a.app == "bill" and a.record.merchant == merchant) == 1


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
    true_amount: Decimal, paid: Collection[Decimal], bounds: tuple[float, float], rng: random.Random
) -> Decimal | None:
    """A false amount for a payment: a draw from the category's range (kept within a third to three times
    the true one, so it stays a plausible price for the same thing), at the true amount's precision (whole
    yuan stay whole), and never an amount in `paid` (what she really paid anywhere: a real amount of
    another payment makes the merchant the false part, and the question has two corrections)."""
    low = max(Decimal(str(bounds[0])), true_amount / 3)
    high = min(Decimal(str(bounds[1])), true_amount * 3)
    step = Decimal(1) if true_amount == true_amount.to_integral_value() else Decimal("0.01")
    for _ in range(40):
        if high <= low:
            break
        candidate = Decimal(str(rng.uniform(float(low), float(high)))).quantize(step)
        if plausible_false(true_amount, candidate) and candidate not in paid:
            return candidate
    return None


def _when_wordings(g: Gen, fact, slots: dict[str, str]) -> list[str]:
    """The wordings of true date questions a payment asked with a false amount may take, for a merchant
    paid once (the date then is not what tells the payment apart): "When did I pay $204.87 at AT&T?",
    "How many days ago ...?" Taken only where no "how did I pay the $204.87 ..." has room: abstention
    traps need these wordings' room too."""
    false = replace(fact, context={**fact.context, "amount": slots["false_amount"]})
    event = _event_phrase(g, false, "verb", with_amount=True)
    return g.say.wordings("tmp.date_of", event=event) if event else []
