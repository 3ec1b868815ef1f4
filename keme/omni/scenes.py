"""What a screenshot shows: screen data built from a session's event, anchor and persona.

A scene is a template plus the data to render it. Subjects come from the
trajectory (the trip's destination and dates, the bill's merchant and amount,
the friend from the dinner plan); small details a screenshot shows and the
dialogue does not (seat numbers, order ids, the song that was playing) are drawn
from the session's own random stream, so a scene is a pure function of the
session, the persona and the seed.
"""

from __future__ import annotations

import functools
import random
from dataclasses import dataclass, field
from datetime import date, datetime, timedelta
from decimal import Decimal
from pathlib import Path

from keme.models import Anchor, Event, Persona, Session
from keme.omni import images
from keme.omni.screens import (
    BillScreen,
    CalendarEvent,
    CalendarScreen,
    ChatLine,
    ChatScreen,
    Comment,
    EbookPage,
    MusicPlayer,
    NoteScreen,
    OrderItem,
    PaymentTransfer,
    ShoppingOrder,
    SocialPost,
    TrainTicket,
    VideoPage,
    _Screen,
)
from keme.text import lang as fmt
from keme.text.fill import fill
from keme.text.normalize import parse_money
from keme.yamlload import load

RESOURCES = Path(__file__).resolve().parent / "resources"

# which screens fit a session, by leaf moment or episode kind (first fits best)
FITS: dict[str, tuple[str, ...]] = {
    "trip_planning": ("train_ticket",),
    "trip_packing": ("note", "train_ticket"),
    "trip_during": ("social_post",),
    "trip_recap": ("social_post",),
    "purchase_done": ("shopping_order",),
    "new_phone": ("shopping_order",),
    "purchase_compare": ("video_page",),
    "restaurant_pick": ("chat_x", "chat_telegram", "chat_wechat"),
    "social_recap": ("payment_transfer",),
    "gift_idea": ("chat_x",),
    "family": ("chat_wechat",),
    "work_deadline": ("chat_telegram",),
    "work_meeting_prep": ("chat_telegram", "calendar"),
    "work_win": ("chat_telegram",),
    "show_recommend": ("video_page",),
    "show_discuss": ("video_page", "ebook_page"),
    "cooking": ("video_page",),
    "fitness_log": ("music_player",),
    "fitness_plan": ("video_page", "music_player"),
    "weekend": ("social_post", "chat_wechat"),
    "errand": ("note",),
}
ANCHOR_FITS: dict[str, tuple[str, ...]] = {
    "bill": ("bill",),
    "calendar": ("calendar",),
    "note": ("note",),
    "todo": ("note",),
}
# screens any ordinary session can carry (a song, a page, a chat, a day view)
GENERIC = (
    "music_player",
    "ebook_page",
    "video_page",
    "chat_wechat",
    "chat_telegram",
    "chat_x",
    "note",
    "calendar",
    "shopping_order",
    "payment_transfer",
)


@functools.cache
def resources(lang: str) -> dict:
    return load(RESOURCES / f"{lang}.yaml", shipped=True).data


@dataclass
class Scene:
    template: str
    screen: _Screen
    about: dict[str, str] = field(default_factory=dict)

    def caption(self) -> str:
        return fill(
            resources(self.screen.lang)["caption"][self.template], self.screen.model_dump() | self.about
        )


@dataclass
class Context:
    """One session, seen from the screenshot's side."""

    persona: Persona
    session: Session
    leaf: Event | None
    episode: Event | None
    anchor: Anchor | None
    rng: random.Random

    @property
    def lang(self) -> str:
        return self.session.language

    @property
    def res(self) -> dict:
        return resources(self.lang)

    @property
    def when(self) -> datetime:
        return self.session.start

    @property
    def params(self) -> dict[str, str]:
        merged = dict(self.episode.params if self.episode else {}) | dict(
            self.leaf.params if self.leaf else {}
        )
        return {k: v for k, v in merged.items() if not k.startswith("_") and not k.startswith("set:")}

    def attr(self, key: str, default: str = "") -> str:
        try:
            return self.persona.value_at(key, self.when) or default
        except KeyError:
            return default

    def pick(self, key: str):
        return self.rng.choice(self.res[key])


def kinds(
    session: Session, leaf: Event | None, episode: Event | None, anchor: Anchor | None
) -> tuple[str, ...]:
    """The screens that fit this session, best first (empty: only generic screens).

    Anchors are grounded in ordinary moments too (a bill during a purchase), so
    a session can fit both the anchor's screen and the moment's.
    """
    fits = list(ANCHOR_FITS.get(anchor.app, ())) if anchor is not None else []
    names = []
    if leaf is not None:
        names.append(leaf.kind)
    if episode is not None:
        names += [episode.params.get("_episode", ""), episode.kind]
    for name in names:
        if name in FITS:
            fits += [t for t in FITS[name] if t not in fits]
            break
    return tuple(fits)


# ---------------------------------------------------------------- formatting
def _clock(moment: datetime) -> str:
    return f"{moment.hour}:{moment.minute:02d}"


def _date_long(day: date, lang: str) -> str:
    return (
        f"{day.year}-{day.month:02d}-{day.day:02d}"
        if lang == "zh"
        else f"{fmt.MONTHS_EN[day.month - 1][:3]} {day.day}, {day.year}"
    )


def _stamp(moment: datetime, lang: str) -> str:
    if lang == "zh":
        return f"{moment:%Y-%m-%d %H:%M}"
    return f"{_date_long(moment.date(), lang)}, {fmt.format_time(moment, lang)}"


def _mmss(seconds: int) -> str:
    return f"{seconds // 60}:{seconds % 60:02d}"


def _money(value: Decimal, lang: str) -> str:
    value = value.quantize(Decimal("0.01"))
    return f"¥{value}" if lang == "zh" else f"${value:,}"


def _digits(rng: random.Random, n: int) -> str:
    return str(rng.randrange(1, 10)) + "".join(str(rng.randrange(10)) for _ in range(n - 1))


def _me(lang: str) -> str:
    return "我" if lang == "zh" else "Me"


def _price_of(text: str | None) -> Decimal | None:
    return parse_money(text or "")


def _trip_start(ctx: Context) -> date:
    raw = (ctx.episode.params if ctx.episode else {}).get("_trip_start")
    return date.fromisoformat(raw) if raw else (ctx.when + timedelta(days=7)).date()


# ---------------------------------------------------------------- builders
def _comments(ctx: Context, n: int = 2) -> list[Comment]:
    people, texts = ctx.rng.sample(ctx.res["commenters"], n), ctx.rng.sample(ctx.res["comments"], n)
    return [Comment(user=u, text=t) for u, t in zip(people, texts)]


def _chat(ctx: Context, template: str) -> Scene:
    lang, rng, res, params = ctx.lang, ctx.rng, ctx.res, ctx.params
    person = (
        params.get("person")
        or params.get("colleague")
        or params.get("relative")
        or ctx.attr("social_circle.best_friend")
        or ctx.attr("social_circle.sibling")
        or res["commenters"][0]
    )
    group = (
        template == "chat_wechat"
        and "relative" in params
        or template == "chat_telegram"
        and "project" in params
    )
    title = (
        (res["groups"][1] if "relative" in params else params.get("project") or rng.choice(res["groups"]))
        if group
        else person
    )
    topic = rng.choice(["meet", "place", "bring"])
    value = rng.choice(
        {"meet": res["meet_times"], "place": res["meet_places"], "bring": res["bring_items"]}[topic]
    )
    day = fmt.weekday((ctx.when + timedelta(days=rng.randrange(1, 6))).date(), lang)
    lines = rng.choice(res["chat"][topic])
    minute = ctx.when - timedelta(minutes=rng.randrange(5, 90))
    texts = [(person, lines["them"]), (_me(lang), lines["me"]), (person, lines["them2"])]
    chat = []
    for i, (sender, text) in enumerate(texts):
        stamp = minute + timedelta(minutes=i * rng.randrange(1, 4))
        chat.append(
            ChatLine(
                sender=sender,
                avatar=images.avatar(sender),
                text=text.format(day=day, value=value),
                time=_clock(stamp),
                me=sender == _me(lang),
            )
        )
    screen = ChatScreen(
        lang=lang,
        clock=_clock(ctx.when),
        title=title,
        group=group,
        members=rng.randrange(3, 9) if group else 2,
        lines=chat,
    )
    return Scene(
        template,
        screen,
        {"person": person, "topic": topic, "value": value, "value_fact": "line-1", "day": day},
    )


def _order(ctx: Context) -> Scene:
    lang, rng, res, params = ctx.lang, ctx.rng, ctx.res, ctx.params
    product = params.get("product") or rng.choice(res["accessories"])
    price = _price_of(params.get("price")) or Decimal(rng.randrange(15, 200))
    extra = rng.choice(res["accessories"])
    extra_price = Decimal(rng.randrange(9, 40)) + Decimal("0.99")
    quantity = rng.choice([1, 1, 2])
    total = price + extra_price * quantity
    delivery = (ctx.when + timedelta(days=rng.randrange(2, 6))).date()
    store = ctx.attr("shopping.favorite_platform") if rng.random() < 0.5 else rng.choice(res["stores"])
    store = store or rng.choice(res["stores"])
    city = ctx.attr("home.city")
    hood = ctx.attr("home.neighborhood")
    address = (
        f"{city}{hood}{rng.randrange(10, 300)}号"
        if lang == "zh"
        else f"{rng.randrange(100, 2999)} {rng.choice(['Maple', 'Oak', 'Cedar', 'Elm', 'Pine'])} St, {city}"
    )
    screen = ShoppingOrder(
        lang=lang,
        clock=_clock(ctx.when),
        store=store,
        order_id=" ".join(_digits(rng, 4) for _ in range(4))
        if lang == "zh"
        else f"11{_digits(rng, 1)}-{_digits(rng, 7)}-{_digits(rng, 7)}",
        status=rng.choice(res["status"]["order"]),
        items=[
            OrderItem(name=product, quantity=1, price=_money(price, lang), image=images.identicon(product)),
            OrderItem(
                name=extra, quantity=quantity, price=_money(extra_price, lang), image=images.identicon(extra)
            ),
        ],
        subtotal=_money(total, lang),
        shipping=_money(Decimal(0), lang),
        total=_money(total, lang),
        placed=_stamp(ctx.when, lang) if lang == "zh" else _date_long(ctx.when.date(), lang),
        delivery=(
            f"{fmt.format_date(delivery, lang)} 送达"
            if lang == "zh"
            else f"Arriving {fmt.weekday(delivery, lang)[:3]}, {fmt.format_date(delivery, lang)}"
        ),
        address=address,
    )
    return Scene("shopping_order", screen, {"product": product, "extra": extra})


def _transfer(ctx: Context) -> Scene:
    lang, rng, res, params = ctx.lang, ctx.rng, ctx.res, ctx.params
    person = params.get("person") or ctx.attr("social_circle.best_friend") or res["commenters"][0]
    amount = Decimal(rng.randrange(2000, 30000)) / 100 if lang == "en" else Decimal(rng.randrange(50, 600))
    place = params.get("restaurant") or params.get("place") or ""
    note = (f"{place} AA" if place else "AA") if lang == "zh" else (f"{place} 🍜" if place else "Dinner 🍜")
    screen = PaymentTransfer(
        lang=lang,
        clock=_clock(ctx.when),
        direction="sent",
        counterparty=person,
        avatar=images.avatar(person),
        amount=_money(amount, lang),
        note=note,
        time=_stamp(ctx.when - timedelta(minutes=rng.randrange(2, 40)), lang),
        method="余额宝" if lang == "zh" else "Venmo balance",
        transaction_id=_digits(rng, 16 if lang == "zh" else 13),
        status=res["status"]["transfer"],
    )
    return Scene("payment_transfer", screen, {"person": person, "place": place})


def _train(ctx: Context) -> Scene:
    lang, rng, res, params = ctx.lang, ctx.rng, ctx.res, ctx.params
    city = ctx.attr("home.city") or "—"
    destination = params.get("destination", "")
    by_rail = destination in res["rail"]
    origin = res["station"].format(city=city)
    target = res["station"].format(city=destination) if by_rail else res["airport"].format(city=city)
    day = _trip_start(ctx)
    depart = datetime.combine(day, datetime.min.time()) + timedelta(
        hours=rng.randrange(6, 11), minutes=rng.choice([0, 12, 25, 40, 55])
    )
    minutes = rng.randrange(150, 420) if by_rail else rng.randrange(25, 55)
    arrive = depart + timedelta(minutes=minutes)
    hours, mins = divmod(minutes, 60)
    if lang == "zh":
        number = f"{rng.choice(res['train_names']) if by_rail else 'C'}{_digits(rng, rng.choice([3, 4]))}"
        duration = f"{hours}小时{mins}分" if hours else f"{mins}分"
        price = Decimal(rng.randrange(90, 900) if by_rail else rng.randrange(10, 40))
        seat = f"{rng.randrange(1, 18):02d}{rng.choice('ABCDF')}号"
        car = f"{rng.randrange(1, 16):02d}车"
    else:
        number = (
            f"{rng.choice(res['train_names']) if by_rail else 'Airport Express'} "
            f"{_digits(rng, rng.choice([3, 4]))}"
        )
        duration = f"{hours}h {mins}m" if hours else f"{mins}m"
        price = Decimal(rng.randrange(40, 260) if by_rail else rng.randrange(8, 30))
        seat = f"{rng.randrange(1, 30)}{rng.choice('ABCD')}"
        car = str(rng.randrange(1, 9))
    screen = TrainTicket(
        lang=lang,
        clock=_clock(ctx.when),
        train_no=number,
        from_station=origin,
        to_station=target,
        date=_date_long(day, lang)
        if lang == "zh"
        else f"{fmt.weekday(day, lang)[:3]}, {_date_long(day, lang)}",
        depart=fmt.format_time(depart, lang),
        arrive=fmt.format_time(arrive, lang),
        duration=duration,
        car=car,
        seat=seat,
        seat_class=rng.choice(res["seat_classes"]),
        passenger=ctx.persona.name,
        price=_money(price, lang),
        booking_ref=f"E{_digits(rng, 9)}"
        if lang == "zh"
        else "".join(rng.choice("ABCDEFGHJKLMNPQRSTUVWXYZ23456789") for _ in range(6)),
        gate=rng.choice(res["gates"]),
    )
    return Scene(
        "train_ticket", screen, {"destination": destination, "trip_date": fmt.format_date(day, lang)}
    )


def _music(ctx: Context) -> Scene:
    lang, rng = ctx.lang, ctx.rng
    song = ctx.pick("songs")
    length = rng.randrange(150, 300)
    elapsed = rng.randrange(10, length - 10)
    screen = MusicPlayer(
        lang=lang,
        clock=_clock(ctx.when),
        track=song["track"],
        artist=song["artist"],
        album=song["album"],
        cover=images.identicon(song["album"], 300),
        playlist=ctx.pick("playlists"),
        elapsed=_mmss(elapsed),
        length=_mmss(length),
        progress=round(elapsed / length, 3),
        liked=rng.random() < 0.5,
    )
    return Scene("music_player", screen)


def _video(ctx: Context) -> Scene:
    lang, rng, res, params = ctx.lang, ctx.rng, ctx.res, ctx.params
    if "dish" in params:
        kind, subject = "cooking", params["dish"]
    elif "title" in params:
        kind, subject = "show", params["title"]
    elif "goal" in params:
        kind, subject = "fitness", ""
    else:
        kind, subject = "other", ""
    title = rng.choice(res["video_titles"][kind]).format(
        dish=subject, title=subject, city=ctx.attr("home.city")
    )
    title = title[:1].upper() + title[1:]
    channel = ctx.pick("channels")
    views = rng.randrange(2_000, 900_000)
    likes = max(12, views // rng.randrange(15, 60))
    length = rng.randrange(240, 1500)
    uploaded = (ctx.when - timedelta(days=rng.randrange(1, 60))).date()
    screen = VideoPage(
        lang=lang,
        clock=_clock(ctx.when),
        title=title,
        channel=channel,
        channel_avatar=images.avatar(channel),
        thumbnail=images.picture(title, 390, 220),
        views=(f"{views / 10000:.1f}万" if views >= 10000 else str(views))
        if lang == "zh"
        else f"{views:,} views",
        likes=str(likes) if lang == "zh" else f"{likes:,}",
        uploaded=_date_long(uploaded, lang)
        if lang == "zh"
        else f"{fmt.format_date(uploaded, lang)}, {uploaded.year}",
        duration=_mmss(length),
        comments=_comments(ctx),
    )
    return Scene("video_page", screen, {"subject": subject, "kind": kind})


def _ebook(ctx: Context) -> Scene:
    lang, rng = ctx.lang, ctx.rng
    book = ctx.pick("books")
    total = rng.randrange(180, 520)
    page = rng.randrange(5, total - 5)
    screen = EbookPage(
        lang=lang,
        clock=_clock(ctx.when),
        book=book["book"],
        author=book["author"],
        chapter=rng.choice(book["chapters"]),
        text=ctx.pick("passages"),
        progress=f"{round(100 * page / total)}%",
        page=f"第 {page} 页" if lang == "zh" else f"Page {page} of {total}",
    )
    return Scene("ebook_page", screen, {"book": book["book"]})


def _post(ctx: Context) -> Scene:
    lang, rng, res, params = ctx.lang, ctx.rng, ctx.res, ctx.params
    kind = "trip" if "destination" in params else "weekend"
    place = (
        params.get("attraction") or params.get("destination") or params.get("place") or ctx.attr("home.city")
    )
    author = ctx.persona.name if lang == "zh" else ctx.persona.name.lower().replace(" ", ".")
    text = rng.choice(res["post_texts"][kind]).format(place=place, activity=params.get("activity", ""))
    likes = rng.randrange(12, 2400)
    screen = SocialPost(
        lang=lang,
        clock=_clock(ctx.when),
        author=author,
        avatar=images.avatar(ctx.persona.name),
        location=params.get("destination") or place,
        text=text,
        image=images.picture(text, 390, 390),
        likes=f"{likes:,}",
        comments_count=str(rng.randrange(2, 80)),
        time=fmt.format_date(ctx.when.date(), lang),
        comments=_comments(ctx),
    )
    return Scene("social_post", screen, {"place": place})


def _calendar(ctx: Context) -> Scene:
    lang, rng, res = ctx.lang, ctx.rng, ctx.res
    record = ctx.anchor.record if ctx.anchor is not None and ctx.anchor.app == "calendar" else None
    day = record.start.date() if record is not None else ctx.when.date()
    slots = {
        "gym": ctx.attr("sport.gym") or "—",
        "friend": ctx.attr("social_circle.best_friend") or "—",
        "platform": ctx.attr("shopping.favorite_platform") or "—",
        "course": ctx.attr("learning.current_course") or "—",
    }
    hours = rng.sample([8, 9, 10, 11, 13, 14, 15, 16, 17, 18, 19, 20], 3)
    if record is not None:
        hours = [h for h in hours if h != record.start.hour][:2]
    events = []
    for hour, filler in zip(hours, rng.sample(res["calendar_fillers"], len(hours))):
        start = datetime.combine(day, datetime.min.time()) + timedelta(
            hours=hour, minutes=rng.choice([0, 0, 30])
        )
        events.append((start, fill(filler["title"], slots), fill(filler["location"], slots)))
    if record is not None:
        events.append((record.start, record.title, record.location))
    events.sort()
    screen = CalendarScreen(
        lang=lang,
        clock=_clock(ctx.when),
        month=f"{day.year}年{day.month}月" if lang == "zh" else f"{fmt.MONTHS_EN[day.month - 1]} {day.year}",
        day=str(day.day),
        weekday=fmt.weekday(day, lang).replace("周", "星期"),
        events=[CalendarEvent(time=fmt.format_time(s, lang), title=t, location=loc) for s, t, loc in events],
    )
    return Scene(
        "calendar", screen, {"date": fmt.format_date(day, lang), "anchored": record.title if record else ""}
    )


def _bill(ctx: Context) -> Scene:
    lang, rng, res = ctx.lang, ctx.rng, ctx.res
    record = ctx.anchor.record
    moment = ctx.anchor.timestamp - timedelta(minutes=rng.randrange(1, 30))
    screen = BillScreen(
        lang=lang,
        clock=_clock(ctx.anchor.timestamp),
        merchant=record.merchant,
        amount="-" + _money(record.amount, lang),
        category=record.category,
        method=record.payment_method,
        time=_stamp(moment, lang),
        transaction_id=_digits(rng, 16) if lang == "zh" else f"TXN-{_digits(rng, 4)}-{_digits(rng, 4)}",
        status=res["status"]["bill"],
    )
    return Scene("bill", screen, {"merchant": record.merchant, "date": fmt.format_date(moment.date(), lang)})


def _note(ctx: Context) -> Scene:
    lang, rng, res, params = ctx.lang, ctx.rng, ctx.res, ctx.params
    record = ctx.anchor.record if ctx.anchor is not None else None
    if record is not None and record.kind == "note":
        title, lines = record.title, [line.strip() for line in record.body.splitlines() if line.strip()]
    else:
        kind = (
            "packing"
            if "destination" in params
            else "errand"
            if ctx.leaf is not None
            and "errand" in (ctx.leaf.kind, (ctx.episode.params.get("_episode") if ctx.episode else ""))
            else "other"
        )
        if record is not None and record.kind == "todo":
            kind = "errand"
        spec = res["note_lists"][kind]
        title = spec["title"].format(destination=params.get("destination", ""))
        lines = rng.sample(spec["items"], rng.randrange(3, 7))
    edited = ctx.when - timedelta(minutes=rng.randrange(1, 300))
    screen = NoteScreen(
        lang=lang,
        clock=_clock(ctx.when),
        title=title,
        edited=f"{fmt.format_date(edited.date(), lang)} {fmt.format_time(edited, lang)}"
        if lang == "zh"
        else f"{fmt.format_date(edited.date(), lang)}, {edited.year} at {fmt.format_time(edited, lang)}",
        folder=ctx.pick("folders"),
        lines=lines,
    )
    return Scene("note", screen, {"title": title})


BUILDERS = {
    "chat_wechat": lambda ctx: _chat(ctx, "chat_wechat"),
    "chat_telegram": lambda ctx: _chat(ctx, "chat_telegram"),
    "chat_x": lambda ctx: _chat(ctx, "chat_x"),
    "shopping_order": _order,
    "payment_transfer": _transfer,
    "train_ticket": _train,
    "music_player": _music,
    "video_page": _video,
    "ebook_page": _ebook,
    "social_post": _post,
    "calendar": _calendar,
    "bill": _bill,
    "note": _note,
}


def build(template: str, ctx: Context) -> Scene:
    return BUILDERS[template](ctx)
