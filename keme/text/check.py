"""Check language resources against the synthesis contract, one part at a time.

`python -m keme.text.check en [pools persona anchors patterns]` prints every
problem with the file and key to fix; exit status 1 if there is any. Each part
loads only its own files, so the parts can be written independently.
"""

from __future__ import annotations

import re
import sys
from pathlib import Path

from keme.models.attributes import ATTRIBUTES, BY_KEY, IMMUTABLE_KEYS, ROUTINE
from keme.models.catalog import ANCHOR_SLOTS, CHANGES, all_moments
from keme.text import resources as r
from keme.text.slots import SESSION_SLOTS
from keme.text.template import Template, compile_template
from keme.yamlload import load

UPDATE_MOMENTS = frozenset(change.moments[change.update_index] for change in CHANGES.values())
REQUIRED_LISTS = {
    "projects": 12,
    "restaurants": 12,
    "dishes": 12,
    "ingredients": 12,
    "symptoms": 12,
    "clinics": 12,
    "occasions": 12,
    "gifts": 12,
    "activities": 12,
    "places": 12,
    "relatives": 5,
    "fitness_goals": 12,
    "devices": 12,
    "tech_issues": 12,
    "learning_resources": 12,
    "vet_clinics": 12,
    "packing_items": 12,
}
NAME_VALUED = frozenset(
    {
        "home.city",
        "home.neighborhood",
        "social_circle.best_friend",
        "social_circle.sibling",
        "social_circle.partner",
    }
)
ABSENT_AT_START = frozenset(spec.key for spec in ATTRIBUTES if spec.initial == "absent")
PARTS = ("pools", "persona", "anchors", "patterns")
_DIGIT = re.compile(r"[0-9０-９]")


def claim_problems(t: Template, user: bool) -> list[str]:
    """Every value a line says comes from the world: a number or amount is a named quantity whose predicate
    the world remembers (`{num:2-8@party_size}`), and no line states a number as a literal digit (the
    world could not record or keep it consistent). A plan is a quantity of its session or episode;
    general knowledge (a 20 kg bag allowance) is a general fact, `{fact:20@checked_bag_kg}`."""
    problems = [
        f"unnamed quantity {{{part.kind}:{part.low}-{part.high}}}: name what it counts, "
        f"{{{part.kind}:{part.low}-{part.high}@predicate}} (register it in keme/world/predicates.yaml)"
        for part in t.parts
        if part.kind in ("num", "money") and not part.predicate
    ]
    if states_a_literal_digit(t):
        who = "a user line" if user else "an assistant line"
        problems.append(
            f"{who} states a number with a literal digit: say it through a named quantity "
            "({num:a-b@name}, or {fact:value@name} for general knowledge or a fixed plan)"
        )
    return problems


def states_a_literal_digit(t: Template) -> bool:
    """Whether a line's own words (its text, or a choice of its alternatives) hold a digit: a number no
    claim can cover ("a solid {num:3-6@mood_score}/10" says a 10 the world never recorded)."""
    said = [part.value for part in t.parts if part.kind == "text"]
    said += [choice for part in t.parts if part.kind == "alt" for choice in part.choices]
    return any(_DIGIT.search(text) for text in said)


def _slot_problems(
    t: Template, slots: set[str], pools: set[str], persona: set[str], old: set[str]
) -> list[str]:
    problems = []
    if bad := t.slots - slots:
        problems.append(f"unknown slots {sorted(bad)}")
    if bad := t.pools - pools:
        problems.append(f"unknown pools {sorted(bad)}")
    if bad := t.persona_keys - persona:
        problems.append(f"persona attributes not allowed here {sorted(bad)}")
    if bad := t.old_keys - old:
        problems.append(f"old: values not allowed here {sorted(bad)}")
    return problems


def pool_names(folder: Path) -> set[str]:
    """Flat pool names: pools.yaml lists if it parses (else the required names) plus pattern_pools*.yaml."""
    try:
        base = r.parse_file(r.Pools, folder / "pools.yaml").lists
    except r.ResourceError:
        base = {name: ["x"] for name in REQUIRED_LISTS}
    return set(r.load_pattern_pools(folder, base))


def check_pools(folder: Path) -> list[str]:
    pools = r.parse_file(r.Pools, folder / "pools.yaml")
    r.load_pattern_pools(folder, pools.lists)
    problems = []
    for name, minimum in REQUIRED_LISTS.items():
        if len(pools.lists.get(name, [])) < minimum:
            problems.append(
                f"pools.yaml lists.{name}: {len(pools.lists.get(name, []))} items, expected >= {minimum}"
            )
    for field in ("given_female", "given_male", "family"):
        if len(getattr(pools.names, field)) < 30:
            problems.append(f"pools.yaml names.{field}: expected >= 30")
    for field, minimum in (("cities", 8), ("destinations", 16), ("products", 25), ("titles", 25)):
        if len(getattr(pools, field)) < minimum:
            problems.append(f"pools.yaml {field}: expected >= {minimum}")
    problems += [
        f"pools.yaml cities.{c.name}: expected >= 5 neighborhoods"
        for c in pools.cities
        if len(c.neighborhoods) < 5
    ]
    for d in pools.destinations:
        if len(d.attractions) < 3 or len(d.foods) < 3:
            problems.append(f"pools.yaml destinations.{d.name}: expected >= 3 attractions and foods")
    for p in pools.products:
        if p.price[0] > p.price[1]:
            problems.append(f"pools.yaml products.{p.name}: price range is reversed")
    return problems


def _fits_problems(where: str, key: str, entry: r.AttributeText, text: r.PersonaText) -> list[str]:
    """A `fits` table pairs every value of an attribute built earlier with at least two of this one's
    values (so a change of the other always finds a new one that fits)."""
    problems = []
    order = [spec.key for spec in ATTRIBUTES]
    for other, table in entry.fits.items():
        if other not in BY_KEY or order.index(other) >= order.index(key):
            problems.append(f"{where}.{other}: must be an attribute listed before {key} in ATTRIBUTES")
            continue
        other_values = text.attributes[other].values if other in text.attributes else []
        if missing := sorted(set(other_values) - set(table)):
            problems.append(f"{where}.{other}: no options for {missing}")
        for value, options in table.items():
            if value not in other_values:
                problems.append(f"{where}.{other}.{value}: not a value of {other}")
            if len(options) < 2:
                problems.append(f"{where}.{other}.{value}: expected >= 2 options")
            if bad := sorted(set(options) - set(entry.values)):
                problems.append(f"{where}.{other}.{value}: {bad} are not in values")
    return problems


def check_persona(folder: Path) -> list[str]:
    text = r.parse_file(r.PersonaText, folder / "persona.yaml")
    pools = pool_names(folder)
    where = "persona.yaml"
    problems = []
    for spec in ATTRIBUTES:
        entry = text.attributes.get(spec.key)
        if entry is None:
            problems.append(f"{where} attributes.{spec.key}: missing")
            continue
        # a routine is a count a person plausibly keeps (training a week): fewer distinct values
        minimum = 5 if spec.dimension == ROUTINE else 6
        if spec.key not in NAME_VALUED and len(entry.values) < minimum:
            problems.append(f"{where} attributes.{spec.key}.values: expected >= {minimum}")
        if len(entry.reveal) < 3:
            problems.append(f"{where} attributes.{spec.key}.reveal: expected >= 3 exchanges")
        problems += _fits_problems(f"{where} attributes.{spec.key}.fits", spec.key, entry, text)
        if not any(ex.act == "tell" for ex in entry.reveal):
            problems.append(f"{where} attributes.{spec.key}.reveal: needs an exchange with act: tell")
        for j, ex in enumerate(entry.reveal):
            if ex.act is None:
                problems.append(
                    f"{where} attributes.{spec.key}.reveal[{j}]: declare act (tell|request|mention)"
                )
            u, a = compile_template(ex.u), compile_template(ex.a)
            if "value" not in u.slots:
                problems.append(f"{where} attributes.{spec.key}.reveal[{j}].u: must contain {{value}}")
            for side, t in (("u", u), ("a", a)):
                found = _slot_problems(t, set(SESSION_SLOTS) | {"value"}, pools, set(BY_KEY), set())
                for p in found + claim_problems(t, user=side == "u"):
                    problems.append(f"{where} attributes.{spec.key}.reveal[{j}].{side}: {p}")
    if bad := set(text.attributes) - BY_KEY.keys():
        problems.append(f"{where} attributes: unknown {sorted(bad)}")
    for change in CHANGES.values():
        entry = text.changes.get(change.name)
        if entry is None or len(entry.update) < 3:
            problems.append(f"{where} changes.{change.name}: expected >= 3 update exchanges")
            continue
        for j, ex in enumerate(entry.update):
            u, a = compile_template(ex.u), compile_template(ex.a)
            if missing := set(change.attributes) - u.persona_keys:
                problems.append(f"{where} changes.{change.name}.update[{j}].u: must state {sorted(missing)}")
            for side, t in (("u", u), ("a", a)):
                slots = set(SESSION_SLOTS) | set(change.params)
                found = _slot_problems(t, slots, pools, set(BY_KEY), set(change.attributes))
                for p in found + claim_problems(t, user=side == "u"):
                    problems.append(f"{where} changes.{change.name}.update[{j}].{side}: {p}")
    if bad := set(text.changes) - CHANGES.keys():
        problems.append(f"{where} changes: unknown {sorted(bad)}")
    return problems


def check_anchors(folder: Path) -> list[str]:
    text = r.parse_file(r.AnchorText, folder / "anchors.yaml")
    pools = pool_names(folder)
    where = "anchors.yaml"
    problems = []
    for app, slots in ANCHOR_SLOTS.items():
        app_text = getattr(text, app)
        message = compile_template(app_text.message)
        problems += [
            f"{where} {app}.message: {p}" for p in _slot_problems(message, set(slots), set(), set(), set())
        ]
        if len(app_text.mention) < 3:
            problems.append(f"{where} {app}.mention: expected >= 3 exchanges")
        for j, ex in enumerate(app_text.mention):
            for side, source in (("u", ex.u), ("a", ex.a)):
                t = compile_template(source)
                found = _slot_problems(t, set(slots) | set(SESSION_SLOTS), pools, set(BY_KEY), set())
                for p in found + claim_problems(t, user=side == "u"):
                    problems.append(f"{where} {app}.mention[{j}].{side}: {p}")
        items = getattr(app_text, "items", None)
        if items is None:
            continue
        if len(items) < 12:
            problems.append(f"{where} {app}.items: expected >= 12")
        for j, item in enumerate(items):
            for field, value in item.model_dump().items():
                for source in value if isinstance(value, list) else [value]:
                    if isinstance(source, str):
                        t = compile_template(source)
                        for p in _slot_problems(t, set(), pools, set(IMMUTABLE_KEYS), set()):
                            problems.append(f"{where} {app}.items[{j}].{field}: {p}")
    if len(text.bill.categories) < 6:
        problems.append(f"{where} bill.categories: expected >= 6")
    return problems


def check_patterns(folder: Path, only: set[str] | None = None) -> list[str]:
    """Check patterns; `only` limits the catalogue-completeness check to some moments."""
    patterns = r.load_patterns(folder)
    files = {name: path.name for path in sorted(folder.glob("patterns*.yaml")) for name in _keys(path)}
    pools = pool_names(folder)
    moments = all_moments()
    expected = set(moments) if only is None else only
    problems = [f"patterns: missing pattern for moment {m!r}" for m in sorted(expected - patterns.keys())]
    problems += [
        f"patterns: {m!r} is not a moment of the catalogue" for m in sorted(patterns.keys() - moments.keys())
    ]
    for name, pattern in patterns.items():
        if name not in moments:
            continue
        beats = [b for b in pattern.beats if not isinstance(b, str)]
        markers = [b for b in pattern.beats if isinstance(b, str)]
        if not 7 <= len(beats) <= 10:
            problems.append(f"{name}: {len(beats)} beats, expected 7-10")
        if len([b for b in beats if b.p < 1]) > 3:
            problems.append(f"{name}: more than 3 optional beats")
        if markers.count("reveal") != 1:
            problems.append(f"{name}: needs exactly one 'reveal' marker")
        if name in UPDATE_MOMENTS and markers.count("update") != 1:
            problems.append(f"{name}: carries a life change, needs exactly one 'update' marker")
        if name not in UPDATE_MOMENTS and "update" in markers:
            problems.append(f"{name}: no change uses this moment, drop the 'update' marker")
        if bad := set(pattern.reveals) - BY_KEY.keys():
            problems.append(f"{name}.reveals: unknown attributes {sorted(bad)}")
        for i, beat in enumerate(beats):
            if len(beat.options) < 3:
                problems.append(f"{name}.beats[{i}]: {len(beat.options)} options, expected >= 3")
            if all((ex.u.persona_keys | ex.a.persona_keys) & ABSENT_AT_START for ex in beat.options):
                problems.append(f"{name}.beats[{i}]: every option needs a pet/partner; add one that does not")
            for j, ex in enumerate(beat.options):
                for side, t in (("u", ex.u), ("a", ex.a)):
                    found = _slot_problems(t, set(SESSION_SLOTS) | moments[name], pools, set(BY_KEY), set())
                    found += claim_problems(t, user=side == "u")
                    for p in found:
                        problems.append(
                            f"{files.get(name, 'patterns')} {name}.beats[{i}].options[{j}].{side}: {p}"
                        )
    return problems


def _keys(path: Path) -> list[str]:
    """The top-level keys of a YAML file (the moments a patterns file defines)."""
    raw = load(path, shipped=True).data or {}
    return [str(key) for key in raw] if isinstance(raw, dict) else []


CHECKS = {
    "pools": check_pools,
    "persona": check_persona,
    "anchors": check_anchors,
    "patterns": check_patterns,
}


def check(lang: str, parts: tuple[str, ...] = PARTS, root: Path = r.ROOT) -> list[str]:
    folder = root / lang
    problems = []
    for part in parts:
        try:
            problems += CHECKS[part](folder)
        except (r.ResourceError, ValueError) as exc:
            problems.append(str(exc))
    return problems


def main(argv: list[str]) -> int:
    if not argv or argv[0] not in r.LANGUAGES:
        print(f"usage: python -m keme.text.check {{{'|'.join(r.LANGUAGES)}}} [{' '.join(PARTS)}]")
        return 2
    parts = tuple(argv[1:]) or PARTS
    problems = check(argv[0], parts)
    for problem in problems:
        print(problem)
    print(f"{argv[0]}: {len(problems)} problem(s) in {', '.join(parts)}")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
