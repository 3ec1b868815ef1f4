"""Knowledge anchors: fixed app sessions that synthesis must embed unchanged."""

from __future__ import annotations

import hashlib
import json
from datetime import datetime
from decimal import Decimal
from typing import Annotated, Literal, Union

from pydantic import BaseModel, ConfigDict, Field

from keme.models.ids import Id

AppType = Literal["bill", "voice_memo", "calendar", "note", "todo", "screen", "document"]
APP_TYPES: tuple[AppType, ...] = ("bill", "voice_memo", "calendar", "note", "todo", "screen", "document")


class _Record(BaseModel):
    model_config = ConfigDict(extra="forbid")


class BillRecord(_Record):
    kind: Literal["bill"] = "bill"
    merchant: str
    amount: Decimal = Field(decimal_places=2)
    currency: str
    category: str
    payment_method: str


class VoiceMemoRecord(_Record):
    kind: Literal["voice_memo"] = "voice_memo"
    title: str
    duration_seconds: int
    transcript: str


class CalendarRecord(_Record):
    kind: Literal["calendar"] = "calendar"
    title: str
    start: datetime
    end: datetime
    location: str
    attendees: list[str]


class NoteRecord(_Record):
    kind: Literal["note"] = "note"
    title: str
    body: str


class TodoRecord(_Record):
    kind: Literal["todo"] = "todo"
    title: str
    due: datetime
    priority: Literal["low", "medium", "high"]
    list_name: str


class ScreenRecord(_Record):
    """A screenshot memo: the app it was taken in and the text it shows."""

    kind: Literal["screen"] = "screen"
    source_app: str
    title: str
    text: str


class DocumentRecord(_Record):
    kind: Literal["document"] = "document"
    title: str
    doc_type: str
    pages: int
    summary: str


AnchorRecord = Annotated[
    Union[BillRecord, VoiceMemoRecord, CalendarRecord, NoteRecord, TodoRecord, ScreenRecord, DocumentRecord],
    Field(discriminator="kind"),
]


class Anchor(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    id: Id
    persona_id: Id
    app: AppType
    app_name: str = Field(description="display name of the reporting app, in the persona's language")
    timestamp: datetime
    record: AnchorRecord
    sha256: str = Field(default="", description="hash of everything above; proves the anchor was not altered")

    def content_hash(self) -> str:
        payload = self.model_dump(mode="json", exclude={"sha256"})
        blob = json.dumps(payload, sort_keys=True, ensure_ascii=False, separators=(",", ":"))
        return hashlib.sha256(blob.encode()).hexdigest()

    def sealed(self) -> Anchor:
        return self.model_copy(update={"sha256": self.content_hash()})
