"""`keme eval`'s option values and `--params`, checked where they enter: a bad value is an error, never a
score."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Literal

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    TypeAdapter,
    ValidationError,
    ValidationInfo,
    field_validator,
)

from eval.disagreement import THRESHOLD_DEFAULT
from eval.llm_judge import PROMPT_SETS
from eval.registry import REGISTRY, check_params
from eval.uncertainty import B_DEFAULT
from keme.dataset.limits import Limits, check
from keme.errors import KemeError
from keme.models import Role
from keme.yamlload import load

# offline: ask after the whole trajectory; online: ask each at its asked_at
Mode = Literal["offline", "online"]
Images = Literal["caption", "none"]  # shared screenshots reach text systems as their caption, or not at all
ReaderKind = Literal["none", "local", "openai"]  # the CLI's --reader
JudgeKind = Literal["rule", "llm", "both"]  # the CLI's --judge
BOUNDS = {"k": "count", "depth": "count", "limit": "count", "judge_runs": "runs", "bootstrap": "bootstrap"}


class Options(BaseModel):
    """The run's option values (the CLI's and eval.run.Settings'); strict: `"5"` is not a number."""

    model_config = ConfigDict(extra="forbid", strict=True)

    k: int = Field(10, ge=1)
    depth: int = Field(50, ge=1)
    mode: Mode = "offline"
    roles: tuple[Role, ...] | None = Field(None, min_length=1)
    limit: int | None = Field(None, ge=1)
    images: Images = "caption"
    judge_runs: int = Field(3, ge=1)
    judge_prompts: str = "mobilemem"
    disagreement_threshold: float = Field(THRESHOLD_DEFAULT, ge=0, le=1)
    bootstrap: int = Field(B_DEFAULT, ge=1)

    @field_validator("k", "depth", "limit", "judge_runs", "bootstrap")
    @classmethod
    def _bounded(cls, value: int | None, info: ValidationInfo) -> int | None:
        """Counts that size memory or work are bounded (keme.dataset.limits), not only from below."""
        name = BOUNDS[str(info.field_name)]
        return value if value is None else check("the value", value, name, Limits.from_env())

    @field_validator("judge_prompts")
    @classmethod
    def _known_prompts(cls, value: str) -> str:

        if value not in PROMPT_SETS:
            raise ValueError(f"one of {', '.join(PROMPT_SETS)}")
        return value


def check_options(**values: Any) -> Options:
    """Options(**values), or a KemeError naming every bad option as its command-line flag."""
    try:
        return Options(**values)
    except ValidationError as exc:
        problems: dict[str, str] = {}
        for error in exc.errors():
            flag = "--" + str(error["loc"][0]).replace("_", "-")
            message = (
                "names none" if error["type"] == "too_short" else error["msg"].removeprefix("Value error, ")
            )
            # the first problem of each
            problems.setdefault(flag, f"{flag}: {message} (got {error['input']!r})")
        raise KemeError("; ".join(problems.values())) from exc


def read_yaml(path: Path, flag: str) -> Any:
    """A YAML (or JSON) file's data, or a KemeError naming the flag, the file and the line of the problem
    (keme.yamlload: the one reader, with its bounds)."""
    return load(path, f"{flag} {path}").data


def load_params(path: Path | None) -> dict[str, dict[str, Any]]:
    """--params: a YAML mapping of system name to parameters, each checked against what the system
    declares."""
    if path is None:
        return {}
    return check_params_mapping(read_yaml(path, "--params"), f"--params {path}")


def check_params_mapping(data: Any, where: str) -> dict[str, dict[str, Any]]:
    """System name -> parameters (from --params or a --config's `params`), each checked against what the
    system declares; `where` names the source in errors."""
    if data is None:
        return {}
    if not isinstance(data, dict):
        raise KemeError(
            f"{where}: expected a mapping of system name to its parameters, got {type(data).__name__}"
        )
    checked = {}
    for name, values in data.items():
        if not isinstance(name, str):
            raise KemeError(f"{where}: system names are strings, not {name!r}")
        values = {} if values is None else values
        if not isinstance(values, dict):
            raise KemeError(
                f"{where}: {name}: expected a mapping of parameter to value, got {type(values).__name__}"
            )
        if any(not isinstance(key, str) for key in values):
            raise KemeError(f"{where}: {name}: parameter names are strings, not {list(values)!r}")
        checked[name] = _check_system_params(name, values)
    return checked


def _check_system_params(name: str, values: dict[str, Any]) -> dict[str, Any]:
    if not name.startswith("subprocess:"):
        return check_params(name, values)
    values = dict(values)
    own = {}
    if "command" in values:
        command = values.pop("command")
        try:
            own["command"] = TypeAdapter(list[str]).validate_python(command, strict=True)
        except ValidationError as exc:
            raise KemeError(
                f"--params: {name}.command: a list of strings (the server's argv), not {command!r}"
            ) from exc
    inner = name.split(":", 1)[1]
    if inner in REGISTRY:
        return own | check_params(inner, values)
    try:  # a system served from another environment checks its own parameters; they travel as JSON
        json.dumps(values)
    except (TypeError, ValueError) as exc:
        raise KemeError(f"--params: {name}: parameters must be plain JSON values ({exc})") from exc
    return own | values
