"""The one reader of dates and durations in text (keme.text.dates), one behaviour per test."""

from __future__ import annotations

from datetime import date, datetime

import pytest

from keme.text.dates import dates_in, parse_display_date, parse_duration, strip_dates


@pytest.mark.parametrize(
    "text",
    ["March 4", "Mar 4", "Mar. 4th", "4 March", "4th of March", "3月4日", "3月4号", "2026-03-04", "3/4"],
)
def test_every_written_form_of_a_date_is_read(text):
    assert dates_in(f"it was on {text}, I think", 2026) == [date(2026, 3, 4)]


def test_a_year_written_with_the_date_wins_over_the_default():
    assert dates_in("Mar 4, 2025", 2026) == [date(2025, 3, 4)]
    assert dates_in("2025年3月4日", 2026) == [date(2025, 3, 4)]
    assert dates_in("3/4/25", 2026) == [date(2025, 3, 4)]


def test_a_day_that_is_not_in_the_calendar_is_no_date():
    assert dates_in("February 30", 2026) == []
    assert dates_in("2026-13-01", 2026) == []


def test_a_date_written_months_before_it_was_sent_is_next_year_s():
    assert parse_display_date("on January 3", datetime(2026, 12, 20, 9)) == date(2027, 1, 3)
    assert parse_display_date("on December 3", datetime(2026, 12, 20, 9)) == date(2026, 12, 3)
    assert parse_display_date("no date here", datetime(2026, 12, 20, 9)) is None


@pytest.mark.parametrize(
    ("text", "seconds"),
    [("2 min 5 s", 125), ("2 min", 120), ("45 s", 45), ("2分5秒", 125), ("3分", 180), ("30秒", 30)],
)
def test_a_duration_is_read_in_seconds(text, seconds):
    assert parse_duration(f"the memo runs {text}") == seconds


def test_text_without_a_duration_has_none():
    assert parse_duration("no length given") is None


def test_stripping_dates_leaves_the_amounts():
    assert "12" not in strip_dates("paid 30 on March 12")
    assert "30" in strip_dates("paid 30 on March 12")
    assert strip_dates("3月12日花了30元").strip().startswith("花了30")
    assert "2026" not in strip_dates("in March 2026 it cost 5")
