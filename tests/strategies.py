"""Shared hypothesis strategies and exact (integer / Fraction) oracles for the core tests.

The oracles here deliberately share no code with costdash: ROC points are recounted by brute force,
hulls are checked with exact integer cross products, and everything that can be is computed with
:class:`fractions.Fraction`.
"""

from __future__ import annotations

from fractions import Fraction

import numpy as np
from hypothesis import strategies as st

# --- labelled scores ----------------------------------------------------------------------------

SCORE_KINDS = ("ties", "two", "integer", "float")


@st.composite
def labelled_scores(draw, min_n: int = 2, max_n: int = 60, kinds=SCORE_KINDS):
    """(y_true bool array, score float64 array) with both classes present.

    ``kinds``: "ties" (a few distinct values, many ties), "two" (exactly two distinct values),
    "integer" (integers in a wide range, ties possible) or "float" (continuous).
    """
    n = draw(st.integers(min_n, max_n))
    rest = draw(st.lists(st.booleans(), min_size=n - 2, max_size=n - 2))
    y = draw(st.permutations([True, False, *rest]))
    kind = draw(st.sampled_from(kinds))
    if kind == "ties":
        score = draw(st.lists(st.integers(0, 4), min_size=n, max_size=n))
    elif kind == "two":
        lo = draw(st.integers(-3, 3))
        score = draw(st.lists(st.sampled_from([lo, lo + 1]), min_size=n, max_size=n))
        score[0], score[1] = lo, lo + 1  # both values present
    elif kind == "integer":
        score = draw(st.lists(st.integers(-1000, 1000), min_size=n, max_size=n))
    else:
        score = draw(st.lists(st.floats(-1e6, 1e6, allow_nan=False, allow_infinity=False),
                              min_size=n, max_size=n))
    return np.asarray(y, dtype=bool), np.asarray(score, dtype=np.float64)


@st.composite
def integer_labelled_scores(draw, min_n: int = 2, max_n: int = 40):
    """Like :func:`labelled_scores` with small integer scores (exactly transformable)."""
    return draw(labelled_scores(min_n=min_n, max_n=max_n, kinds=("ties", "two", "integer")))


@st.composite
def shared_label_classifiers(draw, max_classifiers: int = 4, max_n: int = 40):
    """(y_true, [score arrays]) for 1..max_classifiers classifiers on one test set."""
    y, first = draw(labelled_scores(min_n=2, max_n=max_n))
    k = draw(st.integers(1, max_classifiers))
    scores = [first]
    for _ in range(k - 1):
        kind = draw(st.sampled_from(SCORE_KINDS))
        n = y.size
        if kind == "float":
            s = draw(st.lists(st.floats(-10, 10, allow_nan=False), min_size=n, max_size=n))
        else:
            s = draw(st.lists(st.integers(0, 6), min_size=n, max_size=n))
        scores.append(np.asarray(s, dtype=np.float64))
    return y, scores


# Strictly increasing maps that keep distinct small integers distinct in float64.
INCREASING_TRANSFORMS = {
    "affine": lambda s: 3.0 * s - 7.0,
    "cube": lambda s: s**3 + s,
    "exp": lambda s: np.exp(s / 400.0),
    "logistic": lambda s: 1.0 / (1.0 + np.exp(-s / 400.0)),
    "arcsinh": np.arcsinh,
}


# --- point sets given by confusion-matrix counts ------------------------------------------------

@st.composite
def count_point_sets(draw, max_pos: int = 8, max_neg: int = 8, max_points: int = 14):
    """(tp, fp, n_pos, n_neg): random confusion matrices on a small grid.

    A small grid makes duplicates and collinear points common; some points are duplicated and
    midpoints of pairs added on purpose.
    """
    n_pos = draw(st.integers(1, max_pos))
    n_neg = draw(st.integers(1, max_neg))
    m = draw(st.integers(1, max_points))
    pts = draw(st.lists(st.tuples(st.integers(0, n_pos), st.integers(0, n_neg)),
                        min_size=m, max_size=m))
    if draw(st.booleans()):
        pts.append(pts[draw(st.integers(0, len(pts) - 1))])  # exact duplicate
    if draw(st.booleans()) and len(pts) >= 2:
        (t1, f1), (t2, f2) = pts[0], pts[-1]
        if (t1 + t2) % 2 == 0 and (f1 + f2) % 2 == 0:
            pts.append(((t1 + t2) // 2, (f1 + f2) // 2))  # collinear midpoint
    tp = np.array([p[0] for p in pts], dtype=np.int64)
    fp = np.array([p[1] for p in pts], dtype=np.int64)
    return tp, fp, n_pos, n_neg


def roc_from_point_set(point_set, name: str = "c"):
    from costdash.roc import roc_from_counts

    tp, fp, n_pos, n_neg = point_set
    return roc_from_counts(tp, fp, n_pos - tp, n_neg - fp, name=name)


# --- oracles ------------------------------------------------------------------------------------

def brute_force_roc(y, score):
    """ROC by brute force: for each distinct threshold t (descending), count score >= t."""
    y = np.asarray(y, dtype=bool)
    score = np.asarray(score, dtype=np.float64)
    thresholds = np.unique(score)[::-1]
    tp = [0] + [int(np.sum(y & (score >= t))) for t in thresholds]
    fp = [0] + [int(np.sum(~y & (score >= t))) for t in thresholds]
    return np.array(tp), np.array(fp), np.r_[np.nan, thresholds]


def cross(o, a, b) -> int | Fraction:
    """Cross product (a - o) x (b - o): > 0 when b is left of (above) the directed line o -> a."""
    return (a[0] - o[0]) * (b[1] - o[1]) - (a[1] - o[1]) * (b[0] - o[0])


def check_upper_hull(hull_pts, all_pts, start, end):
    """Assert ``hull_pts`` is exactly the upper hull of ``all_pts`` from ``start`` to ``end``.

    Exact arithmetic (ints or Fractions): every vertex is an input point, x never decreases,
    every turn is strictly clockwise (no collinear or duplicate vertices) and no input point lies
    strictly above any hull edge. A concave polyline through input points that no point is above
    is the upper hull.
    """
    hull_pts = [tuple(p) for p in hull_pts]
    pts = {tuple(p) for p in all_pts}
    assert hull_pts[0] == tuple(start) and hull_pts[-1] == tuple(end), hull_pts
    for p in hull_pts:
        assert p in pts, f"hull vertex {p} is not an input point"
    for a, b in zip(hull_pts, hull_pts[1:]):
        assert b[0] >= a[0] and a != b
    for a, b, c in zip(hull_pts, hull_pts[1:], hull_pts[2:]):
        assert cross(a, b, c) < 0, f"{b} is not a strict vertex between {a} and {c}"
    for a, b in zip(hull_pts, hull_pts[1:]):
        for p in pts:
            assert cross(a, b, p) <= 0, f"{p} lies above hull edge {a} -> {b}"


def unique_maximiser_slopes(hull_pts):
    """For each vertex of a strictly concave chain, a slope m (exact Fraction) making it the unique
    maximiser of y - m·x over the chain; None where no finite m does (a start point followed by a
    vertical edge)."""
    slopes = []  # None: vertical edge (+inf)
    for a, b in zip(hull_pts, hull_pts[1:]):
        dx, dy = Fraction(b[0] - a[0]), Fraction(b[1] - a[1])
        slopes.append(None if dx == 0 else dy / dx)
    out = []
    for i in range(len(hull_pts)):
        s_in = slopes[i - 1] if i > 0 else "inf"  # steeper side
        s_out = slopes[i] if i < len(slopes) else "-inf"  # flatter side
        if s_in is None:
            s_in = "inf"
        if s_out is None:  # vertical outgoing edge: the next vertex is always better
            out.append(None)
        elif s_in == "inf" and s_out == "-inf":
            out.append(Fraction(0))
        elif s_in == "inf":
            out.append(s_out + 1)
        elif s_out == "-inf":
            out.append(s_in - 1)
        else:
            out.append((s_in + s_out) / 2)
    return out


def argmax_vertices(values):
    """Indices attaining the maximum of a list of exact numbers."""
    best = max(values)
    return [i for i, v in enumerate(values) if v == best]
