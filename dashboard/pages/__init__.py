"""The dashboard's pages: one module per page, each with ``layout(query, services)`` and
``register_callbacks(app, services)``.

To add a page, write ``dashboard/pages/<name>.py`` with those two functions and add
``_page("<name>", title, description)`` below; the shell (nav bar, routing, ``dcc.Location``)
picks it up. A ``Page`` without a module yet (``module=None``) shows a short placeholder.

Shared contract between pages:

* ``dcc.Location(id="url")`` lives in the shell; a page reads its initial state from the query
  string passed to ``layout`` (``query`` maps each parameter to its list of values, as
  :func:`urllib.parse.parse_qs` gives them).
* ``dcc.Store(id="current-data")`` (session storage, in the shell) holds ``{"id", "name"}`` of the
  data set last opened on any page; the nav links carry it as ``?data=<id>``.
* Services (store, cached view models) come as the ``services`` argument; never from globals.
"""

from __future__ import annotations

import importlib
from dataclasses import dataclass
from types import ModuleType


@dataclass(frozen=True)
class Page:
    path: str
    title: str
    module: str | None
    description: str

    @property
    def slug(self) -> str:
        return self.path.strip("/")


def _page(slug: str, title: str, description: str) -> Page:
    """The page served at ``/<slug>`` by the module ``dashboard/pages/<slug>.py``."""
    return Page(f"/{slug}", title, f"dashboard.pages.{slug}", description)


PAGES: tuple[Page, ...] = (
    _page("explore", "Explore",
          "ROC convex hull and cost curves under live operating conditions."),
    _page("compare", "Compare",
          "Two classifiers' cost curves and their difference, with where each is better."),
    _page("confidence", "Confidence",
          "Bootstrap confidence bands on cost curves and on the difference of two classifiers."),
    _page("folds", "Folds",
          "Per-fold curves, averaging in cost space and the spread of the chosen threshold."),
    _page("curves", "Curves",
          "Precision–recall, gains and lift, score distributions and reliability, linked."),
    _page("choice", "Threshold choice",
          "What each way of choosing thresholds costs, decision curves and robust choices."),
    _page("segments", "Segments",
          "A threshold per segment (region, product, site) against one shared threshold."),
    _page("multiclass", "Multiclass",
          "k-class cost matrices: BCOST and BDELTACOST."),
    _page("production", "Production", "p(+) estimated per production period, and alerts."),
)
DEFAULT_PAGE = PAGES[0]


def page_for(path: str | None) -> Page | None:
    """The page served at ``path`` ("/" is the default page)."""
    path = (path or "/").rstrip("/") or "/"
    if path == "/":
        return DEFAULT_PAGE
    for page in PAGES:
        if page.path == path:
            return page
    return None


def page_module(page: Page) -> ModuleType:
    if page.module is None:
        from dashboard.pages import placeholder
        return placeholder
    return importlib.import_module(page.module)
