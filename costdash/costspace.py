"""Cost space (Drummond & Holte, papers 000 and 004): cost lines, lower envelopes, operating ranges.

The x axis is PC(+) and the y axis normalized expected cost. The ROC point (FPR, TPR) is the cost line

    NE(x) = (1 - TPR - FPR)·x + FPR = (1 - TPR)·x + FPR·(1 - x),

from FPR at x = 0 to 1 - TPR at x = 1. The lower envelope of the lines of the hull vertices is the
dual of the ROC convex hull: the lines of consecutive vertices (f1, t1), (f2, t2) cross at

    x = (f2 - f1) / ((f2 - f1) + (t2 - t1)) = 1 / (1 + s),

s being the edge's slope, which is PC(+) = 1 / (1 + m) at the iso-performance slope m = s. So the
envelope's breakpoints are exact, with no grid.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from numpy.typing import ArrayLike, NDArray

from costdash.hull import RocHull


@dataclass(frozen=True, eq=False)
class LowerEnvelope:
    """The lower envelope of the cost lines of a hull's vertices, a concave polyline on [0, 1].

    Attributes
    ----------
    pc : ndarray of float64, shape (k,)
        Breakpoints, strictly increasing, from 0 to 1.
    cost : ndarray of float64, shape (k,)
        Normalized expected cost at each breakpoint.
    vertex : ndarray of int64, shape (k - 1,)
        Index into the hull of the vertex whose cost line forms each piece between breakpoints.
    hull : RocHull
        The hull it is the dual of.
    """

    pc: NDArray[np.float64]
    cost: NDArray[np.float64]
    vertex: NDArray[np.int64]
    hull: RocHull

    def __call__(self, pc: ArrayLike) -> NDArray[np.float64]:
        """Normalized expected cost on the envelope at each PC(+) in [0, 1]."""
        return np.interp(np.asarray(pc, dtype=np.float64), self.pc, self.cost)

    def vertex_at(self, pc: ArrayLike) -> NDArray[np.int64]:
        """Hull vertex optimal at each PC(+) (at a breakpoint, the one on its left)."""
        x = np.asarray(pc, dtype=np.float64)
        piece = np.searchsorted(self.pc, x, side="left") - 1
        return self.vertex[np.clip(piece, 0, self.vertex.size - 1)]

    @property
    def area(self) -> float:
        """Area under the envelope: expected normalized cost with PC(+) uniform (paper 004 eq. 11)."""
        return float(np.trapezoid(self.cost, self.pc))


def cost_line(fpr: ArrayLike, tpr: ArrayLike, pc: ArrayLike) -> NDArray[np.float64]:
    """Normalized expected cost of ROC point(s) (fpr, tpr) at PC(+) value(s) ``pc`` (broadcast)."""
    f, t, x = (np.asarray(a, dtype=np.float64) for a in (fpr, tpr, pc))
    return (1.0 - t) * x + f * (1.0 - x)


def lower_envelope(hull: RocHull) -> LowerEnvelope:
    """The exact lower envelope of a hull's cost lines (its dual).

    Every hull vertex with a positive-length piece contributes one piece; a vertical first edge or
    a horizontal last edge gives a breakpoint at 0 or 1 and is merged into it.
    """
    df = np.diff(hull.fpr)
    dt = np.diff(hull.tpr)
    crossings = df / (df + dt)
    pc = np.concatenate(([0.0], crossings, [1.0]))
    vertex = np.arange(hull.size, dtype=np.int64)
    keep_piece = np.diff(pc) > 0
    vertex = vertex[keep_piece]
    pc_start = pc[:-1][keep_piece]
    pc = np.concatenate((pc_start, [1.0]))
    cost = np.empty(pc.size)
    cost[:-1] = cost_line(hull.fpr[vertex], hull.tpr[vertex], pc_start)
    cost[-1] = 1.0 - hull.tpr[vertex[-1]]
    # The left end of the first piece is 0; with a vertical first hull edge, its own (0, t) vertex
    # is optimal at 0 with cost FPR = 0 like the all-negative one, so cost[0] is 0 either way.
    return LowerEnvelope(pc=pc, cost=cost, vertex=vertex, hull=hull)


def trivial_cost(pc: ArrayLike) -> NDArray[np.float64]:
    """Cost of the better trivial classifier, min(PC(+), 1 - PC(+))."""
    x = np.asarray(pc, dtype=np.float64)
    return np.minimum(x, 1.0 - x)


def operating_range(fpr: ArrayLike, tpr: ArrayLike) -> tuple[float, float] | None:
    """The PC(+) interval where a classifier's points beat both trivial classifiers (paper 000 §4).

    Point i is below the all-negative line NE = x for x > FPR_i / (FPR_i + TPR_i), and below the
    all-positive line NE = 1 - x for x < (1 - FPR_i) / (2 - FPR_i - TPR_i). The classifier's
    envelope beats both on the open interval (min of the first, max of the second), when non-empty.

    Returns
    -------
    (lo, hi) or None
        None when no point beats the trivial classifiers anywhere (all on or under the diagonal).
    """
    f = np.asarray(fpr, dtype=np.float64)
    t = np.asarray(tpr, dtype=np.float64)
    useful = (t > f)
    if not useful.any():
        return None
    f, t = f[useful], t[useful]
    lo = float(np.min(f / (f + t)))
    # min: a vertex with TPR = 1 gives exactly 1, which rounding may push just past the PC(+) axis
    hi = min(float(np.max((1.0 - f) / (2.0 - f - t))), 1.0)
    return (lo, hi) if lo < hi else None


# Normalized costs closer than this are equal (rounding noise is ~1e-16; costs lie in [0, 1]).
_EQUAL_COST = 1e-12


@dataclass(frozen=True, eq=False)
class DifferenceCurve:
    """Difference a - b of two envelopes, exact (piecewise linear on merged breakpoints).

    Attributes
    ----------
    pc, diff : ndarray of float64
        Breakpoints of the difference and its value there (negative where ``a`` is cheaper).
    crossovers : ndarray of float64
        PC(+) values in (0, 1) where the sign of the difference changes: the better one changes.
    """

    a: str
    b: str
    pc: NDArray[np.float64]
    diff: NDArray[np.float64]
    crossovers: NDArray[np.float64]

    def better_intervals(self) -> list[tuple[float, float, str]]:
        """Maximal PC(+) intervals where one is strictly cheaper, with the cheaper one's name."""
        cuts = np.concatenate(([0.0], self.crossovers, [1.0]))
        out: list[tuple[float, float, str]] = []
        for lo, hi in zip(cuts[:-1], cuts[1:]):
            # No sign change between cuts, but the two may coincide at the midpoint (a classifier
            # on part of a hull): take the sign from any point of the interval where they differ.
            inside = self.diff[(self.pc > lo) & (self.pc < hi)]
            values = np.r_[np.interp((lo + hi) / 2.0, self.pc, self.diff), inside]
            nonzero = values[values != 0]
            mid = nonzero[0] if nonzero.size else 0.0
            if mid < 0:
                out.append((float(lo), float(hi), self.a))
            elif mid > 0:
                out.append((float(lo), float(hi), self.b))
        return out


def envelope_difference(a: LowerEnvelope, b: LowerEnvelope, *, a_name: str = "a",
                        b_name: str = "b") -> DifferenceCurve:
    """The difference of two envelopes and the PC(+) values where they cross."""
    pc = np.union1d(a.pc, b.pc)
    diff = a(pc) - b(pc)
    # Where both envelopes follow the same cost line (a classifier against a hull it is on),
    # interpolation leaves rounding noise of either sign; count it as equal, not as crossings.
    diff[np.abs(diff) <= _EQUAL_COST] = 0.0
    # Between breakpoints the difference is linear, so each sign change is one exact root.
    sign = np.sign(diff)
    crossings = []
    for i in np.flatnonzero(sign[:-1] * sign[1:] < 0):
        x0, x1, d0, d1 = pc[i], pc[i + 1], diff[i], diff[i + 1]
        crossings.append(x0 + (x1 - x0) * d0 / (d0 - d1))
    # A run of exact zeros between opposite signs (the envelopes touch, then part) is one
    # crossover, placed where the run starts.
    for i in np.flatnonzero(sign == 0):
        if 0 < i < pc.size - 1 and sign[i - 1] != 0:
            right = sign[i + 1:][sign[i + 1:] != 0]
            if right.size and right[0] == -sign[i - 1]:
                crossings.append(pc[i])
    return DifferenceCurve(a=a_name, b=b_name, pc=pc, diff=diff,
                           crossovers=np.unique(np.asarray(crossings, dtype=np.float64)))
