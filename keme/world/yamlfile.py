"""Read one YAML file into a pydantic model, every failure a KemeError subclass naming the file."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import TypeVar

from pydantic import BaseModel, ValidationError

from keme.errors import KemeError
from keme.yamlload import YamlError, load

M = TypeVar("M", bound=BaseModel)


def read_model(
    path: Path,
    model: type[M],
    error: type[KemeError],
    missing: str,
    prepare: Callable[[dict], dict] = lambda data: data,
) -> M:
    """`path` parsed as YAML and validated as `model`; `error(<path>: <what>)` when it is absent
    (`missing` says what), not YAML, or not the model. `prepare` adjusts the parsed mapping first."""
    try:
        if not path.exists():
            raise error(f"{path}: {missing}")
        data = prepare(load(path, shipped=True).data or {})
    except YamlError as exc:
        raise error(str(exc)) from None
    try:
        return model.model_validate(data)
    except ValidationError as exc:
        raise error(f"{path}: {exc}") from None
