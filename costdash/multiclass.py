"""Cost-sensitive evaluation of k-class classifiers: BCOST and BDELTACOST.

Implements the two bootstrap procedures of Margineantu & Dietterich, "Bootstrap Methods for the
Cost-Sensitive Evaluation of Classifiers" (ICML 2000):

* :func:`bcost` - a confidence interval for the expected (average, per example) cost of one
  classifier, from its k x k confusion matrix and a k x k cost matrix;
* :func:`bdeltacost` - a confidence interval for the expected difference in cost of two
  classifiers evaluated on the same test set, from their k x k x k joint confusion matrix, and the
  test of "equal expected cost" it implies.

Both separate the estimation of the confusion-matrix cell probabilities (a multinomial, optionally
Laplace-corrected) from the cost: the cell probabilities are resampled parametrically
(``rng.multinomial``), each simulated confusion matrix is priced with the cost matrix, and the
interval is read off the sorted simulated costs with the paper's order statistics.

Orientation
-----------
Everywhere in this module a confusion or cost matrix has **rows = predicted class and columns =
actual (true) class**, as in the paper: ``costs[i, j]`` is the cost of predicting class ``i`` when
the truth is ``j``, and ``confusion[i, j]`` counts the examples predicted ``i`` whose truth is
``j``. (scikit-learn's ``confusion_matrix`` is the transpose: rows actual, columns predicted.) The
file readers accept the other orientation with ``transpose=True``.

Costs are averages per example: a result's ``cost`` is ``sum(confusion * costs) / n``.
"""

from __future__ import annotations

import csv
import math
import os
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from statistics import NormalDist
from typing import Literal

import numpy as np
from numpy.typing import ArrayLike, NDArray

from costdash._resampling import RngLike, check_level, check_replicates, order_statistic_ranks
from costdash._resampling import as_generator as _as_generator
from costdash._resampling import readonly as _readonly
from costdash.errors import InputFileError, ParameterError

__all__ = [
    "BcostResult",
    "BdeltacostResult",
    "BcostBatch",
    "BdeltacostBatch",
    "LabeledClassifier",
    "LabelPredictions",
    "bcost",
    "bdeltacost",
    "bcost_many",
    "bdeltacost_many",
    "confidence_ranks",
    "delta_costs",
    "confusion_from_labels",
    "confusion3d_from_labels",
    "load_cost_matrix",
    "load_confusion_matrix",
    "load_label_predictions",
    "match_labels",
]

MAX_REPLICATES = 100_000
"""Upper bound on the number of bootstrap replicates accepted by the functions of this module."""


# Elements of one block of simulated confusion matrices (replicates x matrices x cells), ~64 MB.
_BLOCK_ELEMENTS = 1 << 23


# --------------------------------------------------------------------------------------------
# Order statistics and small helpers
# --------------------------------------------------------------------------------------------

def _check_level(level: object) -> float:
    return check_level(level)


def _check_replicates(replicates: object) -> int:
    return check_replicates(replicates, MAX_REPLICATES)


def confidence_ranks(level: float, replicates: int) -> tuple[int, int]:
    """1-based ranks of the interval's end points among ``replicates`` sorted simulated values.

    The paper's rule (Table 2): ``lb = floor((1 - level) / 2 * B) + 1`` and ``ub = B + 1 - lb``;
    for ``level = 0.95`` and ``B = 1000`` these are the 26th and the 975th values.

    Parameters
    ----------
    level : float
        Confidence level in (0, 1).
    replicates : int
        Number ``B`` of sorted simulated values.

    Returns
    -------
    (int, int)
        ``(lb, ub)``, with ``1 <= lb <= ub <= B``.
    """
    return order_statistic_ranks(_check_level(level), _check_replicates(replicates))


def delta_costs(costs: ArrayLike) -> NDArray[np.float64]:
    """The 3-D cost-difference matrix ``delta[i1, i2, j] = costs[i1, j] - costs[i2, j]``.

    Parameters
    ----------
    costs : array_like, shape (k, k)
        Cost matrix, rows predicted, columns actual.

    Returns
    -------
    ndarray of float64, shape (k, k, k)
    """
    c = np.asarray(costs, dtype=np.float64)
    return c[:, None, :] - c[None, :, :]


def _z(level: float) -> float:
    return NormalDist().inv_cdf(0.5 + level / 2.0)


def _check_laplace(laplace: object) -> float:
    if isinstance(laplace, bool) or not isinstance(laplace, (int, float, np.integer, np.floating)):
        raise ParameterError(f"laplace must be a number >= 0; got {laplace!r}")
    value = float(laplace)
    if not math.isfinite(value) or value < 0:
        raise ParameterError(f"laplace (the Laplace correction lambda) must be finite and >= 0; "
                             f"got {value:g}")
    return value


def _as_numeric(value: ArrayLike, name: str) -> NDArray:
    try:
        arr = np.asarray(value)
    except (TypeError, ValueError) as exc:
        raise ParameterError(f"{name} must be a numeric array: {exc}") from None
    if arr.dtype == np.bool_ or arr.dtype.kind not in "iuf":
        raise ParameterError(f"{name} must be a numeric array; got dtype {arr.dtype}")
    return arr


def _as_counts(value: ArrayLike, name: str, ndim: int, what: str) -> NDArray[np.int64]:
    """Validate an array of counts: ``ndim`` equal axes, non-negative integers, positive total."""
    arr = _as_numeric(value, name)
    if arr.ndim != ndim or arr.shape[0] < 2 or len(set(arr.shape)) != 1:
        raise ParameterError(f"{name} must be {what} with k >= 2; got shape {arr.shape}")
    if arr.dtype.kind == "f":
        if not np.all(np.isfinite(arr)):
            raise ParameterError(f"{name} has NaN or infinite entries")
        if np.any(arr != np.round(arr)):
            idx = tuple(int(i) for i in np.argwhere(arr != np.round(arr))[0])
            raise ParameterError(f"{name} must hold integer counts; {name}{list(idx)} = "
                                 f"{arr[idx]:g}")
    if np.any(arr < 0):
        idx = tuple(int(i) for i in np.argwhere(arr < 0)[0])
        raise ParameterError(f"{name} must hold non-negative counts; {name}{list(idx)} = "
                             f"{arr[idx]:g}")
    counts = arr.astype(np.int64)
    if counts.sum() <= 0:
        raise ParameterError(f"{name} is empty: its counts sum to 0 (n must be > 0)")
    return counts


def _as_costs(costs: ArrayLike, k: int, allow_negative: bool) -> NDArray[np.float64]:
    c = _as_numeric(costs, "costs")
    if c.shape != (k, k):
        raise ParameterError(f"costs must be a {k}x{k} matrix (rows = predicted, columns = actual) "
                             f"to match the confusion matrix; got shape {c.shape}")
    c = c.astype(np.float64)
    if not np.all(np.isfinite(c)):
        idx = tuple(int(i) for i in np.argwhere(~np.isfinite(c))[0])
        raise ParameterError(f"costs must be finite; costs[{idx[0]}, {idx[1]}] = {c[idx]}")
    if not allow_negative and np.any(c < 0):
        idx = tuple(int(i) for i in np.argwhere(c < 0)[0])
        raise ParameterError(f"costs must be >= 0; costs[{idx[0]}, {idx[1]}] = {c[idx]:g} "
                             "(pass allow_negative=True if negative entries are meant as benefits)")
    c.setflags(write=False)
    return c


def _laplace_probabilities(counts: NDArray[np.int64], laplace: float) -> NDArray[np.float64]:
    """Rows of ``counts`` (shape (T, m)) turned into ``(M + lambda) / (m * lambda + n)``."""
    n = counts.sum(axis=1, dtype=np.float64)
    m = counts.shape[1]
    p = (counts + laplace) / (m * laplace + n)[:, None]
    # Guard the multinomial's sum(p[:-1]) <= 1 check against rounding.
    return p / p.sum(axis=1, keepdims=True)


def _simulate_single(counts: NDArray[np.int64], values: NDArray[np.float64], laplace: float,
                     b: int, gen: np.random.Generator) -> NDArray[np.float64]:
    """Sorted replicate averages for one flattened confusion matrix (the paper's loop, batched)."""
    n = int(counts.sum())
    p = _laplace_probabilities(counts.reshape(1, -1), laplace)[0]
    draws = gen.multinomial(n, p, size=b)                       # (B, m): all replicates at once
    stats = (draws @ values) / n
    stats.sort()
    return stats


def _simulate_many(counts: NDArray[np.int64], values: NDArray[np.float64], laplace: float,
                   b: int, gen: np.random.Generator) -> NDArray[np.float64]:
    """Sorted replicate averages, shape (T, B), for T flattened confusion matrices (T, m).

    Matrices are processed in blocks of ``B x t x m`` simulated counts; inside a block one call to
    ``multinomial`` draws every replicate of every matrix. Cells whose probability is zero in the
    whole block (possible only with ``laplace == 0``) are dropped first: they can never be drawn,
    so the distribution is unchanged and the multinomial has fewer categories to walk.
    """
    t_all, m = counts.shape
    n = counts.sum(axis=1)
    p = _laplace_probabilities(counts, laplace)
    out = np.empty((t_all, b), dtype=np.float64)
    rows = max(1, _BLOCK_ELEMENTS // (b * m))
    for start in range(0, t_all, rows):
        sl = slice(start, start + rows)
        pb = p[sl]
        keep = np.any(pb > 0, axis=0)
        pb = pb[:, keep]
        pb = pb / pb.sum(axis=1, keepdims=True)
        draws = gen.multinomial(n[sl], pb, size=(b, pb.shape[0]))   # (B, t, m')
        stats = draws @ values[keep]                                   # (B, t)
        out[sl] = (stats / n[sl]).T
    out.sort(axis=1)
    return out


def _mean_and_se(counts: NDArray[np.int64], values: NDArray[np.float64]
                 ) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
    """Plug-in mean and standard error of the per-example value from cell proportions (T, m)."""
    n = counts.sum(axis=1, dtype=np.float64)
    prop = counts / n[:, None]
    mean = prop @ values
    second = prop @ (values * values)
    var = np.maximum(second - mean * mean, 0.0)
    return mean, np.sqrt(var / n)


def _interval_from_sorted(sorted_reps: NDArray[np.float64], level: float
                          ) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
    lb, ub = confidence_ranks(level, sorted_reps.shape[-1])
    return sorted_reps[..., lb - 1], sorted_reps[..., ub - 1]


# --------------------------------------------------------------------------------------------
# Results
# --------------------------------------------------------------------------------------------

@dataclass(frozen=True, eq=False)
class BcostResult:
    """A BCOST confidence interval for the expected cost per example of one classifier.

    Attributes
    ----------
    cost : float
        Average cost per example on the data itself, ``sum(M * C) / n`` (no Laplace correction).
    low, high : float
        The bootstrap interval: the ``lb``-th and ``ub``-th smallest replicate costs
        (see :func:`confidence_ranks`).
    normal_low, normal_high : float
        The normal (z) interval ``cost -/+ z * std_error``, the paper's baseline.
    n : int
        Number of examples (sum of the confusion matrix).
    k : int
        Number of classes.
    level : float
        Confidence level of ``low``/``high`` and of the normal interval.
    replicates : ndarray of float64, shape (B,)
        The sorted replicate costs (read-only), kept so :meth:`at_level` needs no new resampling.
    laplace : float
        The Laplace correction used for the resampling distribution.
    std_error : float
        Plug-in standard error of ``cost``: ``sqrt((sum p c^2 - (sum p c)^2) / n)`` with
        ``p = M / n``.
    """

    cost: float
    low: float
    high: float
    normal_low: float
    normal_high: float
    n: int
    k: int
    level: float
    replicates: NDArray[np.float64] = field(repr=False)
    laplace: float = 0.0
    std_error: float = 0.0

    @property
    def mean_replicate(self) -> float:
        """Mean of the replicate costs (estimates the Laplace-smoothed expected cost)."""
        return float(self.replicates.mean())

    def at_level(self, level: float) -> BcostResult:
        """The same result with both intervals recomputed at another confidence level.

        Uses the stored replicates: no new resampling, so it equals a fresh :func:`bcost` call at
        ``level`` with the same random generator state.

        Parameters
        ----------
        level : float
            New confidence level in (0, 1).

        Returns
        -------
        BcostResult
        """
        level = _check_level(level)
        low, high = _interval_from_sorted(self.replicates, level)
        half = _z(level) * self.std_error
        return BcostResult(cost=self.cost, low=float(low), high=float(high),
                           normal_low=self.cost - half, normal_high=self.cost + half,
                           n=self.n, k=self.k, level=level, replicates=self.replicates,
                           laplace=self.laplace, std_error=self.std_error)


@dataclass(frozen=True, eq=False)
class BdeltacostResult:
    """A BDELTACOST interval for ``cost(classifier 1) - cost(classifier 2)`` per example.

    Attributes
    ----------
    delta : float
        Observed difference of the average costs per example, ``sum(M * Delta) / n``.
    low, high : float
        The bootstrap interval (order statistics of the sorted replicate differences).
    reject : bool
        True iff ``[low, high]`` excludes 0: reject H0 "equal expected cost" at ``level``.
    normal_low, normal_high : float
        Paired-differences z interval ``delta -/+ z * std_error``.
    n, k, level
        Number of examples, of classes, and the confidence level.
    replicates : ndarray of float64, shape (B,)
        Sorted replicate differences (read-only).
    laplace : float
        Laplace correction used (the paper recommends 0 here).
    std_error : float
        Plug-in standard error of the per-example cost difference, from the 3-D cell proportions.
    """

    delta: float
    low: float
    high: float
    reject: bool
    normal_low: float
    normal_high: float
    n: int
    k: int
    level: float
    replicates: NDArray[np.float64] = field(repr=False)
    laplace: float = 0.0
    std_error: float = 0.0

    @property
    def normal_reject(self) -> bool:
        """True iff the paired z interval excludes 0."""
        return bool(self.normal_low > 0 or self.normal_high < 0)

    def at_level(self, level: float) -> BdeltacostResult:
        """The same result with both intervals (and ``reject``) recomputed at another level.

        Parameters
        ----------
        level : float
            New confidence level in (0, 1).

        Returns
        -------
        BdeltacostResult
        """
        level = _check_level(level)
        low, high = _interval_from_sorted(self.replicates, level)
        half = _z(level) * self.std_error
        return BdeltacostResult(delta=self.delta, low=float(low), high=float(high),
                                reject=bool(low > 0 or high < 0),
                                normal_low=self.delta - half, normal_high=self.delta + half,
                                n=self.n, k=self.k, level=level, replicates=self.replicates,
                                laplace=self.laplace, std_error=self.std_error)


@dataclass(frozen=True, eq=False)
class BcostBatch:
    """BCOST applied to T confusion matrices sharing one cost matrix (see :func:`bcost_many`).

    Attributes
    ----------
    cost, low, high, normal_low, normal_high : ndarray of float64, shape (T,)
        As in :class:`BcostResult`, one entry per confusion matrix.
    n : ndarray of int64, shape (T,)
    k : int
    level : float
    laplace : float
    replicates : int
        Number B of replicates per matrix.
    """

    cost: NDArray[np.float64]
    low: NDArray[np.float64]
    high: NDArray[np.float64]
    normal_low: NDArray[np.float64]
    normal_high: NDArray[np.float64]
    n: NDArray[np.int64]
    k: int
    level: float
    laplace: float
    replicates: int

    def covers(self, value: float | ArrayLike) -> NDArray[np.bool_]:
        """Whether each bootstrap interval contains ``value`` (end points included)."""
        v = np.asarray(value, dtype=np.float64)
        return (self.low <= v) & (v <= self.high)

    def normal_covers(self, value: float | ArrayLike) -> NDArray[np.bool_]:
        """Whether each normal interval contains ``value`` (end points included)."""
        v = np.asarray(value, dtype=np.float64)
        return (self.normal_low <= v) & (v <= self.normal_high)


@dataclass(frozen=True, eq=False)
class BdeltacostBatch:
    """BDELTACOST applied to T joint confusion matrices (see :func:`bdeltacost_many`).

    Attributes
    ----------
    delta, low, high, normal_low, normal_high : ndarray of float64, shape (T,)
    reject, normal_reject : ndarray of bool, shape (T,)
    n : ndarray of int64, shape (T,)
    k : int
    level, laplace : float
    replicates : int
    """

    delta: NDArray[np.float64]
    low: NDArray[np.float64]
    high: NDArray[np.float64]
    reject: NDArray[np.bool_]
    normal_low: NDArray[np.float64]
    normal_high: NDArray[np.float64]
    normal_reject: NDArray[np.bool_]
    n: NDArray[np.int64]
    k: int
    level: float
    laplace: float
    replicates: int


# --------------------------------------------------------------------------------------------
# Public procedures
# --------------------------------------------------------------------------------------------

def bcost(confusion: ArrayLike, costs: ArrayLike, *, level: float = 0.95,
          replicates: int = 1000, laplace: float = 0.1, rng: RngLike = None,
          allow_negative: bool = False) -> BcostResult:
    """BCOST: bootstrap confidence interval for a classifier's expected cost per example.

    The confusion matrix is normalised with a Laplace correction,
    ``p(i, j) = (M(i, j) + laplace) / (k**2 * laplace + n)``; ``replicates`` confusion matrices of
    ``n`` examples are drawn from that multinomial (in one ``rng.multinomial(n, p.ravel(),
    size=B)`` call); each is priced as ``sum(M~ * C) / n``; the interval is the ``lb``-th and
    ``ub``-th of the sorted prices, ``lb = floor((1 - level) / 2 * B) + 1``, ``ub = B + 1 - lb``.

    Parameters
    ----------
    confusion : array_like, shape (k, k)
        Counts; **rows = predicted class, columns = actual class** (``confusion[i, j]`` examples
        predicted ``i`` whose truth is ``j``). Non-negative integers, at least one example.
    costs : array_like, shape (k, k)
        ``costs[i, j]`` = cost of predicting ``i`` when the truth is ``j``. Finite; >= 0 unless
        ``allow_negative``.
    level : float, default 0.95
        Confidence level in (0, 1).
    replicates : int, default 1000
        Number B of simulated confusion matrices, 1 to 100000.
    laplace : float, default 0.1
        Laplace correction lambda >= 0 (the paper recommends 0.1 for BCOST).
    rng : None, int or numpy.random.Generator, optional
        Source of randomness; the same seed gives the same result.
    allow_negative : bool, default False
        Accept negative costs (benefits).

    Returns
    -------
    BcostResult

    Raises
    ------
    ParameterError
        On a wrong shape, non-integer or negative counts, an empty matrix, an out-of-range
        ``level``/``replicates``/``laplace``, non-finite or (unless allowed) negative costs.
    """
    m = _as_counts(confusion, "confusion", 2, "a square k x k count matrix (rows = predicted, "
                   "columns = actual)")
    k = m.shape[0]
    c = _as_costs(costs, k, allow_negative)
    level = _check_level(level)
    b = _check_replicates(replicates)
    lam = _check_laplace(laplace)
    gen = _as_generator(rng)

    flat = m.reshape(1, -1)
    values = c.ravel()
    mean, se = _mean_and_se(flat, values)
    reps = _readonly(_simulate_single(flat[0], values, lam, b, gen))
    low, high = _interval_from_sorted(reps, level)
    half = _z(level) * float(se[0])
    cost = float(mean[0])
    return BcostResult(cost=cost, low=float(low), high=float(high), normal_low=cost - half,
                       normal_high=cost + half, n=int(m.sum()), k=k, level=level,
                       replicates=reps, laplace=lam, std_error=float(se[0]))


def bdeltacost(confusion3d: ArrayLike, costs: ArrayLike, *, level: float = 0.95,
               replicates: int = 1000, laplace: float = 0.0, rng: RngLike = None,
               allow_negative: bool = False) -> BdeltacostResult:
    """BDELTACOST: bootstrap interval for the difference in expected cost of two classifiers.

    ``confusion3d[i1, i2, j]`` counts the test examples that classifier 1 predicted ``i1``,
    classifier 2 predicted ``i2``, and whose truth is ``j``. With
    ``Delta(i1, i2, j) = C(i1, j) - C(i2, j)`` the observed difference is
    ``sum(M * Delta) / n``; replicates are drawn from the Laplace-corrected multinomial
    ``(M + laplace) / (k**3 * laplace + n)`` and the interval is built as in :func:`bcost`.
    H0 "equal expected cost" is rejected iff the interval excludes 0.

    Parameters
    ----------
    confusion3d : array_like, shape (k, k, k)
        Joint counts, axes (prediction of classifier 1, prediction of classifier 2, truth).
    costs : array_like, shape (k, k)
        Cost matrix, rows predicted, columns actual.
    level : float, default 0.95
        Confidence level in (0, 1); the test's type I error is ``1 - level``.
    replicates : int, default 1000
        Number B of simulated matrices, 1 to 100000.
    laplace : float, default 0.0
        Laplace correction (the paper found any lambda > 0 makes the test too conservative).
    rng : None, int or numpy.random.Generator, optional
    allow_negative : bool, default False

    Returns
    -------
    BdeltacostResult
        ``delta > 0`` means classifier 1 costs more than classifier 2.

    Raises
    ------
    ParameterError
        As for :func:`bcost`.
    """
    m = _as_counts(confusion3d, "confusion3d", 3, "a k x k x k count array (classifier 1's "
                   "prediction, classifier 2's prediction, actual class)")
    k = m.shape[0]
    c = _as_costs(costs, k, allow_negative)
    level = _check_level(level)
    b = _check_replicates(replicates)
    lam = _check_laplace(laplace)
    gen = _as_generator(rng)

    flat = m.reshape(1, -1)
    values = delta_costs(c).ravel()
    mean, se = _mean_and_se(flat, values)
    reps = _readonly(_simulate_single(flat[0], values, lam, b, gen))
    low, high = _interval_from_sorted(reps, level)
    half = _z(level) * float(se[0])
    delta = float(mean[0])
    return BdeltacostResult(delta=delta, low=float(low), high=float(high),
                            reject=bool(low > 0 or high < 0), normal_low=delta - half,
                            normal_high=delta + half, n=int(m.sum()), k=k, level=level,
                            replicates=reps, laplace=lam, std_error=float(se[0]))


def _as_count_batch(value: ArrayLike, name: str, ndim: int) -> NDArray[np.int64]:
    arr = _as_numeric(value, name)
    if arr.ndim != ndim + 1 or arr.shape[0] < 1:
        raise ParameterError(f"{name} must have shape (T, {', '.join(['k'] * ndim)}); "
                             f"got {arr.shape}")
    if arr.dtype.kind == "f" and (not np.all(np.isfinite(arr)) or np.any(arr != np.round(arr))):
        raise ParameterError(f"{name} must hold finite integer counts")
    if np.any(arr < 0):
        raise ParameterError(f"{name} must hold non-negative counts")
    counts = arr.astype(np.int64)
    if len(set(counts.shape[1:])) != 1 or counts.shape[1] < 2:
        raise ParameterError(f"{name} must have shape (T, {', '.join(['k'] * ndim)}) with k >= 2; "
                             f"got {arr.shape}")
    empty = np.flatnonzero(counts.reshape(counts.shape[0], -1).sum(axis=1) == 0)
    if empty.size:
        raise ParameterError(f"{name}[{int(empty[0])}] is empty (n must be > 0)")
    return counts


def bcost_many(confusions: ArrayLike, costs: ArrayLike, *, level: float = 0.95,
               replicates: int = 1000, laplace: float = 0.1, rng: RngLike = None,
               allow_negative: bool = False) -> BcostBatch:
    """:func:`bcost` on many confusion matrices at once (e.g. simulated test sets).

    Same procedure and distribution as calling :func:`bcost` on each matrix, vectorised: the
    replicates of a block of matrices come from one ``multinomial`` call. With T = 1 and no
    empty cell it reproduces :func:`bcost` exactly for the same seed.

    Parameters
    ----------
    confusions : array_like, shape (T, k, k)
        Count matrices, rows predicted, columns actual.
    costs : array_like, shape (k, k)
    level, replicates, laplace, rng, allow_negative
        As for :func:`bcost`.

    Returns
    -------
    BcostBatch
    """
    m = _as_count_batch(confusions, "confusions", 2)
    t, k = m.shape[0], m.shape[1]
    c = _as_costs(costs, k, allow_negative)
    level = _check_level(level)
    b = _check_replicates(replicates)
    lam = _check_laplace(laplace)
    gen = _as_generator(rng)
    flat = m.reshape(t, -1)
    values = c.ravel()
    mean, se = _mean_and_se(flat, values)
    reps = _simulate_many(flat, values, lam, b, gen)
    low, high = _interval_from_sorted(reps, level)
    half = _z(level) * se
    return BcostBatch(cost=mean, low=low.copy(), high=high.copy(), normal_low=mean - half,
                      normal_high=mean + half, n=flat.sum(axis=1), k=k, level=level,
                      laplace=lam, replicates=b)


def bdeltacost_many(confusions3d: ArrayLike, costs: ArrayLike, *, level: float = 0.95,
                    replicates: int = 1000, laplace: float = 0.0, rng: RngLike = None,
                    allow_negative: bool = False) -> BdeltacostBatch:
    """:func:`bdeltacost` on many joint confusion matrices at once.

    Parameters
    ----------
    confusions3d : array_like, shape (T, k, k, k)
    costs : array_like, shape (k, k)
    level, replicates, laplace, rng, allow_negative
        As for :func:`bdeltacost`.

    Returns
    -------
    BdeltacostBatch
    """
    m = _as_count_batch(confusions3d, "confusions3d", 3)
    t, k = m.shape[0], m.shape[1]
    c = _as_costs(costs, k, allow_negative)
    level = _check_level(level)
    b = _check_replicates(replicates)
    lam = _check_laplace(laplace)
    gen = _as_generator(rng)
    flat = m.reshape(t, -1)
    values = delta_costs(c).ravel()
    mean, se = _mean_and_se(flat, values)
    reps = _simulate_many(flat, values, lam, b, gen)
    low, high = _interval_from_sorted(reps, level)
    half = _z(level) * se
    nlow, nhigh = mean - half, mean + half
    return BdeltacostBatch(delta=mean, low=low.copy(), high=high.copy(),
                           reject=(low > 0) | (high < 0), normal_low=nlow, normal_high=nhigh,
                           normal_reject=(nlow > 0) | (nhigh < 0), n=flat.sum(axis=1), k=k,
                           level=level, laplace=lam, replicates=b)


# --------------------------------------------------------------------------------------------
# Confusion matrices from labels
# --------------------------------------------------------------------------------------------

def _label_codes(values: ArrayLike, labels: Sequence[object], name: str) -> NDArray[np.intp]:
    arr = np.asarray(values, dtype=object).ravel()
    index = {lab: i for i, lab in enumerate(labels)}
    if len(index) != len(labels):
        raise ParameterError("labels must be unique")
    codes = np.fromiter((index.get(v, -1) for v in arr), dtype=np.intp, count=arr.size)
    if np.any(codes < 0):
        unknown = sorted({str(v) for v in arr[codes < 0]})
        shown = ", ".join(repr(u) for u in unknown[:10])
        raise ParameterError(f"{name} has labels not in labels: {shown}"
                             + (f" (and {len(unknown) - 10} more)" if len(unknown) > 10 else ""))
    return codes


def confusion_from_labels(y_pred: ArrayLike, y_true: ArrayLike,
                          labels: Sequence[object]) -> NDArray[np.int64]:
    """Count matrix of one classifier, **rows = predicted, columns = actual**.

    Parameters
    ----------
    y_pred, y_true : array_like, shape (n,)
        Predicted and true labels (any hashable values, e.g. strings).
    labels : sequence
        The k class labels; row/column ``i`` is ``labels[i]``.

    Returns
    -------
    ndarray of int64, shape (k, k)

    Raises
    ------
    ParameterError
        If the lengths differ, labels repeat, or a value is not in ``labels``.
    """
    k = len(labels)
    pred = _label_codes(y_pred, labels, "y_pred")
    true = _label_codes(y_true, labels, "y_true")
    if pred.size != true.size:
        raise ParameterError(f"y_pred and y_true differ in length ({pred.size} vs {true.size})")
    return np.bincount(pred * k + true, minlength=k * k).reshape(k, k).astype(np.int64)


def confusion3d_from_labels(y_pred1: ArrayLike, y_pred2: ArrayLike, y_true: ArrayLike,
                            labels: Sequence[object]) -> NDArray[np.int64]:
    """Joint count array of two classifiers on the same examples, axes (pred 1, pred 2, actual).

    Parameters
    ----------
    y_pred1, y_pred2, y_true : array_like, shape (n,)
        The two classifiers' predictions and the truth, example by example.
    labels : sequence
        The k class labels.

    Returns
    -------
    ndarray of int64, shape (k, k, k)
    """
    k = len(labels)
    p1 = _label_codes(y_pred1, labels, "y_pred1")
    p2 = _label_codes(y_pred2, labels, "y_pred2")
    t = _label_codes(y_true, labels, "y_true")
    if not p1.size == p2.size == t.size:
        raise ParameterError(f"y_pred1, y_pred2 and y_true differ in length "
                             f"({p1.size}, {p2.size}, {t.size})")
    flat = (p1 * k + p2) * k + t
    return np.bincount(flat, minlength=k ** 3).reshape(k, k, k).astype(np.int64)


def match_labels(matrix_labels: Sequence[str], data_labels: Iterable[str], *,
                 matrix_source: str = "cost matrix", data_source: str = "data") -> list[str]:
    """Check that every label in the data has a row and column in the (cost) matrix.

    Parameters
    ----------
    matrix_labels : sequence of str
        Labels of the cost matrix, in its order.
    data_labels : iterable of str
        Labels seen in the data (true and predicted).
    matrix_source, data_source : str
        Names used in the error message.

    Returns
    -------
    list of str
        Matrix labels never seen in the data (allowed: a class can be absent from a test set).

    Raises
    ------
    InputFileError
        If the data holds labels the matrix lacks; the message lists the labels missing on
        either side, which usually reveals a spelling or type mismatch ("1" vs "1.0").
    """
    mset = list(dict.fromkeys(matrix_labels))
    dset = set(data_labels)
    extra = sorted(dset.difference(mset))
    unseen = [lab for lab in mset if lab not in dset]
    if extra:
        msg = (f"labels do not match: {data_source} has labels missing from {matrix_source}: "
               f"{_fmt_labels(extra)}")
        if unseen:
            msg += f"; {matrix_source} has labels missing from {data_source}: {_fmt_labels(unseen)}"
        raise InputFileError(msg, source=matrix_source)
    return unseen


def _fmt_labels(labels: Sequence[str], limit: int = 12) -> str:
    shown = ", ".join(repr(x) for x in labels[:limit])
    return shown + (f" (and {len(labels) - limit} more)" if len(labels) > limit else "")


# --------------------------------------------------------------------------------------------
# Files
# --------------------------------------------------------------------------------------------

def _read_csv(path: str | os.PathLike[str]) -> tuple[str, list[str], list[list[str]]]:
    """Header and data rows of a CSV file, cells stripped, blank lines skipped."""
    source = os.fspath(path)
    try:
        with open(source, newline="", encoding="utf-8-sig") as fh:
            sample = fh.read(65536)
            fh.seek(0)
            delimiter = ","
            if sample and "," not in sample.splitlines()[0]:
                for cand in ("\t", ";"):
                    if cand in sample.splitlines()[0]:
                        delimiter = cand
                        break
            rows = [[cell.strip() for cell in row] for row in csv.reader(fh, delimiter=delimiter)]
    except FileNotFoundError:
        raise InputFileError(f"{source}: file not found", source=source) from None
    except (OSError, UnicodeDecodeError, csv.Error) as exc:
        raise InputFileError(f"{source}: cannot read as a UTF-8 CSV file ({exc})",
                             source=source) from None
    rows = [r for r in rows if any(cell for cell in r)]
    if not rows:
        raise InputFileError(f"{source}: the file is empty", source=source)
    return source, rows[0], rows[1:]


def _read_labelled_matrix(path: str | os.PathLike[str], what: str
                          ) -> tuple[str, list[str], list[str], list[list[str]]]:
    """Row labels, column labels and raw cells of a square labelled CSV matrix."""
    source, header, rows = _read_csv(path)
    col_labels = header[1:]
    if len(col_labels) < 2:
        raise InputFileError(f"{source}: a {what} needs a header row with a corner cell and at "
                             f"least 2 class labels; got {header!r}", source=source)
    dup = sorted({x for x in col_labels if col_labels.count(x) > 1})
    if dup or "" in col_labels:
        bad = "an empty label" if "" in col_labels else f"repeated labels {_fmt_labels(dup)}"
        raise InputFileError(f"{source}: the header row has {bad}", source=source)
    row_labels: list[str] = []
    cells: list[list[str]] = []
    for r, row in enumerate(rows, start=1):
        if len(row) != len(header):
            raise InputFileError(f"{source}, row {r}: expected {len(header)} cells (a label and "
                                 f"{len(col_labels)} values), got {len(row)}",
                                 source=source, rows=(r,))
        if row[0] == "":
            raise InputFileError(f"{source}, row {r}: the first cell (the row's class label) is "
                                 "empty", source=source, rows=(r,))
        if row[0] in row_labels:
            raise InputFileError(f"{source}, row {r}: label {row[0]!r} repeats an earlier row",
                                 source=source, rows=(r,))
        row_labels.append(row[0])
        cells.append(row[1:])
    if set(row_labels) != set(col_labels):
        only_rows = [x for x in row_labels if x not in col_labels]
        only_cols = [x for x in col_labels if x not in row_labels]
        parts = []
        if only_rows:
            parts.append(f"only as rows: {_fmt_labels(only_rows)}")
        if only_cols:
            parts.append(f"only as columns: {_fmt_labels(only_cols)}")
        raise InputFileError(f"{source}: a {what} must be square with the same labels on rows and "
                             f"columns; {'; '.join(parts)}", source=source)
    return source, row_labels, col_labels, cells


def _parse_matrix(source: str, row_labels: list[str], col_labels: list[str],
                  cells: list[list[str]], *, integer: bool, allow_negative: bool,
                  hint: str) -> NDArray[np.float64]:
    k = len(row_labels)
    col_pos = {lab: j for j, lab in enumerate(col_labels)}
    out = np.empty((k, k), dtype=np.float64)
    for r, (rlab, row) in enumerate(zip(row_labels, cells, strict=True), start=1):
        for clab, text in zip(col_labels, row, strict=True):
            where = f"{source}, row {r} ({rlab!r}), column {clab!r}"
            try:
                value = float(text)
            except ValueError:
                raise InputFileError(f"{where}: {text!r} is not a number", source=source,
                                     column=clab, rows=(r,)) from None
            if not math.isfinite(value):
                raise InputFileError(f"{where}: {text!r} is not a finite number", source=source,
                                     column=clab, rows=(r,))
            if integer and value != round(value):
                raise InputFileError(f"{where}: {text!r} is not a whole count", source=source,
                                     column=clab, rows=(r,))
            if value < 0 and not allow_negative:
                raise InputFileError(f"{where}: {text!r} is negative{hint}", source=source,
                                     column=clab, rows=(r,))
            out[r - 1, col_pos[clab]] = value
    # Reorder the columns to the row order so the matrix is indexed by one label list.
    order = [col_pos[lab] for lab in row_labels]
    return out[:, order]


def load_cost_matrix(path: str | os.PathLike[str], *, transpose: bool = False,
                     allow_negative: bool = False) -> tuple[list[str], NDArray[np.float64]]:
    """Read a labelled cost matrix from a CSV file.

    The file has a header row (a corner cell, then the class labels) and one row per class (its
    label first, then the costs). By default **rows = predicted class, columns = actual class**:
    the cell in row ``i``, column ``j`` is the cost of predicting ``i`` when the truth is ``j``.
    Columns may come in any order; they are reordered to the rows' order. Comma, tab or
    semicolon separated.

    Parameters
    ----------
    path : str or path-like
    transpose : bool, default False
        The file has rows = actual class and columns = predicted class (the layout of
        scikit-learn's ``confusion_matrix``); it is transposed on reading.
    allow_negative : bool, default False
        Accept negative costs.

    Returns
    -------
    labels : list of str
        Class labels in the file's row order.
    costs : ndarray of float64, shape (k, k)
        ``costs[i, j]`` = cost of predicting ``labels[i]`` when the truth is ``labels[j]``.

    Raises
    ------
    InputFileError
        Unreadable file, not square, repeated/mismatched labels, or a non-numeric, non-finite or
        negative cell (the message names the file, the row and the column).
    """
    source, rlabs, clabs, cells = _read_labelled_matrix(path, "cost matrix")
    hint = " (pass --allow-negative / allow_negative=True to accept benefits)"
    c = _parse_matrix(source, rlabs, clabs, cells, integer=False, allow_negative=allow_negative,
                      hint=hint)
    return rlabs, (c.T.copy() if transpose else c)


def load_confusion_matrix(path: str | os.PathLike[str], *, transpose: bool = False
                          ) -> tuple[list[str], NDArray[np.int64]]:
    """Read a labelled k x k confusion (count) matrix from a CSV file.

    Same layout as :func:`load_cost_matrix`: by default **rows = predicted, columns = actual**;
    ``transpose=True`` for rows = actual, columns = predicted.

    Parameters
    ----------
    path : str or path-like
    transpose : bool, default False

    Returns
    -------
    labels : list of str
    counts : ndarray of int64, shape (k, k)

    Raises
    ------
    InputFileError
        As for :func:`load_cost_matrix`, and for counts that are not non-negative whole numbers
        or that sum to zero.
    """
    source, rlabs, clabs, cells = _read_labelled_matrix(path, "confusion matrix")
    m = _parse_matrix(source, rlabs, clabs, cells, integer=True, allow_negative=False, hint="")
    counts = m.astype(np.int64)
    if counts.sum() == 0:
        raise InputFileError(f"{source}: the confusion matrix has no examples (all counts are 0)",
                             source=source)
    return rlabs, (counts.T.copy() if transpose else counts)


@dataclass(frozen=True, eq=False)
class LabeledClassifier:
    """One classifier's label predictions on a labelled test set.

    Attributes
    ----------
    name : str
    y_true : ndarray of str (object), shape (n,)
    y_pred : ndarray of str (object), shape (n,)
    """

    name: str
    y_true: NDArray[np.object_]
    y_pred: NDArray[np.object_]

    @property
    def labels(self) -> set[str]:
        """Every label appearing as truth or prediction."""
        return set(self.y_true.tolist()) | set(self.y_pred.tolist())


@dataclass(frozen=True, eq=False)
class LabelPredictions:
    """A loaded file of predicted class labels (see :func:`load_label_predictions`).

    Attributes
    ----------
    source : str
        The file's path as given.
    layout : {"wide", "long"}
    classifiers : tuple of LabeledClassifier
    """

    source: str
    layout: Literal["wide", "long"]
    classifiers: tuple[LabeledClassifier, ...]

    @property
    def names(self) -> tuple[str, ...]:
        return tuple(c.name for c in self.classifiers)

    def classifier(self, name: str) -> LabeledClassifier:
        """The classifier called ``name``; InputFileError listing the names if absent."""
        for c in self.classifiers:
            if c.name == name:
                return c
        raise InputFileError(f"{self.source}: no classifier named {name!r}; the file has "
                             f"{_fmt_labels(list(self.names))}", source=self.source)

    def pair(self, a: str, b: str) -> tuple[NDArray[np.object_], NDArray[np.object_],
                                            NDArray[np.object_]]:
        """``(y_pred_a, y_pred_b, y_true)`` for two classifiers scored on the same examples.

        In the long layout the rows of the two models are paired in file order; they must have
        the same number of rows and the same true label row by row.
        """
        ca, cb = self.classifier(a), self.classifier(b)
        if ca.y_true.shape != cb.y_true.shape:
            raise InputFileError(f"{self.source}: {a!r} has {ca.y_true.size} rows and {b!r} has "
                                 f"{cb.y_true.size}; a paired comparison needs the same examples",
                                 source=self.source)
        differ = np.flatnonzero(ca.y_true != cb.y_true)
        if differ.size:
            raise InputFileError(f"{self.source}: {a!r} and {b!r} disagree on the true label of "
                                 f"their example {int(differ[0]) + 1} (rows are paired in file "
                                 "order); a paired comparison needs the same examples",
                                 source=self.source, rows=tuple(int(i) + 1 for i in differ[:5]))
        return ca.y_pred, cb.y_pred, ca.y_true


def load_label_predictions(path: str | os.PathLike[str], *,
                           layout: Literal["auto", "wide", "long"] = "auto",
                           true_column: str = "y_true", model_column: str = "model",
                           pred_column: str = "y_pred",
                           models: Sequence[str] | None = None) -> LabelPredictions:
    """Read predicted class labels of one or more classifiers from a CSV file.

    Two layouts (labels are read as text, so ``cat``/``dog`` and ``0``/``1`` both work):

    * wide - a true-label column and one predicted-label column per classifier, all on the same
      rows: ``y_true,clf_a,clf_b``;
    * long - one row per (classifier, example): ``model,y_true,y_pred``.

    Parameters
    ----------
    path : str or path-like
    layout : {"auto", "wide", "long"}, default "auto"
        "auto" picks long when the header has ``model_column`` and ``pred_column``.
    true_column, model_column, pred_column : str
        Column names.
    models : sequence of str, optional
        Only these classifiers are read and checked (others are ignored); error if one is absent.

    Returns
    -------
    LabelPredictions

    Raises
    ------
    InputFileError
        Missing columns, ragged rows, empty label cells (the message names the column and the
        first rows), unknown model names.
    """
    source, header, rows = _read_csv(path)
    dup = sorted({h for h in header if header.count(h) > 1})
    if dup:
        raise InputFileError(f"{source}: repeated column names {_fmt_labels(dup)}", source=source)
    if layout == "auto":
        layout = "long" if (model_column in header and pred_column in header) else "wide"
    if layout not in ("wide", "long"):
        raise ParameterError(f"layout must be 'auto', 'wide' or 'long'; got {layout!r}")
    need = [true_column] + ([model_column, pred_column] if layout == "long" else [])
    missing = [c for c in need if c not in header]
    if missing:
        raise InputFileError(f"{source}: missing column(s) {_fmt_labels(missing)} for the {layout} "
                             f"layout; the header has {_fmt_labels(header)}", source=source)
    for r, row in enumerate(rows, start=1):
        if len(row) != len(header):
            raise InputFileError(f"{source}, row {r}: {len(row)} cells where the header has "
                                 f"{len(header)}", source=source, rows=(r,))
    if not rows:
        raise InputFileError(f"{source}: no data rows", source=source)
    table = np.array(rows, dtype=object).reshape(len(rows), len(header))
    col = {name: table[:, i] for i, name in enumerate(header)}

    def check_filled(name: str, values: NDArray[np.object_], offset: NDArray[np.intp] | None
                     ) -> None:
        empty = np.flatnonzero(values == "")
        if empty.size:
            where = (offset[empty] if offset is not None else empty) + 1
            shown = ", ".join(str(int(x)) for x in where[:5])
            raise InputFileError(f"{source}, column {name!r}: empty label in row(s) {shown}"
                                 + (f" and {empty.size - 5} more" if empty.size > 5 else ""),
                                 source=source, column=name,
                                 rows=tuple(int(x) for x in where[:5]))

    classifiers: list[LabeledClassifier] = []
    if layout == "wide":
        names = [h for h in header if h != true_column]
        if not names:
            raise InputFileError(f"{source}: no predicted-label column besides {true_column!r}",
                                 source=source)
        wanted = list(models) if models is not None else names
        absent = [m for m in wanted if m not in names]
        if absent:
            raise InputFileError(f"{source}: no classifier column {_fmt_labels(absent)}; the file "
                                 f"has {_fmt_labels(names)}", source=source)
        y_true = col[true_column]
        check_filled(true_column, y_true, None)
        for name in wanted:
            check_filled(name, col[name], None)
            classifiers.append(LabeledClassifier(name, y_true, col[name]))
    else:
        model = col[model_column]
        check_filled(model_column, model, None)
        names = list(dict.fromkeys(model.tolist()))
        wanted = list(models) if models is not None else names
        absent = [m for m in wanted if m not in names]
        if absent:
            raise InputFileError(f"{source}: no model {_fmt_labels(absent)} in column "
                                 f"{model_column!r}; the file has {_fmt_labels(names)}",
                                 source=source, column=model_column)
        for name in wanted:
            idx = np.flatnonzero(model == name)
            yt, yp = col[true_column][idx], col[pred_column][idx]
            check_filled(true_column, yt, idx)
            check_filled(pred_column, yp, idx)
            classifiers.append(LabeledClassifier(name, yt, yp))
    return LabelPredictions(source=source, layout=layout, classifiers=tuple(classifiers))

