"""Synthesis configuration: YAML validated by pydantic, with errors that name file, line, key and the fix.

The stated limits (also in each field's description, `keme schema` and README.md):
personas 1-99 per config; months 1-24 per persona, starting 2000-01-01..2097-12-31;
anchors.per_month 0-10 per app type and at most 30 in all; graph.max_events 8-30,
graph.min_events 2. This module checks the schema (`read_config`); whether every chapter
can ground the anchors it may receive depends on the planner, so `keme.synth.limits`
(`load_config`, `parse_config`) adds that check when a config is loaded for synthesis.
"""

from __future__ import annotations

import hashlib
import json
import re
from dataclasses import dataclass, field
from datetime import date
from pathlib import Path
from typing import Annotated, Any, Literal

import holidays
from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator, model_validator

from keme.errors import KemeError
from keme.llm.config import LLMConfig
from keme.models.anchor import APP_TYPES
from keme.models.catalog import CHANGES, EPISODE_KINDS
from keme.models.image import SCREEN_TEMPLATES
from keme.models.qa import QA_TYPES
from keme.yamlload import Document, parse, read_text

MAX_PERSONAS = 99  # persona ids are p01..p99
MAX_MONTHS = 24
FIRST_START, LAST_START = date(2000, 1, 1), date(2097, 12, 31)  # a trajectory ends by 2099 (holiday tables)
MAX_ANCHORS_PER_APP = 10.0
MAX_ANCHORS_PER_MONTH = 30.0
MIN_MAX_EVENTS, MAX_MAX_EVENTS = 8, 30
MAX_SEED = 2**63 - 1
MAX_REVEALS = 4  # reveal_weights has one weight for 0, 1, ... MAX_REVEALS facts per session

Share = Annotated[float, Field(ge=0, le=1)]
Weight = Annotated[float, Field(ge=0, le=100)]
AnchorRate = Annotated[float, Field(ge=0, le=MAX_ANCHORS_PER_APP)]
COUNTRIES = frozenset(holidays.list_supported_countries())


class _Strict(BaseModel):
    """No unknown keys, no silent coercion (`months: yes`, `seed: "7"`), no NaN or infinity."""

    model_config = ConfigDict(extra="forbid", strict=True, allow_inf_nan=False)


class PersonaSpec(_Strict):
    language: Literal["en", "zh"] = Field(
        description="en or zh: the language of the dialogue and the records"
    )
    start: date = Field(description="first day of the trajectory, YYYY-MM-DD, 2000-01-01..2097-12-31")
    months: int = Field(
        ge=1, le=MAX_MONTHS, description=f"length of the trajectory in months, 1-{MAX_MONTHS}"
    )
    country: str | None = Field(
        default=None,
        description="ISO 3166 code of the holiday calendar (any the `holidays` "
        "package supports, e.g. US, CN, GB, DE); default US (en) / CN (zh)",
    )

    @field_validator("start", mode="before")
    @classmethod
    def _iso_date(cls, value: object) -> date:
        if isinstance(value, str) and re.fullmatch(r"\d{4}-\d{2}-\d{2}", value):
            try:
                value = date.fromisoformat(value)
            except ValueError as exc:
                raise ValueError(
                    f"{value!r} is not a calendar date ({exc}); write it as YYYY-MM-DD, e.g. 2026-03-01"
                ) from None
        if type(value) is not date:
            raise ValueError(f"expected a date written YYYY-MM-DD, e.g. 2026-03-01, not {value!r}")
        if not FIRST_START <= value <= LAST_START:
            raise ValueError(f"{value} is outside {FIRST_START}..{LAST_START}")
        return value

    @field_validator("country")
    @classmethod
    def _known_country(cls, value: str | None) -> str | None:
        if value is None or value in COUNTRIES:
            return value
        hint = f"; did you mean {value.upper()!r}?" if value.upper() in COUNTRIES else ""
        raise ValueError(
            f"unknown country {value!r}: use an ISO 3166 code the holidays package knows, "
            f"e.g. US, CN, GB, DE{hint}"
        )

    @property
    def holiday_country(self) -> str:
        return self.country or ("CN" if self.language == "zh" else "US")


class GraphSpec(_Strict):
    max_depth: Literal[1, 2] = Field(
        default=2, description="1: episodes are leaves; 2: episodes expand into moments"
    )
    min_events: int = Field(
        default=2,
        ge=2,
        le=2,
        description="children per expanded event, at least: 2 (an episode "
        "expands into 2-4 moments, so no larger minimum can be kept)",
    )
    max_events: int = Field(
        default=15,
        ge=MIN_MAX_EVENTS,
        le=MAX_MAX_EVENTS,
        description=f"children per event, at most "
        f"({MIN_MAX_EVENTS}-{MAX_MAX_EVENTS}); the root's children are the chapters, so a trajectory "
        "of more calendar months than this gets chapters of several months",
    )
    episodes_per_month: float = Field(
        default=12.0, gt=0, le=14, description="planned episodes per chapter-month (0-14)"
    )


def _default_anchor_rates() -> dict[str, float]:
    return {
        "bill": 4.0,
        "voice_memo": 1.2,
        "calendar": 1.8,
        "note": 1.2,
        "todo": 1.2,
        "screen": 1.2,
        "document": 0.6,
    }


class AnchorSpec(_Strict):
    per_month: dict[Literal[APP_TYPES], AnchorRate] = Field(  # type: ignore[valid-type]
        default_factory=_default_anchor_rates,
        description=f"expected app records per month by app type: each 0-{MAX_ANCHORS_PER_APP:g}, at most "
        f"{MAX_ANCHORS_PER_MONTH:g} in all; an app type left out gets none",
    )

    @field_validator("per_month")
    @classmethod
    def _total(cls, value: dict[str, float]) -> dict[str, float]:
        total = sum(value.values())
        if total > MAX_ANCHORS_PER_MONTH:
            raise ValueError(
                f"the rates add up to {total:g} anchors per month; at most {MAX_ANCHORS_PER_MONTH:g} fit "
                "beside the conversations (each anchor needs a day block of its own)"
            )
        return value


class ChangeSpec(_Strict):
    per_month: float = Field(default=0.85, ge=0, le=4)
    allowed: list[str] = Field(
        default_factory=lambda: [c for c in CHANGES if c not in ("commute_change", "gym_change")]
    )

    @model_validator(mode="after")
    def _known(self) -> ChangeSpec:
        unknown = sorted(set(self.allowed) - CHANGES.keys())
        if unknown:
            raise ValueError(f"unknown changes {unknown}; known: {sorted(CHANGES)}")
        twice = sorted({c for c in self.allowed if self.allowed.count(c) > 1})
        if twice:
            raise ValueError(f"changes listed twice: {twice}")
        return self


class DialogueSpec(_Strict):
    reveal_weights: list[Weight] = Field(
        default_factory=lambda: [0.2, 0.55, 0.25],
        min_length=1,
        max_length=MAX_REVEALS + 1,
        description="relative chance of 0, 1, 2, ... persona facts mentioned in passing per session "
        f"(1-{MAX_REVEALS + 1} weights, each 0-100, not all 0)",
    )

    @field_validator("reveal_weights")
    @classmethod
    def _some_weight(cls, value: list[float]) -> list[float]:
        if not any(value):
            raise ValueError("all weights are 0; give at least one a positive weight")
        return value


class EpisodeMix(_Strict):
    weights: dict[str, Weight] = Field(
        default_factory=dict,
        description="override episode kind weights (each 0-100; "
        "kinds left out keep theirs; at least one kind must keep a positive weight)",
    )

    @model_validator(mode="after")
    def _known(self) -> EpisodeMix:
        unknown = sorted(set(self.weights) - EPISODE_KINDS.keys())
        if unknown:
            raise ValueError(f"unknown episode kinds {unknown}; known: {sorted(EPISODE_KINDS)}")
        # a pet episode needs a pet, which a persona may not have
        if not any(self.weights.get(k.name, k.weight) > 0 for k in EPISODE_KINDS.values() if not k.requires):
            raise ValueError(
                "every episode kind has weight 0; give at least one (not only pet) a positive weight"
            )
        return self


def _default_mix() -> dict[str, float]:
    return {
        "single_hop": 0.18,
        "multi_hop": 0.12,
        "temporal_reasoning": 0.12,
        "knowledge_update": 0.10,
        "implicit_preference": 0.06,
        "preference_generalization": 0.07,
        "relationship": 0.08,
        "summarization": 0.09,
        "abstention": 0.09,
        "adversarial": 0.09,
    }


class QASpec(_Strict):
    per_month: float = Field(
        default=32, gt=0, le=200, description="target QA items per persona-month (0-200)"
    )
    mix: dict[Literal[QA_TYPES], Share] = Field(
        default_factory=_default_mix,  # type: ignore[valid-type]
        description="share of each question type, each 0-1, summing to 1",
    )
    mid_trajectory_share: float = Field(
        default=0.3, ge=0, le=1, description="share asked during the trajectory"
    )
    single_choice_share: float = Field(
        default=0.15, ge=0, le=1, description="open items turned into single choice"
    )
    multiple_choice_share: float = Field(
        default=0.3, ge=0, le=1, description="set items turned into multiple choice"
    )
    sample_per_node: int = Field(
        default=10, ge=2, le=100, description="unused child questions sampled per node (2-100)"
    )

    @model_validator(mode="after")
    def _mix_sums(self) -> QASpec:
        total = sum(self.mix.values())
        if not 0.99 <= total <= 1.01:
            raise ValueError(f"qa.mix must sum to 1 (it sums to {total:.3f})")
        return self


class BrainSpec(_Strict):
    mode: Literal["procedural", "llm", "hybrid"] = Field(
        default="procedural",
        description="procedural: no model; llm: every agent asks the LLM; "
        "hybrid: procedural plan, LLM-written dialogue",
    )
    retries: int = Field(
        default=2, ge=0, le=10, description="validation-feedback rounds per node before falling back (0-10)"
    )
    fallback: Literal["procedural", "anomalous", "fail"] = Field(
        default="procedural",
        description="after the retries: use the procedural agent, use it but flag the node "
        "anomalous (excluded from QA), or stop",
    )
    context_tokens: int = Field(
        default=8000, gt=0, le=1_000_000, description="cap on the compatibility context of one call"
    )
    qa_composer: bool = Field(
        default=True, description="llm mode: let the LLM reword each question (checked)"
    )
    qa_verifier: Literal["off", "advisory", "filter"] = Field(
        default="advisory",
        description="llm mode: the LLM second opinion on every item: count it, or drop what it rejects",
    )


class OmniSpec(_Strict):
    """MobileMem-Omni: screenshots shared in sessions, and visual questions about them."""

    enabled: bool = Field(default=False, description="render screenshots as a stage of `keme synth`")
    per_month: float = Field(
        default=6.0,
        ge=0,
        le=30,
        description="screenshots per persona-month (every template "
        "appears at least once per persona when there are enough sessions)",
    )
    templates: list[str] = Field(
        default_factory=lambda: list(SCREEN_TEMPLATES), min_length=1, description="app screens to use"
    )
    visual_share: float = Field(
        default=0.12, ge=0, le=0.5, description="share of the QA items that are visual_reasoning"
    )
    scale: float = Field(
        default=1.0, ge=1, le=3, description="device pixel ratio of the PNGs (390x844 CSS px)"
    )
    face_check: bool = Field(
        default=False, description="run insightface on every image (optional extra 'faces')"
    )

    @field_validator("templates")
    @classmethod
    def _known_templates(cls, value: list[str]) -> list[str]:
        unknown = sorted(set(value) - set(SCREEN_TEMPLATES))
        if unknown:
            raise ValueError(f"unknown templates {unknown}; known: {list(SCREEN_TEMPLATES)}")
        return value


class HaystackSpec(_Strict):
    """The size each persona's data should reach, by filler sessions between its own (keme/synth/filler.py):
    LongMemEval_S is about 115k tokens a question, LongMemEval_M and MobileMem-Omni about 1.5-1.7M."""

    tokens: int | None = Field(
        default=None,
        ge=1_000,
        le=5_000_000,
        description="target tokens per persona (keme.text.tokens.count_tokens), 1,000-5,000,000; none: no "
        "filler. A persona whose own sessions already reach it gets none",
    )


class SynthConfig(_Strict):
    """A synthesis run. Limits: personas 1-99, months 1-24 each, anchors.per_month 0-10 per app and 30 in all,
    graph.max_events 8-30; each chapter must be able to ground the anchors it may receive (checked at
    load)."""

    name: str = Field(
        min_length=1,
        max_length=100,
        pattern=r"^[^\x00-\x1f\x7f]+$",
        description="a label for the dataset (one line, 1-100 characters)",
    )
    seed: int = Field(
        default=0, ge=0, le=MAX_SEED, description="0 to 2^63-1; the same config and seed give the same bytes"
    )
    personas: list[PersonaSpec] = Field(
        min_length=1, max_length=MAX_PERSONAS, description=f"one entry per persona, 1-{MAX_PERSONAS}"
    )
    graph: GraphSpec = Field(default_factory=GraphSpec)
    episodes: EpisodeMix = Field(default_factory=EpisodeMix)
    anchors: AnchorSpec = Field(default_factory=AnchorSpec)
    changes: ChangeSpec = Field(default_factory=ChangeSpec)
    dialogue: DialogueSpec = Field(default_factory=DialogueSpec)
    qa: QASpec = Field(default_factory=QASpec)
    brain: BrainSpec = Field(default_factory=BrainSpec)
    llm: LLMConfig = Field(default_factory=LLMConfig)
    omni: OmniSpec = Field(default_factory=OmniSpec)
    haystack: HaystackSpec = Field(default_factory=HaystackSpec)

    def fingerprint(self) -> str:
        """Hash of everything that shapes the data but the seed: a dataset directory belongs to one
        fingerprint (a config without filler hashes as it did before the haystack setting existed)."""
        payload = self.model_dump(mode="json", exclude={"seed", "llm"})
        if self.haystack.tokens is None:
            payload.pop("haystack")
        if self.brain.mode != "procedural":
            payload["llm"] = self.llm.identity()
        return hashlib.sha256(json.dumps(payload, sort_keys=True).encode()).hexdigest()


def _describe(err: dict[str, Any]) -> str:
    kind = err["type"]
    if kind == "extra_forbidden":
        return "unknown key (check the spelling; see configs/demo.yaml for the accepted keys)"
    if kind == "missing":
        return "required key is missing"
    message = err["msg"].removeprefix("Value error, ")
    got = err.get("input")
    if kind in ("int_type", "float_type", "bool_type") and isinstance(got, str):
        message += " (a quoted value is text: write numbers and true/false without quotes)"
    return (
        f"{message} (got {got!r})" if not isinstance(got, (dict, list)) and kind != "value_error" else message
    )


@dataclass(frozen=True)
class ConfigRead:
    """A config that passed the schema, and the way back to its lines for problems found later (the
    limits)."""

    config: SynthConfig
    document: Document = field(repr=False)

    @property
    def source(self) -> str:
        return self.document.source

    def where(self, loc: tuple[Any, ...]) -> str:
        """`file:line` of the YAML node at `loc` (or of its deepest existing parent)."""
        return self.document.where(loc)


def read_config(text: str, source: str = "<config>", seed: int | None = None) -> ConfigRead:
    """Validate a config's text against the schema; every problem is named with file:line, key and what to do.

    `seed` replaces the config's own (`keme synth --seed`). The planner's limits are not checked here
    (see `keme.synth.limits.parse_config`).
    """
    document = parse(text, source)
    data = document.data
    if data is None:
        raise KemeError(
            f"{source}: the config is empty; it needs at least `name` and `personas` (see configs/demo.yaml)"
        )
    if not isinstance(data, dict):
        raise KemeError(
            f"{document.where()}: expected a mapping of keys (name, personas, ...) at the top "
            f"level, got a {type(data).__name__} (see configs/demo.yaml)"
        )
    try:
        cfg = SynthConfig.model_validate(data)
    except ValidationError as exc:
        lines = [f"{source}: invalid configuration"]
        for err in exc.errors():
            loc = tuple(
                p
                for p in err["loc"]
                if not (isinstance(p, str) and (p.startswith("function-") or p == "[key]"))
            )
            key = ".".join(str(p) for p in loc) or "(top level)"
            lines.append(f"  {document.where(loc)}: {key}: {_describe(err)}")
        raise KemeError("\n".join(lines)) from exc
    if seed is not None:
        if not 0 <= seed <= MAX_SEED:
            raise KemeError(f"--seed must be between 0 and 2^63-1 ({MAX_SEED}), not {seed}")
        cfg = cfg.model_copy(update={"seed": seed})
    return ConfigRead(cfg, document)


def config_from_manifest(data: object, source: str) -> SynthConfig:
    """The synthesis config a dataset's manifest records, or a KemeError naming what is wrong with it."""
    if not isinstance(data, dict):
        raise KemeError(
            f"{source}: the manifest has no synthesis config; "
            "screenshots and QA are built from a KEME trajectory"
        )
    try:
        return SynthConfig.model_validate(data)
    except ValidationError as exc:
        detail = "; ".join(f"{'.'.join(map(str, e['loc']))}: {_describe(e)}" for e in exc.errors()[:5])
        raise KemeError(
            f"{source}: the manifest's config is not valid ({detail}); was the manifest edited? "
            "Synthesize the dataset again"
        ) from exc


def read_config_file(path: Path | str) -> str:
    """A config file's text; what is not a regular UTF-8 file of a sane size is named (keme.yamlload)."""
    return read_text(path)
