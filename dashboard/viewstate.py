"""The view in the web layer: how pages receive it and how the browser keeps and writes it.

The view itself (fields, bounds, defaults, parser, writer) is :class:`costdash.view.View`. Here:

* :func:`page_view` -- a page's ``layout(query, ...)`` reads the whole view with it (lenient: a
  bad value becomes a message the page shows, never a traceback);
* :func:`schema_script` -- the schema as an inert JSON ``<script>`` in every page, which
  ``assets/viewstate.js`` (the browser's one URL writer and validator) reads;
* a page wires its own controls to the browser's view with
  :func:`dashboard.page_kit.record_view` (assets/pages.js ``recordView``): it hands their
  committed values to ``costdashView.record``, which checks them with the schema,
  keeps the valid ones in the one view object and writes the address bar, the nav links and the
  export links from it.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any

from dash import html

from costdash.view import View, view_schema
from dashboard import ids

SCHEMA_ELEMENT_ID = ids.VIEW_SCHEMA


def page_view(query: Mapping[str, Any] | None) -> tuple[View, tuple[str, ...]]:
    """The view a page opens with, and the messages for values it had to leave out."""
    return View.parse_lenient(query or {})


def schema_script() -> str:
    """``<script type="application/json">`` holding :func:`costdash.view.view_schema`.

    JSON in a non-executable script element: nothing runs, ``</`` is escaped so no text can
    close the element early.
    """
    text = json.dumps(view_schema(), ensure_ascii=False).replace("</", "<\\/")
    return f'<script id="{SCHEMA_ELEMENT_ID}" type="application/json">{text}</script>'


def problems_note(problems: Sequence[str]) -> html.Div:
    """The visible message for values a link carried that could not be used."""
    if not problems:
        return html.Div(className="view-problems", hidden=True)
    return html.Div(className="view-problems error", role="alert", children=[
        html.P("Some settings in this link could not be used and were left at their defaults:"),
        html.Ul([html.Li(p) for p in problems]),
    ])
