"""The realizer's side of presuppositions: which lines the simulated world allows at a session's moment.

A line is drawn only if what it takes for granted (keme.text.presup) holds at the session: the part of
day covers the whole window the session may fall in, an event it speaks of as past has begun, a date it
counts from is the declared number of days away, the persona is in the state it assumes, and the item it
speaks of has reached that stage in this session's order. The checker re-checks the same declarations on
the written dataset without this module.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from datetime import date, datetime, timedelta

from keme.days import is_workday
from keme.models import Anchor, Event, Persona
from keme.models.attributes import attribute_key
from keme.text.dates import parse_display_date
from keme.text.presup import STAGES, Presup, in_part


@dataclass
class Moment:
    """Where a session sits: its earliest and latest possible times, the persona's events, the episode's
    details, the persona (its attributes at `start`), and the item stages said so far in the session."""

    start: datetime
    end: datetime
    events: tuple[Event, ...]
    params: dict[str, str]
    persona: Persona
    own: frozenset[str] = frozenset()  # the session's leaf and its ancestors: not earlier events
    dates: dict[str, date] = field(default_factory=dict)  # dated details: trip dates, a record's due day
    stages: list[str] = field(default_factory=list)
    doc: frozenset[str] | None = None  # what the session's document holds (keme.synth.documents), if any

    @property
    def day(self) -> date:
        return self.start.date()


def dated(params: dict[str, str], anchor: Anchor | None, at: datetime) -> dict[str, date]:
    """The dates a session's details name: an episode detail written as a date ("May 22"), and the app
    record's due day (`due_date`) or start day (`event_date`)."""
    out = {}
    for name, text in params.items():
        if name.startswith("_"):
            continue
        when = parse_display_date(text, at)
        if when is not None and text.strip() and len(text) <= 20:
            out[name] = when
    if anchor is not None:
        due, start = getattr(anchor.record, "due", None), getattr(anchor.record, "start", None)
        if isinstance(due, datetime):
            out["due_date"] = due.date()
        if isinstance(start, datetime):
            out["event_date"] = start.date()
    return out


def _of_kind(event: Event, kind: str) -> bool:
    return kind in (event.kind, event.change, event.params.get("_episode"))


def _begun(events: Iterable[Event], kind: str, moment: Moment) -> list[Event]:
    """The earlier events of `kind`; of the session's own episode when the episode has one (the subject:
    "we shipped it" is this project's crunch, not another's)."""
    found = [e for e in events if _of_kind(e, kind) and e.id not in moment.own]
    mine = [e for e in found if e.parent_id in moment.own]
    return [e for e in (mine or found) if e.start < moment.start]


def _stage_ok(stage: str, said: list[str]) -> bool:
    """A stage after those already said: never back, an arrival said once, nothing after an order."""
    if not said:
        return True
    last = max(STAGES.index(s) for s in said)
    if "ordered" in said and STAGES.index(stage) > 0:
        return False
    if stage == "delivered" and "delivered" in said:
        return False
    return STAGES.index(stage) >= last


def holds(presup: Presup, moment: Moment) -> bool:
    """Whether every part of `presup` holds at `moment`."""
    if presup.empty:
        return True
    if presup.part is not None:
        if not (in_part(presup.part, moment.start.hour) and in_part(presup.part, moment.end.hour)):
            return False
    if presup.months and not (moment.start.month in presup.months and moment.end.month in presup.months):
        return False
    if presup.happened is not None and not _begun(moment.events, presup.happened, moment):
        return False
    if presup.not_happened is not None and _begun(moment.events, presup.not_happened, moment):
        return False
    if presup.planned is not None and not any(
        _of_kind(e, presup.planned) and e.start > moment.end for e in moment.events
    ):
        return False
    if presup.date is not None:
        name, window = presup.date
        when = moment.dates.get(name)
        if when is None or not window.holds((when - moment.day).days):
            return False
    if presup.ago is not None:
        kind, window = presup.ago
        begun = _begun(moment.events, kind, moment)
        if not begun or not window.holds((moment.day - max(e.start for e in begun).date()).days):
            return False
    if presup.state is not None:
        key, values = presup.state
        if _held(moment.persona, key, moment.start) not in values:
            return False
    if presup.value is not None:
        predicate, window = presup.value
        number = _held(moment.persona, attribute_key(predicate) or "", moment.start)
        if number is None or not number.isdigit() or not window.holds(int(number)):
            return False
    if presup.since is not None:
        begun = [e.start for e in moment.events if e.id in moment.own and e.depth == 1]
        if not begun or not presup.since.holds((moment.day - min(begun).date()).days):
            return False
    if presup.workday is not None:
        ahead = timedelta(days=presup.workday)
        if not all(is_workday(d + ahead, moment.persona.country) for d in {moment.day, moment.end.date()}):
            return False
    if presup.item is not None and not _stage_ok(presup.item, moment.stages):
        return False
    if presup.doc and not _doc_ok(presup.doc, moment.doc):
        return False
    return True


def _doc_ok(wanted: frozenset[str], held: frozenset[str] | None) -> bool:
    """A line about a document: said of one that holds each feature it names and none it names with `!`."""
    if held is None:
        return False
    return all((f[1:] not in held) if f.startswith("!") else (f in held) for f in wanted)


def _held(persona: Persona, key: str, when: datetime) -> str | None:
    """The value the persona holds for attribute `key` at `when` (None where it has none)."""
    attr = next((a for a in persona.attributes() if a.key == key), None)
    return attr.value_at(when) if attr is not None else None


def said(presup: Presup, moment: Moment) -> None:
    """Record what a drawn line states about the session's order."""
    if presup.item is not None:
        moment.stages.append(presup.item)
