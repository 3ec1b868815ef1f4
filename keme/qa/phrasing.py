"""Question and answer phrasing from keme/text/<lang>/questions.yaml."""

from __future__ import annotations

import functools
import random
from dataclasses import dataclass

from pydantic import BaseModel, ConfigDict, Field, field_validator

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


class Situation(_Strict):
    """A new situation a preference is applied to, with what it asks for when that is not the value itself."""

    text: str
    option: str | None = Field(
        default=None,
        description="the option template when the situation asks for another kind of thing than the "
        "generalization's option names (a restaurant, not a cuisine)",
    )
    needs: str | None = Field(
        default=None,
        description="the kind of goods it shops for (catalog platforms' `sells`): the answer must sell it",
    )


class Generalization(_Strict):
    option: str
    situations: list[Situation] = Field(min_length=1)
    # values that may satisfy one another (a vegan menu fits a vegetarian): never options of one item
    conflicts: list[list[str]] = Field(default_factory=list)

    @field_validator("situations", mode="before")
    @classmethod
    def _plain(cls, value: object) -> object:
        """A situation written as a bare string asks for the generalization's own option."""
        if isinstance(value, list):
            return [{"text": v} if isinstance(v, str) else v for v in value]
        return value

    def option_for(self, situation: Situation) -> str:
        return situation.option or self.option

    def situation(self, question: str) -> Situation | None:
        """The situation a question was asked from (None for a question not written here)."""
        return next((s for s in self.situations if s.text == question), None)


class QuestionText(_Strict):
    attributes: dict[str, AttributeQuestions]
    events: dict[str, EventPhrases]
    topics: dict[str, str]
    questions: dict[str, list[str]]
    answers: dict[str, str]
    food_allergens: list[str]
    generalize: dict[str, Generalization]
    # a recap's key points as a person says them: `attr.<key>` from the value a life change took,
    # `<episode kind>` from the episode's params ("moved to Denver", "Noah's housewarming")
    points: dict[str, str] = Field(default_factory=dict)


@dataclass(frozen=True)
class Phrasing:
    lang: str
    text: QuestionText

    def question(self, key: str, rng: random.Random, **slots: object) -> str:
        return fill(rng.choice(self.text.questions[key]), slots)

    def wordings(self, *keys: str, **slots: object) -> list[str]:
        """Every wording of the questions `keys` filled with `slots`: the ones a trap may be asked in (the
        selection picks one whose answerable twins outnumber the traps, keme.qa.twins)."""
        return list(dict.fromkeys(fill(t, slots) for key in keys for t in self.text.questions[key]))

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

    def point(self, key: str, **slots: object) -> str | None:
        """A recap's key point phrased from slots; None where the language has no phrase for it."""
        template = self.text.points.get(key)
        return fill(template, slots) if template else None

    def has(self, key: str) -> bool:
        return key in self.text.questions


@functools.cache
def get(lang: str) -> Phrasing:
    return Phrasing(lang, parse_file(QuestionText, ROOT / lang / "questions.yaml"))
