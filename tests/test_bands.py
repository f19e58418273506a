"""Bootstrap cost-curve bands (paper 000 §8-9): exactness of the vectorised resampler against a
plain loop, the paper's Fig. 11 case, paired differences, options, validation, CLI and study."""

from __future__ import annotations

import importlib.util
import json
import math
import sys
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import stats
from strategies import labelled_scores

import costdash
from costdash.bands.engine import (
    _cumulative,
    _envelopes,
    _full_data_envelope,
    _JointClass,
    _superbins_of_scores,
)
from costdash.bands.sampler import _Multinomial
from costdash.bands import (
    MAX_REPLICATES,
    NO_SIGNIFICANCE,
    CostBand,
    DifferenceBand,
    SignificantInterval,
    confidence_ranks,
    cost_band,
    difference_band,
)
from costdash.cli import main as cli_main
from costdash.costspace import lower_envelope
from costdash.dataset import CountedClassifier, ScoredClassifier
from costdash.errors import ParameterError
from costdash.hull import classifier_hull
from costdash.roc import RocCurve, roc_curve

ROOT = Path(__file__).resolve().parents[1]
GRID = np.linspace(0.0, 1.0, 201)


def loop_envelope(y: np.ndarray, s: np.ndarray, multiplicity: np.ndarray) -> np.ndarray:
    """Reference: expand the resampled rows, then the core's roc_curve, hull, envelope."""
    idx = np.repeat(np.arange(y.size), multiplicity)
    return lower_envelope(classifier_hull(roc_curve(y[idx], s[idx])))(GRID)


def row_multiplicities(y: np.ndarray, b: int, rng: np.random.Generator) -> np.ndarray:
    """(b, n) stratified bootstrap multiplicities: class totals fixed."""
    out = np.zeros((b, y.size), dtype=np.int64)
    for cls in (True, False):
        rows = np.flatnonzero(y == cls)
        out[:, rows] = rng.multinomial(rows.size, np.full(rows.size, 1.0 / rows.size), size=b)
    return out


def vectorised_envelopes(y: np.ndarray, s: np.ndarray, mult: np.ndarray) -> np.ndarray:
    """The production geometry fed with given row multiplicities (aggregated to super-bins)."""
    sb = _superbins_of_scores("x", y, s, with_rows=True)
    k = sb.k
    dy = np.stack([np.bincount(sb.of_row[y], weights=m[y], minlength=k) for m in mult])
    dx = np.stack([np.bincount(sb.of_row[~y], weights=m[~y], minlength=k) for m in mult])
    return _envelopes(_cumulative(dx.astype(np.int64), np.int32),
                      _cumulative(dy.astype(np.int64), np.int32),
                      sb.n_pos, sb.n_neg, sb.anchors, GRID)


def random_scores(rng: np.random.Generator, n: int) -> tuple[np.ndarray, np.ndarray]:
    y = rng.random(n) < rng.uniform(0.2, 0.8)
    y[:2] = (True, False)
    s = rng.normal(size=n) + y * rng.uniform(0.0, 2.0)
    return y, np.round(s, int(rng.integers(0, 3)))  # 0-2 decimals: from heavy ties to none


# ------------------------------------------------------------------------------------------------
# Exactness of the vectorised pipeline
# ------------------------------------------------------------------------------------------------

def test_full_data_envelope_equals_core() -> None:
    rng = np.random.default_rng(0)
    for _ in range(40):
        y, s = random_scores(rng, int(rng.integers(2, 300)))
        sb = _superbins_of_scores("x", y, s)
        ref = lower_envelope(classifier_hull(roc_curve(y, s)))(GRID)
        np.testing.assert_allclose(_full_data_envelope(sb, GRID), ref, rtol=0, atol=1e-13)


def test_replicate_envelopes_equal_plain_loop() -> None:
    """Same multiplicities: vectorised super-bins + bulk filter + batched hull == loop, B = 20."""
    rng = np.random.default_rng(1)
    for _ in range(25):
        y, s = random_scores(rng, int(rng.integers(4, 120)))
        mult = row_multiplicities(y, 20, rng)
        got = vectorised_envelopes(y, s, mult)
        ref = np.stack([loop_envelope(y, s, m) for m in mult])
        np.testing.assert_allclose(got, ref, rtol=0, atol=1e-13)


@settings(max_examples=40, deadline=None)
@given(data=labelled_scores(min_n=2, max_n=40), seed=st.integers(0, 2**32 - 1))
def test_replicate_envelopes_equal_plain_loop_hypothesis(data, seed) -> None:
    y, s = data
    mult = row_multiplicities(y, 5, np.random.default_rng(seed))
    got = vectorised_envelopes(y, s, mult)
    ref = np.stack([loop_envelope(y, s, m) for m in mult])
    np.testing.assert_allclose(got, ref, rtol=0, atol=1e-12)


def test_paired_cumulative_counts_equal_plain_loop() -> None:
    """Joint (a, b) categories give each classifier exactly its own resampled envelope."""
    rng = np.random.default_rng(2)
    for _ in range(10):
        n = int(rng.integers(6, 80))
        y, sa = random_scores(rng, n)
        sb_scores = np.round(sa + rng.normal(size=n), 1)
        sa_, sb_ = (_superbins_of_scores(nm, y, sc, with_rows=True)
                    for nm, sc in (("a", sa), ("b", sb_scores)))
        mult = row_multiplicities(y, 15, rng)
        envs = []
        for cls_rows in (y, ~y):
            joint = _JointClass.of(sa_.of_row[cls_rows], sb_.of_row[cls_rows], sa_.k, sb_.k)
            key = sa_.of_row[cls_rows].astype(np.int64) * sb_.k + sb_.of_row[cls_rows]
            _, pair = np.unique(key, return_inverse=True)
            counts = np.stack([np.bincount(pair, weights=m[cls_rows], minlength=joint.size)
                               for m in mult]).astype(np.int64)
            envs.append(joint.cumulative(counts, np.int32))
        (tp_a, tp_b), (fp_a, fp_b) = envs
        env_a = _envelopes(fp_a, tp_a, sa_.n_pos, sa_.n_neg, sa_.anchors, GRID)
        env_b = _envelopes(fp_b, tp_b, sb_.n_pos, sb_.n_neg, sb_.anchors, GRID)
        ref_a = np.stack([loop_envelope(y, sa, m) for m in mult])
        ref_b = np.stack([loop_envelope(y, sb_scores, m) for m in mult])
        np.testing.assert_allclose(env_a, ref_a, rtol=0, atol=1e-13)
        np.testing.assert_allclose(env_b, ref_b, rtol=0, atol=1e-13)


def test_many_hull_vertices_thinned_chords_stay_exact() -> None:
    """A full-data hull with > 512 vertices: every other vertex is a chord end; still exact."""
    m = 1100
    j = np.arange(m)
    pos, neg = m - j, j + 1                        # slopes pos/neg strictly decrease: all on hull
    y = np.repeat(np.tile([True, False], m), np.column_stack((pos, neg)).ravel())
    s = np.repeat(-j.astype(float), pos + neg)
    sb = _superbins_of_scores("x", y, s)
    assert sb.k == m and sb.anchors.columns.size - 1 <= 512
    rng = np.random.default_rng(5)
    dy = rng.multinomial(sb.n_pos, sb.pos_weights / sb.n_pos, size=6)
    dx = rng.multinomial(sb.n_neg, sb.neg_weights / sb.n_neg, size=6)
    tp, fp = _cumulative(dy, np.int32), _cumulative(dx, np.int32)
    got = _envelopes(fp, tp, sb.n_pos, sb.n_neg, sb.anchors, GRID)
    for r in range(6):
        roc = RocCurve("x", tp[r].astype(np.int64), fp[r].astype(np.int64),
                       np.full(m + 1, np.nan), sb.n_pos, sb.n_neg)
        ref = lower_envelope(classifier_hull(roc))(GRID)
        np.testing.assert_allclose(got[r], ref, rtol=0, atol=1e-13)


@pytest.mark.parametrize("weights", [
    [1, 2, 3, 5, 8, 30, 400, 0, 100],     # Poisson path, with a large mean and an empty category
    [3, 0, 4, 2],                          # small total: unit-by-unit path
    [0, 0, 700, 0],                        # one category holds everything
])
def test_multinomial_sampler_is_multinomial(weights) -> None:
    w = np.asarray(weights, dtype=np.int64)
    total = int(w.sum())
    sampler = _Multinomial(w)
    draws = sampler.draw(np.random.default_rng(3), 20_000)
    assert draws.shape == (20_000, w.size)
    assert np.all(draws.sum(axis=1) == total)
    assert np.all(draws[:, w == 0] == 0)
    p = w / total
    for j in np.flatnonzero((w > 0) & (w < total)):
        # Marginal of category j is Binomial(total, p_j): chi-square on its central values.
        values = draws[:, j]
        support = np.arange(values.max() + 1)
        expected = stats.binom.pmf(support, total, p[j]) * values.size
        observed = np.bincount(values, minlength=support.size).astype(float)
        big = expected >= 20
        obs = np.r_[observed[big], observed[~big].sum()]
        exp = np.r_[expected[big], values.size - expected[big].sum()]
        stat = float(((obs - exp) ** 2 / exp).sum())
        assert stats.chi2.sf(stat, obs.size - 1) > 1e-4, (j, stat)
    if np.count_nonzero(w) > 2:
        i, j = np.flatnonzero(w)[:2]
        expected_corr = -math.sqrt(p[i] * p[j] / ((1 - p[i]) * (1 - p[j])))
        assert abs(np.corrcoef(draws[:, i], draws[:, j])[0, 1] - expected_corr) < 0.03


# ------------------------------------------------------------------------------------------------
# One confusion matrix: paper 000 Fig. 11
# ------------------------------------------------------------------------------------------------

def test_fig11_binomial_band() -> None:
    """Paper 000 Fig. 11 with the paper's method (percentile bootstrap, labelled uncalibrated)."""
    band = cost_band((16, 4, 4, 6), replicates=4000, rng=11, method="percentile")
    assert isinstance(band, CostBand) and band.kind == "line"
    assert band.method == "percentile" and not band.calibrated and "no confidence level" in band.label
    assert (band.tpr, band.fpr, band.n_pos, band.n_neg) == (0.8, 0.4, 20, 10)
    tpr_star = 1.0 - band.curves[:, -1]           # NE(1) = 1 - TPR*
    fpr_star = band.curves[:, 0]                  # NE(0) = FPR*
    assert abs(tpr_star.mean() - 0.8) < 0.01
    assert abs(fpr_star.mean() - 0.4) < 0.01
    assert abs(tpr_star.var() - 0.8 * 0.2 / 20) < 0.001      # binomial rows, totals fixed
    assert abs(fpr_star.var() - 0.4 * 0.6 / 10) < 0.003
    np.testing.assert_allclose(band.cost, 0.2 * GRID + 0.4 * (1 - GRID), atol=1e-15)
    assert band.covers(band.cost).all()
    # Ten times the examples, same rates: a narrower band everywhere.
    big = cost_band((160, 40, 40, 60), replicates=4000, rng=11, method="percentile")
    assert np.all(big.width < band.width)
    assert big.covers(big.cost).all()
    # The default for a fixed matrix: closed-form Clopper-Pearson-MOVER, calibrated, no resampling.
    default = cost_band((16, 4, 4, 6))
    assert default.method == "clopper-pearson-mover" and default.calibrated
    assert default.replicates == 0
    assert default.curves.shape == (0, 201) and default.covers(default.cost).all()
    np.testing.assert_allclose(default.cost, band.cost, atol=1e-15)


def test_counted_classifier_inputs() -> None:
    one = CountedClassifier("d", tp=np.array([16]), fp=np.array([4]), fn=np.array([4]),
                            tn=np.array([6]))
    a = cost_band(one, replicates=300, rng=5, method="percentile")
    b = cost_band((16, 4, 4, 6), replicates=300, rng=5, name="d", method="percentile")
    np.testing.assert_array_equal(a.curves, b.curves)
    assert a.name == "d"
    a, b = cost_band(one), cost_band((16, 4, 4, 6), name="d")
    np.testing.assert_array_equal(a.low, b.low)
    np.testing.assert_array_equal(a.high, b.high)
    several = CountedClassifier("m", tp=np.array([16, 18]), fp=np.array([4, 6]),
                                fn=np.array([4, 2]), tn=np.array([6, 4]),
                                threshold=np.array([0.5, 0.3]))
    with pytest.raises(ParameterError, match="threshold"):
        cost_band(several)
    picked = cost_band(several, threshold=0.3, replicates=100, rng=0)
    assert (picked.tpr, picked.fpr, picked.threshold) == (0.9, 0.6, 0.3)
    with pytest.raises(ParameterError, match="no confusion matrix at threshold"):
        cost_band(several, threshold=0.4)


def test_fixed_threshold_band_of_scores() -> None:
    rng = np.random.default_rng(4)
    y = rng.random(500) < 0.3
    s = rng.normal(size=500) + 1.5 * y
    band = cost_band((y, s), threshold=0.75, replicates=2000, rng=1, method="percentile")
    assert band.kind == "line" and band.threshold == 0.75
    tpr = np.mean(s[y] >= 0.75)
    fpr = np.mean(s[~y] >= 0.75)
    assert band.tpr == pytest.approx(tpr) and band.fpr == pytest.approx(fpr)
    assert abs((1 - band.curves[:, -1]).mean() - tpr) < 0.01
    assert band.covers(band.cost).all()
    # The RocCurve of the same scores gives the same point.
    via_roc = cost_band(roc_curve(y, s), threshold=0.75, replicates=2000, rng=1,
                        method="percentile")
    np.testing.assert_array_equal(via_roc.curves, band.curves)
    closed = cost_band((y, s), threshold=0.75)
    assert closed.method == "clopper-pearson-mover" and closed.threshold == 0.75
    assert closed.tpr == pytest.approx(tpr) and closed.covers(closed.cost).all()
    np.testing.assert_array_equal(cost_band(roc_curve(y, s), threshold=0.75).low, closed.low)


# ------------------------------------------------------------------------------------------------
# Scoring classifier: whole-curve band
# ------------------------------------------------------------------------------------------------

@pytest.fixture(scope="module")
def scored() -> ScoredClassifier:
    rng = np.random.default_rng(7)
    y = rng.random(3000) < 0.3
    return ScoredClassifier("clf", y, rng.normal(size=3000) + 1.5 * y)


def test_curve_band_basic_properties(scored) -> None:
    band = cost_band(scored, replicates=400, rng=0)
    assert band.kind == "curve" and band.name == "clf"
    assert band.curves.shape == (400, 201) and band.replicates == 400
    assert band.pc[0] == 0.0 and band.pc[-1] == 1.0
    ref = lower_envelope(classifier_hull(roc_curve(scored.y_true, scored.score)))(band.pc)
    np.testing.assert_allclose(band.cost, ref, atol=1e-13)
    # Every replicate is an envelope: 0 at both ends, never above the trivial classifiers.
    assert np.all(band.curves[:, [0, -1]] == 0)
    assert np.all(band.curves <= np.minimum(band.pc, 1 - band.pc) + 1e-15)
    assert np.all(band.low <= band.high)
    assert band.covers(band.cost)[1:-1].mean() > 0.9
    # At the ends the band is exactly 0.
    assert band.low[0] == band.high[0] == 0 and band.low[-1] == band.high[-1] == 0


def test_curve_band_width_shrinks_with_n() -> None:
    rng = np.random.default_rng(8)
    widths = []
    for n in (300, 3000, 30000):
        y = rng.random(n) < 0.3
        s = rng.normal(size=n) + 1.5 * y
        widths.append(cost_band((y, s), replicates=300, rng=1).width[20:181].mean())
    assert widths[0] > 2 * widths[1] > 4 * widths[2]


def test_roc_curve_input_equals_scores_input(scored) -> None:
    a = cost_band(scored, replicates=50, rng=3)
    b = cost_band(roc_curve(scored.y_true, scored.score, name="clf"), replicates=50, rng=3)
    np.testing.assert_array_equal(a.curves, b.curves)
    with pytest.raises(ParameterError, match="ROC curve"):
        cost_band(costdash.roc_from_counts([3, 5], [1, 4], [7, 5], [9, 6]))


def test_seed_reproducibility(scored) -> None:
    a = cost_band(scored, replicates=100, rng=42)
    b = cost_band(scored, replicates=100, rng=42)
    c = cost_band(scored, replicates=100, rng=43)
    np.testing.assert_array_equal(a.curves, b.curves)
    assert not np.array_equal(a.curves, c.curves)
    d = cost_band(scored, replicates=100, rng=np.random.default_rng(42))
    np.testing.assert_array_equal(a.curves, d.curves)
    e = difference_band(scored, scored, replicates=20, rng=1)
    f = difference_band(scored, scored, replicates=20, rng=1)
    np.testing.assert_array_equal(e.curves, f.curves)


def test_at_level_reuses_replicates(scored) -> None:
    band = cost_band(scored, replicates=200, rng=0)
    wider = band.at_level(0.98)
    assert wider.curves is band.curves and wider.level == 0.98
    assert np.all(wider.low <= band.low) and np.all(wider.high >= band.high)
    assert np.any(wider.width > band.width)
    same = band.at_level(0.9)
    np.testing.assert_array_equal(same.low, band.low)
    np.testing.assert_array_equal(same.high, band.high)
    lb, ub = confidence_ranks(0.9, 200)
    assert (lb, ub) == (11, 190)
    ordered = np.sort(band.curves, axis=0)
    np.testing.assert_array_equal(band.low, ordered[lb - 1])
    np.testing.assert_array_equal(band.high, ordered[ub - 1])
    assert confidence_ranks(0.9, 100) == (6, 95)
    with pytest.raises(ParameterError):
        band.at_level(1.0)


def test_progress_batches_and_bounded_batch(scored) -> None:
    calls: list[tuple[int, int]] = []
    band = cost_band(scored, replicates=100, rng=0, max_batch_elements=4096,
                     progress=lambda done, total: calls.append((done, total)))
    assert len(calls) > 3
    assert calls[-1] == (100, 100)
    assert all(t == 100 for _, t in calls)
    assert [d for d, _ in calls] == sorted({d for d, _ in calls})
    assert band.curves.shape == (100, 201)
    calls.clear()
    difference_band(scored, scored, replicates=30, rng=0, max_batch_elements=4096,
                    progress=lambda done, total: calls.append((done, total)))
    assert calls[-1] == (30, 30) and len(calls) > 1


def test_custom_grid(scored) -> None:
    band = cost_band(scored, replicates=50, rng=0, grid=[0.1, 0.5, 0.9])
    full = cost_band(scored, replicates=50, rng=0)
    np.testing.assert_allclose(band.curves, full.curves[:, [20, 100, 180]], atol=1e-15)
    assert cost_band(scored, replicates=5, rng=0, grid=11).pc.size == 11


def test_large_n_small_batches() -> None:
    rng = np.random.default_rng(9)
    n = 200_000
    y = rng.random(n) < 0.1
    s = rng.normal(size=n) + 2.0 * y
    band = cost_band((y, s), replicates=20, rng=0, max_batch_elements=1 << 16)
    assert band.covers(band.cost)[10:191].mean() > 0.8
    assert band.width[100] < 0.02


# ------------------------------------------------------------------------------------------------
# Difference of two classifiers
# ------------------------------------------------------------------------------------------------

def test_identical_classifiers_difference_is_exactly_zero(scored) -> None:
    d = difference_band(scored, scored, replicates=100, rng=0)
    assert isinstance(d, DifferenceBand)
    assert np.all(d.curves == 0) and np.all(d.diff == 0)
    assert np.all(d.low == 0) and np.all(d.high == 0)
    assert d.significant == ()


def _correlated_pair(rng, n, noise):
    """Two classifiers with the same score distribution per class; correlation set by ``noise``."""
    y = rng.random(n) < 0.4
    common = rng.normal(size=n)
    w = 1.0 / math.sqrt(1 + noise**2)
    a = (common + noise * rng.normal(size=n)) * w + 1.2 * y
    b = (common + noise * rng.normal(size=n)) * w + 1.2 * y
    return y, a, b


def test_correlated_pairs_give_narrower_bands() -> None:
    """Paper 000 Fig. 13 vs 14: same marginal performance, less correlation -> wider band."""
    rng = np.random.default_rng(10)
    y, a, b = _correlated_pair(rng, 2000, 0.2)      # correlation ~0.96
    y2, a2, b2 = _correlated_pair(rng, 2000, 3.0)   # correlation ~0.1
    high = difference_band((y, a), (y, b), replicates=300, rng=1)
    low = difference_band((y2, a2), (y2, b2), replicates=300, rng=1)
    inner = slice(20, 181)
    assert high.width[inner].mean() < 0.5 * low.width[inner].mean()
    # Resampling the two independently (ignoring the pairing) would be as wide as uncorrelated.
    ca = cost_band((y, a), replicates=300, rng=2).curves
    cb = cost_band((y, b), replicates=300, rng=3).curves
    unpaired = np.percentile(ca - cb, 95, axis=0) - np.percentile(ca - cb, 5, axis=0)
    assert high.width[inner].mean() < 0.5 * unpaired[inner].mean()


def test_envelope_difference_has_no_significance_selected_difference_does() -> None:
    rng = np.random.default_rng(12)
    n = 3000
    y = rng.random(n) < 0.4
    z = rng.normal(size=n)
    good = ScoredClassifier("good", y, z + 2.0 * y)
    bad = ScoredClassifier("bad", y, 0.6 * z + 0.8 * rng.normal(size=n) + 0.8 * y)
    # Re-tuned envelopes: an exploratory spread, never significant ranges (not a valid test).
    d = difference_band(good, bad, replicates=300, rng=0)
    assert d.a == "good" and d.b == "bad" and d.kind == "envelope"
    assert not d.calibrated and d.significant == () and d.significance_note == NO_SIGNIFICANCE
    assert np.all(d.diff[1:-1] < 0) and np.all(d.high[20:181] < 0)
    assert d.at_level(0.5).significant == ()
    # Thresholds selected on a stratified half, the paired difference banded on the other half.
    s = difference_band(good, bad, select="split", rng=0)
    assert s.calibrated and s.kind == "selected" and s.method == "discordant-mover"
    assert s.selection == "split" and s.thresholds.shape == (2, 201) and s.significance_note == ""
    main = max(s.significant, key=lambda r: r.hi - r.lo)
    assert isinstance(main, SignificantInterval) and main.better == "good"
    assert main.lo < 0.1 and main.hi > 0.9
    inside = (s.pc >= main.lo) & (s.pc <= main.hi)
    assert np.all(s.high[inside] < 0)
    assert all(r.better == "good" for r in s.significant)
    # Same seed, same split: the reverse difference is the negated one.
    reverse = difference_band(bad, good, select="split", rng=0)
    np.testing.assert_allclose(reverse.diff, -s.diff, atol=1e-15)
    assert {r.better for r in reverse.significant} == {"good"}
    # A stricter level can only shrink the significant ranges; at_level recomputes them.
    strict = s.at_level(0.999)
    assert sum(r.hi - r.lo for r in strict.significant) <= sum(r.hi - r.lo for r in s.significant)
    # The simultaneous version is wider everywhere and its ranges are fewer.
    whole = difference_band(good, bad, select="split", rng=0, simultaneous=True)
    assert whole.simultaneous and np.all(whole.width >= s.width - 1e-15)
    assert sum(r.hi - r.lo for r in whole.significant) <= sum(r.hi - r.lo for r in s.significant)


def test_significant_only_on_part_of_the_range() -> None:
    """Fig. 15 situation: a classifier better only for part of the PC(+) range."""
    rng = np.random.default_rng(13)
    n = 4000
    y = rng.random(n) < 0.5
    z = rng.normal(size=n)
    b = np.where(y, 1.0 + z, z)
    # a ranks the low-scoring positives higher and is otherwise b: it only matters when false
    # negatives are costly (high PC(+), low thresholds); for low PC(+) both are the same.
    a = np.where(y & (z < 0), 1.0 + 0.3 * z, b)
    d = difference_band((y, a), (y, b), select="split", rng=0)
    assert len(d.significant) == 1
    sig = d.significant[0]
    assert sig.better == "a" and 0.15 < sig.lo < 0.4 and sig.hi > 0.9
    assert np.all(d.diff[d.pc <= 0.1] == 0)      # the same thresholds and rows for low PC(+)
    # The exploratory envelope spread agrees in direction but declares nothing.
    e = difference_band((y, a), (y, b), replicates=100, rng=0)
    assert np.all(e.curves[:, e.pc <= 0.1] == 0) and e.significant == ()


# ------------------------------------------------------------------------------------------------
# Validation
# ------------------------------------------------------------------------------------------------

@pytest.mark.parametrize("kwargs, match", [
    ({"level": 1.0}, "level"), ({"level": 0}, "level"), ({"level": "0.9"}, "level"),
    ({"replicates": 0}, "replicates"), ({"replicates": MAX_REPLICATES + 1}, "replicates"),
    ({"replicates": 2.5}, "replicates"), ({"rng": "seed"}, "rng"), ({"rng": -1}, "rng"),
    ({"grid": 1}, "grid"), ({"grid": [0.5, 0.2]}, "increasing"), ({"grid": [0.0, 1.5]}, r"\[0, 1\]"),
    ({"progress": 3}, "progress"), ({"max_batch_elements": 10}, "max_batch_elements"),
    ({"threshold": float("nan")}, "threshold"),
])
def test_option_validation(kwargs, match) -> None:
    with pytest.raises(ParameterError, match=match):
        cost_band((np.array([1, 0, 1, 0]), np.array([0.9, 0.1, 0.5, 0.6])), **kwargs)


def test_input_validation() -> None:
    with pytest.raises(ParameterError, match="both classes"):
        cost_band((np.ones(5, bool), np.arange(5.0)))
    with pytest.raises(ParameterError, match="one length"):
        cost_band((np.array([1, 0, 1]), np.arange(4.0)))
    with pytest.raises(ParameterError, match="finite"):
        cost_band((np.array([1, 0]), np.array([np.nan, 1.0])))
    with pytest.raises(ParameterError, match="0/1"):
        cost_band((np.array([2, 0]), np.array([1.0, 0.0])))
    with pytest.raises(ParameterError, match="non-negative whole"):
        cost_band((16, -4, 4, 6))
    with pytest.raises(ParameterError, match="one positive and one negative"):
        cost_band((0, 4, 0, 6))
    with pytest.raises(ParameterError, match="ScoredClassifier"):
        cost_band("scores.csv")
    y = np.array([1, 0, 1, 0, 1], bool)
    a = ScoredClassifier("a", y, np.arange(5.0))
    with pytest.raises(ParameterError, match="same examples"):
        difference_band(a, ScoredClassifier("b", y[:4], np.arange(4.0)))
    with pytest.raises(ParameterError, match="same examples"):
        difference_band(a, ScoredClassifier("b", ~y, np.arange(5.0)))
    counted = CountedClassifier("c", tp=np.array([3]), fp=np.array([1]), fn=np.array([0]),
                                tn=np.array([1]))
    with pytest.raises(ParameterError, match="confusion matrices"):
        difference_band(a, counted)


def test_lazy_export() -> None:
    assert costdash.cost_band is cost_band
    assert costdash.difference_band is difference_band


# ------------------------------------------------------------------------------------------------
# CLI
# ------------------------------------------------------------------------------------------------

def _strict_json(text: str):
    def bad(value):
        raise AssertionError(f"non-finite JSON value {value}")
    return json.loads(text, parse_constant=bad)


@pytest.fixture(scope="module")
def csv_files(tmp_path_factory) -> dict[str, Path]:
    pytest.importorskip("costdash.io")
    d = tmp_path_factory.mktemp("bands")
    rng = np.random.default_rng(0)
    n = 400
    y = rng.random(n) < 0.4
    z = rng.normal(size=n)
    good = z + 2.0 * y
    bad = 0.5 * z + rng.normal(size=n) + 0.5 * y
    wide = d / "wide.csv"
    wide.write_text("y_true,good,bad\n" + "".join(
        f"{int(t)},{g:.6f},{b:.6f}\n" for t, g, b in zip(y, good, bad)))
    validation = d / "validation.csv"
    y = rng.random(n) < 0.4
    z = rng.normal(size=n)
    validation.write_text("y_true,good,bad\n" + "".join(
        f"{int(t)},{g:.6f},{b:.6f}\n" for t, g, b in zip(y, z + 2.0 * y,
                                                       0.5 * z + rng.normal(size=n) + 0.5 * y)))
    counts = d / "counts.csv"
    counts.write_text("model,tp,fp,fn,tn,threshold\nm,16,4,4,6,0.5\nm,18,6,2,4,0.3\n"
                      "single,16,4,4,6,\n")
    return {"wide": wide, "counts": counts, "validation": validation}


def test_cli_band_json(csv_files, capsys) -> None:
    assert cli_main(["band", str(csv_files["wide"]), "--model", "good", "--replicates", "200",
                     "--seed", "1", "--json"]) == 0
    out = _strict_json(capsys.readouterr().out)
    assert {"model", "level", "replicates", "pc", "cost", "low", "high"} <= set(out)
    assert out["model"] == "good" and out["replicates"] == 200 and out["level"] == 0.9
    assert out["kind"] == "curve"
    assert len(out["pc"]) == len(out["cost"]) == len(out["low"]) == len(out["high"]) == 201
    assert all(lo <= hi for lo, hi in zip(out["low"], out["high"]))
    # Same seed, same band as the API.
    assert cli_main(["band", str(csv_files["wide"]), "--model", "good", "--replicates", "200",
                     "--seed", "1", "--json"]) == 0
    assert _strict_json(capsys.readouterr().out) == out
    assert cli_main(["band", str(csv_files["wide"]), "--model", "good", "--threshold", "1.0",
                     "--replicates", "100", "--grid", "11", "--level", "0.8", "--json"]) == 0
    line = _strict_json(capsys.readouterr().out)
    assert line["kind"] == "line" and line["threshold"] == 1.0 and len(line["pc"]) == 11
    assert line["level"] == 0.8


def test_cli_band_counts(csv_files, capsys) -> None:
    assert cli_main(["band", str(csv_files["counts"]), "--model", "m", "--threshold", "0.3",
                     "--replicates", "100", "--seed", "0", "--json"]) == 0
    out = _strict_json(capsys.readouterr().out)
    assert out["kind"] == "line" and out["n_pos"] == 20 and out["n_neg"] == 10
    assert out["cost"][0] == pytest.approx(0.6) and out["cost"][-1] == pytest.approx(0.1)
    assert cli_main(["band", str(csv_files["counts"]), "--model", "m"]) == 2
    assert "--threshold" in capsys.readouterr().err
    assert cli_main(["band", str(csv_files["counts"]), "--model", "single", "--replicates", "50",
                     "--json"]) == 0
    assert _strict_json(capsys.readouterr().out)["n_pos"] == 20
    assert cli_main(["band", str(csv_files["counts"]), "--model", "nope"]) == 2
    assert "nope" in capsys.readouterr().err


def test_cli_band_text(csv_files, capsys) -> None:
    assert cli_main(["band", str(csv_files["wide"]), "--model", "bad", "--replicates", "100",
                     "--seed", "2"]) == 0
    text = capsys.readouterr().out
    assert "bad" in text and "resampling spread" in text and "PC(+)" in text
    assert "90%" not in text            # an uncalibrated spread is shown without a level
    assert cli_main(["band", str(csv_files["wide"]), "--model", "bad", "--threshold", "0.5"]) == 0
    text = capsys.readouterr().out
    assert "90% Clopper–Pearson–MOVER band (pointwise)" in text and "estimand:" in text
    assert cli_main(["band", str(csv_files["wide"]), "--model", "bad", "--select", "split",
                     "--seed", "2"]) == 0
    text = capsys.readouterr().out
    assert "stratified half" in text and "threshold" in text


def test_cli_band_new_fields(csv_files, capsys) -> None:
    assert cli_main(["band", str(csv_files["wide"]), "--model", "good", "--replicates", "50",
                     "--seed", "1", "--json"]) == 0
    curve = _strict_json(capsys.readouterr().out)
    assert curve["calibrated"] is False and curve["method"] == "percentile"
    assert curve["thresholds"] is None and curve["estimand"].startswith("None:")
    assert cli_main(["band", str(csv_files["wide"]), "--model", "good", "--threshold", "1.0",
                     "--simultaneous", "--json"]) == 0
    rect = _strict_json(capsys.readouterr().out)
    assert rect["calibrated"] is True and rect["method"] == "clopper-pearson"
    assert rect["simultaneous"] is True and rect["replicates"] == 0
    assert cli_main(["band", str(csv_files["wide"]), "--model", "good", "--select", "split",
                     "--seed", "4", "--json"]) == 0
    out = _strict_json(capsys.readouterr().out)
    assert out["kind"] == "selected" and out["selection"] == "split" and out["calibrated"]
    assert len(out["thresholds"]) == 201
    assert out["thresholds"][0] == "flag nothing"          # at PC(+) = 0 nothing is flagged
    assert {t for t in out["thresholds"] if isinstance(t, str)} <= {"flag nothing",
                                                                     "flag everything"}
    assert all(isinstance(t, float) for t in out["thresholds"][40:160])
    # Same as the API with the same seed.
    y_s = np.loadtxt(csv_files["wide"], delimiter=",", skiprows=1)
    api = cost_band((y_s[:, 0].astype(bool), y_s[:, 1]), select="split", rng=4)
    np.testing.assert_allclose(out["low"], api.low, atol=1e-12)
    # A validation file: thresholds chosen there, the band on the main file's rows.
    assert cli_main(["band", str(csv_files["wide"]), "--model", "good", "--select",
                     str(csv_files["validation"]), "--json"]) == 0
    val = _strict_json(capsys.readouterr().out)
    assert val["selection"] == "validation" and val["n_pos"] + val["n_neg"] == 400
    # Too few replicates for a band with a level; a method that does not fit the question.
    assert cli_main(["band", str(csv_files["wide"]), "--model", "good", "--method",
                     "double-bootstrap", "--replicates", "100"]) == 2
    assert "at least 200" in capsys.readouterr().err
    assert cli_main(["band", str(csv_files["wide"]), "--model", "good", "--simultaneous"]) == 2
    assert "fixed threshold" in capsys.readouterr().err


def test_cli_compare(csv_files, capsys) -> None:
    assert cli_main(["compare", str(csv_files["wide"]), "--a", "good", "--b", "bad",
                     "--replicates", "200", "--seed", "3", "--json"]) == 0
    out = _strict_json(capsys.readouterr().out)
    assert {"a", "b", "level", "pc", "diff", "low", "high", "significant"} <= set(out)
    assert out["a"] == "good" and out["b"] == "bad"
    # The re-tuned envelopes: exploratory, no significant ranges, and a note saying why.
    assert out["calibrated"] is False and out["significant"] == [] and "not a test" in out["note"]
    assert out["kind"] == "envelope" and out["thresholds"] is None
    assert cli_main(["compare", str(csv_files["wide"]), "--a", "good", "--b", "bad",
                     "--select", "split", "--seed", "3", "--json"]) == 0
    sel = _strict_json(capsys.readouterr().out)
    assert sel["calibrated"] is True and sel["kind"] == "selected" and sel["note"] == ""
    assert sel["significant"] and all(s["better"] == "good" for s in sel["significant"])
    assert all({"lo", "hi", "better"} == set(s) for s in sel["significant"])
    assert set(sel["thresholds"]) == {"a", "b"} and len(sel["thresholds"]["b"]) == 201
    assert cli_main(["compare", str(csv_files["wide"]), "--a", "good", "--b", "bad",
                     "--threshold", "1.0", "0.5", "--simultaneous", "--json"]) == 0
    fixed = _strict_json(capsys.readouterr().out)
    assert (fixed["threshold_a"], fixed["threshold_b"], fixed["kind"]) == (1.0, 0.5, "line")
    assert fixed["simultaneous"] is True and fixed["method"] == "discordant-mover"
    assert cli_main(["compare", str(csv_files["wide"]), "--a", "good", "--b", "bad",
                     "--select", "split", "--seed", "3"]) == 0
    assert "good is cheaper" in capsys.readouterr().out
    assert cli_main(["compare", str(csv_files["wide"]), "--a", "good", "--b", "bad",
                     "--replicates", "100", "--seed", "3"]) == 0
    assert "not a test" in capsys.readouterr().out
    assert cli_main(["compare", str(csv_files["wide"]), "--a", "good", "--b", "bad",
                     "--select", str(csv_files["validation"]), "--json"]) == 0
    assert _strict_json(capsys.readouterr().out)["selection"] == "validation"
    assert cli_main(["compare", str(csv_files["counts"]), "--a", "m", "--b", "single"]) == 2
    assert "scores" in capsys.readouterr().err
    assert cli_main(["compare", str(csv_files["wide"]), "--a", "good", "--b", "good"]) == 2
    assert cli_main(["compare", str(csv_files["wide"]), "--a", "good", "--b", "bad",
                     "--threshold", "1", "2", "3"]) == 2


# ------------------------------------------------------------------------------------------------
# The coverage study
# ------------------------------------------------------------------------------------------------

@pytest.mark.slow
def test_coverage_study_quick_mode(tmp_path, monkeypatch) -> None:
    path = ROOT / "studies" / "band_coverage.py"
    spec = importlib.util.spec_from_file_location("band_coverage_study", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    monkeypatch.setitem(sys.modules, "band_coverage_study", module)
    spec.loader.exec_module(module)
    out_file = tmp_path / "coverage.md"
    result = module.main(["--quick", "--out", str(out_file)])
    assert result["truth_gap"] < 1e-8
    text = out_file.read_text()
    assert "fixed t0: Wilson–MOVER" in text and "Acceptance checks" in text
    for r in result["results"]:
        m = r["methods"]
        fixed = np.mean(m["fixed-wilson"]["coverage"])
        envelope = np.mean(m["env-pct"]["coverage"])
        assert fixed > 0.8                    # close to nominal 0.9 (Monte Carlo SE ~0.05)
        assert np.mean(m["sel-wilson"]["coverage"]) > 0.8
        assert envelope < fixed               # the re-optimised envelope under-covers...
        assert np.sum(m["env-pct"]["truth_above"]) > np.sum(m["env-pct"]["truth_below"])
        assert m["fixed-cp"]["whole_curve"] >= m["fixed-wilson"]["whole_curve"]
        assert m["env-double"]["calibrated"] and not m["env-pct"]["calibrated"]
    # Separate streams: the simulated test sets do not depend on B.
    design = module.DESIGNS[0]
    seq = np.random.SeedSequence(1).spawn(4)[0]
    a = module.run_design(design, seq, sets=3, replicates=50, double_sets=0,
                          double_replicates=200, inner=10)
    seq = np.random.SeedSequence(1).spawn(4)[0]
    b = module.run_design(design, seq, sets=3, replicates=80, double_sets=0,
                          double_replicates=200, inner=10)
    for key in ("fixed-wilson", "sel-wilson", "diff-sel"):
        assert a["methods"][key]["mean_width"] == b["methods"][key]["mean_width"]


def test_reading_a_band_at_a_pc_and_its_widest_point():
    rng = np.random.default_rng(5)
    y = rng.random(400) < 0.4
    band = cost_band((y, rng.normal(size=400) + y), replicates=200, rng=1)
    cost, low, high = band.at(band.pc[40])
    assert (cost, low, high) == (band.cost[40], band.low[40], band.high[40])
    middle = band.at((band.pc[40] + band.pc[41]) / 2)
    assert middle[1] == pytest.approx((band.low[40] + band.low[41]) / 2)
    pc, width = band.widest
    assert width == band.width.max() and band.width[list(band.pc).index(pc)] == width
