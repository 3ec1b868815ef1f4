"""Counts that describe a dataset (`keme stats`)."""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass
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
    numbers["diversity"] = diversity_stats(data.views())
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


# -- variety: how often a persona says the same thing -------------------------------------------------

DIGITS = re.compile(r"\d+")
ENTITY = "<E>"
SPOKEN = ("user", "assistant")


@dataclass(frozen=True)
class Diversity:
    """Duplicate counts over the user and assistant messages of one or more personas.

    A message is a near-duplicate when its normalized text (entity strings -> <E>, digit runs -> #)
    equals another message's of the same persona, an exact duplicate when its raw text does."""

    messages: int
    near_duplicates: int
    exact_duplicates: int
    distinct_lines: int
    max_exact: int
    repeated: Counter[str]  # normalized line -> count, for lines said more than once

    @property
    def near_share(self) -> float:
        return self.near_duplicates / self.messages if self.messages else 0.0

    @property
    def exact_share(self) -> float:
        return self.exact_duplicates / self.messages if self.messages else 0.0

    def top(self, n: int = 5) -> list[tuple[str, int]]:
        return sorted(self.repeated.items(), key=lambda kv: (-kv[1], kv[0]))[:n]

    def summary(self, n: int = 5) -> dict:
        return {
            "messages": self.messages,
            "near_duplicate_share": round(self.near_share, 4),
            "exact_duplicate_share": round(self.exact_share, 4),
            "distinct_lines": self.distinct_lines,
            "max_exact_repeats": self.max_exact,
            "most_repeated": dict(self.top(n)),
        }


def normalizer(entities: Iterable[str]) -> Callable[[str], str]:
    """Replace every entity string (longest first) with <E>, then every digit run with #."""
    names = sorted({e for e in entities if e and not e.isdigit()}, key=lambda e: (-len(e), e))
    pattern = re.compile("|".join(re.escape(e) for e in names)) if names else None

    def normalize(text: str) -> str:
        if pattern is not None:
            text = pattern.sub(ENTITY, text)
        return DIGITS.sub("#", text)

    return normalize


def line_diversity(texts: list[str], entities: Iterable[str]) -> Diversity:
    """The duplicate counts of one persona's messages, `entities` being its entity strings."""
    normalize = normalizer(entities)
    exact = Counter(texts)
    near = Counter(normalize(t) for t in texts)
    return Diversity(
        messages=len(texts),
        near_duplicates=sum(n for n in near.values() if n > 1),
        exact_duplicates=sum(n for n in exact.values() if n > 1),
        distinct_lines=len(exact),
        max_exact=max(exact.values(), default=0),
        repeated=Counter({line: n for line, n in near.items() if n > 1}),
    )


def combine(parts: Iterable[Diversity]) -> Diversity:
    """Several personas' counts as one (duplicates never cross personas)."""
    parts = list(parts)
    repeated: Counter[str] = Counter()
    for part in parts:
        repeated.update(part.repeated)
    return Diversity(
        messages=sum(p.messages for p in parts),
        near_duplicates=sum(p.near_duplicates for p in parts),
        exact_duplicates=sum(p.exact_duplicates for p in parts),
        distinct_lines=sum(p.distinct_lines for p in parts),
        max_exact=max((p.max_exact for p in parts), default=0),
        repeated=repeated,
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


def persona_diversity(view: PersonaView) -> Diversity:
    texts = [m.content for s in view.sessions for m in s.messages if m.role in SPOKEN]
    return line_diversity(texts, entity_strings(view))


def diversity_stats(views: Iterable[PersonaView]) -> dict:
    return combine(persona_diversity(v) for v in views).summary()
