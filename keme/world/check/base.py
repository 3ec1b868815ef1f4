"""What every coherence rule shares: the finding it reports and the ways it reads a persona's world."""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import date, datetime, time
from functools import cached_property

from pydantic import BaseModel, ConfigDict, Field

from keme.dataset.views import PersonaView
from keme.models import Claim, Event, Message, Session
from keme.world.catalog import Catalog
from keme.world.cues import Cues


class Finding(BaseModel):
    """One incoherence: the rule that found it, the messages that show it, and what is wrong."""

    model_config = ConfigDict(extra="forbid")

    rule: str
    persona_id: str
    message_ids: list[str] = Field(default_factory=list)
    text: str = Field(description="what is wrong, quoting the words")


@dataclass(frozen=True)
class Trip:
    """A trip episode: the persona is away in `city` from the first to the last day. The first and last days
    are travel days (at home before leaving in the morning, at home again in the evening), so the span
    held for certain is noon of the first day to noon of the last."""

    event: Event
    city: str
    first: date
    last: date

    @property
    def start(self) -> datetime:
        return datetime.combine(self.first, time(12, 0))

    @property
    def end(self) -> datetime:
        return datetime.combine(self.last, time(12, 0))

    def holds(self, moment: datetime) -> bool:
        return self.start <= moment < self.end


_CLAUSE = re.compile(r"[^.!?;。！？；\n]+[.!?;。！？；]*")


class World:
    """A persona view read for checking: messages with their sessions and episodes, claims by message,
    trips; built once per persona and shared by the rules."""

    def __init__(self, view: PersonaView, catalog: Catalog, cues: Cues):
        self.view = view
        self.catalog = catalog
        self.cues = cues
        self.persona_id = view.persona.id

    def finding(self, rule: str, message_ids: list[str], text: str) -> Finding:
        return Finding(rule=rule, persona_id=self.persona_id, message_ids=message_ids, text=text)

    @cached_property
    def messages(self) -> list[tuple[Session, Message]]:
        """Every message with its session, in time order."""
        return [(s, m) for s in self.view.sessions for m in s.messages]

    def said(self, roles: tuple[str, ...] = ("user", "assistant")) -> list[tuple[Session, Message]]:
        return [(s, m) for s, m in self.messages if m.role in roles]

    @cached_property
    def claims_of(self) -> dict[str, list[Claim]]:
        """Message id -> the claims it states (by its links, and by the claims' own message ids)."""
        out: dict[str, list[Claim]] = {}
        for claim in self.view.claims:
            out.setdefault(claim.message_id, []).append(claim)
        return out

    def episode(self, session: Session) -> Event | None:
        """The depth-1 event a session belongs to (the leaf itself when the graph has depth 1)."""
        event = self.view.events.get(session.event_id)
        while event is not None and event.depth > 1:
            event = self.view.events.get(event.parent_id or "")
        return event

    def leaf(self, session: Session) -> Event | None:
        return self.view.events.get(session.event_id)

    @cached_property
    def trips(self) -> list[Trip]:
        out = []
        for event in self.view.graph.events:
            params = event.params
            if event.kind != "trip" or "_trip_start" not in params or "_trip_end" not in params:
                continue
            try:
                first, last = (
                    date.fromisoformat(params["_trip_start"]),
                    date.fromisoformat(params["_trip_end"]),
                )
            except ValueError:
                continue
            out.append(Trip(event, params.get("destination", ""), first, last))
        return sorted(out, key=lambda t: (t.first, t.event.id))

    def trip_at(self, moment: datetime) -> Trip | None:
        return next((t for t in self.trips if t.holds(moment)), None)

    def clauses(self, text: str) -> list[str]:
        return clauses(text)

    def now_clauses(self, text: str) -> list[str]:
        """The clauses that speak of the moment they are said (no other day, no condition, no habit)."""
        return [c for c in self.clauses(text) if not self.cues.any(self.cues.other_day, c)]


def clauses(text: str) -> list[str]:
    """The sentences of a message; a cue is judged inside its own clause. The period of an abbreviation
    ("Summit Climbing Co. after work", "St. Paul") ends no sentence."""
    guarded = _ABBREVIATION.sub(lambda m: m.group(1) + _HELD_DOT, text)
    found = [c.strip().replace(_HELD_DOT, ".") for c in _CLAUSE.findall(guarded) if c.strip()]
    return found or [text]


_HELD_DOT = "\x00"
_ABBREVIATION = re.compile(
    r"\b((?:Co|Inc|Ltd|Corp|Bros|St|Ave|Blvd|Rd|Mt|Dr|Mr|Mrs|Ms|Jr|Sr|Prof|vs|approx)|(?:e\.g|i\.e))\."
    r"(?=\s+\S)"
)


def quote(text: str, width: int = 90) -> str:
    """A message quoted in a finding, cut to a readable length."""
    flat = " ".join(text.split())
    return f"“{flat if len(flat) <= width else flat[: width - 1] + '…'}”"


def day(moment: datetime) -> str:
    return moment.strftime("%a %Y-%m-%d %H:%M")
