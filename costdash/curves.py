"""The curves people expect beside ROC and cost space: precision–recall, gains and lift, score
distributions per class, and reliability (calibration).

Every curve here is a view of the same ROC points (:class:`~costdash.roc.RocCurve`) or of the same
scores, so a threshold chosen in cost space lands on one point of each:

* **Precision–recall** (:func:`pr_curve`): one point per distinct threshold. Precision is taken
  at a prior ``p_pos`` (the operating conditions' p(+)) when one is given,
  ``π·TPR / (π·TPR + (1 − π)·FPR)``, and from the test set's counts, ``TP / (TP + FP)``, when not
  (then it equals scikit-learn's ``precision_recall_curve``).
* **The ROC convex hull in PR space** (:func:`pr_hull`): between two hull vertices a mix of the
  two classifiers moves TP and FP *together linearly* (Davis & Goadrich 2006), so precision
  ``TP / (TP + FP)`` is a ratio of two linear functions of the mixing weight and *not* a straight
  line in PR space; linear interpolation in PR space overstates what is achievable. The edges
  are sampled along the mixing weight.
* **Iso-F1 lines** (:func:`iso_f1`): precision ``F·R / (2R − F)`` for recall ``R > F/2``.
* **Cumulative gains and lift** (:func:`gains_curve`): the share of positives caught (TPR)
  against the share of cases flagged, ``π·TPR + (1 − π)·FPR``; lift is their ratio.
* **Score distributions** (:func:`score_histograms`): per-class histograms on shared bin edges.
* **Reliability** (:func:`reliability`): observed frequency of positives against the mean score
  in equal-width bins, and the Brier score; refused, with the reason, when the scores are not
  probabilities in [0, 1].

Pure numpy: no plotting here (``dashboard/figures/curves.py`` draws these results).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
from numpy.typing import ArrayLike, NDArray

from costdash._docstrings import fill_doc
from costdash.criteria import MixedOperatingPoint, workforce
from costdash.errors import ParameterError
from costdash.hull import RocHull
from costdash.roc import RocCurve

__all__ = ["F1_LEVELS", "CapacityOnGains", "CurvePoint", "GainsCurve", "IsoF1", "PrCurve",
           "PrHull", "Reliability", "ScoreHistograms", "capacity_on_gains", "curve_point",
           "flagged_share", "gains_curve", "iso_f1", "pr_curve", "pr_hull", "pr_point",
           "reliability", "score_histograms"]

F1_LEVELS = (0.2, 0.4, 0.6, 0.8)
"""The iso-F1 levels drawn by default."""


def _prior(p_pos: float | None, n_pos: int, n_neg: int) -> float:
    """π: ``p_pos`` when given (checked), else the test set's prevalence."""
    if n_pos <= 0 or n_neg <= 0:
        raise ParameterError(f"`n_pos` and `n_neg` must be positive, got {n_pos} and {n_neg}")
    if p_pos is None:
        return n_pos / (n_pos + n_neg)
    if not (0.0 < p_pos < 1.0) or not math.isfinite(p_pos):
        raise ParameterError(f"`p_pos` must lie strictly between 0 and 1, got {p_pos!r}")
    return float(p_pos)


def _precision(tpr: NDArray[np.float64], fpr: NDArray[np.float64], prior: float
               ) -> NDArray[np.float64]:
    """π·TPR / (π·TPR + (1 − π)·FPR); NaN where nothing is flagged (both rates 0)."""
    a = prior * np.asarray(tpr, dtype=np.float64)
    b = (1.0 - prior) * np.asarray(fpr, dtype=np.float64)
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(a + b > 0, a / (a + b), np.nan)


# --- precision–recall ---------------------------------------------------------------------------

@dataclass(frozen=True, eq=False)
class PrCurve:
    """Precision and recall of one classifier at every distinct threshold.

    Attributes
    ----------
    name : str
        The classifier.
    recall, precision : ndarray of float64, shape (m,)
        One point per ROC point that flags something (the ROC's (0, 0) point, where precision is
        undefined, is left out), in the ROC's order: threshold decreasing, recall non-decreasing.
    threshold : ndarray of float64, shape (m,)
        Each point's threshold (``score >= threshold`` is flagged; NaN for counted points
        without one).
    index : ndarray of int64, shape (m,)
        Each point's index in the ROC curve (the same index in :class:`GainsCurve`).
    prior : float
        The π precision was taken at.
    from_counts : bool
        True when precision is ``TP / (TP + FP)`` of the test set (no ``p_pos`` given).
    """

    name: str
    recall: NDArray[np.float64]
    precision: NDArray[np.float64]
    threshold: NDArray[np.float64]
    index: NDArray[np.int64]
    prior: float
    from_counts: bool


def pr_curve(roc: RocCurve, *, p_pos: float | None = None) -> PrCurve:
    """Precision–recall points of a classifier, one per distinct threshold.

    Parameters
    ----------
    roc : RocCurve
        The classifier's ROC points.
    p_pos : float, optional
        The prior to take precision at (strictly between 0 and 1); absent: the test set's
        counts, ``TP / (TP + FP)``.

    Returns
    -------
    PrCurve

    Examples
    --------
    >>> from costdash.roc import roc_curve
    >>> pr = pr_curve(roc_curve([0, 0, 1, 1], [0.1, 0.4, 0.35, 0.8]))
    >>> pr.recall.tolist(), pr.precision.tolist()
    ([0.5, 0.5, 1.0, 1.0], [1.0, 0.5, 0.6666666666666666, 0.5])
    """
    prior = _prior(p_pos, roc.n_pos, roc.n_neg)
    keep = np.flatnonzero((roc.tp + roc.fp) > 0)
    tp = roc.tp[keep].astype(np.float64)
    fp = roc.fp[keep].astype(np.float64)
    if p_pos is None:
        precision = tp / (tp + fp)
    else:
        precision = _precision(tp / roc.n_pos, fp / roc.n_neg, prior)
    return PrCurve(name=roc.name, recall=tp / roc.n_pos, precision=precision,
                   threshold=roc.threshold[keep].copy(), index=keep.astype(np.int64),
                   prior=prior, from_counts=p_pos is None)


def pr_point(fpr: float, tpr: float, *, prior: float) -> tuple[float, float]:
    """``(recall, precision)`` of one ROC point at prior π; precision NaN when it flags nothing.

    Examples
    --------
    >>> pr_point(0.25, 0.75, prior=0.5)
    (0.75, 0.75)
    """
    return float(tpr), float(_precision(np.array([tpr]), np.array([fpr]), prior)[0])


@dataclass(frozen=True, eq=False)
class PrHull:
    """The ROC convex hull mapped into PR space, with its edges interpolated correctly.

    Attributes
    ----------
    recall, precision : ndarray of float64, shape (k,)
        The curve: every edge of the hull sampled at ``t = j / per_edge`` of the way from its
        first vertex to its second (both rates move linearly in ``t``; precision does not).
    edge : ndarray of int64, shape (k,)
        The hull edge each sample lies on (edge ``e`` joins vertices ``e`` and ``e + 1``).
    t : ndarray of float64, shape (k,)
        The mixing weight of the second vertex, ``j / per_edge``.
    vertex_recall, vertex_precision : ndarray of float64, shape (v,)
        The hull's vertices; at (0, 0) precision is the limit along the first edge (the first
        other vertex's precision: a mix with flag-nothing keeps the ratio TP/FP).
    classifier : tuple of str
        The classifier realising each vertex (as :class:`~costdash.hull.RocHull`).
    threshold : ndarray of float64, shape (v,)
        Each vertex's threshold (NaN for the trivial classifiers).
    prior : float
        The π precision was taken at.
    """

    recall: NDArray[np.float64]
    precision: NDArray[np.float64]
    edge: NDArray[np.int64]
    t: NDArray[np.float64]
    vertex_recall: NDArray[np.float64]
    vertex_precision: NDArray[np.float64]
    classifier: tuple[str, ...]
    threshold: NDArray[np.float64]
    prior: float


def pr_hull(hull: RocHull, *, n_pos: int, n_neg: int, p_pos: float | None = None,
            per_edge: int = 24) -> PrHull:
    """The ROC convex hull in PR space (Davis & Goadrich 2006).

    Between vertices A and B, flagging with B on a share ``t`` of the cases and A on the rest
    gives ``TPR = TPR_A + t·ΔTPR`` and ``FPR = FPR_A + t·ΔFPR``: TP grows linearly with FP, and
    precision, ``π·TPR / (π·TPR + (1 − π)·FPR)``, is the ratio of two linear functions of ``t``.

    Parameters
    ----------
    hull : RocHull
        From (0, 0) to (1, 1).
    n_pos, n_neg : int
        The test set's class counts (for the prior when ``p_pos`` is absent).
    p_pos : float, optional
        The prior to take precision at; absent: the test set's prevalence.
    per_edge : int
        Samples per edge (at least 1); each edge contributes ``t = 0, 1/per_edge, ...`` and the
        last vertex closes the curve.

    Returns
    -------
    PrHull
    """
    if per_edge < 1:
        raise ParameterError(f"`per_edge` must be at least 1, got {per_edge!r}")
    prior = _prior(p_pos, n_pos, n_neg)
    fpr, tpr = hull.fpr, hull.tpr
    v_prec = _precision(tpr, fpr, prior)
    # At (0, 0) precision is undefined; along the first edge it is constant (TP/FP fixed),
    # so the limit is the next vertex's.
    if v_prec.size > 1 and not np.isfinite(v_prec[0]):
        v_prec[0] = v_prec[1]
    n_edges = fpr.size - 1
    t = np.tile(np.arange(per_edge, dtype=np.float64) / per_edge, n_edges)
    edge = np.repeat(np.arange(n_edges, dtype=np.int64), per_edge)
    t = np.r_[t, 1.0]
    edge = np.r_[edge, max(n_edges - 1, 0)]
    if n_edges == 0:                        # a single vertex: nothing to interpolate
        return PrHull(recall=tpr.copy(), precision=v_prec.copy(), edge=np.zeros(1, np.int64),
                      t=np.zeros(1), vertex_recall=tpr.copy(), vertex_precision=v_prec,
                      classifier=hull.classifier, threshold=hull.threshold.copy(), prior=prior)
    a_tpr, a_fpr = tpr[edge], fpr[edge]
    d_tpr, d_fpr = tpr[edge + 1] - a_tpr, fpr[edge + 1] - a_fpr
    r = a_tpr + t * d_tpr
    f = a_fpr + t * d_fpr
    precision = _precision(r, f, prior)
    # Samples at (0, 0) itself take the first edge's constant precision.
    precision = np.where(np.isfinite(precision), precision, v_prec[0])
    return PrHull(recall=r, precision=precision, edge=edge, t=t, vertex_recall=tpr.copy(),
                  vertex_precision=v_prec, classifier=hull.classifier,
                  threshold=hull.threshold.copy(), prior=prior)


@dataclass(frozen=True, eq=False)
class IsoF1:
    """One iso-F1 line: every (recall, precision) with F1 equal to ``level``."""

    level: float
    recall: NDArray[np.float64]
    precision: NDArray[np.float64]


def iso_f1(levels: Sequence[float] = F1_LEVELS, *, points: int = 101) -> tuple[IsoF1, ...]:
    """Iso-F1 lines: precision ``F·R / (2R − F)`` for recall from ``F / (2 − F)`` to 1.

    At recall ``F / (2 − F)`` precision reaches 1; below it no precision gives F1 = F.

    Examples
    --------
    >>> line = iso_f1([0.4], points=2)[0]
    >>> line.recall.tolist(), line.precision.tolist()
    ([0.25, 1.0], [1.0, 0.25])
    """
    out = []
    for level in levels:
        if not 0.0 < level < 1.0:
            raise ParameterError(f"an F1 level must lie strictly between 0 and 1, got {level!r}")
        recall = np.linspace(level / (2.0 - level), 1.0, points)
        precision = level * recall / (2.0 * recall - level)
        precision[0] = 1.0
        out.append(IsoF1(level=float(level), recall=recall, precision=precision))
    return tuple(out)


# --- gains and lift -----------------------------------------------------------------------------

@dataclass(frozen=True, eq=False)
class GainsCurve:
    """Cumulative gains and lift of one classifier, one point per ROC point.

    Attributes
    ----------
    name : str
    flagged : ndarray of float64, shape (m,)
        Share of cases flagged, ``π·TPR + (1 − π)·FPR``, from 0 to 1, non-decreasing.
    gain : ndarray of float64, shape (m,)
        Share of positives caught (TPR), from 0 to 1, non-decreasing.
    lift : ndarray of float64, shape (m,)
        ``gain / flagged``; NaN at the first point (nothing flagged).
    threshold : ndarray of float64, shape (m,)
        The ROC's thresholds (NaN at the first point).
    prior : float
        The π the share flagged was taken at.
    """

    name: str
    flagged: NDArray[np.float64]
    gain: NDArray[np.float64]
    lift: NDArray[np.float64]
    threshold: NDArray[np.float64]
    prior: float


def gains_curve(roc: RocCurve, *, p_pos: float | None = None) -> GainsCurve:
    """Cumulative gains and lift: share of positives caught against share of cases flagged.

    Parameters
    ----------
    roc : RocCurve
    p_pos : float, optional
        The prior of the cases to flag; absent: the test set's prevalence (then ``flagged`` is
        ``(TP + FP) / n`` of the test set).

    Returns
    -------
    GainsCurve
        Ends at (0, 0) and (1, 1).

    Examples
    --------
    >>> from costdash.roc import roc_curve
    >>> g = gains_curve(roc_curve([0, 0, 1, 1], [0.1, 0.4, 0.35, 0.8]))
    >>> g.flagged.tolist(), g.gain.tolist()
    ([0.0, 0.25, 0.5, 0.75, 1.0], [0.0, 0.5, 0.5, 1.0, 1.0])
    """
    prior = _prior(p_pos, roc.n_pos, roc.n_neg)
    gain = roc.tp / roc.n_pos
    if p_pos is None:
        flagged = (roc.tp + roc.fp).astype(np.float64) / (roc.n_pos + roc.n_neg)
    else:
        flagged = prior * gain + (1.0 - prior) * (roc.fp / roc.n_neg)
    with np.errstate(invalid="ignore", divide="ignore"):
        lift = np.where(flagged > 0, gain / flagged, np.nan)
    return GainsCurve(name=roc.name, flagged=flagged, gain=gain.astype(np.float64), lift=lift,
                      threshold=roc.threshold.copy(), prior=prior)


def flagged_share(fpr: float, tpr: float, *, prior: float) -> float:
    """Share of cases flagged at an ROC point: ``π·TPR + (1 − π)·FPR``."""
    return float(prior * tpr + (1.0 - prior) * fpr)


@dataclass(frozen=True)
class CurvePoint:
    """Where one ROC point lands on every curve, at a prior π.

    Attributes
    ----------
    fpr, tpr : float
        The ROC point.
    recall, precision, f1 : float
        Precision–recall space (precision at π; NaN, and F1 NaN, when nothing is flagged).
    flagged : float
        Share of cases flagged, ``π·TPR + (1 − π)·FPR``.
    lift : float
        ``recall / flagged`` (NaN when nothing is flagged).
    prior : float
    """

    fpr: float
    tpr: float
    recall: float
    precision: float
    f1: float
    flagged: float
    lift: float
    prior: float


def curve_point(fpr: float, tpr: float, *, prior: float) -> CurvePoint:
    """One ROC point on the precision–recall and gains curves at prior π.

    Examples
    --------
    >>> p = curve_point(0.25, 0.75, prior=0.5)
    >>> p.precision, p.f1, p.flagged, p.lift
    (0.75, 0.75, 0.5, 1.5)
    """
    recall, precision = pr_point(fpr, tpr, prior=prior)
    f1 = (2.0 * precision * recall / (precision + recall)
          if math.isfinite(precision) and precision + recall > 0 else math.nan)
    share = flagged_share(fpr, tpr, prior=prior)
    return CurvePoint(fpr=float(fpr), tpr=float(tpr), recall=recall, precision=precision,
                      f1=f1, flagged=share, lift=recall / share if share > 0 else math.nan,
                      prior=float(prior))


@dataclass(frozen=True)
class CapacityOnGains:
    """A capacity on the gains chart.

    Attributes
    ----------
    share : float
        The largest share of cases that may be flagged, ``capacity / volume`` (at most 1).
    flagged, caught : float
        Share of cases flagged and share of positives caught by the best point of the hull
        within the capacity (:func:`costdash.criteria.workforce`).
    point : MixedOperatingPoint
        That point (a hull vertex or a mix of two).
    """

    share: float
    flagged: float
    caught: float
    point: MixedOperatingPoint


def capacity_on_gains(hull: RocHull, *, p_pos: float, volume: float,
                      capacity: float) -> CapacityOnGains:
    """Where a capacity (cases flagged per period) sits on the gains chart at prior ``p_pos``.

    Parameters
    ----------
    hull : RocHull
    p_pos : float
        The conditions' p(+): ``volume · p_pos`` positives are expected per period.
    volume : float
        Cases per period (positive).
    capacity : float
        Most cases that may be flagged per period (non-negative).

    Examples
    --------
    >>> from costdash.hull import classifier_hull
    >>> from costdash.roc import roc_curve
    >>> hull = classifier_hull(roc_curve([1, 1, 0, 0], [0.9, 0.8, 0.7, 0.1]))
    >>> c = capacity_on_gains(hull, p_pos=0.5, volume=100, capacity=25)
    >>> c.share, c.flagged, c.caught
    (0.25, 0.25, 0.5)
    """
    if not volume > 0:
        raise ParameterError(f"`volume` must be positive, got {volume!r}")
    point = workforce(hull, n_pos=p_pos * volume, n_neg=(1.0 - p_pos) * volume,
                      capacity=capacity)
    return CapacityOnGains(share=min(capacity / volume, 1.0),
                           flagged=flagged_share(point.fpr, point.tpr, prior=p_pos),
                           caught=float(point.tpr), point=point)


# --- score distributions ------------------------------------------------------------------------

# The numpydoc text both binned diagrams share (filled in by ``fill_doc``); each one follows a
# fragment with its own words: the description of ``edges``, of ``score``, and ``bins``.
_BINNED_DOCS = {
    "binned_attributes": """Attributes
----------
name : str
    The classifier's name.
edges : ndarray of float64, shape (b + 1,)""",
    "binned_parameters": """Parameters
----------
y_true : array-like of bool, shape (n,)
score : array-like of float, shape (n,)""",
    "binned_options": """weight : array-like of int, shape (n,), optional
    Examples each entry stands for (the score-count layout).
name : str
    The classifier's name, kept in the result.""",
}


@dataclass(frozen=True, eq=False)
class _BinnedDiagram:
    """What both diagrams of one classifier's binned scores keep (documented on each)."""

    name: str
    edges: NDArray[np.float64]


@fill_doc(**_BINNED_DOCS)
@dataclass(frozen=True, eq=False)
class ScoreHistograms(_BinnedDiagram):
    """Histograms of one classifier's scores, per class, on shared bin edges.

    %(binned_attributes)s
        Shared bin edges (the last bin is closed on the right, as in ``numpy.histogram``).
    positives, negatives : ndarray of int64, shape (b,)
        Number of positive and negative examples per bin.
    share_positives, share_negatives : ndarray of float64, shape (b,)
        The same as shares of each class's total (each sums to 1), so classes of very different
        sizes can be compared.
    """

    positives: NDArray[np.int64]
    negatives: NDArray[np.int64]
    share_positives: NDArray[np.float64]
    share_negatives: NDArray[np.float64]


def _binned_iv(y_true: ArrayLike, score: ArrayLike, weight: ArrayLike | None, bins: int
               ) -> tuple[NDArray[np.bool_], NDArray[np.float64], NDArray[np.int64]]:
    """The argument checks of both binned diagrams (score histograms and reliability)."""
    if bins < 1:
        raise ParameterError(f"`bins` must be at least 1, got {bins!r}")
    y = np.asarray(y_true, dtype=bool)
    s = np.asarray(score, dtype=np.float64)
    w = np.ones(y.size, np.int64) if weight is None else np.asarray(weight, dtype=np.int64)
    if y.ndim != 1 or y.shape != s.shape or w.shape != y.shape:
        raise ParameterError(f"`y_true`, `score` and `weight` must be 1-D of one length, got "
                             f"{y.shape}, {s.shape} and {w.shape}")
    if y.size == 0:
        raise ParameterError("no examples: `y_true` is empty")
    if not np.all(np.isfinite(s)):
        raise ParameterError("`score` must be finite")
    if np.any(w < 0):
        raise ParameterError("`weight` must be non-negative")
    return y, s, w


@fill_doc(**_BINNED_DOCS)
def score_histograms(y_true: ArrayLike, score: ArrayLike, *, bins: int = 40,
                     weight: ArrayLike | None = None, name: str = "") -> ScoreHistograms:
    """Per-class histograms of scores on shared, equal-width bin edges.

    %(binned_parameters)s
    bins : int
        Number of bins (at least 1), spanning the smallest to the largest score.
    %(binned_options)s

    Returns
    -------
    ScoreHistograms

    Examples
    --------
    >>> h = score_histograms([0, 0, 1, 1], [0.0, 0.2, 0.6, 1.0], bins=2)
    >>> h.edges.tolist(), h.positives.tolist(), h.negatives.tolist()
    ([0.0, 0.5, 1.0], [0, 2], [2, 0])
    """
    y, s, w = _binned_iv(y_true, score, weight, bins)
    edges = np.histogram_bin_edges(s, bins=bins)
    pos = np.histogram(s[y], bins=edges, weights=w[y])[0].round().astype(np.int64)
    neg = np.histogram(s[~y], bins=edges, weights=w[~y])[0].round().astype(np.int64)
    with np.errstate(invalid="ignore", divide="ignore"):
        share_pos = pos / pos.sum() if pos.sum() else np.zeros(pos.size)
        share_neg = neg / neg.sum() if neg.sum() else np.zeros(neg.size)
    return ScoreHistograms(name=name, edges=edges, positives=pos, negatives=neg,
                           share_positives=share_pos.astype(np.float64),
                           share_negatives=share_neg.astype(np.float64))


# --- reliability --------------------------------------------------------------------------------

@fill_doc(**_BINNED_DOCS)
@dataclass(frozen=True, eq=False)
class Reliability(_BinnedDiagram):
    """A reliability (calibration) diagram and the Brier score.

    %(binned_attributes)s
        Equal-width bins on [0, 1] (``strategy="uniform"``) or bins holding about as many
        examples each, from the smallest to the largest score (``"quantile"``); a score on an
        inner edge belongs to the bin below it (as scikit-learn's ``calibration_curve``), the
        first bin is closed. Quantile edges may repeat where many scores tie: the bins between
        equal edges are empty.
    mean_score : ndarray of float64, shape (b,)
        Mean score of the examples in each bin (NaN for an empty bin).
    observed : ndarray of float64, shape (b,)
        Share of positives in each bin (NaN for an empty bin).
    count : ndarray of int64, shape (b,)
        Examples per bin.
    brier : float
        Mean squared difference between score and outcome (0 is perfect; 0.25 is what a constant
        0.5 scores).
    strategy : {"uniform", "quantile"}
        How the edges were placed.
    """

    mean_score: NDArray[np.float64]
    observed: NDArray[np.float64]
    count: NDArray[np.int64]
    brier: float
    strategy: str = "uniform"

    @property
    def filled(self) -> NDArray[np.bool_]:
        """The bins with at least one example."""
        return self.count > 0


@fill_doc(**_BINNED_DOCS)
def reliability(y_true: ArrayLike, score: ArrayLike, *, bins: int = 10,
                weight: ArrayLike | None = None, name: str = "",
                strategy: str = "uniform") -> Reliability:
    """Reliability diagram and the Brier score.

    %(binned_parameters)s
        Predicted probabilities of the positive class, in [0, 1].
    bins : int
        Number of bins (at least 1).
    %(binned_options)s
    strategy : {"uniform", "quantile"}
        Equal-width bins on [0, 1], or edges at the scores' quantiles (linear interpolation, as
        ``numpy.percentile`` and scikit-learn's ``calibration_curve(strategy="quantile")``;
        with ``weight`` the quantiles of the rows the counts stand for), so that crowded score
        ranges are not lumped into one bin.

    Returns
    -------
    Reliability

    Raises
    ------
    ParameterError
        When a score lies outside [0, 1]: the scores are then not probabilities, and neither a
        reliability diagram nor a Brier score means anything (a ranking score can still be
        thresholded, and every other curve applies).

    Examples
    --------
    >>> r = reliability([0, 0, 1, 1], [0.1, 0.3, 0.6, 0.9], bins=2)
    >>> r.mean_score.tolist(), r.observed.tolist(), r.brier
    ([0.2, 0.75], [0.0, 1.0], 0.0675)
    """
    y, s, w = _binned_iv(y_true, score, weight, bins)
    lo, hi = float(s.min()), float(s.max())
    if lo < 0.0 or hi > 1.0:
        who = f"{name}'s scores" if name else "the scores"
        raise ParameterError(
            f"{who} run from {lo:.6g} to {hi:.6g}: a reliability diagram and the Brier score "
            "need predicted probabilities in [0, 1] (these look like ranking scores; every "
            "threshold-based curve still applies).")
    if strategy == "uniform":
        edges = np.linspace(0.0, 1.0, bins + 1)
    elif strategy == "quantile":
        edges = _weighted_quantiles(s, w, np.linspace(0.0, 1.0, bins + 1))
    else:
        raise ParameterError(f"`strategy` must be 'uniform' or 'quantile', got {strategy!r}")
    ids = np.searchsorted(edges[1:-1], s)
    wf = w.astype(np.float64)
    count = np.bincount(ids, weights=wf, minlength=bins)
    sums = np.bincount(ids, weights=wf * s, minlength=bins)
    positives = np.bincount(ids, weights=wf * y, minlength=bins)
    with np.errstate(invalid="ignore", divide="ignore"):
        mean_score = np.where(count > 0, sums / count, np.nan)
        observed = np.where(count > 0, positives / count, np.nan)
    total = wf.sum()
    if total <= 0:
        raise ParameterError("no examples: every weight is 0")
    brier = float(np.sum(wf * (s - y) ** 2) / total)
    return Reliability(name=name, edges=edges, mean_score=mean_score, observed=observed,
                       count=count.round().astype(np.int64), brier=brier, strategy=strategy)


def _weighted_quantiles(score: NDArray[np.float64], weight: NDArray[np.int64],
                        q: NDArray[np.float64]) -> NDArray[np.float64]:
    """``numpy.percentile(rows, 100 q)`` (linear interpolation) of the rows that ``weight``
    repeats each score for, without repeating them: position (N - 1) q in the sorted rows,
    found in the cumulative counts."""
    order = np.argsort(score, kind="stable")
    values, counts = score[order], weight[order]
    keep = counts > 0
    values, cumulative = values[keep], np.cumsum(counts[keep])
    position = (cumulative[-1] - 1) * q
    below = np.floor(position).astype(np.int64)
    above = np.minimum(below + 1, cumulative[-1] - 1)
    at_below = values[np.searchsorted(cumulative, below, side="right")]
    at_above = values[np.searchsorted(cumulative, above, side="right")]
    return at_below + (position - below) * (at_above - at_below)
