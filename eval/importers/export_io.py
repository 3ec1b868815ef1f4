"""Writing an export within bounds: messages no larger than a limit, the JSON streamed item by item.

An export repeats what it holds (LongMemEval copies a persona's history into every question's
haystack), so a file written from one json.dumps string would take memory many times a large message;
written an item at a time it takes about one item's.
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path
from typing import Any

from keme.dataset.io import atomic_write_chunks, json_array_chunks
from keme.dataset.limits import Limits, exceeded
from keme.errors import KemeError


def refuse_oversized(data: Any, limits: Limits | None = None) -> None:
    """A message longer than the limit `message_chars` stops the export, naming it."""
    limits = Limits.from_env() if limits is None else limits
    for session in data.sessions:
        for message in session.messages:
            if len(message.content) > limits.message_chars:
                where = f"{data.root}: session {session.id}, message {message.id}: characters"
                raise exceeded(where, len(message.content), "message_chars", limits)


def write_json_array(out: Path, items: Iterable[object], indent: int | None = None) -> None:
    """`items` as one JSON array in `out`, atomically, encoded one item at a time."""
    try:
        atomic_write_chunks(out, json_array_chunks(items, indent))
    except OSError as exc:
        raise KemeError(f"{out}: cannot write ({exc.strerror or exc})") from exc
