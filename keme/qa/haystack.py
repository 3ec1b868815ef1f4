"""Proof that a persona's filler sessions state nothing its questions depend on.

Filler (keme/synth/filler.py) is the haystack: chats that must not touch the persona's world. This
check does not trust the generator's own rules; it reads the data:

- a filler session is marked, has no anchor, no screenshot, and every message of it is small talk;
- no claim of the ledger is said in a filler message, and no question cites one as evidence, but a
  question about the chats themselves with no qualifier (at what time of day the user chats: every
  chat counts);
- no filler message names a string of the persona's world (its name, attribute values, the names in
  its events and app records: `persona_strings`) or a string a question depends on (a qualifier it
  asks about, an abstention term, a gold value, alias or item), and none states a digit;
- no filler user message speaks about the user (first person), which could back or contradict a fact.

The QA stage asks `FillerText.names` too, so that it keeps no question whose qualifier filler names.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterable

from keme.dataset.views import PersonaView
from keme.models import QAItem
from keme.stats import entity_strings

_FIRST_PERSON = {
    "en": re.compile(r"\b(?:i|i'm|i've|i'd|i'll|my|mine|myself|we|we're|we've|our|ours|us)\b", re.IGNORECASE),
    "zh": re.compile(r"我|咱|俺"),
}
_ZH_REQUESTS = re.compile(r"帮我|给我|告诉我|教教我|教我|跟我|替我|为我|让我看看")
_DIGIT = re.compile(r"\d")
_PUNCT = re.compile(r"[\s\W_]+")
_PLAIN = re.compile(r"^(?:yes|no|[a-z]|[\d.,:\- ]+)$")  # a yes/no, a letter, a number or a date
_WORD = re.compile(r"\w+")


def _plain(text: str) -> str:
    """Width- and punctuation-insensitive, case kept (a name is told from a word by its capital)."""
    return _PUNCT.sub(" ", unicodedata.normalize("NFKC", text)).strip()


def _is_kind(value: str) -> bool:
    """A one-word lowercase label (a priority, a record kind, an episode kind): a word of the language,
    not a name, unless it is an attribute's value (then `persona_strings` keeps it)."""
    return " " not in value and value == value.lower() and value.isascii()


def persona_strings(view: PersonaView) -> set[str]:
    """The strings of a persona's world that filler must not say: every entity string but one-word labels,
    and every attribute value whatever its form."""
    values = {v.value for attr in view.persona.attributes() for v in attr.versions}
    return {s for s in entity_strings(view) if not _is_kind(s) or s in values}


def question_strings(items: Iterable[QAItem]) -> tuple[set[str], set[str]]:
    """(qualifiers and abstention terms, gold values) of the persona's questions: the first are matched
    whatever their case, the second as names are (numbers, dates, yes/no and letters aside: filler states
    no digit, and a bare letter or yes/no is no statement)."""
    asked: set[str] = set()
    golds: set[str] = set()
    for item in items:
        spec = item.spec
        golds.update(v for v in [spec.value, spec.option_value, *spec.aliases, *spec.items] if v)
        for query in item.queries:
            asked.update(v for v in query.where.values() if v)
        asked.update(getattr(item.proof.args, "terms", None) or [])
    keep = {s for s in asked | golds if not _PLAIN.match(_plain(s).casefold())}
    return asked & keep, golds & keep


class FillerText:
    """All of a persona's filler, searchable for a string as said (whole words in English), through an
    index of its words (Han bigrams in Chinese) so that a string filler never says costs no scan."""

    def __init__(self, view: PersonaView):
        self.lang = view.lang
        self.messages = [(m.id, _plain(m.content)) for s in view.sessions if s.filler for m in s.messages]
        self.index: dict[str, set[int]] = {}
        for n, (_, text) in enumerate(self.messages):
            for key in self._keys(text):
                self.index.setdefault(key, set()).add(n)

    def _keys(self, text: str) -> set[str]:
        folded = text.casefold()
        if self.lang == "en":
            return set(_WORD.findall(folded))
        return {folded[i : i + 2] for i in range(len(folded) - 1)} | set(folded)

    def _candidates(self, value: str) -> list[int]:
        keys = self._keys(value)
        if not keys:
            return []
        sets = [self.index.get(k, set()) for k in keys]
        return sorted(set.intersection(*sets)) if all(sets) else []

    def where(self, value: str, fold: bool = True) -> str | None:
        """The first filler message that says `value` (`fold`: in any case; else a capitalised value only
        as written, so that the store Target is not the word target)."""
        plain = _plain(value)
        if len(plain) < (2 if self.lang == "zh" else 3):
            return None
        fold = fold or not any(c.isupper() for c in plain)
        if self.lang == "en":
            pattern = re.compile(rf"(?<!\w){re.escape(plain)}(?!\w)", re.IGNORECASE if fold else 0)
        elif plain.isascii():  # a Latin name in Chinese text is a whole word too
            pattern = re.compile(rf"(?<![A-Za-z0-9]){re.escape(plain)}(?![A-Za-z0-9])", re.IGNORECASE)
        else:
            pattern = re.compile(re.escape(plain), re.IGNORECASE)
        for n in self._candidates(plain):
            if pattern.search(self.messages[n][1]):
                return self.messages[n][0]
        return None

    def names(self, value: str, fold: bool = True) -> bool:
        return self.where(value, fold) is not None


def touches(item: QAItem, text: FillerText) -> str | None:
    """The string of `item` that filler says, if any: the QA stage keeps no such question."""
    asked, golds = question_strings([item])
    for value, fold in [(v, True) for v in sorted(asked)] + [(v, False) for v in sorted(golds)]:
        if text.names(value, fold):
            return value
    return None


def filler_problems(view: PersonaView) -> list[tuple[str, str]]:
    """(where, what) for every way a persona's filler could touch what its questions ask."""
    filler = [s for s in view.sessions if s.filler]
    if not filler:
        return []
    lang = view.lang
    out: list[tuple[str, str]] = []
    messages = {m.id for s in filler for m in s.messages}
    sessions = {s.id for s in filler}
    for claim in view.claims:
        if claim.message_id in messages:
            out.append((claim.id, f"a claim said in filler message {claim.message_id}"))
    for item in view.qa:
        if item.queries and all(q.aggregate == "sessions" and not q.where for q in item.queries):
            continue  # when the user chats: every chat counts, filler too
        cited = [m for m in item.evidence if m in messages]
        cited += [s for s in item.evidence_sessions if s in sessions]
        cited += [m for ms in item.also_supported_by.values() for m in ms if m in messages]
        if cited:
            out.append((item.id, f"cites filler as evidence: {cited[:3]}"))
    text = FillerText(view)
    asked, golds = question_strings(view.qa)
    for value, fold in [(v, True) for v in sorted(asked)] + [
        (v, False) for v in sorted(persona_strings(view) | golds)
    ]:
        if (found := text.where(value, fold)) is not None:
            out.append(
                (found, f"a filler message names {value!r}, a string of the persona's data or questions")
            )
    for session in filler:
        if session.anchor_id is not None:
            out.append((session.id, f"a filler session holds app record {session.anchor_id}"))
        for message in session.messages:
            where = message.id
            if not message.smalltalk or message.claims or message.images or message.app:
                out.append((where, "a filler message must be small talk with no claim, image or app"))
            if _DIGIT.search(message.content):
                out.append((where, "a filler message states a digit"))
            if message.role == "user":
                said = _ZH_REQUESTS.sub("", message.content) if lang == "zh" else message.content
                if found := _FIRST_PERSON[lang].search(said):
                    out.append((where, f"a filler user message speaks about the user ({found.group(0)!r})"))
    return out
