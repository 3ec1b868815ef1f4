"""The app screens: one data model per screen, rendered by one jinja2 template per language.

A template marks every value a visual question may ask about with
`data-fact="<name>"`; after rendering, the text of those elements is read back
from the page (the DOM), and only that text is used as visual ground truth.
"""

from __future__ import annotations

from typing import ClassVar, Literal

from pydantic import BaseModel, ConfigDict, Field


class _Screen(BaseModel):
    model_config = ConfigDict(extra="forbid")

    lang: Literal["en", "zh"]
    clock: str = Field(description="status-bar time, e.g. 9:41")

    FACT_FIELDS: ClassVar[tuple[str, ...]] = ()  # scalar fields the template marks with data-fact

    def expected_facts(self) -> dict[str, str]:
        """The data-fact values a correct template shows: the contract tests hold every template to."""
        return {name: str(getattr(self, name)) for name in self.FACT_FIELDS} | self._list_facts()

    def _list_facts(self) -> dict[str, str]:
        return {}


class ChatLine(BaseModel):
    sender: str
    avatar: str = Field(description="data: URI")
    text: str
    time: str
    me: bool = False


class ChatScreen(_Screen):
    """chat_wechat / chat_telegram / chat_x: a DM or group. Facts: `title`, and `line-<i>` for each message
    text."""

    title: str
    group: bool = False
    members: int = 2
    lines: list[ChatLine]

    FACT_FIELDS = ("title",)

    def _list_facts(self) -> dict[str, str]:
        return {f"line-{i}": line.text for i, line in enumerate(self.lines)}


class OrderItem(BaseModel):
    name: str
    quantity: int
    price: str
    image: str = Field(description="data: URI")


class ShoppingOrder(_Screen):
    """Facts: store, order_id, status, item-<i> (name), qty-<i>, total, placed, delivery, address."""

    store: str
    order_id: str
    status: str
    items: list[OrderItem]
    subtotal: str
    shipping: str
    total: str
    placed: str
    delivery: str
    address: str

    FACT_FIELDS = ("store", "order_id", "status", "total", "placed", "delivery", "address")

    def _list_facts(self) -> dict[str, str]:
        return {
            k: v
            for i, item in enumerate(self.items)
            for k, v in ((f"item-{i}", item.name), (f"qty-{i}", str(item.quantity)))
        }


class PaymentTransfer(_Screen):
    """Facts: counterparty, amount, note, time, method, transaction_id, status."""

    direction: Literal["sent", "received"]
    counterparty: str
    avatar: str
    amount: str
    note: str
    time: str
    method: str
    transaction_id: str
    status: str

    FACT_FIELDS = ("counterparty", "amount", "note", "time", "method", "transaction_id", "status")


class TrainTicket(_Screen):
    """Facts: train_no, from_station, to_station, date, depart, arrive, car, seat, seat_class, passenger,
    price, booking_ref, gate."""

    train_no: str
    from_station: str
    to_station: str
    date: str
    depart: str
    arrive: str
    duration: str
    car: str
    seat: str
    seat_class: str
    passenger: str
    price: str
    booking_ref: str
    gate: str

    FACT_FIELDS = (
        "train_no",
        "from_station",
        "to_station",
        "date",
        "depart",
        "arrive",
        "car",
        "seat",
        "seat_class",
        "passenger",
        "price",
        "booking_ref",
        "gate",
    )


class MusicPlayer(_Screen):
    """Facts: track, artist, album, playlist, elapsed, length."""

    track: str
    artist: str
    album: str
    cover: str
    playlist: str
    elapsed: str
    length: str
    progress: float = Field(ge=0, le=1)
    liked: bool = False

    FACT_FIELDS = ("track", "artist", "album", "playlist", "elapsed", "length")


class Comment(BaseModel):
    user: str
    text: str


class VideoPage(_Screen):
    """Facts: title, channel, views, likes, uploaded, duration, comment-<i>."""

    title: str
    channel: str
    channel_avatar: str
    thumbnail: str
    views: str
    likes: str
    uploaded: str
    duration: str
    comments: list[Comment]

    FACT_FIELDS = ("title", "channel", "views", "likes", "uploaded", "duration")

    def _list_facts(self) -> dict[str, str]:
        return {f"comment-{i}": c.text for i, c in enumerate(self.comments)}


class EbookPage(_Screen):
    """Facts: book, author, chapter, progress, page."""

    book: str
    author: str
    chapter: str
    text: str
    progress: str
    page: str

    FACT_FIELDS = ("book", "author", "chapter", "progress", "page")


class SocialPost(_Screen):
    """Facts: author, location, text, likes, comments_count, time, comment-<i>."""

    author: str
    avatar: str
    location: str
    text: str
    image: str
    likes: str
    comments_count: str
    time: str
    comments: list[Comment]

    FACT_FIELDS = ("author", "location", "text", "likes", "comments_count", "time")

    def _list_facts(self) -> dict[str, str]:
        return {f"comment-{i}": c.text for i, c in enumerate(self.comments)}


class CalendarEvent(BaseModel):
    time: str
    title: str
    location: str


class CalendarScreen(_Screen):
    """Facts: month, day, event-<i>-time, event-<i>-title, event-<i>-location."""

    month: str
    day: str
    weekday: str
    events: list[CalendarEvent]

    FACT_FIELDS = ("month", "day")

    def _list_facts(self) -> dict[str, str]:
        return {
            f"event-{i}-{k}": getattr(e, k)
            for i, e in enumerate(self.events)
            for k in ("time", "title", "location")
        }


class BillScreen(_Screen):
    """Facts: merchant, amount, category, method, time, transaction_id, status."""

    merchant: str
    amount: str
    category: str
    method: str
    time: str
    transaction_id: str
    status: str

    FACT_FIELDS = ("merchant", "amount", "category", "method", "time", "transaction_id", "status")


class NoteScreen(_Screen):
    """Facts: title, edited, folder, line-<i>."""

    title: str
    edited: str
    folder: str
    lines: list[str]

    FACT_FIELDS = ("title", "edited", "folder")

    def _list_facts(self) -> dict[str, str]:
        return {f"line-{i}": line for i, line in enumerate(self.lines)}


MODELS: dict[str, type[_Screen]] = {
    "chat_wechat": ChatScreen,
    "chat_telegram": ChatScreen,
    "chat_x": ChatScreen,
    "shopping_order": ShoppingOrder,
    "payment_transfer": PaymentTransfer,
    "train_ticket": TrainTicket,
    "music_player": MusicPlayer,
    "video_page": VideoPage,
    "ebook_page": EbookPage,
    "social_post": SocialPost,
    "calendar": CalendarScreen,
    "bill": BillScreen,
    "note": NoteScreen,
}
