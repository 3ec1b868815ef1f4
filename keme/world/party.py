"""An episode's party agrees with the app records it holds.

App records are drawn before any event (keme.prior.anchors) and never change, so a note that says
"Cabin $884 total, split 4 ways" is fixed before the planner knows which occasion it will sit in. The
occasion therefore takes its head count from the record: a social episode whose days hold a note naming a
split has that many people, and its dinner bill is that many times the per-head budget. The objects rule
(keme.world.check.objects) compares the two.
"""

from __future__ import annotations

from collections.abc import Iterable
from datetime import date
from decimal import Decimal, InvalidOperation

from keme.models import Anchor
from keme.models.anchor import NoteRecord
from keme.text import lang as fmt
from keme.world.cues import Cues


def record_party(anchors: Iterable[Anchor], first: date, last: date, cues: Cues) -> int | None:
    """The head count the first note dated in [first, last] states ("split 4 ways"), or None."""
    for anchor in sorted(anchors, key=lambda a: a.timestamp):
        if not first <= anchor.timestamp.date() <= last or not isinstance(anchor.record, NoteRecord):
            continue
        found = cues.search(cues.split, anchor.record.body)
        if found is not None and (people := cues.number(found.group("n"))) is not None:
            return people
    return None


def with_party(params: dict[str, str], people: int, lang: str) -> dict[str, str]:
    """`params` with `people` at the table and the dinner bill to match (people × the per-head budget)."""
    out = dict(params) | {"party_size": str(people)}
    per_head = _amount(params.get("budget_per_person", ""))
    if per_head is not None and "dinner_total" in params:
        out["dinner_total"] = fmt.format_money(int(per_head * people), lang)
    return out


def _amount(text: str) -> Decimal | None:
    try:
        return Decimal("".join(c for c in text if c.isdigit() or c == "."))
    except InvalidOperation:
        return None
