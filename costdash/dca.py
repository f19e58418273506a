"""Decision curves (Vickers & Elkin 2006): net benefit against the threshold probability.

A case is flagged when its score >= pₜ, and

    net benefit(pₜ) = TP/n - FP/n · pₜ/(1 - pₜ);

treat-all flags every case (π - (1 - π)pₜ/(1 - pₜ), π = n₊/n) and treat-none none (0).

Correspondence with cost space. A threshold probability pₜ is the cost ratio
C(+|-)/C(-|+) = pₜ/(1 - pₜ), i.e. the cost proportion c = pₜ. At the data's prevalence π this is

    PC(+) = x(pₜ) = π(1 - pₜ) / (π(1 - pₜ) + (1 - π)pₜ),

and with C(-|+) = 1 the expected cost per case is π - net benefit, so

    net benefit(pₜ) = π - (π(1 - pₜ) + (1 - π)pₜ) / (1 - pₜ) · NE(x(pₜ)),

NE being the normalized expected cost of the flagged set (score >= pₜ) at x(pₜ): a model's
decision curve is its score-driven (Brier) curve, re-scaled; the envelope gives the best net
benefit any threshold of the model reaches (:func:`net_benefit_from_cost`).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
from numpy.typing import ArrayLike, NDArray

from costdash.choice_curves import probability_problem
from costdash.errors import ParameterError
from costdash.roc import RocCurve

__all__ = ["DecisionCurves", "decision_curves", "decision_curves_of_rocs",
           "decision_curves_to_dict", "net_benefit", "net_benefit_from_cost", "net_benefit_of_roc",
           "parse_thresholds", "threshold_grid"]

RESERVED = ("all", "none")
"""Names of the reference strategies (treat-all, treat-none) in the JSON."""


def threshold_grid(start: float = 0.01, stop: float = 0.99, step: float = 0.01
                   ) -> NDArray[np.float64]:
    """Thresholds start, start + step, ... up to ``stop`` (included when on the grid), each in
    [0, 1); computed as start + k·step, rounded to 12 decimals so 0.07 is 0.07."""
    for name, v in (("start", start), ("stop", stop), ("step", step)):
        if not math.isfinite(v):
            raise ParameterError(f"threshold {name} must be a finite number, got {v!r}")
    if step <= 0:
        raise ParameterError(f"threshold step must be positive, got {step!r}")
    if not (0.0 <= start <= stop < 1.0):
        raise ParameterError(f"thresholds must satisfy 0 <= start <= stop < 1, got "
                             f"{start!r}:{stop!r}")
    count = int(math.floor((stop - start) / step + 1e-9)) + 1
    if count > 100_000:
        raise ParameterError(f"{count} thresholds is too many (at most 100000)")
    return np.round(start + step * np.arange(count), 12)


def parse_thresholds(text: str) -> NDArray[np.float64]:
    """``START:STOP:STEP`` (e.g. ``0.01:0.5:0.01``) as :func:`threshold_grid`."""
    parts = text.split(":")
    if len(parts) != 3:
        raise ParameterError(f"thresholds must be START:STOP:STEP, e.g. 0.01:0.99:0.01; got "
                             f"{text!r}")
    try:
        start, stop, step = (float(p) for p in parts)
    except ValueError:
        raise ParameterError(f"thresholds must be three numbers START:STOP:STEP; got "
                             f"{text!r}") from None
    return threshold_grid(start, stop, step)


def _check_thresholds(thresholds: ArrayLike) -> NDArray[np.float64]:
    pt = np.asarray(thresholds, dtype=np.float64)
    if pt.ndim != 1 or pt.size == 0:
        raise ParameterError("thresholds must be a non-empty 1-D array")
    if not np.all((pt >= 0.0) & (pt < 1.0)):
        raise ParameterError("threshold probabilities must lie in [0, 1)")
    return pt


def net_benefit(y_true: ArrayLike, score: ArrayLike, thresholds: ArrayLike) -> NDArray[np.float64]:
    """Net benefit TP/n - FP/n · pₜ/(1 - pₜ) of flagging score >= pₜ, at each threshold pₜ."""
    y = np.asarray(y_true, dtype=bool)
    s = np.asarray(score, dtype=np.float64)
    pt = _check_thresholds(thresholds)
    if y.shape != s.shape or y.ndim != 1 or y.size == 0:
        raise ParameterError("y_true and score must be non-empty 1-D arrays of one length")
    n = y.size
    pos = np.sort(s[y])
    neg = np.sort(s[~y])
    tp = pos.size - np.searchsorted(pos, pt, side="left")  # scores >= pₜ
    fp = neg.size - np.searchsorted(neg, pt, side="left")
    return tp / n - fp / n * (pt / (1.0 - pt))


def net_benefit_of_roc(roc: RocCurve, thresholds: ArrayLike) -> NDArray[np.float64]:
    """:func:`net_benefit` from a classifier's ROC curve (its distinct scores and counts; the
    score-count layout's too)."""
    pt = _check_thresholds(thresholds)
    if np.isnan(roc.threshold[1:]).any():
        raise ParameterError(f"{roc.name or 'classifier'}: decision curves need scores; "
                             f"confusion-matrix counts have none")
    i = roc.point_at_threshold(pt)
    n = roc.n_pos + roc.n_neg
    return roc.tp[i] / n - roc.fp[i] / n * (pt / (1.0 - pt))


def net_benefit_from_cost(pc: ArrayLike, cost: ArrayLike, prevalence: float
                          ) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
    """A cost-space curve (PC(+), normalized cost) as (threshold probability, net benefit).

    pₜ is the cost proportion that gives PC(+) at ``prevalence`` π, and net benefit =
    π - (π(1 - pₜ) + (1 - π)pₜ)/(1 - pₜ) · NE (module docstring). PC(+) = 0 (pₜ = 1) has no
    net benefit and gives NaN.
    """
    if not 0.0 < prevalence < 1.0:
        raise ParameterError(f"prevalence must lie strictly between 0 and 1, got {prevalence!r}")
    x = np.asarray(pc, dtype=np.float64)
    ne = np.asarray(cost, dtype=np.float64)
    pi = prevalence
    pt = pi * (1.0 - x) / (pi * (1.0 - x) + (1.0 - pi) * x)
    with np.errstate(divide="ignore", invalid="ignore"):
        nb = pi - (pi * (1.0 - pt) + (1.0 - pi) * pt) / (1.0 - pt) * ne
    nb[pt >= 1.0] = np.nan
    return pt, nb


@dataclass(frozen=True, eq=False)
class DecisionCurves:
    """Net benefit of each model, treat-all and treat-none at each threshold probability.

    Attributes
    ----------
    thresholds : ndarray of float64
    net_benefit : dict of str to ndarray or None
        Per model, in the data set's order; None for a model whose scores are not
        probabilities (``refused`` says why).
    treat_all, treat_none : ndarray of float64
    prevalence : float
    refused : dict of str to str
    """

    thresholds: NDArray[np.float64]
    net_benefit: dict[str, NDArray[np.float64] | None]
    treat_all: NDArray[np.float64]
    treat_none: NDArray[np.float64]
    prevalence: float
    refused: dict[str, str]


def decision_curves(y_true: ArrayLike, scores: dict[str, ArrayLike],
                    thresholds: ArrayLike | None = None) -> DecisionCurves:
    """Decision curves of several models on one test set.

    Parameters
    ----------
    y_true : array-like of bool, shape (n,)
    scores : dict of str to array-like, shape (n,)
        Each model's scores; those not within [0, 1] are refused (a threshold probability means
        nothing for them), with the reason in ``refused``.
    thresholds : array-like, optional
        Threshold probabilities in [0, 1); default 0.01, 0.02, ..., 0.99.
    """
    y = np.asarray(y_true, dtype=bool)
    pt = threshold_grid() if thresholds is None else _check_thresholds(thresholds)
    if y.ndim != 1 or y.size == 0:
        raise ParameterError("y_true must be a non-empty 1-D array")
    pi = float(np.mean(y))
    curves: dict[str, NDArray[np.float64] | None] = {}
    refused: dict[str, str] = {}
    for name, s in scores.items():
        if name in RESERVED:
            raise ParameterError(f"a model named {name!r} would clash with the treat-{name} "
                                 f"curve; rename it")
        problem = probability_problem(s)
        if problem is not None:
            curves[name] = None
            refused[name] = f"no decision curve: {problem}"
        else:
            curves[name] = net_benefit(y, s, pt)
    treat_all = pi - (1.0 - pi) * pt / (1.0 - pt)
    return DecisionCurves(thresholds=pt, net_benefit=curves, treat_all=treat_all,
                          treat_none=np.zeros_like(pt), prevalence=pi, refused=refused)


def decision_curves_of_rocs(rocs: Sequence[RocCurve], thresholds: ArrayLike | None = None
                            ) -> DecisionCurves:
    """:func:`decision_curves` from ROC curves of one test set (same class totals)."""
    pt = threshold_grid() if thresholds is None else _check_thresholds(thresholds)
    if not rocs:
        raise ParameterError("no classifiers")
    totals = {(r.n_pos, r.n_neg) for r in rocs}
    if len(totals) != 1:
        raise ParameterError("decision curves need every model scored on the same cases (the "
                             "models have different class totals)")
    n_pos, n_neg = totals.pop()
    pi = n_pos / (n_pos + n_neg)
    curves: dict[str, NDArray[np.float64] | None] = {}
    refused: dict[str, str] = {}
    for roc in rocs:
        if roc.name in RESERVED:
            raise ParameterError(f"a model named {roc.name!r} would clash with the "
                                 f"treat-{roc.name} curve; rename it")
        problem = probability_problem(roc.threshold[1:])
        if problem is not None:
            curves[roc.name] = None
            refused[roc.name] = f"no decision curve: {problem}"
        else:
            curves[roc.name] = net_benefit_of_roc(roc, pt)
    treat_all = pi - (1.0 - pi) * pt / (1.0 - pt)
    return DecisionCurves(thresholds=pt, net_benefit=curves, treat_all=treat_all,
                          treat_none=np.zeros_like(pt), prevalence=pi, refused=refused)


def decision_curves_to_dict(curves: DecisionCurves) -> dict:
    """The JSON of ``costdash dca --json``: ``{"thresholds", "net_benefit": {model..., "all",
    "none"}}`` (plus ``"refused": {model: reason}`` when a model was refused)."""
    nb: dict[str, list[float] | None] = {
        name: None if v is None else v.tolist() for name, v in curves.net_benefit.items()}
    nb["all"] = curves.treat_all.tolist()
    nb["none"] = curves.treat_none.tolist()
    out: dict = {"thresholds": curves.thresholds.tolist(), "net_benefit": nb}
    if curves.refused:
        out["refused"] = dict(curves.refused)
    return out
