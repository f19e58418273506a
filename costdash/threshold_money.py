"""Money against the threshold of one classifier, and the top-fraction (decile) table.

Cost space shows the best each classifier can do at every PC(+); a practitioner who has settled on
one model asks the other question: at *these* conditions, what does every threshold of this
classifier cost (Weka's cost/benefit threshold curve, the objective-versus-threshold view of
scikit-learn's ``TunedThresholdClassifierCV``), and what do I get when I act on the top k % of
scores (a cumulative-precision or lift table)?

Both are read off the classifier's exact ROC curve (:func:`costdash.roc.roc_of`): one point per
distinct score, so ties are never split and score counts give what their rows give.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
from numpy.typing import ArrayLike, NDArray

from costdash.conditions import OperatingCondition
from costdash.dataset import CountedClassifier, ScoredClassifier
from costdash.errors import ParameterError
from costdash.roc import RocCurve, roc_of

__all__ = ["DECILES", "CostByThreshold", "TopFractionTable", "cost_by_threshold",
           "top_fraction_table"]

ClassifierLike = ScoredClassifier | CountedClassifier | RocCurve

DECILES = tuple(k / 10 for k in range(1, 11))
"""The fractions of :func:`top_fraction_table` unless others are asked for."""


def _curve(classifier: ClassifierLike) -> RocCurve:
    return classifier if isinstance(classifier, RocCurve) else roc_of(classifier)


@dataclass(frozen=True, eq=False)
class CostByThreshold:
    """Expected cost of every threshold of one classifier under one set of conditions.

    Attributes
    ----------
    classifier : str
    condition : OperatingCondition
    threshold : ndarray of float64, shape (m,)
        Flag a case when its score >= threshold; the first entry is NaN: flag nothing.
    fpr, tpr : ndarray of float64, shape (m,)
        The ROC point of each threshold.
    normalized_cost : ndarray of float64, shape (m,)
        Normalized expected cost (the y of cost space at the conditions' PC(+)).
    expected_cost : ndarray of float64, shape (m,)
        Expected cost per case in the costs' units, the constant part of correct decisions
        included (:meth:`OperatingCondition.expected_cost`).
    best : int
        Index of the cheapest threshold; of several equally cheap ones the one flagging fewest
        cases (the first met walking down from flag-nothing).
    """

    classifier: str
    condition: OperatingCondition
    threshold: NDArray[np.float64]
    fpr: NDArray[np.float64]
    tpr: NDArray[np.float64]
    normalized_cost: NDArray[np.float64]
    expected_cost: NDArray[np.float64]
    best: int

    @property
    def best_threshold(self) -> float | None:
        """The cheapest threshold (None when flagging nothing is cheapest)."""
        value = float(self.threshold[self.best])
        return None if np.isnan(value) else value

    @property
    def best_expected_cost(self) -> float:
        return float(self.expected_cost[self.best])

    def at(self, threshold: float) -> int:
        """Index of the point that flags ``score >= threshold``."""
        index = np.searchsorted(-self.threshold[1:], -float(threshold), side="right")
        return int(index)


def cost_by_threshold(classifier: ClassifierLike,
                      condition: OperatingCondition) -> CostByThreshold:
    """The expected cost of each threshold of ``classifier`` under ``condition``.

    Parameters
    ----------
    classifier : ScoredClassifier, CountedClassifier or RocCurve
        One classifier of a data set, or its ROC curve.
    condition : OperatingCondition
        p(+) and the costs (those of correct decisions included).

    Returns
    -------
    CostByThreshold
        Its cheapest point costs what :func:`costdash.analyze` chooses for this classifier alone:
        a linear cost is smallest at a vertex of the convex hull.

    Examples
    --------
    >>> import numpy as np
    >>> from costdash.roc import roc_curve
    >>> roc = roc_curve(np.array([0, 0, 1, 1]), np.array([0.1, 0.6, 0.4, 0.9]))
    >>> curve = cost_by_threshold(roc, OperatingCondition(p_pos=0.5, cost_fn=1, cost_fp=1))
    >>> curve.best_threshold, float(curve.best_expected_cost)
    (0.9, 0.25)
    """
    roc = _curve(classifier)
    fpr, tpr = roc.fpr, roc.tpr
    normalized = (1.0 - tpr) * condition.pc + fpr * condition.one_minus_pc
    money = normalized * condition.cost_scale + condition.constant_cost
    return CostByThreshold(classifier=roc.name, condition=condition,
                           threshold=roc.threshold.astype(np.float64), fpr=fpr, tpr=tpr,
                           normalized_cost=normalized, expected_cost=money,
                           best=int(np.argmin(normalized)))


@dataclass(frozen=True, eq=False)
class TopFractionTable:
    """What acting on the highest scores gives, fraction by fraction (a decile table).

    Row ``k`` flags every case whose score is at least ``threshold[k]``: the most cases that do
    not exceed ``fraction[k]`` of all cases without splitting a tie, so ``flagged`` may fall
    short of the fraction where many cases share a score (and is 0 when the top score alone
    is more than that fraction).

    Attributes
    ----------
    classifier : str
    fraction : ndarray of float64, shape (k,)
        The fractions asked for (0 < f <= 1).
    threshold : ndarray of float64, shape (k,)
        Score cutoff of each row; NaN where nothing is flagged.
    flagged, positives : ndarray of int64, shape (k,)
        Cases flagged, and positives among them (positives captured).
    n, n_pos : int
        Cases and positives in all.
    expected_cost : ndarray of float64, shape (k,) or None
        Expected cost per case of the cutoff under the conditions given (None without).
    """

    classifier: str
    fraction: NDArray[np.float64]
    threshold: NDArray[np.float64]
    flagged: NDArray[np.int64]
    positives: NDArray[np.int64]
    n: int
    n_pos: int
    expected_cost: NDArray[np.float64] | None = None

    @property
    def fraction_flagged(self) -> NDArray[np.float64]:
        return self.flagged / self.n

    @property
    def recall(self) -> NDArray[np.float64]:
        """Share of all positives captured."""
        return self.positives / self.n_pos

    @property
    def precision(self) -> NDArray[np.float64]:
        """Cumulative precision: positives among the flagged cases (NaN where none is)."""
        with np.errstate(invalid="ignore", divide="ignore"):
            return np.where(self.flagged > 0, self.positives / np.maximum(self.flagged, 1),
                            np.nan)

    @property
    def lift(self) -> NDArray[np.float64]:
        """Cumulative precision over the prevalence: how many times more positives the flagged
        cases hold than as many cases picked at random."""
        return self.precision / (self.n_pos / self.n)

    def row_for_capacity(self, capacity: float) -> int:
        """Index of the row a capacity of ``capacity`` (a fraction of the cases that can be
        acted on) allows: the last whose flagged share does not exceed it; -1 when none."""
        return int(np.searchsorted(self.fraction_flagged, capacity, side="right")) - 1


def top_fraction_table(classifier: ClassifierLike, fractions: Sequence[float] | ArrayLike = DECILES,
                       *, condition: OperatingCondition | None = None) -> TopFractionTable:
    """Cumulative precision, lift, positives captured and cost of flagging the top scores.

    Parameters
    ----------
    classifier : ScoredClassifier, CountedClassifier or RocCurve
    fractions : sequence of float
        Each in (0, 1], increasing; deciles by default.
    condition : OperatingCondition, optional
        When given, each row's expected cost per case under it.

    Returns
    -------
    TopFractionTable

    Raises
    ------
    ParameterError
        A fraction outside (0, 1] or the fractions not increasing.
    """
    wanted = np.asarray(fractions, dtype=np.float64).ravel()
    if wanted.size == 0 or not np.all((wanted > 0) & (wanted <= 1)) \
            or np.any(np.diff(wanted) <= 0):
        raise ParameterError("fractions must be increasing numbers in (0, 1], e.g. 0.1, 0.2, "
                             f"..., 1; got {wanted.tolist()}")
    roc = _curve(classifier)
    n = roc.n_pos + roc.n_neg
    flagged_at = (roc.tp + roc.fp).astype(np.int64)
    # The exact case count a fraction allows: integer arithmetic on the rounded-down product,
    # with a tolerance so 0.3 * 10 (2.9999999999999996 in floats) allows 3 cases.
    allowed = np.floor(wanted * n + 1e-9 * n).astype(np.int64)
    row = np.searchsorted(flagged_at, allowed, side="right") - 1
    cost = None
    if condition is not None:
        cost = cost_by_threshold(roc, condition).expected_cost[row]
    return TopFractionTable(classifier=roc.name, fraction=wanted,
                            threshold=roc.threshold[row].astype(np.float64),
                            flagged=flagged_at[row], positives=roc.tp[row].astype(np.int64),
                            n=int(n), n_pos=int(roc.n_pos), expected_cost=cost)
