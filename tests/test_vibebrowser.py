"""VibeBrowser memory: the seed's search formulas on hand-computed examples, the tool surface, the
distiller."""

from __future__ import annotations

import math
from datetime import datetime, timedelta

import pytest

from baselines.stemming import analyze
from baselines.vibebrowser import (
    VibeBrowser,
    VibeMemory,
    bm25_term,
    decay_factor,
    distill,
    durable_category,
    lucene_idf,
    sigmoid_normalize,
    topic_tags,
)
from eval.contract import Query
from keme.models import Message, Session

T0 = datetime(2026, 4, 1, 9, 0)


def message(
    content: str, role: str = "user", app: str | None = None, mid: str = "m1", when: datetime = T0
) -> Message:
    return Message(id=mid, role=role, app=app, content=content, timestamp=when)


def session(sid: str, contents: list[tuple[str, str]], when: datetime, app: str | None = None) -> Session:
    messages = [
        Message(
            id=f"{sid}-m{i + 1}",
            role=role,
            app=app if role == "system" else None,
            content=text,
            timestamp=when + timedelta(seconds=30 * i),
        )
        for i, (role, text) in enumerate(contents)
    ]
    return Session(
        id=sid,
        persona_id="p",
        event_id="e",
        language="en",
        pattern="test",
        start=messages[0].timestamp,
        end=messages[-1].timestamp,
        messages=messages,
    )


# ---------------------------------------------------------------- analyzer
def test_stemming_lets_running_find_run():
    memory = VibeMemory()
    entry = memory.memory_write("daily", "I run along the river most mornings", now=T0)
    assert analyze("running") == ["run"]
    assert [f.entry.id for f in memory.memory_search("running", now=T0, min_score=0)] == [entry.id]


def test_stop_words_are_ignored():
    memory = VibeMemory()
    memory.memory_write("durable", "The blue teapot is in the cupboard", now=T0)
    memory.memory_write("durable", "The plumber was paid on Friday", now=T0)
    assert analyze("the is a of") == []
    assert memory.memory_search("the is a", now=T0, min_score=0) == []
    with_stop = memory.memory_search("where is the teapot", now=T0, min_score=0)
    without = memory.memory_search("teapot", now=T0, min_score=0)
    assert [(f.entry.id, f.score) for f in with_stop] == [(f.entry.id, f.score) for f in without]


def test_chinese_text_is_searched_by_character_bigrams():
    memory = VibeMemory()
    entry = memory.memory_write("durable", "我住天津，周末想出去走走", now=T0)
    memory.memory_write("durable", "明天要交双十一备货计划", now=T0)
    assert analyze("天津天气") == ["天津", "津天", "天气"]
    assert [f.entry.id for f in memory.memory_search("天津天气怎么样", now=T0, min_score=0)] == [entry.id]


# ---------------------------------------------------------------- formulas
def test_bm25_of_a_tiny_corpus_matches_the_hand_computation():
    # Terms after analysis: d1 [teapot, crack] (2), d2 [teapot, teapot, blue] (3), d3 [plumber, paid] (2).
    # N = 3, avgdl = 7/3, df(teapot) = 2, idf = ln(1 + 1.5/2.5) = ln 1.6.
    # d1: ln1.6 * 1*2.2 / (1 + 1.2*(0.25 + 0.75*2/(7/3))) = 0.4700036 * 1.0620690 = 0.4991762
    # d2: ln1.6 * 2*2.2 / (2 + 1.2*(0.25 + 0.75*3/(7/3))) = 0.4700036 * 1.2727273 = 0.5981864
    memory = VibeMemory()
    d1 = memory.memory_write("durable", "teapot cracked", now=T0)
    d2 = memory.memory_write("durable", "teapot teapot blue", now=T0)
    memory.memory_write("durable", "plumber paid", now=T0)
    found = memory.memory_search("teapot", now=T0, min_score=0)
    assert [f.entry.id for f in found] == [d2.id, d1.id]
    assert found[0].bm25 == pytest.approx(0.5981864, abs=1e-6)
    assert found[1].bm25 == pytest.approx(0.4991762, abs=1e-6)
    assert found[0].score == pytest.approx(0.5981864 / 1.5981864, abs=1e-6)  # durable: no decay


def test_bm25_term_and_lucene_idf_formulas():
    assert lucene_idf(3, 2) == pytest.approx(math.log(1.6))
    assert lucene_idf(10, 10) > 0  # the +1 keeps a term found everywhere positive
    assert bm25_term(tf=1, df=2, n_docs=3, doc_len=2, avg_len=7 / 3) == pytest.approx(0.4991762, abs=1e-6)


def test_sigmoid_normalization_is_s_over_one_plus_s():
    assert sigmoid_normalize(1.0) == 0.5
    assert sigmoid_normalize(3.0) == 0.75
    assert sigmoid_normalize(0.0) == 0.0


def test_decay_blends_half_relevance_with_half_recency_and_spares_durable_entries():
    assert decay_factor("daily", 0) == 1.0
    assert decay_factor("daily", 30) == 0.75
    assert decay_factor("daily", 60) == 0.625
    assert decay_factor("durable", 60) == 1.0


def test_a_daily_entry_two_months_old_scores_five_eighths_of_a_fresh_one():
    old, new = VibeMemory(), VibeMemory()
    old.memory_write("daily", "flights to Lisbon", now=T0)
    new.memory_write("daily", "flights to Lisbon", now=T0 + timedelta(days=60))
    now = T0 + timedelta(days=60)
    old_score = old.memory_search("flights", now=now, min_score=0)[0].score
    new_score = new.memory_search("flights", now=now, min_score=0)[0].score
    assert old_score == pytest.approx(new_score * 0.625)


def test_tag_match_boosts_the_raw_score_by_exactly_fifteen_percent():
    memory = VibeMemory()
    tagged = memory.memory_write("durable", "dark mode on all websites", ["Preferences", "ui"], now=T0)
    plain = memory.memory_write("durable", "dark mode on all websites", ["display"], now=T0)
    found = {f.entry.id: f for f in memory.memory_search("prefer dark mode", now=T0, min_score=0)}
    assert found[tagged.id].tag_match and not found[plain.id].tag_match  # "Preferences" -> stem "prefer"
    raw = found[plain.id].bm25
    assert found[tagged.id].bm25 == raw
    assert found[plain.id].score == sigmoid_normalize(raw)
    assert found[tagged.id].score == sigmoid_normalize(raw * 1.15)


def test_entries_written_after_now_do_not_exist_for_the_search():
    memory = VibeMemory()
    memory.memory_write("durable", "teapot cracked", now=T0)
    memory.memory_write("durable", "teapot teapot teapot", now=T0 + timedelta(days=2))
    found = memory.memory_search("teapot", now=T0 + timedelta(days=1), min_score=0)
    assert [f.entry.text for f in found] == ["teapot cracked"]
    # alone in the store: N = 1, df = 1, idf = ln(1 + 0.5/1.5), doc length = average length
    assert found[0].bm25 == pytest.approx(math.log(4 / 3))


# ---------------------------------------------------------------- tool surface
def test_write_get_status_delete_round_trip():
    memory = VibeMemory()
    durable = memory.memory_write(
        "durable",
        "User prefers dark mode on all websites",
        ["preference", "ui"],
        now=T0,
        message_ids=("m1",),
        session_ids=("s1",),
    )
    daily = memory.memory_write("daily", "Researched flights to Lisbon", ["travel", "preference"], now=T0)
    assert memory.memory_get(durable.id) == durable
    assert durable.message_ids == ("m1",) and durable.session_ids == ("s1",)
    status = memory.memory_status()
    assert status["total"] == 2 and status["by_kind"] == {"durable": 1, "daily": 1}
    assert status["top_tags"][0] == {"tag": "preference", "count": 2}
    assert status["storage"]["namespace"] == "vibe_memory" and status["storage"]["bytes"] > 0
    assert memory.memory_delete(daily.id) is True
    assert memory.memory_delete(daily.id) is False
    assert memory.memory_get(daily.id) is None
    assert memory.memory_search("flights Lisbon", now=T0, min_score=0) == []
    assert memory.memory_status()["by_kind"] == {"durable": 1, "daily": 0}


def test_write_rejects_an_unknown_kind():
    with pytest.raises(ValueError):
        VibeMemory().memory_write("weekly", "text", now=T0)


def test_search_honours_min_score_and_max_results():
    memory = VibeMemory()
    for i in range(5):
        memory.memory_write("durable", f"teapot number {i}", now=T0)
    assert len(memory.memory_search("teapot", now=T0, max_results=3, min_score=0)) == 3
    assert memory.memory_search("teapot", now=T0, min_score=0.99) == []


# ---------------------------------------------------------------- distillation
@pytest.mark.parametrize(
    "text, category",
    [
        ("For future reference: I'm allergic to shellfish.", "health"),
        ("I prefer window seats on long flights", "preference"),
        ("From now on send me the summary in the morning", "instruction"),
        ("Finally upgraded — my new phone is the Galaxy Z Flip5.", "personal"),
        ("I've decided to go with the LG C3", "decision"),
        ("以后霸王茶姬的都自动归到餐饮", "instruction"),
        ("选座我一般都要靠后的座位", "preference"),
        ("我住天津，这周末天气适合出门吗？", "personal"),
        ("did a 2K swim today. dead", None),
    ],
)
def test_durable_intent_lexicon(text, category):
    assert durable_category(message(text)) == category


def test_only_user_messages_can_be_durable():
    assert durable_category(message("I always remember your preferences", role="assistant")) is None


def test_app_records_are_daily_and_tagged_with_the_app_and_topic():
    memo = distill(
        message("Payment of $11.44 to Eastside Community Health Center", role="system", app="Wallet")
    )
    assert memo.kind == "daily"
    assert memo.text.startswith("[Wallet] ")
    assert memo.tags[0] == "wallet" and "money" in memo.tags


def test_messages_without_searchable_terms_are_not_stored():
    assert distill(message("Is it?")) is None


def test_topic_tags_read_english_stems_and_chinese_words():
    assert topic_tags("We paid the hotel yesterday") == ["money", "travel"]
    assert topic_tags("小姨下午打电话") == ["family"]


# ---------------------------------------------------------------- harness adapter
def test_adapter_stores_one_traceable_entry_per_message():
    system = VibeBrowser()
    system.reset("p")
    s = session(
        "s1",
        [
            ("user", "I'm allergic to shellfish."),
            ("assistant", "Noted, no shellfish recipes."),
            ("user", "ok"),
        ],
        T0,
    )
    system.ingest("p", s)
    system.flush("p")
    kinds = {e.text: e.kind for e in system.stores["p"].entries.values()}
    assert kinds == {
        "I'm allergic to shellfish.": "durable",
        "Noted, no shellfish recipes.": "daily",
        "ok": "daily",
    }
    hits = system.retrieve("p", Query(text="any shellfish allergy?", now=T0 + timedelta(days=1)), 5).hits
    assert hits[0].message_ids == ["s1-m1"] and hits[0].session_ids == ["s1"]
    assert hits[0].timestamp == T0
    assert system.size("p") == 3 and system.storage_bytes("p") > 0


def test_adapter_save_and_load_restore_the_same_answers(tmp_path):
    system = VibeBrowser()
    system.reset("p")
    system.ingest(
        "p", session("s1", [("user", "The blue teapot cracked"), ("assistant", "Sorry about it")], T0)
    )
    query = Query(text="teapot", now=T0 + timedelta(days=3))
    before = system.retrieve("p", query, 5)
    system.save("p", tmp_path)
    restored = VibeBrowser()
    restored.load("p", tmp_path)
    assert restored.retrieve("p", query, 5) == before
    later = restored.stores["p"].memory_write("daily", "teapot glue", now=T0)
    assert later.id == "mem_000003"  # ids continue after a reload
