"""The recursive temporal event graph, flattened for disk.

Every event knows its parent; edges only join siblings and always run from an
event that ends to one that starts later. networkx is used for checks, plain
JSON for storage.
"""

from __future__ import annotations

from datetime import datetime
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from keme.models.ids import Id

EventState = Literal["planned", "expanded", "realized"]


class Event(BaseModel):
    model_config = ConfigDict(extra="forbid")

    id: Id
    parent_id: Id | None
    depth: int
    kind: str = Field(description="chapter, an episode kind (trip, work_project, ...) or a leaf moment")
    title: str
    summary: str
    start: datetime
    end: datetime
    requirements: list[str] = Field(
        default_factory=list, description="constraints the realization must honour"
    )
    params: dict[str, str] = Field(default_factory=dict)
    state: EventState = "planned"
    change: str | None = Field(default=None, description="id of the persona change this event realizes")
    anchor_id: Id | None = Field(default=None, description="grounded anchor (leaves only, at most one)")
    pending_anchors: list[Id] = Field(
        default_factory=list,
        description="anchors inside this unexpanded event's window, grounded on expansion",
    )
    session_id: Id | None = None
    anomaly: str | None = Field(
        default=None, description="why an LLM agent's output was not accepted; excluded from QA"
    )


class Edge(BaseModel):
    model_config = ConfigDict(extra="forbid")

    source: Id
    target: Id
    relation: Literal["before", "causes"] = "before"


class Revision(BaseModel):
    """A change to the graph after planning, with the agent and the reason."""

    model_config = ConfigDict(extra="forbid")

    at: datetime = Field(description="replay time when the change was made")
    agent: Literal["grounder", "reviser"]
    action: Literal["add", "delete", "modify", "stretch"]
    event_id: Id
    reason: str
    detail: dict[str, str] = Field(default_factory=dict)


class EventGraph(BaseModel):
    model_config = ConfigDict(extra="forbid")

    persona_id: Id
    events: list[Event]
    edges: list[Edge]
    revisions: list[Revision] = Field(default_factory=list)
