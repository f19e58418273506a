"""Band edges of every method of :mod:`costdash.bands`, from replicates or from counts (also
used by the results' ``at_level``): the percentile cut of replicate curves, the closed-form
bands of cost lines (Clopper-Pearson-MOVER, the default; Wilson-MOVER; the Clopper-Pearson
rectangle) and of paired differences (discordant-cell MOVER, the default; Newcombe-MOVER), and the
double bootstrap's calibrated basic interval.
Private: a part of :mod:`costdash.bands`, whose ``__init__`` holds the public names.
"""

from __future__ import annotations

import math

import numpy as np
from numpy.typing import NDArray

from costdash.bands.inputs import MAX_REPLICATES
from costdash._intervals import (
    clopper_pearson,
    cp_mover_line,
    discordant_mover,
    mover_line,
    newcombe_paired,
    wilson_mover_line,
)
from costdash._resampling import check_level, check_replicates, order_statistic_ranks


def _band_edges(curves: NDArray, level: float) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
    """Pointwise lower and upper band edges of replicate curves of shape (B, G)."""
    b = curves.shape[0]
    lb, ub = order_statistic_ranks(check_level(level), check_replicates(b, MAX_REPLICATES))
    part = np.partition(curves, sorted({lb - 1, ub - 1}), axis=0)
    return part[lb - 1].astype(np.float64), part[ub - 1].astype(np.float64)


def _exact_rates(thresholds: NDArray[np.float64] | None, size: int) -> NDArray[np.bool_]:
    """True where the threshold is a trivial classifier (+-inf): its error rates are known."""
    if thresholds is None:
        return np.zeros(size, dtype=bool)
    return ~np.isfinite(np.asarray(thresholds, dtype=np.float64))


def _bonferroni_terms(keys: NDArray[np.float64] | None, exact: NDArray[np.bool_]) -> int:
    """Number of distinct estimated lines on the grid (for a simultaneous band over all of them)."""
    if keys is None:
        return 1
    k = np.asarray(keys, dtype=np.float64)
    k = k[..., ~exact] if k.ndim == 2 else k[~exact]
    if k.size == 0:
        return 1
    return int(np.unique(k.T if k.ndim == 2 else k, axis=0).shape[0])


def _line_edges(pc: NDArray[np.float64], errors: NDArray[np.int64], n_pos: int, n_neg: int,
                level: float, simultaneous: bool, thresholds: NDArray[np.float64] | None,
                method: str = "clopper-pearson-mover"
                ) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
    """Closed-form band of cost lines ``FNR x + FPR (1 - x)`` from their error counts (2, G).

    Pointwise: ``"clopper-pearson-mover"`` (:func:`~costdash._intervals.cp_mover_line`) or
    ``"wilson-mover"`` (Wilson limits of each rate combined by MOVER). Simultaneous: each rate's
    Clopper-Pearson interval at level ``sqrt(1 - alpha / K)`` for the ``K`` distinct thresholds on
    the grid, joined by lines (the rectangle; ``K = 1`` for one fixed threshold). Rates of trivial
    thresholds (+-inf) are known exactly.
    """
    fn, fp = np.asarray(errors[0], np.float64), np.asarray(errors[1], np.float64)
    fnr, fpr = fn / n_pos, fp / n_neg
    exact = _exact_rates(thresholds, pc.size)
    if not simultaneous:
        line = wilson_mover_line if method == "wilson-mover" else cp_mover_line
        return line(pc, fn, n_pos, fp, n_neg, level, exact1=exact, exact2=exact)
    k = _bonferroni_terms(thresholds, exact)
    each = math.sqrt(1.0 - (1.0 - level) / k)
    l1, u1 = clopper_pearson(fn, n_pos, each)
    l2, u2 = clopper_pearson(fp, n_neg, each)
    l1, u1 = np.where(exact, fnr, l1), np.where(exact, fnr, u1)
    l2, u2 = np.where(exact, fpr, l2), np.where(exact, fpr, u2)
    return pc * l1 + (1.0 - pc) * l2, pc * u1 + (1.0 - pc) * u2


PAIRED_INTERVALS = {"discordant-mover": discordant_mover, "newcombe-mover": newcombe_paired}
"""Interval of one class's paired difference ``p_a - p_b`` of each paired method."""


def _paired_edges(pc: NDArray[np.float64], tables: NDArray[np.int64], level: float,
                  simultaneous: bool, thresholds: NDArray[np.float64] | None,
                  method: str = "discordant-mover"
                  ) -> tuple[NDArray[np.float64], NDArray[np.float64], NDArray[np.float64]]:
    """Closed-form band of ``cost(a) - cost(b)`` from paired tables (2 classes, 4 cells, G).

    Each class gives a paired difference of proportions (FNR_a - FNR_b on the positives,
    FPR_a - FPR_b on the negatives) with the method's interval (:data:`PAIRED_INTERVALS`:
    MOVER on the discordant cells with Clopper-Pearson limits, the default, or Newcombe's); the
    two are independent (class totals fixed) and are combined by MOVER (pointwise) or as a
    rectangle at ``sqrt(1 - alpha / K)`` each (simultaneous). Returns ``(diff, low, high)``.
    """
    interval = PAIRED_INTERVALS[method]
    if thresholds is None:
        exact_a = exact_b = np.zeros(pc.size, dtype=bool)
    else:
        exact_a = _exact_rates(thresholds[0], pc.size)
        exact_b = _exact_rates(thresholds[1], pc.size)
    if simultaneous:
        k = _bonferroni_terms(thresholds, exact_a & exact_b)
        each: float = math.sqrt(1.0 - (1.0 - level) / k)
    else:
        each = level
    pos, neg = tables[0], tables[1]
    # On the positives the classifiers' *flag* rates are TPRs: FNR_a - FNR_b = -(TPR_a - TPR_b).
    d_pos, lo_pos, hi_pos = interval(*pos, each, exact_a=exact_a, exact_b=exact_b)
    d1, l1, u1 = -d_pos, -hi_pos, -lo_pos
    d2, l2, u2 = interval(*neg, each, exact_a=exact_a, exact_b=exact_b)
    diff = pc * d1 + (1.0 - pc) * d2
    if simultaneous:
        return diff, pc * l1 + (1.0 - pc) * l2, pc * u1 + (1.0 - pc) * u2
    low, high = mover_line(pc, d1, l1, u1, d2, l2, u2)
    return diff, low, high


def _paired_costs(tables: NDArray[np.int64], pc: NDArray[np.float64]
                  ) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
    """Each classifier's cost line from the paired tables (FNR = 1 - (n11 + n10) / P, etc.)."""
    n_pos, n_neg = int(tables[0, :, 0].sum()), int(tables[1, :, 0].sum())
    fnr_a = 1.0 - (tables[0, 0] + tables[0, 1]) / n_pos
    fnr_b = 1.0 - (tables[0, 0] + tables[0, 2]) / n_pos
    fpr_a = (tables[1, 0] + tables[1, 1]) / n_neg
    fpr_b = (tables[1, 0] + tables[1, 2]) / n_neg
    return fnr_a * pc + fpr_a * (1.0 - pc), fnr_b * pc + fpr_b * (1.0 - pc)


def _column_quantiles(ordered: NDArray[np.float64], p: NDArray[np.float64]) -> NDArray[np.float64]:
    """Per-column quantiles (linear interpolation) of column-sorted values at per-column ``p``."""
    b = ordered.shape[0]
    pos = np.clip(p, 0.0, 1.0) * (b - 1)
    below = np.floor(pos).astype(np.int64)
    above = np.minimum(below + 1, b - 1)
    frac = pos - below
    cols = np.arange(ordered.shape[1])
    return ordered[below, cols] * (1.0 - frac) + ordered[above, cols] * frac


def _double_edges(pc: NDArray[np.float64], cost: NDArray[np.float64], curves: NDArray[np.float64],
                  calibration: NDArray[np.float64], level: float
                  ) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
    """Double-bootstrap calibrated basic band.

    ``calibration[b]`` is, at each PC(+), the position ``r_b`` of ``2 theta*_b - theta_hat`` in the
    inner replicates of outer replicate ``b``: the inner basic interval at outer percentiles
    ``[beta, 1 - beta']`` covers ``theta_hat`` iff ``beta <= r_b <= 1 - beta'``. Choosing the
    percentiles as the ``alpha / 2`` and ``1 - alpha / 2`` quantiles of the ``r_b`` makes each tail
    cover in the inner world; the band is the outer basic interval at those percentiles,
    ``[2 theta_hat - q*(Q_r(1 - alpha/2)), 2 theta_hat - q*(Q_r(alpha/2))]``, clipped to the
    possible costs ``[0, min(PC, 1 - PC)]``.
    """
    alpha = 1.0 - level
    r_sorted = np.sort(calibration, axis=0)
    g = pc.size
    p_hi = _column_quantiles(r_sorted, np.full(g, 1.0 - alpha / 2.0))
    p_lo = _column_quantiles(r_sorted, np.full(g, alpha / 2.0))
    ordered = np.sort(curves, axis=0)
    low = 2.0 * cost - _column_quantiles(ordered, p_hi)
    high = 2.0 * cost - _column_quantiles(ordered, p_lo)
    top = np.minimum(pc, 1.0 - pc)
    return np.clip(low, 0.0, top), np.clip(high, 0.0, top)
