"""A persona has habits the world repeats (keme.models.Habits), so a habit question has one to find: most
of her payments use one method, most of a category's go to her regular place there, and most of the chats
she opens herself fall in one block of the day, the one her sleep habit implies where it implies one."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections import Counter

import pytest
from conftest import ROOT, small_config

from keme.days import block_of, clear_leader
from keme.models.anchor import BillRecord
from keme.prior.anchors import build_anchors
from keme.prior.persona import build_persona
from keme.synth.limits import parse_config
from keme.synth.pipeline import synthesize_persona
from keme.text import resources


def _year(lang: str, seed: int, bills_a_month: int = 4):
    """A persona over 2026 and her bills (no other app records)."""
    cfg = parse_config(
        f"name: t\nseed: {seed}\npersonas:\n  - {{language: {lang}, start: 2026-01-01, months: 12}}\n"
        f"anchors:\n  per_month: {{bill: {bills_a_month}}}\n"
    )
    res = resources.get(lang)
    persona = build_persona(cfg.personas[0], 0, seed, res)
    bills = [a.record for a in build_anchors(persona, cfg, res) if isinstance(a.record, BillRecord)]
    return persona, bills


@pytest.mark.parametrize("lang", ["en", "zh"])
@pytest.mark.parametrize("seed", [1, 2, 3])
def test_her_usual_payment_method_clearly_leads_her_payments_over_a_year(lang, seed):
    persona, bills = _year(lang, seed)
    methods = Counter(b.payment_method for b in bills)
    assert clear_leader(methods) == persona.habits.payment_method
    assert len(methods) > 1  # the other cards and apps still pay now and then


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_she_goes_back_to_her_regular_coffee_or_lunch_place_without_eating_only_there(lang):
    """Ten bills a month: ten or more a year in dining, most at her regular place."""
    persona, bills = _year(lang, 4, bills_a_month=10)
    dining = resources.get(lang).anchors.bill.categories["dining"]
    merchants = Counter(b.merchant for b in bills if b.category == dining.label)
    assert clear_leader(merchants) == persona.habits.regulars["dining"]
    assert persona.habits.regulars["dining"] in dining.regular
    assert len(merchants) >= 3


def test_a_category_without_regulars_has_no_favourite():
    persona, _ = _year("en", 1)
    assert "utilities" not in persona.habits.regulars  # the household's provider, not a habit
    assert set(persona.habits.regulars) == {"dining", "groceries", "personal_care"}


@pytest.fixture(scope="module")
def quarter():
    """One English persona's sessions over three months."""
    return synthesize_persona(
        0, small_config("graph: {episodes_per_month: 14}\n").model_copy(update={"seed": 3})
    )


def test_her_usual_block_clearly_leads_the_chats_she_opens_herself(quarter):
    opened = [m for s in quarter.sessions if (m := s.opened_by_user) is not None]
    blocks = Counter(block_of(m.timestamp) for m in opened)
    assert len(opened) >= 30
    assert clear_leader(blocks) == quarter.persona.habits.chat_block
    assert len(blocks) == 3  # a recipe still gets cooked in the evening, a commute talked about mornings


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_her_chat_block_agrees_with_what_she_says_about_her_sleep(lang):
    """Over many personas, every night owl chats in the evening and every early riser in the morning."""
    res = resources.get(lang)
    implied = res.persona.attributes["health.sleep_habit"].chat_block
    cfg = parse_config(
        f"name: t\nseed: 1\npersonas:\n  - {{language: {lang}, start: 2026-01-01, months: 1}}\n"
    )
    seen = Counter()
    for seed in range(1, 80):
        persona = build_persona(cfg.personas[0], 0, seed, res)
        sleep = persona.value_at("health.sleep_habit", persona.start)
        if sleep in implied:
            assert persona.habits.chat_block == implied[sleep], (seed, sleep)
            seen[implied[sleep]] += 1
    assert seen["morning"] and seen["evening"]


def test_the_same_seed_gives_the_same_habits_and_another_seed_other_ones():
    first, _ = _year("en", 7)
    again, _ = _year("en", 7)
    assert first.habits == again.habits
    others = {_year("en", seed)[0].habits.model_dump_json() for seed in range(1, 9)}
    assert len(others) > 1


def test_habits_do_not_depend_on_the_hash_seed():
    """String hashing is salted per process: a habit drawn from a set's order would change between runs."""
    code = (
        "from keme.prior.persona import build_persona\n"
        "from keme.synth.limits import parse_config\n"
        "from keme.text import resources\n"
        "spec = '  - {language: zh, start: 2026-01-01, months: 1}\\n'\n"
        "cfg = parse_config('name: t\\nseed: 9\\npersonas:\\n' + spec)\n"
        "print(build_persona(cfg.personas[0], 0, 9, resources.get('zh')).habits.model_dump_json())\n"
    )
    outputs = [
        subprocess.run(
            [sys.executable, "-c", code],
            cwd=ROOT,
            env={**os.environ, "PYTHONHASHSEED": hash_seed},
            capture_output=True,
            text=True,
            check=True,
        ).stdout
        for hash_seed in ("0", "4242")
    ]
    assert outputs[0] == outputs[1]
    assert json.loads(outputs[0])["payment_method"]


def test_her_usual_method_fits_any_payment():
    """A card, never its online use: 70 % of her coffees are not paid online."""
    usual = {_year("en", seed)[0].habits.payment_method for seed in range(1, 9)}
    assert usual and not any("online" in m or "contactless" in m for m in usual)
