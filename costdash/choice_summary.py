"""Beyond the envelope, for one analysis and one view: the JSON the dashboard's Threshold choice
page, its API route (``GET /api/v1/datasets/<id>/choice.json``), the report and ``costdash
analyze --json`` share.

Nothing is computed here that the core modules do not compute: this module only calls
:mod:`costdash.choice_curves`, :mod:`costdash.hmeasure`, :mod:`costdash.dca`,
:mod:`costdash.robust` and :mod:`costdash.calibration` for the classifiers of an
:class:`~costdash.analysis.Analysis` and packs their results with their ``*_to_dict``
functions, so every consumer states the same numbers in the same keys.

Three parts (docs/threshold-choice.md):

1. ``classifiers``: per classifier, AUC, H-measure, Brier score, the threshold-choice curves
   (score-driven, rate-driven, fixed, optimal) with their expected losses, and the named gaps;
2. ``decision_curves``: net benefit against the threshold probability, treat-all and
   treat-none, with the threshold probability pₜ = C(+|−)/(C(−|+) + C(+|−)) of the conditions
   (cost differences when correct decisions have costs) and each model's net benefit there;
3. ``robust``: the Bayes and minimax-regret fixed choices over the sensitivity box, with the
   worst corner, whether switching by condition is worth it and the policy table the box
   reaches (null without a box, ``robust_refused`` saying why); ``robust_pc``, with a Beta over
   PC(+), the Bayes choice under it and the minimax-regret choice over its central 95%, in
   normalized cost (:func:`costdash.robust.robust_choice_pc`; null without a Beta).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace

import numpy as np

from costdash.analysis import Analysis, ClassifierSummary
from costdash.choice_curves import (ThresholdChoice, ThresholdChoiceCurve, gaps_to_dict,
                                    threshold_choice, threshold_choice_to_dict)
from costdash.conditions import OperatingCondition
from costdash.errors import ParameterError
from costdash.hmeasure import HMeasure, h_measure
from costdash.hull import optimal_vertex
from costdash.roc import RocCurve

__all__ = ["CALIBRATIONS", "ChoiceBase", "ClassifierChoice", "choice_at", "choice_base",
           "choice_curves", "classifier_choices",
           "classifier_choice_to_dict", "choice_summary", "choice_summary_of_view",
           "condition_free", "thinned_analysis", "view_options",
           "threshold_probability", "view_beta", "view_pins"]


@dataclass(frozen=True, eq=False)
class ClassifierChoice:
    """One classifier's threshold-choice curves and H-measure, and where its fixed curve's
    threshold came from: ``"threshold"`` (one given for all), ``"pin"`` (the view pins one for
    it) or ``"conditions"`` (its own best threshold at the analysis's conditions)."""

    summary: ClassifierSummary
    choice: ThresholdChoice
    h: HMeasure
    fixed_from: str
    calibrated: RocCurve | None = None
    calibration_refused: str | None = None


def _best_point(c: ClassifierSummary, condition: OperatingCondition) -> int:
    """The ROC point of ``c``'s own best hull vertex at ``condition``: the first point with
    the vertex's FPR and TPR."""
    v = optimal_vertex(c.hull, condition)
    fpr, tpr = c.roc.fpr, c.roc.tpr
    # FPR never decreases along the curve: the points at the vertex's FPR are one run, found
    # by bisection (a new condition then reads a few points, not every one of each curve).
    lo = int(np.searchsorted(fpr, v.fpr, side="left"))
    hi = int(np.searchsorted(fpr, v.fpr, side="right"))
    hits = np.flatnonzero(tpr[lo:hi] == v.tpr)
    if hits.size:
        return lo + int(hits[0])
    return int(np.flatnonzero((fpr == v.fpr) & (tpr == v.tpr))[0])


def _net_benefit_at(roc: RocCurve, pt: float) -> float:
    """``net_benefit_of_roc(roc, [pt])[0]`` for a ROC curve whose decision curve was drawn
    (its thresholds are probabilities, decreasing after the first point), by bisection: the
    same point (the last whose threshold is at least ``pt``) and the same arithmetic, without
    reading every threshold."""
    import bisect
    import operator

    from costdash.dca import net_benefit_of_roc

    if not 0.0 <= pt < 1.0:
        return float(net_benefit_of_roc(roc, [pt])[0])  # its own message
    # roc.point_at_threshold: searchsorted(-threshold[1:], -pt, side="right").
    i = bisect.bisect_right(roc.threshold, -pt, lo=1, key=operator.neg) - 1
    n = roc.n_pos + roc.n_neg
    ratio = np.float64(pt) / (np.float64(1.0) - np.float64(pt))
    return float(roc.tp[i] / n - roc.fp[i] / n * ratio)


def _fixed_curve(c: ClassifierSummary, pins: Mapping[str, float],
                 condition: OperatingCondition, beta: tuple[float, float]
                 ) -> tuple[ThresholdChoiceCurve, str]:
    """The fixed threshold's cost curve of ``c`` and where its threshold comes from: the pin
    the view sets for it, else the point best at the conditions."""
    from costdash.choice_curves import fixed_point_curve, fixed_threshold_curve

    if c.name in pins:
        return fixed_threshold_curve(c.roc, float(pins[c.name]), beta=beta), "pin"
    return fixed_point_curve(c.roc, _best_point(c, condition), beta=beta), "conditions"


def classifier_choices(analysis: Analysis, *, h_severity: float | None = None,
                       h_beta: tuple[float, float] | None = None,
                       beta: tuple[float, float] | None = None,
                       fixed_threshold: float | None = None,
                       fixed_thresholds: Mapping[str, float] | None = None,
                       calibrate: str | None = None) -> list[ClassifierChoice]:
    """The threshold-choice curves and H-measure of every classifier of ``analysis``.

    Parameters
    ----------
    analysis : Analysis
    h_severity, h_beta : optional
        The H-measure's severity ratio or Beta (:func:`costdash.hmeasure.h_measure`).
    beta : (float, float), optional
        Beta(a, b) over PC(+) for the expected losses (uniform by default).
    fixed_threshold : float, optional
        One fixed threshold for every classifier.
    fixed_thresholds : mapping of str to float, optional
        A fixed threshold per classifier (e.g. the view's pins); a classifier without one (and
        without ``fixed_threshold``) keeps its own best threshold at the analysis's conditions.
    calibrate : "platt" or "isotonic", optional
        The score-driven curve of the scores calibrated on folds
        (:func:`costdash.calibration.calibrate_classifier`).
    """
    loss_beta = (1.0, 1.0) if beta is None else (float(beta[0]), float(beta[1]))
    cond = analysis.operating_point.condition
    scored = {c.name: c for c in analysis.dataset.scored}
    pins = dict(fixed_thresholds or {})
    out = []
    for c in analysis.classifiers:
        calibrated = refused = None
        if calibrate is not None:
            if c.name in scored:
                from costdash.calibration import calibrate_classifier

                try:
                    calibrated = calibrate_classifier(scored[c.name], calibrate)
                except ParameterError as exc:
                    refused = f"no score-driven curve: {exc}"
            else:
                refused = (f"no score-driven curve: {c.name} was given as confusion matrices, "
                           "so there are no scores to calibrate")
        common = dict(beta=loss_beta, envelope=c.envelope, calibrated=calibrated,
                      calibration=calibrate if calibrated is not None else None)
        if fixed_threshold is not None:
            tc = threshold_choice(roc=c.roc, fixed_threshold=fixed_threshold, **common)
            source = "threshold"
        elif c.name in pins:
            tc = threshold_choice(roc=c.roc, fixed_threshold=float(pins[c.name]), **common)
            source = "pin"
        else:
            tc = threshold_choice(roc=c.roc, fixed_point=_best_point(c, cond), **common)
            source = "conditions"
        if refused is not None:
            tc = replace(tc, score_driven=None, score_driven_refused=refused)
        h = h_measure(c.roc, severity_ratio=h_severity,
                      beta=None if h_beta is None else (float(h_beta[0]), float(h_beta[1])),
                      envelope=c.envelope)
        out.append(ClassifierChoice(c, tc, h, source, calibrated, refused))
    return out


def classifier_choice_to_dict(item: ClassifierChoice, *, max_points: int | None = None) -> dict:
    """The keys ``analyze --json`` adds to a classifier: ``h_measure``, ``h_measure_beta``,
    ``brier_score``, ``threshold_choice``, ``threshold_choice_gaps``."""
    return {"h_measure": item.h.h, "brier_score": item.choice.brier_score,
            "threshold_choice": threshold_choice_to_dict(item.choice, max_points=max_points),
            "threshold_choice_gaps": gaps_to_dict(item.choice),
            "h_measure_beta": [item.h.a, item.h.b]}


def threshold_probability(condition: OperatingCondition) -> float:
    """The threshold probability of a condition: pₜ = (C(+|−) − C(−|−)) / ((C(−|+) − C(+|+)) +
    (C(+|−) − C(−|−))), i.e. C(+|−)/(C(−|+) + C(+|−)) when correct decisions cost nothing; the
    cost ratio C(+|−)/C(−|+) is pₜ/(1 − pₜ). It does not depend on p(+)."""
    fn, fp = condition.fn_difference, condition.fp_difference
    return fp / (fn + fp)


def _box_pc_range(box) -> tuple[float, float]:
    pcs = [c.pc for c in box.corner_conditions()]
    return min(pcs), max(pcs)


def choice_summary(analysis: Analysis, *, pins: Mapping[str, float] | None = None,
                   sens_p: tuple[float, float] | None = None,
                   sens_fn: tuple[float, float] | None = None,
                   sens_fp: tuple[float, float] | None = None,
                   volume: float = 1000.0, unit: str = "",
                   beta: tuple[float, float] | None = None,
                   calibrate: str | None = None,
                   thresholds=None, tolerance: float = 0.0,
                   max_points: int | None = None, curves: dict | None = None) -> dict:
    """The three parts (module docstring) for ``analysis`` under one view, as JSON.

    Parameters
    ----------
    analysis : Analysis
        Its classifiers (the ticked ones) and its conditions.
    pins : mapping of str to float, optional
        A fixed threshold per classifier (the view's first pin of each); the others' fixed
        curve is at their own best threshold under the conditions.
    sens_p, sens_fn, sens_fp : (lo, hi), optional
        The sensitivity box; a range not given is the condition's own value. Without any, no
        robust choice (``robust`` null, ``robust_refused`` says so).
    volume, unit : float, str
        Cases per period and the unit of the money figures (volume 0 counts per case).
    beta : (a, b), optional
        Beta over PC(+) for the expected losses (uniform by default).
    calibrate : "platt" or "isotonic", optional
        Score-driven and decision curves of the scores calibrated on folds.
    thresholds : array-like, optional
        Threshold probabilities of the decision curves (default 0.01, ..., 0.99).
    tolerance : float
        Worst-case regret per period one accepts from a fixed choice.
    max_points : int, optional
        Thin each threshold-choice curve for display (the losses stay exact).
    curves : dict, optional
        :func:`condition_free` of an earlier summary of the same data, classifiers, Beta,
        calibration, thresholds and ``max_points`` (under any conditions, pins or box): its
        curves are reused and only what the conditions change is computed (the fixed curves,
        the decision curves' ``current``, the robust choices). The result is the same.
    """
    if curves is not None:
        return _summary_from_curves(analysis, curves, pins=pins, sens_p=sens_p,
                                    sens_fn=sens_fn, sens_fp=sens_fp, volume=volume, unit=unit,
                                    beta=beta, calibrate=calibrate, tolerance=tolerance,
                                    max_points=max_points)
    from costdash.dca import decision_curves_of_rocs, decision_curves_to_dict

    items = classifier_choices(analysis, beta=beta, fixed_thresholds=pins, calibrate=calibrate)
    classifiers = []
    for item in items:
        entry = {"name": item.summary.name, "auc": item.summary.roc.auc,
                 **classifier_choice_to_dict(item, max_points=max_points),
                 "fixed_from": item.fixed_from}
        classifiers.append(entry)

    # Decision curves: of the calibrated scores when a calibration was picked.
    rocs = []
    refused: dict[str, str] = {}
    for item in items:
        if calibrate is None:
            rocs.append(item.summary.roc)
        elif item.calibrated is not None:
            rocs.append(item.calibrated)
        else:
            rocs.append(item.summary.roc)
            refused[item.summary.name] = (item.calibration_refused or "").replace(
                "no score-driven curve", "no decision curve")
    curves = decision_curves_of_rocs(rocs, thresholds)
    for name, why in refused.items():
        curves.net_benefit[name] = None
        curves.refused[name] = why
    dca = decision_curves_to_dict(curves)
    return _finish(analysis, classifiers, dca, rocs, {n: v for n, v in curves.net_benefit.items()},
                   pins=pins, sens_p=sens_p, sens_fn=sens_fn, sens_fp=sens_fp, volume=volume,
                   unit=unit, beta=beta, calibrate=calibrate, tolerance=tolerance)


def _finish(analysis: Analysis, classifiers: list[dict], dca: dict, rocs: list[RocCurve],
            drawn: Mapping[str, object], *, pins, sens_p, sens_fn, sens_fp, volume, unit, beta,
            calibrate, tolerance, candidates: Analysis | None = None,
            robust_pc: dict | None | str = "compute") -> dict:
    """The parts the conditions change (the decision curves' ``current``, the robust choices)
    and the summary's frame, around ``classifiers`` and the decision curves ``dca``.

    ``candidates``: ``analysis`` with each ROC cut to the candidates no other one dominates
    (:func:`_undominated`), used for the robust choices when every corner weighs both errors;
    ``robust_pc``: the condition-free robust choices under the Beta when already computed."""
    from costdash.decision import decide
    from costdash.robust import ConditionBox, robust_choice, robust_to_dict

    cond = analysis.operating_point.condition
    ds = analysis.dataset
    prevalence = ds.n_pos / ds.n
    pt = threshold_probability(cond)
    at_pt: dict[str, float | None] = {}
    for roc in rocs:
        if drawn.get(roc.name) is None or pt >= 1.0:
            at_pt[roc.name] = None
        else:
            at_pt[roc.name] = _net_benefit_at(roc, pt)
    # The decision curves' own prevalence (as decision_curves_of_rocs computes it).
    pi = rocs[0].n_pos / (rocs[0].n_pos + rocs[0].n_neg)
    dca["current"] = {
        "pt": pt, "cost_ratio": pt / (1.0 - pt) if pt < 1.0 else None,
        # The PC(+) that pₜ means at the data's prevalence (the decision curves' own p(+)).
        "pc_at_prevalence": pi * (1.0 - pt) / (pi * (1.0 - pt) + (1.0 - pi) * pt),
        "net_benefit": at_pt,
        "treat_all": pi - (1.0 - pi) * pt / (1.0 - pt) if pt < 1.0 else None,
    }
    dca["prevalence"] = pi
    if calibrate is not None:
        dca["calibration"] = calibrate

    robust = None
    robust_refused = None
    if sens_p is None and sens_fn is None and sens_fp is None:
        robust_refused = ("no sensitivity box: set a range of p(+) or of a cost (Explore's "
                          "sensitivity analysis) to get choices that hold over it")
    else:
        try:
            box = ConditionBox.around(cond, sens_p, sens_fn, sens_fp)
            per = float(volume) if volume and volume > 0 else 1.0
            # A dominated candidate costs strictly more at every corner where both errors
            # weigh (u, w > 0): dropping it changes no choice, not even a tie's.
            weighed = all(c.p_pos * c.fn_difference > 0 and (1 - c.p_pos) * c.fp_difference > 0
                          for c in (*box.corner_conditions(), box.centre))
            among = (replace(candidates, operating_point=analysis.operating_point)
                     if candidates is not None and weighed else analysis)
            robust = robust_to_dict(robust_choice(among, box, volume=per,
                                                  tolerance=tolerance))
            lo, hi = _box_pc_range(box)
            robust["pc_range"] = [lo, hi]
            robust["policy"] = [
                {"pc_lo": p.pc_lo, "pc_hi": p.pc_hi, "classifier": p.classifier,
                 "threshold": p.threshold}
                for p in decide(analysis).policy if p.pc_hi >= lo and p.pc_lo <= hi]
        except ParameterError as exc:
            robust_refused = str(exc)

    if robust_pc == "compute":
        robust_pc = _robust_pc(analysis, beta)

    return {
        "conditions": {"p_pos": cond.p_pos, "cost_fn": cond.cost_fn, "cost_fp": cond.cost_fp,
                       "cost_tp": cond.cost_tp, "cost_tn": cond.cost_tn, "pc": cond.pc},
        "prevalence": prevalence,
        "volume": float(volume), "unit": unit,
        "beta": [1.0, 1.0] if beta is None else [float(beta[0]), float(beta[1])],
        "calibration": calibrate,
        "classifiers": classifiers,
        "decision_curves": dca,
        "robust": robust,
        "robust_refused": robust_refused,
        "robust_pc": robust_pc,
    }


def _robust_pc(analysis: Analysis, beta, candidates: Analysis | None = None) -> dict | None:
    """The robust choices under a Beta over PC(+) (condition-free; None without a Beta)."""
    robust_pc = None
    if beta is not None:
        from costdash.robust import robust_choice_pc

        from scipy.stats import beta as beta_dist

        a, b = float(beta[0]), float(beta[1])
        # The Beta's central 95% (as robust_choice_pc takes it): inside (0, 1) both errors
        # weigh, so the undominated candidates give the same picks.
        lo, hi = float(beta_dist.ppf(0.025, a, b)), float(beta_dist.ppf(0.975, a, b))
        among = candidates if candidates is not None and 0.0 < lo and hi < 1.0 else analysis
        rp = robust_choice_pc(among, (a, b))
        robust_pc = {
            "beta": list(rp.beta), "pc_range": list(rp.pc_range),
            "bayes": {"classifier": rp.bayes.classifier, "threshold": rp.bayes.threshold,
                      "expected_cost": rp.bayes.value, "fpr": rp.bayes.fpr,
                      "tpr": rp.bayes.tpr},
            "minimax_regret": {"classifier": rp.minimax_regret.classifier,
                               "threshold": rp.minimax_regret.threshold,
                               "max_regret": rp.minimax_regret.value,
                               "fpr": rp.minimax_regret.fpr, "tpr": rp.minimax_regret.tpr},
        }

    return robust_pc


def condition_free(summary: dict) -> dict:
    """What of a :func:`choice_summary` does not depend on the conditions, pins or box: each
    classifier's entry without its fixed curve, and the decision curves without ``current``
    (give it back as ``curves`` to reuse them)."""
    classifiers = []
    for entry in summary["classifiers"]:
        e = {k: v for k, v in entry.items() if k != "fixed_from"}
        e["threshold_choice"] = {k: v for k, v in entry["threshold_choice"].items()
                                 if k != "fixed"}
        e["threshold_choice_gaps"] = {k: v for k, v in entry["threshold_choice_gaps"].items()
                                      if k != "fixed_loss"}
        classifiers.append(e)
    dca = {k: v for k, v in summary["decision_curves"].items() if k != "current"}
    return {"classifiers": classifiers, "decision_curves": dca}


def _summary_from_curves(analysis: Analysis, curves: dict, *, pins, sens_p, sens_fn, sens_fp,
                         volume, unit, beta, calibrate, tolerance, max_points) -> dict:
    """:func:`choice_summary` with its condition-free part given (:func:`condition_free`)."""
    import copy

    from costdash.choice_curves import _curve_dict

    loss_beta = (1.0, 1.0) if beta is None else (float(beta[0]), float(beta[1]))
    cond = analysis.operating_point.condition
    given = {e["name"]: e for e in copy.deepcopy(curves["classifiers"])}
    pins = dict(pins or {})
    classifiers = []
    for c in analysis.classifiers:
        if c.name not in given:
            raise ParameterError(f"the reused curves have no classifier {c.name!r}")
        e = given[c.name]
        fixed, source = _fixed_curve(c, pins, cond, loss_beta)
        tc, gaps = e["threshold_choice"], e["threshold_choice_gaps"]
        optimal = tc["optimal"]["expected_loss"]
        classifiers.append({
            "name": e["name"], "auc": e["auc"], "h_measure": e["h_measure"],
            "brier_score": e["brier_score"],
            "threshold_choice": {"score_driven": tc["score_driven"],
                                 "rate_driven": tc["rate_driven"],
                                 "fixed": _curve_dict(fixed, max_points),
                                 "optimal": tc["optimal"]},
            "threshold_choice_gaps": {
                "calibration_loss": gaps["calibration_loss"], "rate_loss": gaps["rate_loss"],
                "fixed_loss": fixed.expected_loss - optimal,
                "score_driven_refused": gaps["score_driven_refused"], "beta": gaps["beta"],
                "calibration": gaps["calibration"],
                "calibrated_brier_score": gaps["calibrated_brier_score"]},
            "h_measure_beta": e["h_measure_beta"], "fixed_from": source})
    dca = copy.deepcopy(curves["decision_curves"])
    drawn = dca["net_benefit"]
    rocs = []
    scored = {c.name: c for c in analysis.dataset.scored}
    for c in analysis.classifiers:
        if calibrate is not None and drawn.get(c.name) is not None and c.name in scored:
            from costdash.calibration import calibrate_classifier

            rocs.append(calibrate_classifier(scored[c.name], calibrate))
        else:
            rocs.append(c.roc)
    return _finish(analysis, classifiers, dca, rocs, drawn, pins=pins, sens_p=sens_p,
                   sens_fn=sens_fn, sens_fp=sens_fp, volume=volume, unit=unit, beta=beta,
                   calibrate=calibrate, tolerance=tolerance)


CALIBRATIONS = ("platt", "isotonic")


# --- the condition-free base, reused at every condition ------------------------------------------

@dataclass(frozen=True, eq=False)
class ChoiceBase:
    """What a view's threshold choice needs that no condition, pin or box changes: the ticked
    classifiers' ROC curves, hulls and envelopes (:attr:`analysis`, its operating point any),
    their calibrated ROC curves, and the robust choices' candidates cut to those no other one
    dominates (:attr:`candidates`). Built once per data set, classifiers and calibration
    (:func:`choice_base`); :func:`choice_curves` and :func:`choice_at` read it.

    Attributes
    ----------
    analysis : Analysis
    calibrate : str or None
        The calibration of :attr:`calibrated` (``"platt"``, ``"isotonic"``).
    calibrated : dict of str to RocCurve
        Each classifier's ROC curve of its calibrated scores (those that have one).
    calibration_refused : dict of str to str
        Why a classifier has none.
    candidates : Analysis
        :attr:`analysis` with each ROC curve cut to its first point and the points no
        candidate of any classifier dominates (lower or equal FPR and higher or equal TPR,
        another point): the only ones a robust choice can pick where both errors cost.
    thinned : int or None
        Every ROC curve was thinned to at most this many points first (a read-only link's
        scope: nothing here is an exact count at a threshold the viewer chose).
    """

    analysis: Analysis
    calibrate: str | None
    calibrated: dict
    calibration_refused: dict
    candidates: Analysis
    thinned: int | None = None


def _thin_roc(roc: RocCurve, max_points: int) -> RocCurve:
    from costdash.roc import thin_indices

    idx = thin_indices(roc.size, max_points)
    return RocCurve(name=roc.name, tp=roc.tp[idx], fp=roc.fp[idx], threshold=roc.threshold[idx],
                    n_pos=roc.n_pos, n_neg=roc.n_neg)


def thinned_analysis(analysis: Analysis, max_points: int) -> Analysis:
    """``analysis`` as if each classifier's ROC curve had only its thinned points (at most
    ``max_points``, evenly spread, first and last kept): hulls, envelopes and the choice are
    those of the thinned curves, so nothing computed from it is an exact count at a threshold
    between them (a read-only link's scope)."""
    from costdash.analysis import choose, summarize_classifier
    from costdash.costspace import lower_envelope
    from costdash.hull import hull_of_hulls

    summaries = tuple(summarize_classifier(_thin_roc(c.roc, max_points))
                      for c in analysis.classifiers)
    hull = hull_of_hulls([c.hull for c in summaries])
    return replace(analysis, classifiers=summaries, hull=hull, envelope=lower_envelope(hull),
                   operating_point=choose(hull, analysis.operating_point.condition))


def _undominated(analysis: Analysis) -> Analysis:
    """``analysis`` with each ROC curve cut to its first point and the candidates
    (:func:`costdash.robust.candidates_of`: every point but the first and the all-positive
    one, and the trivial choices) that no other candidate dominates (another point with lower
    or equal FPR and higher or equal TPR)."""
    # First, cheaply: a point below the staircase of the hull vertices (actual points of every
    # classifier) is dominated by one of them.
    vf = np.concatenate([[0.0, 1.0], *(c.hull.fpr for c in analysis.classifiers)])
    vt = np.concatenate([[0.0, 1.0], *(c.hull.tpr for c in analysis.classifiers)])
    order = np.argsort(vf, kind="stable")
    vf, stair = vf[order], np.maximum.accumulate(vt[order])
    survivors = []
    for c in analysis.classifiers:
        roc = c.roc
        # Every point but the first (slices, not index arrays: no copies of 100,000s).
        f, t = roc.fpr[1:], roc.tpr[1:]
        below = stair[np.searchsorted(vf, f, side="right") - 1]
        keep = (t >= below) & ~((roc.fp[1:] == roc.n_neg) & (roc.tp[1:] == roc.n_pos))
        survivors.append(np.flatnonzero(keep) + 1)
    # Then exactly, among the survivors and the trivial points.
    fpr = np.concatenate([[0.0, 1.0], *(c.roc.fpr[k] for c, k in
                                          zip(analysis.classifiers, survivors))])
    tpr = np.concatenate([[0.0, 1.0], *(c.roc.tpr[k] for c, k in
                                          zip(analysis.classifiers, survivors))])
    # Sorted by FPR up, then TPR down: a point is dominated when one before it reaches its TPR;
    # equal points (adjacent in that order) do not dominate each other: each takes its first
    # one's verdict (as the distinct points would: issue 23, no np.unique of rows).
    order = np.lexsort((-tpr, fpr))
    fs, ts = fpr[order], tpr[order]
    verdict = np.maximum.accumulate(np.concatenate(([-np.inf], ts[:-1]))) >= ts
    first = np.arange(ts.size)
    first[1:][(fs[1:] == fs[:-1]) & (ts[1:] == ts[:-1])] = 0
    dominated = np.empty(ts.size, dtype=bool)
    dominated[order] = verdict[np.maximum.accumulate(first)]
    keep = ~dominated[2:]
    out = []
    start = 0
    for c, surviving in zip(analysis.classifiers, survivors):
        roc = c.roc
        kept = surviving[keep[start:start + surviving.size]]
        start += surviving.size
        sel = np.concatenate(([0], kept)).astype(np.int64)
        small = RocCurve(name=roc.name, tp=roc.tp[sel], fp=roc.fp[sel],
                         threshold=roc.threshold[sel], n_pos=roc.n_pos, n_neg=roc.n_neg)
        out.append(ClassifierSummary(roc=small, hull=c.hull, envelope=c.envelope,
                                     operating_range=c.operating_range))
    return replace(analysis, classifiers=tuple(out))


def choice_analysis(dataset, *, models=None, max_roc_points: int | None = None) -> Analysis:
    """The analysis a :func:`choice_base` starts from: ``dataset``'s ticked classifiers
    (``models``, all when None) analysed under any condition, each ROC curve thinned to
    ``max_roc_points`` when given (:func:`thinned_analysis`). A sort of every classifier's
    scores (on two threads: half the time on two idle cores, the same analysis): the base's
    largest part without a calibration."""
    from costdash.analysis import analyze

    analysis = analyze(dataset, models=models, threads=2)
    if max_roc_points is not None:
        analysis = thinned_analysis(analysis, max_roc_points)
    return analysis


def choice_base(dataset, *, models=None, calibrate: str | None = None,
                max_roc_points: int | None = None,
                analysis: Analysis | None = None) -> ChoiceBase:
    """The condition-free base of a view's threshold choice (:class:`ChoiceBase`).

    Parameters
    ----------
    dataset : Dataset
    models : sequence of str, optional
        The ticked classifiers (all when None).
    calibrate : "platt" or "isotonic", optional
    max_roc_points : int, optional
        Thin every ROC curve (the classifiers' and the calibrated ones) to at most this many
        points before anything is computed from it: a read-only link's what-ifs answer from
        the curves it shows.
    analysis : Analysis, optional
        :func:`choice_analysis` of the same arguments when already made (e.g. handed to a
        report built alongside, issue 23): not made again (``dataset`` is then not read).

    Raises
    ------
    ParameterError
        A calibration other than platt or isotonic, or ticked classifiers the data lacks.
    """
    if calibrate is not None and calibrate not in CALIBRATIONS:
        raise ParameterError(f"Calibration must be platt or isotonic; got "
                             f"'{str(calibrate)[:40]}'.")
    if analysis is None:
        analysis = choice_analysis(dataset, models=models, max_roc_points=max_roc_points)
    calibrated: dict[str, RocCurve] = {}
    refused: dict[str, str] = {}
    if calibrate is not None:
        from costdash.calibration import calibrate_classifier

        scored = {c.name: c for c in analysis.dataset.scored}
        for c in analysis.classifiers:
            if c.name not in scored:
                refused[c.name] = (f"no score-driven curve: {c.name} was given as confusion "
                                   "matrices, so there are no scores to calibrate")
                continue
            try:
                roc = calibrate_classifier(scored[c.name], calibrate)
            except ParameterError as exc:
                refused[c.name] = f"no score-driven curve: {exc}"
                continue
            calibrated[c.name] = (roc if max_roc_points is None
                                  else _thin_roc(roc, max_roc_points))
    return ChoiceBase(analysis=analysis, calibrate=calibrate, calibrated=calibrated,
                      calibration_refused=refused, candidates=_undominated(analysis),
                      thinned=max_roc_points)


def choice_curves(base: ChoiceBase, *, beta: tuple[float, float] | None = None,
                  max_points: int | None = None, thresholds=None,
                  also_points: Sequence[int | None] = ()) -> dict:
    """The condition-free part of :func:`choice_summary` (as :func:`condition_free` gives it,
    with the robust choices under the Beta, ``robust_pc``, which no condition changes either):
    each classifier's score-driven, rate-driven and optimal curves, H-measure and Brier score,
    and the decision curves without ``current``. ``max_points`` thins each curve.

    ``also_points``: other thinnings of the same curves, computed once (the curves are most of
    the work; each thinning is a few ms): then ``{"also": [the same dict thinned to each]}``
    is added."""
    from costdash.dca import decision_curves_of_rocs, decision_curves_to_dict

    loss_beta = (1.0, 1.0) if beta is None else (float(beta[0]), float(beta[1]))
    classifiers = []
    others: list[list[dict]] = [[] for _ in also_points]
    rocs = []
    refused: dict[str, str] = {}
    for c in base.analysis.classifiers:
        calibrated = base.calibrated.get(c.name)
        tc = threshold_choice(roc=c.roc, beta=loss_beta, envelope=c.envelope,
                              calibrated=calibrated,
                              calibration=base.calibrate if calibrated is not None else None)
        why = base.calibration_refused.get(c.name)
        if why is not None:
            tc = replace(tc, score_driven=None, score_driven_refused=why)
        h = h_measure(c.roc, envelope=c.envelope)
        item = ClassifierChoice(c, tc, h, "conditions", calibrated, why)
        for points, out in zip((max_points, *also_points), (classifiers, *others)):
            entry = {"name": c.name, "auc": c.roc.auc,
                     **classifier_choice_to_dict(item, max_points=points)}
            del entry["threshold_choice"]["fixed"]
            del entry["threshold_choice_gaps"]["fixed_loss"]
            out.append(entry)
        if base.calibrate is None:
            rocs.append(c.roc)
        elif calibrated is not None:
            rocs.append(calibrated)
        else:
            rocs.append(c.roc)
            refused[c.name] = (why or "").replace("no score-driven curve", "no decision curve")
    curves = decision_curves_of_rocs(rocs, thresholds)
    for name, why in refused.items():
        curves.net_benefit[name] = None
        curves.refused[name] = why
    shared = {"decision_curves": decision_curves_to_dict(curves),
              "robust_pc": _robust_pc(base.analysis, beta, base.candidates)}
    out = {"classifiers": classifiers, **shared}
    if also_points:
        out["also"] = [{"classifiers": other, **shared} for other in others]
    return out


def choice_at(base: ChoiceBase, curves: dict, condition: OperatingCondition, *,
              pins: Mapping[str, float] | None = None,
              sens_p: tuple[float, float] | None = None,
              sens_fn: tuple[float, float] | None = None,
              sens_fp: tuple[float, float] | None = None,
              volume: float = 1000.0, unit: str = "",
              beta: tuple[float, float] | None = None, tolerance: float = 0.0,
              max_points: int | None = None) -> dict:
    """:func:`choice_summary` at ``condition`` from a base and its :func:`choice_curves`
    (the same ``beta`` and ``max_points``): only the per-condition part is computed (each
    classifier's fixed curve, the decision curves' ``current``, the robust choices over the
    box), from the base's curves and candidates; ``curves`` is not changed."""
    from costdash.analysis import choose
    from costdash.choice_curves import _curve_dict

    loss_beta = (1.0, 1.0) if beta is None else (float(beta[0]), float(beta[1]))
    analysis = replace(base.analysis, operating_point=choose(base.analysis.hull, condition))
    given = {e["name"]: e for e in curves["classifiers"]}
    pins = dict(pins or {})
    classifiers = []
    for c in analysis.classifiers:
        e = given[c.name]
        fixed, source = _fixed_curve(c, pins, condition, loss_beta)
        tc, gaps = e["threshold_choice"], e["threshold_choice_gaps"]
        classifiers.append({
            **e, "threshold_choice": {**tc, "fixed": _curve_dict(fixed, max_points)},
            "threshold_choice_gaps": {
                **gaps, "fixed_loss": fixed.expected_loss - tc["optimal"]["expected_loss"]},
            "fixed_from": source})
    dca = dict(curves["decision_curves"])
    rocs = [base.calibrated.get(c.name, c.roc) if base.calibrate is not None else c.roc
            for c in analysis.classifiers]
    return _finish(analysis, classifiers, dca, rocs, dca["net_benefit"], pins=pins,
                   sens_p=sens_p, sens_fn=sens_fn, sens_fp=sens_fp, volume=volume, unit=unit,
                   beta=beta, calibrate=base.calibrate, tolerance=tolerance,
                   candidates=base.candidates, robust_pc=curves.get("robust_pc"))



def view_pins(view) -> dict[str, float]:
    """The view's first pinned threshold of each classifier (a :class:`~costdash.view.View`)."""
    out: dict[str, float] = {}
    for name, threshold in view.pins or ():
        out.setdefault(name, float(threshold))
    return out


def view_beta(view) -> tuple[float, float] | None:
    """The view's Beta over PC(+) (``beta_a``, ``beta_b``; one absent is 1), None when both
    are absent (PC(+) uniform)."""
    if view.beta_a is None and view.beta_b is None:
        return None
    return (1.0 if view.beta_a is None else float(view.beta_a),
            1.0 if view.beta_b is None else float(view.beta_b))


def view_options(view) -> dict:
    """The keyword arguments of :func:`choice_at` a :class:`~costdash.view.View` sets besides
    its condition (pins of its ticked classifiers are filtered by :func:`choice_at`'s caller)."""
    return {"sens_p": view.sens_p, "sens_fn": view.sens_fn, "sens_fp": view.sens_fp,
            "volume": view.volume, "unit": view.unit, "beta": view_beta(view)}


def choice_summary_of_view(dataset, view, *, max_points: int | None = None,
                           curves: dict | None = None,
                           max_roc_points: int | None = None) -> dict:
    """:func:`choice_summary` of ``dataset`` under a :class:`~costdash.view.View`: its ticked
    classifiers, conditions, pins, sensitivity box, volume and unit, calibration and Beta.

    Computed as :func:`choice_base`, :func:`choice_curves` and :func:`choice_at` (what the
    dashboard caches apart); with ``curves`` (:func:`condition_free` of an earlier summary)
    those are reused. ``max_roc_points`` thins every ROC curve first (:func:`choice_base`).

    Raises
    ------
    ParameterError
        A calibration other than platt or isotonic, or ticked classifiers the data lacks.
    """
    from costdash.analysis import analyze

    if view.calibration is not None and view.calibration not in CALIBRATIONS:
        raise ParameterError(f"Calibration must be platt or isotonic; got "
                             f"'{str(view.calibration)[:40]}'.")
    if curves is None:
        base = choice_base(dataset, models=view.models, calibrate=view.calibration,
                           max_roc_points=max_roc_points)
        free = choice_curves(base, beta=view_beta(view), max_points=max_points)
        ticked = {c.name for c in base.analysis.classifiers}
        pins = {k: v for k, v in view_pins(view).items() if k in ticked}
        return choice_at(base, free, view.condition(dataset.prevalence), pins=pins,
                         max_points=max_points, **view_options(view))
    analysis = analyze(dataset, view.condition(dataset.prevalence), models=view.models)
    ticked = {c.name for c in analysis.classifiers}
    pins = {k: v for k, v in view_pins(view).items() if k in ticked}
    return choice_summary(analysis, pins=pins, sens_p=view.sens_p, sens_fn=view.sens_fn,
                          sens_fp=view.sens_fp, volume=view.volume, unit=view.unit,
                          beta=view_beta(view), calibrate=view.calibration,
                          max_points=max_points, curves=curves)
