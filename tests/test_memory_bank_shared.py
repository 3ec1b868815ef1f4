"""Several Memory Banks on one SQLite file (MCP servers sharing a --db): the database is the authority.

Each bank here has its own connection, as a separate process would; ids, limits, deletes and hits are
decided on the whole file, and no write of one bank is overwritten or forgotten by another.
"""

from __future__ import annotations

import sqlite3
from datetime import datetime, timedelta

import pytest

from baselines.memory_bank import storage
from baselines.memory_bank.bank import open_bank
from baselines.memory_bank.records import SemanticEntry, ms
from baselines.memory_bank.storage import StorageError

NOW = datetime(2026, 3, 20, 12, 0)


def save(bank, title: str, minutes: int = 0) -> tuple[str, list[str]]:
    """What the MCP server's save_memory does: the id and the row in one transaction."""
    with bank.transaction():
        entry = SemanticEntry(
            id=bank.new_id("sem"), title=title, content=title, created_at=ms(NOW + timedelta(minutes=minutes))
        )
        return entry.id, bank.add_semantic(entry)


def rows(path) -> set[str]:
    with sqlite3.connect(path) as db:
        return {r[0] for r in db.execute("SELECT id FROM semantic")}


def test_two_banks_saving_in_turn_get_distinct_ids_and_keep_every_row(tmp_path):
    path = tmp_path / "bank.sqlite"
    a, b = open_bank(path), open_bank(path)
    saved = [save(bank, f"note {i}", i)[0] for i in range(20) for bank in (a, b)]
    assert len(set(saved)) == 40 and rows(path) == set(saved)


def test_a_save_by_one_bank_is_found_by_the_other(tmp_path):
    path = tmp_path / "bank.sqlite"
    a, b = open_bank(path), open_bank(path)
    save(a, "oat latte at the corner cafe")
    with b.transaction():
        found = b.search("latte", NOW)
    assert [s.entry.title for s in found] == ["oat latte at the corner cafe"]


def test_a_delete_by_one_bank_is_forgotten_by_the_other(tmp_path):
    path = tmp_path / "bank.sqlite"
    a, b = open_bank(path), open_bank(path)
    entry_id, _ = save(a, "dentist on friday")
    with b.transaction():
        assert entry_id in b.semantic
    assert a.delete(entry_id)
    with b.transaction():
        assert entry_id not in b.semantic and b.search("dentist", NOW) == []


def test_the_limit_counts_every_banks_entries_and_evictions_reach_the_other(tmp_path):
    path = tmp_path / "bank.sqlite"
    a, b = open_bank(path, semantic_limit=3), open_bank(path, semantic_limit=3)
    first, _ = save(a, "one", 1)
    save(a, "two", 2)
    save(b, "three", 3)
    fourth, evicted = save(b, "four", 4)
    assert evicted == [first] and len(rows(path)) == 3 and first not in rows(path)
    with a.transaction():
        assert set(a.semantic) == rows(path) and fourth in a.semantic


def test_uses_recorded_by_two_banks_add_up(tmp_path):
    path = tmp_path / "bank.sqlite"
    a, b = open_bank(path), open_bank(path)
    entry_id, _ = save(a, "gym schedule")
    for bank in (a, b):
        with bank.transaction():
            bank.use([bank.semantic[entry_id]], ms(NOW))
            bank.commit()
    assert open_bank(path).semantic[entry_id].hits == 2


def test_an_old_database_without_a_counter_continues_after_its_highest_id(tmp_path):
    path = tmp_path / "bank.sqlite"
    old = open_bank(path)
    old.add_semantic(SemanticEntry(id="sem-41", title="t", content="c", created_at=ms(NOW)))
    old.store.db.execute("DELETE FROM counters")
    assert open_bank(path).new_id("sem") == "sem-42"


def test_an_id_allocated_is_never_one_already_taken(tmp_path):
    path = tmp_path / "bank.sqlite"
    bank = open_bank(path)
    bank.add_semantic(SemanticEntry(id="sem-1", title="chosen by a caller", content="c", created_at=ms(NOW)))
    bank.store.db.execute("DELETE FROM counters")
    bank.store.db.execute("INSERT INTO counters VALUES ('sem', 0)")
    assert bank.new_id("sem") == "sem-2"


def test_a_new_entry_under_a_stored_id_is_an_error_not_an_overwrite(tmp_path):
    path = tmp_path / "bank.sqlite"
    bank = open_bank(path)
    bank.add_semantic(SemanticEntry(id="x", title="first", content="kept", created_at=ms(NOW)))
    with pytest.raises(StorageError, match="UNIQUE"):
        bank.store.write(semantic=[SemanticEntry(id="x", title="second", content="c", created_at=ms(NOW))])
    with sqlite3.connect(path) as db:
        assert db.execute("SELECT title FROM semantic WHERE id = 'x'").fetchone() == ("first",)


def test_a_bank_further_behind_than_the_kept_log_rebuilds(tmp_path, monkeypatch):
    monkeypatch.setattr(storage, "KEEP_CHANGES", 3)
    path = tmp_path / "bank.sqlite"
    a, b = open_bank(path), open_bank(path)
    saved = {save(a, f"note {i}", i)[0] for i in range(10)}
    with b.transaction():
        assert set(b.semantic) == saved


def test_after_a_failed_write_memory_is_rebuilt_from_the_file(tmp_path):
    path = tmp_path / "bank.sqlite"
    bank = open_bank(path)
    kept, _ = save(bank, "kept")
    with pytest.raises(RuntimeError), bank.transaction():
        bank._index(SemanticEntry(id="phantom", title="never stored", content="c", created_at=ms(NOW)))
        raise RuntimeError("the caller failed half-way")
    with bank.transaction():
        assert set(bank.semantic) == {kept}
