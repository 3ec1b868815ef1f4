"""What the world allows a line to state: a check on the facts an exchange declares (`says:` in the
pattern YAML) against the session's app record and the catalog, so a line that would contradict the
world is never drawn (a hospital bill "split with a friend")."""

from __future__ import annotations

from keme.models import Anchor
from keme.world.catalog import Catalog


def allows(says: tuple[tuple[str, str], ...], anchor: Anchor | None, catalog: Catalog) -> bool:
    """Whether a line stating `says` fits the session's record: a charge is shared only when its
    category can be split (catalog `shareable`), a treat only when its category can be one (`treat`),
    paid in person only at a merchant one goes to (`in_person`), bought only when it is not a bill paid on a
    schedule (`recurring`); all of them are only said of a bill."""
    for predicate, value in says:
        if predicate not in ("purpose", "treat", "paid_in_person", "bought"):
            continue
        if anchor is None or anchor.record.kind != "bill":
            return False
        if predicate == "treat":  # "worth it", "开心就好": a dinner or a show, not a broadband bill
            kind = catalog.category(anchor.record.category)
            if kind is None or not kind.treat:
                return False
            continue
        if predicate == "bought":  # "what did I buy?": goods or a meal, not a phone bill
            kind = catalog.category(anchor.record.category)
            if kind is None or kind.recurring:
                return False
            continue
        if predicate == "paid_in_person":  # "我是不是去得太勤了": a place one goes to, not an app
            if not catalog.in_person(anchor.record.merchant):
                return False
            continue
        if value == "shared":
            category = next((c for c in catalog.categories if c.name == anchor.record.category), None)
            if category is None or not category.shareable:
                return False
    return True
