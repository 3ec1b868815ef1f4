"""People names from the language pools."""

from __future__ import annotations

import random

from keme.text.resources import Resources

FEMALE_MARKERS = ("sister", "姐", "妹")
MALE_MARKERS = ("brother", "哥", "弟")


def gender_of_relation(relation: str) -> str | None:
    """'older sister' / '妹妹' -> female; None when the word does not tell."""
    if any(m in relation for m in FEMALE_MARKERS):
        return "female"
    if any(m in relation for m in MALE_MARKERS):
        return "male"
    return None


def person_name(
    rng: random.Random,
    res: Resources,
    *,
    full: bool = False,
    gender: str | None = None,
    family: str | None = None,
) -> str:
    """A name as friends would write it: given name in English, full name in Chinese (or `full`)."""
    names = res.pools.names
    gender = gender or rng.choice(("female", "male"))
    given = rng.choice(names.given_female if gender == "female" else names.given_male)
    if res.lang == "en" and not full:
        return given
    return names.format.format(given=given, family=family or rng.choice(names.family))


def taken_names(names: set[str]) -> set[str]:
    """`names` and the given name of each full English name in them: a friend called "James" clashes with
    a persona called "James Robinson" (the text calls both "James")."""
    return set(names) | {n.split()[0] for n in names if " " in n}


def distinct_names(rng: random.Random, res: Resources, count: int, avoid: set[str]) -> list[str]:
    """`count` names that differ from each other and from `avoid`, given names included (bounded tries,
    then accepts repeats)."""
    taken = taken_names(avoid)
    chosen: list[str] = []
    for _ in range(count * 20):
        if len(chosen) == count:
            break
        name = person_name(rng, res)
        if name not in taken and name not in chosen:
            chosen.append(name)
    while len(chosen) < count:
        chosen.append(person_name(rng, res))
    return chosen
