"""One writer per directory: every keme command that writes a dataset or a run directory holds its lock.

Two commands writing the same directory interleave their files (two `keme synth` runs with
different seeds both exited 0, one reporting the other's counts). The lock is `fcntl.flock` on
`.keme.lock` inside the directory, taken without waiting: a second command refuses at once and
names the process holding it. The kernel drops the lock when its process ends, however it ends,
so a killed run never leaves a stale lock behind (only, at worst, the file, which the next
command simply locks). The file's content (pid, command, start time) only informs that message;
the lock itself is the open file, removed when the command ends — a process that opened it
just before checks, once locked, that the path still names its file, and otherwise locks the
new one, so nobody holds a lock on a file that is gone. Holding the lock is re-entrant
within a process (a command that calls another locked step does not lock itself out). Linux
and other POSIX systems only.
"""

from __future__ import annotations

import fcntl
import json
import os
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from keme.errors import KemeError

LOCK_FILE = ".keme.lock"

_held: dict[Path, int] = {}  # directories this process holds -> nesting depth


class DirectoryLocked(KemeError):
    """Another process is writing the directory."""


def _holder(path: Path) -> str:
    try:
        info = json.loads(path.read_text(encoding="utf-8"))
        since = time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(info["started"]))
        return f"pid {info['pid']} ({info['command']}, since {since})"
    except (OSError, ValueError, KeyError, TypeError):
        return "another process (its pid is not recorded yet)"


def _acquire(path: Path, directory: Path) -> int:
    """An open, flocked descriptor of `path` (retried if the file was replaced while we locked it)."""
    for _ in range(10):
        try:
            fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o644)
        except OSError as exc:
            raise KemeError(
                f"{directory}: cannot take the lock {path} ({exc.strerror}); is the directory writable?"
            ) from exc
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            os.close(fd)
            raise DirectoryLocked(
                f"{directory} is in use by {_holder(path)}; wait for it to finish or choose another directory"
            ) from None
        try:
            same = os.stat(path).st_ino == os.fstat(fd).st_ino
        except FileNotFoundError:
            same = False
        if same:
            return fd
        os.close(fd)  # the holder removed the file as we opened it: lock the one that is there now
    raise DirectoryLocked(
        f"{directory}: the lock file {path} keeps changing; is another program removing it?"
    )


@contextmanager
def directory_lock(directory: Path, command: str | None = None, *, create: bool = True) -> Iterator[Path]:
    """Hold `directory`'s lock for the duration; refuse at once if another process holds it.

    `create` makes the directory (and parents) when missing; without it, a missing directory is
    an error. A directory this call created that is left empty is removed again on exit.
    """
    directory = Path(directory)
    if directory.exists() and not directory.is_dir():
        raise KemeError(f"{directory} is a file, not a directory; choose another path")
    made = False
    if not directory.exists():
        if not create:
            raise KemeError(f"{directory}: no such directory")
        try:
            directory.mkdir(parents=True)
        except FileExistsError:
            pass
        except OSError as exc:
            raise KemeError(f"{directory}: cannot create the directory ({exc.strerror})") from exc
        else:
            made = True
    key = directory.resolve()
    if key in _held:
        _held[key] += 1
        try:
            yield directory
        finally:
            _held[key] -= 1
        return
    path = directory / LOCK_FILE
    fd = _acquire(path, directory)
    try:
        label = command or " ".join(["keme", *[a for a in sys.argv[1:3] if not a.startswith("-")]])
        os.ftruncate(fd, 0)
        os.pwrite(fd, json.dumps({"pid": os.getpid(), "command": label, "started": time.time()}).encode(), 0)
        _held[key] = 1
        try:
            yield directory
        finally:
            del _held[key]
            path.unlink(missing_ok=True)  # a waiting opener notices the file changed and locks the new one
            if made:
                try:
                    directory.rmdir()  # nothing was written: leave no empty directory behind
                except OSError:
                    pass
    finally:
        os.close(fd)
