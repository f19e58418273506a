"""ROC points, thresholds and AUC against scikit-learn and a brute-force recount."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from sklearn.metrics import roc_auc_score
from sklearn.metrics import roc_curve as sk_roc_curve
from strategies import brute_force_roc, labelled_scores

from costdash.dataset import CountedClassifier, ScoredClassifier
from costdash.errors import ParameterError
from costdash.roc import roc_curve, roc_from_counts, roc_of, thin_indices


def assert_matches_sklearn(y, s):
    r = roc_curve(y, s, name="m")
    fpr, tpr, thr = sk_roc_curve(y, s, drop_intermediate=False)
    np.testing.assert_allclose(r.fpr, fpr, rtol=0, atol=1e-15)
    np.testing.assert_allclose(r.tpr, tpr, rtol=0, atol=1e-15)
    assert np.isnan(r.threshold[0]) and np.isinf(thr[0])
    np.testing.assert_array_equal(r.threshold[1:], thr[1:])
    assert r.auc == pytest.approx(roc_auc_score(y, s), abs=1e-12)
    return r


def test_docstring_example_by_hand():
    r = roc_curve([0, 0, 1, 1], [0.1, 0.4, 0.35, 0.8])
    assert r.fpr.tolist() == [0.0, 0.0, 0.5, 0.5, 1.0]
    assert r.tpr.tolist() == [0.0, 0.5, 0.5, 1.0, 1.0]
    assert np.isnan(r.threshold[0])
    assert r.threshold[1:].tolist() == [0.8, 0.4, 0.35, 0.1]
    assert r.auc == 0.75
    assert (r.n_pos, r.n_neg, r.size) == (2, 2, 5)


@pytest.mark.slow
@settings(max_examples=100, deadline=None)
@given(labelled_scores())
def test_points_thresholds_auc_match_sklearn(data):
    y, s = data
    r = assert_matches_sklearn(y, s)
    # first point (0, 0) without threshold, last (1, 1) at the lowest score
    assert (r.fp[0], r.tp[0]) == (0, 0)
    assert (r.fp[-1], r.tp[-1]) == (r.n_neg, r.n_pos)
    assert r.threshold[-1] == s.min()
    # one point per distinct score, thresholds strictly decreasing
    assert r.size == np.unique(s).size + 1
    assert np.all(np.diff(r.threshold[1:]) < 0)
    assert np.all(np.diff(r.tp) >= 0) and np.all(np.diff(r.fp) >= 0)


@settings(max_examples=100, deadline=None)
@given(labelled_scores(max_n=40))
def test_counts_equal_brute_force_recount(data):
    y, s = data
    r = roc_curve(y, s)
    tp, fp, thr = brute_force_roc(y, s)
    np.testing.assert_array_equal(r.tp, tp)
    np.testing.assert_array_equal(r.fp, fp)
    np.testing.assert_array_equal(r.threshold[1:], thr[1:])


def test_ties_are_one_diagonal_step():
    # two positives and one negative share the score 0.5: one point, (1/2, 2/3) -> diagonal
    y = [1, 1, 0, 1, 0]
    s = [0.9, 0.5, 0.5, 0.5, 0.1]
    r = assert_matches_sklearn(np.array(y, bool), np.array(s))
    assert r.tp.tolist() == [0, 1, 3, 3]
    assert r.fp.tolist() == [0, 0, 1, 2]
    # trapezoid on the diagonal step counts the tie as one half: U statistic by hand
    # pairs (pos, neg): 0.9 beats both (2), 0.5 ties 0.5 (0.5 each, 2 pos) and beats 0.1 (2)
    assert r.auc == pytest.approx((2 + 0.5 * 2 + 2) / 6)


def test_two_distinct_score_values():
    y = np.array([1, 0, 1, 1, 0, 0, 0, 1], bool)
    s = np.array([1, 1, 0, 1, 0, 0, 1, 0], float)
    r = assert_matches_sklearn(y, s)
    assert r.size == 3
    # at score >= 1: 2 of 4 positives, 2 of 4 negatives
    assert (r.fpr[1], r.tpr[1]) == (0.5, 0.5)
    assert r.auc == pytest.approx(0.5)


def test_integer_dtype_scores():
    rng = np.random.default_rng(1)
    y = rng.random(500) < 0.3
    s = rng.integers(-20, 20, 500) + 5 * y  # int64 array, many ties
    r = assert_matches_sklearn(y, s)
    assert r.threshold.dtype == np.float64


def test_large_n_with_ties_matches_sklearn():
    rng = np.random.default_rng(2)
    n = 300_000
    y = rng.random(n) < 0.1
    s = np.round(rng.normal(size=n) + 1.2 * y, 2)  # ~800 distinct values, heavy ties
    assert_matches_sklearn(y, s)
    s2 = rng.normal(size=n) + y
    assert_matches_sklearn(y, s2)


def test_point_at_threshold_brute_force():
    rng = np.random.default_rng(3)
    y = rng.random(200) < 0.4
    s = rng.integers(0, 30, 200).astype(float)
    r = roc_curve(y, s)
    u = np.unique(s)
    queries = np.r_[u, u + 0.5, u - 0.5, -1e9, 1e9, np.inf, -np.inf]
    idx = r.point_at_threshold(queries)
    assert idx.dtype == np.int64
    for t, i in zip(queries, idx):
        assert r.tp[i] == np.sum(y & (s >= t))
        assert r.fp[i] == np.sum(~y & (s >= t))
        assert r.point_at_threshold(float(t)) == i
        assert isinstance(r.point_at_threshold(float(t)), int)
    assert r.point_at_threshold(np.inf) == 0
    assert r.point_at_threshold(s.min()) == r.size - 1


@settings(max_examples=100, deadline=None)
@given(labelled_scores(max_n=30), st.lists(st.floats(-2e6, 2e6, allow_nan=False), max_size=8))
def test_point_at_threshold_property(data, extra):
    y, s = data
    r = roc_curve(y, s)
    for t in [*s.tolist(), *extra]:
        i = r.point_at_threshold(t)
        assert (r.tp[i], r.fp[i]) == (np.sum(y & (s >= t)), np.sum(~y & (s >= t)))


def test_roc_from_counts_sorts_and_frames():
    # matrices given out of order, with thresholds; class totals P = 4, N = 6
    tp = [3, 1, 4]
    fp = [2, 0, 5]
    r = roc_from_counts(tp, fp, [4 - t for t in tp], [6 - f for f in fp], threshold=[0.5, 0.9, 0.1],
                        name="counted")
    assert r.name == "counted"
    assert r.tp.tolist() == [0, 1, 3, 4, 4]
    assert r.fp.tolist() == [0, 0, 2, 5, 6]
    assert np.isnan(r.threshold[0]) and np.isnan(r.threshold[-1])
    assert r.threshold[1:-1].tolist() == [0.9, 0.5, 0.1]  # carried along with their matrices
    assert (r.n_pos, r.n_neg) == (4, 6)
    np.testing.assert_allclose(r.fpr, [0, 0, 2 / 6, 5 / 6, 1])


def test_roc_from_counts_keeps_existing_corners_once():
    r = roc_from_counts([0, 2, 5], [0, 1, 5], [5, 3, 0], [5, 4, 0])
    assert r.tp.tolist() == [0, 2, 5] and r.fp.tolist() == [0, 1, 5]
    assert np.all(np.isnan(r.threshold))
    # AUC of one point (f, t) framed by the corners: (1 + t - f) / 2
    assert r.auc == pytest.approx((1 + 2 / 5 - 1 / 5) / 2)


def test_roc_from_counts_rejects_inconsistent_totals():
    with pytest.raises(ParameterError):
        roc_from_counts([1, 2], [1, 1], [3, 3], [4, 4])  # P = 4 then 5
    with pytest.raises(ParameterError):
        roc_from_counts([0], [1], [0], [1])  # no positives


@pytest.mark.parametrize("y, s", [([1, 1, 1], [0.1, 0.2, 0.3]), ([0, 0], [0.1, 0.2]),
                                  ([1, 0], [0.1, 0.2, 0.3]), ([[1, 0]], [[0.1, 0.2]])])
def test_roc_curve_rejects_bad_input(y, s):
    with pytest.raises(ParameterError):
        roc_curve(y, s)


def test_roc_of_scored_with_mask_and_counted():
    rng = np.random.default_rng(4)
    y = rng.random(100) < 0.5
    s = rng.random(100)
    mask = np.arange(100) % 3 == 0
    c = ScoredClassifier("x", y, s)
    a, b = roc_of(c, mask), roc_curve(y[mask], s[mask])
    np.testing.assert_array_equal(a.tp, b.tp)
    np.testing.assert_array_equal(a.fp, b.fp)
    assert a.name == "x"
    cc = CountedClassifier("k", np.array([2]), np.array([1]), np.array([1]), np.array([3]),
                           threshold=np.array([0.4]))
    r = roc_of(cc)
    assert r.tp.tolist() == [0, 2, 3] and r.fp.tolist() == [0, 1, 4]
    assert r.threshold[1] == 0.4 and r.name == "k"


def test_thin_indices():
    assert thin_indices(5, 10).tolist() == [0, 1, 2, 3, 4]
    idx = thin_indices(1001, 7)
    assert idx[0] == 0 and idx[-1] == 1000 and idx.size <= 7
    assert np.all(np.diff(idx) > 0)
    assert thin_indices(10, 2).tolist() == [0, 9]
    with pytest.raises(ParameterError):
        thin_indices(10, 1)
