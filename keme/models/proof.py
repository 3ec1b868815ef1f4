"""A QA item's proof: an operation, the quotes it rests on, and the operation's typed arguments.

`Proof` is a union discriminated by `op` (on disk still `{op, quotes, args}`): each operation has its
own arguments model, so the JSON Schema documents what every operation takes and a proof with an
unknown operation or a mistyped argument fails when the dataset is loaded, not when it is verified.
keme/qa/ops.py registers one derivation per operation name (and refuses to import if one is missing).

Numbers and lists are strict (an int is a JSON number, a list a JSON list): datasets written before
issue 13 stored every argument as a string ("index": "0", "terms": "a|b"); loading one says to
regenerate it. `keme.qa.draft.proof` builds proofs from text arguments the way generators have them.
"""

from __future__ import annotations

import types
from datetime import date, datetime
from typing import Annotated, Any, Literal, Union, get_args, get_origin

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    SerializerFunctionWrapHandler,
    ValidationError,
    ValidationInfo,
    ValidatorFunctionWrapHandler,
    model_serializer,
    model_validator,
)

from keme.models.ids import Id


class Quote(BaseModel):
    """A claim about one message: it contains `text` and/or was sent on `on`."""

    model_config = ConfigDict(extra="forbid")

    message_id: Id
    text: str | None = None
    on: date | None = None


# how a quoted text is read: as written, or as the amount, number, duration (seconds) or date it states
Parse = Literal["text", "money", "int", "duration", "date"]
Day = Annotated[date, Field(description="first or last day of the period, inclusive (ISO date)")]


def _is_structured(annotation: Any) -> bool:
    """A field type that is not text in JSON (int, list, ...): an old dataset wrote a string for it."""
    if annotation is str:
        return False
    origin = get_origin(annotation)
    if origin is Literal:
        return False
    if origin in (Union, types.UnionType):
        return any(_is_structured(a) for a in get_args(annotation) if a is not type(None))
    return annotation in (int, float, bool) or origin in (list, tuple, dict)


def _is_list(annotation: Any) -> bool:
    return get_origin(annotation) is list


class Args(BaseModel):
    """The base of every operation's arguments: no unknown keys, no strings for numbers or lists."""

    model_config = ConfigDict(extra="forbid")

    @model_serializer(mode="wrap")
    def _unset_left_out(self, handler: SerializerFunctionWrapHandler) -> dict[str, Any]:
        """Optional arguments that are not given (None) are left out of qa.jsonl."""
        return {name: value for name, value in handler(self).items() if value is not None}

    @model_validator(mode="wrap")
    @classmethod
    def _old_form(cls, data: Any, handler: ValidatorFunctionWrapHandler, info: ValidationInfo) -> Any:
        """Arguments an older version wrote (all text) fail with a message that says to regenerate."""
        try:
            return handler(data)
        except ValidationError:
            if not isinstance(data, dict) or (info.context or {}).get(_PROBE):
                raise
            stringly = sorted(
                name
                for name, value in data.items()
                if isinstance(value, str)
                and name in cls.model_fields
                and _is_structured(cls.model_fields[name].annotation)
            )
            if not stringly or not cls._would_load_as_text(data):
                raise
            raise ValueError(
                f"{', '.join(f'{n}={data[n]!r}' for n in stringly)} written as text: proof arguments are "
                "typed (numbers as numbers, lists as lists) since issue 13, so this dataset was written by "
                "an older version; regenerate it with `keme synth`"
            ) from None

    @classmethod
    def _would_load_as_text(cls, data: dict[str, Any]) -> bool:
        """Whether `data` loads once text is read the old way ("0" -> 0, "a|b" -> ["a", "b"])."""
        old = dict(data)
        for name, value in data.items():
            field = cls.model_fields.get(name)
            if isinstance(value, str) and field is not None and _is_list(field.annotation):
                old[name] = [t for t in value.split("|") if t]
        try:
            cls.model_validate(old, strict=False, context={_PROBE: True})
        except ValidationError:
            return False
        return True


_PROBE = "keme.old_form_probe"


# ---------------------------------------------------------------- arguments, one model per operation
class ValueArgs(Args):
    """The answer is what one quote says, read as `parse`."""

    index: int = Field(default=0, ge=0, strict=True, description="which quote holds the value")
    parse: Parse = "text"


class AttributeArgs(Args):
    """The value a persona attribute has at `at` (default: when the question is asked); a quote must be
    evidence of it."""

    key: str = Field(description="persona attribute key, e.g. career.company")
    at: datetime | None = Field(default=None, description="the moment asked about; None = asked_at")
    version: Literal["current", "previous"] = Field(
        default="current", description="the value then, or the one before it"
    )


class HistoryArgs(Args):
    """Every value an attribute has taken up to the question, in order; each one quoted from its
    evidence."""

    key: str


class DateArgs(Args):
    """The day a quoted message was sent."""

    index: int = Field(default=0, ge=0, strict=True, description="which quote's message")


class DaysBetweenArgs(Args):
    """Days between the messages of quotes 0 and 1."""


class DaysBeforeArgs(Args):
    """Days from quote 0's message to the question."""


class OrderArgs(Args):
    """Which of quotes 0 (A) and 1 (B) came first, or with `later` which came last (asked both ways, so
    the earlier of two records is not the gold every time: the kinds said earlier differ in length)."""

    later: bool | None = Field(default=None, strict=True, description="the later of the two, not the first")


class SumArgs(Args):
    """The total of the amounts the first `n` quotes state; later quotes are premises."""

    n: int | None = Field(default=None, ge=1, strict=True, description="amount quotes; None = all quotes")


class CountArgs(Args):
    """How many `app` records of the period mention `needle`; the quotes must be exactly those."""

    app: str = Field(description="the app whose system messages are counted (bill, calendar, ...)")
    needle: str = Field(description="text every counted record contains")
    start: Day
    end: Day


class SumWhereArgs(CountArgs):
    """The total of the amounts of the `app` records of the period that mention `needle`; the quotes
    must be exactly those."""


class MajorityArgs(Args):
    """The single most frequent value of a bill field over the period (of one category's bills, where
    `category` names one: her regular grocery store)."""

    field: Literal["category", "payment_method", "merchant"]
    start: Day
    end: Day
    category: str | None = None


class TimeOfDayArgs(Args):
    """The single most frequent time-of-day block of the period's sessions."""

    start: Day
    end: Day


class KeyPointsArgs(Args):
    """Every key point of the answer spec holds a quote's text: the point is that value as a person
    summarizes it ("moved to Denver" for a message saying "Denver")."""


class PreferenceArgs(Args):
    """The one option that holds (`match`) or lacks (`avoid`) the attribute's value at the question."""

    key: str = Field(description="persona attribute key holding the preference or constraint")
    mode: Literal["match", "avoid"] = "match"


class RelationArgs(Args):
    """The person `name` holds attribute `name_key`; the answer is a fixed `label` or the value of
    attribute `label_key` (exactly one of the two)."""

    name_key: str
    name: str
    label: str | None = None
    label_key: str | None = None

    @model_validator(mode="after")
    def _one_label(self) -> RelationArgs:
        if (self.label is None) == (self.label_key is None):
            raise ValueError("give exactly one of label and label_key")
        return self


class AbsentArgs(Args):
    """Nothing in the trajectory mentions any of `terms`, and attribute `key` (if given) has no value."""

    terms: list[str] = Field(default_factory=list)
    key: str | None = None


class ImageFactArgs(Args):
    """A fact of the screenshot quote 0's message shares, read back from its rendered page."""

    image: Id = Field(description="the image record")
    parse: Literal["text", "money", "int", "duration", "date", "lines"] = Field(
        description="how the fact is read; `lines` counts the note's lines (no `fact`)"
    )
    fact: str | None = Field(default=None, description="key in the image record's facts")
    contains: str | None = Field(default=None, description="the answer is this part of the fact's text")

    @model_validator(mode="after")
    def _fact_unless_lines(self) -> ImageFactArgs:
        if (self.fact is None) != (self.parse == "lines"):
            raise ValueError("`fact` is required, except with parse='lines' (which takes none)")
        return self


class ImageCountArgs(Args):
    """How many screenshots of `template` were shared in the period; the quotes must be exactly their
    messages."""

    template: str = Field(description="screen template, e.g. bill")
    start: Day
    end: Day


class ImageSumArgs(ImageCountArgs):
    """The total of fact `fact` over the period's screenshots of `template`."""

    fact: str


class ImportedArgs(Args):
    """An item from a public benchmark: its gold is taken as given (only its evidence is checked)."""

    source: Literal["locomo", "longmemeval", "mobilemem", "mobilemem_omni"]
    category: int | None = Field(default=None, strict=True, description="LoCoMo question category")
    adversarial_answer: str | None = Field(default=None, description="LoCoMo: the answer the question baits")
    question_type: str | None = Field(default=None, description="LongMemEval or MobileMem question type")
    source_sample_id: str | None = Field(default=None, description="sample id before it was made safe")
    source_question_id: str | None = Field(default=None, description="question id before it was made safe")
    unresolved_evidence: list[str] | None = Field(
        default=None,
        description="evidence as the source wrote it that names no turn or session of the file (a source "
        "finding, keme.dataset.findings)",
    )
    source_fields: dict[str, Any] | None = Field(
        default=None,
        description="the source record's own fields where keme's form differs (a numeric answer, an "
        "evidence list as written, another format's type), so an export to that format gives them back",
    )


PremiseBase = Literal["date", "value", "attribute"]


class PremiseArgs(Args):
    """A question built on a false premise: the answer is the `base` operation's, and `check` proves the
    premise (`false`) wrong. The base operation's own arguments sit beside these."""

    base: PremiseBase
    false: str = Field(description="the false premise: an ISO date, an amount or a value")
    check: Literal["no_record_on", "not_in_sessions", "never_value", "amount_differs"] = Field(
        description="no_record_on: no `app` record mentioning `needle` on day `false`; not_in_sessions: "
        "the quoted sessions never say it; never_value: attribute `key` never took it; amount_differs: "
        "it is not the true amount"
    )
    # the base operation's arguments
    index: int = Field(default=0, ge=0, strict=True)
    parse: Parse = "text"
    key: str | None = None
    # no_record_on
    app: str | None = None
    needle: str | None = None

    @model_validator(mode="after")
    def _needs(self) -> PremiseArgs:
        if (self.base == "attribute" or self.check == "never_value") and self.key is None:
            raise ValueError(f"base={self.base!r}, check={self.check!r} need `key`")
        if self.check == "no_record_on":
            if self.app is None or self.needle is None:
                raise ValueError("check='no_record_on' needs `app` and `needle`")
            try:
                date.fromisoformat(self.false)
            except ValueError:
                raise ValueError(f"no_record_on needs an ISO date as `false`, not {self.false!r}") from None
        return self


# ---------------------------------------------------------------- proofs, one model per operation
class _Proof(BaseModel):
    """How the answer follows from the messages; `keme validate` re-derives it."""

    model_config = ConfigDict(extra="forbid")

    op: str  # each subclass narrows it to its own name (declared here so that JSON reads op, quotes, args)
    quotes: list[Quote]


class ValueProof(_Proof):
    op: Literal["value"]
    args: ValueArgs = Field(default_factory=ValueArgs)


class AttributeProof(_Proof):
    op: Literal["attribute"]
    args: AttributeArgs


class HistoryProof(_Proof):
    op: Literal["history"]
    args: HistoryArgs


class DateProof(_Proof):
    op: Literal["date"]
    args: DateArgs = Field(default_factory=DateArgs)


class DaysBetweenProof(_Proof):
    op: Literal["days_between"]
    args: DaysBetweenArgs = Field(default_factory=DaysBetweenArgs)


class DaysBeforeProof(_Proof):
    op: Literal["days_before"]
    args: DaysBeforeArgs = Field(default_factory=DaysBeforeArgs)


class OrderProof(_Proof):
    op: Literal["order"]
    args: OrderArgs = Field(default_factory=OrderArgs)


class SumProof(_Proof):
    op: Literal["sum"]
    args: SumArgs = Field(default_factory=SumArgs)


class CountProof(_Proof):
    op: Literal["count"]
    args: CountArgs


class SumWhereProof(_Proof):
    op: Literal["sum_where"]
    args: SumWhereArgs


class MajorityProof(_Proof):
    op: Literal["majority"]
    args: MajorityArgs


class TimeOfDayProof(_Proof):
    op: Literal["time_of_day"]
    args: TimeOfDayArgs


class KeyPointsProof(_Proof):
    op: Literal["key_points"]
    args: KeyPointsArgs = Field(default_factory=KeyPointsArgs)


class PreferenceProof(_Proof):
    op: Literal["preference"]
    args: PreferenceArgs


class RelationProof(_Proof):
    op: Literal["relation"]
    args: RelationArgs


class AbsentProof(_Proof):
    op: Literal["absent"]
    args: AbsentArgs = Field(default_factory=AbsentArgs)


class ImageFactProof(_Proof):
    op: Literal["image_fact"]
    args: ImageFactArgs


class ImageCountProof(_Proof):
    op: Literal["image_count"]
    args: ImageCountArgs


class ImageSumProof(_Proof):
    op: Literal["image_sum"]
    args: ImageSumArgs


class ImportedProof(_Proof):
    op: Literal["imported"]
    args: ImportedArgs


class PremiseProof(_Proof):
    op: Literal["premise"]
    args: PremiseArgs


PROOF_MODELS: tuple[type[_Proof], ...] = (
    ValueProof,
    AttributeProof,
    HistoryProof,
    DateProof,
    DaysBetweenProof,
    DaysBeforeProof,
    OrderProof,
    SumProof,
    CountProof,
    SumWhereProof,
    MajorityProof,
    TimeOfDayProof,
    KeyPointsProof,
    PreferenceProof,
    RelationProof,
    AbsentProof,
    ImageFactProof,
    ImageCountProof,
    ImageSumProof,
    ImportedProof,
    PremiseProof,
)

Proof = Annotated[Union[PROOF_MODELS], Field(discriminator="op")]  # type: ignore[valid-type]
"""Any proof; its `op` selects the arguments model."""

OpName = Literal[
    "value",
    "attribute",
    "history",
    "date",
    "days_between",
    "days_before",
    "order",
    "sum",
    "count",
    "sum_where",
    "majority",
    "time_of_day",
    "key_points",
    "preference",
    "relation",
    "absent",
    "image_fact",
    "image_count",
    "image_sum",
    "imported",
    "premise",
]
OP_NAMES: tuple[str, ...] = get_args(OpName)
# operation name -> its proof model and its arguments model
PROOF_OF: dict[str, type[_Proof]] = {get_args(m.model_fields["op"].annotation)[0]: m for m in PROOF_MODELS}
ARGS_OF: dict[str, type[Args]] = {name: m.model_fields["args"].annotation for name, m in PROOF_OF.items()}
assert tuple(PROOF_OF) == OP_NAMES, "OpName, PROOF_MODELS and Proof must list the same operations"
