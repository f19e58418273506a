"""Neyman-Pearson, workforce utilisation, sensitivity analysis and threshold-selection rules."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st
from strategies import labelled_scores

from costdash.conditions import OperatingCondition
from costdash.costspace import cost_line, lower_envelope
from costdash.criteria import (
    calibrated_threshold_cost,
    fixed_threshold_cost,
    neyman_pearson,
    sensitivity,
    single_threshold_neyman_pearson,
    single_threshold_workforce,
    workforce,
)
from costdash.errors import ParameterError
from costdash.hull import ALL_NEGATIVE, ALL_POSITIVE, classifier_hull, convex_hull
from costdash.roc import RocCurve, roc_curve, roc_from_counts


def counted(name, tp, fp, n_pos, n_neg):
    tp, fp = np.asarray(tp), np.asarray(fp)
    return roc_from_counts(tp, fp, n_pos - tp, n_neg - fp, name=name)


def hand_hull():
    # (0,0), (0.1, 0.5), (0.4, 0.9), (1,1)
    return classifier_hull(counted("h", [5, 9], [1, 4], 10, 10))


def max_tpr_under_linear_budget(hull, cost_f, cost_t, limit):
    """Brute force over the hull polyline: the largest TPR with cost_f·FPR + cost_t·TPR <= limit,
    from every vertex and every edge's crossing of the budget line."""
    best = -math.inf
    f, t = hull.fpr, hull.tpr
    for i in range(hull.size):
        if cost_f * f[i] + cost_t * t[i] <= limit + 1e-12:
            best = max(best, t[i])
    for i in range(hull.size - 1):
        b0 = cost_f * f[i] + cost_t * t[i]
        b1 = cost_f * f[i + 1] + cost_t * t[i + 1]
        if b0 <= limit <= b1 and b1 > b0:
            w = (limit - b0) / (b1 - b0)
            best = max(best, t[i] + w * (t[i + 1] - t[i]))
    return best


def check_mixture(hull, r):
    """The reported point is the stated mixture of its two hull vertices."""
    assert 0.0 <= r.weight <= 1.0  # 1.0 only by rounding, just below the right vertex
    if r.weight == 0.0:
        assert r.left == r.right
    else:
        assert r.right == r.left + 1
    assert r.fpr == pytest.approx((1 - r.weight) * hull.fpr[r.left] + r.weight * hull.fpr[r.right],
                                  abs=1e-12)
    assert r.tpr == pytest.approx((1 - r.weight) * hull.tpr[r.left] + r.weight * hull.tpr[r.right],
                                  abs=1e-12)
    assert r.left_classifier == hull.classifier[r.left]
    assert r.right_classifier == hull.classifier[r.right]
    np.testing.assert_array_equal(r.left_threshold, hull.threshold[r.left])
    np.testing.assert_array_equal(r.right_threshold, hull.threshold[r.right])


# --- Neyman-Pearson -----------------------------------------------------------------------------

def test_neyman_pearson_by_hand():
    h = hand_hull()
    r = neyman_pearson(h, 0.25)  # halfway along the edge (0.1, 0.5) -> (0.4, 0.9)
    assert (r.left, r.right) == (1, 2)
    assert r.weight == pytest.approx(0.5)
    assert (r.fpr, r.tpr) == pytest.approx((0.25, 0.7))
    r = neyman_pearson(h, 0.1)  # exactly a vertex: no mixing
    assert (r.left, r.right, r.weight, r.fpr, r.tpr) == (1, 1, 0.0, 0.1, 0.5)
    r = neyman_pearson(h, 0.0)
    assert (r.fpr, r.tpr, r.left_classifier) == (0.0, 0.0, ALL_NEGATIVE)
    r = neyman_pearson(h, 1.0)
    assert (r.fpr, r.tpr, r.right_classifier) == (1.0, 1.0, ALL_POSITIVE)
    for bad in (-0.01, 1.01, math.nan):
        with pytest.raises(ParameterError):
            neyman_pearson(h, bad)


@settings(max_examples=100, deadline=None)
@given(labelled_scores(max_n=50), st.floats(0.0, 1.0))
@example(data=(np.array([True, False, False, False, False, False, False, True, False]),
               np.array([0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 1.0, 0.0])),
         alpha=0.9999999999999999)
@pytest.mark.slow
def test_neyman_pearson_vs_brute_force(data, alpha):
    y, s = data
    roc = roc_curve(y, s, name="m")
    hull = classifier_hull(roc)
    r = neyman_pearson(hull, alpha)
    assert r.fpr <= alpha + 1e-12
    assert r.tpr == pytest.approx(max_tpr_under_linear_budget(hull, 1.0, 0.0, alpha), abs=1e-12)
    check_mixture(hull, r)
    # no ROC point of the classifier itself does better within the FPR limit
    assert r.tpr >= roc.tpr[roc.fpr <= alpha].max() - 1e-12
    # TPR 1 reached within the limit: the cheapest point reaching it, not the limit. (Not
    # "whenever r.tpr == 1.0": a mix just under the limit can round to TPR 1.0 without reaching
    # it, as hypothesis found with alpha = 1 - 2**-53.)
    reaching = hull.fpr[np.flatnonzero(hull.tpr >= 1.0)[0]]
    if reaching <= alpha:
        assert r.tpr == 1.0 and r.fpr == reaching and r.weight == 0.0
        # a vertical first edge: alpha = 0 still gets the best TPR at FPR 0
    if alpha == 0.0:
        assert r.tpr == roc.tpr[roc.fpr == 0].max()


# --- workforce utilisation ----------------------------------------------------------------------

def test_neyman_pearson_moves_left_once_every_positive_is_caught():
    # TPR 1 at FPR 0.3; with a limit of 0.5, mixing with "flag everything" would add false
    # positives and no true ones.
    roc = RocCurve(name="m", tp=np.array([0, 8, 10]), fp=np.array([0, 1, 3]),
                   threshold=np.array([np.nan, 0.7, 0.4]), n_pos=10, n_neg=10)
    hull = classifier_hull(roc)
    r = neyman_pearson(hull, 0.5)
    assert (r.fpr, r.tpr, r.weight, r.left_threshold) == (0.3, 1.0, 0.0, 0.4)
    assert neyman_pearson(hull, 1.0).fpr == 0.3
    w = workforce(hull, n_pos=10, n_neg=10, capacity=15)  # 13 flagged already catch all
    assert (w.fpr, w.tpr) == (0.3, 1.0)


def test_workforce_by_hand():
    # P = 100, N = 1000 cases expected; vertices flag 0, 150, 490, 1100 cases
    h = hand_hull()
    r = workforce(h, n_pos=100, n_neg=1000, capacity=320)
    assert (r.left, r.right) == (1, 2) and r.weight == pytest.approx(0.5)
    assert (r.fpr, r.tpr) == pytest.approx((0.25, 0.7))
    # on the line TP = -N/P·FP + C/P of paper 004 eq. 13
    assert r.tpr == pytest.approx(-1000 / 100 * r.fpr + 320 / 100)
    assert workforce(h, n_pos=100, n_neg=1000, capacity=150).weight == 0.0
    r = workforce(h, n_pos=100, n_neg=1000, capacity=5000)  # everything fits
    assert (r.fpr, r.tpr) == (1.0, 1.0)
    assert workforce(h, n_pos=100, n_neg=1000, capacity=0).tpr == 0.0
    with pytest.raises(ParameterError):
        workforce(h, n_pos=100, n_neg=1000, capacity=-1)


@settings(max_examples=100, deadline=None)
@given(labelled_scores(max_n=50), st.floats(1, 1e4), st.floats(1, 1e4), st.floats(0, 1.2))
def test_workforce_vs_brute_force(data, n_pos, n_neg, share):
    y, s = data
    hull = classifier_hull(roc_curve(y, s, name="m"))
    capacity = share * (n_pos + n_neg)
    r = workforce(hull, n_pos=n_pos, n_neg=n_neg, capacity=capacity)
    flagged = r.tpr * n_pos + r.fpr * n_neg  # eq. 12: TP·P + FP·N <= C
    assert flagged <= capacity * (1 + 1e-12) + 1e-9
    best = max_tpr_under_linear_budget(hull, n_neg, n_pos, capacity)
    assert r.tpr == pytest.approx(best, abs=1e-9)
    check_mixture(hull, r)
    if r.tpr < 1.0:  # the workforce is kept fully busy until every positive is flagged
        assert flagged == pytest.approx(capacity, rel=1e-9, abs=1e-9)
    else:  # then it flags no more than it takes to reach TPR 1 (paper 001: move left)
        assert r.fpr == hull.fpr[np.flatnonzero(hull.tpr >= 1.0)[0]]


# --- the best single threshold beside the randomized mix (issue 10 item 3) --------------------

def test_single_threshold_by_hand():
    # A: (0.1, 0.5) at 0.8, (0.4, 0.9) at 0.3; B: (0.2, 0.6) at 0.7. FPR <= 0.25: the mix of A's
    # two points reaches TPR 0.7; one threshold: B's 0.6 (A's 0.5 is lower).
    a = RocCurve(name="A", tp=np.array([0, 5, 9, 10]), fp=np.array([0, 1, 4, 10]),
                 threshold=np.array([np.nan, 0.8, 0.3, 0.1]), n_pos=10, n_neg=10)
    b = RocCurve(name="B", tp=np.array([0, 6, 10]), fp=np.array([0, 2, 10]),
                 threshold=np.array([np.nan, 0.7, 0.2]), n_pos=10, n_neg=10)
    one = single_threshold_neyman_pearson([a, b], 0.25)
    assert (one.classifier, one.threshold, one.fpr, one.tpr, one.tp, one.fp) == \
        ("B", 0.7, 0.2, 0.6, 6, 2)
    mix = neyman_pearson(convex_hull([a, b]), 0.25)
    assert mix.tpr > one.tpr                                # what the coin flips buy
    nothing = single_threshold_neyman_pearson([a, b], 0.0)       # flag nothing
    assert math.isnan(nothing.threshold) and (nothing.fpr, nothing.tpr) == (0.0, 0.0)
    # Capacity, P = N = 10 expected: 9 flagged fits B's point (6 + 2 = 8), not A's (9 + 4 = 13).
    w = single_threshold_workforce([a, b], n_pos=10, n_neg=10, capacity=9)
    assert (w.classifier, w.tpr, w.fpr) == ("B", 0.6, 0.2)
    # Everything fits: TPR 1, which both reach only at FPR 1; a tie goes to the first classifier.
    w = single_threshold_workforce([a, b], n_pos=10, n_neg=10, capacity=20)
    assert (w.classifier, w.tpr, w.fpr) == ("A", 1.0, 1.0)
    assert single_threshold_neyman_pearson([a, b], 1.0).classifier == "A"
    with pytest.raises(ParameterError):
        single_threshold_neyman_pearson([a], 1.5)
    with pytest.raises(ParameterError):
        single_threshold_workforce([a], n_pos=10, n_neg=10, capacity=-1)


@pytest.mark.slow
@settings(max_examples=100, deadline=None)
@given(st.lists(labelled_scores(min_n=4, max_n=40), min_size=1, max_size=3),
       st.floats(0.0, 1.0), st.floats(0.0, 1.2))
def test_single_threshold_vs_brute_force(datasets, alpha, share):
    # Several classifiers scored on the same labels (the first data set's).
    y = datasets[0][0]
    rng = np.random.default_rng(len(y))
    scores = [np.resize(s, y.size) + 0.01 * rng.random(y.size) * (k > 0)
              for k, (_, s) in enumerate(datasets)]
    rocs = [roc_curve(y, s, name=f"m{k}") for k, s in enumerate(scores)]
    hull = convex_hull(rocs)
    n_pos, n_neg = float(y.sum()), float((~y).sum())
    capacity = share * y.size
    for one, mix, fits in (
            (single_threshold_neyman_pearson(rocs, alpha), neyman_pearson(hull, alpha),
             lambda f, t: f <= alpha),
            (single_threshold_workforce(rocs, n_pos=n_pos, n_neg=n_neg, capacity=capacity),
             workforce(hull, n_pos=n_pos, n_neg=n_neg, capacity=capacity),
             lambda f, t: t * n_pos + f * n_neg <= capacity)):
        # Brute force over every threshold of every classifier (each distinct score, and one
        # above them all), by recounting the scores.
        points = []
        for s in scores:
            for t in [np.inf, *np.unique(s)]:
                f, tp = (s[~y] >= t).sum() / n_neg, (s[y] >= t).sum() / n_pos
                if fits(f, tp):
                    points.append((tp, -f))
        assert (one.tpr, -one.fpr) == max(points)
        assert fits(one.fpr, one.tpr)
        assert one.tpr <= mix.tpr + 1e-12               # the mix is never worse
        s = scores[int(one.classifier[1:])]
        t = np.inf if math.isnan(one.threshold) else one.threshold
        # The threshold flags exactly the counts it states.
        assert (one.tp, one.fp) == (int((s[y] >= t).sum()), int((s[~y] >= t).sum()))


# --- sensitivity analysis -----------------------------------------------------------------------

def paper_hull():
    # classifier X: (0.05, 0.5), (0.2, 0.8), (0.5, 0.95); Y: (0.7, 0.985), (0.9, 0.998)
    # combined hull edge slopes: 10, 2, 0.5, 0.175, 0.065, 0.02
    x = counted("X", [500, 800, 950], [50, 200, 500], 1000, 1000)
    y = counted("Y", [985, 998], [700, 900], 1000, 1000)
    hull = convex_hull([x, y])
    assert hull.classifier == (ALL_NEGATIVE, "X", "X", "X", "Y", "Y", ALL_POSITIVE)
    np.testing.assert_allclose(hull.segment_slopes, [10, 2, 0.5, 0.175, 0.065, 0.02])
    return hull


def brute_optimal_set(hull, slopes):
    out = set()
    for m in slopes:
        v = hull.tpr - m * hull.fpr
        out |= set(np.flatnonzero(v >= v.max() - 1e-12).tolist())
    return out


def test_sensitivity_paper_case():
    # negatives 10:1, C(+|-) in [$5, $10], C(-|+) in [$500, $1000]: slopes 1/20 .. 1/5
    hull = paper_hull()
    res = sensitivity(hull, p_pos=(1 / 11, 1 / 11), cost_fn=(500, 1000), cost_fp=(5, 10))
    assert res.slope_range == pytest.approx((1 / 20, 1 / 5), rel=1e-13)
    assert res.pc_range == pytest.approx((1 / (1 + 1 / 5), 1 / (1 + 1 / 20)), rel=1e-13)
    # slope 1/5 touches (0.5, 0.95) (edges 10, 2, 0.5 steeper); 1/20 touches (0.9, 0.998)
    assert res.vertices == (3, 4, 5)
    assert res.classifiers == ("X", "Y")
    assert not res.trivial_optimal
    grid = np.geomspace(1 / 20, 1 / 5, 400)
    assert set(res.vertices) == brute_optimal_set(hull, grid)


def test_sensitivity_do_nothing_optimal():
    hull = paper_hull()
    # positives very rare, equal costs: slopes 499 .. 999, far steeper than any edge
    res = sensitivity(hull, p_pos=(0.001, 0.002), cost_fn=(1, 1), cost_fp=(1, 1))
    assert res.vertices == (0,) and res.classifiers == (ALL_NEGATIVE,)
    assert res.trivial_optimal
    # a range that straddles the first edge's slope (10): doing nothing or X's first vertex
    res = sensitivity(hull, p_pos=(0.005, 0.2), cost_fn=(1, 1), cost_fp=(1, 1))
    assert res.vertices == (0, 1) and res.classifiers == (ALL_NEGATIVE, "X")
    assert res.trivial_optimal
    lo, hi = res.slope_range
    assert set(res.vertices) == brute_optimal_set(hull, np.geomspace(lo, hi, 200))


def test_sensitivity_includes_both_ends_of_an_edge_at_the_range_end():
    # P = N = 8: edge slopes 2.5, 1, 0.25 exactly; p(+) = 1/2 with equal costs is slope 1 exactly
    hull = classifier_hull(counted("d", [5, 7], [2, 4], 8, 8))
    assert hull.segment_slopes.tolist() == [2.5, 1.0, 0.25]
    # a single slope equal to an edge's: every point of that edge is optimal
    res = sensitivity(hull, p_pos=(0.5, 0.5), cost_fn=(1, 1), cost_fp=(1, 1))
    assert res.slope_range == (1.0, 1.0)
    assert res.vertices == (1, 2)
    # slopes 1 .. 2: the flat end ties along edge 1 -> 2, so vertex 2 is optimal there too
    res = sensitivity(hull, p_pos=(0.5, 0.5), cost_fn=(1, 1), cost_fp=(1, 2))
    assert res.vertices == (1, 2)
    assert set(res.vertices) == brute_optimal_set(hull, [1.0, 1.5, 2.0])


@pytest.mark.slow
@settings(max_examples=100, deadline=None)
@given(labelled_scores(max_n=40), st.floats(0.01, 0.99), st.floats(1.0, 4.0),
       st.floats(0.1, 10.0), st.floats(1.0, 4.0))
def test_sensitivity_vs_brute_force(data, p, p_spread, cost, cost_spread):
    y, s = data
    hull = classifier_hull(roc_curve(y, s, name="m"))
    p_range = (p / p_spread, min(p * p_spread, 0.999))
    p_range = (min(p_range), max(p_range))
    res = sensitivity(hull, p_pos=p_range, cost_fn=(cost, cost * cost_spread), cost_fp=(1.0, 1.0))
    lo, hi = res.slope_range
    corners = [OperatingCondition(pp, cfn, 1.0).slope for pp in p_range
               for cfn in (cost, cost * cost_spread)]
    assert (lo, hi) == pytest.approx((min(corners), max(corners)), rel=1e-12)
    assert res.pc_range == pytest.approx((1 / (1 + hi), 1 / (1 + lo)), rel=1e-12)
    # the brute-force set at sampled slopes is inside the reported contiguous segment, and the
    # segment's ends are optimal at the range's ends
    inner = brute_optimal_set(hull, np.geomspace(lo, hi, 300))
    assert inner <= set(res.vertices)
    assert res.vertices == tuple(range(res.vertices[0], res.vertices[-1] + 1))
    assert res.vertices[0] in brute_optimal_set(hull, [hi])
    assert res.vertices[-1] in brute_optimal_set(hull, [lo])
    names = tuple(dict.fromkeys(hull.classifier[v] for v in res.vertices))
    assert res.classifiers == names
    assert res.trivial_optimal == bool({ALL_NEGATIVE, ALL_POSITIVE} & set(names))


def test_sensitivity_rejects_empty_ranges():
    with pytest.raises(ParameterError):
        sensitivity(hand_hull(), p_pos=(0.5, 0.4), cost_fn=(1, 1), cost_fp=(1, 1))


# --- threshold selection rules against the envelope ---------------------------------------------

@settings(max_examples=100, deadline=None)
@given(labelled_scores(max_n=50), st.floats(-2e6, 2e6), st.floats(0.05, 0.95))
def test_selection_rules_never_beat_the_envelope(data, threshold, prevalence):
    y, s = data
    roc = roc_curve(y, s, name="m")
    env = lower_envelope(classifier_hull(roc))
    fixed = fixed_threshold_cost(roc, env, threshold, points=301)
    i = roc.point_at_threshold(threshold)
    np.testing.assert_allclose(fixed.cost, cost_line(roc.fpr[i], roc.tpr[i], fixed.pc))
    calib = calibrated_threshold_cost(roc, env, prevalence=prevalence, points=301)
    for rule in (fixed, calib):
        np.testing.assert_allclose(rule.envelope_cost, env(rule.pc))
        assert np.all(rule.cost >= rule.envelope_cost - 1e-12)
        assert rule.excess_area >= -1e-12
        assert rule.excess_area == pytest.approx(
            float(np.sum(np.diff(rule.pc) * ((rule.cost - rule.envelope_cost)[1:]
                                             + (rule.cost - rule.envelope_cost)[:-1]) / 2)),
            abs=1e-14)
    assert fixed.rule == f"score >= {threshold:g}"


def test_fixed_threshold_is_optimal_for_a_perfect_split():
    y = np.array([0, 0, 0, 1, 1], bool)
    s = np.array([0.1, 0.2, 0.45, 0.8, 0.9])
    roc = roc_curve(y, s)
    env = lower_envelope(classifier_hull(roc))
    r = fixed_threshold_cost(roc, env, 0.5)
    assert r.excess_area == 0.0 and np.all(r.cost == 0.0)
    # any other threshold is a single line over a zero envelope: area (FPR + FNR) / 2
    r = fixed_threshold_cost(roc, env, 0.15)  # flags two negatives: FPR 2/3
    assert r.excess_area == pytest.approx((2 / 3) / 2)


def grouped_calibrated_data():
    # groups (positives, negatives) with decreasing positive fractions: the ROC is concave and
    # each group's score is its own positive fraction, i.e. calibrated at the data's prevalence
    groups = [(9, 1), (6, 4), (3, 7), (1, 9)]
    y, s = [], []
    for pos, neg in groups:
        frac = pos / (pos + neg)
        y += [True] * pos + [False] * neg
        s += [frac] * (pos + neg)
    return np.array(y), np.array(s)


def test_calibrated_rule_is_optimal_when_calibrated():
    y, s = grouped_calibrated_data()
    roc = roc_curve(y, s)
    hull = classifier_hull(roc)
    assert hull.size == roc.size  # every point is a vertex
    env = lower_envelope(hull)
    r = calibrated_threshold_cost(roc, env, prevalence=y.mean())
    assert r.excess_area == pytest.approx(0.0, abs=1e-15)
    np.testing.assert_allclose(r.cost, r.envelope_cost, atol=1e-15)
    # the same ranking with miscalibrated scores (cubed) picks wrong vertices somewhere
    r2 = calibrated_threshold_cost(roc_curve(y, s**3), env, prevalence=y.mean())
    assert r2.excess_area > 1e-3
    # and assuming the wrong prevalence costs too
    assert calibrated_threshold_cost(roc, env, prevalence=0.1).excess_area > 1e-3


@pytest.mark.parametrize("kwargs", [{"prevalence": 0.0}, {"prevalence": 1.0},
                                    {"prevalence": 0.5, "points": 1}])
def test_selection_rule_parameter_errors(kwargs):
    y, s = grouped_calibrated_data()
    roc = roc_curve(y, s)
    with pytest.raises(ParameterError):
        calibrated_threshold_cost(roc, lower_envelope(classifier_hull(roc)), **kwargs)


def test_sensitivity_with_benefits_is_that_of_the_differences():
    hull = classifier_hull(roc_curve(np.array([0, 1, 0, 1, 1, 0, 1, 0, 1, 1]),
                                     np.array([.1, .9, .3, .8, .4, .35, .7, .2, .6, .5]), name="m"))
    ranges = ((0.1, 0.4), (2.0, 6.0), (0.5, 3.0))
    with_gains = sensitivity(hull, *ranges, cost_tp=-4.0, cost_tn=-0.5)
    shifted = sensitivity(hull, ranges[0], (6.0, 10.0), (1.0, 3.5))
    assert with_gains.vertices == shifted.vertices
    assert with_gains.pc_range == pytest.approx(shifted.pc_range, rel=1e-12)
    with pytest.raises(ParameterError, match="must be positive"):
        sensitivity(hull, *ranges, cost_tp=2.0)
