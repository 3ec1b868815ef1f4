"""Knowledge anchors: app records generated before any event, then frozen.

Records only use immutable persona attributes: the life changes that alter the
mutable ones are planned later, and an anchor must never contradict them.
Anchors of one persona never share a day block, and each leaves an hour of its
block free for the conversation about it.
"""

from __future__ import annotations

import functools
import math
import random
from collections import Counter
from collections.abc import Callable
from datetime import date, datetime, time, timedelta
from decimal import Decimal

from keme.config import SynthConfig
from keme.days import BLOCKS, Block, block_of, block_window, holiday_name, is_workday, month_windows
from keme.errors import NoFit
from keme.models.anchor import (
    APP_TYPES,
    Anchor,
    BillRecord,
    CalendarRecord,
    DocumentRecord,
    NoteRecord,
    ScreenRecord,
    TodoRecord,
    VoiceMemoRecord,
)
from keme.models.attributes import IMMUTABLE_KEYS
from keme.models.persona import Habits, Persona
from keme.prior.habits import payment_methods, pick_merchant, pick_payment_method
from keme.seeding import rng_for
from keme.text import lang as fmt
from keme.text.resources import Resources
from keme.text.template import Context, Said, compile_template, render
from keme.world.catalog import load_catalog
from keme.world.prices import choose_providers, household_merchant, load_prices
from keme.world.schedule import LUNCH, WORK_HOURS

BLOCK_WEIGHTS: dict[str, tuple[float, float, float]] = {
    "bill": (0.25, 0.35, 0.40),
    "voice_memo": (0.45, 0.25, 0.30),
    "calendar": (0.35, 0.30, 0.35),
    "note": (0.20, 0.30, 0.50),
    "todo": (0.40, 0.20, 0.40),
    "screen": (0.25, 0.35, 0.40),
    "document": (0.30, 0.45, 0.25),
}
ROOM_AFTER = timedelta(minutes=75)
PART_START = {"morning": (9, 11), "afternoon": (13, 16), "evening": (18, 20)}


def _static_values(persona: Persona) -> dict[str, str]:
    values = {}
    for key in IMMUTABLE_KEYS:
        value = persona.value_at(key, persona.start)
        if value is not None:
            values[key] = value
    return values


def _text(source: str, ctx: Context) -> str:
    return render(compile_template(source), ctx)


def _count(rng: random.Random, rate: float, fraction: float) -> int:
    expected = rate * fraction
    whole = int(expected)
    return whole + (1 if rng.random() < expected - whole else 0)


def anchor_cap(days_in: int) -> int:
    """At most half the day blocks of a month window hold anchors, so the sessions around them keep room.

    Only a window of a few days (a trajectory starting on the 30th) ever reaches it within the config's
    bounds.
    """
    return len(BLOCKS) * days_in // 2


def most_anchors(rates: dict[str, float], days_in: int) -> int:
    """The most anchors a month window of `days_in` days can receive: each app's expected count rounded up,
    capped."""
    fraction = days_in / 30.4
    return min(anchor_cap(days_in), sum(math.ceil(rate * fraction) for rate in rates.values()))


def _pick_time(
    rng: random.Random,
    app: str,
    start: datetime,
    end: datetime,
    taken: set[tuple[date, Block]],
    fits: Callable[[datetime], bool] = lambda _moment: True,
) -> datetime:
    for _ in range(200):
        day = start.date() + timedelta(rng.randrange((end.date() - start.date()).days + 1))
        block = rng.choices(BLOCKS, BLOCK_WEIGHTS[app])[0]
        if (day, block) in taken:
            continue
        lo, hi = block_window(day, block)
        latest = hi - ROOM_AFTER
        seconds = int((latest - lo).total_seconds())
        moment = lo + timedelta(seconds=rng.randrange(seconds))
        if start <= moment <= end and fits(moment):
            taken.add((day, block))
            return moment
    raise NoFit(
        f"no free block for a {app} anchor between {start} and {end}; "
        f"lower anchors.per_month.{app} in the config"
    )


def free_to_shop(moment: datetime, country: str, hours: tuple[int, int] = (10, 21)) -> bool:
    """Whether a charge paid in person can fall at `moment`: in the merchant's `hours` ([open, close) on the
    hour), off work or at lunch on a workday (a store visit interrupts the office then, never mid-morning
    or mid-afternoon)."""
    clock = moment.time()
    if not hours[0] <= moment.hour < hours[1]:
        return False
    if not is_workday(moment.date(), country):
        return True
    return not WORK_HOURS[0] <= clock < WORK_HOURS[1] or LUNCH[0] <= clock < LUNCH[1]


def _paid_off_holidays(bill: BillRecord, res: Resources) -> bool:
    """Whether the bill is a payment to an account (rent, a utility), never made on a public holiday."""
    return any(c.off_holidays and c.label == bill.category for c in res.anchors.bill.categories.values())


def _off_holidays(moment: datetime, fits: Callable[[datetime], bool], country: str) -> bool:
    """A time that fits, not on a public holiday: no rent is paid on 除夕 or Christmas Day."""
    return holiday_name(moment.date(), country) is None and fits(moment)


def _fitting(items: list, day: date, country: str) -> list:
    """The items whose content fits `day`: one about the job (`work`) only on a workday."""
    if is_workday(day, country):
        return items
    return [item for item in items if not item.work] or items


def _draw(rng: random.Random, items: list, drawn: Counter[str]):
    """An item, a one-off one (a friend's wedding) not drawn before (a life event is on the calendar
    once), and of the others one drawn least so far: a year of screenshots, notes and memos goes round
    its list before it says one again (a bank statement seven times over was one sentence said seven
    times)."""
    fresh = [i for i in items if not (getattr(i, "once", False) and drawn[i.title])] or items
    least = min(drawn[i.title] for i in fresh)
    item = rng.choice([i for i in fresh if drawn[i.title] == least])
    drawn[item.title] += 1
    return item


def _bill(
    rng: random.Random,
    ctx: Context,
    res: Resources,
    providers: dict[str, str],
    habits: Habits | None,
    methods: list[str],
) -> BillRecord:
    """A payment, drawn before its time (one paid in person is then timed when the persona can shop): her
    usual method and, in a category she has a regular in, her regular merchant most of the time
    (keme.models.Habits); with no habits (`None`), any method and merchant alike."""
    text = res.anchors.bill
    category_key = rng.choice(sorted(text.categories))
    category = text.categories[category_key]
    prices = load_prices(res.lang)
    chosen = (
        rng.choice(category.merchants)
        if habits is None
        else pick_merchant(habits, category_key, category.merchants, rng)
    )
    merchant = household_merchant(prices, chosen, providers)
    low, high = prices.merchant_range(merchant) or category.amount  # what a charge there costs
    amount = Decimal(str(round(rng.uniform(low, high), 2))).quantize(Decimal("0.01"))
    amount = prices.charge(merchant, amount)  # a fare in whole yuan
    method = rng.choice(methods) if habits is None else pick_payment_method(habits, methods, rng)
    return BillRecord(
        merchant=_text(merchant, ctx),
        amount=amount,
        currency=text.currency,
        category=category.label,
        payment_method=method,
    )


def _record(
    app: str,
    moment: datetime,
    rng: random.Random,
    ctx: Context,
    res: Resources,
    *,
    country: str,
    drawn: Counter[str] | None = None,
):
    """The record of an anchor of `app` (not a bill: `_bill`) at `moment`; a one-off item in `drawn` (the
    one-off titles drawn so far, updated here) is not drawn again."""
    text = res.anchors
    drawn = drawn if drawn is not None else Counter()
    if app == "voice_memo":
        item = _draw(rng, _fitting(text.voice_memo.items, moment.date(), country), drawn)
        transcript = _text(item.transcript, ctx)
        rate = 4.0 if res.lang == "zh" else 2.4  # characters / words per second when speaking
        units = len(transcript) if res.lang == "zh" else len(transcript.split())
        return VoiceMemoRecord(
            title=_text(item.title, ctx),
            duration_seconds=max(5, int(units / rate) + rng.randint(2, 15)),
            transcript=transcript,
        )
    if app == "calendar":
        item = _draw(rng, text.calendar.items, drawn)
        lo, hi = PART_START[item.part]
        days = [moment.date() + timedelta(n) for n in range(1, 15)]
        if item.work:  # a work meeting is held on a workday, never on a weekend or public holiday
            days = [d for d in days if is_workday(d, country)] or days
        day = rng.choice(days)
        begins = datetime.combine(day, time(rng.randint(lo, hi), rng.choice((0, 15, 30, 45))))
        return CalendarRecord(
            title=_text(item.title, ctx),
            start=begins,
            end=begins + timedelta(minutes=item.minutes),
            location=_text(item.location, ctx),
            attendees=[_text(a, ctx) for a in item.attendees],
        )
    if app == "note":
        item = _draw(rng, text.note.items, drawn)
        return NoteRecord(title=_text(item.title, ctx), body=_text(item.body, ctx))
    if app == "todo":
        item = _draw(rng, text.todo.items, drawn)
        due = datetime.combine(moment.date() + timedelta(rng.randint(1, 10)), time(18, 0))
        return TodoRecord(
            title=_text(item.title, ctx),
            due=due,
            priority=item.priority,
            list_name=_text(item.list_name, ctx),
        )
    if app == "screen":
        item = _draw(rng, text.screen.items, drawn)
        return ScreenRecord(
            source_app=_text(item.source_app, ctx), title=_text(item.title, ctx), text=_text(item.text, ctx)
        )
    item = _draw(rng, text.document.items, drawn)
    return DocumentRecord(
        title=_text(item.title, ctx),
        doc_type=_text(item.doc_type, ctx),
        pages=rng.randint(*item.pages),
        summary=_text(item.summary, ctx),
    )


def build_anchors(persona: Persona, cfg: SynthConfig, res: Resources) -> list[Anchor]:
    rng = rng_for(cfg.seed, persona.id, "anchors")
    static = _static_values(persona)
    taken: set[tuple[date, Block]] = set()
    planned: list[tuple[datetime, str, object]] = []
    catalog = load_catalog(res.lang)
    prices = load_prices(res.lang)
    # one gas company, one power company... per household, chosen once (keme.world.prices)
    merchants = [m for c in res.anchors.bill.categories.values() for m in c.merchants]
    providers = choose_providers(prices, merchants, rng_for(cfg.seed, persona.id, "providers"))
    methods = payment_methods(persona, res)
    for start, end in month_windows(persona.start, persona.end):
        days_in = (end - start).days + 1
        fraction = days_in / 30.4
        room = anchor_cap(days_in)
        for app in APP_TYPES:
            for _ in range(_count(rng, cfg.anchors.per_month.get(app, 0.0), fraction)):
                if room == 0:
                    break
                bill = None
                fits: Callable[[datetime], bool] = lambda _moment: True  # noqa: E731
                if app == "bill":  # the charge first: one paid in person is timed when the persona can shop
                    ctx = Context(lang=res.lang, rng=rng, persona=static, pools=res.flat_pools)
                    bill = _bill(rng, ctx, res, providers, persona.habits, methods)
                    hours = catalog.hours(bill.merchant)
                    if hours is not None:
                        fits = functools.partial(free_to_shop, country=persona.country, hours=hours)
                    if _paid_off_holidays(bill, res):
                        fits = functools.partial(_off_holidays, fits=fits, country=persona.country)
                planned.append((_pick_time(rng, app, start, end, taken, fits), app, bill))
                room -= 1
    planned.sort(key=lambda p: (p[0], p[1]))
    anchors, once = [], Counter()
    for number, (moment, app, drawn) in enumerate(planned, start=1):
        ctx = Context(lang=res.lang, rng=rng, persona=static, pools=res.flat_pools, bound=prices.bound)
        record = (
            drawn
            if drawn is not None
            else _record(app, moment, rng, ctx, res, country=persona.country, drawn=once)
        )
        anchor = Anchor(
            id=f"{persona.id}-a{number:03d}",
            persona_id=persona.id,
            app=app,
            app_name=getattr(res.anchors, app).app_name,
            timestamp=moment,
            record=record,
        )
        anchors.append(anchor.sealed())
    return anchors


def anchor_slots(anchor: Anchor, lang: str, res: Resources) -> dict[str, str]:
    """The record as display strings: the slots of the app message and of talk about it."""
    r = anchor.record
    if r.kind == "bill":
        return {
            "merchant": r.merchant,
            "amount": fmt.format_money(r.amount, lang),
            "category": r.category,
            "payment_method": r.payment_method,
        }
    if r.kind == "voice_memo":
        return {
            "title": r.title,
            "duration": fmt.format_duration(r.duration_seconds, lang),
            "transcript": r.transcript,
        }
    if r.kind == "calendar":
        return {
            "title": r.title,
            "event_date": f"{fmt.format_date(r.start.date(), lang)} ({fmt.weekday(r.start.date(), lang)})"
            if lang == "en"
            else f"{fmt.format_date(r.start.date(), lang)}（{fmt.weekday(r.start.date(), lang)}）",
            "event_time": f"{fmt.format_time(r.start, lang)}–{fmt.format_time(r.end, lang)}",
            "location": r.location,
            "attendees": fmt.join_list(r.attendees, lang) or ("—"),
        }
    if r.kind == "note":
        return {"title": r.title, "body": r.body}
    if r.kind == "todo":
        return {
            "title": r.title,
            "due_date": fmt.format_date(r.due.date(), lang),
            "priority": res.anchors.todo.priorities[r.priority],
            "list_name": r.list_name,
        }
    if r.kind == "screen":
        return {"source_app": r.source_app, "title": r.title, "text": r.text}
    return {"title": r.title, "doc_type": r.doc_type, "pages": str(r.pages), "summary": r.summary}


def anchor_message_text(anchor: Anchor, res: Resources, on_said: Said | None = None) -> str:
    """How the app reports the record; a pure function of the anchor (checked by `keme validate`).
    `on_said` hears each record field the message shows (the claims of the app message)."""
    ctx = Context(
        lang=res.lang, rng=random.Random(anchor.id), persona={}, slots=anchor_slots(anchor, res.lang, res)
    )
    return render(res.anchor_messages[anchor.app], ctx, on_said=on_said)


def anchor_block(anchor: Anchor) -> tuple[date, Block]:
    block = block_of(anchor.timestamp)
    assert block is not None, f"anchor {anchor.id} outside day blocks"
    return anchor.timestamp.date(), block
