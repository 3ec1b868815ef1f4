"""The simulated world a trajectory is said from: where the persona is (the schedule) and every fact
the text states (claims).

A claim is the ledger entry behind one statement: the generator records it when a message states a
value, and the coherence checker (keme.world.check) and the QA stage read it back. A message of small
talk only (it asserts nothing about the persona's world) has no claim and is marked `smalltalk`.
"""

from __future__ import annotations

from datetime import datetime
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from keme.models.ids import Id

Speaker = Literal["user", "assistant", "app"]
Place = Literal["home", "office", "venue", "trip", "transit"]


class Claim(BaseModel):
    """One statement about the persona's world, as said in one message."""

    model_config = ConfigDict(extra="forbid")

    id: Id = Field(description="<message id>-c<k>, k counting from 1 in the order said")
    persona_id: Id
    message_id: Id
    speaker: Speaker = Field(description="who said it: the user, the assistant, or an app record")
    subject: str = Field(
        description="what it is about: 'persona', 'event:<event id>', 'anchor:<anchor id>', "
        "'person:<name>', 'object:<name>', 'day:<YYYY-MM-DD>', or 'general' (a fact of the world at "
        "large the text states, such as a checked-bag allowance: one value for every persona)"
    )
    predicate: str = Field(
        description="what is said about it: a persona attribute key or a registered predicate"
    )
    value: str = Field(description="the canonical value: numbers as plain digits, dates ISO, names as said")
    valid_from: datetime
    valid_to: datetime | None = Field(default=None, description="None: until a later claim changes it")
    said: str = Field(description="the text of the message that states it")


class ScheduleBlock(BaseModel):
    """Where the persona is, with whom, doing what, over one interval; a persona's blocks never overlap."""

    model_config = ConfigDict(extra="forbid")

    id: Id
    persona_id: Id
    start: datetime
    end: datetime
    place: Place
    city: str = Field(description="the city the persona is in (the trip city on a trip)")
    venue: str | None = Field(default=None, description="the named venue for place 'venue'")
    activity: str = Field(description="'home', 'work', 'trip', 'travel', or the leaf moment being lived")
    companions: list[str] = Field(default_factory=list)
    event_id: Id | None = Field(default=None, description="the event that puts the persona here")
