"""manifest.json: what a dataset is, how it was made, and the hash of every file."""

from __future__ import annotations

from pathlib import Path, PurePosixPath
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from keme import SCHEMA_VERSION, __version__
from keme.dataset.io import atomic_write_text, dump_json
from keme.errors import KemeError

MANIFEST = "manifest.json"


class FileEntry(BaseModel):
    model_config = ConfigDict(extra="forbid")

    sha256: str
    records: int
    bytes: int


def _inside(name: str) -> bool:
    """A file name from the manifest names a file under the dataset root: relative, no `..`, no tricks."""
    if not name or "\\" in name or "\0" in name:
        return False
    path = PurePosixPath(name)
    return not path.is_absolute() and ".." not in path.parts and path.parts[:1] != (".",) and str(path) == name


class Manifest(BaseModel):
    model_config = ConfigDict(extra="forbid")

    schema_version: str = SCHEMA_VERSION
    generator: str = "keme"
    generator_version: str = __version__
    name: str
    seed: int | None = None
    config: dict[str, Any] | None = None
    config_fingerprint: str | None = None
    source: str = Field(default="keme-synth", description="keme-synth or an importer name")
    files: dict[str, FileEntry]
    stats: dict[str, Any] = Field(default_factory=dict)
    stages: dict[str, Any] = Field(default_factory=dict)

    @field_validator("files")
    @classmethod
    def _names_stay_inside(cls, files: dict[str, FileEntry]) -> dict[str, FileEntry]:
        # the names become paths when the hashes are checked: data must never point outside the dataset
        bad = [name for name in files if not _inside(name)]
        if bad:
            raise ValueError(f"file names must be relative paths inside the dataset, not {bad}")
        return files


def write_manifest(directory: Path, manifest: Manifest) -> None:
    atomic_write_text(directory / MANIFEST, dump_json(manifest.model_dump(mode="json")))


def _problem(error: dict) -> str:
    loc = ".".join(str(p) for p in error["loc"])
    message = error["msg"].removeprefix("Value error, ")
    return f"{loc}: {message}" if loc else message


def read_manifest(directory: Path) -> Manifest:
    """The manifest, or a KemeError that says what is wrong with it and how to get a good one."""
    path = directory / MANIFEST
    fix = "restore it or re-create the dataset (`keme synth`, `keme import`)"
    if not directory.exists():
        raise KemeError(f"{directory}: no such directory; pass a keme dataset directory")
    if not directory.is_dir():
        raise KemeError(f"{directory}: not a directory; pass a keme dataset directory")
    if not path.exists():
        raise KemeError(f"{path}: no manifest; is {directory} a keme dataset? (create one with `keme synth` or `keme import`)")
    try:
        raw = path.read_bytes()
    except OSError as exc:
        raise KemeError(f"{path}: cannot read the manifest ({exc.strerror or exc}); {fix}") from exc
    try:
        raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise KemeError(f"{path}: not valid UTF-8 (byte 0x{raw[exc.start]:02x} at offset {exc.start}); {fix}") from exc
    try:
        return Manifest.model_validate_json(raw)
    except ValidationError as exc:
        errors = exc.errors()
        if errors[0]["type"] == "json_invalid":
            raise KemeError(f"{path}: not valid JSON ({errors[0]['msg']}); {fix}") from exc
        if errors[0]["type"] == "model_type":
            raise KemeError(f"{path}: expected a JSON object; {fix}") from exc
        detail = "; ".join(_problem(e) for e in errors[:5]) + (f"; and {len(errors) - 5} more" if len(errors) > 5 else "")
        raise KemeError(f"{path}: not a valid manifest: {detail}; {fix}") from exc
