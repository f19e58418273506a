"""Calibrating scores into probabilities on folds (Platt scaling, isotonic regression).

The score-driven (Brier) curve and the decision curve read scores as probabilities. When they are
not (SVM margins, ranks), a calibration the user picks maps them to probabilities first; to keep
the test set honest each example's calibrated score comes from a map fitted on the *other* folds
(cross-fitting), never on itself.

* **Platt** (1999): p = 1 / (1 + exp(-(a·s + b))), fitted by maximum likelihood with Platt's
  smoothed targets (N₊ + 1)/(N₊ + 2) for positives and 1/(N₋ + 2) for negatives, as scikit-learn's
  ``CalibratedClassifierCV(method="sigmoid")``; Newton's method with backtracking on standardised
  scores.
* **Isotonic**: the pool-adjacent-violators fit of the labels on the scores (ties pooled first,
  weights respected); between fitted scores the map is linear and it is constant beyond them, as
  scikit-learn's ``IsotonicRegression(out_of_bounds="clip")``.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Literal

import numpy as np
from numpy.typing import ArrayLike, NDArray
from scipy.special import expit, log_expit

from costdash.dataset import ScoredClassifier
from costdash.errors import ParameterError
from costdash.roc import RocCurve, roc_from_score_counts

__all__ = ["CALIBRATIONS", "Calibrator", "calibrate_classifier", "cross_fit", "default_folds",
           "fit_isotonic", "fit_platt"]

Method = Literal["platt", "isotonic"]
CALIBRATIONS = ("platt", "isotonic")


@dataclass(frozen=True, eq=False)
class Calibrator:
    """A fitted map from scores to probabilities.

    ``platt``: ``params`` = (a, b); ``isotonic``: ``x`` (increasing fitted scores) and ``y`` (their
    fitted probabilities, non-decreasing).
    """

    method: str
    params: tuple[float, float] = (0.0, 0.0)
    x: NDArray[np.float64] | None = None
    y: NDArray[np.float64] | None = None

    def __call__(self, score: ArrayLike) -> NDArray[np.float64]:
        s = np.asarray(score, dtype=np.float64)
        if self.method == "platt":
            a, b = self.params
            return expit(a * s + b)
        return np.interp(s, self.x, self.y)

    def to_json(self) -> list:
        """The map as JSON-able numbers (:meth:`from_json` gives a map that calibrates every
        score to the same bits): Platt's (a, b); of an isotonic map only the first and the
        last fitted score of each constant run (between them ``interp`` gives the run's value
        either way; between runs it joins the same two points), a few hundred points instead
        of one per distinct score."""
        if self.method == "platt":
            return ["platt", *self.params]
        y = self.y
        change = y[1:] != y[:-1]
        keep = np.r_[True, change] | np.r_[change, True]
        return ["isotonic", self.x[keep].tolist(), y[keep].tolist()]

    @classmethod
    def from_json(cls, data: list) -> Calibrator:
        """The map :meth:`to_json` wrote."""
        if data[0] == "platt":
            return cls("platt", params=(float(data[1]), float(data[2])))
        return cls("isotonic", x=np.asarray(data[1], dtype=np.float64),
                   y=np.asarray(data[2], dtype=np.float64))


def _weights(y: NDArray[np.bool_], weight: ArrayLike | None) -> NDArray[np.float64]:
    w = np.ones(y.size) if weight is None else np.asarray(weight, dtype=np.float64)
    if w.shape != y.shape or np.any(w < 0) or not np.all(np.isfinite(w)):
        raise ParameterError("weights must be finite, non-negative and one per example")
    return w


def fit_platt(score: ArrayLike, y_true: ArrayLike, weight: ArrayLike | None = None,
              *, max_iter: int = 100) -> Calibrator:
    """Platt scaling: maximum likelihood with Platt's smoothed targets (module docstring)."""
    s = np.asarray(score, dtype=np.float64)
    y = np.asarray(y_true, dtype=bool)
    w = _weights(y, weight)
    n_pos, n_neg = float(w[y].sum()), float(w[~y].sum())
    if n_pos <= 0 or n_neg <= 0:
        raise ParameterError("Platt scaling needs examples of both classes")
    target = np.where(y, (n_pos + 1.0) / (n_pos + 2.0), 1.0 / (n_neg + 2.0))
    centre = float(np.average(s, weights=w))
    scale = float(np.sqrt(np.average((s - centre) ** 2, weights=w))) or 1.0
    z = (s - centre) / scale

    def loss(theta: NDArray[np.float64]) -> float:
        eta = theta[0] * z + theta[1]
        return float(-np.sum(w * (target * log_expit(eta) + (1.0 - target) * log_expit(-eta))))

    theta = np.array([0.0, math.log((n_pos + 1.0) / (n_neg + 1.0))])
    current = loss(theta)
    for _ in range(max_iter):
        p = expit(theta[0] * z + theta[1])
        r = w * (p - target)
        grad = np.array([np.dot(r, z), r.sum()])
        h = w * p * (1.0 - p)
        hess = np.array([[np.dot(h, z * z), np.dot(h, z)], [np.dot(h, z), h.sum()]])
        hess += 1e-12 * np.eye(2) * max(1.0, float(np.trace(hess)))
        step = np.linalg.solve(hess, grad)
        t = 1.0
        while True:
            candidate = theta - t * step
            value = loss(candidate)
            if value <= current + 1e-4 * t * float(np.dot(grad, -step)) or t < 1e-10:
                break
            t /= 2.0
        converged = abs(current - value) <= 1e-15 * max(1.0, abs(current))
        theta, current = candidate, value
        if converged or float(np.max(np.abs(grad))) <= 1e-12 * w.sum():
            break
    a = theta[0] / scale
    return Calibrator("platt", params=(float(a), float(theta[1] - a * centre)))


_PAV_PASSES = 8
"""Vectorised pooling passes of :func:`_pool_adjacent_violators` before the rest is pooled
one block at a time."""


def _pool_adjacent_violators(ysum: NDArray[np.float64], wsum: NDArray[np.float64]
                             ) -> NDArray[np.float64]:
    """The isotonic (non-decreasing) fit of the points ``ysum / wsum`` weighted by ``wsum``
    (all positive), one value per point: each block of pooled points takes ``Σ ysum / Σ wsum``.

    Pooling adjacent violators in any order gives the one isotonic fit, so it is done first
    in whole-array passes (each pools every maximal run of blocks whose means do not increase:
    on calibration data most of the points go in the first passes), then the remaining blocks
    with the usual stack. Each block's value is its sums' quotient (exact sums of integer
    counts), not a running average.
    """
    n = ysum.size
    start = np.arange(n)
    sy, sw = ysum, wsum
    for _ in range(_PAV_PASSES):
        m = sy / sw
        pool = m[:-1] >= m[1:]
        if not pool.any():
            break
        first = np.flatnonzero(np.r_[True, ~pool])
        sy, sw, start = np.add.reduceat(sy, first), np.add.reduceat(sw, first), start[first]
    else:
        ys: list[float] = []
        ws: list[float] = []
        starts: list[int] = []
        for v, u, k in zip(sy.tolist(), sw.tolist(), start.tolist()):
            ys.append(v)
            ws.append(u)
            starts.append(k)
            while len(ys) > 1 and ys[-2] / ws[-2] >= ys[-1] / ws[-1]:
                v, u = ys.pop(), ws.pop()
                starts.pop()
                ys[-1] += v
                ws[-1] += u
        sy, sw, start = np.array(ys), np.array(ws), np.array(starts, dtype=np.int64)
    return np.repeat(sy / sw, np.diff(np.r_[start, n]))


def _isotonic_sorted(s: NDArray[np.float64], y: NDArray[np.bool_], w: NDArray[np.float64]
                     ) -> Calibrator:
    """:func:`fit_isotonic` of examples already sorted by score, all of positive weight."""
    if s.size == 0:
        raise ParameterError("isotonic calibration needs examples")
    first = np.flatnonzero(np.r_[True, s[1:] != s[:-1]])
    wsum = np.add.reduceat(w, first)
    ysum = np.add.reduceat(np.where(y, w, 0.0), first)
    return Calibrator("isotonic", x=s[first], y=_pool_adjacent_violators(ysum, wsum))


def fit_isotonic(score: ArrayLike, y_true: ArrayLike, weight: ArrayLike | None = None
                 ) -> Calibrator:
    """Isotonic regression of the labels on the scores (pool adjacent violators)."""
    s = np.asarray(score, dtype=np.float64)
    y = np.asarray(y_true, dtype=bool)
    w = _weights(y, weight)
    keep = w > 0
    s, y, w = s[keep], y[keep], w[keep]
    order = np.argsort(s, kind="stable")
    return _isotonic_sorted(s[order], y[order], w[order])


def default_folds(y_true: ArrayLike, k: int = 5) -> NDArray[np.int64]:
    """Deterministic stratified folds when the data has none: the i-th example of each class,
    in file order, goes to fold i mod k."""
    y = np.asarray(y_true, dtype=bool)
    fold = np.empty(y.size, dtype=np.int64)
    for cls in (True, False):
        idx = np.flatnonzero(y == cls)
        fold[idx] = np.arange(idx.size) % k
    return fold


def cross_fit(score: ArrayLike, y_true: ArrayLike, fold: ArrayLike, method: Method,
              weight: ArrayLike | None = None, *, maps: list | None = None,
              maps_out: list | None = None) -> NDArray[np.float64]:
    """Each example's score calibrated by a map fitted on the other folds.

    ``maps_out``: filled with each fold's map as ``[label, Calibrator.to_json()]`` pairs;
    ``maps``: such pairs from an earlier cross-fit of the same data and method, applied instead
    of fitting (the same calibrated scores, to the bit).

    Raises
    ------
    ParameterError
        Unknown method, fewer than two folds, or a fold whose complement lacks a class.
    """
    if method not in CALIBRATIONS:
        raise ParameterError(f"unknown calibration {method!r}; one of {', '.join(CALIBRATIONS)}")
    s = np.asarray(score, dtype=np.float64)
    y = np.asarray(y_true, dtype=bool)
    f = np.asarray(fold)
    w = _weights(y, weight)
    labels = np.unique(f)
    if labels.size < 2:
        raise ParameterError("calibration on folds needs at least two folds")
    given = None if maps is None else {label: Calibrator.from_json(m) for label, m in maps}
    if method == "isotonic" and given is None:
        # Sorted once for every fold (a fold's training examples stay in order).
        order = np.argsort(s, kind="stable")
        s_sorted, y_sorted, w_sorted, f_sorted = s[order], y[order], w[order], f[order]
    out = np.empty(s.size)
    for label in labels:
        held = f == label
        train = ~held
        if not (np.any(y[train] & (w[train] > 0)) and np.any(~y[train] & (w[train] > 0))):
            raise ParameterError(f"fold {label!r}: the other folds lack a class, so no "
                                 f"calibration can be fitted for it")
        if given is not None:
            fitted = given[label.item()]
        elif method == "isotonic":
            fitting = (f_sorted != label) & (w_sorted > 0)
            fitted = _isotonic_sorted(s_sorted[fitting], y_sorted[fitting], w_sorted[fitting])
        else:
            fitted = fit_platt(s[train], y[train], w[train])
        if maps_out is not None and given is None:
            maps_out.append([label.item(), fitted.to_json()])
        out[held] = fitted(s[held])
    return out


def calibrate_classifier(classifier: ScoredClassifier, method: Method,
                         folds: int = 5, *, maps: list | None = None,
                         maps_out: list | None = None) -> RocCurve:
    """The ROC curve of a classifier's cross-fitted calibrated scores (the data's folds, or
    :func:`default_folds` when it has none); its thresholds are probabilities.

    ``maps_out`` / ``maps``: the fitted maps, handed out / given back (:func:`cross_fit`): the
    same curve again without fitting (a few hundred numbers to keep instead of the curve).

    Raises
    ------
    ParameterError
        A score-count classifier without folds, or a fold whose complement lacks a class.
    """
    score, n_pos, n_neg = classifier.class_counts()
    # One row per (entry, class) with its count as the weight.
    s = np.r_[score, score]
    y = np.r_[np.ones(score.size, bool), np.zeros(score.size, bool)]
    w = np.r_[n_pos, n_neg].astype(np.float64)
    if classifier.fold is not None:
        fold = np.r_[classifier.fold, classifier.fold]
    elif classifier.count is None:
        base = default_folds(classifier.y_true, folds)
        fold = np.r_[base, base]
    else:
        raise ParameterError(f"{classifier.name}: calibration on folds needs a fold column in "
                             f"the score-count layout (its entries are whole score cells, "
                             f"which cannot be split into folds)")
    keep = w > 0
    calibrated = cross_fit(s[keep], y[keep], fold[keep], method, w[keep], maps=maps,
                           maps_out=maps_out)
    counts = w[keep].astype(np.int64)
    return roc_from_score_counts(calibrated, np.where(y[keep], counts, 0),
                                 np.where(y[keep], 0, counts), name=classifier.name)
