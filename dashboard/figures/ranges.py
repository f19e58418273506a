"""Operating ranges as a strip chart: one labelled row per classifier on the lower envelope.

Each row shows, on the PC(+) axis of cost space, where that classifier is the best choice of all
(a thick bar per piece of the overall lower envelope it forms) and, thinner and lighter, its own
operating range (where its own envelope beats both trivial classifiers, Drummond & Holte). The
trivial choices get a grey row each when they form part of the envelope. Rows run top to bottom
in the order they become best as PC(+) grows. The vertical line at the current PC(+) is an element
the browser places over the plot (``assets/explore-geometry.js``).
"""

from __future__ import annotations

from typing import Any

import numpy as np
import plotly.graph_objects as go

from costdash.hull import ALL_NEGATIVE, ALL_POSITIVE
from dashboard.figures.axes import log_odds, log_odds_axis
from dashboard.figures.common import axis, base_layout, interval_text
from dashboard.figures.palette import TRIVIAL_COLOR, classifier_style

ROW_PX = 26
"""Height of one row in pixels (the figure grows with the number of rows)."""
FRAME_PX = 78
TRIVIAL_LABELS = {ALL_NEGATIVE: "flag nothing", ALL_POSITIVE: "flag everything"}


def envelope_pieces(view: dict[str, Any]) -> dict[str, list[tuple[float, float]]]:
    """For each classifier (or trivial choice) on the overall lower envelope, the PC(+)
    intervals where it forms the envelope, adjacent pieces merged; in order of appearance."""
    env, hull = view["envelope"], view["hull"]
    out: dict[str, list[tuple[float, float]]] = {}
    for j, v in enumerate(env["vertex"]):
        name, lo, hi = hull["classifier"][v], env["pc"][j], env["pc"][j + 1]
        if hi <= lo:
            continue
        pieces = out.setdefault(name, [])
        if pieces and pieces[-1][1] == lo:
            pieces[-1] = (pieces[-1][0], hi)
        else:
            pieces.append((lo, hi))
    return out


def ranges_height(view: dict[str, Any] | None) -> int:
    """Pixel height of :func:`ranges_figure` for ``view``."""
    rows = len(envelope_pieces(view)) if view else 1
    return FRAME_PX + ROW_PX * max(rows, 1)


def ranges_figure(view: dict[str, Any] | None, *, log_pc_scale: bool = False) -> go.Figure:
    """The strip chart of a view model (rows: see the module's docstring).

    Traces, each with a ``uid``: ``best-<i>`` (where classifier ``i`` forms the envelope, its
    name in ``meta``, the interval as bar text), ``range-<i>`` (its operating range), and
    ``best-all-negative`` / ``best-all-positive`` for the trivial choices.
    """
    x_of = log_odds if log_pc_scale else (lambda pc: np.asarray(pc, dtype=np.float64))
    xaxis = (axis("PC(+), log odds", **log_odds_axis()) if log_pc_scale
             else axis("PC(+)", range=[0, 1], dtick=0.1))
    pieces = envelope_pieces(view) if view else {}
    names = list(pieces)
    layout = base_layout(
        xaxis={**xaxis, "title": {"text": xaxis["title"]["text"], "standoff": 4}},
        yaxis={"type": "category", "categoryorder": "array", "categoryarray": names[::-1],
               "automargin": True, "showgrid": False, "ticks": "", "mirror": True,
               "range": [-0.6, max(len(names), 1) - 0.4], "fixedrange": True},
        height=ranges_height(view), showlegend=False, barmode="overlay", bargap=0.3,
        margin={"l": 8, "r": 16, "t": 8, "b": 40},
        uirevision=(view or {}).get("id", "empty"))
    fig = go.Figure(layout=layout)
    if not view:
        return fig
    entries = {c["name"]: c for c in view["classifiers"]}
    for name in names:
        intervals = pieces[name]
        trivial = name in TRIVIAL_LABELS
        entry = entries.get(name)
        color = TRIVIAL_COLOR if trivial or entry is None else \
            classifier_style(entry["index"]).color
        uid = f"best-{name}" if trivial else f"best-{entry['index']}"
        label = TRIVIAL_LABELS.get(name, name)
        lo = np.array([a for a, _ in intervals])
        hi = np.array([b for _, b in intervals])
        rng = None if trivial or entry is None else entry["operating_range"]
        if rng:
            x0, x1 = x_of(np.array(rng))
            fig.add_trace(go.Bar(
                y=[label], x=[x1 - x0], base=[x0], orientation="h", width=0.22,
                uid=f"range-{entry['index']}", meta=name, marker={"color": color, "opacity": 0.35,
                                                                  "line": {"width": 0}},
                hovertemplate=(f"<b>{name}</b><br>operating range {interval_text(rng)}"
                               "<br>(its own envelope beats both trivial classifiers)"
                               "<extra></extra>")))
        texts = [f"{a:.3g}–{b:.3g}" for a, b in intervals]
        fig.add_trace(go.Bar(
            y=[label] * len(intervals), x=x_of(hi) - x_of(lo), base=x_of(lo), orientation="h",
            width=0.62, uid=uid, meta=name, text=texts, textposition="inside",
            insidetextanchor="middle", textfont={"size": 10, "color": "#ffffff"},
            constraintext="both",
            marker={"color": color, "line": {"width": 0}},
            customdata=np.array(texts, dtype=object),
            hovertemplate=(f"<b>{label}</b> is the best choice for PC(+) in %{{customdata}}"
                           "<extra></extra>")))
    return fig
