"""Money against the threshold of one classifier (issue 28, item 1): Weka's cost/benefit
threshold curve, in the conditions' money.

A pure builder from :class:`costdash.threshold_money.CostByThreshold` to ``go.Figure``. The curve
is drawn as steps over the classifier's distinct scores (a threshold between two scores flags the
same cases as the higher one); the cheapest threshold and the pinned ones are marked. Every point
carries its threshold in ``customdata`` so a click can pin it.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import plotly.graph_objects as go

from costdash.threshold_money import CostByThreshold
from costdash.view import number_text
from dashboard.figures.common import axis, base_layout
from dashboard.figures.curves import CHOICE_COLOR, PIN_COLORS
from dashboard.figures.palette import classifier_style

__all__ = ["money_by_threshold_figure"]


def _money(value: float, unit: str) -> str:
    return f"{number_text(float(f'{value:.6g}'))} {unit}".strip()


def money_by_threshold_figure(curve: CostByThreshold | None, *, volume: float = 1.0,
                              unit: str = "", index: int = 0, pins: Sequence[float] = (),
                              pin_slots: Sequence[int] | None = None,
                              capacity_threshold: float | None = None,
                              height: int | None = None, uirevision: str = "empty",
                              message: str = "Open a data set to see money against the "
                                             "threshold.") -> go.Figure:
    """Expected cost of ``volume`` cases against the threshold of one classifier.

    Parameters
    ----------
    curve : CostByThreshold or None
        The classifier's thresholds and their expected cost per case (None: an empty plot
        saying ``message``).
    volume : float
        Cases per period: the y axis is the expected cost of that many.
    unit : str
        The money's unit, for the axis and the hover text.
    index : int
        The classifier's position in the data set (its colour and dash, as on every page).
    pins : sequence of float
        Pinned thresholds of this classifier, marked in their slots' colours.
    pin_slots : sequence of int, optional
        Each pin's slot among the view's pins (its colour and number); default 0, 1, ...
    capacity_threshold : float, optional
        The cutoff the capacity allows (a dashed vertical line, uid ``capacity``).
    height : int, optional
        Fixed height in pixels (the page sizes it otherwise).
    uirevision : str
        Keeps zoom while the same classifier is shown.

    Returns
    -------
    go.Figure
        Traces (uids): ``cost`` (the step curve), ``cheapest``, ``pin-<k>`` per pin (``k`` its
        slot) and ``capacity``.
    """
    if curve is None:
        fig = go.Figure(layout=base_layout(xaxis=axis("threshold"), yaxis=axis("expected cost"),
                                           uirevision=uirevision))
        fig.add_annotation(text=message, x=0.5, y=0.5, xref="paper", yref="paper",
                           showarrow=False, font={"size": 13, "color": "#57606a"})
        return fig
    slots = list(range(len(pins))) if pin_slots is None else list(pin_slots)
    scored = np.isfinite(curve.threshold)
    thresholds = curve.threshold[scored]
    money = curve.expected_cost[scored] * volume
    style = classifier_style(index)
    unit_text = f" ({unit})" if unit else ""
    fig = go.Figure()
    fig.add_trace(go.Scatter(
        x=thresholds, y=money, mode="lines", line={"shape": "hv", "color": style.color,
                                                    "width": 2},
        uid="cost", name=f"{curve.classifier}: expected cost", customdata=thresholds,
        hovertemplate=("flag score ≥ %{x}<br>expected cost %{y:.6g}" + unit_text
                       + "<extra></extra>")))
    best = curve.best_threshold
    if best is not None:
        fig.add_trace(go.Scatter(
            x=[best], y=[curve.best_expected_cost * volume], mode="markers", uid="cheapest",
            name="cheapest threshold", customdata=[best],
            marker={"symbol": "star", "size": 14, "color": CHOICE_COLOR},
            hovertemplate=(f"cheapest: flag score ≥ {number_text(best)}<br>"
                           f"{_money(curve.best_expected_cost * volume, unit)}<extra></extra>")))
    for k, t in zip(slots, pins):
        i = curve.at(t)
        fig.add_trace(go.Scatter(
            x=[t], y=[curve.expected_cost[i] * volume], mode="markers", uid=f"pin-{k}",
            name=f"pin {k + 1}", customdata=[t],
            marker={"symbol": "diamond", "size": 11,
                    "color": PIN_COLORS[k % len(PIN_COLORS)]},
            hovertemplate=(f"pin {k + 1}: flag score ≥ {number_text(float(t))}<br>"
                           f"{_money(curve.expected_cost[i] * volume, unit)}"
                           "<extra></extra>")))
    if capacity_threshold is not None and np.isfinite(capacity_threshold):
        top = float(np.nanmax(money)) if money.size else 1.0
        fig.add_trace(go.Scatter(
            x=[capacity_threshold, capacity_threshold], y=[0.0, top], mode="lines",
            uid="capacity", name="capacity's cutoff", customdata=[capacity_threshold] * 2,
            line={"color": "#6e7781", "width": 2, "dash": "dash"},
            hovertemplate=(f"capacity: flag score ≥ {number_text(capacity_threshold)} at most"
                           "<extra></extra>")))
    per = f"expected cost of {number_text(float(volume))} cases" if volume != 1 \
        else "expected cost per case"
    fig.update_layout(**base_layout(
        xaxis=axis("threshold (flag score ≥ it)"),
        yaxis=axis(per + unit_text, rangemode="tozero"), uirevision=uirevision,
        **({"height": height} if height else {})))
    return fig
