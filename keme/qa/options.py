"""Choice options without structural tells: distractors are the persona's own values, golds sit at
balanced positions.

A guesser with no memory reads an option list for tells: the position golds usually take, the option
nearest the others' median, the longest option, the one the others are simple multiples of
(keme/qa/blind.py measures them). So distractors are values of the same kind that the persona's claims
hold (other bills' amounts, other records' dates, other merchants, places, people), the gold's rank
among the options (by value for numbers and dates, by length for names) and its letter are drawn
from balanced sequences, and generated values fill in only where the persona has too few real ones,
rounded like the gold and never at a simple ratio to it. A value the same subject and predicate holds
at the question's time is never a distractor: it would be a second right answer.
"""

from __future__ import annotations

import itertools
import random
from collections import defaultdict
from dataclasses import dataclass, field
from datetime import date, datetime, timedelta
from decimal import Decimal, InvalidOperation

from keme.models import Claim
from keme.qa.blind import CONTENT_STRATEGIES, LETTERS, BlindStats, amounts_in, choose_option, simple_ratio
from keme.qa.draft import Draft
from keme.text.normalize import norm_text, parse_money
from keme.text.tokens import has_han
from keme.world.predicates import default_predicates

MONEY_ATTRS = frozenset({"finance.monthly_budget", "finance.savings_goal"})
SUMS = ("mh.sum_bills", "mh.total_category", "visual.sum")
DATE_WINDOW = 45  # days either side of the gold a real date may come from


@dataclass
class Balancer:
    """Balanced choices, deterministic from the rng, kept over a whole dataset: letters from one
    shuffled cycle of 0..n-1 after another (counts differ by at most one), ranks as the feasible one
    chosen least so far (a gold too short to be the longest option makes up for it on a later item),
    and `owed`, per blind heuristic, the chance-level hits minus the hits so far, which the next
    option lists pay back (keme.qa.build tries each rank and keeps the list that pays most).

    `forced` asks `rank` for one rank where feasible; while `probing`, ranks are not counted (a trial
    list), and `last` says which one the last call chose, for `commit`."""

    rng: random.Random
    cycles: dict[tuple[str, int], list[int]] = field(default_factory=dict)
    counts: dict[tuple[str, int], list[int]] = field(default_factory=dict)
    owed: dict[str, float] = field(default_factory=lambda: {s: 0.0 for s in CONTENT_STRATEGIES})
    forced: int | None = None
    probing: bool = False
    last: tuple[str, int, int] | None = None

    def draw(self, purpose: str, n: int) -> int:
        cycle = self._cycle(purpose, n)
        return cycle.pop()

    def peek(self, purpose: str, n: int) -> int:
        """The value the next `draw` gives."""
        return self._cycle(purpose, n)[-1]

    def _cycle(self, purpose: str, n: int) -> list[int]:
        cycle = self.cycles.setdefault((purpose, n), [])
        if not cycle:
            cycle.extend(range(n))
            self.rng.shuffle(cycle)
        return cycle

    def rank(self, purpose: str, k: int, below: int, above: int) -> int:
        """How many of `k` distractors go below the gold, given how many each side can take."""
        feasible = [r for r in range(k + 1) if r <= below and k - r <= above]
        if not feasible:
            return min(k, below)
        counts = self.counts.setdefault((purpose, k), [0] * (k + 1))
        if self.forced in feasible:
            chosen = self.forced
        else:
            least = min(counts[r] for r in feasible)
            chosen = min(r for r in feasible if counts[r] == least)
        self.last = (purpose, k, chosen)
        if not self.probing:
            counts[chosen] += 1
        return chosen

    def use(self, purpose: str, k: int, rank: int) -> int:
        """How often `rank` was chosen so far (a trial list whose rank was used less is preferred)."""
        return self.counts.get((purpose, k), [0] * (k + 1))[rank]

    def commit(self, chosen: tuple[str, int, int] | None) -> None:
        if chosen is not None:
            purpose, k, rank = chosen
            self.counts.setdefault((purpose, k), [0] * (k + 1))[rank] += 1


# ---------------------------------------------------------------- the persona's values
class Values:
    """The persona's claims by predicate, for distractors of the same kind."""

    def __init__(self, claims: list[Claim], record_days: list[date], kinds: dict[str, str] | None = None):
        self.kinds = (
            kinds or {}
        )  # subject -> its kind ("anchor:bill", "event:trip"): titles of notes are not shows
        self.by_predicate: dict[str, list[Claim]] = defaultdict(list)
        self.by_message: dict[str, list[Claim]] = defaultdict(list)
        for claim in claims:
            self.by_predicate[claim.predicate].append(claim)
            self.by_message[claim.message_id].append(claim)
        types = {name: p.type for name, p in default_predicates().items()}
        self.money = [c for c in claims if types.get(c.predicate) == "money" or c.predicate in MONEY_ATTRS]
        days = {day for day in record_days}
        for claim in claims:
            if types.get(claim.predicate) == "date":
                day = _iso_day(claim.value)
                if day is not None:
                    days.add(day)
        self.days = sorted(days)

    @classmethod
    def of(cls, world) -> Values:
        kinds = {f"anchor:{a.id}": f"anchor:{a.app}" for a in world.anchors.values()}
        kinds |= {
            f"event:{e.id}": "event:" + e.params.get("_episode", e.change or e.kind)
            for e in world.graph.events
        }
        return cls(list(world.claims), [a.timestamp.date() for a in world.anchors.values()], kinds)

    def kind(self, subject: str) -> str:
        return self.kinds.get(subject, subject.split(":", 1)[0])

    def answer_claims(self, draft: Draft, same) -> list[Claim]:
        """Claims of the draft's evidence messages whose value is the gold (`same` compares values)."""
        return [c for m in draft.evidence for c in self.by_message.get(m, []) if same(c.value)]

    def taken(self, answers: list[Claim], at: datetime) -> set[str]:
        """Values the answers' subject+predicate holds at `at`: second right answers, never distractors."""
        slots = {(c.subject, c.predicate) for c in answers}
        return {
            c.value
            for (subject, predicate) in slots
            for c in self.by_predicate.get(predicate, [])
            if c.subject == subject and c.valid_from <= at and (c.valid_to is None or at <= c.valid_to)
        }

    def others(self, answers: list[Claim]) -> list[Claim]:
        """Claims of the answers' predicates about other subjects of the same kind (other bills, other
        trips; a note's title is no distractor for a show's)."""
        slots = {(c.subject, c.predicate) for c in answers}
        kinds = {self.kind(c.subject) for c in answers}
        predicates = sorted({c.predicate for c in answers})
        return [
            c
            for p in predicates
            for c in self.by_predicate.get(p, [])
            if (c.subject, c.predicate) not in slots and self.kind(c.subject) in kinds
        ]


def _iso_day(text: str) -> date | None:
    try:
        return date.fromisoformat(text[:10])
    except ValueError:
        return None


def _decimal(text: str) -> Decimal | None:
    try:
        return Decimal(text)
    except (InvalidOperation, ValueError):
        return None


def reference_time(draft: Draft) -> datetime:
    """The time the question is about: the proof's `at`, else when it is asked."""
    at = getattr(draft.proof.args, "at", None)
    return at if isinstance(at, datetime) else draft.asked_at


# ---------------------------------------------------------------- picking by rank
def pick_by_rank(
    gold: float,
    candidates: list[tuple[float, str]],
    k: int,
    balance: Balancer,
    purpose: str,
    rng: random.Random,
    can_make: tuple[int, int] = (0, 0),
) -> tuple[list[str], int, int]:
    """`k` distractors from (key, value) candidates such that the gold's rank among the options (by
    key) is the balanced one, counting `can_make` generated values on each side. Returns the chosen
    values and how many the caller still has to make below and above. Candidates whose key equals the
    gold's only fill up: a tie would make neither side true."""
    below = [c for c in candidates if c[0] < gold]
    above = [c for c in candidates if c[0] > gold]
    rank = balance.rank(purpose, k, len(below) + can_make[0], len(above) + can_make[1])
    chosen_below = rng.sample(below, min(rank, len(below)))
    chosen_above = rng.sample(above, min(k - rank, len(above)))
    chosen = [v for _, v in chosen_below + chosen_above]
    need_below, need_above = rank - len(chosen_below), k - rank - len(chosen_above)
    if not any(can_make):  # nothing to make: fill from the rest, ties first
        rest = [v for key, v in candidates if key == gold] + [v for _, v in below + above if v not in chosen]
        chosen += rest[: need_below + need_above]
        need_below = need_above = 0
    return chosen, need_below, need_above


# ---------------------------------------------------------------- numbers
def roundness(value: Decimal) -> int:
    """0 has cents, 1 whole, 2 a multiple of 10, 3 a multiple of 100: distractors share the gold's."""
    if value != value.to_integral_value():
        return 0
    whole = int(value)
    return 3 if whole % 100 == 0 and whole else 2 if whole % 10 == 0 and whole else 1


def _zeros(whole: int) -> int:
    count = 0
    while whole and whole % 10 == 0:
        whole //= 10
        count += 1
    return count


def _generated_money(gold: Decimal, side: int, taken: list[Decimal], rng: random.Random) -> Decimal | None:
    """An amount below (side -1) or above (+1) the gold, rounded like it, at no simple ratio to any option."""
    step = Decimal("0.01") if roundness(gold) == 0 else Decimal(10) ** max(0, _zeros(int(gold)) - 1)
    for _ in range(60):
        factor = Decimal(str(rng.uniform(0.35, 0.92) if side < 0 else rng.uniform(1.08, 2.6)))
        value = ((gold * factor) / step).quantize(Decimal("1")) * step
        value = value.quantize(Decimal("0.01"))
        if value <= 0 or roundness(value) != roundness(gold) or value in taken:
            continue
        if (side < 0 and value >= gold) or (side > 0 and value <= gold):
            continue
        if any(simple_ratio(value, t) for t in taken):
            continue
        return value
    return None


def _generated_int(gold: int, side: int, taken: list[int], rng: random.Random) -> int | None:
    spread = max(3, round(gold * 0.4))
    floor = 1 if gold >= 1 else 0
    for _ in range(40):
        value = gold + side * rng.randint(1, spread)
        if value >= floor and value not in taken:
            return value
    return None


def _span(gold: Decimal, named: list[Decimal]) -> tuple[Decimal, Decimal]:
    """The amounts a wrong option may take: within 3x of the gold, and where the question names an amount
    ("before I changed my budget to ¥7000, what was it?"), within 1.6x of both, so that the gold is not
    the one option of the named amount's size (¥8000 among ¥3000, ¥3400 and ¥3500)."""
    if not named:
        return gold / 3, gold * 3
    near = [gold, *named]
    return max(gold / 3, max(near) / Decimal("1.6")), min(gold * 3, min(near) * Decimal("1.6"))


def money_distractors(
    draft: Draft, values: Values | None, rng: random.Random, balance: Balancer, k: int = 3
) -> list[str]:
    """Amounts for a money item: other real amounts of the same predicate (for totals, sums of real
    amounts), then of any money predicate with the gold's roundness, then generated ones."""
    gold = Decimal(draft.spec.value or "0")
    pool: list[Decimal] = []
    taken: set[Decimal] = {gold}
    if values is not None:
        answers = values.answer_claims(draft, lambda v: _decimal(v) == gold)
        taken |= {d for v in values.taken(answers, reference_time(draft)) if (d := _decimal(v)) is not None}
        same = [d for c in values.others(answers) if (d := _decimal(c.value)) is not None]
        if not answers and draft.subtype.startswith(SUMS):
            amounts = sorted({d for c in values.by_predicate.get("amount", []) if (d := _decimal(c.value))})
            same = [a + b for i, a in enumerate(amounts) for b in amounts[i + 1 :]]
        # an attribute's own pool of plausible values (budgets, savings goals) comes next
        same += [d for x in draft.distractors if (d := _decimal(x) or parse_money(x)) is not None]
        low, high = _span(gold, amounts_in(draft.question))
        pool = [v for v in dict.fromkeys(same) if v not in taken and low <= v <= high]
        wider = [
            d
            for c in values.money
            if (d := _decimal(c.value)) is not None
            and d not in taken
            and roundness(d) == roundness(gold)
            and low <= d <= high
        ]
        if len(pool) < 2 * k:
            pool += [v for v in dict.fromkeys(wider) if v not in pool]
    # an amount at a simple ratio to the gold makes the gold the one the others are multiples of; round
    # hundreds are multiples of one another whichever is the gold, so they keep such amounts only when
    # too few others are left
    plain = [v for v in pool if not simple_ratio(v, gold)]
    if roundness(gold) < 3 or len(plain) >= k:
        pool = plain
    picked, need_below, need_above = pick_by_rank(
        float(gold), [(float(v), str(v)) for v in pool], k, balance, "value-rank", rng, (k, k)
    )
    chosen = [Decimal(v) for v in picked]
    for side, need in ((-1, need_below), (1, need_above)):
        for _ in range(need):
            made = _generated_money(gold, side, [gold, *chosen], rng)
            if made is not None and made not in taken:  # never a value held then
                chosen.append(made)
    return [str(v.quantize(Decimal("0.01"))) for v in chosen]


def int_distractors(
    draft: Draft, values: Values | None, rng: random.Random, balance: Balancer, k: int = 3
) -> list[str]:
    """Counts and day spans: other real values of the same predicate, else near the gold on both sides
    so that the gold's rank is the balanced one (never always the middle)."""
    gold = int(Decimal(draft.spec.value or "0"))
    pool: list[int] = []
    taken = {gold}
    if values is not None:
        answers = values.answer_claims(draft, lambda v: _decimal(v) == gold)
        taken |= {
            int(d) for v in values.taken(answers, reference_time(draft)) if (d := _decimal(v)) is not None
        }
        pool = [
            int(d)
            for c in values.others(answers)
            if (d := _decimal(c.value)) is not None and d == d.to_integral_value() and int(d) not in taken
        ]
        pool = [v for v in dict.fromkeys(pool) if gold / 3 <= v <= max(gold * 3, gold + 6)]
    floor = 1 if gold >= 1 else 0
    makeable_below = max(0, min(max(3, round(gold * 0.4)), gold - floor) - sum(1 for v in pool if v < gold))
    picked, need_below, need_above = pick_by_rank(
        gold, [(v, str(v)) for v in pool], k, balance, "value-rank", rng, (makeable_below, k)
    )
    chosen = [int(v) for v in picked]
    for side, need in ((-1, need_below), (1, need_above)):
        for _ in range(need):
            made = _generated_int(gold, side, [gold, *chosen, *taken], rng)  # never a value held then
            if made is not None:
                chosen.append(made)
    return [str(v) for v in chosen]


def date_distractors(
    draft: Draft, values: Values | None, rng: random.Random, balance: Balancer, k: int = 3
) -> list[str]:
    """Other real days of the persona's records (within a few weeks, not after the question when the
    gold is not), then generated days on the side that lacks them."""
    gold = date.fromisoformat(draft.spec.value or "2000-01-01")
    latest = draft.asked_at.date() if gold <= draft.asked_at.date() else None
    taken = {gold}
    pool: list[date] = []
    if values is not None:
        answers = values.answer_claims(draft, lambda v: _iso_day(v) == gold)
        taken |= {d for v in values.taken(answers, reference_time(draft)) if (d := _iso_day(v)) is not None}
        pool = [
            day
            for day in values.days
            if day not in taken
            and abs((day - gold).days) <= DATE_WINDOW
            and (latest is None or day <= latest)
        ]
    room_after = 21 if latest is None else min(21, (latest - gold).days)
    picked, need_below, need_above = pick_by_rank(
        gold.toordinal(),
        [(d.toordinal(), d.isoformat()) for d in pool],
        k,
        balance,
        "value-rank",
        rng,
        (k, room_after),
    )
    chosen = [date.fromisoformat(v) for v in picked]
    for side, need in ((-1, need_below), (1, need_above)):
        for _ in range(need):
            for _ in range(30):
                day = gold + timedelta(days=side * rng.randint(1, 21))
                if day not in taken and day not in chosen and (latest is None or day <= latest):
                    chosen.append(day)
                    break
    return [d.isoformat() for d in chosen]


# ---------------------------------------------------------------- names
def _related(a: str, b: str) -> bool:
    na, nb = norm_text(a), norm_text(b)
    return not na or not nb or na in nb or nb in na


def entity_distractors(
    draft: Draft, values: Values | None, rng: random.Random, balance: Balancer, k: int = 3
) -> list[str]:
    """Names of the same predicate from the persona's claims about other subjects (as they were said),
    then the draft's own pool; the gold's rank by length among the options is the balanced one."""
    gold_texts = [draft.answer, draft.spec.value or ""]
    candidates: list[str] = []
    taken: set[str] = set()
    if values is not None:
        answers = values.answer_claims(draft, lambda v: any(norm_text(v) == norm_text(t) for t in gold_texts))
        taken = {norm_text(v) for v in values.taken(answers, reference_time(draft))}
        candidates = [c.value for c in values.others(answers) if c.value and c.value in c.said]
    candidates += list(draft.distractors)
    pool = [
        c
        for c in dict.fromkeys(candidates)
        if norm_text(c) not in taken and not any(_related(c, t) for t in gold_texts if t)
    ]
    # distinct options that are not parts of one another
    distinct: list[str] = []
    for c in pool:
        if not any(_related(c, o) for o in distinct):
            distinct.append(c)
    k = min(k, len(distinct))
    if k < 2:
        return []
    chosen, _, _ = pick_by_rank(
        len(draft.answer), [(len(c), c) for c in distinct], k, balance, "length-rank", rng
    )
    return chosen


# ---------------------------------------------------------------- gold positions
def _orders(options: list[str], current: int, target: int, year: int, owed: dict[str, float]):
    """Every order of the options with the gold (index `current`) at `target`, scored by how much of
    what the heuristics are owed it pays: a hit where one is owed counts for it, one where it is
    ahead counts against. Yields (score, order, hits)."""
    others = [i for i in range(len(options)) if i != current]
    for rest in itertools.permutations(others):
        order = list(rest[:target]) + [current] + list(rest[target:])
        shown = [options[i] for i in order]
        hits = {s: choose_option(shown, s, year, BlindStats()) for s in CONTENT_STRATEGIES}
        score = sum(owed[s] if hits[s] == target else -owed[s] for s in owed if hits[s] is not None)
        yield score, order, hits


def placement_score(options: list[str], gold: str, target: int, year: int, owed: dict[str, float]) -> float:
    """The best score any order of these options can reach with the gold at letter `target`."""
    return max(score for score, _, _ in _orders(options, options.index(gold), target, year, owed))


def place_gold(draft: Draft, balance: Balancer, rng: random.Random) -> None:
    """Move a single-choice gold to the next balanced letter for its option count, ordering the other
    options so that the blind heuristics' ties (keme.qa.blind: the two middle values, equally long
    options) pay back what each is owed, and record the hits.

    An `order` proof (quote i is option i) moves its quotes with the options; a `preference` proof
    reads the options themselves.
    """
    n = len(draft.options)
    current = LETTERS.index(draft.spec.value or "A")
    gold = draft.options[current]
    target = balance.draw("position", n)
    year = draft.asked_at.year
    scored = list(_orders(draft.options, current, target, year, balance.owed))
    top = max(score for score, _, _ in scored)
    _, order, hits = rng.choice([x for x in scored if x[0] == top])
    for strategy, hit in hits.items():
        if hit is not None:
            balance.owed[strategy] += 1 / n - (hit == target)
    if draft.proof.op == "order":
        quotes = list(draft.proof.quotes)
        draft.proof = draft.proof.model_copy(update={"quotes": [quotes[i] for i in order] + quotes[n:]})
    letter = LETTERS[target]
    draft.options = [draft.options[i] for i in order]
    draft.spec = draft.spec.model_copy(update={"value": letter})
    draft.answer = f"{letter}. {gold}"


def is_single_choice(draft: Draft) -> bool:
    return draft.format == "single_choice" and draft.spec.kind == "choice" and len(draft.options) >= 2


def place_golds(drafts: list[Draft], rng: random.Random, balance: Balancer | None = None) -> None:
    """`place_gold` for every single-choice draft, in order."""
    balance = balance or Balancer(rng)
    for draft in drafts:
        if is_single_choice(draft):
            place_gold(draft, balance, rng)


def point_distractors(draft: Draft, world) -> list[str]:
    """Wrong options for a key-point item made multiple choice ("what happened in my April?", "how did
    my Lisbon trip go?"): values the persona's own facts of the points' kind and key hold elsewhere (another
    month's trip, another episode's dish), said by the time the question is asked, and never said in
    the item's scope (the period its query names, the sessions of the event it is about, the sessions
    its points come from), so each is something that happened to her, just not there: knowing what the
    month or the episode held is the only way to leave it out."""
    items = draft.spec.items
    points = set(draft.evidence)
    slots = {(f.kind, f.key) for f in world.facts if f.message_id in points and f.value in items}
    if not slots:
        return []
    scope = _scope_text(draft, world)
    shown = [norm_text(i) for i in items]
    found: list[str] = []
    for fact in world.facts:
        value = norm_text(fact.value)
        if (
            (fact.kind, fact.key) in slots
            and fact.when <= draft.asked_at
            and value
            and value not in scope
            and not any(value in s or s in value for s in shown)
            and fact.value not in found
        ):
            found.append(fact.value)
    return found


def _scope_text(draft: Draft, world) -> str:
    """Every message of what the item is about, normalised: its points' sessions, the sessions of its
    node's events, and every message in the period its queries name."""
    inside = {e.id for e in world.graph.events if e.id == draft.node or e.parent_id == draft.node}
    inside |= {e.id for e in world.graph.events if e.parent_id in inside}
    sessions = {world.session_of[m] for m in draft.evidence}
    sessions |= {e.session_id for e in world.graph.events if e.id in inside and e.session_id}
    periods = [(q.start, q.end) for q in draft.queries if q.start is not None and q.end is not None]
    return "\n".join(
        norm_text(m.content)
        for s in world.sessions
        for m in s.messages
        if s.id in sessions or any(lo <= m.timestamp.date() <= hi for lo, hi in periods)
    )


# ---------------------------------------------------------------- multiple choice
# Words of four letters or more that say nothing of a recap's content (a point "went with Kevin" shares
# "with" with "what did I do with ...?" and tells nothing)
_PLAIN_EN = frozenset(
    "with went about that this what when where which your have from they them then been were also into over "
    "give quick recap summarize everything happened".split()
)


def echoes(option: str, question: str) -> bool:
    """Whether an option repeats the question's own words: a word of four letters or more, or three Han
    characters in a row. Among points that do not, the one that does is picked without memory ("recap my
    iPad Air purchase": "bought the iPad Air" is right whatever happened)."""
    said = norm_text(option)
    asked = norm_text(question)
    if has_han(said):
        compact, whole = said.replace(" ", ""), asked.replace(" ", "")
        runs = (compact[i : i + 3] for i in range(len(compact) - 2))
        return any(has_han(run) and len(run.strip()) == 3 and run in whole for run in runs)
    words = {w for w in said.split() if len(w) >= 4 and w not in _PLAIN_EN}
    return bool(words & set(asked.split()))


def multiple_choice_options(draft: Draft) -> tuple[list[str], list[str]] | None:
    """The right and wrong options of `draft` asked as multiple choice: the points and the wrong options
    that do not echo the question (`echoes`). An option that names the question's subject is its outcome
    ("got the deck done", "the deck got shelved"): the world records what happened, so the right one is
    always the affirmative one and a reader picks it by its shape; neither is shown. None where fewer than
    two points or no wrong option remain: a "recap" of one point is a one-of-four pick (a price only one of
    which fits the thing bought). A point left out is still true; the item asks which of the shown ones
    are."""
    right = [p for p in draft.spec.items if not echoes(p, draft.question)]
    wrong = [w for w in draft.distractors if w not in draft.spec.items and not echoes(w, draft.question)]
    return (right, wrong) if len(right) >= 2 and wrong else None
