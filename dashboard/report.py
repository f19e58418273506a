"""A static, self-contained HTML report of one analysis, and CSV exports of its tables.

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
from collections.abc import Iterable, Mapping, Sequence
from html import escape
from typing import Any

import numpy as np
import plotly.graph_objects as go
import plotly.io as pio

from costdash.analysis import Analysis, analyze
from costdash.bands import CostBand
from costdash.conditions import OperatingCondition, default_condition
from costdash.dataset import Dataset
from dashboard.figures.bands import band_figure
from dashboard.figures.cost import cost_figure
from dashboard.figures.roc import roc_figure
from dashboard.viewmodel import build_view_model

__all__ = ["build_report", "csv_exports", "CSV_NAMES", "safe_cell"]

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
    return _num(value, 6)


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


# --- figures --------------------------------------------------------------------------------------

def _report_figures(dataset: Dataset, analysis: Analysis, name: str) -> tuple[go.Figure, go.Figure]:
    """The dashboard's ROC and cost figures with the chosen operating point drawn in."""
    view = build_view_model(dataset, dataset_id="report", name=name,
                            max_points=REPORT_MAX_POINTS)
    roc, cost = roc_figure(view), cost_figure(view)
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


# --- the report -----------------------------------------------------------------------------------

def build_report(dataset: Dataset, condition: OperatingCondition | None, *,
                 title: str | None = None, bands: Any = None, name: str | None = None,
                 generated: _dt.datetime | None = None) -> str:
    """One self-contained HTML file reporting the analysis of ``dataset`` under ``condition``.

    Parameters
    ----------
    dataset : Dataset
    condition : OperatingCondition or None
        The operating conditions; None means the data's prevalence with unit costs.
    title : str, optional
        The page title (default: "costdash report: <name>").
    bands : CostBand, sequence or mapping of CostBand, optional
        Bootstrap cost bands (:func:`costdash.bands.cost_band`) to show, one figure each.
    name : str, optional
        The data set's display name (default ``dataset.source``), e.g. the uploaded file's name.
    generated : datetime, optional
        The date shown in the header (default: now, UTC).
    """
    if condition is None:
        condition = default_condition(dataset.prevalence)
    analysis = analyze(dataset, condition)
    name = name or dataset.source
    title = title or f"costdash report: {name}"
    when = (generated or _dt.datetime.now(_dt.timezone.utc)).strftime("%Y-%m-%d %H:%M %Z").strip()
    op = analysis.operating_point
    cond, v = op.condition, op.vertex
    on_hull = set(analysis.hull.classifier)

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
                      f"{_num(dataset.prevalence)})"),
        ("Negatives", f"{dataset.n_neg:,}"),
        ("Classifiers", f"{len(analysis.classifiers)}"),
        ("Generated", _e(when)),
        ("p(+)", _num(cond.p_pos)),
        ("C(−|+) (false negative)", _num(cond.cost_fn)),
        ("C(+|−) (false positive)", _num(cond.cost_fp)),
        ("PC(+)", _num(cond.pc)),
        ("Iso-performance slope", _num(cond.slope)),
    ]
    parts.append('<section id="header"><dl class="meta">'
                 + "".join(f"<dt>{k}</dt><dd>{val}</dd>" for k, val in meta) + "</dl></section>")

    parts.append('<section id="operating-point"><h2>Chosen operating point</h2>'
                 f'<p class="chosen">Use <b class="chosen-classifier">{_e(v.classifier)}</b> at '
                 f'threshold <b class="chosen-threshold">{_e(_threshold(v.threshold))}</b>.</p>')
    parts.append(_table(
        ["classifier", "threshold", "FPR", "TPR", "normalized expected cost",
         "expected cost per example"],
        [[_e(v.classifier), _e(_threshold(v.threshold)), _num(v.fpr), _num(v.tpr),
          _num(op.normalized_cost), _num(op.expected_cost)]], css_class="operating-point"))
    parts.append("</section>")

    roc, cost = _report_figures(dataset, analysis, name)
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

    band_list = _bands_list(bands)
    if band_list:
        index = {c.name: i for i, c in enumerate(analysis.classifiers)}
        parts.append('<section id="bands"><h2>Bootstrap cost bands</h2>')
        parts.append(_table(
            ["classifier", "kind", "threshold", "level", "replicates"],
            [[_e(b.name), _e(b.kind), _e(_threshold(b.threshold)), _num(b.level),
              f"{b.replicates:,}"] for b in band_list], css_class="bands"))
        parts.append('<div class="figs">')
        for j, b in enumerate(band_list):
            envelope = (analysis.classifier(b.name).envelope if b.name in index else None)
            fig = band_figure(b, name=b.name, index=index.get(b.name, j), envelope=envelope,
                              pc=cond.pc)
            fig.update_layout(autosize=False, width=FIGURE_SIZE[0], height=FIGURE_SIZE[1])
            parts.append(f'<div class="fig">{_figure_html(fig, False, f"band-figure-{j}")}</div>')
        parts.append("</div></section>")

    parts.append("<footer>Made with costdash. Operating ranges and cost areas are in PC(+) "
                 "(probability × cost); cost area is the expected normalized cost for PC(+) "
                 "uniform on [0, 1].</footer></body></html>")
    return "\n".join(parts)


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
