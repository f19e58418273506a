"""The Confidence page: a classifier's cost curve with a bootstrap confidence band.

The band (:func:`costdash.bands.cost_band`) is computed as a background job (Dash background
callback, see :mod:`dashboard.jobs`) with a progress bar and a cancel button. The job keeps the
band, with every replicate curve, in the shared result cache and sends the browser only a small
reference; a normal callback reads the band back and draws it at the chosen level with
``band.at_level`` -- so changing the level never resamples, and no curves live in the browser.

Element ids (a stable contract): ``confidence-model``, ``confidence-threshold``,
``confidence-replicates``, ``confidence-level``, ``confidence-pc``, ``confidence-run``,
``confidence-cancel``, ``confidence-progress``, ``confidence-graph``, ``confidence-summary``,
``confidence-status``, ``confidence-dataset``, ``confidence-error``.

URL: ``/confidence?data=<id>&model=NAME&level=0.9&replicates=1000`` plus, when used,
``threshold=T`` (band of the classifier at that fixed threshold), ``pc=X`` (the PC(+) to read the
band at; or ``p_pos``, ``cost_fn``, ``cost_fp`` as on the Explore page) and ``seed=S``.

The helpers above the callbacks (query parsing, resolving the data set, the job controls) are
shared with the Compare page.
"""

from __future__ import annotations

import logging
import math
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlencode

from dash import (Dash, Input, Output, State, callback_context, dcc, html, no_update,
                  set_props)
from dash.exceptions import BackgroundCallbackError

from costdash.bands import MAX_REPLICATES, CostBand, confidence_ranks, cost_band
from costdash.conditions import OperatingCondition
from costdash.costspace import LowerEnvelope, lower_envelope
from costdash.dataset import CountedClassifier
from costdash.errors import CostdashError
from dashboard.cache import Services
from dashboard.figures.bands import band_figure
from dashboard.figures.common import graph_config
from dashboard.figures.bands import level_text as percent
from dashboard.jobs import (BAND_GRID, DEFAULT_REPLICATES, DEFAULT_SEED, POLL_INTERVAL_MS,
                           BandCache, cost_band_key)
from dashboard.storage import DatasetNotFound, valid_id
from dashboard.viewmodel import hull_from_entry

log = logging.getLogger(__name__)

DEFAULT_LEVEL = 0.9
GRID = BAND_GRID
"""PC(+) values of a band (``linspace(0, 1, 201)``, the core's and the CLI's default)."""

WHAT_IT_MEASURES = (
    "The band shows how much this cost curve would move if the same, already trained model were "
    "scored on another test set of the same size and class mix: the test-set sampling "
    "variability of this fixed model, not the variability of the learning algorithm (a model "
    "retrained on other data; for that, compare cross-validation folds). It is pointwise: at "
    "each PC(+) separately.")

CAVEAT_CURVE = (
    "Whole-curve band: every replicate re-picks its best threshold on its own resample, so the "
    "band is that of an optimistically tuned classifier and under-covers the true optimal cost "
    "(in our study a nominal 90% band covered about 50% for 100 test examples, 70% for 1,000 "
    "and 81% for 10,000, worst near PC(+) = 0 and 1, and always by being too low; "
    "docs/bands.md). For a deployed model, enter its threshold: that band is calibrated.")

CAVEAT_LINE = (
    "Fixed-threshold band: the cost line of this one threshold, resampled. It is calibrated "
    "(coverage within a percent of the nominal level in our study, docs/bands.md), provided the "
    "threshold was not chosen by looking at this same test set.")


# --- reading the query string (shared with the Compare page) -----------------------------------

def first(query: dict[str, list[str]], key: str) -> str | None:
    values = query.get(key)
    return values[0] if values else None


def query_float(query: dict[str, list[str]], key: str) -> float | None:
    text = first(query, key)
    try:
        value = float(text) if text is not None else None
    except ValueError:
        return None
    return value if value is not None and math.isfinite(value) else None


def query_int(query: dict[str, list[str]], key: str) -> int | None:
    value = query_float(query, key)
    return int(value) if value is not None and value.is_integer() else None


def query_level(query: dict[str, list[str]]) -> float:
    level = query_float(query, "level")
    return level if level is not None and 0.0 < level < 1.0 else DEFAULT_LEVEL


def query_replicates(query: dict[str, list[str]]) -> int:
    b = query_int(query, "replicates")
    return b if b is not None and 1 <= b <= MAX_REPLICATES else DEFAULT_REPLICATES


def query_seed(query: dict[str, list[str]]) -> int:
    seed = query_int(query, "seed")
    return seed if seed is not None and seed >= 0 else DEFAULT_SEED


def query_pc(query: dict[str, list[str]]) -> float | None:
    """``pc``, else the PC(+) of ``p_pos``, ``cost_fn``, ``cost_fp`` (the Explore page's names)."""
    pc = query_float(query, "pc")
    if pc is not None:
        return pc if 0.0 <= pc <= 1.0 else None
    p = query_float(query, "p_pos")
    if p is None:
        return None
    try:
        return OperatingCondition(p, query_float(query, "cost_fn") or 1.0,
                                  query_float(query, "cost_fp") or 1.0).pc
    except CostdashError:
        return None


def as_int(value: Any) -> Any:
    """A whole number typed in a number box (it may arrive as 1000.0) as an int."""
    if isinstance(value, float) and value.is_integer():
        return int(value)
    return value


def as_float(value: Any) -> float | None:
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return None
    return float(value) if math.isfinite(value) else None


def fmt_range(lo: float, hi: float) -> str:
    return f"{lo:.3g}" if lo == hi else f"{lo:.3g}–{hi:.3g}"


CACHE_DOWN = ("The band was computed, but the result cache did not keep it (the cache server "
              "is unreachable), so it cannot be shown. Try again when the cache is back.")


# --- the data set ---------------------------------------------------------------------------------

NO_DATA = "No data set is open. Upload a predictions file or open a demo on the Explore page."


def no_data(message: str = NO_DATA) -> list:
    return [message + " ", dcc.Link("Go to Explore", href="/explore")]


@dataclass
class Resolved:
    """The data set a page shows: its id and cached view model, or why there is none."""

    id: str | None = None
    view: dict[str, Any] | None = None
    error: Any = None

    @property
    def ok(self) -> bool:
        return self.view is not None

    def entry(self, name: str | None) -> dict[str, Any] | None:
        for c in (self.view or {}).get("classifiers", []):
            if c["name"] == name:
                return c
        return None

    @property
    def names(self) -> list[str]:
        return [c["name"] for c in (self.view or {}).get("classifiers", [])]


def resolve(services: Services, query_id: str | None, current: dict | None) -> Resolved:
    """The data set of the URL, else the one last opened on any page (``current-data``)."""
    data_id = query_id if valid_id(query_id) else None
    if data_id is None and current and valid_id(current.get("id")):
        data_id = current["id"]
    if data_id is None:
        return Resolved(error=no_data())
    try:
        return Resolved(id=data_id, view=services.views.full(data_id))
    except (DatasetNotFound, CostdashError) as exc:
        return Resolved(id=data_id, error=no_data(str(exc) + "."))


def dataset_line(view: dict[str, Any]) -> str:
    n_cls = len(view["classifiers"])
    folds = (f"; {view['n_folds']} folds, pooled into one test set for the bootstrap"
             if view.get("n_folds") else "")
    return (f"{view['name']}: {view['n']:,} cases, {view['n_pos']:,} positive, {n_cls} "
            f"classifier{'s' if n_cls != 1 else ''}{folds}")


def envelope_of(entry: dict[str, Any]) -> LowerEnvelope:
    """A classifier's exact lower envelope, from its hull kept in the view model."""
    return lower_envelope(hull_from_entry(entry["hull"]))


def counted_message(name: str) -> str:
    return (f"{name} is known only by confusion-matrix counts (a counts file), so its whole "
            "curve cannot be resampled row by row. Enter the threshold of one of its matrices "
            "to get the band of that matrix.")


def counted_problem(entry: dict[str, Any], threshold: float | None) -> str | None:
    """Why a counts-only classifier cannot be resampled as asked, or None."""
    if entry["scored"] or threshold is not None:
        return None
    # Its ROC curve is its matrices framed by (0, 0) and (1, 1): more than 3 points means more
    # than one matrix, and a band is for one matrix.
    return counted_message(entry["name"]) if entry["roc_size"] > 3 else None


# --- job controls (shared with the Compare page) ---------------------------------------------------

def number_box(id_: str, value: Any, **kwargs: Any) -> dcc.Input:
    return dcc.Input(id=id_, type="number", value=value, step="any", debounce=0.4,
                     className="num", **kwargs)


def job_controls(prefix: str, replicates: int, level: float) -> list:
    return [
        html.Div(className="field-row", children=[
            html.Label(["Replicates (B) ",
                        number_box(f"{prefix}-replicates", replicates, min=1,
                                   max=MAX_REPLICATES)]),
            html.Label(["Confidence level ",
                        number_box(f"{prefix}-level", level, min=0.01, max=0.999)]),
        ]),
        html.Div(className="job-buttons", children=[
            html.Button("Run bootstrap", id=f"{prefix}-run", n_clicks=0, className="run-button"),
            html.Button("Cancel", id=f"{prefix}-cancel", n_clicks=0, disabled=True,
                        className="cancel-button"),
        ]),
        html.Div(id=f"{prefix}-job", className="job", children=[
            html.Progress(id=f"{prefix}-progress", max="1", **{"aria-label": "job progress"}),
            html.Span(id=f"{prefix}-progress-text", className="job-text"),
        ]),
        html.Div(id=f"{prefix}-status", className="note job-status", **{"aria-live": "polite"}),
    ]


def progress_reporter(set_progress: Callable[[tuple], None] | None
                      ) -> Callable[[int, int], None] | None:
    """The core's ``progress(done, total)`` as the values of the progress bar and its text."""
    if set_progress is None:
        return None

    def report(done: int, total: int) -> None:
        set_progress((done, total, f"{done:,} of {total:,} replicates"))
    return report


JOB_ERROR_PREFIX = "An error occurred inside a background callback: "


def job_error_text(err: Exception) -> str:
    """The sentence the page shows for a bootstrap job that failed or could not start.

    Parameters
    ----------
    err : Exception
        What Dash gave the callback's ``on_error``: a ``BackgroundCallbackError`` (the job
        raised, or its worker died: see :func:`dashboard.jobs.job_failure_message`), or the
        error of starting the job (e.g. the job queue is unreachable).

    Returns
    -------
    str
    """
    if isinstance(err, BackgroundCallbackError):
        text = str(err).removeprefix(JOB_ERROR_PREFIX).strip()
        first_line = text.split("\n", 1)[0].strip()
        if first_line.startswith("The bootstrap job"):
            return first_line
        return f"The bootstrap job failed ({first_line}). The details are in the server's log."
    return (f"The bootstrap job could not be started or followed ({type(err).__name__}: "
            f"{err}). Try again in a moment; if it keeps failing, the job queue is unreachable.")


def job_error_handler(prefix: str, error_reply: Callable[[str], Any] | None = None
                      ) -> Callable[[Exception], Any]:
    """``on_error`` of a page's bootstrap job: the page says why the job failed.

    Parameters
    ----------
    prefix : str
        The page's id prefix: ``{prefix}-status`` gets the message through ``set_props``.
        Dash applies that to a failure seen while polling the job, but not when the job could
        not even be queued (a background callback's side updates are only sent with its polls).
    error_reply : callable, optional
        ``error_reply(message)``: the job callback's output for a failure, which the page's
        render callback shows (the Confidence page's ``{"key", "error"}``), or None when it
        cannot tell. This is what reaches the page when the job could not be queued: only
        that request carries the callback's state (the polls send it empty).

    Returns
    -------
    callable
        Dash ends the job either way: Run is enabled again and Cancel disabled.
    """
    def on_error(err: Exception) -> Any:
        message = job_error_text(err)
        # Details are for the operator, not the page. A job's error already carries the job's
        # traceback (from the worker); a failure to enqueue needs this process's.
        if isinstance(err, BackgroundCallbackError):
            log.error("%s bootstrap job: %s", prefix, err)
        else:
            log.error("%s bootstrap job could not start or be followed", prefix, exc_info=err)
        set_props(f"{prefix}-status", {"children": html.Span(message, className="warn")})
        reply = error_reply(message) if error_reply is not None else None
        return no_update if reply is None else reply
    return on_error


def background_options(prefix: str, error_reply: Callable[[str], Any] | None = None
                       ) -> dict[str, Any]:
    """``running``, ``cancel``, ``progress`` and ``on_error`` of a page's bootstrap job
    (``error_reply``: see :func:`job_error_handler`)."""
    return dict(
        background=True, prevent_initial_call=True, interval=POLL_INTERVAL_MS,
        on_error=job_error_handler(prefix, error_reply),
        running=[(Output(f"{prefix}-run", "disabled"), True, False),
                 (Output(f"{prefix}-cancel", "disabled"), False, True),
                 (Output(f"{prefix}-job", "className"), "job running", "job"),
                 (Output(f"{prefix}-status", "className"), "note job-status hidden",
                  "note job-status")],
        cancel=[Input(f"{prefix}-cancel", "n_clicks")],
        progress=[Output(f"{prefix}-progress", "value"), Output(f"{prefix}-progress", "max"),
                  Output(f"{prefix}-progress-text", "children")],
        progress_default=[None, 1, "starting…"],
    )


def url_writer(path: str, params: list[str]) -> str:
    """Clientside function writing the page's state to the address bar (replaceState: no history
    flood, no re-routing). Its arguments are the values of ``params``, in order; ``data`` is the
    resolved ``{"id", "name"}``; empty values are left out."""
    names = ", ".join(p.replace("-", "_") for p in params)
    sets = "\n".join(
        f'        put("{p}", {p.replace("-", "_")});' for p in params if p != "data")
    return f"""function ({names}) {{
        const q = new URLSearchParams();
        const put = (k, v) => {{
            if (v === null || v === undefined || v === "") return;
            if (typeof v === "number" && !isFinite(v)) return;
            q.set(k, String(v));
        }};
        if (data && data.id) q.set("data", data.id);
{sets}
        const search = "?" + q.toString();
        const here = window.location.pathname.replace(/\\/$/, "");
        if (here.endsWith("{path}") && search !== window.location.search) {{
            window.history.replaceState(window.history.state, "",
                                        window.location.pathname + search + window.location.hash);
        }}
        return search;
    }}"""


# --- layout ----------------------------------------------------------------------------------------

HELP = [
    html.Summary("What am I looking at?"),
    html.Ul([
        html.Li(["x is PC(+), which folds the class prior and both misclassification costs into "
                 "one number; y is the normalized expected cost (0 is perfect; the dotted "
                 "diagonals are flagging nothing or everything). The solid curve is the "
                 "classifier's cost curve on the whole test set: at each PC(+) its best "
                 "threshold, or with a fixed threshold the straight cost line of that "
                 "threshold."]),
        html.Li(["The shaded band is a pointwise bootstrap confidence band: the test examples "
                 "are resampled B times with the numbers of positives and negatives held fixed, "
                 "the curve is recomputed for each resample, and at each PC(+) the band spans the "
                 "middle (level × 100)% of the replicate costs. The seed is fixed, so the same "
                 "settings give the same band."]),
        html.Li(["Changing the level reuses the replicates already computed (no new job); "
                 "changing the classifier, threshold or B needs a new run."]),
        html.Li(["Give a PC(+) to read the band there (the Explore page shows your PC(+)); "
                 "the readout below the plot gives the band's width."]),
    ]),
]


def layout(query: dict[str, list[str]], services: Services, **_: Any) -> html.Div:
    """The Confidence page, initialised from the URL query."""
    data = first(query, "data")
    model = first(query, "model")
    threshold = query_float(query, "threshold")
    level, replicates = query_level(query), query_replicates(query)
    return html.Div(className="bands-page confidence", children=[
        dcc.Store(id="confidence-query", data={"id": data if valid_id(data) else None,
                                               "model": model}),
        dcc.Store(id="confidence-data"),
        dcc.Store(id="confidence-seed", data=query_seed(query)),
        dcc.Store(id="confidence-done"),
        dcc.Store(id="confidence-url"),
        html.Section(className="data-bar", children=[
            html.Div(id="confidence-dataset", className="dataset-info"),
            html.Div(id="confidence-error", className="error", role="alert"),
        ]),
        html.Div(className="page-grid", children=[
            html.Aside(className="controls", children=[
                html.Section(className="panel", children=[
                    html.H2("Confidence band"),
                    html.Div(className="field", children=[
                        html.Label("Classifier", htmlFor="confidence-model"),
                        dcc.Dropdown(id="confidence-model", options=[], value=None,
                                     clearable=False, searchable=False),
                    ]),
                    html.Div(className="field", children=[
                        html.Label("Fixed threshold (optional)", htmlFor="confidence-threshold"),
                        number_box("confidence-threshold", threshold,
                                   placeholder="none: the whole curve"),
                        html.P(className="explain", children=[
                            "Leave empty for the band of the whole curve (the best threshold at "
                            "each PC(+)). For a ", html.B("deployed model"), ", enter the "
                            "threshold it uses (score ≥ threshold is flagged positive): that "
                            "band is the one to trust."]),
                    ]),
                    html.Div(className="field", children=[
                        html.Label("Read the band at PC(+) (optional)", htmlFor="confidence-pc"),
                        number_box("confidence-pc", query_pc(query), min=0, max=1,
                                   placeholder="your operating point, e.g. 0.3"),
                    ]),
                    *job_controls("confidence", replicates, level),
                ]),
            ]),
            html.Div(className="results", children=[
                html.P(WHAT_IT_MEASURES, className="sentence measures"),
                html.Figure(className="plot", children=[
                    html.Div(className="graph-box", children=dcc.Graph(
                        id="confidence-graph", figure=band_figure(None, name="", index=0),
                        style={"height": "100%"}, config=graph_config("confidence-band"))),
                    html.Figcaption("Cost space with a bootstrap confidence band"),
                ]),
                html.Div(className="card", children=[
                    html.H3("Band"),
                    html.Div("–", id="confidence-summary", className="summary",
                             **{"aria-live": "polite"}),
                    html.A("Download report with this band (HTML)", id="confidence-report",
                           href="#", download="", className="export-link"),
                ]),
                html.P(id="confidence-caveat", className="explain caveat"),
                html.Details(HELP, className="help"),
            ]),
        ]),
    ])


# --- server-side handlers (plain functions; the callbacks below only wire them) --------------------

@dataclass
class Loaded:
    options: Any = no_update
    model: Any = no_update
    data: Any = no_update
    info: Any = no_update
    error: Any = no_update
    current: Any = no_update

    def as_tuple(self) -> tuple:
        return self.options, self.model, self.data, self.info, self.error, self.current


def load(services: Services, query: dict | None, current: dict | None) -> Loaded:
    """Resolve the data set and fill the classifier dropdown."""
    query = query or {}
    r = resolve(services, query.get("id"), current)
    if not r.ok:
        return Loaded(options=[], model=None, data=None, info="", error=r.error)
    names = r.names
    model = query.get("model") if query.get("model") in names else names[0]
    return Loaded(options=[{"label": n, "value": n} for n in names], model=model,
                  data={"id": r.id, "name": r.view["name"]}, info=dataset_line(r.view), error="",
                  current={"id": r.id, "name": r.view["name"]})


def report_href(data: dict | None, model: str | None, threshold: Any, replicates: Any,
                level: Any, seed: int | None) -> str:
    """The report download with this page's band (included once it has been computed)."""
    if not data or not data.get("id") or not model:
        return "#"
    query = {"band": model, "replicates": as_int(replicates),
             "seed": DEFAULT_SEED if seed is None else seed,
             "level": as_float(level) or DEFAULT_LEVEL}
    if as_float(threshold) is not None:
        query["threshold"] = as_float(threshold)
    return f"/api/v1/datasets/{data['id']}/report.html?{urlencode(query)}"


def job_key(data: dict | None, model: str | None, threshold: Any, replicates: Any,
            seed: int | None) -> str | None:
    """The band key of a job's inputs (as the controls send them); None without a data set
    or classifier."""
    if not data or not data.get("id") or not model:
        return None
    return cost_band_key(data["id"], model, as_float(threshold), as_int(replicates),
                            DEFAULT_SEED if seed is None else seed)


def failed_job_reply(message: str) -> dict[str, Any] | None:
    """The job's output when it could not start: the band key of the request (from the
    callback's state) and the message, which :func:`render` shows for as long as the controls
    ask for that band. None when the request carries no state (a poll)."""
    states = callback_context.states
    key = job_key(states.get("confidence-data.data"), states.get("confidence-model.value"),
                  states.get("confidence-threshold.value"),
                  states.get("confidence-replicates.value"), states.get("confidence-seed.data"))
    return None if key is None else {"key": key, "error": message}


def compute_band(services: Services, data: dict | None, model: str | None, threshold: Any,
                 replicates: Any, seed: int | None,
                 progress: Callable[[int, int], None] | None = None) -> dict[str, Any]:
    """The background job: compute the band (unless cached) and keep it in the result cache.

    Returns the small reply the browser keeps: ``{"key", "seconds"}``, or ``{"key", "error"}``.
    """
    key = job_key(data, model, threshold, replicates, seed)
    if key is None:
        return {"key": None, "error": NO_DATA}
    seed = DEFAULT_SEED if seed is None else seed
    threshold, replicates = as_float(threshold), as_int(replicates)
    bands = BandCache(services.views.cache)
    if bands.has(key):
        return {"key": key, "seconds": None}
    try:
        classifier = services.store.get(data["id"]).classifier(model)
    except KeyError:
        return {"key": key, "error": f"no classifier named {model!r} in this data set"}
    except CostdashError as exc:
        return {"key": key, "error": str(exc)}
    if isinstance(classifier, CountedClassifier) and threshold is None and classifier.tp.size > 1:
        return {"key": key, "error": counted_message(model)}
    start = time.perf_counter()
    try:
        band = cost_band(classifier, threshold=threshold, level=DEFAULT_LEVEL,
                         replicates=replicates, rng=seed, grid=GRID, progress=progress,
                         name=model)
    except CostdashError as exc:
        return {"key": key, "error": str(exc)}
    seconds = time.perf_counter() - start
    if not bands.put(key, band):
        return {"key": key, "error": CACHE_DOWN}
    return {"key": key, "seconds": seconds}


def band_summary(band: CostBand, pc: float | None) -> list:
    """The readout under the plot: the band at the current PC(+), and where it is widest."""
    pct = percent(band.level)
    widest_pc, widest = band.widest
    parts: list = []
    if pc is not None:
        cost, low, high = band.at(pc)
        parts.append(html.P([f"At PC(+) = {pc:.4g}: cost {cost:.4f}, {pct} band ",
                             html.B(f"{low:.4f} – {high:.4f}"), " (width ",
                             html.B(f"{high - low:.4f}", id="confidence-width"), ")."]))
    else:
        parts.append(html.P("Give a PC(+) on the left to read the band at your operating point."))
    what = ("cost line at threshold " + f"{band.threshold:g}" if band.kind == "line"
            and band.threshold is not None else "cost line" if band.kind == "line"
            else "cost curve (best threshold at each PC(+))")
    parts.append(html.P(
        f"{pct} pointwise band of {band.name}'s {what} from {band.replicates:,} bootstrap "
        f"replicates ({band.n_pos:,} positives and {band.n_neg:,} negatives resampled "
        f"separately). Widest: {widest:.4f} at PC(+) = {widest_pc:.3g}; mean width "
        f"{float(band.width.mean()):.4f}."))
    if band.kind == "line" and band.fpr is not None:
        parts.append(html.P(f"At this threshold on the whole test set: TPR {band.tpr:.4f}, "
                            f"FPR {band.fpr:.4f}."))
    return parts


@dataclass
class Rendered:
    figure: Any = no_update
    summary: Any = no_update
    status: Any = no_update
    caveat: Any = no_update


def render(services: Services, data: dict | None, model: str | None, threshold: Any,
           replicates: Any, level: Any, pc: Any, seed: int | None,
           done: dict | None) -> Rendered:
    """The figure and readouts for the controls: the band from the cache when it was computed
    (at the requested level, with ``at_level``), else the exact curve and a hint to run."""
    seed = DEFAULT_SEED if seed is None else seed
    if not data or not data.get("id"):
        return Rendered(figure=band_figure(None, name="", index=0), summary="–", status="",
                        caveat="")
    r = resolve(services, data["id"], None)
    entry = r.entry(model)
    if entry is None:
        return Rendered(figure=band_figure(None, name="", index=0), summary="–",
                        status=r.error or "Pick a classifier.", caveat="")
    threshold, replicates, pc = as_float(threshold), as_int(replicates), as_float(pc)
    if pc is not None and not 0.0 <= pc <= 1.0:
        pc = None
    envelope = envelope_of(entry)
    caveat = CAVEAT_CURVE if threshold is None else CAVEAT_LINE
    empty = band_figure(None, name=model, index=entry["index"], envelope=envelope, pc=pc)
    problem = counted_problem(entry, threshold)
    if problem:
        return Rendered(figure=empty, summary="–", status=html.Span(problem, className="warn"),
                        caveat=caveat)
    try:
        confidence_ranks(as_float(level) if level is not None else level, replicates)
    except CostdashError as exc:
        return Rendered(figure=empty, summary="–", status=html.Span(str(exc), className="warn"),
                        caveat=caveat)
    key = cost_band_key(data["id"], model, threshold, replicates, seed)
    band = BandCache(services.views.cache).get(key)
    if band is None:
        failed = done and done.get("key") == key and done.get("error")
        status = (html.Span(done["error"], className="warn") if failed else
                  f"Press Run bootstrap to compute the band from {replicates:,} replicates.")
        return Rendered(figure=empty, summary="–", status=status, caveat=caveat)
    band = band.at_level(float(level))
    just_run = done and done.get("key") == key and done.get("seconds") is not None
    status = (f"{band.replicates:,} replicates (seed {seed})"
              + (f", computed in {done['seconds']:.2f} s." if just_run else
                 ", kept from an earlier run (no resampling)."))
    return Rendered(
        figure=band_figure(band, name=model, index=entry["index"], envelope=envelope, pc=pc),
        summary=band_summary(band, pc), status=status, caveat=caveat)


# --- callbacks -------------------------------------------------------------------------------------

def register_callbacks(app: Dash, services: Services) -> None:
    @app.callback(
        Output("confidence-model", "options"), Output("confidence-model", "value"),
        Output("confidence-data", "data"), Output("confidence-dataset", "children"),
        Output("confidence-error", "children"),
        Output("current-data", "data", allow_duplicate=True),
        Input("confidence-query", "data"), State("current-data", "data"),
        prevent_initial_call="initial_duplicate")
    def _load(query, current):
        return load(services, query, current).as_tuple()

    @app.callback(
        Output("confidence-done", "data"),
        Input("confidence-run", "n_clicks"),
        State("confidence-data", "data"), State("confidence-model", "value"),
        State("confidence-threshold", "value"), State("confidence-replicates", "value"),
        State("confidence-seed", "data"),
        **background_options("confidence", error_reply=failed_job_reply))
    def _run(set_progress, _clicks, data, model, threshold, replicates, seed):
        return compute_band(services, data, model, threshold, replicates, seed,
                            progress_reporter(set_progress))

    @app.callback(
        Output("confidence-graph", "figure"), Output("confidence-summary", "children"),
        Output("confidence-status", "children"), Output("confidence-caveat", "children"),
        Input("confidence-data", "data"), Input("confidence-model", "value"),
        Input("confidence-threshold", "value"), Input("confidence-replicates", "value"),
        Input("confidence-level", "value"), Input("confidence-pc", "value"),
        Input("confidence-done", "data"), State("confidence-seed", "data"))
    def _render(data, model, threshold, replicates, level, pc, done, seed):
        r = render(services, data, model, threshold, replicates, level, pc, seed, done)
        return r.figure, r.summary, r.status, r.caveat

    @app.callback(
        Output("confidence-report", "href"),
        Input("confidence-data", "data"), Input("confidence-model", "value"),
        Input("confidence-threshold", "value"), Input("confidence-replicates", "value"),
        Input("confidence-level", "value"), State("confidence-seed", "data"))
    def _report_link(data, model, threshold, replicates, level, seed):
        return report_href(data, model, threshold, replicates, level, seed)

    params = ["data", "model", "threshold", "level", "replicates", "pc", "seed"]
    app.clientside_callback(
        url_writer("/confidence", params),
        Output("confidence-url", "data"),
        Input("confidence-data", "data"), Input("confidence-model", "value"),
        Input("confidence-threshold", "value"), Input("confidence-level", "value"),
        Input("confidence-replicates", "value"), Input("confidence-pc", "value"),
        Input("confidence-seed", "data"))
