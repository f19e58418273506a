"""Decision criteria beyond minimum expected cost, on the hull and the envelope.

Neyman-Pearson and workforce utilisation (paper 004 §2.2.2, paper 001) ask for the largest TPR
under a budget that grows along the hull; a point on a hull edge is realised by using the edge's
right vertex with probability ``weight`` and the left one otherwise. Cost-weighted areas (paper 004
eq. 11) integrate the envelope against a distribution over PC(+). Sensitivity analysis (paper 001)
maps ranges of priors and costs to a range of slopes, hence a stretch of the hull.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace

import numpy as np
from numpy.typing import NDArray
from scipy.special import betainc

from costdash.conditions import OperatingCondition
from costdash.costspace import LowerEnvelope, cost_line
from costdash.errors import ParameterError
from costdash.hull import ALL_NEGATIVE, ALL_POSITIVE, RocHull, optimal_vertex
from costdash.roc import RocCurve


@dataclass(frozen=True)
class MixedOperatingPoint:
    """A point on the hull realised by mixing two vertices.

    Use vertex ``right`` with probability ``weight`` and vertex ``left`` otherwise; ``weight`` is 0
    when the point is a vertex itself.
    """

    fpr: float
    tpr: float
    left: int
    right: int
    weight: float
    left_classifier: str
    right_classifier: str
    left_threshold: float
    right_threshold: float


def _vertex_point(hull: RocHull, k: int) -> MixedOperatingPoint:
    return MixedOperatingPoint(float(hull.fpr[k]), float(hull.tpr[k]), k, k, 0.0,
                               hull.classifier[k], hull.classifier[k], float(hull.threshold[k]),
                               float(hull.threshold[k]))


def _cheapest_with_tpr_of(hull: RocHull, k: int) -> int:
    """The first hull vertex with vertex ``k``'s TPR: past it the hull is flat (only the last
    edge can be), and moving right would only add false positives (paper 001: move left)."""
    return int(np.flatnonzero(hull.tpr >= hull.tpr[k])[0])


def _max_tpr_under_budget(hull: RocHull, budget: NDArray[np.float64], limit: float) -> MixedOperatingPoint:
    """Largest-TPR hull point whose budget (non-decreasing along the hull) is at most ``limit``;
    of points with that TPR, the one with the fewest false positives."""
    if limit < budget[0]:
        raise ParameterError(f"no operating point meets the constraint (limit {limit:g} is below "
                             f"{budget[0]:g}, what flagging nothing already uses)")
    right = int(np.searchsorted(budget, limit, side="right"))
    if right >= hull.size:
        return _vertex_point(hull, _cheapest_with_tpr_of(hull, hull.size - 1))
    left = right - 1
    if hull.tpr[right] <= hull.tpr[left]:  # a flat edge: mixing along it buys no TPR
        return _vertex_point(hull, _cheapest_with_tpr_of(hull, left))
    span = budget[right] - budget[left]
    weight = float((limit - budget[left]) / span) if span > 0 else 0.0
    # A limit a rounding step below the right vertex's budget must not round to that vertex.
    weight = min(weight, float(np.nextafter(1.0, 0.0)))
    fpr = float(hull.fpr[left] + weight * (hull.fpr[right] - hull.fpr[left]))
    tpr = float(hull.tpr[left] + weight * (hull.tpr[right] - hull.tpr[left]))
    if weight == 0.0:
        right = left
    return MixedOperatingPoint(fpr, tpr, left, right, weight, hull.classifier[left],
                               hull.classifier[right], float(hull.threshold[left]),
                               float(hull.threshold[right]))


def neyman_pearson(hull: RocHull, max_fpr: float) -> MixedOperatingPoint:
    """The largest TPR on the hull with FPR <= ``max_fpr`` (paper 004 Fig. 11-12); when TPR 1
    is reached below the limit, the cheapest point that reaches it (paper 001: move left)."""
    if not 0.0 <= max_fpr <= 1.0:
        raise ParameterError(f"the maximum false positive rate must lie in [0, 1], got {max_fpr!r}")
    point = _max_tpr_under_budget(hull, hull.fpr, max_fpr)
    if point.fpr > max_fpr:  # interpolation rounding: the constraint is the promise
        point = replace(point, fpr=max_fpr)
    return point


def workforce(hull: RocHull, *, n_pos: float, n_neg: float, capacity: float) -> MixedOperatingPoint:
    """The largest TPR on the hull flagging at most ``capacity`` cases: TP·P + FP·N <= capacity.

    ``n_pos`` and ``n_neg`` are the expected numbers of positives and negatives in the period the
    capacity refers to (paper 004 eq. 12).
    """
    if capacity < 0:
        raise ParameterError(f"capacity must be non-negative, got {capacity!r}")
    flagged = hull.tpr * n_pos + hull.fpr * n_neg
    return _max_tpr_under_budget(hull, flagged, capacity)


@dataclass(frozen=True)
class SingleThreshold:
    """The best single score threshold under a constraint: one ROC point of one classifier,
    used as is (no coin flips), beside the randomized :class:`MixedOperatingPoint`.

    ``threshold`` is NaN for "flag nothing" (the point (0, 0)); ``tp`` and ``fp`` are the
    counts on the data, ``fpr`` and ``tpr`` the rates.
    """

    classifier: str
    threshold: float
    fpr: float
    tpr: float
    tp: int
    fp: int


def _best_single_under_budget(rocs: Sequence[RocCurve], budget: Callable[[NDArray[np.float64],
                              NDArray[np.float64]], NDArray[np.float64]],
                              limit: float) -> SingleThreshold:
    """Of every ROC point of every classifier whose ``budget(fpr, tpr)`` is at most ``limit``,
    the one with the largest TPR; of those, the fewest false positives (paper 001: move left);
    of those, the first classifier's."""
    best: SingleThreshold | None = None
    for roc in rocs:
        fpr, tpr = roc.fpr, roc.tpr
        ok = np.flatnonzero(budget(fpr, tpr) <= limit)
        if ok.size == 0:
            continue
        top = tpr[ok].max()
        at_top = ok[tpr[ok] == top]
        i = int(at_top[np.argmin(fpr[at_top])])
        if best is None or (tpr[i], -fpr[i]) > (best.tpr, -best.fpr):
            best = SingleThreshold(roc.name, float(roc.threshold[i]), float(fpr[i]),
                                   float(tpr[i]), int(roc.tp[i]), int(roc.fp[i]))
    if best is None:
        raise ParameterError(f"no single threshold meets the constraint (limit {limit:g})")
    return best


def single_threshold_neyman_pearson(rocs: Sequence[RocCurve], max_fpr: float) -> SingleThreshold:
    """The largest TPR any one threshold of any classifier reaches with FPR <= ``max_fpr``.

    The randomized :func:`neyman_pearson` point is never worse; the difference in TPR is what
    the coin flips buy (often little on a dense ROC curve, much on a coarse one).
    """
    if not 0.0 <= max_fpr <= 1.0:
        raise ParameterError(f"the maximum false positive rate must lie in [0, 1], got {max_fpr!r}")
    return _best_single_under_budget(rocs, lambda fpr, tpr: fpr, max_fpr)


def single_threshold_workforce(rocs: Sequence[RocCurve], *, n_pos: float, n_neg: float,
                               capacity: float) -> SingleThreshold:
    """The largest TPR any one threshold reaches flagging at most ``capacity`` cases
    (TP·P + FP·N <= capacity, as in :func:`workforce`)."""
    if capacity < 0:
        raise ParameterError(f"capacity must be non-negative, got {capacity!r}")
    return _best_single_under_budget(rocs, lambda fpr, tpr: tpr * n_pos + fpr * n_neg,
                                     capacity)


def beta_weighted_cost(envelope: LowerEnvelope, a: float = 1.0, b: float = 1.0) -> float:
    """Expected normalized cost with PC(+) ~ Beta(a, b) (paper 004 eq. 11), exactly.

    On each envelope piece the cost is c·x + d, and ∫ x·Beta(x; a, b) dx over [x0, x1] equals
    a/(a+b) times the Beta(a+1, b) probability of [x0, x1], so the integral needs only regularized
    incomplete beta functions. Beta(1, 1) is the uniform case, the plain area.
    """
    if not (a > 0 and b > 0 and math.isfinite(a) and math.isfinite(b)):
        raise ParameterError(f"Beta parameters must be positive and finite, got a={a!r}, b={b!r}")
    x0, x1 = envelope.pc[:-1], envelope.pc[1:]
    y0, y1 = envelope.cost[:-1], envelope.cost[1:]
    slope = (y1 - y0) / (x1 - x0)
    intercept = y0 - slope * x0
    mass = betainc(a, b, x1) - betainc(a, b, x0)
    first_moment = a / (a + b) * (betainc(a + 1, b, x1) - betainc(a + 1, b, x0))
    return float(np.sum(slope * first_moment + intercept * mass))


@dataclass(frozen=True)
class SensitivityResult:
    """What a range of priors and costs implies (paper 001, "Sensitivity analysis").

    Attributes
    ----------
    slope_range : (float, float)
        Smallest and largest iso-performance slope in the box of conditions.
    pc_range : (float, float)
        The matching PC(+) interval (the larger slope gives the smaller PC(+)).
    vertices : tuple of int
        Hull vertices optimal somewhere in the range: the hull segment it covers, left to right.
    classifiers : tuple of str
        Classifiers optimal somewhere in the range (trivial ones included by name).
    trivial_optimal : bool
        Whether doing nothing (all-negative) or everything (all-positive) is optimal somewhere.
    """

    slope_range: tuple[float, float]
    pc_range: tuple[float, float]
    vertices: tuple[int, ...]
    classifiers: tuple[str, ...]
    trivial_optimal: bool


def sensitivity(hull: RocHull, p_pos: tuple[float, float], cost_fn: tuple[float, float],
                cost_fp: tuple[float, float], *, cost_tp: float = 0.0,
                cost_tn: float = 0.0) -> SensitivityResult:
    """The hull segment and classifiers optimal for any conditions within the given ranges.

    The slope m = p(-)(C(+|-) - C(-|-)) / (p(+)(C(-|+) - C(+|+))) is monotone in each argument,
    so its extremes are at opposite corners of the box: steepest with the smallest p(+), the
    smallest C(-|+) and the largest C(+|-). ``cost_tp`` and ``cost_tn`` are the (fixed) costs of
    the correct decisions.
    """
    for name, (lo, hi) in (("p(+)", p_pos), ("C(-|+)", cost_fn), ("C(+|-)", cost_fp)):
        if lo > hi:
            raise ParameterError(f"the range of {name} is empty: {lo!r} > {hi!r}")
    steep = OperatingCondition(p_pos[0], cost_fn[0], cost_fp[1], cost_tp, cost_tn)
    flat = OperatingCondition(p_pos[1], cost_fn[1], cost_fp[0], cost_tp, cost_tn)
    first = optimal_vertex(hull, steep).index
    # At the flat end a slope equal to an edge's makes the whole edge optimal: include its far end.
    flat_vertex = optimal_vertex(hull, flat)
    last = flat_vertex.index if flat_vertex.alternative is None else flat_vertex.alternative
    vertices = tuple(range(first, last + 1))
    names: dict[str, None] = {}
    for v in vertices:
        names.setdefault(hull.classifier[v])
    return SensitivityResult(
        slope_range=(flat.slope, steep.slope), pc_range=(steep.pc, flat.pc), vertices=vertices,
        classifiers=tuple(names),
        trivial_optimal=any(n in (ALL_NEGATIVE, ALL_POSITIVE) for n in names))


@dataclass(frozen=True, eq=False)
class SelectionCost:
    """Cost of choosing thresholds by a fixed rule, against the lower envelope (paper 004 §2.3).

    ``cost`` is the rule's normalized expected cost at each ``pc``; ``envelope_cost`` the best
    achievable there; ``excess_area`` the area between the two over [0, 1].
    """

    rule: str
    pc: NDArray[np.float64]
    cost: NDArray[np.float64]
    envelope_cost: NDArray[np.float64]
    excess_area: float


def _grid(points: int) -> NDArray[np.float64]:
    if points < 2:
        raise ParameterError(f"a PC(+) grid needs at least 2 points, got {points}")
    return np.linspace(0.0, 1.0, points)


def fixed_threshold_cost(roc: RocCurve, envelope: LowerEnvelope, threshold: float, *,
                         points: int = 1001) -> SelectionCost:
    """A single score threshold (e.g. 0.5) used whatever the conditions: one cost line."""
    i = roc.point_at_threshold(threshold)
    pc = _grid(points)
    cost = cost_line(roc.fpr[i], roc.tpr[i], pc)
    best = envelope(pc)
    return SelectionCost(f"score >= {threshold:g}", pc, cost, best,
                         float(np.trapezoid(cost - best, pc)))


def calibrated_threshold_cost(roc: RocCurve, envelope: LowerEnvelope, *, prevalence: float,
                              points: int = 1001) -> SelectionCost:
    """Thresholds tied to the cost ratio: scores read as calibrated probabilities at ``prevalence``.

    At PC(+) = x the Bayes rule flags an example when its posterior odds exceed the cost-and-prior
    ratio, i.e. score >= τ(x) with odds(τ) = (1 - x)/x · π/(1 - π), π being the prevalence the scores
    were calibrated at; τ = 0.5 at x = π. This is the parameter-based selection of paper 004 §2.3.
    """
    if not 0.0 < prevalence < 1.0:
        raise ParameterError(f"prevalence must lie in (0, 1), got {prevalence!r}")
    pc = _grid(points)
    with np.errstate(divide="ignore", invalid="ignore"):  # pc = 0: inf / inf, replaced below
        odds = (1.0 - pc) / pc * prevalence / (1.0 - prevalence)
        tau = odds / (1.0 + odds)
    tau[0] = np.inf
    idx = roc.point_at_threshold(tau)
    cost = cost_line(roc.fpr[idx], roc.tpr[idx], pc)
    best = envelope(pc)
    return SelectionCost("calibrated probability", pc, cost, best,
                         float(np.trapezoid(cost - best, pc)))
