"""The Multiclass page: k-class cost matrices, BCOST and BDELTACOST (Margineantu & Dietterich).

Upload predicted and true class labels (wide ``y_true,clf_a,clf_b`` or long
``model,y_true,y_pred``), edit the cost matrix (**rows = predicted class, columns = actual
class**), and run: a BCOST interval for each classifier's expected cost per example and a
BDELTACOST interval (and test) for the difference of two classifiers on the same examples.

Every number comes from :mod:`costdash.multiclass`; every validation message is the core's
(ParameterError / InputFileError), naming the file as the user knows it (the readers take the
bytes and a name; nothing is written to a temp file). Label files are small (at most 20 MB), so
they come through ``dcc.Upload``, are read before they are kept, count against the client's
upload limit, and are kept in the SQL store by :class:`dashboard.storage.labelfiles.LabelFiles`; the
browser holds only ``{"sha", "name"}`` (nothing in module globals, so every worker and replica
runs them). The demo is read from the package, never stored again.

Run is a background job like the band pages' (progress per interval, Cancel; the app's job
manager, :mod:`dashboard.jobs`), and inside the job goes through the compute gate
(:mod:`dashboard.jobs.gate`): at most a few runs at once on the site, one per client and two per
file, each in a child process stopped after ``COSTDASH_HEAVY_TIMEOUT_SECONDS``; a run refused
or stopped says so in the page's alert (issue 22, finding 5: 16 runs at once held every web
thread and ``/healthz`` for minutes). The client is the one who pressed Run, recorded when
the job was queued.

Seeds: each interval is computed with a fresh generator from the seed
(``bcost(..., rng=seed)``), so any row can be reproduced alone, e.g. with
``costdash bcost FILE --model NAME --costs COSTS.csv --seed S``.

Element ids (a stable contract): ``multiclass-upload``, ``multiclass-demo``,
``multiclass-costs`` (the editable dash-ag-grid), ``multiclass-cost-upload``,
``multiclass-transpose``, ``multiclass-allow-negative``, ``multiclass-level``,
``multiclass-replicates``, ``multiclass-laplace``, ``multiclass-laplace-delta``,
``multiclass-seed``, ``multiclass-a``, ``multiclass-b``, ``multiclass-run``, ``multiclass-bcost``,
``multiclass-bdeltacost``, ``multiclass-graph``, ``multiclass-error``, ``multiclass-file-info``;
the run's job: ``multiclass-cancel``, ``multiclass-job``, ``multiclass-progress``,
``multiclass-progress-text``, ``multiclass-status``.
"""

from __future__ import annotations

import base64
import binascii
import csv
import io
import json
import logging
import math
import os
from collections.abc import Callable
from dataclasses import dataclass, field
from importlib.resources import files
from pathlib import Path
from typing import Any

import dash_ag_grid as dag
import numpy as np
from dash import Dash, Input, Output, State, ctx, dcc, html, no_update

from costdash.errors import CostdashError, InputFileError, ParameterError
from costdash.multiclass import (BcostResult, LabelPredictions, bcost, bdeltacost,
                                 confusion3d_from_labels, confusion_from_labels,
                                 load_cost_matrix, load_label_predictions, match_labels)
from dashboard import ids
from dashboard.jobs.gate import ComputeRefused, client_key, gate_for
from dashboard.figures.common import graph_config
from dashboard.figures.multiclass import bcost_figure, level_text
from dashboard.band_kit import background_options
from dashboard.page_kit import Reply, each, help_panel, targets
from dashboard.storage.labelfiles import DEMO_HANDLE, LabelFiles
from dashboard.services import Services
from dashboard.storage import StorageFull, StorageUnavailable

log = logging.getLogger(__name__)

JOB_PREFIX = "multiclass"
"""The prefix of the run's job controls (:func:`dashboard.band_kit.background_options`):
``multiclass-run`` (Run), ``multiclass-cancel``, ``multiclass-job``, ``multiclass-progress``,
``multiclass-progress-text``, ``multiclass-status``."""

MULTICLASS_CANCEL = f"{JOB_PREFIX}-cancel"

MULTICLASS_TICKET = f"{JOB_PREFIX}-ticket"
"""The store Run writes the gate's ticket to (the slots it took for the job); the job starts
when it changes."""

MAX_BYTES = 20 * 1024 * 1024
DEMO_NAME = "multiclass-triage.csv"
DEMO_COSTS_NAME = "multiclass-triage-costs.csv"
DEFAULTS = {"level": 0.95, "replicates": 1000, "laplace": 0.1, "laplace_delta": 0.0, "seed": 1}
GRID_TABLE = "the cost matrix table"
ORIENTATION = "rows = predicted class, columns = actual class"


def demo_path(name: str = DEMO_NAME) -> Path:
    return Path(str(files("costdash") / "data" / name))


# --- small helpers ---------------------------------------------------------------------------

def fmt(x: float) -> str:
    """How a cost reads on this page (5 significant digits)."""
    return f"{x:.5g}" if math.isfinite(x) else "–"


def sort_labels(labels: set[str] | list[str]) -> list[str]:
    """Labels in natural order: numerically when they are all numbers, else alphabetically."""
    labels = list(dict.fromkeys(labels))
    try:
        return sorted(labels, key=float)
    except ValueError:
        return sorted(labels)


def _page_words(exc: CostdashError) -> CostdashError:
    """The core's message with the command line's advice in the page's words."""
    text = str(exc).replace("pass --allow-negative / allow_negative=True",
                            "tick ‘allow negative costs’")
    return exc if text == str(exc) else type(exc)(text)


def decode_upload(contents: str, filename: str | None) -> bytes:
    """The bytes of a ``dcc.Upload`` data URL; InputFileError when it is not one or too big."""
    name = filename or "the file"
    try:
        header, data = contents.split(",", 1)
        raw = base64.b64decode(data, validate=False) if header.endswith(";base64") \
            else data.encode()
    except (ValueError, binascii.Error, AttributeError):
        raise InputFileError(f"{name}: could not read the upload", source=name) from None
    if len(raw) > MAX_BYTES:
        raise InputFileError(f"{name} is {len(raw) / 1024**2:.1f} MB, over the "
                             f"{MAX_BYTES // 1024**2} MB limit for label files", source=name)
    return raw


DISK_FULL = "The server's disk is full; nothing was stored. Try again later, or tell the operator."
"""What the page says when a label file does not fit (the API's 507 words)."""


def label_files(services: Services) -> LabelFiles:
    """The label files of this app (in its store)."""
    return LabelFiles(services.store)


DEMO_REF = {"sha": DEMO_HANDLE, "name": DEMO_NAME}
"""The demo's reference: read from the package, so a click stores nothing."""


def read_labels(services: Services, ref: dict[str, Any]) -> LabelPredictions:
    """The label predictions of a stored file (or the demo); InputFileError with the user's
    file name."""
    name = ref.get("name") or "the file"
    if ref.get("sha") == DEMO_HANDLE:
        return load_label_predictions(demo_path(), name=DEMO_NAME)
    raw = label_files(services).get(ref.get("sha"))
    if raw is None:
        raise InputFileError(f"{name} is no longer stored here; upload it again")
    return load_label_predictions(io.BytesIO(raw), name=name)


class UploadRefused(CostdashError):
    """A label file over the client's upload limit (nothing read or kept)."""


def store_labels(services: Services, raw: bytes, filename: str) -> tuple[dict[str, Any],
                                                                       LabelPredictions]:
    """Read an uploaded label file and keep it when it can be run; returns its reference and
    what it holds. Counts against the client's upload limit (in a request)."""
    from flask import current_app, has_app_context

    limits = current_app.extensions.get("costdash-limits") if has_app_context() else None
    refusal = None if limits is None else limits.upload_refusal()
    if refusal is not None:
        raise UploadRefused(refusal)
    handle, data = label_files(services).put(raw, filename)
    return {"sha": handle, "name": filename}, data


def data_labels(data: LabelPredictions) -> set[str]:
    out: set[str] = set()
    for c in data.classifiers:
        out |= c.labels
    return out


def file_text(ref: dict[str, Any], data: LabelPredictions) -> str:
    labels = sort_labels(data_labels(data))
    sizes = {c.y_true.size for c in data.classifiers}
    rows = f"{sizes.pop():,} examples" if len(sizes) == 1 else "examples per classifier vary"
    return (f"{ref['name']}: {data.layout} layout, {rows}, {len(data.names)} classifier"
            f"{'s' if len(data.names) != 1 else ''} ({', '.join(data.names)}), {len(labels)} "
            f"classes ({', '.join(labels)})")


# --- the cost matrix grid ----------------------------------------------------------------------

def default_costs(k: int) -> np.ndarray:
    """0 on the diagonal, 1 elsewhere (every error costs the same: plain error rate)."""
    return np.ones((k, k)) - np.eye(k)


def _cell(value: float) -> int | float:
    return int(value) if float(value).is_integer() else float(value)


def grid_columns(labels: list[str]) -> list[dict[str, Any]]:
    return [
        {"headerName": "predicted ↓", "field": "predicted", "editable": False,
         "pinned": "left", "cellClass": "mc-rowhead", "minWidth": 140,
         "headerTooltip": "rows = predicted class"},
        {"headerName": "actual (true) class →", "headerClass": "mc-actual-group",
         "children": [{"headerName": lab, "field": f"c{j}", "editable": True,
                       "type": "rightAligned", "minWidth": 90,
                       "cellClassRules": {"mc-diag": f"params.rowIndex === {j}"}}
                      for j, lab in enumerate(labels)]},
    ]


def grid_rows(labels: list[str], costs: np.ndarray) -> list[dict[str, Any]]:
    return [{"predicted": lab, **{f"c{j}": _cell(costs[i, j]) for j in range(len(labels))}}
            for i, lab in enumerate(labels)]


def grid_labels(row_data: list[dict[str, Any]] | None) -> list[str]:
    return [str(r.get("predicted")) for r in (row_data or [])]


def costs_from_grid(services: Services, row_data: list[dict[str, Any]] | None,
                    allow_negative: bool = False) -> tuple[list[str], np.ndarray]:
    """The grid's cost matrix, read and validated by :func:`costdash.multiclass.load_cost_matrix`.

    The cells are written as the labelled CSV the core reads (rows = predicted, columns =
    actual), so a non-numeric, empty, infinite or negative cell gets the core's message, naming
    the row and column.
    """
    labels = grid_labels(row_data)
    if len(labels) < 2:
        raise ParameterError("the cost matrix is empty: load a label file or the demo first")
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow(["predicted\\actual", *labels])
    for lab, row in zip(labels, row_data or []):
        cells = [row.get(f"c{j}") for j in range(len(labels))]
        writer.writerow([lab, *("" if v is None else repr(v) if isinstance(v, float) else str(v)
                                for v in cells)])
    return read_cost_upload(services, out.getvalue().encode("utf-8"), GRID_TABLE, False,
                            allow_negative)


def read_cost_upload(services: Services, raw: bytes, filename: str, transpose: bool,
                     allow_negative: bool) -> tuple[list[str], np.ndarray]:
    """The cost matrix of a CSV file's bytes, read by the core (messages name ``filename``)."""
    try:
        return load_cost_matrix(io.BytesIO(raw), transpose=transpose,
                                allow_negative=allow_negative, name=filename)
    except CostdashError as exc:
        raise _page_words(exc) from None


# --- layout ----------------------------------------------------------------------------------

def _number(id_: str, value: Any, label: Any, title: str, **kwargs: Any) -> html.Label:
    return html.Label(className="mc-setting", title=title, children=[
        html.Span(label), dcc.Input(id=id_, type="number", value=value, step="any",
                                    className="num", **kwargs)])


def _grid() -> dag.AgGrid:
    return dag.AgGrid(
        id=ids.MULTICLASS_COSTS, columnDefs=grid_columns([]), rowData=[],
        defaultColDef={"sortable": False, "resizable": True, "suppressMovable": True,
                       "flex": 1},
        dashGridOptions={"singleClickEdit": True, "stopEditingWhenCellsLoseFocus": True,
                         "domLayout": "autoHeight", "suppressDragLeaveHidesColumns": True,
                         "suppressHorizontalScroll": True,
                         "localeText": {"noRowsToShow": "Load a label file or the demo: the "
                                                        "classes found appear here."}},
        style={"height": None}, className="mc-grid")


HELP = help_panel([
    ["Each classifier's predictions give a k × k confusion matrix M (", ORIENTATION,
     "). Its average cost per example is Σ M ∘ C / n."],
    ["BCOST: the cells of M, with a Laplace correction λ (default 0.1), are the "
     "probabilities of a multinomial; B confusion matrices of n examples are drawn "
     "from it, each is priced with C, and the interval is read off the sorted "
     "prices (the 26th and 975th of 1000 at 95%). The normal (z) interval is the "
     "paper's baseline."],
    ["BDELTACOST: the same on the k × k × k joint matrix of two classifiers on the "
     "same examples, priced with C(i₁, j) − C(i₂, j); the paper found any λ > 0 "
     "makes this test too conservative, so its default is 0. If the interval "
     "excludes 0, ‘equal expected cost’ is rejected."],
    ["Seed: every interval uses a fresh generator from the seed, so one row can be "
     "reproduced alone: ", html.Code("costdash bcost FILE --model NAME --costs "
                                     "COSTS.csv --seed S"),
     ". Leave it empty for fresh randomness on every run."],
    "Source: Margineantu & Dietterich, ‘Bootstrap Methods for the Cost-Sensitive "
        "Evaluation of Classifiers’, ICML 2000.",
], summary="How BCOST and BDELTACOST work")


def layout(query: dict[str, list[str]], services: Services, **_: Any) -> html.Div:
    """The Multiclass page (it keeps nothing in the URL: its data are uploaded files)."""
    limit = MAX_BYTES // 1024**2
    return html.Div(className="multiclass-page", children=[
        dcc.Store(id=ids.MULTICLASS_REF), dcc.Store(id=MULTICLASS_TICKET),
        html.Section(className="data-bar mc-bar", children=[
            dcc.Upload(id=ids.MULTICLASS_UPLOAD, max_size=MAX_BYTES, multiple=False,
                       accept=".csv,.tsv,.txt", className="upload-zone mc-upload",
                       children=html.Div([
                           html.Span("Drop a label file here or ", className="upload-text"),
                           html.A("choose one", className="mc-choose"),
                           html.Span(f" (CSV, up to {limit} MB): wide ", className="upload-text"),
                           html.Code("y_true,clf_a,clf_b"), html.Span(" or long ",
                                                                        className="upload-text"),
                           html.Code("model,y_true,y_pred"),
                       ])),
            html.Div(className="demos", children=[
                html.Span("or"),
                html.Button("Load the demo: 3-class triage", id=ids.MULTICLASS_DEMO, n_clicks=0,
                            className="demo-button",
                            title="600 patients triaged routine / urgent / emergency by three "
                                  "classifiers, with a cost matrix where under-triage is "
                                  "expensive (costdash/data/multiclass-triage*.csv)"),
            ]),
            html.Div(id=ids.MULTICLASS_FILE_INFO, className="dataset-info"),
            html.Div(id=ids.MULTICLASS_ERROR, className="error", role="alert"),
        ]),
        html.Div(className="mc-layout", children=[
            html.Section(className="panel mc-matrix", children=[
                html.H2("Cost matrix"),
                html.P(className="mc-orientation", children=[
                    html.B("ROWS = PREDICTED class, COLUMNS = ACTUAL class"),
                    html.Span(" (as in Margineantu & Dietterich): the cell in row i, column j is "
                              "the cost of predicting i when the truth is j. scikit-learn's "
                              "confusion_matrix is the transpose.")]),
                _grid(),
                html.P("Click a cell to edit it. New files start from 0 on the diagonal and 1 "
                       "elsewhere (plain error rate).", className="mc-hint"),
                html.Div(className="mc-cost-tools", children=[
                    dcc.Upload(id=ids.MULTICLASS_COST_UPLOAD, multiple=False, max_size=MAX_BYTES,
                               accept=".csv,.tsv,.txt", className="mc-cost-upload",
                               children=html.Span(["Load a cost matrix CSV"],
                                                  className="link-button")),
                    dcc.Checklist(id=ids.MULTICLASS_TRANSPOSE, className="toggle",
                                  options=[{"label": " the CSV has rows = actual, columns = "
                                                     "predicted (transpose it)",
                                            "value": "t"}], value=[]),
                    dcc.Checklist(id=ids.MULTICLASS_ALLOW_NEGATIVE, className="toggle",
                                  options=[{"label": " allow negative costs (benefits)",
                                            "value": "on"}], value=[]),
                ]),
            ]),
            html.Section(className="panel mc-settings", children=[
                html.H2("Settings"),
                html.Div(className="mc-settings-grid", children=[
                    _number(ids.MULTICLASS_LEVEL, DEFAULTS["level"], "confidence level",
                            "between 0 and 1, e.g. 0.95", min=0, max=1),
                    _number(ids.MULTICLASS_REPLICATES, DEFAULTS["replicates"],
                            "bootstrap replicates B", "1 to 100000", min=1),
                    _number(ids.MULTICLASS_LAPLACE, DEFAULTS["laplace"], "Laplace λ (BCOST)",
                            "added to every cell before resampling; the paper recommends 0.1",
                            min=0),
                    _number(ids.MULTICLASS_LAPLACE_DELTA, DEFAULTS["laplace_delta"],
                            "Laplace λ (BDELTACOST)", "the paper recommends 0 for the test",
                            min=0),
                    _number(ids.MULTICLASS_SEED, DEFAULTS["seed"], "seed",
                            "whole number; empty for fresh randomness", min=0),
                ]),
                html.H3("BDELTACOST: compare two classifiers"),
                html.Div(className="mc-pair", children=[
                    html.Label(["A ", dcc.Dropdown(id=ids.MULTICLASS_A, options=[],
                                                   clearable=False, placeholder="classifier A")]),
                    html.Span("−", className="mc-minus"),
                    html.Label(["B ", dcc.Dropdown(id=ids.MULTICLASS_B, options=[],
                                                   clearable=False, placeholder="classifier B")]),
                ]),
                html.Div(className="job-buttons", children=[
                    html.Button("Run BCOST and BDELTACOST", id=ids.MULTICLASS_RUN, n_clicks=0,
                                className="run-button"),
                    html.Button("Cancel", id=MULTICLASS_CANCEL, n_clicks=0, disabled=True,
                                className="cancel-button"),
                ]),
                html.Div(id=f"{JOB_PREFIX}-job", className="job", children=[
                    html.Progress(id=f"{JOB_PREFIX}-progress", max="1",
                                  **{"aria-label": "run progress"}),
                    html.Span(id=f"{JOB_PREFIX}-progress-text", className="job-text"),
                ]),
                html.Div(id=f"{JOB_PREFIX}-status", className="note job-status",
                         **{"aria-live": "polite"}),
            ]),
        ]),
        html.Div(className="mc-results", children=[
            html.Section(className="card", children=[
                html.H3(["BCOST: average cost per example, with its confidence interval"]),
                html.Div(id=ids.MULTICLASS_BCOST, className="mc-table",
                         children="Load labels and press Run."),
            ]),
            html.Section(className="card", children=[
                html.H3("BDELTACOST: cost(A) − cost(B) on the same examples"),
                html.Div(id=ids.MULTICLASS_BDELTACOST, className="mc-delta", children="–"),
            ]),
            html.Figure(className="plot mc-plot", children=[
                html.Div(className="graph-box mc-graph-box", children=dcc.Graph(
                    id=ids.MULTICLASS_GRAPH, figure=bcost_figure(None), style={"height": "100%"},
                    config=graph_config("multiclass-costs"))),
                html.Figcaption("Thick bar: bootstrap interval (BCOST); dashed: normal "
                                "interval; diamond: observed average cost"),
            ]),
        ]),
        HELP,
    ])


# --- server-side handlers (plain functions; the callbacks below only wire them) ---------------

class InputOutputs(Reply):
    """What loading a label file, the demo or a cost matrix CSV changes."""

    TARGETS = targets(ref=(ids.MULTICLASS_REF, "data"), info=ids.MULTICLASS_FILE_INFO,
                      columns=(ids.MULTICLASS_COSTS, "columnDefs"),
                      rows=(ids.MULTICLASS_COSTS, "rowData"),
                      pair_options=[(ids.MULTICLASS_A, "options"), (ids.MULTICLASS_B, "options")],
                      a=(ids.MULTICLASS_A, "value"), b=(ids.MULTICLASS_B, "value"),
                      error=ids.MULTICLASS_ERROR, bcost=ids.MULTICLASS_BCOST,
                      delta=ids.MULTICLASS_BDELTACOST, figure=(ids.MULTICLASS_GRAPH, "figure"))

    def clear_results(self) -> None:
        self.bcost, self.delta, self.figure = "Press Run.", "–", bcost_figure(None)


def _with_labels(out: InputOutputs, ref: dict[str, Any], data: LabelPredictions,
                 row_data: list[dict[str, Any]] | None,
                 costs: tuple[list[str], np.ndarray] | None = None) -> InputOutputs:
    names = list(data.names)
    out.ref, out.info, out.error = ref, file_text(ref, data), ""
    out.pair_options = [{"label": n, "value": n} for n in names]
    out.a = names[0]
    out.b = names[1] if len(names) > 1 else names[0]
    found = data_labels(data)
    if costs is not None:
        labels, matrix = costs
        match_labels(labels, found, matrix_source="the cost matrix", data_source=ref["name"])
        out.columns, out.rows = grid_columns(labels), grid_rows(labels, matrix)
    elif not found <= set(grid_labels(row_data)):
        labels = sort_labels(found)
        out.columns, out.rows = grid_columns(labels), grid_rows(labels, default_costs(len(labels)))
    out.clear_results()
    return out


def load_input(services: Services, trigger: str | None, *, contents: str | None = None,
               filename: str | None = None, cost_contents: str | None = None,
               cost_filename: str | None = None, transpose: bool = False,
               allow_negative: bool = False, ref: dict[str, Any] | None = None,
               row_data: list[dict[str, Any]] | None = None) -> InputOutputs:
    """A new label file (``multiclass-upload``), the demo, or a cost matrix CSV."""
    out = InputOutputs()
    try:
        if trigger == ids.MULTICLASS_DEMO:
            new_ref, data = dict(DEMO_REF), read_labels(services, DEMO_REF)
            costs = read_cost_upload(services, demo_path(DEMO_COSTS_NAME).read_bytes(),
                                     DEMO_COSTS_NAME, False, False)
            return _with_labels(out, new_ref, data, row_data, costs)
        if trigger == ids.MULTICLASS_UPLOAD and contents:
            name = os.path.basename(filename or "labels.csv")
            new_ref, data = store_labels(services, decode_upload(contents, name), name)
            return _with_labels(out, new_ref, data, row_data)
        if trigger == ids.MULTICLASS_COST_UPLOAD and cost_contents:
            name = os.path.basename(cost_filename or "costs.csv")
            labels, matrix = read_cost_upload(services, decode_upload(cost_contents, name), name,
                                              transpose, allow_negative)
            if ref:
                match_labels(labels, data_labels(read_labels(services, ref)),
                             matrix_source=name, data_source=ref.get("name", "the label file"))
            out.columns, out.rows, out.error = grid_columns(labels), grid_rows(labels, matrix), ""
            out.clear_results()
            return out
    except StorageFull:
        out.error = DISK_FULL
    except StorageUnavailable:
        out.error = ("The database is not reachable right now; nothing was stored. Try again "
                     "in a minute.")
    except CostdashError as exc:
        out.error = str(exc)
    return out


@dataclass(frozen=True)
class DeltaNumbers:
    """The numbers of a BDELTACOST result the page shows (they cross the gate's pipe as
    JSON; see :class:`costdash.multiclass.BdeltacostResult` for their meaning)."""

    delta: float
    low: float
    high: float
    reject: bool
    normal_low: float
    normal_high: float
    normal_reject: bool
    n: int
    laplace: float
    replicates: int
    level: float


@dataclass
class RunOutputs:
    bcost: Any = no_update
    delta: Any = no_update
    figure: Any = no_update
    error: Any = no_update
    rows: list[dict[str, Any]] = field(default_factory=list)
    delta_result: DeltaNumbers | None = None

    def as_tuple(self) -> tuple:
        return self.bcost, self.delta, self.figure, self.error


def _failed(message: str) -> RunOutputs:
    """An error, and no results left on screen that no longer match the inputs."""
    return RunOutputs(bcost="–", delta="–", figure=bcost_figure(None), error=message)


def _whole(value: Any) -> Any:
    """A number box's value as an int when it is a whole number (the core checks the rest)."""
    if isinstance(value, float) and value.is_integer():
        return int(value)
    return value


def _seed(value: Any) -> int | None:
    if value is None or value == "":
        return None
    value = _whole(value)
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        raise ParameterError(f"the seed must be a whole number ≥ 0, or empty for fresh "
                             f"randomness; got {value!r}")
    return value


def bcost_table(rows: list[dict[str, Any]], level: float, unseen: list[str]) -> html.Div:
    head = html.Tr([html.Th("classifier"), html.Th("n"), html.Th("average cost"),
                    html.Th(f"BCOST {level_text(level)} low"),
                    html.Th(f"BCOST {level_text(level)} high"),
                    html.Th("normal interval")])
    body = [html.Tr(**{"data-name": r["name"]}, children=[
        html.Td(r["name"]), html.Td(f"{r['n']:,}", className="num"),
        html.Td(fmt(r["cost"]), className="num cost"),
        html.Td(fmt(r["low"]), className="num low"), html.Td(fmt(r["high"]), className="num high"),
        html.Td(f"[{fmt(r['normal_low'])}, {fmt(r['normal_high'])}]", className="num normal")])
        for r in rows]
    notes = []
    if unseen:
        notes.append(html.P(f"Classes in the cost matrix never seen in the data: "
                            f"{', '.join(unseen)} (allowed).", className="note"))
    return html.Div([html.Table(className="mc-bcost-table", children=[html.Thead(head),
                                                                      html.Tbody(body)]),
                     *notes])


def delta_readout(a: str, b: str, res: DeltaNumbers, seed: int | None) -> html.Div:
    lv = level_text(res.level)
    if res.reject:
        cheaper, dearer = (a, b) if res.delta < 0 else (b, a)
        verdict = (f"The interval excludes 0: reject ‘equal expected cost’ at the {lv} level. "
                   f"{cheaper} costs less than {dearer}.")
    else:
        verdict = (f"The interval contains 0: do not reject ‘equal expected cost’ at the {lv} "
                   f"level. No significant difference between {a} and {b}.")
    z_word = "also excludes 0" if res.normal_reject else "contains 0"
    return html.Div([
        html.P(["cost(", html.B(a), ") − cost(", html.B(b), ") = ",
                html.Span(fmt(res.delta), id=ids.MULTICLASS_DELTA_VALUE, className="mc-big"),
                f" per example (n = {res.n:,})"]),
        html.P([f"BDELTACOST {lv} interval: ",
                html.Span(f"[{fmt(res.low)}, {fmt(res.high)}]", id=ids.MULTICLASS_DELTA_INTERVAL,
                          className="mc-big"),
                f"  (λ = {res.laplace:g}, B = {res.replicates:,}, seed "
                f"{'none' if seed is None else seed})"]),
        html.P(verdict, id=ids.MULTICLASS_DELTA_VERDICT,
               className="mc-verdict " + ("reject" if res.reject else "no-reject")),
        html.P(f"Paired normal (z) interval: [{fmt(res.normal_low)}, {fmt(res.normal_high)}] "
               f"({z_word}).", className="note"),
    ])


def multiclass_numbers(data: LabelPredictions, labels: list[str], costs: np.ndarray, *,
                       level: Any, replicates: Any, laplace: Any, laplace_delta: Any,
                       rng: int | None, pair: tuple[str, str] | None,
                       allow_negative: bool,
                       progress: Callable[[int, int], None] | None = None) -> dict[str, Any]:
    """BCOST of every classifier and BDELTACOST of ``pair`` (core: ``bcost``, ``bdeltacost``),
    as plain JSON-able numbers: the part of a run that costs time, run in the gate's child
    process. ``progress(done, total)`` after each interval (classifiers, then the pair)."""
    rows = []
    total = len(data.classifiers) + (pair is not None)
    for i, c in enumerate(data.classifiers):
        res: BcostResult = bcost(confusion_from_labels(c.y_pred, c.y_true, labels), costs,
                                 level=level, replicates=replicates, laplace=laplace,
                                 rng=rng, allow_negative=allow_negative)
        rows.append({"name": c.name, "index": i, "n": int(res.n), "cost": float(res.cost),
                     "low": float(res.low), "high": float(res.high),
                     "normal_low": float(res.normal_low),
                     "normal_high": float(res.normal_high)})
        if progress is not None:
            progress(i + 1, total)
    delta = None
    if pair is not None:
        y_a, y_b, y_true = data.pair(*pair)
        d = bdeltacost(confusion3d_from_labels(y_a, y_b, y_true, labels), costs, level=level,
                       replicates=replicates, laplace=laplace_delta, rng=rng,
                       allow_negative=allow_negative)
        delta = {"delta": float(d.delta), "low": float(d.low), "high": float(d.high),
                 "reject": bool(d.reject), "normal_low": float(d.normal_low),
                 "normal_high": float(d.normal_high), "normal_reject": bool(d.normal_reject),
                 "n": int(d.n), "laplace": float(d.laplace),
                 "replicates": int(d.replicates.size), "level": float(d.level)}
        if progress is not None:
            progress(total, total)
    return {"rows": rows, "delta": delta}


Runner = Callable[..., dict[str, Any]]
"""How a run's numbers are computed: ``runner(multiclass_numbers, *args, **kwargs)``."""


def _inline(fn: Callable[..., dict[str, Any]], *args: Any, **kwargs: Any) -> dict[str, Any]:
    return fn(*args, **kwargs)


def run_multiclass(services: Services, ref: dict[str, Any] | None,
                   row_data: list[dict[str, Any]] | None, *, level: Any = DEFAULTS["level"],
                   replicates: Any = DEFAULTS["replicates"], laplace: Any = DEFAULTS["laplace"],
                   laplace_delta: Any = DEFAULTS["laplace_delta"], seed: Any = DEFAULTS["seed"],
                   a: str | None = None, b: str | None = None,
                   allow_negative: bool = False, runner: Runner = _inline) -> RunOutputs:
    """BCOST for every classifier and BDELTACOST for A − B (core: ``bcost``, ``bdeltacost``).

    ``runner`` computes the numbers (:func:`multiclass_numbers`): here, in this thread; the
    page's callback passes the compute gate's (:func:`gated_runner`). A refusal of the gate
    is shown in the alert, the results on screen kept."""
    if not ref:
        return _failed("Load a label file or the demo first.")
    try:
        data = read_labels(services, ref)
        labels, costs = costs_from_grid(services, row_data, allow_negative)
        unseen = match_labels(labels, data_labels(data), matrix_source="the cost matrix",
                              data_source=ref.get("name", "the label file"))
        rng = _seed(seed)
        replicates = _whole(replicates)
        names = list(data.names)
        pair = (a, b) if len(names) > 1 and a in names and b in names and a != b else None
        numbers = runner(multiclass_numbers, data, labels, costs, level=level,
                         replicates=replicates, laplace=laplace, laplace_delta=laplace_delta,
                         rng=rng, pair=pair, allow_negative=allow_negative)
        rows = numbers["rows"]
        out = RunOutputs(rows=rows, error="")
        out.bcost = bcost_table(rows, float(level), unseen)
        out.figure = bcost_figure(rows, float(level))
        if len(names) < 2:
            out.delta = "BDELTACOST needs two classifiers; this file has one."
        elif pair is None:
            out.delta = "Choose two different classifiers A and B."
        else:
            out.delta_result = DeltaNumbers(**numbers["delta"])
            out.delta = delta_readout(a, b, out.delta_result, rng)
        return out
    except ComputeRefused as exc:
        return RunOutputs(error=exc.message)
    except CostdashError as exc:
        return _failed(str(exc))
    except Exception:  # never a traceback on the page
        log.exception("multiclass run failed")
        return _failed("Something went wrong while computing the intervals; the server log "
                       "has the details.")


def gated_runner(services: Services, client: str, ref: dict[str, Any] | None,
                 progress: Callable[[int, int], None] | None = None) -> Runner:
    """A runner that computes through the compute gate (:meth:`dashboard.jobs.gate.ComputeGate.run`):
    counted against ``client`` and the file, in a child process with a deadline;
    ``progress(done, total)`` as each interval is done (reported from the child)."""
    handle = (ref or {}).get("sha")

    def run(fn: Callable[..., dict[str, Any]], *args: Any, **kwargs: Any) -> dict[str, Any]:
        if progress is None:
            work: Callable[..., dict[str, Any]] = lambda: fn(*args, **kwargs)  # noqa: E731
        else:
            def work(progress: Callable[[int, int], None]) -> dict[str, Any]:
                return fn(*args, progress=progress, **kwargs)
        return gate_for(services).run("Multiclass run", work, client=client,
                                      handle=str(handle) if handle else None,
                                      progress=progress)
    return run


def run_progress(set_progress: Callable[[tuple], None] | None
                 ) -> Callable[[int, int], None] | None:
    """A run's ``progress(done, total)`` as the values of the progress bar and its text."""
    if set_progress is None:
        return None

    def report(done: int, total: int) -> None:
        set_progress((done, total, f"{done} of {total} intervals"))
    return report


def reserve_run(services: Services, clicks: Any, ref: dict[str, Any] | None,
                client: str) -> tuple[dict[str, Any] | Any, str | Any]:
    """What Run does in its request: take the gate's slots for the job (client, file, site;
    the client's rate limit counted) and hand the job its ticket; or refuse at once, with no
    job process started (:meth:`dashboard.jobs.gate.ComputeGate.reserve`). Returns the ticket
    store's data and the alert's text."""
    if not ref:  # the job says what is missing; nothing to reserve
        return {"slots": [], "n": clicks}, no_update
    handle = ref.get("sha")
    try:
        slots = gate_for(services).reserve("Multiclass run", client=client,
                                           handle=str(handle) if handle else None)
    except ComputeRefused as exc:
        return no_update, exc.message
    except StorageUnavailable:
        return no_update, ("The database is not reachable right now; the Multiclass run was "
                           "not started. Try again in a minute.")
    return {"slots": slots, "n": clicks}, ""


def run_job(app: Dash, services: Services, set_progress: Callable[[tuple], None] | None,
            ticket: dict[str, Any] | None, ref: dict[str, Any] | None,
            row_data: list[dict[str, Any]] | None, client: str | None = None,
            **settings: Any) -> RunOutputs:
    """A run as the page's background job does it, with the slots Run took for it
    (:func:`reserve_run`, taken over by this process: a killed job's are free at once), in a
    child process stopped at their deadline. Without a whole ticket (a request that skipped
    Run's, or slots expired in a long queue) the job goes through the gate itself, counted
    against the client who queued it (:func:`dashboard.jobs.job_client`), inside the app's
    context (the gate counts the client's rate limit there).

    The job is a process of its own (a fork of the web process, or a Celery worker), so the
    web threads never wait for it; Cancel kills the job and, with it, the gate's child."""
    from dashboard.jobs.gate import run_bounded
    from dashboard.jobs import job_client

    who = client or job_client() or "unknown"
    progress = run_progress(set_progress)
    slots = (ticket or {}).get("slots")
    with app.server.app_context():
        if not ref or not slots:
            return run_multiclass(services, ref, row_data,
                                  runner=gated_runner(services, who, ref, progress), **settings)
        with gate_for(services).adopted(slots) as deadline:
            if deadline is None:
                return run_multiclass(services, ref, row_data,
                                      runner=gated_runner(services, who, ref, progress),
                                      **settings)

            def bounded(fn: Callable[..., dict[str, Any]], *args: Any,
                        **kwargs: Any) -> dict[str, Any]:
                def work(progress: Callable[[int, int], None]) -> dict[str, Any]:
                    return fn(*args, progress=progress, **kwargs)
                return run_bounded(work, timeout=deadline.seconds_left(),
                                   what="Multiclass run",
                                   progress=progress or (lambda _done, _total: None))
            return run_multiclass(services, ref, row_data, runner=bounded, **settings)


def _job_error_reply(message: str) -> tuple:
    """What a run whose job failed, or could not be queued, leaves on the page: the alert says
    so, the results on screen stay."""
    return no_update, no_update, no_update, message


# --- callbacks -----------------------------------------------------------------------------------

def register_callbacks(app: Dash, services: Services) -> None:
    @app.callback(
        *InputOutputs.outputs(),
        Input(ids.MULTICLASS_UPLOAD, "contents"), Input(ids.MULTICLASS_DEMO, "n_clicks"),
        Input(ids.MULTICLASS_COST_UPLOAD, "contents"),
        State(ids.MULTICLASS_UPLOAD, "filename"), State(ids.MULTICLASS_COST_UPLOAD, "filename"),
        State(ids.MULTICLASS_TRANSPOSE, "value"), State(ids.MULTICLASS_ALLOW_NEGATIVE, "value"),
        State(ids.MULTICLASS_REF, "data"), State(ids.MULTICLASS_COSTS, "rowData"),
        prevent_initial_call=True)
    def _load(contents, _demo, cost_contents, filename, cost_filename, transpose, negative,
              ref, row_data):
        trigger = ctx.triggered_id if isinstance(ctx.triggered_id, str) else None
        return load_input(services, trigger, contents=contents, filename=filename,
                          cost_contents=cost_contents, cost_filename=cost_filename,
                          transpose=bool(transpose), allow_negative=bool(negative), ref=ref,
                          row_data=row_data).as_tuple()

    # Run takes the gate's slots in its request (a refusal is shown at once, and starts no
    # job process), then the job starts from the ticket (issue 22: the run computed in a web
    # thread): progress per interval, Cancel, Run disabled while it runs.
    @app.callback(
        Output(MULTICLASS_TICKET, "data"),
        Output(ids.MULTICLASS_ERROR, "children", allow_duplicate=True),
        Input(ids.MULTICLASS_RUN, "n_clicks"), State(ids.MULTICLASS_REF, "data"),
        prevent_initial_call=True)
    def _reserve(clicks, ref):
        return reserve_run(services, clicks, ref, client_key())

    @app.callback(
        Output(ids.MULTICLASS_BCOST, "children", allow_duplicate=True),
        Output(ids.MULTICLASS_BDELTACOST, "children", allow_duplicate=True),
        Output(ids.MULTICLASS_GRAPH, "figure", allow_duplicate=True),
        Output(ids.MULTICLASS_ERROR, "children", allow_duplicate=True),
        Input(MULTICLASS_TICKET, "data"),
        State(ids.MULTICLASS_REF, "data"), State(ids.MULTICLASS_COSTS, "rowData"),
        *each(State, "value", ids.MULTICLASS_LEVEL, ids.MULTICLASS_REPLICATES,
              ids.MULTICLASS_LAPLACE, ids.MULTICLASS_LAPLACE_DELTA, ids.MULTICLASS_SEED,
              ids.MULTICLASS_A, ids.MULTICLASS_B, ids.MULTICLASS_ALLOW_NEGATIVE),
        **background_options(JOB_PREFIX, error_reply=_job_error_reply))
    def _run(set_progress, ticket, ref, row_data, level, replicates, laplace, laplace_delta,
             seed, a, b, negative):
        out = run_job(app, services, set_progress, ticket, ref, row_data, level=level,
                      replicates=replicates, laplace=laplace, laplace_delta=laplace_delta,
                      seed=seed, a=a, b=b, allow_negative=bool(negative)).as_tuple()
        return as_json(out)


def as_json(outputs: tuple) -> list[Any]:
    """A job's outputs as plain JSON values: the job managers keep results as JSON, never
    pickled, so components and figures travel as the dicts Dash would send anyway
    (``no_update`` as Dash's own marker, which its result handling turns back)."""
    from plotly.io.json import to_json_plotly

    return [{"_dash_no_update": "_dash_no_update"} if isinstance(value, type(no_update))
            else json.loads(to_json_plotly(value)) for value in outputs]
