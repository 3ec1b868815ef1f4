"""Memory Bank: every formula of the seed on a hand-computed example, plus persistence, degradation and
MCP."""

from __future__ import annotations

import asyncio
import logging
import math
import sys
from datetime import datetime, timedelta

import pytest

from baselines.memory_bank.bank import MemoryBank, NoOpMemoryBank, open_bank
from baselines.memory_bank.distill import distill
from baselines.memory_bank.index import FLAT, FieldIndex
from baselines.memory_bank.records import Episode, SemanticEntry, ms
from baselines.memory_bank.working import WorkingMemory
from keme.models import Message, Session
from keme.text.tokens import memory_bank_terms

NOW = datetime(2026, 3, 20, 12, 0)
DAY = 86_400_000


def entry(
    i: str,
    title: str,
    content: str = "",
    keywords=(),
    polarity="positive",
    app=None,
    hits=0,
    created=NOW - timedelta(days=30),
    used=None,
) -> SemanticEntry:
    return SemanticEntry(
        id=i,
        title=title,
        content=content,
        keywords=list(keywords),
        polarity=polarity,
        app=app,
        hits=hits,
        created_at=ms(created),
        last_used_at=ms(used) if used else None,
    )


# ---------------------------------------------------------------- tokenization
def test_english_and_numbers_are_lowercase_words_and_chinese_is_bigrams():
    assert memory_bank_terms("Paid $12.50 at Blue_Bottle") == ["paid", "12", "50", "at", "blue_bottle"]
    assert memory_bank_terms("打开抖音搜索") == ["打开", "开抖", "抖音", "音搜", "搜索"]
    assert memory_bank_terms("买") == ["买"]


# ---------------------------------------------------------------- BM25F
def test_field_weighted_bm25_by_hand():
    index = FieldIndex()
    index.add("a", "coffee order", ["starbucks"], "latte with oat milk")
    index.add("b", "grocery run", [], "milk eggs bread")
    # weighted lengths: a = 3*2 + 2*1 + 1*4 = 12, b = 3*2 + 3 = 9; avgdl = 10.5; df(milk) = 2 of N = 2
    idf = math.log(1 + (2 - 2 + 0.5) / (2 + 0.5))
    expected_a = idf * 1 * 2.2 / (1 + 1.2 * (0.25 + 0.75 * 12 / 10.5))
    expected_b = idf * 1 * 2.2 / (1 + 1.2 * (0.25 + 0.75 * 9 / 10.5))
    scores = index.scores(["milk"])
    assert scores[0] == pytest.approx(expected_a) and scores[1] == pytest.approx(expected_b)


def test_title_counts_three_times_and_keywords_twice():
    index = FieldIndex()
    index.add("t", "latte", [], "x")
    index.add("k", "x", ["latte"], "x")
    index.add("b", "x", [], "latte")
    # same weighted length is not the point: each field's term frequency is weighted 3 / 2 / 1
    assert index.terms("latte", [], "")["latte"] == 3.0
    assert index.terms("", ["latte"], "")["latte"] == 2.0
    assert index.terms("", [], "latte")["latte"] == 1.0


def test_keywords_are_whole_words_matched_as_phrases():
    index = FieldIndex()
    index.add("a", "x", ["magnifying glass"], "y")
    assert "magnifying glass" in index.query_terms("where is the magnifying glass icon")
    assert "magnifying glass" not in index.query_terms("a glass that is magnifying")


def test_incremental_delete_equals_a_rebuild():
    docs = {"a": ("red apple", "fruit"), "b": ("green apple pie", "dessert"), "c": ("apple stock", "finance")}
    incremental = FieldIndex()
    for i, (title, body) in docs.items():
        incremental.add(i, title, [], body)
    incremental.delete("b")
    rebuilt = FieldIndex()
    for i, (title, body) in docs.items():
        if i != "b":
            rebuilt.add(i, title, [], body)
    live = [incremental.slot_of[i] for i in ("a", "c")]
    assert list(incremental.scores(["apple"])[live]) == pytest.approx(list(rebuilt.scores(["apple"])))


def test_flat_weights_reduce_to_plain_bm25_over_the_concatenation():
    index = FieldIndex(FLAT)
    index.add("a", "tea", ["green"], "tea leaves")
    plain = FieldIndex(FLAT)
    plain.add("a", "", [], "tea green tea leaves")
    assert index.scores(["tea", "green"])[0] == pytest.approx(plain.scores(["tea", "green"])[0])


# ---------------------------------------------------------------- boosts
def test_hit_boost_is_two_percent_per_hit_capped_at_twenty():
    bank = MemoryBank()
    old = NOW - timedelta(days=30)
    assert bank.boost(entry("a", "x", hits=0, created=old), ms(NOW)) == pytest.approx(1.0)
    assert bank.boost(entry("a", "x", hits=5, created=old), ms(NOW)) == pytest.approx(1.10)
    assert bank.boost(entry("a", "x", hits=30, created=old), ms(NOW)) == pytest.approx(1.40)


def test_recency_boost_applies_within_seven_days_of_the_replay_clock():
    bank = MemoryBank()
    assert bank.boost(entry("a", "x", created=NOW - timedelta(days=6)), ms(NOW)) == pytest.approx(1.1)
    assert bank.boost(entry("a", "x", created=NOW - timedelta(days=8)), ms(NOW)) == pytest.approx(1.0)
    assert bank.boost(entry("a", "x", hits=10, created=NOW - timedelta(days=1)), ms(NOW)) == pytest.approx(
        1.2 * 1.1
    )


def test_search_multiplies_bm25_by_the_boosts():
    bank = MemoryBank()
    bank.add_semantic(entry("fresh", "latte", created=NOW - timedelta(days=1)))
    bank.add_semantic(entry("old", "latte", created=NOW - timedelta(days=20), hits=5))
    scored = {s.entry.id: s.score for s in bank.search("latte", NOW)}
    assert scored["fresh"] / scored["old"] == pytest.approx(1.1 / 1.1)  # recency ×1.1 vs five hits ×1.1


# ---------------------------------------------------------------- capacity
def test_lru_evicts_the_lowest_last_used_plus_hits_times_a_day():
    bank = MemoryBank(semantic_limit=2)
    base = NOW - timedelta(days=10)
    # base + 9 days
    bank.add_semantic(entry("used-recently", "a", created=base, used=NOW - timedelta(days=1)))
    bank.add_semantic(entry("many-hits", "b", created=base, hits=10))  # base + 10 days
    # base - 10 days, but new
    evicted = bank.add_semantic(entry("third", "c", created=NOW - timedelta(days=20)))
    assert evicted == ["used-recently"]
    assert sorted(bank.semantic) == ["many-hits", "third"]
    assert entry("x", "x", created=base, hits=3).lru_score() == ms(base) + 3 * DAY


def test_a_brand_new_entry_is_never_its_own_victim():
    """Scored with the others it would lose (no hits, created now): the add keeps it and evicts the lowest
    other."""
    bank = MemoryBank(semantic_limit=2)
    bank.add_semantic(entry("a", "a", hits=1, used=NOW))  # NOW + 1 day
    bank.add_semantic(entry("b", "b", hits=2, used=NOW))  # NOW + 2 days
    brand_new = entry("new", "c", created=NOW)  # NOW: the lowest score of the three
    assert brand_new.lru_score() < bank.semantic["a"].lru_score()
    assert bank.add_semantic(brand_new) == ["a"]
    assert sorted(bank.semantic) == ["b", "new"]


def test_eviction_ties_go_to_the_older_entry_then_the_smaller_id():
    bank = MemoryBank(semantic_limit=2)
    bank.add_semantic(entry("y", "y", created=NOW - timedelta(days=2), used=NOW))
    bank.add_semantic(entry("x", "x", created=NOW - timedelta(days=1), used=NOW))
    assert bank.add_semantic(entry("z", "z", created=NOW)) == ["y"]


def test_three_thousand_adds_leave_the_same_five_hundred_on_disk_as_in_memory(tmp_path):
    path = tmp_path / "bank.sqlite"
    bank = open_bank(path)
    for i in range(3000):
        bank.add_semantic(entry(f"sem-{i}", f"tip {i}", created=NOW + timedelta(minutes=i)))
        if i % 7 == 0:  # some entries get used, so LRU order is not insertion order
            bank.inject(f"tip {i}", NOW + timedelta(minutes=i))
    bank.commit()
    import sqlite3

    rows = {r[0] for r in sqlite3.connect(path).execute("SELECT id FROM semantic")}
    assert len(bank.semantic) == 500 and rows == set(bank.semantic)
    again = open_bank(path)
    assert set(again.semantic) == set(bank.semantic)
    assert {e.id: e.hits for e in again.semantic.values()} == {e.id: e.hits for e in bank.semantic.values()}


def test_every_mcp_style_save_into_a_full_bank_of_used_entries_is_kept(tmp_path):
    bank = open_bank(tmp_path / "bank.sqlite", semantic_limit=3)
    for i in range(3):
        bank.add_semantic(entry(f"old-{i}", "old", hits=5, used=NOW))
    for i in range(4):
        bank.add_semantic(entry(f"saved-{i}", "fresh", created=NOW + timedelta(minutes=i)))
        assert f"saved-{i}" in bank.semantic
    assert set(open_bank(tmp_path / "bank.sqlite", semantic_limit=3).semantic) == set(bank.semantic)


def test_a_database_over_the_limit_is_evicted_down_to_it_on_opening(tmp_path):
    path = tmp_path / "bank.sqlite"
    big = open_bank(path, semantic_limit=10, episodic_limit=10)
    for i in range(10):
        big.add_semantic(entry(f"s{i}", "t", created=NOW + timedelta(minutes=i)))
        big.add_episode(Episode(id=f"e{i}", goal="g", created_at=ms(NOW + timedelta(minutes=i))))
    big.store.close()
    small = open_bank(path, semantic_limit=4, episodic_limit=3)
    assert sorted(small.semantic) == ["s6", "s7", "s8", "s9"] and sorted(small.episodes) == ["e7", "e8", "e9"]
    import sqlite3

    db = sqlite3.connect(path)
    assert {r[0] for r in db.execute("SELECT id FROM semantic")} == set(small.semantic)
    assert {r[0] for r in db.execute("SELECT id FROM episodic")} == set(small.episodes)


def test_a_failed_write_raises_and_leaves_memory_as_it_was(tmp_path):
    from baselines.memory_bank.storage import StorageError

    bank = open_bank(tmp_path / "bank.sqlite", semantic_limit=1)
    bank.add_semantic(entry("kept", "latte"))
    bank.store.db.execute("DROP TABLE semantic")  # any write to it now fails
    with pytest.raises(StorageError, match="bank.sqlite"):
        bank.add_semantic(entry("lost", "mocha"))
    assert list(bank.semantic) == ["kept"]


def test_episodes_are_evicted_first_in_first_out():
    bank = MemoryBank(episodic_limit=2)
    for day in (3, 1, 2):
        bank.add_episode(Episode(id=f"e{day}", goal="g", created_at=ms(NOW + timedelta(days=day))))
    assert sorted(bank.episodes) == ["e2", "e3"]


# ---------------------------------------------------------------- injection
def test_injection_quotas_app_five_positive_three_negative_two():
    bank = MemoryBank()
    for i in range(7):
        bank.add_semantic(entry(f"app{i}", "wechat settings", app="WeChat"))
    for i in range(5):
        bank.add_semantic(entry(f"pos{i}", "settings tip"))
    for i in range(4):
        bank.add_semantic(entry(f"neg{i}", "settings pitfall", polarity="negative"))
    chosen = bank.inject("open WeChat settings", NOW)
    ids = [s.entry.id for s in chosen]
    assert sum(i.startswith("app") for i in ids) == 5
    assert sum(i.startswith("pos") for i in ids) == 3
    assert sum(i.startswith("neg") for i in ids) == 2


def test_injection_updates_hits_and_last_used_at():
    bank = MemoryBank()
    bank.add_semantic(entry("a", "latte"))
    bank.inject("latte", NOW)
    assert bank.semantic["a"].hits == 1 and bank.semantic["a"].last_used_at == ms(NOW)


# ---------------------------------------------------------------- persistence and degradation
def test_the_index_is_rebuilt_from_storage_at_start(tmp_path):
    bank = open_bank(tmp_path / "bank.sqlite")
    bank.add_semantic(entry("a", "oat latte", "with cinnamon"))
    bank.add_episode(Episode(id="epi-1", goal="order coffee", created_at=ms(NOW)))
    bank.inject("latte", NOW)
    bank.commit()
    again = open_bank(tmp_path / "bank.sqlite")
    assert [s.entry.id for s in again.search("cinnamon", NOW)] == ["a"]
    assert again.semantic["a"].hits == 1 and "epi-1" in again.episodes


def test_unavailable_storage_degrades_to_a_no_op_memory_with_one_warning(tmp_path, caplog):
    (tmp_path / "taken").mkdir()
    with caplog.at_level(logging.WARNING, logger="memory_bank"):
        bank = open_bank(tmp_path / "taken")  # a directory cannot be a database file
        bank.add_semantic(entry("a", "latte"))
        results = bank.search("latte", NOW)
        bank.add_episode(Episode(id="e", goal="g", created_at=0))
    assert isinstance(bank, NoOpMemoryBank) and results == []
    assert len([r for r in caplog.records if r.name == "memory_bank"]) == 1
    assert bank.available is False and "taken" in bank.reason


# ---------------------------------------------------------------- working memory and distillation
def test_working_memory_keeps_three_steps_a_rolling_summary_and_twenty_facts():
    memory = WorkingMemory()
    for i in range(5):
        memory.add_step(f"Step {i} done. More detail here.")
    assert list(memory.steps) == [
        "Step 2 done. More detail here.",
        "Step 3 done. More detail here.",
        "Step 4 done. More detail here.",
    ]
    assert memory.summary == "Step 0 done; Step 1 done"
    for i in range(25):
        memory.add_fact(f"${i}")
    assert len(memory.facts) == 20 and memory.facts[0] == "$5"


def _session() -> Session:
    t = NOW
    messages = [
        Message(
            id="m1",
            role="system",
            app="Wallet",
            content="Payment of $5.40 to Starbucks · Dining",
            timestamp=t,
        ),
        Message(
            id="m2",
            role="user",
            content="From now on I prefer oat milk in everything.",
            timestamp=t + timedelta(minutes=1),
        ),
        Message(
            id="m3", role="assistant", content="Noted, oat milk it is.", timestamp=t + timedelta(minutes=2)
        ),
        Message(
            id="m4",
            role="user",
            content="My Pixel keeps disconnecting from Wi-Fi, it doesn't work.",
            timestamp=t + timedelta(minutes=3),
        ),
        Message(
            id="m5",
            role="assistant",
            content="Try forgetting the network.",
            timestamp=t + timedelta(minutes=4),
        ),
        Message(
            id="m6",
            role="user",
            content="Also I paid $45 for the Nintendo game on March 3.",
            timestamp=t + timedelta(minutes=5),
        ),
        Message(id="m7", role="assistant", content="Logged.", timestamp=t + timedelta(minutes=6)),
    ]
    return Session(
        id="s1",
        persona_id="p",
        event_id="e",
        language="en",
        pattern="x",
        start=t,
        end=messages[-1].timestamp,
        messages=messages,
    )


def test_distillation_puts_one_episode_and_typed_experiences_in_place():
    counter = iter(range(1, 100))
    episode, entries = distill(_session(), lambda kind: f"{kind}-{next(counter)}")
    assert episode.goal.startswith("From now on") and len(episode.events) == 7
    by_kind = {(e.app, e.polarity, e.title.split(":")[0]) for e in entries}
    assert ("Wallet", "positive", "Wallet") in by_kind
    assert any(e.title.startswith("Preference") and e.message_ids == ["m2", "m3"] for e in entries)
    assert any(e.polarity == "negative" and "m4" in e.message_ids for e in entries)
    assert any(
        e.polarity == "positive" and "m6" in e.message_ids and "Nintendo" in e.keywords for e in entries
    )


# ---------------------------------------------------------------- MCP
def test_mcp_server_serves_search_save_and_delete_to_a_real_client(tmp_path):
    pytest.importorskip("mcp")
    from mcp import ClientSession, StdioServerParameters
    from mcp.client.stdio import stdio_client

    async def session_run():
        params = StdioServerParameters(
            command=sys.executable,
            args=["-m", "baselines.memory_bank.mcp_server", "--db", str(tmp_path / "m.sqlite")],
        )
        async with stdio_client(params) as (read, write):
            async with ClientSession(read, write) as session:
                await session.initialize()
                names = sorted(t.name for t in (await session.list_tools()).tools)
                saved = await session.call_tool(
                    "save_memory",
                    {
                        "title": "Douyin search entry",
                        "content": "magnifying glass, top right",
                        "keywords": ["Douyin"],
                        "app": "Douyin",
                    },
                )
                found = await session.call_tool("search_memory", {"query": "douyin search", "limit": 3})
                deleted = await session.call_tool("delete_memory", {"id": saved.structured_content["id"]})
                after = await session.call_tool("search_memory", {"query": "douyin search", "limit": 3})
                return names, saved, found, deleted, after

    names, saved, found, deleted, after = asyncio.run(session_run())
    assert names == ["delete_memory", "save_memory", "search_memory"]
    assert found.structured_content["result"][0]["title"] == "Douyin search entry"
    assert deleted.structured_content["deleted"] is True
    assert after.structured_content["result"] == []


def test_the_servers_default_bank_is_per_user_not_per_working_directory(tmp_path):
    pytest.importorskip("mcp")
    from baselines.memory_bank.mcp_server import default_db

    assert default_db({"XDG_DATA_HOME": str(tmp_path)}) == tmp_path / "keme" / "memory-bank.sqlite"
    assert default_db({"KEME_MEMORY_BANK_DB": "~/banks/a.sqlite"}).name == "a.sqlite"
    assert default_db({}).is_absolute()


# ---------------------------------------------------------------- the harness system
def test_the_system_removes_its_temporary_root_when_closed():
    from baselines.memory_bank.system import MemoryBankSystem

    system = MemoryBankSystem()
    system.reset("p1")
    system.ingest("p1", _session())
    root = system.root
    assert root.name.startswith("memory-bank-") and any(root.iterdir())
    system.close()
    assert not root.exists()


def test_the_system_keeps_a_root_it_was_given(tmp_path):
    from baselines.memory_bank.system import MemoryBankSystem

    system = MemoryBankSystem(root=tmp_path)
    system.reset("p1")
    system.close()
    assert tmp_path.exists()


def test_a_bank_that_cannot_be_opened_is_an_error_in_the_harness(tmp_path):
    from baselines.memory_bank.system import MemoryBankSystem
    from keme.errors import KemeError

    (tmp_path / "p1.sqlite").mkdir()  # where the bank's file would go
    system = MemoryBankSystem(root=tmp_path)
    with pytest.raises(KemeError, match="cannot open the bank for p1"):
        system.reset("p1")


def test_a_saved_bank_loads_with_its_hits(tmp_path):
    from baselines.memory_bank.system import MemoryBankSystem
    from eval.contract import Query

    system = MemoryBankSystem(root=tmp_path / "a")
    system.reset("p1")
    system.ingest("p1", _session())
    system.flush("p1")
    system.retrieve("p1", Query(text="oat milk", now=NOW + timedelta(days=1)), 5)
    system.save("p1", tmp_path / "snapshot")
    other = MemoryBankSystem(root=tmp_path / "b")
    other.load("p1", tmp_path / "snapshot")
    assert {e.id: e.hits for e in other.bank("p1").semantic.values()} == {
        e.id: e.hits for e in system.bank("p1").semantic.values()
    }
    assert any(e.hits for e in other.bank("p1").semantic.values())


def test_limits_below_one_are_refused():
    from baselines.memory_bank.system import MemoryBankSystem
    from keme.errors import KemeError

    with pytest.raises(KemeError, match="semantic_limit"):
        MemoryBankSystem(semantic_limit=0)
