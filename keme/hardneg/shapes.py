"""What kind of value a free-text answer is, so that the value said in its place reads like one.

Imported data has no ledger to say which values are of one kind. An answer's shape stands in: its
script (a value in Chinese does not stand in for one in English) and its form (an amount, a number, a
date, a time, a name, a short phrase). Another person's answer, or a quoted line with the gold swapped
out, takes a value of the same shape ("$87" for "$103", "Keisha" for "Ethan"), never one that only
shares the question type ("A. by bike" for a payment).
"""

from __future__ import annotations

import random
import re
from functools import cache

from keme.text import resources
from keme.text.dates import date_phrases
from keme.text.tokens import has_han

_OPTION = re.compile(r"^[A-J][.)]\s+")  # "C. trail running": a choice's letter
_MONEY = re.compile(r"^[$¥€£]\s?\d[\d,]*(?:\.\d+)?$|^\d[\d,]*(?:\.\d+)?\s?(?:元|块|美元|dollars?)$")
_NUMBER = re.compile(r"^\d[\d,]*(?:\.\d+)?(?:\s?[A-Za-z%\u4e00-\u9fff]{0,8})?$")
_MONTHS = (
    "jan|feb|mar|apr|may|jun|jul|aug|sep|sept|oct|nov|dec|january|february|march|april|june|july|august|"
    "september|october|november|december"
)
_DATE = re.compile(
    rf"\b(?:{_MONTHS})\b.*\d|\d.*\b(?:{_MONTHS})\b|^\d{{4}}-\d{{2}}-\d{{2}}|\d+月\d+日|\d{{4}}年|"
    r"^(?:monday|tuesday|wednesday|thursday|friday|saturday|sunday)$|^周[一二三四五六日]$",
    re.IGNORECASE,
)
_WEEKDAY = re.compile(
    r"^(?:monday|tuesday|wednesday|thursday|friday|saturday|sunday|周[一二三四五六日])$", re.I
)
_TIME = re.compile(
    r"^\d{1,2}(?::\d{2})?\s?(?:am|pm|a\.m\.|p\.m\.)$|^\d{1,2}:\d{2}$|^\d{1,2}点", re.IGNORECASE
)
_DIGITS = re.compile(r"[\d,.\s]")
_WORD = re.compile(r"[A-Za-z][A-Za-z'’-]*")
_JOINERS = {"of", "the", "and", "de", "la", "at", "on", "in", "&"}
MAX_WORDS = 6  # longer answers are sentences: no value stands in for one
MAX_HAN = 12


@cache
def _people() -> tuple[frozenset[str], frozenset[str]]:
    """The given names (both languages) and the Chinese family names the name pools know."""
    given: set[str] = set()
    family: set[str] = set()
    for lang in ("en", "zh"):
        names = resources.get(lang).pools.names
        given |= {*names.given_female, *names.given_male}
        if lang == "zh":
            family |= set(names.family)
    return frozenset(given), frozenset(family)


def _is_person(text: str, people: frozenset[str]) -> bool:
    given, family = _people()
    first = text.split()[0].strip(",.")
    if first in given or first in people or text in people:
        return True
    return has_han(text) and 2 <= len(text) <= 3 and text[0] in family and text[1:] in given | {text[1:]}


def option_text(answer: str) -> str:
    """A choice's text without its letter ("C. trail running" -> "trail running")."""
    return _OPTION.sub("", answer.strip(), count=1)


def shape(value: str, people: frozenset[str] = frozenset()) -> str | None:
    """The value's shape, "<script>:<form>" (None: a sentence or a list, which nothing stands in for).
    `people`: names known to be people's (a conversation's speakers), besides the name pools'."""
    text = option_text(value)
    if not text or len(text) > 40 or re.search(r"[\n;；。，！？!?]|,\s(?!\d)", text):
        return None  # a sentence or a list
    script = "zh" if has_han(text) else "en"
    if len(text.split()) > MAX_WORDS or (script == "zh" and len(text) > MAX_HAN):
        return None
    if _MONEY.match(text):
        unit = text[0] if text[0] in "$¥€£" else _DIGITS.sub("", text)
        return f"{script}:money{unit}"
    if _WEEKDAY.match(text) or (_DATE.search(text) and sum(map(len, date_phrases(text))) >= 0.6 * len(text)):
        return f"{script}:date"
    if _TIME.search(text):
        return f"{script}:time"
    if _NUMBER.match(text):  # a count of what: "12 s" does not stand in for "84 days"
        return f"{script}:number" + _DIGITS.sub("", text)
    if script == "zh":
        return "zh:person" if _is_person(text, people) else "zh:phrase"
    words = text.split()
    if not _WORD.search(text):
        return None
    named = [w for w in words if w.lower() not in _JOINERS]
    if named and all(w[:1].isupper() for w in named) and not any(c.isdigit() for c in text):
        return "en:person" if _is_person(text, people) else "en:name"
    return "en:phrase"


def nearby(value: str, rng: random.Random) -> str | None:
    """An amount or a number near `value`, written as it is (its symbol, unit and decimals)."""
    text = option_text(value)
    found = re.search(r"\d[\d,]*(?:\.\d+)?", text)
    if found is None:
        return None
    digits = found.group().replace(",", "")
    places = len(digits.split(".")[1]) if "." in digits else 0
    number = float(digits)
    for _ in range(20):
        other = number * rng.uniform(0.45, 1.8)
        if places == 0:
            other = round(other) or 1
            said = f"{other:,}" if "," in found.group() else str(other)
        else:
            said = f"{other:,.{places}f}" if "," in found.group() else f"{other:.{places}f}"
        value = float(said.replace(",", ""))
        if value != number and value not in (number * 2, number / 2):
            return text[: found.start()] + said + text[found.end() :]
    return None


def like(
    gold: str,
    candidates: list[str],
    rng: random.Random,
    people: frozenset[str] = frozenset(),
    count: int = 8,
) -> list[str]:
    """Values of the gold's shape to say in its place: the candidates of that shape (their choice letters
    dropped), then for an amount or a number, nearby ones. Never the gold itself."""
    wanted = shape(gold, people)
    if wanted is None:
        return []
    own = option_text(gold).casefold()
    out = [
        option_text(c) for c in candidates if shape(c, people) == wanted and option_text(c).casefold() != own
    ]
    out = list(dict.fromkeys(out))
    if ":money" in wanted or ":number" in wanted:
        for _ in range(count):
            made = nearby(gold, rng)
            if made is not None and made.casefold() != own and made not in out:
                out.append(made)
    return out
