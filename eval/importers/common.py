"""Shared pieces of the importers: reading a benchmark file, noting what cannot be used, writing the dataset.

A source file is read with precise errors (file:line for bad JSON and bad
UTF-8); each record is then checked against a small pydantic model of its
source format, and a record that does not fit is skipped and noted with its
position ("sample 3 (conv-26), session_2, turn 5: dia_id: ..."). `Notes`
counts every such case; the counts land in the manifest (`stats.import`) and
the first problems in `stats.import_problems`. Nothing usable left: an error.
"""

from __future__ import annotations

import json
import re
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from itertools import pairwise
from pathlib import Path
from typing import Annotated, Any, TypeVar

from pydantic import AfterValidator, BaseModel, ValidationError, ValidationInfo
from pydantic_core import PydanticSerializationError

from keme.dataset import PART_FILES, Dataset
from keme.dataset.commit import recover
from keme.dataset.findings import finding_counts, flag_items
from keme.dataset.io import text_lines
from keme.dataset.limits import Limits, check
from keme.dataset.lock import directory_lock
from keme.dataset.manifest import MANIFEST, Manifest
from keme.dataset.paths import PathEscape, inside
from keme.errors import KemeError
from keme.models import AnswerSpec, ImageRecord, Message, Persona, QAItem, Session, safe_id
from keme.text.dates import dates_in
from keme.text.tokens import han_count

_Record = TypeVar("_Record", bound=BaseModel)
_NUMBER = re.compile(r"^\s*-?\d+(?:\.\d+)?\s*$")
_SURROGATE = re.compile(r"[\ud800-\udfff]")
MAX_PROBLEMS = 100  # kept in the manifest; the counts are always complete
EARLIEST, LATEST = 1900, 2200  # years a trajectory may live in (leaves room for timedelta arithmetic)


def _clean(value: str, info: ValidationInfo) -> str:
    return info.context.clean(value) if isinstance(info.context, Notes) else _SURROGATE.sub("\ufffd", value)


Text = Annotated[str, AfterValidator(_clean)]
"""A string field of a source record: must be a JSON string; lone surrogates are replaced and counted."""


@dataclass
class Notes:
    """What an import could not use, counted by kind, with the first problems by position."""

    counts: Counter = field(default_factory=Counter)
    problems: list[str] = field(default_factory=list)
    renamed: dict[str, str] = field(default_factory=dict)

    def clean(self, text: str) -> str:
        """Lone surrogates (from `\\ud800` escapes) cannot be written as UTF-8: replaced by U+FFFD and
        counted."""
        if _SURROGATE.search(text) is None:
            return text
        self.count("lone_surrogates_replaced")
        return _SURROGATE.sub("\ufffd", text)

    def count(self, kind: str, n: int = 1) -> None:
        if n:
            self.counts[kind] += n

    def problem(self, kind: str, where: str, why: str) -> None:
        self.count(kind)
        if len(self.problems) < MAX_PROBLEMS:
            self.problems.append(f"{where}: {why}")

    def parse(self, model: type[BaseModel], record: Any, kind: str, where: str) -> Any:
        """`record` as `model`, or None (noted under `kind`) when it does not fit."""
        if not isinstance(record, dict):
            self.problem(kind, where, f"expected a JSON object, found {_json_type(record)}")
            return None
        try:
            return model.model_validate(record, context=self)
        except ValidationError as exc:
            self.problem(kind, where, describe(exc))
            return None

    def unique_id(self, raw: str, used: set[str], kind: str, where: str, prefix: str = "") -> str:
        """A safe id for the source id `raw`, not in `used`; renames are counted and remembered (prefix + new
        -> original)."""
        new = safe_id(raw)
        if new != raw:
            self.problem("ids_renamed", where, f"id {raw[:60]!r} is not a safe file name; renamed {new!r}")
        number = 1
        while new in used:
            number += 1
            if number == 2:
                self.problem(kind, where, f"id {raw[:60]!r} occurs again; renamed")
            new = safe_id(f"{raw}#{number}")
        used.add(new)
        if new != raw:
            self.renamed[prefix + new] = _SURROGATE.sub("\ufffd", raw)
        return new

    def stats(self) -> dict[str, Any]:
        out: dict[str, Any] = {"import": dict(sorted(self.counts.items()))}
        if self.problems:
            out["import_problems"] = list(self.problems)
        if self.renamed:
            out["renamed_ids"] = dict(sorted(self.renamed.items()))
        return out


def _json_type(value: Any) -> str:
    names = {
        dict: "an object",
        list: "an array",
        str: "a string",
        bool: "a boolean",
        int: "a number",
        float: "a number",
        type(None): "null",
    }
    return names.get(type(value), type(value).__name__)


def describe(exc: ValidationError, limit: int = 3) -> str:
    """A pydantic error as one line: 'dia_id: Input should be a valid string (got a number)'."""
    parts = []
    for error in exc.errors()[:limit]:
        loc = ".".join(str(p) for p in error["loc"]) or "record"
        got = "" if error["type"] == "missing" else f" (got {_json_type(error.get('input'))})"
        parts.append(f"{loc}: {error['msg']}{got}")
    more = len(exc.errors()) - limit
    return "; ".join(parts) + (f"; and {more} more" if more > 0 else "")


def _decode(path: Path, data: bytes) -> str:
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        line = data.count(b"\n", 0, exc.start) + 1
        raise KemeError(
            f"{path}:{line}: not valid UTF-8 (byte 0x{data[exc.start]:02x} at offset {exc.start}); "
            f"convert the file to UTF-8 (e.g. iconv -f <encoding> -t utf-8)"
        ) from exc


def _loads(path: Path, text: str, line: int | None = None) -> Any:
    where = f"{path}:{line}" if line is not None else str(path)
    try:
        return json.loads(text)
    except json.JSONDecodeError as exc:
        at = f"{path}:{line}" if line is not None else f"{path}:{exc.lineno}:{exc.colno}"
        raise KemeError(f"{at}: not valid JSON ({exc.msg})") from exc
    except RecursionError as exc:
        raise KemeError(
            f"{where}: JSON nested too deeply to read (more than ~1000 levels); this is not a benchmark file"
        ) from exc
    except ValueError as exc:  # e.g. an integer literal with more than 4300 digits
        raise KemeError(f"{where}: unreadable JSON value ({exc})") from exc


def read_json_records(path: Path) -> list[Any]:
    """The records of a JSON array, a single JSON object or JSON lines; bad JSON or UTF-8 names file and line.

    Records are returned as parsed: the importer checks each one against its
    format and notes the ones it cannot use.
    """
    limits = Limits.from_env()
    try:
        check(f"{path}: bytes", path.stat().st_size, "file_bytes", limits)  # before it is read whole
        with path.open("rb") as handle:  # at most the limit, whatever stat said (a device has no size)
            data = handle.read(limits.file_bytes + 1)
        check(f"{path}: bytes", len(data), "file_bytes", limits)
    except OSError as exc:
        raise KemeError(f"{path}: cannot read ({exc.strerror or exc})") from exc
    text = _decode(path, data)
    stripped = text.lstrip()
    if not stripped:
        raise KemeError(f"{path}: the file is empty (expected a JSON array of records, or JSON lines)")
    if stripped.startswith("["):
        records = _loads(path, text)
        if not isinstance(records, list):  # pragma: no cover - a text starting with '[' parses as a list
            raise KemeError(f"{path}: expected a JSON array")
        return records
    if stripped.startswith("{"):
        try:
            return [json.loads(text)]
        except (ValueError, RecursionError):
            pass  # not one object: JSON lines, checked line by line below
    records = []
    for number, line in enumerate(text_lines(text), start=1):
        if line.strip():
            records.append(_loads(path, line, number))
    if not any(isinstance(r, dict) for r in records):
        raise KemeError(
            f"{path}: expected a JSON array of objects or JSON lines of objects, found "
            f"{_json_type(records[0])}"
        )
    return records


def in_range(when: datetime) -> bool:
    return EARLIEST <= when.year <= LATEST


def source_date(
    raw: Any, where: str, notes: Notes, parse: Callable[[str], datetime], expected: str | None = None
) -> datetime | None:
    """A date of a source record, or None with the reason noted (missing, not text, unrecognised, out of
    range)."""
    if not isinstance(raw, str):
        notes.problem("unparsed_dates", where, "missing" if raw is None else f"not a string ({raw!r:.40})")
        return None
    try:
        when = parse(raw)
    except ValueError:
        notes.problem(
            "unparsed_dates",
            where,
            f"unrecognised date {raw[:60]!r}" + (f" (expected {expected})" if expected else ""),
        )
        return None
    if not in_range(when):
        notes.problem("unparsed_dates", where, f"year {when.year} is out of range")
        return None
    return when


def written_as(raw: Any, value: datetime, parse: Callable[[str], datetime]) -> bool:
    """Whether a date as the source wrote it still says the time keme holds (to the minute): then an export
    writes it back as it was written."""
    if not isinstance(raw, str):
        return False
    try:
        return parse(raw) == value.replace(second=0, microsecond=0)
    except ValueError:
        return False


def arrange(
    starts: list[datetime], lengths: list[int], step: timedelta, gap: timedelta, notes: Notes
) -> list[tuple[int, datetime]]:
    """Session order and start times: by start (stable), a session that would overlap the previous one moved
    after it.

    Returns (original position, start) in time order; counts `sessions_out_of_order` and `sessions_moved`.
    """
    notes.count("sessions_out_of_order", sum(1 for a, b in pairwise(starts) if b < a))
    order = sorted(range(len(starts)), key=lambda i: starts[i])
    placed: list[tuple[int, datetime]] = []
    last_end: datetime | None = None
    for i in order:
        start = starts[i]
        if last_end is not None and start <= last_end:
            start = last_end + gap
            notes.count("sessions_moved")
        placed.append((i, start))
        last_end = start + step * max(lengths[i] - 1, 0)
    return placed


def language_of(texts: list[str]) -> str:
    """ "zh" for text written mostly in Chinese (the field's formats carry no language; ours shape what a
    distractor or a judge says in it), else "en"."""
    text = "".join(texts)
    letters = sum(c.isalpha() for c in text)
    return "zh" if letters and han_count(text) * 2 > letters else "en"


def imported_session(session_id: str, persona_id: str, source: str, messages: list[Message]) -> Session:
    """A source's conversation session as ours: its own event, spanning its first to its last message."""
    return Session(
        id=session_id,
        persona_id=persona_id,
        event_id=session_id,
        language=language_of([m.content for m in messages]),
        pattern=source,
        start=messages[0].timestamp,
        end=messages[-1].timestamp,
        messages=messages,
    )


YES_NO = {"yes": "yes", "no": "no", "是": "yes", "否": "no"}


def infer_spec(answer: str, year: int) -> AnswerSpec:
    """A rule-judgeable spec for a free-text gold answer: yes or no, a bare number, a date, or the text
    itself."""
    word = answer.strip().casefold().rstrip(".。!！")
    if word in YES_NO:
        return AnswerSpec(kind="yes_no", value=YES_NO[word], aliases=[answer])
    if _NUMBER.match(answer):
        return AnswerSpec(kind="number", value=str(answer).strip())
    found = dates_in(answer, year)
    if len(found) == 1 and len(answer) <= 40:
        return AnswerSpec(kind="date", value=found[0].isoformat(), aliases=[answer])
    return AnswerSpec(kind="entity", value=answer)


def _visible(directory: Path) -> list[Path]:
    """Entries that make a directory "not empty"; hidden ones (a lock file, .git) do not count and are never
    touched."""
    return [entry for entry in directory.iterdir() if not entry.name.startswith(".")]


def prepare_output(out: Path, force: bool) -> None:
    """Check that a dataset may be written to `out` (the caller holds its lock).

    Refused: a file; a non-empty directory that is not a keme dataset (even
    with --force); an existing dataset without --force; a dataset whose
    manifest lists files outside it, or that holds record files its manifest
    does not list (they would be read as part of the new dataset). A write a
    killed command left unfinished is finished or discarded first.
    """
    if out.exists() and not out.is_dir():
        raise KemeError(f"{out} exists and is not a directory; choose a directory for the dataset")
    if not out.exists():
        return
    recover(out)
    if not _visible(out):
        return
    if not (out / MANIFEST).is_file():
        raise KemeError(
            f"{out} is not empty and holds no keme dataset (no {MANIFEST}); refusing to write into it "
            f"(choose a new or empty directory)"
        )
    if not force:
        raise KemeError(
            f"{out} already holds a keme dataset; pass --force to replace it, or choose another --out"
        )
    owned = _owned_files(out)
    strays = [name for name in PART_FILES if (out / name).exists() and inside(out, name) not in owned]
    if strays:
        raise KemeError(
            f"{out} holds {', '.join(strays)}, which its manifest does not list; refusing to replace "
            f"files the dataset does not own (move them away or choose another --out)"
        )


def _owned_files(out: Path) -> list[Path]:
    """The files the existing dataset in `out` owns: those its manifest lists (inside `out`), and the
    manifest."""
    try:
        listed = json.loads((out / MANIFEST).read_text(encoding="utf-8")).get("files", {})
    except (OSError, ValueError, AttributeError) as exc:
        raise KemeError(
            f"{out / MANIFEST}: unreadable manifest ({exc}); remove the directory yourself "
            f"or choose another --out"
        ) from exc
    owned = []
    for name in listed if isinstance(listed, dict) else []:
        try:
            owned.append(inside(out, name))
        except PathEscape as exc:
            raise KemeError(
                f"{out / MANIFEST}: lists {name!r}, a file outside the dataset; refusing to replace "
                f"this dataset (remove it yourself)"
            ) from exc
    return owned + [inside(out, MANIFEST)]


def _scrubbed(value: Any, notes: Notes) -> Any:
    """`value` (JSON-like) with lone surrogates, in keys and strings, cleaned as a `Text` field is."""
    if isinstance(value, str):
        return notes.clean(value)
    if isinstance(value, dict):
        return {_scrubbed(k, notes): _scrubbed(v, notes) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_scrubbed(v, notes) for v in value]
    return value


def _writable(record: _Record, notes: Notes) -> _Record:
    """`record` as UTF-8 can hold it. Source values kept verbatim (a persona's `source`, a question's
    `source_fields`, unresolved evidence) bypass the `Text` fields' cleaning; this catches them all."""
    try:
        record.model_dump_json()
        return record
    except PydanticSerializationError:
        return type(record).model_validate(_scrubbed(record.model_dump(mode="json"), notes))


def write_dataset(
    out: Path,
    name: str,
    personas: list[Persona],
    sessions: list[Session],
    qa: list[QAItem],
    stats: dict[str, Any],
    force: bool = False,
    images: list[ImageRecord] | None = None,
    blobs: dict[str, bytes | Path] | None = None,
) -> Manifest:
    """Write the imported dataset into `out` as one change (keme.dataset.commit), holding its lock.

    `out` must be new, empty, or (with `force`) an existing keme dataset, whose
    own files the new one replaces (those it does not list are removed); nothing
    else in `out` is touched. Each question is flagged with its source findings
    (keme.dataset.findings), counted under `stats.source_findings`.
    """
    if out.exists() and not out.is_dir():
        prepare_output(out, force)  # names what `out` is
    notes = Notes()
    personas, sessions, qa, images = (
        [_writable(record, notes) for record in records] for records in (personas, sessions, qa, images or [])
    )
    if notes.counts:  # a source value kept as published (a persona's source, a question's fields) held one
        counts = Counter(stats.get("import", {})) + notes.counts
        stats = {**stats, "import": dict(sorted(counts.items()))}
    qa = flag_items(qa, sessions)
    stats = {**stats, "source_findings": finding_counts(qa)}
    with directory_lock(out, f"keme import {name}"):
        prepare_output(out, force)
        dataset = Dataset(Manifest(name=name, source=name, files={}, stats=stats))
        dataset.personas, dataset.sessions, dataset.qa = personas, sessions, qa
        if images:
            dataset.images = images
            dataset.blobs = dict(blobs or {})
        return dataset.write(out)


def export_problems(data: Any) -> list[str]:
    """What would make the export lose or misplace records: ids that do not resolve within their persona."""
    problems = []
    personas: set[str] = set()
    for persona in data.personas:
        if persona.id in personas:
            problems.append(f"persona {persona.id} occurs twice in personas.jsonl")
        personas.add(persona.id)
    owner: dict[str, str] = {}
    for session in data.sessions:
        if session.persona_id not in personas:
            problems.append(f"session {session.id} belongs to unknown persona {session.persona_id}")
        for message in session.messages:
            if message.id in owner:
                problems.append(f"message id {message.id} occurs twice")
            owner[message.id] = session.persona_id
    for item in data.qa:
        if item.persona_id not in personas:
            problems.append(f"question {item.id} belongs to unknown persona {item.persona_id}")
        missing = [m for m in item.evidence if owner.get(m) != item.persona_id]
        if missing:
            problems.append(
                f"question {item.id}: evidence {missing[:3]} is not a message of persona {item.persona_id}"
            )
    return problems


def refuse_broken(data: Any) -> None:
    """An export of a dataset whose ids do not resolve would drop or misplace records without a word."""
    problems = export_problems(data)
    if problems:
        more = f" (and {len(problems) - 5} more)" if len(problems) > 5 else ""
        raise KemeError(
            f"{data.root}: cannot export: "
            + "; ".join(problems[:5])
            + more
            + f"; run `keme validate {data.root}` and fix the dataset"
        )


Found = tuple[Persona, list[Session], list[QAItem]]


def import_file(
    path: Path,
    out: Path,
    name: str,
    read_one: Callable[[Any, int, Notes], Found | None],
    nothing: str,
    force: bool = False,
    conventions: dict[str, Any] | None = None,
) -> dict[str, Any]:
    """Import a file of records (one persona each, read by `read_one`) into the dataset directory `out`;
    a file with nothing usable is refused with the first problems, or `nothing` when there were none."""
    records = read_json_records(path)
    notes = Notes()
    personas, sessions, items = [], [], []
    for index, record in enumerate(records):
        found = read_one(record, index, notes)
        if found is not None:
            personas.append(found[0])
            sessions += found[1]
            items += found[2]
    if not personas:
        first = "; ".join(notes.problems[:3]) or nothing
        raise KemeError(f"{path}: nothing usable in {len(records)} record(s): {first}")
    stats = {
        "personas": len(personas),
        "sessions": len(sessions),
        "messages": sum(len(s.messages) for s in sessions),
        "qa": len(items),
        **notes.stats(),
    }
    if conventions:
        stats["conventions"] = conventions
    return dict(write_dataset(out, name, personas, sessions, items, stats, force=force).stats)
