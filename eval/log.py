"""The run's append-only JSONL logs (ingest, retrieval, judge), safe to read back after a kill."""

from __future__ import annotations

import os
import time
from pathlib import Path
from typing import Any

import orjson

from eval.errors import RunError
from keme.errors import KemeError, write_failed

SYNC_EVERY = 1.0  # seconds between fsyncs of a log being appended to
# datetimes and dataclasses go to `_plain`, so a line reads as json.dumps(default=str) wrote it
_LINE = orjson.OPT_PASSTHROUGH_DATETIME | orjson.OPT_PASSTHROUGH_DATACLASS | orjson.OPT_APPEND_NEWLINE


def _plain(value: Any) -> Any:
    """A value beyond JSON's types: a number as a number (numpy's scalars too), anything else as its str."""
    if isinstance(value, float):  # numpy's float64
        return float(value)
    item = getattr(value, "item", None)  # a numpy scalar
    if callable(item):
        try:
            plain = item()
        except (TypeError, ValueError):
            plain = None
        if isinstance(plain, bool | int | float | str):
            return plain
    return str(value)


def encode(record: dict[str, Any]) -> bytes:
    """One log line, newline included (orjson: a tenth of json.dumps' time on a retrieval's 50 hits,
    which the harness pays per question)."""
    return orjson.dumps(record, default=_plain, option=_LINE)


class Log:
    """An append-only JSONL file read back as records.

    A record is complete once its newline is written: a last line without one
    is what a kill mid-append leaves, so it is ignored by `records` and cut off
    by the first `append` of the next run (which would otherwise continue the torn line).
    `required` names the keys every record must have.

    Each record reaches the kernel as it is appended, so a killed run loses none; the file is fsynced
    at most every SYNC_EVERY seconds and on `close`, so a machine that loses power loses at most that
    much work, which a resumed run redoes. (An fsync per record cost more than a BM25 retrieval over a
    million-token persona: the harness would have dwarfed the systems it times.)
    """

    def __init__(self, path: Path, required: tuple[str, ...] = ()):
        self.path = path
        self.required = required
        self._fd: int | None = None
        self._synced = 0.0

    def _corrupt(self, number: int, why: str) -> RunError:
        return RunError(
            f"{self.path}:{number}: {why}; the run's logs are damaged: "
            f"delete {self.path.parent} to run this system again from the start"
        )

    def records(self) -> list[dict[str, Any]]:
        try:
            data = self.path.read_bytes()
        except FileNotFoundError:
            return []
        except OSError as exc:
            raise RunError(f"{self.path}: cannot read the log ({exc.strerror})") from exc
        lines = data.split(b"\n")[:-1]  # what follows the last newline is torn (or nothing)
        records = []
        for number, raw in enumerate(lines, start=1):
            if not raw.strip():
                continue
            try:
                record = orjson.loads(raw.decode("utf-8"))
            except UnicodeDecodeError:
                raise self._corrupt(number, "not UTF-8") from None
            except orjson.JSONDecodeError as exc:
                raise self._corrupt(number, f"not a JSON record ({exc.msg} at column {exc.colno})") from None
            if not isinstance(record, dict):
                raise self._corrupt(number, f"a record must be a JSON object, not {type(record).__name__}")
            missing = [key for key in self.required if key not in record]
            if missing:
                raise self._corrupt(number, f"record lacks {', '.join(missing)}")
            records.append(record)
        return records

    def _cut_torn_tail(self) -> None:
        """Truncate an unterminated last line, so the next record starts on a line of its own."""
        try:
            handle = self.path.open("rb+")
        except FileNotFoundError:
            return
        with handle:
            size = handle.seek(0, os.SEEK_END)
            if size == 0:
                return
            handle.seek(size - 1)
            if handle.read(1) == b"\n":
                return
            handle.seek(0)
            handle.truncate(handle.read().rfind(b"\n") + 1)
            handle.flush()
            os.fsync(handle.fileno())

    def append(self, record: dict[str, Any]) -> None:
        """One record, whole; a full disk or a size limit is a WriteFailed naming the log (the torn tail it
        may leave is cut on the next open, so the run resumes from the last whole record)."""
        try:
            if self._fd is None:
                self.path.parent.mkdir(parents=True, exist_ok=True)
                self._cut_torn_tail()
                self._fd = os.open(self.path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
            line = memoryview(encode(record))
            while line:  # one write, unbuffered: the record is in the kernel when append returns
                line = line[os.write(self._fd, line) :]
            now = time.monotonic()
            if now - self._synced >= SYNC_EVERY:
                os.fsync(self._fd)
                self._synced = now
        except KemeError:
            raise
        except OSError as exc:
            raise write_failed(self.path, exc) from exc

    def close(self) -> None:
        """Put what was appended on disk and let the file go."""
        if self._fd is not None:
            fd, self._fd = self._fd, None
            try:
                os.fsync(fd)
            except OSError as exc:
                raise write_failed(self.path, exc) from exc
            finally:
                os.close(fd)
