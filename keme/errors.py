"""User-facing errors: what went wrong, where, and how to fix it.

Every error a command can meet derives from `KemeError`, so `keme.cli.main` prints it as a message
(tests/test_errors.py walks the classes). An error that also means a bad value or a missing key keeps
that builtin as a second base, for the callers that handle it as one.
"""

import errno


class KemeError(Exception):
    """An error the CLI reports as a message (no traceback) with a non-zero exit."""


class SynthesisError(KemeError):
    """Synthesis cannot build what was asked: a brain gave up, or a stage broke a fixed input."""


class NoFit(SynthesisError, RuntimeError):
    """The calendar has no room for what the config asks (an anchor, an episode's moments, an event's
    children).

    The planner catches it where it can plan something else; when it reaches the user, the config asks
    for more than a persona's year holds.
    """


_WRITE_HINTS = {
    errno.ENOSPC: "the disk is full: free space there, or write somewhere else",
    errno.EDQUOT: "the disk quota is used up: free space there, or write somewhere else",
    errno.EFBIG: "the file grew past the size limit (ulimit -f): raise the limit, or write somewhere else",
    errno.EROFS: "the file system is read-only: write somewhere else",
    errno.EACCES: "no permission to write there: fix its permissions, or write somewhere else",
    errno.EPERM: "no permission to write there: fix its permissions, or write somewhere else",
}


class WriteFailed(KemeError, OSError):
    """A file could not be written (disk full, size limit, read-only, no permission): the path, the cause
    and the fix. Still an OSError, for the callers (caches) that go on without the file."""

    def __str__(self) -> str:
        return str(self.strerror)


def write_failed(path: object, exc: OSError) -> WriteFailed:
    """`exc`, met while writing `path`, as a message the user can act on."""
    hint = _WRITE_HINTS.get(exc.errno or 0, "check the disk and the path")
    return WriteFailed(exc.errno, f"{path}: cannot write ({exc.strerror or exc}); {hint}")
