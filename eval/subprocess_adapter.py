"""Run a memory system in another process (its own virtual environment) over JSON lines.

Protocol, one JSON object per line: the client writes
`{"id": n, "method": m, "params": {...}}` to the server's stdin; the server
answers `{"id": n, "result": ...}` or `{"id": n, "error": {"type": t, "message": s}}`
on stdout. Methods: hello, config_fingerprint, reset, ingest, flush, retrieve,
size, storage_bytes, peak_rss, close. Sessions, queries and retrievals travel as their
pydantic JSON. `python -m eval.serve NAME` serves any registered system; a
system in another environment points `command` at that environment's Python.
"""

from __future__ import annotations

import json
import subprocess
import sys
from collections import deque
from threading import Thread
from typing import Any

from eval.contract import Query, Retrieval, Usage
from keme.errors import KemeError
from keme.models import Session


class SubprocessError(KemeError):
    pass


class SubprocessSystem:
    def __init__(self, inner: str, command: list[str] | None = None, params: dict[str, Any] | None = None):
        self.name = f"subprocess:{inner}"
        self.command = command or [sys.executable, "-m", "eval.serve", inner]
        args = [f"{k}={json.dumps(v)}" for k, v in (params or {}).items()]
        self.process = subprocess.Popen(
            self.command + [a for arg in args for a in ("--param", arg)],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            bufsize=1,
        )
        self._stderr: deque[str] = deque(maxlen=40)
        Thread(target=self._drain, daemon=True).start()
        self._next = 0
        hello = self._call("hello")
        self.capabilities = set(hello.get("capabilities", []))

    def _drain(self) -> None:
        assert self.process.stderr is not None
        for line in self.process.stderr:
            self._stderr.append(line.rstrip())

    def _call(self, method: str, **params: Any) -> Any:
        if self.process.poll() is not None:
            raise SubprocessError(
                f"{self.name}: server exited with {self.process.returncode}:\n" + "\n".join(self._stderr)
            )
        self._next += 1
        request = {"id": self._next, "method": method, "params": params}
        assert self.process.stdin is not None and self.process.stdout is not None
        try:
            self.process.stdin.write(json.dumps(request, ensure_ascii=False, default=str) + "\n")
            self.process.stdin.flush()
        except BrokenPipeError as exc:
            raise SubprocessError(f"{self.name}: server is gone:\n" + "\n".join(self._stderr)) from exc
        line = self.process.stdout.readline()
        if not line:
            self.process.wait(timeout=5)
            raise SubprocessError(
                f"{self.name}: no answer to {method} (exit {self.process.returncode}):\n"
                + "\n".join(self._stderr)
            )
        try:
            response = json.loads(line)
        except json.JSONDecodeError as exc:
            raise SubprocessError(f"{self.name}: not a JSON line from the server: {line[:200]!r}") from exc
        if response.get("id") != self._next:
            raise SubprocessError(
                f"{self.name}: answer for request {response.get('id')}, expected {self._next}"
            )
        if "error" in response:
            error = response["error"]
            raise SubprocessError(
                f"{self.name}: {method} failed in the server: {error['type']}: {error['message']}"
            )
        return response.get("result")

    def config_fingerprint(self) -> str:
        return self._call("config_fingerprint")

    def reset(self, scope: str) -> None:
        self._call("reset", scope=scope)

    def ingest(self, scope: str, session: Session) -> Usage:
        return Usage.model_validate(
            self._call("ingest", scope=scope, session=session.model_dump(mode="json"))
        )

    def flush(self, scope: str) -> None:
        self._call("flush", scope=scope)

    def retrieve(self, scope: str, query: Query, k: int) -> Retrieval:
        return Retrieval.model_validate(
            self._call("retrieve", scope=scope, query=query.model_dump(mode="json"), k=k)
        )

    def size(self, scope: str) -> int:
        return int(self._call("size", scope=scope)) if "size" in self.capabilities else 1

    def storage_bytes(self, scope: str) -> int:
        return int(self._call("storage_bytes", scope=scope)) if "storage_bytes" in self.capabilities else 0

    def peak_rss_bytes(self) -> int:
        """The server's own peak RSS: a system in a subprocess is measured apart from the harness."""
        return int(self._call("peak_rss"))

    def close(self) -> None:
        if self.process.poll() is None:
            try:
                self._call("close")
            except SubprocessError:
                pass
            try:
                self.process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.process.kill()
