"""Questions over many claims (counts, totals, majorities, histories, spans, recaps, habits) resolve
against the persona's whole ledger too (keme.qa.resolve)."""

from __future__ import annotations

from datetime import date, datetime
from types import SimpleNamespace

from keme.days import quarters_within
from keme.models import Claim, ImageRecord, Message, Query, Session
from keme.qa.resolve import Ledger

APRIL = (date(2026, 4, 1), date(2026, 4, 30))
ASKED = datetime(2026, 5, 2, 20, 0)


def _message(mid: str, text: str, when: datetime) -> Message:
    return Message(id=mid, role="user", content=text, timestamp=when)


def _claim(mid: str, subject: str, predicate: str, value: str, when: datetime, speaker: str = "app") -> Claim:
    return Claim(
        id=f"{mid}-{predicate}",
        persona_id="p01",
        message_id=mid,
        speaker=speaker,
        subject=subject,
        predicate=predicate,
        value=value,
        valid_from=when,
        said=value,
    )


def _bills() -> Ledger:
    """Four Spotify-or-grocery bill records in April, one in May, and a payment the user reported in
    chat (not a record)."""
    rows = [
        ("p01-s0001-m01", "a1", "Spotify", "Subscriptions", "11.99", datetime(2026, 4, 3, 9)),
        ("p01-s0002-m01", "a2", "Trader Joe's", "Groceries", "42.10", datetime(2026, 4, 9, 18)),
        ("p01-s0006-m01", "a5", "Spotify", "Subscriptions", "11.99", datetime(2026, 4, 15, 9)),
        ("p01-s0003-m01", "a3", "Spotify", "Subscriptions", "11.99", datetime(2026, 4, 28, 9)),
        ("p01-s0004-m01", "a4", "Spotify", "Subscriptions", "11.99", datetime(2026, 5, 1, 9)),
    ]
    messages, claims = {}, []
    for mid, anchor, merchant, category, amount, when in rows:
        messages[mid] = _message(mid, f"Payment of ${amount} to {merchant} · {category}", when)
        for predicate, value in (("merchant", merchant), ("expense_category", category), ("amount", amount)):
            claims.append(_claim(mid, f"anchor:{anchor}", predicate, value, when))
    chat = datetime(2026, 4, 20, 12)
    messages["p01-s0005-m03"] = _message("p01-s0005-m03", "I paid Spotify $11.99 in cash", chat)
    claims += [
        _claim("p01-s0005-m03", "anchor:chat", "merchant", "Spotify", chat, "user"),
        _claim("p01-s0005-m03", "anchor:chat", "amount", "11.99", chat, "user"),
    ]
    return Ledger(claims, messages)


def _records(target: str, aggregate: str, expect: str, **where: str) -> Query:
    return Query(
        subject="anchor",
        target=target,
        where=where,
        source="app",
        start=APRIL[0],
        end=APRIL[1],
        aggregate=aggregate,
        expect=[expect],
    )


def test_a_count_by_records_counts_the_periods_records_only():
    query = _records("merchant", "count", "3", merchant="Spotify")
    assert _bills().resolve(query, ASKED).problem(query.expect) is None


def test_a_count_that_misses_a_record_is_not_backed():
    query = _records("merchant", "count", "2", merchant="Spotify")
    assert _bills().resolve(query, ASKED).problem(query.expect) is not None


def test_a_total_by_records_leaves_out_a_payment_told_in_chat():
    query = _records("amount", "sum", "35.97", expense_category="Subscriptions")
    assert _bills().resolve(query, ASKED).problem(query.expect) is None


def test_the_category_most_records_have_is_the_majority():
    query = _records("expense_category", "mode", "Subscriptions")
    assert _bills().resolve(query, ASKED).problem(query.expect) is None


def test_a_majority_of_two_against_one_is_no_habit_and_has_two_answers():
    query = _records("expense_category", "mode", "Subscriptions").model_copy(
        update={"end": date(2026, 4, 12)}  # two Spotify records, one grocery record
    )
    problem = _bills().resolve(query, ASKED).problem(query.expect)
    assert problem is not None and "groceries" in problem


def _phones() -> Ledger:
    said = [
        ("p01-s0001-m02", "OnePlus 12", datetime(2026, 4, 2, 9)),
        ("p01-s0006-m04", "Galaxy S23", datetime(2026, 4, 16, 9)),
        ("p01-s0009-m01", "Pixel 9", datetime(2026, 4, 27, 9)),
    ]
    messages = {mid: _message(mid, f"my phone is a {v}", when) for mid, v, when in said}
    claims = [_claim(mid, "persona", "tech.phone", v, when, "user") for mid, v, when in said]
    return Ledger(claims, messages)


def _history(*phones: str) -> str | None:
    query = Query(subject="persona", target="tech.phone", aggregate="history", expect=list(phones))
    return _phones().resolve(query, ASKED).problem(query.expect)


def test_a_history_is_the_values_in_the_order_they_took_effect():
    assert _history("OnePlus 12", "Galaxy S23", "Pixel 9") is None


def test_a_history_in_another_order_is_wrong():
    problem = _history("Galaxy S23", "OnePlus 12", "Pixel 9")
    assert problem is not None and "order" in problem


def test_a_history_missing_a_version_has_another_answer():
    assert _history("OnePlus 12", "Pixel 9") is not None


def _trip(extra_day: datetime | None = None) -> Ledger:
    """A trip to Kyoto talked about on Apr 3 and (its companion only) Apr 6; optionally named again later."""
    messages = {
        "p01-s0001-m01": _message("p01-s0001-m01", "Planning Kyoto", datetime(2026, 4, 3, 9)),
        "p01-s0002-m01": _message("p01-s0002-m01", "Mina is coming along", datetime(2026, 4, 6, 9)),
    }
    claims = [
        _claim("p01-s0001-m01", "event:e1", "destination", "Kyoto", datetime(2026, 4, 3, 9), "user"),
        _claim("p01-s0002-m01", "event:e1", "companion", "Mina", datetime(2026, 4, 6, 9), "user"),
    ]
    if extra_day is not None:
        messages["p01-s0007-m01"] = _message("p01-s0007-m01", "Kyoto photos are printed", extra_day)
    return Ledger(claims, messages)


SPAN = Query(
    subject="event", target="said_on", where={"destination": "Kyoto"}, aggregate="span", expect=["3"]
)


def test_a_span_runs_over_every_day_the_subject_was_talked_about():
    assert _trip().resolve(SPAN, ASKED).problem(SPAN.expect) is None


def test_a_later_mention_lengthens_the_span_and_breaks_the_gold():
    ledger = _trip(datetime(2026, 4, 20, 9))
    assert ledger.resolve(SPAN, ASKED).problem(SPAN.expect) is not None


def test_a_recap_of_a_subject_two_events_share_is_ambiguous():
    ledger = _trip()
    ledger = Ledger(
        ledger.claims
        + [_claim("p01-s0009-m01", "event:e9", "destination", "Kyoto", datetime(2026, 9, 1, 9), "user")],
        ledger.messages
        | {"p01-s0009-m01": _message("p01-s0009-m01", "Kyoto again!", datetime(2026, 9, 1, 9))},
    )
    query = Query(
        subject="event", target="*", where={"destination": "Kyoto"}, aggregate="covers", expect=["Mina"]
    )
    assert _trip().resolve(query, ASKED).problem(query.expect) is None
    problem = ledger.resolve(query, datetime(2026, 9, 2)).problem(query.expect)
    assert problem is not None and "2 subjects" in problem


def _april(target: str, aggregate: str, *expect: str) -> Query:
    """A question about April as a whole."""
    return Query(
        subject="any", target=target, start=APRIL[0], end=APRIL[1], aggregate=aggregate, expect=list(expect)
    )


def test_a_recap_of_a_month_whose_points_sit_in_its_first_days_does_not_cover_it():
    days = [datetime(2026, 4, d, 9) for d in (2, 4, 6, 15, 28)]
    messages = {f"p01-s{d.day:04d}-m01": _message(f"p01-s{d.day:04d}-m01", f"day {d.day}", d) for d in days}
    claims = [
        _claim(mid, f"event:e{n}", "project", f"project {n}", m.timestamp, "user")
        for n, (mid, m) in enumerate(messages.items())
    ]
    ledger = Ledger(claims, messages)
    early = _april("*", "covers", "project 0", "project 1", "project 2")
    spread = _april("*", "covers", "project 0", "project 3", "project 4")
    assert ledger.resolve(early, ASKED).problem(early.expect) is not None
    assert ledger.resolve(spread, ASKED).problem(spread.expect) is None


def test_the_usual_time_of_day_is_when_most_sessions_of_the_period_began():
    starts = [datetime(2026, 4, d, h) for d, h in ((2, 20), (5, 21), (9, 8), (12, 19))]
    ledger = Ledger([], {}, starts)
    evening = _april("session_start", "sessions", "evening")
    assert ledger.resolve(evening, ASKED).problem(evening.expect) is None
    morning = _april("session_start", "sessions", "morning")
    assert ledger.resolve(morning, ASKED).problem(morning.expect) is not None


def test_a_near_tie_of_times_of_day_is_several_answers():
    """Nine evening chats against eight morning ones: "usually in the evening" is not what anyone reading
    them would say."""
    starts = [datetime(2026, 4, d, 20) for d in range(1, 10)] + [
        datetime(2026, 4, d, 9) for d in range(10, 18)
    ]
    evening = _april("session_start", "sessions", "evening")
    problem = Ledger([], {}, starts).resolve(evening, ASKED).problem(evening.expect)
    assert problem is not None and "morning" in problem


def test_a_session_the_user_never_wrote_in_is_not_a_chat_of_theirs():
    opened = datetime(2026, 4, 2, 20)
    chat = Session(
        id="p01-s0001",
        persona_id="p01",
        event_id="p01-c01-e01",
        language="en",
        pattern="smalltalk",
        start=opened,
        end=opened,
        messages=[_message("p01-s0001-m01", "hi", opened)],
    )
    pushed = chat.model_copy(
        update={
            "id": "p01-s0002",
            "messages": [Message(id="p01-s0002-m01", role="system", content="Payment", timestamp=opened)],
        }
    )
    world = SimpleNamespace(claims=[], messages={}, sessions=[chat, pushed])
    assert Ledger.of(world).session_starts == [opened]


def test_a_majority_rests_on_the_claims_whose_change_would_overturn_it():
    ledger = _bills()
    query = _records("expense_category", "mode", "Subscriptions")
    resolution = ledger.resolve(query, ASKED)
    critical = {c.id for c in ledger.critical(query, ASKED, resolution.basis)}
    # three against one: any one Spotify record filed otherwise leaves two against one, no clear majority
    spotify = ("p01-s0001-m01", "p01-s0006-m01", "p01-s0003-m01")
    assert critical == {f"{m}-expense_category" for m in spotify}


def _ticket(n: int, destination: str, seat: str, day: int) -> tuple[ImageRecord, Message]:
    message = _message(f"p01-s{n:04d}-m02", "here's my ticket", datetime(2026, 4, day, 9))
    image = ImageRecord(
        id=f"p01-img{n:03d}",
        persona_id="p01",
        session_id=f"p01-s{n:04d}",
        message_id=message.id,
        path=f"images/p01-img{n:03d}.png",
        sha256="0" * 64,
        template="train_ticket",
        language="en",
        caption="a train ticket",
        about={"destination": destination},
        facts={"seat": seat, "price": "$48.00"},
        dom_text=f"{destination} seat {seat} $48.00",
        screen={},
        width=390,
        height=844,
    )
    return image, message


def _tickets(*rows: tuple[int, str, str, int]) -> Ledger:
    made = [_ticket(*row) for row in rows]
    return Ledger([], {m.id: m for _, m in made}, [], [i for i, _ in made])


SEAT = Query(
    subject="image",
    target="seat",
    where={"template": "train_ticket", "destination": "Boston"},
    expect=["12A"],
)


def test_a_screenshot_detail_one_page_shows_resolves_to_it():
    ledger = _tickets((1, "Boston", "12A", 3), (2, "Albany", "7C", 9))
    assert ledger.resolve(SEAT, ASKED).problem(SEAT.expect) is None


def test_a_detail_another_screenshot_of_the_same_trip_shows_otherwise_has_two_answers():
    ledger = _tickets((1, "Boston", "12A", 3), (2, "Boston", "7C", 9))
    problem = ledger.resolve(SEAT, ASKED).problem(SEAT.expect)
    assert problem is not None and "7c" in problem


def test_a_total_over_screenshots_counts_those_of_the_period():
    ledger = _tickets((1, "Boston", "12A", 3), (2, "Albany", "7C", 9), (3, "Boston", "3F", 30))
    total = Query(
        subject="image",
        target="price",
        where={"template": "train_ticket"},
        start=date(2026, 4, 1),
        end=date(2026, 4, 15),
        aggregate="sum",
        expect=["96"],
    )
    assert ledger.resolve(total, ASKED).problem(total.expect) is None


def _chat(n: int, topic: str, value: str) -> ImageRecord:
    image, _ = _ticket(n, "", "", 3 + n)
    line = f"Mina: let's meet at {value}"
    return image.model_copy(
        update={
            "template": "chat_friend",
            "about": {"person": "Mina", "topic": topic, "value": value, "value_fact": "msg-1"},
            "facts": {"msg-1": line},
            "dom_text": line,
        }
    )


def _chats(*rows: tuple[int, str, str]) -> Ledger:
    images = [_chat(*row) for row in rows]
    messages = {i.message_id: _message(i.message_id, "look at this", datetime(2026, 4, 3, 9)) for i in images}
    return Ledger([], messages, [], images)


PLACE = Query(
    subject="image",
    target="about.value",
    where={"template": "chat_friend", "person": "Mina", "topic": "meeting_place"},
    expect=["Blue Bottle"],
)


def test_a_chat_screenshot_on_another_topic_does_not_answer_the_question():
    ledger = _chats((1, "meeting_place", "Blue Bottle"), (2, "dinner", "Nopa"))
    assert ledger.resolve(PLACE, ASKED).problem(PLACE.expect) is None


def test_two_chat_screenshots_on_the_topic_with_other_values_are_two_answers():
    ledger = _chats((1, "meeting_place", "Blue Bottle"), (2, "meeting_place", "Ritual"))
    assert ledger.resolve(PLACE, ASKED).problem(PLACE.expect) is not None


def test_the_quarters_asked_about_are_the_calendar_quarters_wholly_inside_the_trajectory():
    assert quarters_within(date(2026, 1, 1), date(2026, 12, 31)) == [
        (date(2026, 1, 1), date(2026, 3, 31)),
        (date(2026, 4, 1), date(2026, 6, 30)),
        (date(2026, 7, 1), date(2026, 9, 30)),
        (date(2026, 10, 1), date(2026, 12, 31)),
    ]
    assert quarters_within(date(2026, 2, 1), date(2026, 6, 30)) == [(date(2026, 4, 1), date(2026, 6, 30))]
