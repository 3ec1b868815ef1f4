"""No English line says two articles in a row ("the a scarf", "my the Home Depot") or the wrong one ("a
umbrella"): every template with a slot after a determiner is rendered, the way its lines are (questions
and answers by `fill`, dialogue by the template language), with every value each source of that slot
holds, and the output is read for collisions. The sources are listed here, from the pools and the
catalog, not taken from the generator."""

from __future__ import annotations

import random
import re
from functools import cache
from pathlib import Path

import pytest
import yaml

from keme.text import resources
from keme.text.fill import fill
from keme.text.template import Context, TemplateError, compile_template, render
from keme.world.catalog import DINING, load_catalog

EN = Path(__file__).resolve().parents[1] / "keme/text/en"
# filled by keme.text.fill (questions, answers); the rest by the template language
FILLED = ("questions.yaml",)
SLOT_AFTER_DETERMINER = re.compile(r"(?i)\b(?:the|an?|my|your|his|her|our|their|this|that) \{([^{}]+)\}")
DOUBLED = re.compile(r"(?i)(?<!['\w])(the|an?|my|your|his|her|our|their|this) (an?|the)\b(?! *[-—,.?!])")
A_BEFORE_VOWEL = re.compile(r"(?<!['\w])a ([aeiouAEIOU][\w-]*)")
AN_BEFORE_CONSONANT = re.compile(r"(?<!['\w])an ([b-df-hj-np-tv-zB-DF-HJ-NP-TV-Z][\w-]*)")
# "a unicorn", "a UX role"
SAID_WITH_A_CONSONANT = re.compile(r"(?i)^(uni|use|usu|uti|eu|one\b|once\b|u\.s)|(?-i:^U[A-Z])")
SAID_WITH_A_VOWEL = re.compile(r"^(hour|honest|honou?r|heir|[A-Z]{2,})")  # "an hour", "an MBA"


@cache
def sources() -> dict[str, list[str]]:
    """Every value a slot can take, by slot (the episode's details, the app records, the pools)."""
    res, catalog = resources.get("en"), load_catalog("en")
    lists = res.pools.lists
    merchants = [m for c in res.anchors.bill.categories.values() for m in c.merchants]
    venues = [v.name for v in catalog.venues]
    return {
        "gift": [p.name for p in catalog.products if p.category == "gift"],
        "product": [p.name for p in catalog.products if p.category != "gift"],
        "gift_store": [s for p in catalog.products for s in p.stores],
        "symptom": [c.name for c in catalog.conditions],
        "merchant": merchants,
        "merchant1": merchants,
        "merchant2": merchants,
        "title": [t.title for t in res.pools.titles],
        "destination": [d.name for d in res.pools.destinations],
        "attraction": [a for d in res.pools.destinations for a in d.attractions],
        "local_food": [f for d in res.pools.destinations for f in d.foods],
        "place": venues,
        "venue": venues,
        "clinic": venues,
        "restaurant": [v.name for v in catalog.venues if v.type in DINING],
        "vet_clinic": [v.name for v in catalog.venues if v.type == "vet"],
        "occasion": [o.name for o in catalog.occasions],
        "activity": [a.name for a in catalog.activities],
        "resource": lists["learning_resources"],
        "relative": lists["relatives"],
        "device": lists["devices"],
        "project": lists["projects"],
    }


def values_of(slot: str) -> list[str]:
    """The values `slot` can take: a pool's items, a persona attribute's values, an episode detail's."""
    res = resources.get("en")
    if m := re.fullmatch(r"pool\d*\.(\w+)", slot):
        return [v for v in res.pools.lists.get(m.group(1), []) if isinstance(v, str)]
    if re.fullmatch(r"(?:old:)?[a-z_]+\.[a-z_]+", slot):
        attribute = res.persona.attributes.get(slot.split(":")[-1])
        return [v for v in getattr(attribute, "values", None) or [] if isinstance(v, str)]
    return sources().get(slot, [])


def _strings(node) -> list[str]:
    if isinstance(node, str):
        return [node]
    if isinstance(node, dict):
        return [s for k, v in node.items() for s in _strings(k) + _strings(v)]
    if isinstance(node, list):
        return [s for v in node for s in _strings(v)]
    return []


@cache
def templates() -> list[tuple[str, str]]:
    """(file, template) for every English line with a slot after a determiner."""
    found = []
    for path in sorted(EN.rglob("*.yaml")):
        for text in _strings(yaml.safe_load(path.read_text(encoding="utf-8"))):
            if SLOT_AFTER_DETERMINER.search(text):
                found.append((path.name, text))
    return found


def said(file: str, template: str, slot: str, value: str) -> str:
    """The line with `slot` filled with `value` (every other slot a neutral word), as its renderer says it."""
    rest = re.sub(r"\{(?!" + re.escape(slot) + r"\})[^{}]*\}", "Sam", template)
    line = rest.replace("{" + slot + "}", "{value}")
    if file in FILLED:
        return fill(line, {"value": value})
    ctx = Context(lang="en", rng=random.Random(0), persona={}, slots={"value": value})
    return render(compile_template(line), ctx)


def mistakes(line: str) -> list[str]:
    """Two articles in a row, "a" before a vowel sound, "an" before a consonant sound."""
    found = [m.group(0) for m in DOUBLED.finditer(line)]
    found += [m.group(0) for m in A_BEFORE_VOWEL.finditer(line) if not SAID_WITH_A_CONSONANT.match(m[1])]
    found += [m.group(0) for m in AN_BEFORE_CONSONANT.finditer(line) if not SAID_WITH_A_VOWEL.match(m[1])]
    return found


def test_the_scan_reads_the_lines_it_should():
    assert len(templates()) > 100
    assert values_of("gift") and values_of("pool.gifts") and values_of("finance.bank")


def test_the_reader_finds_each_kind_of_mistake():
    assert mistakes("Is it weird to hand him the a houseplant?") == ["the a"]
    assert mistakes("Saw my The Home Depot charge.") == ["my The"]
    assert mistakes("I bought a umbrella and an scarf.") == ["a umbrella", "an scarf"]
    assert mistakes("a unicorn, an hour, an MBA, a UX role, a one-off, Ka'an Reserve") == []


@pytest.mark.parametrize("file", sorted({f for f, _ in templates()}))
def test_no_slot_after_a_determiner_says_a_second_article(file):
    wrong = set()
    for name, template in templates():
        if name != file:
            continue
        for match in SLOT_AFTER_DETERMINER.finditer(template):
            slot = match.group(1)
            for value in values_of(slot):
                try:
                    line = said(file, template, slot, value)
                except TemplateError:
                    continue
                if found := mistakes(line):
                    wrong.add(f"{template!r} with {slot}={value!r}: {found}")
    assert not wrong, "\n".join(sorted(wrong)[:20])
