"""Working memory: the last 3 steps in full, earlier steps folded into a rolling summary, at most 20 facts.

Rule-based, no LLM (the seed: "zero LLM cost"). A folded step keeps its first
clause (up to 60 characters); the summary keeps its most recent 400 characters.
Facts are short spans worth keeping verbatim (amounts, dates, times, numbers
with units); the oldest is dropped beyond 20.
"""

from __future__ import annotations

import re
from collections import deque

STEPS_IN_FULL = 3
MAX_FACTS = 20
FOLD_CHARS = 60
SUMMARY_CHARS = 400
_FACT = re.compile(
    r"[$¥￥]\s?\d[\d,]*(?:\.\d+)?|\d[\d,]*(?:\.\d+)?\s?(?:元|块|%|km|kg|min|分钟|小时|天|晚|次)"
    r"|\d{1,2}:\d{2}(?:\s?[AP]M)?|\d{1,2}月\d{1,2}[日号]"
    r"|\b(?:Jan|Feb|Mar|Apr|May|Jun|Jul|Aug|Sep|Oct|Nov|Dec)[a-z]*\.? \d{1,2}\b"
)
_CLAUSE = re.compile(r"^(.+?)(?:[.!?。！？;；\n]|$)")


class WorkingMemory:
    def __init__(self) -> None:
        self.steps: deque[str] = deque()
        self.summary = ""
        self.facts: list[str] = []

    def add_step(self, text: str) -> None:
        self.steps.append(text)
        while len(self.steps) > STEPS_IN_FULL:
            folded = self.steps.popleft()
            match = _CLAUSE.match(folded.strip())
            head = (match.group(1) if match else folded)[:FOLD_CHARS]
            self.summary = (self.summary + "; " + head if self.summary else head)[-SUMMARY_CHARS:]
        for fact in _FACT.findall(text):
            self.add_fact(fact.strip())

    def add_fact(self, fact: str) -> None:
        if fact in self.facts:
            return
        self.facts.append(fact)
        del self.facts[:-MAX_FACTS]

    def build_context(self) -> str:
        parts = []
        if self.summary:
            parts.append(f"Earlier: {self.summary}")
        parts += [f"Step: {s}" for s in self.steps]
        if self.facts:
            parts.append("Facts: " + ", ".join(self.facts))
        return "\n".join(parts)
