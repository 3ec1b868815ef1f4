"""The write chain: hash formula, insert triggers, tamper detection and repair
(baselines/factmem/chain.py)."""

from __future__ import annotations

import hashlib
import sqlite3
from datetime import datetime, timedelta

import pytest

from baselines.factmem.chain import WriteChain, digest, record_hash
from baselines.factmem.db import connect, to_millis

T0 = datetime(2026, 3, 4, 8, 0)  # 2026-03-04T08:00:00 on the (UTC-read) replay clock


def sha(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


@pytest.fixture
def chain(tmp_path):
    conn = connect(tmp_path / "memory.sqlite3")
    yield WriteChain(conn)
    conn.close()


def _fill(chain: WriteChain, n: int) -> None:
    for i in range(n):
        chain.append(f"payload {i}", T0 + timedelta(minutes=i), "user", f"s1/m{i}", "fact.put", f"key{i}")


def _tamper(path, sql: str, *params) -> None:
    """A plain connection, nothing registered or bypassed: an UPDATE is what tampering looks like."""
    raw = sqlite3.connect(str(path))
    with raw:
        raw.execute(sql, params)
    raw.close()


def test_replay_time_is_integer_unix_milliseconds():
    # 2026-01-01T00:00Z = 1767225600 s; + 62 days (Jan 31 + Feb 28 + 3) + 8 h
    assert to_millis(T0) == (1767225600 + 62 * 86400 + 8 * 3600) * 1000 == 1772611200000


def test_record_hash_is_sha256_of_the_pipe_joined_fields():
    payload, context = sha("home address"), sha("s1/m1")
    expected = sha(f"|{payload}|1772611200000|user|{context}")  # genesis: prev_hash is ""
    assert record_hash("", payload, 1772611200000, "user", context) == expected


def test_appended_records_carry_the_hand_computed_hashes(chain):
    first = chain.append("home address", T0, "user", "s1/m1", "fact.put", "address_home")
    second = chain.append("bank card", T0 + timedelta(seconds=1), "app:Wallet", "s1/m2", "fact.put")
    assert (
        first.prev_hash == ""
        and first.payload_hash == sha("home address")
        and first.context_hash == sha("s1/m1")
    )
    assert first.current_hash == sha(f"|{sha('home address')}|1772611200000|user|{sha('s1/m1')}")
    assert second.prev_hash == first.current_hash
    assert second.current_hash == sha(
        f"{first.current_hash}|{sha('bank card')}|1772611201000|app:Wallet|{sha('s1/m2')}"
    )
    assert [r.current_hash for r in chain.records()] == [first.current_hash, second.current_hash]


def test_trigger_rejects_a_record_that_does_not_link_to_the_last_one(chain):
    _fill(chain, 2)
    wrong_prev = "0" * 64
    payload, context = digest("x"), digest("c")
    sealed = record_hash(wrong_prev, payload, 1, "user", context)  # self-consistent, but unlinked
    with pytest.raises(sqlite3.IntegrityError, match="prev_hash"):
        chain.conn.execute(
            "INSERT INTO write_chain"
            " (prev_hash, current_hash, payload_hash, timestamp, source, context_hash, kind)"
            " VALUES (?, ?, ?, 1, 'user', ?, 'fact.put')",
            (wrong_prev, sealed, payload, context),
        )
    assert len(chain.records()) == 2


def test_trigger_rejects_a_first_record_with_a_non_empty_prev_hash(chain):
    payload, context = digest("x"), digest("c")
    with pytest.raises(sqlite3.IntegrityError, match="prev_hash"):
        chain.conn.execute(
            "INSERT INTO write_chain"
            " (prev_hash, current_hash, payload_hash, timestamp, source, context_hash, kind)"
            " VALUES ('abc', ?, ?, 1, 'user', ?, 'fact.put')",
            (record_hash("abc", payload, 1, "user", context), payload, context),
        )


def test_trigger_rejects_a_current_hash_that_is_not_the_records_own(chain):
    _fill(chain, 1)
    prev, payload, context = chain.head(), digest("x"), digest("c")
    with pytest.raises(sqlite3.IntegrityError, match="current_hash"):
        chain.conn.execute(
            "INSERT INTO write_chain"
            " (prev_hash, current_hash, payload_hash, timestamp, source, context_hash, kind)"
            " VALUES (?, ?, ?, 2, 'user', ?, 'fact.put')",
            (prev, record_hash(prev, payload, 3, "user", context), payload, context),
        )
    assert len(chain.records()) == 1


def test_a_connection_without_the_hash_function_cannot_insert(tmp_path, chain):
    _fill(chain, 1)
    raw = sqlite3.connect(str(tmp_path / "memory.sqlite3"))
    with pytest.raises(sqlite3.OperationalError, match="factmem_chain_hash"):
        raw.execute(
            "INSERT INTO write_chain"
            " (prev_hash, current_hash, payload_hash, timestamp, source, context_hash, kind)"
            " VALUES (?, 'x', 'y', 1, 'user', 'z', 'fact.put')",
            (chain.head(),),
        )
    raw.close()


def test_source_may_not_contain_the_field_separator(chain):
    with pytest.raises(ValueError):
        chain.append("x", T0, "app|Wallet", "c", "fact.put")


def test_verify_passes_an_intact_chain(chain):
    _fill(chain, 5)
    assert chain.verify() is None


def test_verify_pinpoints_the_first_tampered_record(tmp_path, chain):
    _fill(chain, 6)
    _tamper(
        tmp_path / "memory.sqlite3", "UPDATE write_chain SET payload_hash = ? WHERE id = 3", digest("forged")
    )
    _tamper(tmp_path / "memory.sqlite3", "UPDATE write_chain SET source = 'evil' WHERE id = 5")
    assert chain.verify() == 3


def test_a_tampered_record_that_was_rehashed_breaks_the_next_link(tmp_path, chain):
    _fill(chain, 4)
    r2 = chain.get(2)
    forged = digest("forged")
    _tamper(
        tmp_path / "memory.sqlite3",
        "UPDATE write_chain SET payload_hash = ?, current_hash = ? WHERE id = 2",
        forged,
        record_hash(r2.prev_hash, forged, r2.timestamp, r2.source, r2.context_hash),
    )
    assert chain.verify() == 3


def test_repair_reseals_from_the_last_good_record_and_logs_itself(tmp_path, chain):
    _fill(chain, 5)
    before = chain.records()
    _tamper(tmp_path / "memory.sqlite3", "UPDATE write_chain SET timestamp = timestamp + 1 WHERE id = 3")
    assert chain.verify() == 3
    assert chain.repair(T0 + timedelta(days=1)) == 3
    after = chain.records()
    assert chain.verify() is None
    # good records untouched
    assert [r.current_hash for r in after[:2]] == [r.current_hash for r in before[:2]]
    assert after[2].prev_hash == before[1].current_hash and after[2].current_hash != before[2].current_hash
    log = after[-1]
    assert (
        len(after) == 6
        and log.kind == "repair"
        and log.ref == "from:3"
        and log.prev_hash == after[4].current_hash
    )


def test_repair_of_an_intact_chain_changes_nothing(chain):
    _fill(chain, 3)
    before = chain.records()
    assert chain.repair(T0) is None
    assert chain.records() == before
