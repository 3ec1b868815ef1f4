"""The skill layer: compressed storage, load on demand, idle unload and 30-day archive on the replay clock."""

from __future__ import annotations

import json
import re
from datetime import datetime, timedelta

import pytest

from baselines.factmem.chain import WriteChain
from baselines.factmem.db import connect
from baselines.factmem.skills import Skill, SkillStore, parse_version

T0 = datetime(2026, 3, 4, 9, 0)
WECHAT = frozenset({"com.tencent.mm.ui.chatting.ChattingUI", "android.widget.ListView"})

# The seed's own example, with a realistic recorded step sequence.
EXPORT_CHAT = Skill(
    name="export_wechat_chat",
    trigger=r"导出.*聊天.*记录|export.*chat",
    context=("com.tencent.mm.ui.chatting.ChattingUI", "android.widget.ListView"),
    steps=(
        {"action": "long_press", "x_ratio": 0.52, "y_ratio": 0.61, "duration": 800},
        {"action": "tap", "x_ratio": 0.72, "y_ratio": 0.85, "label": "更多"},
        {"action": "tap", "x_ratio": 0.10, "y_ratio": 0.93, "label": "多选"},
        {"action": "tap", "x_ratio": 0.08, "y_ratio": 0.21, "label": "选择全部"},
        {"action": "tap", "x_ratio": 0.50, "y_ratio": 0.95, "label": "转发"},
        {"action": "tap", "x_ratio": 0.50, "y_ratio": 0.42, "label": "合并转发"},
        {"action": "tap", "x_ratio": 0.50, "y_ratio": 0.30, "label": "文件传输助手"},
        {"action": "tap", "x_ratio": 0.78, "y_ratio": 0.62, "label": "发送"},
    ),
    version="v2.1.0",
)


@pytest.fixture
def store(tmp_path):
    conn = connect(tmp_path / "memory.sqlite3")
    yield SkillStore(conn, WriteChain(conn))
    conn.close()


def kinds(store: SkillStore) -> list[str]:
    return [r.kind for r in store.chain.records()]


def test_a_skill_is_stored_zlib_compressed_smaller_than_its_json(store):
    meta = store.add(EXPORT_CHAT, T0)
    assert meta.raw_bytes == len(EXPORT_CHAT.to_json().encode("utf-8"))
    assert meta.stored_bytes < meta.raw_bytes
    assert json.loads(EXPORT_CHAT.to_json())["steps"][0]["action"] == "long_press"


def test_metadata_stays_queryable_while_the_body_is_not_loaded(store):
    store.add(EXPORT_CHAT, T0)
    assert store.loaded() == set()
    [meta] = store.catalog()
    assert (meta.name, meta.trigger, meta.version, meta.status) == (
        "export_wechat_chat",
        EXPORT_CHAT.trigger,
        "v2.1.0",
        "STORED",
    )
    assert kinds(store) == ["skill.add"]


def test_a_matching_request_in_the_right_context_loads_the_skill(store):
    store.add(EXPORT_CHAT, T0)
    [skill] = store.match(
        "帮我导出刚才的聊天记录", WECHAT | {"android.widget.Button"}, T0 + timedelta(hours=1)
    )
    assert skill == EXPORT_CHAT
    assert store.loaded() == {("export_wechat_chat", "v2.1.0")}
    assert kinds(store) == ["skill.add", "skill.load"]
    assert store.meta("export_wechat_chat", "v2.1.0").last_used == T0 + timedelta(hours=1)


def test_a_missing_context_feature_or_a_non_matching_request_loads_nothing(store):
    store.add(EXPORT_CHAT, T0)
    assert store.match("导出聊天记录", {"com.tencent.mm.ui.chatting.ChattingUI"}, T0) == []
    assert store.match("set an alarm for 7", WECHAT, T0) == []
    assert store.loaded() == set() and kinds(store) == ["skill.add"]


def test_a_loaded_skill_is_reused_without_another_load_event(store):
    store.add(EXPORT_CHAT, T0)
    store.match("export this chat", WECHAT, T0)
    store.match("export that chat too", WECHAT, T0 + timedelta(minutes=10))
    assert kinds(store) == ["skill.add", "skill.load"]


def test_an_idle_skill_is_unloaded_after_the_idle_period(store):
    store.add(EXPORT_CHAT, T0)
    store.match("export chat", WECHAT, T0)
    store.sweep(T0 + timedelta(minutes=29, seconds=59))
    assert store.loaded() == {("export_wechat_chat", "v2.1.0")}
    store.sweep(T0 + timedelta(minutes=30))
    assert store.loaded() == set()
    assert store.catalog()[0].status == "STORED"  # unloading is not archiving


def test_a_skill_never_used_is_archived_30_days_after_creation_and_not_matched(store):
    store.add(EXPORT_CHAT, T0)
    store.sweep(T0 + timedelta(days=30) - timedelta(seconds=1))
    assert store.catalog()[0].status == "STORED"
    assert store.match("export chat", WECHAT, T0 + timedelta(days=30)) == []
    assert store.catalog()[0].status == "ARCHIVED"
    assert kinds(store) == ["skill.add", "skill.archive"]


def test_archiving_counts_from_the_last_use(store):
    store.add(EXPORT_CHAT, T0)
    store.match("export chat", WECHAT, T0 + timedelta(days=20))
    store.sweep(T0 + timedelta(days=49, hours=23))
    assert store.catalog()[0].status == "STORED"
    store.sweep(T0 + timedelta(days=50))
    assert store.catalog()[0].status == "ARCHIVED" and store.loaded() == set()


def test_a_restored_skill_matches_again(store):
    store.add(EXPORT_CHAT, T0)
    store.sweep(T0 + timedelta(days=31))
    store.restore("export_wechat_chat", "v2.1.0", T0 + timedelta(days=40))
    assert store.match("export chat", WECHAT, T0 + timedelta(days=41)) == [EXPORT_CHAT]
    assert kinds(store) == ["skill.add", "skill.archive", "skill.restore", "skill.load"]
    assert store.chain.verify() is None


def test_a_skill_does_not_exist_before_its_creation_time(store):
    store.add(EXPORT_CHAT, T0)
    assert store.match("export chat", WECHAT, T0 - timedelta(minutes=1)) == []


def test_the_highest_matching_version_is_used_and_versions_bump_by_patch(store):
    store.add(EXPORT_CHAT, T0)
    newer = Skill(EXPORT_CHAT.name, EXPORT_CHAT.trigger, EXPORT_CHAT.context, EXPORT_CHAT.steps[:3], "2.10.0")
    store.add(newer, T0)
    assert store.match("export chat", WECHAT, T0) == [newer]  # 2.10.0 > v2.1.0 numerically, not as text
    assert store.next_version(EXPORT_CHAT.name) == "2.10.1" and store.next_version("new_skill") == "1.0.0"
    with pytest.raises(ValueError):
        store.add(newer, T0)


def test_versions_must_be_semantic_and_triggers_valid_regexes():
    assert parse_version("v2.1.0") == (2, 1, 0) and parse_version("10.0.3") == (10, 0, 3)
    for bad in ("2.1", "v2.1.0-beta", "02.1.0", "latest"):
        with pytest.raises(ValueError):
            parse_version(bad)
    with pytest.raises(re.error):
        Skill("broken", "(unclosed", (), ("step",))
