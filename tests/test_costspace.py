"""Cost space: cost lines, the lower envelope as the hull's dual, operating ranges, differences,
areas; and invariance of the whole pipeline under increasing transforms of the scores."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import integrate
from scipy.stats import beta as beta_dist
from strategies import (
    INCREASING_TRANSFORMS,
    integer_labelled_scores,
    labelled_scores,
    shared_label_classifiers,
)

from costdash.conditions import OperatingCondition
from costdash.costspace import (
    cost_line,
    envelope_difference,
    lower_envelope,
    operating_range,
    trivial_cost,
)
from costdash.criteria import beta_weighted_cost
from costdash.hull import classifier_hull, convex_hull, optimal_vertex
from costdash.roc import roc_curve, roc_from_counts

GRID = np.linspace(0.0, 1.0, 4001)


def min_of_lines(fpr, tpr, x):
    """Brute force: the minimum over the given ROC points' cost lines and both trivial lines."""
    lines = cost_line(np.asarray(fpr)[:, None], np.asarray(tpr)[:, None], x[None, :])
    return np.minimum(lines.min(axis=0), trivial_cost(x))


def single_point_envelope(f, t, n=10):
    """Envelope of a classifier with one ROC point (f, t), given as counts out of n."""
    fp, tp = round(f * n), round(t * n)
    r = roc_from_counts([tp], [fp], [n - tp], [n - fp], name="p")
    return lower_envelope(classifier_hull(r))


# --- cost lines ---------------------------------------------------------------------------------

def test_cost_line_of_paper_004_example():
    # FP = 0.09, TP = 0.36: from 0.09 at PC(+) = 0 to 1 - 0.36 = 0.64 at PC(+) = 1
    y = cost_line(0.09, 0.36, [0.0, 0.5, 1.0])
    np.testing.assert_allclose(y, [0.09, 0.365, 0.64], rtol=1e-15)
    # eq. 8: NE = (1 - TP - FP)·PC(+) + FP
    x = np.linspace(0, 1, 11)
    np.testing.assert_allclose(cost_line(0.09, 0.36, x), (1 - 0.36 - 0.09) * x + 0.09, rtol=1e-14)
    # the four extreme classifiers of paper 004 Fig. 7
    np.testing.assert_array_equal(cost_line(1.0, 0.0, x), np.ones_like(x))   # always wrong
    np.testing.assert_array_equal(cost_line(0.0, 1.0, x), np.zeros_like(x))  # always right
    np.testing.assert_allclose(cost_line(0.0, 0.0, x), x)                    # all negative
    np.testing.assert_allclose(cost_line(1.0, 1.0, x), 1 - x)                # all positive
    np.testing.assert_allclose(trivial_cost(x), np.minimum(x, 1 - x))


def test_cost_line_broadcasts():
    out = cost_line([[0.1], [0.2]], [[0.5], [0.9]], [0.0, 1.0])
    np.testing.assert_allclose(out, [[0.1, 0.5], [0.2, 0.1]])


# --- lower envelope -----------------------------------------------------------------------------

def test_envelope_by_hand_with_vertical_and_horizontal_edges():
    # hull (0,0), (0, 1/2), (1/2, 1), (1,1): the vertical first and horizontal last edge give
    # breakpoints at 0 and 1 and are merged into them
    r = roc_from_counts([1, 2], [0, 1], [1, 0], [2, 1], name="h")
    hull = classifier_hull(r)
    env = lower_envelope(hull)
    assert env.pc.tolist() == [0.0, 0.5, 1.0]
    assert env.cost.tolist() == [0.0, 0.25, 0.0]
    assert env.vertex.tolist() == [1, 2]
    assert env.area == pytest.approx(0.125)


def test_envelope_of_single_points_by_hand():
    # (0.2, 0.8): beats all-negative above 0.2/(0.2+0.8) = 0.2, all-positive below 0.8/1.0 = 0.8;
    # its line is flat at 0.2 there. Area = 0.02 + 0.12 + 0.02
    env = single_point_envelope(0.2, 0.8)
    np.testing.assert_allclose(env.pc, [0.0, 0.2, 0.8, 1.0])
    np.testing.assert_allclose(env.cost, [0.0, 0.2, 0.2, 0.0], atol=1e-15)
    assert env.area == pytest.approx(0.16)
    assert beta_weighted_cost(env) == pytest.approx(0.16)
    # a point on the diagonal adds nothing: min(x, 1 - x), area 1/4
    env = single_point_envelope(0.5, 0.5)
    np.testing.assert_allclose(env.pc, [0.0, 0.5, 1.0])
    assert env.area == pytest.approx(0.25)
    # the perfect classifier costs nothing anywhere
    env = single_point_envelope(0.0, 1.0)
    np.testing.assert_array_equal(env(GRID), 0.0)
    assert env.area == 0.0


@pytest.mark.slow
@settings(max_examples=100, deadline=None)
@given(shared_label_classifiers(max_classifiers=3))
def test_envelope_is_min_of_all_cost_lines(data):
    y, scores = data
    rocs = [roc_curve(y, s, name=f"c{k}") for k, s in enumerate(scores)]
    env = lower_envelope(convex_hull(rocs))
    fpr = np.concatenate([r.fpr for r in rocs])  # every ROC point, not only hull vertices
    tpr = np.concatenate([r.tpr for r in rocs])
    x = np.union1d(GRID, env.pc)
    np.testing.assert_allclose(env(x), min_of_lines(fpr, tpr, x), rtol=0, atol=1e-14)
    # never above the better trivial classifier
    assert np.all(env(x) <= trivial_cost(x) + 1e-15)
    # breakpoints strictly increase from 0 to 1, and the envelope is concave
    assert env.pc[0] == 0.0 and env.pc[-1] == 1.0 and np.all(np.diff(env.pc) > 0)
    assert env.cost[0] == 0.0 and env.cost[-1] == pytest.approx(0.0, abs=1e-15)
    piece_slopes = np.diff(env.cost) / np.diff(env.pc)
    assert np.all(np.diff(piece_slopes) <= 1e-9)


@pytest.mark.slow
@settings(max_examples=100, deadline=None)
@given(labelled_scores(max_n=50))
def test_duality_round_trip(data):
    y, s = data
    hull = classifier_hull(roc_curve(y, s, name="m"))
    env = lower_envelope(hull)
    v = env.vertex
    # consecutive envelope pieces belong to consecutive hull vertices; only a vertical first or
    # a horizontal last edge removes a (zero-length) piece
    assert np.all(np.diff(v) == 1)
    assert v[0] == (1 if hull.fpr[1] == 0 else 0)
    assert v[-1] == (hull.size - 2 if hull.tpr[-2] == 1 else hull.size - 1)
    # each piece is its vertex's cost line: recover (FPR, TPR) from the piece (eq. 8)
    x0, x1, c0, c1 = env.pc[:-1], env.pc[1:], env.cost[:-1], env.cost[1:]
    a = (c1 - c0) / (x1 - x0)
    fpr = c0 - a * x0
    tpr = 1 - fpr - a
    np.testing.assert_allclose(fpr, hull.fpr[v], atol=1e-12)
    np.testing.assert_allclose(tpr, hull.tpr[v], atol=1e-12)
    # interior breakpoints are the ROC edges' slopes through PC(+) = 1 / (1 + s) (eq. 9)
    s_edges = hull.segment_slopes[v[:-1]]
    np.testing.assert_allclose(env.pc[1:-1], 1 / (1 + s_edges), rtol=1e-12)
    # and vertex_at names the vertex of each piece (the left one at a breakpoint)
    mids = (x0 + x1) / 2
    np.testing.assert_array_equal(env.vertex_at(mids), v)
    np.testing.assert_array_equal(env.vertex_at(env.pc[1:-1]), v[:-1])


@pytest.mark.slow
@settings(max_examples=100, deadline=None)
@given(labelled_scores(max_n=50))
def test_envelope_vertex_is_the_optimal_vertex(data):
    y, s = data
    hull = classifier_hull(roc_curve(y, s))
    env = lower_envelope(hull)
    x = np.linspace(0.01, 0.99, 37)
    for xi, vi in zip(x, env.vertex_at(x)):
        ov = optimal_vertex(hull, OperatingCondition.from_pc(float(xi)))
        # same cost (they may differ only at an exact breakpoint, where both are optimal)
        assert cost_line(hull.fpr[vi], hull.tpr[vi], xi) == pytest.approx(
            cost_line(ov.fpr, ov.tpr, xi), abs=1e-12)


# --- operating range ----------------------------------------------------------------------------

def test_operating_range_by_hand():
    # (0.2, 0.8): [0.2, 0.8]; the perfect point: (0, 1); points on or under the diagonal: none
    assert operating_range([0.2], [0.8]) == pytest.approx((0.2, 0.8))
    assert operating_range([0.0], [1.0]) == (0.0, 1.0)
    assert operating_range([0.5, 0.6, 0.0, 1.0], [0.5, 0.4, 0.0, 1.0]) is None
    # several points: the union of their ranges; (0.1, 0.5) gives [1/6, 9/14], (0.4, 0.9)
    # [4/13, 6/7]
    lo, hi = operating_range([0.1, 0.4], [0.5, 0.9])
    assert lo == pytest.approx(1 / 6) and hi == pytest.approx(6 / 7)
    # TPR = 1 beats all-positive right up to PC(+) = 1, and not beyond it despite rounding
    lo, hi = operating_range([12 / 14], [1.0])
    assert lo == pytest.approx(6 / 13) and hi == 1.0


@pytest.mark.slow
@settings(max_examples=100, deadline=None)
@given(labelled_scores(max_n=50))
def test_operating_range_vs_grid_and_envelope(data):
    y, s = data
    roc = roc_curve(y, s)
    hull = classifier_hull(roc)
    env = lower_envelope(hull)
    rng_ = operating_range(hull.fpr, hull.tpr)
    # the classifier's own points give the same range as its hull vertices
    rng_points = operating_range(roc.fpr, roc.tpr)
    assert (rng_ is None) == (rng_points is None)
    x = np.linspace(0, 1, 20001)
    e = min_of_lines(roc.fpr, roc.tpr, x)
    beats = e < trivial_cost(x) - 1e-12
    if rng_ is None:
        assert not beats.any()
        np.testing.assert_allclose(env(x), trivial_cost(x), atol=1e-15)
        return
    lo, hi = rng_
    assert rng_points == pytest.approx(rng_, abs=1e-12)
    assert 0.0 <= lo < hi <= 1.0
    # outside the range the envelope is the trivial cost; inside it is strictly below
    outside = (x <= lo) | (x >= hi)
    np.testing.assert_allclose(env(x[outside]), trivial_cost(x[outside]), atol=1e-13)
    inside = (x > lo + 1e-4) & (x < hi - 1e-4)
    assert np.all(env(x[inside]) < trivial_cost(x[inside]))
    # brute-force ends agree to the grid step
    if beats.any():
        assert x[beats].min() == pytest.approx(lo, abs=1e-4)
        assert x[beats].max() == pytest.approx(hi, abs=1e-4)
    else:
        assert hi - lo < 2e-4
    # the ends are where the envelope meets the trivial lines (eq.: FPR/(FPR+TPR) etc.)
    assert env(lo) == pytest.approx(lo, abs=1e-12)
    assert env(hi) == pytest.approx(1 - hi, abs=1e-12)


# --- envelope differences -----------------------------------------------------------------------

def test_envelope_difference_by_hand():
    # A = (0.1, 0.5), B = (0.4, 0.9): their lines 0.1 + 0.4x and 0.4 - 0.3x cross at x = 3/7
    a = single_point_envelope(0.1, 0.5)
    b = single_point_envelope(0.4, 0.9)
    d = envelope_difference(a, b, a_name="A", b_name="B")
    np.testing.assert_allclose(d.crossovers, [3 / 7], rtol=1e-14)
    iv = d.better_intervals()
    assert [name for *_, name in iv] == ["A", "B"]
    assert iv[0][0] == 0.0 and iv[0][1] == pytest.approx(3 / 7) and iv[1][1] == 1.0
    # the difference is exact on the merged breakpoints
    np.testing.assert_allclose(d.diff, a(d.pc) - b(d.pc))
    assert set(a.pc) | set(b.pc) == set(d.pc)


def brute_sign_changes(a_hull, b_hull, x, tol=1e-12):
    """(left, right) brackets of each sign change of envelope(a) - envelope(b) on the grid x,
    envelopes recomputed as minima of cost lines; |difference| <= tol counts as zero."""
    d = min_of_lines(a_hull.fpr, a_hull.tpr, x) - min_of_lines(b_hull.fpr, b_hull.tpr, x)
    nz = np.abs(d) > tol
    xs, sg = x[nz], np.sign(d[nz])
    change = np.flatnonzero(sg[:-1] != sg[1:])
    return [(xs[i], xs[i + 1]) for i in change]


@settings(max_examples=100, deadline=None)
@given(shared_label_classifiers(max_classifiers=2))
@pytest.mark.slow
def test_envelope_difference_crossovers_vs_brute_force(data):
    y, scores = data
    if len(scores) < 2:
        scores = [scores[0], scores[0][::-1].copy()]
    ha = classifier_hull(roc_curve(y, scores[0], name="a"))
    hb = classifier_hull(roc_curve(y, scores[1], name="b"))
    ea, eb = lower_envelope(ha), lower_envelope(hb)
    d = envelope_difference(ea, eb)
    # between merged breakpoints the difference is linear: breakpoints + a grid see every change
    x = np.union1d(np.union1d(GRID, ea.pc), eb.pc)
    brackets = brute_sign_changes(ha, hb, x)
    assert len(d.crossovers) == len(brackets)
    for c, (lo, hi) in zip(d.crossovers, brackets):
        assert lo - 1e-12 <= c <= hi + 1e-12
    # better_intervals: between crossovers, the named one is never dearer and somewhere cheaper
    diff = min_of_lines(ha.fpr, ha.tpr, x) - min_of_lines(hb.fpr, hb.tpr, x)
    covered = {"a": np.zeros(x.size, bool), "b": np.zeros(x.size, bool)}
    for lo, hi, name in d.better_intervals():
        within = (x > lo) & (x < hi)
        sel = diff[within] * (1 if name == "b" else -1)
        assert np.all(sel >= -1e-12) and np.any(sel > 1e-12)
        covered[name] |= (x >= lo) & (x <= hi)
    # and every grid point where they differ is in an interval naming the cheaper one
    assert np.all(covered["a"][diff < -1e-12]) and np.all(covered["b"][diff > 1e-12])


@pytest.mark.slow
@settings(max_examples=100, deadline=None)
@given(shared_label_classifiers(max_classifiers=3))
def test_classifier_never_crosses_the_combined_envelope(data):
    # a classifier's envelope is never below the envelope of all classifiers together: where it
    # is on the combined hull the two coincide, which is a touch, not a crossover
    y, scores = data
    rocs = [roc_curve(y, s, name=f"c{k}") for k, s in enumerate(scores)]
    combined = lower_envelope(convex_hull(rocs))
    for r in rocs:
        own = lower_envelope(classifier_hull(r))
        d = envelope_difference(own, combined, a_name=r.name, b_name="all")
        assert d.crossovers.size == 0, d.crossovers
        assert all(name == "all" for *_, name in d.better_intervals())
        assert np.all(d.diff >= -1e-15)


def test_no_spurious_crossover_where_envelopes_coincide():
    # c1's envelope follows the combined one on part of [0, 1]; interpolating the same line from
    # different breakpoints leaves -5.6e-17 there, which is no change of the better classifier
    y = np.array([1, 1, 1, 1, 0, 0, 0, 0, 0], bool)
    c0 = roc_curve(y, np.array([0, 1, 0, 0, 0, 0, 0, 0, 0], float), name="c0")
    c1 = roc_curve(y, np.array([0, 1, 1, 1, 0, 0, 0, 1, 1], float), name="c1")
    own = lower_envelope(classifier_hull(c1))
    d = envelope_difference(own, lower_envelope(convex_hull([c0, c1])), a_name="c1", b_name="all")
    assert d.crossovers.size == 0
    assert [name for *_, name in d.better_intervals()] == ["all"]


# --- areas and weighted costs -------------------------------------------------------------------

@pytest.mark.slow
@settings(max_examples=60, deadline=None)
@given(labelled_scores(max_n=50),
       st.sampled_from([(1.0, 1.0), (2.0, 2.0), (0.5, 0.5), (2.0, 5.0), (5.0, 1.5), (1.0, 3.0)]))
def test_area_and_beta_weighted_cost_vs_quadrature(data, ab):
    y, s = data
    env = lower_envelope(classifier_hull(roc_curve(y, s)))
    trap = float(np.sum((env.cost[1:] + env.cost[:-1]) / 2 * np.diff(env.pc)))
    assert env.area == pytest.approx(trap, abs=1e-15)
    assert beta_weighted_cost(env, 1.0, 1.0) == pytest.approx(env.area, abs=1e-13)
    a, b = ab
    expected, err = integrate.quad(lambda x: float(env(x)) * beta_dist.pdf(x, a, b), 0, 1,
                                   points=env.pc[1:-1].tolist() or None, limit=500,
                                   epsabs=1e-13, epsrel=1e-11)
    assert beta_weighted_cost(env, a, b) == pytest.approx(expected, abs=1e-9)
    # a weighted average of costs: between the envelope's min (0) and max on [0, 1]
    assert 0.0 <= beta_weighted_cost(env, a, b) <= env.cost.max() + 1e-15


# --- invariance under strictly increasing score transforms --------------------------------------

@settings(max_examples=100, deadline=None)
@given(integer_labelled_scores(), st.sampled_from(sorted(INCREASING_TRANSFORMS)),
       st.floats(0.02, 0.98), st.floats(0.05, 20.0))
def test_invariance_under_increasing_transform(data, tname, p_pos, cost_fn):
    y, s = data
    g = INCREASING_TRANSFORMS[tname]
    gs = g(s)
    assert np.unique(gs).size == np.unique(s).size  # the transform kept every score distinct
    r1, r2 = roc_curve(y, s, name="m"), roc_curve(y, gs, name="m")
    np.testing.assert_array_equal(r1.tp, r2.tp)
    np.testing.assert_array_equal(r1.fp, r2.fp)
    np.testing.assert_array_equal(r2.threshold[1:], g(r1.threshold[1:]))
    assert r1.auc == r2.auc
    h1, h2 = classifier_hull(r1), classifier_hull(r2)
    np.testing.assert_array_equal(h1.fpr, h2.fpr)
    np.testing.assert_array_equal(h1.tpr, h2.tpr)
    assert h1.classifier == h2.classifier
    np.testing.assert_array_equal(h2.threshold[1:-1], g(h1.threshold[1:-1]))
    e1, e2 = lower_envelope(h1), lower_envelope(h2)
    np.testing.assert_array_equal(e1.pc, e2.pc)
    np.testing.assert_array_equal(e1.cost, e2.cost)
    assert operating_range(h1.fpr, h1.tpr) == operating_range(h2.fpr, h2.tpr)
    cond = OperatingCondition(p_pos, cost_fn, 1.0)
    v1, v2 = optimal_vertex(h1, cond), optimal_vertex(h2, cond)
    assert (v1.index, v1.fpr, v1.tpr, v1.alternative) == (v2.index, v2.fpr, v2.tpr, v2.alternative)
    if np.isnan(v1.threshold):
        assert np.isnan(v2.threshold)
    else:
        assert v2.threshold == g(np.float64(v1.threshold))
