"""Question and answer phrasing from keme/text/<lang>/questions.yaml."""

from __future__ import annotations

import functools
import random
from dataclasses import dataclass

from pydantic import BaseModel, ConfigDict, Field

from keme.text.resources import ROOT, parse_file


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid")


class AttributeQuestions(_Strict):
    ask: list[str] = Field(min_length=1)
    current: list[str] = Field(default_factory=list)
    previous: list[str] = Field(default_factory=list)
    history: list[str] = Field(default_factory=list)
    at_time: list[str] = Field(default_factory=list)
    at_event: list[str] = Field(default_factory=list)


class EventPhrases(_Strict):
    verb: str
    past: str
    when: str
    noun: str


class Generalization(_Strict):
    option: str
    situations: list[str] = Field(min_length=1)


class QuestionText(_Strict):
    attributes: dict[str, AttributeQuestions]
    events: dict[str, EventPhrases]
    topics: dict[str, str]
    questions: dict[str, list[str]]
    answers: dict[str, str]
    food_allergens: list[str]
    generalize: dict[str, Generalization]


class PhrasingError(KeyError):
    pass


class _Slots(dict):
    def __init__(self, template: str, values: dict[str, object]):
        super().__init__({k: str(v) for k, v in values.items()})
        self.template = template

    def __missing__(self, key: str) -> str:
        raise PhrasingError(f"template {self.template!r} uses slot {{{key}}}, which this question does not provide")


def fill(template: str, slots: dict[str, object]) -> str:
    """Fill `{slot}`s; a slot the caller does not provide is an error, never a silent blank."""
    return template.format_map(_Slots(template, slots))


@dataclass(frozen=True)
class Phrasing:
    lang: str
    text: QuestionText

    def question(self, key: str, rng: random.Random, **slots: object) -> str:
        return fill(rng.choice(self.text.questions[key]), slots)

    def attribute(self, key: str, form: str, rng: random.Random, **slots: object) -> str | None:
        forms = getattr(self.text.attributes[key], form)
        return fill(rng.choice(forms), slots) if forms else None

    def event(self, kind: str, form: str, **slots: object) -> str | None:
        phrases = self.text.events.get(kind)
        return fill(getattr(phrases, form), slots) if phrases else None

    def topic(self, kind: str, **slots: object) -> str | None:
        template = self.text.topics.get(kind)
        return fill(template, slots) if template else None

    def answer(self, key: str, **slots: object) -> str:
        return fill(self.text.answers[key], slots)

    def has(self, key: str) -> bool:
        return key in self.text.questions


@functools.cache
def get(lang: str) -> Phrasing:
    return Phrasing(lang, parse_file(QuestionText, ROOT / lang / "questions.yaml"))
