"""costdash.readout_intervals against independent computations: Clopper-Pearson limits from
scipy.stats.beta, the gamma limit from scipy.stats.gamma, MOVER written out, paired tables
counted row by row, and the bands of costdash.bands read at the same PC(+)."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import stats

from costdash.bands import cost_band, difference_band
from costdash.conditions import OperatingCondition
from costdash.errors import ParameterError
from costdash.readout_intervals import (cost_interval, paired_limits, paired_table,
                                        paired_tables, rate_limits, regret_interval)


def cp(k: int, n: int, level: float) -> tuple[float, float]:
    a = 1 - level
    lo = 0.0 if k == 0 else stats.beta.ppf(a / 2, k, n - k + 1)
    hi = 1.0 if k == n else stats.beta.ppf(1 - a / 2, k + 1, n - k)
    return lo, hi


def independent_cost(fn, n_pos, fp, n_neg, level, cond):
    """The cost interval written out from scipy's distributions."""
    x = cond.pc
    p1, p2 = fn / n_pos, fp / n_neg
    l1, u1 = cp(fn, n_pos, level)
    l2, u2 = cp(fp, n_neg, level)
    ne = x * p1 + (1 - x) * p2
    low = ne - math.sqrt((x * (p1 - l1)) ** 2 + ((1 - x) * (p2 - l2)) ** 2)
    high = ne + math.sqrt((x * (u1 - p1)) ** 2 + ((1 - x) * (u2 - p2)) ** 2)
    v = x * x * p1 * (1 - p1) / n_pos + (1 - x) ** 2 * p2 * (1 - p2) / n_neg
    if ne > 0 and v > 0:
        low = min(low, stats.gamma.ppf((1 - level) / 2, ne * ne / v) * v / ne)
    money = cond.expected_cost
    return money(ne), money(low), money(high)


CASES = [(4, 20, 4, 10), (0, 50, 3, 400), (1, 30, 0, 900), (120, 1000, 2500, 99000),
         (0, 7, 0, 9), (7, 7, 9, 9), (3, 200_000, 15_000, 3_800_000)]
CONDITIONS = [OperatingCondition(0.5), OperatingCondition(0.01, 50.0, 1.0),
              OperatingCondition(0.3, 2.0, 7.0, cost_tp=-1.0, cost_tn=0.5),
              OperatingCondition(1e-5, 1e4, 1.0)]


@pytest.mark.parametrize("counts", CASES)
@pytest.mark.parametrize("level", [0.8, 0.9, 0.95])
def test_cost_interval_is_scipy_written_out(counts, level):
    fn, n_pos, fp, n_neg = counts
    lim = rate_limits(fn, n_pos, fp, n_neg, level)
    assert (lim.fnr_low, lim.fnr_high) == pytest.approx(cp(fn, n_pos, level), rel=1e-9, abs=1e-15)
    assert (lim.fpr_low, lim.fpr_high) == pytest.approx(cp(fp, n_neg, level), rel=1e-9, abs=1e-15)
    for cond in CONDITIONS:
        got = cost_interval(lim, cond)
        want = independent_cost(fn, n_pos, fp, n_neg, level, cond)
        assert got == pytest.approx(want, rel=1e-8, abs=1e-12)
        assert got[1] <= got[0] <= got[2]


@pytest.mark.parametrize("counts", CASES[:4])
def test_cost_interval_is_the_fixed_threshold_band_at_pc(counts):
    fn, n_pos, fp, n_neg = counts
    cond = OperatingCondition(0.2, 3.0, 1.0)
    band = cost_band((n_pos - fn, fp, fn, n_neg - fp), level=0.9, grid=[cond.pc])
    assert band.calibrated and band.method == "clopper-pearson-mover"
    cost, low, high = cost_interval(rate_limits(fn, n_pos, fp, n_neg, 0.9), cond)
    to_ne = lambda m: (m - cond.constant_cost) / cond.cost_scale   # noqa: E731
    assert to_ne(low) == pytest.approx(band.low[0], rel=1e-10)
    assert to_ne(high) == pytest.approx(band.high[0], rel=1e-10)
    assert to_ne(cost) == pytest.approx(band.cost[0], rel=1e-12)


def test_a_trivial_threshold_has_no_width():
    cond = OperatingCondition(0.1, 5.0, 1.0)
    cost, low, high = cost_interval(rate_limits(0, 50, 400, 400, 0.9, exact=True), cond)
    assert low == cost == high == pytest.approx(cond.expected_cost(1 - cond.pc))


def test_paired_table_counts_rows():
    rng = np.random.default_rng(3)
    y = rng.random(500) < 0.3
    a, b = rng.random(500) < 0.4, rng.random(500) < 0.5
    t = paired_table(y, a, b)
    for row, cls in enumerate((y, ~y)):
        brute = [sum(1 for i in range(500) if cls[i] and a[i] == fa and b[i] == fb)
                 for fa, fb in ((1, 1), (1, 0), (0, 1), (0, 0))]
        assert t[row].tolist() == brute
    with pytest.raises(ParameterError, match="differ in length"):
        paired_table(y, a[:-1], b)


def test_paired_tables_are_one_table_per_threshold():
    rng = np.random.default_rng(4)
    y = rng.random(400) < 0.2
    a = rng.random(400) < 0.3
    s = np.round(rng.normal(size=400), 1)          # ties
    thresholds = [np.inf, 1.0, 0.3, 0.0, -0.05, -np.inf, float(s.max()), float(s.min())]
    got = paired_tables(y, a, s, thresholds)
    for t, table in zip(thresholds, got):
        assert table.tolist() == paired_table(y, a, s >= t).tolist()
    with pytest.raises(ParameterError, match="NaN"):
        paired_tables(y, a, s, [np.nan])


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_regret_interval_is_the_paired_fixed_threshold_band(seed):
    rng = np.random.default_rng(seed)
    n = 3000
    y = rng.random(n) < 0.1
    sa = rng.normal(size=n) + 1.2 * y
    sb = 0.7 * sa + rng.normal(size=n) * 0.7 + 0.5 * y
    ta, tb = 1.1, 0.6
    cond = OperatingCondition(0.1, 8.0, 1.0)
    band = difference_band((y, sa), (y, sb), threshold=(ta, tb), level=0.9, grid=[cond.pc])
    table = paired_table(y, sa >= ta, sb >= tb)
    regret, low, high = regret_interval(paired_limits(table, 0.9), cond)
    s = cond.cost_scale
    assert regret / s == pytest.approx(band.diff[0], rel=1e-10, abs=1e-14)
    assert low / s == pytest.approx(band.low[0], rel=1e-10)
    assert high / s == pytest.approx(band.high[0], rel=1e-10)
    # the regret itself is the difference of the two thresholds' priced points
    fpr = lambda f: np.mean(f[~y])    # noqa: E731
    tpr = lambda f: np.mean(f[y])     # noqa: E731
    want = (cond.normalized_cost(fpr(sa >= ta), tpr(sa >= ta))
            - cond.normalized_cost(fpr(sb >= tb), tpr(sb >= tb))) * s
    assert regret == pytest.approx(want, rel=1e-9)


def test_bad_input_is_named():
    with pytest.raises(ParameterError, match="level"):
        rate_limits(1, 10, 1, 10, 1.0)
    with pytest.raises(ParameterError, match="out of range"):
        rate_limits(11, 10, 1, 10, 0.9)
    with pytest.raises(ParameterError, match="2 x 4"):
        paired_limits([[1, 2, 3, 4]], 0.9)
