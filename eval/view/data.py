"""What the viewer shows, as plain JSON-ready dicts: one index for the whole dataset (and its runs), and per
persona its year, its sessions in pages, its questions and each system's retrievals of them.

The site loads these on demand, so a page needs only its persona's files. Ids are data, never paths: files
are named by position (persona 0, page 3), and the index lists personas and questions by position.
"""

from __future__ import annotations

import json
from collections import defaultdict
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from eval.failures import CATEGORIES, LABELS
from eval.report import leaderboard_cells
from keme.dataset.dataset import Dataset
from keme.dataset.io import text_lines
from keme.errors import KemeError

PAGE_SESSIONS = 20  # sessions per page file: a persona-year (~450 sessions) is ~23 pages
MAX_HITS = 50  # the run's depth at most


def _iso(value: Any) -> str | None:
    return value.isoformat(timespec="minutes") if value is not None else None


@dataclass
class Run:
    """One `keme eval` run directory, read for the viewer."""

    name: str
    summary: dict[str, Any]
    k: int
    systems: list[str]
    # system -> question id -> what the run did (hits, context, answer, verdicts, failure)
    questions: dict[str, dict[str, dict[str, Any]]] = field(default_factory=dict)


def _lines(path: Path) -> list[dict[str, Any]]:
    if not path.exists():
        return []
    out = []
    for number, line in enumerate(text_lines(path.read_text(encoding="utf-8")), start=1):
        if not line.strip():
            continue
        try:
            out.append(json.loads(line))
        except json.JSONDecodeError as exc:
            raise KemeError(f"{path}:{number}: not a JSON line ({exc.msg}): is the run complete?") from exc
    return out


def _shown(score: Any) -> Any:
    """A score for the site, to 4 places (the viewer shows 3): the log keeps every digit."""
    return round(score, 4) if isinstance(score, float) else score


def read_run(path: Path, dataset: Dataset) -> Run:
    """A run directory's summary, and per system and question its hits, context, answer and verdicts; a
    KemeError when it is no finished run, or a run of another dataset."""
    summary_path = path / "summary.json"
    run_path = path / "run.json"
    if not summary_path.exists() or not run_path.exists():
        raise KemeError(
            f"--run {path}: no summary.json and run.json there: is it a finished `keme eval` run?"
        )
    try:
        summary = json.loads(summary_path.read_text(encoding="utf-8"))
        identity = json.loads(run_path.read_text(encoding="utf-8"))
    except (json.JSONDecodeError, UnicodeDecodeError) as exc:
        raise KemeError(f"--run {path}: summary.json or run.json is not valid JSON ({exc})") from exc
    if identity.get("dataset_sha256") != dataset.content_sha256():
        raise KemeError(
            f"--run {path}: it scored another dataset (run.json's dataset_sha256 is not this dataset's "
            "content hash): pass the dataset the run was made on"
        )
    systems = list(summary.get("systems", {}))
    run = Run(path.name or str(path), summary, int(identity.get("k", summary.get("k", 10))), systems)
    results: dict[tuple[str, str], dict[str, Any]] = {
        (r["system"], r["question_id"]): r for r in _lines(path / "results.jsonl")
    }
    for system in systems:
        folder = path / system
        answers = {r["question_id"]: r for r in _lines(folder / "answer.jsonl")}
        per_question: dict[str, dict[str, Any]] = {}
        for record in _lines(folder / "retrieve.jsonl"):
            qid = record["question_id"]
            row = results.get((system, qid), {})
            hits = [
                [h.get("m", []), h.get("s", []), _shown(h.get("score"))]
                for h in record.get("hits", [])[:MAX_HITS]
            ]
            entry: dict[str, Any] = {"hits": hits, "failure": row.get("failure")}
            if "context_m" in record:
                entry["context_m"] = record["context_m"]
            if qid in answers:
                entry["answer"] = answers[qid].get("answer")
            if "verdicts" in row:
                entry["verdicts"] = row["verdicts"]
            per_question[qid] = entry
        run.questions[system] = per_question
    return run


def _attributes(persona: Any) -> list[dict[str, Any]]:
    return [
        {
            "key": attribute.key,
            "mutable": attribute.mutable,
            "versions": [
                {"value": v.value, "from": _iso(v.valid_from), "evidence": list(v.evidence)}
                for v in attribute.versions
            ],
        }
        for attribute in persona.attributes()
    ]


def group(records: Iterable[Any], key: str) -> dict[str, list[Any]]:
    """`records` by the value of their field `key`, in their order."""
    out: dict[str, list[Any]] = defaultdict(list)
    for record in records:
        out[getattr(record, key)].append(record)
    return out


def build(dataset: Dataset, runs: list[Run]) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """(the index, one bundle per persona: its year, session pages, questions and runs' records)."""
    personas = dataset.personas
    sessions_of = group(dataset.sessions, "persona_id")
    claims_of = group(dataset.claims, "message_id")
    images_of = group((i for i in dataset.images if i.message_id), "message_id")
    questions_of = group(dataset.qa, "persona_id")
    graphs = {g.persona_id: g for g in dataset.graphs}
    anchors_of = group(dataset.anchors, "persona_id")
    schedule_of = group(dataset.schedule, "persona_id")

    index_questions = []
    bundles = []
    for n, persona in enumerate(personas):
        sessions = sorted(sessions_of[persona.id], key=lambda s: s.start)
        pages: list[list[dict[str, Any]]] = []
        listing = []
        where: dict[str, int] = {}  # message id -> its session's position in `listing`
        for i, session in enumerate(sessions):
            where |= dict.fromkeys((m.id for m in session.messages), i)
            page = i // PAGE_SESSIONS
            if page == len(pages):
                pages.append([])
            pages[page].append(
                {
                    "id": session.id,
                    "start": _iso(session.start),
                    "end": _iso(session.end),
                    "pattern": session.pattern,
                    "event": session.event_id,
                    "anchor": session.anchor_id,
                    "language": session.language,
                    "messages": [
                        {
                            "id": m.id,
                            "role": m.role,
                            "app": m.app,
                            "speaker": m.speaker,
                            "text": m.content,
                            "at": _iso(m.timestamp),
                            "captions": list(m.captions),
                            "images": [img.path for img in images_of.get(m.id, [])],
                            "claims": [
                                {"subject": c.subject, "predicate": c.predicate, "value": c.value}
                                for c in claims_of.get(m.id, [])
                            ],
                        }
                        for m in session.messages
                    ],
                }
            )
            listing.append(
                {
                    "id": session.id,
                    "start": _iso(session.start),
                    "pattern": session.pattern,
                    "event": session.event_id,
                    "anchor": session.anchor_id,
                    "messages": len(session.messages),
                    "page": page,
                    "first": session.messages[0].content[:120] if session.messages else "",
                }
            )
        graph = graphs.get(persona.id)
        events = [
            {
                "id": e.id,
                "parent": e.parent_id,
                "depth": e.depth,
                "kind": e.kind,
                "title": e.title,
                "start": _iso(e.start),
                "end": _iso(e.end),
                "state": e.state,
                "anchor": e.anchor_id,
                "session": e.session_id,
            }
            for e in (graph.events if graph else [])
        ]
        year = {
            "id": persona.id,
            "name": persona.name,
            "language": persona.language,
            "country": persona.country,
            "start": _iso(persona.start),
            "end": _iso(persona.end),
            "attributes": _attributes(persona),
            "events": events,
            "anchors": [
                {"id": a.id, "app": a.app, "app_name": a.app_name, "at": _iso(a.timestamp)}
                for a in anchors_of[persona.id]
            ],
            "schedule": [
                {
                    "start": _iso(b.start),
                    "end": _iso(b.end),
                    "place": b.place,
                    "city": b.city,
                    "activity": b.activity,
                    "companions": list(b.companions),
                    "event": b.event_id,
                }
                for b in schedule_of[persona.id]
            ],
            "sessions": listing,
            "msg": where,
        }
        bundles.append({"year": year, "pages": pages, "questions": [], "runs": []})

    for n, persona in enumerate(personas):
        details = []
        for item in sorted(questions_of[persona.id], key=lambda q: q.id):
            details.append(
                {
                    "id": item.id,
                    "question": item.question,
                    "answer": item.answer,
                    "spec": item.spec.model_dump(mode="json", exclude_defaults=True),
                    "type": item.type,
                    "subtype": item.subtype,
                    "format": item.format,
                    "options": list(item.options),
                    "language": item.language,
                    "hops": item.hops,
                    "difficulty": item.difficulty,
                    "asked_at": _iso(item.asked_at),
                    "evidence": list(item.evidence),
                    "also": {k: list(v) for k, v in item.also_supported_by.items()},
                    "proof": item.proof.model_dump(mode="json"),
                }
            )
            index_questions.append(
                [
                    n,
                    item.id,
                    item.type,
                    item.language,
                    item.hops,
                    item.format,
                    item.difficulty,
                    item.question,
                    item.answer,
                ]
            )
        bundles[n]["questions"] = details

    index_runs = []
    for r, run in enumerate(runs):
        outcomes: dict[str, dict[str, list[Any]]] = {}
        for system in run.systems:
            outcomes[system] = {
                qid: [_correct(entry), entry.get("failure")]
                for qid, entry in run.questions.get(system, {}).items()
            }
        index_runs.append(
            {
                "name": run.name,
                "k": run.k,
                "systems": run.systems,
                "summary": _leaderboard(run.summary),
                "outcomes": outcomes,
            }
        )
        for n, persona in enumerate(personas):
            ids = {q.id for q in questions_of[persona.id]}
            bundles[n]["runs"].append(
                {
                    system: {qid: entry for qid, entry in run.questions.get(system, {}).items() if qid in ids}
                    for system in run.systems
                }
            )

    index = {
        "name": dataset.manifest.name,
        "personas": [
            {
                "n": n,
                "id": p.id,
                "name": p.name,
                "language": p.language,
                "country": p.country,
                "start": _iso(p.start),
                "end": _iso(p.end),
                "sessions": len(sessions_of[p.id]),
                "messages": sum(len(s.messages) for s in sessions_of[p.id]),
                "questions": len(questions_of[p.id]),
                "pages": len(bundles[n]["pages"]),
            }
            for n, p in enumerate(personas)
        ],
        "questions": index_questions,
        "runs": index_runs,
        "failure_categories": list(CATEGORIES),
        "failure_labels": dict(LABELS),
    }
    return index, bundles


def _correct(entry: dict[str, Any]) -> bool | None:
    verdicts = entry.get("verdicts") or {}
    for judge in ("llm", "rule"):
        if judge in verdicts:
            return bool(verdicts[judge])
    return None


def _leaderboard(summary: dict[str, Any]) -> dict[str, Any]:
    """The leaderboard's rows as the report has them (ranked, with intervals) and each system's failures."""
    columns, rows = leaderboard_cells(summary)
    failures = {name: m.get("failures", {}) for name, m in summary.get("systems", {}).items()}
    return {"columns": columns, "rows": rows, "failures": failures, "note": summary.get("note", "")}
