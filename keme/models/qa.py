"""Question–answer items with a machine-checkable proof of their answer."""

from __future__ import annotations

from datetime import date, datetime
from typing import Literal, get_args

from pydantic import BaseModel, ConfigDict, Field, SerializerFunctionWrapHandler, model_serializer

from keme.models.ids import Id
from keme.models.proof import Proof, Quote

QAType = Literal[
    "single_hop",
    "multi_hop",
    "temporal_reasoning",
    "knowledge_update",
    "implicit_preference",
    "preference_generalization",
    "relationship",
    "summarization",
    "abstention",
    "adversarial",
    "visual_reasoning",
    "open_domain",  # LoCoMo category 3 (imported datasets)
]
# the types KEME composes (visual questions come from the render stage, open_domain only from imports)
QA_TYPES: tuple[str, ...] = tuple(t for t in get_args(QAType) if t not in ("visual_reasoning", "open_domain"))
__all__ = ["QA_TYPES", "AnswerKind", "AnswerSpec", "Proof", "QAItem", "QAType", "Quote"]

AnswerKind = Literal["entity", "number", "date", "duration", "set", "yes_no", "choice", "abstain", "free"]


class AnswerSpec(BaseModel):
    """What a correct answer must contain, for deterministic (rule) judging."""

    model_config = ConfigDict(extra="forbid")

    kind: AnswerKind
    value: str | None = Field(
        default=None, description="canonical value: entity text, number, ISO date, seconds, letter, yes/no"
    )
    aliases: list[str] = Field(default_factory=list, description="other accepted surface forms")
    items: list[str] = Field(
        default_factory=list, description="set members or key points that must all be present"
    )
    ordered: bool = Field(default=False, description="set items must appear in this order")
    unit: str | None = None
    tolerance: float = 0.0
    option_value: str | None = Field(
        default=None,
        description="choice items made from an open question: the canonical value of the correct option",
    )
    cover: int | None = Field(
        default=None,
        description="key points (free): how many of the items a good answer covers, each in its own words "
        "or a paraphrase; None: all of them",
    )


class Query(BaseModel):
    """What a question asks, in the claim ledger's terms, so that `keme validate` can resolve it against
    every claim said before the question is asked, not only the quotes its proof picked.

    The subjects asked about are those of kind `subject` that have, for every qualifier in `where`, a
    claim with that predicate and value (`said_on` qualifies by a day a claim of the subject was said).
    The answer is the set of values their `target` claims take (`said_on` as a target: the days the
    subjects were talked about), at time `at` for claims that change (persona attributes). It must be
    exactly `expect`. An `image` query asks the screenshots shared before the question whose template
    and `about` match `where` (`said_on`: the day it was shared) for a fact of their rendered page.
    """

    model_config = ConfigDict(extra="forbid")

    subject: Literal["anchor", "event", "persona", "any", "image"]
    target: str = Field(
        description="a predicate, or 'said_on' for the days the subjects were talked about; for images, a "
        "fact read from the rendered page, 'lines' for how many lines it shows, or 'about.<key>' for what "
        "it is about (the value a chat line gives on its topic)"
    )
    where: dict[str, str] = Field(default_factory=dict, description="qualifier predicate -> canonical value")
    at: datetime | None = Field(default=None, description="claims valid at this time (default: asked_at)")
    pick: Literal["all", "first"] = Field(
        default="all", description="'first': only the earliest day (a question about the first time)"
    )
    source: Literal["any", "app"] = Field(
        default="any", description="'app': only the app's own records count ('by my bill records')"
    )
    start: date | None = Field(default=None, description="first day of the period asked about")
    end: date | None = Field(default=None, description="last day of the period asked about")
    aggregate: Literal["values", "count", "sum", "mode", "history", "span", "covers", "sessions"] = Field(
        default="values",
        description=(
            "what the answer is of the target claims (said within the period, if any): 'values' the set "
            "of their values; 'count' how many subjects have one; 'sum' the total of one value per "
            "subject; 'mode' the value most subjects have (a tie is two answers); 'history' the values "
            "in the order they took effect; 'span' days from the first to the last `said_on` day; "
            "'covers' the expected values are among them, from exactly one subject or period, and "
            "spread over the whole period; 'sessions' the time of day most sessions of the period began"
        ),
    )
    expect: list[str] = Field(description="the canonical values the resolution must give, exactly")


class QAItem(BaseModel):
    model_config = ConfigDict(extra="forbid")

    id: Id
    persona_id: Id
    question: str
    answer: str
    spec: AnswerSpec
    type: QAType
    subtype: str = Field(description="the generator, e.g. knowledge_update.previous or temporal.days_between")
    evidence: list[Id] = Field(
        description="a minimal set of message ids that support the answer: one per needed statement"
    )
    also_supported_by: dict[Id, list[Id]] = Field(
        default_factory=dict,
        description="for an evidence message, the other messages that state the same claims (an app "
        "record's restatement in chat): a hit on any of them counts as a hit on that evidence",
    )
    claims: list[Id] = Field(
        default_factory=list,
        description="ids of the claims the answer rests on (claims.jsonl); changing one of them changes "
        "or invalidates the answer",
    )
    evidence_sessions: list[Id]
    asked_at: datetime
    hops: int = Field(ge=0, description="reasoning steps, not the number of evidence messages")
    sub_questions: list[Id] = Field(default_factory=list)
    difficulty: Literal["easy", "medium", "hard"]
    language: Literal["en", "zh"]
    format: Literal["open", "single_choice", "multiple_choice"] = "open"
    options: list[str] = Field(
        default_factory=list, description="choices shown with the question, labelled A, B, ..."
    )
    node: Id = Field(description="event graph node where the item was composed")
    proof: Proof = Field(description="how the answer follows from the messages; `op` selects the arguments")
    queries: list[Query] = Field(
        default_factory=list,
        description="what the question asks (one query per fact it needs), each resolved against the "
        "whole claim ledger",
    )
    source_question_id: Id | None = Field(
        default=None, description="a hard-negative item (keme hardneg): the question it was made around"
    )
    distractor_kinds: list[str] = Field(
        default_factory=list,
        description="a hard-negative item: the kinds of the distractor sessions around its evidence",
    )
    flags: list[str] = Field(
        default_factory=list,
        description="an imported item's source findings, 'kind: detail' (keme.dataset.findings): what is "
        "wrong with it as published; left out of the scores unless `keme eval --include-flagged`",
    )

    @model_serializer(mode="wrap")
    def _without_unset_provenance(self, handler: SerializerFunctionWrapHandler) -> dict:
        """Hard-negative provenance and source findings are written only where there are some: other
        datasets keep their bytes."""
        data = handler(self)
        if isinstance(data, dict):
            if data.get("source_question_id") is None:
                data.pop("source_question_id", None)
            if not data.get("distractor_kinds"):
                data.pop("distractor_kinds", None)
            if not data.get("flags"):
                data.pop("flags", None)
        return data
