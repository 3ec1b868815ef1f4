"""One persona's view of a dataset: its records, in a canonical order, and the indexes every stage uses.

The view holds the dataset's own record objects (no copies, except a graph whose events are not yet
in id order). QA's `World` is this view plus the facts QA asks about; eval's replay plan is derived
from it; a synthesis `Trajectory` shows its records through one.
"""

from __future__ import annotations

from collections.abc import Iterable
from functools import cached_property

from keme.models import (
    Anchor,
    Claim,
    Event,
    EventGraph,
    ImageRecord,
    Message,
    Persona,
    QAItem,
    ScheduleBlock,
    Session,
)


class PersonaView:
    """A persona with its anchors, event graph (events by id), sessions (in time order), schedule (in time
    order), claims, questions and screenshots."""

    def __init__(
        self,
        persona: Persona,
        *,
        anchors: Iterable[Anchor] = (),
        graph: EventGraph | None = None,
        sessions: Iterable[Session] = (),
        schedule: Iterable[ScheduleBlock] = (),
        claims: Iterable[Claim] = (),
        qa: Iterable[QAItem] = (),
        images: Iterable[ImageRecord] = (),
    ):
        self.persona = persona
        self.anchors: dict[str, Anchor] = {a.id: a for a in anchors}
        if graph is None:
            graph = EventGraph(persona_id=persona.id, events=[], edges=[])
        ids = [e.id for e in graph.events]
        # the order graphs.jsonl keeps, whether the graph comes from memory or from disk
        if ids != sorted(ids):
            graph = graph.model_copy(update={"events": sorted(graph.events, key=lambda e: e.id)})
        self.graph = graph
        self.sessions: list[Session] = sorted(sessions, key=lambda s: (s.start, s.id))
        self.schedule: list[ScheduleBlock] = sorted(schedule, key=lambda b: (b.start, b.id))
        self.claims: list[Claim] = list(claims)
        self.qa: list[QAItem] = list(qa)
        self.images: dict[str, ImageRecord] = {r.id: r for r in images}

    @property
    def lang(self) -> str:
        return self.persona.language

    @cached_property
    def messages(self) -> dict[str, Message]:
        """Every message of the persona by id, in time order."""
        return {m.id: m for s in self.sessions for m in s.messages}

    @cached_property
    def session_of(self) -> dict[str, str]:
        """Message id -> id of the session that holds it."""
        return {m.id: s.id for s in self.sessions for m in s.messages}

    @cached_property
    def claims_by_id(self) -> dict[str, Claim]:
        return {c.id: c for c in self.claims}

    @cached_property
    def sessions_by_id(self) -> dict[str, Session]:
        return {s.id: s for s in self.sessions}

    @cached_property
    def events(self) -> dict[str, Event]:
        return {e.id: e for e in self.graph.events}
