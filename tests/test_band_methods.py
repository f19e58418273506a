"""Band methods of issue 12 ("Honest bands"): closed-form intervals against hand computations and
scipy, thresholds selected on a stratified half, labels (calibrated / estimand), refusals, the
double bootstrap, a small coverage smoke test and the dashboard cache round trip."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import stats

from costdash._intervals import clopper_pearson, mover_line, newcombe_paired, wilson
from costdash._selection import flagged_counts, select_thresholds, stratified_half
from costdash.bands import (
    MIN_CALIBRATED_REPLICATES,
    NO_SIGNIFICANCE,
    cost_band,
    difference_band,
)
from costdash.costspace import lower_envelope
from costdash.dataset import CountedClassifier, ScoredClassifier
from costdash.errors import ParameterError
from costdash.hull import classifier_hull
from costdash.roc import roc_curve

Z90 = 1.6448536269514722  # Phi^-1(0.95)


def binormal(rng: np.random.Generator, n: int, prevalence: float = 0.3, d: float = 1.5
             ) -> tuple[np.ndarray, np.ndarray]:
    n_pos = round(prevalence * n)
    y = np.zeros(n, dtype=bool)
    y[:n_pos] = True
    s = rng.standard_normal(n)
    s[:n_pos] += d
    return y, s


# ------------------------------------------------------------------------------------------------
# Closed-form intervals
# ------------------------------------------------------------------------------------------------

def test_wilson_by_hand_and_against_scipy() -> None:
    # 4 / 10 at 90 %, by hand: z^2 / n = 0.270554, centre = (0.4 + 0.135277) / 1.270554,
    # half = z sqrt(0.024 + z^2 / 400) / 1.270554.
    z2n = Z90**2 / 10
    centre = (0.4 + z2n / 2) / (1 + z2n)
    half = Z90 * math.sqrt(0.4 * 0.6 / 10 + Z90**2 / 400) / (1 + z2n)
    lo, hi = wilson(4, 10, 0.9)
    assert lo == pytest.approx(centre - half, abs=1e-15) and lo == pytest.approx(0.194227, abs=1e-6)
    assert hi == pytest.approx(centre + half, abs=1e-15) and hi == pytest.approx(0.648361, abs=1e-6)
    for k, n in [(0, 20), (1, 20), (19, 20), (20, 20), (3, 7), (250, 1000), (0, 1)]:
        for level in (0.8, 0.9, 0.95):
            ref = stats.binomtest(k, n).proportion_ci(confidence_level=level, method="wilson")
            lo, hi = wilson(k, n, level)
            assert (lo, hi) == pytest.approx((ref.low, ref.high), abs=1e-12), (k, n, level)
    # Never zero width, exact ends at 0 and n.
    lo, hi = wilson(np.array([0, 20]), 20, 0.9)
    assert lo[0] == 0.0 and hi[0] > 0.05 and hi[1] == 1.0 and lo[1] < 0.95


def test_clopper_pearson_against_beta_quantiles() -> None:
    for k, n in [(0, 20), (1, 20), (7, 13), (19, 20), (20, 20), (300, 1000)]:
        for level in (0.9, math.sqrt(0.9), 0.99):
            a = 1 - level
            lo, hi = clopper_pearson(k, n, level)
            ref_lo = 0.0 if k == 0 else stats.beta.ppf(a / 2, k, n - k + 1)
            ref_hi = 1.0 if k == n else stats.beta.ppf(1 - a / 2, k + 1, n - k)
            assert lo == pytest.approx(ref_lo, abs=1e-12) and hi == pytest.approx(ref_hi, abs=1e-12)
            exact = stats.binomtest(k, n).proportion_ci(confidence_level=level, method="exact")
            assert (lo, hi) == pytest.approx((exact.low, exact.high), abs=1e-10)


def test_mover_line_by_hand() -> None:
    x = np.array([0.0, 0.3, 1.0])
    lo, hi = mover_line(x, 0.2, 0.1, 0.35, 0.4, 0.25, 0.6)
    theta = x * 0.2 + (1 - x) * 0.4
    np.testing.assert_allclose(lo, theta - np.sqrt((x * 0.1) ** 2 + ((1 - x) * 0.15) ** 2))
    np.testing.assert_allclose(hi, theta + np.sqrt((x * 0.15) ** 2 + ((1 - x) * 0.2) ** 2))
    # At the ends the band is the single rate's interval.
    assert (lo[0], hi[0]) == pytest.approx((0.25, 0.6)) and (lo[-1], hi[-1]) == pytest.approx((0.1, 0.35))


def test_fig11_wilson_mover_band_by_hand() -> None:
    """Paper 000 Fig. 11 matrix (TP 16, FP 4, FN 4, TN 6): FNR 4/20, FPR 4/10 (the old default,
    still selectable by name)."""
    band = cost_band((16, 4, 4, 6), grid=[0.0, 0.5, 1.0], method="wilson-mover")
    l1, u1 = (stats.binomtest(4, 20).proportion_ci(0.9, "wilson").low,
              stats.binomtest(4, 20).proportion_ci(0.9, "wilson").high)
    l2, u2 = (stats.binomtest(4, 10).proportion_ci(0.9, "wilson").low,
              stats.binomtest(4, 10).proportion_ci(0.9, "wilson").high)
    assert band.low[0] == pytest.approx(l2) and band.high[0] == pytest.approx(u2)
    assert band.low[2] == pytest.approx(l1) and band.high[2] == pytest.approx(u1)
    mid = 0.5 * 0.2 + 0.5 * 0.4
    assert band.low[1] == pytest.approx(mid - math.hypot(0.5 * (0.2 - l1), 0.5 * (0.4 - l2)))
    assert band.high[1] == pytest.approx(mid + math.hypot(0.5 * (u1 - 0.2), 0.5 * (u2 - 0.4)))
    # Kept by name, its level not earned where a class expects a fraction of an error.
    assert not band.calibrated and band.estimand.startswith("The population cost line")
    assert band.label.startswith("Wilson–MOVER spread (pointwise; no level:")
    # at_level recomputes from the error counts.
    b95 = band.at_level(0.95)
    assert b95.low[0] == pytest.approx(stats.binomtest(4, 10).proportion_ci(0.95, "wilson").low)


def test_clopper_pearson_rectangle_is_the_simultaneous_band() -> None:
    band = cost_band((16, 4, 4, 6), simultaneous=True, grid=11)
    assert band.method == "clopper-pearson" and band.simultaneous and band.calibrated
    each = math.sqrt(0.9)
    fnr = stats.binomtest(4, 20).proportion_ci(each, "exact")
    fpr = stats.binomtest(4, 10).proportion_ci(each, "exact")
    np.testing.assert_allclose(band.low, band.pc * fnr.low + (1 - band.pc) * fpr.low, atol=1e-12)
    np.testing.assert_allclose(band.high, band.pc * fnr.high + (1 - band.pc) * fpr.high, atol=1e-12)
    assert "whole curve" in band.label
    # method="clopper-pearson" means the same thing.
    np.testing.assert_array_equal(cost_band((16, 4, 4, 6), method="clopper-pearson", grid=11).low,
                                  band.low)
    # Wider than the pointwise band everywhere.
    assert np.all(band.width >= cost_band((16, 4, 4, 6), grid=11).width)


def newcombe_by_hand(n11: int, n10: int, n01: int, n00: int, level: float):
    n = n11 + n10 + n01 + n00
    p1, p2 = (n11 + n10) / n, (n11 + n01) / n
    c1 = stats.binomtest(n11 + n10, n).proportion_ci(level, "wilson")
    c2 = stats.binomtest(n11 + n01, n).proportion_ci(level, "wilson")
    den = (n11 + n10) * (n01 + n00) * (n11 + n01) * (n10 + n00)
    phi = (n11 * n00 - n10 * n01) / math.sqrt(den) if den else 0.0
    d = p1 - p2
    lo = d - math.sqrt((p1 - c1.low) ** 2 - 2 * phi * (p1 - c1.low) * (c2.high - p2)
                       + (c2.high - p2) ** 2)
    hi = d + math.sqrt((c1.high - p1) ** 2 - 2 * phi * (c1.high - p1) * (p2 - c2.low)
                       + (p2 - c2.low) ** 2)
    return d, lo, hi


@pytest.mark.parametrize("table", [(30, 8, 2, 60), (0, 3, 0, 17), (12, 0, 0, 8), (5, 5, 5, 5)])
def test_newcombe_paired_by_hand(table) -> None:
    d, lo, hi = newcombe_paired(*table, 0.9)
    ref = newcombe_by_hand(*table, 0.9)
    assert (float(d), float(lo), float(hi)) == pytest.approx(ref, abs=1e-12)
    assert lo <= d <= hi


def test_newcombe_paired_coverage_smoke() -> None:
    """Paired flags with correlation: the interval covers about its level (400 draws)."""
    rng = np.random.default_rng(0)
    probs = np.array([0.25, 0.10, 0.05, 0.60])          # n11, n10, n01, n00
    truth = (probs[0] + probs[1]) - (probs[0] + probs[2])
    tables = rng.multinomial(60, probs, size=400).T
    _, lo, hi = newcombe_paired(*tables, 0.9)
    assert 0.84 <= np.mean((lo <= truth) & (truth <= hi)) <= 0.97


# ------------------------------------------------------------------------------------------------
# Thresholds selected on a stratified half
# ------------------------------------------------------------------------------------------------

def test_split_is_stratified_and_reproducible() -> None:
    rng = np.random.default_rng(1)
    y, s = binormal(rng, 301, prevalence=0.3)
    n_pos, n_neg = int(y.sum()), int((~y).sum())
    mask = stratified_half(y, np.random.default_rng(5), "x")
    assert np.count_nonzero(mask & y) == n_pos // 2 and np.count_nonzero(mask & ~y) == n_neg // 2
    np.testing.assert_array_equal(mask, stratified_half(y, np.random.default_rng(5), "x"))
    assert not np.array_equal(mask, stratified_half(y, np.random.default_rng(6), "x"))
    band = cost_band((y, s), select="split", rng=5)
    assert (band.n_pos, band.n_neg) == (n_pos - n_pos // 2, n_neg - n_neg // 2)
    assert band.kind == "selected" and band.selection == "split" and band.calibrated
    assert band.method == "clopper-pearson-mover" and band.replicates == 0
    again = cost_band((y, s), select="split", rng=5)
    np.testing.assert_array_equal(again.thresholds, band.thresholds)
    np.testing.assert_array_equal(again.low, band.low)
    other = cost_band((y, s), select="split", rng=6)
    assert not np.array_equal(other.thresholds, band.thresholds)
    # The thresholds are those of the selection half, the counts those of the other half.
    np.testing.assert_array_equal(band.thresholds, select_thresholds(y[mask], s[mask], band.pc))
    held = ~mask
    fn = band.n_pos - flagged_counts(s[held & y], band.thresholds)
    np.testing.assert_array_equal(band.error_counts[0], fn)
    with pytest.raises(ParameterError, match="at least 2 positive"):
        cost_band((np.array([1, 0, 0, 0], bool), np.arange(4.0)), select="split")


def test_selected_thresholds_are_the_envelope_vertices_of_the_selection_rows() -> None:
    rng = np.random.default_rng(2)
    y, s = binormal(rng, 400)
    s = np.round(s, 1)                                      # ties
    pc = np.linspace(0, 1, 101)
    thr = select_thresholds(y, s, pc)
    # The selected thresholds' own cost on these rows is the lower envelope of these rows.
    tp = flagged_counts(s[y], thr)
    fp = flagged_counts(s[~y], thr)
    cost = (1 - tp / y.sum()) * pc + fp / (~y).sum() * (1 - pc)
    env = lower_envelope(classifier_hull(roc_curve(y, s)))(pc)
    np.testing.assert_allclose(cost, env, atol=1e-13)
    assert thr[0] == np.inf                                 # PC(+) = 0: flag nothing
    assert np.all(np.diff(thr) <= 0)                        # higher PC(+), lower threshold
    # A classifier that is never better than the trivial ones flags nothing or everything.
    flat = select_thresholds(y, np.zeros(y.size), pc)
    assert set(np.unique(flat)) <= {np.inf, -np.inf, 0.0}
    assert flat[10] == np.inf and flat[-10] in (-np.inf, 0.0)


def test_validation_rows_select_and_the_classifier_rows_are_banded() -> None:
    rng = np.random.default_rng(3)
    y, s = binormal(rng, 500)
    yv, sv = binormal(rng, 300)
    band = cost_band(ScoredClassifier("m", y, s), select=(yv, sv))
    assert band.selection == "validation" and (band.n_pos, band.n_neg) == (150, 350)
    np.testing.assert_array_equal(band.thresholds, select_thresholds(yv, sv, band.pc))
    assert "validation rows" in band.estimand and "validation rows" in band.label
    # The trivial thresholds' costs are known exactly: zero width there.
    trivial = ~np.isfinite(band.thresholds)
    assert trivial.any() and np.all(band.width[trivial] == 0)
    assert np.all(band.width[~trivial] > 0)
    whole = cost_band(ScoredClassifier("m", y, s), select=(yv, sv), simultaneous=True)
    assert whole.method == "clopper-pearson" and np.all(whole.width >= band.width - 1e-15)
    with pytest.raises(ParameterError, match="validation"):
        cost_band((y, s), select=(yv,))
    with pytest.raises(ParameterError, match="select"):
        cost_band((y, s), select="halves")


# ------------------------------------------------------------------------------------------------
# Labels, significance and refusals
# ------------------------------------------------------------------------------------------------

def test_uncalibrated_bands_have_no_level_and_no_significant_ranges() -> None:
    rng = np.random.default_rng(4)
    y, s = binormal(rng, 600)
    worse = np.where(s >= 0.75, 1.0, 0.0)                   # the same score, thresholded
    spread = cost_band((y, s), replicates=50, rng=0)
    assert not spread.calibrated and spread.method == "percentile" and spread.kind == "curve"
    assert "%" not in spread.label and "no confidence level" in spread.label
    assert spread.estimand.startswith("None:")
    envelope = difference_band((y, s), (y, worse), replicates=50, rng=0)
    assert not envelope.calibrated and envelope.significant == ()
    assert envelope.significance_note == NO_SIGNIFICANCE
    assert envelope.at_level(0.2).significant == ()        # even with a very low level
    paired = difference_band((y, s), (y, worse), threshold=0.75, method="percentile",
                             replicates=300, rng=0)
    assert not paired.calibrated and paired.significant == () and paired.kind == "line"
    assert np.all(paired.curves == 0)                      # the same predictions at 0.75 and 0.5
    fixed = difference_band((y, s), (y, worse), threshold=(0.75, 0.5))
    assert fixed.calibrated and fixed.significant == () and np.all(fixed.diff == 0)
    assert np.all(fixed.low <= 0) and np.all(fixed.high >= 0)


def test_pooled_folds_are_labelled() -> None:
    rng = np.random.default_rng(5)
    y, s = binormal(rng, 200)
    folds = np.arange(200) % 5
    band = cost_band(ScoredClassifier("m", y, s, fold=folds), threshold=0.5)
    assert "pooled" in band.estimand
    assert "pooled" not in cost_band(ScoredClassifier("m", y, s), threshold=0.5).estimand


@pytest.mark.parametrize("kwargs, match", [
    ({"method": "double-bootstrap", "replicates": MIN_CALIBRATED_REPLICATES - 1}, "at least 200"),
    ({"method": "double-bootstrap", "replicates": 1}, "at least 200"),
    ({"method": "double-bootstrap", "threshold": 0.5}, "whole envelope"),
    ({"method": "double-bootstrap", "select": "split"}, "whole envelope"),
    ({"simultaneous": True}, "fixed threshold"),
    ({"method": "wilson-mover"}, "fixed threshold"),
    ({"method": "percentile", "select": "split"}, "not available"),
    ({"method": "percentile", "threshold": 0.5, "simultaneous": True}, "pointwise"),
    ({"select": "split", "threshold": 0.5}, "not both"),
    ({"method": "bca"}, "method must be one of"),
    ({"method": "double-bootstrap", "replicates": 200, "inner_replicates": 5}, "inner_replicates"),
    ({"simultaneous": "yes"}, "simultaneous"),
])
def test_refusals(kwargs, match) -> None:
    rng = np.random.default_rng(6)
    y, s = binormal(rng, 100)
    with pytest.raises(ParameterError, match=match):
        cost_band((y, s), **kwargs)


def test_refusals_of_differences_and_matrices() -> None:
    rng = np.random.default_rng(7)
    y, s = binormal(rng, 100)
    with pytest.raises(ParameterError, match="re-tuned envelopes"):
        difference_band((y, s), (y, -s), simultaneous=True)
    with pytest.raises(ParameterError, match="re-tuned envelopes"):
        difference_band((y, s), (y, -s), method="newcombe-mover")
    with pytest.raises(ParameterError, match="not available"):
        difference_band((y, s), (y, -s), select="split", method="percentile")
    with pytest.raises(ParameterError, match="one number"):
        difference_band((y, s), (y, -s), threshold=(1.0, 2.0, 3.0))
    with pytest.raises(ParameterError, match="validation"):
        difference_band((y, s), (y, -s), select=(y, s))
    counted = CountedClassifier("c", tp=np.array([3]), fp=np.array([1]), fn=np.array([0]),
                                tn=np.array([1]))
    with pytest.raises(ParameterError, match="scoring classifier"):
        cost_band(counted, select="split")
    with pytest.raises(ParameterError, match="scoring classifier"):
        cost_band((3, 1, 0, 1), select="split")
    # An uncalibrated spread may still use few replicates.
    assert cost_band((y, s), replicates=1, rng=0).replicates == 1


# ------------------------------------------------------------------------------------------------
# Double bootstrap
# ------------------------------------------------------------------------------------------------

def test_double_bootstrap_band() -> None:
    rng = np.random.default_rng(8)
    y, s = binormal(rng, 300)
    band = cost_band((y, s), method="double-bootstrap", replicates=200, inner_replicates=40,
                     rng=1, grid=21)
    assert band.calibrated and band.method == "double-bootstrap" and band.kind == "curve"
    assert band.curves.shape == (200, 21) and band.calibration.shape == (200, 21)
    assert band.inner_replicates == 40 and "approximate" in band.label
    assert np.all((band.calibration >= 0) & (band.calibration <= 1))
    assert np.all(band.low <= band.high)
    assert np.all(band.high <= np.minimum(band.pc, 1 - band.pc) + 1e-15) and np.all(band.low >= 0)
    # The basic interval moves up against the envelope's downward bias: its centre is above the
    # percentile spread's in the middle of the range.
    spread = cost_band((y, s), replicates=200, rng=1, grid=21)
    np.testing.assert_array_equal(spread.curves, band.curves)   # the same outer replicates
    mid = slice(4, 17)
    assert np.mean((band.low + band.high)[mid]) > np.mean((spread.low + spread.high)[mid])
    # at_level re-calibrates from the stored positions; the same level gives the same band.
    np.testing.assert_array_equal(band.at_level(0.9).low, band.low)
    wider = band.at_level(0.98)
    assert np.all(wider.low <= band.low + 1e-15) and np.all(wider.high >= band.high - 1e-15)
    again = cost_band((y, s), method="double-bootstrap", replicates=200, inner_replicates=40,
                      rng=1, grid=21)
    np.testing.assert_array_equal(again.calibration, band.calibration)


# ------------------------------------------------------------------------------------------------
# Coverage smoke test (the full study is studies/band_coverage.py)
# ------------------------------------------------------------------------------------------------

def test_coverage_smoke_fixed_and_selected() -> None:
    """200 simulated test sets of n = 1000: the default bands cover about 0.9 (wide tolerance)."""
    from scipy.special import ndtr

    d, t0 = 1.5, 0.75
    pc = np.array([0.1, 0.3, 0.5, 0.7, 0.9])
    truth = ndtr(t0 - d) * pc + ndtr(-t0) * (1 - pc)
    data = np.random.default_rng(np.random.SeedSequence(9).spawn(2)[0])
    split = np.random.default_rng(np.random.SeedSequence(9).spawn(2)[1])
    fixed_hits = np.zeros(pc.size)
    selected_hits = np.zeros(pc.size)
    sets = 200
    for _ in range(sets):
        y, s = binormal(data, 1000, d=d)
        fixed_hits += cost_band((y, s), threshold=t0, grid=pc).covers(truth)
        sel = cost_band((y, s), select="split", rng=split, grid=pc)
        t = sel.thresholds
        sel_truth = ndtr(t - d) * pc + ndtr(-t) * (1 - pc)
        selected_hits += sel.covers(sel_truth)
    assert 0.84 <= fixed_hits.mean() / sets <= 0.96
    assert 0.84 <= selected_hits.mean() / sets <= 0.96


# ------------------------------------------------------------------------------------------------
# The dashboard's band cache keeps every new field (dashboard/jobs/bandcache.py encode/decode)
# ------------------------------------------------------------------------------------------------

def test_new_bands_round_trip_through_the_dashboard_cache_format() -> None:
    jobs = pytest.importorskip("dashboard.jobs.bandcache")
    rng = np.random.default_rng(10)
    y, s = binormal(rng, 400)
    s2 = np.round(s + rng.normal(size=400), 1)
    bands = [cost_band((y, s), select="split", rng=1),
             cost_band((y, s), threshold=0.7, simultaneous=True),
             cost_band((y, s), method="double-bootstrap", replicates=200, inner_replicates=20,
                       rng=1, grid=11),
             difference_band((y, s), (y, s2), select="split", rng=2),
             difference_band((y, s), (y, s2), threshold=(0.7, 0.5), simultaneous=True),
             difference_band((y, s), (y, s2), replicates=30, rng=1)]
    for band in bands:
        back = jobs.decode_band(jobs.encode_band(band))
        for name, value in vars(band).items():
            if isinstance(value, np.ndarray):
                np.testing.assert_array_equal(getattr(back, name), value)
            else:
                assert getattr(back, name) == value, name
        np.testing.assert_array_equal(back.at_level(0.5).low, band.at_level(0.5).low)
        assert back.label == band.label
