"""Strict `{slot}` filling for phrase templates (questions, answers, screen captions and fillers).

A slot the caller does not provide is an error, never a silent blank; it lives here, below keme.qa and
keme.omni, because both fill templates from keme/text/<lang>/.
"""

from __future__ import annotations

from keme.errors import KemeError


class PhrasingError(KemeError, KeyError):
    """A template uses a slot its caller does not provide: fix the template under keme/text/<lang>/.

    Also a KeyError (a missing key), which is what it was before it joined the KemeError tree.
    """

    def __str__(self) -> str:  # the message as written, not KeyError's quoted repr
        return str(self.args[0]) if self.args else ""


class _Slots(dict):
    def __init__(self, template: str, values: dict[str, object]):
        super().__init__({k: str(v) for k, v in values.items()})
        self.template = template

    def __missing__(self, key: str) -> str:
        raise PhrasingError(
            f"template {self.template!r} uses slot {{{key}}}, which this question does not provide"
        )


def fill(template: str, slots: dict[str, object]) -> str:
    """Fill `{slot}`s; a slot the caller does not provide is an error, never a silent blank."""
    return template.format_map(_Slots(template, slots))
