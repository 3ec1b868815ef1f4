"""What a persona has said: a memory of content sentences, and lines composed from clause-level variants.

A year reads as a template when its sentences come back word for word. The realizer keeps, per persona,
the sentences it has said (in the usage counter, under `SAID`), each as its template sentence with every
value masked, and steers each draw towards options none of whose sentences were said before. Supply comes
from keme/text/<lang>/variants.yaml: for the exact text of a sentence in a pattern line, other wordings
with the same slots. A line is composed sentence by sentence, each from its least said wording, so one
pattern line yields many lines that say the same thing in other words.

The splitting and masking rule is the issue's measure (#36): sentences of >= 6 words (English), clauses
of >= 6 characters (Chinese), values -> <E>, digit runs -> #, case and spacing folded.
"""

from __future__ import annotations

import functools
import itertools
import re
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from keme.text.check import states_a_literal_digit
from keme.text.resources import Resources
from keme.text.template import Template, compile_template
from keme.text.variants import SLOT, SPLIT, lead, line_spans, load_bank, spans_of, trail

SAID = "§"  # prefix of a sentence key in the usage counter: never a line key's first character
MIN_WORDS_EN = 6
MIN_CHARS_ZH = 6
CAP = 5  # the times one sentence may be said in a persona's year (issue 36): the sixth is avoided first
OVER = 1_000  # what saying a sentence past CAP weighs against saying others again
MAX_COMPOSED = 24  # compositions of a line that `wordings` lists (the draw takes each sentence on its own)

_DIGITS = re.compile(r"\d+")
_WORD = re.compile(r"<E>|#|[\w'’]+")  # keme.stats counts words so: "back-to-back" is three
_NOT_WORD = re.compile(r"[\W_]")
_SPACE = re.compile(r"\s+")
_EDGE = " \t.!?…,;:—-\"'()。！？，；：～、"


def pieces(text: str, lang: str) -> list[str]:
    """`text` cut at its sentence ends (English) or clause ends (Chinese), every piece kept."""
    return [p for p in SPLIT["zh" if lang == "zh" else "en"].split(text) if p.strip()]


def long_enough(sentence: str, lang: str) -> bool:
    """Whether the measure counts `sentence`: >= 6 words, or >= 6 Chinese characters."""
    if lang == "zh":
        return len(_NOT_WORD.sub("", sentence)) >= MIN_CHARS_ZH
    return len(_WORD.findall(sentence)) >= MIN_WORDS_EN


def sentences(text: str, lang: str) -> list[str]:
    """The sentences of `text` the measure counts."""
    return [p for p in pieces(text, lang) if long_enough(p, lang)]


def fold(text: str) -> str:
    """Digit runs -> #, case and spacing folded, edge punctuation dropped."""
    return _SPACE.sub(" ", _DIGITS.sub("#", text)).strip(_EDGE).lower()


def masker(values: Iterable[str]) -> Callable[[str], str]:
    """A sentence with each of `values` (longest first) -> <E>, then folded."""
    names = sorted({v for v in values if v and not v.isdigit()}, key=lambda v: (-len(v), v))
    pattern = re.compile("|".join(re.escape(v) for v in names)) if names else None

    def mask(sentence: str) -> str:
        if pattern is not None:
            sentence = pattern.sub("<E>", sentence)
        return fold(sentence)

    return mask


def template_key(sentence: str) -> str:
    """A template sentence as the memory keeps it: every slot -> <E>, then folded."""
    return SAID + fold(SLOT.sub("<E>", sentence))


def slot_set(sentence: str) -> frozenset[str]:
    """The slots a template sentence says ({pool.x}, {num:2-5@p} and the like, as written)."""
    return frozenset(SLOT.findall(sentence))


@dataclass(frozen=True)
class Composed:
    """One wording of a template line: the template, and the memory keys of the sentences it counts."""

    template: Template
    keys: tuple[str, ...]


class Variants:
    """Clause-level variants of pattern sentences, and the wordings of a line they compose."""

    def __init__(self, bank: Mapping[str, list[str]], lang: str):
        self.bank = {k: tuple(v) for k, v in bank.items()}
        self.lang = lang
        # what a slot weighs in the length rule: up to 3 words or 5 汉字, so that every sentence the measure
        # may count once its values are in is steered
        self.filler = "xxxxx" if lang == "zh" else "x x x"

    @functools.cache  # noqa: B019 - one bank per language, kept for the process
    def choices(self, source: str) -> tuple[tuple[tuple[str, str, tuple[str, ...]], ...], ...]:
        """Per sentence of `source`, its wordings (the original first) as (text, separator, memory keys)."""
        found = []
        for body, sep in line_spans(source, self.lang):
            alts = []
            for text in (body, *self.bank.get(body.strip(), ())):
                said = spans_of(text, self.lang)  # a variant may say two sentences
                keys = tuple(
                    template_key(c) for c in said if long_enough(SLOT.sub(self.filler, c), self.lang)
                )
                alts.append(
                    (lead(body) + text.strip() + trail(body) if text is not body else body, sep, keys)
                )
            found.append(tuple(alts))
        return tuple(found)

    def counted(self, sentence: str) -> bool:
        """Whether the measure would count a template sentence (a slot weighs a word, or 3 汉字)."""
        return long_enough(SLOT.sub(self.filler, sentence), self.lang)

    def wordings(self, source: str) -> tuple[Composed, ...]:
        """Every composition of `source` from its sentences' variants (the original first), capped."""
        found = []
        for combo in itertools.islice(itertools.product(*self.choices(source)), MAX_COMPOSED):
            text = "".join(t + sep for t, sep, _ in combo)
            found.append(Composed(_compiled(text), tuple(k for _, _, keys in combo for k in keys)))
        return tuple(found)

    def least_count(self, source: str, count: Callable[[str], int]) -> int:
        """How many times the least said wording of `source` was said before (0: it can be said anew)."""
        return sum(min(said_before(keys, count) for _, _, keys in alts) for alts in self.choices(source))

    def ever_said(self, source: str, count: Callable[[str], int]) -> bool:
        """Whether a sentence of `source` was said before in any of its wordings: a line said once, whichever
        words carried it (its sentence with the slot may be too short to count: "total {value} here.")."""
        return any(count(k) > 0 for alts in self.choices(source) for _, _, keys in alts for k in keys)

    def least_said(
        self, template: Template, count: Callable[[str], int], pick: Callable[[list], Any]
    ) -> Composed:
        """The wording of `template` whose sentences were said least (`count`: times a key was said), each
        sentence on its own, ties broken by `pick`."""
        choices = self.choices(template.source)
        chosen: list[tuple[str, str, tuple[str, ...]] | None] = []
        for alts in choices:
            if len(alts) == 1:
                chosen.append(alts[0])
                continue
            scores = [said_before(keys, count) for _, _, keys in alts]
            chosen.append(pick([a for a, n in zip(alts, scores) if n == min(scores)]))
        for i, alts in enumerate(choices):  # a sentence said CAP times in every wording is left out ...
            kept = [c for j, c in enumerate(chosen) if c is not None and j != i]
            if min(said_before(keys, count) for _, _, keys in alts) >= OVER and _droppable(alts[0][0], kept):
                _drop(chosen, i)  # ... when it holds no value and the line says something without it
        keys = tuple(k for c in chosen if c is not None for k in c[2])
        if all(c is alts[0] for c, alts in zip(chosen, choices)):
            return Composed(template, keys)
        return Composed(_compiled("".join(c[0] + c[1] for c in chosen if c is not None)), keys)


def _droppable(body: str, kept: list[tuple[str, str, tuple[str, ...]]]) -> bool:
    """A sentence that says no value (a slot may carry a fact a question cites), beside others."""
    return not SLOT.search(body) and any(t.strip() for t, _, _ in kept)


def _drop(chosen: list, i: int) -> None:
    """Leave sentence `i` out; the last sentence's end mark passes to the one before it."""
    _, sep, _ = chosen[i]
    chosen[i] = None
    if i == len(chosen) - 1 or all(c is None for c in chosen[i + 1 :]):
        before = next((j for j in range(i - 1, -1, -1) if chosen[j] is not None), None)
        if before is not None:
            text, _, keys = chosen[before]
            chosen[before] = (text, sep, keys)


@functools.lru_cache(maxsize=65536)
def _compiled(text: str) -> Template:
    return compile_template(text)


def said_before(keys: Iterable[str], count: Callable[[str], int]) -> int:
    """How many times a line's sentences were said before, all told; a sentence said CAP times already
    weighs OVER more, so that any wording or option without one is drawn first."""
    return sum(n + (OVER if n >= CAP else 0) for n in map(count, keys))


@functools.cache
def variants(lang: str) -> Variants:
    """The variant bank of `lang`, loaded once per process."""
    return Variants(load_bank(lang), lang)


def dialogue_sources(res: Resources) -> set[str]:
    """Every dialogue line of a language's banks: the pattern beats, the reveals, the updates and the
    app-record mentions (the lines the realizer says through keme.synth.variety.Talk.line)."""
    exchanges = [
        ex for p in res.patterns.values() for b in p.beats if not isinstance(b, str) for ex in b.options
    ]
    for group in (res.reveals, res.updates, res.anchor_mentions):
        exchanges += [ex for options in group.values() for ex in options]
    return {t.source for ex in exchanges for t in (ex.u, ex.a)}


def bank_problems(bank: Mapping[str, list[str]], sources: Iterable[str], lang: str) -> list[str]:
    """Why a variant bank does not fit its dialogue lines: a key that is not the exact text of a sentence
    of one, a variant whose slots differ from its key's, a variant that repeats its key or another, a
    variant that states a number with a literal digit (its lines obey the text rule the pattern lines do,
    keme.text.check.claim_problems: every number said is a claim)."""
    known = {sentence for source in sources for sentence in spans_of(source, lang)}
    problems = []
    for key, wordings in bank.items():
        if key not in known:
            problems.append(f"{key!r}: not the exact text of a sentence of a dialogue line")
        if len(set(wordings)) != len(wordings) or key in wordings:
            problems.append(f"{key!r}: a variant repeats the sentence or another variant")
        for wording in wordings:
            if slot_set(wording) != slot_set(key):
                problems.append(f"{key!r}: variant {wording!r} has slots {sorted(slot_set(wording))}")
            if states_a_literal_digit(compile_template(wording)):
                problems.append(f"{key!r}: variant {wording!r} states a number with a literal digit")
    return problems
