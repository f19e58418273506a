"""ROC space: every classifier's ROC curve, the ROC convex hull, dominated classifiers faded.

The iso-performance line and the chosen vertex are not drawn here: they move with the operating
conditions and are layout shapes set in the browser (``assets/explore-readouts.js``), so a
slider never waits for the server.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any, NamedTuple

import numpy as np
import plotly.graph_objects as go

from dashboard.figures.axes import fpr_floor, fpr_samples, log_fpr, log_fpr_axis
from dashboard.figures.common import (as_array, axis, base_layout, fixed_x_margin, interval_text,
                                      legend_policy, text_array, threshold_text,
                                      make_figure, visible_points)
from dashboard.figures.palette import (HULL_COLOR, TRIVIAL_COLOR, ClassifierStyle,
                                       classifier_style)

DOMINATED_OPACITY = 0.4
MARKERS_PER_CURVE = 8
"""Markers drawn along each curve (its symbol tells classifiers apart beside colour and dash)."""


def vertex_intervals(view: dict[str, Any]) -> list[tuple[float, float] | None]:
    """For each overall hull vertex, the PC(+) interval where it is optimal (from the envelope)."""
    env = view["envelope"]
    out: list[tuple[float, float] | None] = [None] * len(view["hull"]["fpr"])
    for j, v in enumerate(env["vertex"]):
        out[v] = (env["pc"][j], env["pc"][j + 1])
    return out


def shown_classifiers(view: dict[str, Any], hull_only: bool) -> list[dict[str, Any]]:
    """The classifier entries a plot draws: the ticked ones, without the dominated ones (those
    never on the hull) when ``hull_only``."""
    selected, dominated = set(view["models"]), set(view["dominated"])
    return [c for c in view["classifiers"] if c["name"] in selected
            and not (hull_only and c["name"] in dominated)]


class Drawn(NamedTuple):
    """One shown classifier as ROC and cost space draw it."""

    entry: dict[str, Any]
    name: str
    dominated: bool
    style: ClassifierStyle
    label: str
    """Its legend name: ``"<name> (dominated)"`` when it never reaches the hull."""
    opacity: float
    """``DOMINATED_OPACITY`` when dominated, else 1."""


def drawn_classifiers(view: dict[str, Any], shown: list[dict[str, Any]]) -> Iterator[Drawn]:
    """The ``shown`` classifier entries of ``view`` with their style, and their legend name and
    opacity (dominated ones faded)."""
    dominated = set(view["dominated"])
    for c in shown:
        name, is_dominated = c["name"], c["name"] in dominated
        yield Drawn(c, name, is_dominated, classifier_style(c["index"]),
                    f"{name} (dominated)" if is_dominated else name,
                    DOMINATED_OPACITY if is_dominated else 1.0)


def _densified_hull(fpr: np.ndarray, tpr: np.ndarray, floor: float) -> tuple[np.ndarray,
                                                                            np.ndarray]:
    """The hull's straight edges sampled along the log FPR axis (curves there)."""
    xs, ys = [fpr[:1]], [tpr[:1]]
    for k in range(len(fpr) - 1):
        f = fpr_samples(fpr[k], fpr[k + 1], floor)[1:]
        span = fpr[k + 1] - fpr[k]
        share = (f - fpr[k]) / span if span > 0 else np.ones_like(f)
        t = tpr[k] + (tpr[k + 1] - tpr[k]) * share
        xs.append(f)
        ys.append(t)
    return np.concatenate(xs), np.concatenate(ys)


def _drawn_points(c: dict[str, Any], x: np.ndarray, y: np.ndarray, x_range: list[float],
                  y_range: list[float]) -> np.ndarray:
    """The indices of a classifier's ROC points the plot draws: those a line needs at the
    plot's resolution (:func:`~dashboard.figures.common.visible_points`) and every point that
    is a vertex of the classifier's own hull."""
    hull = set(zip(c["hull"]["fpr"], c["hull"]["tpr"]))
    on_hull = np.fromiter(((f, t) in hull for f, t in zip(c["roc"]["fpr"], c["roc"]["tpr"])),
                          dtype=bool, count=len(x))
    return visible_points(x, y, x_span=x_range[1] - x_range[0],
                          y_span=y_range[1] - y_range[0], keep=on_hull)


def roc_figure(view: dict[str, Any] | None, *, log_fpr_scale: bool = False,
               hull_only: bool = False, legend: bool | None = None,
               thin: bool = False, validate: bool = True) -> go.Figure:
    """The ROC-space figure of a view model (:func:`dashboard.viewmodel.build_view_model`).

    Traces, each with a ``uid``: ``chance`` (the diagonal), ``roc-<i>`` per shown classifier
    (``i`` its position in the data set, its name in ``meta``; thinned curve in the classifier's
    style, faded when dominated), ``hull`` (exact vertices; with ``log_fpr_scale`` the edges
    sampled as curves and the vertices in ``hull-vertices``). Plotly puts uids in CSS class
    names, so they never contain a classifier's name.

    Parameters
    ----------
    log_fpr_scale : bool
        x is log10 FPR (:mod:`dashboard.figures.axes`), for rare events.
    hull_only : bool
        Leave out the dominated classifiers.
    legend : bool or None
        See :func:`dashboard.figures.common.legend_policy`.
    thin : bool
        Draw of each classifier's curve only the points a line needs at the plot's resolution
        (:func:`_drawn_points`: its hull vertices always): the same picture with a fraction of
        the points, so a fraction of the hover texts to build, send and hand to Plotly (issue
        23: the first paint after an upload). The points drawn keep their exact values.
    validate : bool
        Every property checked by plotly's validators; False: the same figure built without
        them, in a third of the time (:func:`dashboard.figures.common.make_figure`: Explore's
        view load, issue 23).
    """
    floor = fpr_floor((view or {}).get("n_neg", 1))
    if log_fpr_scale:
        xaxis = axis("False positive rate (FPR, log scale)", **log_fpr_axis(floor))
        yaxis = axis("True positive rate (TPR)", range=[-0.01, 1.01])
        x_of = lambda f: log_fpr(f, floor)  # noqa: E731
    else:
        xaxis = axis("False positive rate (FPR)", range=[-0.01, 1.01], constrain="domain")
        yaxis = axis("True positive rate (TPR)", range=[-0.01, 1.01], constrain="domain",
                     scaleanchor="x", scaleratio=1)
        x_of = as_array
    shown = shown_classifiers(view, hull_only) if view else []
    in_legend, legend_layout = legend_policy(len(shown), legend)
    layout = base_layout(xaxis=xaxis, yaxis=yaxis,
                         uirevision=(view or {}).get("id", "empty"))
    layout["legend"] = {**layout["legend"], **legend_layout}
    if view and not in_legend:  # the legend is the hull's one row: nothing to wrap
        layout = fixed_x_margin(layout)
    traces: list[dict[str, Any]] = []
    chance_f = fpr_samples(0.0, 1.0, floor) if log_fpr_scale else np.array([0.0, 1.0])
    traces.append(dict(x=x_of(chance_f), y=np.asarray(chance_f), mode="lines",
                             line={"color": TRIVIAL_COLOR, "dash": "dot", "width": 1},
                             name="chance", uid="chance", hoverinfo="skip", showlegend=False))
    if not view:
        return make_figure(layout, traces, validate=validate)
    for c, name, is_dominated, style, label, opacity in drawn_classifiers(view, shown):
        roc = c["roc"]
        fpr, tpr = as_array(roc["fpr"]), as_array(roc["tpr"])
        x = x_of(fpr)
        drawn = (_drawn_points(c, x, tpr, xaxis["range"], yaxis["range"]) if thin
                 else np.arange(fpr.size))
        thresholds = [roc["threshold"][i] for i in drawn.tolist()]
        x, fpr, tpr = x[drawn], fpr[drawn], tpr[drawn]
        traces.append(dict(
            x=x, y=tpr, mode="lines+markers",
            name=label, uid=f"roc-{c['index']}",
            meta=name, showlegend=in_legend,
            legendgroup=name, opacity=opacity,
            line={"color": style.color, "width": 2, "dash": style.dash},
            marker={"symbol": style.symbol, "size": 7, "color": style.color,
                    "maxdisplayed": MARKERS_PER_CURVE},
            customdata=text_array(threshold_text(t) for t in thresholds),
            # On the log axis x is log10 FPR: the hover reads FPR from text (only then: an
            # array of strings per point costs the first plot time with 50 classifiers).
            hovertemplate=(f"<b>{name}</b><br>threshold %{{customdata}}<br>FPR "
                           + ("%{text}" if log_fpr_scale else "%{x:.4f}")
                           + f"<br>TPR %{{y:.4f}}<br>operating range "
                           f"{interval_text(c['operating_range'])}"
                           + ("<br><i>dominated: never optimal</i>" if is_dominated else "")
                           + "<extra></extra>"),
            **({"text": text_array(f"{f:.4g}" for f in fpr)}
               if log_fpr_scale else {}),
        ))
    hull = view["hull"]
    intervals = vertex_intervals(view)
    hull_fpr, hull_tpr = as_array(hull["fpr"]), as_array(hull["tpr"])
    vertex_text = text_array(
        [name, threshold_text(t), interval_text(iv) if iv else "PC(+) = 0 or 1 only",
         f"{f:.4g}"]
        for name, t, iv, f in zip(hull["classifier"], hull["threshold"], intervals, hull_fpr))
    vertex_hover = ("<b>%{customdata[0]}</b> (hull vertex)<br>threshold %{customdata[1]}"
                    "<br>FPR %{customdata[3]}<br>TPR %{y:.4f}<br>optimal for %{customdata[2]}"
                    "<extra></extra>")
    if log_fpr_scale:
        f, t = _densified_hull(hull_fpr, hull_tpr, floor)
        traces.append(dict(x=x_of(f), y=t, mode="lines", name="ROC convex hull",
                                 uid="hull", line={"color": HULL_COLOR, "width": 2.5},
                                 hoverinfo="skip"))
        traces.append(dict(
            x=x_of(hull_fpr), y=hull_tpr, mode="markers", name="hull vertices",
            uid="hull-vertices", showlegend=False, marker={"size": 6, "color": HULL_COLOR},
            customdata=vertex_text, hovertemplate=vertex_hover))
    else:
        traces.append(dict(
            x=hull_fpr, y=hull_tpr, mode="lines+markers", name="ROC convex hull", uid="hull",
            line={"color": HULL_COLOR, "width": 2.5}, marker={"size": 6, "color": HULL_COLOR},
            customdata=vertex_text, hovertemplate=vertex_hover))
    return make_figure(layout, traces, validate=validate)
