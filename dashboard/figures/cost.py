"""Cost space (Drummond & Holte): lower envelopes, cost lines, trivial classifiers, operating
ranges.

x is PC(+), y the normalized expected cost. The vertical line at the current PC(+) and the
chosen point are layout shapes set in the browser (``assets/explore.js``).
"""

from __future__ import annotations

from typing import Any

import numpy as np
import plotly.graph_objects as go

from costdash.costspace import cost_line
from costdash.roc import thin_indices
from dashboard.figures.common import (as_array, axis, base_layout, interval_text, text_array,
                                      threshold_text)
from dashboard.figures.palette import (HULL_COLOR, TRIVIAL_COLOR, classifier_color,
                                       classifier_dash)
from dashboard.figures.roc import DOMINATED_OPACITY

RANGE_BAR_GAP = 0.022
"""Vertical spacing of the operating-range bars drawn under the x axis."""


def range_bar_y(position: int, count: int) -> float:
    """Height of the ``position``-th operating-range bar (below zero, under the envelopes)."""
    gap = min(RANGE_BAR_GAP, 0.22 / max(count, 1))
    return -gap * (position + 1)


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


def cost_figure(view: dict[str, Any] | None, *, lines: bool = False,
                max_lines: int = 60) -> go.Figure:
    """The cost-space figure of a view model.

    Traces, each with a ``uid``: ``all-negative`` and ``all-positive`` (the trivial classifiers'
    lines NE = PC(+) and NE = 1 - PC(+)); per selected classifier (``i`` its position in the
    data set, its name in ``meta``) ``env-<i>`` (its own lower envelope, exact) or, with
    ``lines=True``, ``lines-<i>`` (the cost line of every ROC point, thinned to ``max_lines``),
    and ``range-<i>`` (its operating range, a bar under the axis); ``envelope`` (the overall
    lower envelope, exact).
    """
    selected = [c for c in (view or {}).get("classifiers", []) if c["name"] in
                set(view["models"])] if view else []
    bottom = range_bar_y(len(selected), len(selected)) if selected else -0.02
    layout = base_layout(
        xaxis=axis("PC(+) (probability × cost)", range=[0, 1], dtick=0.1),
        yaxis=axis("Normalized expected cost", range=[bottom, 1.0 if lines else 0.55],
                   tickvals=np.round(np.arange(0, 1.01, 0.1), 1)),
        uirevision=(view or {}).get("id", "empty"),
    )
    fig = go.Figure(layout=layout)
    for uid, label, y in (("all-negative", "flag nothing (all-negative)", [0.0, 1.0]),
                          ("all-positive", "flag everything (all-positive)", [1.0, 0.0])):
        fig.add_trace(go.Scatter(
            x=np.array([0.0, 1.0]), y=np.array(y), mode="lines", name=label, uid=uid,
            line={"color": TRIVIAL_COLOR, "dash": "dot", "width": 1.5},
            hovertemplate=f"<b>{label}</b><br>PC(+) %{{x:.4f}}<br>cost %{{y:.4f}}<extra></extra>",
            showlegend=False))
    if not view:
        return fig
    dominated = set(view["dominated"])
    for position, c in enumerate(selected):
        name, is_dominated = c["name"], c["name"] in dominated
        color = classifier_color(c["index"])
        style = {"opacity": DOMINATED_OPACITY if is_dominated else 1.0}
        dash = "dash" if is_dominated else classifier_dash(c["index"])
        label = f"{name} (dominated)" if is_dominated else name
        if lines:
            roc = c["roc"]
            idx = thin_indices(len(roc["fpr"]), max_lines)
            fpr, tpr = as_array(roc["fpr"])[idx], as_array(roc["tpr"])[idx]
            x, y = cost_lines_xy(fpr, tpr)
            hover = np.repeat(text_array(threshold_text(roc["threshold"][i]) for i in idx), 3)
            fig.add_trace(go.Scatter(
                x=x, y=y, mode="lines", name=label, uid=f"lines-{c['index']}", meta=name,
                legendgroup=name,
                line={"color": color, "width": 1, "dash": dash}, connectgaps=False,
                customdata=hover, **style,
                hovertemplate=(f"<b>{name}</b> cost line<br>threshold %{{customdata}}"
                               "<br>PC(+) %{x:.4f}<br>cost %{y:.4f}<extra></extra>")))
        else:
            env = c["envelope"]
            fig.add_trace(go.Scatter(
                x=as_array(env["pc"]), y=as_array(env["cost"]), mode="lines", name=label,
                uid=f"env-{c['index']}", meta=name, legendgroup=name,
                line={"color": color, "width": 2, "dash": dash}, **style,
                customdata=envelope_hover(env, c["hull"], with_name=False),
                hovertemplate=(f"<b>{name}</b><br>%{{customdata}}<br>PC(+) %{{x:.4f}}, "
                               f"cost %{{y:.4f}}<br>operating range "
                               f"{interval_text(c['operating_range'])}<extra></extra>")))
        rng = c["operating_range"]
        if rng:
            yb = range_bar_y(position, len(selected))
            fig.add_trace(go.Scatter(
                x=np.array(rng, dtype=np.float64), y=np.array([yb, yb]), mode="lines",
                name=f"{name} operating range", uid=f"range-{c['index']}", meta=name,
                legendgroup=name,
                showlegend=False, line={"color": color, "width": 5}, **style,
                hovertemplate=(f"<b>{name}</b><br>operating range {interval_text(rng)}"
                               "<br>(beats both trivial classifiers)<extra></extra>")))
    env = view["envelope"]
    fig.add_trace(go.Scatter(
        x=as_array(env["pc"]), y=as_array(env["cost"]), mode="lines", name="lower envelope",
        uid="envelope", line={"color": HULL_COLOR, "width": 3},
        customdata=envelope_hover(env, view["hull"], with_name=True),
        hovertemplate="%{customdata}<br>PC(+) %{x:.4f}, cost %{y:.4f}<extra></extra>"))
    return fig
