"""Text helpers shared by the lexical baselines."""

from __future__ import annotations

import re

from keme.models import Message, Session

_WORD = re.compile(r"[a-z0-9_]+|[^\W\d_a-z]+", re.UNICODE)
_CJK = re.compile(r"[\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff]+")


def tokenize(text: str) -> list[str]:
    """Lowercase words and numbers; CJK runs split into character bigrams (a lone character stays)."""
    out: list[str] = []
    lowered = text.casefold()
    position = 0
    for match in _CJK.finditer(lowered):
        out += _WORD.findall(lowered[position : match.start()])
        run = match.group(0)
        out += [run] if len(run) == 1 else [run[i : i + 2] for i in range(len(run) - 1)]
        position = match.end()
    out += _WORD.findall(lowered[position:])
    return out


def message_text(message: Message) -> str:
    """How a message reads as a memory: the app name tells a system record apart from talk."""
    if message.role == "system" and message.app:
        return f"[{message.app}] {message.content}"
    return message.content


def session_text(session: Session) -> str:
    return "\n".join(f"{m.app or m.role}: {m.content}" for m in session.messages)
