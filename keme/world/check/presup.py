"""Presuppositions, re-checked on the written dataset: each message is matched back to the pattern line it
was written from, and what that line declares it takes for granted (`presup:`, keme.text.presup) is
checked against the recorded world: the message's own timestamp, the event graph, the persona's attribute
history and the order of the session. Written apart from the realizer's filter (keme.synth.presup),
so a line the filter let through by mistake is still named.

The text rule: a line that declares nothing may not mention an event, a time or a value in its own words
(`undeclared`); it runs over the pattern banks (scripts/presup_lint.py) and over every realized line and
small-talk message.
"""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass, replace
from datetime import date, datetime, timedelta

from keme.days import is_workday
from keme.models import Event, Message, Session
from keme.models.attributes import attribute_key
from keme.text.dates import parse_display_date
from keme.text.presup import STAGES, Presup, in_part
from keme.text.resources import Exchange, Resources
from keme.text.resources import get as get_resources
from keme.text.template import Template, compile_template
from keme.text.variants import lead, line_spans, load_bank, trail
from keme.world.check.base import Finding, World, clauses, quote
from keme.world.cues import Cues, load_cues

RULE = "presup"
MIN_LITERAL = {"en": 14, "zh": 6}  # literal characters a line needs to be recognized in a message
_END = " .!?…。！？"  # a sentence's end marks, which a restyled line may drop or change

# words that speak of an event, a time or a value, by language: a line using one declares a presupposition
WORDS: dict[str, tuple[str, ...]] = {
    "en": (
        r"\byesterday\b",
        r"\btomorrow\b",
        r"\btonight\b",
        r"\bmidnight\b",
        r"\bthis (?:morning|afternoon|evening)\b",
        r"\blast (?:night|week|month|year|weekend)\b",
        r"\bnext (?:week|month|year|weekend|monday|tuesday|wednesday|thursday|friday|saturday|sunday)\b",
        r"\b(?:monday|tuesday|wednesday|thursday|friday|saturday|sunday)s?\b",
        r"\b(?:january|february|march|april|june|july|august|september|october|november|december)\b",
        r"\b(?:a|one|two|three|\d+) (?:day|week|month|year)s? (?:ago|away|from now)\b",
        r"\bago\b",
        r"\b(?:arrived|delivered|got delivered|shipped|went out|moved (?:in|out|here)|helping me move)\b",
        r"\bordered\b",
        r"[$¥€£]\s?\d",
    ),
    "zh": (
        r"昨天|昨晚|前天|明天|明晚|后天|今晚|半夜|凌晨|午夜",
        r"上(?:周|个?星期|个月|礼拜)|下(?:周|个?星期|个月|礼拜)(?!次)",
        r"(?:周|星期|礼拜)[一二三四五六日天]",
        r"\d+月\d+[日号]",
        r"[一二三四五六七八九十两几\d]+(?:天|周|个月|年)(?:前|以前|之前|后|以后)",
        r"到货(?!币)|送到了|已发货|(?<!差点就)下单了|搬家那|搬过来|那次",
        r"[¥￥]\s?\d|\d+\s?(?:元|块)",
    ),
}
# the words of WORDS an assistant line is held to: the past, arrivals, amounts
PAST: dict[str, tuple[str, ...]] = {
    "en": tuple(WORDS["en"][i] for i in (0, 5, 9, 10, 11, 12, 13)),
    "zh": (
        r"昨天|昨晚|前天",
        r"上(?:周|个?星期|个月|礼拜)",
        r"[一二三四五六七八九十两几\d]+(?:天|周|个月|年)(?:前|以前|之前)",
        WORDS["zh"][5],
        WORDS["zh"][6],
    ),
}
# look-alikes that name no time or event: "next time", a stand-up meeting, a reminder asked for or set
# (a plan the speaker makes now holds at any moment)
UNLESS: dict[str, tuple[str, ...]] = {
    "en": (
        r"\bnext time\b",
        r"\blast time\b",
        r"\bstand-up\b",
        r"\bremind(?:er)?(?: set)?(?: me| you)?\b[^.?!]*",
        r"\bset for\b[^.?!]*",
    ),
    "zh": (r"下次", r"上次", r"提醒[^。？！]*"),
}


# words that place the moment of speaking in a part of today ("tonight", "what's on for today?", 今晚): a
# line using one declares `part:` even when it declares something else, so it is said only at that time
PART_WORDS: dict[str, str] = {
    "en": r"\btonight\b|\bthis (?:morning|afternoon|evening)\b|\bwhat.s on (?:for )?today\b|\btoday.s list\b",
    "zh": r"今晚|今早|今夜|今天(?:一早|早上|上午|中午|下午|傍晚|晚上)",
}


@functools.cache
def _compiled(lang: str, role: str) -> tuple[re.Pattern[str], re.Pattern[str]]:
    chosen = WORDS[lang] if role == "user" else PAST[lang]
    words = re.compile("|".join(f"(?:{w})" for w in chosen), re.IGNORECASE)
    unless = re.compile("|".join(f"(?:{w})" for w in UNLESS[lang]), re.IGNORECASE)
    return words, unless


def undeclared(text: str, lang: str, role: str = "user") -> str | None:
    """The first event, time or value word in `text` (a line's own words, slots removed), or None. A
    reply's plan for later ("I'll remind you tomorrow") takes nothing for granted: in an assistant line
    only words about the past or a value count."""
    words, unless = _compiled(lang, role)
    plain = unless.sub(" ", text)
    found = words.search(plain)
    return found.group(0) if found else None


def own_words(template: Template) -> str:
    """The words a template line writes itself: its text and inline choices, not its slots."""
    out = []
    for part in template.parts:
        if part.kind == "text":
            out.append(part.value)
        elif part.kind == "alt":
            out.append(" ".join(part.choices))
        else:
            out.append(" ")
    return "".join(out)


def bank_problems(res: Resources) -> list[tuple[str, str, str]]:
    """(where, word, line source) for each line of a language's patterns, reveals and updates that names an
    event, a time or a value in its own words while its exchange declares no presupposition."""
    groups = [
        (f"patterns:{name}", [ex for b in p.beats if not isinstance(b, str) for ex in b.options])
        for name, p in res.patterns.items()
    ]
    groups += [(f"persona:{k}", list(v)) for table in (res.reveals, res.updates) for k, v in table.items()]
    out = []
    for where, exchanges in groups:
        for ex in exchanges:
            if not ex.presup.empty:
                continue
            for role, template in (("user", ex.u), ("assistant", ex.a)):
                word = undeclared(own_words(template), res.lang, role)
                if word is not None:
                    out.append((where, word, template.source))
    return out


def part_word(text: str, lang: str) -> str | None:
    """The first word of `text` that places its moment in a part of today, or None: the part words, and
    every clock cue the calendar check holds a message to ("Sounds like a good morning"), read as it reads
    them (in a clause about now, no `unless` word) when the cue does not fit every hour."""
    found = re.search(PART_WORDS[lang], text, re.IGNORECASE)
    if found:
        return found.group(0)
    cues = _cues(lang)
    for clause in clauses(text):
        if cues.any(cues.other_day, clause):
            continue
        for cue in cues.times:
            hit = cues.search(cue.patterns, clause)
            if hit and not all(cue.allows(h) for h in range(24)) and not cues.any(cue.unless, clause):
                return hit.group(0)
    return None


@functools.cache
def _cues(lang: str) -> Cues:
    return load_cues(lang)


def part_problems(res: Resources, variants: dict[str, list[str]] | None = None) -> list[tuple[str, str, str]]:
    """(where, word, line source) for each pattern, reveal, update or app-mention line that places its
    moment in a part of today while its exchange declares no `part:` (whatever else it declares); with
    `variants` (sentence -> other wordings, the variant bank), a wording of one of its sentences that
    does so is named too ("for the night" said as "for tonight")."""
    groups = [
        (f"patterns:{name}", [ex for b in p.beats if not isinstance(b, str) for ex in b.options])
        for name, p in res.patterns.items()
    ]
    tables = (res.reveals, res.updates, res.anchor_mentions)
    groups += [(f"persona:{k}", list(v)) for table in tables for k, v in table.items()]
    out = []
    for where, exchanges in groups:
        for ex in exchanges:
            if ex.presup.part is not None:
                continue
            for template in (ex.u, ex.a):
                word = part_word(own_words(template), res.lang)
                if word is not None:
                    out.append((where, word, template.source))
                for key, wordings in (variants or {}).items():
                    if key not in template.source:
                        continue
                    for wording in wordings:
                        word = part_word(wording, res.lang)
                        if word is not None:
                            out.append((f"{where} (variant)", word, wording))
    return out


@dataclass(frozen=True)
class Line:
    """A pattern line as the checker recognizes it in a message."""

    template: Template
    presup: Presup
    pattern: str  # the regular expression of the whole line, compiled when first searched
    literal: int
    role: str = "user"
    needles: tuple[str, ...] = ()  # a message it matches holds one of these (none: no such test)
    # each sentence alone, in any of its wordings, case and end mark aside: a line sent in two halves, or
    # restyled ("any ideas for this weekend.")
    sentences: tuple[Sentence, ...] = ()

    def found_in(self, content: str) -> bool:
        if self.needles and not any(n in content for n in self.needles):
            return False
        return _regex_of(self.pattern, re.DOTALL).search(content) is not None


@dataclass(frozen=True)
class Sentence:
    """One sentence of a line on its own: its expression (compiled when first searched), its literal
    length and its needles, lower-cased."""

    pattern: str
    literal: int
    needles: tuple[str, ...] = ()

    def found_in(self, content: str, lowered: str) -> bool:
        if self.needles and not any(n in lowered for n in self.needles):
            return False
        return _regex_of(self.pattern, re.DOTALL | re.IGNORECASE).search(content) is not None


@functools.cache
def _regex_of(pattern: str, flags: int) -> re.Pattern[str]:
    """Compiled once per process: the tables hold some 20,000 expressions, most of which a dataset never
    needs (a pattern it does not use, a sentence searched only when no whole line matched), and re's own
    cache keeps 512."""
    return re.compile(pattern, flags)


def _pieces(template: Template) -> tuple[str, int]:
    """A template as a regular expression (a slot matches any text) and its literal characters."""
    pieces, literal = [], 0
    for part in template.parts:
        if part.kind == "text":
            pieces.append(re.escape(part.value))
            literal += len(part.value.strip())
        elif part.kind == "alt":
            pieces.append("(?:" + "|".join(re.escape(c) for c in part.choices) + ")")
        else:
            pieces.append(".+?")
    return "".join(pieces), literal


def _needle(template: Template) -> str:
    """The template's longest literal piece: text any message it wrote contains as is."""
    return max((p.value for p in template.parts if p.kind == "text"), key=len, default="")


def _needles(wordings: list[Template]) -> tuple[str, ...]:
    """One needle per wording, or none (search always) where a wording has no literal piece."""
    found = tuple(_needle(t) for t in wordings)
    return found if all(n.strip() for n in found) else ()


def _regex(template: Template, lang: str) -> tuple[str, int, tuple[str, ...], tuple[Sentence, ...]]:
    """The line in any of its wordings: each sentence as itself or one of its variants (keme.text.variants),
    as the realizer composes them; its literal length is that of its shortest wording. And each sentence
    on its own, case-insensitive and without its end mark. The needles are the literal pieces one of which
    a message must hold for the expression to match at all: a cheap test before a costly compile."""
    bank = _bank(lang)
    pieces, literal, alone, needles = [], 0, [], ()
    for body, sep in line_spans(template.source, lang):
        wordings = [body, *(lead(body) + w.strip() + trail(body) for w in bank.get(body.strip(), ()))]
        templates = [_compile(w) for w in wordings]
        compiled = [_pieces(t) for t in templates]
        pieces.append("(?:" + "|".join(r for r, _ in compiled) + ")" + re.escape(sep))
        shortest = min(n for _, n in compiled)
        literal += shortest
        mine = _needles(templates)
        if mine and (not needles or min(map(len, mine)) > min(map(len, needles))):
            needles = mine
        if body.strip():
            bare_templates = [_compile(w.strip().rstrip(_END)) for w in wordings]
            bare = [_pieces(t) for t in bare_templates]
            regex = "(?:" + "|".join(r for r, _ in bare) + ")"
            lowered = tuple(n.lower() for n in _needles(bare_templates))
            alone.append(Sentence(regex, min(n for _, n in bare), lowered))
    return "".join(pieces), literal, needles, tuple(alone)


@functools.cache
def _bank(lang: str) -> dict[str, list[str]]:
    return load_bank(lang)


@functools.cache
def _compile(text: str) -> Template:
    return compile_template(text)


def _lines(exchanges: tuple[Exchange, ...], lang: str) -> list[Line]:
    """An exchange's two lines; its declaration covers both (a reply answers what the user takes as given)."""
    out = []
    for ex in exchanges:
        for role, template in (("user", ex.u), ("assistant", ex.a)):
            regex, literal, needles, alone = _regex(template, lang)
            out.append(Line(template, ex.presup, regex, literal, role, needles, alone))
    return out


@functools.cache
def _shared_lines(lang: str) -> tuple[Line, ...]:
    """The lines a session of any pattern can say: reveals, updates, app mentions."""
    res: Resources = get_resources(lang)
    return tuple(
        line
        for table in (res.reveals, res.updates, res.anchor_mentions)
        for exchanges in table.values()
        for line in _lines(exchanges, lang)
    )


@functools.cache
def pattern_lines(lang: str, name: str) -> tuple[Line, ...]:
    """The lines a session of pattern `name` can say (its own, then the shared ones); built when a session
    of it is first checked, so that a dataset pays only for the patterns it uses."""
    pattern = get_resources(lang).patterns.get(name)
    if pattern is None:
        return ()
    own = [ln for beat in pattern.beats if not isinstance(beat, str) for ln in _lines(beat.options, lang)]
    return (*own, *_shared_lines(lang))


@functools.cache
def ranked(lang: str, name: str, role: str) -> tuple[tuple[Line, ...], tuple[tuple[Sentence, Line], ...]]:
    """The lines of pattern `name` a message of `role` can be written from, longest first, and their
    sentences, longest first (stable: ties keep the table's order); ranked once, not per message."""
    lines = [ln for ln in pattern_lines(lang, name) if ln.role == role]
    sentences = [(sentence, line) for line in lines for sentence in line.sentences]
    return (
        tuple(sorted(lines, key=lambda ln: -ln.literal)),
        tuple(sorted(sentences, key=lambda s: -s[0].literal)),
    )


def recognize(content: str, lang: str, name: str, role: str) -> Line | None:
    """The line a message of `role` in a session of pattern `name` was written from: the longest literal
    match among the candidates, whole; else the line with the longest sentence found in the message (a
    half of a line, a restyled sentence). Ties go to the earlier candidate; the search stops at the first
    match."""
    least = MIN_LITERAL[lang]
    lines, sentences = ranked(lang, name, role)
    for line in lines:
        if line.literal < least:
            break
        if line.found_in(content):
            return line
    lowered = content.lower()
    for sentence, line in sentences:
        if sentence.literal < least:
            break
        if sentence.found_in(content, lowered):
            return line
    return None


def _of_kind(event: Event, kind: str) -> bool:
    return kind in (event.kind, event.change, event.params.get("_episode"))


def _params(world: World, session: Session) -> dict[str, str]:
    leaf = world.leaf(session)
    if leaf is None:
        return {}
    parent = world.view.events.get(leaf.parent_id or "")
    base = dict(parent.params) if parent is not None and parent.depth > 0 else {}
    return base | leaf.params


def _date(world: World, session: Session, name: str, now: datetime) -> date | None:
    """The day detail `name` names: the app record's due or start day, or an episode detail read as a date."""
    anchor = world.view.anchors.get(session.anchor_id or "")
    if anchor is not None:
        field = {"due_date": "due", "event_date": "start"}.get(name)
        value = getattr(anchor.record, field, None) if field else None
        if isinstance(value, datetime):
            return value.date()
    text = _params(world, session).get(name, "")
    return parse_display_date(text, now) if text else None


def _own(world: World, session: Session) -> set[str]:
    """The session's own event and its ancestors: not an earlier event of their kind."""
    out, event = set(), world.leaf(session)
    while event is not None:
        out.add(event.id)
        event = world.view.events.get(event.parent_id or "")
    return out


def _earlier(world: World, session: Session, kind: str, now: datetime) -> list[Event]:
    """Events of `kind` begun before `now`, of the session's own episode when it has any (the subject)."""
    own = _own(world, session)
    found = [e for e in world.view.graph.events if _of_kind(e, kind) and e.id not in own]
    same = [e for e in found if e.parent_id in own]
    return [e for e in (same or found) if e.start < now]


def problems(
    world: World, session: Session, message: Message, presup: Presup, stages: list[str]
) -> list[str]:
    """What `presup` takes for granted that the world does not hold when `message` is said. A line's `doc`
    features are held to the document's own text by keme.world.check.documents, not here."""
    now, out = message.timestamp, []
    if presup.part is not None and not in_part(presup.part, now.hour):
        out.append(f"said at {now:%H:%M}, not in the {presup.part}")
    if presup.months and now.month not in presup.months:
        out.append(f"said in month {now.month}, not in {sorted(presup.months)}")
    if presup.happened is not None and not _earlier(world, session, presup.happened, now):
        out.append(f"no {presup.happened} has happened by {now:%Y-%m-%d}")
    if presup.not_happened is not None and _earlier(world, session, presup.not_happened, now):
        out.append(f"a {presup.not_happened} has already happened by {now:%Y-%m-%d}")
    if presup.planned is not None and not any(
        _of_kind(e, presup.planned) and e.start > now for e in world.view.graph.events
    ):
        out.append(f"no {presup.planned} is planned after {now:%Y-%m-%d}")
    if presup.date is not None:
        name, window = presup.date
        when = _date(world, session, name, now)
        if when is None:
            out.append(f"no date {name} in the episode")
        elif not window.holds((when - now.date()).days):
            out.append(f"{name} {when} is {(when - now.date()).days} days from {now:%Y-%m-%d}")
    if presup.ago is not None:
        kind, window = presup.ago
        begun = _earlier(world, session, kind, now)
        if not begun:
            out.append(f"no {kind} before {now:%Y-%m-%d}")
        else:
            days = (now.date() - max(e.start for e in begun).date()).days
            if not window.holds(days):
                out.append(f"the last {kind} was {days} days before {now:%Y-%m-%d}")
    if presup.state is not None:
        key, values = presup.state
        held = world.view.persona.attribute(key).value_at(now) if key in _keys(world) else None
        if held not in values:
            out.append(f"{key} is {held!r}, not {' or '.join(sorted(values))}")
    if presup.value is not None:
        predicate, window = presup.value
        key = attribute_key(predicate)
        held = world.view.persona.attribute(key).value_at(now) if key in _keys(world) else None
        if held is None or not held.isdigit() or not window.holds(int(held)):
            out.append(f"{predicate} is {held!r}, which the line's words do not fit")
    if presup.since is not None:
        episode = world.episode(session)
        if episode is None:
            out.append("no episode to count from")
        elif not presup.since.holds((now.date() - episode.start.date()).days):
            out.append(f"its episode began {(now.date() - episode.start.date()).days} days before")
    if presup.workday is not None:
        day = now.date() + timedelta(days=presup.workday)
        if not is_workday(day, world.view.persona.country):
            out.append(f"{day:%a %Y-%m-%d} is no workday")
    if presup.item is not None and stages:
        stage, last = presup.item, max(STAGES.index(s) for s in stages)
        if "ordered" in stages and STAGES.index(stage) > 0:
            out.append(f"the item is {stage} minutes after it was ordered")
        elif stage == "delivered" and "delivered" in stages:
            out.append("the item arrives a second time")
        elif STAGES.index(stage) < last:
            out.append(f"the item goes back to {stage} after {STAGES[last]}")
    return out


def _keys(world: World) -> set[str]:
    return {a.key for a in world.view.persona.attributes()}


def check(world: World) -> list[Finding]:
    lang = world.view.lang
    out = []
    for session in world.view.sessions:
        if session.filler:  # haystack chat about the world at large: no event, time or value of the persona's
            continue
        stages: list[str] = []
        for message in session.messages:
            if message.role == "system":
                continue
            if message.smalltalk:
                word = undeclared(message.content, lang)
                if word is not None:
                    out.append(_finding(world, message, f"small talk says “{word}”"))
                continue
            line = recognize(message.content, lang, session.pattern or "", message.role)
            if line is None:
                continue
            if line.presup.empty:
                word = undeclared(own_words(line.template), lang, line.role)
                if word is not None:
                    out.append(
                        _finding(world, message, f"says “{word}” but its line declares no presupposition")
                    )
                continue
            # a reply shares its user line's declaration; the item's order is the user line's to keep
            declared = line.presup if line.role == "user" else replace(line.presup, item=None)
            for problem in problems(world, session, message, declared, stages):
                out.append(_finding(world, message, problem))
            if declared.item is not None:
                stages.append(declared.item)
    return out


def _finding(world: World, message: Message, what: str) -> Finding:
    return world.finding(RULE, [message.id], f"{message.id}: {what} ({quote(message.content)})")
