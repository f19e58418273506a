"""The Explore page: ROC space and cost space side by side, driven by live operating conditions.

Server side (this module): the layout (initialised from the URL query; its panels, readout cards
and help are built in :mod:`dashboard.explore_layout`), and thin callbacks that
load a data set's cached view model and draw the two figures' static traces, store demo data
sets, and ask the core for sensitivity ranges and constraints. Browser side
(``assets/explore*.js``, arithmetic in ``assets/costmath.js``): everything a slider or number box
moves -- the iso-performance line, the chosen vertex, the PC(+) line, the readouts and the
address bar -- from the hull vertices held in ``view-store``, so a slider never waits for the
server. The readouts are written by that JS into the elements laid out here (their text is not a
Dash prop), see docs/dashboard.md for why.

Element ids used by users' automation and the acceptance checks (a stable contract):
``upload``, ``demo-<name>``, ``p-pos-input``, ``cost-fn-input``, ``cost-fp-input``,
``volume-input``, ``pc-value``, ``slope-value``, ``chosen-classifier``, ``chosen-threshold``,
``normalized-cost``, ``expected-cost``, ``roc-graph``, ``cost-graph``, ``upload-error``.

Pinned thresholds (``pins=gbm:0.5,logreg:0.42``, at most :data:`costdash.view.MAX_PINS`): the
panel's Pin/Remove edit the view's pins in the browser, :func:`pinned_result` turns them into
exact ROC points with the core (``costdash.pinned``; counts and rates only, never scores) and
``explore-pins.js`` prices them at the conditions on every step, in fixed cards ``pin-<k>`` (ids
``pin-<k>-tp``, ``-fn``, ``-fp``, ``-tn``, ``-precision``, ``-recall``, ``-specificity``,
``-npv``, ``-f1``, ``-cost``, ``-period-cost``, ``-regret``, ``-regret-share``, ``-optimal``,
``-beats``, ``-test``, ``-remove``) and fixed shape slots. Panel ids: ``pin-model``,
``pin-slider``, ``pin-threshold-input``, ``pin-add``, ``pin-message``.

URL: ``/explore?data=<id>&p_pos=&cost_fn=&cost_fp=&volume=&unit=&models=a,b`` plus, when used,
``lines=1``, ``sens_p=lo,hi``, ``sens_fn=lo,hi``, ``sens_fp=lo,hi``, ``max_fpr=``, ``capacity=``,
``pins=``:
fields of the one view (:class:`costdash.view.View`), parsed once by the shell's routing and
written back only by ``assets/viewstate.js``; the other pages' fields ride along untouched.
"""

from __future__ import annotations

import dataclasses
import json
import math

import numpy as np
from dataclasses import replace
from typing import Any

from dash import ClientsideFunction, Dash, Input, Output, State, ctx, dcc, html, no_update

from costdash._wording import counted
from costdash.conditions import OperatingCondition
from costdash.criteria import (MixedOperatingPoint, SingleThreshold, neyman_pearson, sensitivity,
                               single_threshold_neyman_pearson, single_threshold_workforce,
                               workforce)
from costdash.demo import DEMOS
from costdash.errors import CostdashError, ParameterError
from costdash.hull import ALL_NEGATIVE, ALL_POSITIVE
from costdash.pinned import pin_threshold
from costdash.readout_intervals import (RateLimits, paired_limits, paired_table, paired_tables,
                                        rate_limits)
from costdash.roc import RocCurve, roc_of
from costdash.view import MAX_PINS, field_named
from dashboard import ids
from dashboard.services import Services
from dashboard.limits import client_limits
from dashboard.responses import link_root
from dashboard.page_kit import Reply, each, open_demo, record_view, targets, view_fields_store
from dashboard.explore_layout import (HELP, _analysis_panel, _classifiers_panel,
                                      _conditions_panel, _exports, _plot_options, _pins_panel,
                                      _readouts, _share_panel, _shared_banner, _upload_zone)
# The layout's public names, kept importable from the page (tests import p_to_slider here).
from dashboard.explore_layout import COST_MARKS as COST_MARKS
from dashboard.explore_layout import COST_SLIDER as COST_SLIDER
from dashboard.explore_layout import EXPORTS as EXPORTS
from dashboard.explore_layout import NO_EXPORT_YET as NO_EXPORT_YET
from dashboard.explore_layout import P_MARKS as P_MARKS
from dashboard.explore_layout import P_SLIDER as P_SLIDER
from dashboard.explore_layout import cost_to_slider as cost_to_slider
from dashboard.explore_layout import p_to_slider as p_to_slider
from dashboard.figures import classifier_colors, cost_figure, roc_figure
from dashboard.figures.axes import fpr_floor
from dashboard.figures.common import LEGEND_MAX, graph_config
from dashboard.figures.palette import classifier_style
from dashboard.figures.ranges import ranges_figure, ranges_height
from dashboard.sharing import DataScope
from dashboard.storage import AnalysisRecord, DatasetNotFound, valid_id
from dashboard.viewmodel import client_model, pin_grid, pinned_entry, thinned_roc
from dashboard.viewstate import page_view, problems_note



def layout(query: dict[str, list[str]], services: Services, *,
           shared: AnalysisRecord | None = None, **_: Any) -> html.Div:
    """The Explore page, initialised from the URL query.

    With ``shared`` (a saved analysis opened by its read-only link) the data comes from the
    analysis, the upload and share controls are hidden and a banner says it is read-only. Its
    ``dataset_id`` is then the link's data reference (``share:<token>``, from the shell), never
    a handle: the page's stores hold only that, and the callbacks resolve it on the server
    (:meth:`dashboard.sharing.ShareService.scope`).
    """
    s, problems = page_view(query)
    if shared is not None:
        s = replace(s, data=shared.dataset_id)
    ref = {"id": s.data, "models": list(s.models) if s.models else None} if s.data else None
    demos = [html.Button(d.title, id=ids.demo(name), n_clicks=0, className="demo-button",
                         title=d.description) for name, d in DEMOS.items()]
    hidden = {"display": "none"} if shared is not None else None
    return html.Div(className="explore" + (" read-only" if shared else ""), children=[
        dcc.Store(id=ids.DATASET_REF, data=ref),
        dcc.Store(id=ids.VIEW_STORE),
        dcc.Store(id=ids.VIEW_KEY),
        dcc.Store(id=ids.SENSITIVITY_STORE),
        dcc.Store(id=ids.CONSTRAINT_REQUEST),
        dcc.Store(id=ids.CONSTRAINT_STORE),
        # Beside each constraint's randomized mix, the best single threshold (server, core).
        dcc.Store(id=ids.SINGLE_THRESHOLD_STORE),
        # The condition-free limits of the intervals under the costs (server, core).
        dcc.Store(id=ids.INTERVAL_STORE),
        dcc.Store(id=ids.URL_STATE),
        dcc.Store(id=ids.SHARE_REQUEST),
        # The view's pins and the data set they name; their exact points; the slider's grid.
        dcc.Store(id=ids.PINS_VIEW, data={"id": s.data, "pins": field_named("pins")
                                        .to_json_value(s.pins) if s.pins else []}),
        dcc.Store(id=ids.PINS_STORE),
        dcc.Store(id=ids.PIN_GRID),
        dcc.Store(id=ids.ZOOM_STATE),
        dcc.Store(id=ids.PLOT_OPTIONS_STATE),
        view_fields_store(ids.PLOT_OPTIONS_STATE, PLOT_OPTIONS_CONTROLS),
        *([_shared_banner(shared)] if shared is not None else []),
        html.Section(className="data-bar", children=[
            html.Div(_upload_zone(services), style=hidden),
            html.Div(className="demos", style=hidden,
                     children=[html.Span("or open a demo:"), *demos]),
            html.Div(id=ids.UPLOAD_STATUS, className="status", **{"aria-live": "polite"}),
            html.Div(id=ids.UPLOAD_ERROR, className="error", role="alert"),
            html.Div(id=ids.DATASET_INFO, className="dataset-info"),
            problems_note(problems),
        ]),
        html.Div(className="explore-grid", children=[
            html.Aside(className="controls", children=[
                _conditions_panel(s), _classifiers_panel(s), _pins_panel(s), _analysis_panel(s),
                *([_share_panel()] if shared is None else [])]),
            html.Div(className="results", children=[
                html.P(id=ids.SENTENCE, className="sentence", **{"aria-live": "polite"},
                       children="Upload a predictions file or open a demo to start."),
                # Downloads are the data set's API: not part of what a read-only link grants.
                *([_exports()] if shared is None else []),
                _plot_options(s),
                html.Div(className="plots", children=[
                    _plot(ids.ROC_GRAPH, roc_figure(None), "roc", "ROC space", ids.ROC_CAPTION),
                    _plot(ids.COST_GRAPH, cost_figure(None), "cost", "Cost space",
                          ids.COST_CAPTION),
                ]),
                html.Figure(className="plot ranges-plot", children=[
                    dcc.Graph(id=ids.RANGES_GRAPH, figure=ranges_figure(None),
                              style={"height": f"{ranges_height(None)}px"},
                              config=graph_config("operating-ranges"), className="graph ranges"),
                    html.Figcaption(id=ids.RANGES_CAPTION, children=[
                        "Operating ranges: where each classifier on the lower envelope is the "
                        "best choice (thick) and where it beats both trivial choices (thin)"]),
                ]),
                _readouts(s),
                HELP,
            ]),
        ]),
    ])


def _plot(graph_id: str, figure: Any, name: str, caption: str, caption_id: str) -> html.Figure:
    """ROC or cost space, empty until a data set is drawn (``name``: the export's file name and
    the graph's class)."""
    return html.Figure(className="plot", children=[
        html.Div(className="graph-box", children=dcc.Graph(
            id=graph_id, figure=figure, style={"height": "100%"}, config=graph_config(name),
            className=f"graph {name}")),
        html.Figcaption(caption, id=caption_id),
    ])


# --- server-side handlers (plain functions; the callbacks below only wire them) ---------------

def demo_reference(services: Services, name: str) -> dict[str, Any]:
    """Store a demo data set (once) and return the reference the page keeps (every classifier
    ticked: a new data set resets the selection)."""
    return {**open_demo(services, name), "models": None}


def dataset_text(view: dict[str, Any]) -> str:
    n_cls = len(view["classifiers"])
    return (f"{view['name']}: {view['n']:,} cases, {view['n_pos']:,} positive (label "
            f"'{view['positive_label']}', prevalence {view['prevalence']:.4g}), "
            f"{counted(n_cls, 'classifier')}"
            + (f", {counted(view['n_folds'], 'fold')}" if view["n_folds"] else ""))


class ViewOutputs(Reply):
    """What ``load_view`` sends back: the outputs of the ``_load_view`` callback."""

    TARGETS = targets(roc=(ids.ROC_GRAPH, "figure"), cost=(ids.COST_GRAPH, "figure"),
                      ranges=(ids.RANGES_GRAPH, "figure"),
                      ranges_style=(ids.RANGES_GRAPH, "style"),
                      client=(ids.VIEW_STORE, "data"), key=(ids.VIEW_KEY, "data"),
                      options=(ids.MODELS_INPUT, "options"), models=(ids.MODELS_INPUT, "value"),
                      info=ids.DATASET_INFO, error=ids.UPLOAD_ERROR,
                      current=(ids.CURRENT_DATA, "data"))


def load_view(services: Services, ref: dict[str, Any] | None, models: list[str] | None,
              lines: bool, triggered: str | None, *, hull_only: bool = False,
              log_fpr: bool = False, log_pc: bool = False) -> ViewOutputs:
    """Everything that changes when the data set, the set of classifiers or the way they are
    drawn (every cost line, hull classifiers only, log axes) changes."""
    if not ref or not ref.get("id"):
        return ViewOutputs()
    try:
        scope = services.sharing.scope(ref["id"])
        full = services.views.full(scope.data_id)
    except (DatasetNotFound, CostdashError) as exc:
        return ViewOutputs(error=str(exc))
    # A read link shows the classifiers its owner ticked, and nothing of the others.
    names = scope.allowed([c["name"] for c in full["classifiers"]])
    if triggered == ids.MODELS_INPUT:
        wanted = [m for m in names if m in set(models or [])]
    elif ref.get("models"):
        wanted = [m for m in names if m in set(ref["models"])] or names
    else:
        wanted = names
    if not wanted:
        return ViewOutputs(error="Select at least one classifier.")
    view = services.views.view(scope.data_id, wanted)
    if scope.read_only:
        # The figures' uirevision and the browser's view model name the data: for a read
        # link by a digest of its reference, never by its handle.
        view = {**view, "id": scope.revision}
    colors = classifier_colors(names)
    # Plain-text labels: component labels in a Checklist whose options change break Dash 4.4.1's
    # renderer ("Cannot read properties of undefined (reading 'props')" in recordUiEdit).
    options = [{"label": m, "value": m} for m in names]
    # Past LEGEND_MAX classifiers the list with its swatches is the legend (the plots' own
    # would take the space of the plot).
    legend = None if len(wanted) <= LEGEND_MAX else False
    client = client_model(view, colors)
    client["styles"] = [{"name": c["name"], "index": c["index"],
                         **classifier_style(c["index"]).as_json()}
                        for c in full["classifiers"] if c["name"] in names]
    # The curves drawn with the points visible at the plot's resolution (exact values, every
    # hull vertex): a third of the figure's bytes and hover texts (issue 23).
    # Unvalidated: the same figures, a third of the building time (issue 23).
    roc = roc_figure(view, log_fpr_scale=log_fpr, hull_only=hull_only, legend=legend, thin=True,
                     validate=False)
    cost = cost_figure(view, lines=lines, max_lines=services.settings.max_cost_lines,
                       log_pc_scale=log_pc, hull_only=hull_only, legend=legend, validate=False)
    ranges = ranges_figure(view, log_pc_scale=log_pc)
    # The axes' modes for the moving parts' coordinates, and the ranges the zoom returns to.
    client["axes"] = {"log_fpr": log_fpr, "log_pc": log_pc, "fpr_floor": fpr_floor(view["n_neg"]),
                      "hull_only": hull_only, "home": {
                          "roc": [list(roc.layout.xaxis.range), list(roc.layout.yaxis.range)],
                          "cost": [list(cost.layout.xaxis.range), list(cost.layout.yaxis.range)],
                          "ranges": [list(ranges.layout.xaxis.range), None]}}
    return ViewOutputs(
        roc=roc, cost=cost, ranges=ranges,
        ranges_style={"height": f"{ranges_height(view)}px"},
        client=client,
        key={"id": ref["id"], "models": None if wanted == names else wanted},
        options=options, models=wanted, info=dataset_text(view), error="",
        # The data set last opened, for the other pages: never a read link's.
        current=no_update if scope.read_only else {"id": ref["id"], "name": full["name"]})


VIEW_LOAD_INPUTS = ((ids.DATASET_REF, "data"), (ids.MODELS_INPUT, "value"),
                    (ids.COST_LINES_TOGGLE, "value"), (ids.HULL_ONLY_TOGGLE, "value"),
                    (ids.LOG_FPR_TOGGLE, "value"), (ids.LOG_PC_TOGGLE, "value"))
"""The view-load callback's inputs ``(element id, property)``, in the order of
:func:`cached_view`'s arguments; the read link's preview reads their first values from the page."""


def cached_view(services: Services, ref: dict[str, Any] | None, models: list[str] | None,
                triggered: str | None, *, lines: Any, hull_only: Any, log_fpr: Any,
                log_pc: Any) -> tuple:
    """:func:`load_view` as the view-load callback sends it (a tuple in its outputs' order),
    from the cache when it can be: every viewer of a link (and every reload) asks for the same
    figures, built once per data set and inputs (an error answer is not kept). The read link's
    preview (``dashboard/link_preview.py``) asks through here too, so the two share one entry.
    """
    flags = [bool(lines), bool(hull_only), bool(log_fpr), bool(log_pc)]

    def outputs() -> tuple:
        return load_view(services, ref, models, flags[0], triggered, hull_only=flags[1],
                         log_fpr=flags[2], log_pc=flags[3]).as_tuple()
    if not ref or not ref.get("id"):
        return outputs()
    try:
        scope = services.sharing.scope(ref["id"])
    except CostdashError:
        return outputs()        # its error line, not kept
    current = ViewOutputs.OUTPUTS.index("current")
    error = ViewOutputs.OUTPUTS.index("error")

    def kept() -> tuple:
        # A read link's reply leaves the last data set opened alone (no_update, which has no
        # JSON: kept as None and put back below).
        out = outputs()
        return tuple(None if i == current and o is no_update else o for i, o in enumerate(out))
    # Keyed by the handle read (deleting it drops the entry); the reference is in the parts.
    parts = [ref, models if triggered == ids.MODELS_INPUT else None, flags,
             triggered == ids.MODELS_INPUT]
    out = tuple(services.views.payload(scope.data_id, "explore-view", parts, kept,
                                       keep=lambda o: o[error] == ""))
    if scope.read_only:
        out = (*out[:current], no_update, *out[current + 1:])
    return out


def key_scope(services: Services, key: dict[str, Any]) -> tuple[DataScope, list[str] | None]:
    """What the page's ``view-key`` (``{"id": reference, "models"}``) grants, and the
    classifiers its callbacks compute over (None: all): for a read link only those its owner
    ticked. Raises :class:`~costdash.errors.CostdashError` when the reference is dead."""
    scope = services.sharing.scope(key["id"])
    models = key.get("models")
    if scope.classifiers is None:
        return scope, models
    names = scope.allowed([c["name"] for c in services.views.full(scope.data_id)["classifiers"]])
    return scope, [m for m in models or names if m in names] or names


def _finite(*values: Any) -> bool:
    return all(isinstance(v, (int, float)) and math.isfinite(v) for v in values)


def _json_float(x: float) -> float | None:
    return x if math.isfinite(x) else None


def sensitivity_result(services: Services, key: dict[str, Any] | None, on: bool,
                       p: tuple[Any, Any], fn: tuple[Any, Any], fp: tuple[Any, Any],
                       correct: tuple[Any, Any] = (None, None)) -> dict[str, Any] | None:
    """What is optimal over ranges of p(+) and both costs (core: ``criteria.sensitivity``).

    ``correct`` holds C(+|+) and C(−|−) (None: 0), the costs of the correct decisions.
    """
    if not on or not key:
        return None
    if not _finite(*p, *fn, *fp):
        return {"error": "Give both ends of every range."}
    tp, tn = (c if _finite(c) else 0.0 for c in correct)
    try:
        scope, models = key_scope(services, key)
        hull = services.views.hull(scope.data_id, models)
        r = sensitivity(hull, p, fn, fp, cost_tp=tp, cost_tn=tn)
    except CostdashError as exc:
        return {"error": str(exc)}
    return {"pc_range": list(r.pc_range), "slope_range": [_json_float(s) for s in r.slope_range],
            "vertices": list(r.vertices), "classifiers": list(r.classifiers),
            "trivial_optimal": r.trivial_optimal}


def _mixed(point: MixedOperatingPoint) -> dict[str, Any]:
    return {"fpr": point.fpr, "tpr": point.tpr, "left": point.left, "right": point.right,
            "weight": point.weight, "left_classifier": point.left_classifier,
            "right_classifier": point.right_classifier,
            "left_threshold": _json_float(point.left_threshold),
            "right_threshold": _json_float(point.right_threshold)}


def constraint_result(services: Services, key: dict[str, Any] | None,
                      request: dict[str, Any] | None) -> dict[str, Any] | None:
    """Neyman-Pearson and capacity operating points (core: ``neyman_pearson``, ``workforce``)."""
    if not request or not key:
        return None
    try:
        scope, models = key_scope(services, key)
        hull = services.views.hull(scope.data_id, models)
    except CostdashError as exc:
        return {"np": {"error": str(exc)}}
    out: dict[str, Any] = {}
    max_fpr = request.get("max_fpr")
    if max_fpr is not None:
        try:
            out["np"] = {**_mixed(neyman_pearson(hull, float(max_fpr))), "limit": max_fpr}
        except CostdashError as exc:
            out["np"] = {"error": str(exc)}
    capacity, p, volume = request.get("capacity"), request.get("p"), request.get("volume")
    if capacity is not None:
        try:
            OperatingCondition(p)  # validates p(+)
            if not _finite(volume) or volume <= 0:
                raise ValueError("set a positive volume (cases per period) to use a capacity")
            point = workforce(hull, n_pos=p * volume, n_neg=(1.0 - p) * volume,
                              capacity=float(capacity))
            out["capacity"] = {**_mixed(point), "limit": capacity, "n_pos": p * volume,
                               "n_neg": (1.0 - p) * volume}
        except (CostdashError, ValueError, TypeError) as exc:
            out["capacity"] = {"error": str(exc)}
    return out or None


RESULTS_PER_DATA_SET = 200
"""Pins and single thresholds kept per data set in the results service (each a few hundred
bytes; every client choosing new thresholds would otherwise grow the cache without bound)."""


def _single(point: SingleThreshold) -> dict[str, Any]:
    return {"classifier": point.classifier, "threshold": _json_float(point.threshold),
            "fpr": point.fpr, "tpr": point.tpr, "tp": point.tp, "fp": point.fp}


def single_threshold_result(services: Services, key: dict[str, Any] | None,
                            constraints: dict[str, Any] | None) -> dict[str, Any] | None:
    """Beside each randomized constraint point of ``constraints`` (the ``constraint-store``:
    Neyman-Pearson ``np``, capacity ``capacity``), the best single threshold that obeys the same
    constraint (core: ``single_threshold_neyman_pearson``, ``single_threshold_workforce``).

    Exact: over every ROC point of the ticked classifiers, so the data set is read (once for
    both) on a cache miss; cached per data set, ticked classifiers and constraint. A separate
    callback from the mixes', so a large data set never delays them. Through a read link it
    answers from the thinned curves the link shows (never a point beyond them).
    """
    if not constraints or not key or not key.get("id"):
        return None
    specs: dict[str, tuple] = {}
    np_point, cap_point = constraints.get("np") or {}, constraints.get("capacity") or {}
    if "limit" in np_point:
        specs["np"] = ("np", float(np_point["limit"]))
    if "limit" in cap_point:
        specs["capacity"] = ("capacity", float(cap_point["limit"]), cap_point["n_pos"],
                             cap_point["n_neg"])
    if not specs:
        return None
    try:
        scope, models = key_scope(services, key)
    except CostdashError as exc:
        return {name: {"error": str(exc)} for name in specs}
    if scope.read_only:
        return _single_thinned(services, scope, models, specs)
    out: dict[str, Any] = {}
    missing: dict[str, tuple] = {}
    for name, spec in specs.items():
        text = services.results.peek("single", scope.data_id, [models, spec], scope="full",
                                     checked=False)
        if text:
            out[name] = json.loads(text)
        else:
            missing[name] = spec
    if not missing:
        return out
    try:
        dataset = services.store.get(scope.data_id)
    except CostdashError as exc:
        return {**out, **{name: {"error": str(exc)} for name in missing}}
    wanted = set(models) if models else None
    rocs = [roc_of(c) for c in (*dataset.scored, *dataset.counted)
            if wanted is None or c.name in wanted]
    for name, spec in missing.items():
        entry = _single_entry(rocs, spec)
        services.results.put("single", scope.data_id, [models, spec],
                             json.dumps(entry, allow_nan=False), scope="full",
                             bound=RESULTS_PER_DATA_SET)
        out[name] = entry
    return out


def _single_entry(rocs: list[RocCurve], spec: tuple) -> dict[str, Any]:
    """The best single threshold of ``rocs`` under one constraint ``spec`` (``("np", limit)``
    or ``("capacity", limit, n_pos, n_neg)``), with the constraint it answers (so the page
    never shows it beside another one's mix), or its error."""
    try:
        point = (single_threshold_neyman_pearson(rocs, spec[1]) if spec[0] == "np" else
                 single_threshold_workforce(rocs, capacity=spec[1], n_pos=spec[2],
                                            n_neg=spec[3]))
    except CostdashError as exc:
        return {"error": str(exc)}
    return {**_single(point), "limit": spec[1],
            **({"n_pos": spec[2]} if spec[0] == "capacity" else {})}


def _single_thinned(services: Services, scope: DataScope, models: list[str] | None,
                    specs: dict[str, tuple]) -> dict[str, Any]:
    """:func:`single_threshold_result` through a read link: over the thinned curves of the
    cached view model (what the link already shows), so no reply holds a point, score or count
    the link's curves do not (cheap: no cache entry of its own)."""
    try:
        full = services.views.full(scope.data_id)
    except CostdashError as exc:
        return {name: {"error": str(exc)} for name in specs}
    wanted = set(models) if models else set(scope.allowed([c["name"]
                                                            for c in full["classifiers"]]))
    rocs = [thinned_roc(c) for c in full["classifiers"] if c["name"] in wanted]
    return {name: _single_entry(rocs, spec) for name, spec in specs.items()}


def pin_grid_result(services: Services, key: dict[str, Any] | None,
                    model: str | None) -> dict[str, Any] | None:
    """The thresholds the threshold slider steps through: those of ``model``'s thinned ROC curve
    in the cached view model (:func:`dashboard.viewmodel.pin_grid`), lowest first."""
    if not key or not key.get("id") or not model:
        return None
    try:
        scope = services.sharing.scope(key["id"])
        full = services.views.full(scope.data_id)
    except CostdashError as exc:
        return {"model": model, "threshold": [], "fpr": [], "tpr": [], "error": str(exc)}
    entry = next((c for c in full["classifiers"] if c["name"] == model), None)
    if entry is None or not scope.allowed([model]):
        return None
    grid = pin_grid(entry)
    if not grid["threshold"]:
        grid["error"] = (f"{model} has no score thresholds (it was given as confusion "
                         "matrices): nothing to pin.")
    return grid


def pinned_result(services: Services, key: dict[str, Any] | None,
                  state: dict[str, Any] | None) -> list[dict[str, Any]]:
    """The view's pinned thresholds as exact ROC points (core: ``costdash.pinned``).

    ``state`` is the page's ``pins-view`` store: ``{"id": data set, "pins": [{"model",
    "threshold"}]}``. Each pin becomes :func:`dashboard.viewmodel.pinned_entry` (cached per data
    set, classifier and threshold; a miss reads the data set once for all the pins it needs), or
    ``{"model", "threshold", "error"}`` when its classifier is not in the data set or not ticked.
    Only counts and rates reach the browser, never scores.

    Through a read link (a read-only scope) a viewer's pin answers from the thinned curve the
    link already shows: the thinned point at or above its threshold (at most
    ``max_roc_points`` distinct answers per classifier, however many pins are tried); only the
    owner's saved pins, which the owner shared as they are, answer exactly.
    """
    if not key or not key.get("id") or not state or not state.get("pins"):
        return []
    if state.get("id") not in (None, key["id"]):
        return []           # pins of another data set (the page clears them)
    try:
        pins = field_named("pins").parse(state["pins"]) or ()
    except ParameterError as exc:
        return [{"model": "", "threshold": None, "error": str(exc)}]
    try:
        scope = services.sharing.scope(key["id"])
        full = services.views.full(scope.data_id)
    except CostdashError as exc:
        return [{"model": n, "threshold": t, "error": str(exc)} for n, t in pins]
    names = scope.allowed([c["name"] for c in full["classifiers"]])
    ticked = set(key.get("models") or names)
    thinned: dict[str, RocCurve] = {}
    out: list[dict[str, Any] | None] = []
    missing: dict[int, tuple[str, float]] = {}
    for name, threshold in pins:
        if name not in names:
            out.append({"model": name, "threshold": threshold,
                        "error": f"This data set has no classifier named '{name}'."})
        elif name not in ticked:
            out.append({"model": name, "threshold": threshold,
                        "error": f"{name} is not ticked under Classifiers."})
        elif scope.read_only and (name, threshold) not in scope.saved_pins:
            if name not in thinned:
                thinned[name] = thinned_roc(next(c for c in full["classifiers"]
                                                 if c["name"] == name))
            try:
                out.append(pinned_entry(pin_threshold(thinned[name], threshold)))
            except CostdashError as exc:
                out.append({"model": name, "threshold": threshold, "error": str(exc)})
        else:
            text = services.results.peek("pin", scope.data_id, [name, threshold],
                                         scope="full", checked=False)
            out.append(json.loads(text) if text else None)
            if text is None:
                missing[len(out) - 1] = (name, threshold)
    if missing:
        try:
            dataset = services.store.get(scope.data_id)
        except CostdashError as exc:
            for i, (name, threshold) in missing.items():
                out[i] = {"model": name, "threshold": threshold, "error": str(exc)}
            return [o for o in out if o is not None]
        classifiers = {c.name: c for c in (*dataset.scored, *dataset.counted)}
        rocs: dict[str, Any] = {}
        for i, (name, threshold) in missing.items():
            if name not in rocs:
                rocs[name] = roc_of(classifiers[name])   # one sort per classifier
            try:
                entry = pinned_entry(pin_threshold(rocs[name], threshold))
            except CostdashError as exc:
                out[i] = {"model": name, "threshold": threshold, "error": str(exc)}
                continue
            services.results.put("pin", scope.data_id, [name, threshold],
                                 json.dumps(entry, allow_nan=False), scope="full",
                                 bound=RESULTS_PER_DATA_SET)
            out[i] = entry
    return [o for o in out if o is not None]


def _rate_entry(limits: RateLimits) -> dict[str, Any]:
    return dataclasses.asdict(limits)


def interval_result(services: Services, key: dict[str, Any] | None,
                    pins: list[dict[str, Any]] | None, level: Any) -> dict[str, Any] | None:
    """The condition-free limits of the intervals beside Explore's headline numbers, at the
    view's ``level`` (core: :mod:`costdash.readout_intervals`); the browser combines them at the
    current PC(+) on every step (``costInterval``, ``regretInterval`` in assets/costmath.js).

    ``{"id", "models", "level", "hull": [rate limits per vertex of the overall hull of the
    ticked classifiers], "pins": [{"model", "threshold", "cost": rate limits, "regret": [paired
    limits against each hull vertex] or None, "regret_note"}]}``. The regret needs both
    decisions on the same rows: a pin against a vertex of a classifier given as counts (or score
    counts) has none, and says why. Counts and limits only reach the browser, never scores.
    Cached in the results service per data set, scope, classifiers, pins and level.
    """
    if not key or not key.get("id"):
        return None
    try:
        level = field_named("level").parse(level)
        if level is None:
            level = field_named("level").default
        scope = services.sharing.scope(key["id"])
        full = services.views.full(scope.data_id)
    except CostdashError:
        return None
    names = scope.allowed([c["name"] for c in full["classifiers"]])
    wanted = [m for m in names if m in set(key.get("models") or names)] or names
    good = [p for p in (pins or []) if p and not p.get("error")]
    parts = [wanted, [[p["model"], p["threshold"], p.get("point_threshold"), p["tp"], p["fp"]]
                      for p in good], level]

    def compute(_scope: str) -> dict[str, Any]:
        view = services.views.view(scope.data_id, wanted)
        hull = view["hull"]
        sizes = {c["name"]: (c["n_pos"], c["n_neg"]) for c in view["classifiers"]}
        trivial = (ALL_NEGATIVE, ALL_POSITIVE)
        vertices = []
        for name, fpr, tpr in zip(hull["classifier"], hull["fpr"], hull["tpr"]):
            n_pos, n_neg = sizes.get(name, (view["n_pos"], view["n_neg"]))
            fn, fp = n_pos - round(tpr * n_pos), round(fpr * n_neg)
            vertices.append(_rate_entry(rate_limits(fn, n_pos, fp, n_neg, level,
                                                    exact=name in trivial)))
        out_pins = []
        dataset = None
        for p in good:
            cost = _rate_entry(rate_limits(p["fn"], p["tp"] + p["fn"], p["fp"],
                                           p["fp"] + p["tn"], level))
            entry: dict[str, Any] = {"model": p["model"], "threshold": p["threshold"],
                                     "cost": cost, "regret": None, "regret_note": ""}
            out_pins.append(entry)
            if dataset is None:
                dataset = services.store.get(scope.data_id)
            scored = {c.name: c for c in dataset.scored if c.count is None}
            mine = scored.get(p["model"])
            others = {n for n in hull["classifier"] if n not in trivial}
            if mine is None or any(n not in scored for n in others) or any(
                    scored[n].y_true.shape != mine.y_true.shape
                    or not np.array_equal(scored[n].y_true, mine.y_true) for n in others):
                entry["regret_note"] = ("no interval for the regret: it needs both thresholds' "
                                        "decisions on the same rows (scores), which this data "
                                        "set does not hold for every classifier in view")
                continue
            y = mine.y_true
            at = p.get("point_threshold")
            flag = mine.score >= (np.inf if at is None else at)
            regret: list[dict[str, Any] | None] = [None] * len(hull["classifier"])
            by_classifier: dict[str, list[int]] = {}
            for i, name in enumerate(hull["classifier"]):
                by_classifier.setdefault(name, []).append(i)
            for name, rows in by_classifier.items():
                if name in trivial:
                    tables = [paired_table(y, flag, np.full(y.shape, name == ALL_POSITIVE))
                              for _ in rows]
                else:
                    tables = list(paired_tables(y, flag, scored[name].score,
                                                [hull["threshold"][i] for i in rows]))
                for i, table in zip(rows, tables):
                    regret[i] = dataclasses.asdict(paired_limits(
                        table, level, exact_b=name in trivial))
            entry["regret"] = regret
        return {"level": level, "hull": vertices, "pins": out_pins}

    try:
        result = services.results.json("readout-intervals", scope.data_id, parts, compute,
                                       scope="thinned" if scope.read_only else "full",
                                       checked=False)
    except (CostdashError, ValueError) as exc:
        return {"id": key["id"], "models": key.get("models"), "error": str(exc)}
    return {"id": key["id"], "models": key.get("models"), **result}


def share_view(services: Services, view: dict[str, Any], name: str | None,
               expires_in_days: Any, root_url: str) -> Any:
    """Save the open data set and the ``view`` (the browser's view object, JSON) as an
    analysis; the links to show, or an error."""
    data = view.get("data")
    if not data:
        return html.P("Open a data set first.", className="error")
    limits = client_limits()
    if not limits.key_accepted():
        from flask import current_app

        if current_app.extensions.get("costdash-accounts") is not None:
            return html.P("Log in to share: this instance logs people in through the "
                          "organisation (reload the page).", className="error", role="alert")
        return html.P("This instance needs an upload key to share: enter it above the upload "
                      "box.", className="error", role="alert")
    refusal = limits.share_refusal()
    if refusal:
        return html.P(refusal, className="error", role="alert")
    try:
        record = services.store.info(data) if valid_id(data) else None
        if record is None:
            raise DatasetNotFound("the data set is no longer stored; upload it again")
        saved = {k: v for k, v in view.items() if k != "data"}
        new = services.sharing.create(
            data, name=(name or "").strip() or record.name, view=saved,
            expires_in_days=expires_in_days)
    except CostdashError as exc:
        return html.P(str(exc), className="error", role="alert")
    root = root_url.rstrip("/")
    share_url = f"{root}/s/{new.record.share_token}"
    manage_url = f"{root}/manage/{new.manage_token}"
    return html.Div([
        html.P(["Read-only link (send this): ",
                html.A(share_url, href=share_url, id=ids.SHARE_URL, target="_blank")]),
        html.P(["Manage link (keep it private; shown once): ",
                html.A(manage_url, href=manage_url, id=ids.MANAGE_URL, target="_blank")]),
    ])


# --- callbacks -----------------------------------------------------------------------------------

PLOT_OPTIONS_CONTROLS = {
    "hull_only": (ids.HULL_ONLY_TOGGLE, "value"), "filter": (ids.MODELS_FILTER, "value"),
    "log_fpr": (ids.LOG_FPR_TOGGLE, "value"), "log_pc": (ids.LOG_PC_TOGGLE, "value"),
    "zoom": (ids.ZOOM_TOGGLE, "value"), "level": (ids.INTERVAL_LEVEL, "value")}
"""The view fields the plot options (and the intervals' level) set
(:func:`page_kit.record_view`)."""


def _cs(name: str) -> ClientsideFunction:
    return ClientsideFunction(namespace="costdash", function_name=name)


SENS_RANGES = (ids.SENS_P_LO, ids.SENS_P_HI, ids.SENS_FN_LO, ids.SENS_FN_HI, ids.SENS_FP_LO,
               ids.SENS_FP_HI)
"""The sensitivity ranges' boxes, in the order every callback that reads or fills them takes."""

CONDITION_BOXES = (ids.P_POS_INPUT, ids.COST_FN_INPUT, ids.COST_FP_INPUT, ids.COST_TP_INPUT,
                   ids.COST_TN_INPUT, ids.VOLUME_INPUT, ids.UNIT_INPUT)
"""The boxes of the operating conditions, in the order the browser's ``explore`` takes them."""


FOLLOW_UP_STORES = (ids.SENSITIVITY_STORE, ids.CONSTRAINT_STORE, ids.PINS_STORE,
                    ids.SINGLE_THRESHOLD_STORE, ids.INTERVAL_STORE)
"""The stores of the server's follow-ups to the readout (sensitivity, constraints, pins, single
thresholds, intervals), in the order the browser's ``exploreFollowUps`` takes them."""

_DRAW_STATES = (*each(State, "value", ids.NP_MAX_FPR_INPUT, ids.CAPACITY_INPUT),
                *each(State, "data", ids.VIEW_KEY, ids.DATASET_REF),
                *each(State, "value", ids.COST_LINES_TOGGLE, ids.SENS_ON, *SENS_RANGES))


def register_callbacks(app: Dash, services: Services) -> None:
    demo_ids = [ids.demo(name) for name in DEMOS]

    @app.callback(Output(ids.UPLOAD_KEY_STATUS, "children"),
                  Input(ids.UPLOAD_KEY_BUTTON, "n_clicks"), Input(ids.UPLOAD_KEY, "value"),
                  prevent_initial_call=True)
    def _upload_key(_clicks, key):
        if client_limits().remember_key(key):
            return "Key accepted: you can upload and share."
        return "That is not an upload key of this instance."

    @app.callback(Output(ids.DATASET_REF, "data"), [Input(i, "n_clicks") for i in demo_ids],
                  prevent_initial_call=True)
    def _demo(*_clicks):
        if not ctx.triggered_id:
            return no_update
        return demo_reference(services, ctx.triggered_id.removeprefix("demo-"))

    @app.callback(*ViewOutputs.outputs(), *[Input(i, prop) for i, prop in VIEW_LOAD_INPUTS])
    def _load_view(ref, models, lines, hull_only, log_fpr, log_pc):
        triggered = ctx.triggered_id if isinstance(ctx.triggered_id, str) else None
        return cached_view(services, ref, models, triggered, lines=lines, hull_only=hull_only,
                           log_fpr=log_fpr, log_pc=log_pc)

    @app.callback(
        Output(ids.SENSITIVITY_STORE, "data"),
        *each(Input, "value", ids.SENS_ON, *SENS_RANGES), Input(ids.VIEW_KEY, "data"),
        Input(ids.COST_TP_INPUT, "value"), Input(ids.COST_TN_INPUT, "value"))
    def _sensitivity(on, p_lo, p_hi, fn_lo, fn_hi, fp_lo, fp_hi, key, cost_tp, cost_tn):
        return sensitivity_result(services, key, bool(on), (p_lo, p_hi), (fn_lo, fn_hi),
                                  (fp_lo, fp_hi), (cost_tp, cost_tn))

    @app.callback(Output(ids.SINGLE_THRESHOLD_STORE, "data"),
                  Input(ids.CONSTRAINT_STORE, "data"), State(ids.VIEW_KEY, "data"))
    def _single_thresholds(constraints, key):
        return single_threshold_result(services, key, constraints)

    @app.callback(Output(ids.CONSTRAINT_STORE, "data"),
                  Input(ids.CONSTRAINT_REQUEST, "data"), Input(ids.VIEW_KEY, "data"))
    def _constraints(request, key):
        return constraint_result(services, key, request)

    # Browser side (assets/explore*.js). One clientside callback does everything a number box,
    # the data or the "prevalence" button moves (readouts, the figures' moving parts, drawn
    # straight into the plots, the constraint request, the address bar); the sliders are watched
    # by the JS directly (a slider step is drawn before any callback runs, then its number box
    # is set), see explore-sliders.js. The server's follow-ups are not its inputs: Dash would
    # hold it (the readout) until the last of them answered (issue 23); another callback adds
    # them to the drawing when they come.
    app.clientside_callback(
        _cs("explore"),
        *each(Output, "value", ids.P_POS_SLIDER, ids.P_POS_INPUT, ids.COST_FN_SLIDER,
              ids.COST_FN_INPUT, ids.COST_FP_SLIDER, ids.COST_FP_INPUT),
        Output(ids.CONSTRAINT_REQUEST, "data", allow_duplicate=True),
        Input(ids.VIEW_STORE, "data"), *each(Input, "value", *CONDITION_BOXES),
        Input(ids.PREVALENCE_BUTTON, "n_clicks"),
        State(ids.CONSTRAINT_REQUEST, "data"), *_DRAW_STATES,
        prevent_initial_call=True)
    # No output: it only draws. (An output that is an input of `explore`, or leads to one,
    # would make Dash hold `explore` behind the follow-ups again.)
    app.clientside_callback(
        _cs("exploreFollowUps"),
        *each(Input, "data", *FOLLOW_UP_STORES),
        State(ids.VIEW_STORE, "data"), *each(State, "value", *CONDITION_BOXES),
        *_DRAW_STATES, prevent_initial_call=True)
    app.clientside_callback(
        _cs("fillSensitivity"),
        *each(Output, "value", *SENS_RANGES),
        Input(ids.SENS_ON, "value"),
        *each(State, "value", ids.P_POS_INPUT, ids.COST_FN_INPUT, ids.COST_FP_INPUT,
              *SENS_RANGES),
        prevent_initial_call=True)
    # Share reads the view object at click time (viewstate.js commits a box being typed in
    # before the click lands), then the server saves it.
    app.clientside_callback(
        _cs("shareRequest"), Output(ids.SHARE_REQUEST, "data"),
        Input(ids.SHARE_BUTTON, "n_clicks"), State(ids.SHARE_NAME, "value"),
        State(ids.SHARE_EXPIRY, "value"), prevent_initial_call=True)

    @app.callback(Output(ids.SHARE_RESULT, "children"), Input(ids.SHARE_REQUEST, "data"),
                  prevent_initial_call=True)
    def _share(request):
        if not request:
            return no_update
        return share_view(services, request.get("view") or {}, request.get("name"),
                          request.get("expiry"), link_root() or "")

    # Pinned thresholds: the panel's classifier list, the slider's grid (the thinned curve's
    # thresholds, from the cached view model), slider and box following each other, Pin/Remove
    # (browser), then the exact points (server, core) that `explore` prices at the conditions.
    app.clientside_callback(
        _cs("pinModels"), Output(ids.PIN_MODEL, "options"), Output(ids.PIN_MODEL, "value"),
        Input(ids.VIEW_STORE, "data"), State(ids.PIN_MODEL, "value"), State(ids.PINS_VIEW, "data"))

    @app.callback(Output(ids.PIN_GRID, "data"), Output(ids.PIN_SLIDER, "max"),
                  Output(ids.PIN_SLIDER, "marks"), Output(ids.PIN_SLIDER, "disabled"),
                  Input(ids.PIN_MODEL, "value"), State(ids.VIEW_KEY, "data"),
                  prevent_initial_call=True)
    def _pin_grid(model, key):
        grid = pin_grid_result(services, key, model)
        thresholds = (grid or {}).get("threshold") or []
        if not thresholds:
            return grid, 1, {}, True
        top = len(thresholds) - 1
        return grid, max(top, 1), {0: f"{thresholds[0]:.4g}", top: f"{thresholds[-1]:.4g}"}, \
            top == 0

    app.clientside_callback(
        _cs("pinControls"), Output(ids.PIN_SLIDER, "value"),
        Output(ids.PIN_THRESHOLD_INPUT, "value"), Output(ids.PIN_PREVIEW, "children"),
        Input(ids.PIN_SLIDER, "value"), Input(ids.PIN_THRESHOLD_INPUT, "value"),
        Input(ids.PIN_GRID, "data"), prevent_initial_call=True)
    app.clientside_callback(
        _cs("editPins"), Output(ids.PINS_VIEW, "data"), Output(ids.PIN_MESSAGE, "children"),
        Input(ids.PIN_ADD, "n_clicks"), Input(ids.PIN_THRESHOLD_INPUT, "n_submit"),
        *[Input(f"pin-{k}-remove", "n_clicks") for k in range(MAX_PINS)],
        Input(ids.DATASET_REF, "data"),
        State(ids.PIN_MODEL, "value"), State(ids.PIN_THRESHOLD_INPUT, "value"),
        State(ids.PINS_VIEW, "data"), prevent_initial_call=True)

    @app.callback(Output(ids.PINS_STORE, "data"), Input(ids.PINS_VIEW, "data"),
                  Input(ids.VIEW_KEY, "data"))
    def _pins(state, key):
        return pinned_result(services, key, state)

    # The intervals under the costs: their condition-free limits once per classifiers, pins and
    # level (server, core); `explore` combines them at the conditions on every step.
    @app.callback(Output(ids.INTERVAL_STORE, "data"), Input(ids.VIEW_KEY, "data"),
                  Input(ids.PINS_STORE, "data"), Input(ids.INTERVAL_LEVEL, "value"))
    def _intervals(key, pins, level):
        return interval_result(services, key, pins, level)

    app.clientside_callback(
        _cs("constraintRequest"),
        Output(ids.CONSTRAINT_REQUEST, "data"),
        Input(ids.NP_MAX_FPR_INPUT, "value"), Input(ids.CAPACITY_INPUT, "value"),
        State(ids.P_POS_INPUT, "value"), State(ids.VOLUME_INPUT, "value"),
        State(ids.CONSTRAINT_REQUEST, "data"))
    # Many classifiers, rare events: the list's filter and its buttons, the zoom (browser), and
    # these controls' fields of the view.
    app.clientside_callback(
        _cs("filterModels"), Output(ids.MODELS_COUNT, "children"),
        Input(ids.MODELS_FILTER, "value"), Input(ids.VIEW_STORE, "data"))
    app.clientside_callback(
        _cs("tickShown"), Output(ids.MODELS_INPUT, "value", allow_duplicate=True),
        Input(ids.MODELS_TICK_SHOWN, "n_clicks"), Input(ids.MODELS_ONLY_SHOWN, "n_clicks"),
        State(ids.MODELS_FILTER, "value"), State(ids.VIEW_STORE, "data"),
        State(ids.MODELS_INPUT, "value"), prevent_initial_call=True)
    app.clientside_callback(_cs("setZoom"), Output(ids.ZOOM_STATE, "data"),
                            Input(ids.ZOOM_TOGGLE, "value"))
    record_view(app, ids.PLOT_OPTIONS_STATE, PLOT_OPTIONS_CONTROLS)
    # The address bar for the inputs `explore` does not watch (it writes it for the others).
    app.clientside_callback(
        _cs("recordViewFromOthers"),
        Output(ids.URL_STATE, "data"),
        *each(Input, "data", ids.VIEW_KEY, ids.DATASET_REF),
        *each(Input, "value", ids.COST_LINES_TOGGLE, ids.SENS_ON, *SENS_RANGES,
              ids.NP_MAX_FPR_INPUT, ids.CAPACITY_INPUT),
        *each(State, "value", ids.P_POS_INPUT, ids.COST_FN_INPUT, ids.COST_FP_INPUT,
              ids.VOLUME_INPUT, ids.UNIT_INPUT))
