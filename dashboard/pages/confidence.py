"""The Confidence page: a classifier's cost curve with a confidence band, labelled with the
question it answers.

Which band (:func:`costdash.bands.cost_band`, chosen with :func:`costdash.band_choice.band_choice`;
docs/bands.md): with a fixed threshold, the Clopper–Pearson–MOVER band of its cost line (closed
form, calibrated; the old Wilson–MOVER on request; or the paper's percentile bootstrap, without a
level); without one, by default the cost of thresholds picked on a stratified half of the rows,
banded on the other half (closed form, calibrated), or the resampling spread of the re-tuned
envelope (no level), or its
double-bootstrap band (approximate: a level only on the PC(+) range its coverage study earned
for the smaller class's count, ``band.level_range``, and the readout says why not elsewhere,
``band.no_level``). "Whole curve" asks for a simultaneous band (closed form only). Only a
calibrated band is shown with a percentage; the caveat under the plot is the band's
``estimand``.

The band is computed as a background job (Dash background callback, see :mod:`dashboard.jobs`)
with a progress bar and a cancel button. The job keeps the band, with every replicate curve, in
the shared result cache and sends the browser only a small reference; a normal callback reads
the band back and draws it at the chosen level with ``band.at_level`` -- so changing the level
never resamples, and no curves live in the browser.

Element ids (a stable contract): ``confidence-model``, ``confidence-threshold``,
``confidence-method``, ``confidence-simultaneous``, ``confidence-replicates``,
``confidence-level``, ``confidence-pc``, ``confidence-run``, ``confidence-cancel``,
``confidence-progress``, ``confidence-graph``, ``confidence-summary``, ``confidence-status``,
``confidence-caveat``, ``confidence-dataset``, ``confidence-error``.

The page opens with the whole view (:class:`costdash.view.View`): its own fields ``model``,
``threshold``, ``pc``, ``level``, ``replicates``, ``seed`` (and ``method`` and ``simultaneous``
once the view has them), and Explore's conditions and ticked classifiers. The classifier is ``model``, else the first ticked one; the band is read at
``pc``, else at the PC(+) of the conditions (p(+) absent: the data's prevalence). The page hands
its controls to the browser's one view object (``assets/viewstate.js``), which writes the
address bar; a PC(+) equal to the conditions' is left out of it, so the page keeps following
Explore's conditions.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping
from typing import Any

from dash import Dash, Input, Output, State, callback_context, dcc, html, no_update

from costdash.band_choice import BandChoice, band_choice
from costdash.bands import CostBand, cost_band
from costdash.dataset import CountedClassifier
from costdash.errors import CostdashError
from costdash.view import DEFAULT_LEVEL, DEFAULT_SEED, View
from dashboard import ids
from dashboard.jobs.bandcache import BandCache, cost_band_key
from dashboard.band_kit import band_settings as job_settings
from dashboard.band_kit import (CACHE_DOWN, GRID, background_options, band_page_head, job_controls,
                                job_gate, method_controls, method_outputs, method_state, press_run,
                                progress_reporter, register_band_load, register_run_gate)
from dashboard.page_kit import (NO_DATA, Reply, check_fields, classifier_options,
                                classifier_picker, conditions_pc, dataset_line, default_model,
                                each, envelope_of, follow_implied, help_panel, number_box,
                                prevalence_of, record_view, resolve, targets, view_fields_store,
                                warn)
from dashboard.figures.bands import band_figure, band_name, picked_text
from dashboard.figures.common import graph_config
from dashboard.services import Services
from dashboard.sharing import READ_LINK_PAGES_ONLY
from dashboard.viewstate import page_view

__all__ = ["CACHE_DOWN", "band_summary", "choice_of", "compute_band", "layout", "load",
           "register_callbacks", "render"]

WHAT_IT_MEASURES = (
    "The band shows how much this cost would move if the same, already trained model were "
    "scored on another test set of the same size and class mix: the test-set sampling "
    "variability of this fixed model, not the variability of the learning algorithm (a model "
    "retrained on other data; for that, compare cross-validation folds). Each band says below "
    "which question it answers; only a calibrated band carries a confidence level.")


# --- reading the controls ----------------------------------------------------------------------

def choice_of(threshold: Any, method: Any = None, simultaneous: Any = False, *,
              scored: bool = True) -> BandChoice:
    """The band the controls ask for: a fixed threshold (or a classifier known only by one
    confusion matrix, ``scored=False``) is the fixed-threshold question, else the curve's."""
    typed, problems = check_fields({"threshold": threshold})
    fixed = not scored or (not problems and typed["threshold"] is not None)
    return band_choice(method, simultaneous, fixed=fixed)


def band_settings(threshold: Any, replicates: Any, level: Any = DEFAULT_LEVEL,
                  pc: Any = None, method: Any = None, simultaneous: Any = False, *,
                  scored: bool = True) -> tuple[dict[str, Any], list[str]]:
    """The band's settings, typed and checked (:func:`band_kit.band_settings`): a
    closed-form band does not use (or check) the replicates, and has ``typed["replicates"]``
    None. ``typed["choice"]`` is the :class:`~costdash.band_choice.BandChoice`."""
    choice = choice_of(threshold, method, simultaneous, scored=scored)
    typed, problems = job_settings({"threshold": threshold, "replicates": replicates,
                                    "level": level, "pc": pc}, choice)
    typed.setdefault("replicates", None)
    typed["choice"] = choice
    return typed, problems


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


# --- layout ----------------------------------------------------------------------------------------

HELP = help_panel([
    ["x is PC(+), which folds the class prior and both misclassification costs into "
     "one number; y is the normalized expected cost (0 is perfect; the dotted "
     "diagonals are flagging nothing or everything). The solid curve is the "
     "classifier's cost curve on the whole test set: at each PC(+) its best "
     "threshold, or with a fixed threshold the straight cost line of that "
     "threshold."],
    ["The shaded band answers one of three questions (the caveat under the plot "
     "says which). ", html.B("Thresholds picked on a held-out half"), " (the "
     "default): half of the rows pick the best threshold at each PC(+), and the band "
     "is a calibrated (Clopper–Pearson–MOVER) band of their cost on the other half — what the "
     "thresholds you pick from these data will cost on new data. ",
     html.B("A fixed threshold"), ": a calibrated band of that threshold's cost "
     "line. ", html.B("Resampling spread"), ": the test examples are resampled B "
     "times and every resample re-picks its thresholds; its spread is drawn without "
     "a level, because it under-covers the optimal cost. The double bootstrap "
     "calibrates it, approximately: it shows its level only for the counts of the smaller "
     "class and the PC(+) where its coverage was measured close to it, and says why not "
     "elsewhere."],
    ["Pointwise bands hold at each PC(+) separately; ", html.B("whole curve"),
     " bands hold at every PC(+) at once (wider). The seed is fixed, so the same "
     "settings give the same band (and the same half)."],
    ["Changing the level reuses what was computed (no new job); changing the "
     "classifier, threshold, band, B or seed needs a new run."],
    ["Give a PC(+) to read the band there (the Explore page shows your PC(+)); "
     "the readout below the plot gives the band's width."],
])


def layout(query: Mapping[str, Any], services: Services, **_: Any) -> html.Div:
    """The Confidence page, initialised from the view in the URL query."""
    view, problems = page_view(query)
    # The band is read at the PC(+) of Explore's conditions unless the view names one; both
    # need the data's prevalence, known here when the link names the data set (else the load
    # callback fills them in once it has resolved the data set).
    implied = conditions_pc(view, prevalence_of(services, view.data))
    pc = view.pc if view.pc is not None else implied
    # ``method`` and ``simultaneous`` are view fields once costdash.view has them; until then
    # the page starts at the defaults.
    simultaneous = bool(getattr(view, "simultaneous", False))
    choice = choice_of(view.threshold, getattr(view, "method", None), simultaneous)
    return html.Div(className="bands-page confidence", children=[
        *band_page_head("confidence", view, problems,
                        stores=[dcc.Store(id=ids.CONFIDENCE_PC_IMPLIED, data=implied),
                                dcc.Store(id=ids.CONFIDENCE_PC_VIEW),
                                view_fields_store(ids.CONFIDENCE_URL, VIEW_CONTROLS)]),
        html.Div(className="page-grid", children=[
            html.Aside(className="controls", children=[
                html.Section(className="panel", children=[
                    html.H2("Confidence band"),
                    classifier_picker("Classifier", ids.CONFIDENCE_MODEL, view.model),
                    html.Div(className="field", children=[
                        html.Label("Fixed threshold (optional)", htmlFor=ids.CONFIDENCE_THRESHOLD),
                        number_box(ids.CONFIDENCE_THRESHOLD, view.threshold,
                                   placeholder="none: the whole curve"),
                        html.P(className="explain", children=[
                            "Leave empty for the band of the curve (the best threshold at each "
                            "PC(+)). For a ", html.B("deployed model"), ", enter the threshold "
                            "it uses (score ≥ threshold is flagged positive), chosen without "
                            "looking at this test set."]),
                    ]),
                    *method_controls("confidence", choice, simultaneous),
                    html.Div(className="field", children=[
                        html.Label("Read the band at PC(+) (optional)", htmlFor=ids.CONFIDENCE_PC),
                        number_box(ids.CONFIDENCE_PC, pc,
                                   placeholder="your operating point, e.g. 0.3"),
                        html.P(className="explain", children=[
                            "Starts at the PC(+) of your conditions on Explore."]),
                    ]),
                    *job_controls("confidence", view.replicates, view.level, choice),
                ]),
            ]),
            html.Div(className="results", children=[
                html.P(WHAT_IT_MEASURES, className="sentence measures"),
                html.Figure(className="plot", children=[
                    html.Div(className="graph-box", children=dcc.Graph(
                        id=ids.CONFIDENCE_GRAPH, figure=band_figure(None, name="", index=0),
                        style={"height": "100%"}, config=graph_config("confidence-band"))),
                    html.Figcaption("Cost space with a confidence band"),
                ]),
                html.Div(className="card", children=[
                    html.H3("Band"),
                    html.Div("–", id=ids.CONFIDENCE_SUMMARY, className="summary",
                             **{"aria-live": "polite"}),
                    # An export link of the whole view (assets/viewstate.js writes it): the
                    # report of Explore's ticked classifiers and conditions, with this band.
                    html.A("Download report with this band (HTML)", id=ids.CONFIDENCE_REPORT,
                           download="", className="export-link",
                           **{"data-export": "report.html", "aria-disabled": "true"}),
                ]),
                html.P(id=ids.CONFIDENCE_CAVEAT, className="explain caveat"),
                HELP,
            ]),
        ]),
    ])


# --- server-side handlers (plain functions; the callbacks below only wire them) --------------------

class Loaded(Reply):
    OUTPUTS = ("options", "model", "data", "data_id", "info", "error", "current", "pc",
               "pc_implied")


def _view_of(query: View | Mapping[str, Any] | None) -> View:
    """The page's view from its query store (the view's JSON) or a :class:`View`."""
    return query if isinstance(query, View) else page_view(query)[0]


def load(services: Services, query: View | Mapping[str, Any] | None,
         current: dict | None) -> Loaded:
    """Resolve the data set (the view's, else the one last opened) and fill the classifier
    dropdown (the view's ``model``, else the first ticked classifier) and, unless the view
    names a PC(+), the PC(+) box with that of the conditions."""
    view = _view_of(query)
    r = resolve(services, view.data, current)
    if not r.ok or services.sharing.read_only(r.id):
        return Loaded(options=[], model=None, data=None, data_id=None, info="",
                      error=r.error if not r.ok else READ_LINK_PAGES_ONLY)
    names = r.names
    implied = conditions_pc(view, r.view["prevalence"])
    return Loaded(options=classifier_options(r.view, names),
                  model=default_model(view, names),
                  data={"id": r.id, "name": r.view["name"]}, data_id=r.id,
                  info=dataset_line(r.view), error="",
                  current={"id": r.id, "name": r.view["name"]},
                  pc=implied if view.pc is None else no_update, pc_implied=implied)


def _scored(services: Services | None, data: dict | None, model: str | None) -> bool:
    """Whether ``model`` has scores (False: known only by confusion matrices); True when it
    cannot be told (no services, data set or classifier)."""
    if services is None or not data or not data.get("id") or not model:
        return True
    entry = resolve(services, data["id"], None).entry(model)
    return True if entry is None else bool(entry["scored"])


def job_key(data: dict | None, model: str | None, threshold: Any, replicates: Any,
            seed: int | None, method: Any = None, simultaneous: Any = False, *,
            scored: bool = True) -> str | None:
    """The band key of a job's inputs (as the controls send them); None without a data set or
    classifier, or with an invalid threshold or (for a bootstrap) number of replicates."""
    choice = choice_of(threshold, method, simultaneous, scored=scored)
    values = {"threshold": threshold}
    if not choice.closed_form:
        values["replicates"] = replicates
    typed, problems = check_fields(values, required=tuple(values)[1:])
    if not data or not data.get("id") or not model or problems:
        return None
    return cost_band_key(data["id"], model, typed["threshold"], typed.get("replicates") or 0,
                         DEFAULT_SEED if seed is None else seed, choice)


def failed_job_reply(message: str, services: Services | None = None) -> dict[str, Any] | None:
    """The job's output when it could not start: the band key of the request (from the
    callback's state) and the message, which :func:`render` shows for as long as the controls
    ask for that band. None when the request carries no state (a poll)."""
    states = callback_context.states
    data, model = states.get("confidence-data.data"), states.get("confidence-model.value")
    key = job_key(data, model, states.get("confidence-threshold.value"),
                  states.get("confidence-replicates.value"), states.get("confidence-seed.data"),
                  states.get("confidence-method.value"),
                  states.get("confidence-simultaneous.value"),
                  scored=_scored(services, data, model))
    return None if key is None else {"key": key, "error": message}


def compute_band(services: Services, data: dict | None, model: str | None, threshold: Any,
                 replicates: Any, seed: int | None,
                 progress: Callable[[int, int], None] | None = None, *, method: Any = None,
                 simultaneous: Any = False) -> dict[str, Any]:
    """The background job: compute the band (unless cached) and keep it in the result cache.

    ``method`` and ``simultaneous``: the band asked for (:func:`choice_of`; None: the default
    of the question). Returns the small reply the browser keeps: ``{"key", "seconds"}``, or
    ``{"key", "error"}`` (``key`` None when the settings are invalid: nothing is computed then).
    """
    if not data or not data.get("id") or not model:
        return {"key": None, "error": NO_DATA}
    # Run is disabled while a setting is invalid; this guards a click that raced the check.
    # (Scores or counts: from the cached view model, so a cached band needs no data read.)
    choice = choice_of(threshold, method, simultaneous, scored=_scored(services, data, model))
    values = {"threshold": threshold}
    if not choice.closed_form:
        values["replicates"] = replicates
    typed, problems = job_settings({**values, "level": DEFAULT_LEVEL}, choice)
    if problems:
        return {"key": None, "error": " ".join(problems)}
    seed = DEFAULT_SEED if seed is None else seed
    threshold, replicates = typed["threshold"], typed.get("replicates") or 0
    key = cost_band_key(data["id"], model, threshold, replicates, seed, choice)
    bands = BandCache(services.views.cache)
    if bands.has(key):
        return {"key": key, "seconds": None}

    def saved_key(saved: View) -> str | None:
        return job_key(data, model, saved.threshold, saved.replicates, saved.seed,
                       saved.method, saved.simultaneous,
                       scored=_scored(services, data, model))

    with job_gate(services, data["id"], key, saved_key) as refusal:
        if refusal:
            return {"key": key, "error": refusal}
        return _compute_band(services, data["id"], model, key, threshold, replicates, seed,
                             choice, progress)


def _compute_band(services: Services, data_id: str, model: str, key: str,
                  threshold: float | None, replicates: int, seed: int, choice: Any,
                  progress: Callable[[int, int], None] | None) -> dict[str, Any]:
    bands = BandCache(services.views.cache)
    try:
        classifier = services.store.get(data_id).classifier(model)
    except KeyError:
        return {"key": key, "error": f"no classifier named {model!r} in this data set"}
    except CostdashError as exc:
        return {"key": key, "error": str(exc)}
    if isinstance(classifier, CountedClassifier) and threshold is None and \
            classifier.tp.size > 1:
        return {"key": key, "error": counted_message(model)}
    start = time.perf_counter()
    try:
        band = cost_band(classifier, threshold=threshold, level=DEFAULT_LEVEL,
                         replicates=max(replicates, 1), rng=seed, grid=GRID, progress=progress,
                         name=model, **choice.arguments())
    except CostdashError as exc:
        return {"key": key, "error": str(exc)}
    seconds = time.perf_counter() - start
    if not bands.put(key, band):
        return {"key": key, "error": CACHE_DOWN}
    return {"key": key, "seconds": seconds}


def _what(band: CostBand) -> str:
    if band.kind == "line":
        return ("cost line at threshold " + f"{band.threshold:g}" if band.threshold is not None
                else "cost line (one confusion matrix)")
    if band.kind == "selected":
        return "held-out cost of the thresholds picked at each PC(+)"
    return "cost curve (best threshold at each PC(+), re-picked on every resample)"


def _source(band: CostBand) -> str:
    counts = f"{band.n_pos:,} positives and {band.n_neg:,} negatives"
    if band.replicates == 0:
        held = " of the held-out half" if band.selection == "split" else ""
        return f"closed form from the errors on {counts}{held} (no resampling)"
    if band.method == "double-bootstrap":
        return (f"from {band.replicates:,} bootstrap replicates, each resampled "
                f"{band.inner_replicates:,} times ({counts} resampled separately)")
    return f"from {band.replicates:,} bootstrap replicates ({counts} resampled separately)"


def band_summary(band: CostBand, pc: float | None) -> list:
    """The readout under the plot: the band at the current PC(+) (a spread without a level
    where an approximate band did not earn it), what it is (``band.label``: a level only when
    it is calibrated), where it is widest, and why an approximate band has no level where it
    has none (``band.no_level``)."""
    name = band_name(band, pc)
    widest_pc, widest = band.widest
    parts: list = []
    if pc is not None:
        cost, low, high = band.at(pc)
        parts.append(html.P([f"At PC(+) = {pc:.4g}: cost {cost:.4f}, {name} ",
                             html.B(f"{low:.4f} – {high:.4f}"), " (width ",
                             html.B(f"{high - low:.4f}", id=ids.CONFIDENCE_WIDTH), ")."]))
        if band.kind == "selected" and band.thresholds is not None:
            i = int(abs(band.pc - pc).argmin())
            parts.append(html.P(f"Threshold picked there on the selection half: "
                                f"{picked_text(band.thresholds[i])}."))
    else:
        parts.append(html.P("Give a PC(+) on the left to read the band at your operating point."))
    parts.append(html.P(
        [html.B(band.label[0].upper() + band.label[1:] + "."),
         f" For {band.name}'s {_what(band)}: {_source(band)}. Widest: {widest:.4f} at PC(+) = "
         f"{widest_pc:.3g}; mean width {float(band.width.mean()):.4f}."]))
    if band.calibrated and band.no_level:
        # An approximate band with a level on part of the grid: why none outside it (a band
        # without any level says why in its label).
        parts.append(html.P(band.no_level[0].upper() + band.no_level[1:] + ".",
                            className="no-level"))
    if band.kind == "line" and band.fpr is not None and band.tpr is not None:
        parts.append(html.P(f"At this threshold on the whole test set: TPR {band.tpr:.4f}, "
                            f"FPR {band.fpr:.4f}."))
    return parts


class Rendered(Reply):
    TARGETS = targets(figure=(ids.CONFIDENCE_GRAPH, "figure"), summary=ids.CONFIDENCE_SUMMARY,
                      status=ids.CONFIDENCE_STATUS, caveat=ids.CONFIDENCE_CAVEAT)


def render(services: Services, data: dict | None, model: str | None, threshold: Any,
           replicates: Any, level: Any, pc: Any, seed: int | None,
           done: dict | None, method: Any = None, simultaneous: Any = False) -> Rendered:
    """The figure and readouts for the controls: the band from the cache when it was computed
    (at the requested level, with ``at_level``), else the exact curve and a hint to run. The
    caveat is the band's ``estimand`` (before it is computed: the chosen band's question).

    A setting out of its bounds changes only the status line, which says what the bounds are;
    the figure and the readouts keep what was drawn.
    """
    seed = DEFAULT_SEED if seed is None else seed
    if not data or not data.get("id"):
        return Rendered(figure=band_figure(None, name="", index=0), summary="–", status="",
                        caveat="")
    r = resolve(services, data["id"], None)
    entry = r.entry(model)
    typed, problems = band_settings(threshold, replicates, level, pc, method, simultaneous,
                                    scored=entry is None or bool(entry["scored"]))
    if problems:
        return Rendered(status=warn(problems))
    threshold, replicates, level, pc, choice = (typed["threshold"], typed["replicates"],
                                                typed["level"], typed["pc"], typed["choice"])
    if entry is None:
        return Rendered(figure=band_figure(None, name="", index=0), summary="–",
                        status=r.error or "Pick a classifier.", caveat="")
    envelope = envelope_of(entry)
    caveat = choice.estimand
    empty = band_figure(None, name=model, index=entry["index"], envelope=envelope, pc=pc)
    problem = counted_problem(entry, threshold)
    if problem:
        return Rendered(figure=empty, summary="–", status=warn(problem), caveat=caveat)
    key = cost_band_key(data["id"], model, threshold, replicates or 0, seed, choice)
    band = BandCache(services.views.cache).get(key)
    if band is None:
        failed = done and done.get("key") == key and done.get("error")
        status = (warn(done["error"]) if failed else
                  press_run(choice, replicates, f"the band of {model}"))
        return Rendered(figure=empty, summary="–", status=status, caveat=caveat)
    band = band.at_level(level)
    just_run = done and done.get("key") == key and done.get("seconds") is not None
    how = (f"closed form (seed {seed} for the split)" if band.selection == "split"
           else "closed form" if band.replicates == 0
           else f"{band.replicates:,} replicates (seed {seed})")
    status = how + (f", computed in {done['seconds']:.2f} s." if just_run else
                    ", kept from an earlier run (nothing recomputed).")
    return Rendered(
        figure=band_figure(band, name=model, index=entry["index"], envelope=envelope, pc=pc),
        summary=band_summary(band, pc), status=status, caveat=band.estimand)


VIEW_CONTROLS = {"data": (ids.CONFIDENCE_DATA_ID, "data"),
                 "model": (ids.CONFIDENCE_MODEL, "value"),
                 "threshold": (ids.CONFIDENCE_THRESHOLD, "value"),
                 "level": (ids.CONFIDENCE_LEVEL, "value"),
                 "replicates": (ids.CONFIDENCE_REPLICATES, "value"),
                 "pc": (ids.CONFIDENCE_PC_VIEW, "data"),
                 "method": (ids.CONFIDENCE_METHOD_VIEW, "data"),
                 "simultaneous": (ids.CONFIDENCE_SIMULTANEOUS, "value")}
"""The view fields this page's controls set (:func:`page_kit.record_view`); ``method`` and
``simultaneous`` are ignored by the browser's view until costdash.view has them."""
VIEW_FIELDS = list(VIEW_CONTROLS)


def method_control(services: Services, data: dict | None, model: str | None, threshold: Any,
                   method: Any, simultaneous: Any) -> tuple:
    """The method control's options, value, whole-curve toggle, note, whether the replicates
    box is disabled, the Run button's words and the question's default method
    (:func:`band_kit.method_state`) for the controls."""
    choice = choice_of(threshold, method, simultaneous, scored=_scored(services, data, model))
    return method_state(choice).as_tuple()


# --- callbacks -------------------------------------------------------------------------------------

def register_callbacks(app: Dash, services: Services) -> None:
    register_band_load(
        app, "confidence", lambda query, current: load(services, query, current),
        pickers=[Output(ids.CONFIDENCE_MODEL, "options"), Output(ids.CONFIDENCE_MODEL, "value")],
        extra=[Output(ids.CONFIDENCE_PC, "value"), Output(ids.CONFIDENCE_PC_IMPLIED, "data")])

    @app.callback(
        Output(ids.CONFIDENCE_DONE, "data"),
        Input(ids.CONFIDENCE_RUN, "n_clicks"),
        State(ids.CONFIDENCE_DATA, "data"), State(ids.CONFIDENCE_MODEL, "value"),
        State(ids.CONFIDENCE_THRESHOLD, "value"), State(ids.CONFIDENCE_REPLICATES, "value"),
        State(ids.CONFIDENCE_SEED, "data"), State(ids.CONFIDENCE_METHOD, "value"),
        State(ids.CONFIDENCE_SIMULTANEOUS, "value"),
        **background_options("confidence",
                             error_reply=lambda message: failed_job_reply(message, services)))
    def _run(set_progress, _clicks, data, model, threshold, replicates, seed, method,
             simultaneous):
        return compute_band(services, data, model, threshold, replicates, seed,
                            progress_reporter(set_progress), method=method,
                            simultaneous=simultaneous)

    @app.callback(
        *method_outputs("confidence"), Input(ids.CONFIDENCE_DATA, "data"),
        *each(Input, "value", ids.CONFIDENCE_MODEL, ids.CONFIDENCE_THRESHOLD,
              ids.CONFIDENCE_METHOD, ids.CONFIDENCE_SIMULTANEOUS))
    def _method(data, model, threshold, method, simultaneous):
        return method_control(services, data, model, threshold, method, simultaneous)

    register_run_gate(
        app, "confidence",
        each(Input, "value", ids.CONFIDENCE_THRESHOLD, ids.CONFIDENCE_REPLICATES,
             ids.CONFIDENCE_LEVEL, ids.CONFIDENCE_PC, ids.CONFIDENCE_METHOD),
        lambda *settings: band_settings(*settings)[1])

    @app.callback(
        *Rendered.outputs(), Input(ids.CONFIDENCE_DATA, "data"),
        *each(Input, "value", ids.CONFIDENCE_MODEL, ids.CONFIDENCE_THRESHOLD,
              ids.CONFIDENCE_REPLICATES, ids.CONFIDENCE_LEVEL, ids.CONFIDENCE_PC,
              ids.CONFIDENCE_METHOD, ids.CONFIDENCE_SIMULTANEOUS),
        Input(ids.CONFIDENCE_DONE, "data"), State(ids.CONFIDENCE_SEED, "data"))
    def _render(data, model, threshold, replicates, level, pc, method, simultaneous, done,
                seed):
        return render(services, data, model, threshold, replicates, level, pc, seed, done,
                      method, simultaneous).as_tuple()

    follow_implied(app, ids.CONFIDENCE_PC_VIEW, ids.CONFIDENCE_PC, ids.CONFIDENCE_PC_IMPLIED)
    follow_implied(app, ids.CONFIDENCE_METHOD_VIEW, ids.CONFIDENCE_METHOD,
                   ids.CONFIDENCE_METHOD_DEFAULT)
    record_view(app, ids.CONFIDENCE_URL, VIEW_CONTROLS)
