"""The official MobileMem text format (`mobilemem_data.json`, as MemBase's loader reads it), both ways.

A file is a list of samples `{person, sessions, graphs, question_type_toolbook}`; a session is
`{id, event_id, messages, side_note, created_at}`; a message `{id, name, role, content, timestamp,
side_note, created_at, metadata}` (an app record is `role: system`, `name` = the app); the questions sit
under `question_type_toolbook.question_types[].qa_pairs[]`, each with `golden_answers`, `question_form`
(single_choice | multiple_choice | open_ended) and `source_evidences[{id, ...}]`.

Export writes every field MemBase's loader reads (it must load the file unchanged) and keeps what the
format has no field for under a `keme` key of the sample, the message metadata and the QA pair, which
MemBase ignores and the importer restores: so keme -> MobileMem -> keme keeps every question, answer,
answer spec, evidence id and time. The event graph goes out as the format's recursive graphs (one
graph per parent event). Claims, screenshots and versioned persona attributes have no place in the
text format: a message's claim ids and image paths go out in its metadata for reading, the attributes
as the person's current values, and none of them comes back on import (there is no claim ledger or
image file for them to point to).

Import follows MemBase's conventions where the format is silent: a question of a file that is not
keme's is asked at the last session's end + 7 days. Evidence ids that name a message become message
evidence; ids that name a session become session evidence (counted); the rest are counted.
"""

from __future__ import annotations

import json
import re
from collections import defaultdict
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, StrictFloat, StrictInt, ValidationError

from eval.importers.common import (
    Notes,
    Text,
    arrange,
    import_file,
    imported_session,
    infer_spec,
    language_of,
    refuse_broken,
    source_date,
)
from eval.importers.export_io import refuse_oversized, write_json_array
from keme.dataset import Dataset
from keme.dataset.findings import empty_gold
from keme.dataset.lock import target_lock
from keme.errors import KemeError
from keme.models import AnswerSpec, Message, Persona, QAItem, Quote, Session
from keme.models.proof import ImportedArgs, ImportedProof
from keme.models.qa import QA_TYPES

FORMS = {"open": "open_ended", "single_choice": "single_choice", "multiple_choice": "multiple_choice"}
ASKED_AFTER = timedelta(days=7)  # MemBase asks every question a week after the last session
STEP = timedelta(seconds=30)  # between messages that share a timestamp
# the field's names for our question types (lowercased, '-' and ' ' read as '_')
SYNONYMS = {
    "single_session": "single_hop",
    "single": "single_hop",
    "multi_session": "multi_hop",
    "multihop": "multi_hop",
    "temporal": "temporal_reasoning",
    "time_reasoning": "temporal_reasoning",
    "update": "knowledge_update",
    "preference": "implicit_preference",
    "summary": "summarization",
    "abstain": "abstention",
    "visual": "visual_reasoning",
    "image": "visual_reasoning",
}
_OPTION = re.compile(r"^\s*\(?([A-H])[.)、:：）]\s*(.+?)\s*$")
_LETTERS = re.compile(r"^\s*([A-H](?:\s*[,，、/ ]?\s*[A-H])*)\s*[.)]?\s*$")


def question_type(name: str) -> str | None:
    """Our type for a MobileMem question type name ('Multi-Hop', 'temporal reasoning'), or None."""
    key = re.sub(r"[\s\-]+", "_", name.strip().lower())
    key = SYNONYMS.get(key, key)
    known = (*QA_TYPES, "visual_reasoning", "open_domain")
    return key if key in known else None


# ---------------------------------------------------------------------------------------------- export
def _iso(when: datetime) -> str:
    return when.isoformat(sep=" ", timespec="seconds")


def _name(message: Message, persona: Persona) -> str:
    if message.speaker:
        return message.speaker
    if message.role == "system":
        return message.app or "system"
    return persona.name if message.role == "user" else "assistant"


def _message_record(message: Message, persona: Persona) -> dict[str, Any]:
    metadata: dict[str, Any] = {}
    if message.app:
        metadata["app"] = message.app
    kept = {
        "speaker": message.speaker,
        "images": message.images,
        "captions": message.captions,
        "claims": message.claims,
        "smalltalk": message.smalltalk or None,
    }
    keme = {k: v for k, v in kept.items() if v}
    if keme:
        metadata["keme"] = keme
    return {
        "id": message.id,
        "name": _name(message, persona),
        "role": message.role,
        "content": message.content,
        "timestamp": _iso(message.timestamp),
        "side_note": "",
        "created_at": _iso(message.timestamp),
        "metadata": metadata,
    }


def _graphs(view) -> list[dict[str, Any]]:
    """The event graph as the format's recursive graphs: the events that share a parent form one graph."""
    by_parent: dict[str | None, list] = defaultdict(list)
    for event in view.graph.events:
        by_parent[event.parent_id].append(event)
    graphs = []
    for parent, events in sorted(by_parent.items(), key=lambda kv: (kv[0] is not None, kv[0] or "")):
        ids = {e.id for e in events}
        edges = [e for e in view.graph.edges if e.source in ids and e.target in ids]
        graphs.append(
            {
                "id": f"{view.persona.id}:graph:{parent or 'root'}",
                "parent_id": parent,
                "events": [
                    {
                        "id": e.id,
                        "title": e.title,
                        "started_at": _iso(e.start),
                        "ended_at": _iso(e.end),
                        "summary": e.summary,
                        "requirements": e.requirements,
                        "state": e.state,
                    }
                    for e in sorted(events, key=lambda e: (e.start, e.id))
                ],
                "edges": [{"from_event": e.source, "to_event": e.target} for e in edges],
                "state": "realized" if all(e.state == "realized" for e in events) else "expanded",
            }
        )
    return graphs


def _shown_question(item: QAItem) -> str:
    """A choice item's options belong to its question: MemBase shows the question text alone."""
    if not item.options:
        return item.question
    letters = "ABCDEFGH"
    return item.question + "\n" + "\n".join(f"{letters[i]}. {o}" for i, o in enumerate(item.options))


def _qa_record(item: QAItem, session_of: dict[str, str], text_of: dict[str, str]) -> dict[str, Any]:
    return {
        "id": item.id,
        "question": _shown_question(item),
        "question_type": item.type,
        "question_form": FORMS[item.format],
        "golden_answers": [item.answer],
        "difficulty": item.difficulty,
        "topic": [item.subtype],
        "num_hops": item.hops,
        "num_sub_questions": len(item.sub_questions),
        "effective_timestamp": _iso(item.asked_at),
        "source_evidences": [
            {"id": m, "session_id": session_of[m], "content": text_of[m]} for m in item.evidence
        ],
        "is_consumed": False,
        "side_note": "",
        "created_at": _iso(item.asked_at),
        "keme": item.model_dump(
            mode="json",
            include={
                "question",
                "spec",
                "subtype",
                "also_supported_by",
                "evidence_sessions",
                "asked_at",
                "language",
                "options",
                "format",
                "sub_questions",
                "source_question_id",
            },
        ),
    }


def _person(view) -> dict[str, Any]:
    persona = view.persona
    current = {
        attr.key: value for attr in persona.attributes() if (value := attr.value_at(persona.end)) is not None
    }
    return {
        "id": persona.id,
        "name": persona.name,
        "language": persona.language,
        "country": persona.country,
        "attributes": current,
    }


def to_mobilemem(data: Dataset) -> tuple[list[dict[str, Any]], dict[str, Any]]:
    """The dataset's samples in the MobileMem text format, and what the export had to change or drop."""
    samples = []
    later = 0  # questions asked before the last session: MemBase asks them at its end + 7 days
    for view in data.views():
        sessions = [s for s in view.sessions if s.messages]
        session_of = {m.id: s.id for s in sessions for m in s.messages}
        text_of = {m.id: m.content for s in sessions for m in s.messages}
        if _source(view.persona):
            samples.append(_as_published(view, sessions, session_of, text_of))
            later += sum(bool(sessions) and q.asked_at < sessions[-1].end for q in view.qa)
            continue
        by_type: dict[str, list[dict[str, Any]]] = defaultdict(list)
        for item in sorted(view.qa, key=lambda q: (q.asked_at, q.id)):
            by_type[item.type].append(_qa_record(item, session_of, text_of))
            later += bool(sessions) and item.asked_at < sessions[-1].end
        samples.append(
            {
                "person": _person(view),
                "sessions": [
                    {
                        "id": s.id,
                        "event_id": s.event_id,
                        "messages": [_message_record(m, view.persona) for m in s.messages],
                        "side_note": "",
                        "created_at": _iso(s.start),
                    }
                    for s in sessions
                ],
                "graphs": _graphs(view),
                "question_type_toolbook": {
                    "question_types": [
                        {"name": name, "qa_pairs": pairs} for name, pairs in sorted(by_type.items())
                    ]
                },
                "keme": {
                    "persona": view.persona.model_dump(mode="json", include={"start", "end"}),
                    "sessions": {
                        s.id: s.model_dump(mode="json", include={"language", "pattern", "author", "filler"})
                        for s in sessions
                    },
                },
            }
        )
    stats = {
        "samples": len(samples),
        "sessions": sum(len(s["sessions"]) for s in samples),
        "qa": sum(len(t["qa_pairs"]) for s in samples for t in s["question_type_toolbook"]["question_types"]),
        "asked_before_the_end": later,
        "claims_not_written": len(data.claims),
        "images_not_written": len(data.images),
    }
    return samples, stats


def _source(persona: Persona) -> dict[str, Any]:
    """What a MobileMem import kept verbatim for this persona ({} for any other)."""
    source = persona.source or {}
    return source if source.get("format") == "mobilemem" else {}


def _as_published(
    view: Any, sessions: list[Session], session_of: dict[str, str], text_of: dict[str, str]
) -> dict[str, Any]:
    """An imported sample as the release wrote it: what keme keeps verbatim, with keme's values wherever
    keme holds one (a message's text and time, a question, its gold, form and evidence)."""
    source = _source(view.persona)
    kept_sessions = source.get("sessions") or {}
    kept_messages = source.get("messages") or {}
    out_sessions = []
    for session in sorted(sessions, key=lambda s: (kept_sessions.get(s.id) or {}).get("_position", 0)):
        record = {k: v for k, v in (kept_sessions.get(session.id) or {}).items() if k != "_position"}
        record.setdefault("id", session.id)
        record.setdefault("event_id", session.event_id)
        record["messages"] = [
            _published_message(m, view.persona, kept_messages.get(m.id)) for m in session.messages
        ]
        out_sessions.append(record)
    by_id = {q.id: q for q in view.qa}
    placed: set[str] = set()
    types = []
    for kept in source.get("types") or []:
        ids = [i for i in kept.get("_items", []) if i in by_id]
        placed.update(ids)
        pairs = [_published_qa(by_id[i], session_of, text_of) for i in ids]
        types.append({**{k: v for k, v in kept.items() if k != "_items"}, "qa_pairs": pairs})
    rest = [q for q in view.qa if q.id not in placed]  # questions keme added
    for name, group in sorted(_grouped(rest).items()):
        types.append({"name": name, "qa_pairs": [_qa_record(q, session_of, text_of) for q in group]})
    sample = {
        "person": source.get("person"),
        "sessions": out_sessions,
        "graphs": source.get("graphs") if source.get("graphs") is not None else [],
        "question_type_toolbook": {**(source.get("toolbook") or {}), "question_types": types},
    }
    return sample | (source.get("sample") or {})


def _grouped(items: list[QAItem]) -> dict[str, list[QAItem]]:
    groups: dict[str, list[QAItem]] = defaultdict(list)
    for item in sorted(items, key=lambda q: (q.asked_at, q.id)):
        groups[item.type].append(item)
    return groups


def _published_message(message: Message, persona: Persona, kept: dict[str, Any] | None) -> dict[str, Any]:
    if not kept:
        return _message_record(message, persona)
    record = dict(kept)
    record["content"] = message.content
    written = record.get("timestamp")
    if _at(written) != message.timestamp:
        record["timestamp"] = _iso(message.timestamp)
    if record.get("role") != message.role:
        record["role"] = message.role
    return record


def _published_qa(item: QAItem, session_of: dict[str, str], text_of: dict[str, str]) -> dict[str, Any]:
    args = item.proof.args if isinstance(item.proof.args, ImportedArgs) else None
    raw = ((args.source_fields or {}) if args else {}).get("record")
    if not isinstance(raw, dict):
        return _qa_record(item, session_of, text_of)
    record = dict(raw)
    ours = _qa_record(item, session_of, text_of)
    written_form = {"open_ended": "open", "open": "open"}.get(
        raw.get("question_form"), raw.get("question_form")
    )
    if written_form != item.format:
        record["question_form"] = ours["question_form"]
    text, options = _choices(raw.get("question", "")) if item.format != "open" else (raw.get("question"), [])
    if (text, options) != (item.question, item.options):
        record["question"] = ours["question"]
    answers = raw.get("golden_answers")
    first = next((str(a) for a in answers if str(a).strip()), "") if isinstance(answers, list) else None
    if first != item.answer:
        record["golden_answers"] = ours["golden_answers"]
    if raw.get("difficulty", "medium") != item.difficulty:
        record["difficulty"] = item.difficulty
    if raw.get("num_hops") != item.hops and not (raw.get("num_hops") is None and item.hops == 1):
        record["num_hops"] = item.hops
    pieces = raw.get("source_evidences") if isinstance(raw.get("source_evidences"), list) else []
    named = [str(p.get("id") if isinstance(p, dict) else p) for p in pieces]
    if [n for n in named if n in session_of] != list(item.evidence):
        record["source_evidences"] = ours["source_evidences"]
    return record


def export_mobilemem(data: Dataset, out: Path) -> dict[str, Any]:
    """Write `data` as a MobileMem text file (`mobilemem_data.json`) that MemBase's loader reads unchanged."""
    if out.is_dir():
        raise KemeError(
            f"--out {out} is a directory; give the JSON file to write, e.g. {out / 'mobilemem.json'}"
        )
    if data.root is not None and data.root.resolve() in out.resolve().parents:
        raise KemeError(f"--out {out} is inside the dataset {data.root}; write the export elsewhere")
    refuse_broken(data)
    refuse_oversized(data)
    samples, stats = to_mobilemem(data)
    try:
        with target_lock(out, "keme export mobilemem"):  # a second export to the same file is refused
            write_json_array(out, samples, indent=1)
    except OSError as exc:
        raise KemeError(f"{out}: cannot write ({exc.strerror or exc})") from exc
    return stats


# ---------------------------------------------------------------------------------------------- import
class RawMessage(BaseModel):
    model_config = ConfigDict(extra="ignore")

    id: Text | StrictInt
    name: Text = ""
    role: Text
    content: Text
    timestamp: Text
    metadata: dict[str, Any] = {}


class RawSession(BaseModel):
    model_config = ConfigDict(extra="ignore")

    id: Text | StrictInt
    event_id: Text | StrictInt | None = None
    messages: list[Any]
    created_at: Text | None = None


class RawQA(BaseModel):
    model_config = ConfigDict(extra="ignore")

    id: Text | StrictInt
    question: Text
    question_type: Text = ""
    question_form: Text = "open_ended"
    golden_answers: list[Text | StrictInt | StrictFloat]
    difficulty: Text = "medium"
    num_hops: StrictInt | None = None
    source_evidences: list[Any] = []
    keme: dict[str, Any] | None = None


def parse_time(text: str) -> datetime:
    """ISO 8601 as MemBase's models require ('2024-08-25 12:01:42', '2024-08-25T12:01:42'); an offset is
    dropped (the replay clock is naive local time)."""
    return datetime.fromisoformat(text.strip().replace("Z", "+00:00")).replace(tzinfo=None)


def _choices(question: str) -> tuple[str, list[str]]:
    """A choice question's text and options, when its options are written as lines 'A. ...'."""
    lines = question.splitlines()
    options = [(i, m.group(1), m.group(2)) for i, line in enumerate(lines) if (m := _OPTION.match(line))]
    if len(options) < 2 or [o[1] for o in options] != list("ABCDEFGH"[: len(options)]):
        return question, []
    return "\n".join(lines[: options[0][0]]).strip() or question, [o[2] for o in options]


def _messages(
    raw: RawSession, where: str, used: set[str], notes: Notes, own: bool
) -> list[tuple[str, Message]]:
    """(source id, message) of a session's usable messages."""
    out = []
    for position, record in enumerate(raw.messages):
        place = f"{where}, message {position + 1}"
        message = notes.parse(RawMessage, record, "messages_skipped", place)
        if message is None:
            continue
        when = source_date(message.timestamp, f"{place}, timestamp", notes, parse_time, "ISO 8601")
        if when is None:
            notes.count("messages_skipped")
            continue
        if message.role not in ("user", "assistant", "system"):
            notes.problem("messages_unknown_role", place, f"role {message.role[:20]!r}; read as assistant")
        role = message.role if message.role in ("user", "assistant", "system") else "assistant"
        keme = message.metadata.get("keme") if own and isinstance(message.metadata.get("keme"), dict) else {}
        app = message.metadata.get("app") if isinstance(message.metadata.get("app"), str) else None
        if role == "system" and not app:
            app = message.name or None
        speaker = keme.get("speaker") if own else (message.name or None if role != "system" else None)
        raw_id = str(message.id)
        try:
            built = Message(
                id=notes.unique_id(raw_id, used, "duplicate_message_ids", place),
                role=role,
                app=app if role == "system" else None,
                speaker=speaker,
                content=message.content,
                timestamp=when,
                captions=keme.get("captions", []),
                smalltalk=bool(keme.get("smalltalk", False)),
            )
        except ValidationError as exc:
            notes.problem("messages_skipped", place, f"metadata.keme does not fit: {exc.errors()[0]['msg']}")
            continue
        out.append((raw_id, built))
    # MemBase requires time order within a session; equal times keep their order, a step apart
    for (_, before), (_, after) in zip(out, out[1:]):
        if after.timestamp <= before.timestamp:
            notes.count("message_times_moved")
            after.timestamp = before.timestamp + STEP
    return out


def _spec(qa: RawQA, answer: str, form: str, options: list[str], year: int, kind: str) -> AnswerSpec:
    if kind == "abstention":
        return AnswerSpec(kind="abstain", value="abstain")
    if form != "open" and (m := _LETTERS.match(answer)):
        letters = re.findall(r"[A-H]", m.group(1))
        if form == "single_choice":
            return AnswerSpec(kind="choice", value=letters[0])
        return AnswerSpec(kind="set", items=letters)
    return infer_spec(answer, year)


def _question(
    record: Any,
    where: str,
    pid: str,
    asked: datetime,
    found: dict[str, tuple[str, str]],
    sessions: dict[str, str],
    used: set[str],
    notes: Notes,
) -> QAItem | None:
    qa = notes.parse(RawQA, record, "qa_skipped", where)
    if qa is None:
        return None
    # an empty gold imports flagged (keme.dataset.findings) rather than vanishing from the count
    # (a NaN or blank among the alternatives is not the gold when a real one is there)
    answers = [str(a) for a in qa.golden_answers if not empty_gold(str(a))]
    if not answers:
        said = [str(a) for a in qa.golden_answers][:1]
        notes.problem("empty_golds", where, "golden_answers is empty; imported flagged (empty_gold)")
        answers = said or [""]
    kind = question_type(qa.question_type)
    if kind is None:
        notes.problem("unknown_question_type", where, f"{qa.question_type[:40]!r}; imported as single_hop")
    form = {"open_ended": "open", "open": "open"}.get(qa.question_form, qa.question_form)
    if form not in FORMS:
        notes.problem("unknown_question_form", where, f"{qa.question_form[:30]!r}; imported as open")
        form = "open"
    text, options = _choices(qa.question) if form != "open" else (qa.question, [])
    messages, evidence_sessions, unresolved = [], [], []
    for piece in qa.source_evidences:
        raw = piece.get("id") if isinstance(piece, dict) else piece
        raw = str(raw) if isinstance(raw, (str, int)) and not isinstance(raw, bool) else None
        if raw in found:
            messages.append(found[raw][0])
            evidence_sessions.append(found[raw][1])
        elif raw in sessions:
            evidence_sessions.append(sessions[raw])
            notes.count("evidence_session_level")
        else:
            notes.count("evidence_unresolved")
            unresolved.append(json.dumps(piece, ensure_ascii=False)[:80] if raw is None else raw)
    notes.count("evidence_resolved", len(messages))
    qid = notes.unique_id(str(qa.id), used, "duplicate_question_ids", where)
    keme = qa.keme or {}
    fields: dict[str, Any] = {
        "question": text,
        "options": options,
        "format": form,
        "asked_at": asked,
        "evidence_sessions": list(dict.fromkeys(evidence_sessions)),
        "subtype": f"mobilemem.{qa.question_type or 'unknown'}",
        "language": language_of([qa.question]),
    }
    type_ = kind or "single_hop"
    fields["spec"] = _spec(qa, answers[0], form, options, asked.year, type_)
    if len(answers) > 1 and fields["spec"].kind not in ("choice", "set", "abstain"):
        fields["spec"].aliases = list(dict.fromkeys([*fields["spec"].aliases, *answers[1:]]))
    if keme:  # a file keme wrote: what the format has no field for
        fields.update({k: v for k, v in keme.items() if k in QAItem.model_fields})
    args = ImportedArgs(
        source="mobilemem",
        question_type=qa.question_type or None,
        source_question_id=notes.renamed.get(qid),
        unresolved_evidence=unresolved or None,
        # the pair as written (topic, timestamps, every golden answer, ...): the export gives it back
        source_fields=None if keme else {"record": record},
    )
    try:
        return QAItem(
            id=qid,
            persona_id=pid,
            answer=answers[0],
            type=type_,
            evidence=list(dict.fromkeys(messages)),
            hops=qa.num_hops if qa.num_hops is not None and qa.num_hops >= 0 else 1,
            difficulty=qa.difficulty if qa.difficulty in ("easy", "medium", "hard") else "medium",
            node=pid,
            proof=ImportedProof(op="imported", quotes=[Quote(message_id=m) for m in messages], args=args),
            **fields,
        )
    except ValidationError as exc:
        notes.problem("qa_skipped", where, f"keme fields do not fit: {exc.errors()[0]['msg']}")
        return None


def _sample(
    record: Any, index: int, used: dict[str, set[str]], notes: Notes
) -> tuple[Persona, list[Session], list[QAItem]] | None:
    where = f"sample {index + 1}"
    if not isinstance(record, dict) or not isinstance(record.get("person"), dict):
        notes.problem("samples_skipped", where, "expected an object with a `person` object")
        return None
    person = record["person"]
    raw_pid = person.get("id")
    if isinstance(raw_pid, bool) or not isinstance(raw_pid, (str, int)) or raw_pid == "":
        notes.problem("person_ids_replaced", where, f"person.id missing; named person-{index}")
        raw_pid = f"person-{index}"
    pid = notes.unique_id(str(raw_pid), used["persona"], "duplicate_person_ids", where)
    where = f"sample {index + 1} ({pid})"
    own = isinstance(record.get("keme"), dict)
    keme = record.get("keme") if own else {}
    raw_sessions = record.get("sessions") if isinstance(record.get("sessions"), list) else []
    planned: list[tuple[str, RawSession, list[tuple[str, Message]]]] = []
    for position, raw in enumerate(raw_sessions):
        place = f"{where}, session {position + 1}"
        session = notes.parse(RawSession, raw, "sessions_skipped", place)
        if session is None:
            continue
        messages = _messages(session, place, used["message"], notes, own)
        if not messages:
            notes.count("empty_sessions")
            continue
        sid = notes.unique_id(str(session.id), used["session"], "duplicate_session_ids", place)
        planned.append((sid, session, messages))
    if not planned:
        notes.count("samples_without_sessions")
        return None
    starts = [m[0][1].timestamp for _, _, m in planned]
    lengths = [len(m) for _, _, m in planned]
    found: dict[str, tuple[str, str]] = {}
    by_source: dict[str, str] = {}
    sessions = []
    for i, start in arrange(starts, lengths, STEP, timedelta(minutes=1), notes):
        sid, raw, messages = planned[i]
        shift = start - messages[0][1].timestamp
        built = [m.model_copy(update={"timestamp": m.timestamp + shift}) for _, m in messages]
        for (source, _), message in zip(messages, built):
            found.setdefault(source, (message.id, sid))
        by_source.setdefault(str(raw.id), sid)
        session = imported_session(sid, pid, "mobilemem", built)
        if raw.event_id is not None:
            session.event_id = str(raw.event_id)
        extra = (keme.get("sessions") or {}).get(sid) if own else None
        if isinstance(extra, dict):
            try:
                session = Session.model_validate({**session.model_dump(), **extra})
            except ValidationError:
                notes.count("session_extras_ignored")
        sessions.append(session)
    sessions.sort(key=lambda s: (s.start, s.id))
    asked = sessions[-1].end + ASKED_AFTER
    toolbook = record.get("question_type_toolbook")
    types = toolbook.get("question_types") if isinstance(toolbook, dict) else None
    items = []
    grouped: list[list[str]] = []  # the question ids under each question type, as the file groups them
    for t, qtype in enumerate(types if isinstance(types, list) else []):
        pairs = qtype.get("qa_pairs") if isinstance(qtype, dict) else None
        grouped.append([])
        for q, pair in enumerate(pairs if isinstance(pairs, list) else []):
            place = f"{where}, question type {t + 1}, qa pair {q + 1}"
            item = _question(pair, place, pid, asked, found, by_source, used["qa"], notes)
            if item is not None:
                items.append(item)
                grouped[-1].append(item.id)
    graphs = record.get("graphs")
    if isinstance(graphs, list) and graphs:
        notes.count("graphs_kept_verbatim", len(graphs))
    source = (
        None if own else _kept(record, planned, types if isinstance(types, list) else [], toolbook, grouped)
    )
    span = (keme.get("persona") or {}) if own else {}
    language = person.get("language") if person.get("language") in ("en", "zh") else None
    persona = Persona(
        id=pid,
        name=str(person.get("name") or "user"),
        language=language or language_of([m.content for s in sessions for m in s.messages]),
        country=str(person.get("country") or "US"),
        start=_at(span.get("start")) or sessions[0].start,
        end=max(_at(span.get("end")) or asked, max(q.asked_at for q in items) if items else asked),
        dimensions={},
        source=source,
    )
    return persona, sessions, items


SAMPLE_KEYS = ("person", "sessions", "graphs", "question_type_toolbook", "keme")


def _kept(
    record: dict[str, Any],
    planned: list[tuple[str, Any, list]],
    types: list[Any],
    toolbook: Any,
    grouped: list[list[str]],
) -> dict[str, Any]:
    """What a sample of the release holds that keme has no model for, verbatim: the person's profile, the
    graphs, each session's and message's own fields (their content aside), the question types' order."""
    raw_sessions = record.get("sessions") or []
    by_id = {str(r.get("id")): r for r in raw_sessions if isinstance(r, dict)}
    sessions, messages = {}, {}
    for sid, session, built in planned:
        raw = by_id.get(str(session.id)) or {}
        sessions[sid] = {k: v for k, v in raw.items() if k != "messages"}
        sessions[sid]["_position"] = raw_sessions.index(raw) if raw in raw_sessions else len(sessions)
        raw_messages = [m for m in raw.get("messages") or [] if isinstance(m, dict)]
        by_message = {str(m.get("id")): m for m in raw_messages}
        for source_id, message in built:
            kept = by_message.get(source_id)
            if kept is not None:
                messages[message.id] = {k: v for k, v in kept.items() if k != "content"}
    return {
        "format": "mobilemem",
        "person": record.get("person"),
        "graphs": record.get("graphs"),
        "sample": {k: v for k, v in record.items() if k not in SAMPLE_KEYS},
        "toolbook": {k: v for k, v in toolbook.items() if k != "question_types"}
        if isinstance(toolbook, dict)
        else {},
        "types": [
            {
                **({k: v for k, v in t.items() if k != "qa_pairs"} if isinstance(t, dict) else {}),
                "_items": ids,
            }
            for t, ids in zip(types, grouped)
        ],
        "sessions": sessions,
        "messages": messages,
    }


def _at(raw: Any) -> datetime | None:
    try:
        return parse_time(raw) if isinstance(raw, str) else None
    except ValueError:
        return None


def import_mobilemem(path: Path, out: Path, force: bool = False) -> dict[str, Any]:
    """Import a MobileMem text file into the dataset directory `out` (new or empty; an existing dataset
    only with `force`)."""
    used: dict[str, set[str]] = defaultdict(set)
    return import_file(
        path,
        out,
        "mobilemem",
        lambda record, index, notes: _sample(record, index, used, notes),
        "no sample has a session with messages",
        force,
    )
