"""Source findings: what is wrong with an imported question as its benchmark published it.

A public benchmark has label defects of its own (LoCoMo lists one question of
one conversation twice, once answerable and once adversarial; an evidence
string "D" names no turn). They are not tampering: refusing the dataset would
stop a researcher from evaluating the benchmark as published. So each imported
question (proof op `imported`) is checked here, and what is found is marked on
the item (`QAItem.flags`, "kind: detail"), counted in the manifest, left out of
the scores by default and named in the report. Integrity (schema, hashes,
references, paths) is another matter and still refuses (keme.validate).

The rules are the same at import (which writes the flags) and in
`keme validate` (which recomputes them and refuses flags that differ), so a
flag cannot be added or removed by hand. Synthesized questions are never
flagged: their defects are violations.
"""

from __future__ import annotations

import math
import re
from collections import Counter, defaultdict
from collections.abc import Iterable
from dataclasses import dataclass

from keme.models import QAItem, Session
from keme.text.normalize import norm_text
from keme.text.tokens import has_han, search_terms

KINDS = (
    "same_text_other_gold",
    "duplicate_question",
    "evidence_unresolved",
    "label_conflict",
    "empty_question",
    "empty_gold",
    "gold_not_stated",
)
"""Every kind of source finding, in report order."""

_NAN = frozenset({"nan", "none", "null", "n/a", "undefined"})
_STOP = frozenset(
    "a an the and or of to in on at for with by from as is are was were be been being it its this that "
    "these those he she they them his her their we our you your i me my mine not no yes do does did has "
    "have had will would can could should may might about into over after before than then so".split()
)
_MIN_LETTERS = 3  # shorter English words ("go", "up") say too little to tell a gold apart
_STEM = 5


@dataclass(frozen=True)
class Finding:
    """One thing wrong with one imported question."""

    item_id: str
    kind: str
    detail: str

    @property
    def flag(self) -> str:
        return f"{self.kind}: {self.detail}"


def imported(item: QAItem) -> bool:
    return item.proof.op == "imported"


def empty_gold(answer: str) -> bool:
    """An answer that says nothing: empty, blank, or a spreadsheet's NaN / None written as text."""
    text = answer.strip()
    if not text or text.casefold() in _NAN:
        return True
    try:
        return math.isnan(float(text))
    except ValueError:
        return False


def _gold_terms(answer: str) -> set[str]:
    """The words a gold must share with the conversation to be stated in it at all."""
    terms = set()
    for term in search_terms(answer):
        if has_han(term) or term.isdigit():
            terms.add(term)
        elif len(term) >= _MIN_LETTERS and term not in _STOP:
            terms.add(term)
    return terms


def _stems(term: str) -> set[str]:
    """Crude stems (the first five letters, with and without a plural s) so "painted" meets "painting",
    "trophies" "trophy" and "cats" "cat"."""
    if has_han(term) or term.isdigit():
        return {term}
    singular = term[:-1] if term.endswith("s") and len(term) > _MIN_LETTERS else term
    return {term[:_STEM], singular[:_STEM]}


def _prefixes(terms: Iterable[str]) -> set[str]:
    """Every stem a word of the conversation can meet: its own, and its shorter prefixes (so the gold "four"
    meets "fourth")."""
    out = set()
    for term in terms:
        if has_han(term) or term.isdigit():
            out.add(term)
        else:
            out.update(term[:n] for n in range(_MIN_LETTERS, _STEM + 1))
    return out


def _same_text_findings(items: list[QAItem]) -> list[Finding]:
    groups: dict[tuple[str, str], list[QAItem]] = defaultdict(list)
    for item in items:
        groups[(item.persona_id, norm_text(item.question))].append(item)
    out = []
    for group in groups.values():
        if len(group) < 2:
            continue
        golds = {(q.spec.kind == "abstain", norm_text(q.answer)) for q in group}
        if len(golds) > 1:
            for item in group:
                others = [q for q in group if q.id != item.id]
                said = "; ".join(f"{q.id} ({_gold_of(q)})" for q in others)
                out.append(Finding(item.id, "same_text_other_gold", f"also asked as {said}"))
            continue
        for item in group[1:]:
            out.append(Finding(item.id, "duplicate_question", f"repeats {group[0].id} word for word"))
    return out


def _gold_of(item: QAItem) -> str:
    return "abstain" if item.spec.kind == "abstain" else repr(item.answer[:60])


def source_findings(items: list[QAItem], sessions: list[Session]) -> list[Finding]:
    """Every source finding of the imported questions among `items`, in item order within each kind."""
    items = [q for q in items if imported(q)]
    if not items:
        return []
    vocabulary: dict[str, set[str]] = defaultdict(set)
    for session in sessions:
        for message in session.messages:
            text = " ".join([message.content, *message.captions])
            vocabulary[session.persona_id] |= _prefixes(search_terms(text))
    out = _same_text_findings(items)
    for item in items:
        unresolved = getattr(item.proof.args, "unresolved_evidence", None)
        if unresolved:
            shown = ", ".join(repr(e[:40]) for e in unresolved[:5])
            out.append(Finding(item.id, "evidence_unresolved", f"{shown}: no turn or session has that id"))
        fields = getattr(item.proof.args, "source_fields", None) or {}
        if getattr(item.proof.args, "category", None) == 5 and fields.get("answer") is not None:
            out.append(
                Finding(
                    item.id,
                    "label_conflict",
                    f"category 5 (nothing to answer) with answer {str(fields['answer'])[:60]!r} as well",
                )
            )
        if not item.question.strip():
            out.append(Finding(item.id, "empty_question", "the question text is empty"))
        if item.spec.kind == "abstain":
            continue
        if empty_gold(item.answer):
            out.append(Finding(item.id, "empty_gold", f"the gold answer is {item.answer!r}"))
            continue
        terms = _gold_terms(item.answer)
        stems = {stem for t in terms for stem in _stems(t)}
        if len(terms) == 1 and not stems & vocabulary[item.persona_id] and _extractive(item):
            out.append(
                Finding(
                    item.id, "gold_not_stated", f"no word of {item.answer[:60]!r} occurs in the conversation"
                )
            )
    order = {kind: i for i, kind in enumerate(KINDS)}
    position = {q.id: i for i, q in enumerate(items)}
    return sorted(out, key=lambda f: (order[f.kind], position[f.item_id]))


_COMPUTED = re.compile(r"^(temporal|multi_hop|knowledge_update|summarization|open_domain)")


def _extractive(item: QAItem) -> bool:
    """A question whose gold should be found in the text as said: not a date, count or inference (those are
    computed, and LoCoMo's open-domain golds are world knowledge). Only a gold of one content word is held
    to it: a longer one may paraphrase ("at an early age" for "when I was 10"), which a word check cannot
    tell from a gold the text never states."""
    return (
        item.spec.kind in ("entity", "set")
        and _COMPUTED.match(item.type) is None
        and item.type != "visual_reasoning"  # read off an image, which the text need not describe
    )


def flags_of(findings: list[Finding]) -> dict[str, list[str]]:
    """Item id -> its flags, in finding order."""
    out: dict[str, list[str]] = defaultdict(list)
    for finding in findings:
        out[finding.item_id].append(finding.flag)
    return dict(out)


def flag_items(items: list[QAItem], sessions: list[Session]) -> list[QAItem]:
    """`items` with each imported one's flags set to its source findings (other items unchanged)."""
    flags = flags_of(source_findings(items, sessions))
    return [
        q.model_copy(update={"flags": flags.get(q.id, [])})
        if imported(q) and q.flags != flags.get(q.id, [])
        else q
        for q in items
    ]


def finding_counts(items: list[QAItem]) -> dict[str, int]:
    """Flagged items by kind of finding (an item with two kinds counts under each), plus `flagged_items`."""
    kinds = Counter(flag.split(":", 1)[0] for q in items for flag in q.flags)
    counts = {kind: kinds[kind] for kind in KINDS if kinds[kind]}
    return {**counts, "flagged_items": sum(1 for q in items if q.flags)}
