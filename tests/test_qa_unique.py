"""Questions have exactly one right answer in the persona's whole ledger (keme.qa.resolve)."""

from __future__ import annotations

import random
from datetime import datetime

from keme.models import Claim, Message, QAItem, Query
from keme.qa.resolve import Ledger, completed, uniqueness
from tests.conftest import sample_dataset

T0 = datetime(2026, 4, 3, 9, 0)
LATER = datetime(2026, 5, 1, 20, 0)


def _message(mid: str, text: str, when: datetime = T0) -> Message:
    return Message(id=mid, role="user", content=text, timestamp=when)


def _claim(mid: str, k: int, subject: str, predicate: str, value: str, when: datetime = T0) -> Claim:
    return Claim(
        id=f"{mid}-c{k}",
        persona_id="p01",
        message_id=mid,
        speaker="app",
        subject=subject,
        predicate=predicate,
        value=value,
        valid_from=when,
        said="",
    )


def _calendar(title_b: str) -> Ledger:
    """Two calendar records; the second's title is `title_b`."""
    messages = {
        "p01-s0001-m01": _message("p01-s0001-m01", "Ana's drinks · Tap Room"),
        "p01-s0001-m02": _message("p01-s0001-m02", "Saved: Ana's drinks at Tap Room"),
        "p01-s0002-m01": _message("p01-s0002-m01", f"{title_b} · Blue Bar", datetime(2026, 4, 9, 9)),
    }
    claims = [
        _claim("p01-s0001-m01", 1, "anchor:p01-a001", "title", "Ana's drinks"),
        _claim("p01-s0001-m01", 2, "anchor:p01-a001", "location", "Tap Room"),
        _claim("p01-s0001-m02", 1, "anchor:p01-a001", "location", "Tap Room"),
        _claim("p01-s0002-m01", 1, "anchor:p01-a002", "title", title_b, datetime(2026, 4, 9, 9)),
        _claim("p01-s0002-m01", 2, "anchor:p01-a002", "location", "Blue Bar", datetime(2026, 4, 9, 9)),
    ]
    return Ledger(claims, messages)


WHERE = Query(subject="anchor", target="location", where={"title": "Ana's drinks"}, expect=["Tap Room"])


def test_a_title_one_record_carries_resolves_to_its_value():
    resolution = _calendar("Dentist").resolve(WHERE, LATER)
    assert resolution.problem(["Tap Room"]) is None


def test_a_title_two_records_carry_has_several_answers():
    problem = _calendar("Ana's drinks").resolve(WHERE, LATER).problem(["Tap Room"])
    assert problem is not None and "blue bar" in problem


def test_a_record_said_after_the_question_does_not_count():
    assert _calendar("Ana's drinks").resolve(WHERE, datetime(2026, 4, 5)).problem(["Tap Room"]) is None


def test_the_restatement_in_chat_supports_the_record():
    item = QAItem.model_validate(
        {
            "id": "p01-q0001",
            "persona_id": "p01",
            "question": "Where is 'Ana's drinks'?",
            "answer": "Tap Room",
            "spec": {"kind": "entity", "value": "Tap Room"},
            "type": "single_hop",
            "subtype": "calendar.location",
            "evidence": ["p01-s0001-m01"],
            "evidence_sessions": ["p01-s0001"],
            "asked_at": LATER,
            "hops": 1,
            "difficulty": "easy",
            "language": "en",
            "node": "p01-c01-e01",
            "proof": {"op": "value", "quotes": [{"message_id": "p01-s0001-m01", "text": "Tap Room"}]},
            "queries": [WHERE.model_dump()],
        }
    )
    done = completed(item, _calendar("Dentist"))
    assert done.also_supported_by == {"p01-s0001-m01": ["p01-s0001-m02"]}
    assert set(done.claims) == {"p01-s0001-m01-c1", "p01-s0001-m01-c2", "p01-s0001-m02-c1"}


def test_a_persona_attribute_resolves_to_the_version_valid_at_the_time():
    messages = {
        "p01-s0001-m01": _message("p01-s0001-m01", "I'm at Acme"),
        "p01-s0009-m01": _message("p01-s0009-m01", "Started at Globex", datetime(2026, 4, 20)),
    }
    first = _claim("p01-s0001-m01", 1, "persona", "career.company", "Acme")
    second = _claim("p01-s0009-m01", 1, "persona", "career.company", "Globex", datetime(2026, 4, 20))
    ledger = Ledger([first.model_copy(update={"valid_to": datetime(2026, 4, 20)}), second], messages)
    query = Query(subject="persona", target="career.company", expect=["Acme"], at=datetime(2026, 4, 10))
    assert ledger.resolve(query, LATER).problem(["Acme"]) is None
    current = Query(subject="persona", target="career.company", expect=["Globex"])
    assert ledger.resolve(current, LATER).problem(["Globex"]) is None


def test_the_days_a_topic_was_talked_about_include_every_message_naming_it():
    messages = {
        "p01-s0001-m01": _message("p01-s0001-m01", "the warehouse migration is late"),
        "p01-s0004-m01": _message("p01-s0004-m01", "more on the warehouse migration", datetime(2026, 4, 7)),
    }
    claims = [_claim("p01-s0001-m01", 1, "event:p01-c01-e02", "project", "warehouse migration")]
    query = Query(
        subject="event", target="said_on", where={"project": "warehouse migration"}, expect=["2026-04-03"]
    )
    problem = Ledger(claims, messages).resolve(query, LATER).problem(query.expect)
    assert problem is not None and "2026-04-07" in problem


def test_changing_one_claim_flags_exactly_the_items_that_rest_on_it():
    """The mutation check: over many random claims of the shipped sample, giving one claim a new value
    makes exactly the items whose `claims` list it fail to resolve, and no other item."""
    data = sample_dataset()
    rng = random.Random(13)
    by_persona: dict[str, list[QAItem]] = {}
    for item in data.qa:
        by_persona.setdefault(item.persona_id, []).append(item)
    messages = {m.id: m for s in data.sessions for m in s.messages}
    claims = list(data.claims)
    used = {c for item in data.qa for c in item.claims}
    picks = rng.sample([c for c in claims if c.id in used], 40) + rng.sample(claims, 40)
    starts = {
        p.id: [m.timestamp for s in data.sessions if s.persona_id == p.id and (m := s.opened_by_user)]
        for p in data.personas
    }

    def ledger_of(persona_id: str, claims: list) -> Ledger:
        """The persona's own ledger, as Ledger.of builds it (its messages only: a recap's period is counted
        over the days this persona talked)."""
        own = {mid: m for mid, m in messages.items() if mid.startswith(f"{persona_id}-")}
        return Ledger([c for c in claims if c.persona_id == persona_id], own, starts[persona_id])

    assert all(uniqueness(i, ledger_of(i.persona_id, claims)) is None for i in data.qa)
    for pick in picks:
        mutated = [
            c.model_copy(update={"value": f"mutated {pick.id}"}) if c.id == pick.id else c for c in claims
        ]
        ledger = ledger_of(pick.persona_id, mutated)
        items = by_persona.get(pick.persona_id, [])
        flagged = {i.id for i in items if uniqueness(i, ledger) is not None}
        assert flagged == {i.id for i in items if pick.id in i.claims}, pick.id
