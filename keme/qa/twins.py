"""Traps asked in the wordings of answerable questions, each wording outnumbered by its answerable twins.

A reader who learns which answer class each question template mostly has (keme.qa.blind's
`template_prior`) tells an abstention or a false premise from an ordinary question by its wording alone
unless every wording a trap is asked in is asked, more often, of questions that have an answer. So a trap
carries the wordings of the answerable questions of its kind (`Draft.wordings`), and is placed only in one
whose answerable items in the selection outnumber its traps by at least one after it (the leave-one-out
prior then reads "answer" for every item of the wording: chance). Where no wording has room, answerable
candidates of one are swapped in for chosen items of their own type whose wording does not need them, so
the type counts stay the mix's. Traps about one made-up name (`Draft.group`) are placed together or not
at all: a made-up name asked about once would be told from the real ones, which recur.
"""

from __future__ import annotations

import random
from collections import Counter, defaultdict
from collections.abc import Callable, Iterable
from datetime import date

from keme.qa.blind import NEAR_DATE_DAYS, named_entity, template_of
from keme.qa.draft import Draft
from keme.text.dates import dates_in

TRAP_TYPES = ("adversarial", "abstention")  # placed in this order: a false premise has the fewer wordings
MAX_SWAPS = 2  # answerable items swapped in for one trap: a first trap of a wording needs two


class Wordings:
    """The chosen items' wording counts (answerable and traps) and the unchosen answerable candidates of
    each wording, kept current as traps are placed and items swapped."""

    def __init__(self, chosen: dict[int, Draft], spare: Iterable[Draft], lang: str, rng: random.Random):
        self.lang = lang
        self.rng = rng
        self.chosen = chosen
        self._keys: dict[str, str] = {}
        self.answers: Counter[str] = Counter()
        self.traps: Counter[str] = Counter()
        self.questions = {x.question for x in chosen.values()}
        self._days: dict[str, tuple[str, date] | None] = {}
        for draft in chosen.values():
            (self.traps if draft.type in TRAP_TYPES else self.answers)[self.key(draft.question)] += 1
        self._candidates = [x for x in spare if x.type not in TRAP_TYPES and id(x) not in chosen]
        self._spare: dict[str, list[Draft]] | None = None
        self.blocks = self.building_blocks()

    @property
    def spare(self) -> dict[str, list[Draft]]:
        """The unchosen answerable candidates by wording, indexed when a swap first needs them (matching
        a thousand candidates against every template is the cost of this stage)."""
        if self._spare is None:
            self._spare = defaultdict(list)
            for draft in self._candidates:
                self._spare[self.key(draft.question)].append(draft)
        return self._spare

    def building_blocks(self) -> set[int]:
        """The chosen items some chosen item is composed of."""
        return {id(s) for x in self.chosen.values() for s in x.sub}

    def _dated(self, question: str, year: int) -> tuple[str, date] | None:
        """The catalog name and the day a question names (as the near-date reader reads them)."""
        if question not in self._days:
            name, days = named_entity(question, self.lang), dates_in(question, year)
            self._days[question] = (name, days[0]) if name and days else None
        return self._days[question]

    def near_another(self, question: str, year: int) -> bool:
        """Whether another chosen question names the same thing on a day at most NEAR_DATE_DAYS away: a false
        date made by shifting a true one would tell itself by the pair."""
        mine = self._dated(question, year)
        if mine is None:
            return False
        return any(
            (other := self._dated(q, year)) is not None
            and other[0] == mine[0]
            and 0 < abs((other[1] - mine[1]).days) <= NEAR_DATE_DAYS
            for q in self.questions
            if q != question
        )

    def key(self, question: str) -> str:
        if question not in self._keys:
            self._keys[question] = template_of(question, self.lang)
        return self._keys[question]

    def can_drop(self, draft: Draft) -> bool:
        """Whether a chosen item can leave the selection without a trap's wording losing its lead of
        answerable twins."""
        if draft.type in TRAP_TYPES:
            return True
        key = self.key(draft.question)
        return not self.traps[key] or self.room(key) >= 1

    def drop(self, draft: Draft) -> None:
        del self.chosen[id(draft)]
        self.questions.discard(draft.question)
        (self.traps if draft.type in TRAP_TYPES else self.answers)[self.key(draft.question)] -= 1

    def room(self, key: str) -> int:
        """Traps the wording can still take: its answerable items stay ahead by one."""
        return self.answers[key] - self.traps[key] - 1

    def place(self, trap: Draft, fallback: bool = False) -> Callable[[], None] | None:
        """Ask `trap` in a wording with room (swapping answerable twins in where none has), the undo of
        what it changed; None where it cannot be placed (nothing changed then). `fallback`: in its
        `fallback` wordings instead, which other traps need first (place_traps tries them last)."""
        return self._place_among(trap, trap.fallback if fallback else trap.wordings or [trap.question])

    def _place_among(self, trap: Draft, pool: list[str]) -> Callable[[], None] | None:
        wordings = [
            w
            for w in dict.fromkeys(pool)
            if w not in self.questions and not self.near_another(w, trap.asked_at.year)
        ]
        self.rng.shuffle(wordings)
        wordings.sort(key=lambda w: -self.room(self.key(w)))
        undo: list[Callable[[], None]] = []
        for wording in wordings:
            key = self.key(wording)
            while self.room(key) < 1 and len(undo) < MAX_SWAPS:
                swap = self._swap_in(key)
                if swap is None:
                    break
                undo.append(swap)
            if self.room(key) >= 1:
                before = trap.question
                trap.question = wording
                self.traps[key] += 1
                self.questions.add(wording)
                self.chosen[id(trap)] = trap

                def undone() -> None:
                    del self.chosen[id(trap)]
                    self.questions.discard(wording)
                    self.traps[key] -= 1
                    trap.question = before
                    for step in reversed(undo):
                        step()

                return undone
        for step in reversed(undo):
            step()
        return None

    def _swap_in(self, key: str) -> Callable[[], None] | None:
        """One unchosen answerable candidate of wording `key` in, a chosen item of its type out (one whose
        wording keeps its traps outnumbered without it, and no other item's building block)."""
        for incoming in self.spare.get(key, []):
            if incoming.question in self.questions:
                continue
            outgoing = self._removable(incoming.type, key)
            if outgoing is None:
                continue
            out_key = self.key(outgoing.question)
            self.spare[key].remove(incoming)
            del self.chosen[id(outgoing)]
            self.chosen[id(incoming)] = incoming
            self.answers[out_key] -= 1
            self.answers[key] += 1
            self.questions.discard(outgoing.question)
            self.questions.add(incoming.question)

            def undo() -> None:
                self.questions.discard(incoming.question)
                self.questions.add(outgoing.question)
                self.answers[key] -= 1
                self.answers[out_key] += 1
                del self.chosen[id(incoming)]
                self.chosen[id(outgoing)] = outgoing
                self.spare[key].append(incoming)

            return undo
        return None

    def _removable(self, kind: str, key: str) -> Draft | None:
        """A chosen answerable item of type `kind`, of another wording, that can go: one that is no other
        item's building block before one that is, then the wording of the most answerable items first (a
        rare wording keeps its few)."""
        best: Draft | None = None
        best_rank = (-1, -1)
        for draft in self.chosen.values():
            if draft.type != kind:
                continue
            other = self.key(draft.question)
            if other == key or (self.traps[other] and self.room(other) < 1):
                continue
            rank = (id(draft) not in self.blocks, self.answers[other])
            if rank > best_rank:
                best, best_rank = draft, rank
        return best


def place_traps(
    book: Wordings, traps: dict[str, dict[str, list[Draft]]], counts: dict[str, int]
) -> Counter[str]:
    """Add up to `counts[type]` traps of each trap type to the book's chosen items (subtypes
    interleaved, a group whole), each in a wording its answerable twins outnumber, and last the groups that
    fit only in their fallback wordings (the room other traps need first); returns how many candidates
    could not be placed, per type."""
    rng = book.rng
    unplaced: Counter[str] = Counter()
    placed_of: Counter[str] = Counter()
    deferred: list[tuple[str, list[Draft]]] = []  # groups to try in their fallback wordings, last
    for kind in TRAP_TYPES:
        subtypes = traps.get(kind, {})
        names = sorted(subtypes)
        rng.shuffle(names)
        queues = {n: _grouped(subtypes[n]) for n in names}
        placed = 0
        while placed < counts.get(kind, 0) and any(queues.values()):
            for name in names:
                if placed >= counts.get(kind, 0) or not queues[name]:
                    continue
                group = queues[name].pop()
                if group[0].group and len(group) < 2:  # its other question was filtered out
                    unplaced[kind] += 1
                    continue
                if placed + len(group) > counts.get(kind, 0) and placed:
                    continue
                undo: list[Callable[[], None]] = []
                for trap in group:
                    step = book.place(trap)
                    if step is None:
                        break
                    undo.append(step)
                if len(undo) == len(group):
                    placed += len(group)
                else:
                    for step in reversed(undo):
                        step()
                    if all(trap.fallback for trap in group):
                        deferred.append((kind, group))
                    else:
                        unplaced[kind] += len(group)
        placed_of[kind] = placed
    for kind, group in deferred:
        if placed_of[kind] + len(group) > counts.get(kind, 0) or not _place_group(book, group, fallback=True):
            unplaced[kind] += len(group)
        else:
            placed_of[kind] += len(group)
    return unplaced


def _place_group(book: Wordings, group: list[Draft], fallback: bool) -> bool:
    """Place every trap of `group` or none."""
    undo: list[Callable[[], None]] = []
    for trap in group:
        step = book.place(trap, fallback)
        if step is None:
            for done in reversed(undo):
                done()
            return False
        undo.append(step)
    return True


def _grouped(drafts: list[Draft]) -> list[list[Draft]]:
    """The drafts in their order, those of one group (a made-up name) together."""
    groups: dict[str, list[Draft]] = {}
    for n, draft in enumerate(drafts):
        groups.setdefault(draft.group or f"#{n}", []).append(draft)
    return list(groups.values())


def hold_mix(
    book: Wordings,
    shares: dict[str, float],
    floor: int,
    margin: float,
    keep: Callable[[Draft], bool] = lambda draft: False,
) -> int:
    """Shrink the selection (not below `floor` items) until every type is within `margin` of its share:
    where a type could not fill its share, the others would otherwise take it and leave the mix the
    config asked for. Items leave from the type furthest above its share (relatively: what the short type
    leaves is shared in proportion), never one a trap's wording needs; another item's building block
    and what `keep` asks for (a format's supply) go last. Returns how many left."""
    chosen = book.chosen
    book.blocks = book.building_blocks()  # the traps placed are composed of items too
    counts = Counter(x.type for x in chosen.values())
    total = len(chosen)
    below = [
        counts[k] / (w - margin) for k, w in shares.items() if w > margin and counts[k] / total < w - margin
    ]
    goal = max(floor, int(min(below, default=total)))
    removed = 0
    while len(chosen) > goal:
        size = len(chosen) - 1
        # the most above its share, relatively (by name among equals: the mix's order is the config's)
        over = sorted(shares, key=lambda k: (-counts[k] / shares[k], k))
        victim = next(
            (
                x
                for kind in over
                if counts[kind] > shares[kind] * size
                for x in sorted(
                    chosen.values(), key=lambda x: (id(x) in book.blocks, keep(x), x.subtype, x.question)
                )
                if x.type == kind and book.can_drop(x)
            ),
            None,
        )
        if victim is None:
            break
        book.drop(victim)
        counts[victim.type] -= 1
        removed += 1
    return removed
