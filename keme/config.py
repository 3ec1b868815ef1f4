"""Synthesis configuration: YAML validated by pydantic, with errors that name file, key and line."""

from __future__ import annotations

import hashlib
import json
from datetime import date
from pathlib import Path
from typing import Any, Literal

import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator, model_validator

from keme.errors import KemeError
from keme.models.anchor import APP_TYPES
from keme.omni.screens import TEMPLATES
from keme.llm.config import LLMConfig
from keme.models.qa import QA_TYPES
from keme.synth.catalog import CHANGES, EPISODE_KINDS


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid")


class PersonaSpec(_Strict):
    language: Literal["en", "zh"]
    start: date
    months: int = Field(ge=1, le=24)
    country: str | None = Field(default=None, description="ISO country for holidays; default US (en) / CN (zh)")

    @property
    def holiday_country(self) -> str:
        return self.country or ("CN" if self.language == "zh" else "US")


class GraphSpec(_Strict):
    max_depth: Literal[1, 2] = Field(default=2, description="1: episodes are leaves; 2: episodes expand into moments")
    min_events: int = Field(default=2, ge=2)
    max_events: int = Field(default=15, le=30)
    episodes_per_month: float = Field(default=12.0, gt=0, le=14)

    @model_validator(mode="after")
    def _range(self) -> GraphSpec:
        if self.min_events > self.max_events:
            raise ValueError(f"min_events ({self.min_events}) exceeds max_events ({self.max_events})")
        return self


def _default_anchor_rates() -> dict[str, float]:
    return {"bill": 4.0, "voice_memo": 1.2, "calendar": 1.8, "note": 1.2, "todo": 1.2, "screen": 1.2, "document": 0.6}


class AnchorSpec(_Strict):
    per_month: dict[Literal[APP_TYPES], float] = Field(default_factory=_default_anchor_rates)  # type: ignore[valid-type]


class ChangeSpec(_Strict):
    per_month: float = Field(default=0.85, ge=0, le=4)
    allowed: list[str] = Field(default_factory=lambda: [c for c in CHANGES if c not in ("commute_change", "gym_change")])

    @model_validator(mode="after")
    def _known(self) -> ChangeSpec:
        unknown = sorted(set(self.allowed) - CHANGES.keys())
        if unknown:
            raise ValueError(f"unknown changes {unknown}; known: {sorted(CHANGES)}")
        return self


class DialogueSpec(_Strict):
    reveal_weights: list[float] = Field(
        default_factory=lambda: [0.2, 0.55, 0.25], description="probability of 0, 1, 2, ... reveals per session"
    )


class EpisodeMix(_Strict):
    weights: dict[str, float] = Field(default_factory=dict, description="override episode kind weights")

    @model_validator(mode="after")
    def _known(self) -> EpisodeMix:
        unknown = sorted(set(self.weights) - EPISODE_KINDS.keys())
        if unknown:
            raise ValueError(f"unknown episode kinds {unknown}; known: {sorted(EPISODE_KINDS)}")
        return self


def _default_mix() -> dict[str, float]:
    return {
        "single_hop": 0.18, "multi_hop": 0.12, "temporal_reasoning": 0.12, "knowledge_update": 0.10,
        "implicit_preference": 0.06, "preference_generalization": 0.07, "relationship": 0.08,
        "summarization": 0.09, "abstention": 0.09, "adversarial": 0.09,
    }


class QASpec(_Strict):
    per_month: float = Field(default=32, gt=0, description="target QA items per persona-month")
    mix: dict[Literal[QA_TYPES], float] = Field(default_factory=_default_mix)  # type: ignore[valid-type]
    mid_trajectory_share: float = Field(default=0.3, ge=0, le=1, description="share asked during the trajectory")
    single_choice_share: float = Field(default=0.15, ge=0, le=1, description="open items turned into single choice")
    multiple_choice_share: float = Field(default=0.3, ge=0, le=1, description="set items turned into multiple choice")
    sample_per_node: int = Field(default=10, ge=2, description="unused child questions sampled per node")

    @model_validator(mode="after")
    def _mix_sums(self) -> QASpec:
        total = sum(self.mix.values())
        if not 0.99 <= total <= 1.01:
            raise ValueError(f"qa.mix must sum to 1 (it sums to {total:.3f})")
        return self


class BrainSpec(_Strict):
    mode: Literal["procedural", "llm", "hybrid"] = Field(
        default="procedural", description="procedural: no model; llm: every agent asks the LLM; "
                                          "hybrid: procedural plan, LLM-written dialogue")
    retries: int = Field(default=2, ge=0, description="validation-feedback rounds per node before falling back")
    fallback: Literal["procedural", "anomalous", "fail"] = Field(
        default="procedural", description="after the retries: use the procedural agent, use it but flag the node "
                                          "anomalous (excluded from QA), or stop")
    context_tokens: int = Field(default=8000, gt=0, description="cap on the compatibility context of one call")
    qa_composer: bool = Field(default=True, description="llm mode: let the LLM reword each question (checked)")
    qa_verifier: Literal["off", "advisory", "filter"] = Field(
        default="advisory", description="llm mode: the LLM second opinion on every item: count it, or drop what it rejects")


class OmniSpec(_Strict):
    """MobileMem-Omni: screenshots shared in sessions, and visual questions about them."""

    enabled: bool = Field(default=False, description="render screenshots as a stage of `keme synth`")
    per_month: float = Field(default=6.0, ge=0, le=30, description="screenshots per persona-month (every template "
                             "appears at least once per persona when there are enough sessions)")
    templates: list[str] = Field(default_factory=lambda: list(TEMPLATES), description="app screens to use")
    visual_share: float = Field(default=0.12, ge=0, le=0.5, description="share of the QA items that are visual_reasoning")
    scale: float = Field(default=1.0, ge=1, le=3, description="device pixel ratio of the PNGs (390x844 CSS px)")
    face_check: bool = Field(default=False, description="run insightface on every image (optional extra 'faces')")

    @field_validator("templates")
    @classmethod
    def _known_templates(cls, value: list[str]) -> list[str]:
        unknown = sorted(set(value) - set(TEMPLATES))
        if unknown:
            raise ValueError(f"unknown templates {unknown}; known: {list(TEMPLATES)}")
        return value


class SynthConfig(_Strict):
    name: str
    seed: int = 0
    personas: list[PersonaSpec] = Field(min_length=1)
    graph: GraphSpec = Field(default_factory=GraphSpec)
    episodes: EpisodeMix = Field(default_factory=EpisodeMix)
    anchors: AnchorSpec = Field(default_factory=AnchorSpec)
    changes: ChangeSpec = Field(default_factory=ChangeSpec)
    dialogue: DialogueSpec = Field(default_factory=DialogueSpec)
    qa: QASpec = Field(default_factory=QASpec)
    brain: BrainSpec = Field(default_factory=BrainSpec)
    llm: LLMConfig = Field(default_factory=LLMConfig)
    omni: OmniSpec = Field(default_factory=OmniSpec)

    def fingerprint(self) -> str:
        """Hash of everything that shapes the data but the seed: a dataset directory belongs to one fingerprint."""
        payload = self.model_dump(mode="json", exclude={"seed", "llm"})
        if self.brain.mode != "procedural":
            payload["llm"] = self.llm.identity()
        return hashlib.sha256(json.dumps(payload, sort_keys=True).encode()).hexdigest()


def _line_of(root: yaml.Node | None, loc: tuple[Any, ...]) -> int | None:
    """Line (1-based) of the YAML node at `loc`, or of its deepest existing parent."""
    node = root
    line = node.start_mark.line + 1 if node is not None else None
    for part in loc:
        if isinstance(node, yaml.MappingNode):
            match = next((v for k, v in node.value if k.value == part), None)
            if match is None:
                key = next((k for k, _ in node.value if k.value == part), None)
                return key.start_mark.line + 1 if key is not None else line
            node = match
        elif isinstance(node, yaml.SequenceNode) and isinstance(part, int) and part < len(node.value):
            node = node.value[part]
        else:
            break
        line = node.start_mark.line + 1
    return line


def _describe(err: dict[str, Any]) -> str:
    kind = err["type"]
    if kind == "extra_forbidden":
        return "unknown key (check the spelling; see configs/demo.yaml for the accepted keys)"
    if kind == "missing":
        return "required key is missing"
    got = err.get("input")
    return f"{err['msg']} (got {got!r})" if not isinstance(got, (dict, list)) else err["msg"]


def parse_config(text: str, source: str = "<config>") -> SynthConfig:
    try:
        data = yaml.safe_load(text)
        root = yaml.compose(text)
    except yaml.YAMLError as exc:
        raise KemeError(f"{source}: not valid YAML: {exc}") from exc
    if not isinstance(data, dict):
        raise KemeError(f"{source}: expected a mapping at the top level, got {type(data).__name__}")
    try:
        return SynthConfig.model_validate(data)
    except ValidationError as exc:
        lines = [f"{source}: invalid configuration"]
        for err in exc.errors():
            loc = tuple(p for p in err["loc"] if not (isinstance(p, str) and p.startswith("function-")))
            key = ".".join(str(p) for p in loc) or "(top level)"
            line = _line_of(root, loc)
            where = f"{source}:{line}" if line else source
            lines.append(f"  {where}: {key}: {_describe(err)}")
        raise KemeError("\n".join(lines)) from exc


def load_config(path: Path | str) -> SynthConfig:
    path = Path(path)
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as exc:
        raise KemeError(f"{path}: cannot read config ({exc.strerror})") from exc
    return parse_config(text, str(path))
