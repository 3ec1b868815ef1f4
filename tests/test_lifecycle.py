"""Event lifecycles (keme.world.lifecycle, catalog `lifecycle`): the checker rule names each class of defect
the issue lists, put back into a small world, in English and Chinese; a labelled set of look-alikes passes
with no finding; and the generator's side (keme.synth.lifecycle) chooses what the rules allow."""

from __future__ import annotations

import random
from datetime import date, datetime, timedelta

import pytest

from keme.dataset.views import PersonaView
from keme.models import (
    Anchor,
    Attribute,
    AttributeVersion,
    CalendarRecord,
    Event,
    EventGraph,
    Message,
    Persona,
    Session,
    TodoRecord,
)
from keme.synth import lifecycle as gen
from keme.synth.context import PlanContext
from keme.synth.limits import parse_config
from keme.synth.moments import shrink_to_leaf_if_single
from keme.synth.params import social_params
from keme.synth.pipeline import start_trajectory
from keme.synth.planner import expand_chapter, one_employer
from keme.synth.state import Trajectory
from keme.text import resources
from keme.world.catalog import load_catalog
from keme.world.check import check_world
from keme.world.check import lifecycle as rule
from keme.world.check.base import World
from keme.world.cues import load_cues
from keme.world.lifecycle import holiday_days

START = datetime(2026, 1, 1)
END = datetime(2026, 12, 31, 23, 59, 59)
JOB = {"en": ("Saltbox Studios", "software engineer"), "zh": ("森屿家居", "人事专员")}


# --- builders
def persona(lang: str, versions: dict[str, list[tuple[str, datetime]]] | None = None) -> Persona:
    versions = dict(versions or {})
    company, title = JOB[lang]
    versions.setdefault("career.company", [(company, START)])
    versions.setdefault("career.job_title", [(title, START)])
    dimensions: dict = {}
    for key, values in versions.items():
        dim, name = key.split(".", 1)
        dimensions.setdefault(dim, {})[name] = Attribute(
            key=key,
            mutable=True,
            versions=[AttributeVersion(value=v, valid_from=f, evidence=[]) for v, f in values],
        )
    return Persona(
        id="p01",
        name="Carlos Wilson" if lang == "en" else "林晓",
        language=lang,
        country="US" if lang == "en" else "CN",
        start=START,
        end=END,
        dimensions=dimensions,
    )


def episode(
    n: int, kind: str, start: datetime, days: int = 3, change: str | None = None, **params: str
) -> Event:
    return Event(
        id=f"p01-c01-e{n:02d}",
        parent_id="p01-c01",
        depth=1,
        kind=kind,
        title=kind,
        summary="",
        start=start,
        end=start + timedelta(days=days),
        params=params,
        change=change,
    )


def leaf(parent: Event, kind: str, k: int = 1) -> Event:
    return Event(
        id=f"{parent.id}-{k}",
        parent_id=parent.id,
        depth=2,
        kind=kind,
        title=kind,
        summary="",
        start=parent.start,
        end=parent.end,
    )


def said(lines: list[tuple[datetime, str]], lang: str, event_id: str = "p01-c01-e99") -> list[Session]:
    """One session per user line, each under `event_id`."""
    out = []
    for k, (when, text) in enumerate(lines, 1):
        message = Message(id=f"p01-s{k:04d}-m01", role="user", content=text, timestamp=when)
        out.append(
            Session(
                id=f"p01-s{k:04d}",
                persona_id="p01",
                event_id=event_id,
                language=lang,
                pattern="test",
                start=when,
                end=when,
                messages=[message],
            )
        )
    return out


def chapter() -> Event:
    return Event(
        id="p01-c01", parent_id=None, depth=0, kind="chapter", title="2026", summary="", start=START, end=END
    )


def view(
    lang: str,
    events: list[Event] = (),
    lines: list[tuple[datetime, str]] = (),
    the_persona: Persona | None = None,
) -> PersonaView:
    return PersonaView(
        the_persona or persona(lang),
        graph=EventGraph(persona_id="p01", events=[chapter(), *events], edges=[]),
        sessions=said(list(lines), lang),
    )


def named(v: PersonaView) -> list[str]:
    return [f.text for f in rule.check(World(v, load_catalog(v.lang), load_cues(v.lang)))]


def at(month: int, day: int, hour: int = 10) -> datetime:
    return datetime(2026, month, day, hour)


# --- one-off events
@pytest.mark.parametrize(
    ("lang", "first", "second"),
    [("en", "book launch party", "book launch party"), ("zh", "乔迁宴", "新家暖房")],
)
def test_a_once_only_occasion_held_twice_for_one_person_is_named(lang, first, second):
    events = [
        episode(1, "social", at(6, 12), person="Imani", occasion=first),
        episode(2, "social", at(10, 1), person="Imani", occasion=second),
    ]
    found = named(view(lang, events))
    assert len(found) == 1 and "Imani" in found[0] and "held twice" in found[0]


@pytest.mark.parametrize(("lang", "occasion"), [("en", "book launch party"), ("zh", "乔迁宴")])
def test_two_different_peoples_once_only_occasions_pass(lang, occasion):
    events = [
        episode(1, "social", at(6, 12), person="Imani", occasion=occasion),
        episode(2, "social", at(6, 20), person="Jae", occasion=occasion),
    ]
    assert named(view(lang, events)) == []


def test_a_new_job_and_a_promotion_celebration_of_one_friend_in_weeks_are_one_piece_of_news_named():
    events = [
        episode(1, "social", at(3, 15), person="Imani", occasion="new-job celebration"),
        episode(2, "social", at(4, 2), person="Imani", occasion="promotion celebration"),
    ]
    assert any("career news" in text for text in named(view("en", events)))


@pytest.mark.parametrize(("lang", "project"), [("en", "mobile app redesign"), ("zh", "门店POS系统升级")])
def test_one_project_delivered_in_two_episodes_is_named(lang, project):
    first = episode(1, "work_project", at(4, 10), colleague="Ana", project=project)
    second = episode(2, "work_project", at(11, 3), colleague="Ben", project=project)
    found = named(view(lang, [first, leaf(first, "work_win"), second, leaf(second, "work_win")]))
    assert found == [f"project {project!r} is delivered twice: 2026-04-10 and 2026-11-03"]


@pytest.mark.parametrize(
    ("kind", "key", "value"),
    [
        ("shopping", "product", "Peloton Bike"),
        ("entertainment", "title", "Past Lives"),
        ("social", "gift", "a board game"),
    ],
)
def test_a_thing_bought_watched_or_given_in_two_episodes_is_named(kind, key, value):
    events = [episode(1, kind, at(5, 15), **{key: value}), episode(2, kind, at(9, 16), **{key: value})]
    assert any(f"{key} {value!r} is" in text and "twice" in text for text in named(view("en", events)))


def test_two_different_things_bought_pass():
    events = [
        episode(1, "shopping", at(5, 15), product="Peloton Bike"),
        episode(2, "shopping", at(9, 16), product="iPad Air"),
    ]
    assert named(view("en", events)) == []


def test_the_planner_does_not_buy_watch_or_give_one_thing_twice_in_a_year():
    from keme.synth.pipeline import synthesize_persona

    cfg = parse_config("name: t\nseed: 3\npersonas: [{language: en, start: 2026-01-01, months: 12}]\n")
    traj = synthesize_persona(0, cfg)
    for kind, key in (("shopping", "product"), ("entertainment", "title"), ("social", "gift")):
        values = [
            e.params[key] for e in traj.events.values() if e.kind == kind and e.depth == 1 and key in e.params
        ]
        assert len(values) == len(set(values)), (kind, values)


@pytest.mark.parametrize(
    ("lang", "projects"), [("en", ("CRM cleanup", "brand refresh")), ("zh", ("官网改版", "小程序改版"))]
)
def test_two_projects_each_delivered_once_pass(lang, projects):
    first = episode(1, "work_project", at(4, 10), project=projects[0])
    second = episode(2, "work_project", at(11, 3), project=projects[1])
    assert named(view(lang, [first, leaf(first, "work_win"), second, leaf(second, "work_win")])) == []


@pytest.mark.parametrize(
    ("lang", "project", "month", "flagged"),
    [
        ("zh", "双十一备货计划", 4, True),
        ("zh", "双十一备货计划", 10, False),
        ("en", "holiday marketing campaign", 3, True),
    ],
)
def test_a_seasonal_project_out_of_its_season_is_named(lang, project, month, flagged):
    found = named(view(lang, [episode(1, "work_project", at(month, 8), project=project)]))
    assert bool(found) is flagged
    assert all("out of its season" in text for text in found)


@pytest.mark.parametrize(
    ("lang", "lines"),
    [
        ("en", [(at(4, 5), "What should I get my best friend Imani as a thank-you for helping me move?")]),
        ("zh", [(at(4, 5), "想谢谢陈晨上周帮我搬家，请她吃什么好")]),
    ],
)
def test_thanks_for_a_move_that_never_happened_is_named(lang, lines):
    found = named(view(lang, lines=lines))
    assert len(found) == 1 and "home.neighborhood" in found[0]


@pytest.mark.parametrize(
    ("lang", "text"),
    [("en", "Thanks again to Imani for helping me move!"), ("zh", "想谢谢陈晨上周帮我搬家，请她吃什么好")],
)
def test_thanks_two_weeks_after_a_move_pass(lang, text):
    moved = persona(lang, {"home.neighborhood": [("Old", START), ("New", at(3, 20))]})
    assert named(view(lang, lines=[(at(4, 3), text)], the_persona=moved)) == []


# --- yearly
@pytest.mark.parametrize(
    ("lang", "when", "text"),
    [
        ("en", at(8, 20), "Holiday party at Saltbox Studios is next Friday. Do I actually have to go?"),
        ("en", at(2, 11), "Open enrollment at Saltbox Studios ends this week. HSA plan or PPO?"),
        ("zh", at(2, 14), "舅妈问我中秋回不回岳阳"),
        ("zh", at(4, 14), "过年回家，我堂弟说要来车站接我"),
        ("zh", at(10, 25), "过年回家，我堂弟说要来车站接我"),  # imminent talk 104 days ahead
        ("zh", at(3, 3), "过年回家，我堂弟说要来车站接我"),  # two weeks after 春节
        ("zh", at(10, 20), "今天公司发年终奖了，比去年少了一点"),
    ],
)
def test_a_yearly_thing_talked_of_out_of_its_season_is_named(lang, when, text):
    found = named(view(lang, lines=[(when, text)]))
    assert len(found) == 1 and str(when.date()) in found[0]


@pytest.mark.parametrize(
    ("lang", "lines"),
    [
        (
            "en",
            [
                (at(10, 20), "Open enrollment at Saltbox Studios ends this week. HSA plan or PPO?"),
                (at(11, 18), "Open enrollment at Saltbox Studios ends this week. HSA plan or PPO?"),
            ],
        ),
        (
            "zh",
            [(datetime(2026, 1, 10), "今天公司发年终奖了"), (datetime(2026, 2, 28), "今天公司发年终奖了")],
        ),
    ],
)
def test_a_yearly_thing_twice_in_one_season_is_named(lang, lines):
    found = named(view(lang, lines=lines))
    assert len(found) == 1 and "happens again" in found[0]


@pytest.mark.parametrize(
    ("lang", "lines"),
    [
        (
            "en",
            [
                (datetime(2026, 12, 3), "Holiday party at Saltbox Studios is next Friday. Do I have to go?"),
                (datetime(2027, 12, 2), "Holiday party at Saltbox Studios is next Friday. Do I have to go?"),
            ],
        ),
        (
            "zh",
            [(datetime(2026, 1, 20), "今天公司发年终奖了"), (datetime(2027, 1, 18), "今天公司发年终奖了")],
        ),
    ],
)
def test_a_yearly_thing_in_two_different_years_passes(lang, lines):
    assert named(view(lang, lines=lines)) == []


def test_the_lunar_festivals_fall_on_their_real_dates():
    years = range(2026, 2028)
    assert holiday_days("春节", "CN", "zh", years) == [
        datetime(2026, 2, 17).date(),
        datetime(2027, 2, 6).date(),
    ]
    assert holiday_days("中秋节", "CN", "zh", years)[0] == datetime(2026, 9, 25).date()
    assert holiday_days("端午节", "CN", "zh", years)[0] == datetime(2026, 6, 19).date()


@pytest.mark.parametrize(
    ("lang", "when", "text"),
    [
        ("zh", datetime(2026, 2, 17, 9), "今天要不要请假，手上还有活"),  # 春节 itself
        ("zh", datetime(2026, 7, 12, 9), "对了，今天要不要请假，手上还有活"),  # a Sunday
        ("en", datetime(2026, 7, 4, 9), "Should I call in sick? I feel awful."),  # Independence Day
    ],
)
def test_asking_to_take_today_off_on_a_day_off_is_named(lang, when, text):
    found = named(view(lang, lines=[(when, text)]))
    assert len(found) == 1 and "a day off" in found[0]


# --- incidents
@pytest.mark.parametrize(
    ("lang", "lines", "problem"),
    [
        (
            "en",
            [
                (at(1, 10), "My badge at Saltbox Studios stopped working, so I've been tailgating."),
                (at(8, 17), "My badge at Saltbox Studios stopped working, so I've been tailgating."),
            ],
            "told as new",
        ),
        (
            "en",
            [
                (at(4, 13), "Juniper hasn't been eating much since yesterday. Should I worry?"),
                (at(6, 10), "Juniper hasn't been eating again since Sunday."),
            ],
            "58 days after the last",
        ),
        (
            "zh",
            [
                (at(1, 23), "膝盖有点不舒服"),
                (at(5, 10), "最近骑行练得有点多，膝盖又有点不舒服"),
                (at(9, 10), "膝盖又有点不舒服，是不是姿势不对"),
            ],
            "3 within a year",
        ),
    ],
)
def test_an_incident_on_repeat_is_named(lang, lines, problem):
    found = named(view(lang, lines=lines))
    assert len(found) == 1 and problem in found[0]


@pytest.mark.parametrize(
    ("lang", "lines"),
    [
        (
            "en",
            [
                (at(2, 13), "Tweaked something during boxing yesterday. Nothing serious, just sore."),
                (
                    at(2, 16),
                    "Still sore from when I tweaked something during boxing.",
                ),  # the same one, followed up
                (at(7, 1), "Tweaked something during boxing again, same shoulder."),
            ],
        ),
        ("zh", [(at(3, 1), "膝盖有点不舒服"), (at(8, 1), "膝盖又有点不舒服了")]),
    ],
)
def test_an_incident_at_its_rate_told_as_a_repeat_passes(lang, lines):
    assert named(view(lang, lines=lines)) == []


# --- changes
@pytest.mark.parametrize(("lang", "old", "new"), [("en", "Pittsburgh", "San Diego"), ("zh", "天津", "西安")])
def test_a_move_to_another_city_with_the_same_job_and_commute_is_named(lang, old, new):
    moved = persona(
        lang,
        {"home.city": [(old, START), (new, at(5, 1))], "transport.commute_mode": [("subway", START)]},
    )
    found = named(view(lang, the_persona=moved))
    assert len(found) == 2
    assert "kept the job" in found[0] and "still commutes by 'subway'" in found[1]


@pytest.mark.parametrize(("lang", "old", "new"), [("en", "Chicago", "New York"), ("zh", "天津", "西安")])
def test_a_move_too_close_to_the_trajectory_end_to_judge_passes(lang, old, new):
    moved = persona(
        lang,
        {
            "home.city": [(old, START), (new, END - timedelta(days=5))],
            "transport.commute_mode": [("bus", START)],
        },
    )
    assert named(view(lang, the_persona=moved)) == []


def test_a_move_with_a_new_job_and_commute_passes():
    moved = persona(
        "en",
        {
            "home.city": [("Pittsburgh", START), ("San Diego", at(5, 1))],
            "career.company": [("Saltbox Studios", START), ("Kestrel Robotics", at(5, 20))],
            "transport.commute_mode": [("subway", START), ("car", at(5, 25))],
        },
    )
    assert named(view("en", the_persona=moved)) == []


@pytest.mark.parametrize(
    ("lang", "old", "new", "said", "flagged"),
    [
        ("en", "Saltbox Studios", "Lanternfish Games", at(4, 18), True),  # the offer session, a week early
        ("zh", "森屿家居", "栖木酒店管理", at(4, 23), True),
        ("en", "Saltbox Studios", "Lanternfish Games", at(4, 24, 21), False),  # on the first day itself
        ("zh", "森屿家居", "栖木酒店管理", at(4, 30), False),  # a week in
    ],
)
def test_a_new_job_said_as_the_persona_s_before_its_first_day_is_named(lang, old, new, said, flagged):
    hired = persona(lang, {"career.company": [(old, START), (new, said)]})
    change = episode(1, "job_change", at(4, 9), days=16, change="job_change")
    events = [change, leaf(change, "job_offer", 1), leaf(change, "first_day", 2)]
    events[2] = events[2].model_copy(update={"start": at(4, 24, 18), "end": at(4, 24, 23)})
    found = [t for t in named(view(lang, events, the_persona=hired)) if "first day" in t]
    assert bool(found) is flagged
    assert not flagged or f"before its first day 2026-04-24 (still at {old}" in found[0]


@pytest.mark.parametrize(
    ("lang", "old", "new", "flagged"),
    [
        ("zh", "行政主管", "算法工程师", True),
        ("en", "software engineer", "financial analyst", True),
        ("en", "senior software engineer", "software engineer", True),
        ("en", "software engineer", "senior software engineer", False),
        ("zh", "人事专员", "行政主管", False),
    ],
)
def test_a_promotion_off_the_career_ladder_is_named(lang, old, new, flagged):
    promoted = persona(lang, {"career.job_title": [(old, START), (new, at(6, 3))]})
    events = [episode(1, "promotion", at(6, 1), change="promotion", project="x")]
    found = [t for t in named(view(lang, events, the_persona=promoted)) if "promoted" in t]
    assert bool(found) is flagged


# --- precision
LOOK_ALIKES = [
    ("en", datetime(2026, 6, 13, 10), "Thinking we go stand-up paddleboarding at the lake this Saturday."),
    (
        "en",
        datetime(2026, 8, 17, 10),
        "Writing my bio for the conference badge: 'Carlos, engineer.' Too boring?",
    ),
    ("en", datetime(2026, 5, 18, 10), "Rafael is coming at 8 to help me move. I bought pizza."),
    ("en", datetime(2026, 6, 2, 10), "Last Christmas we went to my aunt's and it was chaos."),
    ("en", datetime(2026, 7, 7, 10), "Should I call in sick? My throat is killing me."),  # a Tuesday
    ("en", datetime(2026, 3, 3, 10), "The coffee machine at work is finally fixed."),
    ("zh", datetime(2026, 6, 20, 10), "去年过年的时候胖了五斤，到现在还没减下来"),
    ("zh", datetime(2026, 6, 20, 10), "周末找人帮我搬家具，沙发太重了"),
    ("zh", datetime(2026, 3, 3, 10), "刘璐今天请假了，ta负责的那块只能我先顶上"),
    ("zh", datetime(2026, 3, 3, 10), "今天要不要请假，手上还有活"),  # a Tuesday
    ("zh", datetime(2026, 9, 20, 10), "中秋快到了，给爸妈寄点月饼"),
    ("zh", datetime(2026, 12, 20, 10), "春节回不回老家还没定，票太难抢了"),
    ("zh", datetime(2026, 7, 15, 10), "明天要在企业微信上给老板过年中经营分析会材料"),  # 过 + 年中
    ("zh", datetime(2026, 7, 15, 10), "明天要在飞书上给老板过年度预算报表"),  # 过 + 年度
    ("zh", datetime(2026, 7, 20, 10), "接着刚才的，没胃口，吃点啥好"),  # the user's own appetite, not a pet's
    ("zh", datetime(2026, 11, 20, 10), "接着刚才的，没胃口，吃点啥好"),
    (
        "en",
        datetime(2026, 3, 9, 10),
        "My manager wants a self-review by Friday and I hate writing about myself.",
    ),
    ("zh", datetime(2026, 10, 21, 10), "奶奶问我春节回不回赣州"),  # plans asked months ahead
    ("zh", datetime(2026, 10, 21, 10), "今年回不回柳州过年还没拿定主意"),  # the same, place first
    ("zh", datetime(2026, 10, 21, 10), "妈妈又问我回不回老家过春节"),
    # a friend's holiday party after Christmas is not the office one (its season ends Dec 20)
    (
        "en",
        datetime(2026, 12, 27, 23),
        "Back home after Nathan's holiday party at the Loft on Pine. What a night.",
    ),
]


@pytest.mark.parametrize(("lang", "when", "text"), LOOK_ALIKES)
def test_lines_that_only_look_like_violations_pass(lang, when, text):
    assert named(view(lang, lines=[(when, text)])) == []


def test_validate_runs_the_lifecycle_rule():
    found = check_world(
        view("en", lines=[(at(8, 20), "Holiday party at Saltbox Studios is next Friday. Do I have to go?")]),
        load_catalog("en"),
        load_cues("en"),
    )
    assert [f.rule for f in found if f.rule == "lifecycle"] == ["lifecycle"]


# --- generation
def test_the_planner_picks_a_project_no_other_episode_had_and_in_its_season():
    life = load_catalog("zh").lifecycle
    taken = [episode(1, "work_project", at(3, 1), project="官网改版")]
    pool = ["官网改版", "双十一备货计划", "小程序改版"]
    picks = {gen.project_for(random.Random(s), taken, life, pool, at(4, 10)) for s in range(20)}
    assert picks == {"小程序改版"}


def test_the_planner_gives_a_person_no_second_once_only_occasion():
    life = load_catalog("en").lifecycle
    held = gen.once_held(
        [episode(1, "social", at(3, 1), person="Imani", occasion="new-job celebration")], life, "Imani"
    )
    assert not gen.open_occasion(life, "promotion celebration", held)
    assert gen.open_occasion(life, "birthday", held)


@pytest.mark.parametrize(
    ("lang", "old", "ladder"),
    [
        ("en", "software engineer", {"senior software engineer", "staff engineer"}),
        ("zh", "人事专员", {"行政主管"}),
    ],
)
def test_a_promotion_climbs_the_ladder(lang, old, ladder):
    life = load_catalog(lang).lifecycle
    assert {gen.promotion_title(random.Random(s), life, old, []) for s in range(20)} <= ladder
    assert (
        gen.promotion_title(random.Random(1), life, "staff engineer" if lang == "en" else "行政主管", [])
        is None
    )


def test_a_move_to_another_city_brings_a_job_change_and_no_promotion():
    assert gen.pair_relocation(["relocate", "promotion", "new_phone"]) == [
        "relocate",
        "new_phone",
        "job_change",
    ]
    assert gen.pair_relocation(["relocate"]) == ["relocate", "job_change"]  # on top, like the new commute
    assert gen.pair_relocation(["promotion"]) == ["promotion"]
    slots = [["relocate"], [], ["new_phone"], ["job_change"]]
    gen.place_job_with_move(slots, lambda i: True)
    assert slots == [["relocate"], ["job_change"], ["new_phone"], []]


@pytest.mark.parametrize(
    ("lang", "line", "first", "later"),
    [
        ("en", "My badge at {value} stopped working, so I've been tailgating.", at(1, 10), at(9, 1)),
        ("zh", "最近{value}练得有点多，膝盖有点不舒服", at(1, 10), at(9, 1)),
    ],
)
def test_the_realizer_tells_an_incident_once_and_not_again_as_new(lang, line, first, later):
    life = load_catalog(lang).lifecycle
    memory = gen.LifeMemory()
    who = persona(lang)
    assert memory.allows(line, first, who, lang, life)
    memory.catch_up(said([(first, line.replace("{value}", "X"))], lang), life)
    assert not memory.allows(line, later, who, lang, life)
    assert memory.allows(line, first + timedelta(days=3), who, lang, life)  # the same one, followed up


@pytest.mark.parametrize(
    ("lang", "line", "off", "on"),
    [
        ("en", "Holiday party at {value} is next Friday. Do I actually have to go?", at(8, 20), at(12, 4)),
        ("zh", "舅妈问我中秋回不回岳阳", at(2, 14), at(9, 1)),
        ("zh", "今天要不要请假，手上还有活", datetime(2026, 2, 17, 9), datetime(2026, 2, 24, 9)),
        # year-zh seed 1 went home for 春节 (2026-02-17) on 03-03
        ("zh", "过年回家，我堂弟吴凯说要来车站接我", at(3, 3), at(2, 10)),
    ],
)
def test_the_realizer_says_a_seasonal_line_only_in_its_season(lang, line, off, on):
    life = load_catalog(lang).lifecycle
    memory, who = gen.LifeMemory(), persona(lang)
    assert not memory.allows(line, off, who, lang, life)
    assert memory.allows(line, on, who, lang, life)


@pytest.mark.parametrize(
    ("lang", "pool", "when", "kept"),
    [
        ("zh", ["双十二", "春节前的年货大促"], at(4, 11), ["双十二"]),
        ("zh", ["双十二", "春节前的年货大促"], at(1, 20), ["双十二", "春节前的年货大促"]),
    ],
)
def test_a_pool_value_out_of_its_season_is_not_drawn(lang, pool, when, kept):
    life = load_catalog(lang).lifecycle
    memory, who = gen.LifeMemory(), persona(lang)
    pools = {"sales": pool, "other": ["a"]}
    assert gen.gated_pools(pools, life, gen.line_gate(memory, life, who, when), lang)["sales"] == kept


@pytest.mark.parametrize(
    ("day", "drawn"), [(datetime(2026, 3, 2, 10), False), (datetime(2026, 1, 20, 10), True)]
)
def test_the_gate_holds_holiday_words_to_the_window_the_checker_does(day, drawn):
    """「春节前的年货大促」 13 days after 春节 (2026-02-17): the lifecycle rule's 15 days after let it
    through, the calendar check's 年货 (3 days after) named it; the gate asks the checker's own test."""
    life = load_catalog("zh").lifecycle
    allows = gen.line_gate(gen.LifeMemory(), life, persona("zh"), day)
    assert allows("等{pool.b_sale_events}吧，反正也不急") is True
    assert allows("等春节前的年货大促吧，反正也不急") is drawn


@pytest.mark.parametrize(
    ("lang", "plain", "again"),
    [
        (
            "en",
            "My badge at {value} stopped working, so I've been tailgating coworkers through the door "
            "all day.",
            "My badge at {value} stopped working again. Second time — I think the chip just hates me.",
        ),
        ("zh", "最近{value}练得有点多，膝盖有点不舒服", "{value}练完膝盖又不舒服了，老毛病，跟上回一个位置"),
    ],
)
def test_a_later_incident_past_its_gap_is_told_only_as_a_repeat(lang, plain, again):
    life = load_catalog(lang).lifecycle
    memory, who = gen.LifeMemory(), persona(lang)
    memory.catch_up(said([(at(1, 10), plain.replace("{value}", "X"))], lang), life)
    later = at(8, 1)
    assert not memory.allows(plain, later, who, lang, life)
    assert memory.allows(again, later, who, lang, life)


def test_the_first_incident_of_the_trajectory_is_not_told_as_a_repeat():
    life = load_catalog("en").lifecycle
    again = "My badge at {value} stopped working again. Second time — I think the chip just hates me."
    assert not gen.LifeMemory().allows(again, at(4, 23), persona("en"), "en", life)


# --- a project is delivered once (keme/synth/lifecycle.py project_for)
PROMOTED = {"en": ("CRM cleanup", "brand refresh"), "zh": ("小程序改版", "官网改版")}


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_a_promotion_that_shrank_to_its_moment_keeps_its_project(lang):
    """A one-moment promotion episode is renamed to its moment (work_win): its project is still taken."""
    life = load_catalog(lang).lifecycle
    held, free = PROMOTED[lang]
    promo = episode(1, "work_win", at(9, 24), change="promotion", project=held, _episode="promotion")
    picks = {gen.project_for(random.Random(s), [promo], life, [held, free], at(10, 19)) for s in range(20)}
    assert picks == {free}


SEASON_ENDS = {"en": ("spring product launch", 5, 15), "zh": ("618大促活动页", 6, 18)}


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_a_project_whose_season_ends_inside_the_window_is_not_picked(lang):
    """Its one moment may fall on the window's last day, after the season: the project is begun then."""
    life = load_catalog(lang).lifecycle
    seasonal, month, last = SEASON_ENDS[lang]
    pool = [seasonal, PROMOTED[lang][0]]
    start, over, inside = at(month, last - 1), at(month, last + 9), at(month, last)
    assert {gen.project_for(random.Random(s), [], life, pool, start, until=over) for s in range(20)} == {
        PROMOTED[lang][0]
    }
    assert seasonal in {
        gen.project_for(random.Random(s), [], life, pool, start, until=inside) for s in range(20)
    }


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_a_seasonal_project_holds_to_its_season_s_last_day(lang):
    seasonal, month, last = SEASON_ENDS[lang]
    holds = gen.details_hold({"project": seasonal}, load_catalog(lang).lifecycle, persona(lang))
    assert holds is not None
    assert holds(date(2026, month, last)) and not holds(date(2026, month, last + 1))


def test_an_all_year_project_and_a_plain_occasion_bind_no_day():
    life = load_catalog("zh").lifecycle
    assert gen.details_hold({"project": "小程序改版", "occasion": "乔迁宴"}, life, persona("zh")) is None


def test_a_holiday_dinner_holds_from_the_checks_days_before_to_their_days_after():
    """中秋 2026 is September 25: 中秋团圆饭 is said up to 7 days after (the lifecycle check's window, the
    narrower of the two checks'), and from 75 before."""
    holds = gen.details_hold({"occasion": "中秋团圆饭"}, load_catalog("zh").lifecycle, persona("zh"))
    assert holds is not None
    assert [holds(date(2026, 10, d)) for d in (2, 3)] == [True, False]
    assert [holds(date(2026, 7, d)) for d in (11, 12)] == [False, True]


def test_a_holiday_dinner_is_not_held_where_the_holiday_is_not_kept():
    """A zh persona in Japan: no 中秋节 in its calendar, so no day is near it (the lifecycle check)."""
    japan = persona("zh").model_copy(update={"country": "JP"})
    holds = gen.details_hold({"occasion": "中秋团圆饭"}, load_catalog("zh").lifecycle, japan)
    assert holds is not None and not holds(date(2026, 9, 25))


def _planning(start: str) -> tuple[Trajectory, PlanContext]:
    """A zh persona in China for the month from `start`, one moment an episode, no anchors."""
    cfg = parse_config(
        f"name: t\nseed: 3\npersonas:\n  - {{language: zh, start: {start}, months: 1, country: CN}}\n"
        "graph:\n  max_depth: 1\nanchors:\n  per_month: {bill: 0.0}\n"
    )
    return start_trajectory(0, cfg, resources.get("zh")), PlanContext(cfg, resources.get("zh"))


def test_a_one_moment_project_episode_happens_in_its_season_whatever_the_draw():
    """618大促活动页 from June 17 to 27: its moment is the day the project is begun, by June 18."""
    traj, ctx = _planning("2026-06-01")
    chapter = traj.children(None)[-1]
    days = set()
    for seed in range(10):
        work = episode(1, "work_project", at(6, 17, 0), days=11, project="618大促活动页")
        work.parent_id = chapter.id
        shrink_to_leaf_if_single(work, traj, ctx, random.Random(seed))
        days.add(work.start.date())
    assert days <= {date(2026, 6, 17), date(2026, 6, 18)}


def test_a_holiday_dinner_is_planned_only_near_the_holiday():
    """A sibling's occasion in the week after 中秋 (September 25, 2026) is never its 中秋团圆饭; in the week
    before it can be."""
    traj, ctx = _planning("2026-09-01")

    def picks(first: datetime, last: datetime) -> set[str]:
        return {
            social_params(random.Random(s), traj, ctx, first, "吴凯", "sibling", last)["occasion"]
            for s in range(40)
        }

    assert "中秋团圆饭" not in picks(at(10, 2), at(10, 9))
    assert "中秋团圆饭" in picks(at(9, 18), at(9, 25))


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_no_project_left_plans_no_work_episode(lang):
    life = load_catalog(lang).lifecycle
    held, free = PROMOTED[lang]
    taken = [
        episode(1, "work_project", at(1, 10), project=held),
        episode(2, "work_project", at(2, 1), project=free),
    ]
    assert gen.project_for(random.Random(1), taken, life, [held, free], at(12, 22)) is None


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_a_work_episode_leaves_an_all_year_project_for_a_promotion_ahead(lang):
    life = load_catalog(lang).lifecycle
    all_year = PROMOTED[lang][0]
    seasonal = "spring product launch" if lang == "en" else "春季新品发布会"
    chapter = Event(
        id="p01-c09",
        parent_id=None,
        depth=0,
        kind="chapter",
        title="",
        summary="",
        start=at(9, 1),
        end=at(9, 30),
        params={"changes": "promotion"},
    )
    reserve = gen.promotions_ahead([chapter])
    assert reserve == 1
    pool = [all_year, seasonal]
    picks = {gen.project_for(random.Random(s), [chapter], life, pool, at(3, 1), reserve) for s in range(20)}
    assert picks == {seasonal}
    assert gen.project_for(random.Random(1), [chapter], life, pool, at(9, 24)) == all_year
    promo = episode(1, "work_win", at(9, 24), change="promotion", project=all_year, _episode="promotion")
    assert gen.promotions_ahead([chapter, promo]) == 0


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_a_planned_year_names_each_project_once_even_when_work_outruns_the_pool(lang):
    """Work episodes weighted to outnumber the projects: the planner runs out and plans other things."""
    cfg = parse_config(
        f"name: t\nseed: 8\npersonas:\n  - {{language: {lang}, start: 2026-01-01, months: 12}}\n"
        "episodes:\n  weights: {work_project: 40}\n",
        "<test>",
    )
    res = resources.get(lang)
    traj = start_trajectory(0, cfg, res)
    ctx = PlanContext(cfg, res)
    for chapter in traj.children(None):
        expand_chapter(chapter, traj, ctx, random.Random(chapter.id))
    named = [e.params["project"] for e in traj.events.values() if e.params.get("project")]
    assert len(named) == len(set(named))
    assert len(named) >= len(res.pools.lists["projects"]) - 4  # the pool did run out


# --- an incident is told as new once, and a repeat of it only when one came before
@pytest.mark.parametrize(
    ("lang", "lines"),
    [
        (
            "en",
            [
                (at(4, 9), "Tweaked something during hiking yesterday. Nothing serious, just sore."),
                (at(4, 10), "Tweaked something during hiking again, the same spot as last time."),
            ],
        ),
        ("zh", [(at(3, 1), "最近骑行练得有点多，膝盖有点不舒服"), (at(3, 2), "膝盖又有点不舒服，老毛病了")]),
    ],
)
def test_the_first_incident_told_as_new_then_as_a_repeat_of_itself_is_named(lang, lines):
    found = named(view(lang, lines=lines))
    assert len(found) == 1 and "within the first occurrence" in found[0]


@pytest.mark.parametrize(
    ("lang", "lines", "problem"),
    [
        (
            "en",
            [
                (at(3, 26), "My Saltbox Studios badge died, so I've spent the day following coworkers."),
                (at(12, 12), "My badge at Saltbox Studios stopped working, so I've been tailgating."),
            ],
            "told as new",
        ),
        (
            "en",
            [
                (at(2, 1), "my little roommate threw up 2 times this morning. vet or wait?"),
                (at(12, 28), "my little roommate threw up 3 times this morning. vet or wait?"),
            ],
            "told as new",
        ),
        ("zh", [(at(3, 25), "吐了两次"), (at(12, 15), "汤圆今天吐了两次，有点担心")], "told as new"),
    ],
)
def test_an_incident_in_other_words_told_as_new_twice_is_named(lang, lines, problem):
    found = named(view(lang, lines=lines))
    assert len(found) == 1 and problem in found[0]


@pytest.mark.parametrize(
    ("lang", "lines"),
    [
        (
            "en",
            [
                (at(2, 1), "my little roommate threw up 2 times this morning."),
                (at(9, 1), "It threw up again."),
            ],
        ),
        ("zh", [(at(3, 25), "汤圆今天吐了两次"), (at(9, 1), "汤圆又吐了"), (at(9, 3), "跟同事吐槽了一下午")]),
    ],
)
def test_a_later_incident_told_as_a_repeat_and_a_look_alike_pass(lang, lines):
    assert named(view(lang, lines=lines)) == []


@pytest.mark.parametrize(
    ("lang", "plain", "again"),
    [
        ("en", "Tweaked something during {value} yesterday.", "Tweaked something during {value} again."),
        ("zh", "最近{value}练得有点多，膝盖有点不舒服", "{value}练完膝盖又不舒服了，老毛病"),
    ],
)
def test_the_realizer_does_not_tell_the_first_incident_as_a_repeat_of_itself(lang, plain, again):
    life = load_catalog(lang).lifecycle
    memory, who = gen.LifeMemory(), persona(lang)
    memory.catch_up(said([(at(4, 9), plain.replace("{value}", "X"))], lang), life)
    assert not memory.allows(again, at(4, 10), who, lang, life)
    assert memory.allows(plain, at(4, 10), who, lang, life)  # followed up, as new


# --- one person's life events come in life order
@pytest.mark.parametrize(
    ("lang", "first", "second"),
    [
        ("en", ("baby shower", at(6, 25)), ("surprise engagement party", at(10, 11))),
        ("en", ("wedding anniversary", at(2, 14)), ("surprise engagement party", at(5, 2))),
        ("zh", ("宝宝满月酒", at(5, 8)), ("订婚宴", at(9, 7))),
        ("zh", ("宝宝满月酒", at(5, 8)), ("宝宝周岁宴", at(11, 4))),
    ],
)
def test_a_persons_life_events_out_of_order_are_named(lang, first, second):
    events = [
        episode(1, "social", first[1], person="Imani", occasion=first[0]),
        episode(2, "social", second[1], person="Imani", occasion=second[0]),
    ]
    found = named(view(lang, events))
    assert len(found) == 1 and "out of life order" in found[0] and "Imani" in found[0]


@pytest.mark.parametrize(
    ("lang", "events"),
    [
        ("en", [("surprise engagement party", "Imani", at(3, 1)), ("baby shower", "Imani", at(11, 20))]),
        ("en", [("baby shower", "Jae", at(3, 1)), ("surprise engagement party", "Imani", at(10, 1))]),
        ("zh", [("订婚宴", "胡一鸣", at(1, 14)), ("宝宝满月酒", "胡一鸣", at(10, 21))]),
        ("zh", [("宝宝周岁宴", "胡俊", at(1, 12)), ("宝宝满月酒", "廖思远", at(5, 8))]),
    ],
)
def test_life_events_in_order_or_of_different_people_pass(lang, events):
    built = [episode(k, "social", when, person=who, occasion=o) for k, (o, who, when) in enumerate(events, 1)]
    assert named(view(lang, built)) == []


@pytest.mark.parametrize(
    ("lang", "had", "late", "early"),
    [
        (
            "en",
            ("baby shower", at(6, 25)),
            ("baby shower", at(11, 1)),
            ("surprise engagement party", at(9, 1)),
        ),
        ("zh", ("宝宝满月酒", at(5, 8)), ("宝宝满月酒", at(5, 8)), ("宝宝周岁宴", at(11, 4))),
    ],
)
def test_the_planner_keeps_a_persons_life_events_in_order(lang, had, late, early):
    life = load_catalog(lang).lifecycle
    events = [episode(1, "social", had[1], person="Imani", occasion=had[0])]
    mine = gen.occasions_of(events, "Imani")
    assert not gen.in_life_order(life, early[0], early[1].date(), mine)
    assert gen.in_life_order(life, early[0], early[1].date(), gen.occasions_of(events, "Jae"))
    assert gen.in_life_order(life, "birthday" if lang == "en" else "生日", late[1].date(), mine)


@pytest.mark.parametrize(
    ("lines", "flagged"),
    [
        (
            [
                (
                    at(8, 23),
                    "My big sister is getting married next summer and I'm already stressed about the toast.",
                ),
                (
                    at(12, 8),
                    "My big sister is getting married next summer and I'm already stressed about the toast.",
                ),
            ],
            True,
        ),
        (
            [
                (at(3, 2), "Apparently my cousin just got engaged."),
                (at(9, 1), "my cousin just got engaged, wow"),
            ],
            True,
        ),
        (
            [
                (
                    at(8, 23),
                    "My big sister is getting married next summer and I'm already stressed about the toast.",
                ),
                (
                    at(8, 25),
                    "Since my sister is getting married next summer, should I start saving?",
                ),  # the same news
                (at(9, 1), "Apparently my cousin just got engaged."),
            ],
            False,
        ),
    ],
)
def test_a_relatives_wedding_or_engagement_news_told_as_new_twice_is_named(lines, flagged):
    found = named(view("en", lines=lines))
    assert (len(found) == 1 and "happens once" in found[0]) if flagged else found == []


def test_the_realizer_tells_a_relatives_wedding_news_once():
    life, who = load_catalog("en").lifecycle, persona("en")
    line = "My {value} is getting married next summer and I'm already stressed about the toast."
    memory = gen.LifeMemory()
    assert memory.allows(line, at(8, 23), who, "en", life)
    memory.catch_up(said([(at(8, 23), line.replace("{value}", "big sister"))], "en"), life)
    assert not memory.allows(line, at(12, 8), who, "en", life)


# --- a project is one employer's
KICKOFF = {"en": "kickoff went fine", "zh": "项目启动会开完了"}
ASIDE = {
    "en": "A $15 Netflix charge just came in, that one's mine",
    "zh": "手机刚弹了条扣款，腾讯视频VIP，¥29",
}
DUE = {"en": " is due soon and I'm behind", "zh": "快到截止日了，还有一堆没做"}


@pytest.mark.parametrize(("lang", "project"), [("en", "brand refresh"), ("zh", "小程序改版")])
def test_a_project_worked_on_at_the_next_employer_is_named(lang, project):
    old, _ = JOB[lang]
    moved = persona(lang, {"career.company": [(old, START), ("Copperleaf Energy", at(3, 25))]})
    work = episode(1, "work_project", at(3, 20), days=10, project=project)
    lines = [(at(3, 22), KICKOFF[lang]), (at(3, 26), ASIDE[lang]), (at(3, 27), f"{project}{DUE[lang]}")]
    sessions = said(lines, lang, work.id)  # the aside, not about the project, is not named
    v = PersonaView(
        moved, graph=EventGraph(persona_id="p01", events=[chapter(), work], edges=[]), sessions=sessions
    )
    found = named(v)
    assert len(found) == 1 and "Copperleaf Energy" in found[0] and project in found[0]


@pytest.mark.parametrize(("lang", "project"), [("en", "brand refresh"), ("zh", "小程序改版")])
def test_a_project_begun_at_the_new_employer_passes(lang, project):
    old, _ = JOB[lang]
    moved = persona(lang, {"career.company": [(old, START), ("Copperleaf Energy", at(3, 25))]})
    work = episode(1, "work_project", at(4, 2), days=10, project=project)
    sessions = said([(at(4, 3), KICKOFF[lang]), (at(4, 9), f"{project}{DUE[lang]}")], lang, work.id)
    v = PersonaView(
        moved, graph=EventGraph(persona_id="p01", events=[chapter(), work], edges=[]), sessions=sessions
    )
    assert named(v) == []


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_the_planner_keeps_a_work_project_off_a_job_change(lang):
    cfg = parse_config(
        f"name: t\nseed: 8\npersonas:\n  - {{language: {lang}, start: 2026-01-01, months: 12}}\n", "<test>"
    )
    traj = start_trajectory(0, cfg, resources.get(lang))
    move = episode(5, "job_change", at(3, 20, 0), days=11, change="job_change")
    traj.add_event(move.model_copy(update={"params": {"set:career.company": "Copperleaf Energy"}}))
    day = lambda m, d: date(2026, m, d)  # noqa: E731
    assert one_employer(traj, day(3, 10), day(3, 28)) == (day(3, 10), day(3, 19))
    assert one_employer(traj, day(3, 22), day(4, 10)) == (day(4, 8), day(4, 10))  # a week to settle in
    assert one_employer(traj, day(4, 1), day(4, 10)) == (day(4, 8), day(4, 10))  # the day after it, too
    assert one_employer(traj, day(3, 22), day(3, 30)) is None
    assert one_employer(traj, day(5, 1), day(5, 9)) == (day(5, 1), day(5, 9))


# --- a one-off life event is on the records once
WEDDING = {"en": "RSVP to the wedding", "zh": "大学室友的婚礼"}


def record_of(lang: str, title: str, when: datetime) -> CalendarRecord | TodoRecord:
    if lang == "en":
        return TodoRecord(title=title, due=when, priority="high", list_name="Personal")
    return CalendarRecord(
        title=title, start=when, end=when + timedelta(hours=3), location="希尔顿酒店三楼宴会厅", attendees=[]
    )


def with_records(lang: str, records: list[tuple[datetime, str]]) -> PersonaView:
    anchors = [
        Anchor(
            id=f"p01-a{k:03d}",
            persona_id="p01",
            app="todo" if lang == "en" else "calendar",
            app_name="Reminders" if lang == "en" else "日历",
            timestamp=when - timedelta(days=7),
            record=record_of(lang, title, when),
        )
        for k, (when, title) in enumerate(records, 1)
    ]
    return PersonaView(
        persona(lang), graph=EventGraph(persona_id="p01", events=[chapter()], edges=[]), anchors=anchors
    )


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_a_friends_wedding_on_the_records_on_two_dates_is_named(lang):
    found = named(with_records(lang, [(at(2, 1), WEDDING[lang]), (at(10, 7), WEDDING[lang])]))
    assert len(found) == 1 and "happens once" in found[0] and "2026-10-07" in found[0]


@pytest.mark.parametrize(
    ("lang", "records"),
    [
        (
            "en",
            [(at(2, 1), "RSVP to the wedding"), (at(2, 5), "RSVP to the wedding"), (at(6, 1), "Call Mom")],
        ),
        ("en", [(at(2, 1), "RSVP to the wedding"), (at(9, 1), "Book a table for the wedding anniversary")]),
        ("zh", [(at(2, 1), "大学室友的婚礼"), (at(9, 1), "爸妈结婚纪念日聚餐")]),
    ],
)
def test_one_wedding_entry_and_its_look_alikes_pass(lang, records):
    assert named(with_records(lang, records)) == []


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_a_persona_draws_the_wedding_entry_at_most_once(lang):
    cfg = parse_config(
        f"name: t\nseed: 3\npersonas:\n  - {{language: {lang}, start: 2026-01-01, months: 12}}\n"
        "anchors:\n  per_month: {calendar: 6, todo: 6}\n",
        "<test>",
    )
    res = resources.get(lang)
    traj = start_trajectory(0, cfg, res)
    titles = [a.record.title for a in traj.anchors if a.app in ("calendar", "todo")]
    assert titles.count(WEDDING[lang]) <= 1
    assert len(titles) > 100  # many drawn: without the rule the wedding would come up again


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_a_line_in_any_of_its_wordings_is_judged_by_the_same_rules(lang):
    """The realizer says a pattern sentence in any wording of its variant bank; the lifecycle rules and the
    holiday words must see each wording as they see the sentence (「回不回柳州过年」 is a plan asked months
    ahead, like 「过年回不回柳州」, not the holiday itself)."""
    from keme.text.variants import SLOT, load_bank

    life, cues = load_catalog(lang).lifecycle, load_cues(lang)
    place = "柳州" if lang == "zh" else "Denver"

    def judged_by(text: str) -> set[str]:
        text = SLOT.sub(place, text)
        names = {r.name for r in life.cued if r.said_in(text)}
        return names | {f"{h.holiday} words" for h in cues.holidays if cues.any(h.patterns, text)}

    differ = [
        (sentence, wording)
        for sentence, wordings in load_bank(lang).items()
        for wording in wordings
        if judged_by(sentence) != judged_by(wording)
    ]
    assert differ == []
