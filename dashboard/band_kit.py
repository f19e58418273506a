"""The band kit: the controls and callbacks of a page that runs a band job (Compare,
Confidence, Multiclass).

The method controls, the job controls (replicates, level, Run, Cancel, progress, status), the
run gate, the band page's head and load callback, progress reporting, job errors, the background
callback options and the per-data-set job gate. Ids are built from the page's ``prefix``
(``{prefix}-replicates``, ``{prefix}-run``, ...). The page kit it builds on is
:mod:`dashboard.page_kit`.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

from dash import Dash, Input, Output, State, dcc, html, no_update, set_props
from dash.exceptions import BackgroundCallbackError

from costdash.band_choice import BandChoice, default_method, method_options
from costdash.bands import confidence_ranks
from costdash.errors import CostdashError
from costdash.view import View
from dashboard import ids
from dashboard.jobs.bandcache import BAND_GRID
from dashboard.jobs import (POLL_INTERVAL_MS, READ_ONLY_JOB, budget_message, busy_message,
                           dataset_job_slot, job_budget_left)
from dashboard.page_kit import Reply, check_fields, number_box, warn
from dashboard.services import Services
from dashboard.viewstate import problems_note

__all__ = ["CACHE_DOWN", "GRID", "JOB_ERROR_PREFIX", "RUN_BOOTSTRAP", "RUN_CLOSED_FORM",
           "SIMULTANEOUS_ON", "MethodState", "background_options", "band_page_head",
           "band_settings", "job_controls", "job_error_handler", "job_error_text", "job_gate",
           "method_controls", "method_note", "method_outputs", "method_state", "press_run",
           "progress_reporter", "register_band_load", "register_run_gate", "run_disabled"]

log = logging.getLogger(__name__)

GRID = BAND_GRID
"""PC(+) values of a band (``linspace(0, 1, 201)``, the core's and the CLI's default)."""

CACHE_DOWN = ("The band was computed, but the result cache did not keep it (the cache server "
              "is unreachable), so it cannot be shown. Try again when the cache is back.")



def band_settings(values: Mapping[str, Any], choice: BandChoice | None = None
                  ) -> tuple[dict[str, Any], list[str]]:
    """A band job's settings as the controls send them (``level``, and ``replicates`` unless the
    band is closed form, with whatever else the page has), typed by the view schema, and a
    message for each invalid one: its label and bounds, a level the replicates cannot resolve,
    or too few replicates for the chosen method (a double bootstrap carries a level).

    ``choice``: the band asked for; with a closed-form one the replicates box is not used (and
    not checked: the page disables it), ``typed["replicates"]`` is then absent.
    """
    if choice is not None and choice.closed_form:
        values = {k: v for k, v in values.items() if k != "replicates"}
    required = ("level", "replicates") if "replicates" in values else ("level",)
    typed, problems = check_fields(values, required=required)
    if not problems and "replicates" in typed:
        try:
            confidence_ranks(typed["level"], typed["replicates"])
        except CostdashError as exc:
            problems.append(str(exc))
    if not problems and choice is not None and "replicates" in typed \
            and typed["replicates"] < choice.min_replicates:
        problems.append(f"{choice.label} needs at least {choice.min_replicates} replicates "
                        f"(it shows a confidence level); got {typed['replicates']:,}.")
    return typed, problems

# --- job controls ---------------------------------------------------------------------------------

SIMULTANEOUS_ON = "on"
"""The value of the whole-curve checklist's one option (``{prefix}-simultaneous``)."""

RUN_BOOTSTRAP = "Run bootstrap"
RUN_CLOSED_FORM = "Compute band"


def band_page_head(prefix: str, view: View, problems: Sequence[str],
                   stores: Sequence[dcc.Store] = ()) -> list:
    """The top of a band page (Compare, Confidence): its stores (the view it opened with, the
    data set, its id, ``stores`` of the page's own, the seed, the last job's reply and the view
    it records) and the data bar (what the address got wrong, the data set line, errors)."""
    return [
        dcc.Store(id=f"{prefix}-query", data=view.to_json()),
        dcc.Store(id=f"{prefix}-data"),
        dcc.Store(id=f"{prefix}-data-id", data=view.data),
        *stores,
        dcc.Store(id=f"{prefix}-seed", data=view.seed),
        dcc.Store(id=f"{prefix}-done"),
        dcc.Store(id=f"{prefix}-url"),
        html.Section(className="data-bar", children=[
            problems_note(problems),
            html.Div(id=f"{prefix}-dataset", className="dataset-info"),
            html.Div(id=f"{prefix}-error", className="error", role="alert"),
        ]),
    ]


def register_band_load(app: Dash, prefix: str, load: Callable[[Any, Any], Reply],
                       pickers: Sequence[Output], extra: Sequence[Output] = ()) -> None:
    """Register a band page's load callback: from the view it opened with (``{prefix}-query``)
    and the data set last opened on any page, ``load(query, current)`` fills the ``pickers``
    (the classifier dropdowns), the data set of :func:`band_page_head` (store, id, line,
    error), the data set last opened, and ``extra``, in that order."""
    @app.callback(*pickers, Output(f"{prefix}-data", "data"), Output(f"{prefix}-data-id", "data"),
                  Output(f"{prefix}-dataset", "children"), Output(f"{prefix}-error", "children"),
                  Output(ids.CURRENT_DATA, "data", allow_duplicate=True), *extra,
                  Input(f"{prefix}-query", "data"), State(ids.CURRENT_DATA, "data"),
                  prevent_initial_call="initial_duplicate")
    def _load(query: Any, current: Any) -> tuple:
        return load(query, current).as_tuple()


def job_controls(prefix: str, replicates: int, level: float,
                 choice: BandChoice | None = None) -> list:
    """Replicates and level boxes, Run and Cancel, the progress bar and the status line
    (``choice``: a closed-form band starts with the replicates box disabled)."""
    closed = choice is not None and choice.closed_form
    return [
        html.Div(className="field-row", children=[
            html.Label(["Replicates (B) ", number_box(f"{prefix}-replicates", replicates,
                                                      disabled=closed)]),
            html.Label(["Confidence level ", number_box(f"{prefix}-level", level)]),
        ]),
        html.Div(className="job-buttons", children=[
            html.Button(RUN_CLOSED_FORM if closed else RUN_BOOTSTRAP, id=f"{prefix}-run",
                        n_clicks=0, className="run-button"),
            html.Button("Cancel", id=f"{prefix}-cancel", n_clicks=0, disabled=True,
                        className="cancel-button"),
        ]),
        html.Div(id=f"{prefix}-job", className="job", children=[
            html.Progress(id=f"{prefix}-progress", max="1", **{"aria-label": "job progress"}),
            html.Span(id=f"{prefix}-progress-text", className="job-text"),
        ]),
        html.Div(id=f"{prefix}-status", className="note job-status", **{"aria-live": "polite"}),
    ]


def method_note(choice: BandChoice) -> str:
    """What the chosen band costs and what it is, under the method control."""
    if choice.method == "split" and choice.difference:
        text = ("Half of the rows (stratified, from the seed) pick each classifier's best "
                "threshold at each PC(+); the band is the difference of their costs on the other "
                "half, the same rows for both. Wider than one from all rows, but a valid test "
                "of the thresholds you would pick.")
    elif choice.method == "split":
        text = ("Half of the rows (stratified, from the seed) pick the best threshold at each "
                "PC(+); the band is their cost on the other half, so it is wider than one from "
                "all rows but answers what the thresholds you pick will cost on new data.")
    elif choice.closed_form:
        text = ("Closed form from the error counts at the fixed threshold(s); calibrated, also "
                "with small counts.")
    elif choice.method == "double-bootstrap":
        text = ("Every replicate is itself resampled 100 times: about 100 times the work of one "
                "bootstrap, at least 200 replicates. Approximate: it under-covers with few "
                "examples of the smaller class and towards PC(+) 0 or 1, so it shows its level "
                "only where its coverage study earned it and is a spread elsewhere "
                "(docs/bands.md).")
    elif choice.difference and not choice.fixed:
        text = ("Both envelopes re-tuned on every resample: exploratory, drawn without a "
                "level, and not a test (no significant ranges).")
    elif choice.fixed:
        text = ("The paper's bootstrap: not calibrated with small counts (zero width when FN or "
                "FP is 0), so drawn without a level.")
    else:
        text = ("Every replicate re-picks its thresholds on its own resample: a spread, drawn "
                "without a level (it sits below the optimal cost it seems to bracket).")
    if choice.closed_form:
        text += " No resampling: the replicates are not used."
    else:
        text += " The whole-curve option needs a closed-form band."
    return text


def method_controls(prefix: str, choice: BandChoice, simultaneous: bool) -> list:
    """The band's method (radio items ``{prefix}-method``), the whole-curve toggle
    (``{prefix}-simultaneous``), a note on the choice (``{prefix}-method-note``) and the store
    of the question's default method (``{prefix}-method-default``: the view records the
    method only when it is not that, in ``{prefix}-method-view``)."""
    state = method_state(choice)
    return [
        html.Div(className="field method-field", role="group",
                 **{"aria-labelledby": f"{prefix}-method-label"}, children=[
            html.Span("Band", id=f"{prefix}-method-label", className="label"),
            dcc.RadioItems(id=f"{prefix}-method", options=state.options, value=choice.method,
                           className="method-choice"),
            dcc.Checklist(id=f"{prefix}-simultaneous", options=state.simultaneous_options,
                          value=[SIMULTANEOUS_ON] if simultaneous else [],
                          className="toggle"),
            html.P(state.note, id=f"{prefix}-method-note", className="explain"),
        ]),
        dcc.Store(id=f"{prefix}-method-default", data=state.default),
        dcc.Store(id=f"{prefix}-method-view"),
    ]


@dataclass
class MethodState:
    """What the method control shows for a band choice (see :func:`method_controls`)."""

    options: list[dict[str, Any]]
    value: str
    simultaneous_options: list[dict[str, Any]]
    note: str
    replicates_disabled: bool
    run_text: str
    default: str

    def as_tuple(self) -> tuple:
        return (self.options, self.value, self.simultaneous_options, self.note,
                self.replicates_disabled, self.run_text, self.default)


def method_state(choice: BandChoice) -> MethodState:
    """The method control for ``choice``: the question's options, the (resolved) value, the
    whole-curve toggle (disabled unless closed form), the note, whether the replicates box is
    disabled (closed form) and the Run button's words."""
    whole = ("Whole curve (simultaneous): significant over every PC(+) at once"
             if choice.difference else "Whole curve (simultaneous): holds at every PC(+) at once")
    return MethodState(
        options=[{"label": label, "value": value}
                 for value, label in method_options(fixed=choice.fixed,
                                                    difference=choice.difference)],
        value=choice.method,
        simultaneous_options=[{"label": whole, "value": SIMULTANEOUS_ON,
                               "disabled": not choice.closed_form}],
        note=method_note(choice), replicates_disabled=choice.closed_form,
        run_text=RUN_CLOSED_FORM if choice.closed_form else RUN_BOOTSTRAP,
        default=default_method(fixed=choice.fixed, difference=choice.difference))


def method_outputs(prefix: str) -> list[Output]:
    """The outputs of a page's method control callback, in the order of
    :meth:`MethodState.as_tuple` (the ids of :func:`method_controls` and :func:`job_controls`)."""
    return [Output(f"{prefix}-method", "options"), Output(f"{prefix}-method", "value"),
            Output(f"{prefix}-simultaneous", "options"),
            Output(f"{prefix}-method-note", "children"),
            Output(f"{prefix}-replicates", "disabled"), Output(f"{prefix}-run", "children"),
            Output(f"{prefix}-method-default", "data")]


def press_run(choice: BandChoice, replicates: int | None, what: str = "the band") -> str:
    """The status line before a band is computed: which button, and what it computes."""
    if choice.closed_form:
        return f"Press {RUN_CLOSED_FORM} for {what}: closed form, no resampling."
    return f"Press {RUN_BOOTSTRAP} to compute {what} from {replicates:,} replicates."


def run_disabled(job_class: str | None, problems: Sequence[str]) -> Any:
    """Whether Run is disabled: while a job runs Dash's ``running`` owns the button (no
    update); otherwise it is disabled exactly when a control holds an invalid value, so no job
    starts with one."""
    if job_class and "running" in job_class.split():
        return no_update
    return bool(problems)


def register_run_gate(app: Dash, prefix: str, inputs: Sequence[Input],
                      problems: Callable[..., Sequence[str]]) -> None:
    """Register the callback that disables ``{prefix}-run`` (:func:`run_disabled`):
    ``problems(*values)`` lists what is wrong with the values of ``inputs`` (the page's band
    settings); the job's class, ``{prefix}-job``, is the callback's last input."""
    @app.callback(Output(f"{prefix}-run", "disabled"), *inputs,
                  Input(f"{prefix}-job", "className"))
    def _gate(*values: Any) -> Any:
        *settings, job_class = values
        return run_disabled(job_class, problems(*settings))


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
        set_props(f"{prefix}-status", {"children": warn(message)})
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


@contextmanager
def job_gate(services: Services, data_id: str, key: str,
             saved_key: Callable[[View], str | None]) -> Iterator[str | None]:
    """Whether a bootstrap job on ``data_id`` may run: yields the message that refuses it, or
    None while holding one of the data set's job slots (``COSTDASH_MAX_JOBS_PER_DATASET``).

    Each data set starts at most ``COSTDASH_MAX_JOBS_PER_DATASET_PER_HOUR`` new jobs an hour.
    Through a read-only link's handle only the band of the link's own view runs:
    ``saved_key(saved_view)`` must give the job's ``key`` (any classifier of it; the owner's
    method, replicates, seed and threshold), so a link opens a bounded number of jobs.
    """
    record = services.store.info(data_id)
    if record is not None and record.read_only:
        saved = services.sharing.saved_view_of(record)
        if saved is None or saved_key(saved) != key:
            yield READ_ONLY_JOB
            return
    limit = services.settings.max_jobs_per_dataset
    with dataset_job_slot(services.views.cache, data_id, limit) as free:
        if not free:
            yield busy_message(limit)
            return
        per_hour = services.settings.max_jobs_per_dataset_per_hour
        if not job_budget_left(services.views.cache, data_id, per_hour):
            yield budget_message(per_hour)
            return
        yield None
