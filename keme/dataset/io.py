"""Atomic writes and line-checked JSONL reading."""

from __future__ import annotations

import hashlib
import json
import os
import tempfile
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import TypeVar

from pydantic import BaseModel, ValidationError

from keme.errors import KemeError

M = TypeVar("M", bound=BaseModel)


def atomic_write_bytes(path: Path, data: bytes) -> None:
    """Write via a temp file in the same directory, fsync, then rename: readers never see half a file."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def atomic_write_text(path: Path, text: str) -> None:
    atomic_write_bytes(path, text.encode("utf-8"))


def dump_json(data: object) -> str:
    """Canonical JSON for files we hash: sorted keys, UTF-8, fixed indentation."""
    return json.dumps(data, ensure_ascii=False, sort_keys=True, indent=2) + "\n"


def jsonl_bytes(records: Iterable[BaseModel]) -> tuple[bytes, int]:
    lines = [record.model_dump_json() for record in records]
    return ("".join(line + "\n" for line in lines)).encode("utf-8"), len(lines)


def write_jsonl(path: Path, records: Iterable[BaseModel]) -> tuple[str, int, int]:
    """Write records atomically; returns (sha256, record count, bytes)."""
    data, count = jsonl_bytes(records)
    atomic_write_bytes(path, data)
    return hashlib.sha256(data).hexdigest(), count, len(data)


def iter_jsonl(path: Path, model: type[M]) -> Iterator[M]:
    """Yield validated records; a bad line raises KemeError naming file and line."""
    try:
        handle = path.open(encoding="utf-8")
    except OSError as exc:
        raise KemeError(f"{path}: cannot read ({exc.strerror})") from exc
    with handle:
        for number, line in enumerate(handle, start=1):
            if not line.strip():
                continue
            try:
                yield model.model_validate_json(line)
            except ValidationError as exc:
                first = exc.errors()[0]
                loc = ".".join(str(p) for p in first["loc"])
                if first["type"] == "json_invalid":
                    raise KemeError(f"{path}:{number}: not valid JSON ({first['msg']})") from exc
                raise KemeError(f"{path}:{number}: invalid {model.__name__}: {loc}: {first['msg']}") from exc


def read_jsonl(path: Path, model: type[M]) -> list[M]:
    return list(iter_jsonl(path, model))


def sha256_file(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as handle:
        for chunk in iter(lambda: handle.read(1 << 20), b""):
            digest.update(chunk)
    return digest.hexdigest()
