"""The fact layer: AES-GCM values, a 0600 key file, deprecation instead of deletion, exact keys only."""

from __future__ import annotations

import hashlib
import sqlite3
import stat
from datetime import datetime, timedelta

import pytest
from cryptography.exceptions import InvalidTag
from cryptography.hazmat.primitives.ciphers.aead import AESGCM

from baselines.factmem import crypto
from baselines.factmem.chain import WriteChain
from baselines.factmem.db import connect
from baselines.factmem.facts import FactStore

T0 = datetime(2026, 3, 4, 8, 0)


@pytest.fixture
def store(tmp_path):
    conn = connect(tmp_path / "memory.sqlite3")
    key = crypto.load_or_create_key(tmp_path / "memory.key")
    yield FactStore(conn, key, WriteChain(conn))
    conn.close()


def test_key_file_is_created_owner_only_and_reused(tmp_path):
    key = crypto.load_or_create_key(tmp_path / "k")
    assert len(key) == 32
    assert stat.S_IMODE((tmp_path / "k").stat().st_mode) == 0o600
    assert crypto.load_or_create_key(tmp_path / "k") == key


def test_a_value_round_trips_and_each_encryption_uses_a_fresh_nonce():
    key = AESGCM.generate_key(bit_length=256)
    first, second = (
        crypto.encrypt(key, "shellfish", b"health.allergy"),
        crypto.encrypt(key, "shellfish", b"health.allergy"),
    )
    assert first[:12] != second[:12]  # 96-bit random nonce per value
    assert len(first) == 12 + len(b"shellfish") + 16  # nonce + ciphertext + GCM tag
    assert crypto.decrypt(key, first, b"health.allergy") == "shellfish"


def test_values_are_not_readable_in_the_database_file(tmp_path, store):
    store.put("address_home", "742 Evergreen Terrace, Springfield", T0)
    store.put("wifi_password", "rocket6935!", T0)
    raw = (tmp_path / "memory.sqlite3").read_bytes()
    assert b"Evergreen" not in raw and b"rocket6935" not in raw
    assert b"address_home" in raw  # keys stay plaintext: exact lookup needs no decryption


def test_a_wrong_key_fails_decryption(tmp_path, store):
    store.put("bank_card_last4", "4821", T0)
    other = FactStore(store.conn, bytes(32), store.chain)
    with pytest.raises(InvalidTag):
        other.get("bank_card_last4")


def test_a_ciphertext_moved_to_another_key_fails_decryption(store):
    store.put("address_home", "742 Evergreen Terrace", T0)
    store.put("address_work", "1 Infinite Loop", T0)
    store.conn.execute(
        "UPDATE facts SET value = (SELECT value FROM facts WHERE key = 'address_home')"
        " WHERE key = 'address_work'"
    )
    with pytest.raises(InvalidTag):
        store.get("address_work")


def test_an_update_deprecates_the_old_value_instead_of_deleting_it(store):
    store.put("career.company", "I work at Saltbox Studios", T0)
    store.put("career.company", "I started at Northwind today", T0 + timedelta(days=40))
    assert store.get("career.company") == "I started at Northwind today"
    history = store.history("career.company")
    assert [(v.value, v.status) for v in history] == [
        ("I work at Saltbox Studios", "DEPRECATED"),
        ("I started at Northwind today", "ACTIVE"),
    ]
    assert history[1].at == T0 + timedelta(days=40)


def test_a_key_can_never_hold_two_active_values(store):
    store.put("home.city", "Minneapolis", T0)
    row = store.conn.execute("SELECT value, at, source, chain_id FROM facts").fetchone()
    with pytest.raises(sqlite3.IntegrityError):
        store.conn.execute(
            "INSERT INTO facts (key, value, status, at, source, chain_id)"
            " VALUES ('home.city', ?, 'ACTIVE', ?, ?, ?)",
            row,
        )


def test_lookup_is_by_exact_key_only(store):
    store.put("career.company", "Saltbox Studios", T0)
    for probe in (
        "career",
        "career.",
        "career.%",
        "career.compan_",
        "CAREER.COMPANY",
        "career.company ",
        "%",
    ):
        assert store.get(probe) is None and not store.has(probe) and store.history(probe) == []
    assert store.get("career.company") == "Saltbox Studios"
    assert store.keys() == ["career.company"]


def test_every_write_appends_a_chain_event_sealing_key_and_ciphertext(store):
    first = store.put("home.city", "Minneapolis", T0, source="user", context="s1/m3")
    second = store.put("home.city", "Denver", T0 + timedelta(days=1), source="user", context="s9/m1")
    events = store.chain.records()
    assert [e.kind for e in events] == ["fact.put", "fact.update"] and [e.ref for e in events] == [
        "home.city"
    ] * 2
    assert [first.chain_id, second.chain_id] == [e.id for e in events]
    blob = store.conn.execute("SELECT value FROM facts WHERE id = ?", (second.id,)).fetchone()[0]
    assert events[1].payload_hash == hashlib.sha256(b"home.city|" + blob).hexdigest()
    assert events[1].context_hash == hashlib.sha256(b"s9/m1").hexdigest()
    assert store.chain.verify() is None and store.audit() == []


def test_audit_finds_a_fact_row_whose_ciphertext_was_swapped(store):
    store.put("a", "one", T0)
    store.put("a", "two", T0 + timedelta(seconds=1))
    store.conn.execute("UPDATE facts SET value = (SELECT value FROM facts WHERE id = 1) WHERE id = 2")
    assert store.audit() == [2]


def test_a_failed_write_leaves_no_trace(store):
    store.put("home.city", "Minneapolis", T0)
    with pytest.raises(ValueError):
        store.put("", "nowhere", T0)
    store.conn.execute("CREATE TRIGGER boom BEFORE INSERT ON facts BEGIN SELECT RAISE(ABORT, 'boom'); END")
    with pytest.raises(sqlite3.IntegrityError):
        store.put("home.city", "Denver", T0 + timedelta(days=1))
    assert store.get("home.city") == "Minneapolis"  # the deprecation was rolled back with the insert
    assert len(store.chain.records()) == 1
