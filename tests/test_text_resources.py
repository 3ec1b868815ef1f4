"""The language resources honour the contract of the synthesis catalogue.

Each failure lists the file and key to fix (see keme/text/FORMAT.md).
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from keme.text import check, resources
from keme.text.resources import ROOT as TEXT_ROOT


@pytest.mark.parametrize("lang", resources.LANGUAGES)
@pytest.mark.parametrize("part", check.PARTS)
def test_resource_part_is_valid(lang: str, part: str) -> None:
    problems = check.check(lang, (part,))
    assert not problems, "\n".join(problems)


@pytest.mark.parametrize("lang", resources.LANGUAGES)
def test_at_least_twenty_dialogue_patterns(lang: str) -> None:
    assert len(resources.get(lang).patterns) >= 20


def test_a_fits_table_that_leaves_a_value_of_the_other_attribute_without_options_is_refused() -> None:
    text = resources.get("en").persona
    lunch = text.attributes["routine.usual_lunch"]
    table = {k: v for k, v in lunch.fits["diet.diet_type"].items() if k != "vegan"}
    table["keto"] = ["a Cobb salad"]
    broken = lunch.model_copy(update={"fits": {"diet.diet_type": table}})
    problems = check._fits_problems("persona.yaml", "routine.usual_lunch", broken, text)
    assert any("no options for ['vegan']" in p for p in problems)
    assert any("keto: expected >= 2 options" in p for p in problems)


def test_the_usual_lunch_offers_only_what_fits_the_diet() -> None:
    lunch = resources.get("en").persona.attributes["routine.usual_lunch"]
    assert set(lunch.fitting({"diet.diet_type": "vegan"})) == {
        "a tofu grain bowl",
        "a chickpea salad wrap",
        "lentil soup",
    }
    assert lunch.fitting({}) == lunch.values


@pytest.mark.parametrize(
    ("lang", "mode", "low", "high"),
    [
        ("en", "scooter", 10, 25),
        ("en", "commuter train", 35, 60),
        ("zh", "步行", 10, 25),
        ("zh", "坐公交", 30, 80),
    ],
)
def test_the_commute_minutes_are_the_ones_plausible_for_the_mode(lang, mode, low, high) -> None:
    minutes = resources.get(lang).persona.attributes["routine.commute_minutes"]
    options = [int(v) for v in minutes.fitting({"transport.commute_mode": mode})]
    assert min(options) == low and max(options) == high


@pytest.mark.parametrize("lang", resources.LANGUAGES)
def test_every_commute_mode_has_its_own_range_of_minutes(lang) -> None:
    text = resources.get(lang).persona.attributes
    table = text["routine.commute_minutes"].fits["transport.commute_mode"]
    assert set(table) == set(text["transport.commute_mode"].values)


TA_PRONOUN = re.compile(r"(?<![A-Za-z{_.@:])(?:ta|TA)(?![A-Za-z_])")


def ta_lines(folder: Path) -> list[str]:
    """The lines of a zh bank folder that say 「ta」 for a person (comments aside)."""
    return [
        f"{path.name}: {line.strip()}"
        for path in sorted(folder.rglob("*.yaml"))
        for line in path.read_text(encoding="utf-8").splitlines()
        if not line.lstrip().startswith("#") and TA_PRONOUN.search(line.split(" #", 1)[0])
    ]


def test_no_zh_bank_line_calls_a_person_ta():
    """A relative's or a friend's gender is known: a line names the person (or goes without a pronoun)
    instead of writing 「ta」."""
    assert ta_lines(TEXT_ROOT / "zh") == []


def test_a_zh_line_calling_a_relative_ta_is_named(tmp_path):
    bank = tmp_path / "patterns_b.yaml"
    bank.write_text(
        '- u: "刚跟{relative}视频，ta非让我转着镜头看看屋里"\n'
        '  a: "{pool.b_date_spots}挺好，data也不用带"  # ta in a comment is no line\n',
        encoding="utf-8",
    )
    assert ta_lines(tmp_path) == ['patterns_b.yaml: - u: "刚跟{relative}视频，ta非让我转着镜头看看屋里"']
