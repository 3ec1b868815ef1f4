"""`keme validate`: prove a dataset's invariants, naming every violation.

One check, `check_dataset`, for `keme validate` and for every command that uses a
dataset (`verified_dataset`: eval, export, stats, view, hardneg), so none of them
scores or passes on what validate refuses. It has two layers. `check_scoring` holds
what a score depends on, for synthesized and imported datasets alike: manifest
hashes and counts, every file a regular file inside the dataset
(keme.dataset.paths.file_problem), every line loading, unique ids, references
resolving within their persona, sessions and questions present, time order, every
QA proof re-derived. On top, what synthesis promises: the event hierarchy and DAG (depth, child windows inside
parents, 2-15 children per expanded event, edges between siblings from an
earlier to a later event); one session per leaf inside its window with no
overlap between sessions; anchors unchanged (hash) and embedded verbatim
exactly once; every evidence link resolving to a message that states the value
while that version was valid; screenshots; filler sessions that state nothing a question depends on
(keme.qa.haystack); and the coherence of the world the text
is said from (keme.world.check: occupancy, state, objects, calendar, catalog,
chapters), counted per rule.
"""

from __future__ import annotations

import hashlib
from collections import Counter, defaultdict
from dataclasses import dataclass
from itertools import pairwise
from pathlib import Path

import networkx as nx

from keme.dataset import PART_FILES, Dataset, DatasetError, Scan, Violation, checked
from keme.dataset.findings import flags_of, imported, source_findings
from keme.dataset.io import sha256_file
from keme.dataset.manifest import MANIFEST, Manifest, read_manifest
from keme.dataset.paths import file_problem, inside
from keme.errors import KemeError
from keme.models import Anchor, EventGraph, Persona, QAItem, Session
from keme.omni.render import Renderer
from keme.omni.screens import MODELS
from keme.prior.anchors import anchor_message_text
from keme.qa.facts import worlds_of
from keme.qa.haystack import filler_problems
from keme.qa.resolve import Ledger, record_titles, shared_title, uniqueness
from keme.qa.second_right import prove_item
from keme.qa.verify import verify_items
from keme.synth.state import dialogue_hash
from keme.text import resources
from keme.text.normalize import norm_text
from keme.world.catalog import load_catalog
from keme.world.check import RULES, check_world
from keme.world.cues import load_cues

WORLD_FILES = frozenset(
    {"personas.jsonl", "graphs.jsonl", "sessions.jsonl", "anchors.jsonl", "schedule.jsonl", "claims.jsonl"}
)


@dataclass(frozen=True)
class CoherenceViolation(Violation):
    """A finding of the coherence checker: `rule` is one of keme.world.check.RULES."""

    rule: str = ""


def coherence_counts(violations: list[Violation]) -> dict[str, int]:
    """Coherence violations per rule, every rule listed (zeros included), in report order."""
    counts = Counter(v.rule for v in violations if isinstance(v, CoherenceViolation))
    return {rule: counts[rule] for rule in RULES}


def records_world(data: Dataset) -> bool:
    """The dataset records the world its text is said from (a schedule or claims): hold the text to it."""
    return data.has(Dataset.schedule) or data.has(Dataset.claims)


def coherence_checked(scan: Scan, coherence: bool | None = None) -> bool:
    """Whether `check_dataset` checks the world's coherence: asked to (True) or the dataset records a world
    (None), and every file the checker reads loaded."""
    data = scan.dataset
    if data.root is None or not data.root.is_dir() or scan.unreadable & WORLD_FILES:
        return False
    return records_world(data) if coherence is None else coherence


def check_coherence(data: Dataset) -> list[Violation]:
    """Every coherence finding of every synthesized persona (one with an event graph) as a violation."""
    out: list[Violation] = []
    for view in data.views():
        if not view.graph.events:
            continue  # imported dialogues: no simulated life to hold them to
        try:
            findings = check_world(view, load_catalog(view.lang), load_cues(view.lang))
        except KemeError as exc:
            out.append(Violation("coherence", view.persona.id, f"cannot be checked: {exc}"))
            continue
        # a tampered record the checker cannot read
        except (ArithmeticError, LookupError, TypeError, ValueError) as exc:
            out.append(
                Violation("coherence", view.persona.id, f"cannot be checked ({type(exc).__name__}: {exc})")
            )
            continue
        for finding in findings:
            ids = ", ".join(finding.message_ids) or "-"
            out.append(
                CoherenceViolation(
                    "coherence", finding.persona_id, f"{finding.rule} [{ids}]: {finding.text}", finding.rule
                )
            )
    return out


def verified_dataset(root: Path, questions: bool | None = True, hint: str = "") -> Dataset:
    """The dataset, loaded once, when `check_dataset` — the very check `keme validate` makes, screenshots
    re-rendered aside — finds nothing; else a DatasetError naming each problem. What validate refuses,
    eval, export, stats, view and hardneg refuse too.

    `questions`: True demands QA items (eval, export); None checks them when there are any (stats).
    """
    root = Path(root)
    if not root.is_dir():
        read_manifest(root)  # says what `root` is instead
    scan = scan_dataset(root)
    dataset = scan.dataset
    wanted = "qa.jsonl" in scan.unreadable or bool(dataset.qa) if questions is None else questions
    stamp = checked.dataset_digest(root, wanted)
    if not checked.was_checked(stamp):  # unchanged since it last passed, under the same checks
        violations = check_dataset(scan, questions=wanted)
        if violations:
            raise DatasetError(root, violations, hint)
        checked.remember(stamp)
    dataset.mark_checked()  # what a run's `verified` reports (eval.replay)
    return dataset


def check_scoring(
    data: Dataset, unreadable: frozenset[str] = frozenset(), questions: bool = True
) -> list[Violation]:
    """What a score depends on. Demands no event graphs or anchors: imported datasets have none.

    Checks that need a file that did not load completely are skipped (its lines are reported already);
    QA proofs are re-derived only once the ids and references they rest on hold.
    `questions=False` leaves qa.jsonl out (`keme qa` is about to rebuild it).
    """
    skip = frozenset() if questions else frozenset({"qa.jsonl"})
    out = data.manifest_problems(skip) if MANIFEST not in unreadable else []
    if {"personas.jsonl", "sessions.jsonl"} & unreadable or (questions and "qa.jsonl" in unreadable):
        return out
    qa = data.qa if questions else []
    structure = check_ids(data.personas, data.sessions, qa) + check_references(
        data.personas, data.sessions, qa, questions
    )
    out += structure + check_times(data.personas, data.sessions, qa)
    if qa and not structure and not set(PART_FILES) & unreadable:
        out += check_proofs(data) + check_flags(qa, data.sessions)
    return out


def check_flags(items: list[QAItem], sessions: list[Session]) -> list[Violation]:
    """An imported question carries exactly its source findings as flags (keme.dataset.findings), and no
    synthesized one carries any: the scores leave flagged items out, so a flag edited by hand would move
    them."""
    expected = flags_of(source_findings(items, sessions))
    out = []
    for item in items:
        want = expected.get(item.id, []) if imported(item) else []
        if item.flags != want:
            out.append(
                Violation(
                    "qa",
                    item.id,
                    f"flags {item.flags} differ from its source findings {want} (edited by hand, or imported "
                    "by an older keme: import the source again)",
                )
            )
    return out


def _duplicates(kind: str, ids: list[str]) -> list[Violation]:
    return [
        Violation(kind, item, f"duplicate {kind} id ({n} times)") for item, n in Counter(ids).items() if n > 1
    ]


def check_ids(personas: list[Persona], sessions: list[Session], qa: list[QAItem]) -> list[Violation]:
    """Every persona, session, message and question id names one record (results are keyed by them)."""
    return (
        _duplicates("persona", [p.id for p in personas])
        + _duplicates("session", [s.id for s in sessions])
        + _duplicates("message", [m.id for s in sessions for m in s.messages])
        + _duplicates("qa", [q.id for q in qa])
    )


def check_references(
    personas: list[Persona], sessions: list[Session], qa: list[QAItem], questions: bool = True
) -> list[Violation]:
    """Sessions and questions belong to known personas; evidence and sub-questions resolve within the
    persona."""
    out = []
    known = {p.id for p in personas}
    if not personas:
        out.append(Violation("dataset", "personas.jsonl", "no personas"))
    if not sessions:
        out.append(Violation("dataset", "sessions.jsonl", "no sessions at all: there is nothing to remember"))
    if questions and not qa:
        out.append(
            Violation(
                "dataset", "qa.jsonl", "no questions: there is nothing to evaluate (`keme qa` builds them)"
            )
        )
    owner_of_session = {s.id: s.persona_id for s in sessions}
    owner_of_message = {m.id: s.persona_id for s in sessions for m in s.messages}
    owner_of_item = {q.id: q.persona_id for q in qa}
    for session in sessions:
        if session.persona_id not in known:
            out.append(Violation("session", session.id, f"unknown persona {session.persona_id}"))
    asked = Counter(q.persona_id for q in qa)
    has_sessions = set(owner_of_session.values())
    for persona in personas:
        if asked[persona.id] and persona.id not in has_sessions:
            out.append(Violation("persona", persona.id, f"has {asked[persona.id]} questions but no sessions"))
    for item in qa:
        if item.persona_id not in known:
            out.append(Violation("qa", item.id, f"unknown persona {item.persona_id}"))
            continue
        if item.persona_id not in has_sessions:
            continue  # reported once, for the persona
        for kind, ids, owners in (
            ("evidence message", item.evidence, owner_of_message),
            ("evidence session", item.evidence_sessions, owner_of_session),
            ("sub-question", item.sub_questions, owner_of_item),
        ):
            missing = [i for i in ids if i not in owners]
            foreign = [i for i in ids if i in owners and owners[i] != item.persona_id]
            if missing:
                out.append(Violation("qa", item.id, f"{kind}s {missing} do not exist"))
            if foreign:
                out.append(Violation("qa", item.id, f"{kind}s {foreign} belong to another persona"))
    return out


def check_times(personas: list[Persona], sessions: list[Session], qa: list[QAItem]) -> list[Violation]:
    """Time runs forward: inside a persona, a session and its messages; no question before its persona
    starts."""
    out = []
    start = {}
    for persona in personas:
        start.setdefault(persona.id, persona.start)
        if persona.end < persona.start:
            out.append(
                Violation(
                    "timestamps",
                    persona.id,
                    f"the trajectory ends ({persona.end}) before it starts ({persona.start})",
                )
            )
    for session in sessions:
        previous = None
        for message in session.messages:
            if previous is not None and not message.timestamp > previous:
                out.append(Violation("timestamps", message.id, "not strictly after the previous message"))
            previous = message.timestamp
        if session.messages and (
            session.messages[0].timestamp != session.start or session.messages[-1].timestamp != session.end
        ):
            out.append(Violation("timestamps", session.id, "start/end differ from the first/last message"))
    for item in qa:
        begins = start.get(item.persona_id)
        if begins is not None and item.asked_at < begins:
            out.append(
                Violation(
                    "qa",
                    item.id,
                    f"asked at {item.asked_at}, before its persona's trajectory starts ({begins})",
                )
            )
    return out


def check_proofs(data: Dataset) -> list[Violation]:
    """Every QA item's proof re-derives its answer from the current messages and persona."""

    try:
        worlds = {w.persona.id: w for w in worlds_of(data)}
    # tampered data the fact extractor cannot read
    except (
        ArithmeticError,
        LookupError,
        TypeError,
        ValueError,
    ) as exc:
        return [
            Violation("qa", str(data.root), f"QA proofs cannot be re-derived: {type(exc).__name__}: {exc}")
        ]
    out = []
    for item in data.qa:
        try:
            rejections = verify_items([item], worlds)
        # a tampered proof or answer spec
        except (
            ArithmeticError,
            LookupError,
            TypeError,
            ValueError,
        ) as exc:
            out.append(Violation("qa", item.id, f"its proof cannot be checked ({type(exc).__name__}: {exc})"))
            continue
        out += [Violation("qa", r.item_id, f"{r.reason}: {r.detail}") for r in rejections]
    out += check_uniqueness(data.qa, worlds)
    out += check_second_right(data.qa, {pid: w.persona for pid, w in worlds.items()})
    return out


def check_second_right(items: list[QAItem], personas: dict[str, Persona]) -> list[Violation]:
    """No choice item has an option that is right besides its gold, a gold the catalog refutes, or
    options of another kind than the question asks for, proved against every attribute of the persona
    at the question's time and the catalog (keme.qa.second_right)."""
    out = []
    for item in items:
        persona = personas.get(item.persona_id)
        if persona is None or imported(item):
            continue
        proof = prove_item(item, persona, load_catalog(item.language))
        if proof is not None and not proof.ok:
            out.append(Violation("qa", item.id, "second_right: " + "; ".join(proof.problems())))
    return out


def check_uniqueness(items: list[QAItem], worlds: dict) -> list[Violation]:
    """Every question has exactly its gold as answer in the persona's whole ledger, one question text has
    one gold, and a question naming a record title several records share says which one it means."""
    out = []
    ledgers = {pid: Ledger.of(w) for pid, w in worlds.items()}
    titles = {pid: record_titles(w.claims) for pid, w in worlds.items()}
    golds: dict[tuple[str, str], set[str]] = defaultdict(set)
    for item in items:
        ledger = ledgers.get(item.persona_id)
        if ledger is None or imported(item):  # an imported question's defects are source findings
            continue
        problem = uniqueness(item, ledger)
        if problem is not None:
            out.append(Violation("qa", item.id, f"not_unique: {problem}"))
        golds[(item.persona_id, norm_text(item.question))].add(item.answer)
        shared = shared_title(item.question, item.asked_at, titles[item.persona_id])
        if shared:
            out.append(Violation("qa", item.id, f"shared_title: {shared}"))
    for (persona_id, question), answers in sorted(golds.items()):
        if len(answers) > 1:
            out.append(
                Violation(
                    "qa",
                    persona_id,
                    f"same_text_other_gold: {question!r} has golds {sorted(answers)}",
                )
            )
    return out


def check_graph(
    graph: EventGraph, sessions_by_id: dict[str, Session], min_children: int, max_children: int
) -> list[Violation]:
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
                out.append(
                    Violation("hierarchy", where, f"depth {event.depth} under a depth-{parent.depth} parent")
                )
            if event.start < parent.start or event.end > parent.end:
                out.append(
                    Violation("window", where, f"window {event.start}..{event.end} leaves parent {parent.id}")
                )
        elif event.depth != 0:
            out.append(Violation("hierarchy", where, "root-level event with depth > 0"))
        if event.depth > 2:
            out.append(Violation("hierarchy", where, f"depth {event.depth} exceeds 2"))
        if event.session_id:
            session = sessions_by_id.get(event.session_id)
            if session is None:
                out.append(Violation("session", where, f"session {event.session_id} missing"))
            elif session.start < event.start or session.end > event.end:
                out.append(
                    Violation(
                        "window",
                        where,
                        f"session {session.id} {session.start}..{session.end} outside the event window",
                    )
                )
            elif session.anchor_id != event.anchor_id:
                out.append(Violation("anchor", where, "session and event disagree on the anchor"))
        if event.pending_anchors:
            out.append(Violation("anchor", where, f"anchors never grounded: {event.pending_anchors}"))
    for event in graph.events:
        has_children = event.id in children
        if has_children and event.session_id:
            out.append(
                Violation("session", f"{graph.persona_id}/{event.id}", "has both children and a session")
            )
        if not has_children and not event.session_id:
            out.append(Violation("session", f"{graph.persona_id}/{event.id}", "leaf without a session"))
    for parent_id, kids in children.items():
        if not min_children <= len(kids) <= max_children:
            out.append(
                Violation(
                    "graph-size",
                    f"{graph.persona_id}/{parent_id or 'root'}",
                    f"{len(kids)} children, expected {min_children}-{max_children}",
                )
            )
    anchored = Counter(e.anchor_id for e in graph.events if e.anchor_id)
    out += [
        Violation("anchor", f"{graph.persona_id}/{a}", f"grounded in {n} events")
        for a, n in anchored.items()
        if n > 1
    ]
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
            out.append(
                Violation("edge", where, f"source ends {source.end}, not before target starts {target.start}")
            )
        dag.add_edge(edge.source, edge.target)
    if not nx.is_directed_acyclic_graph(dag):
        out.append(Violation("dag", graph.persona_id, "edges form a cycle"))
    return out


IMPORTED_PATTERNS = frozenset({"locomo", "longmemeval", "mobilemem", "mobilemem_omni"})  # importers' sessions


def check_sessions(sessions: list[Session], personas: dict[str, Persona]) -> list[Violation]:
    """What synthesis promises beyond scoring: languages, app names, distinct dialogues, no overlap."""
    out = []
    dialogues: dict[str, str] = {}  # distinct everywhere; an imported one within its persona
    by_persona: dict[str, list[Session]] = defaultdict(list)
    for session in sessions:
        by_persona[session.persona_id].append(session)
        persona = personas.get(session.persona_id)
        if persona is not None and session.language != persona.language:
            out.append(
                Violation(
                    "language", session.id, f"{session.language} session for a {persona.language} persona"
                )
            )
        for message in session.messages:
            if message.role == "system" and not message.app:
                out.append(Violation("message", message.id, "system message without an app name"))
        if not session.messages and session.pattern not in IMPORTED_PATTERNS:  # a source's are as published
            out.append(Violation("dialogue", session.id, "a session without a message"))
        digest = dialogue_hash(session)
        if session.pattern in IMPORTED_PATTERNS:  # LongMemEval gives each question its own copy of a haystack
            digest = f"{session.persona_id}\x00{digest}"
        if digest in dialogues:
            out.append(Violation("dialogue", session.id, f"same dialogue text as {dialogues[digest]}"))
        dialogues.setdefault(digest, session.id)
    for items in by_persona.values():
        ordered = sorted(items, key=lambda s: s.start)
        for a, b in pairwise(ordered):
            if b.start <= a.end:
                out.append(Violation("timestamps", b.id, f"overlaps session {a.id}"))
    return out


def check_anchors(
    anchors: list[Anchor], sessions: list[Session], personas: dict[str, Persona]
) -> list[Violation]:
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
        matches = [
            m
            for m in holders[0].messages
            if m.role == "system"
            and m.content == expected
            and m.timestamp == anchor.timestamp
            and m.app == anchor.app_name
        ]
        if not matches:
            out.append(
                Violation(
                    "anchor",
                    anchor.id,
                    f"session {holders[0].id} does not carry the record verbatim at {anchor.timestamp}",
                )
            )
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
                        out.append(
                            Violation(
                                "evidence", where, f"message {message_id} does not state {version.value!r}"
                            )
                        )
                    if timestamp < version.valid_from or (until is not None and timestamp >= until):
                        out.append(
                            Violation(
                                "evidence", where, f"message {message_id} lies outside the version's validity"
                            )
                        )
                if (i > 0 or version.valid_from > persona.start) and version.evidence:
                    first = messages.get(version.evidence[0])
                    if first is not None and first[1] != version.valid_from:
                        out.append(
                            Violation(
                                "evidence", where, "valid_from differs from the revealing message's time"
                            )
                        )
    return out


def _graph_limits(manifest: Manifest, lo: int | None, hi: int | None) -> tuple[int, int]:
    graph = (manifest.config or {}).get("graph")
    graph = graph if isinstance(graph, dict) else {}
    low, high = graph.get("min_events", 2), graph.get("max_events", 15)
    return lo or (low if isinstance(low, int) else 2), hi or (high if isinstance(high, int) else 15)


def validate(
    root: Path,
    min_children: int | None = None,
    max_children: int | None = None,
    rerender: bool = False,
    questions: bool = True,
    coherence: bool | None = None,
) -> list[Violation]:
    """Every violation in `root`: every bad line of every file, then every check that still makes sense.

    `questions=False` leaves qa.jsonl out (what `keme qa` checks before rebuilding it). `coherence`: True
    checks the world's coherence always, False never, None when the dataset records a world.
    """
    return check_dataset(
        scan_dataset(root, questions), min_children, max_children, rerender, questions, coherence
    )


def scan_dataset(root: Path, questions: bool = True) -> Scan:
    """The dataset at `root` with every problem collected; `questions=False` leaves qa.jsonl unread."""
    return Dataset.scan(root, skip=frozenset() if questions else frozenset({"qa.jsonl"}))


def check_dataset(
    scan: Scan,
    min_children: int | None = None,
    max_children: int | None = None,
    rerender: bool = False,
    questions: bool = True,
    coherence: bool | None = None,
) -> list[Violation]:
    """`validate` on a dataset scanned already (a command that goes on to use it loads it once)."""
    data, broken = scan.dataset, scan.unreadable
    if data.root is None or not data.root.is_dir():
        return scan.problems
    violations = scan.problems + check_scoring(data, broken, questions)
    lo, hi = _graph_limits(data.manifest, min_children, max_children)
    personas = {p.id: p for p in data.personas}
    if not broken & {"graphs.jsonl", "sessions.jsonl"}:
        sessions_by_id = {s.id: s for s in data.sessions}
        for graph in data.graphs:
            violations += check_graph(graph, sessions_by_id, lo, hi)
    if not broken & {"sessions.jsonl", "personas.jsonl"}:
        violations += check_sessions(data.sessions, personas)
        messages = {m.id: (m.content, m.timestamp) for s in data.sessions for m in s.messages}
        violations += check_evidence(data.personas, messages)
        if "anchors.jsonl" not in broken:
            violations += check_anchors(data.anchors, data.sessions, personas)
        if data.images and "images.jsonl" not in broken:
            violations += check_images(data, rerender)
    if coherence_checked(scan, coherence):
        violations += check_coherence(data)
    if not broken & {"sessions.jsonl", "claims.jsonl", "qa.jsonl", "personas.jsonl"}:
        violations += check_filler(data)
    if broken:
        violations.append(
            Violation(
                "load",
                str(data.root),
                f"checks that need {', '.join(sorted(broken))} were skipped; they run once every line loads",
            )
        )
    if not violations:
        data.mark_checked()  # a command that validates then evaluates (keme demo) reports a verified run
    return violations


def check_filler(data: Dataset) -> list[Violation]:
    """Filler sessions state nothing a question depends on (keme.qa.haystack), and overlap none of the
    persona's own (check_sessions holds every pair apart)."""
    return [
        Violation("filler", where, what) for view in data.views() for where, what in filler_problems(view)
    ]


def check_images(data: Dataset, rerender: bool = False) -> list[Violation]:
    """Every screenshot exists with its hash, is shared by its message, and shows its facts.

    With `rerender`, each page is rendered again in chromium and must give the
    same facts and text (and, on the same chromium and fonts, the same PNG).
    """

    out = []
    messages = {m.id: m for s in data.sessions for m in s.messages}
    session_of = {m.id: s.id for s in data.sessions for m in s.messages}
    for record in data.images:
        # the model keeps paths under images/; a symlink can still point out, a FIFO block the hash
        problem = file_problem(data.root, record.path)
        if problem is not None:
            out.append(Violation("image", record.id, f"{record.path} {problem}"))
            continue
        if sha256_file(inside(data.root, record.path)) != record.sha256:
            out.append(
                Violation(
                    "image", record.id, f"{record.path} does not match its SHA-256 (changed after rendering)"
                )
            )
        message = messages.get(record.message_id)
        if (
            message is None
            or record.path not in message.images
            or session_of.get(record.message_id) != record.session_id
        ):
            out.append(
                Violation(
                    "image",
                    record.id,
                    f"message {record.message_id} of {record.session_id} does not share {record.path}",
                )
            )
        elif record.caption not in message.captions:
            out.append(Violation("image", record.id, "the message does not carry the image's caption"))
        for name, value in record.facts.items():
            if value not in record.dom_text:
                out.append(Violation("image", record.id, f"fact {name}={value!r} is not in the page text"))
    if rerender:
        out += _rerender(data)
    return out


def _rerender(data: Dataset) -> list[Violation]:

    out = []
    # the PNGs were rendered at this ratio
    scale = (data.manifest.config or {}).get("omni", {}).get("scale", 1.0)
    with Renderer(scale=scale) as renderer:
        for record in data.images:
            if record.template not in MODELS:  # an imported screenshot (MobileMem-Omni): no page to render
                continue
            shot = renderer.render(record.template, MODELS[record.template].model_validate(record.screen))
            if shot.facts != record.facts or shot.text != record.dom_text:
                out.append(
                    Violation("image", record.id, "re-rendered page shows other facts or text than recorded")
                )
            elif hashlib.sha256(shot.png).hexdigest() != record.sha256:
                out.append(
                    Violation(
                        "image",
                        record.id,
                        "re-rendered PNG differs (same text: another chromium or font build?)",
                    )
                )
    return out
