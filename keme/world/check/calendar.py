"""The calendar and the clock: weekday, date and time-of-day words match the message's timestamp; work
happens on workdays; a new job starts on a workday; rent and utilities are not paid on a public holiday (除夕,
Christmas Day); a holiday named as the moment's business (过年回家, a Christmas party) is near its real date;
a job title does not change twice in 60 days; a place an earlier calendar entry was held at is not one the
persona has never been to."""

from __future__ import annotations

import re
from datetime import date, datetime, timedelta

from keme.days import holiday_name, is_workday
from keme.models import BillRecord, CalendarRecord, Message
from keme.world.check.base import Finding, World, clauses, day, quote
from keme.world.cues import Cues, HolidayCue
from keme.world.lifecycle import holiday_days

RULE = "calendar"
TITLE_CHANGES_WITHIN = timedelta(days=60)


def check(world: World) -> list[Finding]:
    out = []
    weekdays = _weekday_patterns(world)
    for _, message in world.said(("user", "assistant", "system")):
        if message.role != "system":
            out += _clock(world, message) + _weekday(world, message, weekdays) + _day_of_month(world, message)
            out += _workday(world, message) + _holiday_words(world, message)
        out += _dated_weekdays(world, message)
    return out + _first_day(world) + _bills(world) + _titles(world) + _first_visits(world)


def _first_visits(world: World) -> list[Finding]:
    """A place the persona says they have never been to, named, though an earlier calendar entry (one that
    began before the message) was held there."""
    held = [
        (a.record.start, a.id, a.record.location)
        for a in world.view.anchors.values()
        if isinstance(a.record, CalendarRecord) and a.record.location
    ]
    out = []
    for _, message in world.said(("user",)):
        if not world.cues.any(world.cues.first_visit, message.content):
            continue
        been = next((h for h in sorted(held) if h[0] < message.timestamp and h[2] in message.content), None)
        if been is not None:
            out.append(
                world.finding(
                    RULE,
                    [been[1], message.id],
                    f"{message.id} says the persona has not been to {been[2]} ({quote(message.content)}), "
                    f"but a calendar entry was held there on {been[0].date()}",
                )
            )
    return out


def _clock(world: World, message: Message) -> list[Finding]:
    hour = message.timestamp.hour
    for clause in world.now_clauses(message.content):
        for cue in world.cues.times:
            found = world.cues.search(cue.patterns, clause)
            if found and not cue.allows(hour) and not world.cues.any(cue.unless, clause):
                return [
                    world.finding(
                        RULE,
                        [message.id],
                        f"{message.id} says “{found.group(0)}” at {message.timestamp:%H:%M} "
                        f"({quote(message.content)})",
                    )
                ]
    return []


def _weekday_patterns(world: World) -> list[list[str]]:
    """For each weekday (Monday first), the patterns that say today is that day."""
    out = []
    for names in world.cues.weekdays:
        names = names[:1] if world.view.lang == "en" else names  # "wed" or "sun" alone is not a weekday said
        alternation = "(?:" + "|".join(re.escape(n) for n in names) + ")"
        out.append([t.replace("{weekday}", alternation) for t in world.cues.today_weekday])
    return out


def _weekday(world: World, message: Message, patterns: list[list[str]]) -> list[Finding]:
    actual = message.timestamp.weekday()
    for clause in world.clauses(message.content):
        for index in range(7):
            if index == actual:
                continue
            found = world.cues.search(patterns[index], clause)
            if found:
                return [
                    world.finding(
                        RULE,
                        [message.id],
                        f"{message.id} says “{found.group(0)}” on {day(message.timestamp)} "
                        f"({quote(message.content)})",
                    )
                ]
    return []


def _day_of_month(world: World, message: Message) -> list[Finding]:
    when = message.timestamp
    for clause in world.clauses(message.content):
        found = world.cues.search(world.cues.day_of_month, clause)
        if found is None:
            continue
        groups = found.groupdict()
        said_day = groups.get("day") or groups.get("day2")
        month = groups.get("month")
        said_month = (world.cues.month_of(month) if not month.isdigit() else int(month)) if month else None
        if said_day is None or (month and said_month is None):
            continue
        if int(said_day) != when.day or (said_month is not None and said_month != when.month):
            return [
                world.finding(
                    RULE,
                    [message.id],
                    f"{message.id} says “{found.group(0)}” on {day(when)} ({quote(message.content)})",
                )
            ]
    return []


def _dated_weekdays(world: World, message: Message) -> list[Finding]:
    """“April 12 (Sunday)”: the weekday is the date's, in the year around the message."""
    cues = world.cues
    for pattern in cues.dated_weekday:
        for found in re.finditer(pattern, message.content, re.IGNORECASE):
            month = found.group("month")
            number = int(month) if month.isdigit() else cues.month_of(month)
            weekday = cues.weekday_of(found.group("weekday"))
            if number is None or weekday is None:
                continue
            said = _nearest(message.timestamp, number, int(found.group("day")))
            if said is not None and said.weekday() != weekday:
                return [
                    world.finding(
                        RULE,
                        [message.id],
                        f"{message.id} says “{found.group(0)}”, but {said.isoformat()} is a "
                        f"{said.strftime('%A')}",
                    )
                ]
    return []


def _nearest(moment: datetime, month: int, day_: int) -> date | None:
    """The date with this month and day nearest to `moment` (a date said late in December may be January)."""
    options = []
    for year in (moment.year - 1, moment.year, moment.year + 1):
        try:
            options.append(date(year, month, day_))
        except ValueError:
            continue
    return min(options, key=lambda d: abs(d - moment.date())) if options else None


def _workday(world: World, message: Message) -> list[Finding]:
    """Being at work today on a weekend or holiday, unless the text says it is overtime."""
    if message.role != "user":
        return []
    when = message.timestamp
    if is_workday(when.date(), world.view.persona.country):
        return []
    cues = world.cues
    if cues.any(cues.overtime, message.content):
        return []
    for clause in world.now_clauses(message.content):
        found = (
            cues.search(cues.office, clause)
            or cues.search(cues.commute, clause)
            or cues.search(cues.workday, clause)
        )
        if found:
            return [
                world.finding(
                    RULE,
                    [message.id],
                    f"{message.id} is at work (“{found.group(0)}”) on {day(when)}, not a workday, with no "
                    f"overtime said ({quote(message.content)})",
                )
            ]
    return []


def _holiday_words(world: World, message: Message) -> list[Finding]:
    """A user's words that name a holiday as now's business (the cue list `holidays`), said far from its
    real date (`holiday_word_off`)."""
    if message.role != "user":
        return []
    today = message.timestamp.date()
    off = holiday_word_off(message.content, today, world.view.persona.country, world.view.lang, world.cues)
    if off is None:
        return []
    word, cue, nearest = off
    return [
        world.finding(
            RULE,
            [message.id],
            f"{message.id} says “{word}” on {today}, {(today - nearest).days:+d} days from "
            f"{cue.holiday} ({nearest}; said {cue.before} days before to {cue.after} after) "
            f"({quote(message.content)})",
        )
    ]


def holiday_word_off(
    text: str, today: date, country: str, lang: str, cues: Cues
) -> tuple[str, HolidayCue, date] | None:
    """The first word of `text` that names a holiday as now's business, said far from its real date on
    `today`: 「过年回家」 two weeks after 春节, a Christmas party in August; with the cue and the holiday's
    nearest first day. A clause of another year (去年过年, last Christmas) is not judged; one of another day
    is (a Christmas party "next Friday" in August is still in August). The realizer's gate asks the same
    (keme.synth.lifecycle), so a line the checker would name is not drawn."""
    for clause in clauses(text):
        if cues.any(cues.holiday_other_year, clause):
            continue
        for cue in cues.holidays:
            found = cues.search(cue.patterns, clause)
            if not found:
                continue
            firsts = holiday_days(cue.holiday, country, lang, range(today.year - 1, today.year + 2))
            if firsts and not any(-cue.before <= (today - f).days <= cue.after for f in firsts):
                return found.group(0), cue, min(firsts, key=lambda f: abs((today - f).days))
    return None


def _first_day(world: World) -> list[Finding]:
    """The first day at a new job falls on a workday: a `first_day` moment, a message saying so, or a
    company change whose revealing message says so."""
    out = []
    country = world.view.persona.country
    seen: set[str] = set()
    for session in world.view.sessions:
        leaf = world.leaf(session)
        if leaf is not None and leaf.kind == "first_day" and not is_workday(session.start.date(), country):
            first = session.messages[0].id if session.messages else session.id
            seen.update(m.id for m in session.messages)
            out.append(
                world.finding(
                    RULE,
                    [first],
                    f"{session.id} is the first day at the new job (“{leaf.title}”) on {day(session.start)}, "
                    "not a workday",
                )
            )
    for _, message in world.said(("user",)):
        if message.id in seen or is_workday(message.timestamp.date(), country):
            continue
        for clause in world.now_clauses(message.content):
            found = world.cues.search(world.cues.first_day_job, clause)
            if found:
                out.append(
                    world.finding(
                        RULE,
                        [message.id],
                        f"{message.id} says “{found.group(0)}” on {day(message.timestamp)}, not a workday",
                    )
                )
                break
    return out


def _bills(world: World) -> list[Finding]:
    """A payment to an account (the cue list's bill categories: rent, utilities) is not made on a public
    holiday (除夕, Christmas Day); a weekend is fine (paid in an app)."""
    country = world.view.persona.country
    kinds = set(world.cues.workday_bills)
    ids = {s.anchor_id: s.messages[0].id for s in world.view.sessions if s.anchor_id and s.messages}
    return [
        world.finding(
            RULE,
            [ids[anchor.id]] if anchor.id in ids else [],
            f"{anchor.id}: {anchor.record.category} paid to {anchor.record.merchant} on "
            f"{day(anchor.timestamp)}, a public holiday "
            f"({holiday_name(anchor.timestamp.date(), country, world.view.lang)})",
        )
        for anchor in sorted(world.view.anchors.values(), key=lambda a: (a.timestamp, a.id))
        if isinstance(anchor.record, BillRecord)
        and anchor.record.category in kinds
        and holiday_name(anchor.timestamp.date(), country) is not None
    ]


def _titles(world: World) -> list[Finding]:
    """A job title changes at most once in 60 days (persona versions and `career.job_title` claims)."""
    persona = world.view.persona
    changes: list[tuple[datetime, str, list[str]]] = []
    try:
        versions = persona.attribute("career.job_title").versions
    except KeyError:
        versions = []
    for i, version in enumerate(versions):
        if i or version.valid_from > persona.start:
            changes.append((version.valid_from, version.value, version.evidence[:1]))
    claims = sorted(
        (c for c in world.view.claims if c.subject == "persona" and c.predicate == "career.job_title"),
        key=lambda c: c.valid_from,
    )
    for before, claim in zip(claims, claims[1:], strict=False):
        if before.value != claim.value and not any(v == claim.value for _, v, _ in changes):
            changes.append((claim.valid_from, claim.value, [claim.message_id]))
    changes.sort(key=lambda c: c[0])
    out = []
    for (a_when, a_value, a_ids), (b_when, b_value, b_ids) in zip(changes, changes[1:], strict=False):
        if b_when - a_when <= TITLE_CHANGES_WITHIN:
            out.append(
                world.finding(
                    RULE,
                    a_ids + b_ids,
                    f"job title changes to {a_value!r} on {a_when.date()} and to {b_value!r} on "
                    f"{b_when.date()}, "
                    f"{(b_when - a_when).days} days apart",
                )
            )
    return out
