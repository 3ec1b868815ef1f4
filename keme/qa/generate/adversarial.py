"""Questions without an answer in the data (abstentions) and questions on a false premise
(adversarials).
"""

from __future__ import annotations

from datetime import timedelta
from decimal import Decimal

from keme.models import Query, Quote
from keme.models.attributes import claim_predicate
from keme.qa import draft as d
from keme.qa.draft import Draft
from keme.qa.generate.atoms import SOCIAL_NAMES, _queries
from keme.qa.generate.composition import _event_query
from keme.qa.generate.context import Gen
from keme.qa.generate.episode import _matching_system
from keme.text import lang as fmt
from keme.text import resources


def abstentions(g: Gen, node: str) -> list[Draft]:
    persona = g.world.persona
    res = resources.get(g.lang)
    drafts: list[Draft] = []
    final = d.final_time(g.world)
    answer = g.say.answer("abstain")

    def unseen(candidates: list[str]) -> list[str]:
        return [c for c in candidates if not g.world.mentions(c)]

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
    merchants = sorted({m for c in res.anchors.bill.categories.values() for m in c.merchants if "{" not in m})
    pools = res.pools
    sources = {
        "abs.merchant": ("merchant", merchants),
        "abs.destination": ("destination", [x.name for x in pools.destinations]),
        "abs.project": ("project", pools.lists["projects"]),
        "abs.person": (
            "person",
            sorted(set(pools.names.given_female + pools.names.given_male))
            if g.lang == "en"
            else [
                pools.names.format.format(family=f, given=n)
                for f in pools.names.family[:8]
                for n in pools.names.given_female[:6]
            ],
        ),
    }
    for generator, (slot, candidates) in sources.items():
        fresh = unseen(candidates)
        for value in g.rng.sample(fresh, min(6, len(fresh))):
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


def adversarials(g: Gen, node: str, atoms: list[Draft]) -> list[Draft]:
    persona = g.world.persona
    res = resources.get(g.lang)
    drafts: list[Draft] = []
    final = d.final_time(g.world)
    app = res.anchors.bill.app_name
    bills = [a for a in atoms if a.subtype == "bill.amount"]
    for atom in g.rng.sample(bills, min(12, len(bills))):
        fact = atom.fact
        merchant = fact.context["merchant"]
        true_day = fact.when.date()
        if g.rng.random() < 0.5:
            false_day = true_day + timedelta(days=g.rng.choice((-3, -2, -1, 1, 2, 3)))
            if false_day < persona.start.date():
                continue  # "December 31" of the year before reads as this year's, a year off
            week = timedelta(days=7)  # the correction must name the one payment there that week
            if len(_matching_system(g, app, merchant, false_day - week, false_day + week)) != 1:
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
            false_amount = (true_amount * Decimal(g.rng.choice(("1.5", "2", "0.5", "3")))).quantize(
                Decimal("0.01")
            )
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
