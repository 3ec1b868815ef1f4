"""`keme validate`: prove a dataset's invariants, naming every violation.

Checks: manifest hashes and counts; the event hierarchy and DAG (depth, child
windows inside parents, 2-15 children per expanded event, edges between
siblings from an earlier to a later event); one session per leaf inside its
window with strictly increasing timestamps and no overlap between sessions;
anchors unchanged (hash) and embedded verbatim exactly once; every evidence
link resolving to a message that states the value while that version was valid.
"""

from __future__ import annotations

import hashlib
from collections import Counter, defaultdict
from dataclasses import dataclass
from pathlib import Path

import networkx as nx

from keme.dataset.io import read_jsonl, sha256_file
from keme.dataset.manifest import Manifest, read_manifest
from keme.errors import KemeError
from keme.models import Anchor, EventGraph, ImageRecord, Persona, QAItem, Session
from keme.prior.anchors import anchor_message_text
from keme.synth.state import dialogue_hash
from keme.text import resources


@dataclass(frozen=True)
class Violation:
    check: str
    where: str
    message: str

    def __str__(self) -> str:
        return f"[{self.check}] {self.where}: {self.message}"


@dataclass
class Dataset:
    root: Path
    manifest: Manifest
    personas: list[Persona]
    anchors: list[Anchor]
    graphs: list[EventGraph]
    sessions: list[Session]
    qa: list[QAItem]
    images: list[ImageRecord]


def load_dataset(root: Path) -> Dataset:
    manifest = read_manifest(root)

    def part(name: str, model):
        path = root / name
        return read_jsonl(path, model) if path.exists() else []

    return Dataset(
        root, manifest, part("personas.jsonl", Persona), part("anchors.jsonl", Anchor),
        part("graphs.jsonl", EventGraph), part("sessions.jsonl", Session), part("qa.jsonl", QAItem),
        part("images.jsonl", ImageRecord),
    )


def check_manifest(root: Path, manifest: Manifest) -> list[Violation]:
    out = []
    for name, entry in manifest.files.items():
        path = root / name
        if not path.exists():
            out.append(Violation("manifest", name, "listed in the manifest but missing"))
            continue
        if sha256_file(path) != entry.sha256:
            out.append(Violation("manifest", name, "SHA-256 differs from the manifest (file changed after synthesis)"))
        if path.suffix == ".jsonl":
            lines = sum(1 for line in path.open(encoding="utf-8") if line.strip())
            if lines != entry.records:
                out.append(Violation("manifest", name, f"{lines} records, manifest says {entry.records}"))
    return out


def check_graph(graph: EventGraph, sessions_by_id: dict[str, Session], min_children: int, max_children: int) -> list[Violation]:
    out = []
    events = {e.id: e for e in graph.events}
    children: dict[str | None, list] = defaultdict(list)
    for event in graph.events:
        children[event.parent_id].append(event)
        where = f"{graph.persona_id}/{event.id}"
        if event.start > event.end:
            out.append(Violation("window", where, "starts after it ends"))
        if event.parent_id is not None:
            parent = events.get(event.parent_id)
            if parent is None:
                out.append(Violation("hierarchy", where, f"parent {event.parent_id} does not exist"))
                continue
            if event.depth != parent.depth + 1:
                out.append(Violation("hierarchy", where, f"depth {event.depth} under a depth-{parent.depth} parent"))
            if event.start < parent.start or event.end > parent.end:
                out.append(Violation("window", where, f"window {event.start}..{event.end} leaves parent {parent.id}"))
        elif event.depth != 0:
            out.append(Violation("hierarchy", where, "root-level event with depth > 0"))
        if event.depth > 2:
            out.append(Violation("hierarchy", where, f"depth {event.depth} exceeds 2"))
        if event.session_id:
            session = sessions_by_id.get(event.session_id)
            if session is None:
                out.append(Violation("session", where, f"session {event.session_id} missing"))
            elif session.start < event.start or session.end > event.end:
                out.append(Violation("window", where, f"session {session.id} {session.start}..{session.end} outside the event window"))
            elif session.anchor_id != event.anchor_id:
                out.append(Violation("anchor", where, "session and event disagree on the anchor"))
        if event.pending_anchors:
            out.append(Violation("anchor", where, f"anchors never grounded: {event.pending_anchors}"))
    for event in graph.events:
        has_children = event.id in children
        if has_children and event.session_id:
            out.append(Violation("session", f"{graph.persona_id}/{event.id}", "has both children and a session"))
        if not has_children and not event.session_id:
            out.append(Violation("session", f"{graph.persona_id}/{event.id}", "leaf without a session"))
    for parent_id, kids in children.items():
        if not min_children <= len(kids) <= max_children:
            out.append(Violation("graph-size", f"{graph.persona_id}/{parent_id or 'root'}", f"{len(kids)} children, expected {min_children}-{max_children}"))
    anchored = Counter(e.anchor_id for e in graph.events if e.anchor_id)
    out += [Violation("anchor", f"{graph.persona_id}/{a}", f"grounded in {n} events") for a, n in anchored.items() if n > 1]
    dag = nx.DiGraph()
    dag.add_nodes_from(events)
    for edge in graph.edges:
        where = f"{graph.persona_id}/{edge.source}->{edge.target}"
        source, target = events.get(edge.source), events.get(edge.target)
        if source is None or target is None:
            out.append(Violation("edge", where, "names a missing event"))
            continue
        if source.parent_id != target.parent_id:
            out.append(Violation("edge", where, "joins events of different graphs"))
        if not source.end < target.start:
            out.append(Violation("edge", where, f"source ends {source.end}, not before target starts {target.start}"))
        dag.add_edge(edge.source, edge.target)
    if not nx.is_directed_acyclic_graph(dag):
        out.append(Violation("dag", graph.persona_id, "edges form a cycle"))
    return out


def check_sessions(sessions: list[Session], personas: dict[str, Persona]) -> list[Violation]:
    out = []
    seen_ids: set[str] = set()
    dialogues: dict[str, str] = {}
    by_persona: dict[str, list[Session]] = defaultdict(list)
    for session in sessions:
        by_persona[session.persona_id].append(session)
        persona = personas.get(session.persona_id)
        if persona is None:
            out.append(Violation("session", session.id, f"unknown persona {session.persona_id}"))
        elif session.language != persona.language:
            out.append(Violation("language", session.id, f"{session.language} session for a {persona.language} persona"))
        previous = None
        for message in session.messages:
            if message.id in seen_ids:
                out.append(Violation("message", message.id, "duplicate message id"))
            seen_ids.add(message.id)
            if previous is not None and not message.timestamp > previous:
                out.append(Violation("timestamps", message.id, "not strictly after the previous message"))
            previous = message.timestamp
            if message.role == "system" and not message.app:
                out.append(Violation("message", message.id, "system message without an app name"))
        if session.messages and (session.messages[0].timestamp != session.start or session.messages[-1].timestamp != session.end):
            out.append(Violation("timestamps", session.id, "start/end differ from the first/last message"))
        digest = dialogue_hash(session)
        if digest in dialogues:
            out.append(Violation("dialogue", session.id, f"same dialogue text as {dialogues[digest]}"))
        dialogues.setdefault(digest, session.id)
    for pid, items in by_persona.items():
        ordered = sorted(items, key=lambda s: s.start)
        for a, b in zip(ordered, ordered[1:]):
            if b.start <= a.end:
                out.append(Violation("timestamps", b.id, f"overlaps session {a.id}"))
    return out


def check_anchors(anchors: list[Anchor], sessions: list[Session], personas: dict[str, Persona]) -> list[Violation]:
    out = []
    by_anchor: dict[str, list[Session]] = defaultdict(list)
    for session in sessions:
        if session.anchor_id:
            by_anchor[session.anchor_id].append(session)
    for anchor in anchors:
        if anchor.content_hash() != anchor.sha256:
            out.append(Violation("anchor", anchor.id, "content does not match its sealed hash (altered)"))
        holders = by_anchor.get(anchor.id, [])
        if len(holders) != 1:
            out.append(Violation("anchor", anchor.id, f"embedded in {len(holders)} sessions, expected 1"))
            continue
        persona = personas.get(anchor.persona_id)
        if persona is None:
            continue
        res = resources.get(persona.language)
        expected = anchor_message_text(anchor, res)
        matches = [m for m in holders[0].messages if m.role == "system" and m.content == expected
                   and m.timestamp == anchor.timestamp and m.app == anchor.app_name]
        if not matches:
            out.append(Violation("anchor", anchor.id, f"session {holders[0].id} does not carry the record verbatim at {anchor.timestamp}"))
    return out


def check_evidence(personas: list[Persona], messages: dict[str, tuple[str, object]]) -> list[Violation]:
    out = []
    for persona in personas:
        for attr in persona.attributes():
            versions = attr.versions
            for i, version in enumerate(versions):
                where = f"{persona.id}/{attr.key}[{i}]"
                if i and version.valid_from <= versions[i - 1].valid_from:
                    out.append(Violation("persona", where, "versions not in time order"))
                if i and version.value == versions[i - 1].value:
                    out.append(Violation("persona", where, "update repeats the previous value"))
                until = versions[i + 1].valid_from if i + 1 < len(versions) else None
                if (i > 0 or version.valid_from > persona.start) and not version.evidence:
                    out.append(Violation("evidence", where, "change without a revealing message"))
                for message_id in version.evidence:
                    found = messages.get(message_id)
                    if found is None:
                        out.append(Violation("evidence", where, f"links missing message {message_id}"))
                        continue
                    content, timestamp = found
                    if version.value not in content:
                        out.append(Violation("evidence", where, f"message {message_id} does not state {version.value!r}"))
                    if timestamp < version.valid_from or (until is not None and timestamp >= until):
                        out.append(Violation("evidence", where, f"message {message_id} lies outside the version's validity"))
                if (i > 0 or version.valid_from > persona.start) and version.evidence:
                    first = messages.get(version.evidence[0])
                    if first is not None and first[1] != version.valid_from:
                        out.append(Violation("evidence", where, "valid_from differs from the revealing message's time"))
    return out


def validate(root: Path, min_children: int | None = None, max_children: int | None = None,
             rerender: bool = False) -> list[Violation]:
    try:
        data = load_dataset(root)
    except KemeError as exc:
        return [Violation("load", str(root), str(exc))]
    graph_cfg = (data.manifest.config or {}).get("graph", {})
    lo = min_children or graph_cfg.get("min_events", 2)
    hi = max_children or graph_cfg.get("max_events", 15)
    violations = check_manifest(root, data.manifest)
    personas = {p.id: p for p in data.personas}
    sessions_by_id = {s.id: s for s in data.sessions}
    for graph in data.graphs:
        violations += check_graph(graph, sessions_by_id, lo, hi)
    violations += check_sessions(data.sessions, personas)
    violations += check_anchors(data.anchors, data.sessions, personas)
    messages = {m.id: (m.content, m.timestamp) for s in data.sessions for m in s.messages}
    violations += check_evidence(data.personas, messages)
    if data.images:
        violations += check_images(data, rerender)
    if data.qa:
        violations += check_qa(data)
    return violations


def check_images(data: Dataset, rerender: bool = False) -> list[Violation]:
    """Every screenshot exists with its hash, is shared by its message, and shows its facts.

    With `rerender`, each page is rendered again in chromium and must give the
    same facts and text (and, on the same chromium and fonts, the same PNG).
    """
    from keme.dataset.io import sha256_file
    from keme.dataset.paths import PathEscape, inside

    out = []
    messages = {m.id: m for s in data.sessions for m in s.messages}
    session_of = {m.id: s.id for s in data.sessions for m in s.messages}
    for record in data.images:
        try:
            path = inside(data.root, record.path)
        except PathEscape as exc:  # the model keeps paths under images/; a symlink can still point out
            out.append(Violation("image", record.id, f"{record.path} leaves the dataset: {exc}"))
            continue
        if not path.exists():
            out.append(Violation("image", record.id, f"{record.path} is missing"))
            continue
        if sha256_file(path) != record.sha256:
            out.append(Violation("image", record.id, f"{record.path} does not match its SHA-256 (changed after rendering)"))
        message = messages.get(record.message_id)
        if message is None or record.path not in message.images or session_of.get(record.message_id) != record.session_id:
            out.append(Violation("image", record.id, f"message {record.message_id} of {record.session_id} does not share {record.path}"))
        elif record.caption not in message.captions:
            out.append(Violation("image", record.id, "the message does not carry the image's caption"))
        for name, value in record.facts.items():
            if value not in record.dom_text:
                out.append(Violation("image", record.id, f"fact {name}={value!r} is not in the page text"))
    if rerender:
        out += _rerender(data)
    return out


def _rerender(data: Dataset) -> list[Violation]:
    from keme.omni.render import Renderer
    from keme.omni.screens import MODELS

    out = []
    scale = (data.manifest.config or {}).get("omni", {}).get("scale", 1.0)  # the PNGs were rendered at this ratio
    with Renderer(scale=scale) as renderer:
        for record in data.images:
            shot = renderer.render(record.template, MODELS[record.template].model_validate(record.screen))
            if shot.facts != record.facts or shot.text != record.dom_text:
                out.append(Violation("image", record.id, "re-rendered page shows other facts or text than recorded"))
            elif hashlib.sha256(shot.png).hexdigest() != record.sha256:
                out.append(Violation("image", record.id, "re-rendered PNG differs (same text: another chromium or font build?)"))
    return out


def check_qa(data: Dataset) -> list[Violation]:
    """Every QA item's proof re-derives its answer from the current messages and persona."""
    from keme.qa.facts import worlds_from
    from keme.qa.verify import verify_items

    out = []
    ids = Counter(item.id for item in data.qa)
    out += [Violation("qa", item_id, "duplicate item id") for item_id, n in ids.items() if n > 1]
    for item in data.qa:
        missing = [s for s in item.sub_questions if s not in ids]
        if missing:
            out.append(Violation("qa", item.id, f"sub-questions {missing} do not exist"))
    worlds = {w.persona.id: w for w in worlds_from(data.personas, data.sessions, data.graphs, data.anchors, data.images)}
    out += [Violation("qa", r.item_id, f"{r.reason}: {r.detail}") for r in verify_items(data.qa, worlds)]
    return out
