"""The shortcuts of the first plot's analysis give exactly what the long ways give: the hull of a
classifier from its staircase's corners, the overall hull from the classifiers' own hulls, and
the AUC summed in integers (the same floats, not just close ones)."""

from __future__ import annotations

import numpy as np
import pytest

from costdash import analyze
from costdash._geometry import upper_hull
from costdash.dataset import Dataset, ScoredClassifier
from costdash.hull import ALL_NEGATIVE, ALL_POSITIVE, classifier_hull, convex_hull
from costdash.roc import RocCurve, roc_curve, roc_from_counts, roc_of


def _hull_the_long_way(roc: RocCurve) -> tuple[np.ndarray, np.ndarray, tuple, np.ndarray]:
    """classifier_hull as it was: the exact hull of every point of the curve."""
    idx = upper_hull(roc.fp, roc.tp)
    names = tuple(ALL_NEGATIVE if (roc.fp[i] == 0 and roc.tp[i] == 0) else
                  ALL_POSITIVE if (roc.fp[i] == roc.n_neg and roc.tp[i] == roc.n_pos) else
                  roc.name for i in idx.tolist())
    threshold = roc.threshold[idx].copy()
    threshold[[i for i, n in enumerate(names) if n in (ALL_NEGATIVE, ALL_POSITIVE)]] = np.nan
    return roc.fp[idx] / roc.n_neg, roc.tp[idx] / roc.n_pos, names, threshold


def _assert_same_hull(roc: RocCurve) -> None:
    hull = classifier_hull(roc)
    fpr, tpr, names, threshold = _hull_the_long_way(roc)
    assert np.array_equal(hull.fpr, fpr) and np.array_equal(hull.tpr, tpr)
    assert hull.classifier == names
    # Thresholds tell which copy of a repeated point is the vertex.
    assert np.array_equal(hull.threshold, threshold, equal_nan=True)


def _auc_the_long_way(roc: RocCurve) -> float:
    dfp = np.diff(roc.fp.astype(np.float64))
    mid_tp = (roc.tp[1:].astype(np.float64) + roc.tp[:-1]) / 2.0
    return float(np.dot(dfp, mid_tp) / (roc.n_pos * roc.n_neg))


def _scored(rng: np.random.Generator, n: int) -> tuple[np.ndarray, np.ndarray]:
    y = rng.random(n) < rng.uniform(0.05, 0.95)
    y[:2] = (True, False)
    # Few decimals: ties within and across the classes (diagonal steps of the staircase).
    score = np.round(rng.normal(size=n) + y * rng.uniform(-1.0, 3.0), int(rng.integers(0, 4)))
    return y, score


def test_hull_of_scored_curves_is_the_hull_of_all_their_points():
    rng = np.random.default_rng(7)
    for trial in range(400):
        y, score = _scored(rng, int(rng.integers(2, 300)) if trial % 20 else 20_000)
        _assert_same_hull(roc_curve(y, score, name="m"))


def test_hull_of_counted_curves_with_repeated_points():
    rng = np.random.default_rng(8)
    for trial in range(600):
        m, n_pos, n_neg = (int(rng.integers(1, 12)), int(rng.integers(1, 8)),
                           int(rng.integers(1, 8)))
        tp, fp = rng.integers(0, n_pos + 1, m), rng.integers(0, n_neg + 1, m)
        if trial % 3 == 0:  # every point twice
            tp, fp = np.r_[tp, tp], np.r_[fp, fp]
        if trial % 4 == 0:  # both corners given, twice
            tp, fp = np.r_[tp, 0, n_pos, 0, n_pos], np.r_[fp, 0, n_neg, 0, n_neg]
        threshold = np.arange(tp.size, dtype=np.float64)  # one per row: names the copy kept
        _assert_same_hull(roc_from_counts(tp, fp, n_pos - tp, n_neg - fp, threshold=threshold,
                                          name="c"))


def test_hull_of_a_staircase_keeps_only_corners_as_candidates():
    # One positive, then alternating runs: the vertices are upper-left corners only.
    y = np.array([1, 1, 0, 0, 1, 0, 1, 1, 0, 0, 0, 1, 0], dtype=bool)
    score = np.arange(y.size, 0, -1, dtype=np.float64)
    roc = roc_curve(y, score, name="s")
    _assert_same_hull(roc)
    assert classifier_hull(roc).classifier[1:-1] == ("s",) * (classifier_hull(roc).size - 2)


def test_overall_hull_of_analyze_is_convex_hull_of_the_curves():
    rng = np.random.default_rng(9)
    for _ in range(40):
        n = int(rng.integers(4, 400))
        y, _ = _scored(rng, n)
        # Some classifiers identical or tied with others: ties go to the first listed.
        scores = [np.round(rng.normal(size=n) + y * rng.uniform(0, 2), 1) for _ in range(4)]
        scores.append(scores[1].copy())
        scored = tuple(ScoredClassifier(f"m{i}", y, s) for i, s in enumerate(scores))
        ds = Dataset(source="t", layout="wide", positive_label="1", scored=scored)
        result = analyze(ds)
        expected = convex_hull([roc_of(c) for c in scored])
        assert np.array_equal(result.hull.fpr, expected.fpr)
        assert np.array_equal(result.hull.tpr, expected.tpr)
        assert result.hull.classifier == expected.classifier
        assert np.array_equal(result.hull.threshold, expected.threshold, equal_nan=True)


def test_auc_is_the_same_float_as_the_float_sum():
    rng = np.random.default_rng(10)
    for trial in range(400):
        y, score = _scored(rng, int(rng.integers(2, 500)) if trial % 20 else 50_000)
        roc = roc_curve(y, score)
        assert roc.auc == _auc_the_long_way(roc)
        m, n_pos, n_neg = (int(rng.integers(1, 10)), int(rng.integers(1, 30)),
                           int(rng.integers(1, 30)))
        tp, fp = rng.integers(0, n_pos + 1, m), rng.integers(0, n_neg + 1, m)
        counted = roc_from_counts(tp, fp, n_pos - tp, n_neg - fp)
        assert counted.auc == _auc_the_long_way(counted)


@pytest.mark.parametrize("n_pos, n_neg", [(2**26, 2**26 - 1), (2**27, 2**26), (3, 2**40)])
def test_auc_of_huge_counts_on_both_sides_of_the_exact_range(n_pos, n_neg):
    # Beyond 2**52 pairs the float sum rounds, and the area is that rounded sum, as before.
    tp = np.array([0, n_pos // 3, n_pos // 3 + 1, n_pos - 7, n_pos], dtype=np.int64)
    fp = np.array([0, 1, n_neg // 5, n_neg // 2 + 3, n_neg], dtype=np.int64)
    roc = RocCurve("big", tp=tp, fp=fp, threshold=np.full(5, np.nan), n_pos=n_pos, n_neg=n_neg)
    assert roc.auc == _auc_the_long_way(roc)


def test_auc_of_a_curve_whose_fp_decreases_takes_the_float_sum():
    # Not a curve roc_* makes; whatever it is, the area is computed as it always was.
    roc = RocCurve("odd", tp=np.array([0, 5, 2, 9]), fp=np.array([0, 7, 3, 9]),
                   threshold=np.full(4, np.nan), n_pos=9, n_neg=9)
    assert roc.auc == _auc_the_long_way(roc)
