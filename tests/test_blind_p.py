"""keme/qa/blind.py's χ² p-value, computed without scipy (so `keme validate` runs on a core install)."""

from __future__ import annotations

import math

import pytest

from keme.qa.blind import chi2_sf, uniform_fit_p

# 95th percentiles of χ² with 1-6 degrees of freedom (any statistics table): p is 0.05 there
QUANTILES_95 = {
    1: 3.841458820694124,
    2: 5.991464547107979,
    3: 7.814727903251178,
    4: 9.487729036781154,
    5: 11.070497693516351,
    6: 12.591587243743977,
}


@pytest.mark.parametrize("df", sorted(QUANTILES_95))
def test_the_95th_percentile_leaves_p_005(df):
    assert chi2_sf(QUANTILES_95[df], df) == pytest.approx(0.05, rel=1e-12)


def test_uniform_counts_fit_perfectly():
    assert uniform_fit_p([7, 7, 7, 7]) == 1.0


def test_all_golds_on_one_of_two_letters_is_erfc_of_root_five():
    """χ² = 10 with one degree of freedom: p = erfc(sqrt(10 / 2))."""
    assert uniform_fit_p([10, 0]) == pytest.approx(math.erfc(math.sqrt(5)), rel=1e-15)


def test_it_agrees_with_scipy_where_scipy_is_installed():
    stats = pytest.importorskip("scipy.stats")
    cases = [[3, 9, 4, 4], [12, 1, 0], [5, 6, 5, 4, 9, 2], [40, 31], [0, 0, 0, 3, 1]]
    assert [uniform_fit_p(c) for c in cases] == pytest.approx(
        [float(stats.chisquare(c).pvalue) for c in cases], rel=1e-12
    )
