"""Event lifecycles, by the catalog's rules (keme/world/catalog/<lang>.yaml `lifecycle`), applied to what was
written: the event graph, the persona's version history and the user's lines.

Written apart from the generator: it reads the rules and the dataset, never the planner's choices.
A one-off occasion held twice for one person; one person's life events out of life order; a project
delivered in two episodes, worked on out of its season or at the next employer; a yearly thing talked
of out of its season or more often than a year has it; an incident more often than its rate, too soon
after the last, told as new the second time, or told as a repeat of itself; thanks for a move that did
not happen; asking to take today off on a day off; a move to another city without a new job or commute;
a promotion off the persona's career ladder. Mentions of one event within SAME_TIME of its first
are that event (a symptom and its follow-up three days later).
"""

from __future__ import annotations

from collections import defaultdict
from datetime import date, datetime, timedelta

from keme.models import AttributeVersion, CalendarRecord, Event, Message, Session, TodoRecord
from keme.world.check.base import Finding, World, quote
from keme.world.lifecycle import (
    After,
    Once,
    Recurring,
    Workday,
    Yearly,
    day_off,
    holiday_days,
    in_season,
    season_year,
)

RULE = "lifecycle"
SAME_TIME = timedelta(days=14)
YEAR = timedelta(days=365)
DELIVERY = "work_win"  # the moment a project is delivered in
FIRST_DAY = "first_day"  # the moment a new job begins


def check(world: World) -> list[Finding]:
    return [
        *_occasions(world),
        *_life_order(world),
        *_anchored_once(world),
        *_projects(world),
        *_one_offs(world),
        *_project_employer(world),
        *_said(world),
        *_moves(world),
        *_new_jobs(world),
        *_promotions(world),
    ]


# ---------------------------------------------------------------- the graph
def _episodes(world: World) -> list[Event]:
    return sorted((e for e in world.view.graph.events if e.depth == 1), key=lambda e: (e.start, e.id))


def _first_lines(world: World, episode: Event) -> list[str]:
    """The first user message of the episode's first session (what a finding points at)."""
    for session in world.view.sessions:
        found = world.episode(session)
        if found is not None and found.id == episode.id:
            first = next((m for m in session.messages if m.role == "user"), None)
            if first is not None:
                return [first.id]
    return []


def _occasions(world: World) -> list[Finding]:
    """A once-per-subject occasion (a launch party, career news) held twice for one person."""
    life = world.catalog.lifecycle
    seen: dict[tuple[str, str], Event] = {}
    out = []
    for episode in _episodes(world):
        if episode.kind != "social":
            continue
        person, occasion = episode.params.get("person", ""), episode.params.get("occasion", "")
        rule = life.once_for(occasion)
        if rule is None:
            continue
        key = (rule.name, person)
        if key in seen:
            first = seen[key]
            out.append(
                world.finding(
                    RULE,
                    _first_lines(world, first) + _first_lines(world, episode),
                    f"{person}'s {first.params['occasion']!r} ({first.start.date()}) and "
                    f"{occasion!r} ({episode.start.date()}) are one once-only event ({rule.name}) held twice",
                )
            )
        else:
            seen[key] = episode
    return out


def _life_order(world: World) -> list[Finding]:
    """One person's life events out of life order (an engagement party after their wedding anniversary or
    their baby's party; a baby's first birthday months after its first-month party)."""
    life = world.catalog.lifecycle
    held: dict[str, list[Event]] = defaultdict(list)
    for episode in _episodes(world):
        if episode.kind == "social" and episode.params.get("person") and episode.params.get("occasion"):
            held[episode.params["person"]].append(episode)
    out = []
    for person, episodes in sorted(held.items()):
        for i, early in enumerate(episodes):
            for late in episodes[i + 1 :]:
                a, b = early.params["occasion"], late.params["occasion"]
                order = life.out_of_order((a, early.start.date()), (b, late.start.date()))
                if order is not None:
                    out.append(
                        world.finding(
                            RULE,
                            _first_lines(world, early) + _first_lines(world, late),
                            f"{person}'s {a!r} ({early.start.date()}) and {b!r} ({late.start.date()}) "
                            f"are out of life order: {'/'.join(order.first)} comes "
                            + (f"at least {order.gap_days} days " if order.gap_days > 1 else "")
                            + f"before {'/'.join(order.then)}",
                        )
                    )
    return out


def _anchored_once(world: World) -> list[Finding]:
    """A one-off life event the records hold on two dates (a friend's wedding on the calendar in February
    and again in October): entries within SAME_TIME of the first are that one."""
    out = []
    for rule in world.catalog.lifecycle.once:
        if not rule.titles:
            continue
        held = sorted(
            (day, anchor.id, title)
            for anchor in world.view.anchors.values()
            for title, day in [_titled_day(anchor.record)]
            if title and rule.titles_hold(title)
        )
        for day, anchor_id, title in held[1:]:
            if day - held[0][0] > SAME_TIME:
                out.append(
                    world.finding(
                        RULE,
                        [held[0][1], anchor_id],
                        f"{rule.name} ({title!r}) is held on {day.date()} after {held[0][0].date()}: "
                        "it happens once",
                    )
                )
    return out


def _titled_day(record: object) -> tuple[str, datetime]:
    """A calendar entry's title and start, a to-do's title and due time; ("", ...) for other records."""
    if isinstance(record, CalendarRecord):
        return record.title, record.start
    if isinstance(record, TodoRecord):
        return record.title, record.due
    return "", datetime.min


def _projects(world: World) -> list[Finding]:
    """A project worked on out of its season; a project delivered in two episodes."""
    life = world.catalog.lifecycle
    delivered: dict[str, list[Event]] = defaultdict(list)
    for event in world.view.graph.events:
        if event.kind == DELIVERY or event.change == "promotion":
            episode = event
            while episode.depth > 1 and episode.parent_id in world.view.events:
                episode = world.view.events[episode.parent_id]
            project = episode.params.get("project") or event.params.get("project")
            if project and episode not in delivered[project]:
                delivered[project].append(episode)
    out = []
    for project, episodes in sorted(delivered.items()):
        episodes.sort(key=lambda e: (e.start, e.id))
        out += _held_twice(world, f"project {project!r} is delivered", episodes)
    for episode in _episodes(world):
        rule = life.project(episode.params.get("project", ""))
        if rule is not None and not in_season(rule.season, episode.start.date()):
            out.append(
                world.finding(
                    RULE,
                    _first_lines(world, episode),
                    f"project {rule.name!r} is worked on from {episode.start.date()}, out of its season "
                    f"({rule.season[0]} to {rule.season[1]})",
                )
            )
    return out


# a thing that happens to her once: (episode kind, its param) — bought, watched, given as a gift
ONE_OFF = (
    ("shopping", "product", "bought"),
    ("entertainment", "title", "watched"),
    ("social", "gift", "given"),
)


def _one_offs(world: World) -> list[Finding]:
    """A product bought, a title watched, a gift given in two episodes: "when did I buy the Peloton Bike?"
    has two answers, and a reader of the year finds the same purchase told twice."""
    out = []
    for kind, key, verb in ONE_OFF:
        held: dict[str, list[Event]] = defaultdict(list)
        for episode in _episodes(world):
            if episode.kind == kind and episode.params.get(key):
                held[episode.params[key]].append(episode)
        for value, episodes in sorted(held.items()):
            out += _held_twice(world, f"{key} {value!r} is {verb}", episodes)
    return out


def _held_twice(world: World, what: str, episodes: list[Event]) -> list[Finding]:
    """A finding for each episode after the first that holds what happens once ("... twice: <days>")."""
    return [
        world.finding(
            RULE,
            _first_lines(world, episodes[0]) + _first_lines(world, later),
            f"{what} twice: {episodes[0].start.date()} and {later.start.date()}",
        )
        for later in episodes[1:]
    ]


def _project_employer(world: World) -> list[Finding]:
    """A project named in its episode after the persona left the company it began at: a project is one
    employer's, and the persona's lines about it at the next job are about the old company's work."""
    persona = world.view.persona
    out = []
    for session in world.view.sessions:
        episode = world.episode(session)
        if episode is None or not episode.params.get("project"):
            continue
        project = episode.params["project"]
        began = persona.value_at("career.company", episode.start)
        for message in session.messages:
            if message.role != "user" or project.lower() not in message.content.lower():
                continue
            now = persona.value_at("career.company", message.timestamp)
            if began and now and now != began:
                out.append(
                    world.finding(
                        RULE,
                        [message.id],
                        f"project {project!r}, begun at {began} on {episode.start.date()}, "
                        f"is worked on at {now} on {message.timestamp.date()} ({quote(message.content)})",
                    )
                )
                break
    return out


# ---------------------------------------------------------------- the user's lines
def _said(world: World) -> list[Finding]:
    """Every cued rule applied to the user's lines that carry its cue, in time order."""
    life = world.catalog.lifecycle
    hits: dict[str, list[tuple[Session, Message]]] = defaultdict(list)
    for session, message in world.said(("user",)):
        for rule in life.cued:
            if rule.said_in(message.content):
                hits[rule.name].append((session, message))
    out = []
    for rule in life.cued:
        found = hits.get(rule.name, [])
        if not found:
            continue
        if isinstance(rule, Yearly):
            out += _yearly(world, rule, found)
        elif isinstance(rule, Recurring):
            out += _recurring(world, rule, found)
        elif isinstance(rule, After):
            out += _after(world, rule, found)
        elif isinstance(rule, Workday):
            out += _workday(world, rule, found)
        elif isinstance(rule, Once):
            out += [_twice(world, rule.name, found[0][1], m) for m in _starts(found)[1:]]
    return out


def _starts(found: list[tuple[Session, Message]]) -> list[Message]:
    """The first mention of each occurrence: a mention more than SAME_TIME after the last one's first."""
    starts: list[Message] = []
    for _, message in found:
        if not starts or message.timestamp - starts[-1].timestamp > SAME_TIME:
            starts.append(message)
    return starts


def _twice(world: World, name: str, first: Message, again: Message) -> Finding:
    return world.finding(
        RULE,
        [first.id, again.id],
        f"{name} happens again on {again.timestamp.date()} ({quote(again.content)}) after "
        f"{first.timestamp.date()}: it happens once",
    )


def _yearly(world: World, rule: Yearly, found: list[tuple[Session, Message]]) -> list[Finding]:
    out = []
    country, lang = world.view.persona.country, world.view.lang
    for _, message in found:
        day = message.timestamp.date()
        if rule.season is not None and not in_season(rule.season, day):
            out.append(
                world.finding(
                    RULE,
                    [message.id],
                    f"{rule.name} talked of on {day} ({quote(message.content)}), out of its season "
                    f"({rule.season[0]} to {rule.season[1]})",
                )
            )
        elif rule.holiday is not None and not _near(rule, day, country, lang):
            dates = holiday_days(rule.holiday, country, lang, range(day.year - 1, day.year + 2))
            nearest = min(dates, key=lambda d: abs((d - day).days)) if dates else None
            out.append(
                world.finding(
                    RULE,
                    [message.id],
                    f"{rule.name} talked of on {day} ({quote(message.content)}), far from its day "
                    f"({nearest}; {rule.before} days before to {rule.after} after)",
                )
            )
    if rule.per_year and rule.season is not None:
        by_year: dict[int, list[Message]] = defaultdict(list)
        for message in _starts(found):
            by_year[season_year(rule.season, message.timestamp.date())].append(message)
        for year, starts in sorted(by_year.items()):
            out += [_twice(world, f"{rule.name} of {year}", starts[0], m) for m in starts[rule.per_year :]]
    return out


def _near(rule: Yearly, day: date, country: str, lang: str) -> bool:
    assert rule.holiday is not None
    return any(
        first - timedelta(days=rule.before) <= day <= first + timedelta(days=rule.after)
        for first in holiday_days(rule.holiday, country, lang, range(day.year - 1, day.year + 2))
    )


def _recurring(world: World, rule: Recurring, found: list[tuple[Session, Message]]) -> list[Finding]:
    out = _retold(world, rule, found)
    starts = _starts(found)
    for i, message in enumerate(starts[1:], start=1):
        before = starts[i - 1]
        gap = (message.timestamp - before.timestamp).days
        in_year = [m for m in starts[: i + 1] if message.timestamp - m.timestamp < YEAR]
        problems = []
        if len(in_year) > rule.per_year:
            problems.append(f"{len(in_year)} within a year (at most {rule.per_year})")
        if gap < rule.gap_days:
            problems.append(f"{gap} days after the last (at least {rule.gap_days})")
        if not rule.told_again(message.content):
            problems.append("told as new, not as a repeat")
        if problems:
            out.append(
                world.finding(
                    RULE,
                    [before.id, message.id],
                    f"{rule.name} on {message.timestamp.date()} ({quote(message.content)}) after "
                    f"{before.timestamp.date()}: " + "; ".join(problems),
                )
            )
    return out


def _retold(world: World, rule: Recurring, found: list[tuple[Session, Message]]) -> list[Finding]:
    """The first occurrence told as new, then as a repeat of itself ("tweaked something yesterday", the
    next day "tweaked something again, the same spot as last time"): nothing came before it to repeat."""
    first = [m for _, m in found if m.timestamp - found[0][1].timestamp <= SAME_TIME]
    if rule.told_again(first[0].content):
        return []
    return [
        world.finding(
            RULE,
            [first[0].id, message.id],
            f"{rule.name} told as a repeat on {message.timestamp.date()} ({quote(message.content)}), "
            f"within the first occurrence ({first[0].timestamp.date()}, told as new)",
        )
        for message in first[1:]
        if rule.told_again(message.content)
    ]


def _after(world: World, rule: After, found: list[tuple[Session, Message]]) -> list[Finding]:
    versions = _versions(world, rule.attribute)
    out = []
    for _, message in found:
        at = message.timestamp
        if not any(at - timedelta(days=rule.within) < v.valid_from <= at for v in versions[1:]):
            out.append(
                world.finding(
                    RULE,
                    [message.id],
                    f"{rule.name} on {at.date()} ({quote(message.content)}) with no {rule.attribute} change "
                    f"in the {rule.within} days before",
                )
            )
    return out


def _workday(world: World, rule: Workday, found: list[tuple[Session, Message]]) -> list[Finding]:
    country = world.view.persona.country
    return [
        world.finding(
            RULE,
            [message.id],
            f"{rule.name} on {message.timestamp.strftime('%a %Y-%m-%d')} ({quote(message.content)}), "
            "a day off",
        )
        for _, message in found
        if day_off(message.timestamp.date(), country)
    ]


# ---------------------------------------------------------------- the persona's changes
def _versions(world: World, key: str) -> list[AttributeVersion]:
    """The versions of `key`; none for an attribute the persona does not have."""
    dimension, name = key.split(".", 1)
    attribute = world.view.persona.dimensions.get(dimension, {}).get(name)
    return list(attribute.versions) if attribute is not None else []


def _changes(world: World, key: str) -> list[tuple[datetime, str, str, list[str]]]:
    """(when, old, new, evidence) of each change of `key` within the trajectory."""
    versions = _versions(world, key)
    return [(b.valid_from, a.value, b.value, list(b.evidence)) for a, b in zip(versions, versions[1:])]


def _moves(world: World) -> list[Finding]:
    """A move to another city changes the job (or its place) and the commute. A move whose window runs
    past the trajectory's end is not judged: the new job may start after the last day written."""
    window = timedelta(days=world.catalog.lifecycle.relocation_window)
    end = world.view.persona.end
    jobs = _changes(world, "career.company")
    commutes = _changes(world, "transport.commute_mode")
    out = []
    for at, old, new, evidence in _changes(world, "home.city"):
        if old == new or at + window > end:
            continue
        if not any(abs(when - at) <= window for when, *_ in jobs):
            company = world.view.persona.value_at("career.company", at)
            out.append(
                world.finding(
                    RULE,
                    evidence[:1],
                    f"moved {old} -> {new} on {at.date()} but kept the job at {company} (no new job within "
                    f"{window.days} days)",
                )
            )
        if not any(abs(when - at) <= window and a != b for when, a, b, _ in commutes):
            mode = world.view.persona.value_at("transport.commute_mode", at)
            out.append(
                world.finding(
                    RULE,
                    evidence[:1],
                    f"moved {old} -> {new} on {at.date()} and still commutes by {mode!r}",
                )
            )
    return out


def _new_jobs(world: World) -> list[Finding]:
    """A new job is the persona's from its first day: a company said as theirs before the first day that
    follows (an offer accepted is not a job started)."""
    firsts = sorted(e.start for e in world.view.graph.events if e.kind == FIRST_DAY)
    out = []
    for at, old, new, evidence in _changes(world, "career.company"):
        began = [d for d in firsts if d.date() <= at.date() and at - d <= SAME_TIME]
        later = [d for d in firsts if d.date() > at.date() and d - at <= SAME_TIME * 2]
        if old != new and later and not began:
            out.append(
                world.finding(
                    RULE,
                    evidence[:1],
                    f"says the job at {new} is the persona's on {at.date()}, before its first day "
                    f"{later[0].date()} (still at {old} until then)",
                )
            )
    return out


def _promotions(world: World) -> list[Finding]:
    """A promotion climbs a career ladder the old title stands on."""
    life = world.catalog.lifecycle
    titles = _changes(world, "career.job_title")
    out = []
    for episode in world.view.graph.events:
        if episode.change != "promotion":
            continue
        for at, old, new, evidence in titles:
            during = episode.start <= at <= episode.end + timedelta(days=1)
            if during and new not in life.promotions_from(old):
                out.append(
                    world.finding(
                        RULE,
                        evidence[:1],
                        f"promoted from {old!r} to {new!r} on {at.date()}: not a step up its career ladder",
                    )
                )
    return out
