"""The world state of one trajectory: the values it holds for named quantities, and the claims the text
states.

The realizer renders a session with `ctx.recall = ledger.recall`, so a named quantity (`{num:2-8@party_size}`)
is drawn once per scope and every later line that names it says the same value; `on_said` reports each
value a line says, and `ledger.say` turns a message's reports into `Claim`s on the right subject with the
right validity. Only values of sessions that were kept become world state (`keep`), so a dialogue
rejected as a repeat leaves nothing behind; the state is a pydantic model the synthesis checkpoint holds.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from datetime import date, datetime, time
from decimal import Decimal, InvalidOperation

from pydantic import BaseModel, ConfigDict, Field

from keme.models import Anchor, Claim, Event, Message, Persona
from keme.models.attributes import ATTRIBUTES, ROUTINE, attribute_key, claim_predicate
from keme.models.world import Speaker
from keme.text import lang as fmt
from keme.world.facts import holder
from keme.world.predicates import PredicateError, Predicates
from keme.world.slots import ANCHOR_SLOTS, OBJECT_SLOTS, SESSION_SLOTS, event_predicate

TRIP_DATES = {"start_date": "_trip_start", "end_date": "_trip_end"}  # slot -> ISO param the planner keeps
PARTS_OF_DAY = {
    "morning": "morning",
    "afternoon": "afternoon",
    "evening": "evening",
    "早上": "morning",
    "中午": "noon",
    "下午": "afternoon",
    "晚上": "evening",
}
NAMED = ("num", "money", "pool", "fact", "says")

Fact = tuple[str, str, str, datetime, datetime | None]  # subject, predicate, value, valid_from, valid_to
Recall = Callable[[str, Callable[[], str]], str]  # what keme.text.template.Context.recall takes


@dataclass(frozen=True)
class Report:
    """One value a rendered line says: what `keme.text.template.render` passes to `on_said`."""

    kind: (
        str  # persona | old | slot | pool | num | money | fact, or record: a slot showing the record's field
    )
    name: str  # attribute key, slot name, or the named quantity's predicate ("" / pool name: a free draw)
    value: str  # canonical as drawn
    text: str  # as it appears in the line


@dataclass(frozen=True)
class Scene:
    """Where the session being said sits: the leaf, its episode (depth-1 ancestor), its app record."""

    persona: Persona
    leaf: Event
    episode: Event
    anchor: Anchor | None
    lang: str
    params: dict[str, str]  # the leaf's details merged over its episode's


def episode_of(leaf: Event, events: dict[str, Event]) -> Event:
    """The depth-1 ancestor of `leaf` (the leaf itself when it is an episode of one moment)."""
    event = leaf
    while event.depth > 1 and event.parent_id in events:
        event = events[event.parent_id]
    return event


class LedgerState(BaseModel):
    """What a checkpoint keeps: the values held, keyed `<scope key>|<predicate>` in the order drawn."""

    model_config = ConfigDict(extra="forbid")

    values: dict[str, str] = Field(default_factory=dict)


class Ledger:
    """Recall named quantities by scope; turn said values into claims."""

    def __init__(self, predicates: Predicates, state: LedgerState | None = None):
        self.predicates = predicates
        self.state = state if state is not None else LedgerState()
        self._scene: Scene | None = None
        self._pending: dict[str, str] = {}

    # -- recall -------------------------------------------------------------
    def begin(self, scene: Scene) -> None:
        """Start (or restart) rendering one session: values drawn from here on are pending until `keep`."""
        self._scene = scene
        self._pending = {}

    def recall(self, predicate: str, draw: Callable[[], str]) -> str:
        """The value the world holds for `predicate` in the current scope, drawn on first use; a routine
        (`training_per_week`) is the persona attribute's version valid at the session, never a draw."""
        routine = self._routine(predicate)
        if routine is not None:
            return routine
        key = self._key(predicate)
        held = self._pending.get(key)
        if held is None:
            held = self.state.values.get(key)
        if held is None:
            held = self._pending[key] = self._in_details(predicate) or draw()
        return held

    def _routine(self, predicate: str) -> str | None:
        """The persona's value of the attribute `predicate` names, at the session's start."""
        scene = self._require_scene()
        key = attribute_key(predicate)
        if key is None or not _has(scene.persona, key):  # a persona written before the attribute existed
            return None
        when = scene.anchor.timestamp if scene.anchor is not None else scene.leaf.start
        return scene.persona.value_at(key, when)

    def held(self) -> list[tuple[str, str]]:
        """(predicate, value) of every value held in the current session's scopes (the routines in force,
        the persona's, its episode's, its record's, this session's), pending ones included, in the order
        drawn."""
        scene = self._require_scene()
        scopes = {"persona", f"event:{scene.episode.id}", f"session:{scene.leaf.id}"}
        if scene.anchor is not None:
            scopes.add(f"anchor:{scene.anchor.id}")
        out: dict[str, str] = {}
        for spec in ATTRIBUTES:  # the routines in force, as `recall` says them
            if spec.dimension == ROUTINE and (value := self._routine(claim_predicate(spec.key))) is not None:
                out[claim_predicate(spec.key)] = value
        for key, value in [*self.state.values.items(), *self._pending.items()]:
            scope, _, predicate = key.partition("|")
            if scope in scopes or scope == self._stable(predicate):
                out.setdefault(predicate, value)
        return list(out.items())

    def _in_details(self, predicate: str) -> str | None:
        """The episode's own value for `predicate`, when the planner chose one (a social episode's
        party_size): a line that names it says what the episode's slots say."""
        scene = self._require_scene()
        numeric = self._predicate(predicate).type in ("int", "number", "money")
        for slot, value in sorted(scene.params.items()):
            if slot.startswith(("_", "set:")) or event_predicate(slot) != predicate:
                continue
            if not numeric or value.isdigit():
                return value
        return None

    def keep(self, leaf_id: str) -> None:
        """The session of `leaf_id` is final: its drawn values become world state (session ones lapse)."""
        if self._scene is not None and self._scene.leaf.id == leaf_id:
            for key, value in self._pending.items():
                if not key.startswith("session:"):
                    self.state.values[key] = value
        self._pending = {}

    def _key(self, predicate: str) -> str:
        scene = self._require_scene()
        scope = self._predicate(predicate).scope
        if (stable := self._stable(predicate)) is not None:  # one value per store, city, company
            return f"{stable}|{predicate}"
        if scope in ("persona", "general"):
            return f"{scope}|{predicate}"
        if scope == "event":
            return f"event:{scene.episode.id}|{predicate}"
        if scope == "anchor" and scene.anchor is not None:
            return f"anchor:{scene.anchor.id}|{predicate}"
        return f"session:{scene.leaf.id}|{predicate}"  # an anchor value with no record: this session's

    def _stable(self, predicate: str) -> str | None:
        """The scope a stable fact is held in (keme.world.facts), or None."""
        scene = self._require_scene()
        when = scene.anchor.timestamp if scene.anchor is not None else scene.leaf.start

        def attribute(key: str) -> str | None:
            return scene.persona.value_at(key, when) if _has(scene.persona, key) else None

        return holder(predicate, scene.params, attribute)

    def _require_scene(self) -> Scene:
        if self._scene is None:
            raise RuntimeError("Ledger.recall outside a session: call Ledger.begin(scene) first")
        return self._scene

    def _predicate(self, name: str):
        predicate = self.predicates.get(name)
        if predicate is None:
            raise PredicateError(
                f"unregistered predicate {name!r}; register it in keme/world/predicates.yaml as "
                f'`{name}: {{scope: event, type: int, about: "..."}}`'
            )
        return predicate

    # -- claims -------------------------------------------------------------
    def say(
        self,
        scene: Scene,
        message: Message,
        speaker: Speaker,
        reports: list[Report],
        window: tuple[datetime, datetime],
    ) -> list[Claim]:
        """The claims `message` states, from its reports, numbered `<message id>-c<k>` in order said; a
        value said twice is one claim, a free draw none."""
        claims: list[Claim] = []
        seen: set[tuple[str, str, str]] = set()
        for report in reports:
            if self.free(report):
                continue
            for subject, predicate, value, valid_from, valid_to in self._facts(
                scene, message, report, window
            ):
                if (subject, predicate, value) in seen:
                    continue
                seen.add((subject, predicate, value))
                claims.append(
                    _claim(
                        id=f"{message.id}-c{len(claims) + 1}",
                        persona_id=scene.persona.id,
                        message_id=message.id,
                        speaker=speaker,
                        subject=subject,
                        predicate=predicate,
                        value=value,
                        valid_from=valid_from,
                        valid_to=valid_to,
                        said=message.content,
                    )
                )
        return claims

    def free(self, report: Report) -> bool:
        """A draw no predicate names (`{num:2-5}`, `{pool.dishes}`): a value the world does not hold.

        `render` names a pool report by its predicate when it has one and by its list otherwise, so a
        pool report is named iff its name is registered (tests/test_claims.py keeps list names and
        predicate names apart)."""
        if report.kind in ("num", "money"):
            return not report.name
        return report.kind == "pool" and report.name not in self.predicates

    def _facts(
        self, scene: Scene, message: Message, report: Report, window: tuple[datetime, datetime]
    ) -> list[Fact]:
        """(subject, predicate, value, valid_from, valid_to) of what one report says; a calendar entry's
        time slot says when it starts and when it ends."""
        anchor = scene.anchor
        fields = anchor_fields(anchor) if report.kind == "record" and anchor is not None else {}
        if anchor is not None and report.name in fields:
            subject = f"anchor:{anchor.id}"
            said = [fields[report.name], *anchor_extras(anchor, report.name)]
            return [(subject, predicate, value, anchor.timestamp, None) for predicate, value in said]
        return [self._fact(scene, message, report, window)]

    def _fact(
        self, scene: Scene, message: Message, report: Report, window: tuple[datetime, datetime]
    ) -> Fact:
        persona, episode = scene.persona, scene.episode
        session_subject = f"event:{scene.leaf.id}"
        if report.kind in ("persona", "old"):
            valid_from, valid_to = _version_validity(persona, report.name, report.value, message.timestamp)
            return "persona", claim_predicate(report.name), report.value, valid_from, valid_to
        if report.kind == "says" and report.name == "condition":
            thing = next((scene.params[slot] for slot in OBJECT_SLOTS if scene.params.get(slot)), None)
            if thing is None:
                raise PredicateError(
                    f"{scene.leaf.kind}: a line declares an object's condition but the moment names no "
                    f"object (slots {', '.join(OBJECT_SLOTS)}); drop `says: {{condition: ..}}` there"
                )
            return f"object:{thing}", "condition", report.value, window[0], None
        if report.kind in NAMED:
            predicate = self._predicate(report.name)
            value = canonical(report.value, predicate.type, scene)
            key = attribute_key(report.name)
            if predicate.scope == "persona" and key is not None and _has(persona, key):
                valid_from, valid_to = _version_validity(persona, key, value, message.timestamp)
                return "persona", report.name, value, valid_from, valid_to
            if predicate.scope == "persona":
                return "persona", report.name, value, persona.start, None
            if predicate.scope == "general":
                return "general", report.name, value, persona.start, None
            if predicate.scope == "event":
                return f"event:{episode.id}", report.name, value, episode.start, episode.end
            if predicate.scope == "anchor" and scene.anchor is not None:
                return f"anchor:{scene.anchor.id}", report.name, value, scene.anchor.timestamp, None
            return session_subject, report.name, value, window[0], window[1]
        # a slot of the session or of the episode (or a record slot in a session without its record)
        name = report.name
        if name in SESSION_SLOTS:
            predicate_name = SESSION_SLOTS[name]
            if predicate_name == "name":
                return "persona", "name", report.value, persona.start, None
            value = _session_value(name, report.value, scene)
            return session_subject, predicate_name, value, window[0], window[1]
        predicate_name = event_predicate(name)
        iso = scene.params.get(TRIP_DATES.get(name, ""))
        value = iso or canonical(report.value, self._predicate(predicate_name).type, scene)
        return f"event:{episode.id}", predicate_name, value, episode.start, episode.end

    def anchor_claims(self, scene: Scene, message: Message, reports: list[Report]) -> list[Claim]:
        """The claims of an app message: the record fields it shows, and when the record was made (for
        records whose message names no other day)."""
        anchor = scene.anchor
        assert anchor is not None
        moment = (anchor.timestamp, anchor.timestamp)
        claims = self.say(scene, message, "app", reports, moment)
        if anchor.record.kind in ("bill", "voice_memo", "note", "screen", "document"):
            for predicate, value in (
                ("date", anchor.timestamp.date().isoformat()),
                ("time", anchor.timestamp.strftime("%H:%M")),
            ):
                claims.append(
                    _claim(
                        id=f"{message.id}-c{len(claims) + 1}",
                        persona_id=scene.persona.id,
                        message_id=message.id,
                        speaker="app",
                        subject=f"anchor:{anchor.id}",
                        predicate=predicate,
                        value=value,
                        valid_from=anchor.timestamp,
                        said=message.content,
                    )
                )
        return claims


def _claim(**fields) -> Claim:
    """A claim from parts already validated (message id, registered predicate, typed times): built
    without re-validating, since a persona-year makes thousands (tests/test_claims.py loads them back
    through the model)."""
    fields.setdefault("valid_to", None)
    return Claim.model_construct(**fields)


def close_versions(claims: list[Claim], persona: Persona) -> list[Claim]:
    """Claims on a persona attribute, valid until the version they state was replaced.

    A claim is made when it is said, before any later change is known (valid_to None); once the
    trajectory is done its versions are final and each claim ends where its version does."""
    closed = []
    for claim in claims:
        key = attribute_key(claim.predicate) if claim.subject == "persona" else None
        if key is not None and _has(persona, key) and claim.valid_to is None:
            _, valid_to = _version_validity(persona, key, claim.value, claim.valid_from)
            if valid_to is not None:
                claim = claim.model_copy(update={"valid_to": valid_to})
        closed.append(claim)
    return closed


def anchor_fields(anchor: Anchor) -> dict[str, tuple[str, str]]:
    """App record slot -> (predicate, canonical value), for the slots keme.prior.anchors.anchor_slots
    shows."""
    r = anchor.record
    fields: dict[str, str]
    if r.kind == "bill":
        fields = {
            "merchant": r.merchant,
            "amount": _money(r.amount),
            "category": r.category,
            "payment_method": r.payment_method,
        }
    elif r.kind == "voice_memo":
        fields = {"title": r.title, "duration": str(r.duration_seconds), "transcript": r.transcript}
    elif r.kind == "calendar":
        fields = {
            "title": r.title,
            "event_date": r.start.date().isoformat(),
            "event_time": r.start.strftime("%H:%M"),
            "location": r.location,
            "attendees": ", ".join(r.attendees),
        }
    elif r.kind == "note":
        fields = {"title": r.title, "body": r.body}
    elif r.kind == "todo":
        fields = {
            "title": r.title,
            "due_date": r.due.date().isoformat(),
            "priority": r.priority,
            "list_name": r.list_name,
        }
    elif r.kind == "screen":
        fields = {"source_app": r.source_app, "title": r.title, "text": r.text}
    else:
        fields = {"title": r.title, "doc_type": r.doc_type, "pages": str(r.pages), "summary": r.summary}
    return {slot: (ANCHOR_SLOTS[slot], value) for slot, value in fields.items()}


def anchor_extras(anchor: Anchor, slot: str) -> list[tuple[str, str]]:
    """What else a record slot says beyond its own field: a calendar time span's end."""
    r = anchor.record
    if r.kind == "calendar" and slot == "event_time":
        return [("end_time", r.end.strftime("%H:%M"))]
    return []


def _has(persona: Persona, key: str) -> bool:
    """The persona records attribute `key` (a persona written before routines were attributes does not)."""
    dimension, _, name = key.partition(".")
    return name in persona.dimensions.get(dimension, {})


def _version_validity(
    persona: Persona, key: str, value: str, when: datetime
) -> tuple[datetime, datetime | None]:
    """The validity of the version of `key` holding `value` at or before `when` (the latest such)."""
    versions = sorted(persona.attribute(key).versions, key=lambda v: v.valid_from)
    for i in range(len(versions) - 1, -1, -1):
        version = versions[i]
        if version.valid_from <= when and version.value == value:
            following = versions[i + 1].valid_from if i + 1 < len(versions) else None
            return version.valid_from, following
    return when, None


def _money(amount: Decimal) -> str:
    value = Decimal(str(amount)).quantize(Decimal("0.01"))
    return str(int(value)) if value == value.to_integral_value() else str(value)


def canonical(value: str, kind: str, scene: Scene) -> str:
    """`value` as a claim holds it: money and counts as plain digits, decimals as written without
    thousands commas, days ISO, times HH:MM."""
    if kind == "money":
        digits = "".join(c for c in value if c.isdigit() or c == ".")
        try:
            return _money(Decimal(digits))
        except InvalidOperation:
            return value
    if kind == "int":
        digits = "".join(c for c in value if c.isdigit())
        return digits or value
    if kind == "number":
        return value.replace(",", "")
    if kind == "date":
        day = parse_day(value, scene.leaf.start.date())
        return day.isoformat() if day else value
    if kind == "time":
        moment = parse_time(value)
        return moment.strftime("%H:%M") if moment else value
    return value


def parse_day(text: str, near: date) -> date | None:
    """An ISO day, 'March 4' or '3月4日', in the year that puts it nearest `near`."""
    try:
        return date.fromisoformat(text)
    except ValueError:
        pass
    month = day = None
    if "月" in text and text.endswith("日"):
        m, _, d = text[:-1].partition("月")
        if m.isdigit() and d.isdigit():
            month, day = int(m), int(d)
    else:
        name, _, d = text.partition(" ")
        if name in fmt.MONTHS_EN and d.isdigit():
            month, day = fmt.MONTHS_EN.index(name) + 1, int(d)
    if month is None or day is None:
        return None
    options = []
    for year in (near.year - 1, near.year, near.year + 1):
        try:
            options.append(date(year, month, day))
        except ValueError:
            continue
    return min(options, key=lambda d: abs((d - near).days)) if options else None


_CLOCK = re.compile(r"(\d{1,2}):(\d\d)(?:\s*([AaPp][Mm])\b)?")


def parse_time(text: str) -> time | None:
    """'14:05', '9:30 AM' or '2:05 PM'; of a span ('3:45 PM–4:00 PM'), when it starts."""
    match = _CLOCK.match(text.strip())
    if match is None:
        return None
    h, m, suffix = int(match.group(1)), int(match.group(2)), (match.group(3) or "").upper()
    if suffix == "PM" and h != 12:
        h += 12
    elif suffix == "AM" and h == 12:
        h = 0
    return time(h, m) if h < 24 and m < 60 else None


def _session_value(slot: str, value: str, scene: Scene) -> str:
    if slot == "date":
        day = parse_day(value, scene.leaf.start.date())
        return day.isoformat() if day else value
    if slot == "weekday":
        for names in fmt.WEEKDAYS.values():
            if value in names:
                return fmt.WEEKDAYS["en"][names.index(value)]
        return value
    if slot == "part_of_day":
        return PARTS_OF_DAY.get(value, value)
    return value
