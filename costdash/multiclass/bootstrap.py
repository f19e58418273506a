"""BCOST and BDELTACOST: the statistics of :mod:`costdash.multiclass` (that module documents the
method, the orientation of the matrices and the public names; this one is private).

Every procedure checks its arguments with the family's one validator, :func:`_bootstrap_iv`,
then draws its replicates with :func:`_simulate_single` or :func:`_simulate_many`.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field, replace
from statistics import NormalDist
from typing import Any, ClassVar, Generic, NamedTuple, Self, TypeVar

import numpy as np
from numpy.typing import ArrayLike, NDArray

from costdash._docstrings import fill_doc
from costdash._resampling import (
    MULTICLASS_MAX_REPLICATES,
    AtLevel,
    RngLike,
    check_level,
    check_replicates,
    order_statistic_ranks,
)
from costdash._resampling import as_generator as _as_generator
from costdash._resampling import readonly as _readonly
from costdash.errors import ParameterError

MAX_REPLICATES = MULTICLASS_MAX_REPLICATES
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


def _read_at(sorted_reps: NDArray[np.float64], std_error: float, level: float
             ) -> tuple[float, float, float]:
    """``(low, high, half-width of the normal interval)`` of one matrix's sorted replicates
    and standard error, read at a checked ``level``."""
    low, high = _interval_from_sorted(sorted_reps, level)
    return float(low), float(high), _z(level) * std_error



# --------------------------------------------------------------------------------------------
# Results
# --------------------------------------------------------------------------------------------

def _excludes_zero(low: float | NDArray[np.float64], high: float | NDArray[np.float64]
                   ) -> bool | NDArray[np.bool_]:
    """Whether ``[low, high]`` lies on one side of 0: BDELTACOST's test (elementwise)."""
    return (low > 0) | (high < 0)


_V = TypeVar("_V", float, NDArray[np.float64])
_N = TypeVar("_N", int, NDArray[np.int64])


@dataclass(frozen=True, eq=False, kw_only=True)
class _Intervals(Generic[_V, _N]):
    """The bootstrap and normal intervals of one BCOST or BDELTACOST result (``float`` values)
    or of a batch of them (arrays); the result classes document the fields."""

    low: _V
    high: _V
    normal_low: _V
    normal_high: _V
    n: _N
    k: int
    level: float


@dataclass(frozen=True, eq=False, kw_only=True)
class _CostInterval(_Intervals[float, int], AtLevel):
    """The interval part of one BCOST or BDELTACOST result; the estimate it is centred on is
    the subclass's field named by ``_ESTIMATE``."""

    _ESTIMATE: ClassVar[str]

    replicates: NDArray[np.float64] = field(repr=False)
    laplace: float = 0.0
    std_error: float = 0.0

    def _at_level(self, level: float) -> Self:
        low, high, half = _read_at(self.replicates, self.std_error, level)
        estimate = getattr(self, self._ESTIMATE)
        return replace(self, low=low, high=high, normal_low=estimate - half,
                       normal_high=estimate + half, level=level)


@dataclass(frozen=True, eq=False, kw_only=True)
class BcostResult(_CostInterval):
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

    _ESTIMATE: ClassVar[str] = "cost"

    cost: float

    @property
    def mean_replicate(self) -> float:
        """Mean of the replicate costs (estimates the Laplace-smoothed expected cost)."""
        return float(self.replicates.mean())


@dataclass(frozen=True, eq=False, kw_only=True)
class BdeltacostResult(_CostInterval):
    """A BDELTACOST interval for ``cost(classifier 1) - cost(classifier 2)`` per example.

    Attributes
    ----------
    delta : float
        Observed difference of the average costs per example, ``sum(M * Delta) / n``.
    low, high : float
        The bootstrap interval (order statistics of the sorted replicate differences).
    reject : bool
        True iff ``[low, high]`` excludes 0: reject H0 "equal expected cost" at ``level``
        (:meth:`at_level` recomputes it).
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

    _ESTIMATE: ClassVar[str] = "delta"

    delta: float
    reject: bool

    @property
    def normal_reject(self) -> bool:
        """True iff the paired z interval excludes 0."""
        return bool(_excludes_zero(self.normal_low, self.normal_high))

    def _at_level(self, level: float) -> Self:
        moved = super()._at_level(level)
        return replace(moved, reject=bool(_excludes_zero(moved.low, moved.high)))


@dataclass(frozen=True, eq=False, kw_only=True)
class _CostIntervals(_Intervals[NDArray[np.float64], NDArray[np.int64]]):
    """The intervals part of :class:`BcostBatch` and :class:`BdeltacostBatch`: one interval
    per confusion matrix."""

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


@dataclass(frozen=True, eq=False, kw_only=True)
class BcostBatch(_CostIntervals):
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


@dataclass(frozen=True, eq=False, kw_only=True)
class BdeltacostBatch(_CostIntervals):
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
    reject: NDArray[np.bool_]
    normal_reject: NDArray[np.bool_]


# --------------------------------------------------------------------------------------------
# Public procedures
# --------------------------------------------------------------------------------------------

class _Arguments(NamedTuple):
    """The checked arguments of one BCOST or BDELTACOST call (:func:`_bootstrap_iv`)."""

    counts: NDArray[np.int64]
    """Flattened count matrices, shape (T, m): T = 1 for one matrix."""
    values: NDArray[np.float64]
    """The cost of each of the m cells (the cost-difference matrix for BDELTACOST)."""
    k: int
    level: float
    replicates: int
    laplace: float
    rng: np.random.Generator


_WHAT = {False: "a square k x k count matrix (rows = predicted, columns = actual)",
         True: "a k x k x k count array (classifier 1's prediction, classifier 2's prediction, "
               "actual class)"}


def _bootstrap_iv(confusion: ArrayLike, costs: ArrayLike, level: object, replicates: object,
                  laplace: object, rng: RngLike, allow_negative: bool, *, joint: bool,
                  batch: bool) -> _Arguments:
    """Input validation of the whole family (:func:`bcost`, :func:`bdeltacost` and their
    ``_many`` forms), in one order: the counts, the costs, level, replicates, laplace, rng.

    ``joint``: the counts are joint (k x k x k, BDELTACOST) and each cell costs the difference
    of the two predictions' costs; ``batch``: a leading axis of T matrices.
    """
    name = ("confusions" if batch else "confusion") + ("3d" if joint else "")
    ndim = 3 if joint else 2
    m = _as_count_batch(confusion, name, ndim) if batch else \
        _as_counts(confusion, name, ndim, _WHAT[joint])[None]
    k = m.shape[1]
    c = _as_costs(costs, k, allow_negative)
    return _Arguments(counts=m.reshape(m.shape[0], -1),
                      values=(delta_costs(c) if joint else c).ravel(), k=k,
                      level=_check_level(level), replicates=_check_replicates(replicates),
                      laplace=_check_laplace(laplace), rng=_as_generator(rng))


def _one(a: _Arguments) -> tuple[float, dict[str, Any]]:
    """The estimate of one matrix, and the fields of its :class:`_CostInterval`."""
    mean, se = _mean_and_se(a.counts, a.values)
    reps = _readonly(_simulate_single(a.counts[0], a.values, a.laplace, a.replicates, a.rng))
    low, high, half = _read_at(reps, float(se[0]), a.level)
    estimate = float(mean[0])
    return estimate, dict(low=low, high=high, normal_low=estimate - half,
                          normal_high=estimate + half, n=int(a.counts.sum()), k=a.k,
                          level=a.level, replicates=reps, laplace=a.laplace,
                          std_error=float(se[0]))


def _many(a: _Arguments) -> tuple[NDArray[np.float64], dict[str, Any]]:
    """The estimates of T matrices, and the fields of their :class:`_CostIntervals`."""
    mean, se = _mean_and_se(a.counts, a.values)
    reps = _simulate_many(a.counts, a.values, a.laplace, a.replicates, a.rng)
    low, high = _interval_from_sorted(reps, a.level)
    half = _z(a.level) * se
    return mean, dict(low=low.copy(), high=high.copy(), normal_low=mean - half,
                      normal_high=mean + half, n=a.counts.sum(axis=1), k=a.k, level=a.level,
                      laplace=a.laplace, replicates=a.replicates)


def _estimate(confusion: ArrayLike, costs: ArrayLike, level: object, replicates: object,
              laplace: object, rng: RngLike, allow_negative: bool, *, joint: bool, batch: bool
              ) -> tuple[Any, dict[str, Any]]:
    """The checked arguments (:func:`_bootstrap_iv`) estimated by :func:`_many` or :func:`_one`."""
    a = _bootstrap_iv(confusion, costs, level, replicates, laplace, rng, allow_negative,
                      joint=joint, batch=batch)
    return _many(a) if batch else _one(a)


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
    cost, interval = _estimate(confusion, costs, level, replicates, laplace, rng,
                               allow_negative, joint=False, batch=False)
    return BcostResult(cost=cost, **interval)


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
    delta, interval = _estimate(confusion3d, costs, level, replicates, laplace, rng,
                                allow_negative, joint=True, batch=False)
    return BdeltacostResult(delta=delta, reject=bool(_excludes_zero(interval["low"],
                                                                    interval["high"])),
                            **interval)


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


_BATCH_DOC = """:func:`%(single)s` on many %(matrices)s at once (e.g. simulated test sets).

    Same procedure and distribution as calling :func:`%(single)s` on each matrix, vectorised:
    the replicates of a block of matrices come from one ``multinomial`` call. With T = 1 and no
    empty cell it reproduces :func:`%(single)s` exactly for the same seed.

    Parameters
    ----------
    %(arg)s : array_like, shape %(shape)s
        %(matrices_capitalised)s, one per test set.
    costs : array_like, shape (k, k)
    level, replicates, laplace, rng, allow_negative
        As for :func:`%(single)s`.

    Returns
    -------
    %(result)s
    """


@fill_doc(_BATCH_DOC, single="bcost", matrices="confusion matrices",
          matrices_capitalised="Count matrices, rows predicted, columns actual",
          arg="confusions", shape="(T, k, k)", result="BcostBatch")
def bcost_many(confusions: ArrayLike, costs: ArrayLike, *, level: float = 0.95,
               replicates: int = 1000, laplace: float = 0.1, rng: RngLike = None,
               allow_negative: bool = False) -> BcostBatch:
    cost, intervals = _estimate(confusions, costs, level, replicates, laplace, rng,
                                allow_negative, joint=False, batch=True)
    return BcostBatch(cost=cost, **intervals)


@fill_doc(_BATCH_DOC, single="bdeltacost", matrices="joint confusion matrices",
          matrices_capitalised="Joint counts, axes as for :func:`bdeltacost`",
          arg="confusions3d", shape="(T, k, k, k)",
          result="BdeltacostBatch\n"
                 "    ``delta > 0`` where classifier 1 costs more than classifier 2.")
def bdeltacost_many(confusions3d: ArrayLike, costs: ArrayLike, *, level: float = 0.95,
                    replicates: int = 1000, laplace: float = 0.0, rng: RngLike = None,
                    allow_negative: bool = False) -> BdeltacostBatch:
    delta, intervals = _estimate(confusions3d, costs, level, replicates, laplace, rng,
                                 allow_negative, joint=True, batch=True)
    return BdeltacostBatch(
        delta=delta, reject=_excludes_zero(intervals["low"], intervals["high"]),
        normal_reject=_excludes_zero(intervals["normal_low"], intervals["normal_high"]),
        **intervals)
