"""List the pattern lines that mention an event, a time or a value in their own words but declare no
presupposition (keme.world.check.presup.bank_problems), and those placed in a part of today (tonight,
今晚) that declare no `part:` (part_problems): the lines still to declare.

    PYTHONPATH=. python scripts/presup_lint.py [en|zh ...] [--count]
"""

from __future__ import annotations

import sys

from keme.synth.said import load_bank
from keme.text.resources import get
from keme.world.check.presup import bank_problems, part_problems


def main(argv: list[str]) -> None:
    langs = [a for a in argv if not a.startswith("--")] or ["en", "zh"]
    for lang in langs:
        found = bank_problems(get(lang))
        if "--count" not in argv:
            for where, word, source in found:
                print(f"{lang} {where} [{word}] {source}")
        print(f"{lang}: {len(found)} undeclared lines")
        timed = part_problems(get(lang), load_bank(lang))
        if "--count" not in argv:
            for where, word, source in timed:
                print(f"{lang} {where} [{word}] {source}")
        print(f"{lang}: {len(timed)} lines placed in a part of today with no part:")


if __name__ == "__main__":
    main(sys.argv[1:])
