"""`keme eval --config FILE`: a run's settings kept in a YAML file (a paper's setup, a lab's defaults).

The file holds what the command line would say, under the option names without dashes (`judge_prompts`,
not `--judge-prompts`), plus the systems' parameters (`params`, as --params) and the reader's and judge's
LLM (`llm`, as --llm) inline. A flag given on the command line wins over the file; the file wins over the
flag's default. `k` may differ by modality, as the MobileMem paper's does (top 30 for text, 15 for Omni):
a dataset with screenshots is an Omni dataset.
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from eval.options import Images, JudgeKind, Mode, ReaderKind, check_params_mapping, read_yaml
from keme.errors import KemeError


class KByModality(BaseModel):
    """Hits given to the reader, by the dataset's modality."""

    model_config = ConfigDict(extra="forbid", strict=True)

    text: int = Field(ge=1)
    omni: int = Field(ge=1, description="a dataset with screenshots")


class EvalConfig(BaseModel):
    """The settings of `keme eval` a file may hold; anything unset keeps the command line's value."""

    model_config = ConfigDict(extra="forbid", strict=True)

    systems: str | list[str] | None = None
    k: Annotated[int, Field(ge=1)] | KByModality | None = None
    depth: int | None = Field(None, ge=1)
    mode: Mode | None = None
    roles: list[str] | None = None
    limit: int | None = Field(None, ge=1)
    images: Images | None = None
    reader: ReaderKind | None = None
    judge: JudgeKind | None = None
    judge_prompts: str | None = None
    judge_runs: int | None = Field(None, ge=1)
    disagreement_threshold: float | None = Field(None, ge=0, le=1)
    bootstrap: int | None = Field(None, ge=1)
    params: dict[str, Any] | None = None
    llm: dict[str, Any] | None = None

    def systems_arg(self) -> str | None:
        """`systems` as --systems takes it (a list is joined)."""
        return ",".join(self.systems) if isinstance(self.systems, list) else self.systems

    def k_for(self, has_screenshots: bool) -> int | None:
        if isinstance(self.k, KByModality):
            return self.k.omni if has_screenshots else self.k.text
        return self.k


_BRANCHES = {"constrained-int", "KByModality", "str", "int", "list[str]"}


def load_eval_config(path: Path) -> EvalConfig:
    """The file's settings, checked; a KemeError naming each bad key (and the keys a file may hold)."""
    data = read_yaml(path, "--config")
    if data is None:
        return EvalConfig()
    if not isinstance(data, dict):
        raise KemeError(f"--config {path}: expected a mapping of setting to value, got {type(data).__name__}")
    try:
        config = EvalConfig.model_validate(data)
    except ValidationError as exc:
        problems = []
        for error in exc.errors():
            # a union's branch names (`constrained-int`, `KByModality`) are dropped from the key
            top, *rest = error["loc"]
            if "constrained-int" in rest and isinstance(error["input"], dict):
                continue  # a mapping meant the by-modality branch: its errors say what is wrong
            key = ".".join([str(top), *(str(p) for p in rest if p not in _BRANCHES)])
            if error["type"] == "extra_forbidden":
                known = KByModality.model_fields if top == "k" else EvalConfig.model_fields
                problems.append(f"{key}: not a setting (known: {', '.join(known)})")
            else:
                problems.append(f"{key}: {error['msg']} (got {error['input']!r})")
        raise KemeError(f"--config {path}: " + "; ".join(dict.fromkeys(problems))) from exc
    if config.params is not None:
        config.params = check_params_mapping(config.params, f"--config {path}: params")
    return config
