"""The one Dataset: every part, the manifest, loaded once per command and written once per command.

A command loads a dataset (`Dataset.load`, or `Dataset.scan` to collect every problem instead of
stopping), hands it from stage to stage — synthesis adds personas, anchors, graphs and sessions,
the render stage screenshots and their messages, QA the questions and their stats — and writes it
once (`write`): the parts that changed, then the manifest, as one change (keme.dataset.commit).
Per-persona views (`views`, `persona`) carry the indexes the stages share.
"""

from __future__ import annotations

import hashlib
import os
from collections import defaultdict
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pydantic import BaseModel

from keme.dataset.commit import commit, recover_for_reading
from keme.dataset.io import count_records, jsonl_bytes, nonblank_lines, read_bytes, scan_records, sha256_file
from keme.dataset.lock import directory_lock
from keme.dataset.manifest import MANIFEST, FileEntry, Manifest, load_manifest, manifest_bytes, read_manifest
from keme.dataset.parts import Part, parts_of
from keme.dataset.paths import file_problem
from keme.dataset.problems import DatasetError, Violation
from keme.dataset.views import PersonaView
from keme.errors import KemeError
from keme.models import Anchor, Claim, EventGraph, ImageRecord, Persona, QAItem, ScheduleBlock, Session


def _entry(data: bytes, records: int) -> FileEntry:
    return FileEntry(sha256=hashlib.sha256(data).hexdigest(), records=records, bytes=len(data))


def _file_entry(path: Path) -> FileEntry:
    """The entry of a one-record file, read a chunk at a time; a KemeError naming it if it cannot be."""
    try:
        return FileEntry(sha256=sha256_file(path), records=1, bytes=path.stat().st_size)
    except OSError as exc:
        raise KemeError(f"{path}: cannot read ({exc.strerror or exc})") from exc


class Dataset:
    """Every part of a dataset (one attribute each), its manifest, its screenshots, and where it lives."""

    personas = Part("personas.jsonl", Persona)
    anchors = Part("anchors.jsonl", Anchor)
    graphs = Part("graphs.jsonl", EventGraph)
    sessions = Part("sessions.jsonl", Session)
    schedule = Part("schedule.jsonl", ScheduleBlock)
    claims = Part("claims.jsonl", Claim)
    qa = Part("qa.jsonl", QAItem)
    images = Part("images.jsonl", ImageRecord)

    def __init__(self, manifest: Manifest, root: Path | None = None) -> None:
        self.manifest = manifest
        self.root = root
        # binary files (screenshots) by path: new bytes, or a file on disk
        self.blobs: dict[str, bytes | Path] = {}
        self.on_disk: dict[str, FileEntry] = {}  # the manifest and part files as they were read or written
        self._records: dict[str, list[Any]] = {}  # parts present, by name
        # parts whose file on disk is theirs: loaded (or skipped) and not replaced
        self._kept: set[str] = set()
        self._views: list[PersonaView] | None = None
        # the questions' digest when keme.validate.check_dataset found nothing (None: never checked, or a
        # part was replaced since); `checked` compares it with the questions as they are now
        self._checked_qa: str | None = None

    # ---------------------------------------------------------------- parts
    def records(self, part: Part[Any]) -> list[Any]:
        """A part's records ([] when the dataset has no such part; assign the attribute to add one)."""
        return self._records.get(part.name, [])

    def replace(self, part: Part[Any], records: list[Any]) -> None:
        """Set a part's records (what assigning the attribute does); the views are rebuilt when next asked
        for."""
        self._records[part.name] = list(records)
        self._kept.discard(part.name)
        self._views = None
        self._checked_qa = None

    def mark_checked(self) -> None:
        """Record that the dataset, as it is now, passed the scoring checks (validate.verified_dataset)."""
        self._checked_qa = self._qa_digest()

    @property
    def checked(self) -> bool:
        """Whether the dataset passed the scoring checks and its parts are still the ones checked: a part
        replaced since, or a question edited in place (a gold, its evidence or flags), makes it False."""
        return self._checked_qa is not None and self._checked_qa == self._qa_digest()

    def _qa_digest(self) -> str:
        digest = hashlib.sha256()
        for item in self.qa:
            digest.update(item.model_dump_json().encode())
        return digest.hexdigest()

    def has(self, part: Part[Any]) -> bool:
        return part.name in self._records or part.name in self._kept

    # ---------------------------------------------------------------- views
    def views(self) -> list[PersonaView]:
        """One view per persona, in the order of personas.jsonl."""
        if self._views is None:
            grouped: dict[str, dict[str, list[Any]]] = defaultdict(lambda: defaultdict(list))
            for name in ("anchors", "sessions", "schedule", "claims", "qa", "images"):
                for record in self._records.get(name, []):
                    grouped[record.persona_id][name].append(record)
            graphs = {g.persona_id: g for g in self.graphs}
            self._views = [PersonaView(p, graph=graphs.get(p.id), **grouped[p.id]) for p in self.personas]
        return self._views

    def persona(self, persona_id: str) -> PersonaView:
        for view in self.views():
            if view.persona.id == persona_id:
                return view
        raise KemeError(f"{self.root or 'the dataset'}: no persona {persona_id!r}")

    # ---------------------------------------------------------------- reading
    @classmethod
    def scan(cls, root: Path, skip: frozenset[str] = frozenset()) -> Scan:
        """Load every part of `root` (but the files in `skip`), collecting every problem instead of stopping.

        Each file is read once: hashed (for `manifest_problems` and `content_sha256`) and parsed.
        Screenshots stay on disk, referenced from `blobs`.
        """
        root = Path(root)
        recover_for_reading(root)
        problems: list[Violation] = []
        unreadable: set[str] = set()
        raw: bytes | None = None
        try:
            manifest, raw = load_manifest(root)
        except KemeError as exc:
            problems.append(Violation("load", str(root / MANIFEST), _unprefixed(exc, root / MANIFEST)))
            unreadable.add(MANIFEST)
            # a stand-in; manifest checks are skipped
            manifest = Manifest(name=root.name, source="unknown", files={})
        dataset = cls(manifest, root)
        if raw is not None:
            dataset.on_disk[MANIFEST] = _entry(raw, 1)
        for part in PARTS:
            path = root / part.file
            if part.file in skip:
                dataset._kept.add(part.name)
                continue
            if not path.exists() and not path.is_symlink():
                continue
            problem = file_problem(root, part.file)
            if problem is not None:  # never read: a symlink out, a FIFO, a device, a dangling link
                problems.append(Violation("load", str(path), problem))
                unreadable.add(part.file)
                continue
            try:
                data = read_bytes(path)
            except KemeError as exc:  # the file itself cannot be read
                problems.append(Violation("load", str(path), _unprefixed(exc, path)))
                unreadable.add(part.file)
                continue
            dataset.on_disk[part.file] = _entry(data, nonblank_lines(data))
            records, faults = scan_records(path, data, part.model)
            dataset._records[part.name] = records
            dataset._kept.add(part.name)
            problems += [Violation("load", f"{fault.path}:{fault.line}", fault.message) for fault in faults]
            if faults:
                unreadable.add(part.file)
        dataset.blobs = {name: root / name for name in manifest.files if name not in PART_FILES}
        return Scan(dataset, problems, frozenset(unreadable))

    @classmethod
    def load(cls, root: Path, *, verify: bool = False) -> Dataset:
        """Every part of `root`; a DatasetError names every line that does not load, not only the first.

        `verify`: also every file whose hash or record count differs from the manifest.
        """
        root = Path(root)
        if not root.is_dir():
            read_manifest(root)  # says what `root` is instead
        scan = cls.scan(root)
        problems = list(scan.problems)
        if verify and MANIFEST not in scan.unreadable:
            problems += scan.dataset.manifest_problems()
        if problems:
            raise DatasetError(root, problems)
        return scan.dataset

    def manifest_problems(self, skip: frozenset[str] = frozenset()) -> list[Violation]:
        """Every listed file that is missing or differs from its hash or count, and every part file not
        listed."""
        if self.root is None:
            return []
        out = []
        for name, entry in self.manifest.files.items():
            if name in skip:
                continue
            path = self.root / name
            problem = file_problem(self.root, name)
            if problem is not None:
                out.append(Violation("manifest", name, f"listed in the manifest but {problem}"))
                continue
            found = self.on_disk.get(name)
            try:
                sha = found.sha256 if found is not None else sha256_file(path)
                records = (
                    found.records
                    if found is not None
                    else count_records(path)
                    if path.suffix == ".jsonl"
                    else 1
                )
            except (OSError, KemeError) as exc:
                out.append(Violation("manifest", name, f"listed in the manifest but cannot be read ({exc})"))
                continue
            if sha != entry.sha256:
                out.append(
                    Violation(
                        "manifest",
                        name,
                        "SHA-256 differs from the manifest (the file changed after the dataset was written)",
                    )
                )
            if path.suffix == ".jsonl" and records != entry.records:
                out.append(Violation("manifest", name, f"{records} records, manifest says {entry.records}"))
        for name in PART_FILES:
            if name not in skip and name not in self.manifest.files and os.path.lexists(self.root / name):
                out.append(
                    Violation(
                        "manifest", name, "present but not listed in the manifest (its content is unverified)"
                    )
                )
        return out

    def content_sha256(self) -> str:
        """One hash over the manifest and every part file as read: the same path with edited content is
        another dataset."""
        digest = hashlib.sha256()
        for name in (MANIFEST, *PART_FILES):
            entry = self.on_disk.get(name)
            if entry is not None:
                digest.update(f"{name}\0{entry.sha256}\n".encode())
        return digest.hexdigest()

    # ---------------------------------------------------------------- writing
    def write(self, root: Path | None = None) -> Manifest:
        """Put the dataset on disk at `root` (default: where it was loaded), as one change; returns the
        manifest.

        Parts loaded and not replaced keep their files and manifest entries; the others are
        serialized, and only files whose bytes changed are written (keme.dataset.commit), under
        the directory's lock. The manifest lists exactly the parts present and the screenshots.
        """
        target = Path(root) if root is not None else self.root
        if target is None:
            raise ValueError("a dataset that was never on disk needs a directory to be written to")
        in_place = self.root is not None and target.resolve() == self.root.resolve()
        files: dict[str, bytes | Path] = {}
        entries: dict[str, FileEntry] = {}
        for part in PARTS:
            if not self.has(part):
                continue
            if in_place and part.name in self._kept:
                known = self.manifest.files.get(part.file) or self.on_disk.get(part.file)
                if known is not None:
                    entries[part.file] = known
                continue
            if part.name in self._records:
                data, count = jsonl_bytes(self._records[part.name])
            else:  # skipped when loaded, written elsewhere: its file as it is
                data = read_bytes(self.root / part.file)  # type: ignore[operator]
                count = nonblank_lines(data)
            entries[part.file], files[part.file] = _entry(data, count), data
        for name, blob in sorted(self.blobs.items()):
            if isinstance(blob, Path):
                if in_place and blob == self.root / name:  # type: ignore[operator]
                    known = self.manifest.files.get(name)
                    entries[name] = known if known is not None else _file_entry(blob)
                    continue
                entries[name], files[name] = _file_entry(blob), blob  # copied, never read whole
                continue
            entries[name], files[name] = _entry(blob, 1), blob
        manifest = self.manifest.model_copy(update={"files": dict(sorted(entries.items()))})
        try:
            with directory_lock(target):
                commit(target, files, manifest)
        except OSError as exc:
            raise KemeError(
                f"{target}: cannot write the dataset ({exc.strerror or exc}); the dataset there is "
                "as it was (check the disk and the permissions, then run the command again)"
            ) from exc
        self.manifest, self.root = manifest, target
        self.on_disk = {name: entry for name, entry in entries.items() if name in PART_FILES}
        self.on_disk[MANIFEST] = _entry(manifest_bytes(manifest), 1)
        self._kept = {part.name for part in PARTS if self.has(part)}
        self.blobs = {name: target / name for name in self.blobs}
        return manifest


PARTS: tuple[Part[BaseModel], ...] = parts_of(Dataset)
PART_FILES: tuple[str, ...] = tuple(part.file for part in PARTS)


@dataclass
class Scan:
    """What a dataset directory holds: the records that loaded, and every file, line or manifest that did
    not."""

    dataset: Dataset
    problems: list[Violation]
    # manifest.json and part files with a problem; checks that need them are skipped
    unreadable: frozenset[str]


def _unprefixed(exc: Exception, path: Path) -> str:
    return str(exc).removeprefix(f"{path}: ")
