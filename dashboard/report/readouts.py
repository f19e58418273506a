"""The report's sections of the Explore page's readouts for one view: what the chosen operating
point costs (per case, per period, against the trivial choices, expected counts), the sensitivity
ranges, the constraints (Neyman-Pearson, capacity) and the pinned thresholds.

Parts of :func:`dashboard.report.build_report`, which re-exports :func:`constraint_points`.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from costdash.analysis import Analysis
from costdash.conditions import OperatingCondition
from costdash.criteria import (MixedOperatingPoint, SingleThreshold, neyman_pearson, sensitivity,
                               single_threshold_neyman_pearson, single_threshold_workforce,
                               workforce)
from costdash.errors import CostdashError
from costdash.hull import ALL_NEGATIVE, ALL_POSITIVE
from costdash.pinned import pin_threshold, point_metrics
from costdash.readout_intervals import (cost_interval, paired_limits, paired_table, rate_limits,
                                        regret_interval)
from costdash.view import View
from dashboard.report.format import (_e, _meta, _num, _table, _threshold, _threshold_html,
                                     _vertex_name, _with_unit, friendly, percent,
                                     readable_threshold_text, readout)

__all__ = ["constraint_points"]


# --- intervals beside the costs (issue 28 item 5; the Explore page's, costdash.readout_intervals) -

def _counts_of(analysis: Analysis, name: str, fpr: float, tpr: float) -> tuple[int, int, int, int]:
    """(FN, positives, FP, negatives) of a ROC point of classifier ``name`` (or a trivial one)."""
    try:
        roc = analysis.classifier(name).roc
    except KeyError:
        roc = analysis.classifiers[0].roc
    return (roc.n_pos - round(tpr * roc.n_pos), roc.n_pos, round(fpr * roc.n_neg), roc.n_neg)


def _level(level: float) -> str:
    return f"{100 * level:g}%"


def _range(low: float, high: float, scale: float, unit: str) -> str:
    return _with_unit(f"{readout(low * scale)} to {readout(high * scale)}", unit)


def _chosen_range(analysis: Analysis, view: View, scale: float, unit: str) -> str:
    """The chosen threshold's cost range on new cases, as Explore writes it (no level: picked
    on these cases)."""
    op = analysis.operating_point
    v = op.vertex
    if v.classifier in (ALL_NEGATIVE, ALL_POSITIVE):
        return "exact (a trivial choice: no rates to estimate)"
    limits = rate_limits(*_counts_of(analysis, v.classifier, v.fpr, v.tpr), view.level)
    _, low, high = cost_interval(limits, op.condition)
    return (f"{_range(low, high, scale, unit)}: the {_level(view.level)} Clopper–Pearson–MOVER "
            "interval of its test-set error rates, without a confidence level: the threshold "
            "was picked as the best on these same cases, which flatters its cost here")


def _flags(analysis: Analysis, name: str, threshold: float) -> Any:
    """What classifier ``name`` flags at ``threshold`` on the data set's rows (None: no scores)."""
    if name in (ALL_NEGATIVE, ALL_POSITIVE):
        return name
    scored = {c.name: c for c in analysis.dataset.scored if c.count is None}
    c = scored.get(name)
    return None if c is None else (c.y_true, c.score >= threshold)


def _regret_range(analysis: Analysis, view: View, name: str, point_threshold: float,
                  scale: float, unit: str) -> str:
    """A pin's regret range against the chosen point (discordant-pair MOVER; no level)."""
    v = analysis.operating_point.vertex
    pin = _flags(analysis, name, point_threshold if math.isfinite(point_threshold)
                 else math.inf)
    best = _flags(analysis, v.classifier, v.threshold)
    if pin is None or best is None or isinstance(pin, str):
        return "–"
    y, flag = pin
    if isinstance(best, str):
        other, exact = np.full(y.shape, best == ALL_POSITIVE), True
    else:
        if not np.array_equal(best[0], y):
            return "–"
        other, exact = best[1], False
    limits = paired_limits(paired_table(y, flag, other), view.level, exact_b=exact)
    _, low, high = regret_interval(limits, analysis.operating_point.condition)
    return _range(low, high, scale, unit)


def _money_section(analysis: Analysis, view: View) -> str:
    """Expected cost per case and per period, the saving against the trivial classifiers and
    the expected counts per period: the Explore page's readouts for this view."""
    op = analysis.operating_point
    cond, v = op.condition, op.vertex
    unit = view.unit.strip()
    volume = view.volume if view.volume > 0 else None   # as the page: no volume, no period
    per_case = op.expected_cost
    trivial_chosen = v.classifier in (ALL_NEGATIVE, ALL_POSITIVE)
    trivial_label = "flagging nothing" if cond.pc <= cond.one_minus_pc else "flagging everything"
    saving_words = saving_text(cond, op.normalized_cost, volume or 1.0, unit, trivial_label)
    saving = "0% (a trivial choice is best)" if trivial_chosen else saving_words
    rows = [
        ("expected cost per case", "expected-cost", _with_unit(readout(per_case), unit)),
        (f"cost per period ({friendly(volume) if volume else '–'} cases)", "period-cost",
         "–" if volume is None else _with_unit(readout(per_case * volume), unit)),
        ("range of the cost per period on new cases" if volume else
         "range of the cost per case on new cases", "cost-interval",
         _chosen_range(analysis, view, volume or 1.0, unit)),
        ("saving vs the best trivial choice", "saving-trivial", saving),
    ]
    parts = ['<section id="money"><h2>What it costs</h2>', '<table class="money"><tbody>']
    parts += [f'<tr><th class="name">{_e(label)}</th><td id="{key}">{_e(text)}</td></tr>'
              for label, key, text in rows]
    parts.append("</tbody></table>")
    if volume is None:
        counts = ("–",) * 4
    else:
        counts = tuple(friendly(x) for x in cond.expected_counts(v.fpr, v.tpr, volume))
    tp, fn, fp, tn = counts
    parts.append("<h3>Expected counts per period</h3>" + (
        '<table class="confusion"><thead><tr><th class="name"></th>'
        "<th>flagged (predicted +)</th><th>not flagged (predicted −)</th></tr></thead><tbody>"
        f'<tr><th class="name">positive cases</th><td id="cm-tp" title="TP">{tp}</td>'
        f'<td id="cm-fn" title="FN (missed)">{fn}</td></tr>'
        f'<tr><th class="name">negative cases</th><td id="cm-fp" title="FP (false alarms)">'
        f'{fp}</td><td id="cm-tn" title="TN">{tn}</td></tr></tbody></table>'))
    money = friendly(per_case if volume is None else per_case * volume) + (
        f" {unit}" if unit else "")
    per = "per case" if volume is None else f"per {friendly(volume)} cases"
    parts.append(f'<p id="sentence">{_sentence(analysis, money, per, saving)}</p>')
    parts.append("</section>")
    return "".join(parts)


def saving_text(cond: OperatingCondition, normalized_cost: float, scale: float, unit: str,
                label: str) -> str:
    """The saving against the better trivial choice in money (times ``scale``: the volume, or
    1 per case) with its share of what that choice costs, named in the same words, as the
    Explore page writes it (``savingText`` in assets/explore-readouts.js); no share when that
    choice costs nothing or gains."""
    def money(x: float) -> str:
        return _with_unit(friendly(x * scale), unit)

    costs = f", which costs {money(cond.trivial_expected_cost)}"
    trivial = cond.trivial_normalized_cost
    if trivial - normalized_cost <= 0.0005 * trivial:
        return f"about the same as {label}{costs}"
    share = cond.saving_vs_trivial(normalized_cost)
    return (money(cond.saving_money(normalized_cost))
            + (f" ({percent(share)})" if math.isfinite(share) else "")
            + f" less than {label}{costs}")


def _sentence(analysis: Analysis, money: str, per: str, saving: str) -> str:
    """The Explore page's sentence, as HTML (the threshold readable, the exact one on hover)."""
    v = analysis.operating_point.vertex
    if v.classifier == ALL_NEGATIVE:
        return _e(f"At these costs no classifier beats flagging nothing: {money} {per}, all of "
                  "it missed positives.")
    if v.classifier == ALL_POSITIVE:
        return _e(f"At these costs, flag everything: {money} {per}, all of it false alarms.")
    return (f"At these costs, use {_e(v.classifier)} with threshold "
            f"{_threshold_html(analysis, v.classifier, v.threshold)}: "
            + _e(f"{money} {per}, {saving}."))


def _point_ranges(view: View, cond: OperatingCondition) -> tuple[tuple[float, float], ...]:
    """The sensitivity ranges of p(+), C(−|+), C(+|−); one left unset is the point value."""
    return (view.sens_p or (cond.p_pos,) * 2, view.sens_fn or (cond.cost_fn,) * 2,
            view.sens_fp or (cond.cost_fp,) * 2)


def _sensitivity_section(analysis: Analysis, view: View) -> str:
    if view.sens_p is None and view.sens_fn is None and view.sens_fp is None:
        return ""
    cond = analysis.operating_point.condition
    p, fn, fp = _point_ranges(view, cond)
    # With the costs of the correct decisions, as the page asks the core.
    result = sensitivity(analysis.hull, p, fn, fp, cost_tp=cond.cost_tp, cost_tn=cond.cost_tn)
    ranges = [("p(+)", p, view.sens_p), ("C(−|+)", fn, view.sens_fn),
              ("C(+|−)", fp, view.sens_fp)]
    items = [(label, f"{_num(lo)} to {_num(hi)}" if given else f"{_num(lo)} (fixed)")
             for label, (lo, hi), given in ranges]
    hull = analysis.hull
    rows = [[_e(_vertex_name(hull.classifier[i])),
             _threshold_html(analysis, hull.classifier[i], hull.threshold[i]),
             _num(hull.fpr[i]), _num(hull.tpr[i])] for i in result.vertices]
    return ('<section id="sensitivity"><h2>Sensitivity</h2>'
            + _meta([*((_e(k), _e(val)) for k, val in items),
                     ("PC(+) range", (f'<span id="sensitivity-pc">{readout(result.pc_range[0])}'
                                      f" to {readout(result.pc_range[1])}</span>"))])
            + '<p id="sensitivity-readout">'
            + _e(f"Over these ranges PC(+) runs from {readout(result.pc_range[0])} to "
                 f"{readout(result.pc_range[1])}; optimal somewhere in them: "
                 + ", ".join(_vertex_name(n) for n in result.classifiers) + ".")
            + "</p>"
            + _table(["optimal hull vertex", "threshold", "FPR", "TPR"], rows,
                     css_class="sensitivity")
            + "</section>")


def _describe_mixed(point: MixedOperatingPoint, analysis: Analysis) -> str:
    """A constrained operating point in words, as the page says it (thresholds readable)."""
    def one(name: str, threshold: float) -> str:
        return _vertex_name(name) + (
            "" if not math.isfinite(threshold)
            else f" (score ≥ {readable_threshold_text(analysis, name, threshold)})")

    if point.left == point.right or point.weight == 0:
        return one(point.left_classifier, point.left_threshold)
    return (f"mix {one(point.right_classifier, point.right_threshold)} with probability "
            f"{readout(point.weight, 3)} and {one(point.left_classifier, point.left_threshold)} "
            "otherwise")


def constraint_points(analysis: Analysis, view: View
                      ) -> list[tuple[str, str, MixedOperatingPoint | None, str]]:
    """(key, label, point or None, message) of each constraint the view sets: Neyman-Pearson
    (``max_fpr``) and capacity (``capacity`` with the volume and p(+)), over the hull of the
    ticked classifiers, as the Explore page asks the core for them."""
    hull, cond = analysis.hull, analysis.operating_point.condition
    out: list[tuple[str, str, MixedOperatingPoint | None, str]] = []
    if view.max_fpr is not None:
        label = f"Neyman–Pearson (FPR ≤ {readout(view.max_fpr, 3)})"
        try:
            out.append(("np", label, neyman_pearson(hull, view.max_fpr), ""))
        except CostdashError as exc:
            out.append(("np", label, None, str(exc)))
    if view.capacity is not None:
        label = f"Capacity (at most {friendly(view.capacity)} flagged)"
        if not view.volume > 0:
            out.append(("capacity", label, None,
                        "set a positive volume (cases per period) to use a capacity"))
        else:
            n_pos = cond.p_pos * view.volume
            try:
                point = workforce(hull, n_pos=n_pos, n_neg=(1.0 - cond.p_pos) * view.volume,
                                  capacity=view.capacity)
                out.append(("capacity", label, point, ""))
            except CostdashError as exc:
                out.append(("capacity", label, None, str(exc)))
    return out


def _constraints_section(analysis: Analysis, view: View) -> str:
    points = constraint_points(analysis, view)
    if not points:
        return ""
    op = analysis.operating_point
    cond, best = op.condition, op.expected_cost
    unit = view.unit.strip()
    volume = view.volume if view.volume > 0 else None
    parts = ['<section id="constraints"><h2>Constraints</h2>']
    for key, label, point, message in points:
        if point is None:
            parts.append(f'<p class="constraint" id="constraint-{key}">{_e(label)}: '
                         f"{_e(message)}</p>")
            continue
        cost = cond.expected_cost(cond.normalized_cost(point.fpr, point.tpr))
        extra = cost - best
        extra_text = (_with_unit(readout(extra), unit) + " per case" if volume is None
                      else _with_unit(readout(extra * volume), unit) + " per period")
        share = f" ({percent(extra / best)})" if best > 0 else ""
        parts.append(f'<p class="constraint" id="constraint-{key}">' + _e(
            f"{label}: {_describe_mixed(point, analysis)} (FPR {readout(point.fpr, 3)}, TPR "
            f"{readout(point.tpr, 3)}); obeying it costs {extra_text} more than the best "
            f"choice{share}.") + "</p>")
        single = _single_threshold(analysis, view, key)
        if single is not None:
            single_cost = cond.expected_cost(cond.normalized_cost(single.fpr, single.tpr))
            gain = single_cost - cost
            money = abs(gain) if volume is None else abs(gain) * volume
            gain_text = ("saves " if gain >= 0 else "costs ") + _with_unit(readout(money), unit) \
                + (" per case" if volume is None else " per period") \
                + ("" if gain >= 0 else " more at these costs")
            where = ("flag nothing" if single.threshold != single.threshold
                     else f"{single.classifier} at score ≥ {readout(single.threshold)}")
            parts.append(f'<p class="constraint single" id="constraint-{key}-single">' + _e(
                f"Without coin flips, the best single threshold: {where} (FPR "
                f"{readout(single.fpr, 3)}, TPR {readout(single.tpr, 3)}); the mix above gains "
                f"TPR {readout(point.tpr - single.tpr, 3)} and {gain_text}.") + "</p>")
    parts.append("</section>")
    return "".join(parts)


def _single_threshold(analysis: Analysis, view: View, key: str) -> SingleThreshold | None:
    """The best single threshold under the constraint ``key`` (the Explore page's readout)."""
    rocs = [c.roc for c in analysis.classifiers]
    cond = analysis.operating_point.condition
    try:
        if key == "np":
            return single_threshold_neyman_pearson(rocs, view.max_fpr)
        return single_threshold_workforce(rocs, n_pos=cond.p_pos * view.volume,
                                          n_neg=(1.0 - cond.p_pos) * view.volume,
                                          capacity=view.capacity)
    except CostdashError:
        return None


def _pc_interval(interval: tuple[float, float] | None, never: str) -> str:
    if interval is None:
        return never
    lo, hi = interval
    return f"only at {readout(lo)} (inside a hull edge)" if lo == hi else \
        f"{readout(lo)} to {readout(hi)}"


def _pinned_section(analysis: Analysis, view: View) -> str:
    """The view's pinned thresholds at its conditions, as the Explore page's pin cards show them
    (core: :mod:`costdash.pinned`); pins of unticked classifiers are already out of the view."""
    if not view.pins:
        return ""
    op = analysis.operating_point
    cond, best = op.condition, op.vertex
    unit = view.unit.strip()
    volume = view.volume if view.volume > 0 else None

    def money(x: float) -> str:
        return _with_unit(readout(x), unit)

    counts_rows, money_rows = [], []
    for name, threshold in view.pins:
        try:
            pin = pin_threshold(analysis.classifier(name).roc, threshold)
        except (KeyError, CostdashError) as exc:
            message = str(exc) if isinstance(exc, CostdashError) else f"no classifier {name}"
            counts_rows.append([_e(name), _e(_threshold(threshold)), _e(message)]
                               + [""] * 10)
            continue
        m = point_metrics(cond, pin.fpr, pin.tpr, best=(best.fpr, best.tpr),
                          volume=volume or 1.0)
        # The pin is fixed beforehand: its cost interval carries the level; its regret is
        # against the picked best choice: a range without one (as Explore's pin cards).
        _, c_low, c_high = cost_interval(rate_limits(pin.fn, pin.tp + pin.fn, pin.fp,
                                                     pin.fp + pin.tn, view.level), cond)
        counts = ["–"] * 4 if volume is None else [friendly(x) for x in (m.tp, m.fn, m.fp, m.tn)]
        head = [_e(name), _e(_threshold(threshold))]
        counts_rows.append(head + [readout(pin.fpr), readout(pin.tpr), *counts]
                           + [readout(x) if math.isfinite(x) else "–"
                              for x in (m.precision, m.recall, m.specificity, m.npv, m.f1)])
        money_rows.append(head + [
            _e(money(m.expected_cost)),
            "–" if volume is None else _e(money(m.period_cost)),
            _e(_range(c_low, c_high, volume or 1.0, unit)),
            _e(money(m.regret) + " per case" if volume is None else money(m.period_regret)),
            _e(_regret_range(analysis, view, name, pin.point_threshold, volume or 1.0, unit)),
            percent(m.regret_share) if math.isfinite(m.regret_share) else "–",
            _e(_pc_interval(pin.optimal_pc, "never (under its ROC hull)")),
            _e(_pc_interval(pin.beats_trivial_pc, "nowhere")),
            f"TP {pin.tp}, FN {pin.fn}, FP {pin.fp}, TN {pin.tn}"])
    per = "per period" if volume is None else f"per period ({friendly(volume)} cases)"
    return ('<section id="pinned"><h2>Pinned thresholds</h2>'
            "<p>Thresholds in use (a case is flagged when its score ≥ the threshold), at this "
            "view's conditions; the regret is what each costs more than the chosen operating "
            "point. Precision and NPV are at the view's p(+). The cost interval is what each "
            f"threshold would cost on new cases like these, if it was fixed before these cases "
            f"were scored ({_level(view.level)}, Clopper–Pearson–MOVER on its test-set error "
            "rates); the regret range is against the best choice on the same cases "
            "(discordant-pair MOVER), without a level: the best choice was picked on these "
            "cases.</p>"
            + _table(["classifier", "threshold (score ≥)", "FPR", "TPR", f"TP {per}", "FN",
                      "FP", "TN", "precision", "recall", "specificity", "NPV", "F1"],
                     counts_rows, name_cols=2, css_class="pinned")
            + _table(["classifier", "threshold (score ≥)", "cost per case", "cost per period",
                      f"cost {'per period' if volume else 'per case'}, "
                      f"{_level(view.level)} interval",
                      "regret per period", "regret range", "regret share",
                      "optimal for its classifier at PC(+)", "beats both trivial at PC(+)",
                      "test set"], money_rows, name_cols=2, css_class="pinned-money")
            + "</section>")
