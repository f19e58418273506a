"""The ROC convex hull and iso-performance lines (Provost & Fawcett, paper 001).

The hull runs from (0, 0), the all-negative classifier, to (1, 1), the all-positive one, along the
upper boundary of every ROC point. Each vertex remembers which classifier and threshold realise it.
Only hull vertices can ever be optimal, and the hull of a set of classifiers is the hull of their
individual hulls, which is what makes adding a classifier cheap (:func:`add_to_hull`).
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from functools import cached_property

import numpy as np
from numpy.typing import NDArray

from costdash._geometry import upper_hull
from costdash.conditions import OperatingCondition
from costdash.roc import RocCurve

ALL_NEGATIVE = "all-negative"
ALL_POSITIVE = "all-positive"

# Slopes whose logs differ by at most this are equal (an iso-performance line along an edge).
# Edge slopes come from differences of rounded rates, off by up to ~n·1e-16 relative on a short
# edge of an n-example test set; exact ties such as ΔTP = ΔFP at p(+) = prevalence with unit
# costs must still be seen as ties, so that the documented lower-FPR choice is made.
SAME_LOG_SLOPE = 1e-9


@dataclass(frozen=True, eq=False)
class RocHull:
    """Vertices of an ROC convex hull, ordered by FPR from (0, 0) to (1, 1).

    Attributes
    ----------
    fpr, tpr : ndarray of float64, shape (v,)
        Vertex coordinates; slopes between consecutive vertices strictly decrease.
    classifier : tuple of str
        The classifier realising each vertex; ``"all-negative"`` at (0, 0), ``"all-positive"``
        at (1, 1).
    threshold : ndarray of float64, shape (v,)
        Its score threshold (NaN for the trivial classifiers and for counted points without one).
    """

    fpr: NDArray[np.float64]
    tpr: NDArray[np.float64]
    classifier: tuple[str, ...]
    threshold: NDArray[np.float64]

    @property
    def size(self) -> int:
        return int(self.fpr.size)

    @cached_property
    def segment_slopes(self) -> NDArray[np.float64]:
        """Slope of each edge, shape (v - 1,), decreasing; inf for a vertical first edge."""
        with np.errstate(divide="ignore"):
            return np.diff(self.tpr) / np.diff(self.fpr)

    @property
    def potentially_optimal(self) -> tuple[str, ...]:
        """Non-trivial classifiers with at least one hull vertex, in vertex order."""
        seen: dict[str, None] = {}
        for name in self.classifier:
            if name not in (ALL_NEGATIVE, ALL_POSITIVE):
                seen.setdefault(name)
        return tuple(seen)

    def dominated(self, names: Iterable[str]) -> tuple[str, ...]:
        """Those of ``names`` with no hull vertex: never optimal under any conditions."""
        on_hull = set(self.classifier)
        return tuple(n for n in names if n not in on_hull)


@dataclass(frozen=True)
class OptimalVertex:
    """The hull vertex an iso-performance line of a given slope touches first.

    ``alternative`` is the other end of the edge when the slope equals that edge's slope exactly
    (every point of the edge is then optimal); ``index`` is the deterministic choice, the vertex
    with the lower FPR.
    """

    index: int
    classifier: str
    threshold: float
    fpr: float
    tpr: float
    alternative: int | None = None


def _is_trivial(fp: int, tp: int, n_pos: int, n_neg: int) -> str | None:
    if fp == 0 and tp == 0:
        return ALL_NEGATIVE
    if fp == n_neg and tp == n_pos:
        return ALL_POSITIVE
    return None


def _hull_candidates(fp: NDArray[np.integer], tp: NDArray[np.integer]) -> NDArray[np.int64] | None:
    """Indices of the points of an ROC curve (integer counts, sorted by FP then TP) that may be
    hull vertices, or None to consider them all.

    A scored curve is a staircase of about as many points as examples, but only its upper-left
    corners can be vertices, and finding them takes equality tests on the counts where the
    hull's own pruning computes cross products in int64: a point directly below the next one
    is not a vertex, nor is one level with the point before it and to its right, which lies
    under the chord from that point to the last one (the last point, all positive, has the
    most of both counts; checked). Removing points that are never vertices leaves the hull,
    and which copy of a repeated vertex it names, as it was: repeated points are kept.
    """
    n = fp.size
    if (n < 4 or not (np.issubdtype(fp.dtype, np.integer) and np.issubdtype(tp.dtype, np.integer))
            or fp[-1] < fp.max() or tp[-1] < tp.max()):
        return None
    # In place, at most three masks of n bytes at a time: curves run to tens of millions of
    # points, and the hull must stay within a small multiple of them.
    keep = np.empty(n, dtype=bool)
    below_next = keep[:-1]                        # point i under point i + 1
    np.equal(fp[1:], fp[:-1], out=below_next)
    step = np.greater(tp[1:], tp[:-1])
    below_next &= step
    right_of_previous = np.equal(tp[1:], tp[:-1], out=step)  # point i + 1 level with point i
    right_of_previous &= np.greater(fp[1:], fp[:-1])
    keep[-1] = False
    keep[1:] |= right_of_previous
    del step, right_of_previous
    np.logical_not(keep, out=keep)
    keep[0] = keep[-1] = True
    return np.flatnonzero(keep)


def classifier_hull(roc: RocCurve) -> RocHull:
    """The ROC convex hull of one classifier (exact integer geometry on its counts)."""
    candidates = _hull_candidates(roc.fp, roc.tp)
    if candidates is None:
        idx = upper_hull(roc.fp, roc.tp)
    else:
        idx = candidates[upper_hull(roc.fp[candidates], roc.tp[candidates])]
    names = tuple(_is_trivial(int(roc.fp[i]), int(roc.tp[i]), roc.n_pos, roc.n_neg) or roc.name
                  for i in idx.tolist())
    threshold = roc.threshold[idx].copy()
    threshold[[i for i, name in enumerate(names) if name in (ALL_NEGATIVE, ALL_POSITIVE)]] = np.nan
    # From the counts at the vertices only: roc.fpr would materialise a float array per point.
    return RocHull(fpr=roc.fp[idx] / roc.n_neg, tpr=roc.tp[idx] / roc.n_pos, classifier=names,
                   threshold=threshold)


def _merge(hulls: Sequence[RocHull]) -> RocHull:
    fpr = np.concatenate([h.fpr for h in hulls])
    tpr = np.concatenate([h.tpr for h in hulls])
    names = np.array([n for h in hulls for n in h.classifier], dtype=object)
    threshold = np.concatenate([h.threshold for h in hulls])
    # Stable sort keeps the earlier classifier first among identical points, so ties go to the
    # classifier listed first in the file.
    order = np.lexsort((tpr, fpr))
    fpr, tpr, names, threshold = fpr[order], tpr[order], names[order], threshold[order]
    # Identical points of different classifiers: keep the first; the trivial corners always win.
    first = np.ones(fpr.size, dtype=bool)
    first[1:] = (fpr[1:] != fpr[:-1]) | (tpr[1:] != tpr[:-1])
    fpr, tpr, names, threshold = fpr[first], tpr[first], names[first], threshold[first]
    idx = upper_hull(fpr, tpr)
    labels = list(names[idx])
    labels[0], labels[-1] = ALL_NEGATIVE, ALL_POSITIVE
    thr = threshold[idx].copy()
    thr[0] = thr[-1] = np.nan
    return RocHull(fpr=fpr[idx], tpr=tpr[idx], classifier=tuple(labels), threshold=thr)


def convex_hull(rocs: Sequence[RocCurve]) -> RocHull:
    """The ROC convex hull of several classifiers together.

    Computed as the hull of the classifiers' own hulls, which contain every point that can be on it.
    """
    return _merge([classifier_hull(r) for r in rocs])


def hull_of_hulls(hulls: Sequence[RocHull]) -> RocHull:
    """The ROC convex hull of several classifiers from their own hulls.

    Parameters
    ----------
    hulls : sequence of RocHull
        Each classifier's :func:`classifier_hull`, in the classifiers' order (ties go to the
        first).

    Returns
    -------
    RocHull
        Exactly :func:`convex_hull` of the classifiers' curves, without computing their hulls
        again.
    """
    return _merge(hulls)


def add_to_hull(hull: RocHull, roc: RocCurve) -> RocHull:
    """The hull after adding one classifier, from the existing vertices alone (paper 001)."""
    return _merge([hull, classifier_hull(roc)])


def optimal_vertex(hull: RocHull, condition: OperatingCondition | float) -> OptimalVertex:
    """The hull vertex touched by the iso-performance line of the given conditions or slope.

    The vertex maximises TPR - m·FPR: the first vertex whose outgoing edge is flatter than m.
    Comparisons are made on log slopes so that conditions beyond float range stay ordered.
    """
    log_m = condition.log_slope if isinstance(condition, OperatingCondition) else (
        math.log(condition) if condition > 0 else -math.inf)
    with np.errstate(divide="ignore"):
        log_edges = np.log(hull.segment_slopes)
    # Edges steeper than m lead to better vertices; the optimum is after the last of them.
    index = int(np.count_nonzero(log_edges > log_m + SAME_LOG_SLOPE))
    alternative = None
    if index < log_edges.size and (log_edges[index] == log_m
                                   or abs(log_edges[index] - log_m) <= SAME_LOG_SLOPE):
        alternative = index + 1
    return OptimalVertex(index=index, classifier=hull.classifier[index],
                         threshold=float(hull.threshold[index]), fpr=float(hull.fpr[index]),
                         tpr=float(hull.tpr[index]), alternative=alternative)


def optimal_indices(hull: RocHull, log_slopes: NDArray[np.float64]) -> NDArray[np.int64]:
    """Vectorised :func:`optimal_vertex`: the optimal vertex index for each log slope."""
    with np.errstate(divide="ignore"):
        log_edges = np.log(hull.segment_slopes)
    # log_edges decrease; count of edges with log_edge > log_m (+ the tie tolerance).
    return np.searchsorted(-log_edges, -(np.asarray(log_slopes) + SAME_LOG_SLOPE),
                           side="left").astype(np.int64)
