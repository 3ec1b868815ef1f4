"""STAND-IN for the blind heuristics (issue 13): the shortcuts helper writes the real module.

Only the API the `no_memory` system is written against, with simple rules so its tests run:
`blind_answer(item, strategy, stats)`, `blind_scores(items)`, `blind_stats(items)`, `STRATEGIES` and
`CHOICE_STRATEGIES` (the names the other helper's module uses).
The lead takes the other helper's version of this file at merge.
"""

from __future__ import annotations

import re
from collections import Counter
from decimal import Decimal, InvalidOperation
from statistics import median
from typing import Any

from keme.models import QAItem

CHOICE_STRATEGIES = ("position", "median", "longest")
STRATEGIES = CHOICE_STRATEGIES + ("always_abstain", "never_abstain")
ABSTAIN = {"en": "Not available: that was never mentioned.", "zh": "没有相关记录：这件事从来没有提到过。"}
GUESS = {"en": "Yes.", "zh": "是的。"}


def _letter(index: int) -> str:
    return chr(ord("A") + index)


def blind_stats(items: list[QAItem]) -> dict[str, Any]:
    """What a memory-less guesser may know of the dataset: how often each gold position occurs."""
    return {"positions": Counter(i.spec.value for i in items if i.spec.kind == "choice" and i.spec.value)}


def _number(text: str) -> Decimal | None:
    found = re.search(r"\d+(?:\.\d+)?", text.replace(",", ""))
    try:
        return Decimal(found.group()) if found else None
    except InvalidOperation:
        return None


def _choose(item: QAItem, strategy: str, stats: dict[str, Any]) -> int:
    options = item.options
    if strategy == "position":
        for letter, _ in stats["positions"].most_common():
            if ord(letter) - ord("A") < len(options):
                return ord(letter) - ord("A")
        return 0
    if strategy == "median":
        values = [_number(o) for o in options]
        if all(v is not None for v in values):
            middle = median(values)
            return min(range(len(options)), key=lambda i: abs(values[i] - middle))
        return 0
    return max(range(len(options)), key=lambda i: len(options[i]))  # longest, and never_abstain


def blind_answer(item: QAItem, strategy: str, stats: dict[str, Any]) -> str:
    """The answer a guesser without memories gives `item` under `strategy`."""
    if strategy not in STRATEGIES:
        raise ValueError(f"unknown blind strategy {strategy!r}; known: {', '.join(STRATEGIES)}")
    lang = item.language if item.language in ABSTAIN else "en"
    if strategy == "always_abstain":
        return ABSTAIN[lang]
    if item.options:
        index = _choose(item, strategy, stats)
        return f"{_letter(index)}. {item.options[index]}"
    return GUESS[lang] if strategy == "never_abstain" else ABSTAIN[lang]


def blind_scores(items: list[QAItem]) -> dict[str, dict]:
    """Per strategy: accuracy on the choice items (by letter), their chance level and count."""
    stats = blind_stats(items)
    choice = [i for i in items if i.spec.kind == "choice" and i.options]
    out: dict[str, dict] = {}
    for strategy in STRATEGIES:
        right = sum(blind_answer(i, strategy, stats).startswith(f"{i.spec.value}.") for i in choice)
        out[strategy] = {
            "accuracy": right / len(choice) if choice else None,
            "chance": sum(1 / len(i.options) for i in choice) / len(choice) if choice else None,
            "n": len(choice),
        }
    return out
