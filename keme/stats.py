"""Counts that describe a dataset (`keme stats`)."""

from __future__ import annotations

import re
from calendar import monthrange
from collections import Counter
from dataclasses import dataclass
from datetime import datetime
from statistics import mean
from typing import Callable, Iterable

from keme.dataset import Dataset, PersonaView
from keme.dataset.findings import finding_counts
from keme.models import Anchor, Claim, EventGraph, Persona, QAItem, Session


def trajectory_stats(
    personas: list[Persona],
    anchors: list[Anchor],
    graphs: list[EventGraph],
    sessions: list[Session],
    claims: list[Claim] | None = None,
) -> dict:
    messages = [m for s in sessions for m in s.messages]
    events = [e for g in graphs for e in g.events]
    leaves = [e for e in events if e.session_id]
    return {
        "personas": len(personas),
        "languages": dict(sorted(Counter(p.language for p in personas).items())),
        "events": len(events),
        "events_by_depth": {str(d): n for d, n in sorted(Counter(e.depth for e in events).items())},
        "leaf_events": len(leaves),
        "edges": sum(len(g.edges) for g in graphs),
        "revisions_by_agent_action": dict(
            sorted(Counter(f"{r.agent}:{r.action}" for g in graphs for r in g.revisions).items())
        ),
        "sessions": len(sessions),
        **message_counts(sessions),
        "dialogue_patterns": len({s.pattern for s in sessions}),
        "attribute_updates": sum(p.update_count() for p in personas),
        "attribute_updates_by_persona": {p.id: p.update_count() for p in personas},
        "attributes_revealed": sum(
            1 for p in personas for a in p.attributes() if any(v.evidence for v in a.versions)
        ),
        "attributes_total": sum(len(p.attributes()) for p in personas),
        "anchors": len(anchors),
        "anchors_by_app": dict(sorted(Counter(a.app for a in anchors).items())),
        "days": {p.id: (p.end.date() - p.start.date()).days + 1 for p in personas},
    } | (claim_stats(claims, messages) if claims else {})


def message_counts(sessions: list[Session]) -> dict:
    """Messages in all, by role and per session (a stage that adds messages, like the screenshots', counts
    them again)."""
    messages = [m for s in sessions for m in s.messages]
    return {
        "messages": len(messages),
        "messages_by_role": dict(sorted(Counter(m.role for m in messages).items())),
        "messages_per_session": round(mean(len(s.messages) for s in sessions), 2) if sessions else 0,
    }


def claim_stats(claims: list[Claim], messages: list) -> dict:
    """How much of the text the ledger covers: claims by predicate and speaker, small-talk messages."""
    spoken = [m for m in messages if m.role != "system"]
    return {
        "claims": len(claims),
        "claims_by_speaker": dict(sorted(Counter(c.speaker for c in claims).items())),
        "claims_by_predicate": dict(sorted(Counter(c.predicate for c in claims).items())),
        "messages_with_claims": sum(1 for m in messages if m.claims),
        "smalltalk_messages": sum(1 for m in spoken if m.smalltalk),
    }


def dataset_stats(data: Dataset) -> dict:
    """Trajectory, QA and screenshot counts of a dataset whose ids resolve (see
    keme.validate.verified_dataset)."""
    numbers = trajectory_stats(data.personas, data.anchors, data.graphs, data.sessions, data.claims)
    if data.qa:
        numbers |= qa_stats(data.qa, {view.persona.id: view for view in data.views()})
    numbers |= repetition_stats(data.views())
    if data.images:
        numbers["images"] = len(data.images)
        numbers["images_by_template"] = dict(sorted(Counter(r.template for r in data.images).items()))
        numbers["images_by_language"] = dict(sorted(Counter(r.language for r in data.images).items()))
    return numbers


def qa_stats(items: list[QAItem], views: dict[str, PersonaView]) -> dict:
    hops = Counter(str(i.hops if i.hops < 4 else "4+") for i in items)
    spread_sessions = Counter(
        str(min(len(i.evidence_sessions), 4)) + ("+" if len(i.evidence_sessions) >= 4 else "") for i in items
    )
    spans = []
    for item in items:
        view = views[item.persona_id]
        stamps = [view.messages[m].timestamp for m in item.evidence]
        spans.append((max(stamps) - min(stamps)).days if stamps else 0)
    buckets = Counter("0" if s == 0 else "1-7" if s <= 7 else "8-30" if s <= 30 else "31+" for s in spans)
    total = len(items) or 1
    by_type = Counter(i.type for i in items)
    return {
        "qa": len(items),
        "qa_by_type": dict(sorted(by_type.items())),
        "qa_type_share": {k: round(v / total, 3) for k, v in sorted(by_type.items())},
        "qa_by_subtype": dict(sorted(Counter(i.subtype for i in items).items())),
        "qa_by_language": dict(sorted(Counter(i.language for i in items).items())),
        "qa_by_hops": dict(sorted(hops.items())),
        "qa_by_format": dict(sorted(Counter(i.format for i in items).items())),
        "qa_by_difficulty": dict(sorted(Counter(i.difficulty for i in items).items())),
        "qa_evidence_sessions": dict(sorted(spread_sessions.items())),
        "qa_evidence_span_days": dict(sorted(buckets.items())),
        "qa_mid_trajectory": sum(1 for i in items if i.asked_at <= views[i.persona_id].persona.end),
    } | ({"qa_source_findings": finding_counts(items)} if any(i.flags for i in items) else {})


# -- repetition: how often a persona says the same sentence ---------------------------------------------
#
# A whole message hides repetition: small talk around a line makes each copy differ. The measure therefore
# splits messages into sentences (en: >= 6 words; zh: clauses of >= 6 characters), masks the persona's own
# names, places and values (-> <E>) and digit runs (-> #), and counts per role, in time order, the
# sentences said again. A generator could pass an exact count with cheap variation, so a sentence also
# counts as said again when, masked, it matches an earlier one but for a short lead-in or tail clause
# ("Honestly, ...", "... — or maybe not") or one word (zh: one character) swapped; `strict` is the exact
# count alone.

DIGITS = re.compile(r"\d+")
# a date's words are its numbers: "before May 3 (Friday)" and "before June 9 (Monday)" are one sentence
DATE_WORDS = re.compile(
    r"\b(?:January|February|March|April|May|June|July|August|September|October|November|December"
    r"|Mon|Tues|Wednes|Thurs|Fri|Satur|Sun)(?:day)?\b|(?:周|星期|礼拜)[一二三四五六日天]"
)
_DATE_UNITS = re.compile(r"#(?:年|月|日|号|点|:#)")  # "#月#日" is a number as "May #" is
ENTITY = "<E>"
SPOKEN = ("user", "assistant")
MIN_WORDS, MIN_CHARS = 6, 6  # the shortest en sentence (words) and zh clause (characters) counted
SWAP_WORDS, SWAP_CHARS = 7, 8  # one swapped word (character) counts only in sentences this long
OWN_CHARS, OWN_LETTERS = 2, 6  # what a sentence must say besides its masked values (zh chars, en letters)
AFFIX_WORDS = 4  # a lead-in or tail of at most this many words (zh: characters x 2) is variation
EARLY_MONTHS = 3
_SENTENCE_EN = re.compile(r"(?<=[.!?…])[\"'”’)\]]*\s+|\n+")
_CLAUSE_ZH = re.compile(r"[，。！？；…,!?;～~\n]+|(?<=[^\x00-\x7f])\s+|\s+(?=[^\x00-\x7f])")
_WORD = re.compile(r"<E>|#|[\w'’]+")
_AFFIX_EN = re.compile(r"\s*(?:,|—|–|:|;| - )\s*")
_OWN = re.compile(r"<E>|#|[\W_]")
_PARTICLES_ZH = "吧呢啊呀哈嘛啦哦喔呗"
_CJK = re.compile(r"[\u3400-\u9fff]|<E>|#")


def _whole(name: str) -> str:
    """A pattern for `name` that never matches inside a longer word ("low" in "follow-up")."""
    pattern = re.escape(name)
    if name[0].isascii() and name[0].isalnum():
        pattern = r"(?<!\w)" + pattern
    if name[-1].isascii() and name[-1].isalnum():
        pattern += r"(?!\w)"
    return pattern


def normalizer(entities: Iterable[str]) -> Callable[[str], str]:
    """Replace every entity string (longest first) with <E>, then every digit run with #."""
    names = sorted({e for e in entities if len(e) >= 2 and not e.isdigit()}, key=lambda e: (-len(e), e))
    pattern = re.compile("|".join(_whole(e) for e in names)) if names else None

    def normalize(text: str) -> str:
        if pattern is not None:
            text = pattern.sub(ENTITY, text)
        return _DATE_UNITS.sub("#", DIGITS.sub("#", DATE_WORDS.sub("#", text)))

    return normalize


def sentences(text: str, lang: str) -> list[str]:
    """The sentences of a message long enough to count (en: >= MIN_WORDS words; zh: clauses of >=
    MIN_CHARS characters, punctuation not counted)."""
    if lang == "zh":
        parts = [p.strip() for p in _CLAUSE_ZH.split(text)]
        return [p for p in parts if len(re.sub(r"[\W_]", "", p)) >= MIN_CHARS]
    parts = [p.strip() for p in _SENTENCE_EN.split(text)]
    return [p for p in parts if len(_WORD.findall(p)) >= MIN_WORDS]


def _tokens(masked: str, lang: str) -> list[str]:
    if lang == "zh":
        return [t for t in _CJK.findall(masked)] + [w.lower() for w in re.findall(r"[A-Za-z]+", masked)]
    return [w.lower().replace("’", "'") for w in _WORD.findall(masked)]


def sentence_keys(masked: str, lang: str) -> tuple[str, list[str]]:
    """The exact key of a masked sentence and the keys of its light variations: without a short lead-in
    or tail clause, and (in a long enough sentence) with any one word (zh: character) left out."""
    if lang == "zh":
        core = masked.rstrip(_PARTICLES_ZH + "了")
        tokens = _tokens(core, lang)
        exact = "".join(_tokens(masked, lang))
        keys = ["".join(tokens)]
        if len(tokens) >= SWAP_CHARS:
            keys += ["".join(tokens[:i]) + "*" + "".join(tokens[i + 1 :]) for i in range(len(tokens))]
        return exact, keys
    tokens = _tokens(masked, lang)
    cores = [tokens]
    pieces = [p for p in _AFFIX_EN.split(masked.strip(" .!?")) if p]
    if len(pieces) > 1:
        head, tail = _tokens(pieces[0], lang), _tokens(pieces[-1], lang)
        if len(head) <= AFFIX_WORDS and len(tokens) - len(head) >= MIN_WORDS:
            cores.append(tokens[len(head) :])
        if len(tail) <= AFFIX_WORDS and len(tokens) - len(tail) >= MIN_WORDS:
            cores.append(tokens[: len(tokens) - len(tail)])
    keys = [" ".join(core) for core in cores]
    for core in cores:
        if len(core) >= SWAP_WORDS:
            keys += [" ".join(core[:i] + ["*"] + core[i + 1 :]) for i in range(len(core))]
    return keys[0], keys


@dataclass(frozen=True)
class Repetition:
    """How often one role of one or more personas says a sentence again (see the section comment)."""

    sentences: int  # sentences counted
    again: int  # sentences whose sentence, or a light variation of it, the role said before
    again_strict: int  # sentences whose exact masked form the role said before
    distinct: int  # sentences counted once each, light variations together
    thrice: int  # of the distinct: said >= 3 times
    counts: Counter[str]  # masked sentence (its first wording) -> times said, for those said again

    @property
    def again_share(self) -> float:
        return self.again / self.sentences if self.sentences else 0.0

    @property
    def strict_share(self) -> float:
        return self.again_strict / self.sentences if self.sentences else 0.0

    @property
    def thrice_share(self) -> float:
        return self.thrice / self.distinct if self.distinct else 0.0

    def top(self, n: int = 5) -> list[tuple[str, int]]:
        return sorted(self.counts.items(), key=lambda kv: (-kv[1], kv[0]))[:n]

    @property
    def most(self) -> tuple[str, int]:
        return next(iter(self.top(1)), ("", 0))

    def summary(self, n: int = 1) -> dict:
        return {
            "sentences": self.sentences,
            "said_again": round(self.again_share, 4),
            "said_again_strict": round(self.strict_share, 4),
            "distinct_said_3_times": round(self.thrice_share, 4),
            "most_repeated": dict(self.top(n)),
        }


def repetition(texts: Iterable[str], lang: str, entities: Iterable[str]) -> Repetition:
    """The repetition of one role of one persona, `texts` its messages in the order said and `entities`
    the persona's entity strings."""
    mask = normalizer(entities)
    group_of: dict[str, int] = {}  # any key -> the group of sentences it belongs to
    exact_seen: set[str] = set()
    counts: list[int] = []
    first: list[str] = []
    said = again = strict = 0
    for text in texts:
        for sentence in sentences(text, lang):
            masked = mask(sentence)
            if len(_OWN.sub("", masked)) < (OWN_CHARS if lang == "zh" else OWN_LETTERS):
                continue  # a name, a date or a time alone: nothing of its own to say again
            exact, keys = sentence_keys(masked, lang)
            said += 1
            if exact in exact_seen:
                strict += 1
            exact_seen.add(exact)
            group = next((group_of[k] for k in keys if k in group_of), None)
            if group is None:
                group = len(counts)
                counts.append(0)
                first.append(masked)
            else:
                again += 1
            counts[group] += 1
            for key in keys:
                group_of.setdefault(key, group)
    return Repetition(
        sentences=said,
        again=again,
        again_strict=strict,
        distinct=len(counts),
        thrice=sum(1 for n in counts if n >= 3),
        counts=Counter({first[g]: n for g, n in enumerate(counts) if n > 1}),
    )


def combine(parts: Iterable[Repetition]) -> Repetition:
    """Several personas' counts as one (a sentence said again never crosses personas)."""
    parts = list(parts)
    counts: Counter[str] = Counter()
    for part in parts:
        for line, n in part.counts.items():
            counts[line] = max(counts[line], n)
    return Repetition(
        sentences=sum(p.sentences for p in parts),
        again=sum(p.again for p in parts),
        again_strict=sum(p.again_strict for p in parts),
        distinct=sum(p.distinct for p in parts),
        thrice=sum(p.thrice for p in parts),
        counts=counts,
    )


def entity_strings(view: PersonaView) -> set[str]:
    """What the measure treats as an entity for one persona: its name, every value of every attribute
    version, every event param value and every anchor record value."""
    persona = view.persona
    found = {persona.name, *persona.name.split(" ")}
    for attr in persona.attributes():
        found.update(v.value for v in attr.versions)
    for event in view.graph.events:
        found.update(v for v in event.params.values() if isinstance(v, str))
    for anchor in view.anchors.values():
        for value in anchor.record.model_dump(mode="json").values():
            if isinstance(value, str):
                found.add(value)
            elif isinstance(value, list):
                found.update(v for v in value if isinstance(v, str))
    return {s.strip() for s in found if s and s.strip()}


def early_end(start: datetime, months: int = EARLY_MONTHS) -> datetime:
    """The moment `months` calendar months after `start` (the day clipped to the month's length)."""
    month = start.month - 1 + months
    year, month = start.year + month // 12, month % 12 + 1
    return start.replace(year=year, month=month, day=min(start.day, monthrange(year, month)[1]))


def persona_repetition(
    view: PersonaView, role: str, until: datetime | None = None, entities: Iterable[str] | None = None
) -> Repetition:
    """One role's repetition in a persona's own sessions (filler, the haystack around them, is not its
    life), up to `until` when given."""
    texts = [
        m.content
        for s in view.sessions
        if not s.filler
        for m in s.messages
        if m.role == role and (until is None or m.timestamp < until)
    ]
    return repetition(texts, view.persona.language, entity_strings(view) if entities is None else entities)


def repetition_stats(views: Iterable[PersonaView]) -> dict[str, dict]:
    """Per language, role and span (`span`: the whole span; `3_months`: its first EARLY_MONTHS months): the
    summary."""
    parts: dict[tuple[str, str, str], list[Repetition]] = {}
    for view in views:
        entities = entity_strings(view)
        early = early_end(view.persona.start)
        for role in SPOKEN:
            lang = view.persona.language
            for span, until in (("span", None), (f"{EARLY_MONTHS}_months", early)):
                found = persona_repetition(view, role, until, entities)
                parts.setdefault((lang, role, span), []).append(found)
    return {f"repetition.{'.'.join(key)}": combine(found).summary() for key, found in parts.items()}
