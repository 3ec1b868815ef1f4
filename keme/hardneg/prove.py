"""The gold must still be the only right answer once distractors surround the evidence.

Two checks, each written against what the data says rather than against how a distractor was made:

- the ledger proof (keme datasets): the question's queries, resolved over every claim of the hard
  trajectory, give exactly the gold, and no record title it names is shared by another record;
- the rule check (any dataset, the only one imported free text allows): no distractor states the gold
  answer, normalised, as a whole phrase. An item whose gold is too short or too common to look for
  ("yes", "3") cannot be checked this way and is left out of imported datasets.
"""

from __future__ import annotations

from keme.models import QAItem
from keme.qa.resolve import Ledger, record_titles, shared_title, uniqueness
from keme.text.normalize import norm_text
from keme.text.tokens import has_han

UNCHECKABLE_KINDS = ("yes_no", "abstain")


def gold_forms(item: QAItem) -> list[str]:
    """The normalised phrases a statement of the gold would contain."""
    spec = item.spec
    if spec.kind in UNCHECKABLE_KINDS:
        return []
    forms: list[str] = []
    if spec.kind == "choice":
        forms.append(spec.option_value or "")
        letters = "ABCDEFGHIJ"
        if spec.value and spec.value in letters and letters.index(spec.value) < len(item.options):
            forms.append(item.options[letters.index(spec.value)])
    elif spec.kind == "set" or (spec.kind == "free" and spec.items):
        forms += spec.items
    else:
        forms += [spec.value or item.answer, *spec.aliases]
    if spec.kind != "free" and len(item.answer.split()) <= 6:
        forms.append(item.answer)
    return [f for f in dict.fromkeys(norm_text(f) for f in forms) if _specific(f)]


def _specific(form: str) -> bool:
    """Long enough that finding it in a distractor means the distractor says it."""
    return len(form) >= (2 if has_han(form) else 3)


def checkable(item: QAItem) -> bool:
    """Whether the rule check can tell a distractor that states this item's gold."""
    return bool(gold_forms(item))


def states(text: str, forms: list[str]) -> str | None:
    """The first gold phrase `text` states as a whole phrase (None when it states none)."""
    haystack = f" {norm_text(text)} "
    for form in forms:
        needle = form if has_han(form) else f" {form} "
        if needle in haystack:
            return form
    return None


def ledger_problem(item: QAItem, ledger: Ledger) -> str | None:
    """Why the item does not have exactly its gold as answer over this ledger (None: it does)."""
    problem = uniqueness(item, ledger)
    if problem is not None:
        return problem
    shared = shared_title(item.question, item.asked_at, record_titles(ledger.claims))
    return f"shared title: {shared}" if shared else None
