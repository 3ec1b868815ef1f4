"""One place at a time: the schedule never overlaps and covers every message; a trip holds the persona in
its city for its whole span; what a message says about where the persona is agrees with both."""

from __future__ import annotations

from itertools import pairwise

from keme.models import ScheduleBlock
from keme.world.check.base import Finding, World, day, quote

RULE = "occupancy"


def check(world: World) -> list[Finding]:
    return _schedule(world) + _trip_blocks(world) + _claims(world) + _text(world)


def _schedule(world: World) -> list[Finding]:
    """Blocks do not overlap and every message falls inside one."""
    blocks = world.view.schedule
    if not blocks:
        if world.view.sessions:
            return [
                world.finding(RULE, [], "the persona has sessions but no schedule: where it is is unknown")
            ]
        return []
    out = [
        world.finding(
            RULE, [], f"schedule block {b.id} ends ({day(b.end)}) before it starts ({day(b.start)})"
        )
        for b in blocks
        if b.end < b.start
    ]
    for a, b in pairwise(blocks):
        if b.start < a.end:
            out.append(
                world.finding(
                    RULE,
                    [],
                    f"schedule blocks {a.id} ({a.place}, {a.city}, until {day(a.end)}) and {b.id} "
                    f"({b.place}, {b.city}, from {day(b.start)}) overlap: two places at once",
                )
            )
    for session in world.view.sessions:
        loose = [m.id for m in session.messages if _block_at(blocks, m.timestamp) is None]
        if loose:
            out.append(
                world.finding(
                    RULE, loose, f"{len(loose)} message(s) of {session.id} fall in no schedule block"
                )
            )
    return out


def _block_at(blocks: list[ScheduleBlock], moment) -> ScheduleBlock | None:
    return next((b for b in blocks if b.start <= moment <= b.end), None)


def _trip_blocks(world: World) -> list[Finding]:
    """Every block inside a trip's span has the persona in the trip city."""
    out = []
    for trip in world.trips:
        for block in world.view.schedule:
            if block.end <= trip.start or block.start >= trip.end:
                continue
            if block.city != trip.city and block.place != "transit":
                out.append(
                    world.finding(
                        RULE,
                        [],
                        f"block {block.id} puts the persona in {block.city} "
                        f"({block.place}, {block.activity}) "
                        f"at {day(block.start)}, inside the {trip.city} trip {trip.first}–{trip.last} "
                        f"({trip.event.id})",
                    )
                )
    return out


def _claims(world: World) -> list[Finding]:
    """`city` and `place` claims agree with the block at the message's time, and with a trip."""
    out = []
    for _, message in world.messages:
        for claim in world.claims_of.get(message.id, []):
            if claim.subject != "persona" or claim.predicate not in ("city", "place"):
                continue
            block = _block_at(world.view.schedule, message.timestamp)
            trip = world.trip_at(message.timestamp)
            if claim.predicate == "city":
                expected = block.city if block else (trip.city if trip else None)
            else:
                expected = block.place if block else ("trip" if trip else None)
            if expected is not None and claim.value != expected:
                out.append(
                    world.finding(
                        RULE,
                        [message.id],
                        f"{message.id} says {claim.predicate} {claim.value!r} ({quote(message.content)}) at "
                        f"{day(message.timestamp)}, where the schedule has {expected!r}",
                    )
                )
    return out


def _text(world: World) -> list[Finding]:
    """Office and commute words inside a trip; day-one and arrival words off the trip's first day; a
    during-the-trip session outside the trip's span."""
    cues = world.cues
    out = []
    for session, message in world.said():
        trip = world.trip_at(message.timestamp)
        episode = world.episode(session)
        own = next((t for t in world.trips if episode is not None and t.event.id == episode.id), None)
        now = world.now_clauses(_unquoted(world, session, message.content))
        block = _block_at(world.view.schedule, message.timestamp)
        away = trip is not None and (own is None or own is trip)
        if away or (trip is None and block is not None and block.place == "trip"):
            city = trip.city if trip is not None else block.city
            span = f"{trip.first}–{trip.last}" if trip is not None else f"(schedule block {block.id})"
            for clause in now:
                words = cues.search(cues.office, clause) or cues.search(cues.commute, clause)
                if words:
                    out.append(
                        world.finding(
                            RULE,
                            [message.id],
                            f"{message.id} at {day(message.timestamp)} has the persona at work "
                            f"(“{words.group(0)}”: {quote(message.content)}) during the {city} trip {span}",
                        )
                    )
                    break
        if own is None:
            continue
        leaf = world.leaf(session)
        during = leaf is not None and leaf.kind == "trip_during"
        outside = False
        if during and not own.holds(message.timestamp) and message is session.messages[0]:
            outside = True
            out.append(
                world.finding(
                    RULE,
                    [message.id],
                    f"{session.id} is lived on the {own.city} trip but starts {day(message.timestamp)}, "
                    f"outside the trip {own.first}–{own.last}"
                    + (", on the scheduled return day" if message.timestamp.date() == own.last else ""),
                )
            )
        on_trip = own.holds(message.timestamp) or during
        if not on_trip or outside:  # a session lived outside its trip is named once, above
            continue
        first_day = message.timestamp.date() == own.first
        for clause in now:
            words = cues.search(cues.arrival, clause) or cues.search(cues.trip_day_one, clause)
            if words and not first_day:
                date = message.timestamp.date()
                when = (
                    "the scheduled return day" if date == own.last else f"day {(date - own.first).days + 1}"
                )
                out.append(
                    world.finding(
                        RULE,
                        [message.id],
                        f"{message.id} says “{words.group(0)}” ({quote(message.content)}) on "
                        f"{day(message.timestamp)}, {when} of the {own.city} trip {own.first}–{own.last}",
                    )
                )
                break
    out += _calendar_records(world) + _lived_elsewhere(world) + _charges_in_person(world)
    return out


LUNCH_HOURS = (11, 15)  # [from, to) on the hour: when leaving the office for a meal or an errand is ordinary


def _charges_in_person(world: World) -> list[Finding]:
    """A charge paid at a home-city merchant (catalog `in_person`) puts the persona there at its time: not
    on a trip to another city, not at the office, and not out of the office mid-morning or mid-afternoon."""
    out = []
    schedule = world.view.schedule
    for anchor in sorted(world.view.anchors.values(), key=lambda a: a.timestamp):
        record = anchor.record
        if record.kind != "bill" or not world.catalog.in_person(record.merchant):
            continue
        when = anchor.timestamp
        holders = [m.id for _, m in world.messages if m.role == "system" and m.timestamp == when][:1]
        charge = f"the {record.category} charge {anchor.id} at {record.merchant} on {day(when)}"
        trip = world.trip_at(when)
        block = _block_at(schedule, when)
        try:
            home = world.view.persona.value_at("home.city", when)
        except KeyError:
            home = None
        if trip is not None and trip.city != home:
            out.append(
                world.finding(
                    RULE,
                    holders,
                    f"{charge} is paid in person in the home city, inside the {trip.city} trip "
                    f"{trip.first}–{trip.last}",
                )
            )
        elif block is not None and block.place == "office":
            out.append(
                world.finding(
                    RULE,
                    holders,
                    f"{charge} is paid in person while the schedule has the persona at "
                    f"the office ({block.id})",
                )
            )
        elif (
            block is not None and block.place == "venue" and not LUNCH_HOURS[0] <= when.hour < LUNCH_HOURS[1]
        ):
            i = schedule.index(block)
            before = schedule[i - 1] if i > 0 else None
            after = schedule[i + 1] if i + 1 < len(schedule) else None
            if before is not None and after is not None and before.place == after.place == "office":
                out.append(
                    world.finding(
                        RULE,
                        holders,
                        f"{charge} takes the persona out of the office at {when:%H:%M}, not at lunch",
                    )
                )
    return out


def _unquoted(world: World, session, text: str) -> str:
    """`text` without the words it quotes from the session's app record (a memo's transcript read back says
    nothing of where the persona is now)."""
    anchor = world.view.anchors.get(session.anchor_id or "")
    if anchor is None:
        return text
    for value in anchor.record.model_dump().values():
        if isinstance(value, str) and len(value) >= 20:
            text = text.replace(value, " ")
    return text


def _calendar_records(world: World) -> list[Finding]:
    """An appointment inside a trip's span must be in the trip city."""
    out = []
    for anchor in world.view.anchors.values():
        record = anchor.record
        if record.kind != "calendar":
            continue
        trip = world.trip_at(record.start)
        if trip is None or trip.city in record.location or trip.city in record.title:
            continue
        if world.cues.any(world.cues.remote, f"{record.title} {record.location}"):
            continue  # held from anywhere
        holders = [m.id for _, m in world.messages if m.role == "system" and m.timestamp == anchor.timestamp]
        out.append(
            world.finding(
                RULE,
                holders[:1],
                f"calendar record {anchor.id} “{record.title}” at {record.location} on {day(record.start)} "
                f"falls inside the {trip.city} trip {trip.first}–{trip.last}",
            )
        )
    return out


# leaf moments lived in person where the persona lives or works (not planned or talked over from afar)
IN_PERSON = frozenset(
    {
        "social_recap",
        "work_deadline",
        "work_meeting_prep",
        "work_win",
        "first_day",
        "job_interview",
        "health_followup",
        "commute_talk",
    }
)


def _lived_elsewhere(world: World) -> list[Finding]:
    """A moment of another episode lived in person (a party, a deadline at work) inside a trip's span."""
    out = []
    for session in world.view.sessions:
        leaf, episode = world.leaf(session), world.episode(session)
        trip = world.trip_at(session.start)
        if trip is None or leaf is None or episode is None or episode.id == trip.event.id:
            continue
        if leaf.kind not in IN_PERSON:
            continue
        where = episode.params.get("city") or episode.params.get("restaurant") or episode.params.get("clinic")
        if where and trip.city in where:
            continue
        out.append(
            world.finding(
                RULE,
                [session.messages[0].id] if session.messages else [],
                f"{session.id} ({leaf.kind} of “{episode.title}”{f', at {where}' if where else ''}) "
                f"is lived on "
                f"{day(session.start)}, inside the {trip.city} trip {trip.first}–{trip.last}",
            )
        )
    return out
