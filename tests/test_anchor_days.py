"""App records fit their day (keme.prior.anchors): a voice memo about the job is recorded on a workday, and a
work meeting on the calendar falls on a workday (a standup on a Saturday, a 部门周会 on a Sunday were
generated before)."""

from __future__ import annotations

import random
import re
from collections import Counter
from types import SimpleNamespace

import pytest

from keme.days import holiday_name, is_workday
from keme.models.anchor import BillRecord, CalendarRecord, VoiceMemoRecord
from keme.prior.anchors import _draw, build_anchors
from keme.prior.persona import build_persona
from keme.synth.limits import parse_config
from keme.text import resources

# the items about the job, named here apart from their `work` flag in anchors.yaml
WORK_MEMOS = {
    "en": ["Project idea", "Meeting takeaways"],
    "zh": ["周会要点", "工作周报", "客户电话要点", "面试复盘"],
}
WORK_EVENTS = {
    "en": ["1:1 with my manager", "Quarterly business review", "Sprint planning"],
    "zh": ["部门周会", "季度述职", "新人入职培训", "客户拜访", "公司组织的年度体检", ".+评审会"],
}


def _anchors(lang: str, seed: int, per_month: str = "{voice_memo: 6, calendar: 6}"):
    cfg = parse_config(
        f"name: t\nseed: {seed}\npersonas:\n  - {{language: {lang}, start: 2026-01-01, months: 12}}\n"
        f"anchors:\n  per_month: {per_month}\n"
    )
    res = resources.get(lang)
    persona = build_persona(cfg.personas[0], 0, seed, res)
    return persona, build_anchors(persona, cfg, res)


@pytest.mark.parametrize("lang", ["en", "zh"])
@pytest.mark.parametrize("seed", [4, 5])
def test_records_about_the_job_fall_on_workdays(lang, seed):
    persona, anchors = _anchors(lang, seed)
    memos = re.compile("|".join(f"(?:{t})" for t in WORK_MEMOS[lang]))
    events = re.compile("|".join(f"(?:{t})" for t in WORK_EVENTS[lang]))
    seen = {"memo": 0, "event": 0, "weekend memo": 0}
    for anchor in anchors:
        record = anchor.record
        if isinstance(record, VoiceMemoRecord):
            if memos.fullmatch(record.title):
                seen["memo"] += 1
                assert is_workday(anchor.timestamp.date(), persona.country), (anchor.timestamp, record.title)
            elif not is_workday(anchor.timestamp.date(), persona.country):
                seen["weekend memo"] += 1
        if isinstance(record, CalendarRecord) and events.fullmatch(record.title):
            seen["event"] += 1
            assert is_workday(record.start.date(), persona.country), (record.start, record.title)
    assert all(seen.values()), seen  # the year holds work records, and memos are still recorded on weekends


# payments to an account, named here apart from their `off_holidays` flag in anchors.yaml
ACCOUNT_BILLS = {"en": "Bills & Utilities", "zh": "住房物业"}


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_rent_and_utilities_are_not_paid_on_a_public_holiday(lang):
    persona, anchors = _anchors(lang, 4, "{bill: 10}")  # seed 4 paid rent on a holiday before, in both
    bills = [a for a in anchors if isinstance(a.record, BillRecord)]
    account = [a for a in bills if a.record.category == ACCOUNT_BILLS[lang]]
    assert account, "the year holds rent or utility payments"
    assert all(holiday_name(a.timestamp.date(), persona.country) is None for a in account)
    assert any(holiday_name(a.timestamp.date(), persona.country) for a in bills)  # shopping on a holiday


def test_a_list_of_records_goes_round_before_one_is_drawn_again():
    """Screenshots, notes and memos: 18 draws from 6 items give each exactly 3 (a bank statement seven
    times in a year was one sentence said seven times)."""
    items = [SimpleNamespace(title=f"screen {n}") for n in range(6)]
    drawn: Counter[str] = Counter()
    picks = Counter(_draw(random.Random(n), items, drawn).title for n in range(18))
    assert set(picks.values()) == {3}


def test_a_one_off_record_is_drawn_once():
    items = [
        SimpleNamespace(title="Priya's wedding", once=True),
        SimpleNamespace(title="dentist", once=False),
    ]
    drawn: Counter[str] = Counter()
    picks = [_draw(random.Random(n), items, drawn).title for n in range(5)]
    assert picks.count("Priya's wedding") == 1
