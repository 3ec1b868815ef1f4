"""Staging beside an output: a command removes only a directory it provably made.

A staged or set-aside directory gets a fresh name from `tempfile.mkdtemp` (created atomically, so no
path a user made can be taken for it) and a marker file holding a token only this process knows. A
directory is removed only when it still holds that marker with that token: a user's `site.tmp-site/`
or `.site.old-…/` is never ours, whatever its name.
"""

from __future__ import annotations

import os
import secrets
import shutil
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

MARK = ".keme-made"


@dataclass
class Made:
    """The directories one command made beside its output (and may therefore remove)."""

    token: str = field(default_factory=lambda: secrets.token_hex(16))
    paths: list[Path] = field(default_factory=list)

    def directory(self, parent: Path, label: str, *, mark: bool = True) -> Path:
        """A new, uniquely named hidden directory in `parent`, marked as ours (or left empty, to rename a
        directory onto it, and marked then)."""
        parent.mkdir(parents=True, exist_ok=True)
        path = Path(tempfile.mkdtemp(prefix=f".{label}.keme-", dir=parent))
        os.chmod(path, 0o777 & ~_UMASK)  # mkdtemp's 0700 would hide a site or an export from others
        if mark:
            (path / MARK).write_text(self.token, encoding="utf-8")
        self.paths.append(path)
        return path

    def owns(self, path: Path) -> bool:
        """Whether `path` is a directory this command made and still marks."""
        if path not in self.paths or path.is_symlink() or not path.is_dir():
            return False
        try:
            return (path / MARK).read_text(encoding="utf-8") == self.token
        except (OSError, UnicodeDecodeError):
            return False

    def swap_in(self, staged: Path, out: Path) -> None:
        """Put the finished `staged` directory at `out`. An earlier `out` (one the caller checked it may
        replace) is first renamed onto a fresh empty directory of ours, marked, and removed once the new one
        is in place; if the swap fails it is put back."""
        old = None
        if out.exists() or out.is_symlink():
            old = self.directory(out.parent, f"{out.name}.old", mark=False)
            try:
                os.replace(out, old)  # onto our own empty directory: nothing else is replaced
            except OSError:
                old.rmdir()
                self.paths.remove(old)
                raise
        self.unmark(staged)
        try:
            os.replace(staged, out)
        except OSError:
            (staged / MARK).write_text(self.token, encoding="utf-8")
            if old is not None:
                os.replace(old, out)  # the earlier output stays where it was
                self.paths.remove(old)
            raise
        self.paths.remove(staged)
        if old is not None:
            (old / MARK).write_text(self.token, encoding="utf-8")
            self.remove(old)

    def unmark(self, path: Path) -> None:
        """Take the marker out of a finished directory before it becomes the output."""
        (path / MARK).unlink(missing_ok=True)

    def remove(self, path: Path) -> bool:
        """Delete `path` if this command made it (marker and all); anything else stays. Whether it went."""
        if not self.owns(path):
            return False
        shutil.rmtree(path, ignore_errors=True)
        self.paths.remove(path)
        return True

    def cleanup(self) -> None:
        """Remove every marked directory this command made and still has (after a failure)."""
        for path in list(self.paths):
            self.remove(path)


def _read_umask() -> int:
    """Read once, at import: reading it means setting it, which is not thread-safe."""
    mask = os.umask(0o022)
    os.umask(mask)
    return mask


_UMASK = _read_umask()
