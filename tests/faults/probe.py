"""The fault suite's probe: run one bad input or fault, classify what the toolkit did, remember it.

Every probe ends in one of five outcomes:

- `clear`: the command refused with a message and a non-zero exit (what we want for bad input);
- `ok`: it worked (what we want for valid input, or a fault the toolkit recovers from);
- `crash`: a traceback, an internal error, or death by a signal;
- `silent`: it exited 0 (or returned normally) although it should have refused;
- `hang`: it did not finish within its time limit.

Tests assert the outcome they expect; `pytest_terminal_summary` in tests/conftest.py prints the
counts (tried / clear / ok / crash / silent / hang) and writes them to `$KEME_FAULT_REPORT` if set.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
OUTCOMES: list[tuple[str, str]] = []  # (probe name, outcome), in the order the probes ran

_CRASH = re.compile(r"Traceback \(most recent call last\)|internal error")


@dataclass
class Run:
    outcome: str
    returncode: int | None
    stdout: str
    stderr: str

    @property
    def output(self) -> str:
        return self.stdout + self.stderr


def _name() -> str:
    return os.environ.get("PYTEST_CURRENT_TEST", "probe").split(" (")[0]


def record(outcome: str, name: str | None = None) -> str:
    OUTCOMES.append((name or _name(), outcome))
    return outcome


def run(args: list[str], *, expect: str, timeout: float = 120, cwd: Path | None = None,
        env: dict[str, str] | None = None, input: str | bytes | None = None) -> Run:
    """Run a command (`keme ...` becomes `python -m keme.cli ...`) and classify it against `expect` (error|ok)."""
    if args and args[0] == "keme":
        args = [sys.executable, "-m", "keme.cli", *args[1:]]
    environment = os.environ | {"PYTHONPATH": str(ROOT)} | (env or {})
    environment.pop("KEME_DEBUG", None)
    try:
        done = subprocess.run(args, capture_output=True, timeout=timeout, cwd=cwd, env=environment, input=input,
                              text=not isinstance(input, bytes))
    except subprocess.TimeoutExpired as exc:
        out = exc.stdout.decode(errors="replace") if isinstance(exc.stdout, bytes) else (exc.stdout or "")
        err = exc.stderr.decode(errors="replace") if isinstance(exc.stderr, bytes) else (exc.stderr or "")
        return Run(record("hang"), None, out, err)
    stdout = done.stdout if isinstance(done.stdout, str) else done.stdout.decode(errors="replace")
    stderr = done.stderr if isinstance(done.stderr, str) else done.stderr.decode(errors="replace")
    if done.returncode < 0 or _CRASH.search(stdout + stderr):
        outcome = "crash"
    elif expect == "error":
        outcome = "clear" if done.returncode != 0 else "silent"
    elif expect == "ok":
        outcome = "ok" if done.returncode == 0 else "clear"
    else:
        raise ValueError(f"expect must be 'error' or 'ok', not {expect!r}")
    return Run(record(outcome), done.returncode, stdout, stderr)


def refuses(args: list[str], match: str | None = None, **options: Any) -> Run:
    """Assert that the command stops with a clear error (and, with `match`, that the message says so)."""
    result = run(args, expect="error", **options)
    assert result.outcome == "clear", f"{result.outcome} (exit {result.returncode}):\n{result.output[-3000:]}"
    if match is not None:
        assert re.search(match, result.output, re.I | re.S), f"message does not match {match!r}:\n{result.output[-3000:]}"
    return result


def works(args: list[str], **options: Any) -> Run:
    """Assert that the command succeeds."""
    result = run(args, expect="ok", **options)
    assert result.outcome == "ok", f"{result.outcome} (exit {result.returncode}):\n{result.output[-3000:]}"
    return result


def raises_clearly(call: Callable[[], Any], errors: type[BaseException] | tuple[type[BaseException], ...],
                   match: str | None = None) -> BaseException:
    """In-process probe: `call` must raise one of `errors` (clear); another exception is a crash, none is silent."""
    try:
        call()
    except errors as exc:
        record("clear")
        if match is not None:
            assert re.search(match, str(exc), re.I | re.S), f"message does not match {match!r}: {exc}"
        return exc
    except Exception as exc:  # noqa: BLE001 - that is the point of the probe
        record("crash")
        raise AssertionError(f"crash: {type(exc).__name__}: {exc}") from exc
    record("silent")
    raise AssertionError("silent: no error raised")


def counts() -> dict[str, int]:
    tally = {"tried": len(OUTCOMES), "clear": 0, "ok": 0, "crash": 0, "silent": 0, "hang": 0}
    for _, outcome in OUTCOMES:
        tally[outcome] += 1
    return tally
