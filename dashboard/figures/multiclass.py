"""BCOST intervals of k-class classifiers (Margineantu & Dietterich): one row per classifier.

The builder draws the numbers of :func:`costdash.multiclass.bcost` as they are: for each
classifier (``i`` its position in the file, which fixes its colour) a thick bar ``bcost-<i>``
from ``low`` to ``high`` (the bootstrap interval), a thin dashed bar ``normal-<i>`` just below it
(the normal z interval, the paper's baseline) and a marker ``cost-<i>`` at the observed average
cost per example. The first classifier is at the top.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
import plotly.graph_objects as go

from dashboard.figures.common import axis, base_layout
from dashboard.figures.palette import HULL_COLOR, classifier_color

NORMAL_OFFSET = 0.22


def level_text(level: float) -> str:
    """0.95 -> "95%"."""
    return f"{level * 100:.10g}%"


def bcost_figure(rows: Sequence[dict[str, Any]] | None, level: float = 0.95) -> go.Figure:
    """Horizontal interval plot of BCOST results.

    Parameters
    ----------
    rows : sequence of dict or None
        One per classifier, with ``name``, ``index`` (position in the file), ``cost``, ``low``,
        ``high``, ``normal_low``, ``normal_high`` (the fields of
        :class:`costdash.multiclass.BcostResult`). None or empty draws empty axes.
    level : float
        The intervals' confidence level (for the titles).
    """
    rows = list(rows or [])
    count = len(rows)
    positions = np.arange(count, 0, -1, dtype=np.float64)  # first classifier on top
    layout = base_layout(
        xaxis=axis("Average cost per example (units of the cost matrix)", rangemode="tozero"),
        yaxis=axis("", tickvals=positions, ticktext=[r["name"] for r in rows],
                   range=[0.4, count + 0.6] if count else [0, 1], showgrid=False),
        title={"text": f"BCOST {level_text(level)} intervals" if count else "",
               "x": 0, "xanchor": "left", "font": {"size": 14}},
        margin={"l": 110, "r": 16, "t": 40, "b": 48},
        legend={"orientation": "h", "yanchor": "bottom", "y": 1.01, "xanchor": "right", "x": 1,
                "font": {"size": 12}},
        uirevision="multiclass",
    )
    fig = go.Figure(layout=layout)
    for row_number, (y, r) in enumerate(zip(positions, rows)):
        first = row_number == 0
        i, name = r["index"], r["name"]
        color = classifier_color(i)
        fig.add_trace(go.Scatter(
            x=np.array([r["low"], r["high"]], dtype=np.float64), y=np.array([y, y]),
            mode="lines+markers", uid=f"bcost-{i}", meta=name, legendgroup="bcost",
            name="bootstrap interval (BCOST)", showlegend=first,
            line={"color": color, "width": 7}, marker={"symbol": "line-ns", "size": 14,
                                                       "line": {"width": 2, "color": color}},
            hovertemplate=(f"<b>{name}</b><br>BCOST {level_text(level)} interval<br>"
                           "%{x:.6g}<extra></extra>")))
        fig.add_trace(go.Scatter(
            x=np.array([r["normal_low"], r["normal_high"]], dtype=np.float64),
            y=np.array([y - NORMAL_OFFSET] * 2), mode="lines", uid=f"normal-{i}", meta=name,
            legendgroup="normal", name="normal (z) interval", showlegend=first,
            line={"color": color, "width": 2, "dash": "dash"},
            hovertemplate=(f"<b>{name}</b><br>normal {level_text(level)} interval<br>"
                           "%{x:.6g}<extra></extra>")))
        fig.add_trace(go.Scatter(
            x=np.array([r["cost"]], dtype=np.float64), y=np.array([y]), mode="markers",
            uid=f"cost-{i}", meta=name, legendgroup="cost", name="observed average cost",
            showlegend=first,
            marker={"symbol": "diamond", "size": 11, "color": "#fff",
                    "line": {"color": HULL_COLOR, "width": 2}},
            hovertemplate=f"<b>{name}</b><br>observed average cost %{{x:.6g}}<extra></extra>"))
    return fig
