"""Summaries of what mattered: a month's key points are its most salient episodes, phrased the way a
person summarizes them, and the rule judge accepts them in other words."""

from __future__ import annotations

from datetime import datetime
from types import SimpleNamespace

from eval.judge import RuleJudge
from eval.paraphrase import covers
from keme.models import Event, QAItem
from keme.qa.facts import Fact
from keme.qa.generate.episode import cover_of, recap_points
from keme.qa.phrasing import get as phrasing

CHAPTER = Event(
    id="p01-c02",
    parent_id=None,
    depth=0,
    kind="chapter",
    title="April",
    summary="",
    start=datetime(2026, 4, 1),
    end=datetime(2026, 4, 30, 23, 59),
)


def _episode(n: int, kind: str, day: int, **params: str) -> tuple[Event, Event]:
    """An episode of the chapter and its one leaf (with a session)."""
    episode = Event(
        id=f"p01-c02-e{n:02d}",
        parent_id=CHAPTER.id,
        depth=1,
        kind=kind,
        title=kind,
        summary="",
        start=datetime(2026, 4, day),
        end=datetime(2026, 4, day, 23),
        params=params,
    )
    leaf = episode.model_copy(
        update={"id": f"{episode.id}-l1", "parent_id": episode.id, "depth": 2, "session_id": f"p01-s{n:04d}"}
    )
    return episode, leaf


def _fact(n: int, kind: str, key: str, value: str, day: int) -> Fact:
    return Fact(
        kind,
        key,
        value,
        f"p01-s{n:04d}-m01",
        f"p01-s{n:04d}",
        f"p01-c02-e{n:02d}-l1",
        datetime(2026, 4, day, 19),
    )


def _gen(episodes: list[tuple[Event, Event]], facts: list[Fact], lang: str = "en") -> SimpleNamespace:
    by_session: dict[str, list[Fact]] = {}
    for fact in facts:
        by_session.setdefault(fact.session_id, []).append(fact)
    world = SimpleNamespace(
        facts=facts,
        persona=None,
        graph=SimpleNamespace(events=[CHAPTER, *[e for pair in episodes for e in pair]]),
        by_session=by_session,
    )
    return SimpleNamespace(world=world, say=phrasing(lang), by_assistant=lambda fact: False)


APRIL = [
    _episode(1, "cooking", 3, dish="a kale Caesar salad", ingredient="kale"),
    _episode(2, "health", 9, symptom="chest pain", clinic="Mercy General Hospital"),
    _episode(3, "shopping", 14, product="a robot vacuum", price="$299"),
    _episode(4, "social", 20, person="Noah", occasion="housewarming"),
    _episode(5, "learning", 25, resource="a beginner's workbook"),
]
APRIL_FACTS = [
    _fact(1, "cooking", "dish", "a kale Caesar salad", 3),
    _fact(2, "health", "symptom", "chest pain", 9),
    _fact(3, "shopping", "product", "a robot vacuum", 14),
    _fact(4, "social", "person", "Noah", 20),
    _fact(5, "learning", "resource", "a beginner's workbook", 25),
]


def test_a_months_points_include_the_hospital_visit_and_not_the_salad_recipe():
    points = [p.text for p in recap_points(_gen(APRIL, APRIL_FACTS), CHAPTER)]
    assert "had chest pain" in points
    assert not any("salad" in p for p in points)


def test_minor_details_never_become_points():
    points = [p.text for p in recap_points(_gen(APRIL, APRIL_FACTS), CHAPTER)]
    assert points == ["had chest pain", "Noah's housewarming"]


def test_health_ranks_above_a_friends_occasion():
    points = recap_points(_gen(APRIL, APRIL_FACTS), CHAPTER)
    assert [p.fact.key for p in points] == ["symptom", "person"]


def test_a_point_is_phrased_like_a_person_summarizes_in_chinese():
    episodes = [
        _episode(1, "trip", 6, destination="香港"),
        _episode(2, "social", 12, person="曹璐", occasion="生日"),
    ]
    facts = [_fact(1, "trip", "destination", "香港", 6), _fact(2, "social", "person", "曹璐", 12)]
    points = [p.text for p in recap_points(_gen(episodes, facts, "zh"), CHAPTER)]
    assert points == ["曹璐的生日", "去香港旅行"]


def test_a_good_answer_covers_two_thirds_of_the_points():
    assert [cover_of(n) for n in (2, 3, 4, 5)] == [2, 2, 3, 4]


def _summary(points: list[str], cover: int, lang: str = "en") -> QAItem:
    return QAItem(
        id="p01-q0100",
        persona_id="p01",
        question="Summarize my April 2026.",
        answer="; ".join(points),
        spec={"kind": "free", "items": points, "cover": cover},
        type="summarization",
        subtype="sum.month",
        evidence=[],
        evidence_sessions=[],
        asked_at=datetime(2026, 6, 1, 20),
        hops=len(points),
        difficulty="hard",
        language=lang,
        node="p01-c02",
        proof={"op": "key_points", "quotes": []},
    )


def test_the_rule_judge_accepts_a_paraphrased_point_in_english():
    item = _summary(["moved to Denver", "a chest-pain visit to the ER", "Noah's housewarming"], cover=2)
    answer = "You relocated to Denver, and you went to the emergency room hospital with chest pain."
    assert RuleJudge().judge(item, answer).correct


def test_the_rule_judge_accepts_a_paraphrased_point_in_chinese():
    item = _summary(["搬到长沙", "去香港旅行", "有段时间偏头痛"], cover=2, lang="zh")
    assert RuleJudge().judge(item, "四月你搬家去了长沙，还去了趟香港玩。").correct


def test_the_rule_judge_refuses_an_answer_that_covers_too_few_points():
    item = _summary(["moved to Denver", "had chest pain", "Noah's housewarming"], cover=2)
    assert not RuleJudge().judge(item, "You kept studying Korean and moved to Denver.").correct


def test_another_city_is_not_a_paraphrase_of_the_move():
    assert covers("You relocated to Denver.", "moved to Denver")
    assert not covers("You moved to Austin.", "moved to Denver")
