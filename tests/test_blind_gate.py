"""`keme validate` fails a synthesized dataset where a blind baseline (keme.qa.blind) is off chance by
more than 5 points and by more than two standard errors of a guess at chance (keme.qa.validity.breaches):
a guesser with no memory must not beat the questions, and a few items must not fail it by noise."""

from __future__ import annotations

from conftest import ROOT
from typer.testing import CliRunner

from keme.cli import app
from keme.qa import validity
from keme.qa.validity import breaches


def _score(accuracy: float, chance: float, n: int) -> dict:
    return {"accuracy": accuracy, "chance": chance, "correct": round(accuracy * n), "n": n}


def test_a_baseline_far_off_chance_on_many_items_is_a_breach():
    """'Pick the longest option' right on 0.39 of 120 four-option items: +0.14, 3.5 standard errors."""
    [breach] = breaches({"longest": _score(0.39, 0.25, 120), "median": _score(0.26, 0.25, 120)})
    assert (breach.name, breach.accuracy, breach.chance, breach.n) == ("longest", 0.39, 0.25, 120)


def test_a_lucky_guess_on_four_items_is_noise_not_a_breach():
    """2 of 4 right at chance 0.25: +0.25, but one standard error is 0.22."""
    assert breaches({"position": _score(0.5, 0.25, 4)}) == []


def test_a_gap_within_five_points_is_no_breach_however_many_items():
    assert breaches({"never_abstain": _score(0.09, 0.05, 5000)}) == []


def test_a_baseline_that_trails_chance_is_a_breach_too():
    """Golds the median option never is: a guesser learns to avoid it."""
    assert [b.name for b in breaches({"median": _score(0.08, 0.25, 200)})] == ["median"]


def test_a_shape_baseline_off_chance_is_a_breach_like_the_choice_ones():
    """Made-up names asked about once where real ones recur (+0.12 on a year): a failure, as "pick the
    longest" is."""
    found = breaches({"name_frequency": _score(0.84, 0.72, 380)})
    assert [b.name for b in found] == ["name_frequency"]


def test_a_handful_of_items_is_never_a_breach():
    """4 of 5 'longest' right at chance 0.25 (a one-month persona on a calendar edge): 1.6 % by luck alone."""
    assert breaches({"longest": _score(0.8, 0.25, 5)}) == []


def test_a_baseline_that_applies_to_no_item_is_no_breach():
    assert breaches({"multiples": _score(0.0, 0.0, 0)}) == []


def test_validate_fails_a_synthesized_dataset_a_blind_baseline_beats(monkeypatch):
    """data/sample validates; with the longest option scored 0.45 against 0.25 on 200 items it fails,
    the ✗ line naming the baseline, its figure and chance."""
    scores = {"longest": _score(0.45, 0.25, 200), "always_abstain": _score(0.09, 0.09, 200)}
    monkeypatch.setattr(validity, "blind_scores", lambda items, bills=None: scores)
    result = CliRunner().invoke(app, ["validate", str(ROOT / "data/sample")])
    assert result.exit_code == 1
    assert "✗ blind baseline longest: 0.45 against chance 0.25" in result.output
    assert "always_abstain" not in "".join(x for x in result.output.splitlines() if x.startswith("✗"))
