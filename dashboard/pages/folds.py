"""The Folds page: one classifier's cross-validation folds (or runs), averaged in cost space.

For a data set with a fold column it shows, for the chosen classifier, each fold's lower envelope
and their cost-space vertical average (the recommended average: the mean normalized expected cost
at each PC(+), which is the expected cost of the selection procedure one deploys; papers 000 §7
and 004 §2.2.3) with the min-max band, beside the ROC averages (vertical, threshold, pooled), and
how much the chosen threshold and its cost vary across folds under the operating conditions.

All numbers come from :func:`costdash.folds.fold_averages` and :func:`costdash.folds.fold_spread`.

Element ids (a stable contract): ``folds-model``, ``folds-p-pos``, ``folds-cost-fn``,
``folds-cost-fp``, ``folds-cost-graph``, ``folds-roc-graph``, ``folds-spread``, ``folds-info``,
``folds-error``, ``folds-message``, ``folds-demo-<name>``.

The page opens with the whole view (:class:`costdash.view.View`): the classifier is its
``model``, else the first classifier ticked on Explore; p(+) and the costs are Explore's
conditions, p(+) absent meaning the data's prevalence (the one default rule,
:meth:`costdash.view.View.condition`). The page hands its controls to the browser's one view
object (``assets/viewstate.js``), which writes the address bar; a p(+) equal to the data's
prevalence is left out of it, so the page keeps following the default rule.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

from dash import Dash, Input, Output, ctx, dcc, html, no_update

from costdash._wording import counted
from costdash.conditions import OperatingCondition, default_condition
from costdash.dataset import Dataset
from costdash.demo import DEMOS
from costdash.errors import CostdashError
from costdash.folds import FoldAverages, FoldSpread, dataset_fold_averages, fold_spread
from costdash.view import View
from dashboard import ids
from dashboard.page_kit import (Reply, check_fields, classifier_options, condition_field,
                                default_model, each, follow_implied, open_demo, record_view,
                                targets, view_fields_store, warn)
from dashboard.figures.common import graph_config, threshold_text
from dashboard.figures.folds import folds_cost_figure, folds_roc_figure
from dashboard.services import Services
from dashboard.sharing import READ_LINK_PAGES_ONLY
from dashboard.storage import DatasetNotFound
from dashboard.viewstate import page_view, problems_note

NO_FOLDS = ("This data set has no fold column, so there is nothing to average. Per-fold "
            "analysis needs a column that says which cross-validation fold (or run) each row "
            "belongs to, e.g. a column named 'fold'. The demos ‘Breast cancer screening’ and "
            "‘Rare event: the digit 3’ have 5 folds each.")
NO_DATA = ("No data set is open. Upload a predictions file with a fold column on the Explore "
           "page, or open one of the demos above.")


# --- layout ----------------------------------------------------------------------------------

def _graph(id_: str, figure: Any, caption: str) -> html.Figure:
    return html.Figure(className="plot", children=[
        html.Div(className="graph-box", children=dcc.Graph(
            id=id_, figure=figure,
            style={"height": "100%"}, config=graph_config(id_.removesuffix("-graph")),
            className="graph")),
        html.Figcaption(caption),
    ])


WHY = html.Details(className="help folds-why", open=True, children=[
    html.Summary("Which average? Why the cost-space one has a cost meaning"),
    html.P([
        "Each fold gives its own curve. In ", html.B("cost space"), " the bold curve is, at every "
        "PC(+), the mean over the folds of the normalized expected cost each fold achieves with ",
        html.I("its own best threshold for that PC(+)"), ". That is the expected cost of the "
        "procedure you would deploy (fit, then pick the threshold the ROC convex hull picks), so "
        "it is the average to quote (Drummond & Holte 2000, §2.2.3; Holte & Drummond 2005, §7)."]),
    html.P([
        "The ", html.B("ROC averages"), " pair the folds' points differently: the vertical "
        "average at equal false positive rate, the threshold average at equal score threshold, "
        "and pooling mixes all scores into one curve. Their points do not belong to the same "
        "operating conditions, so the cost of an averaged ROC curve is not the average cost; "
        "they give higher normalized expected costs at many PC(+) values. The vertical ROC "
        "average suits selection by false positive rate (Neyman–Pearson); pooling also assumes "
        "the folds' scores are on one common scale."]),
    html.P([
        "The ", html.B("spread"), " table shows how much the threshold chosen under your "
        "conditions, and its cost, move from fold to fold: a wide spread means the threshold "
        "learned on one sample is unstable."]),
])


def reference(view: View) -> dict[str, Any] | None:
    """What the page keeps of the view to resolve the data set and its classifier: the data
    set id, the view's ``model`` and the classifiers ticked on Explore (the fallback)."""
    if not view.data:
        return None
    return {"id": view.data, "model": view.model, "models": list(view.models or ())}


def layout(query: Mapping[str, Any], services: Services, **_: Any) -> html.Div:
    """The Folds page, initialised from the view in the URL query."""
    view, problems = page_view(query)
    prevalence = None
    if view.data:
        record = services.store.info(view.data)
        prevalence = record.prevalence if record is not None and record.n else None
    # The one default rule: p(+) absent is the data's prevalence.
    p_pos = view.p_pos if prevalence is None else view.condition(prevalence).p_pos
    demos = [html.Button(d.title, id=f"folds-demo-{name}", n_clicks=0, className="demo-button",
                         title=d.description) for name, d in DEMOS.items()]
    return html.Div(className="folds-page", children=[
        dcc.Store(id=ids.FOLDS_REF, data=reference(view)),
        dcc.Store(id=ids.FOLDS_DATA_ID, data=view.data),
        dcc.Store(id=ids.FOLDS_P_IMPLIED, data=prevalence),
        dcc.Store(id=ids.FOLDS_P_VIEW),
        dcc.Store(id=ids.FOLDS_URL),
        view_fields_store(ids.FOLDS_URL, VIEW_CONTROLS),
        html.Section(className="data-bar folds-bar", children=[
            problems_note(problems),
            html.Div(className="folds-controls", children=[
                html.Div(className="folds-field folds-model-field", children=[
                    html.Label("Classifier", htmlFor=ids.FOLDS_MODEL),
                    dcc.Dropdown(id=ids.FOLDS_MODEL, options=[view.model] if view.model else [],
                                 value=view.model, clearable=False, searchable=True,
                                 placeholder="classifier"),
                ]),
                condition_field("p_pos", ids.FOLDS_P_POS, p_pos, compact=True,
                                placeholder="p(+)"),
                condition_field("cost_fn", ids.FOLDS_COST_FN, view.cost_fn, compact=True),
                condition_field("cost_fp", ids.FOLDS_COST_FP, view.cost_fp, compact=True),
            ]),
            html.Div(className="demos", hidden=bool(view.data), id=ids.FOLDS_DEMOS,
                     children=[html.Span("Demos with 5 folds:"), *demos]),
            html.Div(id=ids.FOLDS_INFO, className="dataset-info"),
            html.Div(id=ids.FOLDS_ERROR, className="error", role="alert"),
            html.Div(id=ids.FOLDS_MESSAGE, className="notice", role="status",
                     children=None if view.data else NO_DATA),
        ]),
        html.Div(className="plots", children=[
            _graph(ids.FOLDS_COST_GRAPH, folds_cost_figure(None),
                   "Cost space: each fold's lower envelope (thin), their average (bold) and "
                   "min–max band"),
            _graph(ids.FOLDS_ROC_GRAPH, folds_roc_figure(None),
                   "ROC space: each fold's ROC, vertical average ± 1 sd, threshold average, "
                   "pooled ROC"),
        ]),
        html.Section(className="card folds-spread-card", children=[
            html.H3("Spread across folds at your operating conditions"),
            html.Div(id=ids.FOLDS_SPREAD, className="folds-spread",
                     children="Open a data set with folds to see the spread."),
        ]),
        WHY,
    ])


# --- server-side handlers (plain functions; the callbacks below only wire them) ---------------

def demo_reference(services: Services, name: str) -> dict[str, Any]:
    """Store a demo data set (once) and return the reference the page keeps."""
    return {**open_demo(services, name), "model": None, "models": []}


def _fmt(x: float, digits: int = 4) -> str:
    return f"{x:.{digits}g}" if math.isfinite(x) else "–"


def spread_table(averages: FoldAverages, spread: FoldSpread,
                 condition: OperatingCondition) -> html.Div:
    """The spread readout: one row per fold, then the core's summary statistics."""
    rows = [html.Tr([html.Td(label), html.Td(threshold_text(t), className="num"),
                     html.Td(_fmt(c), className="num"),
                     html.Td(_fmt(condition.expected_cost(c)), className="num")])
            for label, t, c in zip(averages.fold_labels, spread.thresholds,
                                   spread.normalized_costs)]
    n = len(averages.fold_labels)
    summary = [
        html.Tr(className="summary", children=[
            html.Th("mean ± sd"),
            html.Td(f"{_fmt(spread.threshold_mean)} ± {_fmt(spread.threshold_std)}",
                    id=ids.FOLDS_THRESHOLD_MEAN, className="num"),
            html.Td(f"{_fmt(spread.cost_mean)} ± {_fmt(spread.cost_std)}",
                    id=ids.FOLDS_COST_MEAN, className="num"),
            html.Td(_fmt(condition.expected_cost(spread.cost_mean)), className="num")]),
        html.Tr(className="summary", children=[
            html.Th("min – max"), html.Td(""),
            html.Td(f"{_fmt(spread.cost_min)} – {_fmt(spread.cost_max)}",
                    id=ids.FOLDS_COST_RANGE, className="num"),
            html.Td(f"{_fmt(condition.expected_cost(spread.cost_min))} – "
                    f"{_fmt(condition.expected_cost(spread.cost_max))}", className="num")]),
    ]
    sentence = html.P(className="folds-sentence", children=[
        f"At PC(+) = {_fmt(condition.pc)}, {averages.name}'s best threshold moves from fold to "
        f"fold (mean {_fmt(spread.threshold_mean)}, sd {_fmt(spread.threshold_std)} over "
        f"{counted(n, 'fold')}); the normalized expected cost ranges from {_fmt(spread.cost_min)} to "
        f"{_fmt(spread.cost_max)}, mean ", html.B(_fmt(spread.cost_mean)),
        " — the bold cost-space average at this PC(+)."])
    return html.Div([
        sentence,
        html.Table(className="folds-table", children=[
            html.Thead(html.Tr([html.Th("fold"), html.Th("chosen threshold"),
                                html.Th("normalized expected cost"),
                                html.Th("expected cost per case")])),
            html.Tbody(rows + summary),
        ]),
    ])


class FoldsOutputs(Reply):
    TARGETS = targets(options=(ids.FOLDS_MODEL, "options"), model=(ids.FOLDS_MODEL, "value"),
                      data_id=(ids.FOLDS_DATA_ID, "data"), p_pos=(ids.FOLDS_P_POS, "value"),
                      p_implied=(ids.FOLDS_P_IMPLIED, "data"),
                      cost=(ids.FOLDS_COST_GRAPH, "figure"), roc=(ids.FOLDS_ROC_GRAPH, "figure"),
                      spread=ids.FOLDS_SPREAD, info=ids.FOLDS_INFO, error=ids.FOLDS_ERROR,
                      message=ids.FOLDS_MESSAGE, demos_hidden=(ids.FOLDS_DEMOS, "hidden"))


def _empty(message: str = "", error: str = "") -> FoldsOutputs:
    return FoldsOutputs(options=[], model=None, cost=folds_cost_figure(None),
                        roc=folds_roc_figure(None), spread="", info="", error=error,
                        message=message)


def _info(dataset: Dataset, name: str) -> str:
    return (f"{name}: {dataset.n:,} cases, {dataset.n_pos:,} positive (prevalence "
            f"{dataset.prevalence:.4g}), {counted(dataset.n_folds, 'fold')} "
            f"({', '.join(dataset.fold_labels)})")


def folds_view(services: Services, ref: dict[str, Any] | None, model: str | None,
               p_pos: Any, cost_fn: Any, cost_fp: Any) -> FoldsOutputs:
    """Everything on the page for a data set, classifier and operating conditions.

    An empty p(+) box is the data's prevalence and empty cost boxes are 1 (the one default
    rule, :func:`costdash.conditions.default_condition`); the p(+) box is filled in then. A
    value out of its bounds is named in the error line, and the cost figure and the spread
    keep what was drawn.
    """
    if not ref or not ref.get("id"):
        return FoldsOutputs(message=NO_DATA, demos_hidden=False, data_id=None)
    if services.sharing.read_only(ref["id"]):
        return _empty(error=READ_LINK_PAGES_ONLY)
    conditions, problems = check_fields({"p_pos": p_pos, "cost_fn": cost_fn,
                                         "cost_fp": cost_fp})
    try:
        dataset = services.store.get(ref["id"])
        record = services.store.info(ref["id"])
    except (DatasetNotFound, CostdashError) as exc:
        return _empty(error=str(exc))
    name = record.name if record is not None else ref["id"]
    names = [c.name for c in dataset.scored]
    if not dataset.n_folds or not names:
        why = NO_FOLDS if names else ("This data set holds confusion-matrix counts only; "
                                      "per-fold analysis needs scores and a fold column.")
        out = _empty(message=why)
        out.info, out.demos_hidden, out.data_id = (f"{name}: {dataset.n:,} cases, no folds",
                                                   False, ref["id"])
        return out
    if model not in names:  # first load, or a data set without the previous classifier
        model = default_model(View(model=ref.get("model"),
                                   models=tuple(ref.get("models") or ()) or None), names)
    try:
        options = classifier_options(services.views.full(ref["id"]), names)
    except (DatasetNotFound, CostdashError):
        options = [{"label": m, "value": m, "search": m} for m in names]
    out = FoldsOutputs(options=options, model=model,
                       data_id=ref["id"], p_implied=dataset.prevalence,
                       info=_info(dataset, name), error="", message="", demos_hidden=True)
    try:
        averages = dataset_fold_averages(dataset, model)
    except CostdashError as exc:
        out.cost, out.roc, out.spread, out.error = (folds_cost_figure(None),
                                                    folds_roc_figure(None), "", str(exc))
        return out
    color = list(dataset.names).index(model)
    revision = f"{ref['id']}:{model}"
    out.roc = folds_roc_figure(averages, color, max_points=services.settings.max_roc_points,
                               uirevision=revision)
    if problems:
        out.error = warn(problems)
        return out
    condition = default_condition(dataset.prevalence, conditions["p_pos"],
                                  conditions["cost_fn"], conditions["cost_fp"])
    if conditions["p_pos"] is None:
        out.p_pos = condition.p_pos
    try:
        spread = fold_spread(averages, condition)
    except CostdashError as exc:
        out.cost = folds_cost_figure(averages, color, uirevision=revision)
        out.spread, out.error = "", str(exc)
        return out
    out.cost = folds_cost_figure(averages, color, condition=condition, spread=spread,
                                 uirevision=revision)
    out.spread = spread_table(averages, spread, condition)
    return out


VIEW_CONTROLS = {"data": (ids.FOLDS_DATA_ID, "data"), "model": (ids.FOLDS_MODEL, "value"),
                 "p_pos": (ids.FOLDS_P_VIEW, "data"), "cost_fn": (ids.FOLDS_COST_FN, "value"),
                 "cost_fp": (ids.FOLDS_COST_FP, "value")}
"""The view fields this page's controls set (:func:`page_kit.record_view`)."""
VIEW_FIELDS = list(VIEW_CONTROLS)


# --- callbacks -----------------------------------------------------------------------------------

def register_callbacks(app: Dash, services: Services) -> None:
    demo_ids = [f"folds-demo-{name}" for name in DEMOS]

    @app.callback(Output(ids.FOLDS_REF, "data"),
                  Output(ids.CURRENT_DATA, "data", allow_duplicate=True),
                  [Input(i, "n_clicks") for i in demo_ids], prevent_initial_call=True)
    def _demo(*_clicks):
        if not ctx.triggered_id or not any(_clicks):
            return no_update, no_update
        ref = demo_reference(services, ctx.triggered_id.removeprefix("folds-demo-"))
        return ref, {"id": ref["id"], "name": ref["name"]}

    @app.callback(*FoldsOutputs.outputs(), Input(ids.FOLDS_REF, "data"),
                  *each(Input, "value", ids.FOLDS_MODEL, ids.FOLDS_P_POS, ids.FOLDS_COST_FN,
                        ids.FOLDS_COST_FP))
    def _view(ref, model, p_pos, cost_fn, cost_fp):
        return folds_view(services, ref, model, p_pos, cost_fn, cost_fp).as_tuple()

    follow_implied(app, ids.FOLDS_P_VIEW, ids.FOLDS_P_POS, ids.FOLDS_P_IMPLIED)
    record_view(app, ids.FOLDS_URL, VIEW_CONTROLS)
