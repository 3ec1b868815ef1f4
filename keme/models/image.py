"""Screenshots shared in a session: where the PNG is, what it shows, and what was read back from it."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from keme.models.ids import Id, ImagePath

SCREEN_TEMPLATES: tuple[
    str, ...
] = (  # the app screens keme.omni renders (one jinja2 template per language each)
    "chat_wechat",
    "chat_telegram",
    "chat_x",
    "shopping_order",
    "payment_transfer",
    "train_ticket",
    "music_player",
    "video_page",
    "ebook_page",
    "social_post",
    "calendar",
    "bill",
    "note",
)


class ImageRecord(BaseModel):
    model_config = ConfigDict(extra="forbid")

    id: Id
    persona_id: Id
    session_id: Id
    message_id: Id = Field(description="the user message that shares the image")
    path: ImagePath = Field(description="relative to the dataset root, e.g. images/p01-img003.png")
    sha256: str
    template: str
    language: Literal["en", "zh"]
    caption: str = Field(description="what a captioning model would say; no small details")
    about: dict[str, str] = Field(
        default_factory=dict, description="what the screenshot is about, for phrasing questions"
    )
    facts: dict[str, str] = Field(description="data-fact name -> text read back from the rendered page (DOM)")
    dom_text: str = Field(description="all visible text of the rendered page")
    screen: dict[str, Any] = Field(description="the template's input, to re-render the image")
    width: int
    height: int
