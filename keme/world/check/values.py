"""Values come from the world: the checker's own reading, written apart from the generator.

- A figure the assistant says it counted or added up from the bill records (a count this month, a
  category's total, a rise over last month) is recomputed here from the records up to the message; a
  figure the records cannot give (no last month to compare with, a "rise" when spending fell) is a
  finding too.
- A bill costs what its merchant charges in the persona's country (keme/world/prices/<lang>.yaml: a bus
  ride is not ¥278), and a household pays each utility (gas, power, water, internet) to one company.
- A stable fact (a store's return window) is said with one value for what it is about.
- An occasion's venue is in the persona's home city then (keme/world/venues/<lang>.yaml: no Seattle
  boathouse as the local spot in San Francisco).
"""

from __future__ import annotations

import calendar
from collections import defaultdict
from datetime import date, datetime
from decimal import Decimal, InvalidOperation

from keme.models import Persona, Session
from keme.models.anchor import BillRecord
from keme.world.check.base import Finding, World, day, quote
from keme.world.facts import STABLE_FACTS
from keme.world.prices import PriceError, load_prices
from keme.world.venues import VenueError, load_local

RULE = "values"
Bill = tuple[datetime, BillRecord]


def check(world: World) -> list[Finding]:
    return _figures(world) + _bill_prices(world) + _providers(world) + _stable(world) + _venues(world)


# ---------------------------------------------------------------- computed figures
def _bills(world: World) -> list[Bill]:
    return sorted(
        (a.timestamp, a.record) for a in world.view.anchors.values() if isinstance(a.record, BillRecord)
    )


def _month_to(bills: list[Bill], year: int, month: int, last_day: int, until: datetime) -> list[BillRecord]:
    """The bills of one calendar month from its first day up to `last_day` (inclusive) and `until`."""
    return [r for t, r in bills if (t.year, t.month) == (year, month) and t.day <= last_day and t <= until]


def _sum(records: list[BillRecord]) -> Decimal:
    return sum((r.amount for r in records), Decimal(0))


def _recompute(predicate: str, bills: list[Bill], bill: BillRecord | None, at: datetime, since: date):
    """What the records say `predicate` is at `at` (a Decimal or int), or None when they cannot say it."""
    month = _month_to(bills, at.year, at.month, at.day, at)
    if predicate in ("bill_count_month", "category_month_total", "category_month_share_percent"):
        if bill is None:
            return None
        same = [r for r in month if r.category == bill.category]
        if predicate == "bill_count_month":
            return len(same)
        if predicate == "category_month_total":
            return _sum(same)
        return _sum(same) * 100 / _sum(month) if month else None
    if predicate == "bill_count_today":
        return sum(1 for t, _ in bills if t.date() == at.date() and t <= at) if bill is not None else None
    if predicate == "payment_method_month_total":
        return _sum([r for r in month if r.payment_method == bill.payment_method]) if bill else None
    # month over month: this month to date against last month to the same day
    year, prev = (at.year, at.month - 1) if at.month > 1 else (at.year - 1, 12)
    if date(year, prev, 1) < since:
        return None
    before = _month_to(bills, year, prev, min(at.day, calendar.monthrange(year, prev)[1]), at)
    rise = _sum(month) - _sum(before)
    if predicate == "month_over_month_increase":
        return rise if rise > 0 else None
    if predicate == "month_over_month_percent":
        return rise * 100 / _sum(before) if before and rise > 0 else None
    raise KeyError(predicate)


COMPUTED = (
    "bill_count_month",
    "bill_count_today",
    "category_month_total",
    "category_month_share_percent",
    "payment_method_month_total",
    "month_over_month_increase",
    "month_over_month_percent",
)


def _agrees(said: str, actual) -> bool:
    """A count exactly; an amount or a percent said "about" to the whole unit."""
    try:
        value = Decimal(said)
    except InvalidOperation:
        return False
    if isinstance(actual, int):
        return value == actual
    return abs(value - actual) < 1


def _figures(world: World) -> list[Finding]:
    bills = _bills(world)
    since = world.view.persona.start.date()
    out = []
    for session, message in world.said(("assistant",)):
        for claim in world.claims_of.get(message.id, []):
            if claim.predicate not in COMPUTED:
                continue
            bill = _session_bill(world, session)
            actual = _recompute(claim.predicate, bills, bill, message.timestamp, since)
            if actual is None:
                why = "the bill records cannot give it then"
            elif not _agrees(claim.value, actual):
                shown = actual if isinstance(actual, int) else actual.quantize(Decimal("0.01"))
                why = f"the bill records up to then give {shown}"
            else:
                continue
            out.append(
                world.finding(
                    RULE,
                    [message.id],
                    f"{day(message.timestamp)}: the assistant says {claim.predicate} {claim.value}, but "
                    f"{why}: {quote(message.content)}",
                )
            )
    return out


def _session_bill(world: World, session: Session) -> BillRecord | None:
    anchor = world.view.anchors.get(session.anchor_id or "")
    return anchor.record if anchor is not None and isinstance(anchor.record, BillRecord) else None


# ---------------------------------------------------------------- bills
def _table(world: World):
    try:
        return load_prices(world.view.lang)
    except PriceError:
        return None


def _bill_prices(world: World) -> list[Finding]:
    table = _table(world)
    if table is None:
        return []
    out = []
    for anchor in world.view.anchors.values():
        record = anchor.record
        if not isinstance(record, BillRecord) or record.merchant not in table.merchants:
            continue
        category = table.merchants[record.merchant]
        low, high = table.categories[category]
        if not low <= record.amount <= high:
            out.append(
                world.finding(
                    RULE,
                    [],
                    f"{anchor.id}: {record.merchant} charged {record.amount} {record.currency}, "
                    f"where a charge of its kind ({category}) costs {low}-{high}",
                )
            )
    return out


def _providers(world: World) -> list[Finding]:
    table = _table(world)
    if table is None:
        return []
    companies: dict[str, dict[str, str]] = defaultdict(dict)
    for anchor in sorted(world.view.anchors.values(), key=lambda a: a.timestamp):
        record = anchor.record
        if isinstance(record, BillRecord) and table.merchants.get(record.merchant) in table.providers:
            companies[table.merchants[record.merchant]].setdefault(record.merchant, anchor.id)
    return [
        world.finding(
            RULE,
            [],
            f"one household pays its {kind} to {len(by)} companies: "
            + ", ".join(f"{m} ({a})" for m, a in by.items()),
        )
        for kind, by in sorted(companies.items())
        if len(by) > 1
    ]


# ---------------------------------------------------------------- stable facts
def _attribute(persona: Persona, key: str, when: datetime) -> str | None:
    try:
        return persona.value_at(key, when)
    except KeyError:  # a persona written without the attribute
        return None


def _holder(world: World, session: Session, about: str) -> str | None:
    if not about:
        return "persona"
    if "." in about:
        return _attribute(world.view.persona, about, session.start)
    episode = world.episode(session)
    leaf = world.leaf(session)
    params = (dict(episode.params) if episode is not None else {}) | (dict(leaf.params) if leaf else {})
    return params.get(about)


def _stable(world: World) -> list[Finding]:
    said: dict[tuple[str, str], dict[str, str]] = defaultdict(dict)  # (predicate, holder) -> value -> msg
    for session, message in world.said():
        for claim in world.claims_of.get(message.id, []):
            about = STABLE_FACTS.get(claim.predicate)
            if about is None or (holder := _holder(world, session, about)) is None:
                continue
            said[(claim.predicate, holder)].setdefault(claim.value, message.id)
    return [
        world.finding(
            RULE,
            sorted(values.values()),
            f"{predicate} of {holder} is said as " + ", ".join(sorted(values, key=_numeric)),
        )
        for (predicate, holder), values in sorted(said.items())
        if len(values) > 1
    ]


def _numeric(value: str) -> tuple[int, str]:
    return (int(value), value) if value.isdigit() else (0, value)


# ---------------------------------------------------------------- venues
VENUE_SLOTS = ("venue", "place", "restaurant")


def _venues(world: World) -> list[Finding]:
    try:
        table = load_local(world.view.lang)
    except VenueError:
        return []
    persona = world.view.persona
    out = []
    for event in world.view.graph.events:
        city = _attribute(persona, "home.city", event.start)
        if city is None or world.trip_at(event.start) is not None:
            continue
        for slot in VENUE_SLOTS:
            venue = event.params.get(slot)
            if venue and table.only_in.get(venue) and city not in table.only_in[venue]:
                where = ", ".join(table.only_in[venue])
                out.append(
                    world.finding(
                        RULE,
                        [],
                        f"{event.id} ({event.start:%Y-%m-%d}): {slot} {venue!r} is in {where}, "
                        f"but the persona lives in {city}",
                    )
                )
                break
    return out
