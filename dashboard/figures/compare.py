"""Two classifiers compared in cost space (the Compare page).

Pure builders: core results in (each classifier's exact :class:`~costdash.costspace.LowerEnvelope`,
their :class:`~costdash.costspace.DifferenceCurve` and optionally the paired
:class:`~costdash.bands.DifferenceBand`), ``plotly.graph_objects.Figure`` out. The numbers are the
core's arrays as they are (numpy, sent as typed arrays); nothing is computed here but positions of
labels.
"""

from __future__ import annotations

import numpy as np
import plotly.graph_objects as go

from costdash.bands import DifferenceBand
from costdash.costspace import DifferenceCurve, LowerEnvelope
from dashboard.figures.bands import (band_name, band_traces, legend_label, rgba, trivial_traces,
                                     y_top)
from dashboard.figures.common import axis, base_layout
from dashboard.figures.palette import HULL_COLOR, TRIVIAL_COLOR, classifier_color, classifier_dash

BETTER_OPACITY = 0.09
BAND_COLOR = "#59636e"
LABEL_MIN_WIDTH = 0.07
"""Narrower "better" ranges are shaded but not labelled (the labels would overlap)."""


def envelopes_figure(a: LowerEnvelope, b: LowerEnvelope, *, names: tuple[str, str],
                     indices: tuple[int, int],
                     difference: DifferenceCurve | None = None) -> go.Figure:
    """Both classifiers' own lower envelopes, with their crossovers marked.

    Traces (``uid``): ``all-negative``, ``all-positive``, ``env-a``, ``env-b`` (names in
    ``meta``), and ``crossovers`` (markers at each crossover on ``a``'s envelope) when
    ``difference`` has any.
    """
    layout = base_layout(
        # Ticks every 0.2, as Explore's: at 390 px wide 0.1's eleven labels touch.
        xaxis=axis("PC(+) (probability × cost)", range=[0, 1], dtick=0.2),
        yaxis=axis("Normalized expected cost", range=[0, y_top([a.cost, b.cost])]),
        uirevision="|".join(names))
    fig = go.Figure(data=trivial_traces(), layout=layout)
    for env, name, index, uid in ((a, names[0], indices[0], "env-a"),
                                  (b, names[1], indices[1], "env-b")):
        fig.add_trace(go.Scatter(
            x=env.pc, y=env.cost, mode="lines", name=name, uid=uid, meta=name,
            line={"color": classifier_color(index), "width": 2.5,
                  "dash": classifier_dash(index)},
            hovertemplate=f"<b>{name}</b><br>PC(+) %{{x:.4f}}<br>cost %{{y:.4f}}<extra></extra>"))
    if difference is not None and difference.crossovers.size:
        x = difference.crossovers
        fig.add_trace(go.Scatter(
            x=x, y=a(x), mode="markers", name="crossover", uid="crossovers",
            marker={"symbol": "circle-open", "size": 12, "color": HULL_COLOR,
                    "line": {"width": 2}},
            hovertemplate="crossover<br>PC(+) %{x:.4f}<br>cost %{y:.4f}<extra></extra>"))
    return fig


def _better_shapes(difference: DifferenceCurve, colors: dict[str, str]
                   ) -> tuple[list[dict], list[dict]]:
    shapes, notes = [], []
    for k, (lo, hi, better) in enumerate(difference.better_intervals()):
        color = colors[better]
        shapes.append({"type": "rect", "name": f"better-{k}", "xref": "x", "yref": "paper",
                       "x0": lo, "x1": hi, "y0": 0, "y1": 1, "layer": "below",
                       "fillcolor": rgba(color, BETTER_OPACITY), "line": {"width": 0}})
        if hi - lo >= LABEL_MIN_WIDTH:
            notes.append({"x": (lo + hi) / 2, "xref": "x", "y": 1.0, "yref": "paper",
                          "yanchor": "bottom", "showarrow": False, "name": f"better-{k}",
                          "text": f"{better} better", "font": {"size": 11, "color": color}})
    return shapes, notes


def difference_figure(difference: DifferenceCurve, *, indices: tuple[int, int],
                      band: DifferenceBand | None = None) -> go.Figure:
    """The exact difference a - b, where each is better, crossovers, and optionally the band.

    Below zero ``a`` is cheaper. Layout shapes ``better-<k>`` shade each PC(+) range where one
    classifier is strictly better (in its colour, labelled when wide enough). Traces (``uid``):
    ``zero``; with a band ``band-low``/``band-high`` (filled between; legend ``band.label``, a
    level only when the band is calibrated), for a band of fixed or selected thresholds
    ``band-diff`` (its own estimate, ``band.diff``: on the held-out rows for selected ones), and
    one ``significant-a`` / ``significant-b`` bar along the bottom per classifier with
    significant ranges (a calibrated band only: an uncalibrated one has none);
    ``difference`` (exact, on the merged breakpoints); ``crossovers`` (markers at y = 0).
    """
    a, b = difference.a, difference.b
    colors = {a: classifier_color(indices[0]), b: classifier_color(indices[1])}
    values = [np.abs(difference.diff)]
    if band is not None:
        values += [np.abs(band.low), np.abs(band.high), np.abs(band.diff)]
    reach = max(0.02, float(max(np.max(v) for v in values)) * 1.15)
    shapes, notes = _better_shapes(difference, colors)
    layout = base_layout(
        # Ticks every 0.2, as Explore's: at 390 px wide 0.1's eleven labels touch.
        xaxis=axis("PC(+) (probability × cost)", range=[0, 1], dtick=0.2),
        yaxis=axis(f"Cost difference: {a} − {b}",
                   range=[-reach * (1.12 if band is not None else 1.0), reach], zeroline=False),
        shapes=shapes, annotations=notes, uirevision=f"{a}|{b}")
    fig = go.Figure(layout=layout)
    fig.add_trace(go.Scatter(x=np.array([0.0, 1.0]), y=np.array([0.0, 0.0]), mode="lines",
                             name="no difference", uid="zero", hoverinfo="skip",
                             showlegend=False, line={"color": TRIVIAL_COLOR, "width": 1}))
    if band is not None:
        name_of_band = band_name(band)
        fig.add_traces(band_traces(band.pc, band.low, band.high, color=BAND_COLOR,
                                   label=legend_label(band.label)))
        if band.kind != "envelope":
            # The band's own estimate: for selected thresholds, the difference of their costs
            # on the held-out rows (not the exact curve, which tunes on every row).
            what = ("held-out difference of the selected thresholds" if band.kind == "selected"
                    else "difference at the fixed thresholds")
            fig.add_trace(go.Scatter(
                x=band.pc, y=band.diff, mode="lines", name=what, uid="band-diff",
                line={"color": BAND_COLOR, "width": 1.5, "dash": "dash"},
                customdata=np.column_stack((band.low, band.high)),
                hovertemplate=(f"PC(+) %{{x:.4f}}<br>{what}: %{{y:.4f}}<br>{name_of_band} "
                               "[%{customdata[0]:.4f}, %{customdata[1]:.4f}]<extra></extra>")))
        y_bar = -reach * 1.06  # below the band
        scope = "over the whole curve" if band.simultaneous else "pointwise"
        for side, name in (("a", a), ("b", b)):
            runs = [s for s in band.significant if s.better == name] if band.calibrated else []
            if not runs:
                continue
            x = np.array([v for s in runs for v in (s.lo, s.hi, np.nan)], dtype=np.float64)
            y = np.where(np.isnan(x), np.nan, y_bar)
            fig.add_trace(go.Scatter(
                x=x, y=y, mode="lines+markers", uid=f"significant-{side}", meta=name,
                name=f"{name} significantly better", connectgaps=False,
                line={"color": colors[name], "width": 6}, marker={"size": 7, "color": colors[name]},
                hovertemplate=(f"<b>{name}</b> significantly better ({name_of_band}, "
                               f"{scope})<br>PC(+) %{{x:.4f}}<extra></extra>")))
    fig.add_trace(go.Scatter(
        x=difference.pc, y=difference.diff, mode="lines", name=f"{a} − {b}", uid="difference",
        line={"color": HULL_COLOR, "width": 2.5},
        hovertemplate=(f"PC(+) %{{x:.4f}}<br>{a} − {b} = %{{y:.4f}}<br>(below 0: {a} cheaper)"
                       "<extra></extra>")))
    if difference.crossovers.size:
        x = difference.crossovers
        fig.add_trace(go.Scatter(
            x=x, y=np.zeros_like(x), mode="markers", name="crossover", uid="crossovers",
            marker={"symbol": "circle-open", "size": 12, "color": HULL_COLOR,
                    "line": {"width": 2}},
            hovertemplate="crossover at PC(+) %{x:.4f}<extra></extra>"))
    return fig
