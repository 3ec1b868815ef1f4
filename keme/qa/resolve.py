"""Resolve a question against everything the persona's data says, not only the quotes its proof picked.

A question's `Query` names the subjects it asks about (by the qualifiers it states) and the predicate
it asks for. Resolving it collects every claim of the ledger said before the question is asked (and
every message that names the qualifier, for questions about when something was talked about): the set
of values must be exactly the expected one. More values is a question with several right answers;
fewer (or other) values is a gold the ledger does not back. The claims behind the answer and the
messages that state them are the item's complete evidence.
"""

from __future__ import annotations

import re
from collections import defaultdict
from dataclasses import dataclass, field
from datetime import datetime
from decimal import Decimal, InvalidOperation

from keme.models import Claim, Message, QAItem, Query
from keme.text.dates import dates_in
from keme.text.normalize import norm_text

_NUMBER = re.compile(r"-?\d+(?:\.\d+)?")
_ISO_DAY = re.compile(r"\d{4}-\d{2}-\d{2}")


def canon(value: str) -> str:
    """One spelling per value: numbers without trailing zeros, text normalised (case, width, spaces)."""
    text = value.strip()
    if _ISO_DAY.fullmatch(text):
        return text
    if _NUMBER.fullmatch(text):
        try:
            number = Decimal(text)
        except InvalidOperation:
            return norm_text(text)
        return format(number.normalize(), "f") if number != number.to_integral() else str(int(number))
    return norm_text(text)


@dataclass(frozen=True)
class Resolution:
    """The values a query resolves to, with the claims that state them."""

    values: frozenset[str]
    claims: tuple[Claim, ...] = ()  # the claims stating an answer value (all values, not only the expected)
    subjects: tuple[str, ...] = ()
    mentions: tuple[str, ...] = ()  # for `said_on` targets: ids of the messages that name the subject
    qualifiers: tuple[Claim, ...] = ()  # the claims by which the subjects match the question
    conflicts: tuple[str, ...] = ()  # subjects whose claims disagree on a qualifier
    backed: frozenset[str] | None = None  # `said_on`: the days the claims give (mentions only add days)

    @property
    def basis(self) -> tuple[Claim, ...]:
        """Every claim the resolution depends on: changing any one changes or breaks it."""
        seen: dict[str, Claim] = {}
        for claim in self.qualifiers + self.claims:
            seen.setdefault(claim.id, claim)
        return tuple(seen.values())

    def problem(self, expect: list[str]) -> str | None:
        """Why the resolution is not exactly `expect` (None when it is)."""
        if self.conflicts:
            return f"the ledger contradicts itself on {list(self.conflicts)[:3]}"
        wanted = frozenset(canon(v) for v in expect)
        if self.values == wanted and (self.backed is None or self.backed == wanted):
            return None
        extra = sorted(self.values - wanted)
        missing = sorted(wanted - (self.values if self.backed is None else self.backed))
        if missing and not extra:
            return f"the ledger does not say {missing} (subjects {list(self.subjects)[:3]})"
        if missing:
            return f"the ledger says {extra}, not {missing}"
        return f"several answers: the ledger also says {extra}"


@dataclass
class Ledger:
    """One persona's claims, indexed by subject, with the time each was said."""

    claims: list[Claim]
    messages: dict[str, Message]
    by_subject: dict[str, list[Claim]] = field(init=False)

    def __post_init__(self) -> None:
        self.by_subject = defaultdict(list)
        for claim in self.claims:
            self.by_subject[claim.subject].append(claim)
        self._normed: dict[str, str] | None = None
        self._naming: dict[tuple[str, ...], list[Message]] = {}
        self._said = {c.id: self._said_at(c) for c in self.claims}
        # (predicate, canonical value) -> the subjects with such a claim: a query's candidates
        self._holders: dict[tuple[str, str], set[str]] = defaultdict(set)
        for claim in self.claims:
            self._holders[(claim.predicate, canon(claim.value))].add(claim.subject)

    @property
    def normed(self) -> dict[str, str]:
        """Every message's text normalised once (mention checks run for every candidate question)."""
        if self._normed is None:
            self._normed = {mid: norm_text(m.content) for mid, m in self.messages.items()}
        return self._normed

    def _said_at(self, claim: Claim) -> datetime:
        message = self.messages.get(claim.message_id)
        return message.timestamp if message is not None else claim.valid_from

    def said_at(self, claim: Claim) -> datetime:
        said = self._said.get(claim.id)
        return said if said is not None else self._said_at(claim)

    def naming(self, needles: tuple[str, ...]) -> list[Message]:
        """The messages whose normalised text contains every needle (cached: candidates share topics)."""
        if needles not in self._naming:
            normed = self.normed
            self._naming[needles] = [
                m for m in self.messages.values() if all(n in normed[m.id] for n in needles)
            ]
        return self._naming[needles]

    def _visible(self, subject: str, asked_at: datetime) -> list[Claim]:
        return [c for c in self.by_subject.get(subject, []) if self.said_at(c) <= asked_at]

    def _matches(self, claims: list[Claim], where: dict[str, str]) -> bool:
        for predicate, value in where.items():
            wanted = canon(value)
            if predicate == "said_on":
                if not any(self.said_at(c).date().isoformat() == value for c in claims):
                    return False
            elif not any(c.predicate == predicate and canon(c.value) == wanted for c in claims):
                return False
        return True

    def subjects(self, query: Query, asked_at: datetime) -> list[str]:
        kind = query.subject
        pool: set[str] | None = None
        for predicate, value in query.where.items():
            if predicate != "said_on":
                holders = self._holders.get((predicate, canon(value)), set())
                pool = holders if pool is None else pool & holders
        names = [
            s
            for s in self.by_subject
            if (pool is None or s in pool) and (kind == "any" or s == kind or s.startswith(f"{kind}:"))
        ]
        return [s for s in names if self._matches(self._visible(s, asked_at), query.where)]

    def _qualifying(
        self, subjects: list[str], query: Query, asked_at: datetime
    ) -> tuple[list[Claim], list[str]]:
        """The matching subjects' claims on the qualifier predicates, and the subjects whose claims give a
        qualifier two values (a record whose title is said two ways is not one record to ask about)."""
        found, conflicts = [], []
        predicates = set(query.where) - {"said_on"}
        for subject in subjects:
            own = [c for c in self._visible(subject, asked_at) if c.predicate in predicates]
            found += own
            for predicate in predicates:
                if len({canon(c.value) for c in own if c.predicate == predicate}) > 1:
                    conflicts.append(f"{subject} {predicate}")
        return found, conflicts

    def resolve(self, query: Query, asked_at: datetime) -> Resolution:
        at = query.at or asked_at
        subjects = self.subjects(query, asked_at)
        qualifiers, conflicts = self._qualifying(subjects, query, asked_at)
        if query.target == "said_on":
            said = self._said_on(query, subjects, asked_at)
            return Resolution(
                said.values,
                (),
                said.subjects,
                said.mentions,
                tuple(qualifiers),
                tuple(conflicts),
                said.backed,
            )
        found: list[Claim] = []
        for subject in subjects:
            for claim in self._visible(subject, asked_at):
                if claim.predicate != query.target:
                    continue
                if claim.valid_from > at or (claim.valid_to is not None and claim.valid_to <= at):
                    if query.subject == "persona":
                        continue  # a persona attribute's value at `at`: only the version valid then
                found.append(claim)
        return Resolution(
            frozenset(canon(c.value) for c in found),
            tuple(found),
            tuple(subjects),
            (),
            tuple(qualifiers),
            tuple(conflicts),
        )

    def _said_on(self, query: Query, subjects: list[str], asked_at: datetime) -> Resolution:
        """The days the subject was talked about: its claims' days and every message naming it."""
        names = [v for p, v in query.where.items() if p != "said_on"]
        days: set[str] = set()
        found: list[Claim] = []
        for subject in subjects:
            for claim in self._visible(subject, asked_at):
                if any(
                    claim.predicate == p and canon(claim.value) == canon(v) for p, v in query.where.items()
                ):
                    days.add(self.said_at(claim).date().isoformat())
                    found.append(claim)
        needles = tuple(norm_text(n) for n in names)
        mentions = [m.id for m in self.naming(needles) if m.timestamp <= asked_at] if needles else []
        backed = frozenset(days)
        days |= {self.messages[m].timestamp.date().isoformat() for m in mentions}
        if query.pick == "first" and days:
            first = min(days)  # ISO days sort as dates
            days, backed = {first}, frozenset({first} & backed)
        return Resolution(frozenset(days), tuple(found), tuple(subjects), tuple(mentions), backed=backed)


def support(
    resolution: Resolution, expect: list[str], evidence: list[str]
) -> tuple[list[str], dict[str, list[str]]]:
    """The claims behind the answer, and for each evidence message the others that say the same.

    An evidence message's alternatives are the messages with a claim of the same subject, predicate
    and (expected) value as one of its own answer claims: an app record's restatement in chat.
    """
    wanted = {canon(v) for v in expect}
    answer = [c for c in resolution.claims if canon(c.value) in wanted]
    basis = [c.id for c in resolution.basis]
    keys_of: dict[str, set[tuple[str, str, str]]] = defaultdict(set)
    holders: dict[tuple[str, str, str], list[str]] = defaultdict(list)
    for claim in answer:
        key = (claim.subject, claim.predicate, canon(claim.value))
        keys_of[claim.message_id].add(key)
        if claim.message_id not in holders[key]:
            holders[key].append(claim.message_id)
    alternatives: dict[str, list[str]] = {}
    for message_id in evidence:
        others = [m for key in sorted(keys_of.get(message_id, ())) for m in holders[key] if m != message_id]
        others = [m for m in dict.fromkeys(others) if m not in evidence]
        if others:
            alternatives[message_id] = others
    return basis, alternatives


def uniqueness(item: QAItem, ledger: Ledger) -> str | None:
    """Why the item's question does not have exactly its gold as answer in the whole ledger (None if it
    does, or if the item states no query)."""
    for query in item.queries:
        problem = ledger.resolve(query, item.asked_at).problem(query.expect)
        if problem is not None:
            return f"{query.target}: {problem}"
    return None


def completed(item: QAItem, ledger: Ledger) -> QAItem:
    """The item with the claims its answer rests on and every message that restates its evidence."""
    if not item.queries:
        return item
    claims: list[str] = []
    alternatives: dict[str, list[str]] = {}
    for query in item.queries:
        resolution = ledger.resolve(query, item.asked_at)
        found, others = support(resolution, query.expect, item.evidence)
        if query.target == "said_on":
            others = _same_day(resolution, ledger, item.evidence)
        claims += [c for c in found if c not in claims]
        for message_id, more in others.items():
            known = alternatives.setdefault(message_id, [])
            known += [m for m in more if m not in known]
    return item.model_copy(update={"claims": claims, "also_supported_by": alternatives})


def _same_day(resolution: Resolution, ledger: Ledger, evidence: list[str]) -> dict[str, list[str]]:
    """For a question about the day something was talked about: every other message that names it on
    the evidence message's day says the same."""
    naming = list(dict.fromkeys([c.message_id for c in resolution.qualifiers] + list(resolution.mentions)))
    out: dict[str, list[str]] = {}
    for message_id in evidence:
        message = ledger.messages.get(message_id)
        if message is None:
            continue
        day = message.timestamp.date()
        others = [
            m
            for m in naming
            if m != message_id and m not in evidence and ledger.messages[m].timestamp.date() == day
        ]
        if others:
            out[message_id] = others
    return out


# words that pick one of several records by order: a qualifier as good as a date
ORDINALS = ("first", "last time", "most recent", "第一次", "头一回", "最早", "最后一次", "最近一次")
QUOTES = ("'{}'", "「{}」", "“{}”", "‘{}’", '"{}"')


def record_titles(claims: list[Claim]) -> dict[str, list[tuple[datetime, str]]]:
    """Every app record's title: when it was recorded, and the record (`anchor:<id>`)."""
    titles: dict[str, list[tuple[datetime, str]]] = defaultdict(list)
    for claim in claims:
        if claim.predicate == "title" and claim.subject.startswith("anchor:") and claim.speaker == "app":
            titles[claim.value].append((claim.valid_from, claim.subject))
    return titles


def shared_title(
    question: str, asked_at: datetime, titles: dict[str, list[tuple[datetime, str]]]
) -> str | None:
    """A record title the question quotes that several records recorded before it carry, with neither an
    ordinal nor one of their days in the question to tell them apart."""
    if any(word in question.lower() for word in ORDINALS):
        return None  # "the first time I wrote 'X'" picks one of the records
    for title, records in titles.items():
        seen = {subject: when for when, subject in records if when <= asked_at}
        if len(seen) < 2 or not title or not any(q.format(title) in question for q in QUOTES):
            continue
        days = {when.date() for when in seen.values()}
        if not any(day in dates_in(question, day.year) for day in days):
            return f"{title!r} is the title of {len(seen)} records"
    return None
