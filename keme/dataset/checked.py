"""Stamps of datasets that passed `keme.validate.check_dataset`, so that eval, export, stats and view of an
unchanged dataset do not re-check it (the coherence checks take seconds a persona).

A stamp is named by a digest of every entry under the dataset (each path with its kind and its bytes or
link target) and of the checking code itself (every source and text file of the `keme` package), and of
what was asked (questions or not). Any change to a file, an added symlink or a new version of the checks
misses the stamp, and the dataset is checked again. Stamps live under `$XDG_CACHE_HOME/keme/checked`
(default `~/.cache/keme/checked`); `KEME_CHECK_CACHE=0` turns them off. A cache that cannot be written
costs only the time: the check is made either way.
"""

from __future__ import annotations

import functools
import hashlib
import os
from pathlib import Path

import keme
from keme.dataset.io import atomic_write_text, sha256_file

_CODE_SUFFIXES = (".py", ".yaml", ".yml", ".json", ".txt", ".html", ".css", ".j2")


def enabled() -> bool:
    return os.environ.get("KEME_CHECK_CACHE", "1") != "0"


def cache_dir() -> Path:
    base = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache")
    return base / "keme" / "checked"


@functools.cache
def code_digest() -> str:
    """The checking code as it is on disk: a changed check or text resource is a new version."""
    digest = hashlib.sha256()
    package = Path(keme.__file__).parent
    for path in sorted(package.rglob("*")):
        if path.is_file() and path.suffix in _CODE_SUFFIXES and "__pycache__" not in path.parts:
            digest.update(path.relative_to(package).as_posix().encode() + b"\0")
            digest.update(hashlib.sha256(path.read_bytes()).digest())
    return digest.hexdigest()


def dataset_digest(root: Path, questions: bool) -> str | None:
    """Every entry under `root`, symlinks not followed: its relative path, its kind and its content; None
    when an entry cannot be read (the check then says what is wrong with it)."""
    try:
        return _digest(root, questions)
    except (OSError, ValueError):
        return None


def _digest(root: Path, questions: bool) -> str:
    digest = hashlib.sha256(f"{code_digest()}\0questions={questions}\0".encode())
    for folder, dirs, files in os.walk(root, followlinks=False):
        dirs.sort()
        for name in sorted(dirs + files):
            path = Path(folder) / name
            rel = path.relative_to(root).as_posix()
            if path.is_symlink():
                entry = f"link\0{os.readlink(path)}".encode()
            elif path.is_dir():
                entry = b"dir"
            elif path.is_file():
                entry = f"file\0{sha256_file(path)}".encode()
            else:
                entry = b"other"
            digest.update(rel.encode("utf-8", "surrogateescape") + b"\0" + entry + b"\n")
    return digest.hexdigest()


def was_checked(key: str | None) -> bool:
    return key is not None and enabled() and (cache_dir() / key).is_file()


def remember(key: str | None) -> None:
    """Stamp `key` as checked; a cache that cannot be written is passed over (the stamp only saves time)."""
    if key is None or not enabled():
        return
    try:
        cache_dir().mkdir(parents=True, exist_ok=True)
        atomic_write_text(cache_dir() / key, "passed check_dataset\n")
    except OSError:
        pass
