"""The Production page's figure (issue 25): PC(+) per production period, with its interval, over
the policy table's PC(+) ranges.

A pure builder from :class:`costdash.monitor.Watch` to ``go.Figure``. The y axis is PC(+), the
quantity the policy is a function of: each policy piece is a coloured band across the plot
(the classifier optimal there), the deployed choice's range is outlined, and each period is a
point with its interval; a period that alerts (its whole interval outside the deployed range) is
drawn as a red cross. Nothing is computed here but where things land.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import plotly.graph_objects as go

from costdash.monitor import Watch
from costdash.view import number_text
from dashboard.figures.common import axis, base_layout
from dashboard.figures.palette import TRIVIAL_COLOR, classifier_color

__all__ = ["ALERT_COLOR", "production_figure"]

ALERT_COLOR = "#C00000"
DEPLOYED_COLOR = "#000000"


def _piece_color(name: str, names: Sequence[str]) -> str:
    if name in ("all-negative", "all-positive"):
        return TRIVIAL_COLOR
    return classifier_color(list(names).index(name)) if name in names else TRIVIAL_COLOR


def production_figure(result: Watch, classifiers: Sequence[str] = (), *,
                      height: int | None = None) -> go.Figure:
    """PC(+) of each production period over the policy's ranges.

    Parameters
    ----------
    result : Watch
        From :func:`costdash.watch`.
    classifiers : sequence of str
        The data set's classifiers in order (their colours, as on every page).
    height : int, optional
        Fixed height in pixels.

    Returns
    -------
    go.Figure
        Traces (uids): ``estimate`` (every period, error bars = the PC(+) interval),
        ``alert`` (the periods that alert) and ``deployed`` (the deployed range's edges); the
        policy pieces are layout shapes with their classifier named in an annotation.
    """
    labels = [str(p.period) for p in result.periods]
    pc = np.array([p.pc for p in result.periods], dtype=float)
    low = np.array([p.pc_low for p in result.periods], dtype=float)
    high = np.array([p.pc_high for p in result.periods], dtype=float)
    shapes, notes = [], []
    for k, piece in enumerate(result.policy):
        # Neighbouring pieces of one classifier (its thresholds) alternate in strength, so each
        # range stays visible where the colour alone would merge them.
        same = k > 0 and result.policy[k - 1].classifier == piece.classifier
        strong = same and k % 2 == 1
        shapes.append({"type": "rect", "xref": "paper", "x0": 0, "x1": 1, "yref": "y",
                       "y0": piece.pc_lo, "y1": piece.pc_hi, "layer": "below", "line":
                       {"width": 0}, "fillcolor": _piece_color(piece.classifier, classifiers),
                       "opacity": 0.24 if strong else 0.12})
        if piece.pc_hi - piece.pc_lo > 0.04:
            notes.append({"xref": "paper", "x": 1.0, "xanchor": "right", "yref": "y",
                          "y": (piece.pc_lo + piece.pc_hi) / 2, "showarrow": False,
                          "text": piece.classifier if piece.threshold is None else
                          f"{piece.classifier} ≥ {number_text(piece.threshold)}",
                          "font": {"size": 11, "color": "#444"}})
    hover = [f"period {lab}: {p.n:,} cases<br>p(+) {p.p_pos:.4g} [{p.p_pos_low:.4g}, "
             f"{p.p_pos_high:.4g}]<br>PC(+) {p.pc:.4g} [{p.pc_low:.4g}, {p.pc_high:.4g}]<br>"
             f"policy: {p.choice_classifier}"
             + ("" if p.choice_threshold is None else f" ≥ {number_text(p.choice_threshold)}")
             + ("<br>deployed choice still optimal" if p.deployed_optimal else
                f"<br>regret {p.regret_per_period:.4g} over the period")
             for lab, p in zip(labels, result.periods)]
    fig = go.Figure()
    fig.add_trace(go.Scatter(
        x=labels, y=pc, mode="markers+lines", uid="estimate", name="PC(+) estimate",
        line={"color": "#555", "width": 1}, marker={"size": 9, "color": "#222"},
        error_y={"type": "data", "symmetric": False, "array": high - pc,
                 "arrayminus": pc - low, "color": "#444", "thickness": 1.5},
        hovertext=hover, hoverinfo="text"))
    alerts = [i for i, p in enumerate(result.periods) if p.alert]
    fig.add_trace(go.Scatter(
        x=[labels[i] for i in alerts], y=pc[alerts], mode="markers", uid="alert",
        name="alert: the interval left the deployed range",
        marker={"symbol": "x", "size": 14, "color": ALERT_COLOR},
        hovertext=[hover[i] for i in alerts], hoverinfo="text"))
    valid = result.deployed.valid_pc
    if valid is not None:
        for edge in valid:
            shapes.append({"type": "line", "xref": "paper", "x0": 0, "x1": 1, "yref": "y",
                           "y0": edge, "y1": edge,
                           "line": {"color": DEPLOYED_COLOR, "width": 2, "dash": "dash"}})
    deployed = result.deployed
    name = (deployed.classifier if deployed.threshold is None
            else f"{deployed.classifier} ≥ {number_text(deployed.threshold)}")
    fig.add_trace(go.Scatter(x=[None], y=[None], mode="lines", uid="deployed",
                             name=f"deployed: {name}<br>(optimal between the dashed lines)",
                             line={"color": DEPLOYED_COLOR, "dash": "dash", "width": 2}))
    fig.update_layout(**base_layout(
        xaxis=axis("production period", type="category"),
        yaxis=axis("PC(+) (probability cost)", range=[0, 1]),
        shapes=shapes, annotations=notes, **({"height": height} if height else {})))
    return fig
