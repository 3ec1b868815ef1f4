"""A tiny, fast template language for procedural dialogue.

Syntax inside a line of text:
  {career.company}    persona attribute value at the session time (the message becomes its evidence)
  {old:career.company} the value before the change being realized
  {destination}       an event or session slot
  {pool.dishes}       one random item of a pool; {pool3.dishes} three distinct items, joined
  {num:2-5}           random integer; {money:20-80} a random whole amount in the persona's currency
  {num:2-5@party_size} a named quantity: the world remembers it (see Context.recall), so every line that
                      names it says the same value; {money:..@p} and {pool.x@p} likewise
  {fact:20@checked_bag_kg} a named quantity whose value the line fixes (general knowledge, a set plan):
                      said as written ("10,000", "38.5"), recorded as a claim like any other
  {sunny|rainy|grey}  inline alternation

Templates are compiled once; rendering reports each value it says (`on_said`) and which persona
attributes a line used, so evidence links and claims are exact rather than guessed.
"""

from __future__ import annotations

import random
import re
from dataclasses import dataclass, field
from typing import Callable

from keme.errors import KemeError
from keme.text import lang as fmt

_BRACE = re.compile(r"\{([^{}]*)\}")
_PERSONA = re.compile(r"^(old:)?([a-z_]+\.[a-z_]+)$")
_PREDICATE = r"(?:@([a-z_][a-z_0-9.]*))?"
_POOL = re.compile(r"^pool(\d*)\.([a-z_0-9]+)" + _PREDICATE + "$")
_RANGE = re.compile(r"^(num|money):(\d+)-(\d+)" + _PREDICATE + "$")
_FACT = re.compile(r"^fact:(\d{1,3}(?:,\d{3})+|\d+(?:\.\d+)?)@([a-z_][a-z_0-9.]*)$")
_NAME = re.compile(r"^[a-z_]+$")


class TemplateError(KemeError, ValueError):
    """A dialogue template line does not compile: fix the line in keme/text/<lang>/ (syntax: this module's
    docstring)."""


@dataclass(frozen=True)
class Part:
    kind: str  # text | persona | old | slot | pool | num | money | fact | alt
    value: str = ""  # text, attribute key, slot or pool name; a fact's value as written
    count: int = 1
    low: int = 0
    high: int = 0
    choices: tuple[str, ...] = ()
    predicate: str = ""  # the named quantity a num / money / pool part says ("" for a free draw)


@dataclass(frozen=True)
class Template:
    source: str
    parts: tuple[Part, ...]
    persona_keys: frozenset[str] = field(default_factory=frozenset)
    old_keys: frozenset[str] = field(default_factory=frozenset)
    slots: frozenset[str] = field(default_factory=frozenset)
    pools: frozenset[str] = field(default_factory=frozenset)
    predicates: frozenset[str] = field(default_factory=frozenset)


def compile_template(source: str) -> Template:
    parts: list[Part] = []
    persona_keys: set[str] = set()
    old_keys: set[str] = set()
    slots: set[str] = set()
    pools: set[str] = set()
    predicates: set[str] = set()
    pos = 0
    for match in _BRACE.finditer(source):
        if match.start() > pos:
            parts.append(Part("text", source[pos : match.start()]))
        pos = match.end()
        body = match.group(1)
        if "|" in body:
            parts.append(Part("alt", choices=tuple(body.split("|"))))
        elif m := _POOL.match(body):
            pools.add(m.group(2))
            if m.group(3):
                predicates.add(m.group(3))
            parts.append(Part("pool", m.group(2), count=int(m.group(1) or 1), predicate=m.group(3) or ""))
        elif m := _PERSONA.match(body):
            if m.group(1):
                old_keys.add(m.group(2))
                parts.append(Part("old", m.group(2)))
            else:
                persona_keys.add(m.group(2))
                parts.append(Part("persona", m.group(2)))
        elif m := _RANGE.match(body):
            low, high = int(m.group(2)), int(m.group(3))
            if low > high:
                raise TemplateError(f"empty range {{{body}}} in {source!r}")
            if m.group(4):
                predicates.add(m.group(4))
            parts.append(Part(m.group(1), low=low, high=high, predicate=m.group(4) or ""))
        elif m := _FACT.match(body):
            predicates.add(m.group(2))
            parts.append(Part("fact", m.group(1), predicate=m.group(2)))
        elif _NAME.match(body):
            slots.add(body)
            parts.append(Part("slot", body))
        else:
            raise TemplateError(f"cannot parse {{{body}}} in {source!r}")
    if "{" in source[pos:] or "}" in source[pos:]:
        raise TemplateError(f"unbalanced brace in {source!r}")
    if pos < len(source):
        parts.append(Part("text", source[pos:]))
    return Template(
        source,
        tuple(parts),
        frozenset(persona_keys),
        frozenset(old_keys),
        frozenset(slots),
        frozenset(pools),
        frozenset(predicates),
    )


@dataclass
class Context:
    """Everything a template may draw on when rendered for one session."""

    lang: str
    rng: random.Random
    persona: dict[str, str]
    old: dict[str, str] = field(default_factory=dict)
    slots: dict[str, str] = field(default_factory=dict)
    pools: dict[str, list[str]] = field(default_factory=dict)
    # recall(predicate, draw) -> the canonical value the world holds for a named quantity, drawing it
    # (draw()) the first time; None: every draw is fresh
    recall: Callable[[str, Callable[[], str]], str] | None = None
    # bound(predicate, low, high) -> the range a named amount is drawn from (keme.world.prices: the line's
    # range kept inside its price category's); None: the line's own range
    bound: Callable[[str, int, int], tuple[int, int]] | None = None

    def can_render(self, template: Template) -> bool:
        return (
            template.persona_keys <= self.persona.keys()
            and template.old_keys <= self.old.keys()
            and template.slots <= self.slots.keys()
        )


Said = Callable[[str, str, str, str], None]  # (kind, name, canonical value, text as said)


def render(
    template: Template,
    ctx: Context,
    on_persona: Callable[[str], None] | None = None,
    on_said: Said | None = None,
) -> str:
    """Render `template`; `on_persona(key)` is called for each persona value that lands in the text, and
    `on_said(kind, name, value, text)` for every value at all (persona, old, slot, pool, num, money, fact)."""
    out: list[str] = []
    for part in template.parts:
        kind = part.kind
        if kind == "text":
            out.append(part.value)
            continue
        if kind == "alt":
            out.append(ctx.rng.choice(part.choices))
            continue
        if kind == "persona":
            value = text = ctx.persona[part.value]
            if on_persona:
                on_persona(part.value)
        elif kind == "old":
            value = text = ctx.old[part.value]
        elif kind == "slot":
            value = text = ctx.slots[part.value]
        elif kind == "pool":
            value = text = _named(part, ctx, lambda: _pool(part, ctx))
        elif kind == "fact":
            value = text = _named(part, ctx, lambda: part.value)
        else:  # num, money
            value = _named(part, ctx, lambda: str(ctx.rng.randint(*_range(part, ctx))))
            text = value if kind == "num" else fmt.format_money(int(value), ctx.lang)
        if ctx.lang == "en" and out:
            text = after_determiner(out[-1], text)
            out[-1] = agree_article(out[-1], text)
        out.append(text)
        if on_said:
            on_said(kind, part.predicate or part.value, value, text)
    return "".join(out)


_ARTICLE = re.compile(r"(^|[^\w'])([Aa])(n?) $")
# words spelled with a vowel but said with a consonant sound ("a unicorn", "a one-off"), and the reverse
_CONSONANT_SOUND = re.compile(r"(?i)^(uni|use|usu|uti|eu|ewe|one\b|once\b|u\.s\.)")
_VOWEL_SOUND = re.compile(r"(?i)^(hour|honest|honou?r|heir|8|11|18|80\d?\b|[aeiou])")


# determiners a value's own article gives way to ("the {gift}" of "a houseplant": "the houseplant"); not
# "her" or "that", which are as often a pronoun or a conjunction ("I got her {gift}", "I think that {x}")
_DETERMINER = re.compile(r"(?i)(^|[^\w'])(the|an?|my|your|his|our|their|this|these|those) $")
_OWN_ARTICLE = re.compile(r"(?i)^(the|an?) (?=\w)")


def after_determiner(before: str, value: str) -> str:
    """`value` without its own leading article where `before` ends with a determiner: pools give some
    values with the article English needs alone ("a houseplant", "the farmers market"), and a template
    that says "the {gift}" would otherwise say "the a houseplant"."""
    if _DETERMINER.search(before) is None:
        return value
    return _OWN_ARTICLE.sub("", value, count=1)


def agree_article(before: str, word: str) -> str:
    """`before` with its closing English article ("a "/"an ") fitted to the sound `word` starts with: a
    slot's value is only known when the line is rendered, so "a {value}" cannot be right for every value
    ("an egg", "a peanut")."""
    found = _ARTICLE.search(before)
    if found is None or not word:
        return before
    head = re.split(r"[\s-]", word, maxsplit=1)[0]
    if len(head) > 1 and head.isupper():  # an initialism is read letter by letter: "an MBA", "a UX role"
        vowel = head[0] in "AEFHILMNORSX"
    else:
        vowel = bool(_VOWEL_SOUND.match(word)) and not _CONSONANT_SOUND.match(word)
    article = found.group(2) + ("n" if vowel else "")
    return before[: found.start(2)] + article + " "


def _named(part: Part, ctx: Context, draw: Callable[[], str]) -> str:
    if part.predicate and ctx.recall is not None:
        return ctx.recall(part.predicate, draw)
    return draw()


def _range(part: Part, ctx: Context) -> tuple[int, int]:
    if part.kind == "money" and part.predicate and ctx.bound is not None:
        return ctx.bound(part.predicate, part.low, part.high)
    return part.low, part.high


def _pool(part: Part, ctx: Context) -> str:
    items = ctx.pools[part.value]
    if part.count == 1:
        return ctx.rng.choice(items)
    return fmt.join_list(ctx.rng.sample(items, min(part.count, len(items))), ctx.lang)
