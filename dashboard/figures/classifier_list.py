"""The classifier list beside a page's plots (issue 23, "the many-classifier tools"): Explore's
filter by name and "hull classifiers only" for the Curves and Threshold choice pages, the list of
the classifiers drawn with their swatches (the plots' legend past
:data:`~dashboard.figures.common.LEGEND_MAX` classifiers, as on Explore), a table of Brier scores
and the reasons a result is missing grouped one line per reason. Presentation only: the pages
pass what they computed."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from dash import dcc, html

from costdash.curves import Reliability
from costdash.view import View
from dashboard.figures.palette import classifier_style, swatch_svg

__all__ = ["HULL_ONLY_ON", "brier_table", "classifier_tools", "grouped_reasons",
           "shown_classifiers", "swatch_legend"]

HULL_ONLY_ON = "on"
"""The value of the "hull classifiers only" checklist's one option (as Explore's)."""


def classifier_tools(prefix: str, view: View) -> html.Div:
    """Explore's many-classifier tools for a page (issue 23): a filter by name
    (``{prefix}-filter``, the view's ``filter``), "hull classifiers only"
    (``{prefix}-hull-only``, the view's ``hull_only``) and the list of the classifiers shown,
    each with its swatch (``{prefix}-legend``: the plots' legend past
    :data:`~dashboard.figures.common.LEGEND_MAX` classifiers)."""
    return html.Div(className="models-tools page-models-tools", children=[
        html.Label([html.Span("Filter classifiers", className="sr-only"),
                    dcc.Input(id=f"{prefix}-filter", type="text", value=view.filter or "",
                              placeholder="filter classifiers by name", debounce=0.2,
                              maxLength=100, className="text models-filter")]),
        dcc.Checklist(id=f"{prefix}-hull-only",
                      options=[{"label": " hull classifiers only (hide the dominated ones)",
                                "value": HULL_ONLY_ON}],
                      value=[HULL_ONLY_ON] if view.hull_only else [], className="toggle"),
        html.Div(id=f"{prefix}-legend", className="page-legend",
                 style={"display": "flex", "flexWrap": "wrap", "gap": "2px 12px",
                        "maxHeight": "9.5em", "overflowY": "auto", "fontSize": "0.85em"}),
    ])


def shown_classifiers(ticked: list[str], text: Any, hull_only: Any,
                      on_hull: set[str] | None) -> list[str]:
    """The ticked classifiers a page draws: those whose name holds ``text`` (any case), and
    with ``hull_only`` (a checklist's value or a flag) only those with a vertex on the hull
    (``on_hull``). What is computed (the hull, the choice) still covers every ticked one."""
    needle = str(text or "").strip().lower()
    out = [n for n in ticked if needle in n.lower()]
    flag = HULL_ONLY_ON in hull_only if isinstance(hull_only, (list, tuple)) else bool(hull_only)
    if flag and on_hull is not None:
        out = [n for n in out if n in on_hull]
    return out


def swatch_legend(names: list[str], index: Mapping[str, int], ticked: int) -> list:
    """The classifiers shown, each with its swatch (colour, dash, marker: the plots' styles),
    after a count of them among the ticked ones."""
    from urllib.parse import quote

    items: list[Any] = [html.Span(f"{len(names)} of {ticked} ticked classifiers shown",
                                  className="note", style={"flexBasis": "100%"})]
    for name in names:
        svg = swatch_svg(classifier_style(index.get(name, 0)))
        items.append(html.Span(className="legend-item", style={"whiteSpace": "nowrap"},
                               children=[html.Img(src="data:image/svg+xml," + quote(svg),
                                                  alt="", width=28, height=8),
                                         " ", name]))
    return items


def grouped_reasons(refused: Mapping[str, str], what: str) -> list:
    """Why ``what`` is missing for some classifiers: one line per distinct reason (with the
    classifiers' own numbers dropped from it), not one paragraph each; a reason only one
    classifier has is given whole."""
    import re

    groups: dict[str, list[str]] = {}
    for name, why in refused.items():
        # "x's scores run from -3.4 to 5.4: ..." -> the reason without its classifier's range.
        general = re.sub(r"^.*?(scores? (run|range)[^:]*:|\[[^]]*\][^:]*:)\s*", "", why)
        groups.setdefault(general or why, []).append(name)
    out = []
    for why, names in groups.items():
        if len(names) == 1:
            out.append(html.P([html.B(names[0]), f" ({what}): ", refused[names[0]]]))
            continue
        listed = ", ".join(names[:12]) + (f" and {len(names) - 12} more" if len(names) > 12
                                          else "")
        out.append(html.P([html.B(f"No {what} for {len(names)} classifiers"), f" ({listed}): ",
                           why]))
    return out


def brier_table(rels: list[Reliability], index: Mapping[str, int]) -> html.Table:
    """The Brier scores as a table (``curves-brier-<i>`` cells), best first."""
    rows = [html.Tr([html.Td(r.name), html.Td(f"{r.brier:.4f}", id=f"curves-brier-{index[r.name]}",
                                              className="num")])
            for r in sorted(rels, key=lambda r: r.brier)]
    return html.Table(className="brier-table", children=[
        html.Caption("Brier score (lower is better; 0.25 for a constant 0.5)"),
        html.Thead(html.Tr([html.Th("classifier"), html.Th("Brier")])), html.Tbody(rows)],
        style={"display": "block", "maxHeight": "16em", "overflowY": "auto"})
