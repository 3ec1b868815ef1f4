"""One writer per directory: every keme command that writes a dataset or a run directory holds its lock.

Two commands writing the same directory interleave their files (two `keme synth` runs with
different seeds both exited 0, one reporting the other's counts). The lock is `fcntl.flock` on
`.keme.lock` inside the directory, taken without waiting: a second command refuses at once and
names the process holding it. The kernel drops the lock when its process ends, however it ends,
so a killed run never leaves a stale lock behind (only, at worst, the file, which the next
command removes once it has locked it). The lock file is written under a unique name and
hard-linked into place, so it always holds its record (pid, command, start time): a file at the
lock's name without one is a user's, and is refused, never overwritten or deleted. The lock
is removed when the command ends. An output replaced whole (a file, a directory swapped in) is
locked by `target_lock`, a lock file beside it. Holding the lock is re-entrant
within a process (a command that calls another locked step does not lock itself out). Linux
and other POSIX systems only.
"""

from __future__ import annotations

import fcntl
import json
import os
import sys
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from keme.errors import KemeError

LOCK_FILE = ".keme.lock"
TARGET_LOCK_SUFFIX = ".keme-lock"

_held: dict[Path, int] = {}  # directories this process holds -> nesting depth


class DirectoryLocked(KemeError):
    """Another process is writing the directory."""


def _holder(path: Path) -> str:
    info = _record(path)
    if info is None:
        return "another process (its pid is not recorded yet)"
    since = time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(info["started"]))
    return f"pid {info['pid']} ({info['command']}, since {since})"


def _record(path: Path) -> dict | None:
    """The lock record keme wrote into `path`, or None when the file holds something else (a user's file)."""
    try:
        info = json.loads(path.read_text(encoding="utf-8"))
        if isinstance(info, dict) and {"pid", "command", "started"} <= info.keys():
            float(info["started"])
            return info
    except (OSError, ValueError, TypeError):
        pass
    return None


def _not_ours(path: Path, directory: Path) -> KemeError:
    return KemeError(
        f"{directory}: {path} exists and was not made by keme (it holds no keme lock record); keme locks its "
        "output with that name and will not overwrite or delete it: move it away or choose another output"
    )


def _create(path: Path, directory: Path, record: bytes) -> int | None:
    """A new lock file at `path`, already flocked and holding `record`, or None if `path` exists.

    The file is written under a unique name first and then hard-linked to `path`: a lock file is never seen
    empty, so any file without a record at `path` is provably not keme's."""
    try:
        fd, tmp = tempfile.mkstemp(prefix=f"{path.name}.", suffix=".new", dir=path.parent)
    except OSError as exc:
        raise KemeError(
            f"{directory}: cannot take the lock {path} ({exc.strerror}); is the directory writable?"
        ) from exc
    try:
        os.fchmod(fd, 0o644)
        os.write(fd, record)
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)  # a fresh file nobody else has open
        try:
            os.link(tmp, path)
        except FileExistsError:
            os.close(fd)
            return None
        return fd
    except OSError as exc:
        os.close(fd)
        raise KemeError(f"{directory}: cannot take the lock {path} ({exc.strerror})") from exc
    finally:
        os.unlink(tmp)


def _acquire(path: Path, directory: Path, record: bytes) -> int:
    """An open, flocked descriptor of the lock file `path`, which this call created (a stale lock record of a
    killed keme is removed first; a file keme did not write is refused, never touched)."""
    for _ in range(10):
        fd = _create(path, directory, record)
        if fd is not None:
            return fd
        if path.is_symlink() or (path.exists() and not path.is_file()):
            raise _not_ours(path, directory)
        try:
            fd = os.open(path, os.O_RDONLY)
        except FileNotFoundError:
            continue  # its holder just removed it: create it again
        except OSError as exc:
            raise KemeError(f"{directory}: cannot read the lock {path} ({exc.strerror})") from exc
        try:
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                raise DirectoryLocked(
                    f"{directory} is in use by {_holder(path)}; wait for it to finish or choose another "
                    "output"
                ) from None
            if _same(path, fd) and _record(path) is None:
                raise _not_ours(path, directory)
            if _same(path, fd):
                os.unlink(path)  # a killed keme's lock, which nobody holds: ours to remove
        finally:
            os.close(fd)
    raise DirectoryLocked(
        f"{directory}: the lock file {path} keeps changing; is another program removing it?"
    )


def _same(path: Path, fd: int) -> bool:
    try:
        st = os.stat(path, follow_symlinks=False)
    except FileNotFoundError:
        return False
    held = os.fstat(fd)
    return (st.st_ino, st.st_dev) == (held.st_ino, held.st_dev)


@contextmanager
def path_lock(lock: Path, directory: Path, command: str | None = None) -> Iterator[Path]:
    """Hold the lock file `lock` (made by this call, removed again at the end) for writing `directory`."""
    label = command or " ".join(["keme", *[a for a in sys.argv[1:3] if not a.startswith("-")]])
    record = json.dumps({"pid": os.getpid(), "command": label, "started": time.time()}).encode()
    fd = _acquire(lock, directory, record)
    try:
        yield lock
    finally:
        try:
            if _same(lock, fd):
                lock.unlink()  # the file this call made; a waiting opener notices and creates a new one
        finally:
            os.close(fd)


@contextmanager
def target_lock(target: Path, command: str | None = None) -> Iterator[Path]:
    """Hold the lock of an output that is replaced whole (a file, or a directory swapped in): a lock file
    beside it, `.NAME.keme-lock`, so two commands writing one target refuse instead of racing."""
    target = Path(target)
    parent = target.parent
    try:
        parent.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise KemeError(f"{parent}: cannot create the directory ({exc.strerror})") from exc
    key = target.resolve()
    if key in _held:
        _held[key] += 1
        try:
            yield target
        finally:
            _held[key] -= 1
        return
    with path_lock(parent / f".{target.name}{TARGET_LOCK_SUFFIX}", target, command):
        _held[key] = 1
        try:
            yield target
        finally:
            del _held[key]


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
    try:
        with path_lock(directory / LOCK_FILE, directory, command):
            _held[key] = 1
            try:
                yield directory
            finally:
                del _held[key]
    finally:
        if made:  # after the lock file is gone: nothing else written leaves no empty directory behind
            try:
                directory.rmdir()
            except OSError:
                pass
