"""How a message or session reads as a memory, for the baselines (tokenizers: keme.text.tokens)."""

from __future__ import annotations

from keme.models import Message, Session


def message_text(message: Message) -> str:
    """How a message reads as a memory: the app name tells a system record apart from talk."""
    if message.role == "system" and message.app:
        return f"[{message.app}] {message.content}"
    return message.content


def session_text(session: Session) -> str:
    return "\n".join(f"{m.app or m.role}: {m.content}" for m in session.messages)
