"""Summaries of what mattered: a month's key points are its most salient episodes, phrased the way a
person summarizes them, and the rule judge accepts them in other words."""

from __future__ import annotations

from datetime import datetime
from types import SimpleNamespace

import pytest

from eval.judge import RuleJudge
from eval.paraphrase import covers
from keme.models import Claim, Event, QAItem
from keme.qa.facts import Fact
from keme.qa.generate.episode import cover_of, episode_point, recap_points
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
    return SimpleNamespace(world=world, say=phrasing(lang), by_assistant=lambda fact: False, recaps={})


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


# ---------------------------------------------------------------- an episode recap's details
TRIP = "p01-c02-e01"


def _detail(key: str, value: str, moment: str, n: int = 1) -> Fact:
    """A detail the user names in the episode's session `n`, a session of `moment`."""
    return Fact(
        "trip",
        key,
        value,
        f"p01-s{n:04d}-m02",
        f"p01-s{n:04d}",
        f"{TRIP}-l{n}",
        datetime(2026, 4, 3 + n, 19),
        {"moment": moment},
    )


def _world_of(facts: list[Fact], claims: list[Claim] = (), lang: str = "en") -> SimpleNamespace:
    """The little of a persona's world a recap's detail reads: its messages and the ledger's claims."""
    said = {c.message_id: c.said for c in claims} | {f.message_id: f.value for f in facts}
    messages = {
        m: SimpleNamespace(id=m, content=text, timestamp=datetime(2026, 4, 9, 20), role="user")
        for m, text in said.items()
    }
    world = SimpleNamespace(claims=list(claims), messages=messages, session_of={m: m[:9] for m in messages})
    return SimpleNamespace(world=world, say=phrasing(lang), by_assistant=lambda fact: False)


def _claim(message_id: str, predicate: str, value: str, said: str) -> Claim:
    return Claim(
        id=f"{message_id}-c1",
        persona_id="p01",
        message_id=message_id,
        speaker="user",
        subject=f"event:{TRIP}",
        predicate=predicate,
        value=value,
        valid_from=datetime(2026, 4, 1),
        said=said,
    )


def _point(
    kind: str, fact: Fact, facts: list[Fact], claims: list[Claim] = (), lang: str = "en"
) -> str | None:
    detail = episode_point(_world_of(facts, claims, lang), kind, fact, facts)
    return None if detail is None else detail.text


def test_a_sight_named_while_planning_is_one_the_user_wanted_to_see():
    sight = _detail("attraction", "Fushimi Inari", "trip_planning")
    assert _point("trip", sight, [sight]) == "wanted to see Fushimi Inari"


def test_a_sight_named_in_the_trips_recap_is_one_the_user_went_to():
    planned, recap = (
        _detail("attraction", "Fushimi Inari", "trip_planning"),
        _detail("attraction", "Fushimi Inari", "trip_recap", 2),
    )
    assert _point("trip", planned, [planned, recap]) == "went to Fushimi Inari"


def test_the_went_to_point_is_quoted_by_the_recap_not_the_plan():
    planned, recap = (
        _detail("attraction", "松花江", "trip_during"),
        _detail("attraction", "松花江", "trip_recap", 2),
    )
    detail = episode_point(_world_of([planned, recap], lang="zh"), "trip", planned, [planned, recap])
    assert (detail.text, detail.fact.message_id) == ("去了松花江", recap.message_id)


def test_a_sight_someone_wants_to_see_during_the_trip_is_no_visit_in_chinese():
    wish = _detail("attraction", "松花江", "trip_during")
    assert _point("trip", wish, [wish], lang="zh") == "想去看松花江"


def test_a_friend_named_only_while_planning_is_no_companion():
    friend = _detail("companion", "曹勇", "trip_planning")
    assert _point("trip", friend, [friend], lang="zh") is None


def test_a_friend_named_on_the_trip_is_its_companion():
    planning, there = (
        _detail("companion", "Malik", "trip_planning"),
        _detail("companion", "Malik", "trip_during", 2),
    )
    assert _point("trip", planning, [planning, there]) == "went with Malik"


def test_a_companion_is_quoted_from_the_trips_recap_before_its_days_there():
    there, recap = _detail("companion", "曹勇", "trip_during"), _detail("companion", "曹勇", "trip_recap", 2)
    detail = episode_point(_world_of([there, recap], lang="zh"), "trip", there, [there, recap])
    assert (detail.text, detail.fact.message_id) == ("和曹勇一起去的", recap.message_id)


def test_a_local_food_talked_about_is_the_places_specialty_not_a_meal():
    food = _detail("local_food", "锅包肉", "trip_planning")
    assert _point("trip", food, [food], lang="zh") == "当地特色是锅包肉"


def test_a_local_food_the_ledger_says_was_eaten_is_one_the_user_had():
    food = _detail("local_food", "hush puppies", "trip_planning")
    eaten = _claim("p01-s0002-m05", "local_food_times", "5", "we had hush puppies like 5 times. zero regrets")
    assert _point("trip", food, [food, _detail("destination", "Charleston", "trip_recap", 2)], [eaten]) == (
        "had hush puppies there"
    )


def test_a_claim_the_assistant_makes_proves_no_meal():
    food = _detail("local_food", "hush puppies", "trip_planning")
    suggested = _claim("p01-s0001-m05", "local_food_times", "2", "try hush puppies twice").model_copy(
        update={"speaker": "assistant"}
    )
    assert _point("trip", food, [food], [suggested]) == "the local specialty, hush puppies"


@pytest.mark.parametrize(
    ("lang", "kind", "key", "value", "moment", "point"),
    [
        ("en", "work_project", "colleague", "Ryan", "work_deadline", "Ryan was involved"),
        ("zh", "work_project", "colleague", "吕婷婷", "work_meeting_prep", "同事吕婷婷也参与了"),
        ("en", "work_project", "deadline", "June 24", "work_deadline", "due June 24"),
        ("zh", "work_project", "deadline", "6月24日", "work_deadline", "6月24日截止"),
        (
            "en",
            "health",
            "clinic",
            "Mercy General",
            "health_symptom",
            "Mercy General came up as the place to be seen",
        ),
        ("zh", "health", "clinic", "协和医院", "health_symptom", "考虑去协和医院看"),
        ("en", "health", "clinic", "Mercy General", "health_followup", "saw a doctor at Mercy General"),
        ("zh", "health", "clinic", "协和医院", "health_followup", "去协和医院看了病"),
        (
            "en",
            "social",
            "restaurant",
            "Seoul Kitchen",
            "restaurant_pick",
            "considered Seoul Kitchen for the meal",
        ),
        ("zh", "social", "restaurant", "海底捞", "restaurant_pick", "吃饭考虑过海底捞"),
        ("en", "social", "restaurant", "Seoul Kitchen", "social_recap", "ate at Seoul Kitchen"),
        ("zh", "social", "restaurant", "海底捞", "social_recap", "在海底捞吃的饭"),
        ("en", "social", "gift", "a cookbook", "gift_idea", "thought about giving a cookbook"),
        ("zh", "social", "gift", "保温杯", "gift_idea", "礼物想送保温杯"),
        ("en", "social", "gift", "a cookbook", "social_recap", "gave a cookbook as a gift"),
        ("zh", "social", "gift", "保温杯", "social_recap", "送了保温杯"),
        ("en", "shopping", "price", "$299", "purchase_compare", "priced at $299"),
        ("zh", "shopping", "price", "¥2999", "purchase_compare", "价格是¥2999"),
        ("en", "shopping", "price", "$299", "purchase_done", "paid $299"),
        ("zh", "shopping", "price", "¥2999", "purchase_done", "花了¥2999"),
        ("en", "entertainment", "genre", "spy thriller", "show_discuss", "it's a spy thriller"),
        ("zh", "entertainment", "genre", "悬疑剧", "show_discuss", "是部悬疑剧"),
        ("en", "job_change", "target_title", "UX lead", "job_interview", "went for the UX lead role"),
        ("zh", "job_change", "target_title", "产品经理", "job_offer", "应聘的是产品经理"),
        ("en", "relocate", "target_neighborhood", "Ballard", "apartment_hunt", "planned to move to Ballard"),
        ("zh", "relocate", "target_neighborhood", "徐汇", "apartment_hunt", "打算搬到徐汇"),
        ("en", "relocate", "target_neighborhood", "Ballard", "moving_day", "moved to Ballard"),
    ],
)
def test_a_detail_says_only_what_the_moment_it_is_named_in_holds(lang, kind, key, value, moment, point):
    fact = _detail(key, value, moment)
    assert _point(kind, fact, [fact], lang=lang) == point
