"""The report's Threshold choice section ("Beyond the envelope"): the Threshold choice page for
one view -- what each way of choosing thresholds costs, decision curves with the view's pₜ, and
the robust choices over its sensitivity box and under its Beta over PC(+)
(:func:`costdash.choice_summary.choice_summary_of_view`).

A part of :func:`dashboard.report.build_report`.
"""

from __future__ import annotations

import json

from typing import Any

import numpy as np

from costdash.dataset import Dataset
from costdash.threshold_money import CostByThreshold
from costdash.view import View, number_text
from dashboard.report.format import (_e, _figure_html, _meta, _num, _table, _threshold,
                                     _vertex_name, _with_unit, friendly, plain_figure,
                                     sized)

CHOICE_MAX_POINTS = 400
"""Each threshold-choice curve is thinned to at most this many points (as each ROC curve of the
report, :data:`dashboard.report.format.REPORT_MAX_POINTS`: a static page of 50 classifiers
would otherwise carry 300,000 points of them; the expected losses stay exact)."""


def _choice_section(dataset: Dataset, view: View, max_points: int | None = None,
                    summary: dict | None = None) -> str:
    """The Threshold choice page for this view: what each way of choosing thresholds costs
    (curves, expected losses, named gaps, H-measure and Brier score by AUC), decision curves
    with the view's pₜ, and the robust choices over its sensitivity box
    (:func:`costdash.choice_summary.choice_summary_of_view`)."""
    from costdash.choice_summary import choice_summary_of_view
    from dashboard.figures.choice import (decision_curve_figure, one_column_relayout,
                                          threshold_choice_dict)

    # A read-only link's scope (``max_points``): every ROC curve thinned first, and each
    # threshold-choice curve to as many points. ``summary``: the same, already computed
    # (the dashboard's results service: the Threshold choice page's own).
    summary = summary if summary is not None else choice_summary_of_view(dataset, view,
                                     max_points=min(CHOICE_MAX_POINTS,
                                                    max_points or CHOICE_MAX_POINTS),
                                     max_roc_points=max_points)
    index = {n: i for i, n in enumerate(dataset.names)}
    robust = summary["robust"]
    cond = summary["conditions"]
    # A plain dict, not a go.Figure: the same figure without validating its hundreds of
    # properties one by one (issue 23).
    cost = sized(plain_figure(threshold_choice_dict(
        summary["classifiers"], index, pc_now=cond["pc"],
        box_pc=None if robust is None else robust["pc_range"])), None)
    dca = sized(decision_curve_figure(summary["decision_curves"], index))
    beta = summary["beta"]
    averaged = ("PC(+) uniform on [0, 1]" if beta == [1.0, 1.0]
                else f"PC(+) ~ Beta({beta[0]:g}, {beta[1]:g})")
    rows, notes = [], []
    for c in summary["classifiers"]:
        tc, gaps = c["threshold_choice"], c["threshold_choice_gaps"]
        fixed = tc["fixed"] or {}
        where = {"pin": " (pinned)", "conditions": " (best now)"}.get(c["fixed_from"], "")
        rows.append([_e(c["name"]), _num(c["auc"]), _num(c["h_measure"]),
                     _num(c["brier_score"])]
                    + [_num((tc[m] or {}).get("expected_loss")) for m in
                       ("optimal", "score_driven", "rate_driven", "fixed")]
                    + [_e(("–" if fixed.get("threshold") is None
                           else f"score ≥ {number_text(fixed['threshold'])}") + where)]
                    + [_num(gaps[g]) for g in ("calibration_loss", "rate_loss", "fixed_loss")])
        if gaps["score_driven_refused"]:
            notes.append(f"<p>{_e(c['name'])}: {_e(gaps['score_driven_refused'])}</p>")
    dc = summary["decision_curves"]
    cur = dc["current"]
    dca_rows = [[_e(name), _num(value)] for name, value in cur["net_benefit"].items()]
    dca_rows += [["treat all", _num(cur["treat_all"])], ["treat none", "0"]]
    for name, why in (dc.get("refused") or {}).items():
        notes.append(f"<p>{_e(name)} (decision curve): {_e(why)}</p>")
    unit = summary["unit"]

    def money(x: float) -> str:
        return _with_unit(f"{x:,.2f}", unit)

    if robust is None:
        robust_html = f"<p>{_e(summary['robust_refused'])}.</p>"
    else:
        mm, by, sw, box = (robust["minimax_regret"], robust["bayes"], robust["switching"],
                           robust["box"])
        wc = mm["worst_condition"]

        def pick(p: dict) -> str:
            return _e(_vertex_name(p["classifier"]) if p["threshold"] is None
                      else f"{p['classifier']} at score ≥ {number_text(p['threshold'])}")

        def rng(lo_hi: list[float]) -> str:
            lo, hi = lo_hi
            return _num(lo) if lo == hi else f"{_num(lo)} to {_num(hi)}"

        robust_html = (
            _meta([("p(+)", rng(box["p_pos"])), ("C(−|+)", rng(box["cost_fn"])),
                   ("C(+|−)", rng(box["cost_fp"])),
                   ("Cases per period", friendly(robust["volume"]))])
            + _table(["choice", "classifier and threshold", "worst-case regret per period",
                      "expected cost per period"],
                     [["minimax regret", pick(mm), money(mm["max_regret"]), "–"],
                      ["Bayes (uniform over the box)", pick(by), money(by["max_regret"]),
                       money(by["expected_cost"])]], name_cols=2, css_class="robust")
            + f"<p>The minimax choice's worst case is at p(+) = {_num(wc['p_pos'])}, "
              f"C(−|+) = {_num(wc['cost_fn'])}, C(+|−) = {_num(wc['cost_fp'])} (PC(+) "
              f"{_num(wc['pc'])}). "
            + (f"<b>Switching by condition is worth it</b>: no fixed choice keeps the "
               f"worst-case regret within {money(sw['tolerance'])}; the policy table below saves "
               f"{money(sw['expected_saving'])} per period on average over the Bayes choice.</p>"
               if sw["worth_it"] else
               "<b>One fixed choice is enough</b>: it is optimal everywhere in the box.</p>")
            + _table(["from PC(+)", "to PC(+)", "use", "threshold"],
                     [[_num(p["pc_lo"]), _num(p["pc_hi"]), _e(_vertex_name(p["classifier"])),
                       _e(_threshold(p["threshold"]))] for p in robust["policy"]],
                     css_class="policy"))
    return ('<section id="threshold-choice"><h2>Beyond the envelope: threshold choice, decision '
            "curves, robust choices</h2>"
            "<p>The envelope (optimal) is the cost of the best threshold chosen with hindsight; "
            "score-driven thresholds read the scores as probabilities (the Brier curve), "
            "rate-driven ones flag the share of cases the conditions call for, and a fixed "
            "threshold (the view's pin, else the classifier's best at these conditions) keeps one "
            f"cost line. Expected losses are mean normalized costs with {_e(averaged)}; the gaps "
            "to optimal are the calibration, rate and fixed losses.</p>"
            + _table(["classifier", "AUC", "H-measure", "Brier score", "optimal", "score-driven",
                      "rate-driven", "fixed", "fixed threshold", "calibration loss",
                      "rate loss", "fixed loss"], rows, css_class="threshold-choice")
            + "".join(notes)
            + f'<div class="fig">{_figure_html(cost, False, "choice-cost-figure")}</div>'
            + _narrow_layout("choice-cost-figure",
                             one_column_relayout(cost, len(summary["classifiers"])))
            + f"<h3>Decision curves</h3><p>A threshold probability is a cost ratio: "
              f"pₜ = C(+|−)/(C(−|+) + C(+|−)) = {_num(cur['pt'])} for these costs "
              f"(C(+|−)/C(−|+) = pₜ/(1 − pₜ)); at the test set's prevalence "
              f"{_num(dc['prevalence'])} it is PC(+) = {_num(cur['pc_at_prevalence'])}. Net "
              "benefit per case at pₜ:</p>"
            + _table(["strategy", "net benefit"], dca_rows, css_class="net-benefit")
            + f'<div class="fig">{_figure_html(dca, False, "choice-dca-figure")}</div>'
            + "<h3>Choices that hold up over the sensitivity box</h3>" + robust_html
            + _beta_choices_html(summary.get("robust_pc"))
            + "</section>")


def _beta_choices_html(rp: dict | None) -> str:
    """The robust choices under the view's Beta over PC(+), in normalized cost."""
    if rp is None:
        return ""

    def pick(p: dict) -> str:
        return _e(_vertex_name(p["classifier"]) if p["threshold"] is None
                  else f"{p['classifier']} at score ≥ {number_text(p['threshold'])}")

    a, b = rp["beta"]
    lo, hi = rp["pc_range"]
    return (f'<p class="beta-choices">With PC(+) ~ Beta({a:g}, {b:g}): the least expected '
            f"normalized cost is {pick(rp['bayes'])} ({_num(rp['bayes']['expected_cost'])}); "
            f"over its central 95% (PC(+) {_num(lo)} to {_num(hi)}) the smallest worst-case "
            f"normalized regret is {pick(rp['minimax_regret'])} "
            f"({_num(rp['minimax_regret']['max_regret'])}).</p>")


def _threshold_money_section(dataset: Dataset, analysis: Any, view: View,
                             max_points: int | None = None) -> str:
    """Money against the threshold of one classifier (the view's ``model``, else the current
    choice's) at the view's conditions, with its cheapest threshold and pins, and its
    top-fraction table with the capacity's row (issue 28, items 1 and 2; the Threshold choice
    page's first card; core: :mod:`costdash.threshold_money`). ``max_points``: a read-only
    link's scope, the curve thinned to it first."""
    from costdash.roc import RocCurve, thin_indices
    from costdash.threshold_money import DECILES, cost_by_threshold, top_fraction_table
    from dashboard.figures.threshold_money import money_by_threshold_figure

    selected = [c.name for c in analysis.classifiers]
    vertex = analysis.operating_point.vertex.classifier
    name = (view.model if view.model in selected
            else vertex if vertex in selected else selected[0])
    roc = analysis.classifier(name).roc
    if max_points is not None:
        keep = thin_indices(roc.size, max_points)
        roc = RocCurve(name=roc.name, tp=roc.tp[keep], fp=roc.fp[keep],
                       threshold=roc.threshold[keep], n_pos=roc.n_pos, n_neg=roc.n_neg)
    cond = analysis.operating_point.condition
    curve = cost_by_threshold(roc, cond)
    volume = view.volume if view.volume > 0 else 0.0
    scale = volume or 1.0
    share = None if view.capacity is None or not volume else view.capacity / volume
    fractions = sorted({*DECILES, *([share] if share is not None and 0 < share < 1 else [])})
    table = top_fraction_table(roc, fractions, condition=cond)
    pins = [(k, t) for k, (n, t) in enumerate(view.pins or ()) if n == name]
    cap = fractions.index(share) if share is not None and 0 < share < 1 else None
    # Drawn thinned (the report's points per curve), the cheapest and the pins kept.
    idx = np.union1d(thin_indices(curve.threshold.size, CHOICE_MAX_POINTS),
                     [curve.best, *(curve.at(t) for _, t in pins)]).astype(np.int64)
    drawn = CostByThreshold(classifier=name, condition=cond, threshold=curve.threshold[idx],
                            fpr=curve.fpr[idx], tpr=curve.tpr[idx],
                            normalized_cost=curve.normalized_cost[idx],
                            expected_cost=curve.expected_cost[idx],
                            best=int(np.searchsorted(idx, curve.best)))
    fig = money_by_threshold_figure(
        drawn, volume=scale, unit=view.unit, index=dataset.names.index(name),
        pins=[t for _, t in pins], pin_slots=[k for k, _ in pins],
        capacity_threshold=None if cap is None else float(table.threshold[cap]))
    sized(fig)
    per = "per period" if volume else "per case"

    def money(x: float) -> str:
        return _with_unit(friendly(x * scale), view.unit)

    rows = []
    for k, f in enumerate(table.fraction):
        t = float(table.threshold[k])
        rows.append([("<b>" if k == cap else "") + _e(f"{f * 100:.4g}%")
                     + (" (capacity)</b>" if k == cap else ""),
                     _e("flag nothing" if np.isnan(t) else number_text(float(f"{t:.6g}"))),
                     _e(money(float(table.expected_cost[k]))),
                     _num(float(table.precision[k])), _num(float(table.lift[k])),
                     f"{int(table.positives[k]):,}", _num(float(table.recall[k])),
                     f"{int(table.flagged[k]):,}"])
    best = curve.best_threshold
    pinned = "".join(f" Pin {k + 1} (score ≥ {_e(number_text(t))}) costs "
                     f"{_e(money(float(curve.expected_cost[curve.at(t)])))}."
                     for k, t in pins)
    return ('<section id="threshold-money"><h2>Money against the threshold</h2>'
            f"<p>{_e(name)} at these conditions: the cheapest threshold is "
            f"<b>{_e('flag nothing' if best is None else 'score ≥ ' + number_text(best))}</b>, "
            f"expected cost {_e(money(curve.best_expected_cost))} {per}.{pinned}</p>"
            f'<div class="fig">{_figure_html(fig, False, "choice-money-figure")}</div>'
            "<h3>Acting on the top scores</h3>"
            + _table(["top of scores", "flag score ≥", f"expected cost {per}",
                      "cumulative precision", "lift", "positives captured",
                      "share of positives", "flagged"], rows, name_cols=2,
                     css_class="top-fraction")
            + "</section>")


def _narrow_layout(div_id: str, update: dict) -> str:
    """The relayout a narrow screen applies to the figure ``div_id`` (the report's narrow
    script, :data:`dashboard.report._NARROW_SCRIPT`: under 700 px wide), computed here."""
    if not update:
        return ""
    text = json.dumps(update, separators=(",", ":")).replace("</", "<\\/")
    return (f"<script>(window.costdashNarrow=window.costdashNarrow||{{}})"
            f"[{json.dumps(div_id)}]={text};</script>")
