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
from bisect import bisect_left, bisect_right
from collections import Counter, defaultdict
from dataclasses import dataclass, field
from datetime import date, datetime
from decimal import Decimal, InvalidOperation
from functools import lru_cache

from keme.days import BLOCKS, USUAL_MIN, block_of, clear_lead
from keme.models import Claim, ImageRecord, Message, QAItem, Query
from keme.text.dates import dates_in
from keme.text.normalize import norm_text, parse_money

_NUMBER = re.compile(r"-?\d+(?:\.\d+)?")
_ISO_DAY = re.compile(r"\d{4}-\d{2}-\d{2}")
_ROW = re.compile(r"([a-z]+)-\d+-([a-z_]+)")


@lru_cache(maxsize=1 << 16)
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
    sequence: tuple[str, ...] | None = None  # `history`: the values in the order they took effect
    aggregate: str = "values"  # the query's aggregate (keme.models.qa.Query)
    covers: str | None = None  # `covers`: why the expected values do not cover the question, if they do not

    @property
    def aggregated(self) -> bool:
        """The answer is computed over the claims (a count, a sum, a span), not one of their values."""
        return self.aggregate != "values"

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
        if self.aggregate == "covers":
            return self.covers
        wanted = frozenset(canon(v) for v in expect)
        if self.sequence is not None and self.values == wanted:
            order = tuple(canon(v) for v in expect)
            return None if self.sequence == order else f"the ledger gives the order {list(self.sequence)}"
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
    session_starts: list[datetime] = field(default_factory=list)  # each user's chat: its first user message
    images: list[ImageRecord] = field(default_factory=list)  # screenshots, with the text of their pages
    by_subject: dict[str, list[Claim]] = field(init=False)

    def __post_init__(self) -> None:
        self.by_subject = defaultdict(list)
        for claim in self.claims:
            self.by_subject[claim.subject].append(claim)
        self._normed: dict[str, str] | None = None
        self._naming: dict[tuple[str, ...], list[Message]] = {}
        self._said = {c.id: self._said_at(c) for c in self.claims}
        # each subject's claims, and all claims, in the order they were said (visibility by bisection)
        self._timeline: dict[str, tuple[list[datetime], list[Claim]]] = {}
        for subject, own in self.by_subject.items():
            ordered = sorted(own, key=lambda c: self._said[c.id])
            self._timeline[subject] = ([self._said[c.id] for c in ordered], ordered)
        everything = sorted(self.claims, key=lambda c: self._said[c.id])
        self._all_times, self._all = [self._said[c.id] for c in everything], everything
        self._override: dict[str, str] = {}  # claim id -> value, for `critical`
        self._override_subjects: set[str] = set()
        self._said_norm: dict[str, str] = {}
        self._joined_text: tuple[str, list[int], list[str]] | None = None
        self._active: dict[tuple, list[date]] = {}
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
        """The messages whose normalised text contains every needle, in time order (cached: candidates
        share topics). The first needle is found in all the text joined at once (a million-token haystack
        has tens of thousands of messages); each message it falls in is then checked for the others."""
        if needles not in self._naming:
            if not needles:
                self._naming[needles] = list(self.messages.values())
                return self._naming[needles]
            text, starts, ids = self._joined()
            first, hits = needles[0], set()
            at = text.find(first) if first else 0
            while at != -1 and first:
                hits.add(bisect_right(starts, at) - 1)
                at = text.find(first, at + 1)
            if not first:
                hits = set(range(len(ids)))
            normed = self.normed
            self._naming[needles] = [
                self.messages[ids[i]] for i in sorted(hits) if all(n in normed[ids[i]] for n in needles)
            ]
        return self._naming[needles]

    def _joined(self) -> tuple[str, list[int], list[str]]:
        """Every normalised message in one string (separated by a character no normalised text holds),
        with where each starts and its id."""
        if self._joined_text is None:
            ids = list(self.messages)
            starts, at = [], 0
            for mid in ids:
                starts.append(at)
                at += len(self.normed[mid]) + 1
            self._joined_text = ("\x00".join(self.normed[mid] for mid in ids), starts, ids)
        return self._joined_text

    @classmethod
    def of(cls, world) -> Ledger:
        """A world's ledger: its claims, its messages, and when its sessions began."""
        images = list(getattr(world, "images", {}).values())
        opened = [m.timestamp for s in world.sessions if (m := s.opened_by_user) is not None]
        return cls(list(world.claims), world.messages, opened, images)

    def _visible(self, subject: str, asked_at: datetime) -> list[Claim]:
        times, ordered = self._timeline.get(subject, ([], []))
        claims = ordered[: bisect_right(times, asked_at)]
        if self._override:
            claims = [
                c.model_copy(update={"value": self._override[c.id]}) if c.id in self._override else c
                for c in claims
            ]
        return claims

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
        if pool is None and query.start is not None and query.end is not None:
            # a period with no other qualifier: the subjects talked about in it
            low = bisect_left(self._all_times, datetime.combine(query.start, datetime.min.time()))
            high = bisect_right(self._all_times, datetime.combine(query.end, datetime.max.time()))
            pool = {c.subject for c in self._all[low:high]}
        if pool is not None and self._override:
            pool = pool | self._override_subjects
        names = [
            s
            for s in self.by_subject
            if (pool is None or s in pool) and (kind == "any" or s == kind or s.startswith(f"{kind}:"))
        ]
        return [s for s in names if self._matches(self._visible(s, asked_at), query.where)]

    def critical(self, query: Query, asked_at: datetime, candidates: tuple[Claim, ...]) -> list[Claim]:
        """The candidates whose value, changed on its own, changes or breaks the answer: what an
        aggregate (a majority, a recap) rests on, since most single changes leave it standing."""
        out = []
        for claim in candidates:
            self._override, self._override_subjects = {claim.id: f"changed {claim.id}"}, {claim.subject}
            try:
                if self.resolve(query, asked_at).problem(query.expect) is not None:
                    out.append(claim)
            finally:
                self._override, self._override_subjects = {}, set()
        return out

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
        if query.aggregate == "sessions":
            return self._sessions(query, asked_at)
        if query.subject == "image":
            return self._screenshots(query, asked_at)
        at = query.at or asked_at
        subjects = self.subjects(query, asked_at)
        qualifiers, conflicts = self._qualifying(subjects, query, asked_at)
        if query.target == "said_on":
            said = self._said_on(query, subjects, asked_at)
            values, backed = said.values, said.backed
            if query.aggregate == "span":
                values, backed = _span(values), _span(backed or frozenset())
            return Resolution(
                values,
                said.claims if query.aggregate == "span" else (),
                said.subjects,
                said.mentions,
                tuple(qualifiers),
                tuple(conflicts),
                backed,
                aggregate=query.aggregate,
            )
        found: list[Claim] = []
        for subject in subjects:
            for claim in self._visible(subject, asked_at):
                if query.target not in ("*", claim.predicate) or (
                    query.target == "*" and claim.predicate in query.where
                ):
                    continue
                if query.source == "app" and claim.speaker != "app":
                    continue
                if not self._in_period(claim, query):
                    continue
                if query.aggregate in ("history", "covers"):
                    found.append(claim)  # every version: a history, a recap of changes
                    continue
                if claim.valid_from > at or (claim.valid_to is not None and claim.valid_to <= at):
                    if query.subject == "persona":
                        continue  # a persona attribute's value at `at`: only the version valid then
                found.append(claim)
        base = dict(
            claims=tuple(found),
            subjects=tuple(subjects),
            qualifiers=tuple(qualifiers),
        )
        if query.aggregate == "values":
            return Resolution(frozenset(canon(c.value) for c in found), conflicts=tuple(conflicts), **base)
        if query.aggregate == "history":
            ordered = sorted(found, key=lambda c: (c.valid_from, self.said_at(c)))
            sequence = tuple(dict.fromkeys(canon(c.value) for c in ordered))
            return Resolution(
                frozenset(sequence),
                conflicts=tuple(conflicts),
                sequence=sequence,
                aggregate="history",
                **base,
            )
        if query.aggregate == "covers":
            return Resolution(
                frozenset(canon(c.value) for c in found),
                conflicts=tuple(conflicts),
                aggregate="covers",
                covers=self._coverage(query, subjects, found, asked_at),
                **base,
            )
        per_subject: dict[str, set[str]] = defaultdict(set)
        for claim in found:
            per_subject[claim.subject].add(canon(claim.value))
        conflicts += [f"{s} {query.target}" for s, values in per_subject.items() if len(values) > 1]
        one = {s: next(iter(values)) for s, values in per_subject.items() if len(values) == 1}
        if query.aggregate == "count":
            values = frozenset({str(len(per_subject))})
        elif query.aggregate == "sum":
            total = sum((_number(v) for v in one.values()), Decimal(0))
            values = frozenset({canon(str(total))})
        else:  # mode: the value most subjects have; every value not clearly behind it is an answer too
            counts = Counter(one.values())
            top = max(counts.values(), default=0)
            values = frozenset(v for v, n in counts.items() if n == top or not clear_lead(top, n))
        return Resolution(values, conflicts=tuple(conflicts), aggregate=query.aggregate, **base)

    def _in_period(self, claim: Claim, query: Query) -> bool:
        day = self.said_at(claim).date()
        return (query.start is None or day >= query.start) and (query.end is None or day <= query.end)

    def _coverage(
        self, query: Query, subjects: list[str], found: list[Claim], asked_at: datetime
    ) -> str | None:
        """A recap's points: each stated by a claim of the one subject the question names (as its value or
        in its words), and spread over the whole period: from its first third to its last, counted over
        the days the persona talked to the assistant in it."""
        if query.where and len(subjects) != 1:
            return f"the question names {len(subjects)} subjects: {subjects[:3]}"
        days = []
        for point in query.expect:
            wanted, words = canon(point), norm_text(point)
            stating = [c for c in found if canon(c.value) == wanted or words in self._said_normed(c)]
            if not stating:
                return f"the ledger does not say {point!r}"
            days += [self.said_at(c).date() for c in stating]
        if query.start is None or query.end is None:
            return None
        active = self._active_days(query.start, query.end, asked_at)
        if not active:
            return None
        third = (active[-1] - active[0]).days / 3
        if (min(days) - active[0]).days > third or (active[-1] - max(days)).days > third:
            return f"the points cover {min(days)}..{max(days)} of {active[0]}..{active[-1]}"
        return None

    def _screenshots(self, query: Query, asked_at: datetime) -> Resolution:
        """The pages of every screenshot shared before the question that its details fit."""
        row = _ROW.fullmatch(query.target)  # "event-2-title": a field of one row of a list on the page
        subjects, values, amounts = [], set(), []
        for image in self.images:
            message = self.messages.get(image.message_id)
            if message is None or message.timestamp > asked_at:
                continue
            by_row: dict[str, str] = {}
            fits = True
            for key, value in query.where.items():
                if key == "template":
                    fits = image.template == value
                elif key == "said_on":
                    fits = message.timestamp.date().isoformat() == value
                elif key in image.about:
                    fits = canon(image.about[key]) == canon(value)
                elif row is not None:
                    by_row[key] = value  # the row's own fields ("time" of an event) pick the row
                else:
                    fits = False
                if not fits:
                    break
            day = message.timestamp.date()
            if not fits or (query.start and day < query.start) or (query.end and day > query.end):
                continue
            if query.aggregate == "count":
                subjects.append(f"image:{image.id}")
                continue
            if query.target == "lines":
                found = [str(sum(1 for k in image.facts if k.startswith("line-")))]
            elif query.target.startswith("about."):  # what the page is about, where the page shows it
                value = image.about.get(query.target.removeprefix("about."), "")
                found = [value] if value and value in image.dom_text else []
            elif row is not None:
                prefix, name = row.group(1), row.group(2)
                rows = sorted({m.group(1) for k in image.facts if (m := re.match(rf"{prefix}-(\d+)-", k))})
                found = [
                    image.facts.get(f"{prefix}-{i}-{name}", "")
                    for i in rows
                    if all(
                        canon(image.facts.get(f"{prefix}-{i}-{k}", "")) == canon(v) for k, v in by_row.items()
                    )
                ]
            else:
                found = [image.facts.get(query.target, "")]
            found = [v for v in found if v]
            if found:
                subjects.append(f"image:{image.id}")
                values |= {canon(v) for v in found}
                amounts.append(parse_money(found[0]))
        if query.aggregate == "count":
            values = {str(len(subjects))}
        elif query.aggregate == "sum":  # a page without a readable amount makes the total unknown
            values = {canon(str(sum(amounts)))} if None not in amounts else set()
        return Resolution(frozenset(values), subjects=tuple(subjects), aggregate=query.aggregate)

    def _said_normed(self, claim: Claim) -> str:
        if claim.id not in self._said_norm:
            self._said_norm[claim.id] = norm_text(claim.said)
        return self._said_norm[claim.id]

    def _active_days(self, start: date, end: date, asked_at: datetime) -> list[date]:
        """The days of the period the persona talked to the assistant, up to the question."""
        key = (start, end, asked_at)
        if key not in self._active:
            self._active[key] = sorted(
                {
                    m.timestamp.date()
                    for m in self.messages.values()
                    if m.timestamp <= asked_at and start <= m.timestamp.date() <= end
                }
            )
        return self._active[key]

    def _sessions(self, query: Query, asked_at: datetime) -> Resolution:
        """The time of day the user's chats of the period usually began: every block not clearly behind
        the top one is an answer (a near tie is several answers, too few chats all three)."""
        counts = Counter(
            block
            for start in self.session_starts
            if start <= asked_at
            and (query.start is None or start.date() >= query.start)
            and (query.end is None or start.date() <= query.end)
            and (block := block_of(start)) is not None
        )
        top = max(counts.values(), default=0)
        if top < USUAL_MIN:
            return Resolution(frozenset(BLOCKS), aggregate="sessions")
        usual = frozenset(b for b in BLOCKS if counts[b] == top or not clear_lead(top, counts[b]))
        return Resolution(usual, aggregate="sessions")

    def _said_on(self, query: Query, subjects: list[str], asked_at: datetime) -> Resolution:
        """The days the subject was talked about: its claims' days and every message naming it."""
        names = [v for p, v in query.where.items() if p != "said_on"]
        days: set[str] = set()
        found: list[Claim] = []
        for subject in subjects:
            for claim in self._visible(subject, asked_at):
                if query.aggregate == "span" or any(
                    claim.predicate == p and canon(claim.value) == canon(v) for p, v in query.where.items()
                ):  # a span runs over every day the subject was talked about, whatever was said of it
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


def _span(days: frozenset[str]) -> frozenset[str]:
    """Days from the first to the last of ISO days, as a one-value set (empty for no days)."""
    if not days:
        return frozenset()
    ordered = sorted(date.fromisoformat(d) for d in days)
    return frozenset({str((ordered[-1] - ordered[0]).days)})


def _number(text: str) -> Decimal:
    try:
        return Decimal(text)
    except InvalidOperation:
        return Decimal(0)


def support(
    resolution: Resolution, expect: list[str], evidence: list[str]
) -> tuple[list[str], dict[str, list[str]]]:
    """The claims behind the answer, and for each evidence message the others that say the same.

    An evidence message's alternatives are the messages with a claim of the same subject, predicate
    and (expected) value as one of its own answer claims: an app record's restatement in chat.
    """
    wanted = {canon(v) for v in expect}
    answer = [c for c in resolution.claims if resolution.aggregated or canon(c.value) in wanted]
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
        if query.aggregate in ("mode", "covers", "span"):
            # most single changes leave a majority, a recap or a span standing: it rests on those that
            # do not. Only a qualifier or a claim stating an expected value can (another category's
            # bill cannot overturn a majority, a claim naming none of a recap's points cannot drop one)
            wanted = {canon(v) for v in query.expect}
            words = [norm_text(v) for v in query.expect]
            qualifiers = {c.id for c in resolution.qualifiers}
            candidates = tuple(
                c
                for c in resolution.basis
                if c.id in qualifiers
                or query.aggregate == "span"  # any day the subject was talked about may be an end
                or canon(c.value) in wanted
                or (query.aggregate == "covers" and any(w in norm_text(c.said) for w in words))
            )
            kept = {c.id for c in ledger.critical(query, item.asked_at, candidates)}
            found = [c for c in found if c in kept]
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
