"""Blind baselines: what a guesser with no memory gets from the shape of the questions alone.

Each strategy answers from the item's text and options only (and, for `position`, from which letter
golds take most often in the other personas' items: any position bias a guesser could learn).
On single-choice items a benchmark without structural tells keeps every strategy at chance; the
abstain strategies show what always / never declining would score. Pure functions over QAItems, so
`keme validate` prints them and eval wraps them as the `no_memory` system.

The shape strategies (`SHAPE_STRATEGIES`) ask what a lazy reader of the questions alone gets on the one
decision the traps hinge on: is this item unanswerable (abstention) or built on a false premise
(adversarial), or an ordinary question? Each reads one shape -- an amount's ratio to another amount
the persona's questions name, how often a named entity recurs over the dataset's questions, the answer
class its template mostly has, a merchant asked about on dates a few days apart -- and is scored against
the chance agreement of its own predictions with the labels (as if the predictions were shuffled), so a
shape that tells nothing sits at chance however often it fires.
"""

from __future__ import annotations

import functools
import math
import re
from collections import Counter, defaultdict
from collections.abc import Callable
from dataclasses import dataclass, field
from decimal import Decimal
from statistics import median

from keme.models import QAItem
from keme.qa import phrasing
from keme.text import resources
from keme.text.dates import dates_in
from keme.text.normalize import numbers_in, parse_money

LETTERS = "ABCDEFGH"
CHOICE_STRATEGIES = ("position", "median", "longest", "multiples")
CONTENT_STRATEGIES = ("median", "longest", "multiples")  # read the options, not the letters
ABSTAIN_STRATEGIES = ("always_abstain", "never_abstain")
STRATEGIES = CHOICE_STRATEGIES + ABSTAIN_STRATEGIES
# read the question's shape to call an item a trap (abstention or false premise); see `shape_scores`
SHAPE_STRATEGIES = ("ratio", "name_frequency", "template_prior", "near_date")
# answer "how did I pay the $X at Y on DATE?" with the method her bills use most; see `usual_method_score`
HABIT_STRATEGIES = ("usual_method",)
METHOD_SUBTYPE = "bill.method"
# a committed answer that names nothing (never_abstain on open items)
NON_ANSWER = {"en": "It was the usual one.", "zh": "就是平常那个。"}


@dataclass(frozen=True)
class BlindStats:
    """What a guesser may learn about gold positions: the most frequent gold letter per option count,
    over the whole dataset and, per persona, over the other personas' items.

    A persona's items are guessed from the others' letters (cross-fitted, as a guesser learns a bias
    from training data): the most frequent letter of the very items it is scored on is always ahead
    of chance by the rounding of their counts (13 items over 4 letters: one letter has 4, 31 %)."""

    top_letter: dict[int, str] = field(default_factory=dict)
    held_out: dict[str, dict[int, str]] = field(default_factory=dict)

    def letter(self, persona_id: str, n: int) -> str:
        return self.held_out.get(persona_id, self.top_letter).get(n, "A")


def is_choice(item: QAItem) -> bool:
    return item.format == "single_choice" and item.spec.kind == "choice" and len(item.options) >= 2


def position_histogram(items: list[QAItem]) -> dict[int, dict[str, int]]:
    """Gold letters of single-choice items, per number of options (every letter listed, zeros too)."""
    counts: dict[int, Counter] = defaultdict(Counter)
    for item in items:
        if is_choice(item):
            counts[len(item.options)][item.spec.value or ""] += 1
    return {n: {LETTERS[i]: counts[n][LETTERS[i]] for i in range(n)} for n in sorted(counts)}


def chi2_sf(statistic: float, df: int) -> float:
    """P(χ²_df >= statistic), exactly as a finite sum: the upper regularised gamma Q(df/2, x/2) at a whole
    or half-whole order has a closed form. Here so that `keme validate` (a core command) needs no scipy
    for its one p-value."""
    y = statistic / 2
    if y <= 0:
        return 1.0
    if df % 2 == 0:  # Q(m, y) = e^-y * sum_{i<m} y^i / i!
        terms = (math.exp(i * math.log(y) - y - math.lgamma(i + 1)) for i in range(df // 2))
        return min(1.0, math.fsum(terms))
    # Q(m + 1/2, y) = erfc(sqrt y) + e^-y * sum_{i<m} y^(i+1/2) / Gamma(i + 3/2)
    terms = (math.exp((i + 0.5) * math.log(y) - y - math.lgamma(i + 1.5)) for i in range(df // 2))
    return min(1.0, math.erfc(math.sqrt(y)) + math.fsum(terms))


def uniform_fit_p(observed: list[int]) -> float:
    """Pearson's χ² goodness-of-fit p of counts against a uniform distribution (scipy's `chisquare`)."""
    expected = sum(observed) / len(observed)
    statistic = sum((count - expected) ** 2 for count in observed) / expected
    return chi2_sf(statistic, len(observed) - 1)


def position_p(items: list[QAItem]) -> dict[int, float]:
    """χ² goodness-of-fit p of the gold letters against uniform, per option count (1.0 for < 2 items)."""
    result = {}
    for n, histogram in position_histogram(items).items():
        observed = list(histogram.values())
        result[n] = 1.0 if sum(observed) < 2 else uniform_fit_p(observed)
    return result


def _top_letters(items: list[QAItem]) -> dict[int, str]:
    top = {}
    for n, histogram in position_histogram(items).items():
        best = max(histogram.values())
        top[n] = next(letter for letter, count in histogram.items() if count == best)
    return top


def blind_stats(items: list[QAItem]) -> BlindStats:
    """Top letters over all items, and per persona over the others' (with one persona, its own)."""
    personas = sorted({i.persona_id for i in items})
    held_out = {}
    if len(personas) > 1:
        held_out = {p: _top_letters([i for i in items if i.persona_id != p]) for p in personas}
    return BlindStats(_top_letters(items), held_out)


# ---------------------------------------------------------------- reading options
def _bare(text: str) -> bool:
    """Little more than a number ('$21.49', '12', '¥80', '3 days'), not a name with one ('iPhone 15')."""
    return len(re.sub(r"[\d.,\s$¥]", "", text)) <= 4


def option_values(options: list[str], year: int) -> list[float] | None:
    """The options as numbers when every one is a date, an amount or a bare number, else None."""
    days = [dates_in(o, year) for o in options]
    if all(days) and all(len(o) <= 24 for o in options):
        return [float(d[0].toordinal()) for d in days]
    if not all(_bare(o) for o in options):
        return None
    amounts = [parse_money(o) for o in options]
    if all(a is not None for a in amounts):
        return [float(a) for a in amounts]  # type: ignore[arg-type]
    numbers = [numbers_in(o) for o in options]
    if all(len(n) == 1 for n in numbers):
        return [float(n[0]) for n in numbers]
    return None


def simple_ratio(a: Decimal, b: Decimal) -> bool:
    """a/b is p/q for small p, q (1..5): the tell of distractors made as 0.5x, 0.75x, 2x the gold."""
    if a <= 0 or b <= 0:
        return False
    ratio = a / b
    return any(
        abs(ratio - Decimal(p) / Decimal(q)) <= ratio * Decimal("0.005")
        for p in range(1, 6)
        for q in range(1, 6)
        if p != q
    )


def _argmin(scores: list[float]) -> int:
    return min(range(len(scores)), key=lambda i: (scores[i], i))


def nearest_median(values: list[float]) -> int:
    """The option nearest the median of the other options (the gold of distractors made around it);
    of four options the two middle ones tie, and the earlier letter wins."""
    return _argmin([abs(v - median(values[:i] + values[i + 1 :])) for i, v in enumerate(values)])


def multiples_of(values: list[float]) -> int | None:
    """The option most others are simple multiples of (0.5x, 0.75x, 2x...), None if no option is."""
    scores = [
        sum(1 for j, w in enumerate(values) if j != i and simple_ratio(Decimal(str(w)), Decimal(str(v))))
        for i, v in enumerate(values)
    ]
    best = max(scores)
    return None if best == 0 else scores.index(best)


def choose(item: QAItem, strategy: str, stats: BlindStats) -> int | None:
    """The option index a choice strategy picks, None where it does not apply."""
    if strategy == "position":
        return LETTERS.index(stats.letter(item.persona_id, len(item.options)))
    return choose_option(item.options, strategy, item.asked_at.year, stats)


def choose_option(options: list[str], strategy: str, year: int, stats: BlindStats) -> int | None:
    """`choose` over a bare option list (dates are read in `year`); ties go to the earlier letter."""
    if strategy == "position":
        return LETTERS.index(stats.top_letter.get(len(options), "A"))
    if strategy == "longest":
        return _argmin([-len(o) for o in options])
    values = option_values(options, year)
    if strategy == "median":
        return nearest_median(values if values is not None else [float(len(o)) for o in options])
    if strategy == "multiples":  # amounts only: small counts are all simple multiples of one another
        if values is None or any(parse_money(o) is None for o in options):
            return None
        return multiples_of(values)
    raise ValueError(f"unknown blind strategy {strategy!r}; expected one of {STRATEGIES}")


# ---------------------------------------------------------------- answers and scores
def blind_answer(item: QAItem, strategy: str, stats: BlindStats) -> str:
    """The answer string a strategy gives (what the rule judge scores): "B. $21.49", the abstain
    phrase, or a committed non-answer. A choice strategy that does not apply picks the first option."""
    lang = item.language if item.language in NON_ANSWER else "en"
    if strategy == "always_abstain":
        return phrasing.get(lang).answer("abstain")
    if not is_choice(item):
        return NON_ANSWER[lang]
    if strategy == "never_abstain":
        strategy = "position"
    index = choose(item, strategy, stats)
    index = 0 if index is None else index
    return f"{LETTERS[index]}. {item.options[index]}"


def blind_scores(items: list[QAItem], bills: dict[str, Counter] | None = None) -> dict[str, dict]:
    """Per strategy: accuracy, chance level and n. Choice strategies are scored on the single-choice
    items they apply to (chance = mean of 1/options); the abstain strategies on every item (an open
    item counts as wrong for never_abstain; chance is the share of abstention items for always_abstain and
    a random letter on the choice items for never_abstain)."""
    stats = blind_stats(items)
    choice = [i for i in items if is_choice(i)]
    scores: dict[str, dict] = {}
    for strategy in CHOICE_STRATEGIES:
        picks = [(i, choose(i, strategy, stats)) for i in choice]
        applied = [(i, k) for i, k in picks if k is not None]
        correct = sum(1 for i, k in applied if LETTERS[k] == i.spec.value)
        scores[strategy] = _score(correct, len(applied), [1 / len(i.options) for i, _ in applied])
    abstaining = sum(1 for i in items if i.spec.kind == "abstain")
    share = [abstaining / len(items)] * len(items) if items else []
    scores["always_abstain"] = _score(abstaining, len(items), share)
    right = sum(1 for i in choice if LETTERS[choose(i, "position", stats) or 0] == i.spec.value)
    guess = [sum(1 / len(i.options) for i in choice) / len(items)] * len(items) if items else []
    scores["never_abstain"] = _score(right, len(items), guess)
    scores.update(shape_scores(items))
    if bills is not None:
        scores["usual_method"] = usual_method_score(items, bills)
    return scores


def _score(correct: int, n: int, chances: list[float]) -> dict:
    return {
        "accuracy": round(correct / n, 4) if n else 0.0,
        "chance": round(sum(chances) / len(chances), 4) if chances else 0.0,
        "correct": correct,
        "n": n,
    }


# ---------------------------------------------------------------- shapes of the traps
TRAP_CLASSES = ("answer", "abstain", "premise")


def trap_class(item: QAItem) -> str:
    """What the item asks of a reader before any value: decline (abstain), correct the question
    (premise) or answer it."""
    if item.spec.kind == "abstain":
        return "abstain"
    return "premise" if item.type == "adversarial" else "answer"


def _agreement_score(pairs: list[tuple[str, str]]) -> dict:
    """Accuracy of (predicted, true) class pairs, and their chance agreement: the accuracy the same
    predictions would have if they were independent of the labels (sum over classes of the predicted
    share times the true share), which is what a shape that tells nothing scores."""
    n = len(pairs)
    if not n:
        return _score(0, 0, [])
    predicted = Counter(p for p, _ in pairs)
    true = Counter(t for _, t in pairs)
    chance = sum(predicted[c] * true[c] for c in predicted) / (n * n)
    correct = sum(1 for p, t in pairs if p == t)
    return {"accuracy": round(correct / n, 4), "chance": round(chance, 4), "correct": correct, "n": n}


def amounts_in(text: str) -> list[Decimal]:
    """Every amount written with a currency sign or word."""
    found = []
    for match in re.finditer(r"[$¥￥]\s?\d[\d,]*(?:\.\d+)?|\d[\d,]*(?:\.\d+)?\s?(?:元|块)", text):
        value = parse_money(match.group(0))
        if value is not None:
            found.append(value)
    return found


@functools.cache
def _vocabulary(lang: str) -> tuple[str, ...]:
    """The names a question of `lang` may carry (people, merchants, places, projects, companies), the
    longest first: what a reader who knows the generator's catalogs would look for."""
    if lang not in ("en", "zh"):
        return ()
    res = resources.get(lang)
    pools = res.pools
    names: set[str] = set()
    for category in res.anchors.bill.categories.values():
        names.update(m for m in category.merchants if "{" not in m)
    names.update(x.name for x in pools.destinations)
    names.update(c.name for c in pools.cities)
    for values in pools.lists.values():
        names.update(v for v in values if isinstance(v, str))
    names.update(pools.names.given_female + pools.names.given_male)
    if lang == "zh":
        names.update(
            pools.names.format.format(family=f, given=g)
            for f in pools.names.family
            for g in pools.names.given_female + pools.names.given_male
        )
    for attr in res.persona.attributes.values():
        names.update(v for v in getattr(attr, "values", []) or [] if isinstance(v, str))
    return tuple(sorted((n for n in names if len(n) >= 2), key=lambda n: (-len(n), n)))


def named_entity(question: str, lang: str) -> str | None:
    """The longest catalog name the question carries, None if it names none."""
    return next((n for n in _vocabulary(lang) if n in question), None)


@functools.cache
def _templates(lang: str) -> tuple[tuple[str, re.Pattern], ...]:
    """Every question template of `lang` as a pattern (a slot matches any text), the most literal first."""
    text = phrasing.get(lang).text
    raw: set[str] = {t for forms in text.questions.values() for t in forms}
    for attr in text.attributes.values():
        for form in ("ask", "current", "previous", "history", "at_time", "at_event"):
            raw.update(getattr(attr, form))
    for generalization in text.generalize.values():
        raw.update(s.text for s in generalization.situations)
    compiled = []
    for template in raw:
        parts = re.split(r"\{\w+\}", template)
        compiled.append((template, re.compile("(.+?)".join(re.escape(p) for p in parts), re.S)))
    literal = lambda t: len(re.sub(r"\{\w+\}", "", t[0]))  # noqa: E731
    return tuple(sorted(compiled, key=lambda t: (-literal(t), t[0])))


def template_of(question: str, lang: str) -> str:
    """The template a question was filled from (the most literal one that matches it whole), or the
    question with its numbers masked where none does."""
    if lang in ("en", "zh"):
        for template, pattern in _templates(lang):
            if pattern.fullmatch(question):
                return template
    return re.sub(r"\d[\d,.]*", "#", question)


def _ratio_traps(items: list[QAItem]) -> list[tuple[str, str]]:
    """Items whose question names an amount: a trap when that amount is a simple ratio (0.5x, 2x, 3x,
    4/3x ...) of another amount the item's options or the persona's other questions on the same day name
    (the true charge a multiplied false one was made from)."""
    by_day: dict[tuple[str, str], list[Decimal]] = defaultdict(list)
    days_of: dict[str, list[str]] = {}
    for item in items:
        days = [d.isoformat() for d in dates_in(item.question, item.asked_at.year)]
        days_of[item.id] = days
        for day in days:
            by_day[(item.persona_id, day)].extend(amounts_in(item.question))
    pairs = []
    for item in items:
        own = amounts_in(item.question)
        if not own:
            continue
        others = [a for o in item.options for a in amounts_in(o)]
        for day in days_of[item.id]:
            others += by_day[(item.persona_id, day)]
        others = [o for o in others if o not in own]
        trap = any(simple_ratio(a, o) for a in own for o in others)
        pairs.append(
            ("premise" if trap else "answer", "premise" if trap_class(item) == "premise" else "answer")
        )
    return pairs


def _frequency_traps(items: list[QAItem]) -> list[tuple[str, str]]:
    """Items whose question names a catalog entity: a trap when no other question of the dataset names
    it (a never-mentioned friend, shop or city is asked about once; real ones recur)."""
    named = {item.id: named_entity(item.question, item.language) for item in items}
    counts = Counter(n for n in named.values() if n)
    pairs = []
    for item in items:
        name = named[item.id]
        if name is None:
            continue
        truth = "answer" if trap_class(item) == "answer" else "trap"
        pairs.append(("trap" if counts[name] <= 1 else "answer", truth))
    return pairs


def _template_traps(items: list[QAItem]) -> list[tuple[str, str]]:
    """Every item: the class most of the other items of its template have (leave one out, as a reader
    learns a template's prior from the rest of the benchmark); a template seen nowhere else gets the
    dataset's majority class. Ties go to answering."""
    keys = [template_of(i.question, i.language) for i in items]
    classes = [trap_class(i) for i in items]
    per: dict[str, Counter] = defaultdict(Counter)
    for key, cls in zip(keys, classes, strict=True):
        per[key][cls] += 1
    overall = Counter(classes)
    pairs = []
    for key, cls in zip(keys, classes, strict=True):
        rest = per[key].copy()
        rest[cls] -= 1
        if sum(rest.values()) == 0:
            rest = overall.copy()
            rest[cls] -= 1
        best = max(rest.values())
        guess = next(c for c in TRAP_CLASSES if rest[c] == best)
        pairs.append((guess, cls))
    return pairs


NEAR_DATE_DAYS = 3  # the same name on days this close reads as a date shifted to make a false premise


def _near_date_traps(items: list[QAItem], days: int = NEAR_DATE_DAYS) -> list[tuple[str, str]]:
    """Items naming an entity and a day: a trap when another question of the persona names the same
    entity on a different day at most `days` away (a false date made by shifting the true one)."""
    seen: dict[tuple[str, str], set] = defaultdict(set)
    facts = []
    for item in items:
        name = named_entity(item.question, item.language)
        on = dates_in(item.question, item.asked_at.year)
        if name is None or not on:
            continue
        facts.append((item, name, on[0]))
        seen[(item.persona_id, name)].add(on[0])
    pairs = []
    for item, name, day in facts:
        near = any(0 < abs((o - day).days) <= days for o in seen[(item.persona_id, name)])
        pairs.append(
            ("premise" if near else "answer", "premise" if trap_class(item) == "premise" else "answer")
        )
    return pairs


SHAPES: dict[str, Callable[[list[QAItem]], list[tuple[str, str]]]] = {
    "ratio": _ratio_traps,
    "name_frequency": _frequency_traps,
    "template_prior": _template_traps,
    "near_date": _near_date_traps,
}


def shape_scores(items: list[QAItem]) -> dict[str, dict]:
    """Per shape strategy: accuracy at telling traps from ordinary items, its chance agreement and n."""
    return {name: _agreement_score(SHAPES[name](items)) for name in SHAPE_STRATEGIES}


# ---------------------------------------------------------------- habits
def usual_method_score(items: list[QAItem], bills: dict[str, Counter]) -> dict:
    """Every bill.method item (open or choice) answered with the method the persona's bills use most
    (`bills`: per persona, her bills counted by payment method), as a reader who knows only her usual
    card would. Chance is a guess at one of her methods: 1 / the methods her bills use on an open item,
    1 / the options on a choice item (where her usual card is not among the options it is simply wrong)."""
    correct, chances = 0, []
    for item in items:
        counts = bills.get(item.persona_id)
        if item.subtype != METHOD_SUBTYPE or item.type == "adversarial" or not counts:
            continue
        usual = counts.most_common(1)[0][0]
        if is_choice(item):
            gold = item.options[LETTERS.index(item.spec.value or "A")]
            chances.append(1 / len(item.options))
        else:
            gold = item.spec.value or item.answer
            chances.append(1 / len(counts))
        correct += gold == usual
    return _score(correct, len(chances), chances)


def bill_methods(anchors) -> dict[str, Counter]:
    """Per persona, her bills counted by payment method (from the dataset's app records)."""
    counts: dict[str, Counter] = defaultdict(Counter)
    for anchor in anchors:
        if anchor.app == "bill":
            counts[anchor.persona_id][anchor.record.payment_method] += 1
    return dict(counts)
