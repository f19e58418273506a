"""The Curves page's figures: precision–recall, gains and lift, score distributions, reliability.

Pure builders from :mod:`costdash.curves` results to ``go.Figure``; nothing is computed here but
where a marked ROC point lands in each plot (through the core's :func:`~costdash.curves.pr_point`
and :func:`~costdash.curves.flagged_share`).

The figures are linked by hover in the browser (the page's clientside callback): every trace a
reader can hover carries the thresholds it stands for in ``customdata`` and ``meta`` =
``{"role", "classifier"}``; every figure ends with its ``hover`` traces (uid ``hover`` and
``hover-lift``), empty until a threshold is hovered somewhere. Trace uids never contain a
classifier's name (plotly puts uids in CSS class names).
"""

from __future__ import annotations

import functools
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np
import plotly.graph_objects as go
from plotly.subplots import make_subplots

from costdash.curves import (GainsCurve, IsoF1, PrCurve, PrHull, Reliability, ScoreHistograms,
                             flagged_share, pr_point)
from costdash.view import number_text
from dashboard.figures.choice import merged
from dashboard.figures.common import axis, base_layout, threshold_text
from dashboard.figures.palette import HULL_COLOR, TRIVIAL_COLOR, classifier_style

__all__ = ["Mark", "CHOICE_COLOR", "gains_dict", "gains_figure", "histogram_figure", "pr_dict",
           "pr_figure", "reliability_dict", "reliability_figure"]

CHOICE_COLOR = "#000000"
PIN_COLORS = ("#D55E00", "#0072B2", "#009E73", "#CC79A7")
"""Pinned thresholds' colours, by slot (as Explore's pins)."""
HOVER_COLOR = "#7b2ff7"
LEGEND_MAX = 8
"""Past this many classifiers the legend gets a smaller font and a bounded height."""


@dataclass(frozen=True)
class Mark:
    """A point to mark in every plot: the current choice or a pinned threshold.

    Attributes
    ----------
    label : str
        ``"current choice"``, ``"pin 1"``, ...
    classifier : str
        Who realises it (``all-negative`` / ``all-positive`` for the trivial choices).
    threshold : float
        Its threshold (``score >= threshold`` is flagged); NaN for the trivial choices.
    fpr, tpr : float
        Its ROC point.
    slot : int
        -1 for the current choice, else the pin's position (its colour).
    """

    label: str
    classifier: str
    threshold: float
    fpr: float
    tpr: float
    slot: int = -1

    @property
    def color(self) -> str:
        return CHOICE_COLOR if self.slot < 0 else PIN_COLORS[self.slot % len(PIN_COLORS)]

    @property
    def symbol(self) -> str:
        return "star" if self.slot < 0 else "diamond"

    def hover(self, extra: str = "") -> str:
        return (f"<b>{self.label}</b>: {self.classifier}<br>threshold "
                f"{threshold_text(None if math.isnan(self.threshold) else self.threshold)}"
                f"{extra}<extra></extra>")


def _legend(layout: dict, count: int) -> None:
    if count > LEGEND_MAX:
        layout["legend"] = {**layout["legend"], "maxheight": 0.22, "font": {"size": 10},
                            "tracegroupgap": 2, "entrywidth": 110}


_FEW_ENTRIES = {"maxheight": None, "entrywidth": None, "font": {"size": 12}}


def _list_is_legend(fig: go.Figure | dict, count: int) -> None:
    """Past :data:`LEGEND_MAX` classifiers, none of them in the plot's own legend: the page's
    classifier list with its swatches is the legend then (as on Explore), and the plot keeps its
    height (a legend of 50 entries was taller than the plot, issue 23). ``fig``: a figure or
    a plain figure dict."""
    if count <= LEGEND_MAX:
        return
    # What is left (iso-F1, the hull, the marks) is a few entries: full width, usual font.
    if isinstance(fig, dict):
        fig["layout"] = merged(fig["layout"], {"legend": _FEW_ENTRIES})
        for trace in fig["data"]:
            meta = trace.get("meta") if isinstance(trace.get("meta"), dict) else {}
            if meta.get("classifier") and meta.get("role") in ("curve", "calibration"):
                trace["showlegend"] = False
        return
    fig.update_layout(legend=_FEW_ENTRIES)
    for trace in fig.data:
        meta = trace.meta if isinstance(trace.meta, dict) else {}
        if meta.get("classifier") and meta.get("role") in ("curve", "calibration"):
            trace.showlegend = False


def _style(index: Mapping[str, int], name: str):
    return classifier_style(index.get(name, 0))


def _hover_trace(xaxis: str = "x", yaxis: str = "y", uid: str = "hover") -> dict:
    """The empty trace the page's hover link fills with the hovered threshold's point (a plain
    trace dict)."""
    return dict(type="scatter", x=[], y=[], mode="markers+lines", uid=uid, name="hovered threshold",
                      showlegend=False, hoverinfo="skip", xaxis=xaxis, yaxis=yaxis,
                      meta={"role": "hover"},
                      marker={"size": 16, "color": "rgba(0,0,0,0)",
                              "line": {"color": HOVER_COLOR, "width": 3}},
                      line={"color": HOVER_COLOR, "width": 2, "dash": "dot"})


def _message_figure(layout: dict, message: str) -> go.Figure:
    import textwrap

    fig = go.Figure(layout=layout)
    # Wrapped: one line of 70 characters ran off a plot 300 px wide.
    fig.add_annotation(text="<br>".join(textwrap.wrap(message, 36)), x=0.5, y=0.5,
                       xref="paper", yref="paper",
                       showarrow=False, font={"size": 13, "color": "#57606a"})
    return fig


# --- precision–recall ----------------------------------------------------------------------------

def pr_figure(curves: Sequence[PrCurve], index: Mapping[str, int], *,
              hull: PrHull | None = None, iso: Sequence[IsoF1] = (),
              marks: Sequence[Mark] = (), uirevision: str = "empty") -> go.Figure:
    """Precision–recall space (:func:`pr_dict` as a figure).

    Traces: ``iso-f1-<k>`` (grey, labelled F1 = …), ``pr-<i>`` per classifier (``i`` its
    position in the data set; ``customdata`` its thresholds), ``pr-hull`` (the ROC convex hull
    mapped into PR space, edges interpolated along the mix, dashed) and ``pr-hull-vertices``,
    ``mark-choice`` / ``mark-pin-<k>`` (one point each), then ``hover``.

    Parameters
    ----------
    curves : sequence of PrCurve
        One per shown classifier, all at one prior.
    index : mapping
        Each classifier's position in the data set (its style).
    hull : PrHull, optional
    iso : sequence of IsoF1
    marks : sequence of Mark
        Mapped with :func:`costdash.curves.pr_point` at the curves' prior.
    uirevision : str
        Keeps zoom while the same data set is shown.
    """
    return go.Figure(pr_dict(curves, index, hull=hull, iso=iso, marks=marks,
                             uirevision=uirevision))


def pr_dict(curves: Sequence[PrCurve], index: Mapping[str, int], *,
            hull: PrHull | None = None, iso: Sequence[IsoF1] = (),
            marks: Sequence[Mark] = (), uirevision: str = "empty") -> dict:
    """:func:`pr_figure` as a plain figure dict (``data``, ``layout``; its template named),
    built without plotly's validation of each property (the report writes it directly:
    issue 23)."""
    prior = curves[0].prior if curves else (hull.prior if hull is not None else None)
    title = "Precision" if prior is None else (
        "Precision (test set's counts)" if curves and curves[0].from_counts
        else f"Precision at p(+) = {prior:.4g}")
    layout = base_layout(xaxis=axis("Recall (TPR)", range=[-0.01, 1.01], dtick=0.2),
                         yaxis=axis(title, range=[-0.01, 1.03], dtick=0.2),
                         uirevision=uirevision)
    _legend(layout, len(curves))
    if not curves and hull is None:
        return _message_figure(layout, "Open a data set to see precision–recall."
                               ).to_plotly_json()
    data: list[dict] = []
    notes: list[dict] = []
    for k, line in enumerate(iso):
        data.append(dict(
            type="scatter", x=line.recall, y=line.precision, mode="lines", uid=f"iso-f1-{k}",
            name="iso-F1", legendgroup="iso-f1", showlegend=k == 0,
            line={"color": "#c4c9cf", "width": 1}, hoverinfo="skip"))
        notes.append(dict(x=float(line.recall[0]), y=1.0, text=f"F1 = {line.level:g}",
                          showarrow=False, xanchor="right", yanchor="bottom", xshift=-2,
                          yshift=-14, font={"size": 10, "color": "#8c959f"}))
    for c in curves:
        i = index.get(c.name, 0)
        style = _style(index, c.name)
        data.append(dict(
            type="scatter", x=c.recall, y=c.precision, mode="lines", uid=f"pr-{i}", name=c.name,
            legendgroup=c.name, meta={"role": "curve", "classifier": c.name},
            line={"color": style.color, "width": 2, "dash": style.dash, "shape": "linear"},
            customdata=c.threshold,
            hovertemplate=(f"<b>{c.name}</b><br>score ≥ %{{customdata:.6g}}<br>recall "
                           "%{x:.4f}<br>precision %{y:.4f}<extra></extra>")))
    if hull is not None:
        data.append(dict(
            type="scatter", x=hull.recall, y=hull.precision, mode="lines", uid="pr-hull",
            name="ROC hull in PR space (interpolated)",
            line={"color": HULL_COLOR, "width": 2, "dash": "dash"}, hoverinfo="skip"))
        inner = slice(1, -1) if hull.vertex_recall.size > 2 else slice(0, 0)
        data.append(dict(
            type="scatter", x=hull.vertex_recall[inner], y=hull.vertex_precision[inner],
            mode="markers",
            uid="pr-hull-vertices", name="hull vertices", showlegend=False,
            marker={"size": 7, "color": HULL_COLOR},
            text=np.array(hull.classifier[inner], dtype=object),
            customdata=hull.threshold[inner],
            meta={"role": "vertices"},
            hovertemplate=("<b>%{text}</b> (hull vertex)<br>score ≥ %{customdata:.6g}"
                           "<br>recall %{x:.4f}<br>precision %{y:.4f}<extra></extra>")))
    for m in marks:
        if prior is None:
            break
        recall, precision = pr_point(m.fpr, m.tpr, prior=prior)
        if not math.isfinite(precision):        # flags nothing: no precision to mark
            continue
        data.append(_mark_trace(m, [recall], [precision], extra=(
            f"<br>recall {recall:.4f}<br>precision {precision:.4f}"
            f"<br>F1 {2 * precision * recall / (precision + recall):.4f}"
            if precision + recall > 0 else "")))
    data.append(_hover_trace())
    layout = _without_empty({**layout, "annotations": [*layout["annotations"], *notes]})
    fig = {"data": data, "layout": layout}
    _list_is_legend(fig, len(curves))
    return fig


def _mark_trace(m: Mark, x: Sequence[float], y: Sequence[float], *, extra: str = "",
                xaxis: str = "x", yaxis: str = "y", legend: bool = True) -> dict:
    uid = "mark-choice" if m.slot < 0 else f"mark-pin-{m.slot}"
    return dict(
        type="scatter", x=np.asarray(x, dtype=np.float64), y=np.asarray(y, dtype=np.float64),
        mode="markers",
        uid=uid if legend else uid + "-2", name=f"{m.label}: {m.classifier}",
        legendgroup=uid, showlegend=legend, xaxis=xaxis, yaxis=yaxis,
        meta={"role": "mark", "classifier": m.classifier},
        customdata=np.array([m.threshold], dtype=np.float64),
        marker={"symbol": m.symbol, "size": 15 if m.slot < 0 else 12, "color": m.color,
                "line": {"color": "white", "width": 1.5}},
        hovertemplate=m.hover(extra))


# --- gains and lift ------------------------------------------------------------------------------

def gains_figure(curves: Sequence[GainsCurve], index: Mapping[str, int], *,
                 capacity_share: float | None = None,
                 capacity_point: tuple[float, float] | None = None,
                 marks: Sequence[Mark] = (), uirevision: str = "empty") -> go.Figure:
    """Cumulative gains (top) and lift (bottom) against the share of cases flagged.

    Traces: ``gains-baseline`` (random flagging), ``gains-<i>`` and ``lift-<i>`` per classifier
    (``customdata`` their thresholds), ``capacity`` (the vertical line at the capacity's share)
    and ``capacity-best`` (the best the hull can catch within it), ``mark-…``, then ``hover``
    and ``hover-lift``.

    Parameters
    ----------
    capacity_share : float, optional
        Capacity over volume: the largest share of cases that may be flagged.
    capacity_point : (float, float), optional
        ``(share flagged, share of positives caught)`` of the best point within the capacity
        (:func:`costdash.criteria.workforce`).
    """
    return go.Figure(gains_dict(curves, index, capacity_share=capacity_share,
                                capacity_point=capacity_point, marks=marks,
                                uirevision=uirevision))


@functools.lru_cache(maxsize=4)
def _two_rows(top: float, bottom: float, spacing: float) -> dict:
    """The axes of two rows sharing x, of relative heights ``top`` and ``bottom``
    (make_subplots' layout but its template), computed once."""
    layout = make_subplots(rows=2, cols=1, shared_xaxes=True, row_heights=[top, bottom],
                           vertical_spacing=spacing).to_plotly_json()["layout"]
    return {k: v for k, v in layout.items() if k != "template"}


def _without_empty(layout: dict) -> dict:
    """``layout`` without an empty list of shapes or annotations, as plotly's validation
    leaves them out."""
    return {k: v for k, v in layout.items()
            if not (k in ("shapes", "annotations") and isinstance(v, list) and not v)}


def gains_dict(curves: Sequence[GainsCurve], index: Mapping[str, int], *,
               capacity_share: float | None = None,
               capacity_point: tuple[float, float] | None = None,
               marks: Sequence[Mark] = (), uirevision: str = "empty") -> dict:
    """:func:`gains_figure` as a plain figure dict (``data``, ``layout``; its template named),
    built without plotly's validation of each property (the report writes it directly:
    issue 23)."""
    prior = curves[0].prior if curves else None
    layout = base_layout(uirevision=uirevision)
    _legend(layout, len(curves))
    x_title = ("Share of cases flagged" if prior is None
               else f"Share of cases flagged<br>(at p(+) = {prior:.4g})")  # fits 390 px
    layout = merged(_two_rows(0.66, 0.34, 0.06), {
        **layout,
        "xaxis": axis("", range=[-0.01, 1.01], dtick=0.2),
        "xaxis2": axis(x_title, range=[-0.01, 1.01], dtick=0.2),
        "yaxis": axis("Share of positives caught", range=[-0.01, 1.03], dtick=0.2),
        "yaxis2": axis("Lift", rangemode="tozero")})
    layout = _without_empty(layout)
    if not curves:
        layout["annotations"] = [dict(
            text="Open a data set to see gains and lift.", x=0.5, y=0.5, xref="paper",
            yref="paper", showarrow=False, font={"size": 13, "color": "#57606a"})]
        return {"data": [], "layout": layout}
    top, bottom = {"xaxis": "x", "yaxis": "y"}, {"xaxis": "x2", "yaxis": "y2"}
    data: list[dict] = [
        dict(type="scatter", x=[0.0, 1.0], y=[0.0, 1.0], mode="lines", uid="gains-baseline",
             name="random flagging", hoverinfo="skip",
             line={"color": TRIVIAL_COLOR, "dash": "dot", "width": 1}, **top),
        dict(type="scatter", x=[0.0, 1.0], y=[1.0, 1.0], mode="lines", uid="lift-baseline",
             showlegend=False, hoverinfo="skip",
             line={"color": TRIVIAL_COLOR, "dash": "dot", "width": 1}, **bottom)]
    for c in curves:
        i = index.get(c.name, 0)
        style = _style(index, c.name)
        line = {"color": style.color, "width": 2, "dash": style.dash}
        meta = {"role": "curve", "classifier": c.name}
        data.append(dict(
            type="scatter", x=c.flagged, y=c.gain, mode="lines", uid=f"gains-{i}",
            name=c.name, legendgroup=c.name, meta=meta, line=line, customdata=c.threshold,
            hovertemplate=(f"<b>{c.name}</b><br>score ≥ %{{customdata:.6g}}<br>flagged "
                           "%{x:.2%}<br>caught %{y:.2%}<extra></extra>"), **top))
        data.append(dict(
            type="scatter", x=c.flagged[1:], y=c.lift[1:], mode="lines", uid=f"lift-{i}",
            name=c.name, legendgroup=c.name, showlegend=False, meta=meta, line=line,
            customdata=c.threshold[1:],
            hovertemplate=(f"<b>{c.name}</b><br>score ≥ %{{customdata:.6g}}<br>flagged "
                           "%{x:.2%}<br>lift %{y:.3g}<extra></extra>"), **bottom))
    if capacity_share is not None and 0.0 <= capacity_share <= 1.0:
        data.append(dict(
            type="scatter", x=[capacity_share, capacity_share], y=[0.0, 1.0], mode="lines",
            uid="capacity", name=f"capacity: {capacity_share:.2%} of cases",
            line={"color": "#6e7781", "width": 2, "dash": "dash"},
            hovertemplate="capacity: at most %{x:.2%} of cases flagged<extra></extra>", **top))
    if capacity_point is not None:
        data.append(dict(
            type="scatter", x=[capacity_point[0]], y=[capacity_point[1]], mode="markers",
            uid="capacity-best", name="best within capacity (hull)",
            marker={"symbol": "square", "size": 11, "color": "#6e7781",
                    "line": {"color": "white", "width": 1}},
            hovertemplate=("best within capacity<br>flagged %{x:.2%}<br>caught %{y:.2%}"
                           "<extra></extra>"), **top))
    for m in marks:
        if prior is None:
            break
        share = flagged_share(m.fpr, m.tpr, prior=prior)
        lift = m.tpr / share if share > 0 else math.nan
        extra = f"<br>flagged {share:.2%}<br>caught {m.tpr:.2%}<br>lift {lift:.3g}"
        data.append(_mark_trace(m, [share], [m.tpr], extra=extra))
        if math.isfinite(lift):
            data.append(_mark_trace(m, [share], [lift], extra=extra, xaxis="x2", yaxis="y2",
                                    legend=False))
    data.append(_hover_trace())
    data.append(_hover_trace("x2", "y2", uid="hover-lift"))
    fig = {"data": data, "layout": layout}
    _list_is_legend(fig, len(curves))
    return fig


# --- score distributions -------------------------------------------------------------------------

def histogram_figure(hist: ScoreHistograms | None, *, marks: Sequence[Mark] = (),
                     uirevision: str = "empty",
                     message: str = "Open a data set to see the score distributions."
                     ) -> go.Figure:
    """One classifier's score distribution per class (shares of each class, shared bins).

    Traces: ``hist-neg`` and ``hist-pos`` (bars; ``customdata`` each bin's lower edge, so a
    hover names a threshold), ``mark-…`` (a vertical line per mark of this classifier), then
    ``hover`` (a vertical line at the hovered threshold).
    """
    layout = base_layout(xaxis=axis("Score"), yaxis=axis("Share of the class", rangemode="tozero"),
                         barmode="overlay", bargap=0.02, uirevision=uirevision)
    if hist is None:
        return _message_figure(layout, message)
    fig = go.Figure(layout=layout)
    centers = (hist.edges[:-1] + hist.edges[1:]) / 2.0
    widths = np.diff(hist.edges)
    lower = hist.edges[:-1]
    top = float(max(hist.share_negatives.max(initial=0), hist.share_positives.max(initial=0)))
    top = top * 1.08 if top > 0 else 1.0
    meta = {"role": "bins", "classifier": hist.name}
    for uid, label, share, count, color in (
            ("hist-neg", "negatives", hist.share_negatives, hist.negatives, "#8c959f"),
            ("hist-pos", "positives", hist.share_positives, hist.positives, "#0072B2")):
        fig.add_trace(go.Bar(
            x=centers, y=share, width=widths, uid=uid, name=f"{label} ({count.sum():,})",
            marker={"color": color, "opacity": 0.55, "line": {"width": 0}},
            meta=meta, customdata=np.stack([lower, count.astype(np.float64)], axis=-1),
            textposition="none",
            hovertemplate=(f"{label}: %{{customdata[1]:,.0f}} with score in "
                           "[%{customdata[0]:.4g}, …)<br>%{y:.2%} of the class"
                           "<extra></extra>")))
    for m in marks:
        if m.classifier != hist.name or not math.isfinite(m.threshold):
            continue
        fig.add_trace(go.Scatter(
            x=[m.threshold, m.threshold], y=[0.0, top], mode="lines",
            uid="mark-choice" if m.slot < 0 else f"mark-pin-{m.slot}",
            name=f"{m.label}: score ≥ {number_text(m.threshold)}",
            meta={"role": "mark", "classifier": m.classifier},
            customdata=np.array([m.threshold, m.threshold]),
            line={"color": m.color, "width": 3 if m.slot < 0 else 2,
                  "dash": "solid" if m.slot < 0 else "dash"},
            hovertemplate=m.hover()))
    hover = _hover_trace()
    hover["meta"] = {"role": "hover", "top": top}
    fig.add_trace(hover)
    fig.update_yaxes(range=[0, top])
    return fig


# --- reliability ---------------------------------------------------------------------------------

def reliability_figure(results: Sequence[Reliability], index: Mapping[str, int], *,
                       refused: Mapping[str, str] | None = None,
                       uirevision: str = "empty", counts: Reliability | None = None
                       ) -> go.Figure:
    """Reliability diagram: observed share of positives against the mean score per bin.

    Traces: ``perfect`` (the diagonal), ``rel-<i>`` per classifier (named with its Brier score;
    filled bins only, marker area by the number of examples), then ``hover`` (a vertical line
    at the hovered threshold). With ``counts`` (one of ``results``: the classifier whose scores
    the page shows) a second row under the diagram holds ``rel-counts``, its examples per bin
    as bars over the bins' score ranges (equal-width or quantile), and its curve is drawn over
    the others, which fade. Classifiers whose scores are not probabilities are listed in a
    note below the plot (``refused``: name → reason).
    """
    return go.Figure(reliability_dict(results, index, refused=refused, uirevision=uirevision,
                                      counts=counts))


def reliability_dict(results: Sequence[Reliability], index: Mapping[str, int], *,
                     refused: Mapping[str, str] | None = None,
                     uirevision: str = "empty", counts: Reliability | None = None) -> dict:
    """:func:`reliability_figure` as a plain figure dict (``data``, ``layout``; its template
    named), built without plotly's validation of each property (the report writes it
    directly: issue 23)."""
    x_axis = axis("Mean score in the bin", range=[-0.01, 1.01], dtick=0.2)
    y_axis = axis("Observed share of positives", range=[-0.01, 1.01], dtick=0.2)
    layout = base_layout(xaxis=x_axis, yaxis=y_axis, uirevision=uirevision)
    _legend(layout, len(results))
    refused = dict(refused or {})
    if not results:
        why = ("No classifier here has scores in [0, 1], so none can be calibrated."
               if refused else "Open a data set to see the reliability diagram.")
        return _message_figure(layout, why).to_plotly_json()
    if counts is not None:
        peak = float(counts.count.max(initial=0)) or 1.0
        layout = merged(_two_rows(0.74, 0.26, 0.05), {
            **layout,
            "xaxis": axis("", range=[-0.01, 1.01], dtick=0.2),
            # Shorter titles than alone: two rows share the height (390 px wide, issue 28).
            "yaxis": axis("Fraction of positives", range=[-0.01, 1.01], dtick=0.2),
            "xaxis2": axis("Score", range=[-0.01, 1.01], dtick=0.2),
            "yaxis2": axis("Examples", range=[0, peak * 1.45], nticks=3)})
        top = {"xaxis": "x", "yaxis": "y"}
    else:
        top = {}
    notes: list[dict] = []
    data: list[dict] = [dict(type="scatter", x=[0.0, 1.0], y=[0.0, 1.0], mode="lines",
                             uid="perfect", name="perfectly calibrated", hoverinfo="skip",
                             line={"color": TRIVIAL_COLOR, "dash": "dot", "width": 1}, **top)]
    biggest = max(int(r.count.max(initial=0)) for r in results) or 1
    focus = counts.name if counts is not None and len(results) > 1 else None
    ordered = sorted(results, key=lambda r: r.name == focus)      # the focus drawn last
    for r in ordered:
        i = index.get(r.name, 0)
        style = _style(index, r.name)
        keep = r.filled
        size = 6 + 14 * np.sqrt(r.count[keep] / biggest)
        faded = focus is not None and r.name != focus
        data.append(dict(
            type="scatter", x=r.mean_score[keep], y=r.observed[keep], mode="lines+markers",
            uid=f"rel-{i}", name=f"{r.name} (Brier {r.brier:.4f})", legendgroup=r.name,
            meta={"role": "calibration", "classifier": r.name},
            opacity=0.35 if faded else 1.0,
            line={"color": style.color, "width": 1.5 if faded else 3, "dash": style.dash},
            marker={"symbol": style.symbol, "size": size, "color": style.color},
            customdata=np.stack([r.edges[:-1][keep], r.edges[1:][keep],
                                 r.count[keep].astype(np.float64)], axis=-1),
            hovertemplate=(f"<b>{r.name}</b><br>scores in [%{{customdata[0]:.3g}}, "
                           "%{customdata[1]:.3g}]: %{customdata[2]:,.0f} cases<br>mean score "
                           "%{x:.3f}<br>observed %{y:.3f}<extra></extra>"), **top))
    if counts is not None:
        lo, hi = counts.edges[:-1], counts.edges[1:]
        style = _style(index, counts.name)
        data.append(dict(
            type="bar", x=(lo + hi) / 2.0, y=counts.count,
            width=np.maximum(hi - lo, 1e-3) * 0.96,
            uid="rel-counts", name=f"{counts.name}: examples per bin", showlegend=False,
            meta={"role": "counts", "classifier": counts.name},
            marker={"color": style.color, "opacity": 0.6, "line": {"width": 0}},
            customdata=np.stack([lo, hi], axis=-1), textposition="none",
            hovertemplate=(f"<b>{counts.name}</b><br>scores in [%{{customdata[0]:.3g}}, "
                           "%{customdata[1]:.3g}]: %{y:,.0f} examples<extra></extra>"),
            xaxis="x2", yaxis="y2"))
        word = "quantile" if counts.strategy == "quantile" else "equal-width"
        notes.append(dict(text=f"{counts.name}: examples per bin ({word} bins)", x=0.01,
                          y=0.99, xref="x2 domain", yref="y2 domain", xanchor="left",
                          yanchor="top", showarrow=False,
                          font={"size": 11, "color": "#57606a"}))
    if refused:
        # A few names fit on the plot; more are listed beside it by the page.
        names = (", ".join(sorted(refused)) if len(refused) <= 4
                 else f"{len(refused)} classifiers (listed with the Brier scores)")
        # Two short lines: one ran off the plot at 390 px.
        notes.append(dict(text=f"Not shown (scores outside [0, 1]):<br>{names}", x=0, y=1,
                          xref="paper", yref="paper", xanchor="left", yanchor="top",
                          showarrow=False, font={"size": 11, "color": "#57606a"},
                          align="left"))
    data.append(_hover_trace())
    fig = {"data": data, "layout": _without_empty(
        {**layout, "annotations": [*layout["annotations"], *notes]})}
    _list_is_legend(fig, len(results))
    return fig
