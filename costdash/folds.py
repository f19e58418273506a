"""Several folds or runs of one classifier (paper 000 §7, paper 004 §2.2.3; Fawcett 2006).

The recommended average is vertical averaging in cost space: the mean normalized expected cost of
the per-fold envelopes at each PC(+), which is the expected cost of the deployed procedure. The ROC
averages (vertical, threshold) and pooling are computed beside it for comparison: they do not have
that meaning, and the dashboard shows the difference.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray

from costdash.conditions import OperatingCondition
from costdash.costspace import LowerEnvelope, lower_envelope
from costdash.dataset import Dataset, ScoredClassifier
from costdash.errors import ParameterError
from costdash.hull import classifier_hull, optimal_vertex
from costdash.roc import RocCurve, roc_of, score_count_bins


@dataclass(frozen=True, eq=False)
class FoldAverages:
    """Per-fold curves of one classifier and their averages.

    Attributes
    ----------
    fold_labels : tuple of str
    rocs : tuple of RocCurve
        One per fold.
    envelopes : tuple of LowerEnvelope
        Each fold's own lower envelope.
    cost_pc, cost_mean : ndarray
        Vertical average of the envelopes in cost space, exact (breakpoints of all folds merged).
    cost_low, cost_high : ndarray
        Pointwise minimum and maximum across folds at ``cost_pc``.
    roc_fpr, roc_tpr_mean, roc_tpr_std : ndarray
        ROC vertical averaging on a fixed FPR grid.
    threshold_fpr, threshold_tpr : ndarray
        ROC threshold averaging: mean (FPR, TPR) of the folds at common score thresholds.
    pooled : RocCurve
        ROC of all folds' predictions pooled.
    """

    name: str
    fold_labels: tuple[str, ...]
    rocs: tuple[RocCurve, ...]
    envelopes: tuple[LowerEnvelope, ...]
    cost_pc: NDArray[np.float64]
    cost_mean: NDArray[np.float64]
    cost_low: NDArray[np.float64]
    cost_high: NDArray[np.float64]
    roc_fpr: NDArray[np.float64]
    roc_tpr_mean: NDArray[np.float64]
    roc_tpr_std: NDArray[np.float64]
    threshold_values: NDArray[np.float64]
    threshold_fpr: NDArray[np.float64]
    threshold_tpr: NDArray[np.float64]
    pooled: RocCurve


@dataclass(frozen=True)
class FoldSpread:
    """Spread across folds of the choice made under one set of conditions."""

    thresholds: tuple[float, ...]
    classifiers_optimal: tuple[str, ...]
    normalized_costs: tuple[float, ...]
    threshold_mean: float
    threshold_std: float
    cost_mean: float
    cost_std: float
    cost_min: float
    cost_max: float


def _roc_upper_interp(roc: RocCurve, fpr_grid: NDArray[np.float64]) -> NDArray[np.float64]:
    """TPR of the ROC polyline at each FPR, taking the highest TPR where the curve is vertical."""
    fpr, tpr = roc.fpr, roc.tpr
    # Fawcett (2006) alg. 3: at an FPR of the curve, the highest TPR there; between two, the line
    # from the highest point at the left FPR to the lowest (first) point at the right one. (The
    # curve is a staircase, so joining the highest points would cut the corners above it.)
    last_of_run = np.ones(fpr.size, dtype=bool)
    last_of_run[:-1] = fpr[1:] != fpr[:-1]
    first_of_run = np.ones(fpr.size, dtype=bool)
    first_of_run[1:] = last_of_run[:-1]
    x, top, bottom = fpr[last_of_run], tpr[last_of_run], tpr[first_of_run]
    k = np.clip(np.searchsorted(x, fpr_grid, side="right") - 1, 0, x.size - 1)
    nxt = np.minimum(k + 1, x.size - 1)
    span = x[nxt] - x[k]
    w = np.divide(fpr_grid - x[k], span, out=np.zeros_like(span), where=span > 0)
    return np.where(x[k] == fpr_grid, top[k], top[k] + w * (bottom[nxt] - top[k]))


def fold_averages(classifier: ScoredClassifier, fold_labels: tuple[str, ...], *,
                  roc_points: int = 101, thresholds: int = 101) -> FoldAverages:
    """Per-fold ROC curves and envelopes of ``classifier`` and the four kinds of average."""
    if classifier.fold is None or not fold_labels:
        raise ParameterError(f"classifier {classifier.name!r} has no fold column to average over")
    masks = [classifier.fold == k for k in range(len(fold_labels))]
    rocs = tuple(roc_of(classifier, m) for m in masks)
    envelopes = tuple(lower_envelope(classifier_hull(r)) for r in rocs)

    cost_pc = np.unique(np.concatenate([e.pc for e in envelopes]))
    per_fold_cost = np.vstack([e(cost_pc) for e in envelopes])

    roc_fpr = np.linspace(0.0, 1.0, roc_points)
    per_fold_tpr = np.vstack([_roc_upper_interp(r, roc_fpr) for r in rocs])

    # Threshold averaging samples thresholds evenly by rank among all scores (Fawcett 2006, alg. 5).
    threshold_values = _scores_at_ranks(classifier, thresholds)
    point = np.vstack([r.point_at_threshold(threshold_values) for r in rocs])
    threshold_fpr = np.mean([r.fpr[p] for r, p in zip(rocs, point)], axis=0)
    threshold_tpr = np.mean([r.tpr[p] for r, p in zip(rocs, point)], axis=0)

    return FoldAverages(
        name=classifier.name, fold_labels=fold_labels, rocs=rocs, envelopes=envelopes,
        cost_pc=cost_pc, cost_mean=per_fold_cost.mean(axis=0), cost_low=per_fold_cost.min(axis=0),
        cost_high=per_fold_cost.max(axis=0), roc_fpr=roc_fpr,
        roc_tpr_mean=per_fold_tpr.mean(axis=0), roc_tpr_std=per_fold_tpr.std(axis=0),
        threshold_values=threshold_values, threshold_fpr=threshold_fpr,
        threshold_tpr=threshold_tpr,
        pooled=roc_of(classifier))


def _scores_at_ranks(classifier: ScoredClassifier, thresholds: int) -> NDArray[np.float64]:
    """``thresholds`` scores evenly spread by rank among all examples' scores, decreasing."""
    if classifier.count is None:
        sorted_scores = np.sort(classifier.score)[::-1]
        ranks = np.linspace(0, sorted_scores.size - 1, thresholds).round().astype(np.int64)
        return sorted_scores[ranks]
    # The same ranks among the examples the counts stand for: the score at rank r is the first
    # distinct score (decreasing) whose cumulative count passes r.
    score, n_pos, n_neg = score_count_bins(*classifier.class_counts())
    examples_through = np.cumsum(n_pos + n_neg)
    ranks = np.linspace(0, int(examples_through[-1]) - 1, thresholds).round().astype(np.int64)
    return score[np.searchsorted(examples_through, ranks, side="right")]


def fold_spread(averages: FoldAverages, condition: OperatingCondition) -> FoldSpread:
    """How the chosen threshold and its cost vary across folds under ``condition``."""
    chosen = [optimal_vertex(e.hull, condition) for e in averages.envelopes]
    thresholds = np.array([c.threshold for c in chosen])
    costs = np.array([condition.normalized_cost(c.fpr, c.tpr) for c in chosen])
    finite = thresholds[np.isfinite(thresholds)]
    return FoldSpread(
        thresholds=tuple(float(t) for t in thresholds),
        classifiers_optimal=tuple(c.classifier for c in chosen),
        normalized_costs=tuple(float(c) for c in costs),
        threshold_mean=float(finite.mean()) if finite.size else float("nan"),
        threshold_std=float(finite.std()) if finite.size else float("nan"),
        cost_mean=float(costs.mean()), cost_std=float(costs.std()),
        cost_min=float(costs.min()), cost_max=float(costs.max()))


def dataset_fold_averages(dataset: Dataset, name: str) -> FoldAverages:
    """:func:`fold_averages` for the named scored classifier of a loaded data set."""
    classifier = dataset.classifier(name)
    if not isinstance(classifier, ScoredClassifier):
        raise ParameterError(f"{name!r} has confusion-matrix counts only; folds need scores")
    return fold_averages(classifier, dataset.fold_labels)
