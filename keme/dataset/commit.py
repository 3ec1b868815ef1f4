"""Writing a dataset as one change: a kill at any moment leaves the old dataset or the new one.

The new files are staged in a hidden directory inside the dataset (`.keme-stage`, same file
system, so a move is a rename). Once every one of them is on disk, a plan naming what moves
and what goes is written into the stage, last: from then on the stage is complete. The files
then move into place, the files the old manifest listed and the new one does not are removed,
and the manifest moves last. A command that opens the directory and finds a stage (`recover`,
under the directory lock) finishes a complete one (roll forward) or discards an incomplete one
(roll back): nothing of the old dataset was touched before the plan existed, and once it exists
it says how to finish. Files whose bytes did not change are not written at all.

Test hooks: KEME_FAULT_AFTER_WRITES=N SIGKILLs the process after N steps of a commit (each staged
file, the plan, each move or removal, the manifest); KEME_FAULT_BEFORE_MANIFEST=1 SIGKILLs it
when the data files are in place, just before the manifest.
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
import shutil
import signal
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath

from keme.dataset.io import atomic_copy, atomic_write_bytes, atomic_write_text, sha256_file
from keme.dataset.lock import DirectoryLocked, directory_lock
from keme.dataset.manifest import MANIFEST, Manifest, manifest_bytes, read_manifest
from keme.dataset.paths import inside
from keme.errors import KemeError
from keme.models.ids import relative_file_problem

STAGE = ".keme-stage"
PLAN = ".plan.json"  # a hidden name: no file a manifest lists can have it
MARK = ".keme-stage-made"  # written first into a stage keme made: only a marked stage is ever removed
FAULT_AFTER_ENV = "KEME_FAULT_AFTER_WRITES"
FAULT_MANIFEST_ENV = "KEME_FAULT_BEFORE_MANIFEST"

log = logging.getLogger(__name__)


@dataclass
class _Faults:
    """The test hooks of one commit (read from the environment when it starts)."""

    after: int | None = None
    before_manifest: bool = False
    steps: int = field(default=0)

    @classmethod
    def from_env(cls) -> _Faults:
        after = os.environ.get(FAULT_AFTER_ENV)
        return cls(int(after) if after else None, bool(os.environ.get(FAULT_MANIFEST_ENV)))

    def step(self) -> None:
        self.steps += 1
        if self.after is not None and self.steps >= self.after:
            os.kill(os.getpid(), signal.SIGKILL)

    def manifest_next(self) -> None:
        if self.before_manifest:
            os.kill(os.getpid(), signal.SIGKILL)


def _checked(root: Path, name: str) -> str:
    """`name` as a plain relative path whose directories stay inside `root` (a plan or manifest is data)."""
    problem = relative_file_problem(name)
    if problem is not None:
        raise KemeError(f"{root}: refusing to write or remove {name[:80]!r}: it {problem}")
    parent = PurePosixPath(name).parent
    if str(parent) != ".":
        inside(root, str(parent))
    return name


def _holds(path: Path, data: bytes | Path) -> bool:
    """Whether `path` is a plain file with exactly these bytes (or the bytes of the file `data`) already
    (then it is not written again)."""
    size = data.stat().st_size if isinstance(data, Path) else len(data)
    if path.is_symlink() or not path.is_file() or path.stat().st_size != size:
        return False
    digest = sha256_file(data) if isinstance(data, Path) else hashlib.sha256(data).hexdigest()
    return sha256_file(path) == digest


def _listed(root: Path) -> list[str]:
    """The files the manifest now on disk lists (nothing when there is none, or none that can be read)."""
    if not (root / MANIFEST).is_file():
        return []
    try:
        return list(read_manifest(root).files)
    except KemeError:
        return []


def _sync(directory: Path) -> None:
    """Make the renames in `directory` durable."""
    fd = os.open(directory, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def commit(root: Path, files: dict[str, bytes | Path], manifest: Manifest) -> list[str]:
    """Put `files` and then `manifest` into `root` as one change; returns what was written.

    A file's content is its bytes, or a file (copied a chunk at a time: large images never sit in memory).

    A file that already holds its bytes is left alone (nothing at all is written when nothing
    changed); the files the manifest on disk lists and `manifest` does not are removed. The
    caller holds the directory lock.
    """
    recover(root)
    for name in [*files, MANIFEST]:
        _checked(root, name)
        if (root / name).is_dir() and not (root / name).is_symlink():
            raise KemeError(f"{root / name} is a directory where the dataset keeps a file; move it away")
    writes: dict[str, bytes | Path] = {
        name: data for name, data in files.items() if not _holds(root / name, data)
    }
    listing = manifest_bytes(manifest)
    if not _holds(root / MANIFEST, listing):
        writes[MANIFEST] = listing  # last: the plan moves the files in this order
    removals = [
        _checked(root, name) for name in _listed(root) if name not in manifest.files and name != MANIFEST
    ]
    if not writes and not removals:
        return []
    faults = _Faults.from_env()
    stage = root / STAGE
    stage.mkdir()  # recover() left no stage: this one is ours
    (stage / MARK).write_bytes(b"keme\n")
    for name, data in writes.items():
        if isinstance(data, Path):
            atomic_copy(stage / name, data)
        else:
            atomic_write_bytes(stage / name, data)
        faults.step()
    for directory in {(stage / name).parent for name in writes} - {stage}:
        _sync(directory)
    atomic_write_text(stage / PLAN, json.dumps({"move": list(writes), "remove": removals}, indent=1) + "\n")
    _sync(stage)
    faults.step()
    _finish(root, faults)
    return list(writes)


def _finish(root: Path, faults: _Faults) -> None:
    """Carry out a complete stage's plan (again, after a kill: a step already done is skipped)."""
    stage = root / STAGE
    try:
        plan = json.loads((stage / PLAN).read_text(encoding="utf-8"))
        moves, removals = [str(n) for n in plan["move"]], [str(n) for n in plan["remove"]]
    except (OSError, ValueError, KeyError, TypeError) as exc:
        raise KemeError(
            f"{stage / PLAN}: the plan of an interrupted write cannot be read ({exc}); remove {stage} "
            "and check the dataset with `keme validate`"
        ) from exc
    for name in [*moves, *removals]:
        _checked(root, name)
    for name in moves:
        if name != MANIFEST:
            _move(stage, root, name)
            faults.step()
    for name in removals:
        _remove(root, name)
        faults.step()
    _sync(root)
    if MANIFEST in moves:
        faults.manifest_next()
        _move(stage, root, MANIFEST)
        _sync(root)
        faults.step()
    shutil.rmtree(stage)


def _move(stage: Path, root: Path, name: str) -> None:
    source = stage / name
    if not source.exists():
        return  # moved before the interruption
    target = root / name
    target.parent.mkdir(parents=True, exist_ok=True)
    os.replace(source, target)
    if target.parent != root:
        _sync(target.parent)


def _remove(root: Path, name: str) -> None:
    """A file the dataset no longer lists, and the directories it leaves empty (images/)."""
    path = root / name
    if path.is_symlink() or path.is_file():
        path.unlink()
    for parent in PurePosixPath(name).parents:
        directory = root / parent
        if directory == root:
            break
        try:
            directory.rmdir()
        except OSError:
            break  # not empty (a file of the user's, say): it stays


def _ours(stage: Path) -> bool | None:
    """Whether `stage` is one keme made (True), is empty (None: a kill came between making and marking
    it), or is something else at that name (False: a user's, never removed)."""
    if stage.is_symlink() or not stage.is_dir():
        return False
    if (stage / MARK).is_file():
        return True
    return None if not any(stage.iterdir()) else False


def recover(root: Path) -> str | None:
    """Finish (roll forward) or discard (roll back) what a killed write left in `root`; the caller holds the
    lock. A `.keme-stage` keme did not make is refused, never removed."""
    stage = root / STAGE
    if not stage.exists() and not stage.is_symlink():
        return None
    ours = _ours(stage)
    if ours is False:
        raise KemeError(
            f"{stage} was not made by keme (it holds no {MARK}); keme will neither use nor remove it: "
            "move it out of the dataset and run the command again"
        )
    if ours and (stage / PLAN).is_file():
        _finish(root, _Faults())
        log.warning("%s: finished writing the dataset a killed command had left half moved into place", root)
        return "rolled forward"
    if ours is None:
        stage.rmdir()
    else:
        shutil.rmtree(stage)
    log.warning("%s: discarded the files a killed command had staged; the dataset is as it was before", root)
    return "rolled back"


def recover_for_reading(root: Path) -> None:
    """What a reader does first: recover a killed write, unless a live writer holds the directory (it is its
    stage)."""
    if not (root / STAGE).exists() or _ours(root / STAGE) is False:
        return  # no stage, or a user's directory at that name: the writer that meets it says so
    try:
        with directory_lock(root, create=False):
            recover(root)
    except DirectoryLocked:
        pass
