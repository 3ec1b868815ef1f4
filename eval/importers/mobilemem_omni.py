"""The MobileMem-Omni release, or its pipeline's per-stage output, to a keme dataset.

What the real files hold (read in github.com/zjunlp/MobileMem; `Dataset-Explorer` is a branch of it):

- Release (HF `zjunlp/MobileMem-Omni`, also `omni/` of `zjunlp/MobileMem`): `data.jsonl`, one user a line;
  `questions.jsonl`; `image.zip` (Dataset-Explorer README.md and app/server.py, which reads exactly these).
- A user is `{language, Basic_Profile, Init_State, Important_Dates, sessions, session_stats_summary}`; the
  user id is `Basic_Profile.uuid`, an int (Dataset-Explorer stage5_all_users.json, a copy of two
  data.jsonl users); the pipeline's own records also carry a top-level `uuid`
  (generate_code/stage5_sessions.py, process_persona). `language` is "Chinese", "en" or "English"
  (omni/README.md "Benchmark Structure"; stage5_all_users.json); `Basic_Profile.nationality` ("Chinese",
  "American") and `Init_State.location` ("中国, 合肥") say where the user lives.
- A session is `{session_id "<uuid>_<event_id>", event_id, parent_event_id, event_name, event_start_time,
  event_end_time "2025-01-01 08:30:00", image_refs, image_candidates, dialogue, memory_points, ...}`;
  `image_refs` is an object `{person_avatar, person_avatar_description, event_scene,
  event_scene_description, extra_images: [{type, file, description}]}` (stage5_sessions.py,
  build_candidate_image_refs; stage5_all_users.json). A turn is `{turn, role, content, content_type:
  "text"}` or `{turn, role: "user", image_inline: "image/uid0/camera_photos/0_event_0.png", content_type:
  "image"}` (stage5_sessions.py, enforce_required_dialogue_images; omni/README.md "Dialogue Structure").
- A question is `{question_id "<uuid>_q_<n>", question, answer, question_format (multiple_choice |
  open_ended), question_type, difficulty (sometimes missing), evidence [{event_id, session_id,
  image_path, explanation}], image_refs, source_session_ids, source_event_ids}` (omni/README.md "Question
  Structure"). A multiple-choice question has six options appended to its text as lines "A. ..." and
  the answer is the right line, "B. ..." (stage6_questions.py, normalize_multiple_choice_fields). An
  explanation quotes a turn ("不对，购车不是重点，这次主要是婚礼、差旅和理财。" of turn 10 in
  Dataset-Explorer stage6_questions_uuid0.jsonl), or for a visual question is an object `{image,
  context}` beside an `image_path`.
- Per-stage output: stage 5 writes `stage5_sessions.jsonl` (one user record a line, top-level `uuid`),
  optionally `stage5_sessions_uuid<k>.jsonl` or `uuid_<k>/stage5_sessions.jsonl` per user; stage 6 writes
  `stage6_questions.jsonl`, lines `{uuid, language, questions: [...]}`, optionally
  `stage6_questions_uuid<k>.jsonl` (stage5_sessions.py and stage6_questions.py, main). The explorer's
  sample holds `stage5_all_users.json` `{summary, users: [{user_id, records: [...]}]}` and per-user
  stage 6 files with one question a line (eval/Jsonl2Locomo.py reads both shapes). Images sit under
  `image/uid<k>/<folder>/` (pipeline folders person, event, group_chat, ...; the release names them
  pensona_reference_photos, camera_photos, chat_records, ...: server.py IMAGE_GROUP_ALIASES) and
  image.zip may store names without its UTF-8 flag, in UTF-8 or GB18030 (server.py decoded_zip_name).

keme's form: a user becomes a persona (its record, less the dialogue, kept verbatim in `Persona.source`);
a session's turns are spread over its event's time. A turn that shares an image carries it, with the
image's description in `image_refs` as caption (or, with none, its kind); the session's other images
(avatar, event scene, extra images no turn shares) open the session as one app record of the phone's
album (role system, app Photos / 相册), so a memory system sees every image the session holds and no turn
is made to share an image it never shared. Image paths from the data are only looked up among the archive's
entries, never opened. A question belongs to its user; its evidence is the message that shares the
named image, else the turn its explanation quotes (word for word, else by a normalized prefix), else its
session (all counted). Each question is asked just after the user's last session ends, as MemBase asks.
"""

from __future__ import annotations

import hashlib
import json
import re
import struct
import tempfile
import unicodedata
import zipfile
from collections import Counter, defaultdict
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from pathlib import Path, PurePosixPath
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, StrictFloat, StrictInt

from eval.importers.archive import open_archive, read_member
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
from keme.dataset.limits import Limits, check, env_name
from keme.errors import KemeError
from keme.models import AnswerSpec, ImageRecord, Message, Persona, QAItem, Quote, Session, safe_id
from keme.models.proof import ImportedArgs, ImportedProof

SOURCE = "mobilemem_omni"
STEP = timedelta(seconds=30)
ALBUM = {"en": "Photos", "zh": "相册"}  # the app whose record shows a session's images no turn shares
ASKED_AFTER = timedelta(minutes=1)  # MemBase asks at the last session's end
MAX_IMAGE_BYTES = 50 * 2**20
IMAGE_SUFFIXES = {".png": ".png", ".jpg": ".jpg", ".jpeg": ".jpg", ".webp": ".webp", ".gif": ".gif"}
QUOTE_MIN = 8  # normalized characters an explanation needs before it is matched to a turn
PREFIX = 20  # normalized characters of an explanation that must occur in exactly one turn
LETTERS = "ABCDEF"
_OPTION = re.compile(r"^\s*([A-F])\s*[.)．:：、]\s*(.+?)\s*$")
_ANSWER_LETTER = re.compile(r"^\s*\(?([A-F])\)?(?:\s*[.)．:：、]|\s|$)")
_UID = re.compile(r"uid\d+", re.IGNORECASE)
_UID_IN_NAME = re.compile(r"uuid_?(\d+)", re.IGNORECASE)
_QUESTION_OWNER = re.compile(r"^(.+)_q_\d+$")
_NOT_WORD = re.compile(r"[\W_]+")
_IMAGE_TAG = re.compile(r"^\[image:(.*)\]$", re.DOTALL)

# the pipeline's image folders and the release's names for them (Dataset-Explorer app/server.py)
RELEASE_FOLDERS = {
    "person": "pensona_reference_photos",
    "event": "camera_photos",
    "friend": "posts",
    "group_chat": "chat_records",
    "group_chat_members": "kg_reference_photos",
    "money": "transaction_records",
    "music": "music_screenshots",
    "shopping": "shopping_records",
    "ticket": "ticket_records",
    "video": "video_screenshots",
    "book": "book_screenshots",
    "scenery": "others",
}
PIPELINE_FOLDERS = {release: pipeline for pipeline, release in RELEASE_FOLDERS.items()}
FOLDER_KINDS = {
    "person": "person_avatar",
    "event": "event_scene",
    "group_chat_members": "group_chat_member_avatar",
}
# what an image of a kind is, in the persona's language, when the release gives no description
KINDS = {
    "person_avatar": ("the user's profile photo", "用户本人的头像照片"),
    "event_scene": ("a photo taken at the event", "事件现场的照片"),
    "group_chat": ("a screenshot of a group chat", "群聊记录截图"),
    "group_chat_member_avatar": ("a chat member's profile photo", "群聊成员的头像"),
    "friend": ("a screenshot of a social media post", "朋友圈动态截图"),
    "book": ("a screenshot of an e-book page", "电子书页面截图"),
    "music": ("a screenshot of a music player", "音乐播放页面截图"),
    "video": ("a screenshot of a video page", "视频页面截图"),
    "shopping": ("a screenshot of a shopping order", "购物订单截图"),
    "money": ("a screenshot of a payment record", "收支记录截图"),
    "ticket": ("a screenshot of a ticket booking", "票务订单截图"),
}
LANGUAGES = {"zh": "zh", "chinese": "zh", "zh-cn": "zh", "中文": "zh", "en": "en", "english": "en"}
COUNTRY_NAMES = {  # nationality or country, as a profile or a location writes it
    "CN": ("chinese", "china", "中国", "中国人"),
    "US": ("american", "united states", "usa", "美国"),
    "GB": ("british", "united kingdom", "uk", "英国"),
    "CA": ("canadian", "canada"),
    "AU": ("australian", "australia"),
    "JP": ("japanese", "japan", "日本"),
    "KR": ("korean", "south korea", "韩国"),
    "DE": ("german", "germany"),
    "FR": ("french", "france"),
    "IN": ("indian", "india"),
    "SG": ("singaporean", "singapore", "新加坡"),
}
COUNTRIES = {name: code for code, names in COUNTRY_NAMES.items() for name in names}
# ----------------------------------------------------------------------------------- source records
Id = Text | StrictInt


class Turn(BaseModel):
    model_config = ConfigDict(extra="ignore")

    turn: Id | None = None
    role: Text
    content: Text | None = ""
    content_type: Text = "text"
    image_inline: Text | list[Text] | None = None


class ExtraImage(BaseModel):
    model_config = ConfigDict(extra="ignore")

    type: Text | None = ""
    file: Text
    description: Text | None = None


class ImageRefs(BaseModel):
    model_config = ConfigDict(extra="ignore")

    person_avatar: Text | None = None
    person_avatar_description: Text | None = None
    event_scene: Text | None = None
    event_scene_description: Text | None = None
    extra_images: list[Any] = []


class OmniSession(BaseModel):
    model_config = ConfigDict(extra="ignore")

    session_id: Id
    event_id: Id | None = None
    event_start_time: Any = None
    event_end_time: Any = None
    dialogue: list[Any]
    image_refs: Any = None


class OmniQuestion(BaseModel):
    model_config = ConfigDict(extra="ignore")

    question_id: Id
    question: Text
    answer: Text | StrictInt | StrictFloat | list[Text]
    question_format: Text = "open_ended"
    question_type: Text = ""
    difficulty: Text | None = None
    evidence: list[Any] | None = []
    image_refs: list[Any] | None = []
    source_session_ids: list[Any] | None = []
    source_event_ids: list[Any] | None = []
    options: list[Any] | None = []
    uuid: Id | None = None
    user_id: Id | None = None


# ------------------------------------------------------------------------------------------ layout
@dataclass
class Layout:
    """Which files of a folder hold the users and the questions, and where its images are."""

    kind: Literal["release", "stages"]
    root: Path
    users: list[Path]
    questions: list[Path]


def _stage_files(root: Path, stage: str) -> list[Path]:
    found = sorted(p for p in root.glob(f"{stage}*.json*") if p.is_file())
    found += sorted(p for p in root.glob(f"uuid_*/{stage}*.jsonl") if p.is_file())
    return found


def find_layout(root: Path) -> Layout:
    """The release's final files (also under `omni/`, as the HF download has them), else the pipeline's
    stage 5 and stage 6 files."""
    if not root.is_dir():
        raise KemeError(f"{root}: not a directory; give the folder that holds data.jsonl and questions.jsonl")
    for base in (root, root / "omni"):
        if (base / "data.jsonl").is_file():
            if not (base / "questions.jsonl").is_file():
                raise KemeError(f"{base}: data.jsonl without questions.jsonl; the release ships both")
            return Layout("release", base, [base / "data.jsonl"], [base / "questions.jsonl"])
    users, questions = _stage_files(root, "stage5"), _stage_files(root, "stage6")
    if users and questions:
        return Layout("stages", root, users, questions)
    if users:
        raise KemeError(f"{root}: stage 5 sessions but no stage6_questions*.jsonl; nothing to evaluate")
    raise KemeError(
        f"{root}: no data.jsonl (the MobileMem-Omni release: data.jsonl, questions.jsonl, image.zip) and no "
        f"stage5_sessions*.jsonl with stage6_questions*.jsonl (the pipeline's output)"
    )


# ------------------------------------------------------------------------------------------ images
def image_key(name: str) -> str:
    """A release path as the archive knows it: from its `uid<k>` folder on ('image/uid0/x/y.png' and
    'omni/image/uid0/x/y.png' are the same image), else without a leading `image/`."""
    name = name.strip()
    if tagged := _IMAGE_TAG.match(name):
        name = tagged.group(1).strip()
    parts = [p for p in name.replace("\\", "/").split("/") if p not in ("", ".", "..")]
    at = next((i for i, part in enumerate(parts) if _UID.fullmatch(part)), None)
    if at is not None:
        parts = parts[at:]
    elif "image" in parts:
        parts = parts[parts.index("image") + 1 :]
    return "/".join(parts)


def _zip_name(info: zipfile.ZipInfo) -> str:
    """A member's name: names stored without the UTF-8 flag are read back as UTF-8 or GB18030."""
    name = info.filename
    if not info.flag_bits & 0x800 and not name.isascii():
        raw = name.encode("cp437")
        for encoding in ("utf-8", "gb18030"):
            try:
                return raw.decode(encoding)
            except UnicodeDecodeError:
                continue
    return name


class Archive:
    """The images of a folder by key, from its `image.zip` or an extracted `image/` folder. A path from
    the data is only ever looked up among these entries, never opened."""

    def __init__(self, root: Path, limits: Limits) -> None:
        self.entries: dict[str, zipfile.ZipInfo | Path] = {}
        self.zip: zipfile.ZipFile | None = None
        self.path = root / "image.zip"
        self.limits = limits
        if self.path.is_file():
            self.zip = open_archive(self.path, limits)
            for info in self.zip.infolist():
                if not info.is_dir():
                    self.entries.setdefault(image_key(_zip_name(info)), info)
        elif (root / "image").is_dir():
            folder = (root / "image").resolve()
            self.path = folder
            for path in sorted(folder.rglob("*")):
                if path.is_file() and not path.is_symlink() and path.resolve().is_relative_to(folder):
                    self.entries.setdefault(image_key(path.relative_to(folder).as_posix()), path)
                    check(f"{folder}: files", len(self.entries), "archive_members", limits)
        self.folded = {key.casefold(): key for key in self.entries}

    def find(self, ref: str, notes: Notes) -> str | None:
        """The entry's key for a path of the data (its folder may have the pipeline's or the release's
        name), or None."""
        key = image_key(ref)
        if key in self.entries:
            return key
        if key.casefold() in self.folded:
            return self.folded[key.casefold()]
        parts = key.split("/")
        alias = (RELEASE_FOLDERS.get(parts[1]) or PIPELINE_FOLDERS.get(parts[1])) if len(parts) == 3 else None
        if alias is not None:
            other = "/".join((parts[0], alias, parts[2]))
            if other.casefold() in self.folded:
                notes.count("images_found_by_folder_alias")
                return self.folded[other.casefold()]
        return None

    def read(self, key: str) -> bytes | str:
        """The bytes of an entry, or why an image that large is skipped; a damaged archive member is an
        ArchiveError naming it."""
        entry = self.entries[key]
        try:
            size = entry.file_size if isinstance(entry, zipfile.ZipInfo) else entry.stat().st_size
        except OSError as exc:
            return f"unreadable ({exc.strerror or exc})"
        cap = min(MAX_IMAGE_BYTES, self.limits.image_bytes)
        if size > cap:
            return f"{size} bytes, more than the {cap} an image may have ({env_name('image_bytes')})"
        if isinstance(entry, zipfile.ZipInfo):
            return read_member(self.zip, entry, self.path, size)  # type: ignore[arg-type]
        try:
            with entry.open("rb") as handle:  # at most the cap, should the file grow meanwhile
                data = handle.read(cap + 1)
        except OSError as exc:
            return f"unreadable ({exc.strerror or exc})"
        return data if len(data) <= cap else f"more than the {cap} bytes an image may have"


def _size(data: bytes) -> tuple[int, int]:
    """Width and height of a PNG (others: 0, unknown)."""
    if data[:8] == b"\x89PNG\r\n\x1a\n" and len(data) >= 24:
        return struct.unpack(">II", data[16:24])
    return 0, 0


@dataclass
class Ref:
    """An image a session holds: its path in the data, its kind and its description."""

    file: str
    kind: str
    description: str


def _session_images(raw: Any, where: str, notes: Notes) -> list[Ref]:
    """The images of a session's `image_refs` object, in its order, each once."""
    if raw is None:
        return []
    refs = notes.parse(ImageRefs, raw, "image_refs_unreadable", f"{where}, image_refs")
    if refs is None:
        return []
    found = []
    if refs.person_avatar:
        found.append(Ref(refs.person_avatar, "person_avatar", refs.person_avatar_description or ""))
    if refs.event_scene:
        found.append(Ref(refs.event_scene, "event_scene", refs.event_scene_description or ""))
    for n, item in enumerate(refs.extra_images):
        extra = notes.parse(ExtraImage, item, "image_refs_unreadable", f"{where}, extra_images {n + 1}")
        if extra is not None and extra.file.strip():
            found.append(Ref(extra.file, extra.type or "extra_image", extra.description or ""))
    unique: dict[str, Ref] = {}
    for ref in found:
        unique.setdefault(image_key(ref.file), ref)
    return list(unique.values())


def _kind_of(key: str) -> str:
    """An image's kind from its folder (either name), for an image no `image_refs` entry describes."""
    parts = key.split("/")
    folder = parts[-2] if len(parts) >= 2 else ""
    folder = PIPELINE_FOLDERS.get(folder, folder)
    return FOLDER_KINDS.get(folder, folder or "image")


# -------------------------------------------------------------------------------------------- users
@dataclass
class User:
    """A persona being built, and what its questions resolve against."""

    pid: str
    raw: str  # the id as the source wrote it
    language: str
    sessions: list[Session] = field(default_factory=list)
    by_source: dict[str, str] = field(default_factory=dict)  # source session id -> ours
    by_event: dict[str, str] = field(default_factory=dict)  # source event id -> our session id
    texts: dict[str, list[tuple[str, str]]] = field(default_factory=dict)  # session -> (message id, text)
    shares: dict[tuple[str, str], str] = field(default_factory=dict)  # (session, image key) -> message id
    first_share: dict[str, str] = field(default_factory=dict)  # image key -> first message sharing it
    images: list[ImageRecord] = field(default_factory=list)
    asked: datetime = datetime.min  # when its questions are asked: just after its last session


@dataclass
class Copies:
    """The images written so far, once per archive entry however often they are shared."""

    archive: Archive
    stage: Path  # where the images wait for the dataset's commit: one in memory at a time, not all
    blobs: dict[str, Path] = field(default_factory=dict)
    total: int = 0  # bytes copied so far, bounded by the limit `images_bytes`
    saved: dict[str, tuple[str, str, int, int]] = field(default_factory=dict)  # key -> path, sha, w, h
    found: dict[str, str | None] = field(default_factory=dict)  # path key -> archive key
    failed: set[str] = field(default_factory=set)
    kinds: Counter = field(default_factory=Counter)

    def locate(self, ref: str, notes: Notes) -> str | None:
        """The archive's key for a path of the data, looked up once per path."""
        wanted = image_key(ref)
        if wanted not in self.found:
            self.found[wanted] = self.archive.find(ref, notes)
        return self.found[wanted]

    def copy(self, ref: str, where: str, notes: Notes) -> tuple[str, str, str, int, int] | None:
        """(key, path, sha256, width, height) of the image `ref` names, written once; None (noted) when the
        archive has no readable image by that name."""
        key = self.locate(ref, notes)
        if key is None:
            notes.problem("images_missing", where, f"{ref[:80]!r} is not in image.zip")
            return None
        if key in self.saved:
            return (key, *self.saved[key])
        if key in self.failed:
            notes.count("images_unreadable")
            return None
        suffix = IMAGE_SUFFIXES.get(PurePosixPath(key).suffix.lower())
        data = self.archive.read(key) if suffix else "not an image file name"
        if isinstance(data, str):
            self.failed.add(key)
            notes.problem("images_unreadable", where, f"{ref[:80]!r}: {data}")
            return None
        self.total += len(data)
        check(f"{self.archive.path}: images copied", self.total, "images_bytes", self.archive.limits)
        path = f"images/omni-{len(self.saved) + 1:05d}{suffix}"
        staged = self.stage / PurePosixPath(path).name
        try:
            staged.write_bytes(data)
        except OSError as exc:
            raise KemeError(f"{staged}: cannot stage an image ({exc.strerror or exc})") from exc
        self.blobs[path] = staged
        self.saved[key] = (path, hashlib.sha256(data).hexdigest(), *_size(data))
        notes.count("images_copied")
        return (key, *self.saved[key])


def _caption(ref: Ref, language: str, notes: Notes) -> str:
    """The release's description of the image; with none, what kind of image it is."""
    if ref.description.strip():
        notes.count("captions_from_description")
        return ref.description.strip()
    notes.count("captions_from_image_kind")
    if ref.kind in KINDS:
        english, chinese = KINDS[ref.kind]
    elif ref.kind.startswith("scenery"):
        english, chinese = "a photo of the surroundings", "周围环境的照片"
    else:
        english, chinese = f"an image ({ref.kind.replace('_', ' ')})", f"图片（{ref.kind}）"
    return chinese if language == "zh" else english


def _attach(
    message: Message, ref: Ref, shared: str, sid: str, user: User, copies: Copies, notes: Notes
) -> None:
    """Share `ref` in `message`: the file, its caption, its record."""
    copied = copies.copy(ref.file, f"{sid}, {message.id}", notes)
    if copied is None:
        return
    key, path, sha, width, height = copied
    caption = _caption(ref, user.language, notes)
    message.images.append(path)
    message.captions.append(caption)
    user.shares.setdefault((sid, key), message.id)
    user.first_share.setdefault(key, message.id)
    copies.kinds[ref.kind] += 1
    notes.count(f"images_shared_{shared}")
    user.images.append(
        ImageRecord(
            id=f"{user.pid}-img{len(user.images) + 1:04d}",
            persona_id=user.pid,
            session_id=sid,
            message_id=message.id,
            path=path,
            sha256=sha,
            template="imported",
            language=user.language,
            caption=caption,
            about={"source_path": ref.file[:300], "kind": ref.kind, "shared": shared},
            facts={},
            dom_text="",
            screen={},
            width=width,
            height=height,
        )
    )


def _turn_images(turn: Turn) -> list[str]:
    """The image paths a turn shares (`image_inline`, a string or a list; an older shape put the path in
    `content`)."""
    if "image" not in turn.content_type.lower() and not turn.image_inline:
        return []
    inline = turn.image_inline
    paths = [inline] if isinstance(inline, str) else list(inline or [])
    if not paths and turn.content and PurePosixPath(image_key(turn.content)).suffix.lower() in IMAGE_SUFFIXES:
        paths = [turn.content]
    return [p for p in paths if p.strip()]


def _text(turn: Turn, shared: list[str]) -> str:
    content = turn.content or ""
    return "" if content.strip() in shared else content


def _language(record: dict, profile: dict, notes: Notes, where: str) -> str | None:
    for raw in (record.get("language"), profile.get("language")):
        if isinstance(raw, str) and raw.strip().casefold() in LANGUAGES:
            return LANGUAGES[raw.strip().casefold()]
    nationality = str(profile.get("nationality") or "").strip().casefold()
    if nationality in ("chinese", "china", "中国", "中国人"):
        return "zh"
    notes.problem("languages_inferred", where, f"language {record.get('language')!r:.30}; read from the text")
    return None


def _country(record: dict, profile: dict, language: str, notes: Notes, where: str) -> str:
    """An ISO 3166 code from the record: the profile's country or nationality, else the country of
    `Init_State.location` ("中国, 合肥"); else the language's (noted)."""
    state = record.get("Init_State") if isinstance(record.get("Init_State"), dict) else {}
    location = str(state.get("location") or "")
    said = [profile.get("country"), profile.get("nationality"), re.split(r"[,，]", location)[0]]
    for raw in said:
        text = str(raw or "").strip()
        if re.fullmatch(r"[A-Z]{2}", text):
            return text
        if text.casefold() in COUNTRIES:
            return COUNTRIES[text.casefold()]
    notes.problem("countries_assumed", where, f"no known country in the record; {language} says so")
    return "CN" if language == "zh" else "US"


def user_id(record: Any, hint: Any) -> str | None:
    """The user's id as the source writes it: `Basic_Profile.uuid` (the release), `uuid` (stage 5), or the
    id the file or its wrapper names."""
    if not isinstance(record, dict):
        return None
    profile = record.get("Basic_Profile") if isinstance(record.get("Basic_Profile"), dict) else {}
    for raw in (profile.get("uuid"), record.get("uuid"), record.get("user_id"), hint):
        if isinstance(raw, (str, int)) and not isinstance(raw, bool) and str(raw).strip():
            return str(raw).strip()
    return None


@dataclass
class Planned:
    source: OmniSession
    turns: list[Turn]
    start: datetime
    step: timedelta


def _plan(record: dict, where: str, notes: Notes) -> list[Planned]:
    planned = []
    sessions = record.get("sessions")
    if not isinstance(sessions, list):
        notes.problem("users_skipped", where, "no `sessions` list")
        return []
    for position, raw in enumerate(sessions):
        place = f"{where}, session {position + 1}"
        session = notes.parse(OmniSession, raw, "sessions_skipped", place)
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
        step = STEP if end is None or end <= start else min(STEP, (end - start) / len(turns))
        planned.append(Planned(session, turns, start, step))
    return planned


def _session(
    plan: Planned, sid: str, start: datetime, user: User, copies: Copies, notes: Notes, where: str
) -> Session:
    """One session: its turns as messages, every image it holds shared by a message."""
    refs = {image_key(r.file): r for r in _session_images(plan.source.image_refs, where, notes)}
    shared_in_turns = {image_key(p) for turn in plan.turns for p in _turn_images(turn)}
    album = [ref for key, ref in refs.items() if key not in shared_in_turns]
    messages, texts, shared_here = [], [], set()
    if album:  # the session's images no turn shares: the phone's album shows them, no one says them
        # a second before the first turn, so the turns keep the event's times
        when = start - timedelta(seconds=1)
        holder = Message(
            id=f"{sid}:album", role="system", app=ALBUM[user.language], content="", timestamp=when
        )
        for ref in album:
            _attach(holder, ref, "with_session", sid, user, copies, notes)
        messages.append(holder)
    for n, turn in enumerate(plan.turns):
        if turn.role not in ("user", "assistant"):
            said = f"role {turn.role[:20]!r}; read as user"
            notes.problem("turns_unknown_role", f"{where}, turn {n + 1}", said)
        paths = _turn_images(turn)
        message = Message(
            id=f"{sid}:t{n + 1}",
            role="assistant" if turn.role == "assistant" else "user",
            content=_text(turn, paths),
            timestamp=start + plan.step * n,
        )
        for path in paths:
            key = image_key(path)
            ref = refs.get(key) or Ref(path, _kind_of(key), "")
            _attach(message, ref, "in_turn", sid, user, copies, notes)
            shared_here.add(key)
        if message.content.strip():
            texts.append((message.id, message.content))
        messages.append(message)
    built = imported_session(sid, user.pid, SOURCE, messages)
    built.language = user.language  # the record says it; a few English words do not make it English
    if plan.source.event_id is not None:
        built.event_id = safe_id(str(plan.source.event_id))
        user.by_event.setdefault(str(plan.source.event_id), sid)
    user.by_source.setdefault(str(plan.source.session_id), sid)
    user.texts[sid] = texts
    return built


def import_user(
    record: Any, where: str, hint: Any, copies: Copies, used: dict[str, set[str]], notes: Notes
) -> tuple[Persona, User] | None:
    """A user record (the release's or stage 5's) as a persona with its sessions, or None (noted)."""
    if not isinstance(record, dict):
        notes.problem("users_skipped", where, "expected a JSON object")
        return None
    profile = record.get("Basic_Profile") if isinstance(record.get("Basic_Profile"), dict) else {}
    raw = user_id(record, hint)
    if raw is None:
        raw = f"user-{len(used['persona'])}"
        notes.problem("user_ids_replaced", where, f"no Basic_Profile.uuid; named {raw}")
    pid = notes.unique_id(raw, used["persona"], "duplicate_user_ids", where)
    where = f"{where} ({pid})"
    planned = _plan(record, where, notes)
    if not planned:
        notes.count("users_without_sessions")
        return None
    said = _language(record, profile, notes, where)
    language = said or language_of([t.content or "" for p in planned for t in p.turns])
    user = User(pid=pid, raw=raw, language=language)
    lengths = [len(p.turns) for p in planned]
    for i, start in arrange([p.start for p in planned], lengths, STEP, timedelta(minutes=1), notes):
        plan = planned[i]
        sid = notes.unique_id(str(plan.source.session_id), used["session"], "duplicate_session_ids", where)
        user.sessions.append(_session(plan, sid, start, user, copies, notes, f"{where}, session {sid}"))
    user.sessions.sort(key=lambda s: (s.start, s.id))
    source = {k: v for k, v in record.items() if k != "sessions"}
    source["sessions"] = [
        {k: v for k, v in s.items() if k != "dialogue"} for s in record["sessions"] if isinstance(s, dict)
    ]
    source = _clean(source, notes)
    user.asked = user.sessions[-1].end + ASKED_AFTER
    persona = Persona(
        id=pid,
        name=str(profile.get("name") or record.get("name") or "user"),
        language=language,
        country=_country(record, profile, language, notes, where),
        start=user.sessions[0].start,
        end=user.asked,
        dimensions={},
        source=source,
    )
    return persona, user


@dataclass
class Found:
    """A record of a layout's file: a user, or a question, with the user its file or wrapper names."""

    path: Path
    where: str
    record: Any
    hint: Any


def _hint(layout: Layout, path: Path) -> str | None:
    """The user a per-user file is named after (`stage5_sessions_uuid3.jsonl`, `uuid_3/...`)."""
    found = _UID_IN_NAME.search(path.relative_to(layout.root).as_posix())
    return found.group(1) if found else None


def user_records(layout: Layout, notes: Notes) -> list[Found]:
    """Every user record of the layout's files; the explorer's wrapped `{summary, users: [{user_id,
    records}]}` gives one record per user with all its sessions."""
    out = []
    for path in layout.users:
        for index, record in enumerate(read_json_records(path)):
            where = f"{path.name} record {index + 1}"
            wrapped_users = record.get("users") if isinstance(record, dict) else None
            if isinstance(wrapped_users, list) and "sessions" not in record:
                for n, wrapped in enumerate(wrapped_users):
                    records = wrapped.get("records") if isinstance(wrapped, dict) else None
                    if not isinstance(records, list) or not records or not isinstance(records[0], dict):
                        notes.problem("users_skipped", f"{where}, user {n + 1}", "no `records` list")
                        continue
                    merged = dict(records[0])
                    merged["sessions"] = [
                        s for r in records if isinstance(r, dict) for s in r.get("sessions") or []
                    ]
                    out.append(Found(path, f"{where}, user {n + 1}", merged, wrapped.get("user_id")))
                continue
            out.append(Found(path, where, record, _hint(layout, path)))
    return out


def _clean(value: Any, notes: Notes) -> Any:
    """A source value to keep verbatim, its lone surrogates replaced (they cannot be written as UTF-8)."""
    if isinstance(value, str):
        return notes.clean(value)
    if isinstance(value, list):
        return [_clean(v, notes) for v in value]
    if isinstance(value, dict):
        return {notes.clean(str(k)): _clean(v, notes) for k, v in value.items()}
    return value


# ---------------------------------------------------------------------------------------- questions
def question_records(layout: Layout) -> list[Found]:
    """Every question of the layout's files: a line is a question, or stage 6's `{uuid, questions: [...]}`;
    a per-user file's name (`stage6_questions_uuid3.jsonl`) names the owner of questions that do not."""
    out = []
    for path in layout.questions:
        hint = _hint(layout, path)
        for index, record in enumerate(read_json_records(path)):
            where = f"{path.name} line {index + 1}"
            if isinstance(record, dict) and isinstance(record.get("questions"), list):
                owner = record.get("uuid", record.get("user_id", hint))
                for n, question in enumerate(record["questions"]):
                    out.append(Found(path, f"{where}, question {n + 1}", question, owner))
            else:
                out.append(Found(path, where, record, hint))
    return out


class Users:
    """The imported users, by our id and by the ids the source writes for them and their sessions."""

    def __init__(self, users: list[User]) -> None:
        self.by_raw = {u.raw: u for u in users}
        self.by_session = {source: u for u in users for source in u.by_source}

    def owner(self, qa: OmniQuestion, hint: Any) -> User | None:
        """The user a question belongs to: the one it names, its file's, the one whose sessions it cites,
        the one its id begins with ("<uuid>_q_<n>")."""
        for raw in (qa.uuid, qa.user_id, hint):
            if isinstance(raw, (str, int)) and not isinstance(raw, bool) and str(raw) in self.by_raw:
                return self.by_raw[str(raw)]
        cited = [p.get("session_id") for p in qa.evidence or [] if isinstance(p, dict)]
        for raw in cited + list(qa.source_session_ids or []):
            if isinstance(raw, (str, int)) and str(raw) in self.by_session:
                return self.by_session[str(raw)]
        found = _QUESTION_OWNER.match(str(qa.question_id))
        return self.by_raw.get(found.group(1)) if found else None


def choices(question: str, options: list[Any]) -> tuple[str, list[str]]:
    """A choice question's text and its options: the lines "A. ..." at its end, or the `options` field."""
    lines = question.rstrip().splitlines()
    cut = len(lines)
    while cut and _OPTION.match(lines[cut - 1]):
        cut -= 1
    found = [_OPTION.match(line) for line in lines[cut:]]
    letters = "".join(m.group(1) for m in found if m)
    if len(found) >= 2 and letters == LETTERS[: len(found)]:
        return "\n".join(lines[:cut]).strip() or question, [m.group(2) for m in found if m]
    listed = [re.sub(r"^\s*[A-F]\s*[.)．:：、]\s*", "", str(o)).strip() for o in options if str(o).strip()]
    return question, listed if len(listed) >= 2 else []


def _choice_spec(answer: str, options: list[str]) -> AnswerSpec | None:
    letter = m.group(1) if (m := _ANSWER_LETTER.match(answer)) else None
    if letter is None:
        body = answer.strip()
        letter = next((LETTERS[i] for i, o in enumerate(options) if o == body), None)
    if letter is None or LETTERS.index(letter) >= len(options):
        return None
    return AnswerSpec(kind="choice", value=letter, aliases=[options[LETTERS.index(letter)]])


def normalized(text: str) -> str:
    """Text for matching a quote: NFKC, case-folded, without spaces, punctuation or symbols."""
    return _NOT_WORD.sub("", unicodedata.normalize("NFKC", text).casefold())


Match = tuple[str, Literal["quote", "prefix"]]


def quoted_turn(explanation: str, texts: list[tuple[str, str]]) -> Match | None:
    """The message whose text an explanation quotes: the first that holds it word for word, else the one
    turn that holds its first characters once spaces, punctuation and case are set aside."""
    said = explanation.strip()
    wanted = normalized(said)
    if len(wanted) < QUOTE_MIN:
        return None
    exact = next((mid for mid, text in texts if said in text), None)
    if exact is not None:
        return exact, "quote"
    prefix = wanted[:PREFIX]
    hits = [mid for mid, text in texts if prefix in normalized(text)]
    return (hits[0], "prefix") if len(hits) == 1 else None


@dataclass
class Evidence:
    messages: list[str] = field(default_factory=list)
    sessions: list[str] = field(default_factory=list)
    quotes: list[Quote] = field(default_factory=list)
    unresolved: list[str] = field(default_factory=list)


def _source_session(piece: dict, user: User) -> str | None:
    raw = piece.get("session_id")
    if isinstance(raw, (str, int)) and str(raw) in user.by_source:
        return user.by_source[str(raw)]
    raw = piece.get("event_id")
    if isinstance(raw, (str, int)) and str(raw) in user.by_event:
        return user.by_event[str(raw)]
    return None


def resolve_evidence(pieces: list[Any], user: User, copies: Copies, notes: Notes) -> Evidence:
    """Each piece as the message sharing its image, else the turn its explanation quotes, else its
    session; each way counted, and the pieces that name nothing of the user's kept as written."""
    out = Evidence()
    for piece in pieces:
        session = _source_session(piece, user) if isinstance(piece, dict) else None
        if isinstance(piece, str) and piece in user.by_source:
            session = user.by_source[piece]
        image = piece.get("image_path") if isinstance(piece, dict) else None
        explanation = piece.get("explanation") if isinstance(piece, dict) else None
        if isinstance(image, str) and image.strip():
            key = copies.locate(image, notes) or image_key(image)
            mid = user.shares.get((session, key)) if session else None
            mid = mid or user.first_share.get(key)
            if mid is not None:
                out.messages.append(mid)
                out.sessions.append(mid.rsplit(":", 1)[0])  # "<session>:t<n>" or "<session>:album"
                out.quotes.append(Quote(message_id=mid))
                notes.count("evidence_by_image")
                continue
        if session is not None and isinstance(explanation, str):
            found = quoted_turn(explanation, user.texts.get(session, []))
            if found is not None:
                mid, how = found
                out.messages.append(mid)
                out.sessions.append(session)
                out.quotes.append(Quote(message_id=mid, text=explanation.strip() if how == "quote" else None))
                notes.count(f"evidence_by_{how}")
                continue
        if session is not None:
            out.sessions.append(session)
            notes.count("evidence_session_level")
            continue
        notes.count("evidence_unresolved")
        out.unresolved.append(piece if isinstance(piece, str) else json.dumps(piece, ensure_ascii=False))
    return out


def _first_per_message(quotes: list[Quote]) -> list[Quote]:
    first: dict[str, Quote] = {}
    for quote in quotes:
        first.setdefault(quote.message_id, quote)
    return list(first.values())


def _spec(kind: str, answer: str, options: list[str], year: int) -> AnswerSpec | None:
    if options:
        return _choice_spec(answer, options)
    if kind == "abstention":
        return AnswerSpec(kind="abstain", value="abstain")
    return infer_spec(answer, year)


def import_question(
    found: Found, users: Users, copies: Copies, used: set[str], notes: Notes
) -> QAItem | None:
    """A question as a QA item of its user, or None (noted)."""
    where = found.where
    qa = notes.parse(OmniQuestion, found.record, "qa_skipped", where)
    if qa is None:
        return None
    user = users.owner(qa, found.hint)
    if user is None:
        notes.problem("qa_skipped", where, "belongs to no user: it names none, nor any of their sessions")
        return None
    pid = user.pid
    answer = "; ".join(qa.answer) if isinstance(qa.answer, list) else str(qa.answer)
    kind = question_type(qa.question_type)
    if kind is None:
        notes.problem("unknown_question_type", where, f"{qa.question_type[:40]!r}; imported as single_hop")
    kind = kind or "single_hop"
    source_fields: dict[str, Any] = {
        k: v
        for k, v in {
            "evidence": qa.evidence,
            "image_refs": qa.image_refs,
            "source_session_ids": qa.source_session_ids,
            "source_event_ids": qa.source_event_ids,
        }.items()
        if v
    }
    text, options, form = qa.question, [], "open"
    if qa.question_format == "multiple_choice":
        text, options = choices(qa.question, qa.options or [])
        if not options or _choice_spec(answer, options) is None:
            said = "no A./B. lines that hold the answer; imported as open"
            notes.problem("choice_options_unread", where, said)
            text, options = qa.question, []
        else:  # one right line of six: keme's single choice
            form = "single_choice"
            source_fields.update(question=qa.question, question_format=qa.question_format)
            notes.count("choice_options_read")
    elif qa.question_format not in ("open_ended", "open"):
        notes.problem("unknown_question_form", where, f"{qa.question_format[:30]!r}; imported as open")
        source_fields["question_format"] = qa.question_format
    if not isinstance(qa.answer, str):
        source_fields["answer"] = qa.answer
    when = user.asked
    spec = _spec(kind, answer, options, when.year) or infer_spec(answer, when.year)
    evidence = resolve_evidence(qa.evidence or [], user, copies, notes)
    if not qa.evidence and kind != "abstention":
        cited = [user.by_source[str(s)] for s in qa.source_session_ids or [] if str(s) in user.by_source]
        evidence.sessions += cited
        notes.count("evidence_from_source_sessions", len(cited))
    if qa.difficulty not in ("easy", "medium", "hard"):
        notes.count("difficulty_read_as_medium")
    qid = notes.unique_id(str(qa.question_id), used, "duplicate_question_ids", where)
    messages = list(dict.fromkeys(evidence.messages))
    return QAItem(
        id=qid,
        persona_id=pid,
        question=text,
        answer=answer,
        spec=spec,
        type=kind,
        subtype=f"{SOURCE}.{qa.question_type or 'unknown'}",
        evidence=messages,
        evidence_sessions=list(dict.fromkeys(evidence.sessions)),
        asked_at=when,
        hops=2 if kind == "multi_hop" else 1,
        difficulty=qa.difficulty if qa.difficulty in ("easy", "medium", "hard") else "medium",
        language=user.language,
        format=form,
        options=options,
        node=pid,
        proof=ImportedProof(
            op="imported",
            quotes=_first_per_message(evidence.quotes),
            args=ImportedArgs(
                source=SOURCE,
                question_type=qa.question_type or None,
                source_question_id=notes.renamed.get(qid),
                unresolved_evidence=evidence.unresolved or None,
                source_fields=source_fields or None,
            ),
        ),
    )


# -------------------------------------------------------------------------------------------- entry
def import_mobilemem_omni(
    root: Path, out: Path, force: bool = False, limits: Limits | None = None
) -> dict[str, Any]:
    """Import a MobileMem-Omni folder into `out`: the release (data.jsonl, questions.jsonl, image.zip) or
    the pipeline's stage 5 and stage 6 files, whichever it holds."""
    layout = find_layout(root)
    archive = Archive(layout.root, Limits.from_env() if limits is None else limits)
    try:
        staging = tempfile.TemporaryDirectory(prefix=".keme-images-", dir=_existing(out.parent))
    except OSError as exc:
        raise KemeError(f"{out}: cannot stage the images beside it ({exc.strerror or exc})") from exc
    try:
        with staging as stage:
            return _import(layout, archive, Path(stage), out, force)
    finally:
        if archive.zip is not None:
            archive.zip.close()


def _existing(directory: Path) -> Path:
    """`directory`, or its nearest ancestor that exists (the images are staged on the output's disk)."""
    while not directory.is_dir() and directory != directory.parent:
        directory = directory.parent
    return directory


def _import(layout: Layout, archive: Archive, stage: Path, out: Path, force: bool) -> dict[str, Any]:
    notes = Notes()
    copies = Copies(archive, stage)
    used: dict[str, set[str]] = defaultdict(set)
    personas, users = [], {}
    read_from: dict[str, Path] = {}  # a user or question id -> the file it was first read from
    for found in user_records(layout, notes):
        raw = user_id(found.record, found.hint)
        if raw is not None and read_from.setdefault(f"user {raw}", found.path) != found.path:
            notes.problem("users_repeated_in_files", found.where, f"user {raw} was read from another file")
            continue
        user = import_user(found.record, found.where, found.hint, copies, used, notes)
        if user is not None:
            personas.append(user[0])
            users[user[0].id] = user[1]
    if not personas:
        first = "; ".join(notes.problems[:3]) or "no user has a session with turns"
        raise KemeError(f"{layout.users[0]}: nothing usable: {first}")
    known = Users(list(users.values()))
    items = []
    for found in question_records(layout):
        raw = found.record.get("question_id") if isinstance(found.record, dict) else None
        if raw is not None and read_from.setdefault(f"question {raw}", found.path) != found.path:
            said = f"{raw!r:.40} was read from another file"
            notes.problem("questions_repeated_in_files", found.where, said)
            continue
        item = import_question(found, known, copies, used["qa"], notes)
        if item is not None:
            items.append(item)
    if not items:
        first = "; ".join(notes.problems[-3:]) or "the files hold no question"
        raise KemeError(f"{layout.questions[0]}: no usable question, so nothing to evaluate: {first}")
    sessions = [s for u in users.values() for s in u.sessions]
    records = [r for u in users.values() for r in u.images]
    stats = {
        "layout": layout.kind,
        "personas": len(personas),
        "sessions": len(sessions),
        "messages": sum(len(s.messages) for s in sessions),
        "qa": len(items),
        "images": len(records),
        "image_files": len(copies.blobs),
        "images_by_kind": dict(sorted(copies.kinds.items())),
        "qa_by_format": dict(sorted(Counter(q.format for q in items).items())),
        **notes.stats(),
    }
    written = write_dataset(
        out, SOURCE, personas, sessions, items, stats, force=force, images=records, blobs=copies.blobs
    )
    return dict(written.stats)
