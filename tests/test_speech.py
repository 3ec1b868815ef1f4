"""Small talk is chosen by the speech act it follows (issue 36): a complaint is met by a sympathetic word,
good news by a cheer, never the other way round, and a greeting that names a part of day is said only
in it."""

from __future__ import annotations

import random
import re
from collections import Counter
from dataclasses import replace
from datetime import datetime

import pytest

from keme.synth.speech import ACTS, COMPLAINT, GOOD_NEWS, act_of, fits_act, part_problems
from keme.synth.variety import THREAD, SmallTalk, Style, Talk, exchange_lines
from keme.text import lang as fmt
from keme.text import resources
from keme.text.resources import Exchange, Parts
from keme.text.template import Context, compile_template

LANGS = ("en", "zh")


def _talk(lang: str, seed: int, register: str = "casual", part_of_day: str | None = None) -> Talk:
    parts = resources.get(lang).parts
    style = Style(THREAD, register)
    return Talk(
        parts, style, random.Random(seed), Counter(), lang, part_of_day=part_of_day, small=SmallTalk()
    )


def _declared(lang: str, kind: str, act: str) -> set[str]:
    return {p.template.source for p in resources.get(lang).parts.by_kind[kind] if act in p.acts}


# -- the classifier -------------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("lang", "line", "act"),
    [
        ("en", "pretty sure I got ripped off at a taxi stand. paid like $40", "complaint"),
        ("en", "Big news from work: the launch is finally live.", "good_news"),
        ("en", "Thanks, that helps.", "thanks"),
        ("en", "Can you move my dentist to Friday?", "request"),
        ("en", "Is oat milk fine in a latte?", "question"),
        ("en", "I'm going to try the new route tomorrow.", "plan"),
        ("en", "The couch is grey.", "statement"),
        ("en", "Can you store this where it won't get lost?", "request"),  # won't: no win
        ("zh", "在出租车上被坑了，多花了五十", "complaint"),
        ("zh", "跟你说个好消息，项目终于上线了", "good_news"),
        ("zh", "谢谢，帮我理清楚了", "thanks"),
        ("zh", "帮我记一下，周五交报告", "request"),
        ("zh", "燕麦奶做拿铁行吗", "question"),
        ("zh", "打算周末去爬山", "plan"),
        ("zh", "沙发是灰色的", "statement"),
    ],
)
def test_a_line_s_speech_act_is_read_off_its_words(lang, line, act):
    assert act_of(line, lang) == act


def test_an_undeclared_part_fits_only_the_plain_acts():
    assert fits_act(frozenset(), "statement") and fits_act(frozenset(), "plan")
    assert not fits_act(frozenset(), COMPLAINT) and not fits_act(frozenset(), GOOD_NEWS)
    assert fits_act(frozenset({COMPLAINT}), COMPLAINT) and not fits_act(frozenset({COMPLAINT}), GOOD_NEWS)


# -- the banks ------------------------------------------------------------------------------------
@pytest.mark.parametrize("lang", LANGS)
def test_every_part_declares_acts_that_exist_and_no_reply_both_consoles_and_cheers(lang):
    parts = resources.get(lang).parts
    assert {a for items in parts.by_kind.values() for p in items for a in p.acts} <= set(ACTS)
    assert part_problems(parts) == []


@pytest.mark.parametrize("lang", LANGS)
def test_a_reply_that_consoles_declared_for_good_news_is_named(lang):
    parts = resources.get(lang).parts
    console = next(p for p in parts.by_kind["acks"] if p.acts == {COMPLAINT})
    acks = tuple(replace(p, acts=p.acts | {GOOD_NEWS}) if p is console else p for p in parts.by_kind["acks"])
    broken = Parts({**parts.by_kind, "acks": acks}, parts.index)
    assert part_problems(broken) == [f"acks: {console.template.source!r} fits both a complaint and good news"]


@pytest.mark.parametrize("lang", LANGS)
def test_each_language_has_replies_for_a_complaint_and_for_good_news(lang):
    for act in (COMPLAINT, GOOD_NEWS):
        for register in ("casual", "polite"):
            assert any(
                act in p.acts and p.register in (None, register)
                for p in resources.get(lang).parts.by_kind["acks"]
            )


# -- the draw -------------------------------------------------------------------------------------
@pytest.mark.parametrize("lang", LANGS)
@pytest.mark.parametrize("act", [COMPLAINT, GOOD_NEWS])
def test_a_reply_to_a_complaint_or_good_news_is_one_declared_for_it(lang, act):
    declared = _declared(lang, "acks", act)
    for register in ("casual", "polite"):
        for seed in range(60):
            part = _talk(lang, seed, register).pick("acks", "statement", act=act)
            assert part is not None and part.template.source in declared, part and part.template.source


EXCHANGE = {
    "en": ("pretty sure I got ripped off at a taxi stand. paid like {money}", "Happens to everyone once."),
    "zh": ("在出租车上被坑了，多花了{money}", "出门在外谁都遇到过。"),
}


@pytest.mark.parametrize("lang", LANGS)
def test_the_reply_to_a_rip_off_never_opens_with_a_cheer_or_a_plain_ack(lang):
    u, a = EXCHANGE[lang]
    options = (Exchange(compile_template(u), compile_template(a)),)
    consoles = _declared(lang, "acks", COMPLAINT)
    acks = {p.template.source for p in resources.get(lang).parts.by_kind["acks"]}
    seen = 0
    for seed in range(80):
        ctx = Context(lang=lang, rng=random.Random(seed), persona={}, slots={"money": "$40"})
        talk = _talk(lang, seed)
        talk.usage = Counter({a: 1})  # said before: small talk is forced around the reply
        lines = exchange_lines(talk, options, ctx)
        assert lines is not None and lines[0].act == COMPLAINT
        lead = set(lines[1].parts) & acks
        assert lead <= consoles, lines[1].text
        seen += bool(lead)
    assert seen  # the reply does take a sympathetic word


@pytest.mark.parametrize("lang", LANGS)
def test_a_follow_up_after_good_news_never_grumbles(lang):
    grumbles = _declared(lang, "followups", COMPLAINT) - _declared(lang, "followups", GOOD_NEWS)
    line = {"en": "Big news: the launch is finally live!!", "zh": "好消息！项目终于上线了"}[lang]
    for seed in range(60):
        _, _, sources, _ = _talk(lang, seed).dress(line, "user", force=True)
        assert not set(sources) & grumbles


# -- a part of day --------------------------------------------------------------------------------
PARTS_OF_DAY = {
    "en": re.compile(r"morning|afternoon|evening|night", re.IGNORECASE),
    "zh": re.compile("早上|上午|中午|下午|晚上|夜里|凌晨"),
}


@pytest.mark.parametrize("lang", LANGS)
def test_an_opener_with_a_part_of_day_is_drawn_only_in_it(lang):
    said_evening = False
    evening = fmt.part_of_day(datetime(2026, 3, 2, 19, 30), lang)  # "evening", "晚上"
    for register in ("casual", "polite"):
        for seed in range(80):
            bare = _talk(lang, seed, register).part("openers", act="statement")
            assert bare is None or not PARTS_OF_DAY[lang].search(bare[0]), bare
            timed = _talk(lang, seed, register, part_of_day=evening).part("openers", act="statement")
            if timed is not None and PARTS_OF_DAY[lang].search(timed[0]):
                assert PARTS_OF_DAY[lang].findall(timed[0]) == [evening], timed
                said_evening = True
    assert said_evening


DECLARED = {
    "en": ("Should I be worried about my spending this week?", "question"),
    "zh": ("本来担心礼物太普通，结果她挺喜欢的", "good_news"),
}


@pytest.mark.parametrize("lang", LANGS)
def test_an_exchange_s_declared_act_outranks_the_words(lang):
    """ "worried" reads as a complaint and 担心 too; the exchange says what the line is."""
    u, act = DECLARED[lang]
    assert act_of(u, lang) == COMPLAINT
    options = (Exchange(compile_template(u), compile_template("…"), speech=act),)
    ctx = Context(lang=lang, rng=random.Random(3), persona={}, slots={})
    lines = exchange_lines(_talk(lang, 3), options, ctx)
    assert lines is not None and lines[0].act == act and lines[1].act != act


@pytest.mark.parametrize("lang", LANGS)
def test_every_declared_act_in_the_banks_is_an_act(lang):
    res = resources.get(lang)
    declared = [
        ex.speech
        for p in res.patterns.values()
        for b in p.beats
        if not isinstance(b, str)
        for ex in b.options
        if ex.speech
    ]
    assert declared and set(declared) <= set(ACTS)


@pytest.mark.parametrize("lang", LANGS)
def test_a_follow_up_sent_on_its_own_after_good_news_never_grumbles(lang):
    """A follow-up message by itself ("🎉", "ugh.") trails the user's last line and fits its act."""
    grumbles = _declared(lang, "followups", COMPLAINT) - _declared(lang, "followups", GOOD_NEWS)
    for seed in range(80):
        talk = _talk(lang, seed)
        talk.heard_act = GOOD_NEWS
        line = talk.standalone("followups", "statement")
        assert line is None or not set(line.parts) & grumbles, line.text
