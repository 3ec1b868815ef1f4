"""Sessions and messages: what a memory system replays."""

from __future__ import annotations

from datetime import datetime
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, SerializerFunctionWrapHandler, model_serializer

from keme.models.ids import Id, ImagePath

Role = Literal["user", "assistant", "system"]


class Message(BaseModel):
    model_config = ConfigDict(extra="forbid")

    id: Id
    role: Role
    app: str | None = Field(default=None, description="app name for system messages reported by an app")
    speaker: str | None = Field(
        default=None, description="speaker name in imported human-human dialogues (LoCoMo)"
    )
    content: str
    timestamp: datetime
    images: list[ImagePath] = Field(
        default_factory=list, description="paths under images/ shared with this message"
    )
    captions: list[str] = Field(
        default_factory=list,
        description="one caption per image, for caption-based systems (an imported photo that is not in the "
        "file, LoCoMo's blip_caption: its caption alone)",
    )
    claims: list[Id] = Field(default_factory=list, description="ids of the claims this message states")
    smalltalk: bool = Field(default=False, description="asserts nothing about the persona's world")


class Session(BaseModel):
    model_config = ConfigDict(extra="forbid")

    id: Id
    persona_id: Id
    event_id: Id
    language: Literal["en", "zh"]
    pattern: str = Field(description="dialogue pattern the realizer used")
    anchor_id: Id | None = None
    author: Literal["procedural", "llm"] = Field(
        default="procedural", description="which brain wrote the dialogue"
    )
    start: datetime
    end: datetime
    messages: list[Message]
    filler: bool = Field(
        default=False,
        description="a haystack session (keme/synth/filler.py): an everyday assistant chat that states "
        "nothing about the persona; written only when true",
    )

    @property
    def opened_by_user(self) -> Message | None:
        """The message the user opened the session with (None where an app's notification opened it).

        When a person chooses to chat is what a habit question asks about ("what time of day do I usually
        chat with you?"); a reply to a notification keeps the app's time, not the user's."""
        first = self.messages[0] if self.messages else None
        return first if first is not None and first.role == "user" else None

    @model_serializer(mode="wrap")
    def _omit_default_filler(self, handler: SerializerFunctionWrapHandler) -> dict:
        """A persona's own session is written without the key, as before filler existed."""
        data = handler(self)
        if not self.filler and isinstance(data, dict):
            data.pop("filler", None)
        return data
