"""In-process probes: run `keme ARGS` through `keme.cli.main` and classify it as probe.run does.

The same boundary as the console script (main catches everything), without paying the interpreter
start and the text-resource loading for every probe; the outcome is recorded in the fault-suite counts.
A hang or a signal cannot be seen this way: keep a few probes per file on probe.refuses / probe.works.
"""

from __future__ import annotations

import io
import re
import sys
from contextlib import redirect_stderr, redirect_stdout

from probe import Run, record

_CRASH = re.compile(r"Traceback \(most recent call last\)|internal error")


def cli(args: list[str], expect: str) -> Run:
    """`keme ARGS` in this process; `expect` is "error" or "ok" (see probe.run)."""
    from keme.cli import main

    out, err = io.StringIO(), io.StringIO()
    argv, sys.argv = sys.argv, ["keme", *args]
    code: int | None = 0
    try:
        with redirect_stdout(out), redirect_stderr(err):
            main()
    except SystemExit as exc:
        code = exc.code if isinstance(exc.code, int) else (0 if exc.code is None else 1)
    finally:
        sys.argv = argv
    text = out.getvalue() + err.getvalue()
    if _CRASH.search(text):
        outcome = "crash"
    elif expect == "error":
        outcome = "clear" if code != 0 else "silent"
    else:
        outcome = "ok" if code == 0 else "clear"
    return Run(record(outcome), code, out.getvalue(), err.getvalue())


def refused(args: list[str], match: str | None = None, code: int | None = None) -> Run:
    """The command must stop with a clear message (and exit `code`, if given) that matches `match`."""
    result = cli(args, "error")
    assert result.outcome == "clear", f"{result.outcome} (exit {result.returncode}):\n{result.output[-3000:]}"
    if code is not None:
        assert result.returncode == code, result.output[-3000:]
    if match is not None:  # a line rich wrapped is matched as one
        text = result.output.replace("\n", "")
        assert re.search(match, text, re.IGNORECASE | re.DOTALL), f"message does not match {match!r}:\n{result.output[-3000:]}"
    return result


def worked(args: list[str]) -> Run:
    """The command must succeed."""
    result = cli(args, "ok")
    assert result.outcome == "ok", f"{result.outcome} (exit {result.returncode}):\n{result.output[-3000:]}"
    return result
