"""Upper convex hulls of ROC polylines, vectorised.

An ROC curve is a sequence of points sorted by FPR (then TPR). Its upper hull is found by pruning:
a point is not a hull vertex when it makes no strict right turn with its current neighbours (it lies
on or under the chord joining them), and all such points can be removed at once, because each of
them is inside the hull of the others. A sequence with only right turns has decreasing slopes, so it
is a concave polyline and already its own hull. Pruning rounds are cheap array passes; a pathological
input that keeps needing rounds finishes with Andrew's monotone chain on what is left, so the result
is exact either way.

Several polylines ("rows", e.g. bootstrap replicates) are pruned together: each row is a contiguous
block of points, and neighbours in different rows never interact.
"""

from __future__ import annotations

import numpy as np
from numpy.typing import NDArray

_MAX_VECTOR_ROUNDS = 48
# Chunk size for the first, full-length pruning pass: bounds its temporaries to a few arrays of this
# many elements, which keeps ten-million-point ROC curves within a small multiple of their input.
_FIRST_PASS_CHUNK = 1 << 18


def _turn_is_not_right(ax, ay, bx, by, cx, cy, exact: bool) -> NDArray[np.bool_]:
    """True where b makes no strict clockwise (right) turn between a and c."""
    cross = (bx - ax) * (cy - by) - (by - ay) * (cx - bx)
    if exact:
        return cross >= 0
    # Float coordinates: treat a turn within rounding error of straight as straight, so collinear
    # points are dropped as the definition of a hull vertex asks.
    scale = (np.abs(bx - ax) + np.abs(by - ay)) * (np.abs(cx - bx) + np.abs(cy - by))
    return cross >= -1e-12 * scale


def _first_pass(x: NDArray, y: NDArray, exact: bool) -> NDArray[np.bool_]:
    """Keep-mask after one pruning round over a single row, in bounded memory."""
    n = x.size
    keep = np.ones(n, dtype=bool)
    for start in range(1, n - 1, _FIRST_PASS_CHUNK):
        stop = min(start + _FIRST_PASS_CHUNK, n - 1)
        a, b, c = slice(start - 1, stop - 1), slice(start, stop), slice(start + 1, stop + 1)
        if exact:
            ax, bx, cx = (x[s].astype(np.int64) for s in (a, b, c))
            ay, by, cy = (y[s].astype(np.int64) for s in (a, b, c))
        else:
            ax, bx, cx, ay, by, cy = x[a], x[b], x[c], y[a], y[b], y[c]
        keep[start:stop] = ~_turn_is_not_right(ax, ay, bx, by, cx, cy, exact)
    return keep


def _monotone_chain(x: NDArray, y: NDArray, idx: NDArray[np.int64], exact: bool) -> list[int]:
    """Andrew's monotone chain (upper hull) over the points ``idx`` of one row, in order."""
    hull: list[int] = []
    for i in idx.tolist():
        while len(hull) >= 2:
            a, b = hull[-2], hull[-1]
            if bool(_turn_is_not_right(x[a], y[a], x[b], y[b], x[i], y[i], exact)):
                hull.pop()
            else:
                break
        hull.append(i)
    return hull


def upper_hull(x: NDArray, y: NDArray, row: NDArray[np.integer] | None = None) -> NDArray[np.int64]:
    """Indices of the upper-hull vertices of one or several sorted polylines.

    Parameters
    ----------
    x, y : ndarray of shape (n,)
        Point coordinates, sorted by ``x`` then ``y`` within each row. Integer arrays (counts)
        are handled in exact integer arithmetic; float arrays with a relative tolerance of 1e-12.
    row : ndarray of int of shape (n,), optional
        Row id of each point, non-decreasing. The first and last point of every row are always
        kept. Without it, all points form one row.

    Returns
    -------
    ndarray of int64
        Sorted indices of the kept points: per row, the hull vertices from the first point to the
        last, with duplicate and collinear points removed.
    """
    exact = np.issubdtype(x.dtype, np.integer) and np.issubdtype(y.dtype, np.integer)
    n = x.size
    if n <= 2:
        return np.arange(n, dtype=np.int64)
    if row is None:
        # Distinct ROC points (one per threshold) are the common case; a duplicate would make two
        # collinear-with-each-other points remove each other, so drop repeats before pruning.
        distinct = np.ones(n, dtype=bool)
        distinct[1:] = (x[1:] != x[:-1]) | (y[1:] != y[:-1])
        distinct[-1] = True
        # The first pass looks at raw neighbours, so a duplicated hull vertex would be judged
        # "straight" against its own copy and both copies dropped: with repeats, skip it.
        keep = _first_pass(x, y, exact) if distinct.all() else distinct.copy()
        keep[0] = keep[-1] = True
        idx = np.flatnonzero(keep)
        row_of = None
    else:
        distinct = np.ones(n, dtype=bool)
        same_row = row[1:] == row[:-1]
        distinct[1:] = ~same_row | (x[1:] != x[:-1]) | (y[1:] != y[:-1])
        last_of_row = np.ones(n, dtype=bool)
        last_of_row[:-1] = ~same_row
        idx = np.flatnonzero(distinct | last_of_row)
        row_of = row[idx]

    for _ in range(_MAX_VECTOR_ROUNDS):
        if idx.size <= 2:
            return idx
        xi, yi = x[idx], y[idx]
        if exact:
            xi, yi = xi.astype(np.int64), yi.astype(np.int64)
        bad = _turn_is_not_right(xi[:-2], yi[:-2], xi[1:-1], yi[1:-1], xi[2:], yi[2:], exact)
        if row_of is not None:
            bad &= (row_of[1:-1] == row_of[:-2]) & (row_of[1:-1] == row_of[2:])
        if not bad.any():
            return idx
        keep = np.ones(idx.size, dtype=bool)
        keep[1:-1] = ~bad
        idx = idx[keep]
        if row_of is not None:
            row_of = row_of[keep]

    if row_of is None:
        return np.asarray(_monotone_chain(x, y, idx, exact), dtype=np.int64)
    bounds = np.flatnonzero(np.diff(row_of)) + 1
    pieces = [_monotone_chain(x, y, part, exact) for part in np.split(idx, bounds)]
    return np.asarray([i for piece in pieces for i in piece], dtype=np.int64)
