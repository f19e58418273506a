"""Averaging several folds: cost-space vertical average, ROC vertical and threshold averages,
pooling and the spread of the choice across folds (paper 000 §7, paper 004 §2.2.3)."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from costdash.conditions import OperatingCondition
from costdash.costspace import cost_line, trivial_cost
from costdash.dataset import CountedClassifier, Dataset, ScoredClassifier
from costdash.errors import ParameterError
from costdash.folds import dataset_fold_averages, fold_averages, fold_spread
from costdash.hull import classifier_hull, optimal_vertex
from costdash.roc import roc_curve

GRID = np.linspace(0.0, 1.0, 2001)


def envelope_by_brute_force(roc, x):
    lines = cost_line(roc.fpr[:, None], roc.tpr[:, None], x[None, :])
    return np.minimum(lines.min(axis=0), trivial_cost(x))


def tpr_for_fpr(roc, f):
    """Fawcett (2006) alg. 3 TPR_FOR_FPR: the last point with FPR <= f; its TPR when its FPR is f,
    else linear interpolation to the next point."""
    i = np.flatnonzero(roc.fpr <= f)[-1]
    if roc.fpr[i] == f or i == roc.size - 1:
        return roc.tpr[i]
    f0, f1, t0, t1 = roc.fpr[i], roc.fpr[i + 1], roc.tpr[i], roc.tpr[i + 1]
    return t0 + (f - f0) / (f1 - f0) * (t1 - t0)


@st.composite
def folded_classifier(draw):
    k = draw(st.integers(2, 4))
    y, s, fold = [], [], []
    for j in range(k):
        n = draw(st.integers(2, 25))
        rest = draw(st.lists(st.booleans(), min_size=n - 2, max_size=n - 2))
        yy = draw(st.permutations([True, False, *rest]))
        ss = draw(st.lists(st.integers(0, 8), min_size=n, max_size=n))
        y += yy
        s += ss
        fold += [j] * n
    order = draw(st.permutations(range(len(y))))  # folds interleaved in the file
    y, s, fold = (np.asarray(a)[list(order)] for a in (y, s, fold))
    clf = ScoredClassifier("m", y.astype(bool), s.astype(np.float64), fold.astype(np.int64))
    return clf, tuple(f"fold{j}" for j in range(k))


@settings(max_examples=50, deadline=None)
@given(folded_classifier())
def test_cost_space_vertical_average_is_mean_of_fold_envelopes(data):
    clf, labels = data
    avg = fold_averages(clf, labels)
    masks = [clf.fold == j for j in range(len(labels))]
    rocs = [roc_curve(clf.y_true[m], clf.score[m]) for m in masks]
    for r, own in zip(rocs, avg.rocs):
        np.testing.assert_array_equal(r.tp, own.tp)
        np.testing.assert_array_equal(r.fp, own.fp)
    # on a fine grid: the mean of the folds' envelopes, each recomputed as a minimum of lines
    per_fold = np.vstack([envelope_by_brute_force(r, GRID) for r in rocs])
    mean_curve = np.interp(GRID, avg.cost_pc, avg.cost_mean)
    np.testing.assert_allclose(mean_curve, per_fold.mean(axis=0), atol=1e-14)
    # exact at the merged breakpoints, which include every fold's own breakpoints
    for e in avg.envelopes:
        assert set(e.pc) <= set(avg.cost_pc)
    at_breaks = np.vstack([envelope_by_brute_force(r, avg.cost_pc) for r in rocs])
    np.testing.assert_allclose(avg.cost_mean, at_breaks.mean(axis=0), atol=1e-14)
    # low / high are the pointwise extremes at those breakpoints (folds may cross in between)
    np.testing.assert_allclose(avg.cost_low, at_breaks.min(axis=0), atol=1e-14)
    np.testing.assert_allclose(avg.cost_high, at_breaks.max(axis=0), atol=1e-14)
    assert np.all(avg.cost_low <= avg.cost_mean + 1e-15)
    assert np.all(avg.cost_mean <= avg.cost_high + 1e-15)
    # the pooled curve is the ROC of all predictions together
    pooled = roc_curve(clf.y_true, clf.score)
    np.testing.assert_array_equal(avg.pooled.tp, pooled.tp)
    np.testing.assert_array_equal(avg.pooled.fp, pooled.fp)


@settings(max_examples=50, deadline=None)
@given(folded_classifier())
def test_roc_vertical_average_vs_fawcett(data):
    clf, labels = data
    avg = fold_averages(clf, labels, roc_points=51)
    per_fold = np.array([[tpr_for_fpr(r, f) for f in avg.roc_fpr] for r in avg.rocs])
    np.testing.assert_allclose(avg.roc_tpr_mean, per_fold.mean(axis=0), atol=1e-14)
    np.testing.assert_allclose(avg.roc_tpr_std, per_fold.std(axis=0), atol=1e-14)
    # bounds: between the folds, inside [0, 1], non-decreasing, ending at 1
    assert np.all(per_fold.min(0) - 1e-15 <= avg.roc_tpr_mean)
    assert np.all(avg.roc_tpr_mean <= per_fold.max(0) + 1e-15)
    assert np.all((avg.roc_tpr_mean >= 0) & (avg.roc_tpr_mean <= 1))
    assert np.all(np.diff(avg.roc_tpr_mean) >= -1e-15)
    assert avg.roc_tpr_mean[-1] == 1.0
    assert np.all(avg.roc_tpr_std >= 0)
    np.testing.assert_array_equal(avg.roc_fpr, np.linspace(0, 1, 51))


def test_roc_vertical_average_follows_the_staircase():
    # one fold is a staircase: (0,0) (0,1/2) (1/3,1/2) (1/3,1) ... Between FPR 0 and 1/3 its
    # polyline is flat at 1/2, not a line from (0, 1/2) up to (1/3, 1)
    y = np.array([1, 0, 1, 0, 0, 1, 0, 1, 0, 0], bool)
    s = np.array([5, 4, 3, 2, 1, 5, 4, 3, 2, 1], float)
    fold = np.array([0] * 5 + [1] * 5)
    avg = fold_averages(ScoredClassifier("m", y, s, fold), ("a", "b"), roc_points=11)
    # both folds are the same staircase: at FPR 0.1 and 0.2 the TPR is 1/2, at 0.4 it is 1
    np.testing.assert_allclose(avg.roc_tpr_mean[[0, 1, 2, 3, 4]], [0.5, 0.5, 0.5, 0.5, 1.0])
    np.testing.assert_allclose(avg.roc_tpr_std, 0.0, atol=1e-15)


def test_threshold_averaging_two_folds_by_hand():
    # fold 0 ranks + - + -, fold 1 ranks + + - -; P = N = 2 in each
    y = np.array([1, 0, 1, 0, 1, 1, 0, 0], bool)
    s = np.array([0.9, 0.8, 0.7, 0.6, 0.85, 0.75, 0.65, 0.55])
    fold = np.array([0, 0, 0, 0, 1, 1, 1, 1])
    clf = ScoredClassifier("m", y, s, fold)
    avg = fold_averages(clf, ("f0", "f1"), thresholds=8)
    np.testing.assert_array_equal(avg.threshold_values,
                                  [0.9, 0.85, 0.8, 0.75, 0.7, 0.65, 0.6, 0.55])
    np.testing.assert_allclose(avg.threshold_fpr, [0, 0, 0.25, 0.25, 0.25, 0.5, 0.75, 1])
    np.testing.assert_allclose(avg.threshold_tpr, [0.25, 0.5, 0.5, 0.75, 1, 1, 1, 1])
    avg3 = fold_averages(clf, ("f0", "f1"), thresholds=3)
    np.testing.assert_array_equal(avg3.threshold_values, [0.9, 0.7, 0.55])  # ranks 0, 4, 7
    np.testing.assert_allclose(avg3.threshold_fpr, [0, 0.25, 1])
    np.testing.assert_allclose(avg3.threshold_tpr, [0.25, 1, 1])
    # cost-space average at PC(+) = 1/2: fold 0's best is 1/4 (e.g. (0, 1/2)), fold 1 is perfect
    assert np.interp(0.5, avg.cost_pc, avg.cost_mean) == pytest.approx(0.125)

    spread = fold_spread(avg, OperatingCondition(0.5))
    # slope 1 ties along fold 0's edge (0, 1/2) -> (1/2, 1): the lower-FPR vertex (threshold 0.9)
    assert spread.thresholds == (0.9, 0.75)
    assert spread.classifiers_optimal == ("m", "m")
    assert spread.normalized_costs == pytest.approx((0.25, 0.0))
    assert spread.threshold_mean == pytest.approx(0.825)
    assert spread.threshold_std == pytest.approx(0.075)
    assert (spread.cost_mean, spread.cost_std) == pytest.approx((0.125, 0.125))
    assert (spread.cost_min, spread.cost_max) == pytest.approx((0.0, 0.25))


def test_cost_average_of_paper_000_figure_9_curves():
    # fold 1: one point (0.04, 0.4); fold 2: one point (0.3, 0.8) -- 100 negatives, 10 positives
    y1 = np.r_[np.ones(10, bool), np.zeros(100, bool)]
    s1 = np.r_[np.ones(4), np.zeros(6), np.ones(4), np.zeros(96)]
    s2 = np.r_[np.ones(8), np.zeros(2), np.ones(30), np.zeros(70)]
    clf = ScoredClassifier("m", np.r_[y1, y1], np.r_[s1, s2], np.repeat([0, 1], 110))
    avg = fold_averages(clf, ("1", "2"))
    at = lambda x: float(np.interp(x, avg.cost_pc, avg.cost_mean))  # noqa: E731
    # at PC(+) = 1/2: min(0.5, 0.6·0.5 + 0.04·0.5) = 0.32 and min(0.5, 0.2·0.5 + 0.3·0.5) = 0.25
    assert at(0.5) == pytest.approx((0.32 + 0.25) / 2)
    # at 0.2: fold 1 uses its point (0.6·0.2 + 0.04·0.8 = 0.152), fold 2 all-negative (0.2)
    assert at(0.2) == pytest.approx((0.152 + 0.2) / 2)
    assert at(0.0) == 0.0 and at(1.0) == pytest.approx(0.0, abs=1e-15)


def test_fold_spread_matches_per_fold_choice():
    rng = np.random.default_rng(7)
    n = 400
    y = rng.random(n) < 0.3
    s = np.round(rng.normal(size=n) + 1.3 * y, 1)
    fold = rng.integers(0, 5, n)
    avg = fold_averages(ScoredClassifier("m", y, s, fold), tuple("abcde"))
    cond = OperatingCondition(0.2, cost_fn=3.0)
    spread = fold_spread(avg, cond)
    chosen = [optimal_vertex(classifier_hull(r), cond) for r in avg.rocs]
    assert spread.thresholds == tuple(c.threshold for c in chosen)
    costs = np.array([cond.normalized_cost(c.fpr, c.tpr) for c in chosen])
    assert spread.normalized_costs == pytest.approx(tuple(costs))
    assert spread.cost_mean == pytest.approx(costs.mean())
    assert spread.cost_std == pytest.approx(costs.std())
    # each fold's cost is its envelope at this PC(+)
    for e, c in zip(avg.envelopes, costs):
        assert float(e(cond.pc)) == pytest.approx(c, abs=1e-12)


def test_dataset_fold_averages_and_errors():
    y = np.array([1, 0, 1, 0, 1, 0], bool)
    s = np.arange(6, dtype=float)
    fold = np.array([0, 0, 0, 1, 1, 1])
    ds = Dataset(source="x.csv", layout="wide", positive_label="1",
                 scored=(ScoredClassifier("m", y, s, fold),), fold_labels=("a", "b"))
    assert dataset_fold_averages(ds, "m").fold_labels == ("a", "b")
    with pytest.raises(ParameterError):
        fold_averages(ScoredClassifier("m", y, s), ())
    counts = Dataset(source="c.csv", layout="counts", positive_label="1",
                     counted=(CountedClassifier("k", np.array([1]), np.array([1]), np.array([1]),
                                                np.array([1])),))
    with pytest.raises(ParameterError):
        dataset_fold_averages(counts, "k")
