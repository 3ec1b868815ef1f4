"""The generator's side of a document record: what it holds, so talk about it says only that.

A document record keeps its rendered title, type, pages and summary, not the item it was drawn from. The
item is found again by its type and title (`item_of`); its declared `profile` and the record's length
give the features a line may presuppose (`features`, checked by keme.synth.presup against `presup: {doc:
}`), and the numbers its summary states are read back (`figures`) so that a line naming the same quantity
("signed within {num:14-30@sign_within_days} days") says the record's number, never a fresh draw.
The coherence checker reads the document on its own (keme.world.check.documents).
"""

from __future__ import annotations

import functools
import re

from keme.models import Anchor
from keme.models.anchor import DocumentRecord
from keme.text.resources import DocumentItem, Resources
from keme.text.template import Template, compile_template

MULTI_PAGES = 2  # "{pages} pages", "which pages matter": said of a record this long or longer
LONG_PAGES = 5  # "ugh, {pages} pages", "too tired to read it": a record this long or longer


@functools.cache
def _pattern(source: str) -> tuple[re.Pattern[str], tuple[tuple[str, str], ...]]:
    """A template as a regular expression over its rendering: each named num / money part a group, in
    order, with (group, predicate); any other slot matches any text."""
    template: Template = compile_template(source)
    pieces, groups = [], []
    for k, part in enumerate(template.parts):
        if part.kind == "text":
            pieces.append(re.escape(part.value))
        elif part.kind == "alt":
            pieces.append("(?:" + "|".join(re.escape(c) for c in part.choices) + ")")
        elif part.kind in ("num", "money") and part.predicate:
            pieces.append(rf"(?P<g{k}>[$¥]?\d[\d,]*(?:\.\d+)?)")
            groups.append((f"g{k}", part.predicate))
        elif part.kind == "fact":
            pieces.append(re.escape(part.value))
        else:
            pieces.append(".+?")
    return re.compile("^" + "".join(pieces) + "$", re.DOTALL), tuple(groups)


def item_of(record: DocumentRecord, res: Resources) -> DocumentItem | None:
    """The item `record` was drawn from: its type, and a title and summary its templates render."""
    for item in res.anchors.document.items:
        if item.doc_type != record.doc_type:
            continue
        if _pattern(item.title)[0].match(record.title) and _pattern(item.summary)[0].match(record.summary):
            return item
    return None


def features(anchor: Anchor | None, res: Resources) -> frozenset[str] | None:
    """What the session's document holds (its item's profile and its length), or None when the session
    has no document record."""
    if anchor is None or not isinstance(anchor.record, DocumentRecord):
        return None
    record = anchor.record
    item = item_of(record, res)
    found = set(item.profile) if item is not None else set()
    if record.pages >= MULTI_PAGES:
        found.add("multi")
    if record.pages >= LONG_PAGES:
        found.add("long")
    return frozenset(found)


def figures(anchor: Anchor | None, res: Resources) -> dict[str, str]:
    """Named quantity -> the canonical value the document's summary states (digits, no currency sign or
    thousands comma): the numbers a line about the record must repeat."""
    if anchor is None or not isinstance(anchor.record, DocumentRecord):
        return {}
    item = item_of(anchor.record, res)
    if item is None:
        return {}
    regex, groups = _pattern(item.summary)
    found = regex.match(anchor.record.summary)
    if found is None:
        return {}
    return {predicate: re.sub(r"[^\d.]", "", found.group(name)) for name, predicate in groups}
