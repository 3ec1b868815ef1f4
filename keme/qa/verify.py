"""The QA verifier: re-derive every answer from the messages and the persona.

Each item carries a proof (an operation plus quotes of messages). The verifier
checks that every quote is really in its message, recomputes the answer with
the operation (keme/qa/ops.py) from the dataset as it is now, and compares it
with the answer spec. It also checks that evidence precedes the question, that abstention
targets appear nowhere, and that the question does not give its answer away.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import date
from decimal import Decimal

from keme.models import QAItem
from keme.qa.facts import World
from keme.qa.ops import Answer, Context, ProofError, derive
from keme.text.dates import dates_in, strip_dates
from keme.text.normalize import contains, norm_text, numbers_in

__all__ = ["ProofError", "Rejection", "Verifier", "verify_items"]


@dataclass(frozen=True)
class Rejection:
    item_id: str
    reason: str
    detail: str

    def __str__(self) -> str:
        return f"{self.item_id}: {self.reason}: {self.detail}"


class Verifier:
    """Checks items of one persona: quotes, evidence, time order, the re-derived answer, leaks."""

    def __init__(self, world: World):
        self.world = world
        self.context = Context(world)

    def _quotes(self, item: QAItem) -> None:
        for quote in item.proof.quotes:
            message = self.context.message(quote.message_id)
            if quote.text is not None and quote.text not in message.content:
                raise ProofError(f"message {quote.message_id} no longer says {quote.text!r}")
            if quote.on is not None and message.timestamp.date() != quote.on:
                raise ProofError(f"message {quote.message_id} was not sent on {quote.on}")

    def derive(self, item: QAItem) -> Answer:
        """The answer the proof yields on the current data (its operation, keme.qa.ops)."""
        return derive(self.context, item)

    # -------------------------------------------------------------- checks
    def expected_matches(self, item: QAItem, derived: Answer) -> bool:
        spec = item.spec
        if isinstance(derived, list):
            return (
                derived == spec.items
                if spec.ordered or spec.kind == "free"
                else sorted(derived) == sorted(spec.items)
            )
        if spec.kind == "choice" and spec.option_value is not None:
            try:
                return Decimal(spec.option_value) == Decimal(derived)
            except ArithmeticError:
                return spec.option_value == derived
        if spec.kind == "number":
            return spec.value is not None and Decimal(spec.value) == Decimal(derived)
        if spec.kind in ("duration",):
            return spec.value is not None and abs(int(spec.value) - int(derived)) <= spec.tolerance
        if spec.kind == "abstain":
            return derived == "abstain"
        return spec.value == derived

    def leaks(self, item: QAItem) -> str | None:
        """The answer, or all of a set's members, written in the question itself."""
        question, spec = item.question, item.spec
        if spec.kind in ("choice", "yes_no", "abstain"):
            return None
        if spec.kind == "set" or (spec.kind == "free" and spec.items):
            shown = [i for i in spec.items if contains(question, i)]
            return f"question lists {shown}" if shown and len(shown) == len(spec.items) else None
        if spec.kind in ("number", "duration"):
            if spec.value is not None and Decimal(spec.value) in numbers_in(strip_dates(question)):
                return f"question contains {spec.value}"
            return None
        if spec.kind == "date":
            if spec.value and date.fromisoformat(spec.value) in dates_in(question, item.asked_at.year):
                return f"question contains the date {spec.value}"
            return None
        if spec.value and norm_text(spec.value) and contains(question, spec.value):
            return f"question contains {spec.value!r}"
        return None

    def check(self, item: QAItem) -> list[Rejection]:
        problems = []
        try:
            self._quotes(item)
            evidence_ids = list(dict.fromkeys(q.message_id for q in item.proof.quotes))
            if item.evidence != evidence_ids:
                raise ProofError("evidence differs from the quoted messages")
            last = max(self.context.message(m).timestamp for m in item.evidence) if item.evidence else None
            if last is not None and last > item.asked_at and item.proof.op != "imported":
                raise ProofError(f"asked at {item.asked_at} before its evidence ({last})")
            derived = self.derive(item)
            if not self.expected_matches(item, derived):
                problems.append(
                    Rejection(
                        item.id,
                        "wrong_answer",
                        f"proof gives {derived!r}, spec says {item.spec.value or item.spec.items!r}",
                    )
                )
        except ProofError as exc:
            problems.append(Rejection(item.id, "unsupported", str(exc)))
        leak = self.leaks(item) if item.proof.op != "imported" else None
        if leak:
            problems.append(Rejection(item.id, "leak", leak))
        return problems


def verify_items(items: list[QAItem], worlds: dict[str, World]) -> list[Rejection]:
    rejections = []
    verifiers = {pid: Verifier(world) for pid, world in worlds.items()}
    for item in items:
        verifier = verifiers.get(item.persona_id)
        if verifier is None:
            rejections.append(Rejection(item.id, "unsupported", f"unknown persona {item.persona_id}"))
            continue
        rejections += verifier.check(item)
    return rejections
