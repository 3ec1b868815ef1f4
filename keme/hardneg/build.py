"""`keme hardneg`: a shorter, harder trajectory around each chosen question.

Each trajectory keeps the question's evidence sessions verbatim (ids, text, times: only the persona they
belong to is the new trajectory's) and surrounds them with distractor sessions placed in time around
them, all before the question is asked:

- `other_day`: the evidence session again on another day, its answer values changed
  (keme.hardneg.twins);
- `other_subject` / `other_record`: the same session about another subject — the asked-about values,
  or every value, changed for the persona's own values of the same kind;
- `asked_before` / `other_ask`: the question asked before and left unanswered, or asked by someone else
  whose answer was another value (keme.hardneg.voices); `like_question`: a question in the same words
  about another store, day or person, asked before and left unanswered;
- `same_topic` / `before_update`: the persona's own sessions that score highest against the question
  (a value from before an update among them); `other_conversation`: for imported dialogues, another
  conversation's best-scoring session, told by this conversation's speakers.

A distractor is kept only if the gold is still the only right answer (keme.hardneg.prove) and the
trajectory stays within its token budget; questions whose evidence shares a session are built into one
trajectory. The result is one Dataset; the caller writes it.
"""

from __future__ import annotations

import math
import random
import re
from collections import Counter, defaultdict
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Any, Literal

from pydantic import BaseModel, Field, field_validator

from keme.dataset import Dataset
from keme.dataset.manifest import Manifest
from keme.errors import KemeError
from keme.hardneg.mining import adapt, rank, session_text, speakers
from keme.hardneg.prove import checkable, gold_forms, ledger_problem, states
from keme.hardneg.shapes import like, option_text, shape
from keme.hardneg.twins import make_twin, value_pool
from keme.hardneg.voices import asked_before, names_of, other_ask, other_person, quoted
from keme.hardneg.written import write
from keme.llm import LLMClient
from keme.models import Anchor, Claim, Persona, QAItem, Session
from keme.qa.resolve import Ledger, canon
from keme.synth.state import dialogue_hash
from keme.text import resources
from keme.text.dates import date_phrases, strip_dates
from keme.text.normalize import norm_text
from keme.text.tokens import count_tokens, search_terms
from keme.validate import check_proofs  # the validator's own check: independent of how this was built

# the order twins are tried in: the same record on another day is the closest look-alike where a day tells
# them apart; where none does, the proof turns it down and another subject takes its place
TWIN_MODES = ("other_day", "other_subject", "other_day", "other_record")
GAP = timedelta(minutes=30)  # between a placed distractor and any other session
LIKE_QUESTION = 0.3  # the weighted share of words two questions have in common for one's answer to stand in


KINDS = (
    "other_day",
    "other_subject",
    "other_record",
    "asked_before",
    "other_ask",
    "like_question",
    "other_person",
    "same_topic",
    "before_update",
    "other_conversation",
    "written",
)


class HardnegSettings(BaseModel):
    """What `keme hardneg` builds."""

    questions: list[str] | None = Field(default=None, description="the question ids to build around")
    sample: int | None = Field(default=None, ge=1, description="or this many questions drawn by `seed`")
    seed: int = 0
    budget_tokens: int | None = Field(
        default=None, ge=200, description="tokens per trajectory (default: the original haystack's)"
    )
    share: float = Field(
        default=0.5, gt=0, le=1, description="without --budget-tokens: this share of the original's tokens"
    )
    twins: int = Field(default=16, ge=0, description="twins tried per evidence session")
    mined: int = Field(default=40, ge=0, description="mined sessions tried per question")
    voices: int = Field(default=4, ge=0, description="other people's words tried per evidence statement")
    echoes: int = Field(default=1, ge=0, description="times the question was asked before, unanswered")
    likes: int = Field(default=2, ge=0, description="questions like it the user asked before, unanswered")
    asks: int = Field(default=3, ge=0, description="other people who asked the same question")
    without: list[str] = Field(default_factory=list, description="distractor kinds not to make")
    brain: Literal["procedural", "llm", "hybrid"] = Field(
        default="procedural",
        description="llm: the LLM writes the content distractors; hybrid: the procedural ones and the LLM's",
    )
    written: int = Field(default=2, ge=0, description="LLM-written sessions tried per question")

    @field_validator("without")
    @classmethod
    def _known_kinds(cls, kinds: list[str]) -> list[str]:
        unknown = [k for k in kinds if k not in KINDS]
        if unknown:
            raise ValueError(f"unknown distractor kind {', '.join(unknown)}; the kinds: {', '.join(KINDS)}")
        return kinds


@dataclass
class Report:
    """What the run did, for the manifest (`stats.hardneg`)."""

    selected: int = 0
    kept: int = 0
    left_out: Counter = field(default_factory=Counter)
    distractors: Counter = field(default_factory=Counter)
    rejected: Counter = field(default_factory=Counter)
    proof: Counter = field(default_factory=Counter)
    tokens: list[tuple[int, int]] = field(default_factory=list)  # (original haystack, hard) per item

    def as_stats(self) -> dict[str, Any]:
        hard = [h for _, h in self.tokens]
        original = [o for o, _ in self.tokens]
        return {
            "selected": self.selected,
            "kept": self.kept,
            "left_out": dict(sorted(self.left_out.items())),
            "distractors": dict(sorted(self.distractors.items())),
            "distractors_rejected": dict(sorted(self.rejected.items())),
            "proof": dict(sorted(self.proof.items())),
            "tokens_original_mean": round(sum(original) / len(original)) if original else 0,
            "tokens_hard_mean": round(sum(hard) / len(hard)) if hard else 0,
            "longer_than_original": sum(h > o for o, h in self.tokens),
        }


def _tokens(sessions: list[Session]) -> int:
    return sum(count_tokens(m.content) for s in sessions for m in s.messages)


def choose(data: Dataset, settings: HardnegSettings, report: Report) -> list[QAItem]:
    """The questions to build around: those named, or a seeded sample of those that can be."""
    items = {q.id: q for q in data.qa}
    if settings.questions is not None:
        unknown = [i for i in settings.questions if i not in items]
        if unknown:
            raise KemeError(
                f"--questions: {', '.join(unknown[:5])}{' ...' if len(unknown) > 5 else ''} not in the "
                f"dataset ({len(unknown)} unknown); `keme stats` lists the question types, qa.jsonl the ids"
            )
        picked = [items[i] for i in dict.fromkeys(settings.questions)]
    else:
        picked = sorted(items.values(), key=lambda q: q.id)
    ledgered = bool(data.claims)
    usable = []
    for item in picked:
        reason = _unusable(item, ledgered)
        if reason:
            report.left_out[reason] += 1
        else:
            usable.append(item)
    if settings.questions is None and settings.sample is not None and settings.sample < len(usable):
        usable = sorted(random.Random(settings.seed).sample(usable, settings.sample), key=lambda q: q.id)
    report.selected = (
        len(picked) if settings.questions is not None or settings.sample is None else len(usable)
    )
    if not usable:
        raise KemeError(
            f"no question can be built around ({dict(report.left_out)}); hard negatives need questions "
            f"with evidence sessions"
        )
    return usable


def _unusable(item: QAItem, ledgered: bool) -> str | None:
    if item.flags:  # the source's own label defect (keme.dataset.findings): a harder copy would keep it
        return "flagged"
    if not item.evidence or not item.evidence_sessions:
        return "no_evidence"
    if item.type == "visual_reasoning":
        return "visual"
    if not (ledgered and item.queries) and not checkable(item):
        return "uncheckable"
    return None


def groups_of(items: list[QAItem]) -> list[list[QAItem]]:
    """Questions whose evidence shares a session, together (a session lives in one trajectory), and each
    question with its sub-questions."""
    parent: dict[str, str] = {}

    def find(x: str) -> str:
        while parent.setdefault(x, x) != x:
            parent[x] = parent[parent[x]]
            x = parent[x]
        return x

    first = {q.id: f"{q.persona_id}/{q.evidence_sessions[0]}" for q in items}
    for item in items:
        keys = [f"{item.persona_id}/{s}" for s in item.evidence_sessions]
        # a question and the sub-questions it was composed from are asked of one trajectory
        keys += [first[s] for s in item.sub_questions if s in first]
        for key in keys[1:]:
            parent[find(key)] = find(keys[0])
    grouped: dict[str, list[QAItem]] = defaultdict(list)
    for item in items:
        grouped[find(f"{item.persona_id}/{item.evidence_sessions[0]}")].append(item)
    return sorted(grouped.values(), key=lambda g: min(q.id for q in g))


@dataclass
class Trajectory:
    """One hard trajectory under construction."""

    number: int
    persona_id: str
    sessions: list[Session]
    claims: list[Claim]
    budget: int
    kinds: Counter = field(default_factory=Counter)
    origin: dict[str, str] = field(default_factory=dict)  # a copied message's id -> the original's
    made: int = 0  # twins made so far (each gets its own id suffix)

    def free(self, start: datetime, end: datetime) -> bool:
        return all(end + GAP < s.start or start > s.end + GAP for s in self.sessions)

    def ledger(self, extra: list[Claim] = (), sessions: list[Session] = ()) -> Ledger:
        every = [*self.sessions, *sessions]
        messages = {m.id: m for s in every for m in s.messages}
        return Ledger([*self.claims, *extra], messages, sorted(s.start for s in every))


@dataclass
class Candidate:
    session: Session
    claims: list[Claim]
    kind: str
    origin: dict[str, str] = field(default_factory=dict)


class Builder:
    """Builds every trajectory of one dataset (one instance per `keme hardneg` run); `client` writes the
    LLM brain's distractors."""

    def __init__(
        self, data: Dataset, settings: HardnegSettings, report: Report, client: LLMClient | None = None
    ):
        if settings.brain != "procedural" and client is None:
            raise KemeError(f"--brain {settings.brain} needs an LLM: pass LLM settings (--llm FILE)")
        self.data, self.settings, self.report, self.client = data, settings, report, client
        self.views = {v.persona.id: v for v in data.views()}
        self.ledgered = bool(data.claims)
        self.claims_of: dict[str, list[Claim]] = defaultdict(list)
        for claim in data.claims:
            self.claims_of[claim.message_id].append(claim)
        self.pools = {pid: self._pool(v) for pid, v in self.views.items()}
        self.kinds = {f"anchor:{a.id}": a.app for v in self.views.values() for a in v.anchors.values()}
        self.names = {pid: names_of(v.claims, v.persona.name) for pid, v in self.views.items()}
        self.strangers = {pid: self._strangers(v, self.names[pid]) for pid, v in self.views.items()}
        self.people = {  # who counts as a person (a gold that is one is stood in for by another)
            pid: frozenset(
                {*self.names[pid], *self.strangers[pid], *(n for s in v.sessions for n in speakers(s))}
            )
            for pid, v in self.views.items()
        }
        # free text: the other questions of each language (their golds are what another answer can be)
        self.asked: dict[str, list[QAItem]] = defaultdict(list)
        for q in sorted(data.qa, key=lambda q: q.id):
            if q.spec.kind not in ("abstain", "yes_no") and q.type != "adversarial":
                self.asked[q.language].append(q)
        # how much a shared word says two questions are alike: rare words much, "what" or "did" nothing
        self.terms: dict[str, set[str]] = {}
        frequency = Counter(t for q in data.qa for t in self._terms(q.question))
        self.weight = {t: math.log(len(data.qa) / n) for t, n in frequency.items()}
        self.group: list[QAItem] = []  # the questions of the trajectory being built
        # the dialogues of the hard dataset (no two sessions may share one): every evidence session's first
        self.digests: set[str] = set()

    @staticmethod
    def _pool(view) -> dict[str, list[str]]:
        """The values each predicate may take: the persona's own, then (for its attributes) the others the
        persona model knows."""
        kinds = {f"anchor:{a.id}": a.app for a in view.anchors.values()}
        pool = value_pool(view.claims, kinds)
        if view.claims:
            for key, text in resources.get(view.lang).persona.attributes.items():
                pool[key] = [*pool.get(key, []), *(v for v in text.values if v not in pool.get(key, []))]
        return pool

    # ------------------------------------------------------------ one trajectory
    def build(self, number: int, group: list[QAItem]) -> tuple[Trajectory, list[QAItem], list[Anchor]] | None:
        view = self.views[group[0].persona_id]
        pid = f"{view.persona.id}#h{number}"
        wanted = {s for q in group for s in q.evidence_sessions}
        evidence = [s.model_copy(update={"persona_id": pid}) for s in view.sessions if s.id in wanted]
        claims = [
            c.model_copy(update={"persona_id": pid})
            for s in evidence
            for m in s.messages
            for c in self.claims_of.get(m.id, [])
        ]
        before = {q.id: _tokens([s for s in view.sessions if s.end <= q.asked_at]) for q in group}
        original = min(
            before.values()
        )  # the hard trajectory is no longer than any of its questions' haystacks
        budget = min(self.settings.budget_tokens or round(original * self.settings.share), original)
        trajectory = Trajectory(number, pid, evidence, claims, max(budget, _tokens(evidence)))
        rng = random.Random(f"{self.settings.seed}/{group[0].id}")
        self.group = group
        # the questions take turns, so that each gets its strongest distractors before the budget is spent
        streams = [
            self._interleaved(item, trajectory, view, rng)
            for item in sorted(group, key=lambda q: (q.asked_at, q.id))
        ]
        while streams:
            for stream in list(streams):
                candidate = next(stream, None)
                if candidate is None:
                    streams.remove(stream)
                else:
                    self._offer(candidate, trajectory, group)
        if not trajectory.kinds:  # nothing stands beside the evidence: not a hard item
            self.report.left_out["no_distractor"] += len(group)
            return None
        items = [
            q.model_copy(
                update={
                    "persona_id": pid,
                    "source_question_id": q.id,
                    "distractor_kinds": sorted(trajectory.kinds),
                    "also_supported_by": _restatements(q, trajectory),
                }
            )
            for q in group
        ]
        anchors = [
            view.anchors[s.anchor_id].model_copy(update={"persona_id": pid}).sealed()
            for s in evidence
            if s.anchor_id and s.anchor_id in view.anchors
        ]
        for q in group:
            seen = _tokens([s for s in trajectory.sessions if s.end <= q.asked_at])
            self.report.tokens.append((before[q.id], seen))
        return trajectory, items, anchors

    def _interleaved(self, item: QAItem, trajectory: Trajectory, view, rng: random.Random):
        """Other people asking the same question, then twins, voices and mined sessions, alternating."""
        twins = self._twins(item, trajectory, view, rng)
        mined = self._mined(item, trajectory, view, rng)
        voices = self._voices(item, trajectory, view, rng)
        # the question asked by others first: short, so the budget never crowds them out
        yield from self._asks(item, trajectory, view, rng)
        yield from self._likes(item, trajectory, view, rng)
        written = self._written(item, trajectory, view, rng)
        if self.settings.brain == "llm":  # the LLM writes every content distractor
            yield from self._echoes(item, trajectory, view, rng)
            yield from written
            return
        sources = (twins, voices, twins, mined) + ((written,) if self.settings.brain == "hybrid" else ())
        while True:
            took = False
            for source in sources:
                candidate = next(source, None)
                if candidate is not None:
                    took = True
                    if candidate.kind not in self.settings.without:
                        yield candidate
            if not took:
                return

    def _twins(self, item: QAItem, trajectory: Trajectory, view, rng: random.Random):
        if not self.ledgered:
            return
        targets = {q.target for q in item.queries} - {"said_on", "lines"}
        where = {k for q in item.queries for k in q.where} - {"said_on"}
        swaps = {"other_day": targets, "other_subject": targets | where, "other_record": None}
        evidence = [s for s in trajectory.sessions if s.id in item.evidence_sessions]
        for variant in range(self.settings.twins):
            mode = TWIN_MODES[variant % len(TWIN_MODES)]
            swap = swaps[mode]
            if swap is not None and not swap:
                continue
            for session in evidence:
                delta = self._slot(session, item, trajectory, view.persona, rng)
                if delta is None:
                    continue
                trajectory.made += 1
                tag = f"#h{trajectory.number}t{trajectory.made}"
                twin = make_twin(
                    session,
                    self.claims_of,
                    swap,
                    self.pools[view.persona.id],
                    delta,
                    tag,
                    trajectory.persona_id,
                    mode,
                    rng,
                    self.kinds,
                )
                if twin is None:
                    self.report.rejected["no_twin"] += 1
                    continue
                yield Candidate(twin.session, twin.claims, mode)

    def _echoes(self, item: QAItem, trajectory: Trajectory, view, rng: random.Random):
        lang, pid = view.persona.language, trajectory.persona_id
        for _ in range(self.settings.echoes if "asked_before" not in self.settings.without else 0):
            when = self._asked_slot(item, trajectory, view.persona, rng)
            if when is not None:
                trajectory.made += 1
                sid = f"{view.persona.id}-x{trajectory.number}-{trajectory.made}"
                yield Candidate(*self._unsaid(item.question, sid, pid, lang, when, rng), "asked_before")

    def _likes(self, item: QAItem, trajectory: Trajectory, view, rng: random.Random):
        """The questions most like this one (another store, day or person in the same words) that the
        user asked before and got no answer to: a confusable entity, in the question's own form. They
        assert nothing, so no gold can change; the persona's own questions first."""
        if "like_question" in self.settings.without or not self.settings.likes:
            return
        lang, pid = view.persona.language, trajectory.persona_id
        asked_here = {q.question for q in self.group}  # their own echoes ask those
        # a question naming what another asks the day of would be talking about it on another day
        dated = {v for q in self.group for x in q.queries if x.target == "said_on" for v in x.where.values()}
        scored = [
            (self._likeness(item, q), q.persona_id == item.persona_id, q.question)
            for q in self.data.qa
            if q.language == lang
            and q.question not in asked_here
            and not any(len(v) >= 3 and v in q.question for v in dated)
        ]
        scored = sorted(
            {(score, own, text) for score, own, text in scored if score >= LIKE_QUESTION},
            key=lambda t: (-t[1], -t[0], t[2]),
        )
        for _, _, question in scored[: self.settings.likes]:
            when = self._asked_slot(item, trajectory, view.persona, rng)
            if when is None:
                continue
            trajectory.made += 1
            sid = f"{view.persona.id}-l{trajectory.number}-{trajectory.made}"
            yield Candidate(*self._unsaid(question, sid, pid, lang, when, rng), "like_question")

    def _unsaid(
        self, question: str, sid: str, pid: str, lang: str, when: datetime, rng: random.Random
    ) -> tuple[Session, list[Claim]]:
        """`question` asked and left unanswered, worded unlike any session of the hard dataset so far (no
        two sessions share a dialogue; the same question is asked in several trajectories)."""
        for _ in range(8):
            session, claims = asked_before(question, sid, pid, lang, when, rng)
            if dialogue_hash(session) not in self.digests:
                break
        return session, claims

    def _terms(self, question: str) -> set[str]:
        if question not in self.terms:
            self.terms[question] = _asked_terms(question)
        return self.terms[question]

    def _likeness(self, item: QAItem, other: QAItem) -> float:
        """How alike two questions are: the weight of the words they share over that of all their words
        (days and numbers left out)."""
        words, theirs = self._terms(item.question), self._terms(other.question)
        # summed in a fixed order: a set's order changes with the process, and so would a float sum's last
        # digit, and with it which of two equally like questions comes first
        union = sum(self.weight.get(t, 0.0) for t in sorted(words | theirs))
        return sum(self.weight.get(t, 0.0) for t in sorted(words & theirs)) / union if union else 0.0

    def _written(self, item: QAItem, trajectory: Trajectory, view, rng: random.Random):
        """The LLM brain's: chats on the question's topic that must not answer it (keme.hardneg.written)."""
        if self.client is None or self.settings.brain == "procedural" or "written" in self.settings.without:
            return
        home = next(s for s in trajectory.sessions if s.id in item.evidence_sessions)
        evidence = [m.content for s in trajectory.sessions for m in s.messages if m.id in item.evidence]
        name = view.persona.name
        people = self.people[view.persona.id] | {name, name.split(" ")[0]}
        for _ in range(self.settings.written):
            delta = self._slot(home, item, trajectory, view.persona, rng, timedelta(minutes=3))
            if delta is None:
                continue
            trajectory.made += 1
            sid = f"{view.persona.id}-w{trajectory.number}-{trajectory.made}"
            made, _ = write(
                self.client,
                item,
                evidence,
                people,
                name if view.persona.language == "zh" else name.split(" ")[0],
                sid,
                trajectory.persona_id,
                view.persona.language,
                home.start + delta,
                rng,
            )
            if made is None:
                self.report.rejected["written_refused"] += 1
                continue
            yield Candidate(made[0], made[1], "written")

    def _voices(self, item: QAItem, trajectory: Trajectory, view, rng: random.Random):
        lang, pid = view.persona.language, trajectory.persona_id
        home = next(s for s in trajectory.sessions if s.id in item.evidence_sessions)
        length = timedelta(seconds=40)
        yield from self._echoes(item, trajectory, view, rng)
        messages = {m.id: m for s in trajectory.sessions for m in s.messages}
        if not self.ledgered:
            yield from self._quotes(item, trajectory, view, messages, home, rng)
            return
        held: dict[str, set[str]] = defaultdict(set)
        for claim in view.claims:
            held[claim.predicate].add(claim.value)
        for attribute in view.persona.attributes():
            held[attribute.key] |= {v.value for v in attribute.versions}
        for message_id in item.evidence:
            message = messages.get(message_id)
            own = self.claims_of.get(message_id, [])
            if message is None or not own:
                continue
            for _ in range(self.settings.voices):
                delta = self._slot(home, item, trajectory, view.persona, rng, length)
                if delta is None:
                    continue
                trajectory.made += 1
                sid = f"{view.persona.id}-v{trajectory.number}-{trajectory.made}"
                made = other_person(
                    message,
                    own,
                    self.names[view.persona.id],
                    self.pools[view.persona.id],
                    held,
                    sid,
                    pid,
                    lang,
                    home.start + delta,
                    rng,
                )
                if made is None:
                    break
                yield Candidate(made[0], made[1], "other_person")

    @staticmethod
    def _strangers(view, known_names: list[str]) -> list[str]:
        """People the persona never mentions (another person who asks the same thing is not one of the
        persona's own people, whose claims the questions may be about)."""
        known = {view.persona.name, *known_names}
        known |= {n for s in view.sessions for n in speakers(s)}
        names = resources.get(view.lang).pools.names
        given = [*names.given_female, *names.given_male]
        if view.lang == "zh":  # called by the full name, as the persona's own people are ("余娜")
            given = [names.family[(7 * k) % len(names.family)] + g for k, g in enumerate(given)]
        return [n for n in given if n not in known and not any(k in n for k in known if len(k) > 1)]

    def _their_answer(
        self, item: QAItem, view, rng: random.Random, used: set[str]
    ) -> tuple[str, str, str] | None:
        """Another value of what the question asks for: (the ledger predicate, or "" for free text; the
        value; the value as said). None when the question has a false premise, or asks for a day, a count
        of days or a summary (a value in words that would not be recorded as it is said)."""
        if item.type == "adversarial" or item.spec.kind == "abstain":
            return None  # a false premise has no answer, for anyone
        gold = set(gold_forms(item)) | {canon(v) for q in item.queries for v in q.expect}
        target = item.queries[-1].target if item.queries else ""
        if self.ledgered and item.queries:
            if target in ("said_on", "lines", "*", "session_start") or target.startswith("about."):
                return None
            values = self.pools[view.persona.id].get(target, [])
        else:
            values, target = self._stand_ins(item, rng), ""
        values = [
            v
            for v in values
            if canon(v) not in gold
            and norm_text(v) not in gold
            and not states(v, list(gold))
            and len(v) <= 40
            and "\n" not in v
        ]
        values = [v for v in values if v not in used] or values  # each asker a value of their own
        if not values:
            return None
        value = rng.choice(sorted(set(values)))
        used.add(value)
        # an amount is said as the answer writes one (the claim keeps the ledger's canonical value)
        symbol = item.answer[:1] if item.answer[:1] in "$¥€£" else ""
        said = f"{symbol}{value}" if symbol and re.fullmatch(r"\d+(?:\.\d+)?", value) else value
        return target, value, said

    def _stand_ins(self, item: QAItem, rng: random.Random) -> list[str]:
        """Free text: values of the gold's shape to say in its place, the answers to the questions most
        like this one first (another payment's amount for a payment, another person for a person)."""
        words = self._terms(item.question)
        scored = sorted(
            ((self._likeness(item, q), q) for q in self.asked[item.language] if q.id != item.id),
            key=lambda pair: (-pair[0], pair[1].id),
        )
        people = self.people[item.persona_id]
        if (shape(item.answer, people) or "").endswith((":phrase", ":name")) and words:
            # a phrase or a name says little of what it is: only the answer of a like question stands in,
            # one that shares the question's rarest word ("learning", not "was")
            key = max(sorted(words), key=lambda t: self.weight.get(t, 0.0))
            scored = [
                (score, q)
                for score, q in scored
                if score >= LIKE_QUESTION and key in _asked_terms(q.question)
            ]
        candidates = [q.answer for _, q in scored] + sorted(self.strangers[item.persona_id])
        return like(item.answer, candidates, rng, people)[:5]

    def _asks(self, item: QAItem, trajectory: Trajectory, view, rng: random.Random):
        if "other_ask" in self.settings.without or not self.settings.asks:
            return
        strangers = self.strangers[view.persona.id]
        askers = rng.sample(strangers, min(self.settings.asks, len(strangers)))
        used = set(askers)  # nobody's answer is one of the askers ("For Ana it was Ana")
        for name in askers:
            when = self._asked_slot(item, trajectory, view.persona, rng)
            if when is None:
                continue
            trajectory.made += 1
            sid = f"{view.persona.id}-a{trajectory.number}-{trajectory.made}"
            answer = self._their_answer(item, view, rng, used)
            yield Candidate(
                *other_ask(
                    item.question,
                    name,
                    answer,
                    sid,
                    trajectory.persona_id,
                    view.persona.language,
                    when,
                    rng,
                ),
                "other_ask",
            )

    def _quotes(
        self, item: QAItem, trajectory: Trajectory, view, messages, home: Session, rng: random.Random
    ):
        """Free text: the evidence lines as someone else's words, the gold of every question of the
        trajectory swapped where the line writes it (a friend's words that state another question's gold
        would fail that question's rule check)."""
        swaps = [
            (list(dict.fromkeys([q.answer, option_text(q.answer), *q.spec.aliases])), self._stand_ins(q, rng))
            for q in [item, *(q for q in self.group if q.id != item.id)]
        ]
        for message_id in item.evidence:
            message = messages.get(message_id)
            if message is None or message.role == "system":
                continue
            reply_role = "assistant" if message.role == "user" else "user"
            for _ in range(self.settings.voices):
                delta = self._slot(home, item, trajectory, view.persona, rng, timedelta(seconds=40))
                if delta is None:
                    continue
                trajectory.made += 1
                sid = f"{view.persona.id}-v{trajectory.number}-{trajectory.made}"
                made = quoted(
                    message,
                    swaps,
                    date_phrases(item.question),
                    reply_role,
                    sid,
                    trajectory.persona_id,
                    view.persona.language,
                    home.start + delta,
                    rng,
                )
                if made is None:
                    break
                yield Candidate(made[0], made[1], "other_person")

    def _asked_slot(
        self, item: QAItem, trajectory: Trajectory, persona: Persona, rng: random.Random
    ) -> datetime | None:
        """When a short session that repeats the question starts. A question about the day something was
        talked about is repeated on that same day: repeating it on another day would be talking about it
        then too, and the day would no longer be one."""
        length = timedelta(seconds=40)
        days = [q for q in item.queries if q.target == "said_on"]
        evidence = [s for s in trajectory.sessions if s.id in item.evidence_sessions]
        if not days:
            # asked after everything it asks about had happened
            last = max(evidence, key=lambda s: s.end)
            delta = self._slot(last, item, trajectory, persona, rng, length, after=True)
            if delta is not None:
                return last.start + delta
            return self._later_that_day(last, evidence, item, trajectory, length, rng)
        # the day asked about is the day of the evidence session that names what it is asked about
        named = {v for q in days for v in q.where.values()}
        home = max(evidence, key=lambda s: sum(v in session_text(s) for v in named))
        return self._later_that_day(home, evidence, item, trajectory, length, rng)

    @staticmethod
    def _later_that_day(
        home: Session,
        evidence: list[Session],
        item: QAItem,
        trajectory: Trajectory,
        length: timedelta,
        rng: random.Random,
    ) -> datetime | None:
        steps = list(range(1, 36))
        rng.shuffle(steps)
        for step in steps:
            start = home.end + GAP * step  # later that day, once everything asked about was said
            if start.date() != home.start.date() or any(start < s.end for s in evidence):
                continue
            if start + length + GAP <= item.asked_at and trajectory.free(start, start + length):
                return start
        return None

    def _slot(
        self,
        session: Session,
        item: QAItem,
        trajectory: Trajectory,
        persona: Persona,
        rng: random.Random,
        length: timedelta | None = None,
        after: bool = False,
    ) -> timedelta | None:
        """A shift by whole days that puts a copy of `session` (or a session of `length` starting when it
        does) in a free place before the question (`after`: and after the session)."""
        length = session.end - session.start if length is None else length
        latest = (item.asked_at - session.end).days  # the most days a copy can move later
        if after and latest < 1:
            return None
        for _ in range(12):
            if after:
                days = rng.randint(1, min(40, latest))
            else:
                days = rng.choice([-1, 1]) * rng.randint(2, 40)
            start = session.start + timedelta(days=days)
            if start < persona.start or start + length + GAP > item.asked_at:
                continue
            if trajectory.free(start, start + length):
                return timedelta(days=days)
        return None

    def _mined(self, item: QAItem, trajectory: Trajectory, view, rng: random.Random):
        held = {s.id for s in trajectory.sessions}
        own = [s for s in view.sessions if s.id not in held and s.end <= item.asked_at]
        tag = f"#h{trajectory.number}m"
        targets = {q.target for q in item.queries}
        wanted = {canon(v) for q in item.queries for v in q.expect}
        # what a retriever would take for the evidence: sessions like the question and like the evidence
        query = "\n".join([item.question, *(session_text(s) for s in trajectory.sessions if s.id in held)])
        for _, session in rank(query, own)[: self.settings.mined]:
            copy, claims = self._copied(session, tag, trajectory.persona_id)
            before = any(
                c.subject == "persona" and c.predicate in targets and canon(c.value) not in wanted
                for c in claims
            )
            origin = {n.id: o.id for n, o in zip(copy.messages, session.messages, strict=True)}
            yield Candidate(copy, claims, "before_update" if before else "same_topic", origin)
        if self.ledgered:
            return
        # imported dialogues: other conversations' sessions, told by this one's speakers
        names = [n for s in view.sessions for n in speakers(s)]
        names = list(dict.fromkeys(names))
        others = [s for s in self.data.sessions if s.persona_id != view.persona.id]
        for k, (_, session) in enumerate(rank(item.question, others)[: self.settings.mined]):
            theirs = speakers(session)
            adapted = adapt(session, dict(zip(theirs, names, strict=False)))
            anchor = next(s for s in trajectory.sessions if s.id in item.evidence_sessions)
            delta = self._slot(anchor, item, trajectory, view.persona, rng)
            if delta is None:
                continue
            shift = anchor.start + delta - session.start
            moved = adapted.model_copy(
                update={
                    "messages": [
                        m.model_copy(update={"timestamp": m.timestamp + shift}) for m in adapted.messages
                    ]
                }
            )
            copy, claims = self._copied(moved, f"{tag}o{k}", trajectory.persona_id)
            copy = copy.model_copy(update={"language": view.persona.language})
            yield Candidate(copy, claims, "other_conversation")

    def _copied(self, session: Session, tag: str, pid: str) -> tuple[Session, list[Claim]]:
        """A copy of a session under new ids (its claims with it)."""
        messages, claims = [], []
        for message in session.messages:
            new_id = f"{message.id}{tag}"
            own = [
                c.model_copy(update={"id": f"{new_id}-c{i}", "message_id": new_id, "persona_id": pid})
                for i, c in enumerate(self.claims_of.get(message.id, []), start=1)
            ]
            messages.append(message.model_copy(update={"id": new_id, "claims": [c.id for c in own]}))
            claims += own
        copy = session.model_copy(
            update={
                "id": f"{session.id}{tag}",
                "persona_id": pid,
                "anchor_id": None,
                "event_id": f"{session.event_id}{tag}",
                "messages": messages,
                "start": messages[0].timestamp,
                "end": messages[-1].timestamp,
            }
        )
        return copy, claims

    def _offer(self, candidate: Candidate, trajectory: Trajectory, group: list[QAItem]) -> None:
        """Add the candidate if the trajectory has room for it and every gold still stands."""
        session = candidate.session
        if any(s.id == session.id for s in trajectory.sessions):
            return
        if _tokens([*trajectory.sessions, session]) > trajectory.budget:
            self.report.rejected["budget"] += 1
            return
        if not trajectory.free(session.start, session.end):
            self.report.rejected["no_room"] += 1
            return
        digest = dialogue_hash(session)
        if digest in self.digests:
            self.report.rejected["same_text"] += 1
            return
        text = session_text(session)
        proved = [q for q in group if self.ledgered and q.queries]
        # free text, and what an LLM wrote (it carries no claims for the ledger to prove): the rule check
        held = group if candidate.kind == "written" else [q for q in group if q not in proved]
        if any(states(text, gold_forms(q)) for q in held):
            self.report.rejected["states_gold"] += 1
            return
        if proved:
            # a session about what the evidence is about would be more evidence, not a distractor
            subjects = {c.subject for c in trajectory.claims if c.message_id in self._evidence(group)}
            if any(
                c.subject in subjects and c.subject.startswith(("anchor:", "event:"))
                for c in candidate.claims
            ):
                self.report.rejected["restates_evidence"] += 1
                return
            ledger = trajectory.ledger(candidate.claims, [session])
            if any(ledger_problem(q, ledger) for q in proved):
                self.report.rejected["answers_question"] += 1
                return
        trajectory.sessions.append(session)
        trajectory.sessions.sort(key=lambda s: (s.start, s.id))
        trajectory.claims += candidate.claims
        trajectory.kinds[candidate.kind] += 1
        trajectory.origin.update(candidate.origin)
        self.digests.add(digest)
        self.report.distractors[candidate.kind] += 1

    @staticmethod
    def _evidence(group: list[QAItem]) -> set[str]:
        return {m for q in group for m in q.evidence}


def _asked_terms(question: str) -> set[str]:
    """What a question asks about, its days and numbers left out (a payment question is like another
    payment question, not like any question about the same day)."""
    return {t for t in search_terms(strip_dates(question)) if not t.isdigit()}


def _restatements(item: QAItem, trajectory: Trajectory) -> dict[str, list[str]]:
    """Each evidence message's restatements in the hard trajectory: those of the original that it holds,
    and the mined copies of the evidence or of a restatement (the same words at the same time are more
    evidence, not a distractor, and a system that retrieves them is not scored as missing it)."""
    present = {m.id for s in trajectory.sessions for m in s.messages}
    out = {}
    for message_id in item.evidence:
        alternatives = {message_id, *item.also_supported_by.get(message_id, [])}
        kept = [a for a in item.also_supported_by.get(message_id, []) if a in present]
        kept += sorted(c for c, o in trajectory.origin.items() if o in alternatives and c in present)
        if kept:
            out[message_id] = list(dict.fromkeys(kept))
    return out


def pruned_persona(persona: Persona, pid: str, kept: dict[str, str]) -> Persona:
    """The persona of a hard trajectory: each attribute version it reveals (its revealing message kept,
    under the id `kept` maps it to), and the initial values, which need no revealing."""
    dimensions = {}
    for dim, attrs in persona.dimensions.items():
        out = {}
        for name, attr in attrs.items():
            versions = []
            for i, version in enumerate(attr.versions):
                links = [kept[e] for e in version.evidence if e in kept]
                initial = i == 0 and version.valid_from <= persona.start
                revealed = bool(version.evidence) and version.evidence[0] in kept
                if not (initial or revealed):
                    continue
                if versions and versions[-1].value == version.value:
                    versions[-1] = versions[-1].model_copy(update={"evidence": versions[-1].evidence + links})
                    continue
                versions.append(version.model_copy(update={"evidence": links}))
            out[name] = attr.model_copy(update={"versions": versions})
        dimensions[dim] = out
    return persona.model_copy(update={"id": pid, "dimensions": dimensions})


def _nothing_built(report: Report) -> str:
    starved = report.left_out.get("no_distractor", 0)
    if starved and not report.proof.get("failed"):
        return (
            f"no hard item: for {starved} question(s) no distractor fits beside the evidence "
            f"(rejected: {dict(report.rejected)}); a hard trajectory is no longer than its question's "
            f"original haystack, and these haystacks leave no room: build around questions of longer "
            f"conversations"
        )
    return "no hard item keeps a unique gold answer; nothing to write"


def harden(
    data: Dataset, settings: HardnegSettings, client: LLMClient | None = None
) -> tuple[Dataset, dict[str, Any]]:
    """The hard dataset of `data` and what went into it (the manifest's `stats.hardneg`); `client`: the
    LLM that writes the distractors of `--brain llm|hybrid`."""
    report = Report()
    chosen = choose(data, settings, report)
    builder = Builder(data, settings, report, client)
    held = {s for q in chosen for s in q.evidence_sessions}
    builder.digests = {dialogue_hash(s) for s in data.sessions if s.id in held}
    asked = {q.id for q in chosen}
    personas, sessions, claims, anchors, items = [], [], [], [], []
    for number, group in enumerate(groups_of(chosen), start=1):
        made = builder.build(number, group)
        if made is None:
            continue
        trajectory, built, records = made
        # a sub-question left out of the hard set stays in the source dataset (source_question_id)
        built = [
            q.model_copy(update={"sub_questions": [s for s in q.sub_questions if s in asked]}) for q in built
        ]
        source = builder.views[group[0].persona_id].persona
        kept = {m.id: m.id for s in trajectory.sessions for m in s.messages}
        kept |= {original: copy for copy, original in trajectory.origin.items()}
        personas.append(pruned_persona(source, trajectory.persona_id, kept))
        sessions += trajectory.sessions
        claims += trajectory.claims
        anchors += records
        items += built
    hard = Dataset(Manifest(name=f"{data.manifest.name}-hardneg", source="keme-hardneg", files={}))
    hard.personas, hard.sessions, hard.qa = personas, sessions, items
    if data.claims:
        hard.claims, hard.anchors = claims, anchors
    failing = {v.where for v in check_proofs(hard) if v.check == "qa"}
    if failing:
        report.proof["failed"] += len(failing)
        items = [q for q in items if q.id not in failing]
        left = {q.persona_id for q in items}
        hard.personas = [p for p in personas if p.id in left]
        hard.sessions = [s for s in sessions if s.persona_id in left]
        hard.qa = items
        if data.claims:
            hard.claims = [c for c in claims if c.persona_id in left]
            hard.anchors = [a for a in anchors if a.persona_id in left]
    report.kept = len(items)
    report.proof["ledger" if data.claims else "rule"] += sum(bool(data.claims and q.queries) for q in items)
    report.proof["rule"] += sum(not (data.claims and q.queries) for q in items)
    if not items:
        raise KemeError(_nothing_built(report))
    conventions = (data.manifest.stats or {}).get("conventions")
    stats: dict[str, Any] = {
        "personas": len(hard.personas),
        "sessions": len(hard.sessions),
        "messages": sum(len(s.messages) for s in hard.sessions),
        "qa": len(items),
        "source_dataset": data.manifest.name,
        "hardneg": report.as_stats() | {"seed": settings.seed, "brain": settings.brain},
    }
    if client is not None and settings.brain != "procedural":
        client.check_failures("keme hardneg")  # a dead or failing model is an error, not a thinner set
        stats["hardneg"]["llm"] = {"model": client.config.model, "stages": client.ledger.as_dict()}
    if conventions:
        stats["conventions"] = conventions
    hard.manifest = hard.manifest.model_copy(update={"stats": stats})
    return hard, stats
