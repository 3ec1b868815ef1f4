"""The run's append-only JSONL logs (ingest, retrieval, judge), safe to read back after a kill."""

from __future__ import annotations

import json
import os
import time
from pathlib import Path
from typing import Any

from eval.errors import RunError

SYNC_EVERY = 1.0  # seconds between fsyncs of a log being appended to
# json.dumps(record, ensure_ascii=False, default=str), built once (records hold no cycles)
_ENCODER = json.JSONEncoder(ensure_ascii=False, default=str, check_circular=False)


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
        self._handle = None
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
                record = json.loads(raw.decode("utf-8"))
            except UnicodeDecodeError:
                raise self._corrupt(number, "not UTF-8") from None
            except json.JSONDecodeError as exc:
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
        if self._handle is None:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            self._cut_torn_tail()
            self._handle = self.path.open("a", encoding="utf-8")
        self._handle.write(_ENCODER.encode(record) + "\n")
        self._handle.flush()
        now = time.monotonic()
        if now - self._synced >= SYNC_EVERY:
            os.fsync(self._handle.fileno())
            self._synced = now

    def close(self) -> None:
        """Put what was appended on disk and let the file go."""
        if self._handle is not None:
            self._handle.flush()
            os.fsync(self._handle.fileno())
            self._handle.close()
            self._handle = None
