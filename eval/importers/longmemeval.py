"""LongMemEval (S / M / oracle) to a keme dataset, and a keme dataset to LongMemEval (one instance per
question, its haystack the persona's messages up to the moment it is asked).

Each instance has its own haystack, so each becomes its own persona (scope).
Conventions follow the official retrieval code: only user turns are indexed
(recorded in the manifest as `conventions.retrieval_roles`, which `keme eval`
honours), turn-level evidence is the turns marked `has_answer`, and an answer
session whose user turns carry no `has_answer` is relabelled as not an
evidence session ("noans"). Question ids ending in `_abs` are abstention items.
Dates use `%Y/%m/%d (%a) %H:%M`.

Every record is checked against the small models below (`Instance`,
`Turn`); one that does not fit is skipped and noted with its position. A
question or haystack session id that is not a safe file name is renamed (slug
+ hash; the original is kept in `stats.renamed_ids` and the proof args), a
repeated one too; sessions are put in time order and moved apart when their
dates would make them overlap.
"""

from __future__ import annotations

from collections.abc import Iterator
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
    written_as,
)
from eval.importers.export_io import refuse_oversized, write_json_array
from keme.dataset.findings import empty_gold
from keme.dataset.lock import target_lock
from keme.errors import KemeError
from keme.models import AnswerSpec, Message, Persona, QAItem, Quote, Session
from keme.models.proof import ImportedArgs, ImportedProof

TYPES = {
    "single-session-user": "single_hop",
    "single-session-assistant": "single_hop",
    "single-session-preference": "preference_generalization",
    "temporal-reasoning": "temporal_reasoning",
    "knowledge-update": "knowledge_update",
    "multi-session": "multi_hop",
}
DATE_FORMAT = "%Y/%m/%d (%a) %H:%M"
TURN_KEYS = ("role", "content", "has_answer")
INSTANCE_KEYS = (
    "question_id",
    "question_type",
    "question",
    "answer",
    "question_date",
    "haystack_session_ids",
    "haystack_dates",
    "haystack_sessions",
    "answer_session_ids",
)
STEP = timedelta(seconds=30)  # between the turns of a session (LongMemEval dates a session, not its turns)


class Turn(BaseModel):
    """One turn of a haystack session."""

    model_config = ConfigDict(extra="ignore")

    role: Text
    content: Text
    has_answer: bool = False


class Instance(BaseModel):
    """One LongMemEval question with its haystack (sessions are checked turn by turn)."""

    model_config = ConfigDict(extra="ignore")

    question_id: Text | StrictInt
    question_type: Text = ""
    question: Text
    answer: Text | StrictInt | StrictFloat
    question_date: Any = None
    haystack_session_ids: list[Any] = []
    haystack_dates: list[Any] = []
    haystack_sessions: list[Any]
    answer_session_ids: list[Any] = []


def parse_date(text: str) -> datetime:
    try:
        return datetime.strptime(text.strip(), DATE_FORMAT)
    except ValueError:
        return datetime.strptime(text.strip().split(" (")[0], "%Y/%m/%d")


def _source_id(raw: Any) -> str | None:
    """A source id as text; None when it is missing or not a string or number."""
    if isinstance(raw, bool) or not isinstance(raw, (str, int)) or raw == "":
        return None
    return str(raw)


def _turns(raw: Any, where: str, notes: Notes) -> list[tuple[int, Turn]] | None:
    if not isinstance(raw, list):
        notes.problem("sessions_skipped", where, f"expected a list of turns, found {type(raw).__name__}")
        return None
    turns = []
    for position, record in enumerate(raw):
        turn = notes.parse(Turn, record, "turns_skipped", f"{where}, turn {position + 1}")
        if turn is not None:
            turns.append((position + 1, turn))
    return turns


def _import_instance(
    record: Any, index: int, used: set[str], notes: Notes
) -> tuple[Persona, list[Session], QAItem] | None:
    instance = notes.parse(Instance, record, "instances_skipped", f"instance {index + 1}")
    if instance is None:
        return None
    raw_qid = str(instance.question_id)
    qid = notes.unique_id(raw_qid, used, "duplicate_question_ids", f"instance {index + 1}")
    where = f"instance {index + 1} ({qid})"
    planned: list[tuple[str, str, list[tuple[int, Turn]]]] = []  # (source id, session id, turns)
    positions: list[int] = []  # each planned session's place in haystack_sessions
    starts: list[datetime] = []
    local: set[str] = set()
    for position, raw_turns in enumerate(instance.haystack_sessions):
        place = f"{where}, haystack session {position + 1}"
        raw_id = (
            _source_id(instance.haystack_session_ids[position])
            if position < len(instance.haystack_session_ids)
            else None
        )
        if raw_id is None:
            notes.problem("session_ids_missing", place, "no usable haystack_session_ids entry")
            raw_id = f"session-{position}"
        turns = _turns(raw_turns, place, notes)
        if not turns:
            if turns == []:
                notes.count("empty_sessions")
            continue
        session_id = (
            f"{qid}:{notes.unique_id(raw_id, local, 'duplicate_session_ids', place, prefix=f'{qid}:')}"
        )
        raw_date = instance.haystack_dates[position] if position < len(instance.haystack_dates) else None
        start = source_date(raw_date, f"{place}, date", notes, parse_date, DATE_FORMAT)
        if start is None:  # an hour after the previous session, or a fixed day for the first
            start = (
                starts[-1] + STEP * len(planned[-1][2]) + timedelta(hours=1)
                if starts
                else datetime(2023, 1, 1, 9)
            )
        planned.append((raw_id, session_id, turns))
        positions.append(position)
        starts.append(start)
    if not planned:
        notes.count("instances_without_sessions")
        return None
    answer_sessions = {text for raw in instance.answer_session_ids if (text := _source_id(raw)) is not None}
    sessions: list[Session] = []
    evidence_messages: list[str] = []
    evidence_sessions: list[str] = []
    kept_sessions: dict[
        str, dict[str, Any]
    ] = {}  # session id -> what LongMemEval wrote that keme does not keep
    for i, start in arrange(starts, [len(t) for _, _, t in planned], STEP, timedelta(minutes=1), notes):
        raw_id, session_id, turns = planned[i]
        position = positions[i]
        raw_turns = instance.haystack_sessions[position]
        kept_sessions[session_id] = {
            "id": instance.haystack_session_ids[position]
            if position < len(instance.haystack_session_ids)
            else None,
            "position": position,
            "date": instance.haystack_dates[position] if position < len(instance.haystack_dates) else None,
            # has_answer as written (true, false or absent): LongMemEval's scripts read its presence
            "has_answer": [t.get("has_answer") if isinstance(t, dict) else None for t in raw_turns],
        }
        extra = {
            number: {k: v for k, v in raw_turns[number - 1].items() if k not in TURN_KEYS}
            for number, _ in turns
            if isinstance(raw_turns[number - 1], dict) and set(raw_turns[number - 1]) - set(TURN_KEYS)
        }
        if extra:
            kept_sessions[session_id]["turns"] = extra
        messages = []
        user_evidence = False
        for offset, (number, turn) in enumerate(turns):
            if turn.role not in ("user", "assistant"):
                notes.count("turns_unknown_role")
            role = "user" if turn.role == "user" else "assistant"
            message_id = f"{session_id}_{number}"
            messages.append(
                Message(id=message_id, role=role, content=turn.content, timestamp=start + STEP * offset)
            )
            if turn.has_answer:
                evidence_messages.append(message_id)
                user_evidence = user_evidence or role == "user"
        if raw_id in answer_sessions:
            if user_evidence or not any(t.role == "user" for _, t in turns):
                evidence_sessions.append(session_id)
            else:
                notes.count("noans_relabelled_sessions")
        sessions.append(imported_session(session_id, qid, "longmemeval", messages))
    unresolved = sorted(answer_sessions - {raw for raw, _, _ in planned})
    notes.count("answer_session_ids_unresolved", len(unresolved))
    last = sessions[-1].end
    asked = source_date(
        instance.question_date, f"{where}, question_date", notes, parse_date, DATE_FORMAT
    ) or last + timedelta(days=1)
    if asked < last:
        notes.count("question_before_last_session")
    asked = max(asked, last)
    abstain = raw_qid.endswith("_abs")
    answer = str(instance.answer)
    if not abstain and empty_gold(answer):
        notes.problem("empty_golds", where, f"answer {answer!r}; imported flagged")
    spec = AnswerSpec(kind="abstain", value="abstain") if abstain else infer_spec(answer, asked.year)
    if not abstain and instance.question_type not in TYPES:
        notes.problem(
            "unknown_question_type",
            where,
            f"question_type {instance.question_type[:40]!r}; imported as single_hop",
        )
    kind = "abstention" if abstain else TYPES.get(instance.question_type, "single_hop")
    fields: dict[str, Any] = {}
    if not isinstance(instance.answer, str):
        fields["answer"] = instance.answer
    args = ImportedArgs(
        source="longmemeval",
        question_type=instance.question_type,
        source_question_id=notes.renamed.get(qid),
        unresolved_evidence=[f"answer_session_ids: {raw}" for raw in unresolved] or None,
        source_fields=fields or None,
    )
    source = {
        "format": "longmemeval",
        "question_id": record.get("question_id"),
        "question_date": instance.question_date,
        "answer_session_ids": record.get("answer_session_ids"),
        "sessions": kept_sessions,
        "order": [s for s in instance.haystack_session_ids] if instance.haystack_session_ids else None,
        "instance": {k: v for k, v in record.items() if k not in INSTANCE_KEYS},
        "keys": [k for k in record if k in INSTANCE_KEYS],
    }
    persona = Persona(
        id=qid,
        name="user",
        language=language_of([m.content for s in sessions for m in s.messages]),
        country="US",
        start=sessions[0].start,
        end=asked,
        dimensions={},
        source=source,
    )
    item = QAItem(
        id=qid,
        persona_id=qid,
        question=instance.question,
        answer=answer,
        spec=spec,
        type=kind,
        subtype=f"longmemeval.{instance.question_type or 'unknown'}",  # type: ignore[arg-type]
        evidence=evidence_messages,
        evidence_sessions=evidence_sessions,
        asked_at=asked,
        hops=2 if kind == "multi_hop" else 1,
        difficulty="medium",
        language=language_of([instance.question]),
        node=qid,
        proof=ImportedProof(
            op="imported", quotes=[Quote(message_id=m) for m in evidence_messages], args=args
        ),
    )
    return persona, sessions, item


def import_longmemeval(path: Path, out: Path, force: bool = False) -> dict[str, Any]:
    """Import a LongMemEval file into the dataset directory `out` (new or empty; an existing dataset only with
    `force`)."""
    used: set[str] = set()

    def read_one(record: Any, index: int, notes: Notes):
        found = _import_instance(record, index, used, notes)
        return None if found is None else (found[0], found[1], [found[2]])

    return import_file(
        path,
        out,
        "longmemeval",
        read_one,
        "no instance has a haystack session with turns",
        force,
        conventions={"retrieval_roles": ["user"]},
    )


# ---------------------------------------------------------------------------------------------- export
THEIR_TYPE = {
    "multi_hop": "multi-session",
    "summarization": "multi-session",
    "temporal_reasoning": "temporal-reasoning",
    "knowledge_update": "knowledge-update",
    "implicit_preference": "single-session-preference",
    "preference_generalization": "single-session-preference",
}


def their_type(item: QAItem, role_of: dict[str, str], sessions: int) -> str:
    """LongMemEval's type for one of our questions: by kind, else by where its evidence is (one session or
    several; said by the user or the assistant)."""
    if item.type in THEIR_TYPE:
        return THEIR_TYPE[item.type]
    if sessions > 1:
        return "multi-session"
    roles = {role_of[m] for m in item.evidence}
    return "single-session-assistant" if roles == {"assistant"} else "single-session-user"


def _turn(message: Message, evidence: set[str]) -> dict[str, Any]:
    """A message as a LongMemEval turn: an app record is the user's (their retrieval indexes user turns
    only) with the app's name in front; a named speaker's turn reads "name: text"; a shared screenshot
    reads as its caption, "[image: ...]", as keme's text systems see it (the file has no images)."""
    content = message.content
    if message.role == "system":
        content = f"[{message.app or 'app'}] {content}"
    elif message.speaker:
        content = f"{message.speaker}: {content}"
    if message.captions:
        content = " ".join([content, *(f"[image: {c}]" for c in message.captions)]).strip()
    return {
        "role": "assistant" if message.role == "assistant" else "user",
        "content": content,
        "has_answer": message.id in evidence,
    }


def _source(persona: Persona) -> dict[str, Any]:
    """What a LongMemEval import kept verbatim for this persona ({} for any other)."""
    source = persona.source or {}
    return source if source.get("format") == "longmemeval" else {}


def _session_turns(session: Session, kept: dict[str, Any], evidence: set[str], asked: datetime) -> list[dict]:
    """A session's turns up to `asked`; an imported one with has_answer as the source wrote it (present,
    true or false, or absent) wherever that still marks keme's evidence."""
    messages = [m for m in session.messages if m.timestamp <= asked]
    turns = [_turn(m, evidence) for m in messages]
    written = kept.get("has_answer")
    extra = kept.get("turns") or {}
    numbers = [int(m.id.rsplit("_", 1)[1]) if m.id.rsplit("_", 1)[-1].isdigit() else 0 for m in messages]
    if isinstance(written, list) and all(0 < n <= len(written) for n in numbers):
        if all(bool(written[n - 1]) == t["has_answer"] for n, t in zip(numbers, turns)):
            for n, turn in zip(numbers, turns):
                if written[n - 1] is None:
                    del turn["has_answer"]
                else:
                    turn["has_answer"] = written[n - 1]
    for n, turn in zip(numbers, turns):
        turn |= extra.get(str(n)) or extra.get(n) or {}
    return turns


def _instance(view: Any, item: QAItem, role_of: dict[str, str], counts: dict[str, int]) -> dict[str, Any]:
    source = _source(view.persona)
    kept = source.get("sessions") or {}
    evidence = set(item.evidence)
    sessions = (
        sorted(view.sessions, key=lambda s: (kept.get(s.id) or {}).get("position", 0))
        if source
        else view.sessions
    )
    ids, dates, haystack, answers = [], [], [], []
    for session in sessions:
        mine = kept.get(session.id) or {}
        turns = _session_turns(session, mine, evidence, item.asked_at)
        if not turns:
            continue
        counts["app_turns_as_user"] += sum(m.role == "system" for m in session.messages[: len(turns)])
        counts["captions_in_turn_text"] += sum(len(m.captions) for m in session.messages[: len(turns)])
        date = mine.get("date")
        same = written_as(date, session.start, parse_date)
        dates.append(date if same else session.start.strftime(DATE_FORMAT))
        haystack.append(turns)
        if source and isinstance(mine.get("id"), (str, int)):
            ids.append(mine["id"])
            if session.id in item.evidence_sessions:
                answers.append(mine["id"])
        # LongMemEval's scripts tell an evidence session by "answer" in its id, and only so
        elif any(t.get("has_answer") for t in turns) or session.id in item.evidence_sessions:
            answers.append(f"answer_{session.id}")
            ids.append(answers[-1])
        else:
            ids.append(session.id.replace("answer", "noans"))
    abstain = item.spec.kind == "abstain"
    args = item.proof.args if isinstance(item.proof.args, ImportedArgs) else None
    question_id = (args.source_question_id if args else None) or item.id
    if abstain and not question_id.endswith("_abs"):
        question_id += "_abs"
    raw_answer = ((args.source_fields or {}) if args else {}).get("answer")
    instance = {
        "question_id": source.get("question_id", question_id) if source else question_id,
        "question_type": args.question_type
        if args is not None and args.source == "longmemeval" and args.question_type is not None
        else their_type(item, role_of, len(set(item.evidence_sessions))),
        "question": item.question + "".join(f"\n{'ABCDEFGH'[i]}. {o}" for i, o in enumerate(item.options)),
        "answer": raw_answer if raw_answer is not None and str(raw_answer) == item.answer else item.answer,
        "question_date": source["question_date"]
        if written_as(source.get("question_date"), item.asked_at, parse_date)
        else item.asked_at.strftime(DATE_FORMAT),
        "haystack_dates": dates,
        "haystack_session_ids": ids,
        "haystack_sessions": haystack,
        "answer_session_ids": answers,
    }
    if source:
        written = source.get("answer_session_ids")
        if isinstance(written, list) and _evidence_sessions(written, kept) == set(item.evidence_sessions):
            instance["answer_session_ids"] = written  # noans sessions the source listed, as it listed them
        instance = {k: v for k, v in instance.items() if k in (source.get("keys") or instance)}
        instance |= source.get("instance") or {}
    return instance


def _evidence_sessions(written: list[Any], kept: dict[str, dict[str, Any]]) -> set[str]:
    """The keme sessions among answer_session_ids as the source wrote them that keme keeps as evidence."""
    by_id = {str(k.get("id")): sid for sid, k in kept.items()}
    return {by_id[str(raw)] for raw in written if str(raw) in by_id} & set(kept)


def to_longmemeval(data: Any) -> tuple[list[dict[str, Any]], dict[str, Any]]:
    """One LongMemEval instance per question (longmemeval_instances), as a list, and their counts."""
    stats: dict[str, Any] = {}
    instances = list(longmemeval_instances(data, stats))
    return instances, stats


def longmemeval_instances(data: Any, stats: dict[str, Any]) -> Iterator[dict[str, Any]]:
    """One LongMemEval instance per question: the persona's messages up to the moment it is asked; made
    one at a time (each holds its persona's history), `stats` counted as they go.

    Session ids follow LongMemEval's convention, which its retrieval scripts score by: an evidence
    session is `answer_<id>`, and no other session id contains "answer". An imported LongMemEval
    instance comes back as it was written (ids, dates, session order, has_answer), wherever keme still
    holds the same values."""
    counts = {"app_turns_as_user": 0, "captions_in_turn_text": 0}
    stats.update(instances=0, abstention=0, **counts, sessions=0)
    for view in data.views():
        role_of = {m.id: m.role for s in view.sessions for m in s.messages}
        for item in sorted(view.qa, key=lambda q: (q.asked_at, q.id)):
            instance = _instance(view, item, role_of, counts)
            stats["instances"] += 1
            stats["abstention"] += str(instance["question_id"]).endswith("_abs")
            stats["sessions"] += len(instance["haystack_sessions"])
            stats.update(counts)
            yield instance


def export_longmemeval(data: Any, out: Path) -> dict[str, Any]:
    """Write `data` as a LongMemEval file (a JSON array of instances) that LongMemEval's own retrieval and
    QA scripts read."""
    if out.is_dir():
        raise KemeError(f"--out {out} is a directory; give the JSON file to write, e.g. {out / 'lme.json'}")
    if data.root is not None and data.root.resolve() in out.resolve().parents:
        raise KemeError(f"--out {out} is inside the dataset {data.root}; write the export elsewhere")
    refuse_broken(data)
    refuse_oversized(data)
    stats: dict[str, Any] = {}
    try:
        with target_lock(out, "keme export longmemeval"):  # a second export to the same file is refused
            write_json_array(out, longmemeval_instances(data, stats))
    except OSError as exc:
        raise KemeError(f"{out}: cannot write ({exc.strerror or exc})") from exc
    return stats
