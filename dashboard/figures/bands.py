"""Cost space with a bootstrap confidence band (the Confidence page).

Pure builder: core results in (:class:`costdash.bands.CostBand`, the classifier's exact
:class:`costdash.costspace.LowerEnvelope`), ``plotly.graph_objects.Figure`` out, numpy arrays
passed straight to plotly (sent as typed arrays). No cost arithmetic here.
"""

from __future__ import annotations

import math

import numpy as np
import plotly.graph_objects as go

from costdash.bands import CostBand, DifferenceBand
from costdash.costspace import LowerEnvelope
from costdash.view import number_text
from dashboard.figures.common import axis, base_layout
from dashboard.figures.palette import TRIVIAL_COLOR, classifier_color, classifier_dash

BAND_OPACITY = 0.22
PC_LINE_COLOR = "#59636e"


def rgba(hex_color: str, alpha: float) -> str:
    """``#RRGGBB`` as a CSS ``rgba()`` with this opacity (band fills)."""
    h = hex_color.lstrip("#")
    r, g, b = (int(h[i:i + 2], 16) for i in (0, 2, 4))
    return f"rgba({r},{g},{b},{alpha})"


def trivial_traces() -> list[go.Scatter]:
    """The two trivial classifiers' cost lines, as on the Explore page."""
    out = []
    for uid, label, y in (("all-negative", "flag nothing (all-negative)", [0.0, 1.0]),
                          ("all-positive", "flag everything (all-positive)", [1.0, 0.0])):
        out.append(go.Scatter(
            x=np.array([0.0, 1.0]), y=np.array(y), mode="lines", name=label, uid=uid,
            line={"color": TRIVIAL_COLOR, "dash": "dot", "width": 1.5}, showlegend=False,
            hovertemplate=f"<b>{label}</b><br>PC(+) %{{x:.4f}}<br>cost %{{y:.4f}}<extra></extra>"))
    return out


def level_text(level: float) -> str:
    """A confidence level as a percentage: 90%, 97.50%."""
    return f"{level:.0%}" if round(level * 100, 6).is_integer() else f"{level:.2%}"


NO_LEVEL_HERE = "spread (no level at this PC(+))"
"""A calibrated approximate band outside the PC(+) range where its level was earned."""


def band_name(band: CostBand | DifferenceBand, pc: float | None = None) -> str:
    """The band in two or three words: "90% band" when it is calibrated, else "resampling
    spread" (no level: its coverage is not its level); at a ``pc`` outside the range where an
    approximate band earned its level (``band.level_range``), a spread without a level."""
    if not band.calibrated:
        return "resampling spread"
    if pc is not None and not band.level_at(pc):
        return NO_LEVEL_HERE
    return f"{level_text(band.level)} band"


def legend_label(label: str, width: int = 62) -> str:
    """A long label (``band.label``) broken into legend lines (``<br>`` in place of a space) of
    at most about ``width`` characters, so that it does not run off a narrow plot;
    ``label.replace("<br>", " ")`` gives it back."""
    lines: list[str] = []
    for word in label.split(" "):
        if lines and len(lines[-1]) + 1 + len(word) <= width:
            lines[-1] += " " + word
        else:
            lines.append(word)
    return "<br>".join(lines)


def picked_text(threshold: float) -> str:
    """A selected threshold in words: "score ≥ 0.42", "flag nothing" (+inf) or "flag
    everything" (-inf), as the CLI's JSON writes them."""
    t = float(threshold)
    if math.isinf(t):
        return "flag nothing" if t > 0 else "flag everything"
    return f"score ≥ {number_text(t)}"


def curve_name(band: CostBand, name: str) -> str:
    """The legend name of the band's estimate (``band.cost``)."""
    if band.kind == "selected":
        return f"{name}, held-out cost of the thresholds selected at each PC(+)"
    if band.threshold is not None:
        return f"{name} at threshold {band.threshold:g}"
    return name


def y_top(curves: list[np.ndarray], *, floor: float = 0.05, cap: float = 0.55) -> float:
    """Top of the cost axis: a quarter above the highest curve, so a good classifier's curve
    and band are not squashed against zero (the trivial lines are then cut off)."""
    highest = max((float(np.max(c)) for c in curves if c.size), default=cap)
    return min(max(highest * 1.25, floor), max(cap, highest * 1.05), 1.0)


def pc_marker(pc: float | None) -> tuple[list[dict], list[dict]]:
    """A vertical line (layout shape named ``pc``) and its label at the current PC(+)."""
    if pc is None:
        return [], []
    shape = {"type": "line", "name": "pc", "xref": "x", "yref": "paper", "x0": pc, "x1": pc,
             "y0": 0, "y1": 1, "line": {"color": PC_LINE_COLOR, "width": 1.5, "dash": "dash"}}
    note = {"x": pc, "xref": "x", "y": 1.0, "yref": "paper", "yanchor": "bottom",
            "text": f"PC(+) = {pc:.4g}", "showarrow": False,
            "font": {"size": 11, "color": PC_LINE_COLOR}}
    return [shape], [note]


def band_traces(pc: np.ndarray, low: np.ndarray, high: np.ndarray, *, color: str, label: str,
                uid: str = "band") -> list[go.Scatter]:
    """Lower edge (``<uid>-low``), then upper edge (``<uid>-high``) filled down to it."""
    edge = {"color": color, "width": 0.8}
    common = {"mode": "lines", "legendgroup": uid, "hoverinfo": "skip"}
    return [
        go.Scatter(x=pc, y=low, name=f"{label} (lower edge)", uid=f"{uid}-low", line=edge,
                   showlegend=False, **common),
        go.Scatter(x=pc, y=high, name=label, uid=f"{uid}-high", line=edge, fill="tonexty",
                   fillcolor=rgba(color, BAND_OPACITY), **common),
    ]


def band_figure(band: CostBand | None, *, name: str, index: int,
                envelope: LowerEnvelope | None = None, pc: float | None = None) -> go.Figure:
    """A classifier's cost curve with its confidence band (or resampling spread).

    Parameters
    ----------
    band : CostBand or None
        The band (at the level to show); None draws the exact curve alone.
    name, index : str, int
        The classifier and its position in the data set (its colour everywhere).
    envelope : LowerEnvelope, optional
        The classifier's exact lower envelope: drawn alone when there is no band, and faintly
        beside a fixed-threshold band for comparison.
    pc : float, optional
        The current PC(+), marked by a vertical line (shape ``pc``).

    Traces (``uid``): ``all-negative``, ``all-positive``; with a band ``band-low``, ``band-high``
    (filled between; legend: ``band.label``, a level only when the band is calibrated) and
    ``cost`` (the band's estimate on its grid, ``band.cost``: the full-data curve, the fixed
    threshold's line, or the held-out cost of the selected thresholds); else ``envelope``; with
    a fixed-threshold or selected-thresholds band also ``envelope`` (dotted, all rows).
    """
    color = classifier_color(index)
    shapes, notes = pc_marker(pc)
    curves = [band.high, band.cost] if band is not None else []
    if envelope is not None:
        curves.append(envelope.cost)
    layout = base_layout(
        xaxis=axis("PC(+) (probability × cost)", range=[0, 1], dtick=0.1),
        yaxis=axis("Normalized expected cost", range=[0, y_top(curves)]),
        shapes=shapes, annotations=notes, uirevision=name)
    fig = go.Figure(data=trivial_traces(), layout=layout)
    if band is not None:
        fig.add_traces(band_traces(band.pc, band.low, band.high, color=color,
                                   label=legend_label(band.label)))
        curve = curve_name(band, name)
        extra, data = "", [band.low, band.high]
        what = band_name(band)
        if band.calibrated and not band.level_holds.all():
            # An approximate band's level holds only on part of the grid: say so per point.
            data.append(np.where(band.level_holds, what, NO_LEVEL_HERE).astype(object))
            what = f"%{{customdata[{len(data) - 1}]}}"
        if band.kind == "selected" and band.thresholds is not None:
            # The threshold picked at each PC(+), as the hover shows it (+-inf: trivial).
            picked = np.array([picked_text(t) for t in band.thresholds], dtype=object)
            data.append(picked)
            extra = f"<br>threshold %{{customdata[{len(data) - 1}]}}"
        fig.add_trace(go.Scatter(
            x=band.pc, y=band.cost, mode="lines", name=curve, uid="cost", meta=name,
            line={"color": color, "width": 2.5, "dash": classifier_dash(index)},
            customdata=np.column_stack(data),
            hovertemplate=(f"<b>{curve}</b><br>PC(+) %{{x:.4f}}<br>cost %{{y:.4f}}"
                           f"<br>{what} [%{{customdata[0]:.4f}}, "
                           f"%{{customdata[1]:.4f}}]{extra}<extra></extra>")))
    if envelope is not None and (band is None or band.kind in ("line", "selected")):
        alone = band is None
        fig.add_trace(go.Scatter(
            x=envelope.pc, y=envelope.cost, mode="lines", uid="envelope", meta=name,
            name=name if alone else f"{name}, best threshold at each PC(+) (all rows)",
            line={"color": color, "width": 2.5 if alone else 1.2,
                  "dash": classifier_dash(index) if alone else "dot"},
            hovertemplate=(f"<b>{name}</b> (best threshold)<br>PC(+) %{{x:.4f}}<br>"
                           "cost %{y:.4f}<extra></extra>")))
    return fig
