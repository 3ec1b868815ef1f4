"""Atomic writes and line-checked JSONL reading."""

from __future__ import annotations

import hashlib
import io
import json
import os
import tempfile
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import TypeVar

from pydantic import BaseModel, ValidationError

from keme.errors import KemeError, write_failed

M = TypeVar("M", bound=BaseModel)


def _read_umask() -> int:
    """The process's umask (read once, at import: reading it means setting it, which is not thread-safe)."""
    mask = os.umask(0o022)
    os.umask(mask)
    return mask


_UMASK = _read_umask()


def atomic_write_chunks(path: Path, chunks: Iterable[bytes | str]) -> None:
    """Write `chunks` (str as UTF-8) via a temp file in the same directory, fsync, then rename: readers
    never see half a file, and a large file never has to be whole in memory.

    The file gets the mode any new file gets here (0666 less the umask): mkstemp's private 0600 would make
    a dataset or an export unreadable to everyone but its writer."""
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    except OSError as exc:
        raise write_failed(path, exc) from exc
    try:
        os.fchmod(fd, 0o666 & ~_UMASK)
        with os.fdopen(fd, "wb") as handle:
            for chunk in chunks:
                handle.write(chunk.encode("utf-8") if isinstance(chunk, str) else chunk)
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(tmp, path)
    except BaseException as exc:
        Path(tmp).unlink(missing_ok=True)
        if isinstance(exc, OSError) and not isinstance(exc, KemeError):
            raise write_failed(path, exc) from exc  # a full disk, a size limit: named, not a crash
        raise


def atomic_write_bytes(path: Path, data: bytes) -> None:
    """`data` into `path` atomically (atomic_write_chunks)."""
    atomic_write_chunks(path, [data])


def atomic_copy(path: Path, source: Path) -> None:
    """The bytes of the file `source` into `path` atomically, a chunk at a time."""
    atomic_write_chunks(path, file_chunks(source))


def file_chunks(source: Path, size: int = 1 << 20) -> Iterator[bytes]:
    with source.open("rb") as handle:
        while chunk := handle.read(size):
            yield chunk


def json_array_chunks(items: Iterable[object], indent: int | None = None) -> Iterator[str]:
    """A JSON array of `items` (UTF-8 kept, as json.dumps(ensure_ascii=False) writes it) as text chunks,
    one item encoded at a time: an export's memory stays that of its largest item, not of the file."""
    encoder = json.JSONEncoder(ensure_ascii=False, indent=indent)
    inner = "" if indent is None else "\n" + " " * indent
    first = True
    for item in items:
        yield ("[" if first else ("," if indent is not None else ", ")) + inner
        first = False
        for chunk in encoder.iterencode(item):
            yield chunk.replace("\n", inner) if indent is not None else chunk
    yield "[]" if first else ("" if indent is None else "\n") + "]"


def atomic_write_text(path: Path, text: str) -> None:
    atomic_write_bytes(path, text.encode("utf-8"))


def dump_json(data: object) -> str:
    """Canonical JSON for files we hash: sorted keys, UTF-8, fixed indentation."""
    return json.dumps(data, ensure_ascii=False, sort_keys=True, indent=2) + "\n"


def jsonl_bytes(records: Iterable[BaseModel]) -> tuple[bytes, int]:
    lines = [record.model_dump_json() for record in records]
    return ("".join(line + "\n" for line in lines)).encode("utf-8"), len(lines)


@dataclass(frozen=True)
class LineError:
    """One line of a JSONL file that cannot be used: where it is and what is wrong with it."""

    path: Path
    line: int
    message: str

    def __str__(self) -> str:
        return f"{self.path}:{self.line}: {self.message}"


class _LineFault(KemeError):
    def __init__(self, path: Path, line: int, message: str):
        self.fault = LineError(path, line, message)
        super().__init__(str(self.fault))


def _unreadable(path: Path, exc: OSError) -> KemeError:
    return KemeError(
        f"{path}: cannot read ({exc.strerror or exc}); restore the file or re-create the dataset"
    )


def text_lines(text: str) -> list[str]:
    """The lines of a JSON Lines text: split at \\n only (and a \\r before it dropped). `str.splitlines` also
    splits at U+2028, U+2029, \\x1c-\\x1e, \\x85 and \\x0b, which JSON allows raw inside a string."""
    lines = text.split("\n")
    if lines and lines[-1] == "":
        lines.pop()
    return [line.removesuffix("\r") for line in lines]


def _lines(path: Path) -> Iterator[tuple[int, bytes]]:
    """Numbered raw lines; bytes, so that a bad byte is reported at its own line, not as a decoder crash."""
    try:
        handle = path.open("rb")
    except OSError as exc:
        raise _unreadable(path, exc) from exc
    with handle:
        try:
            yield from enumerate(handle, start=1)
        except OSError as exc:
            raise _unreadable(path, exc) from exc


def read_bytes(path: Path) -> bytes:
    """A whole file, or a KemeError naming it (the loader reads each file once: to hash it and to parse
    it)."""
    try:
        return path.read_bytes()
    except OSError as exc:
        raise _unreadable(path, exc) from exc


def nonblank_lines(data: bytes) -> int:
    """Lines with something on them: what the manifest's `records` counts, whatever the encoding."""
    return sum(1 for raw in io.BytesIO(data) if raw.strip())


def _describe(error: dict) -> str:
    loc = ".".join(str(p) for p in error["loc"])
    return f"{loc}: {error['msg']}" if loc else error["msg"]


def _parse(path: Path, number: int, raw: bytes, model: type[M]) -> M:
    """One record from one line, or a LineError (raised) saying what is wrong and how to fix it."""
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise _LineFault(
            path,
            number,
            f"not valid UTF-8 (byte 0x{raw[exc.start]:02x} at column {exc.start + 1}); "
            "the file was damaged or saved in another encoding: restore it, re-create "
            "the dataset, or re-encode the file as UTF-8",
        ) from exc
    try:
        return model.model_validate_json(text)
    except ValidationError as exc:
        errors = exc.errors()
        first = errors[0]
        if first["type"] == "json_invalid":
            hint = " (the line looks cut off: was the file truncated?)" if "EOF" in first["msg"] else ""
            raise _LineFault(path, number, f"not valid JSON ({first['msg']}){hint}") from exc
        if first["type"] == "model_type":
            raise _LineFault(
                path,
                number,
                f"expected a JSON object (a {model.__name__} record), got {type(first['input']).__name__}",
            ) from exc
        more = f" (and {len(errors) - 1} more)" if len(errors) > 1 else ""
        raise _LineFault(path, number, f"invalid {model.__name__}: {_describe(first)}{more}") from exc


def iter_jsonl(path: Path, model: type[M]) -> Iterator[M]:
    """Yield validated records; the first bad line raises KemeError naming file and line."""
    for number, raw in _lines(path):
        if raw.strip():
            yield _parse(path, number, raw, model)


def read_jsonl(path: Path, model: type[M]) -> list[M]:
    return list(iter_jsonl(path, model))


def scan_records(path: Path, data: bytes, model: type[M]) -> tuple[list[M], list[LineError]]:
    """Every record of `data` (the bytes of `path`) that loads, and every line that does not."""
    records: list[M] = []
    faults: list[LineError] = []
    for number, raw in enumerate(io.BytesIO(data), start=1):
        if not raw.strip():
            continue
        try:
            records.append(_parse(path, number, raw, model))
        except _LineFault as exc:
            faults.append(exc.fault)
    return records, faults


def count_records(path: Path) -> int:
    """Non-blank lines, read as bytes (what the manifest's `records` counts, whatever the encoding)."""
    return sum(1 for _, raw in _lines(path) if raw.strip())


def sha256_file(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as handle:
        for chunk in iter(lambda: handle.read(1 << 20), b""):
            digest.update(chunk)
    return digest.hexdigest()
