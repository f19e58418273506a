"""Pinned thresholds: what a threshold already in use does, and what it costs.

People who run a model in production first ask what *their* threshold costs under today's
conditions and how much switching would save. :func:`pin_threshold` finds the exact ROC point of
a classifier at a threshold (``score >= threshold`` is flagged), its confusion matrix on the test
set, the PC(+) interval where that threshold is the best one *for its classifier* (its piece of
the classifier's own lower envelope) and the interval where it beats both trivial classifiers.
:func:`point_metrics` prices any ROC point at given operating conditions: expected counts, the
usual rates with precision and NPV adjusted to the conditions' p(+), the expected cost, and the
regret against the best choice. The dashboard's browser code (``assets/costmath.js``,
``pointMetrics``) mirrors :func:`point_metrics` line by line.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from costdash._geometry import upper_hull
from costdash.conditions import OperatingCondition
from costdash.costspace import operating_range
from costdash.errors import ParameterError
from costdash.roc import RocCurve

__all__ = ["PinnedThreshold", "PointMetrics", "pin_threshold", "point_metrics"]


@dataclass(frozen=True)
class PinnedThreshold:
    """A classifier used at one threshold: its ROC point and where that threshold is a good one.

    Attributes
    ----------
    classifier : str
        The classifier's name.
    threshold : float
        The pinned threshold: a case is flagged positive iff ``score >= threshold``.
    point_threshold : float
        The ROC point's own threshold: the lowest score that is ``>= threshold`` (the same cases
        are flagged); NaN when the threshold is above every score (nothing is flagged).
    index : int
        Index of the point in the classifier's :class:`~costdash.roc.RocCurve`.
    tp, fp, fn, tn : int
        Its confusion matrix on the test set.
    fpr, tpr : float
        Its ROC point, ``fp / (fp + tn)`` and ``tp / (tp + fn)``.
    optimal_pc : tuple of float or None
        The closed PC(+) interval where this threshold is optimal for its classifier: the piece of
        the classifier's own lower envelope formed by the point's cost line. ``(x, x)`` for a
        point inside an edge of the classifier's ROC convex hull (optimal only where it ties with
        the edge's ends); None for a point under the hull (never optimal for its classifier).
    beats_trivial_pc : tuple of float or None
        The open PC(+) interval where the point's cost line is below both trivial classifiers'
        (:func:`costdash.costspace.operating_range` of the single point); None when it never is.
    """

    classifier: str
    threshold: float
    point_threshold: float
    index: int
    tp: int
    fp: int
    fn: int
    tn: int
    fpr: float
    tpr: float
    optimal_pc: tuple[float, float] | None
    beats_trivial_pc: tuple[float, float] | None

    @property
    def n_pos(self) -> int:
        return self.tp + self.fn

    @property
    def n_neg(self) -> int:
        return self.fp + self.tn

    @property
    def on_hull(self) -> bool:
        """Whether the point is on its classifier's ROC convex hull (a vertex or inside an edge)."""
        return self.optimal_pc is not None


def _tie_pc(d_fp: int, d_tp: int, n_pos: int, n_neg: int) -> float:
    """PC(+) where both ends of a hull edge (d_fp, d_tp in counts) cost the same: 1 / (1 + s)
    with s the edge's slope in ROC space, from integers (Python's int / int rounds once)."""
    return (d_fp * n_pos) / (d_fp * n_pos + d_tp * n_neg)


def pin_threshold(roc: RocCurve, threshold: float) -> PinnedThreshold:
    """The exact ROC point of a classifier at ``threshold`` and the PC(+) intervals where it is
    good.

    Parameters
    ----------
    roc : RocCurve
        The classifier's full ROC curve (every distinct score; :func:`costdash.roc.roc_of`).
    threshold : float
        Any finite number; cases with ``score >= threshold`` are flagged positive.

    Returns
    -------
    PinnedThreshold

    Raises
    ------
    ParameterError
        ``threshold`` is not finite, or the classifier has no score thresholds (a classifier
        given only as confusion matrices without thresholds).

    Notes
    -----
    The point is optimal for its classifier at PC(+) = x iff its cost line touches the
    classifier's lower envelope there. For a vertex of the classifier's ROC convex hull the
    piece runs from the PC(+) of its incoming edge to that of its outgoing edge, where an edge
    with count differences (ΔFP, ΔTP) gives x = ΔFP·P / (ΔFP·P + ΔTP·N); a vertical first edge
    gives 0 and a horizontal last edge 1. Hull membership is decided on integer counts, exactly.

    Examples
    --------
    >>> from costdash.roc import roc_curve
    >>> r = roc_curve([0, 0, 1, 1], [0.1, 0.4, 0.35, 0.8], name="m")
    >>> pin = pin_threshold(r, 0.5)
    >>> (pin.tp, pin.fp, pin.fn, pin.tn), pin.point_threshold, pin.optimal_pc
    ((1, 0, 1, 2), 0.8, (0.0, 0.5))
    """
    threshold = float(threshold)
    if not math.isfinite(threshold):
        raise ParameterError(f"a threshold must be a finite number, got {threshold!r}")
    if not np.isfinite(roc.threshold[1:]).any():
        raise ParameterError(f"{roc.name} has no score thresholds to pin (it was given as "
                             "confusion matrices without them)")
    i = int(roc.point_at_threshold(threshold))
    tp, fp = int(roc.tp[i]), int(roc.fp[i])
    n_pos, n_neg = int(roc.n_pos), int(roc.n_neg)

    vertices = upper_hull(roc.fp, roc.tp)
    hull_fp = roc.fp[vertices].astype(np.int64).tolist()
    hull_tp = roc.tp[vertices].astype(np.int64).tolist()
    optimal: tuple[float, float] | None = None
    # The hull's vertices are sorted by FP; the point is at or after vertex j.
    j = int(np.searchsorted(hull_fp, fp, side="right")) - 1
    while j > 0 and hull_fp[j] == fp and hull_tp[j] > tp:
        j -= 1  # a vertical first edge: the point may be (0, tp) below the vertex at FP 0
    if hull_fp[j] == fp and hull_tp[j] == tp:
        lo = 0.0 if j == 0 else _tie_pc(hull_fp[j] - hull_fp[j - 1], hull_tp[j] - hull_tp[j - 1],
                                        n_pos, n_neg)
        hi = 1.0 if j == len(hull_fp) - 1 else _tie_pc(hull_fp[j + 1] - hull_fp[j],
                                                        hull_tp[j + 1] - hull_tp[j], n_pos, n_neg)
        optimal = (lo, hi)
    elif j + 1 < len(hull_fp):
        a_fp, a_tp, b_fp, b_tp = hull_fp[j], hull_tp[j], hull_fp[j + 1], hull_tp[j + 1]
        if (b_fp - a_fp) * (tp - a_tp) == (b_tp - a_tp) * (fp - a_fp):   # on the edge
            x = _tie_pc(b_fp - a_fp, b_tp - a_tp, n_pos, n_neg)
            optimal = (x, x)

    fpr, tpr = fp / n_neg, tp / n_pos
    return PinnedThreshold(
        classifier=roc.name, threshold=threshold,
        point_threshold=float(roc.threshold[i]) if i > 0 else math.nan, index=i,
        tp=tp, fp=fp, fn=n_pos - tp, tn=n_neg - fp, fpr=fpr, tpr=tpr, optimal_pc=optimal,
        beats_trivial_pc=operating_range([fpr], [tpr]))


@dataclass(frozen=True)
class PointMetrics:
    """An ROC point priced at one set of operating conditions (:func:`point_metrics`).

    Attributes
    ----------
    tp, fn, fp, tn : float
        Expected counts among ``volume`` cases (TP = TPR·p(+)·volume, FN = (1 − TPR)·p(+)·volume,
        FP = FPR·p(−)·volume, TN = (1 − FPR)·p(−)·volume).
    precision : float
        p(+)TPR / (p(+)TPR + p(−)FPR): the share of flagged cases that are positive at the
        conditions' p(+) (not the test set's prevalence); NaN when nothing is flagged.
    recall, specificity : float
        TPR and 1 − FPR.
    npv : float
        p(−)(1 − FPR) / (p(−)(1 − FPR) + p(+)(1 − TPR)); NaN when everything is flagged.
    f1 : float
        2 TP / (2 TP + FP + FN) with the expected counts (the harmonic mean of precision and
        recall; 0 when nothing positive is flagged).
    normalized_cost, expected_cost : float
        Normalized expected cost, and the expected cost per case in the costs' units (the
        constant part of correct decisions included).
    regret : float
        Expected cost per case minus that of the best choice ``best`` (>= 0 when ``best`` is
        the optimal hull vertex).
    regret_share : float
        ``regret`` as a fraction of the best choice's expected cost; NaN when that is not
        positive.
    volume : float
        Cases per period; ``period_cost`` and ``period_regret`` are per case times it.
    """

    tp: float
    fn: float
    fp: float
    tn: float
    precision: float
    recall: float
    specificity: float
    npv: float
    f1: float
    normalized_cost: float
    expected_cost: float
    regret: float
    regret_share: float
    volume: float

    @property
    def period_cost(self) -> float:
        return self.expected_cost * self.volume

    @property
    def period_regret(self) -> float:
        return self.regret * self.volume


def _ratio(a: float, b: float) -> float:
    return a / b if b > 0 else math.nan


def point_metrics(condition: OperatingCondition, fpr: float, tpr: float, *,
                  best: tuple[float, float], volume: float = 1.0) -> PointMetrics:
    """Price the ROC point (``fpr``, ``tpr``) at ``condition``, against the best choice ``best``.

    Parameters
    ----------
    condition : OperatingCondition
        p(+) and the costs (see :class:`~costdash.conditions.OperatingCondition`).
    fpr, tpr : float
        The point, e.g. a :class:`PinnedThreshold`'s.
    best : (float, float)
        (FPR, TPR) of the best choice under ``condition``, e.g. the
        :func:`~costdash.hull.optimal_vertex` of the hull of the classifiers in view.
    volume : float, optional
        Cases per period for the expected counts (default 1: fractions of all cases).

    Returns
    -------
    PointMetrics

    Examples
    --------
    >>> m = point_metrics(OperatingCondition(0.1, 10.0, 1.0), 0.1, 0.8, best=(0.02, 0.75),
    ...                   volume=1000)
    >>> round(m.tp, 6), round(m.fp, 6), round(m.precision, 6), round(m.regret, 6)
    (80.0, 90.0, 0.470588, 0.022)
    """
    p = condition.p_pos
    q = 1.0 - p
    tp, fn = tpr * p, (1.0 - tpr) * p
    fp, tn = fpr * q, (1.0 - fpr) * q
    ne = condition.normalized_cost(fpr, tpr)
    cost = condition.expected_cost(ne)
    ne_best = condition.normalized_cost(*best)
    best_cost = condition.expected_cost(ne_best)
    # Through the normalized costs: the constant part of correct decisions cancels exactly.
    regret = (ne - ne_best) * condition.cost_scale
    return PointMetrics(
        tp=tp * volume, fn=fn * volume, fp=fp * volume, tn=tn * volume,
        precision=_ratio(tp, tp + fp), recall=tpr, specificity=1.0 - fpr,
        npv=_ratio(tn, tn + fn), f1=_ratio(2.0 * tp, 2.0 * tp + fp + fn),
        normalized_cost=ne, expected_cost=cost, regret=regret,
        regret_share=_ratio(regret, best_cost) if best_cost > 0 else math.nan, volume=volume)
