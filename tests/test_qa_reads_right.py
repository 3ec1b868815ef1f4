"""Questions read as a reviewer reads them: what each asks is what the chats say, in both languages.

Each test states a mistake a hand review of a year's questions found, and checks that no question of an
English and a Chinese persona-year makes it.
"""

from __future__ import annotations

import re
from collections import Counter

import pytest
from conftest import ROOT

from keme.cli import synthesize_dataset
from keme.dataset import Dataset
from keme.days import block_of
from keme.synth.limits import load_config
from keme.text import resources
from keme.text.dates import dates_in

ZH_YEAR = "name: year-zh\nseed: 11\npersonas:\n  - language: zh\n    start: 2026-01-01\n    months: 12\n"


@pytest.fixture(scope="module", params=["en", "zh"])
def year(request, tmp_path_factory) -> Dataset:
    work = tmp_path_factory.mktemp(f"year-{request.param}")
    config = ROOT / "configs/year.yaml"
    if request.param == "zh":
        config = work / "zh.yaml"
        config.write_text(ZH_YEAR, encoding="utf-8")
    synthesize_dataset(load_config(config), work / "data")
    return Dataset.load(work / "data")


def _messages(data: Dataset) -> dict:
    return {m.id: m for s in data.sessions for m in s.messages}


def test_a_purchase_is_dated_by_when_it_was_talked_about_not_said_to_be_bought_then(year):
    """Comparing the Dyson on Feb 19 and buying it on Feb 20 made "when did I first buy it?" answer
    Feb 19: a purchase's date question asks when it was first talked about, which the first day is."""
    messages = _messages(year)
    asked = [q for q in year.qa if q.subtype.startswith("tmp.date_of")]
    buying = [(q, re.search(r"about buying the (.+?)\?|聊起买(.+?)的事", q.question)) for q in asked]
    assert asked
    for item, found in buying:
        assert not re.search(r"\bbuy the\b|第一次买", item.question), item.question
        if not found:
            continue
        product = found.group(1) or found.group(2)
        first = min(m.timestamp.date() for m in messages.values() if product in m.content)
        gold = item.spec.value
        if item.format == "single_choice":  # the gold option's day
            option = item.options["ABCDEFGH".index(gold or "A")]
            gold = dates_in(option, first.year)[0].isoformat()
        assert gold == first.isoformat(), item.id


def test_what_i_wanted_is_never_answered_by_what_the_assistant_suggested(year):
    """ "Which local food did I want to try?" cited the assistant's suggestion; only "which show did we
    talk about" may rest on the assistant's words."""
    messages = _messages(year)
    for item in year.qa:
        if item.type == "single_hop" and item.proof.op == "value" and item.subtype != "entertainment.title":
            assert messages[item.proof.quotes[0].message_id].role != "assistant", item.id


def test_a_show_asked_about_by_day_is_the_only_title_named_that_day(year):
    res = resources.get(year.personas[0].language)
    favourites = res.persona.attributes["entertainment.favorite_show"].values
    titles = {t.title for t in res.pools.titles} | set(favourites)
    messages = _messages(year).values()
    for item in (q for q in year.qa if q.subtype == "entertainment.title"):
        day = next(m for m in messages if m.id == item.evidence[0]).timestamp.date()
        named = {t for m in messages if m.timestamp.date() == day for t in titles if t in m.content}
        assert named == {item.spec.option_value or item.spec.value}, (item.id, named)


def test_a_usual_time_of_day_leads_clearly_among_the_chats_the_user_opened(year):
    """Nine evening chats against eight morning ones, one of the nine a payment notification nobody
    answered, were "usually in the evening"."""
    for item in (q for q in year.qa if q.proof.op == "time_of_day"):
        args = item.proof.args
        counts = Counter(
            block_of(opened)
            for s in year.sessions
            if (opened := next((m.timestamp for m in s.messages if m.role == "user"), None))
            and args.start <= opened.date() <= args.end
        )
        (top, first), (_, second) = (counts.most_common(2) + [(None, 0)] * 2)[:2]
        assert top in (item.spec.value, item.spec.option_value), item.id
        assert first >= second + 2 and first >= 1.4 * second, (item.id, counts)


def test_one_day_is_said_in_the_singular(year):
    assert not [q.answer for q in year.qa if re.search(r"\b1 (days|times)\b", q.answer)]


def test_the_best_friend_is_named_best_friend_by_the_user(year):
    """「好朋友的邀约」 from the assistant stated 我最好的朋友 nowhere."""
    messages = _messages(year)
    for item in (q for q in year.qa if q.proof.op == "relation" and q.proof.args.label):
        name, label = item.proof.args.name, item.proof.args.label
        core = label.removeprefix("我的").removeprefix("我").removeprefix("my ").lower()
        assert any(
            m.role == "user" and name in m.content and core in m.content.lower()
            for m in (messages[q.message_id] for q in item.proof.quotes)
        ), item.id
