"""A question is one the persona asks her assistant, so it is asked in her chat hours (keme.qa.draft):
never between midnight and seven, mid-trajectory or after it."""

from __future__ import annotations

import random
from datetime import datetime, time
from types import SimpleNamespace

from keme.qa.draft import ask_time, final_time, waking_spans

HOURS = (time(8, 15), time(22, 40))  # a persona who chats from 08:15 to 22:40


def _world(hours: tuple[time, time] = HOURS) -> SimpleNamespace:
    return SimpleNamespace(persona=SimpleNamespace(end=datetime(2026, 5, 31, 23, 0)), chat_hours=hours)


def test_the_night_is_cut_out_of_the_time_a_question_may_be_asked_in():
    spans = waking_spans(datetime(2026, 4, 3, 21, 30), datetime(2026, 4, 4, 10, 0), HOURS)
    assert spans == [
        (datetime(2026, 4, 3, 21, 30), datetime(2026, 4, 3, 22, 40)),
        (datetime(2026, 4, 4, 8, 15), datetime(2026, 4, 4, 10, 0)),
    ]


def test_a_mid_trajectory_question_is_never_asked_at_night():
    rng = random.Random(5)
    evidence = datetime(2026, 4, 3, 23, 10)  # the last chat it rests on, late at night
    asked = [ask_time(rng, _world(), evidence, mid_share=1.0) for _ in range(500)]
    assert all(a is not None and HOURS[0] <= a.time() <= HOURS[1] for a in asked)
    assert min(asked) >= datetime(2026, 4, 4, 8, 15)  # the next morning at the earliest


def test_a_question_due_before_the_answer_changes_waits_for_the_morning_or_is_not_asked():
    """Evidence at 22:00, the value changes at 06:00: the hour after it and before the change is all
    night but 22:40's forty minutes, so the question falls in them."""
    rng = random.Random(2)
    for _ in range(200):
        asked = ask_time(rng, _world(), datetime(2026, 4, 3, 21, 0), 1.0, until=datetime(2026, 4, 4, 6, 0))
        assert asked is not None and datetime(2026, 4, 3, 22, 0) <= asked <= datetime(2026, 4, 3, 22, 40)
    assert ask_time(rng, _world(), datetime(2026, 4, 3, 22, 0), 1.0, until=datetime(2026, 4, 4, 6, 0)) is None


def test_the_final_questions_are_asked_the_evening_after_the_trajectory():
    assert final_time(_world()) == datetime(2026, 6, 1, 20, 0)


def test_the_final_questions_of_an_early_sleeper_are_asked_before_she_stops_chatting():
    assert final_time(_world((time(7, 0), time(19, 30)))) == datetime(2026, 6, 1, 19, 30)
