"""The QA verifier: re-derive every answer from the messages and the persona.

Each item carries a proof (an operation plus quotes of messages). The verifier
checks that every quote is really in its message, recomputes the answer with
the operation from the dataset as it is now, and compares it with the answer
spec. It also checks that evidence precedes the question, that abstention
targets appear nowhere, and that the question does not give its answer away.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass
from datetime import date, datetime
from decimal import Decimal

from keme.days import block_of
from keme.errors import KemeError
from keme.models import QAItem, Quote
from keme.qa.facts import World
from keme.text.dates import dates_in, parse_display_date, parse_duration, strip_dates
from keme.text.normalize import contains, norm_text, numbers_in, parse_money


class ProofError(KemeError, ValueError):
    """A QA item's proof does not hold against the trajectory (a quote, a date, a value it names)."""


@dataclass(frozen=True)
class Rejection:
    item_id: str
    reason: str
    detail: str

    def __str__(self) -> str:
        return f"{self.item_id}: {self.reason}: {self.detail}"


class Verifier:
    def __init__(self, world: World):
        self.world = world

    # -------------------------------------------------------------- helpers
    def _message(self, message_id: str):
        message = self.world.messages.get(message_id)
        if message is None:
            raise ProofError(f"message {message_id} is not in this persona's trajectory")
        return message

    def _quotes(self, item: QAItem) -> None:
        for quote in item.proof.quotes:
            message = self._message(quote.message_id)
            if quote.text is not None and quote.text not in message.content:
                raise ProofError(f"message {quote.message_id} no longer says {quote.text!r}")
            if quote.on is not None and message.timestamp.date() != quote.on:
                raise ProofError(f"message {quote.message_id} was not sent on {quote.on}")

    def _date(self, item: QAItem, index: int) -> date:
        return self._message(item.proof.quotes[index].message_id).timestamp.date()

    def _parse(self, text: str, how: str, sent: datetime) -> str:
        if how == "money":
            value = parse_money(text)
            if value is None:
                raise ProofError(f"no amount in {text!r}")
            return str(value)
        if how == "int":
            numbers = numbers_in(text)
            if not numbers:
                raise ProofError(f"no number in {text!r}")
            return str(int(numbers[0]))
        if how == "duration":
            seconds = parse_duration(text)
            if seconds is None:
                raise ProofError(f"no duration in {text!r}")
            return str(seconds)
        if how == "date":
            day = parse_display_date(text, sent)
            if day is None:
                raise ProofError(f"no date in {text!r}")
            return day.isoformat()
        return text

    def _system_messages(self, app: str, needle: str, start: date, end: date):
        for session in self.world.sessions:
            for message in session.messages:
                if (
                    message.role == "system"
                    and message.app == app
                    and start <= message.timestamp.date() <= end
                    and needle in message.content
                ):
                    yield message

    # -------------------------------------------------------------- operations
    def derive(self, item: QAItem) -> str | list[str]:
        """The answer the proof yields on the current data."""
        proof, args = item.proof, item.proof.args
        persona = self.world.persona
        op = proof.op
        if op == "value":
            quote = proof.quotes[int(args.get("index", "0"))]
            return self._parse(
                quote.text or "", args.get("parse", "text"), self._message(quote.message_id).timestamp
            )
        if op == "attribute":
            attr = persona.attribute(args["key"])
            at = datetime.fromisoformat(args["at"]) if "at" in args else item.asked_at
            versions = [v for v in attr.versions if v.valid_from <= at]
            if not versions:
                raise ProofError(f"{args['key']} has no value at {at}")
            if args.get("version") == "previous":
                if len(versions) < 2:
                    raise ProofError(f"{args['key']} has no previous value at {at}")
                version = versions[-2]
            else:
                version = versions[-1]
            if not any(q.message_id in version.evidence and q.text == version.value for q in proof.quotes):
                raise ProofError(f"no quote is evidence of {args['key']}={version.value!r}")
            return version.value
        if op == "history":
            attr = persona.attribute(args["key"])
            values = [v for v in attr.versions if v.valid_from <= item.asked_at]
            for version in values:
                if not any(
                    q.message_id in version.evidence and q.text == version.value for q in proof.quotes
                ):
                    raise ProofError(f"no quote is evidence of {args['key']}={version.value!r}")
            return [v.value for v in values]
        if op == "date":
            return self._date(item, int(args.get("index", "0"))).isoformat()
        if op == "days_between":
            return str(abs((self._date(item, 1) - self._date(item, 0)).days))
        if op == "days_before":
            return str((item.asked_at.date() - self._date(item, 0)).days)
        if op == "order":
            first = self._message(proof.quotes[0].message_id).timestamp
            second = self._message(proof.quotes[1].message_id).timestamp
            return "A" if first < second else "B"
        if op == "sum":  # the first `n` quotes are the amounts; the rest are premises
            terms = proof.quotes[: int(args.get("n", len(proof.quotes)))]
            total = sum(
                (
                    Decimal(self._parse(q.text or "", "money", self._message(q.message_id).timestamp))
                    for q in terms
                ),
                Decimal("0"),
            )
            return str(total.quantize(Decimal("0.01")))
        if op in ("count", "sum_where"):
            start, end = date.fromisoformat(args["start"]), date.fromisoformat(args["end"])
            found = list(self._system_messages(args["app"], args["needle"], start, end))
            if {m.id for m in found} != {q.message_id for q in proof.quotes}:
                raise ProofError("quoted messages are not exactly the matching records")
            if op == "count":
                return str(len(found))
            total = sum((Decimal(self._parse(m.content, "money", m.timestamp)) for m in found), Decimal("0"))
            return str(total.quantize(Decimal("0.01")))
        if op == "majority":
            start, end = date.fromisoformat(args["start"]), date.fromisoformat(args["end"])
            field = args["field"]
            counts = Counter(
                getattr(a.record, field)
                for a in self.world.anchors.values()
                if a.app == "bill" and start <= a.timestamp.date() <= end
            )
            ranked = counts.most_common(2)
            if not ranked or (len(ranked) > 1 and ranked[0][1] == ranked[1][1]):
                raise ProofError("no single most frequent value")
            return ranked[0][0]
        if op == "time_of_day":
            start, end = date.fromisoformat(args["start"]), date.fromisoformat(args["end"])
            counts = Counter(block_of(s.start) for s in self.world.sessions if start <= s.start.date() <= end)
            ranked = counts.most_common(2)
            if not ranked or (len(ranked) > 1 and ranked[0][1] == ranked[1][1]):
                raise ProofError("no single usual time of day")
            return str(ranked[0][0])
        if op == "key_points":
            for point in item.spec.items:
                if not any(q.text == point for q in proof.quotes):
                    raise ProofError(f"key point {point!r} is not quoted")
            return list(item.spec.items)
        if op == "preference":
            value = persona.value_at(args["key"], item.asked_at)
            if value is None:
                raise ProofError(f"{args['key']} has no value at the question time")
            version = persona.attribute(args["key"]).version_at(item.asked_at)
            if not any(q.message_id in version.evidence for q in proof.quotes):
                raise ProofError("the preference is not quoted from its evidence")
            holding = [i for i, option in enumerate(item.options) if value in option]
            chosen = (
                holding
                if args.get("mode", "match") == "match"
                else [i for i in range(len(item.options)) if i not in holding]
            )
            if len(chosen) != 1:
                raise ProofError("the options do not single out one answer")
            return "ABCDEFGH"[chosen[0]]
        if op == "relation":
            holder = persona.value_at(args["name_key"], item.asked_at)
            if holder != args["name"]:
                raise ProofError(f"{args['name_key']} is {holder!r}, not {args['name']!r}")
            if not any(q.text == args["name"] for q in proof.quotes):
                raise ProofError("the person is not quoted")
            if "label_key" in args:
                label = persona.value_at(args["label_key"], item.asked_at)
                if not any(q.text == label for q in proof.quotes):
                    raise ProofError("the relation is not quoted")
                return label or ""
            return args["label"]
        if op == "absent":
            for term in filter(None, args.get("terms", "").split("|")):
                if self.world.mentions(term):
                    raise ProofError(f"{term!r} is mentioned in the trajectory")
            if "key" in args and persona.attribute(args["key"]).versions:
                raise ProofError(f"{args['key']} does exist")
            return "abstain"
        if op in ("image_fact", "image_count", "image_sum"):
            return self._visual(item)
        # items from public benchmarks: their gold is taken as given, their evidence must exist
        if op == "imported":
            return list(item.spec.items) if item.spec.items else (item.spec.value or "")
        if op == "premise":
            base = item.model_copy(update={"proof": proof.model_copy(update={"op": args["base"]})})
            truth = self.derive(base)
            false = args["false"]
            check = args.get("check")
            if check == "no_record_on":
                day = date.fromisoformat(false)
                if list(self._system_messages(args["app"], args["needle"], day, day)):
                    raise ProofError(f"there is a matching record on {day}")
                if truth == false:
                    raise ProofError("the false premise is true")
            elif check == "not_in_sessions":
                sessions = {self.world.session_of[q.message_id] for q in proof.quotes}
                if any(
                    contains(m.content, false)
                    for s in sessions
                    for m in self.world.sessions_by_id[s].messages
                ):
                    raise ProofError(f"{false!r} does appear in the quoted sessions")
            elif check == "never_value":
                if any(v.value == false for v in persona.attribute(args["key"]).versions):
                    raise ProofError(f"{args['key']} did take the value {false!r}")
            elif check == "amount_differs":
                if parse_money(false) == Decimal(str(truth)):
                    raise ProofError("the false amount is the true one")
            return truth
        raise ProofError(f"unknown proof operation {op!r}")

    def _image_for(self, quote: Quote):
        """The screenshot a quoted message shares, with the text read back from its rendered page."""
        message = self._message(quote.message_id)
        found = [
            r for r in self.world.images.values() if r.message_id == message.id and r.path in message.images
        ]
        if not found:
            raise ProofError(f"message {quote.message_id} shares no rendered screenshot")
        return found[0]

    def _images_in(self, template: str, start: date, end: date) -> list:
        return [
            r
            for r in self.world.images.values()
            if r.template == template
            and r.message_id in self.world.messages
            and start <= self.world.messages[r.message_id].timestamp.date() <= end
        ]

    def _visual(self, item: QAItem) -> str:
        proof, args = item.proof, item.proof.args
        if proof.op == "image_fact":
            record = self._image_for(proof.quotes[0])
            if record.id != args["image"]:
                raise ProofError(f"message {record.message_id} shares {record.id}, not {args['image']}")
            sent = self._message(record.message_id).timestamp
            if args["parse"] == "lines":
                lines = [v for k, v in record.facts.items() if k.startswith("line-")]
                missing = [v for v in lines if v not in record.dom_text]
                if missing:
                    raise ProofError(f"{record.id}: {missing} not on the rendered page")
                return str(len(lines))
            text = record.facts.get(args["fact"])
            if text is None or text not in record.dom_text:
                raise ProofError(f"{record.id}: fact {args['fact']!r} is not on the rendered page")
            if "contains" in args:
                if args["contains"] not in text:
                    raise ProofError(f"{record.id}: {args['fact']!r} does not say {args['contains']!r}")
                return args["contains"]
            return self._parse(text, args["parse"], sent)
        start, end = date.fromisoformat(args["start"]), date.fromisoformat(args["end"])
        found = self._images_in(args["template"], start, end)
        if {r.message_id for r in found} != {q.message_id for q in proof.quotes}:
            raise ProofError(
                f"quoted messages are not exactly the {args['template']} screenshots of {start}..{end}"
            )
        if proof.op == "image_count":
            return str(len(found))
        total = Decimal("0")
        for record in found:
            text = record.facts.get(args["fact"], "")
            if not text or text not in record.dom_text:
                raise ProofError(f"{record.id}: fact {args['fact']!r} is not on the rendered page")
            total += Decimal(self._parse(text, "money", self._message(record.message_id).timestamp))
        return str(total.quantize(Decimal("0.01")))

    # -------------------------------------------------------------- checks
    def expected_matches(self, item: QAItem, derived: str | list[str]) -> bool:
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
            last = max(self._message(m).timestamp for m in item.evidence) if item.evidence else None
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
