"""A trap (an abstention or a false premise) is asked only in a wording that answerable questions in the
selection are asked in more often (keme.qa.twins): a reader who learns each wording's usual answer class
then reads "answer" for all of them, which is chance."""

from __future__ import annotations

import os
import random
import subprocess
import sys
from collections import Counter
from datetime import datetime

from keme.qa import draft as d
from keme.qa.draft import Draft
from keme.qa.twins import Wordings, place_traps


def _answerable(n: int, merchant: str = "Shell") -> Draft:
    return _answer(f"How much did I pay at {merchant} on May {n}?", "bill.amount")


def _answer(question: str, subtype: str) -> Draft:
    """A chosen single-hop item asked in `question`."""
    return Draft(
        "single_hop",
        subtype,
        question,
        "$40.00",
        d.entity("$40.00"),
        d.proof("absent", [], terms=""),
        datetime(2026, 6, 1, 20),
        1,
        "p01-root",
    )


def _trap(wordings: list[str], group: str = "") -> Draft:
    return Draft(
        "abstention",
        "abs.merchant",
        wordings[0],
        "Not available: that was never mentioned.",
        d.abstain(),
        d.proof("absent", [], terms="IKEA"),
        datetime(2026, 6, 1, 20),
        1,
        "p01-root",
        wordings=wordings,
        group=group,
    )


def _place(chosen: list[Draft], traps: list[Draft], spare: list[Draft] = (), count: int = 10):
    book = {id(x): x for x in chosen}
    wordings = Wordings(book, list(spare), "en", random.Random(1))
    unplaced = place_traps(wordings, {"abstention": {"abs.merchant": list(traps)}}, {"abstention": count})
    return book, unplaced


def test_a_trap_is_asked_in_a_wording_its_answerable_twins_outnumber():
    chosen = [_answerable(n) for n in range(1, 4)]  # "How much did I pay at {merchant} on {date}?" x 3
    trap = _trap(["Who was leading the IKEA project?", "How much did I pay at IKEA on May 20?"])
    book, unplaced = _place(chosen, [trap])
    assert id(trap) in book and trap.question == "How much did I pay at IKEA on May 20?"
    assert unplaced == Counter()


def test_a_trap_whose_wordings_no_answerable_question_has_is_not_asked():
    trap = _trap(["Who was leading the IKEA project?"])
    book, unplaced = _place([_answerable(n) for n in range(1, 4)], [trap])
    assert id(trap) not in book and unplaced == Counter(abstention=1)


def test_traps_of_one_wording_stay_fewer_than_its_answerable_items():
    """Three answerable items of a wording take two traps (3 against 2: the prior still reads "answer")."""
    traps = [_trap([f"How much did I pay at IKEA on June {n}?"]) for n in (1, 8, 15, 22)]
    book, unplaced = _place([_answerable(n) for n in range(1, 4)], traps)
    assert sum(1 for x in book.values() if x.type == "abstention") == 2 and unplaced == Counter(abstention=2)


def test_answerable_twins_are_swapped_in_for_items_of_their_type_that_need_no_twin():
    """No chosen item has the trap's wording: two unchosen ones are swapped in for two chosen items of
    their type, so the type counts stay as they were."""
    other = [
        _answer(f"When is the to-do 'call {name}' due?", "todo.due") for name in ("Mom", "Dad", "Ana", "Raj")
    ]
    spare = [_answerable(n) for n in range(1, 4)]
    trap = _trap(["How much did I pay at IKEA on May 20?"])
    book, _ = _place(other, [trap], spare)
    kinds = Counter(x.type for x in book.values())
    assert id(trap) in book and kinds == Counter(single_hop=4, abstention=1)
    assert sum(1 for x in book.values() if x.subtype == "bill.amount") == 2


def test_the_traps_about_one_made_up_name_are_asked_together_or_not_at_all():
    """A made-up name asked about once is told from the real ones, which recur: its second question has no
    room, so neither is asked."""
    pair = [
        _trap(["How much did I pay at IKEA on June 2?"], group="abs.merchant:IKEA"),
        _trap(["Who was leading the IKEA project?"], group="abs.merchant:IKEA"),
    ]
    book, unplaced = _place([_answerable(n) for n in range(1, 4)], pair)
    assert not any(id(t) in book for t in pair) and unplaced == Counter(abstention=2)
    assert pair[0].question == "How much did I pay at IKEA on June 2?"  # its wording put back


def test_a_made_up_name_whose_other_question_was_filtered_out_is_not_asked():
    alone = _trap(["How much did I pay at IKEA on June 2?"], group="abs.merchant:IKEA")
    book, unplaced = _place([_answerable(n) for n in range(1, 4)], [alone])
    assert id(alone) not in book and unplaced == Counter(abstention=1)


def test_a_trap_is_not_asked_of_a_name_another_question_asks_about_a_few_days_off():
    """ "Marigold Thai on May 27" beside "Marigold Thai on May 24": the pair tells the shifted date."""
    chosen = [_answerable(n, merchant="Marigold Thai") for n in (24, 10, 3)]
    near = _trap(["How much did I pay at Marigold Thai on May 27?"])
    book, unplaced = _place(chosen, [near])
    assert id(near) not in book and unplaced == Counter(abstention=1)


def test_the_name_a_question_carries_does_not_depend_on_the_hash_seed():
    """Names of one length were tried in set order: which of two catalog names a question carried, and so
    where a trap could be placed, changed with PYTHONHASHSEED (the demo's golden held for 3 seeds in 8)."""
    script = "from keme.qa.blind import _vocabulary; print(_vocabulary('zh') + _vocabulary('en'))"
    seen = {
        subprocess.run(
            [sys.executable, "-c", script],
            env=os.environ | {"PYTHONHASHSEED": seed},
            capture_output=True,
            text=True,
            check=True,
        ).stdout
        for seed in ("0", "3", "5")
    }
    assert len(seen) == 1
