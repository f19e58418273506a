"""ROC space: every classifier's ROC curve, the ROC convex hull, dominated classifiers greyed.

The iso-performance line and the chosen vertex are not drawn here: they move with the operating
conditions and are layout shapes set in the browser (``assets/explore.js``), so a slider never
waits for the server.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import plotly.graph_objects as go

from dashboard.figures.common import (as_array, axis, base_layout, interval_text, text_array,
                                      threshold_text)
from dashboard.figures.palette import (HULL_COLOR, TRIVIAL_COLOR, classifier_color,
                                       classifier_dash)

DOMINATED_OPACITY = 0.4


def vertex_intervals(view: dict[str, Any]) -> list[tuple[float, float] | None]:
    """For each overall hull vertex, the PC(+) interval where it is optimal (from the envelope)."""
    env = view["envelope"]
    out: list[tuple[float, float] | None] = [None] * len(view["hull"]["fpr"])
    for j, v in enumerate(env["vertex"]):
        out[v] = (env["pc"][j], env["pc"][j + 1])
    return out


def roc_figure(view: dict[str, Any] | None) -> go.Figure:
    """The ROC-space figure of a view model (:func:`dashboard.viewmodel.build_view_model`).

    Traces, each with a ``uid``: ``chance`` (the diagonal), ``roc-<i>`` per selected classifier
    (``i`` its position in the data set, its name in ``meta``; thinned curve, dashed and faded
    when dominated), ``hull`` (exact vertices). Plotly puts uids in CSS class names, so they
    never contain a classifier's name.
    """
    layout = base_layout(
        xaxis=axis("False positive rate (FPR)", range=[-0.01, 1.01], constrain="domain",
                   dtick=0.2),
        yaxis=axis("True positive rate (TPR)", range=[-0.01, 1.01], constrain="domain",
                   scaleanchor="x", scaleratio=1, dtick=0.2),
        uirevision=(view or {}).get("id", "empty"),
    )
    fig = go.Figure(layout=layout)
    fig.add_trace(go.Scatter(x=np.array([0.0, 1.0]), y=np.array([0.0, 1.0]), mode="lines",
                             line={"color": TRIVIAL_COLOR, "dash": "dot", "width": 1},
                             name="chance", uid="chance", hoverinfo="skip", showlegend=False))
    if not view:
        return fig
    selected = set(view["models"])
    dominated = set(view["dominated"])
    for c in view["classifiers"]:
        if c["name"] not in selected:
            continue
        name, is_dominated = c["name"], c["name"] in dominated
        roc = c["roc"]
        fig.add_trace(go.Scatter(
            x=as_array(roc["fpr"]), y=as_array(roc["tpr"]), mode="lines",
            name=f"{name} (dominated)" if is_dominated else name, uid=f"roc-{c['index']}",
            meta=name,
            legendgroup=name, opacity=DOMINATED_OPACITY if is_dominated else 1.0,
            line={"color": classifier_color(c["index"]), "width": 2,
                  "dash": "dash" if is_dominated else classifier_dash(c["index"])},
            customdata=text_array(threshold_text(t) for t in roc["threshold"]),
            hovertemplate=(f"<b>{name}</b><br>threshold %{{customdata}}<br>FPR %{{x:.4f}}"
                           f"<br>TPR %{{y:.4f}}<br>operating range "
                           f"{interval_text(c['operating_range'])}"
                           + ("<br><i>dominated: never optimal</i>" if is_dominated else "")
                           + "<extra></extra>"),
        ))
    hull = view["hull"]
    intervals = vertex_intervals(view)
    fig.add_trace(go.Scatter(
        x=as_array(hull["fpr"]), y=as_array(hull["tpr"]), mode="lines+markers",
        name="ROC convex hull", uid="hull",
        line={"color": HULL_COLOR, "width": 2.5}, marker={"size": 6, "color": HULL_COLOR},
        customdata=text_array(
            [name, threshold_text(t), interval_text(iv) if iv else "PC(+) = 0 or 1 only"]
            for name, t, iv in zip(hull["classifier"], hull["threshold"], intervals)),
        hovertemplate=("<b>%{customdata[0]}</b> (hull vertex)<br>threshold %{customdata[1]}"
                       "<br>FPR %{x:.4f}<br>TPR %{y:.4f}<br>optimal for %{customdata[2]}"
                       "<extra></extra>"),
    ))
    return fig
