"""Load, validate and compile the language resources under keme/text/<lang>/.

Errors name the file and the offending key, so a content writer can fix a
pattern without reading this code. See FORMAT.md for the file formats.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal, Union, cast

from pydantic import BaseModel, ConfigDict, Field, ValidationError, ValidationInfo, field_validator

from keme.days import Block
from keme.errors import KemeError
from keme.text.presup import DOC_FEATURES, Presup, PresupError
from keme.text.presup import parse as parse_presup
from keme.text.template import Template, TemplateError, compile_template
from keme.yamlload import YamlError
from keme.yamlload import load as load_yaml

ROOT = Path(__file__).parent
LANGUAGES = ("en", "zh")


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid")


# a line's speech act (keme.synth.speech): the small talk that goes with it is chosen by it
Speech = Literal["thanks", "complaint", "good_news", "request", "question", "plan", "statement"]


class ExchangeText(_Strict):
    u: str
    a: str
    # what the user line states without a slot ({purpose: shared}): recorded as claims, and the option
    # is only drawn where the world allows it (keme.world.rules)
    says: dict[str, str] = Field(default_factory=dict)
    # what the line takes for granted (keme.text.presup): drawn only where the world holds it
    presup: dict[str, str] = Field(default_factory=dict)
    # a reveal line's act (keme.synth.acts): `tell` gives the fact as news (once per fact), a
    # `request` asks a one-off favour it is tied to (once per fact a year), a `mention` says it in
    # passing and takes it as known (only once it was told); declared on every reveal line
    act: Literal["tell", "request", "mention"] | None = None
    # the user line's speech act where its words would mislead the classifier (keme.synth.speech.act_of)
    speech: Speech | None = None


class BeatText(_Strict):
    p: float = Field(default=1.0, gt=0, le=1)
    options: list[ExchangeText] = Field(min_length=1)


class PatternText(_Strict):
    reveals: list[str] = Field(default_factory=list)
    beats: list[Union[BeatText, Literal["reveal", "update"]]] = Field(min_length=1)


class AttributeText(_Strict):
    values: list[str] = Field(default_factory=list)
    reveal: list[ExchangeText] = Field(min_length=1)
    # the values that go with another attribute's value: {"diet.diet_type": {"vegan": ["lentil soup", ...]}}
    # (a usual lunch fits the diet); the persona starts with, and a change picks, only a value that fits
    fits: dict[str, dict[str, list[str]]] = Field(default_factory=dict)
    # the day block a value keeps the persona's own chats in ({"night owl": "evening"}): her chat habit
    # (keme.models.Habits) agrees with what she says about her sleep; a value not named leaves it free
    chat_block: dict[str, Block] = Field(default_factory=dict)

    @field_validator("chat_block")
    @classmethod
    def _known_values(cls, table: dict[str, Block], info: ValidationInfo) -> dict[str, Block]:
        unknown = sorted(set(table) - set(info.data.get("values", [])))
        if unknown:
            raise ValueError(f"chat_block names values the attribute does not have: {', '.join(unknown)}")
        return table

    def fitting(self, held: dict[str, str]) -> list[str]:
        """The values that fit what the persona holds (`held`: attribute key -> value); all values when
        the attribute pairs with nothing."""
        options = self.values
        for key, table in sorted(self.fits.items()):
            if key in held:
                options = [v for v in options if v in table.get(held[key], [])]
        return options


class ChangeText(_Strict):
    update: list[ExchangeText] = Field(min_length=1)


class PersonaText(_Strict):
    attributes: dict[str, AttributeText]
    changes: dict[str, ChangeText]


class Names(_Strict):
    given_female: list[str] = Field(min_length=10)
    given_male: list[str] = Field(min_length=10)
    family: list[str] = Field(min_length=10)
    format: str


class City(_Strict):
    name: str
    neighborhoods: list[str] = Field(min_length=3)


class Destination(_Strict):
    name: str
    attractions: list[str] = Field(min_length=2)
    foods: list[str] = Field(min_length=2)


class Product(_Strict):
    name: str
    category: str
    price: tuple[int, int]


class Title(_Strict):
    title: str
    genre: str


class Pools(_Strict):
    names: Names
    cities: list[City] = Field(min_length=4)
    destinations: list[Destination] = Field(min_length=8)
    products: list[Product] = Field(min_length=10)
    titles: list[Title] = Field(min_length=10)
    lists: dict[str, list[str]]

    @field_validator("lists")
    @classmethod
    def _non_empty(cls, lists: dict[str, list[str]]) -> dict[str, list[str]]:
        empty = [name for name, items in lists.items() if not items]
        if empty:
            raise ValueError(f"empty lists: {', '.join(empty)}")
        return lists


def _among(values: list[str], known: list[str], problem: str) -> list[str]:
    """`values` if each is one of `known`, else an error naming the others (a habit names what exists)."""
    unknown = sorted(set(values) - set(known))
    if unknown:
        raise ValueError(f"{problem}: {', '.join(unknown)}")
    return values


class BillCategory(_Strict):
    label: str
    merchants: list[str] = Field(min_length=2)
    amount: tuple[float, float]
    off_holidays: bool = Field(
        default=False,
        description="a payment to an account (rent, a utility): never made on a public holiday or 除夕",
    )
    regular: list[str] = Field(
        default_factory=list,
        description="the merchants one goes back to (a coffee shop, a supermarket): the persona has a "
        "favourite among them and pays there most of the time (keme.models.Habits.regulars); none: no "
        "favourite in the category",
    )

    @field_validator("regular")
    @classmethod
    def _among_merchants(cls, regular: list[str], info: ValidationInfo) -> list[str]:
        return _among(regular, info.data.get("merchants", []), "regular names merchants the category lacks")


class BillText(_Strict):
    app_name: str
    currency: str
    payment_methods: list[str] = Field(min_length=2)
    # the methods that fit any payment (a card, not its online or contactless use), among which a persona
    # has her usual one (keme.models.Habits); none named: any of them
    usual_methods: list[str] = Field(default_factory=list)
    categories: dict[str, BillCategory]
    message: str
    mention: list[ExchangeText] = Field(min_length=1)

    @field_validator("usual_methods")
    @classmethod
    def _among_methods(cls, usual: list[str], info: ValidationInfo) -> list[str]:
        return _among(usual, info.data.get("payment_methods", []), "usual_methods not among payment_methods")


class VoiceMemoItem(_Strict):
    title: str
    transcript: str
    work: bool = False  # about the job (a standup, a weekly meeting): recorded on a workday only


class CalendarItem(_Strict):
    title: str
    location: str
    minutes: int = Field(gt=0)
    part: Literal["morning", "afternoon", "evening"]
    attendees: list[str] = Field(default_factory=list)
    work: bool = False  # held at or for the job (a weekly meeting, a review): falls on a workday only
    once: bool = False  # a one-off life event (a friend's wedding): on a persona's calendar at most once


class NoteItem(_Strict):
    title: str
    body: str


class TodoItem(_Strict):
    title: str
    list_name: str
    priority: Literal["low", "medium", "high"]
    once: bool = False  # about a one-off life event (RSVP to a wedding): on a persona's list at most once


class ScreenItem(_Strict):
    source_app: str
    title: str
    text: str


class DocumentItem(_Strict):
    title: str
    doc_type: str
    pages: tuple[int, int]
    summary: str
    # what it holds (keme.text.presup.DOC_FEATURES): talk about it says only what it holds (`presup: {doc: }`)
    profile: list[str] = Field(default_factory=list)

    @field_validator("profile")
    @classmethod
    def _features(cls, value: list[str]) -> list[str]:
        unknown = sorted(set(value) - set(DOC_FEATURES))
        if unknown:
            raise ValueError(f"unknown document features {unknown}; known: {', '.join(DOC_FEATURES)}")
        return value


class _AppText(_Strict):
    app_name: str
    message: str
    mention: list[ExchangeText] = Field(min_length=1)


class VoiceMemoText(_AppText):
    items: list[VoiceMemoItem] = Field(min_length=5)


class CalendarText(_AppText):
    items: list[CalendarItem] = Field(min_length=5)


class NoteText(_AppText):
    items: list[NoteItem] = Field(min_length=5)


class TodoText(_AppText):
    items: list[TodoItem] = Field(min_length=5)
    priorities: dict[Literal["low", "medium", "high"], str]


class ScreenText(_AppText):
    items: list[ScreenItem] = Field(min_length=5)


class DocumentText(_AppText):
    items: list[DocumentItem] = Field(min_length=5)


class AnchorText(_Strict):
    bill: BillText
    voice_memo: VoiceMemoText
    calendar: CalendarText
    note: NoteText
    todo: TodoText
    screen: ScreenText
    document: DocumentText


Register = Literal["casual", "polite"]
Shape = Literal["thread", "quick"]
PART_KINDS = ("openers", "segues", "followups", "acks", "offers", "closers")
PART_SLOTS = frozenset({"part_of_day"})  # the only world a part may name: the time of day, said right


class PartText(_Strict):
    text: str = Field(min_length=1)
    tone: Register | None = Field(default=None, alias="register")  # None: fits either register
    shape: Shape | None = None  # None: fits a planning thread and a quick check alike
    # follow-ups: the user's own line it may follow; acks and segues: the other side's line it answers
    # (request: "can you…", "remind me…", "帮我…")
    after: Literal["question", "statement", "request", "thanks"] | None = None
    leads: Literal["question", "statement"] | None = None  # openers, segues: the line it may lead
    # a greeting fits only the session's first reply, a wish ("have a good evening") only its last message
    at: Literal["start", "end"] | None = None
    # it throws doubt on the line it goes with ("or maybe not, idk"): never next to a line that states a fact
    hedge: bool = False
    # the speech acts (keme.synth.speech) of the line it fits: an ack the user line it answers, an opener,
    # segue or follow-up the user's own line; none declared: the plain acts (question, request, plan,
    # statement), so a complaint, good news or a thanks gets only a part written for it
    acts: list[Speech] = Field(default_factory=list)


class PartsText(_Strict):
    openers: list[PartText] = Field(min_length=30)
    segues: list[PartText] = Field(min_length=20)
    followups: list[PartText] = Field(min_length=30)
    acks: list[PartText] = Field(min_length=30)
    offers: list[PartText] = Field(min_length=15)
    closers: list[PartText] = Field(min_length=30)


class ResourceError(KemeError, ValueError):
    """A text resource under keme/text/<lang>/ does not parse or breaks its schema: fix the named file."""


@dataclass(frozen=True)
class Exchange:
    u: Template
    a: Template
    says: tuple[tuple[str, str], ...] = ()
    presup: Presup = Presup()
    act: str | None = None  # a reveal line's speech act: tell | request | mention
    speech: str | None = None  # the user line's declared speech act; None: read off its words


@dataclass(frozen=True)
class Beat:
    p: float
    options: tuple[Exchange, ...]


@dataclass(frozen=True)
class Pattern:
    name: str
    reveals: tuple[str, ...]
    beats: tuple[Beat | str, ...]  # str = "reveal" | "update" marker


@dataclass(frozen=True)
class TalkPart:
    """One piece of small talk: asserts nothing, so it can go around any beat that fits its tags."""

    template: Template
    register: str | None
    shape: str | None
    after: str | None = None
    leads: str | None = None
    at: str | None = None  # start: the session's first reply only; end: its last message only
    hedge: bool = False  # throws doubt on its line: never next to a line that states a fact
    acts: frozenset[str] = frozenset()  # the speech acts of the line it fits (keme.synth.speech); none: plain


@dataclass(frozen=True)
class Parts:
    """The small-talk parts of one language, indexed by (kind, register, shape)."""

    by_kind: dict[str, tuple[TalkPart, ...]]
    index: dict[tuple[str, str, str], tuple[TalkPart, ...]] = field(default_factory=dict)

    def options(self, kind: str, register: str, shape: str, after: str | None = None) -> tuple[TalkPart, ...]:
        """The parts of `kind` that fit a session of this register and shape (and follow a line of kind
        `after`: question | statement | request | thanks, when given). A thanks is answered only by a part
        made for it ("Anytime."), or by none: "Makes sense." or "Good question." would not follow it."""
        fits = self.index[(kind, register, shape)]
        if after is None:
            return fits
        if after == "thanks":
            return tuple(p for p in fits if p.after == "thanks")
        fitting = tuple(p for p in fits if p.after in (None, after))
        # none made for a question: no part at all ("Makes sense." would answer "Is it good?")
        return fitting or (() if after == "question" else fits)


@dataclass(frozen=True)
class Resources:
    """Everything one language needs, validated and compiled."""

    lang: str
    pools: Pools
    flat_pools: dict[str, list[str]]
    persona: PersonaText
    reveals: dict[str, tuple[Exchange, ...]]
    updates: dict[str, tuple[Exchange, ...]]
    patterns: dict[str, Pattern]
    anchors: AnchorText
    anchor_messages: dict[str, Template]
    anchor_mentions: dict[str, tuple[Exchange, ...]]
    parts: Parts = field(default_factory=lambda: Parts({}))


def _read_yaml(path: Path) -> object:
    if not path.exists():
        raise ResourceError(f"{path}: missing resource file")
    try:
        return load_yaml(path, shipped=True).data
    except YamlError as exc:
        raise ResourceError(str(exc)) from exc


def parse_file(model: type[BaseModel], path: Path) -> BaseModel:
    data = _read_yaml(path)
    try:
        return model.model_validate(data)
    except ValidationError as exc:
        lines = [f"{path}: invalid resource"]
        for err in exc.errors():
            loc = ".".join(str(p) for p in err["loc"])
            lines.append(f"  {loc}: {err['msg']}")
        raise ResourceError("\n".join(lines)) from exc


def _compile(source: str, where: str) -> Template:
    try:
        return compile_template(source)
    except TemplateError as exc:
        raise ResourceError(f"{where}: {exc}") from exc


def _presup(decl: dict[str, str], where: str) -> Presup:
    try:
        return parse_presup(decl)
    except PresupError as exc:
        raise ResourceError(f"{where}.presup: {exc}") from exc


def _exchanges(items: list[ExchangeText], where: str) -> tuple[Exchange, ...]:
    return tuple(
        Exchange(
            _compile(item.u, f"{where}[{i}].u"),
            _compile(item.a, f"{where}[{i}].a"),
            tuple(sorted(item.says.items())),
            _presup(item.presup, f"{where}[{i}]"),
            act=item.act,
            speech=item.speech,
        )
        for i, item in enumerate(items)
    )


def _pattern(name: str, raw: object, path: Path) -> Pattern:
    try:
        text = PatternText.model_validate(raw)
    except ValidationError as exc:
        details = "; ".join(f"{'.'.join(map(str, e['loc']))}: {e['msg']}" for e in exc.errors()[:5])
        raise ResourceError(f"{path}: pattern {name!r}: {details}") from exc
    beats: list[Beat | str] = []
    for i, beat in enumerate(text.beats):
        if isinstance(beat, str):
            beats.append(beat)
        else:
            beats.append(Beat(beat.p, _exchanges(beat.options, f"{path}: {name}.beats[{i}].options")))
    return Pattern(name, tuple(text.reveals), tuple(beats))


def load_pattern_pools(folder: Path, base: dict[str, list[str]]) -> dict[str, list[str]]:
    flat = dict(base)
    for path in sorted(folder.glob("pattern_pools*.yaml")):
        extra = _read_yaml(path) or {}
        if not isinstance(extra, dict):
            raise ResourceError(f"{path}: expected a mapping of list name -> items")
        for name, items in extra.items():
            if name in flat:
                raise ResourceError(f"{path}: list {name!r} is defined twice")
            if not isinstance(items, list) or not items or not all(isinstance(i, str) for i in items):
                raise ResourceError(f"{path}: {name}: expected a non-empty list of strings")
            flat[name] = items
    return flat


def load_patterns(folder: Path) -> dict[str, Pattern]:
    patterns: dict[str, Pattern] = {}
    pattern_files = sorted(folder.glob("patterns*.yaml"))
    if not pattern_files:
        raise ResourceError(f"{folder}: no patterns*.yaml file")
    for path in pattern_files:
        raw_patterns = _read_yaml(path) or {}
        if not isinstance(raw_patterns, dict):
            raise ResourceError(f"{path}: expected a mapping of moment -> pattern")
        for name, raw in raw_patterns.items():
            if name in patterns:
                raise ResourceError(f"{path}: pattern {name!r} is defined twice")
            patterns[name] = _pattern(name, raw, path)
    return patterns


def _talk_part(item: PartText, where: str) -> TalkPart:
    template = _compile(item.text, where)
    said = {p.kind for p in template.parts} - {"text", "alt", "slot"}
    wrong = sorted(template.slots - PART_SLOTS)
    if said or wrong:
        named = ", ".join(sorted(said) + [f"{{{w}}}" for w in wrong])
        raise ResourceError(
            f"{where}: {item.text!r} says {named}; parts assert nothing about the world: "
            "only plain text, {a|b} and {part_of_day}"
        )
    if any(ch.isdigit() for ch in item.text):
        raise ResourceError(f"{where}: {item.text!r} has a number; parts assert nothing about the world")
    acts = frozenset(item.acts) | ({"thanks"} if item.after == "thanks" else set())
    return TalkPart(template, item.tone, item.shape, item.after, item.leads, item.at, item.hedge, acts)


def load_parts(path: Path) -> Parts:
    """Read and check `parts.yaml`: every part compiles and names nothing but {part_of_day}."""
    text = cast(PartsText, parse_file(PartsText, path))
    by_kind = {
        kind: tuple(_talk_part(item, f"{path}: {kind}[{i}]") for i, item in enumerate(getattr(text, kind)))
        for kind in PART_KINDS
    }
    index = {}
    for kind, items in by_kind.items():
        for register in ("casual", "polite"):
            for shape in ("thread", "quick"):
                fits = tuple(p for p in items if p.register in (None, register) and p.shape in (None, shape))
                if not any(not p.template.slots and p.at is None and p.leads is None for p in fits):
                    raise ResourceError(
                        f"{path}: {kind}: no part without {{part_of_day}} fits a {register} {shape} session"
                    )
                index[(kind, register, shape)] = fits
    return Parts(by_kind, index)


def load(lang: str, root: Path = ROOT) -> Resources:
    """Load one language's resources from `root/<lang>/` (uncached; see `get`)."""
    folder = root / lang
    pools = parse_file(Pools, folder / "pools.yaml")
    flat = load_pattern_pools(folder, pools.lists)
    persona = parse_file(PersonaText, folder / "persona.yaml")
    anchors = parse_file(AnchorText, folder / "anchors.yaml")
    patterns = load_patterns(folder)
    where_p = folder / "persona.yaml"
    reveals = {
        key: _exchanges(attr.reveal, f"{where_p}: attributes.{key}.reveal")
        for key, attr in persona.attributes.items()
    }
    updates = {
        key: _exchanges(change.update, f"{where_p}: changes.{key}.update")
        for key, change in persona.changes.items()
    }
    where_a = folder / "anchors.yaml"
    anchor_messages = {}
    anchor_mentions = {}
    for app in ("bill", "voice_memo", "calendar", "note", "todo", "screen", "document"):
        app_text = getattr(anchors, app)
        anchor_messages[app] = _compile(app_text.message, f"{where_a}: {app}.message")
        anchor_mentions[app] = _exchanges(app_text.mention, f"{where_a}: {app}.mention")
    parts = load_parts(folder / "parts.yaml")
    return Resources(
        lang,
        pools,
        flat,
        persona,
        reveals,
        updates,
        patterns,
        anchors,
        anchor_messages,
        anchor_mentions,
        parts,
    )


@functools.cache
def get(lang: str) -> Resources:
    """Resources for `lang`, loaded once per process."""
    if lang not in LANGUAGES:
        raise ResourceError(f"unsupported language {lang!r}; expected one of {', '.join(LANGUAGES)}")
    return load(lang)
