"""manifest.json: what a dataset is, how it was made, and the hash of every file."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from keme import SCHEMA_VERSION, __version__
from keme.dataset.io import atomic_write_text, dump_json
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
        """Every listed file is a relative path inside the dataset: a manifest never points elsewhere on disk."""
        for name in files:
            problem = relative_file_problem(name)
            if problem is not None:
                raise ValueError(f"file {name[:80]!r} {problem}; files are paths relative to the dataset")
        return files


def write_manifest(directory: Path, manifest: Manifest) -> None:
    atomic_write_text(directory / MANIFEST, dump_json(manifest.model_dump(mode="json")))


def read_manifest(directory: Path) -> Manifest:
    path = directory / MANIFEST
    if not path.exists():
        raise KemeError(f"{path}: no manifest; is {directory} a keme dataset? (create one with `keme synth`)")
    try:
        return Manifest.model_validate(json.loads(path.read_text(encoding="utf-8")))
    except (json.JSONDecodeError, ValidationError) as exc:
        raise KemeError(f"{path}: unreadable manifest: {exc}") from exc
