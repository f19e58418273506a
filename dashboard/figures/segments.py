"""A threshold per segment against one shared threshold (issue 28, item 4).

A pure builder from the Segments result (:func:`dashboard.results.segments_result`: one entry
per segment as :func:`costdash.segments.segment_policy_to_dict` writes it) to ``go.Figure``:
per segment, on one row each (segment names on the y axis, so 390 px stays legible whatever the
number of classifiers), the expected cost of the shared choice on its rows and of its own choice,
in money per period; the gap between the two is the regret of sharing. The own choice's bar has
its classifier's colour (the style every page gives it).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import plotly.graph_objects as go

from costdash.view import number_text
from dashboard.figures.common import axis, base_layout, threshold_text
from dashboard.figures.palette import DASHES, TRIVIAL_COLOR, classifier_color, classifier_dash

__all__ = ["segments_figure"]

HATCH = dict(zip(DASHES, ("", "/", ".", "x", "\\", "+")))
"""The bar hatching of each classifier dash (plotly's pattern shapes)."""

ROW_PX = 34
"""Height per segment row (two bars and a gap)."""


def _money(value: float, unit: str) -> str:
    return f"{number_text(float(f'{value:.4g}'))} {unit}".strip()


def segments_figure(segments: Sequence[Mapping[str, Any]] | None, *,
                    shared: Mapping[str, Any] | None = None, volume: float = 1.0,
                    unit: str = "", index: Mapping[str, int] | None = None,
                    message: str = "") -> go.Figure:
    """Expected cost per period of each segment with the shared choice and with its own.

    Parameters
    ----------
    segments : sequence of mapping, or None
        ``{"segment", "n", "p_pos", "classifier", "threshold", "expected_cost",
        "shared_expected_cost", "regret_vs_shared"}`` per segment (costs per case); None or
        empty draws an empty plot saying ``message``.
    shared : mapping, optional
        The shared choice (``classifier``, ``threshold``), named in the hover text.
    volume : float
        Cases per period of the whole file, shared by the segments in proportion to their
        rows (a segment's period cost is its per-case cost times ``volume * n / N``).
    unit : str
        The money's unit.
    index : mapping of str to int, optional
        Each classifier's position in the data set (its colour).

    Returns
    -------
    go.Figure
        Traces (uids): ``shared`` and ``own``, one bar per segment each.
    """
    fig = go.Figure()
    rows = list(segments or ())
    if not rows:
        fig.update_layout(**base_layout(height=220, annotations=[dict(
            text=message or "No segments.", showarrow=False, xref="paper", yref="paper",
            x=0.5, y=0.5)]), xaxis={"visible": False}, yaxis={"visible": False})
        return fig
    index = dict(index or {})
    total = sum(int(r["n"]) for r in rows) or 1
    names = [str(r["segment"]) for r in rows]
    share = [volume * int(r["n"]) / total for r in rows]
    own = [float(r["expected_cost"]) * s for r, s in zip(rows, share)]
    common = [float(r["shared_expected_cost"]) * s for r, s in zip(rows, share)]
    # Short: at 390 px a legend entry longer than the plot is cut (the sentence above the
    # table names the shared choice).
    shared_name = "one shared threshold"
    fig.add_trace(go.Bar(
        uid="shared", name=shared_name, y=names, x=common, orientation="h",
        marker={"color": TRIVIAL_COLOR},
        customdata=[[_money(c, unit), _money(c - o, unit)] for c, o in zip(common, own)],
        hovertemplate="%{y}: the shared threshold" + (
            f" ({shared.get('classifier')} at {threshold_text(shared.get('threshold'))})"
            if shared else "") + " costs %{customdata[0]} per period"
                                 " (regret %{customdata[1]})<extra></extra>"))
    fig.add_trace(go.Bar(
        uid="own", name="a threshold of its own", y=names, x=own, orientation="h",
        marker={"color": [classifier_color(index[str(r["classifier"])])
                          if str(r["classifier"]) in index else "#333333" for r in rows],
                # The classifier's dash as a hatching: colour and hatching tell 50 apart.
                "pattern": {"shape": [HATCH[classifier_dash(index[str(r["classifier"])])]
                                      if str(r["classifier"]) in index else "" for r in rows],
                            "fgcolor": "#ffffff", "size": 6, "solidity": 0.3},
                "line": {"color": "#333333", "width": 0.5}},
        customdata=[[str(r["classifier"]), threshold_text(r["threshold"]), _money(o, unit)]
                    for r, o in zip(rows, own)],
        hovertemplate="%{y}: %{customdata[0]} at %{customdata[1]} costs %{customdata[2]}"
                      " per period<extra></extra>"))
    unit_text = f" ({unit})" if unit else ""
    fig.update_layout(**base_layout(
        height=max(240, 140 + ROW_PX * len(rows)), barmode="group", bargap=0.25,
        margin={"l": 8, "r": 12, "t": 10, "b": 96},
        xaxis=axis(f"expected cost per period{unit_text}", rangemode="tozero"),
        yaxis={"autorange": "reversed", "automargin": True, "type": "category"}))
    return fig
