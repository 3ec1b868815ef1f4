"""Lifecycles of event kinds, as the catalog declares them (keme/world/catalog/<lang>.yaml `lifecycle`).

A life happens once: a friend's book launch party is held once, a project is delivered once, a move
happens before anyone thanks a friend for helping with it. Yearly things come in their season (a holiday
party in December, open enrollment in the autumn, 春节 on its lunar date); small incidents recur at a
plausible rate and a later one is told as "again"; changes have consequences (a move to another city
changes the commute and the job; a promotion stays in its career track).

This module holds the rules and the calendar facts they need, nothing of how generation or checking uses
them: the planner and realizer obey them (keme.synth.lifecycle), the checker applies them to a written
dataset (keme.world.check.lifecycle). Festival dates come from the `holidays` package (already the
toolkit's calendar), which computes the lunar festivals for each year.
"""

from __future__ import annotations

import functools
import re
from datetime import date, datetime, timedelta
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from keme.days import holidays_between, is_workday


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


MonthDay = str  # "MM-DD"


class _Cued(_Strict):
    name: str
    cues: list[str] = Field(
        default_factory=list,
        description="regular expressions (case-insensitive) that find the event in a user's line",
    )

    def said_in(self, text: str) -> bool:
        return any(p.search(text) for p in _compiled(tuple(self.cues)))


class Once(_Cued):
    """A one-off event: held once per subject over a trajectory (a person's launch party, a new-job
    celebration, a move); occasions that share a rule share the once (a new-job celebration and a
    promotion celebration of one person are one piece of career news)."""

    occasions: list[str] = Field(default_factory=list, description="the catalog occasions it covers")
    titles: list[str] = Field(
        default_factory=list,
        description="regular expressions (case-insensitive) of the calendar entries and to-dos that hold it "
        "(a friend's wedding on the calendar)",
    )
    per: Literal["person", "persona"] = "person"

    def titles_hold(self, title: str) -> bool:
        return any(p.search(title) for p in _compiled(tuple(self.titles)))


class Order(_Strict):
    """One person's life events in life order: each of `first` comes at least `gap_days` before each of
    `then` (an engagement party before a wedding anniversary or a baby's party; a baby's first-month party
    most of a year before its first birthday)."""

    first: list[str] = Field(min_length=1, description="the catalog occasions that come first")
    then: list[str] = Field(min_length=1, description="the catalog occasions that come after")
    gap_days: int = Field(default=1, ge=1, description="the fewest days from a `first` to a `then`")

    def breaks(self, a: tuple[str, date], b: tuple[str, date]) -> bool:
        """Whether two (occasion, day) of one person, in either order, break this order."""
        for (x, dx), (y, dy) in ((a, b), (b, a)):
            if x in self.first and y in self.then and (dy - dx).days < self.gap_days:
                return True
        return False


class Yearly(_Cued):
    """Said only in its season: a month-day window (`season`, may wrap the new year) or the days around a
    public holiday (`holiday`, its name as the `holidays` package gives it in the catalog's language)."""

    season: tuple[MonthDay, MonthDay] | None = None
    holiday: str | None = None
    before: int = Field(default=30, description="days before the holiday it may be talked of")
    after: int = Field(default=7, description="days after the holiday's first day it may be talked of")
    per_year: int = Field(default=0, description="how many times a year it is said; 0: no limit")


class Recurring(_Cued):
    """A small incident that recurs at a plausible rate; a later one is told as a repeat."""

    per_year: int = Field(ge=1, description="the most a year")
    gap_days: int = Field(ge=0, description="the fewest days between two")
    again: list[str] = Field(
        min_length=1, description="regular expressions of the words that tell a later one as a repeat"
    )

    def told_again(self, text: str) -> bool:
        return any(p.search(text) for p in _compiled(tuple(self.again)))


class After(_Cued):
    """A line that presupposes a change happened: `attribute` got a new value in the last `within` days."""

    attribute: str
    within: int = 120


class Workday(_Cued):
    """A line said only on a working day (asking whether to take today off, on a public holiday)."""


class Project(_Strict):
    """A work project that belongs to a season (双十一备货计划 in the autumn, not April)."""

    name: str
    season: tuple[MonthDay, MonthDay]


class Lifecycle(_Strict):
    once: list[Once] = Field(default_factory=list)
    yearly: list[Yearly] = Field(default_factory=list)
    recurring: list[Recurring] = Field(default_factory=list)
    order: list[Order] = Field(default_factory=list)
    after: list[After] = Field(default_factory=list)
    workday: list[Workday] = Field(default_factory=list)
    projects: list[Project] = Field(default_factory=list)
    ladders: list[list[str]] = Field(
        default_factory=list,
        description="career ladders, junior first (persona.yaml career.job_title values): a promotion climbs "
        "one; a title may stand on several",
    )
    relocation_window: int = Field(
        default=90, description="days around a move to another city in which the job and commute change"
    )

    def promotions_from(self, title: str) -> list[str]:
        """The titles a promotion from `title` can reach, in file order: higher on a ladder it stands on."""
        found: list[str] = []
        for ladder in self.ladders:
            if title in ladder:
                found += [t for t in ladder[ladder.index(title) + 1 :] if t not in found]
        return found

    def once_for(self, occasion: str) -> Once | None:
        return next((rule for rule in self.once if occasion in rule.occasions), None)

    def out_of_order(self, a: tuple[str, date], b: tuple[str, date]) -> Order | None:
        """The life-order rule two (occasion, day) of one person break, if any."""
        return next((rule for rule in self.order if rule.breaks(a, b)), None)

    def project(self, name: str) -> Project | None:
        return next((p for p in self.projects if p.name == name), None)

    @property
    def cued(self) -> list[_Cued]:
        """Every rule found by words in a line, in a stable order."""
        return [*self.once, *self.yearly, *self.recurring, *self.after, *self.workday]


@functools.cache
def _compiled(patterns: tuple[str, ...]) -> tuple[re.Pattern[str], ...]:
    return tuple(re.compile(p, re.IGNORECASE) for p in patterns)


def _md(text: MonthDay) -> tuple[int, int]:
    month, day = text.split("-")
    return int(month), int(day)


def in_season(season: tuple[MonthDay, MonthDay], day: date) -> bool:
    """Whether `day` falls in the month-day window (one that wraps the new year included)."""
    lo, hi, now = _md(season[0]), _md(season[1]), (day.month, day.day)
    return lo <= now <= hi if lo <= hi else now >= lo or now <= hi


def season_year(season: tuple[MonthDay, MonthDay], day: date) -> int:
    """The year a season's occurrence belongs to (a window from November to January is one season)."""
    lo, hi = _md(season[0]), _md(season[1])
    return day.year - 1 if lo > hi and (day.month, day.day) <= hi else day.year


def holiday_days(name: str, country: str, lang: str, years: range) -> list[date]:
    """The first day of each run of the public holiday called `name` in `years` (its real, lunar date)."""
    days = [
        d
        for d, n in holidays_between(date(years.start, 1, 1), date(years.stop - 1, 12, 31), country, lang)
        if n == name or n.startswith(name)
    ]
    return [d for i, d in enumerate(days) if i == 0 or (d - days[i - 1]).days > 1]


def near_holiday(rule: Yearly, day: date, country: str, lang: str) -> bool:
    """Whether `day` is within the days a holiday is talked of: `before` its first day to `after` it."""
    assert rule.holiday is not None
    for first in holiday_days(rule.holiday, country, lang, range(day.year - 1, day.year + 2)):
        if first - timedelta(days=rule.before) <= day <= first + timedelta(days=rule.after):
            return True
    return False


def yearly_fits(rule: Yearly, day: date, country: str, lang: str) -> bool:
    """Whether a yearly event can be talked of on `day`."""
    if rule.season is not None and not in_season(rule.season, day):
        return False
    return rule.holiday is None or near_holiday(rule, day, country, lang)


def day_off(day: date, country: str) -> bool:
    return not is_workday(day, country)


def changed_within(versions: list[tuple[datetime, str]], since: datetime, until: datetime) -> bool:
    """Whether an attribute with these (valid_from, value) versions took a new value in (since, until]."""
    return any(since < start <= until for start, _ in versions[1:])
