"""The QA stage: traverse each event graph bottom-up, then filter, select and add the questions.

Leaves contribute single-hop questions; every internal node samples up to
`sample_per_node` unused questions of its children and composes them, and adds
its own (episode recaps, month habits); the root adds persona-level ones.
Candidates are verified, checked for leaks and near-duplicates (rejections are
counted by reason), selected to the configured type mix and given a format;
`qa_stage` adds them to the dataset (qa.jsonl and its stats, when it is written).
"""

from __future__ import annotations

import math
import random
from collections import Counter, defaultdict
from dataclasses import dataclass, field
from datetime import date
from decimal import Decimal
from fractions import Fraction

from keme.config import QASpec, SynthConfig
from keme.dataset import Dataset
from keme.errors import KemeError
from keme.models import QA_TYPES, AnswerSpec, QAItem
from keme.qa import generate as gen
from keme.qa import options as opts
from keme.qa import phrasing
from keme.qa.draft import Draft
from keme.qa.facts import World, worlds_of
from keme.qa.haystack import FillerText, touches
from keme.qa.llm_roles import apply_llm_roles
from keme.qa.methods import hold_usual, thin_usual, usual_method
from keme.qa.options import Balancer, Values
from keme.qa.resolve import Ledger, completed, record_titles, shared_title, uniqueness
from keme.qa.second_right import prove_item
from keme.qa.twins import TRAP_TYPES, Wordings, hold_mix, place_traps
from keme.qa.verify import Verifier
from keme.qa.visual import visual_drafts
from keme.seeding import rng_for
from keme.stats import qa_stats
from keme.text import lang as fmt
from keme.text.normalize import norm_text
from keme.text.tokens import shingles
from keme.world.catalog import load_catalog

LETTERS = "ABCDEFGH"
MIN_MULTIPLE_CHOICE = 0.05  # the least share of a persona's items asked as multiple choice
SELECTABLE = (*QA_TYPES, "visual_reasoning")  # visual items exist only in omni datasets


@dataclass
class QAReport:
    candidates: int = 0
    rejected: Counter = field(default_factory=Counter)
    selected: Counter = field(default_factory=Counter)
    wanted: Counter = field(default_factory=Counter)  # per type: the items the mix asked of the selection
    short: Counter = field(default_factory=Counter)  # per type: how many of them no candidate was there for

    def as_dict(self) -> dict:
        found = {
            "candidates": self.candidates,
            "rejected_by_reason": dict(sorted(self.rejected.items())),
            "selected_by_type": dict(sorted(self.selected.items())),
        }
        if +self.short:  # a type the candidates could not fill: said, and its share given to the others
            found["short_of_mix"] = {
                kind: {"wanted": self.wanted[kind], "built": self.wanted[kind] - n}
                for kind, n in sorted((+self.short).items())
            }
        return found

    def add(self, part: QAReport) -> None:
        """Another persona's (or step's) counts added to these."""
        self.candidates += part.candidates
        for mine, theirs in (
            (self.rejected, part.rejected),
            (self.selected, part.selected),
            (self.wanted, part.wanted),
            (self.short, part.short),
        ):
            mine.update(theirs)


# ---------------------------------------------------------------- traversal
def candidates(world: World, spec: QASpec, seed: int) -> list[Draft]:
    """All candidate drafts of one persona, bottom-up over its event graph."""
    rng = rng_for(seed, world.persona.id, "qa")
    g = gen.Gen(world, phrasing.get(world.lang), rng, spec.mid_trajectory_share)
    children: dict[str | None, list] = defaultdict(list)
    for event in sorted(world.graph.events, key=lambda e: (e.start, e.id)):
        children[event.parent_id].append(event)
    drafts: list[Draft] = []
    atoms: list[Draft] = []
    used: set[int] = set()

    def sample_unused(pool: list[Draft]) -> list[Draft]:
        unused = [a for a in pool if id(a) not in used and a.fact is not None]
        return rng.sample(unused, min(spec.sample_per_node, len(unused)))

    def visit(event) -> list[Draft]:
        kids = children.get(event.id, [])
        if not kids:
            own = gen.leaf_drafts(g, event)
            atoms.extend(own)
            drafts.extend(own)
            return own
        pool = [a for kid in kids for a in visit(kid)]
        sample = sample_unused(pool)
        composed = gen.compose_pairs(g, event.id, sample, 2 if event.depth else 4)
        composed += gen.compose_single(g, event.id, sample, 2 if event.depth else 3)
        if event.depth == 1:
            sessions = [world.sessions_by_id[k.session_id] for k in kids if k.session_id]
            composed += gen.episode_drafts(g, event, sessions)
        elif event.depth == 0:
            composed += gen.chapter_drafts(g, event)
        for item in composed:
            used.update(id(s) for s in item.sub)
        drafts.extend(composed)
        return pool

    everything = [a for root in children.get(None, []) for a in visit(root)]
    root = f"{world.persona.id}-root"
    composed = gen.compose_pairs(g, root, sample_unused(everything), 4)
    composed += gen.compose_pairs(g, root, gen.landmarks(g, atoms), LANDMARK_ORDERS, orders=True)
    composed += gen.knowledge_updates(g, root)
    composed += gen.implicit_overall(g, root)
    composed += gen.quarter_totals(g, root)
    composed += gen.generalizations(g, root)
    composed += gen.relationships(g, root)
    composed += gen.abstentions(g, root)
    composed += gen.adversarials(g, root, atoms)
    composed += gen.life_changes(g, root)
    if world.images:
        composed += visual_drafts(g)
    drafts.extend(composed)
    return drafts


# ---------------------------------------------------------------- filters
def _jaccard(a: set[str], b: set[str]) -> float:
    return len(a & b) / max(1, len(a | b))


def _answer_key(draft: Draft) -> str:
    spec = draft.spec
    return norm_text(spec.value or "|".join(spec.items))


def filter_drafts(drafts: list[Draft], world: World, report: QAReport) -> list[Draft]:
    """Verified, leak-free, distinct drafts (first one wins among duplicates)."""
    verifier = Verifier(world)
    ledger = Ledger.of(world)
    titles = record_titles(world.claims)
    filler = FillerText(world) if any(s.filler for s in world.sessions) else None
    kept: list[Draft] = []
    seen_exact: set[tuple[str, str, str]] = set()
    seen_meaning: set[tuple] = set()
    golds: dict[str, str] = {}
    buckets: dict[tuple[str, str], list[tuple[set[str], set[str]]]] = defaultdict(list)
    for draft in drafts:
        item = draft.to_item("check", world, [])
        problems = verifier.check(item)
        if problems:
            report.rejected[problems[0].reason] += 1
            continue
        if uniqueness(item, ledger) is not None or shared_title(item.question, item.asked_at, titles):
            report.rejected[f"not_unique.{draft.type}"] += 1
            continue
        if filler is not None and touches(item, filler) is not None:
            report.rejected["named_in_filler"] += 1  # the haystack would answer or blur it
            continue
        exact = (draft.type, _answer_key(draft), norm_text(draft.question))
        # one question asked in two wordings: from two sessions, the same facts and days ("Who went with
        # me to Miami?" / "Who did I travel to Miami with?"); or from the same messages, the options the
        # other way round
        answer = norm_text(draft.spec.option_value or "") or _answer_key(draft)
        quotes = draft.proof.quotes
        args = draft.proof.args.model_dump_json()
        # (a trap's group asks two questions of one made-up name, by construction not one in two wordings)
        own = (draft.question,) if draft.group else ()
        meaning = (
            (draft.subtype, answer, frozenset(q.text for q in quotes), frozenset(q.on for q in quotes), args)
            + own,
            (draft.subtype, answer, frozenset(q.message_id for q in quotes), args) + own,
        )
        if exact in seen_exact or any(m in seen_meaning for m in meaning):
            report.rejected["duplicate"] += 1
            continue
        said = golds.setdefault(norm_text(draft.question), _answer_key(draft))
        if said != _answer_key(draft):  # one question text, one gold: a reader cannot tell them apart
            report.rejected[f"same_text_other_gold.{draft.type}"] += 1
            continue
        tokens, evidence = shingles(draft.question), set(draft.evidence)
        bucket = buckets[(draft.type, _answer_key(draft))]
        if any(
            _jaccard(tokens, t) >= 0.8 and (_jaccard(evidence, e) >= 0.5 or not (evidence or e))
            for t, e in bucket
        ):
            report.rejected["near_duplicate"] += 1
            continue
        seen_exact.add(exact)
        seen_meaning.update(meaning)
        bucket.append((tokens, evidence))
        kept.append(draft)
    return kept


# ---------------------------------------------------------------- selection
LANDMARK_ORDERS = 6  # "which came first, my trip or my flu?" questions composed at a persona's root
MIN_SHARE = 0.04  # every type the config asks for is at least this share of a persona's items
MIX_MARGIN = 0.015  # each type within this of its share (issue 37: 2 points), fewer items if need be ...
MIN_KEPT = 0.8  # ... but not fewer than this share of the target
# at most this many items of a subtype per persona: "what time of day did I usually chat in May?" asked of
# every month of a year is one question with one answer (her habit) asked ten times
# and "how long ago did I ...?" is a count of days few people ask for more than now and then (a trap asked in
# its wording brings in a few more as its answerable twins, keme.qa.twins)
SUBTYPE_CAP = {
    "imp.time_of_day.month": 4,
    "imp.time_of_day.quarter": 2,
    "tmp.days_ago": 3,
    "tmp.days_ago_first": 1,
    "tmp.purchase_span": 3,  # "how long did I go back and forth on X?" of every purchase reads as a drill
    "rel.gift_for": 4,  # "who was the scarf for?" of every gift of the year, likewise
}


def weights(spec: QASpec) -> dict[str, float]:
    """The share of each type the selection aims at: the config's mix, a type it asks for raised to
    MIN_SHARE, summing to 1 (a weight of 2-4 % is then within 2 points of what the config says)."""
    raised = {k: max(w, MIN_SHARE) for k, w in spec.mix.items() if w > 0}
    total = sum(raised.values())
    return {k: w / total for k, w in raised.items()}


def quotas(shares: dict[str, float], available: dict[str, int], target: int) -> dict[str, int]:
    """How many items of each type make `target`: each type its share, rounded so the counts sum to the
    target (largest remainders, a tie to the larger share); a type with fewer candidates than its share
    gets all it has, and what it cannot fill goes to the others in proportion to their shares (nothing is
    made up to fill it)."""
    return allot(shares, available, target)[0]


def allot(
    shares: dict[str, float], available: dict[str, int], target: int
) -> tuple[dict[str, int], dict[str, int]]:
    """`quotas`, and for each type that ran out of candidates the count its share asked of it when it did
    (after what the types short before it left to the others): what the build report calls wanted.
    Exact fractions (the config's decimal shares recovered from their floats): a float sum over the types
    depends on their order, and a share that asks for exactly what is available would be short in one
    process and not in another."""
    share = {k: Fraction(w).limit_denominator(10**6) for k, w in shares.items() if w > 0}  # 0.18 -> 9/50
    fixed: dict[str, int] = {}
    asked: dict[str, int] = {}
    open_ = sorted(share)
    while open_:
        room = target - sum(fixed.values())
        weight = sum(share[k] for k in open_)
        short = [k for k in open_ if available.get(k, 0) < room * share[k] / weight]
        if not short:
            break
        for kind in short:
            fixed[kind] = available.get(kind, 0)
            asked[kind] = round(room * share[kind] / weight)
        open_ = [k for k in open_ if k not in short]
    room = max(0, target - sum(fixed.values()))
    weight = sum(share[k] for k in open_) or Fraction(1)
    exact = {k: room * share[k] / weight for k in open_}
    counts = {k: math.floor(v) for k, v in exact.items()}
    by_remainder = sorted(open_, key=lambda k: (counts[k] - exact[k], -share[k], k))
    for kind in by_remainder[: room - sum(counts.values())]:
        counts[kind] += 1
    return fixed | {k: min(n, available.get(k, 0)) for k, n in counts.items()}, asked


def _families_first(names: list[str]) -> list[str]:
    """Subtypes in turn by family (a screen's fact, "visual.count.*", "visual.sum.*"), keeping their order
    within one: a screenshot's many fact fields ("visual.music.artist", "visual.order.delivery", ...) would
    otherwise leave no room for a count or a sum."""
    families: dict[str, list[str]] = defaultdict(list)
    for name in names:
        family = name.split(".")[1] if name.count(".") >= 2 else ""
        families[family if family in ("count", "sum") else "fact"].append(name)
    rounds = [list(group) for group in families.values()]
    out: list[str] = []
    while any(rounds):
        for group in rounds:
            if group:
                out.append(group.pop(0))
    return out


def select(
    drafts: list[Draft],
    target: int,
    spec: QASpec,
    rng: random.Random,
    report: QAReport | None = None,
    lang: str = "en",
    usual: tuple[str, int] | None = None,
) -> list[Draft]:
    """Pick `target` drafts to the type mix (`quotas`), subtypes interleaved. Single-hop items are
    picked last, the building blocks of the composed items chosen first (most referenced first), so a
    multi-hop item ships with its sub-questions where the single-hop share has room for them; the
    type counts stay the mix's either way. Traps come last, each in a wording its answerable twins
    outnumber (keme.qa.twins). Where a type cannot fill its share, the others take it only within the
    mix's margin: the selection shrinks instead (`hold_mix`, to MIN_KEPT of the target at least). A type
    that cannot fill its share is counted in `report`. `usual` (her usual payment method, how many she uses)
    holds the bill.method items to one in that many answered by it (keme.qa.methods)."""
    by_type: dict[str, dict[str, list[Draft]]] = defaultdict(lambda: defaultdict(list))
    for draft in drafts:
        by_type[draft.type][draft.subtype].append(draft)
    for subtypes in by_type.values():
        for name, items in subtypes.items():
            rng.shuffle(items)
            # taken from the end: an item that can be asked as multiple choice first (MIN_MULTIPLE_CHOICE
            # of a persona's items, where a subtype has such items to give)
            items.sort(key=multiple_choice_ready)
            # a habit asked of every month answers itself after the first few (SUBTYPE_CAP)
            del items[: max(0, len(items) - SUBTYPE_CAP.get(name, len(items)))]
    shares = weights(spec)
    available = {k: sum(len(v) for v in by_type.get(k, {}).values()) for k in SELECTABLE}
    counts, asked = allot(shares, available, target)

    def take(kind: str, count: int, chosen: dict[int, Draft]) -> None:
        subtypes = by_type.get(kind, {})
        names = sorted(subtypes)
        rng.shuffle(names)
        if kind == "visual_reasoning":
            names = _families_first(names)
        picked = 0
        while picked < count and any(subtypes[n] for n in names):
            for name in names:
                if picked >= count:
                    break
                while subtypes[name]:
                    candidate = subtypes[name].pop()
                    if id(candidate) not in chosen:
                        chosen[id(candidate)] = candidate
                        picked += 1
                        break

    chosen: dict[int, Draft] = {}
    for kind in SELECTABLE:
        if kind != "single_hop" and kind not in TRAP_TYPES:
            take(kind, counts.get(kind, 0), chosen)
    eligible = {id(x) for x in drafts}  # a rejected building block is not shipped, only referenced when valid
    blocks = Counter(id(sub) for x in chosen.values() for sub in x.sub if id(sub) in eligible)
    singles = counts.get("single_hop", 0)
    by_id = {id(sub): sub for x in chosen.values() for sub in x.sub}
    for key, _ in sorted(blocks.items(), key=lambda kv: -kv[1]):
        if singles <= 0:
            break
        if by_id[key].type == "single_hop" and key not in chosen:
            chosen[key] = by_id[key]
            singles -= 1
    take("single_hop", singles, chosen)
    traps = {kind: by_type.get(kind, {}) for kind in TRAP_TYPES}
    book = Wordings(chosen, drafts, lang, rng)
    unplaced = place_traps(book, traps, counts)
    floor = math.ceil(target * MIN_KEPT)
    held = hold_mix(book, shares, floor, MIX_MARGIN, keep=multiple_choice_ready)
    if usual is not None:
        hold_usual(book, drafts, usual, rng)
    if report is not None:
        report.rejected["held_to_mix"] += held
        for kind, n in unplaced.items():
            report.rejected[f"no_answerable_twin.{kind}"] += n
        got = Counter(x.type for x in chosen.values())
        for kind in shares:  # what the mix asks of the selection as it was kept
            wanted = round(shares[kind] * len(chosen)) if held else asked.get(kind, counts.get(kind, 0))
            report.wanted[kind] += wanted
            report.short[kind] += max(0, wanted - got[kind])
    return list(chosen.values())


# ---------------------------------------------------------------- formats
def _display(spec: AnswerSpec, value: str, lang: str) -> str:
    if spec.kind == "number" and spec.unit in ("USD", "CNY"):
        return fmt.format_money(Decimal(value), lang)
    if spec.kind == "date":
        return fmt.format_date(date.fromisoformat(value), lang)
    return value


def _distractors(draft: Draft, values: Values | None, rng: random.Random, balance: Balancer) -> list[str]:
    if draft.spec.kind == "number" and draft.spec.unit in ("USD", "CNY"):
        return opts.money_distractors(draft, values, rng, balance)
    if draft.spec.kind == "number":
        return opts.int_distractors(draft, values, rng, balance)
    if draft.spec.kind == "date":
        return opts.date_distractors(draft, values, rng, balance)
    return opts.entity_distractors(draft, values, rng, balance)


Trial = tuple[list[str], tuple[str, int, int] | None]  # an option list (gold last), the rank it took


def _by_rank(balance: Balancer, ranks: range, make) -> list[Trial]:
    """The option lists `make()` gives with the gold's rank forced to each of `ranks` (where
    feasible), each with the rank it took; ranks are not counted until one list is kept."""
    trials: dict[tuple[str, ...], tuple[str, int, int] | None] = {}
    balance.probing = True
    try:
        for forced in ranks:
            balance.forced = forced
            options = make()
            if options:
                trials.setdefault(tuple(options), balance.last)
    finally:
        balance.forced, balance.probing = None, False
    return [(list(options), rank) for options, rank in trials.items()]


def _option_lists(
    draft: Draft, values: Values | None, rng: random.Random, balance: Balancer, lang: str
) -> list[Trial]:
    """Trial option lists for an item made a choice item, one per rank of the gold among them (by
    value, or by length for names)."""
    right = (
        draft.answer if draft.spec.kind == "entity" else _display(draft.spec, draft.spec.value or "", lang)
    )

    def make() -> list[str] | None:
        wrong = _distractors(draft, values, random.Random(rng.random()), balance)
        shown = [w for w in dict.fromkeys(_display(draft.spec, w, lang) for w in wrong) if w != right]
        return [*shown[:3], right] if len(shown) >= 2 else None

    return _by_rank(balance, range(4), make)


def _alternative_lists(draft: Draft, rng: random.Random, balance: Balancer) -> list[Trial]:
    """Trial option lists for a choice item the generator made with a pool of alternatives (a
    preference's other plausible values), one per rank of the gold by length."""
    gold = draft.options[LETTERS.index(draft.spec.value or "A")]
    pool = [a for a in dict.fromkeys(draft.distractors) if a != gold]
    k = len(draft.options) - 1
    if len(pool) <= k or draft.proof.op == "order":  # an order proof's quotes follow its options
        return []

    def make() -> list[str]:
        keyed = [(len(a), a) for a in pool]
        chosen, _, _ = opts.pick_by_rank(
            len(gold), keyed, k, balance, "length-rank", random.Random(rng.random())
        )
        return [*chosen, gold]

    return _by_rank(balance, range(k + 1), make)


def _fair(trials: list[Trial], balance: Balancer) -> list[Trial]:
    """The trial lists whose gold is not strictly the longest option, once "pick the longest" is ahead of
    chance over the dataset so far (the balancer's orders can pay back position and median, not length:
    a list decides that alone); all of them while it is not."""
    if balance.owed["longest"] >= 0:
        return trials
    return [t for t in trials if not _longer_than_all(t[0][-1], t[0][:-1])]


def _with_rivals(trials: list[Trial], draft: Draft) -> list[Trial]:
    """Each trial list with its shortest wrong option swapped for an alternative at least as long as the
    gold, where the draft's pool has one (a length tie is neither side of a length rank, so the rank draw
    leaves it out)."""
    gold = trials[0][0][-1] if trials else ""
    out = []
    for options, rank in trials:
        rivals = [a for a in draft.distractors if a != gold and a not in options and len(a) >= len(gold)]
        if rivals:
            shortest = min(range(len(options) - 1), key=lambda i: (len(options[i]), i))
            out.append(([*options[:shortest], rivals[0], *options[shortest + 1 :]], rank))
    return out


def _best_list(draft: Draft, trials: list[Trial], balance: Balancer) -> list[str]:
    """The trial list (gold last) whose best order pays the blind heuristics most of what they are
    owed, then the one whose rank was used least; its rank is counted."""
    year = draft.asked_at.year

    def merit(trial: Trial) -> tuple[float, int]:
        options, rank = trial
        target = balance.peek("position", len(options))
        paid = opts.placement_score(options, options[-1], target, year, balance.owed)
        return (round(paid, 9), -(balance.use(*rank) if rank else 0))

    options, rank = max(trials, key=merit)
    balance.commit(rank)
    return options


def apply_formats(
    drafts: list[Draft],
    spec: QASpec,
    rng: random.Random,
    lang: str,
    values: Values | None = None,
    balance: Balancer | None = None,
) -> None:
    """Turn a share of open items into single- or multiple-choice items whose distractors are the
    persona's own values of the same kind (keme.qa.options), and put every single-choice gold at a
    balanced letter. Of the option lists each rank of the gold gives, the one kept is the one that
    brings the blind heuristics closest to chance over the dataset so far (`balance` carries that
    over every persona)."""
    balance = balance or Balancer(rng)
    # letters are balanced within each persona (counts differ by at most one), so the letter other
    # personas favour tells nothing; ranks and the heuristics' hits carry over the whole dataset
    balance.cycles.clear()
    multiple = multiple_choice_picks(drafts, spec, rng)
    for draft in drafts:
        if opts.is_single_choice(draft):  # options made by the generator (preferences, order)
            trials = _alternative_lists(draft, rng, balance)
            trials = _fair(trials, balance) or _fair(_with_rivals(trials, draft), balance) or trials
            if trials:
                draft.options = _best_list(draft, trials, balance)
                letter = LETTERS[len(draft.options) - 1]
                draft.spec = draft.spec.model_copy(update={"value": letter})
            opts.place_gold(draft, balance, rng)
            continue
        if draft.format != "open" or draft.type in ("abstention", "adversarial"):
            continue  # options would argue with a false premise the question states
        if id(draft) in multiple:
            draft.open_form = (draft.spec, draft.answer, list(draft.options), draft.format)
            chosen = opts.multiple_choice_options(draft)
            assert chosen is not None  # multiple_choice_picks takes only the items that have them
            right, wrong = chosen
            options = right + wrong[: min(3, len(LETTERS) - len(right))]
            rng.shuffle(options)
            draft.options = options
            draft.format = "multiple_choice"
            draft.spec = AnswerSpec(kind="set", items=right)
            continue
        draft.open_form = (draft.spec, draft.answer, list(draft.options), draft.format)
        kind = draft.spec.kind
        if kind in ("entity", "number", "date") and rng.random() < spec.single_choice_share:
            trials = _fair(_option_lists(draft, values, rng, balance, lang), balance)
            if not trials:
                continue  # asked open: every list would hand "pick the longest" one more hit it is ahead by
            options = _best_list(draft, trials, balance)
            right = options[-1]
            draft.options = options
            draft.format = "single_choice"
            draft.spec = AnswerSpec(
                kind="choice", value=LETTERS[len(options) - 1], aliases=[right], option_value=draft.spec.value
            )
            draft.answer = f"{LETTERS[len(options) - 1]}. {right}"
            opts.place_gold(draft, balance, rng)


def multiple_choice_ready(draft: Draft) -> bool:
    """An open item whose answer is an unordered set of points (a recap, what a note said): it can be
    asked as "which of these ...? (all that apply)"; 2-7 points leave room for a wrong option in 8."""
    spec = draft.spec
    return (
        draft.format == "open"
        and draft.type not in ("abstention", "adversarial")
        and spec.kind in ("set", "free")
        and 2 <= len(spec.items) <= len(LETTERS) - 1
        and not spec.ordered
    )


def multiple_choice_picks(drafts: list[Draft], spec: QASpec, rng: random.Random) -> set[int]:
    """The drafts made multiple choice: `multiple_choice_share` of the set items that keep two points and a
    wrong option that do not echo the question (opts.multiple_choice_options), and never fewer than
    MIN_MULTIPLE_CHOICE of all the persona's items while such set items last (a format a benchmark reports
    on needs items enough to report)."""
    ready = [d for d in drafts if multiple_choice_ready(d) and opts.multiple_choice_options(d) is not None]
    wanted = max(round(spec.multiple_choice_share * len(ready)), math.ceil(MIN_MULTIPLE_CHOICE * len(drafts)))
    return {id(d) for d in rng.sample(ready, min(wanted, len(ready)))}


# ---------------------------------------------------------------- the stage
# A persona's items are made in three steps: `picked_drafts` and `final_items` depend on the persona alone
# (keme.qa.workers runs them as Ray tasks), `apply_formats` in between carries the Balancer over the
# personas in order.
def picked_drafts(
    world: World, spec: QASpec, seed: int, report: QAReport
) -> tuple[list[Draft], random.Random]:
    """The persona's candidates, filtered and selected to the type mix, and the rng that goes on to format
    them."""
    months = max(1.0, (world.persona.end - world.persona.start).days / 30.4)
    target = round(spec.per_month * months)
    drafts = candidates(world, spec, seed)
    report.candidates += len(drafts)
    kept = one_longest_per_subtype(filter_drafts(drafts, world, report), report)
    rng = rng_for(seed, world.persona.id, "qa", "select")
    usual = usual_method(a.record.payment_method for a in world.anchors.values() if a.app == "bill")
    thinned = thin_usual(kept, usual, rng)
    report.rejected["usual_method"] += len(kept) - len(thinned)
    chosen = select(thinned, target, spec, rng, report, world.lang, usual)
    for draft in chosen:
        if multiple_choice_ready(draft) and not draft.distractors:
            draft.distractors = opts.point_distractors(draft, world)
            rng.shuffle(draft.distractors)
    return chosen, rng


def one_longest_per_subtype(drafts: list[Draft], report: QAReport) -> list[Draft]:
    """A choice the generator made whose gold is longer than every alternative it could be shown with is
    decided by "pick the longest" whatever the balancer does (a persona's 骑共享单车 among 步行, 打车 and
    坐地铁, asked four times, was the longest option 4 times in 4): one such item per subtype is asked."""
    seen: set[str] = set()
    kept: list[Draft] = []
    for draft in drafts:
        if opts.is_single_choice(draft) and _longest_whatever(draft):
            if draft.subtype in seen:
                report.rejected["longest_whatever_shown"] += 1
                continue
            seen.add(draft.subtype)
        kept.append(draft)
    return kept


def _longest_whatever(draft: Draft) -> bool:
    gold = draft.options[LETTERS.index(draft.spec.value or "A")]
    return _longer_than_all(gold, [a for a in dict.fromkeys(draft.options + draft.distractors) if a != gold])


def _longer_than_all(gold: str, others: list[str]) -> bool:
    """Whether "pick the longest option" picks `gold` out of it and `others` (none: it decides nothing)."""
    return bool(others) and len(gold) > max(len(o) for o in others)


def final_items(chosen: list[Draft], world: World, report: QAReport) -> list[QAItem]:
    """The formatted drafts as numbered, verified items with the claims they rest on."""
    chosen.sort(key=lambda x: (SELECTABLE.index(x.type), x.subtype, x.asked_at, x.question))
    ids = {id(x): f"{world.persona.id}-q{n:04d}" for n, x in enumerate(chosen, start=1)}
    verifier = Verifier(world)
    ledger = Ledger.of(world)
    catalog = load_catalog(world.lang)
    final = []
    for draft in chosen:
        item = draft.to_item(ids[id(draft)], world, [ids[id(s)] for s in draft.sub if id(s) in ids])
        if verifier.check(item) and draft.open_form is not None:
            # a choice format can go wrong (an option that gives the answer away): keep the open form
            draft.spec, draft.answer, draft.options, draft.format = draft.open_form
            report.rejected["format_reverted"] += 1
            item = draft.to_item(ids[id(draft)], world, [ids[id(s)] for s in draft.sub if id(s) in ids])
        proof = prove_item(item, world.persona, catalog)
        if proof is not None and not proof.ok:  # a second right option: the item is not asked
            report.rejected["second_right"] += 1
            continue
        final.append(completed(item, ledger))
        report.selected[item.type] += 1
    return final


def build_items(
    world: World, spec: QASpec, seed: int, report: QAReport, balance: Balancer | None = None
) -> list[QAItem]:
    chosen, rng = picked_drafts(world, spec, seed, report)
    apply_formats(chosen, spec, rng, world.lang, Values.of(world), balance)
    return final_items(chosen, world, report)


def spec_for(world: World, cfg: SynthConfig) -> QASpec:
    """The QA settings of a persona: an omni persona's mix gives the visual share to visual items and the
    rest to the text types in the config's proportions (so the whole mix still sums to 1)."""
    if world.images:  # model_copy: the visual share lives in the omni section, not in the text mix
        visual = cfg.omni.visual_share  # of all the items: the text types share the rest by their mix
        mix = {k: w * (1 - visual) for k, w in cfg.qa.mix.items()} | {"visual_reasoning": visual}
        return cfg.qa.model_copy(update={"mix": mix})
    return cfg.qa


def balancer(cfg: SynthConfig) -> Balancer:
    """Letters, ranks and the blind heuristics' hits are balanced over the dataset, not per persona."""
    return Balancer(rng_for(cfg.seed, "qa", "balance"))


def llm_pass(
    own: list[QAItem], world: World, brain, cfg: SynthConfig, report: QAReport, before: list[QAItem]
) -> list[QAItem]:
    """With the LLM brain, a persona's questions reworded and second-checked by the model (`before`: the
    items of the personas before it)."""
    if brain is not None and getattr(brain, "client", None) is not None and cfg.brain.mode == "llm":
        own, dropped = apply_llm_roles(own, world, brain, cfg)
        if dropped:
            report.rejected["llm_verifier"] += dropped
            report.selected = Counter(i.type for i in before + own)
    return own


def synthesize_qa(worlds: list[World], cfg: SynthConfig, brain=None) -> tuple[list[QAItem], QAReport]:
    """All personas' items; with the LLM brain, questions are reworded and second-checked by the model."""
    report = QAReport()
    items: list[QAItem] = []
    balance = balancer(cfg)
    for world in worlds:
        own = build_items(world, spec_for(world, cfg), cfg.seed, report, balance)
        items += llm_pass(own, world, brain, cfg, report, items)
    return items, report


def qa_config(dataset: Dataset) -> SynthConfig:
    """The synthesis config QA is built with (`keme qa`): the one the dataset's manifest records."""
    if dataset.manifest.config is None:
        raise KemeError(
            f"{dataset.root}: the manifest has no synthesis config; QA synthesis needs one "
            "(imported datasets bring their own QA)"
        )
    return SynthConfig.model_validate(dataset.manifest.config)


def qa_stage(dataset: Dataset, cfg: SynthConfig, brain=None) -> QAReport:
    """The QA stage: every persona's questions from its view, added to the dataset with their stats (in
    memory)."""
    worlds = worlds_of(dataset)
    items, report = synthesize_qa(worlds, cfg, brain)
    add_qa(dataset, worlds, items, report)
    return report


def add_qa(dataset: Dataset, worlds: list[World], items: list[QAItem], report: QAReport) -> None:
    """The items into the dataset, with their stats and the stage's report in the manifest."""
    dataset.qa = items
    manifest = dataset.manifest
    manifest.stats = {k: v for k, v in manifest.stats.items() if not k.startswith("qa")} | qa_stats(
        items, {w.persona.id: w for w in worlds}
    )
    manifest.stages["qa"] = report.as_dict()
