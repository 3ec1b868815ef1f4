"""The realizer: one leaf event becomes one time-stamped session.

A session is the grounded anchor's app message (if any) and a user–assistant
dialogue rendered from the leaf moment's pattern. Persona facts enter the text
only through template slots, so every message that states an attribute is
linked as its evidence, and a life change takes effect exactly at the message
that announces it. Every value a line says is reported as it is rendered and
becomes a claim of its message (keme.world.ledger) once the message has an id;
named quantities are recalled from the trajectory's ledger, so they agree.
"""

from __future__ import annotations

import random
from dataclasses import dataclass, field
from datetime import datetime, timedelta

from keme.config import SynthConfig
from keme.errors import SynthesisError
from keme.models import Anchor, AttributeVersion, Claim, Event, Message, Persona, Session
from keme.models.catalog import ANCHOR_MOMENTS, CHANGES
from keme.prior.anchors import anchor_message_text, anchor_slots
from keme.synth.planner import SET
from keme.synth.state import Trajectory, dialogue_hash
from keme.text import lang as fmt
from keme.text.resources import Exchange, Resources
from keme.text.template import Context, render
from keme.world.ledger import Recall, Report, Scene, episode_of
from keme.world.schedule import where_slots
from keme.world.slots import REVEAL_SLOT

MAX_ATTEMPTS = 12
TOPICAL_EXTRA = 0.3  # chance that a reveal is about an attribute outside the pattern's topics


class RealizationError(SynthesisError, RuntimeError):
    """A leaf event cannot be turned into a dialogue (its phrasing, its time window, its update message)."""


@dataclass
class Draft:
    """A message before it has a timestamp and an id."""

    role: str
    content: str
    app: str | None = None
    links: set[str] = field(default_factory=set)
    update: str | None = None  # change name announced by this message
    said: list[Report] = field(default_factory=list)  # every value the text says, as rendered
    smalltalk: bool = False  # rendered from a line that says no value at all


def _persona_values(persona: Persona, when: datetime) -> dict[str, str]:
    values = {}
    for attr in persona.attributes():
        value = attr.value_at(when)
        if value is not None:
            values[attr.key] = value
    return values


def _slots(
    leaf: Event,
    parent: Event | None,
    persona: Persona,
    when: datetime,
    lang: str,
    place: dict[str, str] | None = None,
) -> dict[str, str]:
    params = dict(parent.params) if parent is not None and parent.depth > 0 else {}
    params |= leaf.params
    slots = {k: v for k, v in params.items() if not k.startswith("_") and not k.startswith(SET)}
    slots |= place or {}
    slots |= {
        "user_name": persona.name if lang == "zh" else persona.name.split(" ")[0],
        "date": fmt.format_date(when.date(), lang),
        "weekday": fmt.weekday(when.date(), lang),
        "part_of_day": fmt.part_of_day(when, lang),
    }
    return slots


def _pick(options: tuple[Exchange, ...], ctx: Context) -> Exchange | None:
    eligible = [ex for ex in options if ctx.can_render(ex.u) and ctx.can_render(ex.a)]
    return ctx.rng.choice(eligible) if eligible else None


def _say(
    exchange: Exchange,
    ctx: Context,
    drafts: list[Draft],
    update: str | None = None,
    reveal: str | None = None,
    record: dict[str, str] | None = None,
) -> None:
    """Render both sides of an exchange, keeping what each says; `{value}` of a reveal is attribute
    `reveal`, and a slot showing the app record's field (`record`: its display slots) is the record's."""
    for role, template in (("user", exchange.u), ("assistant", exchange.a)):
        links: set[str] = set()
        said: list[Report] = []

        def hear(kind: str, name: str, value: str, text: str, said: list[Report] = said) -> None:
            if kind == "slot":
                if reveal is not None and name == REVEAL_SLOT:
                    kind, name = "persona", reveal
                elif record and record.get(name) == value:
                    kind = "record"
            said.append(Report(kind, name, value, text))

        text = render(template, ctx, links.add, hear)
        drafts.append(
            Draft(
                role,
                text,
                links=links,
                update=update if role == "user" else None,
                said=said,
                smalltalk=not said,
            )
        )


def anchor_draft(anchor: Anchor, res: Resources) -> Draft:
    """The app message of a record, with the fields it shows."""
    said: list[Report] = []
    text = anchor_message_text(anchor, res, lambda kind, *r: said.append(Report("record", *r)))
    return Draft("system", text, app=anchor.app_name, said=said)


def _reveals(
    pattern_reveals: tuple[str, ...],
    ctx: Context,
    persona: Persona,
    when: datetime,
    cfg: SynthConfig,
    res: Resources,
) -> list[str]:
    """Attributes to mention in passing: topical ones first, unrevealed ones preferred."""
    weights = cfg.dialogue.reveal_weights
    count = ctx.rng.choices(range(len(weights)), weights)[0]
    existing = {k for k in ctx.persona}
    topical = [k for k in pattern_reveals if k in existing]
    if ctx.rng.random() < TOPICAL_EXTRA or not topical:
        unrevealed = sorted(k for k in existing if not _revealed(persona, k, when))
        if unrevealed:
            topical.append(ctx.rng.choice(unrevealed))
    chosen: list[str] = []
    for _ in range(count):
        candidates = [k for k in topical if k not in chosen and k in res.reveals]
        if not candidates:
            break
        weights_k = [3.0 if not _revealed(persona, k, when) else 1.0 for k in candidates]
        chosen.append(ctx.rng.choices(candidates, weights_k)[0])
    return chosen


def _revealed(persona: Persona, key: str, when: datetime) -> bool:
    version = persona.attribute(key).version_at(when)
    return bool(version and version.evidence)


def compose(
    leaf: Event,
    parent: Event | None,
    anchor: Anchor | None,
    persona: Persona,
    start: datetime,
    cfg: SynthConfig,
    res: Resources,
    rng: random.Random,
    recall: Recall | None = None,
    place: dict[str, str] | None = None,
) -> list[Draft]:
    """The messages of a session, in order, without timestamps; named quantities come from `recall`, and
    `place` holds the schedule's `{where}` and `{city}` for the leaf (keme.world.schedule.where_slots)."""
    lang = res.lang
    values = _persona_values(persona, start)
    ctx = Context(
        lang=lang,
        rng=rng,
        persona=values,
        slots=_slots(leaf, parent, persona, start, lang, place),
        pools=res.flat_pools,
        recall=recall,
    )
    drafts: list[Draft] = []
    moment = leaf.kind
    record = anchor_slots(anchor, lang, res) if anchor is not None else {}
    if anchor is not None:
        drafts.append(anchor_draft(anchor, res))
        if moment != ANCHOR_MOMENTS[anchor.app]:
            actx = Context(
                lang=lang,
                rng=rng,
                persona=values,
                slots=ctx.slots | anchor_slots(anchor, lang, res),
                pools=res.flat_pools,
                recall=recall,
            )
            exchange = _pick(res.anchor_mentions[anchor.app], actx)
            if exchange is not None:
                _say(exchange, actx, drafts, record=record)
        else:
            ctx.slots |= anchor_slots(anchor, lang, res)
    pattern = res.patterns[moment]
    change = CHANGES[leaf.change] if leaf.change else None
    beats = list(pattern.beats)
    if change is not None and "update" not in beats:
        beats.insert(1, "update")
    for beat in beats:
        if beat == "reveal":
            for key in _reveals(pattern.reveals, ctx, persona, start, cfg, res):
                rctx = Context(
                    lang=lang,
                    rng=rng,
                    persona=values,
                    slots=ctx.slots | {REVEAL_SLOT: values[key]},
                    pools=res.flat_pools,
                    recall=recall,
                )
                exchange = _pick(res.reveals[key], rctx)
                if exchange is None:
                    continue
                before = len(drafts)
                _say(exchange, rctx, drafts, reveal=key, record=record)
                for draft in drafts[before:]:
                    if values[key] in draft.content:
                        draft.links.add(key)
        elif beat == "update":
            if change is None:
                continue
            params = (dict(parent.params) if parent is not None and parent.depth > 0 else {}) | leaf.params
            new = {key: params[SET + key] for key in change.attributes}
            ctx.old = {key: values[key] for key in change.attributes if key in values}
            values.update(new)
            exchange = _pick(res.updates[change.name], ctx)
            if exchange is None:
                raise RealizationError(f"{leaf.id}: no renderable update phrasing for {change.name}")
            _say(exchange, ctx, drafts, update=change.name, record=record)
        elif rng.random() < beat.p:
            exchange = _pick(beat.options, ctx)
            if exchange is not None:
                _say(exchange, ctx, drafts, record=record)
    return drafts


def _gaps(drafts: list[Draft], rng: random.Random) -> list[int]:
    """Seconds between consecutive messages: quick replies, slower user turns."""
    gaps = []
    for previous, current in zip(drafts, drafts[1:]):
        if current.role == "assistant":
            gaps.append(rng.randint(3, 40))
        elif previous.role == "system":
            gaps.append(rng.randint(60, 600))
        else:
            gaps.append(rng.randint(25, 300))
    return gaps


def timestamps(drafts: list[Draft], leaf: Event, anchor: Anchor | None, rng: random.Random) -> list[datetime]:
    """Strictly increasing, inside the leaf window, the anchor message exactly at the anchor's time."""
    gaps = _gaps(drafts, rng)
    total = sum(gaps)
    if anchor is not None:
        start = anchor.timestamp
    else:
        room = (leaf.end - leaf.start).total_seconds() - total - 60
        start = leaf.start + timedelta(seconds=rng.randint(0, int(room)) if room > 0 else 0)
    room = (leaf.end - start).total_seconds()
    if total > room:
        scale = room / total
        gaps = [max(1, int(g * scale)) for g in gaps]
        if sum(gaps) > room:
            raise RealizationError(
                f"{leaf.id}: {len(drafts)} messages do not fit in {leaf.start}..{leaf.end}"
            )
    moments = [start.replace(microsecond=0)]
    for gap in gaps:
        moments.append(moments[-1] + timedelta(seconds=gap))
    return moments


def realize(leaf: Event, traj: Trajectory, cfg: SynthConfig, res: Resources, rng: random.Random) -> Session:
    """Render the session, link evidence and apply the leaf's life change to the persona."""
    persona = traj.persona
    parent = traj.events.get(leaf.parent_id) if leaf.parent_id else None
    anchor = traj.anchor_by_id[leaf.anchor_id] if leaf.anchor_id else None
    place = where_slots(persona, traj.graph.events, leaf, persona.country, res.lang)
    for _ in range(MAX_ATTEMPTS):
        probe_start = anchor.timestamp if anchor is not None else leaf.start
        traj.ledger.begin(scene_of(leaf, traj))
        drafts = compose(leaf, parent, anchor, persona, probe_start, cfg, res, rng, traj.ledger.recall, place)
        session = commit(leaf, drafts, traj, rng)
        if session is not None:
            return session
    raise RealizationError(f"{leaf.id}: could not produce a dialogue unlike the earlier ones")


def merged_params(leaf: Event, traj: Trajectory) -> dict[str, str]:
    parent = traj.events.get(leaf.parent_id) if leaf.parent_id else None
    return (dict(parent.params) if parent is not None and parent.depth > 0 else {}) | leaf.params


def scene_of(leaf: Event, traj: Trajectory) -> Scene:
    """Where `leaf`'s session sits in the world: its episode, its app record, its details."""
    anchor = traj.anchor_by_id[leaf.anchor_id] if leaf.anchor_id else None
    return Scene(
        persona=traj.persona,
        leaf=leaf,
        episode=episode_of(leaf, traj.events),
        anchor=anchor,
        lang=traj.persona.language,
        params=merged_params(leaf, traj),
    )


def commit(
    leaf: Event, drafts: list[Draft], traj: Trajectory, rng: random.Random, author: str = "procedural"
) -> Session | None:
    """Time-stamp the drafts into a session, link evidence, apply the change, record its claims; None if
    the dialogue is a repeat."""
    persona = traj.persona
    anchor = traj.anchor_by_id[leaf.anchor_id] if leaf.anchor_id else None
    session_id = f"{persona.id}-s{len(traj.sessions) + 1:04d}"
    times = timestamps(drafts, leaf, anchor, rng)
    messages = [
        Message(id=f"{session_id}-m{i + 1:02d}", role=d.role, app=d.app, content=d.content, timestamp=t)  # type: ignore[arg-type]
        for i, (d, t) in enumerate(zip(drafts, times))
    ]
    session = Session(
        id=session_id,
        persona_id=persona.id,
        event_id=leaf.id,
        language=persona.language,
        pattern=leaf.kind,
        anchor_id=leaf.anchor_id,
        author=author,
        start=times[0],
        end=times[-1],
        messages=messages,  # type: ignore[arg-type]
    )
    digest = dialogue_hash(session)
    if digest in traj.dialogues:
        return None
    _apply(drafts, messages, persona, leaf, merged_params(leaf, traj))
    traj.claims += _claims(drafts, messages, traj, scene_of(leaf, traj), (times[0], times[-1]))
    traj.ledger.keep(leaf.id)
    traj.dialogues.add(digest)
    traj.sessions.append(session)
    leaf.session_id = session_id
    return session


def _claims(
    drafts: list[Draft],
    messages: list[Message],
    traj: Trajectory,
    scene: Scene,
    window: tuple[datetime, datetime],
) -> list[Claim]:
    """Each message's claims from what its draft said, linked from the message."""
    found: list[Claim] = []
    for draft, message in zip(drafts, messages):
        if draft.role == "system":
            claims = traj.ledger.anchor_claims(scene, message, draft.said) if scene.anchor else []
        else:
            claims = traj.ledger.say(scene, message, draft.role, draft.said, window)  # type: ignore[arg-type]
            message.smalltalk = draft.smalltalk
        message.claims = [c.id for c in claims]
        found += claims
    return found


def _apply(
    drafts: list[Draft], messages: list[Message], persona: Persona, leaf: Event, params: dict[str, str]
) -> None:
    """Evidence links and version changes, in message order."""
    for draft, message in zip(drafts, messages):
        if draft.update:
            change = CHANGES[draft.update]
            for key in change.attributes:
                value = _new_value_for(key, leaf, params, draft.content)
                persona.attribute(key).versions.append(
                    AttributeVersion(value=value, valid_from=message.timestamp, evidence=[message.id])
                )
        for key in sorted(draft.links):
            version = persona.attribute(key).version_at(message.timestamp)
            if (
                version is not None
                and message.id not in version.evidence
                and version.value in message.content
            ):
                version.evidence.append(message.id)


def _new_value_for(key: str, leaf: Event, params: dict[str, str], content: str) -> str:
    value = params.get(SET + key)
    if value is None:
        raise RealizationError(f"{leaf.id}: no new value for {key}")
    if value not in content:
        raise RealizationError(f"{leaf.id}: the update message does not state {key}={value!r}")
    return value
