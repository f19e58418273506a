"""Issue 24, item 2: the default bands of fixed thresholds keep their level in every regime.

The new closed forms against scipy (Clopper-Pearson limits from ``binomtest(...).proportion_ci``,
the gamma limit from ``stats.chi2`` / ``stats.gamma``), exact coverage in the regimes where the old
defaults failed (binomial and multinomial sums written out here, not the study's code), and the
study's fast sums against brute force."""

from __future__ import annotations

import importlib.util
import itertools
import math
import sys
from pathlib import Path

import numpy as np
import pytest
from scipy import stats

from costdash.bands.edges import _paired_edges
from costdash._intervals import (
    clopper_pearson,
    cp_mover_line,
    discordant_mover,
    gamma_lower,
    mover_line,
    newcombe_paired,
    wilson_mover_line,
)
from costdash.bands import cost_band, difference_band

STUDY = Path(__file__).resolve().parents[1] / "studies" / "fixed_threshold_coverage.py"


@pytest.fixture(scope="module")
def study():
    spec = importlib.util.spec_from_file_location("fixed_threshold_coverage_study", STUDY)
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    yield module
    sys.modules.pop(spec.name, None)


def exact_ci(k: int, n: int, level: float) -> tuple[float, float]:
    ci = stats.binomtest(k, n).proportion_ci(confidence_level=level, method="exact")
    return ci.low, ci.high


# ------------------------------------------------------------------------------------------------
# The closed forms against scipy and by hand
# ------------------------------------------------------------------------------------------------

def test_gamma_lower_against_scipy_and_garwood() -> None:
    for y, v, level in [(0.3, 0.01, 0.9), (2e-3, 1.1e-6, 0.95), (0.05, 4e-4, 0.8)]:
        a = 1 - level
        ref_gamma = stats.gamma.ppf(a / 2, y * y / v, scale=v / y)
        ref_chi2 = v / (2 * y) * stats.chi2.ppf(a / 2, 2 * y * y / v)      # Fay & Feuer's form
        assert gamma_lower(y, v, level) == pytest.approx(ref_gamma, rel=1e-10)
        assert gamma_lower(y, v, level) == pytest.approx(ref_chi2, rel=1e-10)
    # One count with its Poisson variance: the exact (Garwood) lower limit chi2(a/2; 2k) / 2.
    for k in (1, 2, 5, 40):
        assert gamma_lower(k, k, 0.95) == pytest.approx(stats.chi2.ppf(0.025, 2 * k) / 2,
                                                        rel=1e-10)
    # Nothing observed: 0; nothing random: the estimate itself.
    np.testing.assert_array_equal(gamma_lower([0.0, 0.2], [0.0, 0.0], 0.9), [0.0, 0.2])


def test_default_line_band_by_hand_against_scipy() -> None:
    """Paper 000 Fig. 11 matrix (FN 4 of 20, FP 4 of 10): Clopper-Pearson limits from scipy,
    MOVER by hand, the lower limit no higher than the gamma limit (chi2 form)."""
    pc = np.array([0.0, 0.3, 0.5, 1.0])
    band = cost_band((16, 4, 4, 6), grid=pc, level=0.9)
    assert band.method == "clopper-pearson-mover" and band.calibrated
    assert band.label == "90% Clopper–Pearson–MOVER band (pointwise)"
    l1, u1 = exact_ci(4, 20, 0.9)
    l2, u2 = exact_ci(4, 10, 0.9)
    for x, low, high in zip(pc, band.low, band.high):
        theta = 0.2 * x + 0.4 * (1 - x)
        mover_low = theta - math.hypot(x * (0.2 - l1), (1 - x) * (0.4 - l2))
        var = x * x * 0.2 * 0.8 / 20 + (1 - x) ** 2 * 0.4 * 0.6 / 10
        gamma = var / (2 * theta) * stats.chi2.ppf(0.05, 2 * theta * theta / var)
        assert low == pytest.approx(min(mover_low, gamma), abs=1e-12)
        assert high == pytest.approx(theta + math.hypot(x * (u1 - 0.2), (1 - x) * (u2 - 0.4)),
                                     abs=1e-12)
    # At PC(+) = 1 the band is FNR's own interval (upper) and never above its exact lower limit.
    assert band.high[-1] == pytest.approx(u1) and band.low[-1] <= l1 + 1e-15
    # at_level recomputes from the counts; the old default is still there by name.
    assert band.at_level(0.95).high[-1] == pytest.approx(exact_ci(4, 20, 0.95)[1])
    old = cost_band((16, 4, 4, 6), grid=pc, method="wilson-mover")
    # Kept by name, but its level is not earned (the scan below): a spread that says why.
    assert old.method == "wilson-mover" and not old.calibrated
    assert old.label.startswith("Wilson–MOVER spread (pointwise; no level: Wilson–MOVER's exact "
                                "coverage falls to 0.80")
    assert "%" not in old.label and old.no_level.startswith("no level")
    np.testing.assert_allclose(np.stack([old.low, old.high]),
                               np.stack(wilson_mover_line(pc, 4, 20, 4, 10, 0.9)), atol=1e-15)


def test_trivial_thresholds_are_exact_in_the_default_band() -> None:
    rng = np.random.default_rng(3)
    y = rng.random(400) < 0.3
    s = rng.normal(size=400) + 1.2 * y
    band = cost_band((y, s), select=(y[:200], s[:200]))
    trivial = ~np.isfinite(band.thresholds)
    assert band.method == "clopper-pearson-mover" and trivial.any()
    assert np.all(band.width[trivial] == 0) and np.all(band.width[~trivial] > 0)


def test_discordant_mover_by_hand_against_scipy() -> None:
    n11, n10, n01, n00 = 5, 7, 2, 36            # n = 50
    n = 50
    q10, q01 = n10 / n, n01 / n
    l10, u10 = exact_ci(n10, n, 0.9)
    l01, u01 = exact_ci(n01, n, 0.9)
    r = -math.sqrt(q10 * q01 / ((1 - q10) * (1 - q01)))
    d = q10 - q01
    lo = d - math.sqrt((q10 - l10) ** 2 + (u01 - q01) ** 2 - 2 * r * (q10 - l10) * (u01 - q01))
    hi = d + math.sqrt((u10 - q10) ** 2 + (q01 - l01) ** 2 - 2 * r * (u10 - q10) * (q01 - l01))
    got = discordant_mover(n11, n10, n01, n00, 0.9)
    assert got == pytest.approx((d, lo, hi), abs=1e-12)
    # No discordant pair: still an interval around 0 (Newcombe's is a point when both
    # proportions are 1/2: its width there is only the asymmetry of two Wilson intervals).
    d0, lo0, hi0 = discordant_mover(25, 0, 0, 25, 0.9)
    assert d0 == 0 and lo0 == pytest.approx(-exact_ci(0, 50, 0.9)[1])
    assert hi0 == pytest.approx(exact_ci(0, 50, 0.9)[1])
    _, nlo, nhi = newcombe_paired(25, 0, 0, 25, 0.9)
    assert nhi - nlo < 1e-12 < hi0 - lo0
    # One side known exactly (a trivial classifier): the constant minus the other's interval.
    _, lo1, hi1 = discordant_mover(0, 0, 12, 38, 0.9, exact_a=True)
    lb, ub = exact_ci(12, 50, 0.9)
    assert (lo1, hi1) == pytest.approx((0 - ub, 0 - lb), abs=1e-12)


def test_default_difference_band_is_discordant_mover() -> None:
    rng = np.random.default_rng(4)
    y = rng.random(300) < 0.3
    s = rng.normal(size=300) + 1.5 * y
    t = s + rng.normal(size=300)
    band = difference_band((y, s), (y, t), threshold=0.5, grid=[0.0, 0.4, 1.0])
    assert band.method == "discordant-mover" and band.calibrated
    assert band.label == "90% discordant-pair Clopper–Pearson–MOVER band (pointwise)"
    # PC(+) = 0: the negatives' interval alone (flags of the negatives are errors).
    fa, fb = s[~y] >= 0.5, t[~y] >= 0.5
    cells = [int(np.sum(fa & fb)), int(np.sum(fa & ~fb)), int(np.sum(~fa & fb)),
             int(np.sum(~fa & ~fb))]
    _, lo, hi = discordant_mover(*cells, 0.9)
    assert (band.low[0], band.high[0]) == pytest.approx((lo, hi), abs=1e-12)
    old = difference_band((y, s), (y, t), threshold=0.5, grid=[0.0, 0.4, 1.0],
                          method="newcombe-mover")
    assert old.method == "newcombe-mover" and not old.calibrated and old.significant == ()
    assert old.label.startswith("Newcombe–MOVER spread (pointwise; no level: "
                                "Newcombe–MOVER's exact coverage falls to 0.85")
    assert old.significance_note.startswith("no significant ranges: Newcombe–MOVER's exact")
    assert "%" not in old.label
    _, nlo, nhi = newcombe_paired(*cells, 0.9)
    assert (old.low[0], old.high[0]) == pytest.approx((nlo, nhi), abs=1e-12)
    whole = difference_band((y, s), (y, t), threshold=0.5, simultaneous=True)
    assert whole.method == "discordant-mover" and "rectangle" in whole.label


# ------------------------------------------------------------------------------------------------
# Exact coverage in the regimes the review found (sums written out here)
# ------------------------------------------------------------------------------------------------

def line_coverage(band, n_pos: int, n_neg: int, fnr: np.ndarray, fpr: float, x: float,
                  level: float) -> np.ndarray:
    """Exact coverage at each FNR (FPR fixed) of a band function of (x, k1, n1, k2, n2, level)."""
    k1 = np.arange(n_pos + 1)[:, None]
    k2 = np.arange(int(stats.binom.isf(1e-15, n_neg, fpr)) + 2)[None, :]
    low, high = band(x, k1, n_pos, k2, n_neg, level)
    w2 = stats.binom.pmf(k2[0], n_neg, fpr)
    out = []
    for p in fnr:
        theta = x * p + (1 - x) * fpr
        w1 = stats.binom.pmf(k1[:, 0], n_pos, p)
        out.append(w1 @ ((low <= theta) & (theta <= high)) @ w2)
    return np.array(out)


def test_screening_regime_of_the_review() -> None:
    """10 positives, 1,000 negatives at FPR 0.05, PC(+) 0.9: Wilson-MOVER's exact minimum over
    FNR is the review's 0.811; the default keeps its 0.9."""
    fnr = np.linspace(0.001, 0.5, 500)
    old = line_coverage(wilson_mover_line, 10, 1000, fnr, 0.05, 0.9, 0.9)
    new = line_coverage(cp_mover_line, 10, 1000, fnr, 0.05, 0.9, 0.9)
    assert old.min() == pytest.approx(0.811, abs=0.002)
    assert new.min() >= 0.90 and new.mean() <= 0.97


def test_few_errors_in_both_classes() -> None:
    """250 positives, PC(+) 0.2 (one FN weighs as much as one FP), 0.34 and 0.28 expected errors:
    MOVER on Clopper-Pearson limits alone covers 0.925 at a nominal 0.95 (its sum in quadrature);
    with the gamma limit the default covers at least 0.95."""
    def plain(x, k1, n1, k2, n2, level):
        l1, u1 = clopper_pearson(k1, n1, level)
        l2, u2 = clopper_pearson(k2, n2, level)
        return mover_line(x, k1 / n1, l1, u1, k2 / n2, l2, u2)

    fnr = np.array([0.00125, 0.001354, 0.0015])
    without = line_coverage(plain, 250, 1000, fnr, 0.00027668, 0.2, 0.95)
    default = line_coverage(cp_mover_line, 250, 1000, fnr, 0.00027668, 0.2, 0.95)
    assert without.min() < 0.93 <= 0.95 <= default.min()


def paired_coverage(interval, n: int, pi: tuple[float, float, float, float], level: float
                    ) -> float:
    """Exact coverage of a paired interval over every table of Multinomial(n; pi)."""
    t = np.array([c for c in itertools.product(range(n + 1), repeat=3) if sum(c) <= n]).T
    table = np.vstack([t, n - t.sum(axis=0)])
    p = stats.multinomial.pmf(table.T, n, pi)
    _, lo, hi = interval(*table, level)
    truth = pi[1] - pi[2]
    return float(p[(lo <= truth) & (truth <= hi)].sum())


def test_paired_difference_with_nested_errors() -> None:
    """10 rows, a errs on 30 %, b on 20 % inside a's errors (the same score at two thresholds):
    Newcombe's interval covers 0.851 at a nominal 0.9, the discordant-pair default at least 0.9."""
    pi = (0.2, 0.1, 0.0, 0.7)
    assert paired_coverage(newcombe_paired, 10, pi, 0.9) == pytest.approx(0.851, abs=0.001)
    assert paired_coverage(discordant_mover, 10, pi, 0.9) >= 0.9


# ------------------------------------------------------------------------------------------------
# The study's sums
# ------------------------------------------------------------------------------------------------

def test_line_scan_against_brute_force_even_for_limits_that_step_back(study) -> None:
    rates = np.array([0.0, 0.003, 0.02, 0.1, 0.35, 0.5])
    scan = study.LineScan(12, 40, rates)
    rng = np.random.default_rng(0)
    shape = (scan.k1.size, scan.k2.size)
    ragged = np.sort(rng.uniform(0, 0.3, shape), axis=1) + rng.uniform(-0.02, 0.02, shape)
    for low, high, x in [(*scan.band("clopper-pearson-mover", 0.3, 0.9), 0.3),
                         (*scan.band("wilson-mover", 0.7, 0.95), 0.7),
                         (ragged, rng.uniform(0.1, 0.6, shape), 0.5)]:   # not monotone at all
        fast = scan.coverage(low, high, x)
        theta = x * rates[:, None] + (1 - x) * rates[None, :]
        inside = (low[None, None] <= theta[:, :, None, None]) & \
            (theta[:, :, None, None] <= high[None, None])
        brute = np.einsum("ia,jb,ijab->ij", scan.w1, scan.w2, inside)
        np.testing.assert_allclose(fast, brute, atol=1e-13)


def test_paired_scans_against_brute_force_and_the_package(study) -> None:
    rng = np.random.default_rng(1)
    assert study.check_combination(rng) < 1e-12
    pi = study.cells(0.3, 0.2, "independent")
    got = study._class_coverage(10, pi, 0.1, (0.9,))
    for method, interval in (("newcombe-mover", newcombe_paired),
                             ("discordant-mover", discordant_mover)):
        assert got[(method, 0.9)] == pytest.approx(paired_coverage(interval, 10, pi, 0.9),
                                                   abs=1e-12)
    # The study's interval of the errors' table is the package's band at PC(+) = 1, which is
    # computed from the positives' *flag* table.
    for _ in range(20):
        errors = rng.multinomial(30, [0.1, 0.15, 0.05, 0.7])
        flags = errors[::-1]          # both flag = neither errs, only a flags = only b errs, ...
        tables = np.zeros((2, 4, 1), dtype=np.int64)
        tables[0, :, 0] = flags
        tables[1, :, 0] = [0, 0, 0, 40]
        for method in ("discordant-mover", "newcombe-mover"):
            d, lo, hi = study.class_interval(method, errors[:, None], 0.9)
            ref = _paired_edges(np.array([1.0]), tables, 0.9, False, None, method)
            np.testing.assert_allclose([d[0], lo[0], hi[0]], [r[0] for r in ref], atol=1e-12)
