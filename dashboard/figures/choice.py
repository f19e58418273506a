"""Figures of the Threshold choice page (and its report section): what each way of choosing
thresholds costs in cost space, and decision curves.

Pure builders from the JSON of :func:`costdash.choice_summary.choice_summary` (the same JSON the
API answers) to ``plotly.graph_objects.Figure``: no arithmetic on the curves, which are drawn
point for point as the core computed them.

* :func:`threshold_choice_figure`: one panel per classifier, its optimal curve (its own lower
  envelope), the score-driven (Brier) curve, whose jumps (a PC(+) repeated) are drawn as
  vertical segments, the rate-driven curve and the fixed threshold's cost line, beside the
  trivial classifiers; a refused score-driven curve is replaced by the reason.
* :func:`decision_curve_figure`: net benefit against the threshold probability of each
  classifier, treat-all and treat-none, with the pₜ of the current conditions.
"""

from __future__ import annotations

import functools
import math
import textwrap
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
import plotly.graph_objects as go
from plotly.subplots import make_subplots

from dashboard.figures.common import as_array, axis, base_layout, legend_policy
from dashboard.figures.palette import HULL_COLOR, TRIVIAL_COLOR, classifier_style

__all__ = ["METHOD_STYLES", "decision_curve_figure", "merged", "one_column_relayout",
           "threshold_choice_dict", "threshold_choice_figure"]

METHOD_STYLES: dict[str, dict[str, Any]] = {
    "optimal": {"label": "optimal (its envelope)", "color": HULL_COLOR, "dash": "solid",
                "width": 2.6},
    "score_driven": {"label": "score-driven (Brier curve)", "color": "#D55E00",
                     "dash": "solid", "width": 1.8},
    "rate_driven": {"label": "rate-driven", "color": "#0072B2", "dash": "dot", "width": 2.0},
    "fixed": {"label": "fixed threshold", "color": "#009E73", "dash": "dash", "width": 1.8},
}
"""How each threshold-choice method is drawn, in every panel (one legend for all)."""

CURRENT_COLOR = "#d62728"
BOX_COLOR = "rgba(255, 165, 0, 0.13)"
PANEL_HEIGHT = 380
"""Height of one row of panels, CSS px: each panel's plot area ~300 px tall (issue 23)."""
MAX_COLS = 3


def _wrap(text: str, width: int = 38) -> str:
    return "<br>".join(textwrap.wrap(text, width)[:6])


def _fixed_label(entry: Mapping[str, Any]) -> str:
    fixed = entry["threshold_choice"].get("fixed") or {}
    t = fixed.get("threshold")
    where = {"pin": "pinned", "conditions": "best at the conditions",
             "threshold": "given"}.get(entry.get("fixed_from", ""), "")
    return (f"score ≥ {t:.4g}" if t is not None else "no threshold") + \
        (f" ({where})" if where else "")


def threshold_choice_figure(classifiers: Sequence[Mapping[str, Any]],
                            index: Mapping[str, int], *, pc_now: float | None = None,
                            box_pc: Sequence[float] | None = None,
                            uirevision: str | None = None,
                            message: str | None = None,
                            columns: int | None = None) -> go.Figure:
    """Cost space per classifier: each threshold-choice method's curve beside the envelope.

    Parameters
    ----------
    classifiers : sequence of dict
        ``choice_summary(...)["classifiers"]`` entries: ``name``, ``threshold_choice`` (each
        method's ``pc`` and ``cost``, or null), ``threshold_choice_gaps``
        (``score_driven_refused``), ``fixed_from``.
    index : mapping of str to int
        Each classifier's position in the data set (its colour, for the panel's title).
    pc_now : float, optional
        The PC(+) of the current conditions (a dotted vertical line in every panel).
    box_pc : (lo, hi), optional
        The PC(+) range of the sensitivity box (shaded).
    message : str, optional
        Shown instead of panels when there is nothing to draw.
    columns : int, optional
        Panels per row (default :data:`MAX_COLS`; 1 on a phone).
    """
    return go.Figure(threshold_choice_dict(classifiers, index, pc_now=pc_now, box_pc=box_pc,
                                           uirevision=uirevision, message=message,
                                           columns=columns))


def merged(base: dict[str, Any], update: Mapping[str, Any]) -> dict[str, Any]:
    """``base`` updated as plotly's ``update_layout`` updates a layout: a dict merged into a
    dict key by key, None removing the key, anything else (lists included) replacing it."""
    out = dict(base)
    for key, value in update.items():
        if value is None:
            out.pop(key, None)
        elif isinstance(value, Mapping) and isinstance(out.get(key), dict):
            out[key] = merged(out[key], value)
        else:
            out[key] = value
    return out


@functools.lru_cache(maxsize=16)
def _panel_grid(rows: int, cols: int, vertical_spacing: float) -> dict[str, Any]:
    """The panels' axes (make_subplots' layout without its template), computed once per grid:
    make_subplots took ~0.1 s at 20 panels, titles included."""
    layout = make_subplots(rows=rows, cols=cols, shared_xaxes=False, shared_yaxes=True,
                           horizontal_spacing=0.05,
                           vertical_spacing=vertical_spacing).to_plotly_json()["layout"]
    return {k: v for k, v in layout.items() if k != "template"}


def threshold_choice_dict(classifiers: Sequence[Mapping[str, Any]],
                          index: Mapping[str, int], *, pc_now: float | None = None,
                          box_pc: Sequence[float] | None = None,
                          uirevision: str | None = None,
                          message: str | None = None,
                          columns: int | None = None) -> dict[str, Any]:
    """:func:`threshold_choice_figure` as a plain figure dict (``data``, ``layout``), built
    without plotly's validation of each of its properties: what the report writes directly
    (at 20 classifiers the figure's validation took ~1 s of a cold report's CPU, issue 23).
    Its traces carry their ``type``; the layout names its template (``simple_white``)."""
    n = len(classifiers)
    if n == 0:
        fig = go.Figure(layout=base_layout(
            xaxis=axis("PC(+)", range=[0, 1]), yaxis=axis("normalized expected cost"),
            height=PANEL_HEIGHT + 120))
        if message:
            fig.add_annotation(text=message, x=0.5, y=0.5, xref="paper", yref="paper",
                               showarrow=False, font={"size": 14})
        return fig.to_plotly_json()
    cols = min(n, columns or MAX_COLS)
    rows = math.ceil(n / cols)
    height = PANEL_HEIGHT * rows + 130
    # Between rows: room for the axis labels and the next panel's title (~70 px), whatever the
    # number of rows (a fraction of the whole left the panels short or squeezed).
    grid_layout = _panel_grid(rows, cols, min(0.3, 70 / height) if rows > 1 else 0.0)
    grid = np.linspace(0.0, 1.0, 3)
    trivial = np.minimum(grid, 1.0 - grid)
    top = 0.0
    traces: list[dict[str, Any]] = []
    notes: list[dict[str, Any]] = []
    shapes: list[dict[str, Any]] = []
    # On the panels' axes (x, x2, ...: make_subplots numbers them row by row).
    for k, entry in enumerate(classifiers):
        xa, ya = ("x", "y") if k == 0 else (f"x{k + 1}", f"y{k + 1}")
        name = str(entry["name"])
        curves = entry["threshold_choice"]
        traces.append(dict(
            type="scatter", x=grid, y=trivial, mode="lines", name="trivial classifiers",
            legendgroup="trivial", uid=f"trivial-{k}", xaxis=xa, yaxis=ya,
            showlegend=k == 0, line={"color": TRIVIAL_COLOR, "width": 1},
            hoverinfo="skip", meta={"classifier": name, "role": "trivial"}))
        for method in ("rate_driven", "fixed", "score_driven", "optimal"):
            curve = curves.get(method)
            style = METHOD_STYLES[method]
            if curve is None:
                continue
            x, y = as_array(curve["pc"]), as_array(curve["cost"])
            if method != "rate_driven" and y.size:
                top = max(top, float(np.nanmax(y)))
            label = style["label"] + (f": {_fixed_label(entry)}" if method == "fixed" else "")
            traces.append(dict(
                type="scatter", x=x, y=y, mode="lines", name=style["label"],
                legendgroup=method, uid=f"{method}-{k}", xaxis=xa, yaxis=ya,
                showlegend=k == 0,
                line={"color": style["color"], "dash": style["dash"], "width": style["width"]},
                meta={"classifier": name, "role": method},
                hovertemplate=f"{name}, {label}<br>PC(+) %{{x:.4f}}<br>cost %{{y:.4f}}"
                              f"<br>expected loss {curve['expected_loss']:.4f}<extra></extra>"))
        refused = (entry.get("threshold_choice_gaps") or {}).get("score_driven_refused")
        if curves.get("score_driven") is None and refused:
            notes.append(dict(
                # The reason in the panel while panels are wide; past two panels it is
                # listed once under the table (the page groups the reasons).
                text="<b>No score-driven curve</b><br>" + (
                    _wrap(refused) if n <= 2 else "(why: under the table)"),
                x=0.5, y=0.45, xref=f"{xa} domain", yref=f"{ya} domain",
                showarrow=False, align="center", font={"size": 11, "color": "#8a3b00"},
                bgcolor="rgba(255,247,230,0.92)", bordercolor="#f0d9a8", borderwidth=1))
        if box_pc is not None:
            shapes.append({"type": "rect", "x0": box_pc[0], "x1": box_pc[1], "xref": xa,
                           "y0": 0, "y1": 1, "yref": f"{ya} domain", "fillcolor": BOX_COLOR,
                           "line": {"width": 0}, "layer": "below"})
        if pc_now is not None and math.isfinite(pc_now):
            shapes.append({"type": "line", "x0": pc_now, "x1": pc_now, "xref": xa,
                           "y0": 0, "y1": 1, "yref": f"{ya} domain",
                           "line": {"color": CURRENT_COLOR, "width": 1.2, "dash": "dot"}})
    # Zoomed to the optimal, score-driven and fixed curves (the rate-driven one may leave the
    # top; double-click a panel for the whole of it), never past the trivial classifiers' peak.
    ymax = min(0.55, max(0.1, top * 1.6)) if top > 0 else 0.55
    # Titles in each classifier's colour, where make_subplots puts a panel's title, then the
    # notes.
    titles = []
    for k, entry in enumerate(classifiers):
        name = str(entry["name"])
        if not name:
            continue                  # (make_subplots gives an empty title no annotation)
        suffix = "" if k == 0 else str(k + 1)
        x, y = grid_layout[f"xaxis{suffix}"]["domain"], grid_layout[f"yaxis{suffix}"]["domain"]
        titles.append({"y": y[1], "xref": "paper", "x": sum(x) / 2.0, "yref": "paper",
                       "text": name, "showarrow": False, "xanchor": "center",
                       "yanchor": "bottom", "font": {"size": 13, "color": classifier_style(
                           index.get(name, k)).color}})
    axes: dict[str, Any] = {}
    common = {"showgrid": True, "gridcolor": "#ececec", "mirror": True, "ticks": "outside",
              "zeroline": False}
    for k in range(n):
        suffix = "" if k == 0 else str(k + 1)
        r, c = k // cols + 1, k % cols + 1
        axes[f"xaxis{suffix}"] = {**common, "range": [0, 1], **(
            {"title": {"text": "PC(+)", "standoff": 4}} if r == rows or k + cols >= n else {})}
        axes[f"yaxis{suffix}"] = {**common, "range": [0, ymax], **(
            {"title": {"text": "normalized cost", "standoff": 4}} if c == 1 else {})}
    layout = merged(grid_layout, {"annotations": titles + notes, "shapes": shapes, **axes})
    page = base_layout(height=height, margin={"l": 64, "r": 16, "t": 40, "b": 90},
                       uirevision=uirevision)
    for key in ("shapes", "annotations"):  # keep the panels' titles, lines and notes
        page.pop(key)
    return {"data": traces, "layout": merged(layout, page)}


def one_column_relayout(figure: Mapping[str, Any], n: int) -> dict[str, Any]:
    """The ``Plotly.relayout`` update that turns :func:`threshold_choice_dict`'s grid of
    panels into one column, one panel per row: what the report applies on a narrow screen
    (issue 23: three panels per row left each ~95 px wide at 390 px). The panels' axes, their
    titles and the figure's height as :func:`threshold_choice_dict` with ``columns=1`` lays
    them out; traces, shapes and notes are on the panels' axes and follow them; the grid's
    spare cells (past the ``n`` panels) are hidden. Empty for a figure without panels."""
    layout = figure["layout"]
    if n == 0 or "domain" not in layout.get("xaxis", {}):
        return {}
    height = PANEL_HEIGHT * n + 130
    grid = _panel_grid(n, 1, min(0.3, 70 / height) if n > 1 else 0.0)
    update: dict[str, Any] = {"height": height}
    titles = [a for a in layout.get("annotations", ()) if a.get("xref") == "paper"]
    k_title = 0
    for k in range(n):
        suffix = "" if k == 0 else str(k + 1)
        x, y = grid[f"xaxis{suffix}"]["domain"], grid[f"yaxis{suffix}"]["domain"]
        update[f"xaxis{suffix}.domain"], update[f"yaxis{suffix}.domain"] = x, y
        update[f"xaxis{suffix}.title"] = ({"text": "PC(+)", "standoff": 4} if k == n - 1
                                          else {"text": ""})
        update[f"yaxis{suffix}.title"] = {"text": "normalized cost", "standoff": 4}
        update[f"yaxis{suffix}.showticklabels"] = True
        # The panels' titles come first among the annotations, in the panels' order (an
        # empty name has none).
        if k_title < len(titles) and layout.get(f"xaxis{suffix}", {}).get("domain") and \
                _title_of(titles[k_title], layout[f"xaxis{suffix}"], layout[f"yaxis{suffix}"]):
            update[f"annotations[{k_title}].x"] = sum(x) / 2.0
            update[f"annotations[{k_title}].y"] = y[1]
            k_title += 1
    k = n
    while f"xaxis{k + 1}" in layout:
        update[f"xaxis{k + 1}.visible"] = update[f"yaxis{k + 1}.visible"] = False
        k += 1
    return update


def _title_of(title: Mapping[str, Any], xaxis: Mapping[str, Any],
              yaxis: Mapping[str, Any]) -> bool:
    """Whether a panel title annotation sits on the panel of these axes."""
    x, y = xaxis["domain"], yaxis["domain"]
    return abs(title["x"] - sum(x) / 2.0) < 1e-9 and abs(title["y"] - y[1]) < 1e-9


def decision_curve_figure(dca: Mapping[str, Any] | None, index: Mapping[str, int], *,
                          uirevision: str | None = None,
                          message: str | None = None,
                          legend: bool | None = None) -> go.Figure:
    """Net benefit against the threshold probability pₜ (decision curves).

    Parameters
    ----------
    dca : dict
        ``choice_summary(...)["decision_curves"]``: ``thresholds``, ``net_benefit`` (per
        model, ``all`` and ``none``), ``refused``, ``prevalence`` and ``current`` (``pt``).
    index : mapping of str to int
        Each classifier's position in the data set (its style).
    legend : bool, optional
        False: no classifier in the plot's legend (the page's list is the legend); see
        :func:`dashboard.figures.common.legend_policy`.
    """
    layout = base_layout(
        xaxis=axis("threshold probability pₜ<br>(flag score ≥ pₜ)", range=[0, 1]),  # 390 px
        yaxis=axis("net benefit per case"), height=460, uirevision=uirevision,
        margin={"l": 64, "r": 16, "t": 30, "b": 90})
    fig = go.Figure(layout=layout)
    if not dca:
        if message:
            fig.add_annotation(text=message, x=0.5, y=0.5, xref="paper", yref="paper",
                               showarrow=False, font={"size": 14})
        return fig
    pt = as_array(dca["thresholds"])
    nb = dca["net_benefit"]
    models = [m for m in nb if m not in ("all", "none")]
    show, legend_layout = legend_policy(len(models) + 2, legend)
    if legend_layout:
        fig.update_layout(legend=legend_layout)
    fig.add_trace(go.Scatter(x=pt, y=as_array(nb["none"]), mode="lines", name="treat none",
                             uid="dca-none",
                             line={"color": HULL_COLOR, "width": 1.2},
                             meta={"role": "none"},
                             hovertemplate="treat none<br>pₜ %{x:.3f}<br>net benefit 0"
                                           "<extra></extra>"))
    fig.add_trace(go.Scatter(x=pt, y=as_array(nb["all"]), mode="lines", name="treat all",
                             uid="dca-all",
                             line={"color": TRIVIAL_COLOR, "width": 1.6, "dash": "dash"},
                             meta={"role": "all"},
                             hovertemplate="treat all<br>pₜ %{x:.3f}<br>net benefit %{y:.4f}"
                                           "<extra></extra>"))
    for k, name in enumerate(models):
        values = nb[name]
        if values is None:
            continue
        style = classifier_style(index.get(name, k))
        fig.add_trace(go.Scatter(
            x=pt, y=as_array(values), mode="lines", name=name, showlegend=show,
            uid=f"dca-{index.get(name, k)}",
            line={"color": style.color, "dash": style.dash, "width": 2},
            meta={"classifier": name, "role": "model"},
            hovertemplate=f"{name}<br>pₜ %{{x:.3f}}<br>net benefit %{{y:.4f}}<extra></extra>"))
    pi = float(dca.get("prevalence") or 0.0)
    if pi > 0:
        fig.update_yaxes(range=[-0.15 * pi, 1.08 * pi])
    current = dca.get("current") or {}
    now = current.get("pt")
    if now is not None and math.isfinite(now):
        fig.add_vline(x=now, line={"color": CURRENT_COLOR, "width": 1.4, "dash": "dot"})
        fig.add_annotation(x=now, y=1.0, yref="paper", yanchor="bottom", showarrow=False,
                           text=f"your pₜ = {now:.3g}", font={"color": CURRENT_COLOR, "size": 12},
                           xanchor="left" if now < 0.7 else "right")
    refused = dca.get("refused") or {}
    if refused:
        names = ", ".join(refused) if len(refused) <= 4 else f"{len(refused)} classifiers"
        fig.add_annotation(text=f"Not drawn: {names} (see below)",
                           x=1, y=1, xref="paper", yref="paper", xanchor="right",
                           yanchor="top", showarrow=False, font={"size": 11, "color": "#8a3b00"})
    return fig
