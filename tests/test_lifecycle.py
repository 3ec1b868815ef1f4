"""Event lifecycles (keme.world.lifecycle, catalog `lifecycle`): the checker rule names each class of defect
the issue lists, put back into a small world, in English and Chinese; a labelled set of look-alikes passes
with no finding; and the generator's side (keme.synth.lifecycle) chooses what the rules allow."""

from __future__ import annotations

import random
from datetime import datetime, timedelta

import pytest

from keme.dataset.views import PersonaView
from keme.models import Attribute, AttributeVersion, Event, EventGraph, Message, Persona, Session
from keme.synth import lifecycle as gen
from keme.synth.limits import parse_config
from keme.synth.pipeline import start_trajectory
from keme.synth.planner import PlanContext, expand_chapter
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
    assert gen.gated_pools(pools, life, lambda v: memory.allows(v, when, who, lang, life))["sales"] == kept


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
