"""Watch a deployed choice over production periods: is it still optimal at today's prior?

For each period of unlabelled production scores :func:`watch` estimates p(+)
(:mod:`costdash.prevalence`), turns it and its interval into PC(+) at the given costs (PC(+) is
increasing in p(+), so the interval's ends map to the interval's ends), reads the policy table
(:func:`costdash.decision.policy_table`, the reference's lower envelope) at that PC(+), and says

* whether the deployed (classifier, threshold) is still optimal there (PC(+) inside its
  ``valid_pc``),
* what keeping it costs against the policy's choice, in money over the period's cases:
  ``n · [p̂ (TPR_choice - TPR_deployed) (C(-|+) - C(+|+)) + (1 - p̂) (FPR_deployed - FPR_choice)
  (C(+|-) - C(-|-))]``, the rates read on the reference,
* ``alert`` when the *whole* PC(+) interval has left ``valid_pc``: the estimate alone crossing a
  breakpoint is noise until the interval does too.

:func:`watch_to_dict` is the JSON contract of ``costdash watch --json`` (issue 25).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
from numpy.typing import NDArray

from costdash.analysis import Analysis, analyze
from costdash.conditions import OperatingCondition
from costdash.dataset import Dataset
from costdash.decision import PolicyPiece, policy_table
from costdash.errors import ParameterError
from costdash.hull import ALL_NEGATIVE, ALL_POSITIVE
from costdash.prevalence import (
    Calibration,
    Method,
    PrevalenceEstimate,
    ReferenceModel,
    _is_table,
    _table_column,
    production_arrays,
    reference_model,
)

__all__ = ["Deployed", "Watch", "WatchPeriod", "deployed_choice", "pc_at", "watch",
           "watch_to_dict"]


@dataclass(frozen=True)
class Deployed:
    """The deployed choice on the reference: its ROC point and where it is optimal.

    Attributes
    ----------
    classifier : str
    threshold : float or None
        Score >= threshold is flagged; None for ``all-negative`` / ``all-positive``.
    fpr, tpr : float
        Its rates on the reference.
    valid_pc : tuple of float or None
        The PC(+) interval over which it is optimal (its pieces of the envelope); None when it
        is optimal nowhere (not a vertex of the reference's hull).
    """

    classifier: str
    threshold: float | None
    fpr: float
    tpr: float
    valid_pc: tuple[float, float] | None


@dataclass(frozen=True)
class WatchPeriod:
    """One production period.

    Attributes
    ----------
    period : str, int or float
        The period's label as given (``"all"`` without periods).
    n : int
        Production cases in the period.
    estimate : PrevalenceEstimate
        The estimated p(+) and its interval.
    pc, pc_low, pc_high : float
        PC(+) at the estimate and at its interval's ends, at the given costs.
    choice_classifier : str
    choice_threshold : float or None
        The policy's choice at ``pc``.
    deployed_optimal : bool
        ``pc`` lies in the deployed choice's ``valid_pc``.
    regret_per_period : float
        Expected money the deployed choice costs over the period's ``n`` cases beyond the
        policy's choice, at the estimated p(+) (0 when it is optimal).
    alert : bool
        The whole interval ``[pc_low, pc_high]`` lies outside the deployed choice's
        ``valid_pc`` (always, when it is optimal nowhere).
    """

    period: Any
    n: int
    estimate: PrevalenceEstimate
    pc: float
    pc_low: float
    pc_high: float
    choice_classifier: str
    choice_threshold: float | None
    deployed_optimal: bool
    regret_per_period: float
    alert: bool

    @property
    def p_pos(self) -> float:
        return self.estimate.p_pos

    @property
    def p_pos_low(self) -> float:
        return self.estimate.low

    @property
    def p_pos_high(self) -> float:
        return self.estimate.high


@dataclass(frozen=True)
class Watch:
    """Every period of a watch, with what they were read against.

    Attributes
    ----------
    method : str
    level : float
    condition : OperatingCondition
        The planning conditions (``p_pos`` and the costs); the costs convert p(+) to PC(+).
    deployed : Deployed
    policy : tuple of PolicyPiece
        The reference's policy table.
    periods : tuple of WatchPeriod
        In order of first appearance in the production data.
    """

    method: str
    level: float
    condition: OperatingCondition
    deployed: Deployed
    policy: tuple[PolicyPiece, ...]
    periods: tuple[WatchPeriod, ...]


def pc_at(p_pos: float, condition: OperatingCondition) -> float:
    """PC(+) at prior ``p_pos`` in [0, 1] with the condition's costs (0 and 1 at the ends).

    Examples
    --------
    >>> pc_at(0.2, OperatingCondition(p_pos=0.5, cost_fn=4, cost_fp=1))
    0.5
    """
    a, b = condition.fn_difference, condition.fp_difference
    p = min(max(float(p_pos), 0.0), 1.0)
    return p * a / (p * a + (1.0 - p) * b)


def _same(x: float, y: float) -> bool:
    return math.isclose(x, y, rel_tol=1e-12, abs_tol=1e-15)


def deployed_choice(analysis: Analysis, classifier: str, threshold: float | None) -> Deployed:
    """The deployed (classifier, threshold) located on the reference: its ROC point, and the
    PC(+) interval where it is optimal. A threshold flagging the same reference cases as a hull
    vertex's (a rounded one, say) is that vertex.

    Raises
    ------
    ParameterError
        An unknown classifier, or a scored classifier without a finite threshold.
    """
    hull = analysis.hull
    if classifier in (ALL_NEGATIVE, ALL_POSITIVE):
        fpr = tpr = 0.0 if classifier == ALL_NEGATIVE else 1.0
        thr = None
    else:
        try:
            summary = analysis.classifier(classifier)
        except KeyError:
            raise ParameterError(f"no classifier named {classifier!r} in the reference; it has "
                                 f"{', '.join(repr(c.name) for c in analysis.classifiers)}"
                                 ) from None
        if threshold is None or not math.isfinite(float(threshold)):
            raise ParameterError(f"the deployed {classifier!r} needs a finite threshold")
        thr = float(threshold)
        roc = summary.roc
        k = int(roc.point_at_threshold(thr))
        fpr, tpr = float(roc.fpr[k]), float(roc.tpr[k])
    # The vertex with that point (any classifier realising it is the same ROC point).
    vertex = [v for v in range(hull.size)
              if _same(float(hull.fpr[v]), fpr) and _same(float(hull.tpr[v]), tpr)]
    valid: tuple[float, float] | None = None
    if vertex:
        env = analysis.envelope
        pieces = np.flatnonzero(env.vertex == vertex[0])
        if pieces.size:
            valid = (float(env.pc[pieces[0]]), float(env.pc[pieces[-1] + 1]))
    return Deployed(classifier=classifier, threshold=thr, fpr=fpr, tpr=tpr, valid_pc=valid)


def _periods(production: Any, period: Any) -> list[tuple[Any, Any]]:
    """(label, (score, count)) per period, in order of first appearance."""
    score, count = production_arrays(production)
    if period is None:
        return [("all", (score, count))]
    if isinstance(period, str):
        if not _is_table(production):
            raise ParameterError(f"period={period!r} names a column, but the production data is "
                                 f"not a table")
        labels = _table_column(production, period)
        if labels is None:
            raise ParameterError(f"the production data has no column {period!r}")
    else:
        labels = np.asarray(period)
    if labels.shape != score.shape:
        raise ParameterError(f"one period label per production entry: {labels.size} labels for "
                             f"{score.size} entries")
    _, first, inverse = np.unique(labels, return_index=True, return_inverse=True)
    out = []
    for k in np.argsort(first, kind="stable"):
        mask = inverse.ravel() == k
        label = labels[first[k]]
        out.append((label.item() if hasattr(label, "item") else label,
                    (score[mask], count[mask])))
    return out


def watch(reference: Dataset, production: Any, *, period: str | Sequence[Any] | None = None,
          p_pos: float | None = None, cost_fn: float = 1.0, cost_fp: float = 1.0,
          cost_tp: float = 0.0, cost_tn: float = 0.0,
          deployed: tuple[str, float | None] | None = None, classifier: str | None = None,
          method: Method = "em", level: float = 0.9, calibration: Calibration = "bcts",
          resamples: int = 200, rng: int | np.random.Generator | None = 0) -> Watch:
    """Estimate p(+) per production period and read the policy there.

    Parameters
    ----------
    reference : Dataset
        The labelled evaluation data (rows or score counts): the policy table is its lower
        envelope over all its classifiers.
    production : array_like, (score, n) tuple, or table
        Unlabelled scores of the classifier whose scores they are (``classifier``), one per case
        or as score counts (see :func:`costdash.estimate_prevalence`).
    period : str, sequence or None
        A column of the production table holding each entry's period, or one label per entry;
        None for one period called ``"all"``.
    p_pos : float, optional
        The prior the deployment was planned at (default: the reference's prevalence); it
        chooses the deployed choice when ``deployed`` is not given.
    cost_fn, cost_fp, cost_tp, cost_tn : float
        The costs (as :class:`costdash.OperatingCondition`).
    deployed : (str, float or None), optional
        The deployed classifier and threshold (default: the policy's choice at ``p_pos``).
    classifier : str, optional
        The reference classifier the production scores come from (default: the deployed one,
        or the only scored one).
    method, level, calibration, resamples, rng
        As :func:`costdash.estimate_prevalence` (``acc`` uses the deployed threshold).

    Returns
    -------
    Watch

    Raises
    ------
    ParameterError
        Invalid costs or prior, an unknown classifier, ``acc`` with a trivial deployed choice, a
        period column that is missing.

    Examples
    --------
    >>> import numpy as np
    >>> from costdash.dataset import Dataset, ScoredClassifier
    >>> rng = np.random.default_rng(3)
    >>> y = rng.random(3000) < 0.3
    >>> ref = Dataset("ref", "wide", "1", scored=(ScoredClassifier("m", y, rng.normal(2 * y)),))
    >>> prod = rng.normal(2 * (rng.random(10000) < 0.05))
    >>> w = watch(ref, prod, p_pos=0.3, resamples=50)
    >>> w.periods[0].period, w.periods[0].deployed_optimal, w.periods[0].alert
    ('all', False, True)
    """
    ref_prev = reference.prevalence
    condition = OperatingCondition(ref_prev if p_pos is None else p_pos, cost_fn, cost_fp,
                                   cost_tp, cost_tn)
    analysis = analyze(reference, condition)
    policy = policy_table(analysis.envelope)
    if deployed is None:
        vertex = analysis.operating_point.vertex
        thr = float(vertex.threshold) if math.isfinite(vertex.threshold) else None
        deployed = (vertex.classifier, thr)
    dep = deployed_choice(analysis, deployed[0], deployed[1])
    if classifier is None:
        scored = [c.name for c in reference.scored]
        classifier = dep.classifier if dep.classifier in scored else (
            scored[0] if len(scored) == 1 else None)
        if classifier is None:
            raise ParameterError("name the classifier whose scores the production data holds "
                                 "(the deployed choice is trivial and the reference has several)")
    if method == "acc" and dep.threshold is None:
        raise ParameterError("method 'acc' needs a deployed threshold; the deployed choice is "
                             f"{dep.classifier}")
    if method == "acc" and classifier != dep.classifier:
        raise ParameterError("method 'acc' reads the deployed classifier's scores at its "
                             f"threshold; production scores of {classifier!r} cannot be used")
    model = reference_model(reference, classifier=classifier, method=method,
                            threshold=dep.threshold if method == "acc" else None,
                            calibration=calibration, resamples=resamples, rng=rng)
    periods = tuple(_period(model, label, batch, level, condition, analysis, dep)
                    for label, batch in _periods(production, period))
    return Watch(method=model.method, level=float(level), condition=condition, deployed=dep,
                 policy=policy, periods=periods)


def _period(model: ReferenceModel, label: Any, batch: tuple[NDArray, NDArray], level: float,
            condition: OperatingCondition, analysis: Analysis, dep: Deployed) -> WatchPeriod:
    est = model.estimate(batch, level=level)
    pc, lo, hi = (pc_at(v, condition) for v in (est.p_pos, est.low, est.high))
    hull = analysis.hull
    v = int(analysis.envelope.vertex_at(pc))
    c_fpr, c_tpr = float(hull.fpr[v]), float(hull.tpr[v])
    thr = float(hull.threshold[v])
    valid = dep.valid_pc
    optimal = valid is not None and valid[0] <= pc <= valid[1]
    p = est.p_pos
    per_case = (p * (c_tpr - dep.tpr) * condition.fn_difference
                + (1.0 - p) * (dep.fpr - c_fpr) * condition.fp_difference)
    # At the deployed choice's own range the choice is the same ROC point (or ties with it at a
    # breakpoint): no regret, whatever the rounding.
    regret = 0.0 if optimal else max(per_case, 0.0) * est.n_production
    alert = valid is None or hi < valid[0] or lo > valid[1]
    return WatchPeriod(period=label, n=est.n_production, estimate=est, pc=pc, pc_low=lo,
                       pc_high=hi, choice_classifier=hull.classifier[v],
                       choice_threshold=thr if math.isfinite(thr) else None,
                       deployed_optimal=optimal, regret_per_period=regret, alert=alert)


def _label(value: Any) -> Any:
    if isinstance(value, (str, int, float)) and not isinstance(value, bool):
        return value if not (isinstance(value, float) and not math.isfinite(value)) else str(value)
    return str(value)


def watch_to_dict(result: Watch) -> dict:
    """The JSON of ``costdash watch --json`` (issue 25's contract; no NaN or infinity)::

        {"method", "level", "deployed": {"classifier", "threshold"},
         "periods": [{"period", "n", "p_pos", "p_pos_low", "p_pos_high", "pc", "pc_low",
                      "pc_high", "choice": {"classifier", "threshold"}, "deployed_optimal",
                      "regret_per_period", "alert"}]}
    """
    return {
        "method": result.method,
        "level": result.level,
        "deployed": {"classifier": result.deployed.classifier,
                     "threshold": result.deployed.threshold},
        "periods": [{
            "period": _label(p.period), "n": p.n, "p_pos": p.p_pos, "p_pos_low": p.p_pos_low,
            "p_pos_high": p.p_pos_high, "pc": p.pc, "pc_low": p.pc_low, "pc_high": p.pc_high,
            "choice": {"classifier": p.choice_classifier, "threshold": p.choice_threshold},
            "deployed_optimal": bool(p.deployed_optimal),
            "regret_per_period": float(p.regret_per_period), "alert": bool(p.alert),
        } for p in result.periods],
    }
