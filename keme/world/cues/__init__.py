"""Cue lexicons: the words that tie a message to a clock time, a weekday, a place or a state.

One YAML file per language (keme/world/cues/<lang>.yaml), read into `Cues`. The coherence checker
matches them against message text; every pattern is a case-insensitive regular expression, so English
ones carry their own word boundaries. Patterns are compiled once, when the file is loaded.
"""

from __future__ import annotations

import functools
import re
from pathlib import Path

from pydantic import BaseModel, ConfigDict, Field, model_validator

from keme.errors import KemeError
from keme.world.yamlfile import read_model

ROOT = Path(__file__).parent


class CuesError(KemeError, ValueError):
    """A cue file is missing or malformed: fix keme/world/cues/<lang>.yaml."""


class TimeCue(BaseModel):
    """A phrase that says what time of day it is when it is said."""

    model_config = ConfigDict(extra="forbid")

    name: str
    patterns: list[str] = Field(min_length=1)
    hours: list[tuple[int, int]] = Field(min_length=1, description="[from, to) clock hours it may be said in")
    unless: list[str] = Field(
        default_factory=list, description="words that make the phrase about later today (a plan, a wish)"
    )

    def allows(self, hour: int) -> bool:
        return any(lo <= hour < hi for lo, hi in self.hours)


class HolidayCue(BaseModel):
    """Words that name a public holiday as the moment's business ("过年回家", "Christmas party"): said from
    `before` days ahead of the holiday's first day to `after` days past it."""

    model_config = ConfigDict(extra="forbid")

    holiday: str = Field(description="its name as the `holidays` package gives it in this language")
    patterns: list[str] = Field(min_length=1)
    before: int = Field(ge=0)
    after: int = Field(ge=0)


class Cues(BaseModel):
    """One language's cue lexicon (see en.yaml for what each list means)."""

    model_config = ConfigDict(extra="forbid")

    times: list[TimeCue]
    other_day: list[str]
    weekdays: list[list[str]] = Field(min_length=7, max_length=7, description="Monday first")
    today_weekday: list[str]
    day_of_month: list[str]
    dated_weekday: list[str]
    months: list[str] = Field(min_length=12, max_length=12)
    month_abbreviations: list[str] = Field(min_length=12, max_length=12)
    office: list[str]
    commute: list[str]
    overtime: list[str]
    workday: list[str] = Field(default_factory=list, description="words that put work in today: after work")
    workday_bills: list[str] = Field(
        default_factory=list,
        description="the wallet's bill categories paid to an account (rent, a utility), never on a holiday",
    )
    holidays: list[HolidayCue] = Field(default_factory=list)
    holiday_other_year: list[str] = Field(
        default_factory=list, description="words that put a holiday in another year: last Christmas, 去年"
    )
    remote: list[str]
    arrival: list[str]
    trip_day_one: list[str]
    trip_return: list[str]
    first_day_job: list[str]
    first_visit: list[str] = Field(
        default_factory=list, description="words that say the persona has not been to a place before"
    )
    present: list[str]
    past: list[str]
    training_per_week: list[str]
    training_not: list[str]
    training_none: list[str]
    week_count: list[str]
    numbers: dict[str, int]
    party_size: list[str]
    split: list[str]
    purpose_for_someone: list[str]
    purpose_shared: list[str]
    purpose_not_shared: list[str]
    health_categories: list[str]
    objects: dict[str, list[str]]
    broken: list[str]
    working: list[str]
    repaired: list[str]
    methods: dict[str, list[str]]
    news: list[str] = Field(
        default_factory=list, description="words that give a persona fact as news to the assistant"
    )

    @model_validator(mode="after")
    def _compiles(self) -> Cues:
        for name, value in self:
            for pattern in _strings(value):
                try:
                    re.compile(pattern.replace("{weekday}", "x"))
                except re.error as exc:
                    raise ValueError(
                        f"{name}: pattern {pattern!r} is not a regular expression: {exc}"
                    ) from None
        return self

    def search(self, patterns: list[str], text: str) -> re.Match[str] | None:
        """The first match of any of `patterns` in `text`."""
        if not patterns or not _combined(tuple(patterns)).search(text):
            return None  # one pass over the text rules most messages out
        for pattern in patterns:
            found = _compiled(pattern).search(text)
            if found:
                return found
        return None

    def any(self, patterns: list[str], text: str) -> bool:
        return self.search(patterns, text) is not None

    def number(self, word: str) -> int | None:
        """A count as said: digits or a number word ("twice", "两")."""
        if word.isdigit():
            return int(word)
        return self.numbers.get(word.lower())

    def weekday_of(self, word: str) -> int | None:
        """0 for Monday .. 6 for Sunday, for a weekday name as said."""
        for index, names in enumerate(self.weekdays):
            if word.lower() in names:
                return index
        return None

    def month_of(self, word: str) -> int | None:
        """1..12 for a month name (full or abbreviated) as said."""
        word = word.lower()
        for index, (full, short) in enumerate(zip(self.months, self.month_abbreviations, strict=True)):
            if word in (full, short):
                return index + 1
        return None


def _strings(value: object) -> list[str]:
    if isinstance(value, str):
        return [value]
    if isinstance(value, TimeCue):
        return list(value.patterns) + list(value.unless)
    if isinstance(value, HolidayCue):
        return list(value.patterns)
    if isinstance(value, dict):
        return [s for v in value.values() for s in _strings(v)]
    if isinstance(value, list):
        return [s for v in value for s in _strings(v)]
    return []


@functools.cache
def _compiled(pattern: str) -> re.Pattern[str]:
    return re.compile(pattern, re.IGNORECASE)


@functools.cache
def _combined(patterns: tuple[str, ...]) -> re.Pattern[str]:
    """All of `patterns` as one alternation (named groups made plain, so that they may repeat)."""
    plain = [re.sub(r"\(\?P<\w+>", "(?:", p) for p in patterns]
    return re.compile("|".join(f"(?:{p})" for p in plain), re.IGNORECASE)


@functools.cache
def load_cues(lang: str, root: Path = ROOT) -> Cues:
    return read_model(root / f"{lang}.yaml", Cues, CuesError, f"no cue lexicon for language {lang!r}")
