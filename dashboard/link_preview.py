"""A read link's two plots, drawn before Dash boots (issue 11, "link open -> both plots drawn").

A stakeholder opening ``/s/<token>`` waits for dash-renderer to start, lay out the page's
hundreds of components, ask for the page (routing callback) and then for the view's figures
(the view-load callback) before plotly draws anything. The figures themselves are known when the
server answers the page's HTML: they are the view-load callback's reply for the link's saved
view, cached per data set. So the HTML of exactly the Explore read link carries them, with the
plotly.js file dcc.Graph would load and a few lines that draw them at once -- the plots are on
screen while Dash is still booting. The live page renders underneath, invisible
(``assets/style.css``), and a script of the preview takes it away once the live
graphs hold the same traces (or the page shows an error, or after a generous timeout).

With the plots come the numbers a stakeholder opens the link for (issue 23): the decision
sentence and the chosen classifier, threshold and expected cost, computed in the page's HTML by
the live page's own ``decision()`` (assets/explore-readouts.js) on the view model of the same
view-load reply and the conditions the page's boxes start with.

What the preview shows is what the link shows anyway, computed through the same code and the
same cache entries as the page's own callbacks (:func:`dashboard.shell.route_outputs` for the
page, the view-load payload for the figures): it grants nothing the link does not. Only a live
link gets one; anything that goes wrong serves the plain page.

Two parts: :func:`preview_fragment` (pure: figures in, HTML out) and
:func:`install_link_preview` (the hook on Dash's index page, called from ``create_app``).
"""

from __future__ import annotations

import html
import json
import logging
import re
from pathlib import Path
from collections.abc import Iterator, Mapping, Sequence
from typing import Any

import flask
from dash import Dash, no_update

from dashboard import ids
from dashboard.pages import PAGES
from dashboard.services import (REPLY_FROM_PAYLOAD, Services, payload_json,
                                reply_from_payload)

__all__ = ["CLEAN_REPLY_CALLBACKS", "PREVIEW_ID", "PREVIEW_GRAPHS", "REPLY_CALLBACKS",
           "figures_json", "install_link_preview", "install_reply_cache", "link_figures",
           "preview_fragment", "reply_from_payload"]

log = logging.getLogger(__name__)

PREVIEW_ID = "link-preview"
PREVIEW_FIGURES_ID = "link-preview-figures"
PREVIEW_GRAPHS = {"roc": "link-preview-roc", "cost": "link-preview-cost"}
"""The preview's plot containers by figure. Never the page's ``roc-graph``/``cost-graph``: the
live page renders at the same time, and a duplicate id would send its callbacks and scripts to
the wrong element."""

_READ_LINK = re.compile(r"^/s/([A-Za-z0-9_-]+)/?$")
"""Exactly the Explore page of a read link (not ``/s/<token>/curves``, ``.../choice``)."""

def _json_for_script(value: Any) -> str:
    # Classifier names are users' column names: a "</script>" in one must stay text. JSON's
    # \u escapes read back as the same characters, so JSON.parse sees the names unchanged.
    text = json.dumps(value, separators=(",", ":"), allow_nan=False)
    return text.replace("<", "\\u003c").replace(">", "\\u003e").replace("&", "\\u0026")


def figures_json(figures: Mapping[str, Any]) -> str:
    """The preview's figures as JSON text safe inside ``<script type="application/json">``."""
    return _json_for_script(dict(figures))


def _trace_uids(figure: Mapping[str, Any]) -> list[str]:
    return [str(t["uid"]) for t in figure.get("data", []) if t.get("uid")]


PREVIEW_SCRIPT = "link-preview.js"
"""The preview's script in assets/: shows the decision, draws the plots, swaps in the page."""

SWAP_TIMEOUT_MS = 20_000
"""After this long from the link's opening the preview goes whatever the page did: a viewer is
never left on a static picture."""


def preview_fragment(name: str, figures: Mapping[str, Mapping[str, Any]], plotly_src: str,
                     decision: Mapping[str, Any] | None = None,
                     decision_scripts: Sequence[str] = (),
                     script_src: str = "/assets/" + PREVIEW_SCRIPT) -> str:
    """The preview's HTML: a stand-in for the top of the read-only Explore page (the shared
    banner, the decision sentence and readouts, the plots where the page has them), the two
    figures as inert JSON, plotly.js and assets/link-preview.js (``script_src``: its address),
    which draws them and swaps in the live page.

    ``figures`` maps "roc" and "cost" to plotly figures as JSON-able dicts (data and layout);
    ``plotly_src`` is the address of the plotly.js that dcc.Graph would load (the same file,
    fetched once: dcc.Graph uses ``window.Plotly`` when it is there). Each container carries its
    trace uids (``data-uids``), which the swap script waits for in the live graph.

    ``decision`` is what the live page's readouts are computed from: the view's client model
    (``view``, the view-store's data) and the conditions its boxes start with (``p``,
    ``costFn``, ``costFp``, ``costTp``, ``costTn``, ``volume``, ``unit``). With it and
    ``decision_scripts`` (the addresses of :data:`DECISION_ASSETS`), the preview runs the live
    page's own ``decision()`` (assets/explore-readouts.js) on them and shows the sentence and the
    chosen classifier, threshold and expected cost with the plots: the same code on the same
    inputs, so the numbers the live page then shows.
    """
    plots = []
    for key, caption in (("roc", "ROC space"), ("cost", "Cost space")):
        uids = html.escape(" ".join(_trace_uids(figures[key])), quote=True)
        plots.append(
            f'<figure class="plot"><div class="graph-box"><div id="{PREVIEW_GRAPHS[key]}" '
            f'class="link-preview-graph" data-uids="{uids}"></div></div>'
            f"<figcaption>{caption}</figcaption></figure>")
    config = _preview_config(decision is not None and bool(decision_scripts))
    # The rows above the plots stand in for the page's (shell, shared views, banner, data bar,
    # sentence, plot options) at their heights, so the plots do not jump at the swap.
    nav = "".join(f'<span class="nav-link">{html.escape(p.title)}</span>' for p in PAGES)
    return (
        f'<div id="{PREVIEW_ID}" aria-busy="true">'
        '<header class="topbar"><span class="brand"><span class="brand-name">costdash</span>'
        '<span class="brand-tag">choose a classifier when costs and priors are uncertain'
        f'</span></span><nav class="nav">{nav}</nav></header>'
        '<div class="page">'
        '<p class="link-preview-views">This shared analysis: <b>Explore</b></p>'
        f'<section class="shared-banner"><b>Shared analysis: {html.escape(name)}</b>'
        "<span> · read-only.</span></section>"
        '<section class="data-bar"><p class="dataset-info link-preview-status" role="status">'
        "Loading the controls…</p></section>"
        '<div class="explore-grid"><div class="panel link-preview-controls"></div>'
        '<div class="results">'
        f'<p class="sentence link-preview-sentence" id="{PREVIEW_SENTENCE_ID}"></p>'
        f"{_readouts_html() if decision is not None else ''}"
        '<div class="plot-options link-preview-options"></div>'
        f'<div class="plots">{"".join(plots)}</div></div></div></div>'
        f'<script type="application/json" id="{PREVIEW_FIGURES_ID}">'
        f"{figures_json(figures)}</script>"
        f"{_decision_html(decision, decision_scripts)}"
        f'<script src="{html.escape(plotly_src, quote=True)}"></script>'
        # Runs as the parser reaches it, long before dash-renderer: nothing there waits for
        # Dash. It shows the decision, draws the plots and swaps in the live page.
        f'<script src="{html.escape(script_src, quote=True)}" data-preview-config="'
        f'{html.escape(_json_for_script(config), quote=True)}"></script>'
        "</div>")


PREVIEW_SENTENCE_ID = "link-preview-sentence"
PREVIEW_DECISION_ID = "link-preview-decision"
PREVIEW_READOUTS = {ids.CHOSEN_CLASSIFIER: "chosen classifier",
                    ids.CHOSEN_THRESHOLD: "threshold (score ≥)",
                    ids.EXPECTED_COST: "expected cost per case",
                    ids.PERIOD_COST: "expected cost per period"}
"""The readouts the preview shows, by the live page's element id; the preview's own elements
are ``link-preview-<id>``: the live page renders at the same time, and a duplicate id would send
its script's text to the wrong element."""

DECISION_ASSETS = ("costmath.js", "explore-base.js", "explore-readouts.js")
"""The live page's scripts the preview computes its decision with. Dash loads them again with
the rest of assets/ later; each only puts functions on its window namespace, so a second run
replaces the first."""


def _readouts_html() -> str:
    cells = "".join(
        f'<div class="readout"><span class="readout-label">{html.escape(label)}</span>'
        f'<span class="readout-value" id="link-preview-{id_}">–</span></div>'
        for id_, label in PREVIEW_READOUTS.items())
    return ('<section class="readouts link-preview-readouts"><div class="readout-grid">'
            f"{cells}</div></section>")


def _decision_html(decision: Mapping[str, Any] | None, scripts: Sequence[str]) -> str:
    """The decision's inputs as inert JSON and the live page's scripts that compute it (nothing
    without a decision); assets/link-preview.js shows it."""
    if decision is None or not scripts:
        return ""
    tags = "".join(f'<script src="{html.escape(src, quote=True)}"></script>' for src in scripts)
    return (f'<script type="application/json" id="{PREVIEW_DECISION_ID}">'
            f"{_json_for_script(dict(decision))}</script>{tags}")


def _preview_config(decision: bool) -> dict[str, Any]:
    """The settings of assets/link-preview.js: the preview's elements, the live page's graphs
    each preview graph stands in for, what marks an error on the live page, the timeout."""
    from dashboard.shell import ERROR_PAGE

    return {"box": PREVIEW_ID, "figures": PREVIEW_FIGURES_ID, "graphs": PREVIEW_GRAPHS,
            "decision": PREVIEW_DECISION_ID if decision else None,
            "sentence": PREVIEW_SENTENCE_ID, "readouts": list(PREVIEW_READOUTS),
            "readoutPrefix": PREVIEW_ID + "-",
            "entry": "react-entry-point", "errorPage": ERROR_PAGE,
            "uploadError": ids.UPLOAD_ERROR, "timeout": SWAP_TIMEOUT_MS,
            "pairs": {ids.ROC_GRAPH: PREVIEW_GRAPHS["roc"],
                      ids.COST_GRAPH: PREVIEW_GRAPHS["cost"]}}


def _as_json(value: Any) -> Any:
    """``value`` as Dash sends it, as plain JSON values: a cache hit already is (decoded from
    the payload's JSON text), a miss holds figures and components, encoded as Dash encodes
    them."""
    if isinstance(value, (dict, str, int, float, bool)) or value is None:
        return value
    return json.loads(payload_json(value))


def _nodes(tree: Any) -> Iterator[dict[str, Any]]:
    """Every component (as Dash's JSON: ``{"type", "namespace", "props"}``) of a layout."""
    if isinstance(tree, dict):
        props = tree.get("props")
        if isinstance(props, dict):
            yield tree
            yield from _nodes(props.get("children"))
    elif isinstance(tree, (list, tuple)):
        for child in tree:
            yield from _nodes(child)


def _load_view_inputs(content: Any) -> dict[str, Any] | None:
    """The view-load callback's inputs as the page will first send them: the initial props of
    its input components in the page the routing callback builds (None when one is missing,
    e.g. an error page)."""
    from dashboard.pages.explore import VIEW_LOAD_INPUTS

    wanted = dict(VIEW_LOAD_INPUTS)
    found: dict[str, Any] = {}
    for node in _nodes(_as_json(content)):
        props = node["props"]
        if props.get("id") in wanted:
            found[props["id"]] = props.get(wanted[props["id"]])
    return found if found.keys() == wanted.keys() else None


_DECISION_BOXES = {"p": ids.P_POS_INPUT, "costFn": ids.COST_FN_INPUT, "costFp": ids.COST_FP_INPUT,
                   "costTp": ids.COST_TP_INPUT, "costTn": ids.COST_TN_INPUT,
                   "volume": ids.VOLUME_INPUT, "unit": ids.UNIT_INPUT}
"""The live page's condition boxes by the names its readouts' code gives them
(``S.last`` in assets/explore.js)."""


def _initial_values(content: Any, boxes: Mapping[str, str]) -> dict[str, Any]:
    """The first ``value`` of each box in the page the routing callback builds (None when
    absent), by the names of ``boxes``."""
    by_id = {props.get("id"): props.get("value")
             for props in (node["props"] for node in _nodes(_as_json(content)))}
    return {name: by_id.get(id_) for name, id_ in boxes.items()}


def link_figures(services: Services, token: str, search: str = ""
                 ) -> tuple[str, dict[str, dict[str, Any]], dict[str, Any]] | None:
    """The analysis name, the two figures (ROC, cost space) the page of ``/s/<token>``
    (with ``search``, the link's own query, e.g. a viewer's what-if) will receive from its
    view-load callback, and what its readouts are computed from (the view's client model from
    the same reply, and the conditions its boxes start with: see :func:`preview_fragment`);
    None when the link is not live or its page has no such figures.

    Goes through the page's own code: the routing callback's page (its cache entry), whose
    initial inputs then key the view-load payload exactly as the callback keys it on the
    page's first call (nothing triggered it yet), so whichever comes first builds the figures
    and the other reads them from the cache.
    """
    from dashboard.pages.explore import ViewOutputs, cached_view
    from dashboard.shell import route_outputs
    from dashboard.sharing import AnalysisNotFound
    from dashboard.storage import StorageUnavailable

    try:
        record = services.sharing.open(token)
    except (AnalysisNotFound, StorageUnavailable):
        return None
    content = route_outputs(f"/s/{token}", search, services)[0]
    inputs = _load_view_inputs(content)
    if inputs is None:
        return None
    ref = inputs[ids.DATASET_REF]
    if not ref or not ref.get("id"):
        return None
    flags = {name: inputs[i] for name, i in (
        ("lines", ids.COST_LINES_TOGGLE), ("hull_only", ids.HULL_ONLY_TOGGLE),
        ("log_fpr", ids.LOG_FPR_TOGGLE), ("log_pc", ids.LOG_PC_TOGGLE))}
    # As the page's first call of the callback (nothing triggered it yet): the same cache entry.
    out = cached_view(services, ref, inputs[ids.MODELS_INPUT], None, **flags)
    reply = dict(zip(ViewOutputs.OUTPUTS, out))
    if reply.get("error") or reply.get("roc") in (None, no_update):
        return None
    figures = {}
    for key in PREVIEW_GRAPHS:
        figure = _as_json(reply[key])
        # The figure's uirevision names the data set; the preview needs no such thing, so the
        # HTML carries none of it (the page's own figure, later, does as before).
        layout = {k: v for k, v in figure.get("layout", {}).items() if k != "uirevision"}
        figures[key] = {**figure, "layout": layout}
    boxes = _initial_values(content, _DECISION_BOXES)
    decision = {"view": _as_json(reply.get("client")), **boxes}
    return record.name, figures, decision


def install_link_preview(app: Dash, services: Services) -> None:
    """Give the HTML of ``GET /s/<token>`` (a live read link's Explore page, with or without
    a query) the preview of its two plots; every other page is Dash's as before.

    Hooks :meth:`dash.Dash.interpolate_index` of this app (Dash's documented override point;
    ``index()`` still generates the scripts, config and renderer and validates the result):
    the preview goes in front of ``{%app_entry%}``, so it precedes Dash's own scripts, which
    the index template puts after the entry point.
    """
    original = app.interpolate_index
    plotly_src = app.config.requests_pathname_prefix + \
        "_dash-component-suites/plotly/package_data/plotly.min.js"
    # ^ Where dash-renderer points dcc.Graph with serve_locally (window._dashPlotlyJSURL).

    def interpolate_index(**kwargs: Any) -> str:
        fragment = _preview_for_request(app, services, plotly_src)
        if fragment:
            kwargs["app_entry"] = fragment + kwargs.get("app_entry", "")
        return original(**kwargs)

    app.interpolate_index = interpolate_index  # type: ignore[method-assign]
    install_reply_cache(app, services)


# --- a read link's callback replies, kept whole (issue 23) -----------------------------------

REPLY_KIND = "reply"
"""The results service's kind of a read link's whole callback reply."""

REPLY_CALLBACKS = (f"{ids.PAGE_CONTENT}.children", f"{ids.ROC_GRAPH}.figure")
"""The callbacks whose replies are kept whole (by an output of theirs): the routing callback
and Explore's view load, the two large replies of a read link's page (about 100 kB each at 3
classifiers, over 1 MB at 20 x 200k) and the same for every viewer."""

CLEAN_REPLY_CALLBACKS = (f"{ids.PIN_GRID}.data", f"{ids.INTERVAL_STORE}.data")
"""Callbacks of a read link's page computed from nothing but the request, the link and its
(immutable) data: the pin grid (the thresholds of a classifier's thinned curve, from the view
model) and the intervals' limits (from the view model and the results service). Their replies
are kept whole when nothing in them is an error (a database that failed a moment is one):
about 18 kB and 5 kB at 3 classifiers, built from the decoded view model on every request."""

_REPLY_KEY = "costdash.reply-key"
_LINK_IN_BODY = re.compile(r"(?:share:|/s/)([A-Za-z0-9_-]{32})(?![A-Za-z0-9_-])")
MAX_REPLY_REQUEST = 64 * 1024
"""Larger callback requests are never looked up (a read link's page sends a few kB)."""


def install_reply_cache(app: Dash, services: Services) -> None:
    """Answer a read link's routing callback and view load (and its pin grid and intervals,
    :data:`CLEAN_REPLY_CALLBACKS`) from their replies as Dash sent them, kept whole in the
    result cache (kind :data:`REPLY_KIND`).

    The payload cache (:meth:`~dashboard.services.ViewModels.payload`) already spares a
    viewer the build of the page and the figures; what was left for every viewer was Dash's
    work on 100 kB (1 MB at 20 x 200k) of JSON: decoding the cached payload, checking the
    outputs and encoding the reply again (about 5 ms of CPU for each of the two at 3 x 2,000,
    a third of a viewer's page). The reply is a function of the request (outputs, inputs,
    state) and of the link as it is now; so it is kept under both, for the link's read-only
    handle (deleting, expiring or replacing the link drops it: the handle goes).

    A request is answered from here only when

    * it is a callback of :data:`REPLY_CALLBACKS` or :data:`CLEAN_REPLY_CALLBACKS` whose
      inputs name exactly one read link
      (``share:<token>`` or ``/s/<token>``), and
    * that link is live now (:meth:`~dashboard.sharing.ShareService.lookup`, every request:
      a deleted, expired or replaced link is never answered from here), and
    * a reply of the same request to the link in the same state (name, saved view, handle)
      and code was kept.

    Everything else goes to Dash as before. A reply is kept when Dash answered 200 with JSON,
    set no cookie, and the callback's outputs came whole from a payload the payload cache kept
    (:func:`reply_from_payload`; an error answer is never kept there, so never here) or, for
    :data:`CLEAN_REPLY_CALLBACKS`, no ``"error"`` is anywhere in the reply. The hook
    runs after the other before-request checks (limits, the callback guard), which were
    installed first.
    """
    route = app.config.routes_pathname_prefix + "_dash-update-component"
    server = app.server

    @server.before_request
    def _kept_reply():
        if flask.request.method != "POST" or flask.request.path != route:
            return None
        if (flask.request.content_length or 0) > MAX_REPLY_REQUEST:
            return None
        key = _reply_key(services, flask.request.get_json(silent=True))
        if key is None:
            return None
        dataset_id, parts, _clean = key
        text = services.results.peek(REPLY_KIND, dataset_id, parts, scope="thinned",
                                     checked=False)  # lookup() just found the link live
        if text is not None:
            return flask.Response(text, mimetype="application/json")
        flask.request.environ[_REPLY_KEY] = key
        return None

    @server.after_request
    def _keep_reply(response: flask.Response) -> flask.Response:
        key = flask.request.environ.get(_REPLY_KEY)
        if (key is None or response.status_code != 200
                or response.mimetype != "application/json"
                or response.headers.get("Set-Cookie") or response.direct_passthrough):
            return response
        text = response.get_data(as_text=True)
        clean = key[2] and '"error"' not in text
        if not (flask.request.environ.get(REPLY_FROM_PAYLOAD) or clean):
            return response
        try:
            services.results.put(REPLY_KIND, key[0], key[1], text, scope="thinned")
        except Exception as exc:  # noqa: BLE001 - the reply is good; keeping it is a bonus
            log.warning("callback reply not kept (%s)", type(exc).__name__)
        return response


def _reply_key(services: Services, body: Any) -> tuple[str, list[Any], bool] | None:
    """The read-only handle and the key parts of a read link's callback request (see
    :func:`install_reply_cache`) and whether it is one of :data:`CLEAN_REPLY_CALLBACKS`, or
    None when it is not one whose reply is kept (or its link is not live)."""
    from dashboard.storage import StorageUnavailable

    if not isinstance(body, dict) or not isinstance(body.get("output"), str):
        return None
    clean = any(name in body["output"] for name in CLEAN_REPLY_CALLBACKS)
    if not clean and not any(name in body["output"] for name in REPLY_CALLBACKS):
        return None
    request = json.dumps(body, sort_keys=True, separators=(",", ":"))
    tokens = set(_LINK_IN_BODY.findall(request))
    if len(tokens) != 1:
        return None
    token = tokens.pop()
    try:
        record = services.sharing.lookup(token)
    except StorageUnavailable:
        return None
    if record is None:
        return None
    return record.dataset_id, [services.views.version, request, record.id, record.name,
                               record.view, record.dataset_id], clean


def _asset_urls(app: Dash, names: Sequence[str]) -> list[str]:
    """The addresses Dash gives these files of assets/ in its own script tags (with its
    ``?m=<mtime>`` fingerprint), so the browser fetches each once for the preview and the
    page."""
    folder = Path(app.config.assets_folder)
    urls = []
    for name in names:
        try:
            modified = (folder / name).stat().st_mtime
        except OSError:
            return []
        urls.append(f"{app.get_asset_url(name)}?m={modified}")
    return urls


def _preview_for_request(app: Dash, services: Services, plotly_src: str) -> str | None:
    if not flask.has_request_context() or flask.request.method != "GET":
        return None
    path = "/" + (app.strip_relative_path(flask.request.path) or "")
    match = _READ_LINK.match(path)
    if match is None:
        return None
    from dashboard.sharing import AnalysisNotFound
    from dashboard.storage import StorageUnavailable

    token = match.group(1)
    scripts = _asset_urls(app, DECISION_ASSETS)
    preview_src = _asset_urls(app, (PREVIEW_SCRIPT,))
    if not preview_src:
        return None
    search = flask.request.query_string.decode("latin-1")
    search = f"?{search}" if search else ""
    try:
        try:
            record = services.sharing.open(token)
        except (AnalysisNotFound, StorageUnavailable):
            return None

        def build() -> str | None:
            found = link_figures(services, token, search)
            if found is None:
                return None
            return preview_fragment(found[0], found[1], plotly_src, found[2], scripts,
                                    preview_src[0])

        # Every viewer of a link gets the same fragment: kept whole, a hit costs a cache read
        # instead of decoding and encoding the figures again (~1 MB of JSON for 20 x 200k).
        # Keyed by the link's own data handle, so deleting or expiring it drops the entry.
        return services.views.payload(record.dataset_id, "link-preview",
                                      [search, record.name, plotly_src, *scripts, *preview_src], build,
                                      keep=lambda fragment: bool(fragment), checked=False)
    except Exception as exc:  # noqa: BLE001 - the plain page is always a good answer
        # The path (and so perhaps the message) holds the link's secret: only the kind is logged.
        log.warning("link preview not built (%s); serving the plain page",
                    type(exc).__name__)
        return None
