"""Whether a generalization's situation holds for the persona when it is asked: a playlist "for my drive"
is asked only of someone who drives, a walk with the dog only of someone who has one.

The chooser (keme.qa.generate.persona.generalizations) asks this and nothing else about a situation's
presuppositions, so what a situation takes for granted is declared once, next to its text
(`presup:` in keme/text/<lang>/questions.yaml), and judged here against the persona's attributes.
"""

from __future__ import annotations

from datetime import datetime

from keme.models import Persona
from keme.models.attributes import attribute_key
from keme.qa.phrasing import Situation


def holds(situation: Situation, persona: Persona, when: datetime) -> bool:
    """Whether the persona holds, at `when`, every state and number the situation presupposes (one it
    does not hold at all, such as a pet before there is one, fails it)."""
    presup = situation.presumes
    if presup.state is not None:
        key, values = presup.state
        if _held(persona, key, when) not in values:
            return False
    if presup.value is not None:
        predicate, window = presup.value
        number = _held(persona, attribute_key(predicate) or "", when)
        if number is None or not number.isdigit() or not window.holds(int(number)):
            return False
    return True


def _held(persona: Persona, key: str, when: datetime) -> str | None:
    """The value the persona holds for attribute `key` at `when`; None where it has none (no pet yet)."""
    attr = next((a for a in persona.attributes() if a.key == key), None)
    return attr.value_at(when) if attr is not None else None
