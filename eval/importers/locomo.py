"""LoCoMo (`locomo10.json`) to and from a keme dataset.

Each sample becomes a persona (speaker_a) whose sessions are the sample's
dialogue sessions; speaker_a's turns are `user`, speaker_b's `assistant`, and
each message keeps its speaker name (systems see "name: text", eval.replay) and a
shared photo's `blip_caption` as its caption. Turn ids `D<session>:<turn>` become
message ids `<sample_id>:D<s>:<t>`. QA categories map as 1 multi-hop, 2
temporal, 3 open-domain, 4 single-hop, 5 adversarial (no `answer`: the gold is
to abstain; `adversarial_answer` is kept in the proof args). Evidence lists are
normalised: split on ';', ',' and spaces, leading zeros dropped, 'D8:6' forms
only; ids that still do not resolve are counted, never fatal.

Every record is checked against the small models below (`Turn`, `QARecord`);
one that does not fit is skipped and noted with its position. A sample id
that is not a safe file name is renamed (slug + hash; the original is kept in
`stats.renamed_ids` and each question's proof args); a repeated `dia_id` keeps
the first turn for evidence and gives the later one a `#<n>` id; sessions are
put in time order and moved apart when their dates would make them overlap.
"""

from __future__ import annotations

import json
import re
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, StrictFloat, StrictInt

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
from keme.dataset import Dataset
from keme.dataset.io import atomic_write_text
from keme.errors import KemeError
from keme.models import AnswerSpec, Message, Persona, QAItem, Quote, Session
from keme.models.proof import ImportedArgs, ImportedProof

CATEGORIES = {1: "multi_hop", 2: "temporal_reasoning", 3: "open_domain", 4: "single_hop", 5: "adversarial"}
_TURN = re.compile(r"D\s*0*(\d{1,6})\s*:\s*0*(\d{1,6})(?!\d)", re.I)
_SESSION_KEY = re.compile(r"^session_([0-9]+)$")
STEP = timedelta(seconds=30)  # between the turns of a session (LoCoMo has one date per session)


class Turn(BaseModel):
    """One dialogue turn of a LoCoMo session."""

    model_config = ConfigDict(extra="ignore")

    speaker: Text
    text: Text = ""
    dia_id: Text | None = None
    blip_caption: Text | None = None


class QARecord(BaseModel):
    """One question of a LoCoMo sample."""

    model_config = ConfigDict(extra="ignore")

    question: Text
    answer: Text | StrictInt | StrictFloat | None = None
    adversarial_answer: Text | StrictInt | StrictFloat | None = None
    evidence: Any = None
    category: StrictInt


def parse_when(text: str) -> datetime:
    """'1:56 pm on 8 May, 2023' (LoCoMo's session_N_date_time)."""
    cleaned = re.sub(r"\s+", " ", text.strip())
    for pattern in ("%I:%M %p on %d %B, %Y", "%I:%M %p on %d %b, %Y", "%I:%M %p on %B %d, %Y"):
        try:
            return datetime.strptime(cleaned.upper().replace(" ON ", " on "), pattern)
        except ValueError:
            continue
    raise ValueError(f"unrecognised LoCoMo date {text!r}")


def normalize_evidence(raw: Any) -> tuple[list[str], int]:
    """Turn ids from a messy evidence list; returns (ids 'D<s>:<t>', number of pieces that were not ids)."""
    pieces = raw if isinstance(raw, list) else [raw]
    found, junk = [], 0
    for piece in pieces:
        if not isinstance(piece, str):
            junk += 1 if piece is not None else 0
            continue
        matches = _TURN.findall(piece)
        if not matches:
            junk += 1 if piece.strip() else 0
        found += [f"D{int(s)}:{int(t)}" for s, t in matches]
    return list(dict.fromkeys(found)), junk


def _sample_id(sample: dict[str, Any], index: int, used: set[str], notes: Notes) -> str:
    raw = sample.get("sample_id")
    if isinstance(raw, bool) or not isinstance(raw, (str, int)) or raw == "":
        why = "missing" if raw in (None, "") else f"not a string ({raw!r:.40})"
        notes.problem("sample_ids_replaced", f"sample {index + 1}", f"sample_id {why}; named sample-{index}")
        raw = f"sample-{index}"
    return notes.unique_id(str(raw), used, "duplicate_sample_ids", f"sample {index + 1}")


def _session_keys(conversation: dict[str, Any], where: str, notes: Notes) -> list[tuple[int, str]]:
    """(number, key) of each `session_<N>` key, by number; an unusable or repeated number is noted."""
    keys: dict[int, str] = {}
    for key in conversation:
        match = _SESSION_KEY.match(key)
        if match is None:
            continue
        if len(match.group(1)) > 6:
            notes.problem("sessions_skipped", f"{where}, {key[:40]}", "session number too large")
        elif (number := int(match.group(1))) in keys:
            notes.problem(
                "sessions_skipped", f"{where}, {key}", f"repeats session number {number} ({keys[number]})"
            )
        else:
            keys[number] = key
    return sorted(keys.items())


def _turns(raw: Any, where: str, notes: Notes) -> list[tuple[int, Turn]]:
    if not isinstance(raw, list):
        notes.problem("sessions_skipped", where, f"expected a list of turns, found {type(raw).__name__}")
        return []
    turns = []
    for position, record in enumerate(raw):
        turn = notes.parse(Turn, record, "turns_skipped", f"{where}, turn {position + 1}")
        if turn is not None:
            turns.append((position, turn))
    return turns


def _import_sample(
    sample: Any, index: int, used: set[str], notes: Notes
) -> tuple[Persona, list[Session], list[QAItem]] | None:
    where = f"sample {index + 1}"
    if not isinstance(sample, dict):
        notes.problem("samples_skipped", where, f"expected a JSON object, found {type(sample).__name__}")
        return None
    sample_id = _sample_id(sample, index, used, notes)
    where = f"sample {index + 1} ({sample_id})"
    conversation = sample.get("conversation")
    if not isinstance(conversation, dict):
        notes.problem("samples_skipped", where, "no conversation object")
        return None
    speaker_a = conversation.get("speaker_a")
    if not isinstance(speaker_a, str) or not speaker_a:
        notes.problem(
            "samples_skipped", where, "conversation.speaker_a is not a name (needed to tell the user's turns)"
        )
        return None
    speaker_a = notes.clean(speaker_a)
    planned: list[tuple[int, list[tuple[int, Turn]]]] = []
    starts: list[datetime] = []
    for number, key in _session_keys(conversation, where, notes):
        turns = _turns(conversation[key], f"{where}, {key}", notes)
        if not turns:
            continue
        start = source_date(
            conversation.get(f"{key}_date_time"), f"{where}, {key}_date_time", notes, parse_when
        )
        if start is None:  # a day after the previous session, or a fixed day for the first
            start = (
                starts[-1] + STEP * len(planned[-1][1]) + timedelta(days=1)
                if starts
                else datetime(2023, 1, 1, 9)
            )
        planned.append((number, turns))
        starts.append(start)
    if not planned:
        notes.count("samples_without_sessions")
        return None
    known: dict[str, tuple[str, str]] = {}  # turn id -> (message id, session id), the first turn with that id
    message_ids: set[str] = set()
    sessions = []
    for i, start in arrange(starts, [len(t) for _, t in planned], STEP, timedelta(minutes=1), notes):
        number, turns = planned[i]
        session_id = f"{sample_id}:S{number}"
        messages = []
        for offset, (position, turn) in enumerate(turns):
            dia = normalize_evidence(turn.dia_id)[0] if turn.dia_id is not None else []
            if not dia:
                notes.count("turns_without_dia_id")
            turn_id = dia[0] if dia else f"D{number}:{position + 1}"
            message_id = f"{sample_id}:{turn_id}"
            if turn_id in known:
                notes.problem(
                    "duplicate_turn_ids",
                    f"{where}, session_{number}, turn {position + 1}",
                    f"dia_id {turn_id} already used; kept for evidence is the first",
                )
                message_id = f"{message_id}#{position + 1}"
                if message_id in message_ids:
                    message_id = f"{sample_id}:{turn_id}#S{number}.{position + 1}"
            message_ids.add(message_id)
            messages.append(
                Message(
                    id=message_id,
                    role="user" if turn.speaker == speaker_a else "assistant",
                    speaker=turn.speaker or None,
                    content=turn.text,
                    # the photo itself is not in the file: its caption is what a captioning model said
                    captions=[turn.blip_caption] if turn.blip_caption else [],
                    timestamp=start + STEP * offset,
                )
            )
            known.setdefault(turn_id, (message_id, session_id))
        sessions.append(imported_session(session_id, sample_id, "locomo", messages))
    end = sessions[-1].end
    persona = Persona(
        id=sample_id,
        name=speaker_a,
        language=language_of([m.content for s in sessions for m in s.messages]),
        country="US",
        start=sessions[0].start,
        end=end,
        dimensions={},
    )
    qa = sample.get("qa")
    if qa is not None and not isinstance(qa, list):
        notes.problem(
            "qa_skipped", f"{where}, qa", f"expected a list of questions, found {type(qa).__name__}"
        )
        qa = []
    items = [
        item
        for number, record in enumerate(qa or [], start=1)
        if (item := _question(record, number, sample_id, where, end, known, notes)) is not None
    ]
    return persona, sessions, items


def _question(
    record: Any,
    number: int,
    sample_id: str,
    where: str,
    end: datetime,
    known: dict[str, tuple[str, str]],
    notes: Notes,
) -> QAItem | None:
    qa = notes.parse(QARecord, record, "qa_skipped", f"{where}, question {number}")
    if qa is None:
        return None
    kind = CATEGORIES.get(qa.category)
    if kind is None:
        notes.problem("unknown_category", f"{where}, question {number}", f"category {qa.category} is not 1-5")
        return None
    if qa.category != 5 and (qa.answer is None or str(qa.answer).strip() == ""):
        notes.problem(
            "qa_skipped", f"{where}, question {number}", "no answer (only category 5 may go without one)"
        )
        return None
    ids, junk = normalize_evidence(qa.evidence if qa.evidence is not None else [])
    notes.count("evidence_pieces_not_ids", junk)
    resolved = [known[i] for i in ids if i in known]
    notes.count("evidence_resolved", len(resolved))
    notes.count("evidence_unresolved", len(ids) - len(resolved))
    if qa.category == 5:
        answer = "Not mentioned in the conversation."
        spec = AnswerSpec(kind="abstain", value="abstain")
    else:
        answer = str(qa.answer)
        spec = infer_spec(answer, end.year)
    args = ImportedArgs(
        source="locomo",
        category=qa.category,
        adversarial_answer=None if qa.adversarial_answer is None else str(qa.adversarial_answer),
        source_sample_id=notes.renamed.get(sample_id),
    )
    messages = [m for m, _ in resolved]
    return QAItem(
        id=f"{sample_id}:q{number}",
        persona_id=sample_id,
        question=qa.question,
        answer=answer,
        spec=spec,
        type=kind,
        subtype=f"locomo.category{qa.category}",  # type: ignore[arg-type]
        evidence=messages,
        evidence_sessions=list(dict.fromkeys(s for _, s in resolved)),
        asked_at=end + timedelta(days=1),
        hops=2 if qa.category == 1 else 1,
        difficulty="medium",
        language=language_of([qa.question]),
        node=sample_id,
        proof=ImportedProof(op="imported", quotes=[Quote(message_id=m) for m in messages], args=args),
    )


def import_locomo(path: Path, out: Path, force: bool = False) -> dict[str, Any]:
    """Import a LoCoMo file into the dataset directory `out` (new or empty; an existing dataset only with
    `force`)."""
    used: set[str] = set()
    return import_file(
        path,
        out,
        "locomo",
        lambda sample, index, notes: _import_sample(sample, index, used, notes),
        "no sample has a session with turns",
        force,
    )


def export_locomo(data: Dataset, out: Path) -> dict[str, Any]:
    """A loaded keme dataset in LoCoMo's format (category by type: see TYPE_CATEGORY).

    Refuses a dataset whose ids do not resolve (the export would drop records
    without a word) and an `out` inside the dataset or that is a directory.
    """

    if out.is_dir():
        raise KemeError(
            f"--out {out} is a directory; give the JSON file to write, e.g. {out / 'locomo.json'}"
        )
    if data.root is not None and data.root.resolve() in out.resolve().parents:
        raise KemeError(f"--out {out} is inside the dataset {data.root}; write the export elsewhere")
    refuse_broken(data)
    samples = []
    for view in data.views():
        persona = view.persona
        conversation: dict[str, Any] = {"speaker_a": persona.name, "speaker_b": "Assistant"}
        dia: dict[str, str] = {}
        for number, session in enumerate(view.sessions, start=1):
            turns = []
            for position, message in enumerate(session.messages, start=1):
                dia[message.id] = f"D{number}:{position}"
                speaker = persona.name if message.role == "user" else (message.app or "Assistant")
                turn = {
                    "speaker": message.speaker or speaker,
                    "dia_id": f"D{number}:{position}",
                    "text": message.content,
                }
                if message.captions:
                    turn["blip_caption"] = " ".join(message.captions)
                turns.append(turn)
            conversation[f"session_{number}"] = turns
            conversation[f"session_{number}_date_time"] = session.start.strftime(
                "%-I:%M %p on %-d %B, %Y"
            ).lower()
        qa = []
        for item in view.qa:
            category = TYPE_CATEGORY.get(item.type, 3)
            record: dict[str, Any] = {
                "question": item.question,
                "evidence": [dia[m] for m in item.evidence],
                "category": category,
            }
            if category == 5:
                record["adversarial_answer"] = item.answer
            else:
                record["answer"] = item.answer
            qa.append(record)
        samples.append(
            {
                "sample_id": persona.id,
                "conversation": conversation,
                "qa": qa,
                "observation": {},
                "session_summary": {},
                "event_summary": {},
            }
        )
    try:
        atomic_write_text(out, json.dumps(samples, ensure_ascii=False, indent=1))
    except OSError as exc:
        raise KemeError(f"{out}: cannot write ({exc.strerror or exc})") from exc
    return {"samples": len(samples), "qa": sum(len(s["qa"]) for s in samples)}


TYPE_CATEGORY = {
    "multi_hop": 1,
    "temporal_reasoning": 2,
    "open_domain": 3,
    "single_hop": 4,
    "abstention": 5,
    "knowledge_update": 1,
    "summarization": 1,
    "relationship": 4,
    "implicit_preference": 3,
    "preference_generalization": 3,
    "adversarial": 4,
    "visual_reasoning": 4,
}
