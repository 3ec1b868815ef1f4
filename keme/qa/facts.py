"""Atomic facts: what each session reveals, with the message that states it.

A fact is only recorded when its display value literally appears in a message
of the session, so every question built on it has a quotable source.
"""

from __future__ import annotations

import functools
from collections import Counter, defaultdict
from dataclasses import dataclass, field
from datetime import datetime, time

from keme.dataset import Dataset, PersonaView
from keme.days import WAKING
from keme.models import Anchor, Event, Message, Session
from keme.prior.anchors import anchor_slots
from keme.synth.params import SET
from keme.text import resources
from keme.text.normalize import norm_text

PARAM_KEYS = (
    "destination",
    "attraction",
    "local_food",
    "companion",
    "project",
    "colleague",
    "deadline",
    "symptom",
    "clinic",
    "goal",
    "person",
    "occasion",
    "restaurant",
    "gift",
    "product",
    "price",
    "dish",
    "title",
    "resource",
    "relative",
    "activity",
    "place",
    "device",
    "issue",
    "vet_clinic",
)


@dataclass(frozen=True)
class Fact:
    kind: str  # "attr", an app type, or an episode kind
    key: str  # attribute key, record field or episode param
    value: str  # as it appears in the text
    message_id: str
    session_id: str
    event_id: str
    when: datetime  # timestamp of the message that states it
    context: dict[str, str] = field(default_factory=dict, compare=False, hash=False)
    version: int = 0  # attribute facts: index of the persona version


class World(PersonaView):
    """One persona's view of the dataset plus the facts QA asks about (`world_of` fills them)."""

    def __init__(self, view: PersonaView):
        super().__init__(
            view.persona,
            anchors=view.anchors.values(),
            graph=view.graph,
            sessions=view.sessions,
            schedule=view.schedule,
            claims=view.claims,
            qa=view.qa,
            images=view.images.values(),
        )
        self.facts: list[Fact] = []
        self.by_session: dict[str, list[Fact]] = defaultdict(list)

    @functools.cached_property
    def corpus(self) -> str:
        """Every message, normalised and joined: fast "is this mentioned anywhere?" checks."""
        return "\n".join(norm_text(m.content) for m in self.messages.values())

    @functools.cached_property
    def user_lines(self) -> list[tuple[datetime, str]]:
        """Every user message's time and normalised text, in order: "on which days did she name it?"."""
        return [
            (m.timestamp, norm_text(m.content)) for s in self.sessions for m in s.messages if m.role == "user"
        ]

    @functools.cached_property
    def user_said(self) -> str:
        """Every user message, normalised and joined: "did she ever name it herself?"."""
        return "\n".join(line for _, line in self.user_lines)

    @functools.cached_property
    def all_said(self) -> str:
        """Every message joined, then normalised as one text (a value split over two messages counts)."""
        return norm_text("\n".join(m.content for m in self.messages.values()))

    @functools.cached_property
    def chat_hours(self) -> tuple[time, time]:
        """The persona's own chat hours: from the earliest to the latest time of day she wrote to the
        assistant, within her waking hours (keme.days.WAKING). A question is one she asks her assistant,
        so it is asked within them, never at 03:00 when she has never chatted."""
        times = [
            m.timestamp.time() for s in self.sessions if not s.filler for m in s.messages if m.role == "user"
        ]
        if not times:
            return WAKING
        return max(WAKING[0], min(times)), min(WAKING[1], max(times))

    @functools.cached_property
    def bills_at(self) -> Counter[str]:
        """How many payments the wallet holds at each merchant: a merchant paid once is named without its
        amount ("when did I pay at China Eastern", not "pay ¥2312.71 at China Eastern")."""
        return Counter(a.record.merchant for a in self.anchors.values() if a.record.kind == "bill")

    def mentions(self, term: str) -> bool:
        needle = norm_text(term)
        return bool(needle) and needle in self.corpus

    def episode_of(self, leaf: Event) -> Event:
        """The episode a leaf belongs to (itself for depth-1 leaves)."""
        if leaf.depth == 2 and leaf.parent_id:
            return self.events[leaf.parent_id]
        return leaf

    def episode_kind(self, leaf: Event) -> str:
        episode = self.episode_of(leaf)
        return episode.params.get("_episode", episode.change or episode.kind)

    def params_of(self, leaf: Event) -> dict[str, str]:
        episode = self.episode_of(leaf)
        merged = dict(episode.params) | leaf.params
        return {k: v for k, v in merged.items() if not k.startswith("_") and not k.startswith(SET)}


def _first_message_with(
    session: Session, value: str, roles: tuple[str, ...] = ("user", "assistant")
) -> Message | None:
    for message in session.messages:
        if message.role in roles and value in message.content:
            return message
    return None


def extract(world: World) -> None:
    """Fill `world.facts` and `world.by_session`."""
    res = resources.get(world.lang)
    facts: list[Fact] = []
    # persona attributes: every evidence link is a fact
    for attr in world.persona.attributes():
        for index, version in enumerate(attr.versions):
            for message_id in version.evidence:
                message = world.messages.get(message_id)
                if message is None:
                    continue
                session_id = world.session_of[message_id]
                facts.append(
                    Fact(
                        "attr",
                        attr.key,
                        version.value,
                        message_id,
                        session_id,
                        world.sessions_by_id[session_id].event_id,
                        message.timestamp,
                        {},
                        index,
                    )
                )
    anomalous = _anomalous_sessions(world)
    facts = [f for f in facts if f.session_id not in anomalous]
    for session in world.sessions:
        if session.id in anomalous:
            continue  # an LLM agent's output that failed its checks: kept in the trajectory, not asked about
        leaf = world.events.get(session.event_id)  # imported datasets have no event graph
        # the anchor record, as the app reported it
        if session.anchor_id:
            anchor = world.anchors[session.anchor_id]
            system = next(m for m in session.messages if m.role == "system")
            slots = anchor_slots(anchor, world.lang, res)
            context = dict(slots) | _record_context(anchor)
            for key, value in slots.items():
                if value and value in system.content:
                    facts.append(
                        Fact(
                            anchor.app,
                            key,
                            value,
                            system.id,
                            session.id,
                            session.event_id,
                            system.timestamp,
                            context,
                        )
                    )
        # episode details, where the dialogue states them
        if leaf is None:
            continue
        params = world.params_of(leaf)
        kind = world.episode_kind(leaf)
        context = dict(params) | {"moment": leaf.kind}
        for key in PARAM_KEYS:
            value = params.get(key)
            if not value:
                continue
            message = _first_message_with(session, value)
            if message is not None:
                facts.append(
                    Fact(kind, key, value, message.id, session.id, leaf.id, message.timestamp, context)
                )
    facts.sort(key=lambda f: (f.when, f.message_id, f.kind, f.key))
    world.facts = facts
    world.by_session = defaultdict(list)
    for fact in facts:
        world.by_session[fact.session_id].append(fact)


def _anomalous_sessions(world: World) -> set[str]:
    flagged = set()
    for session in world.sessions:
        event = world.events.get(session.event_id)
        while event is not None:
            if event.anomaly:
                flagged.add(session.id)
                break
            event = world.events.get(event.parent_id) if event.parent_id else None
    return flagged


def _record_context(anchor: Anchor) -> dict[str, str]:
    """Canonical values of a record (ISO dates, exact amounts) for answer specs."""
    record = anchor.record
    context = {"anchor_id": anchor.id, "app": anchor.app, "reported": anchor.timestamp.isoformat()}
    if record.kind == "bill":
        context |= {"amount_value": str(record.amount), "category_value": record.category}
    elif record.kind == "calendar":
        context |= {"start_value": record.start.isoformat(), "end_value": record.end.isoformat()}
    elif record.kind == "todo":
        context |= {"due_value": record.due.isoformat()}
    elif record.kind == "voice_memo":
        context |= {"duration_value": str(record.duration_seconds)}
    elif record.kind == "document":
        context |= {"pages_value": str(record.pages)}
    elif record.kind == "note":
        context |= {"lines": "\n".join(line for line in record.body.splitlines() if line.strip())}
    elif record.kind == "screen":
        context |= {"lines": "\n".join(line for line in record.text.splitlines() if line.strip())}
    return context


def world_of(view: PersonaView) -> World:
    """A persona's view with its facts extracted."""
    world = World(view)
    extract(world)
    return world


def worlds_of(dataset: Dataset) -> list[World]:
    """Every persona's world, in the order of personas.jsonl."""
    return [world_of(view) for view in dataset.views()]
