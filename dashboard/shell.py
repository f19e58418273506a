"""The app shell: top bar with the nav links, ``dcc.Location``, and the routing callback."""

from __future__ import annotations

from typing import Any
from urllib.parse import parse_qs

from dash import Dash, Input, Output, dcc, html

from dashboard.cache import Services
from dashboard.pages import PAGES, Page, page_for, page_module
from dashboard.sharing import AnalysisNotFound, view_to_query
from dashboard.storage import StorageUnavailable


def shell_layout() -> html.Div:
    nav = [dcc.Link(p.title, href=p.path, id=f"nav-{p.slug}", className="nav-link")
           for p in PAGES]
    return html.Div(className="app", children=[
        dcc.Location(id="url", refresh=False),
        dcc.Store(id="current-data", storage_type="session"),
        html.Header(className="topbar", children=[
            html.A(className="brand", href="/explore", children=[
                html.Span("costdash", className="brand-name"),
                html.Span("choose a classifier when costs and priors are uncertain",
                          className="brand-tag")]),
            html.Nav(nav, className="nav", **{"aria-label": "Pages"}),
        ]),
        html.Main(id="page-content", className="page"),
    ])


def not_found(pathname: str) -> html.Div:
    return html.Div(className="placeholder-page", children=[
        html.H1("Page not found"),
        html.P([f"There is no page at {pathname}. ", dcc.Link("Go to Explore", href="/explore")]),
    ])


def shared_content(token: str, query: dict[str, list[str]], services: Services) -> Any:
    """The read-only Explore view of a saved analysis (the link's query may vary the view)."""
    from dashboard.pages import explore

    try:
        record = services.sharing.open(token)
    except AnalysisNotFound as exc:
        return html.Div(className="placeholder-page", children=[
            html.H1("This link leads nowhere"), html.P(str(exc))])
    except StorageUnavailable:
        return html.Div(className="placeholder-page", children=[
            html.H1("The database is not reachable right now"),
            html.P("Nothing was lost; the link will work again once it is back.")])
    return explore.layout({**view_to_query(record.view), **query}, services, shared=record)


def route(pathname: str | None, search: str | None, services: Services) -> tuple[Any, list[str]]:
    """The page content for a location, and the nav links' classes (the current one marked)."""
    query = parse_qs((search or "").lstrip("?"))
    if pathname and pathname.startswith("/s/"):
        return shared_content(pathname[3:].rstrip("/"), query, services), \
            ["nav-link" for _ in PAGES]
    page: Page | None = page_for(pathname)
    classes = ["nav-link" + (" active" if page is p else "") for p in PAGES]
    if page is None:
        return not_found(pathname or ""), classes
    return page_module(page).layout(query, services, page=page), classes


def register_routing(app: Dash, services: Services) -> None:
    @app.callback(Output("page-content", "children"),
                  [Output(f"nav-{p.slug}", "className") for p in PAGES],
                  Input("url", "pathname"), Input("url", "search"))
    def _route(pathname, search):
        path = "/" + (app.strip_relative_path(pathname or "/") or "")
        content, classes = route(path, search, services)
        return content, *classes

    # Nav links keep the data set open on any page (?data=<id>).
    app.clientside_callback(
        """function (current) {
            const q = current && current.id ? "?data=" + encodeURIComponent(current.id) : "";
            return PAGES.map(p => p + q);
        }""".replace("PAGES", str([p.path for p in PAGES])),
        [Output(f"nav-{p.slug}", "href") for p in PAGES],
        Input("current-data", "data"),
    )
