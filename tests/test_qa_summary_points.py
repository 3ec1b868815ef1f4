"""Summaries of what mattered: a month's key points are its most salient episodes, phrased the way a
person summarizes them, and the rule judge accepts them in other words."""

from __future__ import annotations

from dataclasses import replace
from datetime import datetime
from types import SimpleNamespace

import pytest

from eval.judge import RuleJudge
from eval.paraphrase import covers
from keme.models import Claim, Event, QAItem
from keme.qa.facts import Fact
from keme.qa.generate.episode import cover_of, episode_details, episode_point, recap_points
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


def _detail(key: str, value: str, moment: str, n: int = 1, said: str = "") -> Fact:
    """A detail the user names in the episode's session `n`, a session of `moment`, in a line `said`."""
    return Fact(
        "trip",
        key,
        value,
        f"p01-s{n:04d}-m02",
        f"p01-s{n:04d}",
        f"{TRIP}-l{n}",
        datetime(2026, 4, 3 + n, 19),
        {"moment": moment, "said": said or value},
    )


def _claim(message_id: str, predicate: str, value: str, said: str, speaker: str = "user") -> Claim:
    return Claim(
        id=f"{message_id}-c{abs(hash(predicate)) % 1000}",
        persona_id="p01",
        message_id=message_id,
        speaker=speaker,
        subject=f"event:{TRIP}",
        predicate=predicate,
        value=value,
        valid_from=datetime(2026, 4, 1),
        said=said,
    )


def _world_of(facts: list[Fact], claims: list[Claim] = (), lang: str = "en") -> SimpleNamespace:
    """The little of a persona's world a recap's detail reads: the user's messages, each naming its
    detail as that detail (the ledger's claim of the fact's key), and any other claims given."""
    ledger = [_claim(f.message_id, f.key, f.value, f.context["said"]) for f in facts] + list(claims)
    said = {c.message_id: c.said for c in ledger}
    messages = {
        m: SimpleNamespace(
            id=m,
            content=text,
            timestamp=datetime(2026, 4, 9, 20),
            role="user",
            claims=[c.id for c in ledger if c.message_id == m],
        )
        for m, text in said.items()
    }
    world = SimpleNamespace(
        claims=ledger,
        claims_by_id={c.id: c for c in ledger},
        messages=messages,
        session_of={m: m[:9] for m in messages},
    )
    return SimpleNamespace(world=world, say=phrasing(lang), by_assistant=lambda fact: False)


def _point(
    kind: str, fact: Fact, facts: list[Fact], claims: list[Claim] = (), lang: str = "en"
) -> str | None:
    detail = episode_point(_world_of(facts, claims, lang), kind, fact, facts)
    return None if detail is None else detail.text


def test_a_sight_named_only_while_planning_is_no_point():
    sight = _detail("attraction", "Fushimi Inari", "trip_planning")
    assert _point("trip", sight, [sight]) is None


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


def test_a_sight_someone_wants_to_see_during_the_trip_is_no_point_in_chinese():
    wish = _detail("attraction", "松花江", "trip_during")
    assert _point("trip", wish, [wish], lang="zh") is None


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


def test_the_companion_named_in_the_recap_only_as_the_best_friend_is_not_quoted_as_going():
    """ "Isaac remembered something I said" names the companion as the best friend, not as going."""
    there = _detail("companion", "Isaac", "trip_during", said="Isaac wants to go out tonight")
    aside = _detail("companion", "Isaac", "trip_recap", 2, said="Isaac remembered something I said")
    world = _world_of([there])
    message = SimpleNamespace(id=aside.message_id, content=aside.context["said"], role="user", claims=["x"])
    world.world.messages[aside.message_id] = message
    world.world.claims_by_id["x"] = _claim(aside.message_id, "social_circle.best_friend", "Isaac", "")
    detail = episode_point(world, "trip", there, [there, aside])
    assert (detail.text, detail.fact.message_id) == ("went with Isaac", there.message_id)


def test_a_local_food_only_talked_about_is_no_point():
    food = _detail("local_food", "锅包肉", "trip_planning")
    assert _point("trip", food, [food], lang="zh") is None


def test_a_local_food_the_ledger_says_was_eaten_is_one_the_user_had():
    food = _detail("local_food", "hush puppies", "trip_planning")
    eaten = _claim("p01-s0002-m05", "local_food_times", "5", "we had hush puppies like 5 times. zero regrets")
    assert _point("trip", food, [food, _detail("destination", "Charleston", "trip_recap", 2)], [eaten]) == (
        "had hush puppies there"
    )


def test_a_claim_the_assistant_makes_proves_no_meal():
    food = _detail("local_food", "hush puppies", "trip_planning")
    suggested = _claim(
        "p01-s0001-m05", "local_food_times", "2", "try hush puppies twice", speaker="assistant"
    )
    assert _point("trip", food, [food], [suggested]) is None


@pytest.mark.parametrize(
    ("lang", "kind", "key", "value", "moment"),
    [
        ("en", "trip", "destination", "Kyoto", "trip_recap"),
        ("zh", "trip", "destination", "京都", "trip_recap"),
        ("en", "social", "venue", "the university campus", "social_recap"),
        ("zh", "social", "gift_store", "天猫", "gift_idea"),
        ("en", "learning", "resource", "a beginner's workbook", "learning_session"),
        ("zh", "entertainment", "genre", "悬疑剧", "show_discuss"),
    ],
)
def test_a_value_without_a_phrase_never_becomes_a_point(lang, kind, key, value, moment):
    fact = _detail(key, value, moment)
    assert _point(kind, fact, [fact], lang=lang) is None


@pytest.mark.parametrize(
    ("lang", "kind", "key", "value", "moment"),
    [
        ("en", "social", "restaurant", "Seoul Kitchen", "restaurant_pick"),
        ("zh", "social", "restaurant", "海底捞", "restaurant_pick"),
        ("en", "social", "gift", "a cookbook", "gift_idea"),
        ("zh", "social", "gift", "保温杯", "gift_idea"),
        ("en", "work_project", "deadline", "June 24", "work_deadline"),
        ("zh", "work_project", "deadline", "6月24日", "work_meeting_prep"),
        ("en", "shopping", "price", "$299", "purchase_compare"),
        ("zh", "health", "clinic", "协和医院", "health_symptom"),
        ("en", "relocate", "target_neighborhood", "Ballard", "apartment_hunt"),
    ],
)
def test_a_plan_a_wish_or_a_price_looked_at_is_no_point(lang, kind, key, value, moment):
    fact = _detail(key, value, moment)
    assert _point(kind, fact, [fact], lang=lang) is None


@pytest.mark.parametrize(
    ("lang", "kind", "key", "value", "moment", "point"),
    [
        ("en", "work_project", "project", "churn analysis", "work_win", "got the churn analysis done"),
        ("zh", "work_project", "project", "官网改版", "work_win", "官网改版做完了"),
        ("en", "work_project", "colleague", "Ryan", "work_deadline", "worked on it with Ryan"),
        ("zh", "work_project", "colleague", "吕婷婷", "work_meeting_prep", "和吕婷婷一起做的"),
        ("en", "work_project", "deadline", "June 24", "work_win", "delivered it by June 24"),
        ("zh", "work_project", "deadline", "6月24日", "work_win", "赶在6月24日前交了"),
        ("en", "health", "clinic", "Mercy General", "health_followup", "saw a doctor at Mercy General"),
        ("zh", "health", "clinic", "协和医院", "health_followup", "去协和医院看了病"),
        ("en", "social", "restaurant", "Seoul Kitchen", "social_recap", "ate at Seoul Kitchen"),
        ("zh", "social", "restaurant", "海底捞", "social_recap", "在海底捞吃的饭"),
        ("en", "social", "gift", "a cookbook", "social_recap", "gave a cookbook as a gift"),
        ("zh", "social", "gift", "保温杯", "social_recap", "送了保温杯"),
        ("en", "shopping", "product", "Dyson V8", "purchase_done", "bought the Dyson V8"),
        ("zh", "shopping", "price", "¥2999", "purchase_done", "花了¥2999"),
        ("zh", "relocate", "target_neighborhood", "徐汇", "moving_day", "搬到了徐汇"),
    ],
)
def test_a_point_of_what_happened_is_quoted_by_the_message_that_says_it_did(
    lang, kind, key, value, moment, point
):
    fact = _detail(key, value, moment)
    detail = episode_point(_world_of([fact], lang=lang), kind, fact, [fact])
    assert (detail.text, detail.fact.message_id) == (point, fact.message_id)


# ---------------------------------------------------------------- judging an episode recap
def _recap(question: str, points: list[str], lang: str = "en") -> QAItem:
    item = _summary(points, cover_of(len(points)), lang)
    return item.model_copy(update={"question": question, "subtype": "sum.episode"})


PROJECT = _recap(
    "Give me a quick recap of the security compliance review at work.",
    ["got the security compliance review done", "worked on it with Connor", "delivered it by April 19"],
)
KYOTO = _recap(
    "Give me a quick recap of my trip to Kyoto.",
    ["went with Malik", "went to Fushimi Inari", "had matcha soba there"],
)
QUANZHOU = _recap(
    "关于去泉州旅行的事，帮我简单回顾一下。", ["和肖倩一起去的", "去了清源山", "吃了润饼"], "zh"
)
SUPPLY_CHAIN = _recap(
    "关于供应链数字化改造这个项目，帮我简单回顾一下。", ["供应链数字化改造做完了", "和徐梦瑶一起做的"], "zh"
)

AIR_FRYER = _recap(
    "Give me a quick recap of shopping for the Ninja AF101 air fryer.",
    ["bought the Ninja AF101 air fryer", "paid $91"],
)
MOUSE = _recap("关于挑罗技MX Master 3S的事，帮我简单回顾一下。", ["买了罗技MX Master 3S", "花了¥689"], "zh")


@pytest.mark.parametrize(
    ("item", "answer"),
    [
        (PROJECT, "Connor and I shipped it on time and it went over really well."),
        (AIR_FRYER, "You caved and ordered it in the end, $91."),
        (MOUSE, "最后在京东下单了，花了¥689。"),
        (
            KYOTO,
            "You went to Kyoto with Malik, saw the shrines at Fushimi Inari and kept eating matcha soba.",
        ),
        (QUANZHOU, "跟肖倩去的泉州，润饼吃了好几回，清源山也去了。"),
        (SUPPLY_CHAIN, "项目按时上线了，徐梦瑶帮了不少忙。"),
    ],
)
def test_the_rule_judge_accepts_a_person_summarizing_the_episode(item, answer):
    assert RuleJudge().judge(item, answer).correct


@pytest.mark.parametrize(
    ("item", "answer"),
    [
        (PROJECT, "The security compliance review at work: 16 slides, a 56-minute meeting, three coffees."),
        (KYOTO, "Kyoto was hot, the line was 52 minutes and my phone battery died."),
        (QUANZHOU, "泉州特别热，民宿跟照片不太一样，还买了个¥99的小摆件。"),
        (SUPPLY_CHAIN, "供应链数字化改造这个项目：PPT一共24页，一天喝了3杯咖啡。"),
        (AIR_FRYER, "Shopping for the Ninja AF101 air fryer: you compared it with a Cosori."),
        (MOUSE, "聊了罗技MX Master 3S和另一款鼠标，纠结了好几天。"),
    ],
)
def test_the_rule_judge_refuses_minor_details_or_the_question_said_back(item, answer):
    assert not RuleJudge().judge(item, answer).correct


def test_naming_the_project_alone_does_not_cover_its_outcome():
    asked = "Summarize everything about the churn analysis at work."
    assert not covers("We talked about the churn analysis at work.", "got the churn analysis done", asked)
    assert covers("The churn analysis finally went live.", "got the churn analysis done", asked)


def _work(key: str, value: str, moment: str, n: int) -> Fact:
    return replace(_detail(key, value, moment, n), kind="work_project")


def test_a_project_recap_leads_with_its_outcome_then_who_it_was_done_with():
    facts = [
        _work("project", "churn analysis", "work_deadline", 1),
        _work("colleague", "Mateo", "work_deadline", 2),
        _work("deadline", "May 14", "work_deadline", 3),
        _work("project", "churn analysis", "work_win", 4),
    ]
    details = episode_details(_world_of(facts), "work_project", facts, "the churn analysis at work")
    assert [d.text for d in details] == ["got the churn analysis done", "worked on it with Mateo"]
    assert details[0].fact.message_id == facts[3].message_id


def test_an_unfinished_project_has_one_point_and_is_not_recapped():
    facts = [
        _work("project", "churn analysis", "work_deadline", 1),
        _work("colleague", "Mateo", "work_deadline", 2),
        _work("deadline", "May 14", "work_meeting_prep", 3),
    ]
    details = episode_details(_world_of(facts), "work_project", facts, "the churn analysis at work")
    assert [d.text for d in details] == ["worked on it with Mateo"]


def test_a_price_said_without_its_thousands_separator_covers_the_point():
    assert covers("it cost me 1299 bucks in the end", "paid $1,299")
    assert not covers("it cost me 1300 bucks in the end", "paid $1,299")
