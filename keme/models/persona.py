"""Persona with versioned, evidence-linked attributes.

An attribute value only counts as *revealed* once a message links to it; the
version history is what knowledge-update questions are built from.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, SerializerFunctionWrapHandler, model_serializer

from keme.days import Block
from keme.models.ids import Id

Language = Literal["en", "zh"]


class AttributeVersion(BaseModel):
    model_config = ConfigDict(extra="forbid")

    value: str
    valid_from: datetime
    evidence: list[Id] = Field(default_factory=list, description="ids of messages that state this value")


class Attribute(BaseModel):
    model_config = ConfigDict(extra="forbid")

    key: str = Field(description="'<dimension>.<name>', e.g. 'career.company'")
    mutable: bool
    versions: list[AttributeVersion]

    @property
    def dimension(self) -> str:
        return self.key.split(".", 1)[0]

    def version_at(self, when: datetime) -> AttributeVersion | None:
        """The version valid at `when`; None if the attribute did not exist yet."""
        current = None
        for version in self.versions:
            if version.valid_from <= when:
                current = version
            else:
                break
        return current

    def value_at(self, when: datetime) -> str | None:
        version = self.version_at(when)
        return version.value if version else None


class Habits(BaseModel):
    """What the persona does the same way most of the time, so the world repeats it.

    A habit question ("how do I usually pay?", "what time of day do I chat with you?") has an answer only
    where most of a period's payments or chats share a value (keme.days.clear_leader); drawn uniformly,
    no value ever holds a majority. Each share is the chance one payment (one chat she opens, one visit
    to a shop of a category she has a regular in) follows the habit; the rest spread over the others."""

    model_config = ConfigDict(extra="forbid")

    payment_method: str = Field(description="the payment method she uses most, as a bill shows it")
    payment_share: float = Field(ge=0.5, le=1.0, description="the chance a payment uses it")
    chat_block: Block = Field(description="the day block she usually opens a chat with the assistant in")
    chat_share: float = Field(
        ge=0.0,
        le=1.0,
        description="the chance a chat she opens goes first to her usual block, where the moment allows it "
        "(a cook-along is in the evening whatever her habit)",
    )
    regulars: dict[str, str] = Field(
        default_factory=dict,
        description="bill category key -> her favourite merchant there (a coffee shop, a supermarket)",
    )
    regular_share: float = Field(
        ge=0.0, le=1.0, description="the chance a payment in such a category goes to her favourite there"
    )


class Persona(BaseModel):
    model_config = ConfigDict(extra="forbid")

    id: Id
    name: str
    language: Language
    country: str
    start: datetime
    end: datetime
    dimensions: dict[str, dict[str, Attribute]] = Field(
        description="dimension -> attribute name -> versioned attribute"
    )
    habits: Habits | None = Field(
        default=None,
        description="a synthesized persona's routines (payment method, chat time, regular shops); none for "
        "an imported one",
    )
    source: dict[str, Any] | None = Field(
        default=None,
        description="an imported persona: what its source record holds that keme has no model for, verbatim "
        "(LoCoMo's observations and summaries, a turn's image url), so an export to that format writes it "
        "back; never shown to a memory system",
    )

    @model_serializer(mode="wrap")
    def _without_unset_source(self, handler: SerializerFunctionWrapHandler) -> dict:
        """`source` is written only for an imported persona that has some, `habits` only for a synthesized
        one (an imported persona keeps its bytes)."""
        data = handler(self)
        if isinstance(data, dict):
            for key in ("source", "habits"):
                if data.get(key) is None:
                    data.pop(key, None)
        return data

    def attribute(self, key: str) -> Attribute:
        dimension, name = key.split(".", 1)
        return self.dimensions[dimension][name]

    def attributes(self) -> list[Attribute]:
        return [attr for dim in self.dimensions.values() for attr in dim.values()]

    def value_at(self, key: str, when: datetime) -> str | None:
        return self.attribute(key).value_at(when)

    def update_count(self) -> int:
        """Knowledge updates: versions after the first, plus attributes that appear mid-trajectory."""
        total = 0
        for attr in self.attributes():
            if not attr.versions:
                continue
            later = len(attr.versions) - 1
            appeared = 1 if attr.versions and attr.versions[0].valid_from > self.start else 0
            total += later + appeared
        return total
