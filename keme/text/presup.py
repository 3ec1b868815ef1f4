"""What a line presupposes, in typed form: the `presup:` declaration of a pattern line.

A line says things (its claims, `says:`) and takes things for granted: that an event has happened or is
still ahead, how many days away a named date is, which state the persona is in, the part of day it is
said in, and where in the session's order an item stands. The declaration is written next to the line
(`presup: {part: night, date: "deadline ..0"}`); the realizer draws a line only where it holds and the
checker (keme.world.check.presup) re-checks it against the world the dataset records. This module only
reads and validates the declaration: each side evaluates it on its own.

Keys (every value a string, like `says:`):
- `part`: the part of day the line is said in (morning | noon | afternoon | evening | night | day |
  waking | any: a word relative only to the moment of speaking, reviewed to need nothing else).
- `months`: "11,12": the months of the year the line is said in (a holiday party "next Friday").
- `happened` / `planned` / `not_happened`: an event kind (an episode or moment kind, or a change such as
  `relocate`) of the persona that started before the message / starts after it / has not started yet.
- `date`: "SLOT A..B": the date the episode detail SLOT names is A to B days from the message's day
  (either end may be left open: "deadline ..0" = today or past, "start_date 1.." = still ahead).
- `ago`: "KIND A..B": the latest event of KIND began A to B days before the message's day.
- `state`: "attribute=value": the persona holds the value then (`work.work_mode=office`); "a|b|c" for
  any of several values ("单程…换乘还要走好远" takes a commute by train, bus or shuttle for granted).
- `value`: "PREDICATE A..B": the persona's own number for a routine predicate (`commute_minutes`,
  `training_per_week`: keme.models.attributes) is A to B then: a line whose words judge it ("一周就{n}次，
  还经常偷懒", "I'm so over it") is said only of a number it fits.
- `since`: "A..B": the session's own episode (a project, a trip, an illness) began A to B days before the
  message's day ("these last few weeks" of a project begun eight days ago is not said).
- `workday`: "N": the day N days from the message's day is a workday where the persona lives ("wake me half
  an hour early tomorrow" to beat the rush says tomorrow is one).
- `item`: the stage of the session's item the line states (ordered < delivered < unboxed < in_use): a
  session never goes back a stage, never says an item arrived twice, and an item ordered in a session
  is not delivered or used in the same session.
- `doc`: "deadline,sign" / "!deadline": what the session's document (an app record of type document)
  holds, or with `!`, does not hold: the features of its item's `profile` (anchors.yaml, DOC_FEATURES)
  and of its length (`multi`: two pages or more, `long`: five or more). "Do I need to sign it?" answered
  "Yes, by the date in it" is said only of a document to sign, "Nothing to sign" only of one without.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from keme.errors import KemeError
from keme.models.attributes import BY_KEY, attribute_key

# hours each part of day covers, [start, end) on a 24-hour clock; night wraps past midnight
PARTS: dict[str, tuple[int, int]] = {
    "morning": (5, 12),
    "noon": (11, 14),
    "afternoon": (12, 18),
    "evening": (17, 24),
    "night": (21, 5),
    "day": (7, 20),
    "waking": (6, 23),  # "tonight", "tomorrow": the rest of a waking day, not 3 a.m.
    "any": (0, 24),  # a time word that counts only from the moment it is said: reviewed, holds always
}
STAGES = ("ordered", "delivered", "unboxed", "in_use")
# what a document may hold (anchors.yaml `profile`): its terms, what it asks of the reader, its kind
DOC_FEATURES = (
    "deadline",  # a date or time limit the reader must act by (sign within N days, a payment due)
    "sign",  # the reader signs it (or its renewal) and sends it back
    "legal",  # contract language: clauses, terms, conditions
    "money",  # amounts the reader should check
    "expiry",  # cover or validity that ends (a warranty, a policy, a passport)
    "followup",  # a recheck or upkeep it recommends (a lab report, a manual)
    "rent",  # a home lease
    "payroll",  # pay: a pay stub
    "tax",  # a tax form or tax result
    "coverage",  # insurance or a warranty: what is covered
    "medical",  # results or records of the reader's health
    "bill",  # a statement with a payment to make
)
DOC_LENGTHS = ("multi", "long")  # two pages or more, five or more: read from the record itself
KEYS = (
    "part",
    "months",
    "happened",
    "planned",
    "not_happened",
    "date",
    "ago",
    "state",
    "value",
    "since",
    "workday",
    "item",
    "doc",
)
PERSONA_KEYS = ("state", "value")  # what the persona holds: all a question (no session) may presuppose
_WINDOW = re.compile(r"^\s*(-?\d+)?\s*\.\.\s*(-?\d+)?\s*$")


class PresupError(KemeError, ValueError):
    """A `presup:` declaration is malformed: see keme/text/presup.py for its keys and value forms."""


@dataclass(frozen=True)
class Window:
    """Days from the message's day: `lo` to `hi` inclusive, None for an open end."""

    lo: int | None
    hi: int | None

    def holds(self, days: int) -> bool:
        return (self.lo is None or days >= self.lo) and (self.hi is None or days <= self.hi)


@dataclass(frozen=True)
class Presup:
    """One line's declaration, parsed."""

    part: str | None = None
    months: frozenset[int] = frozenset()
    happened: str | None = None
    planned: str | None = None
    not_happened: str | None = None
    date: tuple[str, Window] | None = None
    ago: tuple[str, Window] | None = None
    state: tuple[str, frozenset[str]] | None = None
    value: tuple[str, Window] | None = None
    since: Window | None = None
    workday: int | None = None
    item: str | None = None
    doc: frozenset[str] = frozenset()  # features the document holds; "!x": one it does not hold

    @property
    def empty(self) -> bool:
        return self == Presup()


def window(text: str) -> Window:
    found = _WINDOW.match(text)
    if found is None or (found.group(1) is None and found.group(2) is None):
        raise PresupError(f"{text!r}: expected a day window like '1..3', '..0' or '1..'")
    lo, hi = (int(g) if g is not None else None for g in found.groups())
    if lo is not None and hi is not None and lo > hi:
        raise PresupError(f"{text!r}: empty day window")
    return Window(lo, hi)


def _named_window(text: str) -> tuple[str, Window]:
    name, _, rest = text.strip().partition(" ")
    if not name or not rest:
        raise PresupError(f"{text!r}: expected 'NAME A..B'")
    return name, window(rest)


def parse(decl: dict[str, str] | tuple[tuple[str, str], ...]) -> Presup:
    """The typed declaration of `decl` (the YAML mapping); PresupError names a bad key or value."""
    items = dict(decl)
    unknown = sorted(set(items) - set(KEYS))
    if unknown:
        raise PresupError(f"unknown presup key(s) {unknown}; known: {', '.join(KEYS)}")
    part = items.get("part")
    if part is not None and part not in PARTS:
        raise PresupError(f"part {part!r}: one of {', '.join(PARTS)}")
    item = items.get("item")
    if item is not None and item not in STAGES:
        raise PresupError(f"item {item!r}: one of {', '.join(STAGES)}")
    state = None
    if "state" in items:
        key, sep, held = items["state"].partition("=")
        if not sep or "." not in key or not held:
            raise PresupError(f"state {items['state']!r}: expected 'attribute.key=value'")
        values = frozenset(v.strip() for v in held.split("|") if v.strip())
        if key.strip() not in BY_KEY or not values:
            raise PresupError(f"state {items['state']!r}: an attribute of keme.models.attributes and a value")
        state = (key.strip(), values)
    workday = items.get("workday")
    if workday is not None and re.fullmatch(r"\s*-?\d+\s*", workday) is None:
        raise PresupError(f"workday {workday!r}: expected a day offset like '1'")
    doc = frozenset(f.strip() for f in items.get("doc", "").split(",") if f.strip())
    bad = sorted(f for f in doc if f.lstrip("!") not in DOC_FEATURES + DOC_LENGTHS)
    if bad:
        raise PresupError(f"doc {bad}: features of {', '.join(DOC_FEATURES + DOC_LENGTHS)}, '!' for not")
    value = _named_window(items["value"]) if "value" in items else None
    if value is not None and attribute_key(value[0]) is None:
        raise PresupError(f"value {items['value']!r}: {value[0]!r} is no attribute's predicate")
    try:
        months = frozenset(int(m) for m in items.get("months", "").split(",") if m.strip())
    except ValueError as exc:
        raise PresupError(f"months {items['months']!r}: expected month numbers like '11,12'") from exc
    if any(not 1 <= m <= 12 for m in months):
        raise PresupError(f"months {items['months']!r}: months are 1..12")
    return Presup(
        part=part,
        months=months,
        happened=items.get("happened"),
        planned=items.get("planned"),
        not_happened=items.get("not_happened"),
        date=_named_window(items["date"]) if "date" in items else None,
        ago=_named_window(items["ago"]) if "ago" in items else None,
        state=state,
        value=value,
        since=window(items["since"]) if "since" in items else None,
        workday=int(workday) if workday is not None else None,
        item=item,
        doc=doc,
    )


def in_part(part: str, hour: int) -> bool:
    """Whether `hour` falls in the part of day."""
    start, end = PARTS[part]
    return start <= hour < end if start <= end else hour >= start or hour < end
