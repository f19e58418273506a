"""Intervals beside the Explore page's headline numbers: the expected cost of one threshold, and a
pinned threshold's regret against the best choice, at one operating condition.

Both are the closed forms of :mod:`costdash.bands` read at one PC(+) (``docs/bands.md``):

* **Cost of a threshold** (a cost line ``NE(x) = FNR x + FPR (1 - x)`` at ``x = PC(+)``): the
  Clopper-Pearson limits of FNR and FPR combined by MOVER, the lower limit no higher than Fay &
  Feuer's gamma limit (:func:`costdash._intervals.cp_mover_line`, the default band of
  :func:`costdash.bands.cost_band` at a fixed threshold). Its level is earned for a threshold fixed
  before the test cases were scored (``studies/fixed_threshold_coverage.py``: exact coverage at
  least the level in every regime); for a threshold *picked on these cases* (the best choice) the
  same limits are a spread without a level, since the picked threshold's test-set cost is
  optimistic (``docs/bands.md``, "thresholds selected from the data").
* **Regret of a pin** (``cost(pin) - cost(best)``, two cost lines on the same rows): per class
  the paired difference of error rates with MOVER on the discordant cells (Clopper-Pearson
  limits, :func:`costdash._intervals.discordant_mover`), the two classes combined by MOVER, as
  :func:`costdash.bands.difference_band` does at fixed thresholds. The best choice is picked on
  these cases, so this is a spread without a level.

Each is split in two: the limits that do not depend on the conditions (:func:`rate_limits`,
:func:`paired_limits`; computed once per threshold and level, and what the browser keeps), and
their combination at one condition (:func:`cost_interval`, :func:`regret_interval`), which
``assets/costmath.js`` repeats (``costInterval``, ``regretInterval``) so that the interval moves
with the sliders without asking the server; ``tests/web/test_costmath_js.py`` checks the two
agree.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from numpy.typing import ArrayLike

from costdash._intervals import clopper_pearson, cp_mover_line, discordant_mover, mover_line
from costdash.conditions import OperatingCondition
from costdash.errors import ParameterError

__all__ = ["PairedLimits", "RateLimits", "cost_interval", "paired_limits", "paired_table",
           "paired_tables", "rate_limits", "regret_interval"]


def _level(level: float) -> float:
    level = float(level)
    if not 0.0 < level < 1.0:
        raise ParameterError(f"level must be between 0 and 1 (exclusive); got {level:g}")
    return level


@dataclass(frozen=True)
class RateLimits:
    """A threshold's error counts and the Clopper-Pearson limits of its two error rates.

    Attributes
    ----------
    fn, n_pos, fp, n_neg : int
        Missed positives among ``n_pos`` positives, false alarms among ``n_neg`` negatives.
    level : float
        Two-sided level of each rate's limits.
    exact : bool
        A trivial threshold (flag nothing or everything): its rates are known, zero width.
    fnr_low, fnr_high, fpr_low, fpr_high : float
        Clopper-Pearson limits of FNR = fn / n_pos and FPR = fp / n_neg (the rate itself when
        ``exact``).

    Examples
    --------
    >>> r = rate_limits(4, 20, 4, 10, 0.9)
    >>> round(r.fnr_low, 4), round(r.fnr_high, 4), round(r.fpr_low, 4), round(r.fpr_high, 4)
    (0.0714, 0.401, 0.15, 0.6965)
    """

    fn: int
    n_pos: int
    fp: int
    n_neg: int
    level: float
    exact: bool
    fnr_low: float
    fnr_high: float
    fpr_low: float
    fpr_high: float


def rate_limits(fn: int, n_pos: int, fp: int, n_neg: int, level: float, *,
                exact: bool = False) -> RateLimits:
    """The condition-free part of :func:`cost_interval` (see :class:`RateLimits`)."""
    level = _level(level)
    fn, n_pos, fp, n_neg = int(fn), int(n_pos), int(fp), int(n_neg)
    if n_pos <= 0 or n_neg <= 0 or not (0 <= fn <= n_pos and 0 <= fp <= n_neg):
        raise ParameterError(f"counts out of range: fn {fn} of {n_pos} positives, fp {fp} of "
                             f"{n_neg} negatives")
    lo, hi = clopper_pearson([fn, fp], [n_pos, n_neg], level)
    if exact:
        lo = hi = np.array([fn / n_pos, fp / n_neg])
    return RateLimits(fn=fn, n_pos=n_pos, fp=fp, n_neg=n_neg, level=level, exact=bool(exact),
                      fnr_low=float(lo[0]), fnr_high=float(hi[0]), fpr_low=float(lo[1]),
                      fpr_high=float(hi[1]))


def cost_interval(limits: RateLimits, condition: OperatingCondition
                  ) -> tuple[float, float, float]:
    """Expected cost per case of the threshold of ``limits`` at ``condition``, with its interval.

    Returns ``(cost, low, high)`` in the costs' units per case (times a volume for a period):
    the Clopper-Pearson-MOVER band of the cost line at ``x = PC(+)``
    (:func:`costdash._intervals.cp_mover_line`, what :func:`costdash.bands.cost_band` gives at
    a fixed threshold), mapped to money as the readouts are (``NE x cost_scale + constant``).

    Examples
    --------
    >>> c = OperatingCondition(0.5, 1.0, 1.0)       # PC(+) = 0.5, cost scale 1
    >>> [round(v, 4) for v in cost_interval(rate_limits(4, 20, 4, 10, 0.9), c)]
    ... # cost_band((16, 4, 4, 6)) at PC(+) 0.5: the same three numbers
    [0.3, 0.1594, 0.4791]
    """
    x = condition.pc
    ne = limits.fn / limits.n_pos * x + limits.fp / limits.n_neg * (1.0 - x)
    low, high = cp_mover_line(x, limits.fn, limits.n_pos, limits.fp, limits.n_neg, limits.level,
                              exact1=limits.exact, exact2=limits.exact)
    return (condition.expected_cost(ne), condition.expected_cost(float(low)),
            condition.expected_cost(float(high)))


def paired_table(y_true: ArrayLike, flag_a: ArrayLike, flag_b: ArrayLike) -> np.ndarray:
    """The paired 2 x 2 tables of two decisions on the same rows, per class.

    Returns an int array of shape (2, 4): row 0 the positives, row 1 the negatives, each
    ``(n11, n10, n01, n00)`` = flagged by both, by ``a`` only, by ``b`` only, by neither.

    Examples
    --------
    >>> paired_table([1, 1, 0, 0], [1, 0, 1, 0], [1, 1, 0, 0]).tolist()
    [[1, 0, 1, 0], [0, 1, 0, 1]]
    """
    y = np.asarray(y_true).astype(bool)
    a = np.asarray(flag_a).astype(bool)
    b = np.asarray(flag_b).astype(bool)
    if not (y.shape == a.shape == b.shape):
        raise ParameterError(f"y_true, flag_a and flag_b differ in length: {y.shape}, "
                             f"{a.shape}, {b.shape}")
    out = np.empty((2, 4), dtype=np.int64)
    for row, cls in enumerate((y, ~y)):
        ab = np.count_nonzero(a & b & cls)
        na = np.count_nonzero(a & cls)
        nb = np.count_nonzero(b & cls)
        out[row] = (ab, na - ab, nb - ab, np.count_nonzero(cls) - na - nb + ab)
    return out


def paired_tables(y_true: ArrayLike, flag_a: ArrayLike, score_b: ArrayLike,
                  thresholds_b: ArrayLike) -> np.ndarray:
    """:func:`paired_table` of one decision ``a`` against a scoring classifier ``b`` at each of
    ``thresholds_b`` (``b`` flags ``score >= threshold``; ``+inf`` flags nothing, ``-inf``
    everything), in one sort: shape (len(thresholds_b), 2, 4).

    Examples
    --------
    >>> paired_tables([1, 1, 0, 0], [1, 0, 1, 0], [0.9, 0.8, 0.3, 0.1], [0.85, 0.5]).tolist()
    [[[1, 0, 0, 1], [0, 1, 0, 1]], [[1, 0, 1, 0], [0, 1, 0, 1]]]
    """
    y = np.asarray(y_true).astype(bool)
    a = np.asarray(flag_a).astype(bool)
    s = np.asarray(score_b, dtype=np.float64)
    t = np.atleast_1d(np.asarray(thresholds_b, dtype=np.float64))
    if not (y.shape == a.shape == s.shape) or y.ndim != 1:
        raise ParameterError(f"y_true, flag_a and score_b differ in length: {y.shape}, "
                             f"{a.shape}, {s.shape}")
    if np.isnan(t).any():
        raise ParameterError("a threshold of b is NaN")
    order = np.argsort(-s, kind="stable")
    s_desc = s[order]
    # How many rows b flags at each threshold: those with score >= t, a prefix of the order.
    k = np.searchsorted(-s_desc, -t, side="right")
    out = np.empty((t.size, 2, 4), dtype=np.int64)
    for row, cls in enumerate((y, ~y)):
        c = cls[order]
        both = np.concatenate([[0], np.cumsum(a[order] & c)])[k]
        flagged_b = np.concatenate([[0], np.cumsum(c)])[k]
        n_cls = int(np.count_nonzero(cls))
        n_a = int(np.count_nonzero(a & cls))
        out[:, row] = np.stack([both, n_a - both, flagged_b - both,
                                n_cls - n_a - flagged_b + both], axis=1)
    return out


@dataclass(frozen=True)
class PairedLimits:
    """The paired differences of two thresholds' error rates (``a - b``) with their limits.

    Attributes
    ----------
    level : float
    d_fnr, fnr_low, fnr_high : float
        FNR_a - FNR_b and its interval (MOVER on the positives' discordant cells).
    d_fpr, fpr_low, fpr_high : float
        FPR_a - FPR_b and its interval (the negatives').

    Examples
    --------
    >>> p = paired_limits([[5, 3, 0, 2], [1, 2, 0, 7]], 0.9)   # a flags more than b
    >>> round(p.d_fnr, 3), round(p.d_fpr, 3)
    (-0.3, 0.2)
    """

    level: float
    d_fnr: float
    fnr_low: float
    fnr_high: float
    d_fpr: float
    fpr_low: float
    fpr_high: float


def paired_limits(table: ArrayLike, level: float, *, exact_a: bool = False,
                  exact_b: bool = False) -> PairedLimits:
    """The condition-free part of :func:`regret_interval`, from :func:`paired_table`'s table
    (``exact_a``/``exact_b``: that side is a trivial threshold, its rates known)."""
    level = _level(level)
    t = np.asarray(table, dtype=np.int64)
    if t.shape != (2, 4) or (t < 0).any() or (t.sum(axis=1) <= 0).any():
        raise ParameterError("a paired table is 2 x 4 non-negative counts with both classes "
                             f"present; got {t.tolist()}")
    # On the positives the flag rates are TPRs: FNR_a - FNR_b = -(TPR_a - TPR_b).
    d_pos, lo_pos, hi_pos = discordant_mover(*t[0], level, exact_a=exact_a, exact_b=exact_b)
    d_neg, lo_neg, hi_neg = discordant_mover(*t[1], level, exact_a=exact_a, exact_b=exact_b)
    return PairedLimits(level=level, d_fnr=-float(d_pos), fnr_low=-float(hi_pos),
                        fnr_high=-float(lo_pos), d_fpr=float(d_neg), fpr_low=float(lo_neg),
                        fpr_high=float(hi_neg))


def regret_interval(limits: PairedLimits, condition: OperatingCondition
                    ) -> tuple[float, float, float]:
    """``cost(a) - cost(b)`` per case at ``condition`` with its interval: the regret of a pin
    (``a``) against the best choice (``b``) when ``b`` is that choice.

    Returns ``(regret, low, high)``: the paired difference of the two cost lines at
    ``x = PC(+)``, the classes combined by MOVER (as :func:`costdash.bands.difference_band` at
    fixed thresholds), times the cost scale (the constant part of correct decisions cancels).

    Examples
    --------
    >>> c = OperatingCondition(0.5, 1.0, 1.0)
    >>> [round(v, 4) for v in regret_interval(paired_limits([[5, 3, 0, 2], [1, 2, 0, 7]], 0.9),
    ...                                       c)]
    [-0.05, -0.2666, 0.1772]
    """
    x = condition.pc
    diff = x * limits.d_fnr + (1.0 - x) * limits.d_fpr
    low, high = mover_line(x, limits.d_fnr, limits.fnr_low, limits.fnr_high, limits.d_fpr,
                           limits.fpr_low, limits.fpr_high)
    scale = condition.cost_scale
    return diff * scale, float(low) * scale, float(high) * scale

