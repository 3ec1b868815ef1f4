"""The on-disk call cache: a warm cache makes a rerun cost zero calls.

The key is the SHA-256 of (provider, model, messages, parameters, schema); an
entry stores that request and the response, written atomically. API keys are
never part of a request, so never part of a key or an entry.

A cache that cannot be read or written (KEME_LLM_CACHE read-only, the disk full) only costs calls: the
first failure is a warning naming the folder and the fix, and the run goes on without the cache.
"""

from __future__ import annotations

import hashlib
import json
import os
import sys
from collections.abc import Callable
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


def warn(message: str) -> None:
    print(f"keme: warning: LLM cache: {message}", file=sys.stderr, flush=True)


class DiskCache:
    def __init__(self, root: Path | None = None, on_warning: Callable[[str], None] = warn):
        self.root = Path(root) if root else default_dir()
        self.on_warning = on_warning
        self.enabled = True

    def _disable(self, exc: OSError) -> None:
        self.enabled = False
        self.on_warning(
            f"cannot use {self.root} ({exc.strerror or exc}); calling without a cache "
            "(set KEME_LLM_CACHE to a writable folder)"
        )

    def _path(self, key: str) -> Path:
        return self.root / key[:2] / f"{key}.json"

    def get(self, key: str) -> dict[str, Any] | None:
        path = self._path(key)
        if not self.enabled:
            return None
        try:
            response = json.loads(path.read_text(encoding="utf-8"))["response"]
        except FileNotFoundError:
            return None
        except (json.JSONDecodeError, UnicodeDecodeError, KeyError, TypeError):
            return None  # a damaged entry is a miss, and is overwritten by the next call
        except OSError as exc:
            self._disable(exc)
            return None
        return response if _whole(response) else None

    def put(self, key: str, request: dict[str, Any], response: dict[str, Any]) -> None:
        if not self.enabled:
            return
        try:
            atomic_write_text(
                self._path(key),
                json.dumps({"request": request, "response": response}, ensure_ascii=False, indent=1),
            )
        except OSError as exc:  # atomic_write_text's WriteFailed is one
            self._disable(exc)


def _whole(response: Any) -> bool:
    """An entry the client can use: its text and token counts (anything else is a damaged entry, a miss)."""
    return (
        isinstance(response, dict)
        and isinstance(response.get("content"), str)
        and all(type(response.get(k)) is int for k in ("prompt_tokens", "completion_tokens"))
    )
