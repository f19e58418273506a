"""Closed-form intervals for the error rates of a fixed threshold and the cost lines built on them.

Notation (``docs/bands.md``, ``/work/shared/notes/band-methods.md``): a classifier at one threshold
has ``FN ~ Bin(P, FNR)`` and ``FP ~ Bin(N, FPR)`` with the class totals fixed, and its normalized
cost line is ``NE(x) = FNR x + FPR (1 - x)`` for ``x = PC(+)``.

* :func:`wilson` - Wilson score interval of one proportion (never zero width at 0 or n).
* :func:`clopper_pearson` - the exact (Clopper-Pearson) interval of one proportion.
* :func:`mover_line` - MOVER (Zou & Donner) limits of ``a p1 + b p2`` (a, b >= 0) from the two
  rates' limits: the pointwise Wilson-MOVER band of a cost line.
* :func:`newcombe_paired` - Newcombe's (1998, method 10) interval for the difference of two
  proportions measured on the same units (paired), from Wilson limits and the phi correlation.

Everything is vectorised over numpy arrays and pure (no randomness).
"""

from __future__ import annotations

import numpy as np
from numpy.typing import ArrayLike, NDArray
from scipy.special import betaincinv, ndtri

__all__ = ["clopper_pearson", "mover_line", "newcombe_paired", "wilson", "z_value"]


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
