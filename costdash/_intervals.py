"""Closed-form intervals for the error rates of a fixed threshold and the cost lines built on them.

Notation (``docs/bands.md``, the team notes' ``band-methods.md``): a classifier at one threshold
has ``FN ~ Bin(P, FNR)`` and ``FP ~ Bin(N, FPR)`` with the class totals fixed, and its normalized
cost line is ``NE(x) = FNR x + FPR (1 - x)`` for ``x = PC(+)``.

* :func:`wilson` - Wilson score interval of one proportion (never zero width at 0 or n).
* :func:`clopper_pearson` - the exact (Clopper-Pearson) interval of one proportion.
* :func:`mover_line` - MOVER (Zou & Donner) limits of ``a p1 + b p2`` (a, b >= 0) from the two
  rates' limits; :func:`wilson_mover_line` - with Wilson limits (the default before issue 24,
  still selectable: it under-covers when a class expects a fraction of an error).
* :func:`gamma_lower` - Fay & Feuer's (1997) gamma lower limit of a weighted sum of counts, taken
  with binomial variances: what keeps a cost line's lower limit honest when both classes have a
  few errors (MOVER's sum in quadrature is too short there).
* :func:`cp_mover_line` - the default band of a cost line: Clopper-Pearson limits of both rates
  combined by MOVER, its lower limit no higher than :func:`gamma_lower`.
* :func:`newcombe_paired` - Newcombe's (1998, method 10) interval for the difference of two
  proportions measured on the same units (paired), from Wilson limits and the phi correlation.
* :func:`discordant_mover` - the default paired interval: MOVER on the two discordant cells
  (only a, only b), each with Clopper-Pearson limits, and their multinomial correlation.

``studies/fixed_threshold_coverage.py`` computes the exact coverage of these bands (binomial and
multinomial sums, no simulation); ``docs/bands.md`` has its table.

Everything is vectorised over numpy arrays and pure (no randomness).
"""

from __future__ import annotations

import numpy as np
from numpy.typing import ArrayLike, NDArray
from scipy.special import betaincinv, gammaincinv, ndtri

__all__ = ["clopper_pearson", "cp_mover_line", "discordant_mover", "gamma_lower", "mover_line",
           "newcombe_paired", "wilson", "wilson_mover_line", "z_value"]


def z_value(level: float | NDArray[np.float64]) -> NDArray[np.float64]:
    """The two-sided normal quantile ``z = Phi^-1(1 - (1 - level) / 2)``."""
    return ndtri(1.0 - (1.0 - np.asarray(level, dtype=np.float64)) / 2.0)


def wilson(k: ArrayLike, n: ArrayLike, level: float | ArrayLike
           ) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
    """Wilson score interval ``[l, u]`` of the proportion ``k / n`` (arrays broadcast).

    ``centre = (p + z^2 / 2n) / (1 + z^2 / n)``,
    ``half = z sqrt(p (1 - p) / n + z^2 / 4n^2) / (1 + z^2 / n)``. At ``k = 0`` the lower limit is
    exactly 0 and at ``k = n`` the upper limit exactly 1.
    """
    k = np.asarray(k, dtype=np.float64)
    n = np.asarray(n, dtype=np.float64)
    z = z_value(level)
    p = k / n
    z2n = z * z / n
    denom = 1.0 + z2n
    centre = (p + z2n / 2.0) / denom
    half = z * np.sqrt(p * (1.0 - p) / n + z2n / (4.0 * n)) / denom
    lo = np.clip(centre - half, 0.0, 1.0)
    hi = np.clip(centre + half, 0.0, 1.0)
    lo = np.where(k <= 0, 0.0, np.minimum(lo, p))
    hi = np.where(k >= n, 1.0, np.maximum(hi, p))
    return lo, hi


def clopper_pearson(k: ArrayLike, n: ArrayLike, level: float | ArrayLike
                    ) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
    """Exact (Clopper-Pearson) interval of ``k / n``: Beta quantiles, 0 at k = 0, 1 at k = n.

    ``lo = Beta^-1(alpha / 2; k, n - k + 1)``, ``hi = Beta^-1(1 - alpha / 2; k + 1, n - k)``.
    """
    k = np.asarray(k, dtype=np.float64)
    n = np.asarray(n, dtype=np.float64)
    alpha = 1.0 - np.asarray(level, dtype=np.float64)
    with np.errstate(invalid="ignore", divide="ignore"):
        lo = betaincinv(np.maximum(k, 1e-300), n - k + 1.0, alpha / 2.0)
        hi = betaincinv(k + 1.0, np.maximum(n - k, 1e-300), 1.0 - alpha / 2.0)
    lo = np.where(k <= 0, 0.0, lo)
    hi = np.where(k >= n, 1.0, hi)
    return lo, hi


def mover_line(x: ArrayLike, p1: ArrayLike, l1: ArrayLike, u1: ArrayLike, p2: ArrayLike,
               l2: ArrayLike, u2: ArrayLike) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
    """MOVER limits of ``theta = x p1 + (1 - x) p2`` for independent estimates ``p1``, ``p2``.

    ``L = theta - sqrt((x (p1 - l1))^2 + ((1 - x) (p2 - l2))^2)``,
    ``U = theta + sqrt((x (u1 - p1))^2 + ((1 - x) (u2 - p2))^2)`` (Zou & Donner). With ``p1 = FNR``
    and ``p2 = FPR`` this is the pointwise band of the cost line ``NE(x)``; with paired differences
    (``newcombe_paired``) the band of a difference of two cost lines.
    """
    x = np.asarray(x, dtype=np.float64)
    p1, l1, u1, p2, l2, u2 = (np.asarray(v, dtype=np.float64) for v in (p1, l1, u1, p2, l2, u2))
    w = 1.0 - x
    theta = x * p1 + w * p2
    low = theta - np.hypot(x * (p1 - l1), w * (p2 - l2))
    high = theta + np.hypot(x * (u1 - p1), w * (u2 - p2))
    return low, high


def gamma_lower(estimate: ArrayLike, variance: ArrayLike, level: float | ArrayLike
                ) -> NDArray[np.float64]:
    """Fay & Feuer's gamma lower limit of a non-negative weighted sum of counts.

    ``L = (v / y) G^-1(alpha / 2; y^2 / v)`` with ``y`` the estimate, ``v`` its variance and
    ``G^-1(q; a)`` the quantile of the unit-scale gamma distribution of shape ``a`` (equivalently
    ``v / (2y) chi2^-1(alpha / 2; 2 y^2 / v)``, Fay & Feuer 1997). With Poisson variances and one
    count it is the exact (Garwood) lower limit; a cost line's caller passes binomial variances,
    so that it is not conservative for large rates. ``L = 0`` where ``y = 0``; ``L = y`` where
    ``v = 0`` (nothing random).
    """
    y = np.asarray(estimate, dtype=np.float64)
    v = np.asarray(variance, dtype=np.float64)
    alpha = 1.0 - np.asarray(level, dtype=np.float64)
    random = (y > 0) & (v > 0)
    safe_y = np.where(random, y, 1.0)
    safe_v = np.where(random, v, 1.0)
    low = gammaincinv(safe_y * safe_y / safe_v, alpha / 2.0) * (safe_v / safe_y)
    return np.where(random, low, np.where(y > 0, y, 0.0))


def _rates(k1: ArrayLike, n1: ArrayLike, k2: ArrayLike, n2: ArrayLike, exact1: ArrayLike,
           exact2: ArrayLike) -> tuple[NDArray[np.float64], ...]:
    k1, n1, k2, n2 = (np.asarray(v, dtype=np.float64) for v in (k1, n1, k2, n2))
    return k1, n1, k2, n2, np.asarray(exact1, dtype=bool), np.asarray(exact2, dtype=bool)


def wilson_mover_line(x: ArrayLike, k1: ArrayLike, n1: ArrayLike, k2: ArrayLike, n2: ArrayLike,
                      level: float | ArrayLike, *, exact1: ArrayLike = False,
                      exact2: ArrayLike = False
                      ) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
    """Wilson limits of ``p1 = k1 / n1`` and ``p2 = k2 / n2`` combined by MOVER
    (:func:`mover_line`); ``exact1``/``exact2`` mark rates known exactly (zero width)."""
    k1, n1, k2, n2, exact1, exact2 = _rates(k1, n1, k2, n2, exact1, exact2)
    p1, p2 = k1 / n1, k2 / n2
    l1, u1 = wilson(k1, n1, level)
    l2, u2 = wilson(k2, n2, level)
    return mover_line(x, p1, np.where(exact1, p1, l1), np.where(exact1, p1, u1),
                      p2, np.where(exact2, p2, l2), np.where(exact2, p2, u2))


def cp_mover_line(x: ArrayLike, k1: ArrayLike, n1: ArrayLike, k2: ArrayLike, n2: ArrayLike,
                  level: float | ArrayLike, *, exact1: ArrayLike = False, exact2: ArrayLike = False
                  ) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
    """Limits of ``theta = x p1 + (1 - x) p2`` from independent counts ``k1 ~ Bin(n1, p1)`` and
    ``k2 ~ Bin(n2, p2)``: the default band of a cost line (``p1 = FNR``, ``p2 = FPR``).

    Each rate's Clopper-Pearson limits are combined by MOVER (:func:`mover_line`); the lower limit
    is then taken no higher than :func:`gamma_lower` of ``theta_hat`` with the binomial variance
    ``x^2 p1 (1 - p1) / n1 + (1 - x)^2 p2 (1 - p2) / n2``. Why: with a few errors in *both*
    classes (say one FN and one FP of similar weight) MOVER's sum in quadrature puts the lower
    limit above the exact one for their total (its pointwise coverage fell to 0.925 at a nominal
    0.95), while the gamma limit of a weighted count is exact for equal weights.
    ``exact1``/``exact2`` mark rates known exactly (a trivial threshold): zero width, no variance.
    """
    x = np.asarray(x, dtype=np.float64)
    k1, n1, k2, n2, exact1, exact2 = _rates(k1, n1, k2, n2, exact1, exact2)
    p1, p2 = k1 / n1, k2 / n2
    l1, u1 = clopper_pearson(k1, n1, level)
    l2, u2 = clopper_pearson(k2, n2, level)
    l1, u1 = np.where(exact1, p1, l1), np.where(exact1, p1, u1)
    l2, u2 = np.where(exact2, p2, l2), np.where(exact2, p2, u2)
    low, high = mover_line(x, p1, l1, u1, p2, l2, u2)
    w = 1.0 - x
    var = (np.where(exact1, 0.0, x * x * p1 * (1.0 - p1) / n1)
           + np.where(exact2, 0.0, w * w * p2 * (1.0 - p2) / n2))
    return np.minimum(low, gamma_lower(x * p1 + w * p2, var, level)), high


def newcombe_paired(n11: ArrayLike, n10: ArrayLike, n01: ArrayLike, n00: ArrayLike,
                    level: float | ArrayLike, *, exact_a: ArrayLike = False,
                    exact_b: ArrayLike = False
                    ) -> tuple[NDArray[np.float64], NDArray[np.float64], NDArray[np.float64]]:
    """Newcombe's method-10 interval for ``p_a - p_b`` on paired binary outcomes.

    Parameters
    ----------
    n11, n10, n01, n00 : array-like of int
        The paired 2x2 table: both "yes", only a, only b, neither; ``p_a = (n11 + n10) / n``,
        ``p_b = (n11 + n01) / n``.
    level : float
        Two-sided level of the interval.
    exact_a, exact_b : array-like of bool
        Where a side's proportion is known exactly (a trivial classifier that flags nothing or
        everything): its Wilson limits collapse to the estimate.

    Returns
    -------
    (estimate, low, high)
        ``L = d - sqrt((p_a - l_a)^2 - 2 phi (p_a - l_a)(u_b - p_b) + (u_b - p_b)^2)`` and
        ``U = d + sqrt((u_a - p_a)^2 - 2 phi (u_a - p_a)(p_b - l_b) + (p_b - l_b)^2)`` with the
        Wilson limits ``l``, ``u`` of each proportion and ``phi`` the table's correlation (0 when
        a margin is empty).
    """
    n11, n10, n01, n00 = (np.asarray(v, dtype=np.float64) for v in (n11, n10, n01, n00))
    n = n11 + n10 + n01 + n00
    ka, kb = n11 + n10, n11 + n01
    pa, pb = ka / n, kb / n
    la, ua = wilson(ka, n, level)
    lb, ub = wilson(kb, n, level)
    exact_a = np.asarray(exact_a, dtype=bool)
    exact_b = np.asarray(exact_b, dtype=bool)
    la, ua = np.where(exact_a, pa, la), np.where(exact_a, pa, ua)
    lb, ub = np.where(exact_b, pb, lb), np.where(exact_b, pb, ub)
    denom = (n11 + n10) * (n01 + n00) * (n11 + n01) * (n10 + n00)
    with np.errstate(invalid="ignore", divide="ignore"):
        phi = np.where(denom > 0, (n11 * n00 - n10 * n01) / np.sqrt(denom), 0.0)
    d = pa - pb
    da, ea = pa - la, ua - pa
    db, eb = pb - lb, ub - pb
    low = d - np.sqrt(np.maximum(da * da - 2.0 * phi * da * eb + eb * eb, 0.0))
    high = d + np.sqrt(np.maximum(ea * ea - 2.0 * phi * ea * db + db * db, 0.0))
    return d, low, high


def discordant_mover(n11: ArrayLike, n10: ArrayLike, n01: ArrayLike, n00: ArrayLike,
                     level: float | ArrayLike, *, exact_a: ArrayLike = False,
                     exact_b: ArrayLike = False
                     ) -> tuple[NDArray[np.float64], NDArray[np.float64], NDArray[np.float64]]:
    """MOVER interval for ``p_a - p_b = (n10 - n01) / n`` on paired binary outcomes, from the two
    discordant cells.

    ``q10 = n10 / n`` and ``q01 = n01 / n`` are multinomial proportions, each binomial on its own:
    each gets its Clopper-Pearson limits, and MOVER for the difference of correlated estimates
    (Zou & Donner) combines them with their multinomial correlation
    ``r = -sqrt(q10 q01 / ((1 - q10)(1 - q01)))`` (0 when a cell is empty or full):
    ``L = d - sqrt((q10 - l10)^2 + (u01 - q01)^2 - 2 r (q10 - l10)(u01 - q01))``,
    ``U = d + sqrt((u10 - q10)^2 + (q01 - l01)^2 - 2 r (u10 - q10)(q01 - l01))``.
    With no discordant pair it is still an interval around 0 (an empty cell has a
    Clopper-Pearson upper limit), where :func:`newcombe_paired`'s width is only the asymmetry of
    the two margins' Wilson intervals (none at all when both proportions are 1/2): that, and the
    nested errors of one score at two thresholds, are where Newcombe's method under-covers.

    Parameters and returns as :func:`newcombe_paired`. Where one side's proportion is known
    exactly (a trivial classifier), the difference is that constant minus the other side's
    Clopper-Pearson interval (an empty or full cell of a trivial classifier is not random).
    """
    n11, n10, n01, n00 = (np.asarray(v, dtype=np.float64) for v in (n11, n10, n01, n00))
    n = n11 + n10 + n01 + n00
    q10, q01 = n10 / n, n01 / n
    d = q10 - q01
    l10, u10 = clopper_pearson(n10, n, level)
    l01, u01 = clopper_pearson(n01, n, level)
    with np.errstate(invalid="ignore", divide="ignore"):
        r = np.where((n10 > 0) & (n01 > 0) & (n10 < n) & (n01 < n),
                     -np.sqrt(q10 * q01 / ((1.0 - q10) * (1.0 - q01))), 0.0)
    da, db = q10 - l10, u01 - q01
    ua, ub = u10 - q10, q01 - l01
    low = d - np.sqrt(np.maximum(da * da + db * db - 2.0 * r * da * db, 0.0))
    high = d + np.sqrt(np.maximum(ua * ua + ub * ub - 2.0 * r * ua * ub, 0.0))
    exact_a = np.asarray(exact_a, dtype=bool)
    exact_b = np.asarray(exact_b, dtype=bool)
    if exact_a.any() or exact_b.any():
        pa, pb = (n11 + n10) / n, (n11 + n01) / n
        la, ua_ = clopper_pearson(n11 + n10, n, level)
        lb, ub_ = clopper_pearson(n11 + n01, n, level)
        la, ua_ = np.where(exact_a, pa, la), np.where(exact_a, pa, ua_)
        lb, ub_ = np.where(exact_b, pb, lb), np.where(exact_b, pb, ub_)
        one_known = exact_a | exact_b
        low = np.where(one_known, la - ub_, low)
        high = np.where(one_known, ua_ - lb, high)
    return d, low, high
