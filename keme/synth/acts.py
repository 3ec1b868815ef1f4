"""Which reveal lines a session may say of a persona fact, by the speech act each line declares.

A fact is news once: a `tell` ("For future reference: I'm allergic to eggs") is said only while the fact
has not come up; a `request` tied to an occasion ("remind me to tell the new dentist ...") is asked once a
year; a `mention` ("my brother never remembers my eggs allergy") takes the fact as known, so it follows the
telling, and a mention said before is not said again. A line without an act is not restricted.
"""

from __future__ import annotations

from typing import Callable

from keme.text.resources import Exchange

Said = Callable[[Exchange], bool]


def speakable(options: tuple[Exchange, ...], told: bool, said: Said) -> tuple[Exchange, ...]:
    """The reveal `options` whose act holds now: `told` whether the fact came up in an earlier message,
    `said(ex)` whether the persona said `ex`'s user line before (in any wording)."""
    return tuple(ex for ex in options if _holds(ex, told, said))


def _holds(ex: Exchange, told: bool, said: Said) -> bool:
    if ex.act == "tell":
        return not told
    if ex.act == "request":
        return not said(ex)
    if ex.act == "mention":
        return told and not said(ex)
    return True
