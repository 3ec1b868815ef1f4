"""Parsing and normalising values in text: money, numbers, entities (dates and durations: `keme.text.dates`).

Shared by QA synthesis (to state canonical values), the verifier (to re-derive
them from messages), the rule judge (to read them back from answers) and the
memory systems that key records by value.
"""

from __future__ import annotations

import re
import unicodedata
from decimal import Decimal, InvalidOperation

_MONEY = re.compile(r"[$¥￥]\s?(\d[\d,]*(?:\.\d+)?)|(\d[\d,]*(?:\.\d+)?)\s?(?:元|块|dollars?|USD|CNY|RMB)")
_NUMBER = re.compile(r"-?\d[\d,]*(?:\.\d+)?")


def parse_money(text: str) -> Decimal | None:
    """The first amount written with a currency sign or word: '$1,234.50' -> 1234.50."""
    match = _MONEY.search(text)
    if not match:
        return None
    raw = (match.group(1) or match.group(2)).replace(",", "")
    try:
        return Decimal(raw).quantize(Decimal("0.01"))
    except InvalidOperation:
        return None


def numbers_in(text: str) -> list[Decimal]:
    """All numbers in `text`, including Chinese numerals for small counts."""
    found = []
    for raw in _NUMBER.findall(text):
        try:
            found.append(Decimal(raw.replace(",", "")))
        except InvalidOperation:
            continue
    found += [Decimal(v) for v in _zh_numbers(text)]
    return found


_ZH_DIGITS = {
    "零": 0,
    "一": 1,
    "二": 2,
    "两": 2,
    "三": 3,
    "四": 4,
    "五": 5,
    "六": 6,
    "七": 7,
    "八": 8,
    "九": 9,
}


def _zh_numbers(text: str) -> list[int]:
    """Chinese numerals up to 99 ('十二', '二十', '三十五')."""
    values = []
    counters = "天次个晚元块页人岁周月年家件本部位场趟"
    pattern = rf"[零一二两三四五六七八九]?十[一二三四五六七八九]?|[零一二两三四五六七八九](?=[{counters}])"
    for match in re.finditer(pattern, text):
        token = match.group(0)
        if "十" in token:
            tens, _, ones = token.partition("十")
            values.append(
                (_ZH_DIGITS.get(tens, 1) if tens else 1) * 10 + (_ZH_DIGITS.get(ones, 0) if ones else 0)
            )
        else:
            values.append(_ZH_DIGITS[token])
    return values


def norm_text(text: str) -> str:
    """Case-, width- and punctuation-insensitive form for containment checks."""
    text = unicodedata.normalize("NFKC", text).casefold()
    text = re.sub(r"[\s\W_]+", " ", text)
    return text.strip()


def contains(haystack: str, needle: str) -> bool:
    needle_n = norm_text(needle)
    return bool(needle_n) and needle_n in norm_text(haystack)
