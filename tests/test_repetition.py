"""The repetition measure (issue 36): sentences said again by one role of one persona, names, places,
values and dates masked, light variations (a lead-in, a tail, one swapped word) caught."""

from __future__ import annotations

from datetime import datetime

import pytest
from conftest import ROOT

from keme.stats import (
    early_end,
    entity_strings,
    persona_repetition,
    repetition,
    repetition_stats,
    sentences,
)
from keme.synth.limits import load_config
from keme.synth.pipeline import synthesize_persona


# -- sentences ------------------------------------------------------------------------------------
def test_an_english_message_is_split_into_sentences_of_six_words_or_more():
    text = "Sure. I booked the table for Friday night at eight. Can you remind me the day before?"
    assert sentences(text, "en") == [
        "I booked the table for Friday night at eight.",
        "Can you remind me the day before?",
    ]


def test_a_chinese_message_is_split_into_clauses_of_six_characters_or_more():
    text = "好的，周五晚上八点的位子订好了。到时候提前一天提醒我一下吧 谢谢"
    assert sentences(text, "zh") == ["周五晚上八点的位子订好了", "到时候提前一天提醒我一下吧"]


# -- said again -----------------------------------------------------------------------------------
def test_english_sentences_that_differ_only_in_names_numbers_and_dates_are_one_sentence():
    texts = [
        "Paid $12 at Blue Bottle on May 3 before work.",
        "Paid $30 at Verve on June 9 before work.",
        "I want to cook something new this weekend.",
    ]
    found = repetition(texts, "en", {"Blue Bottle", "Verve"})
    assert (found.sentences, found.again, found.again_strict) == (3, 1, 1)
    assert found.most == ("Paid $# at <E> on # # before work.", 2)


def test_chinese_clauses_that_differ_only_in_names_numbers_and_weekdays_are_one_clause():
    texts = ["3月14日（周五）跟罗慧约了吃火锅", "4月2日（周三）跟吕静约了吃火锅", "这个月的预算好像有点超了"]
    found = repetition(texts, "zh", {"罗慧", "吕静"})
    assert (found.sentences, found.again) == (3, 1)
    assert found.most == ("##（#）跟<E>约了吃火锅", 2)


def test_a_name_is_masked_whole_never_inside_a_longer_word():
    found = repetition(["Quick follow-up on the plan for the weekend trip."] * 2, "en", {"low"})
    assert found.most == ("Quick follow-up on the plan for the weekend trip.", 2)


def test_the_first_time_a_sentence_is_said_is_not_said_again_and_three_times_count_apart():
    line = "Not sure I'm explaining it well."
    texts = [
        line,
        "What should I pack for a rainy weekend?",
        line,
        line,
        "Can you log my run from this morning?",
    ]
    found = repetition(texts, "en", set())
    assert (found.sentences, found.again, found.distinct, found.thrice) == (5, 2, 3, 1)
    assert found.again_share == pytest.approx(0.4) and found.thrice_share == pytest.approx(1 / 3)
    assert found.most == (line, 3)


@pytest.mark.parametrize(
    ("lang", "first", "again"),
    [
        (
            "en",
            "How does this fit around my running schedule?",
            "wait, how does this fit around my running plan?",
        ),
        (
            "en",
            "I've been lying around for days and I feel awful",
            "I've been lying around for days and I feel awful — or is that silly?",
        ),
        ("zh", "有没有更好的办法呢", "有没有更好的办法"),
    ],
)
def test_a_short_lead_in_or_tail_does_not_hide_a_sentence_said_again(lang, first, again):
    found = repetition([first, again], lang, set())
    assert (found.again, found.again_strict) == (1, 0)


@pytest.mark.parametrize(
    ("lang", "first", "again"),
    [
        ("en", "That's the mark of a really good plan.", "That's the sign of a really good plan."),
        ("zh", "不知道我有没有说清楚", "不知道我有没有讲清楚"),
    ],
)
def test_one_swapped_word_does_not_hide_a_sentence_said_again(lang, first, again):
    found = repetition([first, again], lang, set())
    assert (found.again, found.again_strict) == (1, 0)


@pytest.mark.parametrize(
    ("lang", "first", "other"),
    [
        (
            "en",
            "Can you move the dentist to next week?",
            "Should I cancel the gym membership before it renews?",
        ),
        ("zh", "帮我把牙医改到下周吧", "健身卡快到期了要不要续"),
    ],
)
def test_different_sentences_are_not_said_again(lang, first, other):
    assert repetition([first, other], lang, set()).again == 0


def test_three_months_end_on_the_same_day_three_months_later():
    assert early_end(datetime(2026, 1, 1)) == datetime(2026, 4, 1)
    assert early_end(datetime(2026, 11, 30, 9)) == datetime(2027, 2, 28, 9)


# -- over a persona -------------------------------------------------------------------------------
@pytest.fixture(scope="module")
def demo():
    cfg = load_config(ROOT / "configs/demo.yaml")
    return [synthesize_persona(i, cfg).view() for i in range(len(cfg.personas))]


def test_a_dataset_reports_each_language_role_and_span(demo):
    found = repetition_stats(demo)
    assert set(found) == {
        f"repetition.{lang}.{role}.{span}"
        for lang in ("en", "zh")
        for role in ("user", "assistant")
        for span in ("span", "3_months")
    }
    assert all(0 <= row["said_again"] <= 1 and row["sentences"] > 0 for row in found.values())


@pytest.mark.parametrize("index", [0, 1])
def test_a_role_is_measured_on_its_own_messages_only(demo, index):
    view = demo[index]
    spoken = [m.content for s in view.sessions if not s.filler for m in s.messages if m.role == "user"]
    assert persona_repetition(view, "user") == repetition(spoken, view.persona.language, entity_strings(view))


def test_a_name_or_a_date_alone_is_no_sentence():
    dates = ["3月14日（周五）", "3月21日（周五）", "罗慧的小米"]
    assert repetition(dates, "zh", {"罗慧", "小米"}).sentences == 0
    record = "Ana Li, Blue Bottle Coffee, May 3 at 10:30 (Friday)"
    assert repetition([record] * 2, "en", {"Ana Li", "Blue Bottle Coffee"}).sentences == 0
