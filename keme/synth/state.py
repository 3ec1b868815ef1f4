"""The working state of one persona's synthesis, and the indexes derived from it.

The records (persona, anchors, graph, sessions, claims) are the ones the dataset will hold:
the synthesis stage hands them over as they are (keme.synth.pipeline.add_trajectories),
and `view` shows them as the dataset's persona view. Only they and the values the world holds (the
ledger state) are persisted; the slot and queue indexes are rebuilt from them, so a checkpoint
restores exactly.
"""

from __future__ import annotations

import hashlib
import heapq
from collections import Counter
from dataclasses import dataclass, field
from datetime import date, datetime

from pydantic import BaseModel, ConfigDict, Field

from keme.dataset import PersonaView
from keme.days import BLOCKS, Block, Slot, block_of, block_window
from keme.models import Anchor, Claim, Edge, Event, EventGraph, Persona, Revision, Session
from keme.models.catalog import all_moments
from keme.prior.anchors import anchor_block
from keme.synth.lifecycle import LifeMemory
from keme.synth.variety import SmallTalk
from keme.world.ledger import Ledger, LedgerState
from keme.world.predicates import default_predicates

MOMENTS = frozenset(all_moments())


class Checkpoint(BaseModel):
    """Everything needed to continue a persona's synthesis."""

    model_config = ConfigDict(extra="forbid")

    persona: Persona
    anchors: list[Anchor]
    anchor_hashes: dict[str, str]
    graph: EventGraph
    sessions: list[Session]
    claims: list[Claim] = Field(default_factory=list)
    ledger: LedgerState = Field(default_factory=LedgerState)
    usage: dict[str, int] = Field(
        default_factory=dict, description="lines said so far, by usage-budget key (keme.synth.variety)"
    )
    smalltalk: dict[str, str] = Field(
        default_factory=dict, description="small talk said so far, key -> part kind (keme.synth.variety)"
    )
    done: bool = False


def is_leaf(event: Event) -> bool:
    return event.kind in MOMENTS


def slots_of(start: datetime, end: datetime) -> list[Slot]:
    """Day blocks touched by [start, end]."""
    found: list[Slot] = []
    day = start.date()
    while day <= end.date():
        for block in BLOCKS:
            lo, hi = block_window(day, block)
            if lo <= end and hi >= start:
                found.append((day, block))
        day = date.fromordinal(day.toordinal() + 1)
    return found


def dialogue_hash(session: Session) -> str:
    """What two sessions must not share: their dialogue text. An app share that no one answers (the
    record alone, or with one user line) is told apart by its record."""
    shared = not any(m.role == "assistant" for m in session.messages)
    text = "\n".join(m.content for m in session.messages if shared or m.role != "system")
    return hashlib.sha256(text.encode()).hexdigest()


@dataclass
class Trajectory:
    persona: Persona
    anchors: list[Anchor]
    anchor_hashes: dict[str, str]
    graph: EventGraph
    sessions: list[Session] = field(default_factory=list)
    claims: list[Claim] = field(default_factory=list)
    ledger: Ledger = field(default_factory=lambda: Ledger(default_predicates()))
    events: dict[str, Event] = field(default_factory=dict)
    occupied: dict[Slot, str] = field(default_factory=dict)
    anchor_by_id: dict[str, Anchor] = field(default_factory=dict)
    anchor_slots: dict[Slot, str] = field(default_factory=dict)
    dialogues: set[str] = field(default_factory=set)
    queue: list[tuple[datetime, int, str]] = field(default_factory=list)
    usage: Counter[str] = field(default_factory=Counter)  # the usage budget's counts; checkpointed
    lifecycle: LifeMemory = field(default_factory=LifeMemory)  # cued events said; rebuilt from sessions
    smalltalk: SmallTalk = field(default_factory=SmallTalk)  # small talk said so far; checkpointed

    @classmethod
    def from_checkpoint(cls, cp: Checkpoint) -> Trajectory:
        traj = cls(
            cp.persona,
            cp.anchors,
            cp.anchor_hashes,
            cp.graph,
            list(cp.sessions),
            list(cp.claims),
            Ledger(default_predicates(), cp.ledger.model_copy(deep=True)),
        )
        traj.usage = Counter(cp.usage)
        traj.smalltalk = SmallTalk(cp.smalltalk)
        traj.reindex()
        return traj

    def checkpoint(self, done: bool = False) -> Checkpoint:
        return Checkpoint(
            persona=self.persona,
            anchors=self.anchors,
            anchor_hashes=self.anchor_hashes,
            graph=self.graph,
            sessions=self.sessions,
            claims=self.claims,
            ledger=self.ledger.state,
            usage=dict(self.usage),
            smalltalk=self.smalltalk.state(),
            done=done,
        )

    def view(self) -> PersonaView:
        """The persona's records as a dataset view (what QA and rendering read), without copying them."""
        return PersonaView(
            self.persona, anchors=self.anchors, graph=self.graph, sessions=self.sessions, claims=self.claims
        )

    def reindex(self) -> None:
        self.events = {e.id: e for e in self.graph.events}
        self.anchor_by_id = {a.id: a for a in self.anchors}
        self.anchor_slots = {anchor_block(a): a.id for a in self.anchors}
        self.occupied = {}
        for event in self.graph.events:
            if is_leaf(event):
                for slot in slots_of(event.start, event.end):
                    self.occupied[slot] = event.id
        self.dialogues = {dialogue_hash(s) for s in self.sessions}
        self.queue = [(e.start, e.depth, e.id) for e in self.graph.events if e.state == "planned"]
        heapq.heapify(self.queue)

    # -- events -------------------------------------------------------------
    def children(self, parent_id: str | None) -> list[Event]:
        return sorted(
            (e for e in self.graph.events if e.parent_id == parent_id), key=lambda e: (e.start, e.id)
        )

    def add_event(self, event: Event) -> None:
        self.graph.events.append(event)
        self.events[event.id] = event
        if is_leaf(event):
            for slot in slots_of(event.start, event.end):
                self.occupied[slot] = event.id
        if event.state == "planned":
            heapq.heappush(self.queue, (event.start, event.depth, event.id))

    def remove_event(self, event_id: str) -> None:
        self.events.pop(event_id)
        self.graph.events = [e for e in self.graph.events if e.id != event_id]
        self.graph.edges = [x for x in self.graph.edges if event_id not in (x.source, x.target)]
        for slot in [s for s, owner in self.occupied.items() if owner == event_id]:
            del self.occupied[slot]
        for child in [e.id for e in self.graph.events if e.parent_id == event_id]:
            self.remove_event(child)

    def move_event(self, event: Event, start: datetime, end: datetime) -> None:
        """Change a planned event's window, keeping slot occupancy and queue order right."""
        if is_leaf(event):
            for slot in [s for s, owner in self.occupied.items() if owner == event.id]:
                del self.occupied[slot]
        event.start, event.end = start, end
        if is_leaf(event):
            for slot in slots_of(start, end):
                self.occupied[slot] = event.id
        self.graph.edges = [
            x for x in self.graph.edges if not (event.id in (x.source, x.target) and not self._edge_ok(x))
        ]
        if event.state == "planned":
            heapq.heappush(self.queue, (event.start, event.depth, event.id))

    def _edge_ok(self, edge: Edge) -> bool:
        return self.events[edge.source].end < self.events[edge.target].start

    def add_edge(self, source: str, target: str, relation: str = "before") -> bool:
        edge = Edge(source=source, target=target, relation=relation)  # type: ignore[arg-type]
        if not self._edge_ok(edge) or any(
            x.source == source and x.target == target for x in self.graph.edges
        ):
            return False
        self.graph.edges.append(edge)
        return True

    def chain_edges(self, events: list[Event]) -> None:
        """Link each event to the latest-ending sibling that ends before it starts."""
        ordered = sorted(events, key=lambda e: (e.start, e.id))
        for i, target in enumerate(ordered):
            before = [e for e in ordered[:i] if e.end < target.start]
            if before:
                source = max(before, key=lambda e: (e.end, e.id))
                self.add_edge(source.id, target.id)

    def next_planned(self) -> Event | None:
        while self.queue:
            start, _, event_id = heapq.heappop(self.queue)
            event = self.events.get(event_id)
            if event is not None and event.state == "planned" and event.start == start:
                return event
        return None

    def record(self, revision: Revision) -> None:
        self.graph.revisions.append(revision)

    # -- slots --------------------------------------------------------------
    def slot_free(
        self, slot: Slot, allow_anchor: str | None = None, own_anchors: frozenset[str] = frozenset()
    ) -> bool:
        if slot in self.occupied:
            return False
        anchor_id = self.anchor_slots.get(slot)
        return anchor_id is None or anchor_id == allow_anchor or anchor_id in own_anchors

    def anchor_slot(self, anchor_id: str) -> tuple[date, Block]:
        return anchor_block(self.anchor_by_id[anchor_id])


def block_at(moment: datetime) -> Block:
    block = block_of(moment)
    if block is None:
        raise ValueError(f"{moment} is outside the day blocks")
    return block
