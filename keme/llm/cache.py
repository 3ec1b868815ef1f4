"""The on-disk call cache: a warm cache makes a rerun cost zero calls.

The key is the SHA-256 of (provider, model, messages, parameters, schema); an
entry stores that request and the response, written atomically. API keys are
never part of a request, so never part of a key or an entry.
"""

from __future__ import annotations

import hashlib
import json
import os
from pathlib import Path
from typing import Any

from keme.dataset.io import atomic_write_text


def default_dir() -> Path:
    if os.environ.get("KEME_LLM_CACHE"):
        return Path(os.environ["KEME_LLM_CACHE"])
    base = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache")
    return base / "keme" / "llm"


def request_key(request: dict[str, Any]) -> str:
    blob = json.dumps(request, sort_keys=True, ensure_ascii=False, separators=(",", ":"))
    return hashlib.sha256(blob.encode()).hexdigest()


class DiskCache:
    def __init__(self, root: Path | None = None):
        self.root = Path(root) if root else default_dir()

    def _path(self, key: str) -> Path:
        return self.root / key[:2] / f"{key}.json"

    def get(self, key: str) -> dict[str, Any] | None:
        path = self._path(key)
        if not path.exists():
            return None
        try:
            return json.loads(path.read_text(encoding="utf-8"))["response"]
        except (json.JSONDecodeError, KeyError):
            return None  # a damaged entry is a miss, and is overwritten by the next call

    def put(self, key: str, request: dict[str, Any], response: dict[str, Any]) -> None:
        atomic_write_text(
            self._path(key),
            json.dumps({"request": request, "response": response}, ensure_ascii=False, indent=1),
        )
