"""ROC convex hull against exact brute-force oracles; incremental hull; optimal vertex;
_geometry.upper_hull."""

from __future__ import annotations

import math
from fractions import Fraction

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from strategies import (
    argmax_vertices,
    check_upper_hull,
    count_point_sets,
    cross,
    labelled_scores,
    roc_from_point_set,
    shared_label_classifiers,
    unique_maximiser_slopes,
)

import costdash._geometry as geometry
from costdash._geometry import upper_hull
from costdash.conditions import OperatingCondition
from costdash.hull import (
    ALL_NEGATIVE,
    ALL_POSITIVE,
    add_to_hull,
    classifier_hull,
    convex_hull,
    optimal_indices,
    optimal_vertex,
)
from costdash.roc import roc_curve, roc_from_counts


def hull_counts(hull, n_pos, n_neg):
    """Hull vertices as exact (fp, tp) counts (asserting the float rates are those counts)."""
    fp = np.rint(hull.fpr * n_neg).astype(np.int64)
    tp = np.rint(hull.tpr * n_pos).astype(np.int64)
    np.testing.assert_array_equal(hull.fpr, fp / n_neg)
    np.testing.assert_array_equal(hull.tpr, tp / n_pos)
    return list(zip(fp.tolist(), tp.tolist()))


def assert_trivial_ends(hull):
    assert (hull.fpr[0], hull.tpr[0]) == (0.0, 0.0)
    assert (hull.fpr[-1], hull.tpr[-1]) == (1.0, 1.0)
    assert hull.classifier[0] == ALL_NEGATIVE and hull.classifier[-1] == ALL_POSITIVE
    assert np.isnan(hull.threshold[0]) and np.isnan(hull.threshold[-1])
    assert ALL_NEGATIVE not in hull.classifier[1:] and ALL_POSITIVE not in hull.classifier[:-1]


# --- one classifier: random point sets with duplicates and collinear points --------------------

@settings(max_examples=200, deadline=None)
@given(count_point_sets())
@pytest.mark.slow
def test_classifier_hull_of_point_sets_is_exact_upper_hull(point_set):
    tp, fp, n_pos, n_neg = point_set
    roc = roc_from_point_set(point_set)
    hull = classifier_hull(roc)
    verts = hull_counts(hull, n_pos, n_neg)
    points = list(zip(roc.fp.tolist(), roc.tp.tolist()))
    check_upper_hull(verts, points, (0, 0), (n_neg, n_pos))
    assert_trivial_ends(hull)
    # second oracle: every vertex after a non-vertical edge is the unique maximiser of
    # tp - m·fp over all input points for some slope m
    for v, m in zip(verts, unique_maximiser_slopes(verts)):
        if m is None:
            continue
        values = [t - m * f for f, t in points]
        best = argmax_vertices(values)
        assert {points[i] for i in best} == {v}


def test_duplicated_vertex_is_kept():
    # two identical confusion matrices: the point (0.1, 0.8) is still a hull vertex
    r = roc_from_counts([8, 8], [1, 1], [2, 2], [9, 9], name="dup")
    hull = classifier_hull(r)
    assert hull.fpr.tolist() == [0.0, 0.1, 1.0]
    assert hull.tpr.tolist() == [0.0, 0.8, 1.0]
    assert hull.classifier == (ALL_NEGATIVE, "dup", ALL_POSITIVE)


def test_collinear_points_are_dropped():
    # (fp, tp) points (0,0), (1,2), (2,4), (3,5), (4,6) with N = 4, P = 6: edge slopes 2, 2, 1, 1,
    # so (1,2) and (3,5) lie on hull edges and are not vertices
    r = roc_from_counts([2, 4, 5], [1, 2, 3], [4, 2, 1], [3, 2, 1])
    hull = classifier_hull(r)
    assert hull_counts(hull, 6, 4) == [(0, 0), (2, 4), (4, 6)]
    # a run of points all on the diagonal leaves only the corners
    r = roc_from_counts([1, 2, 3], [1, 2, 3], [3, 2, 1], [3, 2, 1])
    assert classifier_hull(r).size == 2


@settings(max_examples=100, deadline=None)
@given(labelled_scores(max_n=50))
@pytest.mark.slow
def test_scored_classifier_hull_vertices_know_their_threshold(data):
    y, s = data
    roc = roc_curve(y, s, name="m")
    hull = classifier_hull(roc)
    assert_trivial_ends(hull)
    check_upper_hull(hull_counts(hull, roc.n_pos, roc.n_neg), list(zip(roc.fp, roc.tp)),
                     (0, 0), (roc.n_neg, roc.n_pos))
    for f, t, name, thr in zip(hull.fpr[1:-1], hull.tpr[1:-1], hull.classifier[1:-1],
                               hull.threshold[1:-1]):
        assert name == "m"
        # predicting positive iff score >= thr gives exactly this vertex
        assert np.sum(~y & (s >= thr)) / roc.n_neg == f
        assert np.sum(y & (s >= thr)) / roc.n_pos == t
    slopes = hull.segment_slopes
    assert np.all(np.diff(slopes[np.isfinite(slopes)]) < 0)


def test_large_random_hull_vectorised_oracle():
    rng = np.random.default_rng(5)
    n = 100_000
    y = rng.random(n) < 0.2
    s = rng.normal(size=n) + 1.5 * y
    roc = roc_curve(y, s)
    hull = classifier_hull(roc)
    v = np.array(hull_counts(hull, roc.n_pos, roc.n_neg), dtype=np.int64)
    fp, tp = roc.fp.astype(np.int64), roc.tp.astype(np.int64)
    for (f0, t0), (f1, t1) in zip(v[:-1], v[1:]):
        above = (f1 - f0) * (tp - t0) - (t1 - t0) * (fp - f0)
        assert above.max() <= 0
    turns = (v[1:-1, 0] - v[:-2, 0]) * (v[2:, 1] - v[1:-1, 1]) - \
        (v[1:-1, 1] - v[:-2, 1]) * (v[2:, 0] - v[1:-1, 0])
    assert np.all(turns < 0)
    assert hull.size > 10


# --- several classifiers -------------------------------------------------------------------------

def exact_points(roc):
    return [(Fraction(int(f), roc.n_neg), Fraction(int(t), roc.n_pos))
            for f, t in zip(roc.fp, roc.tp)]


def vertex_exact(hull, rocs, i):
    """The exact ROC point of vertex i, through its classifier and threshold."""
    name = hull.classifier[i]
    if name == ALL_NEGATIVE:
        return (Fraction(0), Fraction(0))
    if name == ALL_POSITIVE:
        return (Fraction(1), Fraction(1))
    roc = rocs[name]
    j = roc.point_at_threshold(hull.threshold[i])
    assert roc.fpr[j] == hull.fpr[i] and roc.tpr[j] == hull.tpr[i], "vertex not at its threshold"
    return (Fraction(int(roc.fp[j]), roc.n_neg), Fraction(int(roc.tp[j]), roc.n_pos))


@pytest.mark.slow
@settings(max_examples=100, deadline=None)
@given(shared_label_classifiers())
def test_convex_hull_of_several_classifiers(data):
    y, scores = data
    rocs = {f"c{k}": roc_curve(y, s, name=f"c{k}") for k, s in enumerate(scores)}
    hull = convex_hull(list(rocs.values()))
    assert_trivial_ends(hull)
    verts = [vertex_exact(hull, rocs, i) for i in range(hull.size)]
    all_points = [p for r in rocs.values() for p in exact_points(r)]
    check_upper_hull(verts, all_points, (0, 0), (1, 1))
    # potentially optimal: exactly the classifiers with a point that is a hull vertex, an
    # identical point of several classifiers going to the one listed first (documented tie rule)
    unclaimed = set(verts[1:-1])
    expected = set()
    for name, r in rocs.items():
        if unclaimed & set(exact_points(r)):
            expected.add(name)
            unclaimed -= set(exact_points(r))
    assert set(hull.potentially_optimal) == expected
    assert set(hull.dominated(rocs)) == set(rocs) - expected


@pytest.mark.slow
@settings(max_examples=100, deadline=None)
@given(shared_label_classifiers(max_classifiers=5))
def test_add_to_hull_equals_hull_from_scratch(data):
    y, scores = data
    rocs = [roc_curve(y, s, name=f"c{k}") for k, s in enumerate(scores)]
    incremental = convex_hull(rocs[:1])
    for r in rocs[1:]:
        incremental = add_to_hull(incremental, r)
    scratch = convex_hull(rocs)
    np.testing.assert_array_equal(incremental.fpr, scratch.fpr)
    np.testing.assert_array_equal(incremental.tpr, scratch.tpr)
    assert incremental.classifier == scratch.classifier
    np.testing.assert_array_equal(incremental.threshold, scratch.threshold)  # NaN == NaN here


def test_add_to_hull_with_different_test_sets():
    rng = np.random.default_rng(6)
    rocs = []
    for k in range(4):
        n = 30 + 7 * k
        y = rng.random(n) < 0.4
        y[:2] = [True, False]
        rocs.append(roc_curve(y, rng.normal(size=n) + y, name=f"c{k}"))
    h = convex_hull(rocs[:2])
    h = add_to_hull(add_to_hull(h, rocs[2]), rocs[3])
    s = convex_hull(rocs)
    np.testing.assert_array_equal(h.fpr, s.fpr)
    np.testing.assert_array_equal(h.tpr, s.tpr)
    assert h.classifier == s.classifier


def test_potentially_optimal_and_dominated():
    y = np.array([1, 1, 1, 0, 1, 0, 0, 0, 1, 0], bool)
    good = np.arange(10, 0, -1, dtype=float)  # ranks y as listed
    worse = good.copy()
    worse[[2, 3]] = worse[[3, 2]]  # one swap: dominated by `good`
    # two negatives first, then all five positives: the point (0.4, 1) is above good's hull
    crossing = np.array([8, 7, 6, 10, 5, 9, 3, 2, 4, 1], float)
    rocs = [roc_curve(y, good, name="good"), roc_curve(y, worse, name="worse"),
            roc_curve(y, crossing, name="crossing")]
    hull = convex_hull(rocs)
    assert "worse" not in hull.classifier
    assert hull.dominated(["good", "worse", "crossing"]) == ("worse",)
    assert hull.potentially_optimal == ("good", "crossing")
    # good's (0.2, 0.8) is now on the edge (0, 0.6) -> (0.4, 1): collinear, dropped
    assert hull.fpr.tolist() == [0.0, 0.0, 0.4, 1.0]
    assert hull.tpr.tolist() == [0.0, 0.6, 1.0, 1.0]
    assert hull.classifier == (ALL_NEGATIVE, "good", "crossing", ALL_POSITIVE)
    assert hull.threshold[1:3].tolist() == [8.0, 4.0]


def test_identical_points_go_to_the_classifier_listed_first():
    y = np.array([1, 0, 1, 1, 0, 0], bool)
    s = np.array([6, 5, 4, 3, 2, 1], float)
    a, b = roc_curve(y, s, name="a"), roc_curve(y, s * 10, name="b")
    assert set(convex_hull([a, b]).classifier[1:-1]) == {"a"}
    assert set(convex_hull([b, a]).classifier[1:-1]) == {"b"}
    # thresholds follow the classifier named
    np.testing.assert_array_equal(convex_hull([b, a]).threshold[1:-1],
                                  10 * convex_hull([a, b]).threshold[1:-1])


# --- optimal vertex -----------------------------------------------------------------------------

def test_scenarios_a_and_b_of_provost_fawcett():
    # negatives outnumber positives 10:1: P = 100, N = 1000
    tp = np.array([40, 70, 95, 97])
    fp = np.array([20, 100, 500, 600])
    hull = classifier_hull(roc_from_counts(tp, fp, 100 - tp, 1000 - fp, name="h"))
    assert hull.size == 6
    a = OperatingCondition(p_pos=1 / 11)  # equal costs
    b = OperatingCondition(p_pos=1 / 11, cost_fn=100.0, cost_fp=1.0)
    assert a.slope == pytest.approx(10.0, rel=1e-14)
    assert b.slope == pytest.approx(0.1, rel=1e-14)
    # edge slopes 20, 3.75, 0.625, 0.2, 0.075: slope 10 touches (0.02, 0.4), 1/10 (0.6, 0.97)
    va, vb = optimal_vertex(hull, a), optimal_vertex(hull, b)
    assert (va.fpr, va.tpr, va.index, va.alternative) == (0.02, 0.4, 1, None)
    assert (vb.fpr, vb.tpr, vb.index, vb.alternative) == (0.6, 0.97, 4, None)
    assert optimal_vertex(hull, 10.0).index == 1 and optimal_vertex(hull, 0.1).index == 4


def exact_hull_points(hull, n_pos, n_neg):
    return [(Fraction(f, n_neg), Fraction(t, n_pos)) for f, t in hull_counts(hull, n_pos, n_neg)]


@pytest.mark.slow
@settings(max_examples=200, deadline=None)
@given(labelled_scores(max_n=40),
       st.one_of(st.floats(1e-4, 1e4), st.sampled_from([0.0, math.inf, 1.0])))
def test_optimal_vertex_is_brute_force_argmax(data, m):
    y, s = data
    roc = roc_curve(y, s, name="m")
    hull = classifier_hull(roc)
    pts = exact_hull_points(hull, roc.n_pos, roc.n_neg)
    v = optimal_vertex(hull, m)
    if math.isinf(m):
        assert v.index == 0  # nothing beats flagging nothing at an infinite slope
        return
    mm = Fraction(m)
    values = [t - mm * f for f, t in pts]
    best = max(values)
    near = [i for i, val in enumerate(values) if best - val <= Fraction(1, 10**9)]
    assert v.index in near
    if len(near) == 1:
        assert v.alternative is None
    assert (v.fpr, v.tpr) == (hull.fpr[v.index], hull.tpr[v.index])
    assert v.classifier == hull.classifier[v.index]
    np.testing.assert_array_equal(v.threshold, hull.threshold[v.index])
    assert optimal_indices(hull, np.array([math.log(m) if m > 0 else -math.inf]))[0] == v.index


def test_tie_rule_lower_fpr_vertex_with_alternative():
    # P = N = 8 keeps every rate and edge slope exact in binary floating point
    r = roc_from_counts([4, 7], [1, 3], [4, 1], [7, 5], name="d")
    hull = classifier_hull(r)
    assert hull.segment_slopes.tolist() == [4.0, 1.5, 0.2]
    for m, index, alt in [(4.0, 0, 1), (1.5, 1, 2), (0.2, 2, 3), (1.4, 2, None), (5.0, 0, None),
                          (0.1, 3, None), (0.0, 3, None)]:
        v = optimal_vertex(hull, m)
        assert (v.index, v.alternative) == (index, alt), m
        if alt is not None:
            # both ends of the edge are optimal: equal tpr - m·fpr
            a = hull.tpr[index] - m * hull.fpr[index]
            b = hull.tpr[alt] - m * hull.fpr[alt]
            assert a == b
    # through operating conditions: p(+) = 1/2, equal costs is slope exactly 1
    r = roc_from_counts([5, 7], [2, 4], [3, 1], [6, 4], name="d")
    hull = classifier_hull(r)
    assert hull.segment_slopes.tolist() == [2.5, 1.0, 0.25]
    v = optimal_vertex(hull, OperatingCondition(0.5))
    assert (v.index, v.alternative, v.fpr, v.tpr) == (1, 2, 0.25, 0.625)


@pytest.mark.parametrize("n_pos", [3, 7, 10, 33, 97])
@pytest.mark.parametrize("n_neg", [97, 100, 203, 999])
def test_tie_rule_at_the_prevalence_with_unit_costs(n_pos, n_neg):
    # at p(+) = P/(P+N) with unit costs m = N/P: an edge with one positive and one negative
    # ((1,2) -> (2,3) in counts) has exactly that slope, though float rates rarely give it exactly
    r = roc_from_counts([2, 3], [1, 2], [n_pos - 2, n_pos - 3], [n_neg - 1, n_neg - 2], name="t")
    hull = classifier_hull(r)
    assert hull.size == 4
    cond = OperatingCondition(p_pos=n_pos / (n_pos + n_neg))
    v = optimal_vertex(hull, cond)
    assert (v.index, v.alternative) == (1, 2)  # the lower-FPR end, the other as alternative
    assert (v.fpr, v.tpr) == (1 / n_neg, 2 / n_pos)
    assert optimal_indices(hull, np.array([cond.log_slope]))[0] == 1
    # the two ends cost the same: same number of errors
    assert cond.normalized_cost(hull.fpr[1], hull.tpr[1]) == pytest.approx(
        cond.normalized_cost(hull.fpr[2], hull.tpr[2]), rel=1e-12)


def test_optimal_vertex_beyond_float_range_and_vertical_first_edge():
    r = roc_from_counts([3, 4], [0, 1], [1, 0], [4, 3], name="v")  # (0, 3/4) on the hull
    hull = classifier_hull(r)
    assert np.isinf(hull.segment_slopes[0])
    steep = OperatingCondition(p_pos=1e-300, cost_fn=1e-10, cost_fp=1e300)
    assert steep.slope == math.inf
    v = optimal_vertex(hull, steep)
    # the slope overflows a float but is finite (log m ~ 1404): the vertical edge is still
    # steeper, so (0, 3/4) beats flagging nothing
    assert math.isfinite(steep.log_slope)
    assert (v.index, v.alternative, v.tpr) == (1, None, 0.75)
    # a truly infinite slope ties along the vertical edge: (0, 0) chosen, (0, 3/4) the alternative
    v = optimal_vertex(hull, math.inf)
    assert (v.index, v.alternative) == (0, 1)
    flat = OperatingCondition(p_pos=1 - 1e-16, cost_fn=1e300, cost_fp=1e-300)
    assert optimal_vertex(hull, flat).tpr == 1.0


# --- _geometry.upper_hull ----------------------------------------------------------------------

def reference_row_hull(xs, ys, offset):
    """Per-row reference: consecutive duplicates keep the first copy (the last for the row's end
    point), then Andrew's monotone chain with exact arithmetic dropping collinear points."""
    n = len(xs)
    keep = []
    for i in range(n):
        if i > 0 and (xs[i], ys[i]) == (xs[i - 1], ys[i - 1]):
            if i == n - 1:  # the row's first and last points are always kept
                if keep[-1] == 0:
                    keep.append(i)
                else:
                    keep[-1] = i
            continue
        keep.append(i)
    hull = []
    for i in keep:
        p = (Fraction(xs[i]), Fraction(ys[i]))
        while len(hull) >= 2:
            a = (Fraction(xs[hull[-2]]), Fraction(ys[hull[-2]]))
            b = (Fraction(xs[hull[-1]]), Fraction(ys[hull[-1]]))
            if cross(a, b, p) >= 0:  # b makes no strict right turn
                hull.pop()
            else:
                break
        hull.append(i)
    return [offset + i for i in hull]


@st.composite
def rows_of_points(draw, dyadic_floats=False):
    k = draw(st.integers(1, 5))
    xs, ys, row = [], [], []
    for r in range(k):
        m = draw(st.integers(1, 12))
        pts = sorted(draw(st.lists(st.tuples(st.integers(0, 6), st.integers(0, 6)),
                                   min_size=m, max_size=m)))
        for x, y in pts:
            xs.append(x / 8 if dyadic_floats else x)
            ys.append(y / 4 if dyadic_floats else y)
            row.append(r)
    dtype = np.float64 if dyadic_floats else np.int64
    return np.array(xs, dtype), np.array(ys, dtype), np.array(row, np.int64)


@pytest.mark.slow
@settings(max_examples=120, deadline=None)
@given(st.booleans().flatmap(rows_of_points))
def test_upper_hull_rows_equal_per_row_monotone_chain(data):
    x, y, row = data
    expected = []
    for r in np.unique(row):
        sel = np.flatnonzero(row == r)
        expected += reference_row_hull(x[sel].tolist(), y[sel].tolist(), int(sel[0]))
    assert upper_hull(x, y, row).tolist() == expected


@settings(max_examples=120, deadline=None)
@given(st.booleans().flatmap(rows_of_points))
def test_upper_hull_single_row_equals_monotone_chain(data):
    x, y, row = data
    sel = row == 0
    x, y = x[sel], y[sel]
    expected = reference_row_hull(x.tolist(), y.tolist(), 0)
    got = upper_hull(x, y)
    if x.size <= 2:
        assert got.tolist() == list(range(x.size))
    else:
        assert got.tolist() == expected


@pytest.mark.parametrize("as_float", [False, True])
@pytest.mark.parametrize("with_rows", [False, True])
def test_upper_hull_pathological_input_beyond_vector_rounds(as_float, with_rows):
    # a strictly concave curve then a far higher point: each pruning round can remove only the
    # last curve point, so the vectorised rounds run out and the monotone chain must finish
    n = 4 * geometry._MAX_VECTOR_ROUNDS + 17
    i = np.arange(n, dtype=np.int64)
    x = np.r_[i, n]
    y = np.r_[i * (2 * n - i), n**3]
    if as_float:
        x, y = x / 1.0, y / 1.0
    if with_rows:
        x2, y2 = np.r_[x, x], np.r_[y, y]
        row = np.repeat([0, 1], x.size)
        got = upper_hull(x2, y2, row)
        assert got.tolist() == [0, n, n + 1, 2 * n + 1]
    else:
        assert upper_hull(x, y).tolist() == [0, n]
        # without the far point the whole curve is its own hull
        assert upper_hull(x[:-1], y[:-1]).tolist() == list(range(n))


@settings(max_examples=50, deadline=None)
@given(st.booleans().flatmap(rows_of_points), st.sampled_from([0, 1, 2]))
def test_upper_hull_fallback_equals_vectorised(data, rounds):
    x, y, row = data
    full = upper_hull(x, y, row)
    saved = geometry._MAX_VECTOR_ROUNDS
    geometry._MAX_VECTOR_ROUNDS = rounds
    try:
        assert upper_hull(x, y, row).tolist() == full.tolist()
    finally:
        geometry._MAX_VECTOR_ROUNDS = saved
