"""List the pattern lines that mention an event, a time or a value in their own words but declare no
presupposition (keme.world.check.presup.undeclared): the lines still to declare.

    PYTHONPATH=. python scripts/presup_lint.py [en|zh ...] [--count]
"""

from __future__ import annotations

import sys

from keme.text.resources import get
from keme.world.check.presup import own_words, undeclared


def flagged(lang: str) -> list[tuple[str, str, str]]:
    """(where, word, line source) for each undeclared line of `lang`'s patterns, reveals and updates."""
    res = get(lang)
    groups = [
        (f"patterns:{name}", [ex for b in p.beats if not isinstance(b, str) for ex in b.options])
        for name, p in res.patterns.items()
    ]
    groups += [(f"persona:{k}", list(v)) for table in (res.reveals, res.updates) for k, v in table.items()]
    out = []
    for where, exchanges in groups:
        for ex in exchanges:
            if not ex.presup.empty:
                continue
            for role, template in (("user", ex.u), ("assistant", ex.a)):
                word = undeclared(own_words(template), lang, role)
                if word is not None:
                    out.append((where, word, template.source))
    return out


def main(argv: list[str]) -> None:
    langs = [a for a in argv if not a.startswith("--")] or ["en", "zh"]
    for lang in langs:
        found = flagged(lang)
        if "--count" not in argv:
            for where, word, source in found:
                print(f"{lang} {where} [{word}] {source}")
        print(f"{lang}: {len(found)} undeclared lines")


if __name__ == "__main__":
    main(sys.argv[1:])
