"""Paths built from data stay inside their root.

Ids are checked when they enter (keme.models.ids); this is the second line:
every file name made from data (a scope, an image path) goes through `inside`,
which resolves the result (symlinks included) and refuses anything that is
not strictly below the root. Memory systems and the eval harness build their
per-scope paths with `scope_path`.
"""

from __future__ import annotations

import re
import stat
from pathlib import Path, PurePosixPath, PureWindowsPath

from keme.errors import KemeError
from keme.models.ids import digest

_FILE_SAFE = re.compile(r"[A-Za-z0-9_][A-Za-z0-9_.-]{0,99}")
_FILE_DROP = re.compile(r"[^A-Za-z0-9_.-]+")


class PathEscape(KemeError):
    """A path made from data would leave the directory it belongs to."""


def inside(root: Path, relative: str | Path) -> Path:
    """`root / relative`, resolved; a PathEscape when it is not strictly inside `root`.

    Refused: absolute paths, drive or UNC prefixes, `..` that climbs out,
    symlinks that point out, the root itself, NUL bytes and empty names.
    """
    text = str(relative)
    if not text or "\x00" in text:
        raise PathEscape(f"{root}: refusing the path {text!r} (empty or contains a NUL byte)")
    if (
        PurePosixPath(text).is_absolute()
        or PureWindowsPath(text).drive
        or PureWindowsPath(text).is_absolute()
    ):
        raise PathEscape(f"{root}: refusing the absolute path {text!r} (paths from data must be relative)")
    base = Path(root).resolve()
    target = (base / text).resolve()
    if target == base or base not in target.parents:
        raise PathEscape(f"{root}: refusing {text!r}: it resolves to {target}, outside {base}")
    return target


def file_problem(root: Path, name: str) -> str | None:
    """Why `root/name` is not one of the dataset's files as it must be, or None when it is: a regular file
    inside `root`. A symlink to elsewhere in the dataset is followed; one out of it is refused (its bytes
    would be somebody else's), and so is anything that is not a regular file (a FIFO would block the
    reader, a device never end). The one check every reader of a dataset's files goes through."""
    try:
        path = inside(root, name)
    except PathEscape as exc:
        return f"leaves the dataset: {str(exc).removeprefix(f'{root}: ')}"
    try:
        mode = path.stat().st_mode
    except FileNotFoundError:
        return "missing"
    except OSError as exc:
        return f"cannot be read ({exc.strerror or exc})"
    return None if stat.S_ISREG(mode) else "not a regular file"


def file_name(text: str) -> str:
    """A file name for any text: the text itself when it is plainly safe, else a slug plus a hash (never
    collides)."""
    if _FILE_SAFE.fullmatch(text):
        return text
    slug = _FILE_DROP.sub("_", text.encode("ascii", "ignore").decode()).lstrip("._-")[:60].rstrip("._-")
    return f"{slug or 'scope'}-{digest(text)}"


def scope_path(root: Path, scope: str, suffix: str = "") -> Path:
    """Where a memory system keeps the state of `scope` under `root` (a file when `suffix` is given, e.g.
    '.sqlite')."""
    return inside(root, file_name(scope) + suffix)
