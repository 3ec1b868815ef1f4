"""The official MobileMem-Omni release (`data.jsonl`, `questions.jsonl`, `image.zip`) to a keme dataset.

A user `{uuid, language, Basic_Profile, Init_State, Important_Dates, sessions}` becomes a persona; a
session `{session_id, event_id, event_name, event_start_time, event_end_time, dialogue, image_refs,
memory_points}` one of its sessions, its turns spread over the event's time (the format dates the event,
not the turns). A turn whose `content_type` is an image shares that screenshot: the file is taken from
`image.zip` (or an `image/` folder beside the files) by its relative path, copied under `images/` and
hashed. Its caption is what the session's memory points say about that image, if any.

A question `{question_id, question, answer, question_format, question_type, difficulty, evidence
[{event_id, session_id, image_path, explanation}], ...}` belongs to the user whose sessions it cites.
Evidence naming an image becomes the message that shares it; evidence naming only a session stays
session-level (counted: the format does not say which turn). Question types map to ours by name (an
unknown one is kept by name in the subtype); each question is asked just after the user's last session
ends, as MemBase asks it.
"""

from __future__ import annotations

import hashlib
import re
import struct
import zipfile
from collections import defaultdict
from datetime import datetime, timedelta
from pathlib import Path, PurePosixPath
from typing import Any

from pydantic import BaseModel, ConfigDict, StrictFloat, StrictInt

from eval.importers.common import (
    Notes,
    Text,
    arrange,
    imported_session,
    infer_spec,
    language_of,
    read_json_records,
    source_date,
    write_dataset,
)
from eval.importers.mobilemem import parse_time, question_type
from keme.errors import KemeError
from keme.models import AnswerSpec, ImageRecord, Message, Persona, QAItem, Quote, Session, safe_id
from keme.models.proof import ImportedArgs, ImportedProof

STEP = timedelta(seconds=30)
ASKED_AFTER = timedelta(minutes=1)  # MemBase asks at the last session's end
IMAGE_TYPES = {".png": "png", ".jpg": "jpeg", ".jpeg": "jpeg", ".webp": "webp", ".gif": "gif"}
FORMATS = {
    "open_ended": "open",
    "open": "open",
    "single_choice": "single_choice",
    "multiple_choice": "multiple_choice",
}
MAX_IMAGE_BYTES = 50 * 2**20


class Turn(BaseModel):
    model_config = ConfigDict(extra="ignore")

    turn: StrictInt | Text | None = None
    role: Text
    content: Text = ""
    content_type: Text = "text"
    image_inline: Any = None


class OmniSession(BaseModel):
    model_config = ConfigDict(extra="ignore")

    session_id: Text | StrictInt
    event_id: Text | StrictInt | None = None
    event_name: Text = ""
    event_start_time: Any = None
    event_end_time: Any = None
    dialogue: list[Any]
    image_refs: list[Any] = []
    memory_points: list[Any] = []


class OmniQuestion(BaseModel):
    model_config = ConfigDict(extra="ignore")

    question_id: Text | StrictInt
    question: Text
    answer: Text | StrictInt | StrictFloat | list[Text]
    question_format: Text = "open_ended"
    question_type: Text = ""
    difficulty: Text = "medium"
    evidence: list[Any] = []
    source_session_ids: list[Any] = []
    uuid: Text | StrictInt | None = None


class Images:
    """The release's screenshots by relative path, from `image.zip` or an `image/` folder; a path from the
    data is only ever looked up among the archive's entries, never opened as a file."""

    def __init__(self, root: Path, notes: Notes) -> None:
        self.entries: dict[str, Any] = {}
        archive = root / "image.zip"
        if archive.is_file():
            try:
                self.zip: zipfile.ZipFile | None = zipfile.ZipFile(archive)
            except zipfile.BadZipFile as exc:
                raise KemeError(f"{archive}: not a zip archive ({exc}); re-download image.zip") from exc
            for info in self.zip.infolist():
                if not info.is_dir():
                    self.entries[self._key(info.filename)] = info
        else:
            self.zip = None
            folder = root / "image"
            if folder.is_dir():
                for path in folder.rglob("*"):
                    if path.is_file() and not path.is_symlink():
                        self.entries[self._key(path.relative_to(root).as_posix())] = path
        self.notes = notes

    @staticmethod
    def _key(name: str) -> str:
        parts = [p for p in PurePosixPath(name.replace("\\", "/")).parts if p not in ("", ".", "/")]
        if parts and parts[0] == "image":
            parts = parts[1:]
        return "/".join(parts).lower()

    def read(self, ref: str) -> bytes | None:
        entry = self.entries.get(self._key(ref))
        if entry is None:
            return None
        if isinstance(entry, zipfile.ZipInfo):
            if entry.file_size > MAX_IMAGE_BYTES:
                return None
            return self.zip.read(entry)  # type: ignore[union-attr]
        return entry.read_bytes() if entry.stat().st_size <= MAX_IMAGE_BYTES else None


def _size(data: bytes) -> tuple[int, int]:
    """Width and height of a PNG (others: 0, unknown)."""
    if data[:8] == b"\x89PNG\r\n\x1a\n" and len(data) >= 24:
        return struct.unpack(">II", data[16:24])
    return 0, 0


def _image_ref(turn: Turn) -> str | None:
    if "image" not in turn.content_type.lower():
        return None
    for candidate in (turn.image_inline, turn.content):
        if isinstance(candidate, str) and IMAGE_TYPES.get(PurePosixPath(candidate.strip()).suffix.lower()):
            return candidate.strip()
    return None


def _captions(session: OmniSession) -> dict[str, str]:
    """What the session's memory points say about each image (by relative path)."""
    said: dict[str, list[str]] = defaultdict(list)
    for point in session.memory_points:
        if not isinstance(point, dict) or not isinstance(point.get("memory_content"), str):
            continue
        for ref in point.get("image_refs") or []:
            if isinstance(ref, str):
                said[Images._key(ref)].append(point["memory_content"])
    return {ref: " ".join(texts) for ref, texts in said.items()}


class _User:
    def __init__(self) -> None:
        self.sessions: list[Session] = []
        self.by_source: dict[str, str] = {}  # source session id -> our session id
        self.image_message: dict[str, str] = {}  # image key -> message id
        self.images: list[ImageRecord] = []


def _import_user(
    record: Any, index: int, images: Images, blobs: dict[str, bytes], used: dict[str, set[str]], notes: Notes
) -> tuple[Persona, _User] | None:
    where = f"data.jsonl user {index + 1}"
    if not isinstance(record, dict):
        notes.problem("users_skipped", where, "expected a JSON object")
        return None
    raw = record.get("uuid")
    if isinstance(raw, bool) or not isinstance(raw, (str, int)) or raw == "":
        notes.problem("user_ids_replaced", where, f"uuid missing; named user-{index}")
        raw = f"user-{index}"
    pid = notes.unique_id(str(raw), used["persona"], "duplicate_user_ids", where)
    where = f"{where} ({pid})"
    user = _User()
    planned = []
    for position, raw_session in enumerate(record.get("sessions") or []):
        place = f"{where}, session {position + 1}"
        session = notes.parse(OmniSession, raw_session, "sessions_skipped", place)
        if session is None:
            continue
        start = source_date(session.event_start_time, f"{place}, event_start_time", notes, parse_time, "ISO")
        if start is None:
            continue
        end = source_date(session.event_end_time, f"{place}, event_end_time", notes, parse_time, "ISO")
        turns = [
            t
            for i, raw_turn in enumerate(session.dialogue)
            if (t := notes.parse(Turn, raw_turn, "turns_skipped", f"{place}, turn {i + 1}")) is not None
        ]
        if not turns:
            notes.count("empty_sessions")
            continue
        step = STEP if end is None or end <= start else min(STEP, (end - start) / max(len(turns), 1))
        planned.append((session, turns, start, step))
    if not planned:
        notes.count("users_without_sessions")
        return None
    starts = [p[2] for p in planned]
    for i, start in arrange(starts, [len(p[1]) for p in planned], STEP, timedelta(minutes=1), notes):
        session, turns, _, step = planned[i]
        sid = notes.unique_id(f"{pid}:{session.session_id}", used["session"], "duplicate_session_ids", where)
        user.by_source.setdefault(str(session.session_id), sid)
        captions = _captions(session)
        messages = []
        for n, turn in enumerate(turns):
            if turn.role not in ("user", "assistant"):
                notes.count("turns_unknown_role")
            ref = _image_ref(turn)
            message = Message(
                id=f"{sid}:t{n + 1}",
                role="assistant" if turn.role == "assistant" else "user",
                content="" if ref is not None and turn.content.strip() == ref else turn.content,
                timestamp=start + step * n,
            )
            if ref is not None:
                _attach(message, ref, captions, images, blobs, user, pid, sid, notes)
            messages.append(message)
        built = imported_session(sid, pid, "mobilemem_omni", messages)
        if session.event_id is not None:
            built.event_id = str(session.event_id)
        user.sessions.append(built)
    profile = record.get("Basic_Profile") if isinstance(record.get("Basic_Profile"), dict) else {}
    name = next((str(profile[k]) for k in ("name", "Name", "姓名") if profile.get(k)), "user")
    language = record.get("language") if record.get("language") in ("en", "zh") else None
    user.sessions.sort(key=lambda s: (s.start, s.id))
    persona = Persona(
        id=pid,
        name=name,
        language=language or language_of([m.content for s in user.sessions for m in s.messages]),
        country=str(profile.get("country") or ("CN" if language == "zh" else "US")),
        start=user.sessions[0].start,
        end=user.sessions[-1].end + ASKED_AFTER,
        dimensions={},
    )
    return persona, user


def _attach(
    message: Message,
    ref: str,
    captions: dict[str, str],
    images: Images,
    blobs: dict[str, bytes],
    user: _User,
    pid: str,
    sid: str,
    notes: Notes,
) -> None:
    data = images.read(ref)
    if data is None:
        notes.problem("images_missing", f"{sid}, {message.id}", f"{ref[:80]!r} is not in image.zip")
        return
    suffix = PurePosixPath(ref).suffix.lower()
    path = f"images/{safe_id(pid)}-img{len(user.images) + 1:04d}{'.jpg' if suffix == '.jpeg' else suffix}"
    key = Images._key(ref)
    caption = captions.get(key, "")
    width, height = _size(data)
    message.images.append(path)
    message.captions.append(caption)
    blobs[path] = data
    user.image_message.setdefault(key, message.id)
    user.images.append(
        ImageRecord(
            id=f"{pid}-img{len(user.images) + 1:04d}",
            persona_id=pid,
            session_id=sid,
            message_id=message.id,
            path=path,
            sha256=hashlib.sha256(data).hexdigest(),
            template="imported",
            language="zh" if re.search(r"[\u4e00-\u9fff]", caption) else "en",
            caption=caption,
            about={"source_path": ref[:300]},
            facts={},
            dom_text="",
            screen={},
            width=width,
            height=height,
        )
    )
    notes.count("images_copied")


def _question(
    record: Any,
    index: int,
    users: dict[str, _User],
    owner: dict[str, str],
    used: set[str],
    notes: Notes,
    asked: dict[str, datetime],
) -> QAItem | None:
    where = f"questions.jsonl line {index + 1}"
    qa = notes.parse(OmniQuestion, record, "qa_skipped", where)
    if qa is None:
        return None
    cited = [str(e.get("session_id")) for e in qa.evidence if isinstance(e, dict) and e.get("session_id")]
    cited += [str(s) for s in qa.source_session_ids if isinstance(s, (str, int))]
    pid = str(qa.uuid) if qa.uuid is not None and str(qa.uuid) in users else None
    pid = pid or next((owner[s] for s in cited if s in owner), None)
    if pid is None:
        notes.problem("qa_skipped", where, "belongs to no user: its sessions are not in data.jsonl")
        return None
    user = users[pid]
    messages, sessions = [], []
    for piece in qa.evidence:
        if not isinstance(piece, dict):
            notes.count("evidence_unresolved")
            continue
        image = piece.get("image_path")
        session = user.by_source.get(str(piece.get("session_id")))
        if isinstance(image, str) and (mid := user.image_message.get(Images._key(image))):
            messages.append(mid)
            sessions.append(mid.rsplit(":t", 1)[0])
        elif session is not None:
            sessions.append(session)
            notes.count("evidence_session_level")
        else:
            notes.count("evidence_unresolved")
    notes.count("evidence_resolved", len(messages))
    answers = qa.answer if isinstance(qa.answer, list) else [str(qa.answer)]
    answer = "; ".join(answers)
    kind = question_type(qa.question_type)
    if kind is None:
        notes.problem("unknown_question_type", where, f"{qa.question_type[:40]!r}; imported as single_hop")
    kind = kind or "single_hop"
    form = FORMATS.get(qa.question_format)
    if form is None:
        notes.problem("unknown_question_form", where, f"{qa.question_format[:30]!r}; imported as open")
    when = asked[pid]
    spec = (
        AnswerSpec(kind="abstain", value="abstain") if kind == "abstention" else infer_spec(answer, when.year)
    )
    qid = notes.unique_id(str(qa.question_id), used, "duplicate_question_ids", where)
    return QAItem(
        id=qid,
        persona_id=pid,
        question=qa.question,
        answer=answer,
        spec=spec,
        type=kind,
        subtype=f"mobilemem_omni.{qa.question_type or 'unknown'}",
        evidence=list(dict.fromkeys(messages)),
        evidence_sessions=list(dict.fromkeys(sessions)),
        asked_at=when,
        hops=2 if kind == "multi_hop" else 1,
        difficulty=qa.difficulty if qa.difficulty in ("easy", "medium", "hard") else "medium",
        language=language_of([qa.question]),
        format=form or "open",
        node=pid,
        proof=ImportedProof(
            op="imported",
            quotes=[Quote(message_id=m) for m in dict.fromkeys(messages)],
            args=ImportedArgs(
                source="mobilemem_omni",
                question_type=qa.question_type or None,
                source_question_id=notes.renamed.get(qid),
            ),
        ),
    )


def import_mobilemem_omni(root: Path, out: Path, force: bool = False) -> dict[str, Any]:
    """Import a MobileMem-Omni release directory (data.jsonl, questions.jsonl, image.zip) into `out`."""
    if not root.is_dir():
        raise KemeError(f"{root}: not a directory; give the folder that holds data.jsonl and questions.jsonl")
    for name in ("data.jsonl", "questions.jsonl"):
        if not (root / name).is_file():
            raise KemeError(
                f"{root}: no {name}; MobileMem-Omni ships data.jsonl, questions.jsonl and image.zip"
            )
    notes = Notes()
    images = Images(root, notes)
    blobs: dict[str, bytes] = {}
    used: dict[str, set[str]] = defaultdict(set)
    personas, users = [], {}
    for index, record in enumerate(read_json_records(root / "data.jsonl")):
        found = _import_user(record, index, images, blobs, used, notes)
        if found is not None:
            personas.append(found[0])
            users[found[0].id] = found[1]
    if not personas:
        first = "; ".join(notes.problems[:3]) or "no user has a session with turns"
        raise KemeError(f"{root / 'data.jsonl'}: nothing usable: {first}")
    owner = {source: pid for pid, u in users.items() for source in u.by_source}
    asked = {p.id: p.end for p in personas}
    items = [
        item
        for index, record in enumerate(read_json_records(root / "questions.jsonl"))
        if (item := _question(record, index, users, owner, used["qa"], notes, asked)) is not None
    ]
    if not items:
        first = "; ".join(notes.problems[:3]) or "the file holds no question"
        raise KemeError(f"{root / 'questions.jsonl'}: no usable question, so nothing to evaluate: {first}")
    sessions = [s for u in users.values() for s in u.sessions]
    records = [r for u in users.values() for r in u.images]
    stats = {
        "personas": len(personas),
        "sessions": len(sessions),
        "messages": sum(len(s.messages) for s in sessions),
        "qa": len(items),
        "images": len(records),
        **notes.stats(),
    }
    write_dataset(
        out, "mobilemem_omni", personas, sessions, items, stats, force=force, images=records, blobs=blobs
    )
    return stats
