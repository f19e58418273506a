"""Shared layout and hover-text helpers of the figure builders (presentation only)."""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import numpy as np
import plotly.graph_objects as go
import plotly.io as pio

from costdash.view import number_text

from dashboard.figures.palette import GRID_COLOR

FONT = "system-ui, -apple-system, 'Segoe UI', Roboto, 'Helvetica Neue', Arial, sans-serif"

GRAPH_CONFIG: dict[str, Any] = {
    "displaylogo": False,
    "responsive": True,
    # plotly.js 4 shows a "Share chart..." button by default that uploads the plot, data
    # included, to Plotly Cloud; uploaded predictions must not leave the server that way.
    "showSendToCloud": False,
    # The camera button's PNG at twice the on-screen resolution, so it stays sharp in slides.
    "toImageButtonOptions": {"format": "png", "scale": 2},
}
"""The ``config`` shared by every ``dcc.Graph``; take it through :func:`graph_config`.

The mode bar's camera button downloads a PNG; ``assets/plot-export.js`` adds a mode-bar button
that downloads the same plot as SVG under the same file name. Not to be mutated.
"""


def graph_config(plot_name: str) -> dict[str, Any]:
    """The ``config`` of one ``dcc.Graph``: :data:`GRAPH_CONFIG`, downloads named after the plot.

    Parameters
    ----------
    plot_name : str
        What the plot shows, e.g. ``"roc"`` or ``"compare-difference"``; unique in the dashboard.

    Returns
    -------
    dict
        A fresh copy, whose downloads are ``costdash-<plot_name>.png`` and ``.svg``.
    """
    return {**GRAPH_CONFIG,
            "toImageButtonOptions": {**GRAPH_CONFIG["toImageButtonOptions"],
                                     "filename": f"costdash-{plot_name}"}}


def base_layout(**overrides: Any) -> dict[str, Any]:
    """Layout shared by the dashboard's figures: plain white, compact, legend below."""
    layout: dict[str, Any] = {
        "template": "simple_white",
        "font": {"family": FONT, "size": 13, "color": "#1f2328"},
        "margin": {"l": 64, "r": 16, "t": 36, "b": 56},
        "hovermode": "closest",
        "hoverlabel": {"align": "left"},
        # At the container's foot, not at a fraction of the plot's height below it: on a narrow
        # screen the plot is short and a fraction put the legend on the x axis's title.
        "legend": {"orientation": "h", "yref": "container", "yanchor": "bottom", "y": 0,
                   "x": 0, "xanchor": "left",
                   "font": {"size": 12}, "itemclick": "toggle",
                   "itemdoubleclick": "toggleothers"},
        "shapes": [],
        "annotations": [],
    }
    layout.update(overrides)
    return layout


LEGEND_MAX = 8
"""Most classifiers a plot lists in its own legend; past this the legend would eat the plot."""


def legend_policy(count: int, legend: bool | None) -> tuple[bool, dict[str, Any]]:
    """Whether the classifiers' traces go in the legend, and the legend's layout.

    ``legend`` None: up to :data:`LEGEND_MAX` classifiers in the usual one-line legend below
    the plot; more in a horizontal legend of bounded height (it scrolls) with a smaller font.
    ``legend`` False: none of them (Explore's classifier list, with its swatches, is the legend
    then). True: all of them, as for None.
    """
    if legend is False:
        return False, {}
    if count <= LEGEND_MAX:
        return True, {}
    return True, {"maxheight": 0.22, "font": {"size": 10}, "tracegroupgap": 2,
                  "entrywidth": 110}


FIXED_BOTTOM = 86
"""The bottom margin of a plot whose legend holds one short row (no classifier in it): the x
axis's tick labels and title (56 px, the base layout's) and the row (29 px at font 12, at the
container's foot), where Plotly's automargin settles at both 1440 and 390 px (84.8 px)."""


def fixed_x_margin(layout: dict[str, Any]) -> dict[str, Any]:
    """``layout`` with its x axis's automargin off and the bottom margin it would settle at
    (:data:`FIXED_BOTTOM`), for a plot whose legend is one short row (issue 23).

    With automargin on, Plotly draws the plot once at the base margin, measures the tick labels
    and title, finds the margin pushed, and draws the whole plot again: with 20 classifiers a
    third of the browser's first paint after an upload. The y axis keeps its automargin (its
    labels fit the base margin, so it pushes nothing, until a zoom shows long ones)."""
    return {**layout, "margin": {**layout["margin"], "b": FIXED_BOTTOM},
            "xaxis": {**layout["xaxis"], "automargin": False}}


def plotly_template(name: str) -> dict[str, Any]:
    """A plotly template by name as JSON-able dicts (made once; an unvalidated figure holds
    it as it is, so it is not to be changed in place)."""
    return _TEMPLATES.get(name) or _TEMPLATES.setdefault(
        name, pio.templates[name].to_plotly_json())


_TEMPLATES: dict[str, dict[str, Any]] = {}
"""Plotly's named templates as JSON (constants of plotly's, filled when first asked)."""


def make_figure(layout: dict[str, Any], traces: Sequence[dict[str, Any]], *,
                validate: bool = True) -> go.Figure:
    """The figure of ``layout`` (a :func:`base_layout`) and scatter ``traces`` (their
    properties), every property checked by plotly's validators, or with ``validate=False``
    taken as it is: the same figure (the same JSON, tests/web/test_figures_unvalidated.py) in a
    third of the time (the validators copy and check every array and the whole template:
    Explore's view load, issue 23). Unvalidated, what the validators would do is done here: the
    named template written out, the empty lists of shapes and annotations left out."""
    if validate:
        return go.Figure(data=[go.Scatter(**t) for t in traces], layout=layout)
    layout = {k: v for k, v in layout.items() if not (k in ("shapes", "annotations") and not v)}
    template = layout.get("template")
    if isinstance(template, str):
        layout["template"] = plotly_template(template)
    return go.Figure({"data": [{**t, "type": "scatter"} for t in traces], "layout": layout},
                     _validate=False)


def axis(title: str, **overrides: Any) -> dict[str, Any]:
    ax: dict[str, Any] = {"title": {"text": title, "standoff": 8}, "showgrid": True,
                          "gridcolor": GRID_COLOR, "zeroline": False, "mirror": True,
                          "ticks": "outside", "automargin": True}
    ax.update(overrides)
    return ax


def threshold_text(value: float | None) -> str:
    """How a score threshold reads in hover text."""
    if value is None or not math.isfinite(value):
        return "none (flags nothing)"
    return f"score ≥ {number_text(value)}"


def interval_text(interval: Sequence[float] | None) -> str:
    if not interval:
        return "none (never beats both trivial classifiers)"
    lo, hi = interval
    return f"PC(+) in [{lo:.4g}, {hi:.4g}]"


def as_array(values: Sequence[float | None]) -> np.ndarray:
    """float64 array (None becomes NaN), so plotly sends it as a typed array."""
    return np.array([np.nan if v is None else v for v in values], dtype=np.float64)


def text_array(values: Sequence[str]) -> np.ndarray:
    return np.array(list(values), dtype=object)


PIXEL_TOLERANCE = 1 / 2000
"""How far (a fraction of each axis's span) a drawn polyline may pass from a point left out
of it: half a pixel of a plot 1,000 px wide or tall, wider than any plot of the dashboard."""


def visible_points(x: np.ndarray, y: np.ndarray, *, x_span: float, y_span: float,
                   tolerance: float = PIXEL_TOLERANCE,
                   keep: np.ndarray | None = None) -> np.ndarray:
    """Indices (increasing) of the points of the polyline ``(x, y)`` a plot needs: the line
    through them passes within ``tolerance`` of each axis's span of every point left out
    (Ramer-Douglas-Peucker in axis-span units, so below a pixel nothing drawn changes).

    The first and last points, those where ``keep`` is True and those with a NaN coordinate
    (and their neighbours, so a gap stays a gap) are always kept. Kept points are the
    caller's own values: whatever a hover shows of them stays exact (issue 23: fewer points
    for Plotly to draw and for the server to describe, not other ones).
    """
    n = len(x)
    if n <= 2:
        return np.arange(n, dtype=np.int64)
    u = np.asarray(x, dtype=np.float64) / (x_span or 1.0)
    v = np.asarray(y, dtype=np.float64) / (y_span or 1.0)
    kept = np.zeros(n, dtype=bool)
    kept[[0, -1]] = True
    if keep is not None:
        kept |= np.asarray(keep, dtype=bool)
    bad = ~(np.isfinite(u) & np.isfinite(v))
    if bad.any():
        kept |= bad | np.roll(bad, 1) | np.roll(bad, -1)
    # Ramer-Douglas-Peucker a level at a time, every open segment at once (a few numpy calls
    # per level, not per segment): each point left out is measured against the segment
    # between its kept neighbours, and each segment's farthest point over the tolerance kept.
    index = np.arange(n)
    while True:
        before = np.maximum.accumulate(np.where(kept, index, 0))
        after = np.minimum.accumulate(np.where(kept, index, n - 1)[::-1])[::-1]
        a, b = before[~kept], after[~kept]
        if a.size == 0:
            break
        du, dv = u[b] - u[a], v[b] - v[a]
        pu, pv = u[~kept] - u[a], v[~kept] - v[a]
        # Distance to the segment (not its line): a point past either end counts in full.
        squared = du * du + dv * dv
        with np.errstate(invalid="ignore", divide="ignore"):
            t = np.where(squared > 0, np.clip((pu * du + pv * dv) / squared, 0.0, 1.0), 0.0)
        dist = np.hypot(pu - t * du, pv - t * dv)
        # The farthest point of each segment (segments are runs of equal ``a``).
        starts = np.flatnonzero(np.r_[True, a[1:] != a[:-1]])
        worst = np.maximum.reduceat(dist, starts)
        over = worst > tolerance
        if not over.any():
            break
        left_out = index[~kept]
        seg_of = np.repeat(np.arange(starts.size), np.diff(np.r_[starts, a.size]))
        farthest = (dist == worst[seg_of]) & over[seg_of]
        # One point per segment: the first of equally far ones.
        first = farthest & np.r_[True, ~(farthest[:-1] & (seg_of[1:] == seg_of[:-1]))]
        kept[left_out[first]] = True
    return np.flatnonzero(kept)
