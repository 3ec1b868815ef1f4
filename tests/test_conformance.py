"""Every registered memory system (and one behind the subprocess adapter) honours the contract."""

from __future__ import annotations

from datetime import datetime, timedelta

import pytest

from eval.contract import MemorySystem, Query, Retrieval, Sized, Usage
from eval.registry import REGISTRY, create, default_names
from eval.subprocess_adapter import SubprocessSystem
from keme.models import Message, Session

START = datetime(2026, 3, 1, 9, 0)
SYSTEMS = default_names() + ["subprocess:bm25"]  # mem0, LangMem: tests/test_field_systems.py


def session(scope: str, index: int, text: str, day: int) -> Session:
    when = START + timedelta(days=day)
    sid = f"{scope}-s{index}"
    messages = [
        Message(id=f"{sid}-m1", role="user", content=text, timestamp=when),
        Message(
            id=f"{sid}-m2",
            role="assistant",
            content=f"Noted: {text.lower()}",
            timestamp=when + timedelta(seconds=20),
        ),
    ]
    return Session(
        id=sid,
        persona_id=scope,
        event_id=f"e{index}",
        language="en",
        pattern="test",
        start=messages[0].timestamp,
        end=messages[-1].timestamp,
        messages=messages,
    )


HISTORY = [
    "I paid the plumber 180 dollars for the kitchen sink",
    "My sister Harriet is visiting from Portland next week",
    "The blue ceramic teapot cracked in the dishwasher",
    "Booked a table at Osteria Francescana for Friday",
]


@pytest.fixture(params=SYSTEMS)
def system(request):
    name = request.param
    built = SubprocessSystem("bm25") if name.startswith("subprocess:") else create(name)
    yield name, built
    close = getattr(built, "close", None)
    if close:
        close()


def _load(system: MemorySystem, scope: str) -> list[Session]:
    system.reset(scope)
    sessions = [session(scope, i, text, i) for i, text in enumerate(HISTORY)]
    for s in sessions:
        assert isinstance(system.ingest(scope, s), Usage)
    system.flush(scope)
    return sessions


def _query(text: str, gold: list[str] | None = None, day: int = 30) -> Query:
    return Query(text=text, now=START + timedelta(days=day), question_id="q", gold=gold)


def test_it_is_a_memory_system_with_a_stable_fingerprint(system):
    _, built = system
    assert isinstance(built, MemorySystem)
    assert built.config_fingerprint() == built.config_fingerprint() != ""


def test_retrieve_returns_at_most_k_traceable_hits(system):
    _, built = system
    sessions = _load(built, "alice")
    ids = {m.id for s in sessions for m in s.messages}
    result = built.retrieve("alice", _query("teapot", gold=["alice-s2-m1"]), 3)
    assert isinstance(result, Retrieval) and len(result.hits) <= 3
    for hit in result.hits:
        assert set(hit.message_ids) <= ids and hit.session_ids


def test_query_based_systems_find_a_distinctive_fact(system):
    name, built = system
    spec = REGISTRY.get(name.removeprefix("subprocess:"))
    if spec is not None and not spec.query_based:
        pytest.skip("ignores the query by design")
    _load(built, "alice")
    result = built.retrieve("alice", _query("Who is visiting from Portland?", gold=["alice-s1-m1"]), 3)
    assert any("alice-s1-m1" in h.message_ids for h in result.hits)


def test_scopes_are_isolated(system):
    name, built = system
    spec = REGISTRY.get(name.removeprefix("subprocess:"))
    _load(built, "alice")
    built.reset("bob")
    built.ingest("bob", session("bob", 0, "Bob's teapot is green", 0))
    built.flush("bob")
    result = built.retrieve("bob", _query("teapot", gold=["bob-s0-m1"]), 10)
    assert result.hits or (spec is not None and spec.blind)  # a blind baseline retrieves nothing
    assert all(m.startswith("bob-") for h in result.hits for m in h.message_ids)


def test_nothing_from_after_now_is_returned(system):
    _, built = system
    _load(built, "alice")
    result = built.retrieve(
        "alice", _query("teapot plumber Portland Osteria", gold=["alice-s0-m1"], day=1), 10
    )
    assert all(h.timestamp is None or h.timestamp <= START + timedelta(days=1) for h in result.hits)
    assert all(not m.startswith(("alice-s2", "alice-s3")) for h in result.hits for m in h.message_ids)


def test_reset_forgets_everything(system):
    _, built = system
    _load(built, "alice")
    built.reset("alice")
    built.flush("alice")
    assert built.retrieve("alice", _query("teapot", gold=["alice-s2-m1"]), 5).hits == []
    if isinstance(built, Sized):
        assert built.size("alice") == 0
