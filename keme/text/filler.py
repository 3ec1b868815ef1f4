"""The filler bank: everyday assistant conversations that are not about the persona's tracked life.

A long-memory benchmark buries a persona's own sessions in a haystack (LongMemEval's filler sessions).
Ours is written by hand per language in keme/text/<lang>/filler/: topics (cooking, travel, writing,
coding, science, history, household how-to, explainers) each with several ways a user asks, the
sentences of an answer, and follow-up exchanges. keme/synth/filler.py draws sessions from it.

What filler may say is narrow on purpose, so that it cannot touch what a question asks about:
- a user line asks for general information or help with a generic task; it never states anything
  about the user (no "I am", "my sister", "I live in"), so it cannot back or contradict a persona fact;
- no line names a clock time, a weekday, a month, a date, a place the persona could be at, or a thing
  from the persona vocabularies (the pools, the persona values, the world catalog): `problems` lists
  every line that does, checked against the same cue lexicon the coherence checker reads;
- no digits: a number in filler could be mistaken for a quantity of the persona's world.
"""

from __future__ import annotations

import functools
import re
from pathlib import Path

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from keme.errors import KemeError
from keme.yamlload import YamlError, load

ROOT = Path(__file__).parent


class FillerError(KemeError, ValueError):
    """A filler bank is missing or malformed: fix keme/text/<lang>/filler/."""


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid")


class FollowUp(_Strict):
    ask: list[str] = Field(min_length=2, description="ways the user asks the follow-up")
    answer: list[str] = Field(min_length=2, description="sentences of the reply, in order")


class Topic(_Strict):
    id: str = Field(pattern=r"^[a-z0-9_]+$", description="unique within the language")
    domain: str
    asks: list[str] = Field(min_length=3, description="ways the user opens the conversation")
    answer: list[str] = Field(min_length=6, description="sentences of the first reply, in order")
    follow_ups: list[FollowUp] = Field(min_length=2)


class FillerBank(_Strict):
    openers: list[str] = Field(min_length=10, description="what a user may put before the first ask")
    thanks: list[str] = Field(min_length=10, description="what a user may put before a follow-up")
    intros: list[str] = Field(min_length=10, description="how an assistant may begin a reply")
    outros: list[str] = Field(min_length=10, description="how an assistant may end its last reply")
    topics: list[Topic] = Field(min_length=1)

    def lines(self) -> list[tuple[str, str]]:
        """Every line of the bank as (where, text), for the checks."""
        found = [
            (f"{name}[{i}]", text)
            for name in ("openers", "thanks", "intros", "outros")
            for i, text in enumerate(getattr(self, name))
        ]
        for topic in self.topics:
            where = f"topics.{topic.id}"
            found += [(f"{where}.asks[{i}]", t) for i, t in enumerate(topic.asks)]
            found += [(f"{where}.answer[{i}]", t) for i, t in enumerate(topic.answer)]
            for j, follow in enumerate(topic.follow_ups):
                found += [(f"{where}.follow_ups[{j}].ask[{i}]", t) for i, t in enumerate(follow.ask)]
                found += [(f"{where}.follow_ups[{j}].answer[{i}]", t) for i, t in enumerate(follow.answer)]
        return found


class _Topics(_Strict):
    topics: list[Topic] = Field(min_length=1)


class _Common(_Strict):
    openers: list[str]
    thanks: list[str]
    intros: list[str]
    outros: list[str]


def _read(path: Path, model: type[BaseModel]) -> BaseModel:
    try:
        if not path.exists():
            raise FillerError(f"{path}: missing; every language needs a filler bank")
        raw = load(path, shipped=True).data  # libyaml: the banks are large
    except YamlError as exc:
        raise FillerError(str(exc)) from None
    try:
        return model.model_validate(raw)
    except ValidationError as exc:
        first = exc.errors()[0]
        where = ".".join(str(p) for p in first["loc"])
        raise FillerError(f"{path}: {where}: {first['msg']} ({exc.error_count()} problem(s))") from None


@functools.cache
def load_filler(lang: str, root: Path = ROOT) -> FillerBank:
    """The bank of a language: keme/text/<lang>/filler/common.yaml (the wrappers) and every other
    YAML file in that folder (topics), in file-name order."""
    folder = root / lang / "filler"
    common = _read(folder / "common.yaml", _Common)
    topics: list[Topic] = []
    seen: dict[str, Path] = {}
    for path in sorted(folder.glob("*.yaml")):
        if path.name == "common.yaml":
            continue
        for topic in _read(path, _Topics).topics:
            if topic.id in seen:
                raise FillerError(f"{path}: topics.{topic.id}: the id is used in {seen[topic.id].name} too")
            seen[topic.id] = path
            topics.append(topic)
    try:
        return FillerBank(**common.model_dump(), topics=topics)
    except ValidationError as exc:
        first = exc.errors()[0]
        raise FillerError(f"{folder}: {'.'.join(map(str, first['loc']))}: {first['msg']}") from None


# catalog fields that classify an item rather than name something the persona's world says: whose an
# occasion can be ("sibling"), what it marks yearly ("birthday" is in the pools anyway); the lifecycle rules
# (keme/world/lifecycle.py: cue patterns and "again" markers such as 又, 再次, not things of the world);
# the kinds of goods a platform sells ("clothing", "books") and what a diet excludes; the words that name one
# kind of work ("training", "release": keme.world.catalog `confusable`): classes, not names
NOT_SAID = frozenset({"people", "yearly", "lifecycle", "sells", "excludes", "confusable"})


def vocabulary(lang: str, root: Path = ROOT) -> set[str]:
    """The persona vocabularies of a language: every pool value, persona attribute value and catalog
    name (what the persona's world can be made of); filler names none of them."""
    found: set[str] = set()

    def walk(node: object) -> None:
        if isinstance(node, str):
            if "{" not in node and len(node) <= 40:
                found.add(node.strip())
        elif isinstance(node, dict):
            for key, value in node.items():
                if key not in NOT_SAID:
                    walk(value)
        elif isinstance(node, list):
            for value in node:
                walk(value)

    folder = root / lang
    walk(load(folder / "pools.yaml", shipped=True).data)
    persona = load(folder / "persona.yaml", shipped=True).data
    for entry in persona.get("attributes", {}).values():
        walk(entry.get("values", []))
        walk(entry.get("fits", {}))
    catalog = root.parent / "world" / "catalog" / f"{lang}.yaml"
    if catalog.exists():
        walk(load(catalog, shipped=True).data)
    return {v for v in found if v and not v.isdigit() and len(v) >= (2 if lang == "zh" else 3)}


_WORD = re.compile(r"\w+(?:['’]\w+)*")


class Mentions:
    """Finds any of a set of strings said in a text: in English as whole words, a capitalised string (a
    name, "Travel" the bill category) only as written and any other in any case; in Chinese as any
    substring. By sets of word n-grams (Han substrings), so that thousands of strings cost a few set
    lookups per word of the text."""

    def __init__(self, words: set[str], lang: str):
        self.lang = lang
        self.exact: set[str] = set()
        self.folded: set[str] = set()
        self.latin: set[str] = set()
        for word in (w.strip() for w in words):
            if not word:
                continue
            if lang == "en":
                key = " ".join(_WORD.findall(word))
                (self.exact if word[:1].isupper() else self.folded).add(
                    key if word[:1].isupper() else key.lower()
                )
            elif word.isascii():  # a Latin name in Chinese text is still a whole word
                self.latin.add(" ".join(_WORD.findall(word)).lower())
            else:
                self.folded.add(word.casefold())
        lengths = {len(w.split()) if lang == "en" else len(w) for w in self.exact | self.folded}
        self.lengths = sorted(lengths)
        self.latin_lengths = sorted({len(w.split()) for w in self.latin})

    def find(self, text: str) -> str | None:
        """The first of the strings `text` says, or None."""
        if self.lang == "en":
            tokens = _WORD.findall(text)
            for n in self.lengths:
                for i in range(len(tokens) - n + 1):
                    gram = " ".join(tokens[i : i + n])
                    if gram in self.exact or gram.lower() in self.folded:
                        return gram
            return None
        tokens = [t.lower() for t in _WORD.findall(text) if t.isascii()]
        for n in self.latin_lengths:
            for i in range(len(tokens) - n + 1):
                if (gram := " ".join(tokens[i : i + n])) in self.latin:
                    return gram
        folded = text.casefold()
        for n in self.lengths:
            for i in range(len(folded) - n + 1):
                if folded[i : i + n] in self.folded:
                    return folded[i : i + n]
        return None
