"""Why a system got a question wrong: the first step of the pipeline that failed, for every wrong question.

The MobileMem paper classified 20 errors per system by hand (Long Context: 13/20 update errors; NaiveRAG:
12/20 retrieval failures). Here every wrong question gets one category, computed from what the run logged
(the ranked hits, the reader's context, the answer and its verdict) and what the dataset says (the gold
evidence, the messages that restate it, and the claim ledger's versions of each fact), in pipeline order:

- `stale`: the evidence is not all in the reader's context, which holds a value from before an update (a
  claim on the fact the question asks, with a value no longer valid at the time asked about) and no
  message stating the value valid then;
- `not_retrieved`: some gold evidence is nowhere in the ranked hits (retrieved to the run's depth);
- `ranked_out`: all of it was retrieved, but some only below the reader's k;
- `abstained_answerable`: the evidence was in the context and the reader said it does not know;
- `answered_wrong`: the evidence was in the context and the answer was judged wrong;
- `answered_unanswerable`: an abstention item (nothing in the data answers it) got an answer.

A run without a reader has no answers: a question with gold evidence whose evidence is not all in the top k
counts as a retrieval failure (the first three categories) and the others are not judged.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Literal

from eval.judge import abstains
from eval.metrics import Groups
from keme.models import Claim, QAItem

Category = Literal[
    "stale", "not_retrieved", "ranked_out", "abstained_answerable", "answered_wrong", "answered_unanswerable"
]
CATEGORIES: tuple[Category, ...] = (
    "stale",
    "not_retrieved",
    "ranked_out",
    "abstained_answerable",
    "answered_wrong",
    "answered_unanswerable",
)
LABELS: dict[Category, str] = {
    "stale": "stale: only a pre-update value in context",
    "not_retrieved": "evidence not retrieved",
    "ranked_out": "retrieved, ranked out of the context",
    "abstained_answerable": "abstained although answerable",
    "answered_wrong": "evidence in context, answered wrong",
    "answered_unanswerable": "answered although unanswerable",
}


@dataclass(frozen=True)
class Outcome:
    """What the run did with one question, as the failure analysis needs it."""

    ranked: Sequence[str]  # message ids in rank order, to the run's depth
    context: Sequence[str]  # message ids the reader's context held (the first k hits)
    answer: str | None = None  # None: no reader
    correct: bool | None = None  # the judge's verdict; None: not judged


@dataclass(frozen=True)
class FailureAnalysis:
    """What classifying a run's questions needs besides its logs."""

    ledger: Ledger
    k: int  # hits given to the reader
    with_reader: bool  # answers were asked for: a question without one (a failed call) is not classified


class Ledger:
    """The claim ledger by fact: which messages state which version of the facts a question asks about."""

    def __init__(self, claims: Iterable[Claim]):
        self.by_message: dict[str, list[Claim]] = defaultdict(list)
        self.by_fact: dict[tuple[str, str, str], list[Claim]] = defaultdict(list)
        for claim in claims:
            self.by_message[claim.message_id].append(claim)
            self.by_fact[(claim.persona_id, claim.subject, claim.predicate)].append(claim)

    def versions(self, item: QAItem, gold: Iterable[str]) -> tuple[set[str], set[str]]:
        """For the facts `item` asks (its queries' targets, as its gold messages state them): the messages
        that state the value valid at the time asked about (current), and those that state another value
        said before then (older). A question about a fact's history has no older value."""
        current: set[str] = set()
        older: set[str] = set()
        gold_claims = [c for m in gold for c in self.by_message.get(m, ())]
        for query in item.queries:
            if query.aggregate == "history" or query.target in ("*", "said_on"):
                continue
            when = query.at or item.asked_at
            facts = {
                (c.persona_id, c.subject, c.predicate) for c in gold_claims if c.predicate == query.target
            }
            for fact in facts:
                said = [c for c in self.by_fact[fact] if c.valid_from <= when]
                if len({c.value for c in said}) < 2:
                    continue  # never changed (an event's facts end with the event: that is no update)
                valid = {c.value for c in said if c.valid_to is None or c.valid_to > when}
                valid = valid or {max(said, key=lambda c: c.valid_from).value}
                for claim in said:
                    (current if claim.value in valid else older).add(claim.message_id)
        return current, older - current


def classify(item: QAItem, groups: Groups, outcome: Outcome, ledger: Ledger) -> Category | None:
    """The failure category of `item` under `outcome`, or None when the question was not got wrong (or, in a
    run without answers, cannot be judged)."""
    unanswerable = item.spec.kind == "abstain"
    if outcome.answer is not None:
        if outcome.correct is None or outcome.correct:
            return None
        if unanswerable:
            return "answered_unanswerable"
    elif unanswerable or not groups:
        return None
    if groups:
        in_context = set(outcome.context)
        met = [bool(group & in_context) for group in groups]
        if not all(met):
            current, older = ledger.versions(item, set().union(*groups))
            if in_context & older and not in_context & current:
                return "stale"
            ranked = set(outcome.ranked)
            return "ranked_out" if all(group & ranked for group in groups) else "not_retrieved"
    if outcome.answer is None:
        return None  # retrieval-only: the evidence was in the context, nothing more to judge
    return "abstained_answerable" if abstains(outcome.answer) else "answered_wrong"


def breakdown(categories: Iterable[Category | None]) -> dict[str, int]:
    """Counts per category, every category present (0 when none), in pipeline order."""
    counts = dict.fromkeys(CATEGORIES, 0)
    for category in categories:
        if category is not None:
            counts[category] += 1
    return counts


def verdict_of(verdicts: Mapping[str, bool]) -> bool | None:
    """The verdict a failure is read from: the LLM judge's when there is one (the headline), else the
    rule judge's."""
    for judge in ("llm", "rule"):
        if judge in verdicts:
            return bool(verdicts[judge])
    return None
