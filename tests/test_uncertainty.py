"""Bootstrap intervals and paired tests (eval/uncertainty.py), and how the reports show them."""

from __future__ import annotations

import json

import numpy as np
import pytest

from eval.report import _markdown as leaderboard_markdown
from eval.report import add_uncertainty, leaderboard_cells, leaderboard_rows, markdown_text, write_plot
from eval.uncertainty import interval, paired, resamples


def _toy(personas: int, per_persona: int) -> tuple[list[str], list[str]]:
    ids = [f"p{p:02d}-q{q:04d}" for p in range(personas) for q in range(per_persona)]
    return ids, [i.split("-")[0] for i in ids]


# ---------------------------------------------------------------- intervals
def test_an_all_correct_metric_has_the_interval_one_to_one():
    ids, personas = _toy(3, 10)
    result = interval([1.0] * 30, resamples(ids, personas))
    assert (result.mean, result.low, result.high) == (1.0, 1.0, 1.0)
    assert (result.questions, result.personas) == (30, 3)


def test_a_fair_coin_over_100_questions_has_the_binomial_width():
    # the normal approximation: 2 × 1.96 × sqrt(0.25 / 100) = 0.196
    ids, personas = _toy(1, 100)
    result = interval([float(i % 2) for i in range(100)], resamples(ids, personas))
    assert result.mean == 0.5
    assert 0.17 < result.high - result.low < 0.23


def test_one_persona_falls_back_to_resampling_questions_and_says_so():
    draws = resamples(*_toy(1, 20))
    assert draws.scheme == "question"
    assert "one persona" in draws.describe() and "B = 2000" in draws.describe()


def test_resampling_by_persona_is_wider_than_by_question_when_personas_differ():
    # ten personas, each either always right or always wrong: the questions of one persona are one
    # observation, not ten
    ids, personas = _toy(10, 10)
    values = [float(int(p[1:]) % 2) for p in personas]
    by_question = interval(values, resamples(ids, personas, scheme="question"))
    for scheme in ("persona", "cluster"):
        by_persona = interval(values, resamples(ids, personas, scheme=scheme))
        assert by_persona.high - by_persona.low > 2 * (by_question.high - by_question.low)


def test_two_personas_keep_the_question_noise_that_the_plain_cluster_bootstrap_loses():
    # two personas both at 0.5: drawing whole personas only ever gives 0.5
    ids, personas = _toy(2, 30)
    values = [float(i % 2) for i in range(60)]
    cluster = interval(values, resamples(ids, personas, scheme="cluster"))
    two_stage = interval(values, resamples(ids, personas, scheme="persona"))
    assert cluster.high - cluster.low == 0.0
    assert two_stage.high - two_stage.low > 0.15


def test_a_question_without_a_value_is_left_out_of_the_mean_and_counted():
    ids, personas = _toy(2, 3)
    result = interval([1.0, None, 0.0, 1.0, float("nan"), 1.0], resamples(ids, personas))
    assert result.mean == 0.75 and result.questions == 4


def test_the_same_seed_gives_the_same_replicates():
    ids, personas = _toy(4, 5)
    first, again = resamples(ids, personas, seed=3), resamples(ids, personas, seed=3)
    assert np.array_equal(first.weights, again.weights)
    assert not np.array_equal(first.weights, resamples(ids, personas, seed=4).weights)
    assert resamples(ids, personas, b=50).b == 50


def test_every_replicate_has_as_many_draws_as_the_persona_draws_bring():
    ids, personas = _toy(3, 4)
    draws = resamples(ids, personas, scheme="persona")
    assert set(draws.weights.sum(axis=1)) == {12}


# ---------------------------------------------------------------- paired comparisons
def test_identical_systems_are_not_significantly_different():
    ids, personas = _toy(3, 20)
    scores = [float(i % 3 == 0) for i in range(60)]
    test = paired(scores, scores, resamples(ids, personas))
    assert test.diff == 0.0 and test.p == 1.0 and not test.significant


def test_a_clear_win_is_significant():
    ids, personas = _toy(3, 20)
    a = [float(i % 5 != 0) for i in range(60)]  # 0.8
    b = [float(i % 5 == 0) for i in range(60)]  # 0.2
    test = paired(a, b, resamples(ids, personas))
    assert test.diff == pytest.approx(0.6)
    assert test.significant and test.low > 0.3 and test.p < 0.01


def test_a_one_question_lead_is_not_significant():
    ids, personas = _toy(2, 30)
    a = [float(i % 2) for i in range(60)]
    b = a.copy()
    b[1] = 0.0
    test = paired(a, b, resamples(ids, personas))
    assert test.diff == pytest.approx(1 / 60) and not test.significant


def test_items_one_system_lacks_are_left_out_on_both_sides_and_counted():
    ids, personas = _toy(1, 4)
    a = [1.0, 1.0, None, 1.0]
    b = [0.0, None, 0.0, 0.0]
    excluded = paired(a, b, resamples(ids, personas))
    assert (excluded.questions, excluded.missing_a, excluded.missing_b) == (2, 1, 1)
    assert excluded.diff == 1.0
    as_zero = paired(a, b, resamples(ids, personas), missing="zero")
    assert as_zero.questions == 4 and as_zero.diff == 0.75  # A: 1, 1, (0), 1 against B's 0, (0), 0, 0


# ---------------------------------------------------------------- reports
def _rows(pattern: list[float], personas: int = 3, per_persona: int = 20) -> list[dict]:
    ids, owners = _toy(personas, per_persona)
    return [
        {
            "question_id": q,
            "persona_id": p,
            "gold_messages": 0 if i % 10 == 9 else 1,
            **({} if i % 10 == 9 else {"recall_any@5": pattern[i % len(pattern)], "mrr": 0.5}),
        }
        for i, (q, p) in enumerate(zip(ids, owners))
    ]


def _summary(rows: dict[str, list[dict]]) -> dict:
    systems = {}
    for name, system in rows.items():
        scored = [r["recall_any@5"] for r in system if "recall_any@5" in r]
        systems[name] = {
            "recall_any@5": sum(scored) / len(scored),
            "mrr": 0.5,
            "publishable": name != "oracle",
        }
    summary = {"note": "retrieval-only run", "verified": True, "systems": systems}
    add_uncertainty(summary, rows, b=500)
    return summary


@pytest.fixture
def three_systems() -> dict:
    # strong beats weak clearly; strong and strong_too differ by one question
    strong = _rows([1.0, 1.0, 1.0, 0.0])
    strong_too = [dict(r) for r in strong]
    strong_too[0]["recall_any@5"] = 0.0
    weak = _rows([0.0, 0.0, 0.0, 1.0])
    oracle = _rows([1.0])
    return _summary({"weak": weak, "strong_too": strong_too, "oracle": oracle, "strong": strong})


def test_the_summary_has_each_figures_interval_and_what_it_rests_on(three_systems):
    facts = three_systems["uncertainty"]
    assert (facts["questions"], facts["questions_with_evidence"], facts["personas"]) == (60, 54, 3)
    assert facts["b"] == 500 and facts["headline"] == "recall_any@5"
    strong = three_systems["systems"]["strong"]["intervals"]["recall_any@5"]
    low, high = strong["ci95"]
    assert low < strong["mean"] < high and (strong["questions"], strong["personas"]) == (54, 3)


def test_the_ranking_pairs_each_system_with_the_next_and_leaves_the_oracle_out(three_systems):
    systems = three_systems["systems"]
    assert three_systems["uncertainty"]["order"] == ["strong", "strong_too", "weak", "oracle"]
    assert systems["strong"]["vs_next"]["system"] == "strong_too"
    assert systems["strong"]["vs_next"]["significant"] is False
    assert systems["strong_too"]["vs_next"]["system"] == "weak"
    assert systems["strong_too"]["vs_next"]["significant"] is True
    assert "vs_next" not in systems["weak"] and "vs_next" not in systems["oracle"]


def test_the_markdown_marks_the_pair_that_is_not_told_apart(three_systems):
    text = leaderboard_markdown(three_systems)
    lines = {line.split(" | ")[0].strip("| "): line for line in text.splitlines() if line.startswith("| ")}
    assert "≈ +0.018 [0.00, " in lines["strong"] and "> +" in lines["strong_too"]
    assert "Figures rest on 60 questions (54 with gold evidence) from 3 personas." in text
    assert "B = 500, seed 13" in text and "personas drawn with replacement" in text
    columns, cells = leaderboard_cells(three_systems)
    assert cells[0]["R-any@5"].startswith("0.778 [") and "vs next (R-any@5)" in columns


def test_the_csv_rows_carry_the_bounds_and_the_test(three_systems):
    row = leaderboard_rows(three_systems)[0]
    assert row["system"] == "strong" and row["R-any@5_low"] < row["R-any@5"] < row["R-any@5_high"]
    assert row["vs_next"] == "strong_too" and row["vs_next_significant"] is False
    assert {"MRR_low", "MRR_high"} <= row.keys()


def test_tied_systems_rank_by_name_in_a_summary_and_in_its_reloaded_copy():
    summary = _summary({"zeta": _rows([1.0, 0.0]), "alpha": _rows([1.0, 0.0])})
    assert summary["uncertainty"]["order"] == ["alpha", "zeta"]
    reloaded = json.loads(json.dumps(summary, sort_keys=True))
    assert [r["system"] for r in leaderboard_rows(reloaded)] == ["alpha", "zeta"]
    del reloaded["uncertainty"]["order"]
    assert [r["system"] for r in leaderboard_rows(reloaded)] == ["alpha", "zeta"]


def test_judged_answers_rank_the_leaderboard_by_accuracy():
    rows = {name: _rows([1.0, 0.0]) for name in ("a", "b")}
    for i, row in enumerate(rows["b"]):
        row["accuracy"] = float(i % 4 != 0)
    for row in rows["a"]:
        row["accuracy"] = 0.0
    summary = _summary(rows)
    summary["systems"]["a"]["accuracy"], summary["systems"]["b"]["accuracy"] = 0.0, 0.75
    add_uncertainty(summary, rows, b=200)
    assert summary["uncertainty"]["headline"] == "accuracy"
    assert summary["uncertainty"]["order"] == ["b", "a"]
    assert summary["systems"]["b"]["vs_next"]["metric"] == "accuracy"


def test_the_plot_is_drawn_with_intervals_and_marks(three_systems, tmp_path):
    write_plot(three_systems, tmp_path / "leaderboard.png")
    assert (tmp_path / "leaderboard.png").stat().st_size > 10_000


def test_system_names_stay_escaped_in_the_markdown(three_systems):
    three_systems["systems"]["a|b <i>"] = three_systems["systems"].pop("weak")
    three_systems["uncertainty"]["order"][2] = "a|b <i>"
    text = leaderboard_markdown(three_systems)
    assert markdown_text("a|b <i>") in text and "<i>" not in text


def test_unanswered_questions_are_left_out_of_the_pair_and_counted():
    rows = {name: _rows([1.0, 0.0]) for name in ("a", "b")}
    for i, (x, y) in enumerate(zip(rows["a"], rows["b"])):
        x["accuracy"], y["accuracy"] = 1.0, 0.0
        if i < 5:
            del y["accuracy"]  # b's answers to five questions failed
    summary = _summary(rows)
    summary["systems"]["a"]["accuracy"], summary["systems"]["b"]["accuracy"] = 1.0, 0.0
    add_uncertainty(summary, rows, b=200)
    test = summary["systems"]["a"]["vs_next"]
    assert test["questions"] == 55 and test["missing"] == {"a": 0, "b": 5}
    assert summary["systems"]["b"]["intervals"]["accuracy"]["questions"] == 55


def test_a_system_without_the_headline_metric_is_ranked_last_and_not_paired():
    """A context window has no R-any@5: it is listed after the ranked systems, and no test compares it."""
    rows = {"a": _rows([1.0, 0.0]), "b": _rows([1.0])}
    for row in rows["b"]:
        row.pop("recall_any@5", None)
    summary = {"note": "", "systems": {"a": {"recall_any@5": 0.5}, "b": {}}}
    add_uncertainty(summary, rows, b=100)
    assert summary["uncertainty"]["order"] == ["a", "b"]
    assert "vs_next" not in summary["systems"]["a"]
