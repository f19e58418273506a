"""The app shell: top bar with the nav links, ``dcc.Location``, and the routing callback.

The routing callback parses the address's query once into the page's :class:`~costdash.view.View`
(``dashboard.viewstate.page_view``), builds the page from it, and hands the same view to the
browser (``view-state``) and to the nav links: each link carries the whole view, so another page
opens with the user's conditions and selection and brings its own settings back. From then on
the browser's one view object (``assets/viewstate.js``) keeps the links and the address current.
"""

from __future__ import annotations

import hashlib
from dataclasses import replace
from typing import Any
from urllib.parse import parse_qs

from dash import ClientsideFunction, Dash, Input, Output, State, dcc, html, no_update

from dashboard import ids
from dashboard.pages import PAGES, Page, page_for, page_module
from dashboard.services import Services
from dashboard.sharing import AnalysisNotFound, share_reference, view_to_query
from dashboard.storage import StorageUnavailable
from dashboard.viewstate import page_view


def shell_layout(accounts: bool = False) -> html.Div:
    """The shell; with ``accounts`` (:mod:`dashboard.accounts`) the nav ends with "My
    analyses" (a plain link: its page is served beside Dash; read links' pages hide it)."""
    nav = [dcc.Link(p.title, href=p.path, id=f"nav-{p.slug}", className="nav-link")
           for p in PAGES]
    if accounts:
        nav.append(html.A("My analyses", href="/account", id=ids.ACCOUNT_LINK,
                          className="nav-link account-link"))
    return html.Div(className="app", children=[
        dcc.Location(id=ids.URL, refresh=False),
        dcc.Store(id=ids.CURRENT_DATA, storage_type="session"),
        dcc.Store(id=ids.VIEW_STATE),
        dcc.Store(id=ids.VIEW_LOADED),
        html.Header(className="topbar", children=[
            html.A(className="brand", href="/explore", id=ids.BRAND_LINK, children=[
                html.Span("costdash", className="brand-name"),
                html.Span("choose a classifier when costs and priors are uncertain",
                          className="brand-tag")]),
            html.Nav(nav, className="nav", **{"aria-label": "Pages"}),
        ]),
        html.Main(id=ids.PAGE_CONTENT, className="page"),
    ])


ERROR_PAGE = "placeholder-page"
"""The class of the pages that say a page or link is not there (or the database is not)."""


def not_found(pathname: str) -> html.Div:
    return html.Div(className=ERROR_PAGE, children=[
        html.H1("Page not found"),
        html.P([f"There is no page at {pathname}. ", dcc.Link("Go to Explore", href="/explore")]),
    ])


SHARED_PAGES = ("", "curves", "choice", "production", "segments")
"""The pages a read-only link shows: ``/s/<token>`` (Explore), ``/s/<token>/curves``,
``/s/<token>/choice`` (Threshold choice), ``/s/<token>/production`` (its production periods,
read-only) and ``/s/<token>/segments``."""

SHARED_TITLES = ("Explore", "Curves", "Threshold choice", "Production", "Segments")

SHARED_NAV = {"explore": "", "curves": "curves", "choice": "choice",
              "production": "production", "segments": "segments"}
"""The top nav's pages a read link grants, by page slug, and their sub-page of ``/s/<token>``;
the others are not offered inside a read link (assets/viewstate.js keeps the same table)."""


def shared_path(pathname: str | None) -> tuple[str, str] | None:
    """``(token, sub-page)`` of a read link's path ``/s/<token>[/<sub>]``; None for others."""
    if not pathname or not pathname.startswith("/s/"):
        return None
    token, _, sub = pathname[3:].rstrip("/").partition("/")
    return token, sub


def shared_views(token: str, sub: str) -> html.Nav:
    """The pages of a read-only link (the saved view of each)."""
    links = [dcc.Link(title, href=f"/s/{token}" + (f"/{slug}" if slug else ""),
                      id=f"shared-view-{slug or 'explore'}",
                      className="shared-view" + (" active" if slug == sub else ""),
                      style={"fontWeight": 600 if slug == sub else 400,
                             "marginRight": "1rem"})
             for slug, title in zip(SHARED_PAGES, SHARED_TITLES)]
    return html.Nav([html.Span("This shared analysis: ", style={"marginRight": "0.5rem"}),
                     *links], className="shared-views", **{"aria-label": "Shared pages"},
                    style={"margin": "0.2rem 0 0.6rem"})


LINK_GONE = ("This link was deleted or has expired: what is on screen stays as it was, but "
             "nothing more can be computed from it. Ask whoever sent it for a new link.")
"""What an open page of a read-only link says once the link is gone (checked at the next
interaction: assets/shared-link.js asks :func:`link_alive` through the ``shared-check``
store)."""


def link_gone_note() -> list:
    """The store an interaction bumps, and the note, hidden while the link lives."""
    return [dcc.Store(id=ids.SHARED_CHECK),
            html.P(LINK_GONE, id=ids.SHARED_GONE, className="shared-gone error", role="alert",
                   hidden=True)]


def link_alive(path: str, services: Services) -> bool | None:
    """Whether the read-only link of a page's ``path`` (``/s/<token>...``) still leads to its
    analysis; None when that cannot be told now (not a link's page, the database down)."""
    if not path.startswith("/s/"):
        return None
    token = path[3:].partition("/")[0]
    try:
        services.sharing.open(token)
    except AnalysisNotFound:
        return False
    except StorageUnavailable:
        return None
    return True


def shared_content(token: str, query: dict[str, list[str]], services: Services,
                   sub: str = "") -> tuple[Any, dict[str, list[str]]]:
    """The read-only view of a saved analysis on Explore (or, ``sub`` = "curves", on Curves;
    "choice", on Threshold choice), and the query it shows: the saved view, with what the link's own query sets on top (a
    viewer's what-if)."""
    from dashboard.pages import choice, curves, explore, production, segments

    if sub not in SHARED_PAGES:
        return not_found(f"/s/{token}/{sub}"), {}

    try:
        record = services.sharing.open(token)
    except AnalysisNotFound as exc:
        return html.Div(className=ERROR_PAGE, children=[
            html.H1("This link leads nowhere"), html.P(str(exc))]), {}
    except StorageUnavailable:
        return html.Div(className=ERROR_PAGE, children=[
            html.H1("The database is not reachable right now"),
            html.P("Nothing was lost; the link will work again once it is back.")]), {}
    # The viewer's own query may not name a data set: the link's analysis is the data.
    merged = {**view_to_query(record.view),
              **{k: v for k, v in query.items() if k != "data"}}
    page = {"curves": curves, "choice": choice, "production": production,
            "segments": segments}.get(sub, explore)
    # The pages see the record with the link's data reference in place of its read-only
    # handle: that reference (the share token the viewer holds anyway) is all the browser
    # gets, and every callback resolves it on the server (ShareService.scope).
    seen = replace(record, dataset_id=share_reference(token))
    return html.Div([shared_views(token, sub), *link_gone_note(),
                     page.layout(merged, services, shared=seen)]), merged


def routed(pathname: str | None, search: str | None, services: Services
           ) -> tuple[Any, list[str], dict[str, list[str]]]:
    """The page content for a location, the nav links' classes (the current one marked) and
    the query the page shows (a shared link's saved view under its own query)."""
    query = parse_qs((search or "").lstrip("?"), keep_blank_values=True)
    shared = shared_path(pathname)
    if shared is not None:
        token, sub = shared
        content, shown = shared_content(token, query, services, sub)
        return content, ["nav-link" + (" active" if SHARED_NAV.get(p.slug) == sub else "")
                         for p in PAGES], shown
    page: Page | None = page_for(pathname)
    classes = ["nav-link" + (" active" if page is p else "") for p in PAGES]
    if page is None:
        return not_found(pathname or ""), classes, query
    return page_module(page).layout(query, services, page=page), classes, query


def route(pathname: str | None, search: str | None, services: Services) -> tuple[Any, list[str]]:
    """The page content for a location, and the nav links' classes (the current one marked)."""
    content, classes, _ = routed(pathname, search, services)
    return content, classes


def view_state(pathname: str, query: dict[str, list[str]]) -> dict[str, Any]:
    """What the browser's view object starts from on this page: the page's view, parsed once
    (``problems`` are the values it had to leave out; the page shows them)."""
    view, problems = page_view(query)
    return {"path": pathname, "view": view.to_json(), "problems": list(problems)}


def nav_hrefs(query: dict[str, list[str]], pathname: str | None = None) -> list[str]:
    """Every nav link with the whole view of the page (the browser keeps them current).

    Inside a read link (``pathname`` under ``/s/<token>``) each link stays in it: the pages
    it grants at ``/s/<token>[/<sub>]`` with the view (never a data set), the others at the
    link's Explore page (and hidden, :func:`nav_styles`)."""
    view, _ = page_view(query)
    shared = shared_path(pathname)
    if shared is None:
        return [p.path + view.to_search() for p in PAGES]
    root = f"/s/{shared[0]}"
    search = replace(view, data=None).to_search()
    return [root + (f"/{SHARED_NAV[p.slug]}" if SHARED_NAV[p.slug] else "") + search
            if p.slug in SHARED_NAV else root for p in PAGES]


def nav_styles(pathname: str | None) -> list[dict[str, str] | None]:
    """The nav links' styles: inside a read link the pages it does not grant are not offered."""
    if shared_path(pathname) is None:
        return [None for _ in PAGES]
    return [None if p.slug in SHARED_NAV else {"display": "none"} for p in PAGES]


def brand_href(pathname: str | None) -> str:
    shared = shared_path(pathname)
    return "/explore" if shared is None else f"/s/{shared[0]}"


def _outputs(path: str, search: str | None, services: Services) -> tuple:
    content, classes, query = routed(path, search, services)
    return (content, *classes, *nav_hrefs(query, path), *nav_styles(path), brand_href(path),
            view_state(path, query))


def route_outputs(path: str, search: str | None, services: Services) -> tuple:
    """The routing callback's outputs (:func:`routed`, the nav links' addresses and the view
    state).

    A read link's page is the same for every viewer who opens it with the same query, so it is
    built once and then comes from the cache (:meth:`~dashboard.services.ViewModels.payload`,
    keyed by the analysis as it is now: renaming it or its saved view gives another key). The
    link is looked up on every request all the same: a deleted or expired analysis answers
    "leads nowhere" at once.
    """
    if not path.startswith("/s/"):
        return _outputs(path, search, services)
    token, _, sub = path[3:].rstrip("/").partition("/")
    try:
        record = services.sharing.open(token)
    except (AnalysisNotFound, StorageUnavailable):
        return _outputs(path, search, services)
    parts = {"path": path, "search": search or "", "analysis": record.id, "name": record.name,
             "data": record.dataset_id, "view": record.view,
             "share": hashlib.sha256(record.share_token.encode()).hexdigest()}
    # An error page (the database gone between the lookup and the page, an unknown sub-page)
    # is answered, never kept.
    return tuple(services.views.payload(
        record.dataset_id, "route", parts, lambda: _outputs(path, search, services),
        keep=lambda out: getattr(out[0], "className", None) != ERROR_PAGE, checked=False))


def register_routing(app: Dash, services: Services) -> None:
    @app.callback(Output(ids.PAGE_CONTENT, "children"),
                  [Output(f"nav-{p.slug}", "className") for p in PAGES],
                  [Output(f"nav-{p.slug}", "href") for p in PAGES],
                  [Output(f"nav-{p.slug}", "style") for p in PAGES],
                  Output(ids.BRAND_LINK, "href"),
                  Output(ids.VIEW_STATE, "data"),
                  Input(ids.URL, "pathname"), Input(ids.URL, "search"))
    def _route(pathname, search):
        path = "/" + (app.strip_relative_path(pathname or "/") or "")
        return route_outputs(path, search, services)

    # An open page of a read-only link: at an interaction, is the link still there?
    @app.callback(Output(ids.SHARED_GONE, "hidden"), Input(ids.SHARED_CHECK, "data"),
                  State(ids.URL, "pathname"), prevent_initial_call=True)
    def _shared_check(_asked, pathname):
        alive = link_alive("/" + (app.strip_relative_path(pathname or "/") or ""), services)
        return no_update if alive is None else alive

    # The browser's view object starts from the page's view; it then writes the address bar,
    # the nav links and the export links (assets/viewstate.js).
    app.clientside_callback(
        ClientsideFunction(namespace="costdash", function_name="loadView"),
        Output(ids.VIEW_LOADED, "data"), Input(ids.VIEW_STATE, "data"))
