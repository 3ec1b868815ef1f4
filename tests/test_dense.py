"""Dense retrieval (baselines/dense.py) with an injected embedder: which messages come back, in what order."""

from __future__ import annotations

from datetime import UTC, datetime

import numpy as np

from baselines.dense import Dense, instant
from eval.contract import Query
from keme.models import Message, Session

WORDS = ("swim", "yoga", "pasta")


class WordEmbedder:
    """One axis per word of WORDS: a text's vector counts them (so texts tie when their counts do)."""

    name = "words"

    def embed(self, texts: list[str]) -> np.ndarray:
        return np.array([[text.count(w) for w in WORDS] for text in texts], dtype=np.float32)


def session(sid: str, start: datetime, lines: list[str]) -> Session:
    messages = [
        Message(id=f"{sid}-m{i}", role="user", content=line, timestamp=start.replace(minute=i))
        for i, line in enumerate(lines)
    ]
    end = start.replace(minute=59)
    return Session(
        id=sid,
        persona_id="p01",
        event_id="e1",
        language="en",
        pattern="chat",
        start=start,
        end=end,
        messages=messages,
    )


def dense_of(*sessions: Session) -> Dense:
    dense = Dense(WordEmbedder())
    dense.reset("p01")
    for s in sessions:
        dense.ingest("p01", s)
    dense.flush("p01")
    return dense


def ask(dense: Dense, text: str, now: datetime, k: int = 10) -> list[str]:
    hits = dense.retrieve("p01", Query(text=text, now=now), k).hits
    return [h.message_ids[0] for h in hits]


MARCH = session("s1", datetime(2026, 3, 2, 9), ["went for a swim", "pasta for lunch", "swim swim again"])
APRIL = session("s2", datetime(2026, 4, 6, 18), ["a long swim today", "yoga class"])


def test_only_messages_said_by_now_are_returned():
    dense = dense_of(MARCH, APRIL)
    # every message said by then, best first (pasta scores 0 but is still ranked); none of April's
    assert ask(dense, "swim", datetime(2026, 3, 31)) == ["s1-m2", "s1-m0", "s1-m1"]


def test_a_message_said_at_the_very_moment_of_the_question_counts():
    dense = dense_of(MARCH, APRIL)
    assert "s2-m0" in ask(dense, "swim", datetime(2026, 4, 6, 18, 0))


def test_equal_scores_keep_the_order_the_messages_were_ingested_in():
    dense = dense_of(MARCH, APRIL)
    # s1-m0 and s2-m0 each say "swim" once: a tie, broken by position
    assert ask(dense, "swim", datetime(2026, 5, 1)) == ["s1-m2", "s1-m0", "s2-m0", "s1-m1", "s2-m1"]


def test_k_cuts_the_ranking_after_the_time_filter():
    dense = dense_of(MARCH, APRIL)
    assert ask(dense, "yoga", datetime(2026, 3, 31), k=1) == ["s1-m0"]


def test_messages_ingested_after_a_question_are_found_by_the_next():
    dense = dense_of(MARCH)
    assert ask(dense, "yoga", datetime(2026, 5, 1), k=1) == ["s1-m0"]
    dense.ingest("p01", APRIL)
    assert ask(dense, "yoga", datetime(2026, 5, 1), k=1) == ["s2-m1"]


def test_an_empty_store_returns_no_hits():
    dense = dense_of()
    assert ask(dense, "swim", datetime(2026, 5, 1)) == []


def test_instants_order_as_the_datetimes_do():
    moments = [datetime(2026, 3, 29, 1, 59, 59, 999999), datetime(2026, 3, 29, 2), datetime(1999, 12, 31)]
    assert sorted(moments, key=instant) == sorted(moments)
    aware = [m.replace(tzinfo=UTC) for m in moments]
    assert [instant(m) for m in aware] == [instant(m) for m in moments]
