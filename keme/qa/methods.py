"""How she paid one bill, asked so that her usual card does not answer it.

Most of a persona's payments go on one method (keme.prior.habits: 65-80 %), so "How did I pay the $14.74
at Shell on May 3?" asked of bills drawn at random is answered three times in four by a reader who only
knows her usual card (keme.qa.blind `usual_method`). The selection holds the bills asked about so that her
usual method is the answer of one item in k, k the methods her bills use: what a guess at one of her
methods scores. Items leave and come in by swaps within the selection's own type, so the mix stays put.
"""

from __future__ import annotations

import math
import random
import re
from collections import Counter
from collections.abc import Callable, Iterable

from keme.qa.draft import Draft
from keme.qa.twins import TRAP_TYPES, Wordings
from keme.text.fill import fill

SUBTYPE = "bill.method"


def usual_method(methods: Iterable[str]) -> tuple[str, int] | None:
    """Her most used method over `methods` (one per bill; the earliest-named among equals) and how many
    methods she uses; None without bills."""
    counts = Counter(methods)
    if not counts:
        return None
    return counts.most_common(1)[0][0], len(counts)


def usual_quota(asked: int, methods: int, rng: random.Random) -> int:
    """How many of `asked` items may have her usual method as their answer: asked / methods, rounded up
    with the probability of its fraction (so a dataset's share is exactly one in `methods` on average)."""
    exact = asked / methods
    floor = math.floor(exact)
    return floor + (rng.random() < exact - floor)


def thin_usual(drafts: list[Draft], usual: tuple[str, int] | None, rng: random.Random) -> list[Draft]:
    """The candidates with as many bill.method questions on her usual method as on each of her others on
    average (the rest left out at random): the selection and the traps' twin swaps then draw from a pool
    where her usual card answers one in k, and `hold_usual` only corrects the draw."""
    if usual is None:
        return drafts
    method, kinds = usual
    asked = [x for x in drafts if x.subtype == SUBTYPE and x.type not in TRAP_TYPES]
    on_usual = [x for x in asked if x.answer == method]
    room = round((len(asked) - len(on_usual)) / (kinds - 1)) if kinds > 1 else 0
    out = {id(x) for x in rng.sample(on_usual, max(0, len(on_usual) - room))}
    return [x for x in drafts if id(x) not in out]


def hold_usual(book: Wordings, drafts: list[Draft], usual: tuple[str, int], rng: random.Random) -> int:
    """Swap bill.method items in and out of the book's selection until her usual method answers its
    quota of them; returns how many swaps were made. A usual item leaves for an unchosen one paid
    otherwise (or, where none is left, for another unchosen answerable item of its type), never an item
    a trap's wording or a composed item needs."""
    method, kinds = usual
    if kinds < 2:  # one method: every such question is answered by it, so none is asked
        return _drop_all(book, drafts, rng)
    asked = [x for x in book.chosen.values() if x.subtype == SUBTYPE and x.type not in TRAP_TYPES]
    quota = usual_quota(len(asked), kinds, rng)
    swaps = 0
    for too_many in (True, False):
        while True:
            held = sum(x.answer == method for x in book.chosen.values() if x.subtype == SUBTYPE)
            if (held <= quota) if too_many else (held >= quota):
                break
            if not _swap(book, drafts, lambda x: (x.answer == method) == too_many, rng):
                break
            swaps += 1
    return swaps


def _swap(book: Wordings, drafts: list[Draft], leaving: Callable[[Draft], bool], rng: random.Random) -> bool:
    """One chosen bill.method item `leaving` accepts out, an unchosen bill.method item it does not in;
    where a trap's wording needs the one leaving, the one coming in is asked in that wording. Where no
    bill.method item is left to come in, another unchosen item of the type takes the place (or none)."""
    out = [
        x for x in book.chosen.values() if x.subtype == SUBTYPE and leaving(x) and id(x) not in book.blocks
    ]
    rng.shuffle(out)
    spare = [x for x in drafts if id(x) not in book.chosen and x.question not in book.questions]
    same = [x for x in spare if x.subtype == SUBTYPE and not leaving(x)]
    rng.shuffle(same)
    for outgoing in out:
        free = book.can_drop(outgoing)
        key = book.key(outgoing.question)
        incoming = next((x for x in same if free or reworded(x, key, book) is not None), None)
        if incoming is None and free:
            other = [x for x in spare if x.type == outgoing.type and x.subtype != SUBTYPE]
            incoming = rng.choice(other) if other else None
        elif incoming is None:
            continue
        elif not free:
            incoming.question = reworded(incoming, key, book) or incoming.question
        book.drop(outgoing)
        if incoming is not None:
            book.chosen[id(incoming)] = incoming
            book.questions.add(incoming.question)
            book.answers[book.key(incoming.question)] += 1
        return True
    return False


def reworded(draft: Draft, template: str, book: Wordings) -> str | None:
    """`draft`'s question asked in `template` (a wording of its own subtype, with the same slots), None
    where it cannot be (or would repeat a chosen question)."""
    own = book.key(draft.question)
    names = re.findall(r"\{(\w+)\}", own)
    pattern = "(.+?)".join(re.escape(p) for p in re.split(r"\{\w+\}", own))
    found = re.fullmatch(pattern, draft.question, re.S)
    if found is None or set(re.findall(r"\{(\w+)\}", template)) != set(names):
        return None
    question = fill(template, dict(zip(names, found.groups(), strict=True)))
    return None if question in book.questions else question


def _drop_all(book: Wordings, drafts: list[Draft], rng: random.Random) -> int:
    """Every bill.method item out, each for another unchosen item of its type where one is left."""
    swaps = 0
    while _swap(book, drafts, lambda x: True, rng) and swaps < len(drafts):
        swaps += 1
    return swaps
