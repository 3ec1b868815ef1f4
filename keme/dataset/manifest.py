"""manifest.json: what a dataset is, how it was made, and the hash of every file."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from keme import SCHEMA_VERSION, __version__
from keme.dataset.io import dump_json
from keme.dataset.paths import file_problem
from keme.errors import KemeError
from keme.models.ids import relative_file_problem

MANIFEST = "manifest.json"


class FileEntry(BaseModel):
    model_config = ConfigDict(extra="forbid")

    sha256: str
    records: int
    bytes: int


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
    def _files_inside(cls, files: dict[str, FileEntry]) -> dict[str, FileEntry]:
        """Every listed file is a relative path inside the dataset: a manifest never points elsewhere on
        disk."""
        for name in files:
            problem = relative_file_problem(name)
            if problem is not None:
                raise ValueError(
                    f"file {name[:80]!r} {problem}; "
                    "every listed file must be a relative path inside the dataset"
                )
        return files


def manifest_bytes(manifest: Manifest) -> bytes:
    """The manifest as it is written: canonical JSON (sorted keys), so the same dataset gives the same
    bytes."""
    return dump_json(manifest.model_dump(mode="json")).encode("utf-8")


def _problem(error: dict) -> str:
    loc = ".".join(str(p) for p in error["loc"])
    message = error["msg"].removeprefix("Value error, ")
    return f"{loc}: {message}" if loc else message


def read_manifest(directory: Path) -> Manifest:
    """The manifest, or a KemeError that says what is wrong with it and how to get a good one."""
    return load_manifest(directory)[0]


def load_manifest(directory: Path) -> tuple[Manifest, bytes]:
    """The manifest and the bytes it was read from (the loader hashes them into the dataset's content
    hash)."""
    path = directory / MANIFEST
    fix = "restore it or re-create the dataset (`keme synth`, `keme import`)"
    if not directory.exists():
        raise KemeError(f"{directory}: no such directory; pass a keme dataset directory")
    if not directory.is_dir():
        raise KemeError(f"{directory}: not a directory; pass a keme dataset directory")
    if not path.exists() and not path.is_symlink():
        raise KemeError(
            f"{path}: no manifest; is {directory} a keme dataset? "
            "(create one with `keme synth` or `keme import`)"
        )
    problem = file_problem(directory, MANIFEST)
    if problem is not None:
        raise KemeError(f"{path}: cannot read the manifest ({problem}); {fix}")
    try:
        raw = path.read_bytes()
    except OSError as exc:
        raise KemeError(f"{path}: cannot read the manifest ({exc.strerror or exc}); {fix}") from exc
    try:
        raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise KemeError(
            f"{path}: not valid UTF-8 (byte 0x{raw[exc.start]:02x} at offset {exc.start}); {fix}"
        ) from exc
    try:
        return Manifest.model_validate_json(raw), raw
    except ValidationError as exc:
        errors = exc.errors()
        if errors[0]["type"] == "json_invalid":
            raise KemeError(f"{path}: not valid JSON ({errors[0]['msg']}); {fix}") from exc
        if errors[0]["type"] == "model_type":
            raise KemeError(f"{path}: expected a JSON object; {fix}") from exc
        detail = "; ".join(_problem(e) for e in errors[:5]) + (
            f"; and {len(errors) - 5} more" if len(errors) > 5 else ""
        )
        raise KemeError(f"{path}: not a valid manifest: {detail}; {fix}") from exc
