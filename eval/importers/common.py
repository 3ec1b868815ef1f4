"""Shared pieces: reading benchmark files with precise errors, inferring answer specs, writing a dataset."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

from keme.dataset.io import write_jsonl
from keme.dataset.manifest import FileEntry, Manifest, write_manifest
from keme.errors import KemeError
from keme.models import AnswerSpec, Persona, QAItem, Session
from keme.qa.normalize import dates_in

_NUMBER = re.compile(r"^\s*-?\d+(?:\.\d+)?\s*$")


def read_json_records(path: Path) -> list[dict[str, Any]]:
    """A JSON array, or JSON lines; a corrupt record names file and line."""
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as exc:
        raise KemeError(f"{path}: cannot read ({exc.strerror})") from exc
    if text.lstrip().startswith("["):
        try:
            data = json.loads(text)
        except json.JSONDecodeError as exc:
            raise KemeError(f"{path}:{exc.lineno}:{exc.colno}: not valid JSON ({exc.msg})") from exc
        if not all(isinstance(r, dict) for r in data):
            raise KemeError(f"{path}: expected a list of objects")
        return data
    records = []
    for number, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        try:
            record = json.loads(line)
        except json.JSONDecodeError as exc:
            raise KemeError(f"{path}:{number}: not valid JSON ({exc.msg})") from exc
        if not isinstance(record, dict):
            raise KemeError(f"{path}:{number}: expected a JSON object")
        records.append(record)
    return records


def infer_spec(answer: str, year: int) -> AnswerSpec:
    """A rule-judgeable spec for a free-text gold answer: a bare number, a date, or the text itself."""
    if _NUMBER.match(answer):
        return AnswerSpec(kind="number", value=str(answer).strip())
    found = dates_in(answer, year)
    if len(found) == 1 and len(answer) <= 40:
        return AnswerSpec(kind="date", value=found[0].isoformat(), aliases=[answer])
    return AnswerSpec(kind="entity", value=answer)


def write_dataset(out: Path, name: str, personas: list[Persona], sessions: list[Session], qa: list[QAItem],
                  stats: dict[str, Any]) -> Manifest:
    out.mkdir(parents=True, exist_ok=True)
    files = {}
    for filename, records in (("personas.jsonl", personas), ("sessions.jsonl", sessions), ("qa.jsonl", qa)):
        digest, count, size = write_jsonl(out / filename, records)
        files[filename] = FileEntry(sha256=digest, records=count, bytes=size)
    manifest = Manifest(name=name, source=name, files=files, stats=stats)
    write_manifest(out, manifest)
    return manifest
