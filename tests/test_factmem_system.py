"""The factmem adapter: rule-based distillation into keys, and retrieval by key, skill and BM25."""

from __future__ import annotations

import stat
from datetime import datetime, timedelta

import pytest

from baselines.factmem.distill import allocate, distill, procedure_steps, trigger_for
from baselines.factmem.system import FactMem, scope_directory
from eval.contract import Query
from keme.models import Message, Session

APRIL = datetime(2026, 4, 1, 9, 0)
ASKED = datetime(2026, 5, 1, 20, 0)


def make_session(
    sid: str, day: int, turns: list[tuple[str, str | None, str]], language: str = "en"
) -> Session:
    start = APRIL + timedelta(days=day)
    messages = [
        Message(
            id=f"{sid}-m{i + 1}", role=role, app=app, content=text, timestamp=start + timedelta(minutes=i)
        )
        for i, (role, app, text) in enumerate(turns)
    ]
    return Session(
        id=sid,
        persona_id="p01",
        event_id=f"e-{sid}",
        language=language,
        pattern="test",
        start=messages[0].timestamp,
        end=messages[-1].timestamp,
        messages=messages,
    )


HISTORY = [
    make_session(
        "s1",
        2,
        [
            ("user", None, "I work at Saltbox Studios as a content strategist."),
            ("assistant", None, "Nice, noted."),
        ],
    ),
    make_session(
        "s2",
        6,
        [
            ("user", None, "For future reference: I'm allergic to shellfish."),
            ("assistant", None, "Got it, no shellfish."),
        ],
    ),
    make_session(
        "s3",
        10,
        [
            ("system", "Wallet", "Payment of $69.48 to TJ Maxx · Shopping · U.S. Bank credit card"),
            ("system", "Wallet", "Payment of $12.00 to Blue Bottle Coffee · Dining · U.S. Bank credit card"),
        ],
    ),
    make_session(
        "s4", 19, [("system", "Wallet", "Payment of $31.20 to TJ Maxx · Shopping · U.S. Bank credit card")]
    ),
    make_session(
        "s5",
        20,
        [
            ("user", None, "My sister Harriet is visiting from Portland next week."),
            ("assistant", None, "How fun!"),
        ],
    ),
    make_session(
        "s6",
        22,
        [
            ("user", None, "How do I make a sourdough starter?"),
            (
                "assistant",
                None,
                (
                    "1. Mix 50 g flour with 50 g water\n2. Cover loosely and keep it warm\n"
                    "3. Discard half and feed it daily\n4. Use it once it doubles in 6 hours"
                ),
            ),
        ],
    ),
    make_session(
        "s7",
        25,
        [
            ("user", None, "Big news: I just started my new job at Northwind Games!"),
            ("assistant", None, "Congratulations!"),
        ],
    ),
]


@pytest.fixture
def system(tmp_path):
    built = FactMem(root=tmp_path / "root")
    built.reset("p01")
    for s in HISTORY:
        built.ingest("p01", s)
    built.flush("p01")
    yield built
    built.close()


def ask(system: FactMem, text: str, k: int = 5, now: datetime = ASKED):
    return system.retrieve("p01", Query(text=text, now=now, question_id="q"), k).hits


# -- distillation rules
def test_app_records_become_facts_keyed_by_kind_and_day_with_suffixes(system):
    facts = system.memory("p01").facts
    assert facts.get("bill:2026-04-11").startswith("[Wallet] Payment of $69.48 to TJ Maxx")
    assert facts.get("bill:2026-04-11:2").startswith("[Wallet] Payment of $12.00")
    assert facts.get("bill:2026-04-20").startswith("[Wallet] Payment of $31.20")
    assert len(facts.history("bill:2026-04-11")) == 1  # a second record is not an update


def test_allocate_takes_the_first_free_suffix():
    taken = {"bill:2026-04-11", "bill:2026-04-11:2"}
    assert allocate("bill:2026-04-11", taken.__contains__) == "bill:2026-04-11:3"
    assert allocate("bill:2026-04-12", taken.__contains__) == "bill:2026-04-12"


def test_personal_statements_are_filed_under_lexicon_attribute_keys(system):
    facts = system.memory("p01").facts
    assert facts.get("health.allergy") == "For future reference: I'm allergic to shellfish."
    assert facts.get("social_circle.sibling") == "My sister Harriet is visiting from Portland next week."
    assert not facts.has("said:2026-04-07")  # filed under its attribute, not also as a note


def test_a_later_statement_with_the_same_key_deprecates_the_earlier_one(system):
    history = system.memory("p01").facts.history("career.company")
    assert [(v.value, v.status) for v in history] == [
        ("I work at Saltbox Studios as a content strategist.", "DEPRECATED"),
        ("Big news: I just started my new job at Northwind Games!", "ACTIVE"),
    ]


def test_questions_are_kept_as_dated_notes_not_attribute_facts():
    session = make_session("q", 0, [("user", None, "What phone should I buy, is my job paying enough?")])
    facts, _ = distill(session)
    assert [(f.key, f.dated) for f in facts] == [("said:2026-04-01", True)]


def test_statements_naming_no_attribute_or_not_in_first_person_are_dated_notes():
    session = make_session(
        "n",
        0,
        [
            ("user", None, "The blue teapot cracked in the dishwasher."),
            ("user", None, "Tyler's job is going well."),
        ],
    )
    facts, _ = distill(session)
    assert [f.key for f in facts] == ["said:2026-04-01", "said:2026-04-01"]


def test_chinese_statements_use_the_chinese_lexicon():
    session = make_session(
        "z", 0, [("user", None, "我对花生过敏，别推荐带花生的"), ("user", None, "我在森屿家居上班")], "zh"
    )
    facts, _ = distill(session)
    assert [f.key for f in facts] == ["health.allergy", "career.company"]


def test_an_enumerated_procedure_becomes_a_skill_triggered_by_the_request(system):
    [meta] = system.memory("p01").skills.catalog()
    assert meta.name == "how:sourdough-starter" and meta.version == "1.0.0" and meta.context == ("lang:en",)
    assert meta.trigger == r"(?is)^(?=.*\bsourdough\b)(?=.*\bstarter\b)"


def test_procedures_need_three_numbered_or_bulleted_items():
    assert procedure_steps("- preheat the oven\n- mix\n- bake 20 min") == [
        "preheat the oven",
        "mix",
        "bake 20 min",
    ]
    assert procedure_steps("Try this: 1) open Settings 2) tap Wi-Fi 3) forget the network") == [
        "open Settings",
        "tap Wi-Fi",
        "forget the network",
    ]
    assert procedure_steps("第一步：打开微信\n第二步：进入聊天\n第三步：长按消息") == [
        "打开微信",
        "进入聊天",
        "长按消息",
    ]
    assert procedure_steps("1. mix\n2. bake") is None
    assert procedure_steps("It costs $1. Then 2. maybe 3. fine") is None


def test_a_trigger_requires_the_requests_last_two_content_words():
    assert trigger_for("Hey, how do I export my chat history?") == r"(?is)^(?=.*\bchat\b)(?=.*\bhistory\b)"
    assert trigger_for("红烧肉怎么做？") == "(?is)^(?=.*红烧)(?=.*烧肉)"
    assert trigger_for("how do I?") is None


# -- retrieval
def test_a_bill_question_is_answered_by_its_dated_key(system):
    hits = ask(system, "How much did I pay at TJ Maxx on April 11?")
    assert hits[0].message_ids == ["s3-m1"] and hits[0].session_ids == ["s3"]
    assert hits[1].message_ids == ["s3-m2"]  # the day's other record, by key as well
    assert hits[0].text.startswith("bill:2026-04-11: [Wallet] Payment of $69.48")
    assert hits[0].score > hits[1].score > hits[2].score


def test_a_chinese_bill_question_uses_the_chinese_date_and_pay_word(tmp_path):
    built = FactMem(root=tmp_path)
    built.reset("p02")
    built.ingest(
        "p02",
        make_session("z1", 2, [("system", "钱包", "【支付成功】山姆会员店 支出¥425.06｜分类：买菜")], "zh"),
    )
    hits = built.retrieve("p02", Query(text="我4月3日在山姆会员店花了多少钱？", now=ASKED), 3).hits
    assert hits[0].message_ids == ["z1-m1"] and hits[0].text.startswith("bill:2026-04-03:")
    built.close()


def test_a_persona_question_gets_the_current_value_then_the_superseded_one(system):
    hits = ask(system, "Where do I work?", k=2)
    assert [h.message_ids for h in hits] == [["s7-m1"], ["s1-m1"]]
    assert hits[0].text.startswith("career.company: ") and hits[1].text.startswith(
        "career.company (superseded): "
    )


def test_a_key_lookup_sees_the_value_current_at_query_time(system):
    hits = ask(system, "Where do I work?", k=1, now=APRIL + timedelta(days=24))
    assert hits[0].message_ids == ["s1-m1"]


def test_the_allergy_question_is_answered_via_the_lexicon(system):
    assert ask(system, "Am I allergic to anything?", k=1)[0].message_ids == ["s2-m1"]


def test_without_a_key_the_question_falls_back_to_bm25(system):
    hits = ask(system, "Who is visiting from Portland?", k=3)
    assert hits[0].message_ids == ["s5-m1"]


def test_a_question_matching_a_skill_trigger_returns_the_procedure(system):
    hits = ask(system, "remind me how the sourdough starter goes", k=3)
    assert hits[0].text.startswith("skill how:sourdough-starter@1.0.0: Mix 50 g flour")
    assert hits[0].message_ids == ["s6-m1", "s6-m2"]
    assert system.memory("p01").skills.loaded() == {("how:sourdough-starter", "1.0.0")}


def test_nothing_written_after_now_is_returned(system):
    hits = ask(
        system,
        "How much did I pay at TJ Maxx on April 20? sourdough Portland",
        k=10,
        now=APRIL + timedelta(days=15),
    )
    assert hits and all(h.timestamp <= APRIL + timedelta(days=15) for h in hits)


def test_every_write_is_on_a_verifiable_chain(system):
    memory = system.memory("p01")
    assert memory.chain.verify() is None
    kinds = [r.kind for r in memory.chain.records()]
    assert kinds.count("fact.update") == 1 and kinds.count("skill.add") == 1
    assert kinds.count("fact.put") + kinds.count("fact.update") == memory.facts.count() == system.size("p01")


def test_a_scope_is_one_database_and_one_owner_only_key_under_the_root(system, tmp_path):
    directory = scope_directory(tmp_path / "root", "p01")
    assert sorted(p.name for p in directory.iterdir()) == ["memory.key", "memory.sqlite3"]
    assert stat.S_IMODE((directory / "memory.key").stat().st_mode) == 0o600
    assert system.storage_bytes("p01") == (directory / "memory.sqlite3").stat().st_size > 0
    assert scope_directory(tmp_path, "a/b") != scope_directory(tmp_path, "a_b")


def test_save_and_load_restore_the_same_answers_elsewhere(system, tmp_path):
    system.save("p01", tmp_path / "state")
    assert stat.S_IMODE((tmp_path / "state" / "memory.key").stat().st_mode) == 0o600
    other = FactMem(root=tmp_path / "elsewhere")
    other.load("p01", tmp_path / "state")
    question = "How much did I pay at TJ Maxx on April 11?"
    assert [h.message_ids for h in ask(other, question)] == [h.message_ids for h in ask(system, question)]
    assert other.size("p01") == system.size("p01") and other.memory("p01").chain.verify() is None
    other.close()


def test_reset_drops_the_scope(system):
    system.reset("p01")
    assert system.size("p01") == 0 and ask(system, "Where do I work?") == []


def test_a_temporary_root_the_system_made_is_removed_on_close():
    built = FactMem()
    built.reset("p01")
    root = built.root
    assert (scope_directory(root, "p01") / "memory.sqlite3").exists()
    built.close()
    assert not root.exists()
