"""The local model in a child process: llama.cpp's OpenAI-compatible server on a free loopback port.

Why a child: a native crash of llama.cpp (SIGILL when a build uses CPU features the machine lacks, a
segfault on a broken model file) would kill keme without a word if the model ran in process. In a child
it kills only the child, and keme reports what happened, why and what to do, with the server's log.

The child lives exactly as long as its keme process: stopped at exit (also after errors and Ctrl-C —
it has its own session, so a terminal's Ctrl-C reaches keme, which stops it), and it exits by itself
when keme is gone (keme.llm.child watches its parent), so there are no orphans even after SIGKILL.
"""

from __future__ import annotations

import atexit
import os
import signal
import socket
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request
from collections.abc import Callable
from importlib.util import find_spec
from pathlib import Path

from keme.llm.errors import FatalError, LocalModelDied

SETUP_FIX = "run scripts/setup.sh, which builds it portably"
SERVER_MODULES = (
    "llama_cpp",
    "fastapi",
    "uvicorn",
    "sse_starlette",
    "starlette_context",
    "pydantic_settings",
)


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def missing_modules() -> list[str]:
    """What llama.cpp's server needs and this environment lacks (checked without importing llama_cpp)."""

    return [name for name in SERVER_MODULES if find_spec(name) is None]


def llama_server_command(
    model_path: str, *, alias: str, n_ctx: int, n_threads: int | None, seed: int, parent: int | None = None
) -> Callable[[int], list[str]]:
    """The command for a given port: llama_cpp.server under keme.llm.child's parent watch."""

    def command(port: int) -> list[str]:
        args = [
            "--model",
            model_path,
            "--model_alias",
            alias,
            "--host",
            "127.0.0.1",
            "--port",
            str(port),
            "--n_ctx",
            str(n_ctx),
            "--seed",
            str(seed),
            "--interrupt_requests",
            "False",
            "--verbose",
            "False",
        ]
        if n_threads:
            args += ["--n_threads", str(n_threads)]
        return [sys.executable, "-m", "keme.llm.child", str(parent or os.getpid()), "llama_cpp.server", *args]

    return command


def describe_exit(code: int) -> str:
    """What a child's exit status means, and what to do about it."""
    if code >= 0:
        return f"exited with code {code}"
    try:
        name = signal.Signals(-code).name
    except ValueError:
        return f"was killed by signal {-code}"
    if name == "SIGILL":
        return (
            "was killed by SIGILL: llama-cpp-python was built with CPU features this machine lacks: "
            f"{SETUP_FIX}"
        )
    if name in ("SIGSEGV", "SIGBUS", "SIGABRT", "SIGFPE"):
        return (
            f"crashed with {name}: a broken model file (check llm.model_path) or a broken build of "
            f"llama-cpp-python ({SETUP_FIX})"
        )
    if name == "SIGKILL":
        return "was killed by SIGKILL (out of memory? a smaller llm.n_ctx needs less)"
    return f"was killed by {name}"


class LocalServer:
    """One llama.cpp server child: `start()` returns its base URL; `death()` says whether (and how) it
    died."""

    def __init__(
        self, command: Callable[[int], list[str]], startup_timeout_s: float = 120, attempts: int = 3
    ):
        self.command = command
        self.startup_timeout_s = startup_timeout_s
        self.attempts = attempts
        self.process: subprocess.Popen | None = None
        self.log_path: Path | None = None
        self.url: str | None = None

    def start(self) -> str:
        for attempt in range(self.attempts):
            port = free_port()
            try:
                return self._start(port)
            except LocalModelDied:
                # another process may have taken the port between our probe and the child's bind
                if attempt + 1 == self.attempts or "address already in use" not in self.log_tail().lower():
                    raise
        raise AssertionError("unreachable")

    def _start(self, port: int) -> str:
        self.stop()
        handle, path = tempfile.mkstemp(prefix="keme-llama-server-", suffix=".log")
        self.log_path = Path(path)
        with os.fdopen(handle, "wb") as log:
            self.process = subprocess.Popen(
                self.command(port),
                stdin=subprocess.DEVNULL,
                stdout=log,
                stderr=subprocess.STDOUT,
                start_new_session=True,
            )
        atexit.register(self.stop)
        url = f"http://127.0.0.1:{port}/v1"
        deadline = time.monotonic() + self.startup_timeout_s
        while time.monotonic() < deadline:
            died = self.death()
            if died is not None:
                raise died
            try:
                with urllib.request.urlopen(f"{url}/models", timeout=2) as reply:
                    if reply.status == 200:
                        self.url = url
                        return url
            except (urllib.error.URLError, OSError):
                pass
            time.sleep(0.2)
        tail = self.log_tail()
        self.stop()
        raise FatalError(
            f"the local model server did not come up within {self.startup_timeout_s:.0f}s "
            f"(llm.timeout_s); its log ends:\n{tail}"
        )

    def death(self, wait: float = 0.0) -> LocalModelDied | None:
        """The error to raise if the child has exited (waiting up to `wait` seconds for it to be reaped)."""
        if self.process is None:
            return None
        try:
            code = self.process.wait(timeout=wait) if wait else self.process.poll()
        except subprocess.TimeoutExpired:
            code = None
        if code is None:
            return None
        return LocalModelDied(
            f"the local model (llama.cpp server, pid {self.process.pid}) {describe_exit(code)}. "
            f"The end of its log:\n{self.log_tail()}"
        )

    def log_tail(self, lines: int = 15, chars: int = 2000) -> str:
        try:
            text = self.log_path.read_text(encoding="utf-8", errors="replace") if self.log_path else ""
        except OSError:
            text = ""
        tail = "\n".join(text.strip().splitlines()[-lines:])[-chars:]
        return tail or "(the log is empty)"

    def stop(self) -> None:
        """Idempotent: terminate the child (kill it if it does not go), remove its log."""
        process, self.process = self.process, None
        if process is not None:
            atexit.unregister(self.stop)
            if process.poll() is None:
                process.terminate()
                try:
                    process.wait(timeout=10)
                except subprocess.TimeoutExpired:
                    process.kill()
                    process.wait(timeout=10)
        if self.log_path is not None:
            self.log_path.unlink(missing_ok=True)
            self.log_path = None
        self.url = None
