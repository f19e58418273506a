"""Thresholds selected from data, and the error counts of fixed thresholds on other rows.

The honest question behind a band on a scoring classifier's *tuned* cost curve is "what will the
thresholds I choose from these data cost on new data?" (``docs/bands.md``). It is answered by
choosing, for every PC(+) value, the optimal threshold on a *selection* part of the rows (a
stratified half, or a validation set) and counting that fixed threshold's errors on rows it was
not chosen on. The helpers here do the choosing and the counting; the intervals are in
:mod:`costdash._intervals`.

Thresholds follow the rest of costdash: predict positive iff ``score >= threshold``; ``+inf`` is
the all-negative classifier (flag nothing), ``-inf`` the all-positive one (flag everything).
"""

from __future__ import annotations

import numpy as np
from numpy.typing import NDArray

from costdash.errors import ParameterError
from costdash.hull import classifier_hull
from costdash.roc import RocCurve, roc_curve

__all__ = ["flagged_counts", "paired_tables", "select_thresholds", "stratified_half",
           "stratified_half_counts", "thresholds_of_roc"]


def stratified_half(y: NDArray[np.bool_], rng: np.random.Generator, what: str
                    ) -> NDArray[np.bool_]:
    """A random stratified half of the rows: True for the selection part.

    Each class is permuted and its first ``floor(n_c / 2)`` rows go to the selection part, the
    rest (the larger half when ``n_c`` is odd) are held out. Positives are permuted first, then
    negatives, from ``rng``: a seed gives the same split.
    """
    select = np.zeros(y.size, dtype=bool)
    for cls in (True, False):
        rows = np.flatnonzero(y == cls)
        if rows.size < 2:
            raise ParameterError(
                f"{what}: select='split' needs at least 2 {'positive' if cls else 'negative'} "
                f"examples (one for each half); there are {rows.size}")
        chosen = rng.permutation(rows)[: rows.size // 2]
        select[chosen] = True
    return select


def select_thresholds(y: NDArray[np.bool_], score: NDArray[np.float64],
                      pc: NDArray[np.float64]) -> NDArray[np.float64]:
    """The threshold of the optimal ROC-hull vertex of ``(y, score)`` at every PC(+) in ``pc``.

    The vertex minimising ``(1 - TPR) x + FPR (1 - x)`` (the lower envelope's vertex at ``x``),
    ties to the vertex with the smaller FPR (the higher threshold). The all-negative vertex is
    returned as ``+inf`` and the all-positive one as ``-inf``.
    """
    return thresholds_of_roc(roc_curve(y, score), pc)


def thresholds_of_roc(roc: RocCurve, pc: NDArray[np.float64]) -> NDArray[np.float64]:
    """:func:`select_thresholds` of the rows behind ``roc`` (a scoring classifier's curve)."""
    hull = classifier_hull(roc)
    fpr = np.asarray(hull.fpr, dtype=np.float64)
    tpr = np.asarray(hull.tpr, dtype=np.float64)
    thr = np.asarray(hull.threshold, dtype=np.float64).copy()
    trivial = np.isnan(thr)
    thr[trivial & (fpr == 0.0) & (tpr == 0.0)] = np.inf
    thr[trivial & (fpr == 1.0) & (tpr == 1.0)] = -np.inf
    if np.isnan(thr).any():  # pragma: no cover - roc_curve gives every other vertex a score
        raise ParameterError("internal error: a hull vertex without a threshold")
    best = np.empty(pc.size, dtype=np.int64)
    # Chunks keep (vertices x grid) small for hulls with many vertices.
    step = max(1, 2_000_000 // max(1, fpr.size))
    for start in range(0, pc.size, step):
        x = pc[start:start + step]
        cost = (1.0 - tpr)[:, None] * x + fpr[:, None] * (1.0 - x)
        best[start:start + step] = np.argmin(cost, axis=0)
    return thr[best]


def flagged_counts(score: NDArray[np.float64], thresholds: NDArray[np.float64],
                   count: NDArray[np.int64] | None = None) -> NDArray[np.int64]:
    """Number of ``score`` values ``>= t`` for each ``t`` in ``thresholds`` (+inf: 0, -inf: all).

    With ``count``, each score stands for that many examples.
    """
    if count is None:
        ordered = np.sort(score)
        return (ordered.size - np.searchsorted(ordered, thresholds, side="left")).astype(np.int64)
    order = np.argsort(score)
    at_or_above = np.zeros(score.size + 1, dtype=np.int64)
    np.cumsum(count[order][::-1], out=at_or_above[1:])  # examples among the i highest scores
    below = np.searchsorted(score[order], thresholds, side="left")
    return at_or_above[score.size - below]


def stratified_half_counts(y: NDArray[np.bool_], count: NDArray[np.int64],
                           rng: np.random.Generator, what: str) -> NDArray[np.int64]:
    """:func:`stratified_half` of the examples that weighted entries stand for.

    Returns how many of each entry's ``count`` examples go to the selection part: per class, a
    uniformly random ``floor(n_c / 2)`` of its examples (a multivariate hypergeometric draw),
    which is the distribution of the row-level split (not the same draw for the same seed).
    """
    select = np.zeros(y.size, dtype=np.int64)
    for cls in (True, False):
        entries = np.flatnonzero(y == cls)
        total = int(count[entries].sum())
        if total < 2:
            raise ParameterError(
                f"{what}: select='split' needs at least 2 {'positive' if cls else 'negative'} "
                f"examples (one for each half); there are {total}")
        select[entries] = rng.multivariate_hypergeometric(count[entries], total // 2)
    return select


def paired_tables(score_a: NDArray[np.float64], score_b: NDArray[np.float64],
                  thr_a: NDArray[np.float64], thr_b: NDArray[np.float64]) -> NDArray[np.int64]:
    """Paired 2x2 tables (n11, n10, n01, n00) of "flagged by a" and "flagged by b", shape (4, G).

    Column ``g`` counts the rows by whether ``score_a >= thr_a[g]`` and ``score_b >= thr_b[g]``;
    each distinct pair of thresholds is counted once.
    """
    pairs = np.column_stack((thr_a, thr_b))
    distinct, inverse = np.unique(pairs, axis=0, return_inverse=True)
    inverse = np.asarray(inverse).reshape(-1)
    n = score_a.size
    out = np.empty((4, distinct.shape[0]), dtype=np.int64)
    for j, (ta, tb) in enumerate(distinct):
        fa = score_a >= ta
        fb = score_b >= tb
        n11 = int(np.count_nonzero(fa & fb))
        na, nb = int(np.count_nonzero(fa)), int(np.count_nonzero(fb))
        out[:, j] = (n11, na - n11, nb - n11, n - na - nb + n11)
    return out[:, inverse]
