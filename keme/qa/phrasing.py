"""Question and answer phrasing from keme/text/<lang>/questions.yaml."""

from __future__ import annotations

import functools
import random
import re
from dataclasses import dataclass

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

from keme.text.fill import fill
from keme.text.presup import PERSONA_KEYS, Presup, parse
from keme.text.resources import ROOT, parse_file
from keme.text.template import agree_article


def usual_form(rng: random.Random, forms: list[str]) -> str:
    """One of a question's wordings, the first ones more often (weights 1, 1/2, 1/3, ...), as people word a
    question mostly one way: answerable questions gather in a few wordings, and a trap asked in one of them
    (keme.qa.twins) finds the answerable twins it needs to read as an ordinary question."""
    return rng.choices(forms, weights=[1 / (i + 1) for i in range(len(forms))])[0]


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
    presup: dict[str, str] = Field(
        default_factory=dict,
        description="what the persona must hold when asked, as a line declares it (keme/text/presup.py): "
        "`state` (a drive takes `transport.commute_mode=car`) or `value`; keme.qa.situations checks it",
    )

    @field_validator("presup")
    @classmethod
    def _persona_state(cls, value: dict[str, str]) -> dict[str, str]:
        """A question has no session to be said in: only what the persona holds may be presupposed."""
        unknown = sorted(set(value) - set(PERSONA_KEYS))
        if unknown:
            raise ValueError(f"a situation presupposes only {', '.join(PERSONA_KEYS)}, not {unknown}")
        parse(value)
        return value

    @property
    def presumes(self) -> Presup:
        return parse(self.presup)


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


class PointPhrase(_Strict):
    """How a recap says one detail of an episode: `said` is what any user message naming the value holds
    ("wanted to see the Bund"), `done` what it says once the world records that it happened ("went to
    the Bund"). `done` is said only of a value the user names in a session of one of `moments` (whose
    lines about it all tell it happened: the trip's recap, not its planning) or in a message holding a
    claim of one of `claims` (the ledger's `local_food_times`: the user ate it there). A point with no
    `said` is made only where it happened: a companion is one who went along, not one asked for advice.
    A bare string is a `said` with no `done`."""

    said: str | None = None
    done: str | None = None
    moments: list[str] = Field(default_factory=list)
    claims: list[str] = Field(default_factory=list)
    # outcomes that did not happen once `done` did (returned it, got it shelved): wrong options of the same
    # kind beside the done point, so that a multiple-choice recap is not decided by which option names the
    # question's subject
    not_done: list[str] = Field(default_factory=list)

    @model_validator(mode="after")
    def _proven(self) -> PointPhrase:
        if self.said is None and self.done is None:
            raise ValueError("a point needs `said` or `done`")
        if (self.done is None) != (not self.moments and not self.claims):
            raise ValueError("`done` goes with the `moments` or `claims` that prove it, and only with them")
        return self


class QuestionText(_Strict):
    attributes: dict[str, AttributeQuestions]
    events: dict[str, EventPhrases]
    topics: dict[str, str]
    questions: dict[str, list[str]]
    answers: dict[str, str]
    food_allergens: list[str]
    generalize: dict[str, Generalization]
    # a recap's key points as a person says them: `attr.<key>` from the value a life change took,
    # `<episode kind>` from the episode's params ("moved to Denver", "Noah's housewarming"),
    # `<episode kind>.<detail>` an episode recap's detail, said no stronger than its evidence
    points: dict[str, PointPhrase] = Field(default_factory=dict)

    @field_validator("points", mode="before")
    @classmethod
    def _plain_points(cls, value: object) -> object:
        """A point written as a bare string is what any mention of it holds."""
        if isinstance(value, dict):
            return {k: {"said": v} if isinstance(v, str) else v for k, v in value.items()}
        return value


# "a {slot}" in an English phrase: its article agrees with the value filled in
_AN_SLOT = re.compile(r"\b([Aa])n? \{(\w+)\}")


@dataclass(frozen=True)
class Phrasing:
    lang: str
    text: QuestionText

    def question(self, key: str, rng: random.Random, **slots: object) -> str:
        return fill(usual_form(rng, self.text.questions[key]), slots)

    def wordings(self, *keys: str, **slots: object) -> list[str]:
        """Every wording of the questions `keys` filled with `slots`: the ones a trap may be asked in (the
        selection picks one whose answerable twins outnumber the traps, keme.qa.twins)."""
        return list(dict.fromkeys(fill(t, slots) for key in keys for t in self.text.questions[key]))

    def attribute(self, key: str, form: str, rng: random.Random, **slots: object) -> str | None:
        forms = getattr(self.text.attributes[key], form)
        return fill(usual_form(rng, forms), slots) if forms else None

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

    def point(self, key: str, done: bool = False, **slots: object) -> str | None:
        """A recap's key point phrased from slots, as said (`done`: as happened); None where the language
        has no phrase for it."""
        phrase = self.text.points.get(key)
        template = None if phrase is None else phrase.done if done else phrase.said
        if not template:
            return None
        if self.lang == "en":  # "became a {value}": an account manager, a brand strategist
            template = _AN_SLOT.sub(
                lambda m: agree_article(m[1] + " ", str(slots.get(m[2], ""))) + f"{{{m[2]}}}", template
            )
        return fill(template, slots)

    def not_done(self, key: str, **slots: object) -> list[str]:
        """The outcomes of a recap's detail that did not happen once it did, filled from slots."""
        phrase = self.text.points.get(key)
        return [fill(t, slots) for t in phrase.not_done] if phrase is not None else []

    def has(self, key: str) -> bool:
        return key in self.text.questions


@functools.cache
def get(lang: str) -> Phrasing:
    return Phrasing(lang, parse_file(QuestionText, ROOT / lang / "questions.yaml"))
