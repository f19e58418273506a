"""Precision–recall, gains, score histograms and reliability (``costdash.curves``).

Oracles: scikit-learn where the curves overlap (``precision_recall_curve``,
``calibration_curve``, ``brier_score_loss``), hand-worked cases, and exact arithmetic
(:class:`fractions.Fraction`) for the hull's interpolation in PR space (Davis & Goadrich 2006:
between two hull vertices TP grows linearly with FP; precision does not).
"""

from __future__ import annotations

from fractions import Fraction

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from sklearn.calibration import calibration_curve
from sklearn.metrics import brier_score_loss, precision_recall_curve
from strategies import labelled_scores, shared_label_classifiers

from costdash.curves import (capacity_on_gains, curve_point, gains_curve, iso_f1, pr_curve,
                             pr_hull, pr_point, reliability, score_histograms)
from costdash.errors import ParameterError
from costdash.hull import classifier_hull, convex_hull
from costdash.roc import roc_curve

PROPERTY = settings(max_examples=200, deadline=None,
                    suppress_health_check=[HealthCheck.too_slow])


# --- precision–recall per threshold ----------------------------------------------------------

@pytest.mark.slow
@PROPERTY
@given(labelled_scores())
def test_pr_curve_equals_scikit_learn(data):
    y, score = data
    pr = pr_curve(roc_curve(y, score))
    precision, recall, thresholds = precision_recall_curve(y, score, drop_intermediate=False)
    # scikit-learn: thresholds increasing, then a closing (recall 0, precision 1) it adds.
    assert np.array_equal(pr.threshold, thresholds[::-1])
    assert np.array_equal(pr.recall, recall[:-1][::-1])
    assert np.array_equal(pr.precision, precision[:-1][::-1])
    assert pr.from_counts and pr.prior == y.mean()


@pytest.mark.slow
@PROPERTY
@given(labelled_scores(), st.floats(0.001, 0.999))
def test_pr_curve_at_a_prior_reweights_the_classes_exactly(data, p):
    y, score = data
    roc = roc_curve(y, score)
    pr = pr_curve(roc, p_pos=p)
    assert pr.prior == p and not pr.from_counts
    for k, i in enumerate(pr.index.tolist()):
        tpr, fpr = Fraction(int(roc.tp[i]), roc.n_pos), Fraction(int(roc.fp[i]), roc.n_neg)
        exact = Fraction(p) * tpr / (Fraction(p) * tpr + (1 - Fraction(p)) * fpr)
        assert pr.precision[k] == pytest.approx(float(exact), rel=1e-12)
        assert pr.recall[k] == float(tpr)


def test_pr_curve_hand_worked():
    # Scores 0.8 (+), 0.4 (−), 0.35 (+), 0.1 (−): flag 0.8 → 1/1; 0.4 → 1/2; 0.35 → 2/3; all → 2/4.
    pr = pr_curve(roc_curve([0, 0, 1, 1], [0.1, 0.4, 0.35, 0.8]))
    assert pr.threshold.tolist() == [0.8, 0.4, 0.35, 0.1]
    assert pr.precision.tolist() == [1.0, 0.5, 2 / 3, 0.5]
    assert pr.recall.tolist() == [0.5, 0.5, 1.0, 1.0]
    # At p(+) = 0.1 the same points are far less precise: at (FPR 0.5, TPR 1) 0.1/(0.1+0.45).
    at = pr_curve(roc_curve([0, 0, 1, 1], [0.1, 0.4, 0.35, 0.8]), p_pos=0.1)
    assert at.precision[2] == pytest.approx(0.1 / 0.55)
    assert pr_point(0.5, 1.0, prior=0.1) == (1.0, pytest.approx(0.1 / 0.55))
    assert np.isnan(pr_point(0.0, 0.0, prior=0.3)[1])


# --- the hull in PR space ------------------------------------------------------------------------

def test_pr_hull_hand_worked_is_not_a_straight_line():
    # P = N = 10. Hull (0,0) → A (TP 5, FP 0) → B (TP 10, FP 10) = (1, 1).
    # Halfway from A to B: TP 7.5, FP 5 → precision 0.6 at recall 0.75, while the straight line
    # in PR space from (0.5, 1) to (1, 0.5) would claim 0.75 there.
    y = np.r_[np.ones(10, bool), np.zeros(10, bool)]
    score = np.r_[np.full(5, 2.0), np.full(5, 1.0), np.full(10, 1.0)]
    hull = classifier_hull(roc_curve(y, score))
    assert hull.tpr.tolist() == [0.0, 0.5, 1.0] and hull.fpr.tolist() == [0.0, 0.0, 1.0]
    ph = pr_hull(hull, n_pos=10, n_neg=10, per_edge=2)
    assert ph.recall.tolist() == [0.0, 0.25, 0.5, 0.75, 1.0]
    assert ph.precision.tolist() == [1.0, 1.0, 1.0, 0.6, 0.5]
    assert ph.vertex_precision.tolist() == [1.0, 1.0, 0.5]
    assert ph.edge.tolist() == [0, 0, 1, 1, 1] and ph.t.tolist() == [0, 0.5, 0, 0.5, 1]


def test_pr_hull_first_edge_keeps_its_ratio():
    # First vertex at (FPR 0.5, TPR 1): TP 2, FP 2. Along the first edge TP/FP is fixed, so
    # precision is 1/2 from recall 0 on (the limit at (0, 0)).
    hull = classifier_hull(roc_curve([1, 1, 0, 0, 0, 0], [3, 3, 3, 3, 1, 1]))
    ph = pr_hull(hull, n_pos=2, n_neg=4, per_edge=4)
    first = ph.edge == 0
    assert np.allclose(ph.precision[first], 0.5)   # TP 2, FP 2 at the vertex: 1/2 all along
    assert ph.vertex_precision[0] == ph.vertex_precision[1] == pytest.approx(0.5)


@pytest.mark.slow
@PROPERTY
@given(shared_label_classifiers(), st.one_of(st.none(), st.fractions(Fraction(1, 100),
                                                                        Fraction(99, 100))),
       st.integers(1, 7))
def test_pr_hull_interpolates_tp_linearly_in_fp_exactly(data, p, per_edge):
    y, scores = data
    rocs = [roc_curve(y, s, name=f"c{i}") for i, s in enumerate(scores)]
    hull = convex_hull(rocs)
    n_pos, n_neg = int(y.sum()), int((~y).sum())
    ph = pr_hull(hull, n_pos=n_pos, n_neg=n_neg, p_pos=None if p is None else float(p),
                 per_edge=per_edge)
    prior = Fraction(n_pos, n_pos + n_neg) if p is None else Fraction(float(p))
    # Exact counts of the vertices (rates are count / total).
    tp = [Fraction(round(v * n_pos)) for v in hull.tpr.tolist()]
    fp = [Fraction(round(v * n_neg)) for v in hull.fpr.tolist()]
    assert ph.recall.size == per_edge * (hull.size - 1) + 1
    for r, prec, e, t in zip(ph.recall.tolist(), ph.precision.tolist(), ph.edge.tolist(),
                             ph.t.tolist()):
        exact_t = Fraction(round(t * per_edge), per_edge)
        assert t == float(exact_t)
        t = exact_t
        # The mix of vertex e and e + 1 with weight t: TP and FP both move by t of the edge.
        tp_t = tp[e] + t * (tp[e + 1] - tp[e])
        fp_t = fp[e] + t * (fp[e + 1] - fp[e])
        assert (tp_t - tp[e]) * (fp[e + 1] - fp[e]) == (fp_t - fp[e]) * (tp[e + 1] - tp[e])
        assert r == pytest.approx(float(tp_t / n_pos), rel=1e-12, abs=1e-15)
        a, b = prior * tp_t / n_pos, (1 - prior) * fp_t / n_neg
        if a + b == 0:      # (0, 0): the first edge's constant precision
            a, b = prior * tp[1] / n_pos, (1 - prior) * fp[1] / n_neg
        assert prec == pytest.approx(float(a / (a + b)), rel=1e-12)
    # Precision along each edge moves monotonically between its vertices (a ratio of linear
    # functions of t never turns back).
    for e in range(hull.size - 1):
        seg = ph.precision[ph.edge == e]
        d = np.diff(seg)
        assert np.all(d >= -1e-12) or np.all(d <= 1e-12)


def test_pr_hull_vertices_are_the_pr_points_of_the_hull():
    y = np.array([1, 0, 1, 1, 0, 0, 1, 0, 0, 0], bool)
    score = np.array([0.9, 0.8, 0.7, 0.6, 0.55, 0.5, 0.4, 0.3, 0.2, 0.1])
    roc = roc_curve(y, score)
    hull = classifier_hull(roc)
    ph = pr_hull(hull, n_pos=4, n_neg=6)
    pr = pr_curve(roc)
    for thr, r, prec in zip(ph.threshold[1:-1], ph.vertex_recall[1:-1],
                            ph.vertex_precision[1:-1]):
        k = int(np.flatnonzero(pr.threshold == thr)[0])
        assert (r, prec) == pytest.approx((pr.recall[k], pr.precision[k]))


def test_iso_f1_lines_have_their_f1():
    for line in iso_f1((0.2, 0.5, 0.8)):
        r, p = line.recall, line.precision
        assert np.allclose(2 * p * r / (p + r), line.level)
        assert p[0] == 1.0 and r[-1] == 1.0
    with pytest.raises(ParameterError, match="F1 level"):
        iso_f1([1.0])


# --- gains and lift ----------------------------------------------------------------------------

@pytest.mark.slow
@PROPERTY
@given(labelled_scores(), st.one_of(st.none(), st.floats(0.001, 0.999)))
def test_gains_curve_monotone_from_origin_to_one_one(data, p):
    y, score = data
    roc = roc_curve(y, score)
    g = gains_curve(roc, p_pos=p)
    assert (g.flagged[0], g.gain[0]) == (0.0, 0.0)
    assert g.gain[-1] == 1.0 and g.flagged[-1] == pytest.approx(1.0, abs=1e-12)
    assert np.all(np.diff(g.gain) >= 0) and np.all(np.diff(g.flagged) >= -1e-15)
    assert np.isnan(g.lift[0])
    assert np.allclose(g.lift[1:], g.gain[1:] / g.flagged[1:])
    if p is None:   # brute force: share of the test set flagged at each threshold
        for k in range(1, roc.size):
            flagged = np.mean(score >= g.threshold[k])
            assert g.flagged[k] == pytest.approx(flagged, rel=1e-12)
            assert g.gain[k] == np.sum(y & (score >= g.threshold[k])) / y.sum()


def test_gains_hand_worked():
    g = gains_curve(roc_curve([0, 0, 1, 1], [0.1, 0.4, 0.35, 0.8]), p_pos=0.2)
    # ROC (0,0) (0,.5) (.5,.5) (.5,1) (1,1); flagged = 0.2·TPR + 0.8·FPR.
    assert g.flagged.tolist() == pytest.approx([0.0, 0.1, 0.5, 0.6, 1.0])
    assert g.lift[1] == pytest.approx(5.0)       # half the positives in a tenth of the cases


@pytest.mark.slow
@PROPERTY
@given(labelled_scores(), st.floats(0.01, 0.99), st.floats(0.0, 1.2))
def test_capacity_on_gains_is_the_best_hull_point_within_the_capacity(data, p, share):
    y, score = data
    hull = classifier_hull(roc_curve(y, score))
    c = capacity_on_gains(hull, p_pos=p, volume=1000.0, capacity=share * 1000.0)
    assert c.share == pytest.approx(min(share, 1.0))
    assert c.flagged <= c.share + 1e-9
    assert c.flagged == pytest.approx(p * c.point.tpr + (1 - p) * c.point.fpr)
    # No hull vertex within the capacity catches more (brute force over the vertices).
    flagged = p * hull.tpr + (1 - p) * hull.fpr
    assert c.caught >= hull.tpr[flagged <= c.share + 1e-12].max() - 1e-12


def test_curve_point_hand_worked():
    p = curve_point(0.1, 0.8, prior=0.2)       # 0.16 caught, 0.08 false alarms per case
    assert p.precision == pytest.approx(2 / 3) and p.recall == 0.8
    assert p.f1 == pytest.approx(2 * (2 / 3) * 0.8 / (2 / 3 + 0.8))
    assert p.flagged == pytest.approx(0.24) and p.lift == pytest.approx(0.8 / 0.24)
    nothing = curve_point(0.0, 0.0, prior=0.2)
    assert np.isnan(nothing.precision) and np.isnan(nothing.f1) and np.isnan(nothing.lift)


# --- score histograms ----------------------------------------------------------------------------

@pytest.mark.slow
@PROPERTY
@given(labelled_scores(), st.integers(1, 12))
def test_histograms_share_edges_and_count_every_example(data, bins):
    y, score = data
    h = score_histograms(y, score, bins=bins)
    assert h.edges.size == bins + 1
    if score.min() < score.max():
        assert h.edges[0] == score.min() and h.edges[-1] == score.max()
    else:   # one score: numpy's unit-wide span around it
        assert h.edges[0] < score.min() < h.edges[-1]
    assert h.positives.sum() == y.sum() and h.negatives.sum() == (~y).sum()
    assert h.share_positives.sum() == pytest.approx(1.0)
    assert h.share_negatives.sum() == pytest.approx(1.0)
    # Brute force: each class's scores in [edge_i, edge_i+1), the last bin closed.
    for i in range(bins):
        lo, hi = h.edges[i], h.edges[i + 1]
        inside = (score >= lo) & ((score < hi) if i < bins - 1 else (score <= hi))
        assert h.positives[i] == np.sum(inside & y) and h.negatives[i] == np.sum(inside & ~y)


def test_histogram_weights_equal_repeated_rows():
    y = np.array([1, 0, 1, 0], bool)
    s = np.array([0.9, 0.2, 0.4, 0.6])
    w = np.array([3, 2, 1, 4])
    a = score_histograms(y, s, bins=5, weight=w)
    b = score_histograms(np.repeat(y, w), np.repeat(s, w), bins=5)
    assert np.array_equal(a.positives, b.positives) and np.array_equal(a.negatives, b.negatives)
    assert np.array_equal(a.edges, b.edges)


# --- reliability -------------------------------------------------------------------------------

probabilities = st.lists(st.floats(0.0, 1.0), min_size=2, max_size=60)


@pytest.mark.slow
@PROPERTY
@given(st.data(), st.integers(1, 15))
def test_reliability_equals_scikit_learn(data, bins):
    score = np.array(data.draw(probabilities))
    y = np.array(data.draw(st.lists(st.booleans(), min_size=score.size,
                                    max_size=score.size)), bool)
    y[0], y[1] = True, False
    rel = reliability(y, score, bins=bins)
    prob_true, prob_pred = calibration_curve(y, score, n_bins=bins, strategy="uniform")
    assert np.allclose(rel.observed[rel.filled], prob_true, rtol=1e-12, atol=1e-15)
    assert np.allclose(rel.mean_score[rel.filled], prob_pred, rtol=1e-12, atol=1e-15)
    assert rel.count.sum() == score.size
    assert np.all(np.isnan(rel.observed[~rel.filled]))
    assert rel.brier == pytest.approx(brier_score_loss(y, score), rel=1e-12, abs=1e-15)


def test_reliability_hand_worked_and_weights():
    rel = reliability([0, 0, 1, 1], [0.1, 0.3, 0.6, 0.9], bins=2)
    assert rel.count.tolist() == [2, 2]
    assert rel.brier == pytest.approx((0.01 + 0.09 + 0.16 + 0.01) / 4)
    y, s, w = np.array([1, 0, 1], bool), np.array([0.8, 0.3, 0.25]), np.array([2, 5, 1])
    a = reliability(y, s, bins=4, weight=w)
    b = reliability(np.repeat(y, w), np.repeat(s, w), bins=4)
    assert a.count.tolist() == b.count.tolist() and a.brier == pytest.approx(b.brier)
    assert np.allclose(a.observed[a.filled], b.observed[b.filled])


def test_reliability_refuses_scores_that_are_not_probabilities():
    with pytest.raises(ParameterError, match=r"gbm's scores run from -1\.5 to 3: .*probabilities "
                                             r"in \[0, 1\]"):
        reliability([0, 1, 1], [-1.5, 0.2, 3.0], name="gbm")


# --- errors --------------------------------------------------------------------------------------

def test_parameter_errors():
    roc = roc_curve([0, 1], [0.2, 0.7])
    with pytest.raises(ParameterError, match="`p_pos` must lie strictly between 0 and 1"):
        pr_curve(roc, p_pos=1.0)
    with pytest.raises(ParameterError, match="`p_pos`"):
        gains_curve(roc, p_pos=0.0)
    with pytest.raises(ParameterError, match="`per_edge` must be at least 1"):
        pr_hull(classifier_hull(roc), n_pos=1, n_neg=1, per_edge=0)
    with pytest.raises(ParameterError, match="`bins` must be at least 1"):
        score_histograms([0, 1], [0.1, 0.2], bins=0)
    with pytest.raises(ParameterError, match="one length"):
        reliability([0, 1, 1], [0.1, 0.2])
    with pytest.raises(ParameterError, match="finite"):
        score_histograms([0, 1], [0.1, np.nan])
    with pytest.raises(ParameterError, match="`volume` must be positive"):
        capacity_on_gains(classifier_hull(roc), p_pos=0.5, volume=0.0, capacity=1.0)


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_quantile_reliability_matches_scikit_learn(seed):
    """Issue 28 item 6: quantile bins as scikit-learn's calibration_curve places them, and
    score counts give exactly what their rows give."""
    from sklearn.calibration import calibration_curve

    rng = np.random.default_rng(seed)
    n = 2000
    y = rng.random(n) < 0.3
    s = np.clip(np.round(rng.beta(2, 5, n) + 0.3 * y, 3), 0, 1)
    rel = reliability(y, s, bins=8, strategy="quantile")
    observed, mean = calibration_curve(y, s, n_bins=8, strategy="quantile")
    np.testing.assert_allclose(rel.observed[rel.filled], observed, rtol=1e-12)
    np.testing.assert_allclose(rel.mean_score[rel.filled], mean, rtol=1e-12)
    assert rel.count.sum() == n and rel.strategy == "quantile"
    values, inverse = np.unique(np.stack([s, y]), axis=1, return_inverse=True)
    w = np.bincount(inverse.ravel())
    counted = reliability(values[1].astype(bool), values[0], bins=8, weight=w,
                          strategy="quantile")
    np.testing.assert_array_equal(counted.edges, rel.edges)
    np.testing.assert_array_equal(counted.count, rel.count)
    np.testing.assert_allclose(counted.observed[rel.filled], rel.observed[rel.filled],
                               rtol=1e-12)
    with pytest.raises(ParameterError, match="'uniform' or 'quantile'"):
        reliability(y, s, strategy="kmeans")
