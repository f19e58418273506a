"""Cost space (Drummond & Holte): lower envelopes, cost lines, trivial classifiers.

x is PC(+), y the normalized expected cost. The vertical line at the current PC(+) and the
chosen point are layout shapes set in the browser (``assets/explore-readouts.js``).
"""

from __future__ import annotations

from typing import Any

import numpy as np
import plotly.graph_objects as go

from costdash.costspace import cost_line
from costdash.roc import thin_indices
from dashboard.figures.axes import log_odds, log_odds_axis, pc_samples
from dashboard.figures.common import (as_array, axis, base_layout, fixed_x_margin, interval_text,
                                      legend_policy, text_array, threshold_text,
                                      make_figure)
from dashboard.figures.palette import HULL_COLOR, TRIVIAL_COLOR
from dashboard.figures.roc import MARKERS_PER_CURVE, drawn_classifiers, shown_classifiers

LINE_SAMPLES_STEP = 4
"""Every cost line on the log-odds axis is sampled at every 4th point of the envelopes' grid."""


def _piece_text(hull: dict[str, Any], vertex: int, lo: float, hi: float,
                with_name: bool) -> str:
    name = f"<b>{hull['classifier'][vertex]}</b> " if with_name else ""
    return (f"{name}{threshold_text(hull['threshold'][vertex])}<br>FPR {hull['fpr'][vertex]:.4f}, "
            f"TPR {hull['tpr'][vertex]:.4f}<br>optimal for PC(+) in [{lo:.4g}, {hi:.4g}]")


def envelope_hover(envelope: dict[str, Any], hull: dict[str, Any], *,
                   with_name: bool) -> np.ndarray:
    """Hover text at each breakpoint: the vertex whose line forms the piece to its right."""
    pc, vertex = envelope["pc"], envelope["vertex"]
    texts = []
    for j in range(len(pc)):
        piece = min(j, len(vertex) - 1)
        texts.append(_piece_text(hull, vertex[piece], pc[piece], pc[piece + 1], with_name))
    return text_array(texts)


def cost_lines_xy(fpr: np.ndarray, tpr: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Segments (0, FPR) -> (1, 1 - TPR), one per ROC point, separated by NaN gaps."""
    k = fpr.size
    x = np.tile(np.array([0.0, 1.0, np.nan]), k)
    y = np.empty(3 * k)
    y[0::3], y[1::3], y[2::3] = cost_line(fpr, tpr, 0.0), cost_line(fpr, tpr, 1.0), np.nan
    return x, y


def _sampled(pc: np.ndarray, cost: np.ndarray, log_pc_scale: bool
             ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(x, cost, PC(+)) of a piecewise linear curve of cost space as drawn: its breakpoints, or
    on the log-odds axis sampled along it (a straight piece is a curve there)."""
    if not log_pc_scale:
        return pc, cost, pc
    at = pc_samples(pc)
    return log_odds(at), np.interp(at, pc, cost), at


def _envelope_hover(env: dict[str, Any], c: dict[str, Any], pc: np.ndarray,
                    log_pc_scale: bool) -> dict[str, Any]:
    """A classifier envelope's hover: the piece's vertex on the linear axis; on the log-odds
    axis (sampled points, not breakpoints) PC(+) and the cost."""
    tail = f"<br>operating range {interval_text(c['operating_range'])}<extra></extra>"
    if log_pc_scale:
        return {"customdata": pc, "hovertemplate": f"<b>{c['name']}</b><br>PC(+) "
                "%{customdata:.4g}, cost %{y:.4f}" + tail}
    return {"customdata": envelope_hover(env, c["hull"], with_name=False),
            "hovertemplate": f"<b>{c['name']}</b><br>%{{customdata}}<br>PC(+) %{{x:.4f}}, "
                             "cost %{y:.4f}" + tail}


def cost_figure(view: dict[str, Any] | None, *, lines: bool = False, max_lines: int = 60,
                log_pc_scale: bool = False, hull_only: bool = False,
                legend: bool | None = None, validate: bool = True) -> go.Figure:
    """The cost-space figure of a view model.

    Traces, each with a ``uid``: ``all-negative`` and ``all-positive`` (the trivial classifiers'
    lines NE = PC(+) and NE = 1 - PC(+)); per shown classifier (``i`` its position in the
    data set, its name in ``meta``) ``env-<i>`` (its own lower envelope, exact) or, with
    ``lines=True``, ``lines-<i>`` (the cost line of every ROC point, thinned to ``max_lines``);
    ``envelope`` (the overall lower envelope, exact). The operating ranges are a figure of
    their own (:func:`dashboard.figures.ranges.ranges_figure`).

    Parameters
    ----------
    log_pc_scale : bool
        x is log10 of the PC(+) odds (:mod:`dashboard.figures.axes`), for rare events; the
        hover still reads PC(+).
    hull_only : bool
        Leave out the dominated classifiers.
    legend : bool or None
        See :func:`dashboard.figures.common.legend_policy`.
    validate : bool
        See :func:`dashboard.figures.roc.roc_figure`.
    """
    shown = shown_classifiers(view, hull_only) if view else []
    in_legend, legend_layout = legend_policy(len(shown), legend)
    if log_pc_scale:
        xaxis = axis("PC(+) (probability × cost), log odds", **log_odds_axis())
    else:
        xaxis = axis("PC(+) (probability × cost)", range=[0, 1])
    layout = base_layout(
        xaxis=xaxis,
        # Ticks left to plotly: the zoom to the current choice (assets/explore-plots.js) may show
        # a range of 1e-4.
        yaxis=axis("Normalized expected cost", range=[-0.01, 1.0 if lines else 0.55]),
        uirevision=(view or {}).get("id", "empty"),
    )
    layout["legend"] = {**layout["legend"], **legend_layout}
    if view and not in_legend:  # the legend is the envelope's one row: nothing to wrap
        layout = fixed_x_margin(layout)
    traces: list[dict[str, Any]] = []
    for uid, label, y in (("all-negative", "flag nothing (all-negative)", [0.0, 1.0]),
                          ("all-positive", "flag everything (all-positive)", [1.0, 0.0])):
        x, cost, pc = _sampled(np.array([0.0, 1.0]), np.array(y), log_pc_scale)
        traces.append(dict(
            x=x, y=cost, mode="lines", name=label, uid=uid, customdata=pc,
            line={"color": TRIVIAL_COLOR, "dash": "dot", "width": 1.5},
            hovertemplate=f"<b>{label}</b><br>PC(+) %{{customdata:.4g}}<br>cost %{{y:.4f}}"
                          "<extra></extra>",
            showlegend=False))
    if not view:
        return make_figure(layout, traces, validate=validate)
    for c, name, _, style, label, opacity in drawn_classifiers(view, shown):
        faded = {"opacity": opacity}
        if lines:
            roc = c["roc"]
            idx = thin_indices(len(roc["fpr"]), max_lines)
            fpr, tpr = as_array(roc["fpr"])[idx], as_array(roc["tpr"])[idx]
            if log_pc_scale:
                pcs = pc_samples()[::LINE_SAMPLES_STEP]
                k = pcs.size + 1
                x = np.tile(np.append(log_odds(pcs), np.nan), fpr.size)
                y = np.empty(k * fpr.size)
                for j in range(fpr.size):
                    y[j * k:(j + 1) * k - 1] = cost_line(fpr[j], tpr[j], pcs)
                    y[(j + 1) * k - 1] = np.nan
                hover = np.repeat(text_array(threshold_text(roc["threshold"][i]) for i in idx),
                                  k)
            else:
                x, y = cost_lines_xy(fpr, tpr)
                hover = np.repeat(text_array(threshold_text(roc["threshold"][i]) for i in idx),
                                  3)
            traces.append(dict(
                x=x, y=y, mode="lines", name=label, uid=f"lines-{c['index']}", meta=name,
                legendgroup=name, showlegend=in_legend,
                line={"color": style.color, "width": 1, "dash": style.dash}, connectgaps=False,
                customdata=hover, **faded,
                hovertemplate=(f"<b>{name}</b> cost line<br>threshold %{{customdata}}"
                               "<br>cost %{y:.4f}<extra></extra>")))
        else:
            env = c["envelope"]
            x, cost, pc = _sampled(as_array(env["pc"]), as_array(env["cost"]), log_pc_scale)
            traces.append(dict(
                x=x, y=cost, mode="lines+markers", name=label,
                uid=f"env-{c['index']}", meta=name, legendgroup=name, showlegend=in_legend,
                line={"color": style.color, "width": 2, "dash": style.dash}, **faded,
                marker={"symbol": style.symbol, "size": 7, "color": style.color,
                        "maxdisplayed": MARKERS_PER_CURVE},
                **_envelope_hover(env, c, pc, log_pc_scale)))
    env = view["envelope"]
    if log_pc_scale:
        x, cost, pc = _sampled(as_array(env["pc"]), as_array(env["cost"]), True)
        traces.append(dict(
            x=x, y=cost, mode="lines", name="lower envelope", uid="envelope",
            line={"color": HULL_COLOR, "width": 3}, customdata=pc,
            hovertemplate="lower envelope<br>PC(+) %{customdata:.4g}, cost %{y:.4f}"
                          "<extra></extra>"))
    else:
        traces.append(dict(
            x=as_array(env["pc"]), y=as_array(env["cost"]), mode="lines",
            name="lower envelope", uid="envelope", line={"color": HULL_COLOR, "width": 3},
            customdata=envelope_hover(env, view["hull"], with_name=True),
            hovertemplate="%{customdata}<br>PC(+) %{x:.4f}, cost %{y:.4f}<extra></extra>"))
    return make_figure(layout, traces, validate=validate)
