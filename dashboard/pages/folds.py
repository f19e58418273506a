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

URL: ``/folds?data=<id>&model=NAME&p_pos=&cost_fn=&cost_fp=``.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

from dash import Dash, Input, Output, ctx, dcc, html, no_update

from costdash.conditions import OperatingCondition
from costdash.dataset import Dataset
from costdash.demo import DEMOS
from costdash.errors import CostdashError
from costdash.folds import FoldAverages, FoldSpread, dataset_fold_averages, fold_spread
from dashboard.cache import Services
from dashboard.figures.common import graph_config, threshold_text
from dashboard.figures.folds import folds_cost_figure, folds_roc_figure
from dashboard.storage import DatasetNotFound, valid_id

NO_FOLDS = ("This data set has no fold column, so there is nothing to average. Per-fold "
            "analysis needs a column that says which cross-validation fold (or run) each row "
            "belongs to, e.g. a column named 'fold'. The demos ‘Breast cancer screening’ and "
            "‘Rare event: the digit 3’ have 5 folds each.")
NO_DATA = ("No data set is open. Upload a predictions file with a fold column on the Explore "
           "page, or open one of the demos above.")


# --- reading the query string ----------------------------------------------------------------

def _first(query: dict[str, list[str]], key: str) -> str | None:
    values = query.get(key)
    return values[0] if values else None


def _positive(query: dict[str, list[str]], key: str, *, below_one: bool = False) -> float | None:
    text = _first(query, key)
    try:
        value = float(text) if text is not None else None
    except ValueError:
        return None
    if value is None or not math.isfinite(value) or value <= 0 or (below_one and value >= 1):
        return None
    return value


@dataclass
class FoldsState:
    """The view a URL query describes (missing or invalid parameters take their defaults)."""

    data: str | None = None
    model: str | None = None
    p_pos: float | None = None
    cost_fn: float = 1.0
    cost_fp: float = 1.0

    @classmethod
    def from_query(cls, query: dict[str, list[str]]) -> FoldsState:
        data = _first(query, "data")
        return cls(data=data if valid_id(data) else None, model=_first(query, "model") or None,
                   p_pos=_positive(query, "p_pos", below_one=True),
                   cost_fn=_positive(query, "cost_fn") or 1.0,
                   cost_fp=_positive(query, "cost_fp") or 1.0)


# --- layout ----------------------------------------------------------------------------------

def _number(id_: str, value: Any, **kwargs: Any) -> dcc.Input:
    return dcc.Input(id=id_, type="number", value=value, step="any", debounce=0.25,
                     className="num", **kwargs)


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


def layout(query: dict[str, list[str]], services: Services, **_: Any) -> html.Div:
    """The Folds page, initialised from the URL query."""
    s = FoldsState.from_query(query)
    p_pos = s.p_pos
    if p_pos is None and s.data:
        record = services.store.info(s.data)
        if record is not None and record.n:
            p_pos = record.n_pos / record.n
    demos = [html.Button(d.title, id=f"folds-demo-{name}", n_clicks=0, className="demo-button",
                         title=d.description) for name, d in DEMOS.items()]
    return html.Div(className="folds-page", children=[
        dcc.Store(id="folds-ref", data={"id": s.data, "model": s.model} if s.data else None),
        dcc.Store(id="folds-url"),
        html.Section(className="data-bar folds-bar", children=[
            html.Div(className="folds-controls", children=[
                html.Div(className="folds-field folds-model-field", children=[
                    html.Label("Classifier", htmlFor="folds-model"),
                    dcc.Dropdown(id="folds-model", options=[s.model] if s.model else [],
                                 value=s.model, clearable=False, searchable=False,
                                 placeholder="classifier"),
                ]),
                html.Div(className="folds-field", children=[
                    html.Label("p(+)", htmlFor="folds-p-pos",
                               title="probability that a case is positive"),
                    _number("folds-p-pos", p_pos, min=0, max=1, placeholder="p(+)")]),
                html.Div(className="folds-field", children=[
                    html.Label(["C(−|+) ", html.Span("false negative", className="hint")],
                               htmlFor="folds-cost-fn"),
                    _number("folds-cost-fn", s.cost_fn, min=0)]),
                html.Div(className="folds-field", children=[
                    html.Label(["C(+|−) ", html.Span("false positive", className="hint")],
                               htmlFor="folds-cost-fp"),
                    _number("folds-cost-fp", s.cost_fp, min=0)]),
            ]),
            html.Div(className="demos", hidden=bool(s.data), id="folds-demos",
                     children=[html.Span("Demos with 5 folds:"), *demos]),
            html.Div(id="folds-info", className="dataset-info"),
            html.Div(id="folds-error", className="error", role="alert"),
            html.Div(id="folds-message", className="notice", role="status",
                     children=None if s.data else NO_DATA),
        ]),
        html.Div(className="plots", children=[
            _graph("folds-cost-graph", folds_cost_figure(None),
                   "Cost space: each fold's lower envelope (thin), their average (bold) and "
                   "min–max band"),
            _graph("folds-roc-graph", folds_roc_figure(None),
                   "ROC space: each fold's ROC, vertical average ± 1 sd, threshold average, "
                   "pooled ROC"),
        ]),
        html.Section(className="card folds-spread-card", children=[
            html.H3("Spread across folds at your operating conditions"),
            html.Div(id="folds-spread", className="folds-spread",
                     children="Open a data set with folds to see the spread."),
        ]),
        WHY,
    ])


# --- server-side handlers (plain functions; the callbacks below only wire them) ---------------

def demo_reference(services: Services, name: str) -> dict[str, Any]:
    """Store a demo data set (once) and return the reference the page keeps."""
    record = services.put_demo(name)
    return {"id": record.id, "model": None, "name": record.name}


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
                    id="folds-threshold-mean", className="num"),
            html.Td(f"{_fmt(spread.cost_mean)} ± {_fmt(spread.cost_std)}",
                    id="folds-cost-mean", className="num"),
            html.Td(_fmt(condition.expected_cost(spread.cost_mean)), className="num")]),
        html.Tr(className="summary", children=[
            html.Th("min – max"), html.Td(""),
            html.Td(f"{_fmt(spread.cost_min)} – {_fmt(spread.cost_max)}",
                    id="folds-cost-range", className="num"),
            html.Td(f"{_fmt(condition.expected_cost(spread.cost_min))} – "
                    f"{_fmt(condition.expected_cost(spread.cost_max))}", className="num")]),
    ]
    sentence = html.P(className="folds-sentence", children=[
        f"At PC(+) = {_fmt(condition.pc)}, {averages.name}'s best threshold moves from fold to "
        f"fold (mean {_fmt(spread.threshold_mean)}, sd {_fmt(spread.threshold_std)} over "
        f"{n} folds); the normalized expected cost ranges from {_fmt(spread.cost_min)} to "
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


@dataclass
class FoldsOutputs:
    options: Any = no_update
    model: Any = no_update
    p_pos: Any = no_update
    cost: Any = no_update
    roc: Any = no_update
    spread: Any = no_update
    info: Any = no_update
    error: Any = no_update
    message: Any = no_update
    demos_hidden: Any = no_update

    def as_tuple(self) -> tuple:
        return (self.options, self.model, self.p_pos, self.cost, self.roc, self.spread,
                self.info, self.error, self.message, self.demos_hidden)


def _empty(message: str = "", error: str = "") -> FoldsOutputs:
    return FoldsOutputs(options=[], model=None, cost=folds_cost_figure(None),
                        roc=folds_roc_figure(None), spread="", info="", error=error,
                        message=message)


def _info(dataset: Dataset, name: str) -> str:
    return (f"{name}: {dataset.n:,} cases, {dataset.n_pos:,} positive (prevalence "
            f"{dataset.prevalence:.4g}), {dataset.n_folds} folds "
            f"({', '.join(dataset.fold_labels)})")


def folds_view(services: Services, ref: dict[str, Any] | None, model: str | None,
               p_pos: Any, cost_fn: Any, cost_fp: Any) -> FoldsOutputs:
    """Everything on the page for a data set, classifier and operating conditions."""
    if not ref or not ref.get("id"):
        return FoldsOutputs(message=NO_DATA, demos_hidden=False)
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
        out.info, out.demos_hidden = f"{name}: {dataset.n:,} cases, no folds", False
        return out
    if model not in names:  # first load, or a data set without the previous classifier
        model = ref["model"] if ref.get("model") in names else names[0]
    out = FoldsOutputs(options=[{"label": m, "value": m} for m in names], model=model,
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
    if p_pos is None:
        p_pos = dataset.prevalence
        out.p_pos = p_pos
    try:
        condition = OperatingCondition(
            p_pos, 1.0 if cost_fn is None else cost_fn, 1.0 if cost_fp is None else cost_fp)
        spread = fold_spread(averages, condition)
    except (CostdashError, TypeError) as exc:
        out.cost = folds_cost_figure(averages, color, uirevision=revision)
        out.spread = ""
        out.error = (str(exc) if isinstance(exc, CostdashError)
                     else "p(+) and both costs must be numbers")
        return out
    out.cost = folds_cost_figure(averages, color, condition=condition, spread=spread,
                                 uirevision=revision)
    out.spread = spread_table(averages, spread, condition)
    return out


# --- callbacks -----------------------------------------------------------------------------------

URL_JS = """
function (ref, model, p, costFn, costFp) {
    const path = window.location.pathname.replace(/\\/$/, "");
    if (!path.endsWith("/folds") || !ref || !ref.id) return window.dash_clientside.no_update;
    const q = new URLSearchParams();
    q.set("data", ref.id);
    if (model) q.set("model", model);
    const num = (v) => typeof v === "number" && isFinite(v);
    if (num(p)) q.set("p_pos", String(p));
    if (num(costFn)) q.set("cost_fn", String(costFn));
    if (num(costFp)) q.set("cost_fp", String(costFp));
    const search = "?" + q.toString();
    if (search !== window.location.search) {
        window.history.replaceState(window.history.state, "", path + search + window.location.hash);
    }
    return search;
}
"""


def register_callbacks(app: Dash, services: Services) -> None:
    demo_ids = [f"folds-demo-{name}" for name in DEMOS]

    @app.callback(Output("folds-ref", "data"),
                  Output("current-data", "data", allow_duplicate=True),
                  [Input(i, "n_clicks") for i in demo_ids], prevent_initial_call=True)
    def _demo(*_clicks):
        if not ctx.triggered_id or not any(_clicks):
            return no_update, no_update
        ref = demo_reference(services, ctx.triggered_id.removeprefix("folds-demo-"))
        return ref, {"id": ref["id"], "name": ref["name"]}

    @app.callback(
        Output("folds-model", "options"), Output("folds-model", "value"),
        Output("folds-p-pos", "value"),
        Output("folds-cost-graph", "figure"), Output("folds-roc-graph", "figure"),
        Output("folds-spread", "children"), Output("folds-info", "children"),
        Output("folds-error", "children"), Output("folds-message", "children"),
        Output("folds-demos", "hidden"),
        Input("folds-ref", "data"), Input("folds-model", "value"), Input("folds-p-pos", "value"),
        Input("folds-cost-fn", "value"), Input("folds-cost-fp", "value"))
    def _view(ref, model, p_pos, cost_fn, cost_fp):
        return folds_view(services, ref, model, p_pos, cost_fn, cost_fp).as_tuple()

    app.clientside_callback(
        URL_JS, Output("folds-url", "data"),
        Input("folds-ref", "data"), Input("folds-model", "value"), Input("folds-p-pos", "value"),
        Input("folds-cost-fn", "value"), Input("folds-cost-fp", "value"))
