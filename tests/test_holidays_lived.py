"""Holidays are lived on their real dates (keme.synth.planner, family_call lines): a holiday's days off get a
family episode that knows the holiday and its first day, and its lines say the days before, the day itself
or the days after only then; a tour never takes the holidays spent with family."""

from __future__ import annotations

from datetime import date, datetime

import pytest

from keme.models import Attribute, AttributeVersion, Persona
from keme.synth.planner import _family_time, _lived_holiday
from keme.synth.presup import Moment, holds
from keme.text import resources
from keme.world.places import TripSpan


def _persona(lang: str) -> Persona:
    company = Attribute(
        key="career.company",
        mutable=True,
        versions=[AttributeVersion(value="Saltbox", valid_from=datetime(2026, 1, 1), evidence=[])],
    )
    return Persona(
        id="p01",
        name="Carlos Wilson" if lang == "en" else "林晓",
        language=lang,
        country="US" if lang == "en" else "CN",
        start=datetime(2026, 1, 1),
        end=datetime(2026, 12, 31, 23, 59),
        dimensions={"career": {"company": company}},
    )


@pytest.mark.parametrize(
    ("lang", "country", "first", "last", "lived"),
    [
        ("zh", "CN", date(2026, 2, 14), date(2026, 2, 23), ("春节", date(2026, 2, 17))),  # 除夕 is 春节's
        ("zh", "CN", date(2026, 6, 19), date(2026, 6, 21), ("端午", date(2026, 6, 19))),
        ("en", "US", date(2026, 12, 25), date(2026, 12, 27), ("Christmas", date(2026, 12, 25))),
        ("en", "US", date(2026, 11, 26), date(2026, 11, 26), ("Thanksgiving", date(2026, 11, 26))),
        ("en", "US", date(2026, 1, 17), date(2026, 1, 19), None),  # MLK Day: days off, not lived
    ],
)
def test_a_run_of_days_off_knows_the_holiday_it_holds(lang, country, first, last, lived):
    assert _lived_holiday(first, last, country, lang) == lived


def _holiday_lines(lang: str) -> list:
    beats = resources.get(lang).patterns["family_call"].beats
    return [
        ex
        for beat in beats
        if not isinstance(beat, str)
        for ex in beat.options
        if ex.presup.date and ex.presup.date[0] == "holiday_date"
    ]


def _said(lang: str, when: datetime, holiday: date | None) -> list[str]:
    dates = {"holiday_date": holiday} if holiday else {}
    moment = Moment(start=when, end=when, events=(), params={}, persona=_persona(lang), dates=dates)
    return [ex.u.source for ex in _holiday_lines(lang) if holds(ex.presup, moment)]


@pytest.mark.parametrize(
    ("lang", "holiday", "before", "on", "after", "far"),
    [
        (
            "zh",
            date(2026, 2, 17),
            datetime(2026, 2, 8, 20),
            datetime(2026, 2, 17, 11),
            datetime(2026, 2, 21, 20),
            datetime(2026, 3, 3, 20),  # year-zh seed 1 went home for 春节 on 03-03
        ),
        (
            "en",
            date(2026, 12, 25),
            datetime(2026, 12, 12, 19),
            datetime(2026, 12, 25, 11),
            datetime(2026, 12, 28, 19),
            datetime(2026, 11, 20, 19),
        ),
    ],
)
def test_holiday_lines_are_said_before_on_and_after_the_day_only(lang, holiday, before, on, after, far):
    assert _said(lang, before, holiday) and _said(lang, on, holiday) and _said(lang, after, holiday)
    assert _said(lang, far, holiday) == []
    assert set(_said(lang, before, holiday)).isdisjoint(_said(lang, after, holiday))


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_a_family_call_with_no_holiday_says_none(lang):
    assert _said(lang, datetime(2026, 12, 24, 19), None) == []
    assert _said(lang, datetime(2026, 2, 16, 19), None) == []


def test_a_christmas_line_is_not_said_in_a_thanksgiving_episode():
    said = _said("en", datetime(2026, 11, 15, 10), date(2026, 11, 26))
    assert said and not any("Christmas" in line for line in said)


@pytest.mark.parametrize(
    ("lang", "country", "start", "end", "family"),
    [
        ("zh", "CN", date(2026, 2, 12), date(2026, 2, 19), True),  # a tour over 春节
        ("en", "US", date(2026, 12, 23), date(2026, 12, 28), True),
        ("zh", "CN", date(2026, 10, 1), date(2026, 10, 7), False),  # 国庆 is for touring
        ("en", "US", date(2026, 7, 2), date(2026, 7, 6), False),
    ],
)
def test_no_tour_takes_the_holidays_spent_with_family(lang, country, start, end, family):
    assert _family_time(TripSpan("p01-c01-e01", start, end, "Lijiang"), country, lang) is family
