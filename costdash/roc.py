"""ROC points of scoring and counted classifiers (paper 001; Fawcett 2006 for the tie rule).

A classifier predicts positive iff ``score >= threshold``. Sorting the scores once in decreasing order
and taking cumulative counts of positives and negatives at the end of each run of equal scores gives
one ROC point per distinct score; equal scores of both classes become one diagonal step.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property

import numpy as np
from numpy.typing import ArrayLike, NDArray

from costdash.dataset import CountedClassifier, ScoredClassifier
from costdash.errors import ParameterError


@dataclass(frozen=True, eq=False)
class RocCurve:
    """The ROC points of one classifier, from (0, 0) to (1, 1).

    Attributes
    ----------
    name : str
        The classifier's name.
    tp, fp : ndarray of int, shape (m,)
        True and false positive counts at each point, non-decreasing.
    threshold : ndarray of float64, shape (m,)
        The score threshold of each point (predict positive iff ``score >= threshold``); NaN where
        there is none: the first point (predict nothing positive) and counted points without one.
    n_pos, n_neg : int
        Number of positive and negative examples.
    """

    name: str
    tp: NDArray[np.integer]
    fp: NDArray[np.integer]
    threshold: NDArray[np.float64]
    n_pos: int
    n_neg: int

    @cached_property
    def fpr(self) -> NDArray[np.float64]:
        return self.fp / self.n_neg

    @cached_property
    def tpr(self) -> NDArray[np.float64]:
        return self.tp / self.n_pos

    @property
    def size(self) -> int:
        return int(self.tp.size)

    @cached_property
    def auc(self) -> float:
        """Area under the ROC polyline (trapezoids: ties count one half, as in the Mann-Whitney U)."""
        tp, fp = self.tp, self.fp
        if np.issubdtype(tp.dtype, np.integer) and np.issubdtype(fp.dtype, np.integer) \
                and tp.size > 1:
            dfp = np.subtract(fp[1:], fp[:-1], dtype=np.int64)
            tp_max = max(int(tp.max()), -int(tp.min()))
            # With FP non-decreasing every partial sum of the float formula below is a
            # half-integer at most (FP span) x (largest |TP|); under 2**52 each is exact, so that
            # formula gives the exact area, as does this sum of twice the area in int64, in
            # fewer passes over the points and none to float64: the same float either way.
            if int(dfp.min()) >= 0 and (int(fp[-1]) - int(fp[0])) * tp_max < _EXACT_SUM:
                twice = int(np.dot(dfp, np.add(tp[1:], tp[:-1], dtype=np.int64)))
                return float(np.float64(twice / 2.0) / (self.n_pos * self.n_neg))
        dfp = np.diff(self.fp.astype(np.float64))
        mid_tp = (self.tp[1:].astype(np.float64) + self.tp[:-1]) / 2.0
        return float(np.dot(dfp, mid_tp) / (self.n_pos * self.n_neg))

    def point_at_threshold(self, threshold: ArrayLike) -> NDArray[np.int64] | int:
        """Index of the point reached by predicting positive iff ``score >= threshold``.

        Accepts one threshold (returns an int) or an array of them.
        """
        # Thresholds after the first point decrease; the point is the last one whose threshold is
        # still >= the requested one (index 0, nothing positive, when none is).
        index = np.searchsorted(-self.threshold[1:], -np.asarray(threshold, dtype=np.float64),
                                side="right")
        return int(index) if np.ndim(index) == 0 else index.astype(np.int64)


# Sums of whole and half numbers below this are exact in float64, whatever their order.
_EXACT_SUM = 2**52


def _count_dtype(n: int) -> type[np.integer]:
    return np.int32 if n < 2**31 - 1 else np.int64


_CUMSUM_CHUNK = 1 << 20


def _exclusive_cumsum(flags: NDArray[np.bool_], dtype: type[np.integer]) -> NDArray[np.integer]:
    """Number of True values before each position, in chunks (a one-shot cumsum to a narrower
    integer type allocates a full-size casting buffer)."""
    out = np.empty(flags.size, dtype=dtype)
    carry = 0
    for start in range(0, flags.size, _CUMSUM_CHUNK):
        chunk = flags[start:start + _CUMSUM_CHUNK]
        block = out[start:start + chunk.size]
        np.cumsum(chunk, dtype=dtype, out=block)
        block -= chunk
        block += carry
        carry = int(block[-1]) + int(chunk[-1])
    return out


def roc_curve(y_true: ArrayLike, score: ArrayLike, *, name: str = "") -> RocCurve:
    """ROC points of a scoring classifier at every distinct threshold.

    Parameters
    ----------
    y_true : array-like of bool, shape (n,)
        True for positive examples; both classes must be present.
    score : array-like of float, shape (n,)
        Finite scores, higher meaning more positive.
    name : str, optional
        Name carried by the result.

    Returns
    -------
    RocCurve
        Points from (0, 0) (threshold NaN) through one point per distinct score in decreasing order;
        the last point is (1, 1) at the lowest score.

    Examples
    --------
    >>> r = roc_curve([0, 0, 1, 1], [0.1, 0.4, 0.35, 0.8])
    >>> r.fpr.tolist(), r.tpr.tolist()
    ([0.0, 0.0, 0.5, 0.5, 1.0], [0.0, 0.5, 0.5, 1.0, 1.0])
    >>> r.auc
    0.75
    """
    y = np.asarray(y_true, dtype=bool)
    s = np.asarray(score, dtype=np.float64)
    if y.shape != s.shape or y.ndim != 1:
        raise ParameterError(f"y_true and score must be 1-D of one length, got {y.shape} and {s.shape}")
    n = y.size
    n_pos = int(np.count_nonzero(y))
    if n_pos == 0 or n_pos == n:
        raise ParameterError("an ROC curve needs examples of both classes")

    # Sorting each class on its own and merging the two sorted runs is about twice as fast as one
    # argsort of all scores, and needs no index array: each positive's place in the merged order
    # is its rank among positives plus the number of negatives below it (ties: positives first,
    # which only orders examples inside one tie, where it makes no difference).
    pos_scores = s[y]
    pos_scores.sort()
    neg_scores = s[~y]
    neg_scores.sort()
    pos_place = np.searchsorted(neg_scores, pos_scores, side="left")
    pos_place += np.arange(n_pos)
    ascending = np.empty(n, dtype=np.float64)
    is_pos = np.zeros(n, dtype=bool)
    is_pos[pos_place] = True
    del pos_place
    ascending[is_pos] = pos_scores
    del pos_scores
    np.logical_not(is_pos, out=is_pos)
    ascending[is_pos] = neg_scores
    np.logical_not(is_pos, out=is_pos)
    del neg_scores

    # Work in ascending order on contiguous arrays (numpy copies reversed views behind the scenes):
    # a run of equal scores starting at index i is the threshold that flags the n - i examples from
    # i on, of which n_pos minus the positives before i are positive.
    run_start = np.empty(n, dtype=bool)
    run_start[0] = True
    np.not_equal(ascending[1:], ascending[:-1], out=run_start[1:])
    m = int(np.count_nonzero(run_start)) + 1
    threshold = np.empty(m, dtype=np.float64)
    threshold[0] = np.nan
    threshold[:0:-1] = ascending[run_start]
    del ascending

    dtype = _count_dtype(n)
    positives_before = _exclusive_cumsum(is_pos, dtype)[run_start]
    examples_before = np.flatnonzero(run_start).astype(dtype, copy=False)
    del run_start, is_pos
    tp = np.empty(m, dtype=dtype)
    fp = np.empty(m, dtype=dtype)
    tp[0] = fp[0] = 0
    np.subtract(n_pos, positives_before, out=tp[:0:-1])
    np.subtract(examples_before, positives_before, out=examples_before)
    np.subtract(n - n_pos, examples_before, out=fp[:0:-1])
    return RocCurve(name=name, tp=tp, fp=fp, threshold=threshold, n_pos=n_pos, n_neg=n - n_pos)


def roc_from_counts(tp: ArrayLike, fp: ArrayLike, fn: ArrayLike, tn: ArrayLike, *,
                    threshold: ArrayLike | None = None, name: str = "") -> RocCurve:
    """ROC points of a classifier known only by confusion matrices (paper 001 Fig. 11 case).

    Each matrix is one point; the points are sorted by FPR then TPR and framed by (0, 0) and
    (1, 1), which are added unless present. All matrices must share their class totals.
    """
    tp, fp, fn, tn = (np.asarray(a, dtype=np.int64) for a in (tp, fp, fn, tn))
    n_pos, n_neg = int(tp[0] + fn[0]), int(fp[0] + tn[0])
    if np.any(tp + fn != n_pos) or np.any(fp + tn != n_neg) or n_pos <= 0 or n_neg <= 0:
        raise ParameterError("every confusion matrix of a classifier needs the same, non-zero class totals")
    thr = (np.full(tp.size, np.nan) if threshold is None
           else np.asarray(threshold, dtype=np.float64))
    order = np.lexsort((tp, fp))
    tp, fp, thr = tp[order], fp[order], thr[order]
    if not (tp[0] == 0 and fp[0] == 0):
        tp, fp, thr = np.r_[0, tp], np.r_[0, fp], np.r_[np.nan, thr]
    if not (tp[-1] == n_pos and fp[-1] == n_neg):
        tp, fp, thr = np.r_[tp, n_pos], np.r_[fp, n_neg], np.r_[thr, np.nan]
    return RocCurve(name=name, tp=tp, fp=fp, threshold=thr, n_pos=n_pos, n_neg=n_neg)


def score_count_bins(score: ArrayLike, n_pos: ArrayLike, n_neg: ArrayLike
                     ) -> tuple[NDArray[np.float64], NDArray[np.int64], NDArray[np.int64]]:
    """The distinct scores, decreasing, with the number of positives and negatives at each.

    Entries with equal scores are merged and entries with no examples dropped, so that the
    result is what the rows summarised by ``(score, n_pos, n_neg)`` would give.

    Parameters
    ----------
    score : array-like of float, shape (m,)
        Finite scores, in any order, repeats allowed.
    n_pos, n_neg : array-like of int, shape (m,)
        Non-negative numbers of positive and negative examples with that score.

    Returns
    -------
    score, n_pos, n_neg : ndarray, shape (k,)
        ``score`` strictly decreasing; ``n_pos + n_neg`` positive everywhere.
    """
    s = np.asarray(score, dtype=np.float64)
    pos = np.asarray(n_pos, dtype=np.int64)
    neg = np.asarray(n_neg, dtype=np.int64)
    if not (s.ndim == pos.ndim == neg.ndim == 1 and s.size == pos.size == neg.size):
        raise ParameterError(f"score, n_pos and n_neg must be 1-D of one length, got {s.shape}, "
                             f"{pos.shape} and {neg.shape}")
    if np.any(pos < 0) or np.any(neg < 0):
        raise ParameterError("counts of examples cannot be negative")
    if not np.all(np.isfinite(s)):
        raise ParameterError("scores must be finite")
    keep = (pos + neg) > 0
    s, pos, neg = s[keep], pos[keep], neg[keep]
    # -0.0 and 0.0 are one score to ">=", as they are one run of equal scores to roc_curve.
    distinct, inverse = np.unique(-(s + 0.0), return_inverse=True)
    bins = distinct.size
    return (-distinct + 0.0, np.bincount(inverse, weights=pos, minlength=bins).astype(np.int64),
            np.bincount(inverse, weights=neg, minlength=bins).astype(np.int64))


def roc_from_score_counts(score: ArrayLike, n_pos: ArrayLike, n_neg: ArrayLike, *,
                          name: str = "") -> RocCurve:
    """ROC points of a scoring classifier known by its counts of each class at each score.

    The same curve as :func:`roc_curve` of the rows the counts summarise (same points, same
    thresholds, same integer type), computed in memory proportional to the distinct scores.

    Parameters
    ----------
    score : array-like of float, shape (m,)
        Finite scores, higher meaning more positive; repeats are merged.
    n_pos, n_neg : array-like of int, shape (m,)
        Numbers of positive and negative examples with each score.
    name : str, optional
        Name carried by the result.

    Examples
    --------
    >>> r = roc_from_score_counts([0.8, 0.4, 0.35, 0.1], [1, 0, 1, 0], [0, 1, 0, 1])
    >>> r.fpr.tolist(), r.tpr.tolist()
    ([0.0, 0.0, 0.5, 0.5, 1.0], [0.0, 0.5, 0.5, 1.0, 1.0])
    """
    s, pos, neg = score_count_bins(score, n_pos, n_neg)
    total_pos, total_neg = int(pos.sum()), int(neg.sum())
    if total_pos == 0 or total_neg == 0:
        raise ParameterError("an ROC curve needs examples of both classes")
    dtype = _count_dtype(total_pos + total_neg)
    tp = np.zeros(s.size + 1, dtype=dtype)
    fp = np.zeros(s.size + 1, dtype=dtype)
    np.cumsum(pos, out=tp[1:])
    np.cumsum(neg, out=fp[1:])
    threshold = np.empty(s.size + 1, dtype=np.float64)
    threshold[0] = np.nan
    threshold[1:] = s
    return RocCurve(name=name, tp=tp, fp=fp, threshold=threshold, n_pos=total_pos,
                    n_neg=total_neg)


def roc_of(classifier: ScoredClassifier | CountedClassifier,
           mask: NDArray[np.bool_] | None = None) -> RocCurve:
    """ROC curve of a loaded classifier, optionally of the examples selected by ``mask`` only."""
    if isinstance(classifier, CountedClassifier):
        return roc_from_counts(classifier.tp, classifier.fp, classifier.fn, classifier.tn,
                               threshold=classifier.threshold, name=classifier.name)
    if classifier.count is not None:
        return roc_from_score_counts(*classifier.class_counts(mask), name=classifier.name)
    if mask is None:
        return roc_curve(classifier.y_true, classifier.score, name=classifier.name)
    return roc_curve(classifier.y_true[mask], classifier.score[mask], name=classifier.name)


def thin_indices(size: int, max_points: int) -> NDArray[np.int64]:
    """Evenly spread indices that keep the first and last of ``size`` points, at most ``max_points``."""
    if max_points < 2:
        raise ParameterError(f"max_points must be at least 2, got {max_points}")
    if size <= max_points:
        return np.arange(size, dtype=np.int64)
    return np.unique(np.linspace(0, size - 1, max_points).round().astype(np.int64))
