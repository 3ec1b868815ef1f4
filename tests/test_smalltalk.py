"""Small talk that happens once (issue 36): a persona says each small-talk sentence at most once in its
span, spread over it, and says nothing rather than repeat; no part hedges a line that states a fact."""

from __future__ import annotations

import random
import re
from collections import Counter

import pytest
from conftest import ROOT

from keme.synth import variety
from keme.synth.limits import load_config
from keme.synth.pipeline import synthesize_persona
from keme.synth.speech import act_of, ends_asking
from keme.synth.state import Trajectory
from keme.synth.variety import THREAD, Line, SmallTalk, Style, Talk, _tells_news, exchange_lines
from keme.text import resources
from keme.text.resources import Exchange
from keme.text.template import Context, compile_template

LANGS = ("en", "zh")


def _talk(lang: str, small: SmallTalk, seed: int, register: str = "casual") -> Talk:
    return Talk(
        resources.get(lang).parts, Style(THREAD, register), random.Random(seed), Counter(), lang, small=small
    )


def _hedges(lang: str) -> set[str]:
    return {
        p.template.source
        for kind in resources.PART_KINDS
        for p in resources.get(lang).parts.by_kind[kind]
        if p.hedge
    }


# -- once a span ----------------------------------------------------------------------------------
@pytest.mark.parametrize("lang", LANGS)
def test_a_small_talk_sentence_is_said_once_and_then_nothing_rather_than_again(lang):
    small = SmallTalk()
    said: list[str] = []
    for seed in range(200):
        small.begin()
        line = _talk(lang, small, seed).standalone("closers")
        if line is not None:
            said.append(line.text)
        small.keep()
    assert said and len(said) == len(set(said))
    pool = len(resources.get(lang).parts.by_kind["closers"])
    assert len(said) <= 2 * pool  # a closer may hold two parts
    assert _talk(lang, small, 999).standalone("closers") is None  # said out: nothing


@pytest.mark.parametrize("lang", LANGS)
def test_a_line_goes_bare_when_its_small_talk_is_said_out(lang):
    small = SmallTalk()
    for seed in range(300):
        small.begin()
        talk = _talk(lang, small, seed)
        for kind in ("acks", "offers"):
            talk.standalone(kind)
        small.keep()
    core = "Sounds good, let's keep the plan." if lang == "en" else "听起来不错，就按这个计划来。"
    text, _, sources, parts = _talk(lang, small, 7).dress(core, "assistant", force=True)
    assert (text, sources, parts) == (core, (), ())


@pytest.mark.parametrize("lang", LANGS)
def test_small_talk_is_spread_over_the_span_not_spent_at_its_start(lang):
    small = SmallTalk()
    small.at(0.0)
    said = 0
    for seed in range(100):
        small.begin()
        said += _talk(lang, small, seed).standalone("closers") is not None
        small.keep()
    assert said <= SmallTalk.HEAD
    small.at(0.5)
    small.begin()
    assert _talk(lang, small, 101).standalone("closers") is not None


@pytest.mark.parametrize("lang", LANGS)
def test_a_session_drawn_again_does_not_spend_the_small_talk_of_the_draw_it_replaces(lang):
    small = SmallTalk()
    small.begin()
    first = _talk(lang, small, 3).standalone("closers")
    small.begin()  # the session is drawn again: its first draw was never said
    again = _talk(lang, small, 3).standalone("closers")
    assert first is not None and again is not None and first.text == again.text


@pytest.mark.parametrize("lang", LANGS)
def test_the_small_talk_said_is_carried_by_the_checkpoint(lang):
    cfg = load_config(ROOT / "configs/demo.yaml")
    index = [p.language for p in cfg.personas].index(lang)
    traj = synthesize_persona(index, cfg)
    checkpoint = traj.checkpoint()
    assert checkpoint.smalltalk and checkpoint.smalltalk == traj.smalltalk.state()
    assert Trajectory.from_checkpoint(checkpoint).smalltalk.state() == checkpoint.smalltalk


# -- no hedge next to a fact ----------------------------------------------------------------------
FACTS = {
    "en": ("I train {days} days a week now.", "Noted: {days} days a week."),
    "zh": ("我现在一周练{days}天", "记下了：一周{days}天。"),
}


@pytest.mark.parametrize("lang", LANGS)
def test_a_line_that_states_a_value_is_never_dressed_in_a_hedge(lang):
    u, a = FACTS[lang]
    options = (Exchange(compile_template(u), compile_template(a)),)
    hedges = {h.lower() for h in _hedges(lang)}
    assert hedges
    for seed in range(150):
        ctx = Context(lang=lang, rng=random.Random(seed), persona={}, slots={"days": "6"})
        talk = _talk(lang, SmallTalk(), seed)
        usage_said = Counter({line: 1 for line in (u.replace("{days}", "#"), a.replace("{days}", "#"))})
        talk.usage = usage_said  # said before: small talk is forced around it
        lines = exchange_lines(talk, options, ctx)
        assert lines is not None
        for line in lines:
            sources = {s.lower() for s in line.parts}
            assert not sources & hedges, line.text


@pytest.mark.parametrize("lang", LANGS)
def test_a_line_that_states_no_fact_may_take_a_hedge(lang):
    hedged = False
    for seed in range(300):
        talk = _talk(lang, SmallTalk(), seed)
        line = talk.standalone("followups", "statement")
        hedged |= line is not None and bool(set(line.parts) & _hedges(lang))
    assert hedged


@pytest.mark.parametrize("lang", LANGS)
def test_a_follow_up_sent_after_a_fact_is_no_hedge(lang):
    for seed in range(300):
        line = _talk(lang, SmallTalk(), seed).standalone("followups", "statement", fact=True)
        assert line is not None and not set(line.parts) & _hedges(lang), line.text


# -- over a persona-year --------------------------------------------------------------------------
@pytest.fixture(scope="module", params=LANGS)
def year(request) -> tuple[Trajectory, list[Line]]:
    """A persona-year and every line its sessions accepted (with the parts around it)."""
    cfg = load_config(ROOT / "configs/year.yaml")
    persona = cfg.personas[0].model_copy(update={"language": request.param})
    accepted: list[Line] = []
    accept = Talk.accept

    def record(self, *lines):
        accepted.extend(lines)
        return accept(self, *lines)

    Talk.accept = record
    try:
        traj = synthesize_persona(0, cfg.model_copy(update={"personas": [persona]}))
    finally:
        Talk.accept = accept
    return traj, accepted


def test_no_small_talk_message_is_said_twice_in_a_persona_year(year):
    traj, _ = year
    said = Counter(m.content for s in traj.sessions for m in s.messages if m.smalltalk)
    assert said and max(said.values()) == 1


def test_no_small_talk_part_is_said_twice_in_a_persona_year(year):
    traj, lines = year
    lang = traj.persona.language
    said = Counter(traj.smalltalk.keys(text, lang)[0] for line in lines for text, _ in line.small)
    assert said and max(said.values()) == 1, said.most_common(3)


def test_no_line_that_states_a_fact_is_dressed_in_a_hedge_in_a_persona_year(year):
    traj, lines = year
    hedges = _hedges(traj.persona.language)
    stated = [line for line in lines if line.reports or line.says or line.links]
    assert stated
    assert [line.text for line in stated if set(line.parts) & hedges] == []


# -- by the speech act it follows -----------------------------------------------------------------
THANKED = [("en", "Thanks, that really helps."), ("zh", "谢谢，帮我理清楚了")]


@pytest.mark.parametrize(("lang", "line"), THANKED)
def test_a_thanks_is_answered_only_by_small_talk_made_for_it(lang, line):
    parts = resources.get(lang).parts
    made_for_it = {p.template.source for p in parts.by_kind["acks"] if p.after == "thanks"}
    assert made_for_it
    for seed in range(80):
        part = _talk(lang, SmallTalk(), seed).pick("acks", variety.reply_to(line, lang))
        assert part is not None and part.template.source in made_for_it


UNMARKED_QUESTIONS = ["每天的学习时长定多少合适", "周末去哪玩比较好", "是不是该换个手机了"]


@pytest.mark.parametrize("line", UNMARKED_QUESTIONS)
def test_a_chinese_question_typed_without_its_mark_is_answered_as_a_question(line):
    """ "有道理，" before the answer to "每天的学习时长定多少合适" read the question as a statement."""
    made_for_statements = {
        p.template.source for p in resources.get("zh").parts.by_kind["acks"] if p.after == "statement"
    }
    assert variety.reply_to(line, "zh") == "question"
    for seed in range(40):
        part = _talk("zh", SmallTalk(), seed).pick("acks", variety.reply_to(line, "zh"))
        assert part is None or part.template.source not in made_for_statements


RECEIPTS = {
    "en": {"Sure.", "Okay.", "Got it.", "Understood.", "Yep.", "{Ah|Oh}, {okay|got it}."},
    "zh": {"明白。", "好的。", "{嗯|哦}，{明白了|懂了}。", "懂，"},
}
ASKED = [
    ("en", "Is it good?"),
    ("en", "is a power bank necessary or overkill"),
    ("zh", "练完要拉伸吗"),
    ("zh", "会不会撞"),
]


@pytest.mark.parametrize(("lang", "line"), ASKED)
def test_an_answer_to_a_question_opens_with_no_receipt_and_no_statement_ack(lang, line):
    """ "Is it good?" was answered "Ah, okay." and "练完要拉伸吗" "哦，明白了。" (17 replies in a read)."""
    acks = resources.get(lang).parts.by_kind["acks"]
    for_statements = {p.template.source for p in acks if p.after == "statement"}
    for seed in range(60):
        talk = _talk(lang, SmallTalk(), seed)
        part = talk.pick("acks", variety.reply_to(line, lang), act=act_of(line, lang))
        if part is not None:
            assert part.template.source not in RECEIPTS[lang] | for_statements, part.template.source


@pytest.mark.parametrize(("lang", "line"), ASKED)
def test_a_reply_to_one_question_is_never_taken_piece_by_piece(lang, line):
    pieces = {"Let's break it down.", "Okay, one piece at a time.", "一件一件来。", "咱们拆开来看。"}
    for seed in range(60):
        part = _talk(lang, SmallTalk(), seed).pick(
            "acks", variety.reply_to(line, lang), act=act_of(line, lang)
        )
        assert part is None or part.template.source not in pieces


@pytest.mark.parametrize("line", ["我也不知道吃什么好。", "这个怎么弄，我也不懂", "我今天去了趟超市"])
def test_a_chinese_line_that_ends_telling_is_a_statement(line):
    assert variety.reply_to(line, "zh") == "statement"


@pytest.mark.parametrize(("lang", "line"), [("en", "Can you move my dentist?"), ("zh", "帮我把牙医改到下周")])
def test_a_part_made_for_a_thanks_never_answers_anything_else(lang, line):
    acks = resources.get(lang).parts.by_kind["acks"]
    made_for_it = {p.template.source for p in acks if p.after == "thanks"}
    for seed in range(80):
        part = _talk(lang, SmallTalk(), seed).pick("acks", variety.reply_to(line, lang))
        assert part is not None and part.template.source not in made_for_it


@pytest.mark.parametrize(("lang", "line"), THANKED)
def test_no_follow_up_trails_a_thanks(lang, line):
    for seed in range(40):
        _, _, sources, _ = _talk(lang, SmallTalk(), seed).dress(line, "user", force=True)
        followups = {p.template.source for p in resources.get(lang).parts.by_kind["followups"]}
        assert not set(sources) & followups


ASKING = {"en": re.compile(r"\bq\b|question|\bask\b", re.IGNORECASE), "zh": re.compile("问")}


@pytest.mark.parametrize("lang", LANGS)
def test_an_opener_that_announces_a_question_leads_only_a_question(lang):
    for register in ("casual", "polite"):
        for seed in range(60):
            part = _talk(lang, SmallTalk(), seed, register).pick("openers", leads="statement")
            assert part is not None and not ASKING[lang].search(part.template.source), part.template.source


@pytest.mark.parametrize(
    ("lang", "part", "news"),
    [
        ("zh", "跟你说个事", True),
        ("zh", "哎，", False),
        ("en", "Fun fact:", True),
        ("en", "Quick one:", False),
    ],
)
def test_a_part_that_announces_news_is_known_so_a_fact_line_goes_without_it(lang, part, news):
    """「跟你说个事 在万象新零售干了这么久」 told the persona's employer as news once more (year-zh
    seed 1): a part that announces news is not put beside a line that states a persona fact."""

    assert _tells_news(part, lang) is news


def test_a_segue_that_opens_a_fact_as_news_is_not_put_beside_a_fact():
    """ "对了，" is no news alone, but "对了，我从小就对桃子过敏" tells the allergy as news a second time."""

    assert _tells_news("对了，", "zh")
    assert not _tells_news("嗯，", "zh")
    assert _tells_news("Oh, and", "en")
    assert not _tells_news("Anyway,", "en")


@pytest.mark.parametrize("lang", LANGS)
def test_a_follow_up_sent_after_the_reply_was_begun_never_asks(lang):
    """ "…Thoughts?" sent on its own once the reply's opening was chosen was answered "Got it — easy." """
    for seed in range(60):
        line = _talk(lang, SmallTalk(), seed).standalone("followups", "statement", asking=False)
        assert line is None or not ends_asking(line.text, lang), line.text


@pytest.mark.parametrize(
    "line", ["so when do I actually work", "Got the tickets, can you add it to my calendar", "is it worth it"]
)
def test_an_english_question_without_its_mark_is_read_as_one(line):
    assert variety.reply_to(line, "en") in ("question", "request")


@pytest.mark.parametrize(
    "line", ["The meeting is at 3, which is fine", "I know what you mean", "Whatever works"]
)
def test_an_english_line_that_tells_is_a_statement(line):
    assert variety.reply_to(line, "en") == "statement"
