"""A static, self-contained HTML report of one view of a data set, and CSV exports of its tables.

Exports are the screen: :func:`build_report` takes the whole :class:`costdash.view.View` and
reports what the Explore page shows for it -- only the ticked classifiers, the choice and the
money figures under its conditions, volume and unit (written as the page writes them), its
sensitivity ranges and constraints, the bands with their settings -- plus a "View" section
listing every setting and a link that opens the same view in the dashboard.

:func:`build_report` returns ONE HTML file: plotly.js is embedded inline once (with the first
figure), there is no CDN link and no external CSS or JS, so the file opens offline and can be
mailed around. Every user-provided string (classifier names, file names, the title) is
HTML-escaped; the figures' JSON is escaped by plotly (``<``, ``>`` and ``/`` become unicode
escapes), so a name like ``<script>...</script>`` renders as text.

:func:`csv_exports` gives the hull, the lower envelope and the operating ranges as CSV texts.
Text cells starting with ``=``, ``+``, ``-``, ``@`` (or a tab / carriage return) get a leading
``'`` so spreadsheets do not run them as formulas.

Imports plotly: the core (``costdash``) imports this module only lazily.
"""

from __future__ import annotations

import csv
import datetime as _dt
import io
import math
import re
from collections.abc import Iterable, Mapping, Sequence
from html import escape
from typing import Any

import numpy as np
import plotly.graph_objects as go
import plotly.io as pio

from costdash.analysis import Analysis, analyze, threshold_text
from costdash.bands import CostBand
from costdash.conditions import OperatingCondition
from costdash.criteria import (
    MixedOperatingPoint,
    neyman_pearson,
    sensitivity,
    workforce,
)
from costdash.curves import (capacity_on_gains, curve_point, gains_curve, iso_f1, pr_curve,
                             pr_hull, reliability, score_histograms)
from costdash.dataset import CountedClassifier, Dataset
from costdash.errors import CostdashError
from costdash.hull import ALL_NEGATIVE, ALL_POSITIVE
from costdash.pinned import pin_threshold, point_metrics
from costdash.roc import RocCurve, thin_indices
from costdash.view import VIEW_FIELDS, View, ViewField, number_text
from dashboard.figures.bands import band_figure
from dashboard.figures.cost import cost_figure
from dashboard.figures.curves import (Mark, gains_figure, histogram_figure, pr_figure,
                                      reliability_figure)
from dashboard.figures.roc import roc_figure
from dashboard.viewmodel import build_view_model, restrict_view_model

__all__ = [
    "CSV_NAMES",
    "build_report",
    "constraint_points",
    "csv_exports",
    "report_view",
    "safe_cell",
    "view_rows",
]

CSV_NAMES = ("hull", "envelope", "operating_ranges")
"""Names (without ``.csv``) of the files :func:`csv_exports` returns."""

REPORT_MAX_POINTS = 400
"""Each ROC curve is thinned to at most this many points in the report's figures."""

CHOSEN_COLOR = "#d62728"
FIGURE_SIZE = (530, 560)
"""Width and height of each figure in pixels (fixed: the report is also printed)."""

_FORMULA_START = ("=", "+", "-", "@", "\t", "\r")

_CSS = """
body{font-family:-apple-system,"Segoe UI",Roboto,Helvetica,Arial,sans-serif;margin:24px auto;
max-width:1100px;color:#222;padding:0 16px}
h1{font-size:1.6em;margin-bottom:.2em}h2{font-size:1.2em;margin-top:1.6em;border-bottom:1px solid #ddd}
table{border-collapse:collapse;margin:.5em 0;font-size:.92em}
th,td{border:1px solid #ddd;padding:3px 8px;text-align:right}
th{background:#f4f4f4}td.name,th.name{text-align:left}
dl.meta{display:grid;grid-template-columns:max-content auto;gap:2px 16px;margin:.6em 0}
dl.meta dt{font-weight:600}dl.meta dd{margin:0}
.figs{display:flex;flex-wrap:wrap;gap:16px}.fig{flex:0 0 auto}
.chosen{font-size:1.05em;background:#fff7e6;border:1px solid #f0d9a8;padding:8px 12px}
footer{margin-top:2em;color:#888;font-size:.85em}
"""


# --- formatting -----------------------------------------------------------------------------------
#
# The readouts are written as the Explore page writes them (assets/explore.js: fmtNum, friendly,
# percent), so the report and the screen show the same text for the same view.

def _e(value: object) -> str:
    return escape(str(value), quote=True)


def _num(value: float | None, digits: int = 4) -> str:
    if value is None:
        return "–"
    value = float(value)
    if math.isnan(value):
        return "–"
    if math.isinf(value):
        return "∞" if value > 0 else "−∞"
    return f"{value:.{digits}g}"


def _threshold(value: float | None) -> str:
    """A threshold that never reads as another one (``0.499996`` is not ``0.5``)."""
    return threshold_text(value)


def readout(value: float | None, sig: int = 4) -> str:
    """A number as the Explore page's readouts show it: at least ``sig`` significant digits,
    fixed point from 1e-4 to 1e15, else an exponent (``0.09091``, ``10.00``, ``1.000e-6``)."""
    if value is None or math.isnan(value):
        return "–"
    if math.isinf(value):
        return "inf" if value > 0 else "-inf"
    if value == 0:
        return f"{0:.{sig - 1}f}"
    magnitude = abs(value)
    if 1e-4 <= magnitude < 1e15:
        decimals = min(max(sig - 1 - math.floor(math.log10(magnitude)), 0), 100)
        return f"{value:.{decimals}f}"
    # JavaScript's toExponential: no "+0" padding of the exponent ("1.000e-6", "1.000e+20").
    return re.sub(r"e([+-])0*(\d)", r"e\1\2", f"{value:.{sig - 1}e}")


def friendly(value: float | None) -> str:
    """A count or sum for sentences: 3 significant digits with thousands separators."""
    if value is None or not math.isfinite(value):
        return "–"
    if value != 0 and abs(value) < 0.001:
        return re.sub(r"e([+-])0*(\d)", r"e\1\2", f"{value:.2e}")
    rounded = float(f"{value:.3g}")
    return f"{int(rounded):,}" if rounded.is_integer() else f"{rounded:,}"


def percent(fraction: float) -> str:
    value = 100 * fraction
    return (f"{value:.0f}" if abs(value) >= 10 else f"{value:.1f}") + "%"


def _with_unit(text: str, unit: str) -> str:
    return f"{text} {unit}" if unit else text


def _vertex_name(name: str) -> str:
    return {ALL_NEGATIVE: "flag nothing", ALL_POSITIVE: "flag everything"}.get(name, name)


def _table(headers: Sequence[str], rows: Iterable[Sequence[str]], *, name_cols: int = 1,
           css_class: str = "") -> str:
    """An HTML table; cells must already be escaped HTML. The first ``name_cols`` are left-aligned."""
    head = "".join(f'<th class="name">{h}</th>' if i < name_cols else f"<th>{h}</th>"
                   for i, h in enumerate(headers))
    body = "".join(
        "<tr>" + "".join(f'<td class="name">{c}</td>' if i < name_cols else f"<td>{c}</td>"
                         for i, c in enumerate(row)) + "</tr>"
        for row in rows)
    cls = f' class="{css_class}"' if css_class else ""
    return f"<table{cls}><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>"


def _meta(items: Iterable[tuple[str, str]], css_class: str = "meta") -> str:
    """A definition list; keys and values must already be escaped HTML."""
    return (f'<dl class="{css_class}">' + "".join(f"<dt>{k}</dt><dd>{v}</dd>" for k, v in items)
            + "</dl>")


# --- figures --------------------------------------------------------------------------------------

def _report_figures(dataset: Dataset, analysis: Analysis, name: str,
                    view: View) -> tuple[go.Figure, go.Figure]:
    """The dashboard's ROC and cost figures of the ticked classifiers, as Explore draws them,
    with the chosen operating point drawn in."""
    model = build_view_model(dataset, dataset_id="report", name=name,
                             max_points=REPORT_MAX_POINTS)
    selected = [c.name for c in analysis.classifiers]
    if selected != [c["name"] for c in model["classifiers"]]:
        # The overall hull of the ticked classifiers, from the same packed hulls as the page's.
        model = restrict_view_model(model, selected)
    roc, cost = roc_figure(model), cost_figure(model, lines=view.lines)
    op = analysis.operating_point
    v, cond = op.vertex, op.condition
    roc.add_trace(go.Scatter(
        x=np.array([v.fpr]), y=np.array([v.tpr]), mode="markers", name="chosen operating point",
        uid="chosen", marker={"size": 13, "color": CHOSEN_COLOR, "symbol": "star"},
        hovertemplate="chosen<br>FPR %{x:.4f}<br>TPR %{y:.4f}<extra></extra>"))
    cost.add_trace(go.Scatter(
        x=np.array([cond.pc]), y=np.array([op.normalized_cost]), mode="markers",
        name="chosen operating point", uid="chosen",
        marker={"size": 13, "color": CHOSEN_COLOR, "symbol": "star"},
        hovertemplate="chosen<br>PC(+) %{x:.4f}<br>cost %{y:.4f}<extra></extra>"))
    cost.add_vline(x=cond.pc, line={"color": CHOSEN_COLOR, "width": 1, "dash": "dot"})
    for fig in (roc, cost):
        fig.update_layout(autosize=False, width=FIGURE_SIZE[0], height=FIGURE_SIZE[1])
    return roc, cost


def _figure_html(fig: go.Figure, first: bool, div_id: str) -> str:
    return pio.to_html(fig, include_plotlyjs=bool(first), full_html=False, div_id=div_id,
                       config={"displaylogo": False})


def _bands_list(bands: Any) -> list[CostBand]:
    if bands is None:
        return []
    if isinstance(bands, CostBand):
        return [bands]
    if isinstance(bands, Mapping):
        return list(bands.values())
    return list(bands)


# --- the view -------------------------------------------------------------------------------------

CLASSIFIER_FIELDS = ("model", "a", "b")
"""View fields naming one classifier (the Confidence, Folds and Compare pages' choices)."""


def report_view(view: View, names: Sequence[str]) -> View:
    """The view a report of these ticked classifiers shows and links to.

    Another page's choice of a classifier that is not ticked (``model``, ``a``, ``b``) is left
    out: the report holds nothing of unticked classifiers, not even their names.
    """
    ticked = set(view.selected(list(names)))
    dropped = [f for f in CLASSIFIER_FIELDS
               if getattr(view, f) is not None and getattr(view, f) not in ticked]
    view = view.without(*dropped) if dropped else view
    if view.pins and any(name not in ticked for name, _ in view.pins):
        kept = tuple(pin for pin in view.pins if pin[0] in ticked)
        view = view.with_values(pins=list(kept) or None)
    return view


def _field_text(f: ViewField, value: Any) -> str:
    """A view field's value in the user's terms (numbers exactly as the link carries them)."""
    if f.kind == "names":
        return ", ".join(value)
    if f.kind == "range":
        low, high = f.format(value).split(",")
        return f"{low} to {high}"
    if f.kind == "flag":
        return "yes" if value else "no"
    return f.format(value)


def view_rows(view: View, prevalence: float) -> list[tuple[str, str]]:
    """Every set field of ``view`` as (label, value) in the user's terms; p(+) is always there
    (the data's prevalence when the view leaves it unset)."""
    rows = []
    query = view.to_query()
    for f in VIEW_FIELDS:
        if f.name == "p_pos" and view.p_pos is None:
            rows.append((f.label, f"{f.format(prevalence)} (the data's prevalence)"))
        elif f.name in query:
            rows.append((f.label, _field_text(f, getattr(view, f.name))))
    return rows


def _view_section(view: View, prevalence: float, dashboard_url: str | None) -> str:
    path = "/explore" + view.to_search()
    # A downloaded report is opened from disk: only an absolute address leads back.
    link = (f'<p><a id="open-view" href="{_e(dashboard_url.rstrip("/") + path)}">Open this '
            "view in the dashboard</a></p>" if dashboard_url else
            f'<p id="open-view">On a costdash dashboard this view is <code>{_e(path)}</code>.</p>')
    return ('<section id="view"><h2>View</h2>'
            '<p>Everything set on the dashboard for this report; the figures below follow '
            'from it.</p>'
            + _meta(((_e(k), _e(v)) for k, v in view_rows(view, prevalence)), "meta view")
            + link + "</section>")


# --- the Explore page's readouts ------------------------------------------------------------------

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
    saving = ("0% (a trivial choice is best)" if trivial_chosen
              else f"{percent(cond.saving_vs_trivial(op.normalized_cost))} less than "
                   f"{trivial_label}")
    rows = [
        ("expected cost per case", "expected-cost", _with_unit(readout(per_case), unit)),
        (f"cost per period ({friendly(volume) if volume else '–'} cases)", "period-cost",
         "–" if volume is None else _with_unit(readout(per_case * volume), unit)),
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
    parts.append(f'<p id="sentence">{_e(_sentence(v, money, per, saving, trivial_label))}</p>')
    parts.append("</section>")
    return "".join(parts)


def _sentence(v: Any, money: str, per: str, saving: str, trivial_label: str) -> str:
    if v.classifier == ALL_NEGATIVE:
        return (f"At these costs no classifier beats flagging nothing: {money} {per}, all of it "
                "missed positives.")
    if v.classifier == ALL_POSITIVE:
        return f"At these costs, flag everything: {money} {per}, all of it false alarms."
    return (f"At these costs, use {v.classifier} with threshold {_threshold(v.threshold)}: "
            f"{money} {per}, {saving}.")


def _point_ranges(view: View, cond: OperatingCondition) -> tuple[tuple[float, float], ...]:
    """The sensitivity ranges of p(+), C(−|+), C(+|−); one left unset is the point value."""
    return (view.sens_p or (cond.p_pos,) * 2, view.sens_fn or (cond.cost_fn,) * 2,
            view.sens_fp or (cond.cost_fp,) * 2)


def _sensitivity_section(analysis: Analysis, view: View) -> str:
    if view.sens_p is None and view.sens_fn is None and view.sens_fp is None:
        return ""
    cond = analysis.operating_point.condition
    p, fn, fp = _point_ranges(view, cond)
    result = sensitivity(analysis.hull, p, fn, fp)
    ranges = [("p(+)", p, view.sens_p), ("C(−|+)", fn, view.sens_fn),
              ("C(+|−)", fp, view.sens_fp)]
    items = [(label, f"{_num(lo)} to {_num(hi)}" if given else f"{_num(lo)} (fixed)")
             for label, (lo, hi), given in ranges]
    hull = analysis.hull
    rows = [[_e(_vertex_name(hull.classifier[i])), _e(_threshold(hull.threshold[i])),
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


def _describe_mixed(point: MixedOperatingPoint) -> str:
    """A constrained operating point in words, as the page says it."""
    def one(name: str, threshold: float) -> str:
        return _vertex_name(name) + ("" if not math.isfinite(threshold)
                                     else f" (score ≥ {_threshold(threshold)})")

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
            f"{label}: {_describe_mixed(point)} (FPR {readout(point.fpr, 3)}, TPR "
            f"{readout(point.tpr, 3)}); obeying it costs {extra_text} more than the best "
            f"choice{share}.") + "</p>")
    parts.append("</section>")
    return "".join(parts)


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
        counts = ["–"] * 4 if volume is None else [friendly(x) for x in (m.tp, m.fn, m.fp, m.tn)]
        head = [_e(name), _e(_threshold(threshold))]
        counts_rows.append(head + [readout(pin.fpr), readout(pin.tpr), *counts]
                           + [readout(x) if math.isfinite(x) else "–"
                              for x in (m.precision, m.recall, m.specificity, m.npv, m.f1)])
        money_rows.append(head + [
            _e(money(m.expected_cost)),
            "–" if volume is None else _e(money(m.period_cost)),
            _e(money(m.regret) + " per case" if volume is None else money(m.period_regret)),
            percent(m.regret_share) if math.isfinite(m.regret_share) else "–",
            _e(_pc_interval(pin.optimal_pc, "never (under its ROC hull)")),
            _e(_pc_interval(pin.beats_trivial_pc, "nowhere")),
            f"TP {pin.tp}, FN {pin.fn}, FP {pin.fp}, TN {pin.tn}"])
    per = "per period" if volume is None else f"per period ({friendly(volume)} cases)"
    return ('<section id="pinned"><h2>Pinned thresholds</h2>'
            "<p>Thresholds in use (a case is flagged when its score ≥ the threshold), at this "
            "view's conditions; the regret is what each costs more than the chosen operating "
            "point. Precision and NPV are at the view's p(+).</p>"
            + _table(["classifier", "threshold (score ≥)", "FPR", "TPR", f"TP {per}", "FN",
                      "FP", "TN", "precision", "recall", "specificity", "NPV", "F1"],
                     counts_rows, name_cols=2, css_class="pinned")
            + _table(["classifier", "threshold (score ≥)", "cost per case", "cost per period",
                      "regret per period", "regret share",
                      "optimal for its classifier at PC(+)", "beats both trivial at PC(+)",
                      "test set"], money_rows, name_cols=2, css_class="pinned-money")
            + "</section>")


# --- curves (the Curves page) ----------------------------------------------------------------------

CURVES_HIST_BINS = 40
CURVES_REL_BINS = 10


def _thinned(roc: RocCurve) -> RocCurve:
    idx = thin_indices(roc.size, REPORT_MAX_POINTS)
    return RocCurve(name=roc.name, tp=roc.tp[idx], fp=roc.fp[idx], threshold=roc.threshold[idx],
                    n_pos=roc.n_pos, n_neg=roc.n_neg)


def _curves_section(dataset: Dataset, analysis: Analysis, view: View) -> str:
    """The Curves page for this view: precision–recall (with the hull mapped into PR space and
    iso-F1 lines), gains and lift with the capacity, the score distributions of one classifier
    and the reliability diagram, with the chosen and pinned thresholds and their readouts
    (core: :mod:`costdash.curves`)."""
    op = analysis.operating_point
    cond, v = op.condition, op.vertex
    selected = [c.name for c in analysis.classifiers]
    index = {n: i for i, n in enumerate(dataset.names)}
    # At the data's prevalence precision is the test set's own TP / (TP + FP), as on the page.
    prior_arg = None if view.p_pos in (None, dataset.prevalence) else cond.p_pos
    rocs = [_thinned(c.roc) for c in analysis.classifiers]
    prs = [pr_curve(r, p_pos=prior_arg) for r in rocs]
    prior = prs[0].prior
    marks = [Mark("current choice", v.classifier, v.threshold, v.fpr, v.tpr)]
    for k, (name, threshold) in enumerate(view.pins or ()):
        try:
            pin = pin_threshold(analysis.classifier(name).roc, threshold)
        except (KeyError, CostdashError):
            continue                      # said in the pinned-thresholds section
        marks.append(Mark(f"pin {k + 1}", name, threshold, pin.fpr, pin.tpr, slot=k))
    capacity_share = capacity_point = None
    if view.capacity is not None and view.volume > 0:
        try:
            on_gains = capacity_on_gains(analysis.hull, p_pos=cond.p_pos, volume=view.volume,
                                         capacity=view.capacity)
            capacity_share, capacity_point = on_gains.share, (on_gains.flagged, on_gains.caught)
        except CostdashError:
            pass                          # said in the constraints section
    pr = pr_figure(prs, index, hull=pr_hull(analysis.hull, n_pos=dataset.n_pos,
                                             n_neg=dataset.n_neg, p_pos=prior_arg, per_edge=32),
                   iso=iso_f1(), marks=marks)
    gains = gains_figure([gains_curve(r, p_pos=prior_arg) for r in rocs], index,
                         capacity_share=capacity_share, capacity_point=capacity_point,
                         marks=marks)
    shown = (view.model if view.model in selected
             else v.classifier if v.classifier in selected else selected[0])
    scored = {c.name: c for c in dataset.scored}
    if shown in scored:
        c = scored[shown]
        hist = histogram_figure(score_histograms(c.y_true, c.score, bins=CURVES_HIST_BINS,
                                                 weight=c.count, name=shown), marks=marks)
    else:
        hist = histogram_figure(None, message=f"{shown} was given as confusion matrices: no "
                                              "scores to show.")
    rels, refused = [], {}
    for name in selected:
        c = dataset.classifier(name)
        if isinstance(c, CountedClassifier):
            refused[name] = "given as confusion matrices"
            continue
        try:
            rels.append(reliability(c.y_true, c.score, bins=CURVES_REL_BINS, weight=c.count,
                                    name=name))
        except CostdashError as exc:
            refused[name] = str(exc)
    rel = reliability_figure(rels, index, refused=refused)
    for fig in (pr, gains, hist, rel):
        fig.update_layout(autosize=False, width=FIGURE_SIZE[0], height=FIGURE_SIZE[1])
    at = ("on the test set's counts" if prior_arg is None
          else f"at p(+) = {readout(prior)}")
    volume = view.volume if view.volume > 0 else 0.0
    rows = []
    for m in marks:
        p = curve_point(m.fpr, m.tpr, prior=prior)
        rows.append([_e(m.label), _e(_vertex_name(m.classifier)), _e(_threshold(
            None if math.isnan(m.threshold) else m.threshold))]
            + [readout(x) if math.isfinite(x) else "–" for x in (p.recall, p.precision, p.f1)]
            + [percent(p.flagged), friendly(p.flagged * volume),
               readout(p.lift) if math.isfinite(p.lift) else "–"])
    brier = [[_e(r.name), readout(r.brier)] for r in rels] + \
        [[_e(n), _e(why)] for n, why in refused.items()]
    capacity = ("" if capacity_point is None else
                f"<p>Within the capacity ({percent(capacity_share)} of cases) the hull catches "
                f"at most {percent(capacity_point[1])} of positives.</p>")
    return ('<section id="curves"><h2>Precision–recall, gains, scores and calibration</h2>'
            f"<p>Where the chosen and pinned thresholds land on the curves people expect. "
            f"Precision is {_e(at)}; between two ROC hull vertices the dashed curve mixes the "
            "two (true and false positives move together linearly, so precision is not a "
            "straight line in PR space). The score distributions are "
            f"{_e(shown)}'s.</p>"
            + _table(["", "classifier", "threshold (score ≥)", "recall", "precision", "F1",
                      "flagged", "flagged per period", "lift"], rows, name_cols=3,
                     css_class="curves")
            + capacity
            + _table(["classifier", "Brier score"], brier, css_class="brier")
            + '<div class="figs">'
            + "".join(f'<div class="fig">{_figure_html(fig, False, f"curves-{key}-figure")}'
                      "</div>" for key, fig in (("pr", pr), ("gains", gains), ("hist", hist),
                                                ("rel", rel)))
            + "</div></section>")


# --- beyond the envelope (the Threshold choice page) ----------------------------------------------

CHOICE_MAX_POINTS = 2000
"""Each threshold-choice curve is thinned to at most this many points (as on the page)."""


def _choice_section(dataset: Dataset, view: View) -> str:
    """The Threshold choice page for this view: what each way of choosing thresholds costs
    (curves, expected losses, named gaps, H-measure and Brier score by AUC), decision curves
    with the view's pₜ, and the robust choices over its sensitivity box
    (:func:`costdash.choice_summary.choice_summary_of_view`)."""
    from costdash.choice_summary import choice_summary_of_view
    from dashboard.figures.choice import decision_curve_figure, threshold_choice_figure

    summary = choice_summary_of_view(dataset, view, max_points=CHOICE_MAX_POINTS)
    index = {n: i for i, n in enumerate(dataset.names)}
    robust = summary["robust"]
    cond = summary["conditions"]
    cost = threshold_choice_figure(summary["classifiers"], index, pc_now=cond["pc"],
                                   box_pc=None if robust is None else robust["pc_range"])
    cost.update_layout(autosize=False, width=2 * FIGURE_SIZE[0] + 16)
    dca = decision_curve_figure(summary["decision_curves"], index)
    dca.update_layout(autosize=False, width=2 * FIGURE_SIZE[0] + 16, height=FIGURE_SIZE[1])
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


# --- the report -----------------------------------------------------------------------------------

def build_report(dataset: Dataset, condition: OperatingCondition | None = None, *,
                 view: View | None = None, title: str | None = None, bands: Any = None,
                 name: str | None = None, generated: _dt.datetime | None = None,
                 dashboard_url: str | None = None) -> str:
    """One self-contained HTML file reporting ``dataset`` as the Explore page shows it.

    Parameters
    ----------
    dataset : Dataset
    condition : OperatingCondition or None
        The operating conditions, for a report of every classifier with the view's other
        defaults; None means the data's prevalence with unit costs. Give either this or
        ``view``.
    view : View, optional
        The whole view (:class:`costdash.view.View`): its ticked classifiers (the report holds
        no other), conditions, volume and unit (the money figures), sensitivity ranges,
        constraints and band settings. Its conditions mean what they mean on the page
        (:meth:`~costdash.view.View.condition` with the whole data set's prevalence).
    title : str, optional
        The page title (default: "costdash report: <name>").
    bands : CostBand, sequence or mapping of CostBand, optional
        Bootstrap cost bands (:func:`costdash.bands.cost_band`) to show, one figure each; with
        a ``view``, they are taken to be computed with its seed and threshold.
    name : str, optional
        The data set's display name (default ``dataset.source``), e.g. the uploaded file's name.
    generated : datetime, optional
        The date shown in the header (default: now, UTC).
    dashboard_url : str, optional
        The dashboard's root address: the report then links back to this view on it.

    Raises
    ------
    ParameterError
        The view ticks a classifier the data set does not have (naming it).
    """
    band_settings_known = view is not None
    if view is not None and condition is not None:
        raise TypeError("give the conditions in the view or as condition, not both")
    if view is None:
        view = View()
        if condition is not None:
            view = view.with_values(p_pos=condition.p_pos, cost_fn=condition.cost_fn,
                                    cost_fp=condition.cost_fp)
    prevalence = dataset.prevalence
    analysis = analyze(dataset, view.condition(prevalence), models=view.models)
    selected = [c.name for c in analysis.classifiers]
    view = report_view(view, selected)
    name = name or dataset.source
    title = title or f"costdash report: {name}"
    when = (generated or _dt.datetime.now(_dt.timezone.utc)).strftime("%Y-%m-%d %H:%M %Z").strip()
    op = analysis.operating_point
    cond, v = op.condition, op.vertex
    on_hull = set(analysis.hull.classifier)
    n_all = len(dataset.names)

    parts: list[str] = [
        "<!DOCTYPE html>", '<html lang="en"><head><meta charset="utf-8">',
        '<meta name="viewport" content="width=device-width, initial-scale=1">',
        f"<title>{_e(title)}</title><style>{_CSS}</style></head><body>",
        f"<h1>{_e(title)}</h1>",
    ]

    meta = [
        ("Data set", _e(name)),
        ("Examples (n)", f"{dataset.n:,}"),
        ("Positives", f"{dataset.n_pos:,} (label {_e(dataset.positive_label)}; prevalence "
                      f"{_num(prevalence)})"),
        ("Negatives", f"{dataset.n_neg:,}"),
        ("Classifiers", f"{len(selected)}" if len(selected) == n_all
         else f"{len(selected)} of {n_all} (the ticked ones)"),
        ("Generated", _e(when)),
        ("p(+)", _num(cond.p_pos)),
        ("C(−|+) (false negative)", _num(cond.cost_fn)),
        ("C(+|−) (false positive)", _num(cond.cost_fp)),
        ("PC(+)", _num(cond.pc)),
        ("Iso-performance slope", _num(cond.slope)),
    ]
    parts.append('<section id="header">' + _meta(meta) + "</section>")
    parts.append(_view_section(view, prevalence, dashboard_url))

    parts.append('<section id="operating-point"><h2>Chosen operating point</h2>'
                 f'<p class="chosen">Use <b class="chosen-classifier">{_e(v.classifier)}</b> at '
                 f'threshold <b class="chosen-threshold">{_e(_threshold(v.threshold))}</b>.</p>')
    parts.append(_table(
        ["classifier", "threshold", "FPR", "TPR", "normalized expected cost",
         "expected cost per example"],
        [[_e(v.classifier), _e(_threshold(v.threshold)), _num(v.fpr), _num(v.tpr),
          _num(op.normalized_cost), _num(op.expected_cost)]], css_class="operating-point"))
    parts.append("</section>")
    parts.append(_money_section(analysis, view))
    parts.append(_sensitivity_section(analysis, view))
    parts.append(_constraints_section(analysis, view))
    parts.append(_pinned_section(analysis, view))

    roc, cost = _report_figures(dataset, analysis, name, view)
    parts.append('<section id="figures"><h2>ROC space and cost space</h2><div class="figs">'
                 f'<div class="fig">{_figure_html(roc, True, "roc-figure")}</div>'
                 f'<div class="fig">{_figure_html(cost, False, "cost-figure")}</div>'
                 "</div></section>")

    rows = []
    for c in analysis.classifiers:
        rng = c.operating_range
        rows.append([_e(c.name), _num(c.roc.auc), _num(rng[0]) if rng else "none",
                     _num(rng[1]) if rng else "none", _num(c.cost_area),
                     "yes" if c.name in on_hull else "no"])
    parts.append('<section id="classifiers"><h2>Classifiers</h2>'
                 + _table(["classifier", "AUC", "operating range from PC(+)", "to PC(+)",
                           "cost area", "on hull"], rows, css_class="classifiers")
                 + "</section>")

    hull = analysis.hull
    parts.append('<section id="hull"><h2>ROC convex hull vertices</h2>'
                 + _table(["classifier", "threshold", "FPR", "TPR"],
                          [[_e(n), _e(_threshold(t)), _num(f), _num(tp)]
                           for f, tp, n, t in zip(hull.fpr, hull.tpr, hull.classifier,
                                                  hull.threshold)], css_class="hull")
                 + "</section>")

    parts.append(_curves_section(dataset, analysis, view))
    parts.append(_choice_section(dataset, view))

    # Bands of unticked classifiers are not this view's (nor the report's) business.
    band_list = [b for b in _bands_list(bands) if b.name in set(selected)]
    if band_list:
        parts.append(_bands_section(band_list, analysis, dataset.names,
                                    view if band_settings_known else None))

    parts.append("<footer>Made with costdash. Operating ranges and cost areas are in PC(+) "
                 "(probability × cost); cost area is the expected normalized cost for PC(+) "
                 "uniform on [0, 1].</footer></body></html>")
    return "\n".join(p for p in parts if p)


def _band_threshold_cell(b: CostBand) -> str:
    if b.threshold is not None:
        return _e(_threshold(b.threshold))
    if b.kind == "selected":
        return ("picked per PC(+) on a held-out half" if b.selection == "split"
                else "picked per PC(+) on validation rows")
    return "one matrix" if b.kind == "line" else "whole curve"


def _band_replicates_cell(b: CostBand) -> str:
    if b.replicates == 0:
        return "– (closed form)"
    if b.inner_replicates:
        return f"{b.replicates:,} × {b.inner_replicates:,}"
    return f"{b.replicates:,}"


def _bands_section(band_list: list[CostBand], analysis: Analysis, names: Sequence[str],
                   view: View | None) -> str:
    """The bands' settings and figures (``view``: the seed they were computed with). A level
    only for a calibrated band (the others are resampling spreads); each band's label and the
    question it answers (``estimand``)."""
    index = {n: i for i, n in enumerate(names)}   # colours by position in the whole data set
    headers = ["classifier", "kind", "threshold", "method", "level", "replicates"]
    rows = [[_e(b.name), _e(b.kind), _band_threshold_cell(b), _e(b.method),
             _num(b.level) if b.calibrated else "none (a spread)", _band_replicates_cell(b)]
            for b in band_list]
    if view is not None:
        headers.append("seed")
        rows = [[*row, f"{view.seed}"] for row in rows]
    headers.append("band")
    rows = [[*row, _e(b.label)] for row, b in zip(rows, band_list)]
    pc = analysis.operating_point.condition.pc if view is None or view.pc is None else view.pc
    estimands = "".join(f'<li><b>{_e(b.name)}</b>: {_e(b.estimand)}</li>' for b in band_list)
    parts = ['<section id="bands"><h2>Cost bands</h2>',
             _table(headers, rows, css_class="bands"),
             '<p>What each band is a band for:</p>',
             f'<ul class="estimands">{estimands}</ul>', '<div class="figs">']
    for j, b in enumerate(band_list):
        fig = band_figure(b, name=b.name, index=index.get(b.name, j),
                          envelope=analysis.classifier(b.name).envelope, pc=pc)
        fig.update_layout(autosize=False, width=FIGURE_SIZE[0], height=FIGURE_SIZE[1])
        parts.append(f'<div class="fig">{_figure_html(fig, False, f"band-figure-{j}")}</div>')
    parts.append("</div></section>")
    return "".join(parts)


# --- CSV exports ----------------------------------------------------------------------------------

def safe_cell(value: object) -> str:
    """A text cell for a spreadsheet: a leading ``'`` when it would be read as a formula."""
    text = "" if value is None else str(value)
    return "'" + text if text.startswith(_FORMULA_START) else text


def _float_cell(value: float | None) -> str:
    if value is None:
        return ""
    value = float(value)
    return repr(value) if math.isfinite(value) else ""


def _csv(header: Sequence[str], rows: Iterable[Sequence[str]]) -> str:
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow(header)
    writer.writerows(rows)
    return out.getvalue()


def csv_exports(analysis: Analysis) -> dict[str, str]:
    """CSV texts of an analysis: ``hull.csv``, ``envelope.csv`` and ``operating_ranges.csv``.

    Numbers are written exactly (``repr`` of the float); a missing threshold or operating range
    is an empty cell. Text cells are guarded against formula injection (:func:`safe_cell`).
    """
    hull = analysis.hull
    env = analysis.envelope
    on_hull = set(hull.classifier)
    ranges = []
    for c in analysis.classifiers:
        rng = c.operating_range
        ranges.append([safe_cell(c.name), _float_cell(rng[0]) if rng else "",
                       _float_cell(rng[1]) if rng else "", _float_cell(c.roc.auc),
                       _float_cell(c.cost_area), "true" if c.name in on_hull else "false"])
    return {
        "hull.csv": _csv(["fpr", "tpr", "classifier", "threshold"],
                         [[_float_cell(f), _float_cell(t), safe_cell(n), _float_cell(thr)]
                          for f, t, n, thr in zip(hull.fpr, hull.tpr, hull.classifier,
                                                  hull.threshold)]),
        "envelope.csv": _csv(["pc", "cost"], [[_float_cell(p), _float_cell(c)]
                                              for p, c in zip(env.pc, env.cost)]),
        "operating_ranges.csv": _csv(["classifier", "lo", "hi", "auc", "cost_area", "on_hull"],
                                     ranges),
    }
