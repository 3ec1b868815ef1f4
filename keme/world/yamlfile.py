"""Read one YAML file into a pydantic model, every failure a KemeError subclass naming the file."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import TypeVar

import yaml
from pydantic import BaseModel, ValidationError

from keme.errors import KemeError

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
        data = prepare(yaml.safe_load(path.read_text(encoding="utf-8")) or {})
    except FileNotFoundError:
        raise error(f"{path}: {missing}") from None
    except yaml.YAMLError as exc:
        raise error(f"{path}: not valid YAML: {exc}") from None
    try:
        return model.model_validate(data)
    except ValidationError as exc:
        raise error(f"{path}: {exc}") from None
