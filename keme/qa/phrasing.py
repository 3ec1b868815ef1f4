"""Question and answer phrasing from keme/text/<lang>/questions.yaml."""

from __future__ import annotations

import functools
import random
from dataclasses import dataclass

from pydantic import BaseModel, ConfigDict, Field

from keme.text.fill import fill
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
    # values that may satisfy one another (a vegan menu fits a vegetarian): never options of one item
    conflicts: list[list[str]] = Field(default_factory=list)


class QuestionText(_Strict):
    attributes: dict[str, AttributeQuestions]
    events: dict[str, EventPhrases]
    topics: dict[str, str]
    questions: dict[str, list[str]]
    answers: dict[str, str]
    food_allergens: list[str]
    generalize: dict[str, Generalization]


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
        """The answer phrase; `{key}_one` where the count `n` is 1 and the language has one ("1 day")."""
        if slots.get("n") == 1 and f"{key}_one" in self.text.answers:
            key = f"{key}_one"
        return fill(self.text.answers[key], slots)

    def has(self, key: str) -> bool:
        return key in self.text.questions


@functools.cache
def get(lang: str) -> Phrasing:
    return Phrasing(lang, parse_file(QuestionText, ROOT / lang / "questions.yaml"))
