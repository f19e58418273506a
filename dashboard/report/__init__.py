"""A static, self-contained HTML report of one view of a data set, and CSV exports of its tables.

Exports are the screen: :func:`build_report` takes the whole :class:`costdash.view.View` and
reports what the Explore page shows for it -- only the ticked classifiers, the choice and the
money figures under its conditions, volume and unit (written as the page writes them), its
sensitivity ranges and constraints, the bands with their settings -- plus a "View" section
listing every setting and a link that opens the same view in the dashboard.

:func:`build_report` returns ONE HTML file: by default plotly.js is embedded inline once (with
the first figure), there is no CDN link and no external CSS or JS, so the file opens offline and
can be mailed around. With ``plotly_src`` (the dashboard's report route gives its own plotly.js,
:func:`dashboard.report.format.plotly_js_url`) the file loads plotly.js from there instead: 5 MB
smaller, the figures drawn wherever that server is reachable, and a note saying where the
standalone file is when it is not. Every user-provided string (classifier names, file names, the title) is
HTML-escaped; the figures' JSON is escaped by plotly (``<``, ``>`` and ``/`` become unicode
escapes), so a name like ``<script>...</script>`` renders as text.

:func:`csv_exports` gives the hull, the lower envelope and the operating ranges as CSV texts.
Text cells starting with ``=``, ``+``, ``-``, ``@`` (or a tab / carriage return) get a leading
``'`` so spreadsheets do not run them as formulas.

The sections are built in modules of their own, all re-exported here where public:
:mod:`dashboard.report.format` (numbers written as the page writes them -- ``readout``,
``friendly``, ``percent`` --, HTML tables, figure size and embedding),
:mod:`dashboard.report.readouts` (the Explore page's readouts: money, sensitivity, constraints,
pinned thresholds), :mod:`dashboard.report.curves` (the Curves section) and
:mod:`dashboard.report.choice` (the Threshold choice section). This module keeps the header, the
view, the figures, the classifiers and hull tables, the bands and the CSV exports.

Imports plotly: the core (``costdash``) imports this module only lazily.
"""

from __future__ import annotations

import csv
import datetime as _dt
import io
import math
import threading
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import replace
from typing import Any

import numpy as np
import plotly.graph_objects as go

from costdash.analysis import Analysis, analyze, choose
from costdash.bands import CostBand
from costdash.conditions import OperatingCondition
from costdash.dataset import Dataset
from costdash.view import VIEW_FIELDS, View, ViewField
from dashboard.figures.bands import band_figure
from dashboard.figures.axes import fpr_floor, log_fpr, log_odds
from dashboard.figures.cost import cost_figure
from dashboard.figures.ranges import ranges_figure
from dashboard.figures.roc import roc_figure
from dashboard.report.choice import _choice_section, _threshold_money_section
from dashboard.report.curves import _curves_section, calibrations_started
from dashboard.report.format import (CHOSEN_COLOR, REPORT_MAX_POINTS, _e, _exact_title,
                                     _figure_html, _meta, _num, _table, _threshold,
                                     plotly_missing_note, plotly_script,
                                     _threshold_html, friendly, percent,
                                     readable_threshold_text, readout, sized)
from dashboard.report.readouts import (_constraints_section, _money_section, _pinned_section,
                                       _sensitivity_section, constraint_points)
from dashboard.viewmodel import build_view_model, restrict_view_model

__all__ = [
    "CSV_NAMES",
    "build_report",
    "constraint_points",
    "csv_exports",
    "friendly",
    "percent",
    "readout",
    "report_points",
    "report_view",
    "safe_cell",
    "view_rows",
]

CSV_NAMES = ("hull", "envelope", "operating_ranges")
"""Names (without ``.csv``) of the files :func:`csv_exports` returns."""

_FORMULA_START = ("=", "+", "-", "@", "\t", "\r")

_NARROW_SCRIPT = (
    # On a phone the figures' desktop margins would leave a plot under 300 px wide; the axes'
    # automargin still makes room for their labels and titles. Under 700 px a figure of panels
    # gets its one-column layout (window.costdashNarrow, computed by the server: three panels
    # a row were ~95 px wide at 390 px), in the same relayout.
    '<script>window.addEventListener("load",function(){var w=window.innerWidth;'
    'if(!window.Plotly||w>=700)return;var narrow=window.costdashNarrow||{};'
    'document.querySelectorAll(".js-plotly-plot").forEach(function(gd){'
    'var u=Object.assign({},narrow[gd.id]||{});if(w<600){u["margin.l"]=32;u["margin.r"]=6;}'
    # The box around the figure is as tall as the wide layout (pio.to_html's wrapper): it
    # grows with the column, or the panels would cover what follows.
    'if(u.height)gd.parentElement.style.height=u.height+"px";'
    'if(Object.keys(u).length)Plotly.relayout(gd,u);});});</script>')

_CSS = """
body{font-family:-apple-system,"Segoe UI",Roboto,Helvetica,Arial,sans-serif;margin:24px auto;
max-width:1100px;color:#222;padding:0 16px}
h1{font-size:1.6em;margin-bottom:.2em}h2{font-size:1.2em;margin-top:1.6em;border-bottom:1px solid #ddd}
table{border-collapse:collapse;margin:.5em 0;font-size:.92em}
th,td{border:1px solid #ddd;padding:3px 8px;text-align:right}
th{background:#f4f4f4}td.name,th.name{text-align:left}
dl.meta{display:grid;grid-template-columns:max-content auto;gap:2px 16px;margin:.6em 0}
dl.meta dt{font-weight:600}dl.meta dd{margin:0}
.figs{display:flex;flex-wrap:wrap;gap:16px}.figs>.fig{flex:0 0 calc(50% - 8px);min-width:0}
code{overflow-wrap:anywhere}
@media (max-width:1000px){.figs>.fig{flex-basis:100%}}
@media (max-width:600px){body{margin:12px auto;padding:0 8px}table{display:block;overflow-x:auto}}
@media print{.fig{break-inside:avoid}}
.chosen{font-size:1.05em;background:#fff7e6;border:1px solid #f0d9a8;padding:8px 12px}
footer{margin-top:2em;color:#888;font-size:.85em}
.threshold,.chosen-threshold{white-space:nowrap}
"""


# --- figures --------------------------------------------------------------------------------------

def report_points(max_points: int | None) -> int:
    """Points per ROC curve of the report's view model (a read link's ``max_points`` at most)."""
    return min(REPORT_MAX_POINTS, max_points or REPORT_MAX_POINTS)


def _report_figures(dataset: Dataset, analysis: Analysis, name: str, view: View,
                    max_points: int | None = None, view_model: dict | None = None
                    ) -> tuple[go.Figure, go.Figure, go.Figure]:
    """The dashboard's ROC and cost figures and operating-ranges strip chart of the ticked
    classifiers, as Explore draws them under the view's axes and "hull classifiers only", with
    the chosen operating point drawn in (``view_model``: see :func:`build_report`)."""
    if view_model is not None:
        # The same packing as build_view_model's below; only the id and name are the report's.
        model = {**view_model, "id": "report", "name": name}
    else:
        model = build_view_model(dataset, dataset_id="report", name=name,
                                 max_points=report_points(max_points))
    selected = [c.name for c in analysis.classifiers]
    if selected != [c["name"] for c in model["classifiers"]]:
        # The overall hull of the ticked classifiers, from the same packed hulls as the page's.
        model = restrict_view_model(model, selected)
    floor = fpr_floor(dataset.n_neg)
    roc = roc_figure(model, log_fpr_scale=view.log_fpr, hull_only=view.hull_only)
    cost = cost_figure(model, lines=view.lines, log_pc_scale=view.log_pc,
                       hull_only=view.hull_only)
    ranges = ranges_figure(model, log_pc_scale=view.log_pc)
    op = analysis.operating_point
    v, cond = op.vertex, op.condition
    # On log axes the figures draw transformed coordinates; so does the chosen point.
    fpr_x = log_fpr(np.array([v.fpr]), floor) if view.log_fpr else np.array([v.fpr])
    pc_x = log_odds(np.array([cond.pc])) if view.log_pc else np.array([cond.pc])
    roc.add_trace(go.Scatter(
        x=fpr_x, y=np.array([v.tpr]), mode="markers", name="chosen operating point",
        uid="chosen", marker={"size": 13, "color": CHOSEN_COLOR, "symbol": "star"},
        hovertemplate="chosen<br>FPR %{x:.4f}<br>TPR %{y:.4f}<extra></extra>"))
    cost.add_trace(go.Scatter(
        x=pc_x, y=np.array([op.normalized_cost]), mode="markers",
        name="chosen operating point", uid="chosen",
        marker={"size": 13, "color": CHOSEN_COLOR, "symbol": "star"},
        hovertemplate="chosen<br>PC(+) %{x:.4f}<br>cost %{y:.4f}<extra></extra>"))
    for fig in (cost, ranges):
        fig.add_vline(x=float(pc_x[0]), line={"color": CHOSEN_COLOR, "width": 1, "dash": "dot"})
    sized(roc)
    sized(cost)
    sized(ranges, None)
    return roc, cost, ranges


def _bands_list(bands: Any) -> list[CostBand]:
    if bands is None:
        return []
    if isinstance(bands, CostBand):
        return [bands]
    if isinstance(bands, Mapping):
        return list(bands.values())
    return list(bands)


# --- what the dashboard already keeps ------------------------------------------------------------

_warm_lock = threading.Lock()
_warmed = False


def warm_figures() -> None:
    """Build two small reports in this process, once: plotly imports its figure classes and
    validators on first use, ~0.5 s that every report built in a fresh child process would
    otherwise pay again (the gate's children are forked from here and inherit them)."""
    global _warmed
    with _warm_lock:
        if _warmed:
            return
        from costdash.io import load_predictions

        rng = np.random.default_rng(0)
        y = rng.random(300) < 0.3
        table = "y_true,a,b\n" + "".join(
            f"{int(t)},{1 / (1 + math.exp(-u - 2 * t)):.4f},{1 / (1 + math.exp(-v - t)):.4f}\n"
            for t, u, v in zip(y, rng.normal(size=300), rng.normal(size=300)))
        data = load_predictions(io.BytesIO(table.encode()), name="warm.csv")
        for query in ({}, {"log_fpr": "1", "log_pc": "1", "max_fpr": "0.1", "volume": "100",
                           "capacity": "20", "sens_p": "0.2,0.4", "pins": "a:0.5"}):
            build_report(data, view=View.parse(query), plotly_src="/plotly.js")
        _warmed = True


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


# --- the report -----------------------------------------------------------------------------------

def build_report(dataset: Dataset, condition: OperatingCondition | None = None, *,
                 view: View | None = None, title: str | None = None, bands: Any = None,
                 name: str | None = None, generated: _dt.datetime | None = None,
                 dashboard_url: str | None = None, max_points: int | None = None,
                 choice: dict | Callable[[], dict] | None = None, plotly_src: str | None = None,
                 standalone_url: str | None = None, view_model: dict | None = None,
                 calibrated: Callable[[str, str], Any] | None = None,
                 analysis: Analysis | None = None, fitted: dict | None = None) -> str:
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
    max_points : int, optional
        A read-only link's scope: every classifier's ROC curve is thinned to at most this many
        points before anything is computed from it
        (:func:`costdash.choice_summary.thinned_analysis`), so the report holds no exact score
        or count at a threshold the viewer chose, and no curve of more points.
    choice : dict, optional
        The view's threshold choice (:func:`costdash.choice_summary.choice_summary_of_view`
        with ``max_points`` :data:`dashboard.report.choice.CHOICE_MAX_POINTS`, and
        ``max_roc_points`` ``max_points``) when already computed, e.g. by the dashboard's
        results service; or a callable returning it, called once, after every other section
        is built (e.g. it waits for the choice computed meanwhile in another process:
        :func:`dashboard.results.run_alongside`).
    plotly_src : str, optional
        An absolute address of plotly.js (the dashboard's own,
        :func:`dashboard.report.format.plotly_js_url`) to load instead of embedding it; None
        (the default) embeds it: a standalone file.
    standalone_url : str, optional
        With ``plotly_src``: where the standalone form of this report is (named in the note
        shown when plotly.js does not load).
    view_model : dict, optional
        The data set's view model with every classifier
        (:func:`dashboard.viewmodel.build_view_model` of the whole data set with
        ``max_points`` :func:`report_points` of ``max_points``), when already computed, e.g.
        the dashboard's cached one (:meth:`dashboard.services.ViewModels.full`); else built
        here (an analysis of every classifier).
    calibrated : callable, optional
        ``calibrated(classifier, method)``: that classifier's ROC curve of scores calibrated
        by ``method`` (:func:`costdash.calibration.calibrate_classifier`, thinned to
        :func:`report_points` of ``max_points`` when ``max_points`` is given), the text of
        the refusal, or ``{"maps": ...}`` (a cross-fit's maps: the curve is made from them),
        when already computed; None where not (computed here). See
        :func:`dashboard.api.report_inputs`.
    analysis : Analysis, optional
        The view's ticked classifiers analysed under any condition (``analyze(dataset,
        models=view.models)``, then thinned to ``max_points`` when that is given: the
        dashboard's threshold-choice base, :meth:`dashboard.results.Results.choice_base`), when
        already computed; only the choice under the view's conditions is made here. Else
        every ticked classifier's ROC curve is computed here (the report's largest numpy work
        after the calibrations: a sort of each classifier's scores).
    fitted : dict, optional
        Filled with the calibrations fitted here (not found through ``calibrated``):
        ``{(classifier, method): {"maps": the cross-fit's maps} or the refusal's text}``,
        for the caller to keep (:func:`dashboard.results.calibrated_entry_texts`); a later
        report given the maps through ``calibrated`` makes the same curve without fitting.

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
    if analysis is not None:
        # Its curves, hulls and envelopes hold under every condition; the choice is the view's.
        analysis = replace(analysis, operating_point=choose(analysis.hull,
                                                            view.condition(prevalence)))
    else:
        analysis = analyze(dataset, view.condition(prevalence), models=view.models)
        if max_points is not None:
            from costdash.choice_summary import thinned_analysis

            analysis = thinned_analysis(analysis, max_points)
    selected = [c.name for c in analysis.classifiers]
    view = report_view(view, selected)
    calibrated = calibrations_started(dataset, analysis, view, max_points, calibrated, fitted)
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
        f"<title>{_e(title)}</title><style>{_CSS}</style>{plotly_script(plotly_src)}"
        "</head><body>",
        f"<h1>{_e(title)}</h1>",
    ]
    missing_note, missing_check = plotly_missing_note(plotly_src, standalone_url)
    parts.append(missing_note)

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
                 f'threshold <b{_exact_title(v.threshold)} class="chosen-threshold">'
                 f"{_e(readable_threshold_text(analysis, v.classifier, v.threshold))}</b>.</p>")
    parts.append(_table(
        ["classifier", "threshold", "FPR", "TPR", "normalized expected cost",
         "expected cost per example"],
        [[_e(v.classifier), _threshold_html(analysis, v.classifier, v.threshold), _num(v.fpr),
          _num(v.tpr),
          _num(op.normalized_cost), _num(op.expected_cost)]], css_class="operating-point"))
    parts.append("</section>")
    parts.append(_money_section(analysis, view))
    parts.append(_sensitivity_section(analysis, view))
    parts.append(_constraints_section(analysis, view))
    parts.append(_pinned_section(analysis, view))

    roc, cost, ranges = _report_figures(dataset, analysis, name, view, max_points, view_model)
    parts.append('<section id="figures"><h2>ROC space and cost space</h2><div class="figs">'
                 f'<div class="fig">{_figure_html(roc, plotly_src is None, "roc-figure")}'
                 "</div>"
                 f'<div class="fig">{_figure_html(cost, False, "cost-figure")}</div>'
                 f'</div><div class="fig">{_figure_html(ranges, False, "ranges-figure")}</div>'
                 "<p>Operating ranges: where each classifier on the lower envelope is the best "
                 "choice (thick) and where it beats both trivial choices (thin).</p>"
                 "</section>")

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
                          [[_e(n), _threshold_html(analysis, n, t), _num(f), _num(tp)]
                           for f, tp, n, t in zip(hull.fpr, hull.tpr, hull.classifier,
                                                  hull.threshold)], css_class="hull")
                 + "</section>")

    parts.append(_curves_section(dataset, analysis, view, max_points, calibrated))
    # The threshold choice's place; built last (``choice`` may be computed meanwhile elsewhere).
    choice_place = len(parts)
    parts.append("")
    parts.append(_threshold_money_section(dataset, analysis, view, max_points))
    parts.append(_segments_section(dataset, view))

    # Bands of unticked classifiers are not this view's (nor the report's) business.
    band_list = [b for b in _bands_list(bands) if b.name in set(selected)]
    if band_list:
        parts.append(_bands_section(band_list, analysis, dataset.names,
                                    view if band_settings_known else None))

    parts[choice_place] = _choice_section(dataset, view, max_points,
                                          choice() if callable(choice) else choice)
    parts.append(missing_check)
    parts.append(_NARROW_SCRIPT)
    parts.append("<footer>Made with costdash. Operating ranges and cost areas are in PC(+) "
                 "(probability × cost); cost area is the expected normalized cost for PC(+) "
                 "uniform on [0, 1].</footer></body></html>")
    return "\n".join(p for p in parts if p)


def _segments_section(dataset: Dataset, view: View) -> str:
    """A threshold per segment against the shared one (issue 28; the Segments page's table:
    :func:`costdash.segments.segment_policy` at the view's costs, each segment at its
    prevalence); empty without a segment column."""
    if dataset.segments is None:
        return ""
    from costdash.errors import CostdashError
    from costdash.segments import segment_policy

    head = (f'<section id="segments"><h2>Segments: a threshold per '
            f'{_e(dataset.segments.column)}</h2>')
    try:
        policy = segment_policy(dataset, dataset.segments.values,
                                view.condition(dataset.prevalence), models=view.models)
    except CostdashError as exc:
        return head + f"<p>{_e(exc)}</p></section>"
    volume, unit = float(view.volume), _e(view.unit or "")
    rows = [[_e(s.segment), f"{s.n:,}", _num(s.p_pos), _e(s.classifier),
             _e("—" if s.threshold is None else f"≥ {s.threshold:.6g}"), _num(s.expected_cost),
             _num(s.shared_expected_cost), _num(s.regret_vs_shared),
             f"{_num(s.regret_vs_shared * volume * s.n / dataset.n)} {unit}".strip()]
            for s in policy.segments]
    shared = ("—" if policy.shared_threshold is None
              else f"≥ {policy.shared_threshold:.6g}")
    return (head + f"<p>Shared choice: {_e(policy.shared_classifier)} at score {_e(shared)}. "
            f"Each segment decided at its own prevalence and the view's costs; a threshold per "
            f"segment saves {_num(policy.saving_per_case)} per case "
            f"({_num(policy.saving_per_case * volume)} {unit} per period).</p>"
            + _table(["segment", "n", "p(+)", "classifier", "threshold", "expected cost / case",
                      "shared threshold's cost / case", "regret / case", "saving / period"],
                     rows, css_class="segments") + "</section>")


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


def _band_level_cell(band: CostBand) -> str:
    """The level a band earns, and where: a double bootstrap earns it only on part of the
    PC(+) range (its coverage study), so the cell names that range."""
    if not band.calibrated:
        return "none (a spread)"
    span = band.level_range
    if span is not None and not band.level_holds.all():
        return f"{_num(band.level)} on PC(+) {span[0]:.3g}–{span[1]:.3g} only"
    return _num(band.level)


def _bands_section(band_list: list[CostBand], analysis: Analysis, names: Sequence[str],
                   view: View | None) -> str:
    """The bands' settings and figures (``view``: the seed they were computed with). A level
    only for a calibrated band (the others are resampling spreads); each band's label and the
    question it answers (``estimand``)."""
    index = {n: i for i, n in enumerate(names)}   # colours by position in the whole data set
    headers = ["classifier", "kind", "threshold", "method", "level", "replicates"]
    rows = [[_e(b.name), _e(b.kind), _band_threshold_cell(b), _e(b.method),
             _band_level_cell(b), _band_replicates_cell(b)]
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
        sized(fig)
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
