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
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from datetime import datetime, timedelta

from keme.config import SynthConfig
from keme.days import block_of
from keme.errors import SynthesisError
from keme.models import Anchor, AttributeVersion, CalendarRecord, Claim, Event, Message, Persona, Session
from keme.models.attributes import attribute_key
from keme.models.catalog import ANCHOR_MOMENTS, CHANGES
from keme.models.persona import Habits
from keme.prior.anchors import anchor_message_text, anchor_slots
from keme.synth.acts import speakable
from keme.synth.documents import features as document_features
from keme.synth.documents import figures as document_figures
from keme.synth.lifecycle import gate_for, gated_pools
from keme.synth.params import SET
from keme.synth.planner import chapter_changes
from keme.synth.presup import Moment, dated, holds
from keme.synth.presup import said as presup_said
from keme.synth.state import Trajectory, dialogue_hash
from keme.synth.variety import (
    QUICK,
    SHARE,
    THREAD,
    THREAD_EXTRA_P,
    SmallTalk,
    Style,
    Talk,
    asks_of,
    choose_style,
    exchange_lines,
    fresh,
    line_key,
    split_line,
)
from keme.text import lang as fmt
from keme.text.resources import Beat, Exchange, Pattern, Resources
from keme.text.template import Context
from keme.world.catalog import load_catalog
from keme.world.cues import load_cues
from keme.world.figures import Records, figures_at, figures_first, unsayable
from keme.world.ledger import Recall, Report, Scene, episode_of
from keme.world.prices import load_prices
from keme.world.rules import allows
from keme.world.schedule import where_slots
from keme.world.slots import REVEAL_SLOT

MAX_ATTEMPTS = 12
SPLIT_P = 0.75  # a burst splits a user line when one has a sentence end to split at
HABIT_MARGIN = timedelta(hours=1)  # her usual hours: her block less an hour at each end
PENDING_WEIGHT = 10.0  # a value a planned change will replace, unsaid: said before the change
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
    said: list[Report] = field(default_factory=list)  # every value the text says: its claims to be
    key: str = ""  # the line as the usage budget counts it (keme.synth.variety.line_key)
    shown: tuple[str, ...] = ()  # every value the line shows, small talk's included (for the budget key)
    smalltalk: bool = False  # asserts nothing: a message of small-talk parts only (keme/text/*/parts.yaml)
    sentences: tuple[str, ...] = ()  # said-memory keys of its content sentences (keme.synth.said)
    presup: bool = False  # its line declares a presupposition (keme.text.presup): kept whole


def _persona_values(persona: Persona, when: datetime) -> dict[str, str]:
    values = {}
    for attr in persona.attributes():
        value = attr.value_at(when)
        if value is not None:
            values[attr.key] = value
    return values


def routines_first(values: dict[str, str], recall: Recall | None) -> Recall:
    """`recall`, except that a routine (`training_per_week`) says the persona's value in `values`: the
    session's values, which the update beat changes, so a line after an announced change says the new
    routine and a line before it the old one."""

    def inner(predicate: str, draw: Callable[[], str]) -> str:
        key = attribute_key(predicate)
        if key is not None and key in values:
            return values[key]
        return recall(predicate, draw) if recall is not None else draw()

    return inner


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
    }
    if fmt.part_of_day(when, lang) == fmt.part_of_day(leaf.end, lang):  # said only if true all session long
        slots["part_of_day"] = fmt.part_of_day(when, lang)
    return slots


def _say(
    talk: Talk,
    options: tuple[Exchange, ...],
    ctx: Context,
    drafts: list[Draft],
    update: str | None = None,
    user_only: bool = False,
    reveal: str | None = None,
    record: dict[str, str] | None = None,
    moment: Moment | None = None,
) -> bool:
    """Append one exchange (or its user line) drawn under the usage budget; False if none renders.
    `{value}` of a reveal says attribute `reveal`, and a slot showing the app record's field (`record`:
    its display slots) is the record's."""
    lines = exchange_lines(talk, options, ctx, user_only=user_only)
    if lines is None:
        return False
    chosen = next((ex for ex in options if ex.u.source == lines[0].source), None)
    if chosen is not None and moment is not None:
        presup_said(chosen.presup, moment)
    declared = chosen is not None and not chosen.presup.empty
    for role, line in zip(("user", "assistant"), lines):
        said = [_report(r, reveal, record) for r in line.reports]
        said += [Report("says", predicate, value, "") for predicate, value in line.says]
        drafts.append(
            Draft(
                role,
                line.text,
                links=line.links,
                update=update if role == "user" else None,
                said=said,
                key=line.key,
                shown=line.said,
                # a pattern line asserts what its words say even when no value is a slot: only a line
                # of small-talk parts is marked as asserting nothing
                smalltalk=False,
                sentences=line.sentences,
                presup=declared,
            )
        )
    return True


def _report(heard: tuple[str, str, str, str], reveal: str | None, record: dict[str, str] | None) -> Report:
    kind, name, value, text = heard
    if kind == "slot":
        if reveal is not None and name == REVEAL_SLOT:
            kind, name = "persona", reveal
        elif record and record.get(name) == value:
            kind = "record"
    return Report(kind, name, value, text)


def anchor_draft(anchor: Anchor, res: Resources) -> Draft:
    """The app message of a record, with the fields it shows."""
    said: list[Report] = []
    text = anchor_message_text(anchor, res, lambda kind, *r: said.append(Report("record", *r)))
    return Draft("system", text, app=anchor.app_name, said=said)


def _smalltalk(talk: Talk, kind: str) -> Draft | None:
    """A user message of small talk alone; None when the persona has none of the kind left to say."""
    line = talk.standalone(kind)
    if line is None:
        return None
    return Draft("user", line.text, key=line.key, shown=line.said, smalltalk=True)


def _beats(pattern: Pattern, change: object | None, style: Style) -> list[Beat | str]:
    """The pattern's beats this session says: all of them in a thread; in a quick check-in the opening
    beat, the closing one (its closing style decides) and the update and reveal markers, never dropped."""
    beats = list(pattern.beats)
    if change is not None and "update" not in beats:
        beats.insert(1, "update")
    if style.shape == QUICK:
        spoken = [i for i, b in enumerate(beats) if not isinstance(b, str)]
        keep = {spoken[0], spoken[-1]} if spoken else set()
        beats = [b for i, b in enumerate(beats) if isinstance(b, str) or i in keep]
    return beats


def _burst(drafts: list[Draft], talk: Talk, lang: str) -> None:
    """Several user messages in a row: a user line sent in two halves, or a follow-up sent before the
    reply. Lines that announce a change, state a persona fact or declare a state in words (`says`: no half
    could claim it alone) stay whole."""
    plain = [
        i
        for i, d in enumerate(drafts)
        if d.role == "user"
        and not d.update
        and not d.links
        and not d.smalltalk
        and not d.presup
        and not any(r.kind == "says" for r in d.said)
    ]
    if not plain:
        return
    halves = {i: split_line(drafts[i].content, lang, tuple(r.text for r in drafts[i].said)) for i in plain}
    splittable = [i for i in plain if halves[i] is not None]
    if splittable and talk.rng.random() < SPLIT_P:
        at = talk.rng.choice(splittable)
        draft = drafts[at]
        pieces = [
            replace(
                draft,
                content=half,
                key=line_key(half, draft.shown),
                said=[r for r in draft.said if r.text in half],  # each half claims what it says
            )
            for half in halves[at] or ()
        ]
        if not any(talk.used(piece.key) for piece in pieces):
            talk.session[draft.key] -= 1
            talk.session.update(piece.key for piece in pieces)
            drafts[at : at + 1] = pieces
            return
    # a follow-up is sent last before the reply: never between the halves of a line or after another part
    ends = [i for i in plain if i + 1 == len(drafts) or drafts[i + 1].role != "user"]
    if not ends:
        return
    at = talk.rng.choice(ends)
    after = asks_of(drafts[at].content, lang)
    # sent after the reply's opening was chosen: a follow-up that asks would be answered "Got it."
    line = talk.standalone("followups", after, fact=bool(drafts[at].said), asking=at + 1 == len(drafts))
    if line is not None:
        drafts.insert(at + 1, Draft("user", line.text, key=line.key, shown=line.said, smalltalk=True))


def _reveals(
    pattern_reveals: tuple[str, ...],
    ctx: Context,
    persona: Persona,
    when: datetime,
    cfg: SynthConfig,
    res: Resources,
    pending: frozenset[str] = frozenset(),
) -> list[str]:
    """Attributes to mention in passing: topical ones first, unrevealed ones preferred, and an unsaid value
    a planned change will replace (`pending`) before any: a promotion nobody heard the old title of
    leaves nothing to ask about what changed."""
    weights = cfg.dialogue.reveal_weights
    count = ctx.rng.choices(range(len(weights)), weights)[0]
    existing = {k for k in ctx.persona}
    topical = [k for k in pattern_reveals if k in existing]
    if ctx.rng.random() < TOPICAL_EXTRA or not topical:
        unrevealed = sorted(k for k in existing if not revealed(persona, k, when))
        if unrevealed:
            topical.append(ctx.rng.choice(unrevealed))
    due = sorted(k for k in pending if k in existing and k in res.reveals and not revealed(persona, k, when))
    if due:
        topical.insert(0, ctx.rng.choice(due))
        count = max(count, 1)
    chosen: list[str] = []
    for _ in range(count):
        candidates = [k for k in topical if k not in chosen and k in res.reveals]
        if not candidates:
            break
        weights_k = [
            PENDING_WEIGHT if k in due else 3.0 if not revealed(persona, k, when) else 1.0 for k in candidates
        ]
        chosen.append(ctx.rng.choices(candidates, weights_k)[0])
    return chosen


def pending_changes(traj: Trajectory) -> frozenset[str]:
    """The attributes a life change planned in some chapter will set and that still hold their first value:
    what the persona should have said before it changes."""
    planned = (c for e in traj.graph.events if e.depth == 0 for c in chapter_changes(e))
    keys = {k for change in planned for k in CHANGES[change].attributes}
    return frozenset(k for k in keys if len(traj.persona.attribute(k).versions) == 1)


def revealed(persona: Persona, key: str, when: datetime) -> bool:
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
    usage: Counter[str] | None = None,
    situation: Moment | None = None,
    gate: Callable[[str], bool] | None = None,
    figures: dict[str, str] | None = None,
    small: SmallTalk | None = None,
    pending: frozenset[str] = frozenset(),
) -> list[Draft]:
    """The messages of a session, in order, without timestamps. Named quantities come from `recall`;
    `place` holds the schedule's `{where}` and `{city}` for the leaf (keme.world.schedule.where_slots);
    `usage` (the persona's lines so far, by budget key) steers the draws away from lines already said;
    `gate` refuses user lines the catalog's lifecycles do not allow now (keme.synth.lifecycle);
    `small` (the persona's small talk so far) keeps it from saying a small-talk sentence twice."""
    lang = res.lang
    values = _persona_values(persona, start)
    recall = routines_first(values, recall)
    catalog = load_catalog(lang)
    pools = res.flat_pools if gate is None else gated_pools(res.flat_pools, catalog.lifecycle, gate, lang)
    figures = figures if figures is not None else {}  # counts, totals from records (keme.world.figures)
    recall = figures_first(figures, recall)
    bound = load_prices(lang).bound  # named amounts inside their price category (keme.world.prices)
    ctx = Context(
        lang=lang,
        rng=rng,
        persona=values,
        slots=_slots(leaf, parent, persona, start, lang, place),
        pools=pools,
        recall=recall,
        bound=bound,
    )
    moment = leaf.kind
    pattern = res.patterns[moment]
    change = CHANGES[leaf.change] if leaf.change else None
    reveal_keys = []
    if "reveal" in pattern.beats:
        reveal_keys = _reveals(pattern.reveals, ctx, persona, start, cfg, res, pending)
    must_talk = change is not None or bool(reveal_keys)
    style = choose_style(rng, cfg.seed, persona.id, anchor is not None, must_talk)
    day_part = fmt.part_of_day(start, lang)
    talk = Talk(
        res.parts,
        style,
        rng,
        usage if usage is not None else Counter(),
        lang,
        part_of_day=day_part if day_part == fmt.part_of_day(leaf.end, lang) else None,
        small=small,
    )
    talk.small.at((start - persona.start) / max(persona.end - persona.start, timedelta(days=1)))
    drafts: list[Draft] = []
    record = anchor_slots(anchor, lang, res) if anchor is not None else {}

    def fit(options: tuple[Exchange, ...]) -> tuple[Exchange, ...]:
        """The options whose declared facts the world allows (keme.world.rules), whose presuppositions hold
        at this moment (keme.synth.presup), whose user line the lifecycles allow now and whose figures the
        records can give (keme.world.figures)."""
        return tuple(
            ex
            for ex in options
            if allows(ex.says, anchor, catalog)
            and (situation is None or holds(ex.presup, situation))
            and (gate is None or gate(ex.u.source))
            and not unsayable(ex.u.predicates | ex.a.predicates, figures)
        )

    if anchor is not None:
        drafts.append(anchor_draft(anchor, res))
        own = moment == ANCHOR_MOMENTS[anchor.app]
        actx = ctx
        if own:
            ctx.slots |= anchor_slots(anchor, lang, res)
        else:
            actx = Context(
                lang=lang,
                rng=rng,
                persona=values,
                slots=ctx.slots | anchor_slots(anchor, lang, res),
                pools=pools,
                recall=recall,
                bound=bound,
            )
        if style.shape == SHARE:  # the record, and at most one user line with it: no reply
            opening = next(b for b in pattern.beats if isinstance(b, Beat)).options
            if rng.random() < 0.6:
                _say(
                    talk,
                    fit(opening if own else res.anchor_mentions[anchor.app]),
                    actx,
                    drafts,
                    user_only=True,
                    record=record,
                    moment=situation,
                )
            return drafts
        if not own:
            _say(talk, fit(res.anchor_mentions[anchor.app]), actx, drafts, record=record, moment=situation)
    beats = _beats(pattern, change, style)
    last = max((i for i, b in enumerate(beats) if isinstance(b, Beat)), default=-1)
    for i, beat in enumerate(beats):
        if beat == "reveal":
            for key in reveal_keys:
                if any(key in d.links for d in drafts):
                    continue  # stated already this session: "my favourite is X" twice within a minute
                rctx = Context(
                    lang=lang,
                    rng=rng,
                    persona=values,
                    slots=ctx.slots | {REVEAL_SLOT: values[key]},
                    pools=pools,
                    recall=recall,
                    bound=bound,
                )
                before = len(drafts)
                options = speakable(
                    res.reveals[key],
                    told=revealed(persona, key, start),
                    said=lambda ex: talk.variants.ever_said(ex.u.source, talk.used),
                )
                if not _say(talk, fit(options), rctx, drafts, reveal=key, record=record, moment=situation):
                    continue
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
            if not _say(
                talk,
                fit(res.updates[change.name]),
                ctx,
                drafts,
                update=change.name,
                record=record,
                moment=situation,
            ):
                raise RealizationError(f"{leaf.id}: no renderable update phrasing for {change.name}")
        elif isinstance(beat, Beat):
            if i == last and i > 0 and style.closing != "keep":
                # a closer the persona has said out leaves the last beat said instead
                closer = _smalltalk(talk, "closers") if style.closing == "closer" else None
                if closer is not None or style.closing == "drop":
                    drafts += [closer] if closer is not None else []
                    continue
            keep = beat.p if style.shape != THREAD else min(1.0, beat.p + THREAD_EXTRA_P)
            talk.final = i == last  # only the session's last reply may end on a wish
            # an optional beat whose every wording was said before is dropped rather than said again
            if rng.random() < keep and (beat.p >= 1.0 or fresh(talk, fit(beat.options), ctx)):
                _say(talk, fit(beat.options), ctx, drafts, record=record, moment=situation)
    if not any(d.role == "user" and not d.smalltalk for d in drafts):
        # every beat this shape kept was out of its moment (a quick call whose opening beat holds only
        # holiday lines, on a plain Monday): the first beat that holds a line now opens it, after the
        # app record if there is one (a record shared without a word is a session; a call is not)
        opening: list[Draft] = []
        for beat in (b for b in pattern.beats if isinstance(b, Beat)):
            if _say(talk, fit(beat.options), ctx, opening, record=record, moment=situation):
                break
        if not opening and anchor is None:
            raise RealizationError(f"{leaf.id}: no line of {moment!r} holds at {start:%Y-%m-%d %H:%M}")
        at = 1 if anchor is not None else 0
        drafts[at:at] = opening
    for _ in range(style.bursts):
        _burst(drafts, talk, lang)
    return drafts


def _gaps(drafts: list[Draft], rng: random.Random) -> list[int]:
    """Seconds between consecutive messages: quick replies, slower user turns."""
    gaps = []
    for previous, current in zip(drafts, drafts[1:]):
        if current.role == "assistant":
            gaps.append(rng.randint(3, 40))
        elif previous.role == "user":  # a second message before the reply: sent right after
            gaps.append(rng.randint(4, 45))
        elif previous.role == "system":
            gaps.append(rng.randint(60, 600))
        else:
            gaps.append(rng.randint(25, 300))
    return gaps


def timestamps(
    drafts: list[Draft], leaf: Event, anchor: Anchor | None, rng: random.Random, habits: Habits | None = None
) -> list[datetime]:
    """Strictly increasing, inside the leaf window, the anchor message exactly at the anchor's time. A chat
    in her usual block begins at her usual hours, away from its borders (HABIT_MARGIN): an evening person
    chats after dinner, not at 18:02, which a reader would call the end of the afternoon."""
    gaps = _gaps(drafts, rng)
    total = sum(gaps)
    if anchor is not None:
        start = anchor.timestamp
    else:
        lo, hi = leaf.start, leaf.end
        if habits is not None and block_of(leaf.start) == habits.chat_block:
            core = (leaf.start + HABIT_MARGIN, leaf.end - HABIT_MARGIN)
            if (core[1] - core[0]).total_seconds() > total + 60:
                lo, hi = core
        room = (hi - lo).total_seconds() - total - 60
        start = lo + timedelta(seconds=rng.randint(0, int(room)) if room > 0 else 0)
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


def known_place_gate(
    anchor: Anchor | None, anchors: list[Anchor], now: datetime, lang: str
) -> Callable[[str], bool]:
    """A test of user lines that refuses "I've never been to {location}" when the session's calendar entry is
    at a place an earlier entry (begun before `now`) already took the persona to."""
    record = anchor.record if anchor is not None else None
    if not isinstance(record, CalendarRecord) or not any(
        isinstance(a.record, CalendarRecord) and a.record.location == record.location and a.record.start < now
        for a in anchors
    ):
        return lambda line: True
    cues = load_cues(lang)
    return lambda line: "{location}" not in line or not cues.any(cues.first_visit, line)


def _and(*tests: Callable[[str], bool]) -> Callable[[str], bool]:
    return lambda line: all(test(line) for test in tests)


def realize(leaf: Event, traj: Trajectory, cfg: SynthConfig, res: Resources, rng: random.Random) -> Session:
    """Render the session, link evidence and apply the leaf's life change to the persona."""
    persona = traj.persona
    parent = traj.events.get(leaf.parent_id) if leaf.parent_id else None
    anchor = traj.anchor_by_id[leaf.anchor_id] if leaf.anchor_id else None
    place = where_slots(persona, traj.graph.events, leaf, persona.country, res.lang)
    for _ in range(MAX_ATTEMPTS):
        probe_start = anchor.timestamp if anchor is not None else leaf.start
        traj.ledger.begin(scene_of(leaf, traj))
        situation = moment_of(leaf, traj, probe_start, res)
        gate = _and(
            gate_for(traj, load_catalog(res.lang), probe_start),
            known_place_gate(anchor, traj.anchors, probe_start, res.lang),
        )
        records = Records(traj.anchors, probe_start, anchor, persona.start.date(), leaf.end)
        traj.smalltalk.begin()
        drafts = compose(
            leaf,
            parent,
            anchor,
            persona,
            probe_start,
            cfg,
            res,
            rng,
            traj.ledger.recall,
            place,
            traj.usage,
            situation,
            gate,
            figures_at(records) | document_figures(anchor, res),
            traj.smalltalk,
            pending_changes(traj),
        )
        session = commit(leaf, drafts, traj, rng)
        if session is not None:
            return session
    raise RealizationError(f"{leaf.id}: could not produce a dialogue unlike the earlier ones")


def moment_of(leaf: Event, traj: Trajectory, start: datetime, res: Resources) -> Moment:
    """The session's place in the world for its lines' presuppositions (keme.synth.presup)."""
    params = merged_params(leaf, traj)
    own, event = set(), leaf
    while event is not None:
        own.add(event.id)
        event = traj.events.get(event.parent_id or "")
    anchor = traj.anchor_by_id[leaf.anchor_id] if leaf.anchor_id else None
    return Moment(
        start=start,
        end=leaf.end,
        events=tuple(traj.graph.events),
        params=params,
        persona=traj.persona,
        own=frozenset(own),
        dates=dated(params, anchor, start),
        doc=document_features(anchor, res),
    )


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
    times = timestamps(drafts, leaf, anchor, rng, traj.persona.habits)
    messages = [
        Message(
            id=f"{session_id}-m{i + 1:02d}",
            role=d.role,  # type: ignore[arg-type]
            app=d.app,
            content=d.content,
            timestamp=t,
            smalltalk=d.smalltalk,
        )
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
    traj.usage.update(d.key or line_key(d.content, ()) for d in drafts if d.role != "system")
    traj.usage.update(k for d in drafts for k in d.sentences)  # the persona's said memory (keme.synth.said)
    traj.smalltalk.keep()
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
        for key in sorted(draft.links | _routines_said(draft, persona)):
            version = persona.attribute(key).version_at(message.timestamp)
            if (
                version is not None
                and message.id not in version.evidence
                and version.value in message.content
            ):
                version.evidence.append(message.id)


def _routines_said(draft: Draft, persona: Persona) -> set[str]:
    """The routine attributes a draft says through named quantities (`{num:2-4@training_per_week}`): the
    message is evidence of the version it states."""
    keys = {attribute_key(r.name) for r in draft.said if r.kind in ("num", "money", "pool")}
    return {
        k
        for k in keys
        if k is not None and k.partition(".")[2] in persona.dimensions.get(k.partition(".")[0], {})
    }


def _new_value_for(key: str, leaf: Event, params: dict[str, str], content: str) -> str:
    value = params.get(SET + key)
    if value is None:
        raise RealizationError(f"{leaf.id}: no new value for {key}")
    if value not in content:
        raise RealizationError(f"{leaf.id}: the update message does not state {key}={value!r}")
    return value
