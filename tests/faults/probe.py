"""The fault suite's probe: run one bad input or fault, classify what the toolkit did, remember it.

Every probe ends in one of six outcomes:

- `clear`: the command refused with a message and a non-zero exit (what we want for bad input);
- `ok`: it worked (what we want for valid input, or a fault the toolkit recovers from);
- `crash`: a traceback, an internal error, or death by a signal;
- `silent`: it exited 0 (or returned normally) although it should have refused;
- `hang`: it did not finish within its time limit;
- `escape`: it wrote, replaced or deleted a path that is not its own (outside its output, or a user's file
  planted inside it), whatever its exit code: `watched` compares snapshots taken before and after.

Tests assert the outcome they expect; `pytest_terminal_summary` in tests/conftest.py prints the
counts (tried / clear / ok / crash / silent / hang / escape) and writes them to `$KEME_FAULT_REPORT` if
set.
"""

from __future__ import annotations

import hashlib
import io
import os
import re
import subprocess
import sys
from collections.abc import Callable
from contextlib import redirect_stderr, redirect_stdout
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
    escaped: list[str] | None = None  # with `watched`: the paths not its own that changed

    @property
    def output(self) -> str:
        return self.stdout + self.stderr


def _name() -> str:
    return os.environ.get("PYTEST_CURRENT_TEST", "probe").split(" (")[0]


def record(outcome: str, name: str | None = None) -> str:
    OUTCOMES.append((name or _name(), outcome))
    return outcome


def classify(returncode: int | None, text: str, expect: str) -> str:
    """The outcome of a finished command: its exit code and everything it printed, against `expect`
    (error|ok)."""
    if expect not in ("error", "ok"):
        raise ValueError(f"expect must be 'error' or 'ok', not {expect!r}")
    if returncode is None:
        return "hang"
    if returncode < 0 or _CRASH.search(text):
        return "crash"
    if expect == "error":
        return "clear" if returncode != 0 else "silent"
    return "ok" if returncode == 0 else "clear"


def _in_process(args: list[str]) -> tuple[int, str, str]:
    """`keme ARGS` through keme.cli.main in this process: the console script's boundary without an
    interpreter start per probe (a hang or a signal cannot be seen this way)."""
    from keme.cli import main

    out, err = io.StringIO(), io.StringIO()
    argv, sys.argv = sys.argv, ["keme", *args]
    code = 0
    try:
        with redirect_stdout(out), redirect_stderr(err):
            main()
    except SystemExit as exc:
        code = exc.code if isinstance(exc.code, int) else (0 if exc.code is None else 1)
    finally:
        sys.argv = argv
    return code, out.getvalue(), err.getvalue()


def run(
    args: list[str],
    *,
    expect: str,
    in_process: bool = False,
    timeout: float = 120,
    cwd: Path | None = None,
    env: dict[str, str] | None = None,
    input: str | bytes | None = None,
) -> Run:
    """Run a command and classify it against `expect` (error|ok).

    `keme ...` becomes `python -m keme.cli ...`, or with `in_process` a call of keme.cli.main.
    """
    if in_process:
        if args[:1] != ["keme"]:
            raise ValueError("in_process runs keme commands only")
        code, stdout, stderr = _in_process(args[1:])
        return Run(record(classify(code, stdout + stderr, expect)), code, stdout, stderr)
    if args and args[0] == "keme":
        args = [sys.executable, "-m", "keme.cli", *args[1:]]
    # no wrapped messages
    environment = os.environ | {"PYTHONPATH": str(ROOT), "COLUMNS": "500"} | (env or {})
    environment.pop("KEME_DEBUG", None)
    try:
        done = subprocess.run(
            args,
            capture_output=True,
            timeout=timeout,
            cwd=cwd,
            env=environment,
            input=input,
            text=not isinstance(input, bytes),
        )
    except subprocess.TimeoutExpired as exc:
        out = exc.stdout.decode(errors="replace") if isinstance(exc.stdout, bytes) else (exc.stdout or "")
        err = exc.stderr.decode(errors="replace") if isinstance(exc.stderr, bytes) else (exc.stderr or "")
        return Run(record("hang"), None, out, err)
    stdout = done.stdout if isinstance(done.stdout, str) else done.stdout.decode(errors="replace")
    stderr = done.stderr if isinstance(done.stderr, str) else done.stderr.decode(errors="replace")
    return Run(record(classify(done.returncode, stdout + stderr, expect)), done.returncode, stdout, stderr)


def refuses(args: list[str], match: str | None = None, *, code: int | None = None, **options: Any) -> Run:
    """Assert that the command stops with a clear error (exit `code`, if given) whose message matches `match`.

    The message is matched with line breaks removed: rich wraps long lines.
    """
    result = run(args, expect="error", **options)
    assert result.outcome == "clear", f"{result.outcome} (exit {result.returncode}):\n{result.output[-3000:]}"
    if code is not None:
        assert result.returncode == code, result.output[-3000:]
    if match is not None:
        text = result.output.replace("\n", "")
        assert re.search(match, text, re.I | re.S), (
            f"message does not match {match!r}:\n{result.output[-3000:]}"
        )
    return result


def works(args: list[str], **options: Any) -> Run:
    """Assert that the command succeeds."""
    result = run(args, expect="ok", **options)
    assert result.outcome == "ok", f"{result.outcome} (exit {result.returncode}):\n{result.output[-3000:]}"
    return result


def refused(args: list[str], match: str | None = None, code: int | None = None) -> Run:
    """`refuses` for `keme ARGS`, in process."""
    return refuses(["keme", *args], match, code=code, in_process=True)


def worked(args: list[str]) -> Run:
    """`works` for `keme ARGS`, in process."""
    return works(["keme", *args], in_process=True)


def raises_clearly(
    call: Callable[[], Any],
    errors: type[BaseException] | tuple[type[BaseException], ...],
    match: str | None = None,
) -> BaseException:
    """In-process probe: `call` must raise one of `errors` (clear); another exception is a crash, none is
    silent."""
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


# ---------------------------------------------------------------- escape: what changed that is not its own

Snapshot = dict[str, tuple]


def snapshot(parent: Path, own: list[Path] = (), keep: list[Path] = ()) -> Snapshot:
    """Every path under `parent` but the command's own outputs `own` (and what they hold), each with its
    kind, inode, size, mtime and content hash (a symlink: its target); the paths `keep` (a user's files
    planted inside an output) are taken whatever `own` says."""
    parent = Path(parent)
    skipped = {Path(p).absolute() for p in own}
    found: Snapshot = {}

    def take(path: Path) -> None:
        found[str(path)] = _state(path)
        if path.is_dir() and not path.is_symlink():
            for child in sorted(path.iterdir()):
                if child.absolute() not in skipped:
                    take(child)

    for child in sorted(parent.iterdir()) if parent.is_dir() else []:
        if child.absolute() not in skipped:
            take(child)
    for path in keep:
        path = Path(path)
        if path.exists() or path.is_symlink():
            take(path)
        else:
            found[str(path)] = ("missing",)
    return found


def _state(path: Path) -> tuple:
    stat = path.lstat()
    if path.is_symlink():
        return ("link", stat.st_ino, os.readlink(path))
    if path.is_dir():
        return ("dir", stat.st_ino)
    digest = hashlib.sha256(path.read_bytes()).hexdigest() if path.is_file() else ""
    return ("file", stat.st_ino, stat.st_size, stat.st_mtime_ns, digest)


def changes(before: Snapshot, after: Snapshot) -> list[str]:
    """What was written, replaced, created or deleted between two snapshots, one line each."""
    lines = [f"deleted {p}" for p in before if p not in after]
    lines += [f"created {p}" for p in after if p not in before]
    lines += [f"changed {p}" for p in before if p in after and before[p] != after[p]]
    return sorted(lines)


def watched(
    args: list[str], *, expect: str, parent: Path, own: list[Path], keep: list[Path] = (), **options: Any
) -> Run:
    """`run` under a watcher on `parent`: anything that changed there but the command's own outputs `own`,
    or any of the user's paths `keep`, makes the outcome `escape` (the changes are in `Run.escaped`)."""
    before = snapshot(parent, own, keep)
    result = run(args, expect=expect, **options)
    result.escaped = changes(before, snapshot(parent, own, keep))
    if result.escaped and result.outcome != "escape":
        name, _ = OUTCOMES.pop()
        result.outcome = record("escape", name)
    return result
