"""Every synthesized session is a conversation: `keme validate` refuses one without a message, and the
realizer never writes one in which the user says nothing (a hard-negative piece or a session back from
another format may be an assistant's turn alone, so validate does not judge that)."""

from __future__ import annotations

from datetime import datetime

import pytest
import yaml

from keme.models import Message, Session
from keme.synth.limits import parse_config
from keme.synth.pipeline import synthesize_persona
from keme.validate import check_sessions

AT = datetime(2026, 1, 12, 9, 56)


def _session(messages: list[Message], pattern: str = "family_call", anchor: str | None = None) -> Session:
    return Session(
        id="p01-s0005",
        persona_id="p01",
        event_id="p01-c01-e09",
        language="en",
        pattern=pattern,
        anchor_id=anchor,
        start=AT,
        end=AT,
        messages=messages,
    )


def _message(role: str, text: str, app: str | None = None) -> Message:
    return Message(id="p01-s0005-m01", role=role, app=app, content=text, timestamp=AT)


def test_a_session_without_a_message_is_refused():
    (found,) = check_sessions([_session([])], {})
    assert (found.check, found.where) == ("dialogue", "p01-s0005")
    assert found.message == "a session without a message"


def test_an_app_record_shared_without_a_word_is_a_session():
    record = _message("system", "Payment of $26 to SpotHero · Transport", app="Wallet")
    assert check_sessions([_session([record], "anchor_bill", anchor="p01-a0001")], {}) == []


def test_an_imported_session_is_judged_as_published():
    assert check_sessions([_session([], "locomo")], {}) == []


@pytest.mark.slow
def test_a_quick_call_whose_opening_beat_is_out_of_season_still_says_something():
    """3 personas x 24 months, seed 1: a quick family call on a plain January Monday kept only its opening
    beat, whose lines are all holiday lines, and was written with no message at all."""
    personas = [{"language": lang, "start": "2026-01-01", "months": 24} for lang in ("en", "zh", "en")]
    cfg = parse_config(yaml.safe_dump({"name": "long", "seed": 1, "personas": personas}, sort_keys=False))
    sessions = synthesize_persona(0, cfg).sessions
    silent = [s.id for s in sessions if s.anchor_id is None and not any(m.role == "user" for m in s.messages)]
    assert silent == []
