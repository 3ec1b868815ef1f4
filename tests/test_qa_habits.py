"""A habit ("what time of day do I usually chat with you?", "what do I spend on most?") is asked only
where there is one: more than half of the period's sessions the user opened herself (or of its
payments) share the value, clearly ahead of the runner-up (keme.days.clear_leader)."""

from __future__ import annotations

import random
from collections import Counter
from datetime import date, datetime, timedelta
from types import SimpleNamespace

from keme.days import WAKING, clear_leader, steady_block
from keme.models import Message, Session
from keme.qa import phrasing
from keme.qa.generate.context import Gen
from keme.qa.generate.episode import _time_of_day

APRIL = (date(2026, 4, 1), date(2026, 4, 30))


def test_a_thin_plurality_is_no_habit():
    """13 of 30 chats in the evening (43 %), 1.44 times the mornings' 9: ahead, but not most of them."""
    assert clear_leader(Counter(evening=13, morning=9, afternoon=8)) is None


def test_a_majority_with_a_clear_lead_is_a_habit():
    assert clear_leader(Counter(evening=16, morning=8, afternoon=6)) == "evening"


def test_a_bare_majority_without_a_clear_lead_is_no_habit():
    """4 of 7 card payments against 3 in cash: more than half, but one payment from a tie."""
    assert clear_leader(Counter(card=4, cash=3)) is None


def test_half_exactly_is_no_majority():
    assert clear_leader(Counter(Groceries=6, Dining=2, Transport=2, Shopping=2)) is None


def _session(n: int, opened_at: datetime, by: str) -> Session:
    """A session opened by the user, or by an app's notification the user answers ten minutes later."""
    first = Message(
        id=f"p01-s{n:04d}-m01",
        role=by,
        content="hi",
        timestamp=opened_at,
        app="bill" if by == "system" else None,
    )
    reply = Message(
        id=f"p01-s{n:04d}-m02", role="user", content="ok", timestamp=opened_at + timedelta(minutes=10)
    )
    return Session(
        id=f"p01-s{n:04d}",
        persona_id="p01",
        event_id=f"p01-e{n:04d}",
        language="en",
        pattern="test",
        start=opened_at,
        end=reply.timestamp,
        messages=[first, reply],
    )


def _gen(sessions: list[Session]) -> Gen:
    persona = SimpleNamespace(id="p01", end=datetime(2026, 4, 30, 23, 0))
    world = SimpleNamespace(sessions=sessions, persona=persona, lang="en", chat_hours=WAKING)
    return Gen(world, phrasing.get("en"), random.Random(1), 0.3)  # type: ignore[arg-type]


def _april(hours: list[int], by: str, first: int = 0) -> list[Session]:
    return [_session(first + n, datetime(2026, 4, 1 + n, hour, 5), by) for n, hour in enumerate(hours)]


def test_no_time_of_day_question_where_the_users_own_sessions_split_evenly():
    """Her own chats: 4 mornings, 4 evenings; the 6 evening bill notifications she answered are the app's
    times, so the evening's 10 of 14 is no habit of hers."""
    own = _april([9, 9, 10, 10, 20, 20, 21, 21], "user")
    notified = _april([19, 19, 19, 20, 20, 20], "system", first=10)
    assert _time_of_day(_gen(own + notified), *APRIL, "p01-c01", "imp.time_of_day.month", month="April") == []


def test_a_time_of_day_question_where_most_of_her_own_sessions_share_the_block():
    own = _april([20, 21, 21, 22, 20, 9, 14], "user")
    [draft] = _time_of_day(_gen(own), *APRIL, "p01-c01", "imp.time_of_day.month", month="April")
    assert draft.spec.value == "evening"
    assert len(draft.proof.quotes) == 5  # every evening session she opened, quoted by its day


def test_no_time_of_day_question_where_the_habit_rests_on_our_border_between_blocks():
    """5 of 8 chats in the evening, but 4 of them at 18:05: with the border at 19:00, as many readers put it,
    the afternoon leads."""
    own = _april([18, 18, 18, 18, 21, 14, 15, 16], "user")
    assert _time_of_day(_gen(own), *APRIL, "p01-c01", "imp.time_of_day.month", month="April") == []


def test_no_time_of_day_question_where_counting_every_session_loses_the_lead():
    """Her own chats: 5 evenings of 7; the 6 morning sessions a bill notification opened make the mornings
    as many as the evenings to a reader counting every chat."""
    own = _april([20, 21, 21, 22, 20, 9, 14], "user")
    notified = _april([9, 9, 10, 10, 8, 8], "system", first=10)
    assert _time_of_day(_gen(own + notified), *APRIL, "p01-c01", "imp.time_of_day.month", month="April") == []


def test_no_time_of_day_question_where_one_evenings_many_chats_make_the_habit():
    """6 evening chats on two days against morning chats on four days: most chats, but not most days."""
    evenings = [_session(n, datetime(2026, 4, 2 + n // 3, 20 + n % 3, 5), "user") for n in range(6)]
    mornings = [_session(10 + n, datetime(2026, 4, 10 + n, 9, 5), "user") for n in range(4)]
    drafts = _time_of_day(
        _gen(evenings + mornings), *APRIL, "p01-c01", "imp.time_of_day.month", month="April"
    )
    assert drafts == []


def test_the_usual_block_steady_under_every_reading():
    times = [datetime(2026, 4, d, h, 5) for d, h in enumerate([20, 21, 21, 22, 20, 9, 14], start=1)]
    assert steady_block(times, times) == "evening"
