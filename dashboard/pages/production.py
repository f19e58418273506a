"""The Production page (issue 25): is the deployed choice still optimal at today's prior?

Upload batches of the deployed classifier's unlabelled production scores (one score per row,
or ``score,n`` counts as ``costdash aggregate --no-label`` writes; a file may hold several
periods in a period column, chosen in the dropdown). For each period the page shows the
estimated p(+) and its PC(+) at the view's costs, with their intervals, over the policy table's
PC(+) ranges (the figure of :mod:`dashboard.figures.production`), and a table of the periods
with the policy's choice there, the deployed choice's regret and the alerts (the whole PC(+)
interval outside the deployed choice's range). All numbers come from :func:`costdash.watch`.

The conditions are the view's (``p_pos``, ``cost_fn``, ``cost_fp``, ``cost_tp``, ``cost_tn``;
p(+) absent is the data's prevalence); the deployed choice is the view's ``model`` at its
``threshold`` when both are set, else the policy's choice at the conditions.

Batches are kept server-side (:mod:`dashboard.storage.production`), under the data set's upload
handle, or under the saved analysis a read-only handle belongs to (then shown without upload:
the analysis's batches arrive through ``POST /api/v1/analyses/<manage token>/production``).
A batch leaving a period alerting is posted to ``COSTDASH_ALERT_WEBHOOK``.

Element ids (a stable contract, kept here): ``production-ref``, ``production-upload``,
``production-period-column``, ``production-method``, ``production-model``,
``production-threshold``, ``production-p-pos``, ``production-cost-fn``, ``production-cost-fp``,
``production-clear``, ``production-graph``, ``production-table``, ``production-summary``,
``production-batches``, ``production-error``, ``production-notes``.
"""

from __future__ import annotations

import base64
import binascii
from collections.abc import Mapping
from typing import Any
from urllib.parse import parse_qs

from dash import Dash, Input, State, ctx, dcc, html, no_update

from costdash.errors import CostdashError, InputFileError
from costdash.monitor import Watch
from costdash.view import View, number_text
from dashboard import ids
from dashboard.page_kit import (Reply, check_fields, condition_field, follow_implied, number_box,
                                record_view, targets, view_fields_store, warn)
from dashboard.figures.common import graph_config
from dashboard.figures.production import production_figure
from dashboard.storage.production import (ProductionStore, alert_payloads, period_guess,
                                          post_alerts, production_columns, read_batch,
                                          watch_batches)
from dashboard.services import Services
from dashboard.viewstate import page_view, problems_note

REF = "production-ref"
BATCH = "production-batch"
URL_PROBLEMS = "production-url"
P_IMPLIED = "production-p-implied"
P_VIEW = "production-p-view"
UPLOAD = "production-upload"
UPLOAD_BOX = "production-upload-box"
PERIOD_COLUMN = "production-period-column"
METHOD = "production-method"
MODEL = "production-model"
THRESHOLD = "production-threshold"
P_POS = "production-p-pos"
COST_FN = "production-cost-fn"
COST_FP = "production-cost-fp"
CLEAR = "production-clear"
GRAPH = "production-graph"
TABLE = "production-table"
SUMMARY = "production-summary"
BATCHES = "production-batches"
ERROR = "production-error"
NOTES = "production-notes"

NO_DATA = ("No data set is open. Open or upload the labelled evaluation data on Explore first: "
           "its policy is what production is watched against.")
NO_BATCHES = ("No production batches yet. Upload the deployed classifier's scores on new cases "
              "(a 'score' column, optionally 'n' counts and a period column).")
READ_ONLY = ("A saved analysis: its production batches arrive through the API "
             "(POST /api/v1/analyses/<manage token>/production); this page shows them.")
METHODS = [{"label": "EM on calibrated scores", "value": "em"},
           {"label": "adjusted classify-and-count", "value": "acc"}]
LEVEL = 0.9
"""The intervals' level: the one the shipped study checks (docs/production.md)."""


# --- scope ---------------------------------------------------------------------------------------

def scope_of(services: Services, ref: Any) -> tuple[str, bool, str | None]:
    """``(scope, read_only, analysis id)`` of a page's data reference: an upload handle's
    batches (``data:<handle>``), or those of the analysis a read-only handle belongs to.

    Raises
    ------
    CostdashError
        The reference names no live data set (or link).
    """
    scope = services.sharing.scope(ref)
    if not scope.read_only:
        return f"data:{scope.data_id}", False, None
    record = services.store.info(scope.data_id)
    if record is None or record.analysis_id is None:
        raise CostdashError("this link's analysis is gone")
    return f"analysis:{record.analysis_id}", True, record.analysis_id


# --- layout ----------------------------------------------------------------------------------

def layout(query: Mapping[str, Any], services: Services, *, shared: Any = None,
           **_: Any) -> html.Div:
    """The Production page, initialised from the view in the URL query; ``shared`` (a read
    link's analysis record, its ``dataset_id`` the link's ``share:<token>`` reference) shows
    the analysis's batches read-only."""
    view, problems = page_view(query)
    prevalence = None
    read_only = False
    if shared is not None:
        view = view.with_values(data=None)
    reference = shared.dataset_id if shared is not None else view.data
    if reference:
        try:
            record = services.store.info(services.sharing.scope(reference).data_id)
        except CostdashError:
            record = None
        prevalence = record.prevalence if record is not None and record.n else None
        read_only = record is not None and record.read_only
    p_pos = view.p_pos if prevalence is None else view.condition(prevalence).p_pos
    upload_text = ["Drop production scores here or ", html.A("choose a file"),
                   " (CSV/TSV, gzip, Parquet, JSON lines)"]
    return html.Div(className="production-page", children=[
        dcc.Store(id=REF, data=reference),
        dcc.Store(id=BATCH),
        dcc.Store(id=URL_PROBLEMS),
        view_fields_store(URL_PROBLEMS, VIEW_CONTROLS),
        dcc.Store(id=P_IMPLIED, data=prevalence),
        dcc.Store(id=P_VIEW),
        html.Section(className="data-bar folds-bar", children=[
            problems_note(problems),
            html.Div(className="folds-controls", children=[
                condition_field("p_pos", P_POS, p_pos, compact=True, placeholder="p(+)"),
                condition_field("cost_fn", COST_FN, view.cost_fn, compact=True),
                condition_field("cost_fp", COST_FP, view.cost_fp, compact=True),
                html.Div(className="folds-field", style={"minWidth": "15rem"}, children=[
                    html.Label("Deployed classifier", htmlFor=MODEL),
                    dcc.Dropdown(id=MODEL, options=[view.model] if view.model else [],
                                 value=view.model, clearable=True, searchable=False,
                                 placeholder="the policy's choice")]),
                html.Div(className="folds-field", children=[
                    html.Label("at threshold", htmlFor=THRESHOLD),
                    number_box(THRESHOLD, view.threshold, placeholder="score ≥")]),
                html.Div(className="folds-field", style={"minWidth": "15rem"}, children=[
                    html.Label("Estimate p(+) by", htmlFor=METHOD),
                    dcc.Dropdown(id=METHOD, options=METHODS, value="em", clearable=False,
                                 searchable=False)]),
            ]),
            html.Div(id=UPLOAD_BOX, hidden=read_only or not reference,
                     className="production-upload-row", children=[
                dcc.Upload(id=UPLOAD, children=html.Div(upload_text), multiple=False,
                           max_size=services.settings.max_upload_bytes,
                           className="upload production-upload",
                           style={"border": "1px dashed #999", "borderRadius": "6px",
                                  "padding": "0.6rem 1rem", "margin": "0.4rem 0"}),
                html.Div(className="folds-field", style={"minWidth": "15rem"}, children=[
                    html.Label("Period column", htmlFor=PERIOD_COLUMN),
                    dcc.Dropdown(id=PERIOD_COLUMN, options=[], value=None, clearable=True,
                                 searchable=False,
                                 placeholder="none: the file is one period")]),
                html.Button("Remove all batches", id=CLEAR, n_clicks=0,
                            className="secondary")]),
            html.Div(id=ERROR, className="error", role="alert"),
            html.Div(id=NOTES, className="notice", role="status",
                     children=READ_ONLY if read_only else (None if reference else NO_DATA)),
        ]),
        html.Div(className="plots", style={"gridTemplateColumns": "minmax(0, 1fr)"},
                 children=[html.Figure(className="plot", children=[
            html.Div(className="graph-box", children=dcc.Graph(
                id=GRAPH, figure=empty_figure(), style={"height": "100%"},
                config=graph_config("production"), className="graph")),
            html.Figcaption("PC(+) of each production period with its interval, over the "
                            "policy's PC(+) ranges (the classifier optimal in each band); the "
                            "deployed choice is optimal between the dashed lines; a red cross "
                            "is an alert."),
        ])]),
        html.Section(className="card", children=[
            html.H3("Periods"),
            html.P(id=SUMMARY, className="production-summary"),
            # Scrolls sideways on a phone rather than hiding the alert column.
            html.Div(id=TABLE, children=NO_BATCHES if reference else "",
                     style={"overflowX": "auto"}),
            html.P(id=BATCHES, className="production-batches"),
        ]),
        html.Details(className="help", children=[
            html.Summary("How is p(+) estimated, and when is there an alert?"),
            html.P("The deployed classifier's scores on new cases carry the class prior: EM "
                   "re-weights the scores' posteriors (calibrated on the evaluation data by "
                   "cross-fitting) until they agree with the prior; adjusted classify-and-count "
                   "corrects the share flagged at the deployed threshold by its true and false "
                   "positive rates. The interval accounts for both the evaluation data and the "
                   "production sample. PC(+) is p(+) weighed by the costs: the policy's choice "
                   "changes with it. An alert means the whole PC(+) interval left the range "
                   "where the deployed choice is optimal; the regret is what keeping it costs "
                   "over the period's cases against the policy's choice, at the estimate."),
        ]),
    ])


def empty_figure() -> Any:
    """The figure before any batch: the axes only."""
    import plotly.graph_objects as go

    from dashboard.figures.common import axis, base_layout

    fig = go.Figure()
    fig.update_layout(**base_layout(xaxis=axis("production period", type="category"),
                                    yaxis=axis("PC(+) (probability cost)", range=[0, 1])))
    return fig


# --- server-side handlers ----------------------------------------------------------------------

def decode_upload(contents: str, filename: str | None, max_bytes: int) -> bytes:
    """The bytes of a ``dcc.Upload`` data URL; InputFileError naming the file otherwise."""
    name = filename or "the file"
    try:
        header, data = contents.split(",", 1)
        raw = (base64.b64decode(data, validate=False) if header.endswith(";base64")
               else data.encode())
    except (ValueError, binascii.Error, AttributeError):
        raise InputFileError(f"{name}: could not read the upload", source=name) from None
    if len(raw) > max_bytes:
        raise InputFileError(f"{name} is {len(raw) / 1024**2:.1f} MB, over the upload limit of "
                             f"{max_bytes / 1024**2:g} MB", source=name)
    return raw


def _upload_refusal() -> str | None:
    from flask import current_app, has_app_context

    limits = current_app.extensions.get("costdash-limits") if has_app_context() else None
    return None if limits is None else limits.upload_refusal()


def _fmt(x: float) -> str:
    return f"{x:.4g}"


def _choice(classifier: str, threshold: float | None) -> str:
    return classifier if threshold is None else f"{classifier} ≥ {number_text(threshold)}"


def periods_table(result: Watch) -> html.Table:
    """One row per period: estimate, PC(+), the policy's choice, regret, alert."""
    head = html.Thead(html.Tr([html.Th(h) for h in (
        "period", "cases", "p(+)", "interval", "PC(+)", "interval", "policy's choice",
        "deployed optimal", "regret over the period", "alert")]))
    rows = []
    for p in result.periods:
        rows.append(html.Tr(className="alert" if p.alert else None, children=[
            html.Td(str(p.period)), html.Td(f"{p.n:,}", className="num"),
            html.Td(_fmt(p.p_pos), className="num"),
            html.Td(f"[{_fmt(p.p_pos_low)}, {_fmt(p.p_pos_high)}]", className="num"),
            html.Td(_fmt(p.pc), className="num"),
            html.Td(f"[{_fmt(p.pc_low)}, {_fmt(p.pc_high)}]", className="num"),
            html.Td(_choice(p.choice_classifier, p.choice_threshold)),
            html.Td("yes" if p.deployed_optimal else "no"),
            html.Td(_fmt(p.regret_per_period), className="num"),
            html.Td(html.B("ALERT", style={"color": "#C00000"}) if p.alert else "")]))
    return html.Table(className="folds-table production-table", children=[head,
                                                                          html.Tbody(rows)])


def summary_text(result: Watch) -> str:
    dep = result.deployed
    where = ("optimal nowhere on the evaluation data's hull" if dep.valid_pc is None else
             f"optimal for PC(+) from {_fmt(dep.valid_pc[0])} to {_fmt(dep.valid_pc[1])}")
    alerts = [str(p.period) for p in result.periods if p.alert]
    levelled = all(p.estimate.calibrated for p in result.periods)
    level = (f"{result.level:.0%} intervals" if levelled else
             "intervals without a stated level (docs/production.md)")
    return (f"Deployed: {_choice(dep.classifier, dep.threshold)}, {where}; p(+) by "
            f"{result.method}, {level}. "
            + (f"Alerts: {', '.join(alerts)}." if alerts else "No alerts."))


class ProductionOutputs(Reply):
    TARGETS = targets(figure=(GRAPH, "figure"), table=TABLE, summary=SUMMARY, batches=BATCHES,
                      error=ERROR, notes=NOTES, options=(MODEL, "options"),
                      p_pos=(P_POS, "value"), p_implied=(P_IMPLIED, "data"),
                      columns=(PERIOD_COLUMN, "options"), column=(PERIOD_COLUMN, "value"),
                      batch=(BATCH, "data"), upload_hidden=(UPLOAD_BOX, "hidden"))


def production_view(services: Services, ref: Any, *, trigger: str | None = None,
                    contents: str | None = None, filename: str | None = None,
                    period_column: str | None = None, last_batch: Any = None,
                    model: Any = None, threshold: Any = None, p_pos: Any = None,
                    cost_fn: Any = None, cost_fp: Any = None, method: str = "em",
                    view: View | None = None) -> ProductionOutputs:
    """Everything on the page: a new batch kept first (``trigger`` is the upload, or the
    period column chosen again for the last upload, or the clear button), then the watch of
    every batch at the conditions. A file or value that cannot be used is named in the one
    error line, and what is drawn stays."""
    if not ref:
        return ProductionOutputs(notes=NO_DATA, upload_hidden=True)
    try:
        scope, read_only, analysis = scope_of(services, ref)
        reference = services.store.get(services.sharing.scope(ref).data_id)
    except CostdashError as exc:
        return ProductionOutputs(error=str(exc), upload_hidden=True)
    settings = services.settings
    names = [c.name for c in reference.scored]
    out = ProductionOutputs(options=[{"label": n, "value": n} for n in names],
                            p_implied=reference.prevalence, upload_hidden=read_only,
                            error="")
    store = ProductionStore(services.store)
    touched: list[str] = []
    notes: list[str] = []
    if trigger in (UPLOAD, PERIOD_COLUMN) and contents and not read_only:
        try:
            raw = decode_upload(contents, filename, settings.max_upload_bytes)
            name = filename or "production"
            columns = production_columns(raw, name, settings.max_upload_bytes)
            # Chosen again: exactly what the dropdown says (cleared: the file is one period).
            chosen = (period_guess(columns) if trigger == UPLOAD else
                      period_guess(columns, period_column) if period_column else None)
            if trigger == UPLOAD:
                refusal = _upload_refusal()
                if refusal is not None:
                    raise InputFileError(refusal)
            deployed = model if model in names and threshold is not None else None
            batch = read_batch(raw, name, classifier=deployed, period_column=chosen,
                               period=None, max_bytes=settings.max_upload_bytes,
                               max_rows=settings.max_rows)
        except CostdashError as exc:
            out.error = str(exc)
            return out
        if trigger == PERIOD_COLUMN and isinstance(last_batch, Mapping) and \
                last_batch.get("scope") == scope:
            store.remove(scope, str(last_batch.get("id")))  # the same upload, read again
        batch_id, notes = store.add(scope, batch)
        notes = [*batch.notes, *notes]
        touched = [str(p) for p in dict.fromkeys(batch.table["period"])]
        out.batch = {"id": batch_id, "scope": scope}
        out.columns = [{"label": c, "value": c} for c in columns
                       if c.casefold() not in ("score", "n", (deployed or "").casefold())]
        out.column = chosen
    elif trigger == CLEAR and not read_only:
        store.remove(scope)
        out.batch = None
    conditions, problems = check_fields({"p_pos": p_pos, "cost_fn": cost_fn, "cost_fp": cost_fp,
                                         "threshold": threshold})
    batches = store.batches(scope)
    out.batches = ("Batches kept: " + "; ".join(
        f"{b.source} ({b.n:,} cases: {', '.join(b.periods)})" for b in batches)
        if batches else "")
    out.notes = " ".join(notes) if notes else (READ_ONLY if read_only else "")
    if problems:
        out.error = warn(problems)
        return out
    base = view or View()
    try:
        chosen_view = base.with_values(
            p_pos=conditions["p_pos"], cost_fn=conditions["cost_fn"] or base.cost_fn,
            cost_fp=conditions["cost_fp"] or base.cost_fp,
            model=model if model in names else None, threshold=conditions["threshold"])
    except CostdashError as exc:
        out.error = str(exc)
        return out
    if conditions["p_pos"] is None:
        out.p_pos = chosen_view.condition(reference.prevalence).p_pos
    table = store.table(scope)
    if table is None:
        out.figure, out.table, out.summary = empty_figure(), NO_BATCHES, ""
        return out
    try:
        result = watch_batches(reference, table, chosen_view, method=method or "em",
                               level=LEVEL)
    except CostdashError as exc:
        if out.batch is not no_update and out.batch:
            store.remove(scope, out.batch["id"])  # a batch the watch cannot read is not kept
            out.batch = None
        out.error = str(exc)
        return out
    out.figure = production_figure(result, names)
    out.table = periods_table(result)
    out.summary = summary_text(result)
    if touched:
        post_alerts(settings.alert_webhook, alert_payloads(result, touched, analysis))
    return out


VIEW_CONTROLS = {"data": (REF, "data"), "model": (MODEL, "value"),
                 "threshold": (THRESHOLD, "value"), "p_pos": (P_VIEW, "data"),
                 "cost_fn": (COST_FN, "value"), "cost_fp": (COST_FP, "value")}
"""The view fields this page's controls set (:func:`page_kit.record_view`)."""


# --- callbacks -----------------------------------------------------------------------------------

def register_callbacks(app: Dash, services: Services) -> None:
    @app.callback(*ProductionOutputs.outputs(), Input(REF, "data"), Input(UPLOAD, "contents"),
                  Input(PERIOD_COLUMN, "value"), Input(CLEAR, "n_clicks"),
                  Input(MODEL, "value"), Input(THRESHOLD, "value"), Input(P_POS, "value"),
                  Input(COST_FN, "value"), Input(COST_FP, "value"), Input(METHOD, "value"),
                  State(UPLOAD, "filename"), State(BATCH, "data"), State(ids.URL, "search"))
    def _view(ref, contents, period_column, _clear, model, threshold, p_pos, cost_fn, cost_fp,
              method, filename, last_batch, search):
        # The view's fields without a control here (cost_tp, cost_tn) come from the address.
        view, _ = page_view(parse_qs((search or "").lstrip("?")))
        return production_view(
            services, ref, trigger=ctx.triggered_id, contents=contents, filename=filename,
            period_column=period_column, last_batch=last_batch, model=model,
            threshold=threshold, p_pos=p_pos, cost_fn=cost_fn, cost_fp=cost_fp, method=method,
            view=view).as_tuple()

    follow_implied(app, P_VIEW, P_POS, P_IMPLIED)
    record_view(app, URL_PROBLEMS, VIEW_CONTROLS)

