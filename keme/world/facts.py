"""Stable facts: named quantities that hold for what they are about, not for one episode.

A store's return window is one number whatever episode mentions it; the blocks from home to the new
bakery are one number while the persona lives there; what the company canteen charges is one price for
the company. Their predicates keep their registered scope (the claim's subject), but the ledger holds
their value per persona and per the thing they are about (`holder`), so every episode says the same
value (keme.world.ledger.Ledger.recall).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping

# predicate -> what its value is about: an episode detail slot (`store`), a persona attribute at the
# session (`home.city`), or "" for the persona alone (an assistant's own rule of thumb)
STABLE_FACTS: dict[str, str] = {
    "return_window_days": "store",  # a store's return policy
    "bakery_blocks": "home.city",  # the bakery near home
    "bad_weather_days": "home.city",  # the city's climate
    "canteen_meal_price": "career.company",  # the company canteen's price
    "replace_age_years": "",  # the assistant's rule for replacing a device
}


def holder(predicate: str, params: Mapping[str, str], attribute: Callable[[str], str | None]) -> str | None:
    """The ledger scope a stable fact is held in (`store=Target`, `home.city=Austin`, `persona`), or None
    when `predicate` is no stable fact or the thing it is about is unknown in this session (then the
    predicate's own scope holds it)."""
    about = STABLE_FACTS.get(predicate)
    if about is None:
        return None
    if not about:
        return "persona"
    value = attribute(about) if "." in about else params.get(about)
    return f"{about}={value}" if value else None
