"""Calibrate, then choose the threshold: what reading scores as probabilities costs before and
after a calibration (issue 28, item 6).

Scores that are probabilities at the data's prevalence π are thresholded by the Bayes rule: flag
a case when its posterior odds exceed the cost-and-prior ratio, i.e. when its score is at least
the threshold probability τ with odds(τ) = (1 − x)/x · π/(1 − π) at the conditions' PC(+) = x
(:func:`costdash.choice_curves.cost_proportion_from_pc`). That is the threshold a practitioner
who trusts the scores would pick without looking at any curve. Its cost against the best
threshold of the same scores (chosen with hindsight on the ROC curve) is what a calibration can
win back: the scores as they are, then each calibration's cross-fitted scores
(:func:`costdash.calibration.calibrate_classifier`), each thresholded at τ.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

import numpy as np

from costdash.choice_curves import cost_proportion_from_pc
from costdash.conditions import OperatingCondition
from costdash.errors import ParameterError
from costdash.roc import RocCurve

__all__ = ["CalibratedChoice", "ChoiceRow", "choose_after_calibration"]


@dataclass(frozen=True)
class ChoiceRow:
    """One way of choosing the threshold and what it costs.

    Attributes
    ----------
    method : str
        ``"scores"`` (as they are, at τ), a calibration (``"platt"``, ``"isotonic"``, at τ) or
        ``"best"`` (the scores' cheapest threshold, with hindsight).
    threshold : float or None
        Flag score >= it (a probability for the rows at τ); None: flag nothing.
    fpr, tpr : float
        The ROC point it reaches (NaN when refused).
    normalized_cost, expected_cost : float
        Its cost at the conditions: normalized, and per case in the costs' units (NaN when
        refused).
    refused : str or None
        Why the row has no numbers (scores not in [0, 1], a calibration that cannot be fitted).
    """

    method: str
    threshold: float | None
    fpr: float
    tpr: float
    normalized_cost: float
    expected_cost: float
    refused: str | None = None


@dataclass(frozen=True)
class CalibratedChoice:
    """The threshold probability of the conditions and each way's cost (:class:`ChoiceRow`).

    Attributes
    ----------
    classifier : str
    condition : OperatingCondition
    prevalence : float
        The data's π, at which calibrated scores are probabilities.
    tau : float
        The threshold probability: flag a calibrated score >= tau.
    rows : tuple of ChoiceRow
        ``scores``, then each calibration given, then ``best``.
    """

    classifier: str
    condition: OperatingCondition
    prevalence: float
    tau: float
    rows: tuple[ChoiceRow, ...]

    def row(self, method: str) -> ChoiceRow:
        """The row of ``method``."""
        for r in self.rows:
            if r.method == method:
                return r
        raise KeyError(method)

    @property
    def best(self) -> ChoiceRow:
        return self.row("best")

    def regret(self, method: str) -> float:
        """Expected cost per case of ``method`` above the best threshold's (NaN when refused)."""
        return self.row(method).expected_cost - self.best.expected_cost


def _row(method: str, roc: RocCurve, index: int, condition: OperatingCondition) -> ChoiceRow:
    fpr, tpr = float(roc.fpr[index]), float(roc.tpr[index])
    normalized = condition.normalized_cost(fpr, tpr)
    threshold = float(roc.threshold[index])
    return ChoiceRow(method, None if np.isnan(threshold) else threshold, fpr, tpr, normalized,
                     condition.expected_cost(normalized))


def _refused(method: str, why: str) -> ChoiceRow:
    nan = float("nan")
    return ChoiceRow(method, None, nan, nan, nan, nan, refused=why)


def _probability_problem(roc: RocCurve) -> str | None:
    scores = roc.threshold[1:]
    scores = scores[np.isfinite(scores)]
    if scores.size == 0:
        return "no scores (confusion-matrix counts only)"
    lo, hi = float(scores.min()), float(scores.max())
    if lo < 0.0 or hi > 1.0:
        return (f"scores range over [{lo:.6g}, {hi:.6g}], not within [0, 1]: they are not "
                "probabilities, so there is no threshold probability to read them at")
    return None


def choose_after_calibration(scores: RocCurve, calibrated: Mapping[str, RocCurve | str],
                             condition: OperatingCondition) -> CalibratedChoice:
    """The cost of thresholding at the conditions' threshold probability, before and after each
    calibration, beside the best threshold of the scores.

    Parameters
    ----------
    scores : RocCurve
        The classifier's ROC curve on its scores as they are (its thresholds are the scores).
    calibrated : mapping of str to RocCurve or str
        Per calibration method, the ROC curve of the cross-fitted calibrated scores (its
        thresholds are probabilities, :func:`costdash.calibration.calibrate_classifier`), or the
        reason it could not be fitted.
    condition : OperatingCondition
        p(+) and the costs.

    Returns
    -------
    CalibratedChoice
        π is the data's prevalence (the curve's counts): calibrated scores are probabilities at
        it, and τ moves with p(+) through PC(+).

    Examples
    --------
    >>> import numpy as np
    >>> from costdash.roc import roc_curve
    >>> roc = roc_curve(np.array([0, 0, 1, 1]), np.array([0.1, 0.6, 0.4, 0.9]))
    >>> c = choose_after_calibration(roc, {}, OperatingCondition(p_pos=0.5, cost_fn=1,
    ...                                                           cost_fp=1))
    >>> c.tau, c.row("scores").threshold, c.best.threshold
    (0.5, 0.6, 0.9)
    """
    n = scores.n_pos + scores.n_neg
    if scores.n_pos <= 0 or scores.n_neg <= 0:
        raise ParameterError(f"{scores.name}: calibration needs examples of both classes")
    prevalence = scores.n_pos / n
    tau = float(cost_proportion_from_pc(condition.pc, prevalence))
    rows = []
    why = _probability_problem(scores)
    rows.append(_refused("scores", why) if why else
                _row("scores", scores, int(scores.point_at_threshold(tau)), condition))
    for method, curve in calibrated.items():
        if isinstance(curve, str):
            rows.append(_refused(method, curve))
        else:
            rows.append(_row(method, curve, int(curve.point_at_threshold(tau)), condition))
    normalized = (1.0 - scores.tpr) * condition.pc + scores.fpr * condition.one_minus_pc
    rows.append(_row("best", scores, int(np.argmin(normalized)), condition))
    return CalibratedChoice(classifier=scores.name, condition=condition,
                            prevalence=float(prevalence), tau=tau, rows=tuple(rows))
