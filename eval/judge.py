"""Judges: decide whether a predicted answer is correct.

The rule judge reads the item's answer spec and checks the prediction
deterministically (numbers parsed, dates in any common format, sets all present,
key points covered in any words (eval.paraphrase) as many as the spec asks for,
choices by letter or text, abstention by phrase). LLM
judges implement the same `Judge` protocol.
"""

from __future__ import annotations

import re
from datetime import date
from decimal import Decimal
from typing import Protocol

from pydantic import BaseModel

from eval.paraphrase import covered
from keme.models import QAItem
from keme.text.dates import dates_in, parse_duration, strip_dates
from keme.text.normalize import contains, numbers_in, parse_money

ABSTAIN_PHRASES = (
    "not available",
    "not mentioned",
    "never mentioned",
    "no record",
    "no information",
    "don't know",
    "do not know",
    "not sure",
    "cannot find",
    "can't find",
    "couldn't find",
    "unknown",
    "no mention",
    "wasn't mentioned",
    "was not mentioned",
    "not enough information",
    "none",
    "没有",
    "不知道",
    "未提及",
    "没提到",
    "没有提到",
    "无相关",
    "无法确定",
    "不清楚",
    "未找到",
    "没找到",
    "没有记录",
)
YES = ("yes", "yeah", "correct", "true", "是", "对", "有")
NO = ("no", "not", "false", "否", "不是", "没有")


class Verdict(BaseModel):
    correct: bool
    label: str  # CORRECT | WRONG
    rationale: str = ""
    runs: list[bool] = []  # repeated judgements (LLM judges), in run order


class Judge(Protocol):
    name: str

    def judge(self, item: QAItem, prediction: str) -> Verdict: ...


def _verdict(ok: bool, why: str = "") -> Verdict:
    return Verdict(correct=ok, label="CORRECT" if ok else "WRONG", rationale=why)


def abstains(text: str) -> bool:
    """Whether `text` says it does not know (the phrases every judge of ours reads as an abstention)."""
    lowered = text.casefold()
    return any(p in lowered for p in ABSTAIN_PHRASES)


def _in_order(text: str, items: list[str]) -> bool:
    position = -1
    lowered = text.casefold()
    for item in items:
        found = lowered.find(item.casefold(), position + 1)
        if found < 0:
            return False
        position = found
    return True


class RuleJudge:
    """Deterministic judging against the answer spec."""

    name = "rule"

    def judge(self, item: QAItem, prediction: str) -> Verdict:
        spec = item.spec
        text = prediction.strip()
        if not text:
            return _verdict(False, "empty answer")
        if spec.kind == "abstain":
            return _verdict(abstains(text), "abstention expected")
        if spec.kind == "choice":
            letter = re.match(r"\s*\(?([A-H])\b[).:]?", text)
            if letter:
                return _verdict(letter.group(1) == spec.value, f"chose {letter.group(1)}")
            return _verdict(any(contains(text, alias) for alias in spec.aliases), "matched option text")
        if spec.kind == "free" and not spec.ordered:
            # key points: each in the answer's own words or a paraphrase, as many as the spec asks for
            said = covered(text, spec.items, item.question)
            need = len(spec.items) if spec.cover is None else min(spec.cover, len(spec.items))
            missing = [i for i in spec.items if i not in said]
            return _verdict(
                len(said) >= need,
                f"covers {len(said)} of {len(spec.items)} key points (needs {need})"
                + (f"; missing {missing}" if missing else ""),
            )
        if spec.kind in ("set", "free"):
            items = spec.items
            if spec.ordered:
                return _verdict(_in_order(text, items), "ordered items")
            missing = [i for i in items if not contains(text, i)]
            return _verdict(not missing, f"missing {missing}" if missing else "all items present")
        if spec.kind == "number":
            target = Decimal(spec.value or "0")
            candidates = numbers_in(strip_dates(text))
            money = parse_money(text)
            if money is not None:
                candidates.append(money)
            ok = any(abs(c - target) <= Decimal(str(spec.tolerance)) for c in candidates)
            return _verdict(ok or any(contains(text, a) for a in spec.aliases), f"expected {spec.value}")
        if spec.kind == "date":
            target = date.fromisoformat(spec.value or "2000-01-01")
            ok = target in dates_in(text, target.year) or target in dates_in(text, item.asked_at.year)
            return _verdict(ok, f"expected {spec.value}")
        if spec.kind == "duration":
            seconds = parse_duration(text)
            ok = seconds is not None and abs(seconds - int(spec.value or 0)) <= spec.tolerance
            return _verdict(ok or any(contains(text, a) for a in spec.aliases), f"expected {spec.value} s")
        if spec.kind == "yes_no":
            lowered = text.casefold()
            said_yes = any(re.search(rf"\b{w}\b", lowered) if w.isascii() else w in lowered for w in YES)
            said_no = any(re.search(rf"\b{w}\b", lowered) if w.isascii() else w in lowered for w in NO)
            return _verdict((said_yes and not said_no) if spec.value == "yes" else said_no, "yes/no")
        # entity
        forms = [spec.value or ""] + list(spec.aliases)
        ok = any(contains(text, form) for form in forms if form)
        return _verdict(ok, f"expected {spec.value!r}")
