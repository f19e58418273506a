"""Stand-in for pages that are planned but not written yet (see :data:`dashboard.pages.PAGES`)."""

from __future__ import annotations

from typing import Any

from dash import dcc, html


def layout(query: dict[str, list[str]], services: Any, *, page: Any = None,
           **_: Any) -> html.Div:
    title = page.title if page else "This page"
    data = query.get("data", [None])[0]
    back = "/explore" + (f"?data={data}" if data else "")
    return html.Div(className="placeholder-page", children=[
        html.H1(title),
        html.P(page.description if page else ""),
        html.P(["Not available yet. ", dcc.Link("Back to Explore", href=back)]),
    ])


def register_callbacks(app: Any, services: Any) -> None:
    """Nothing to register."""
