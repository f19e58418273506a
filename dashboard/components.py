"""Components and helpers shared by the dashboard's pages.

What more than one page needs lives here so that no page imports another: resolving the data
set a page shows, reading a page's controls through the view schema (:mod:`costdash.view`), the
number box, the bootstrap job's controls, progress and error handling, and the defaults every
page takes from the view (the classifier, the PC(+) of the conditions).

Nothing here is specific to one page: ids are built from the page's ``prefix``
(``{prefix}-replicates``, ``{prefix}-run``, ...).
"""

from __future__ import annotations

import logging
import math
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any, ClassVar

from dash import Dash, Input, Output, State, dcc, html, no_update, set_props
from dash.exceptions import BackgroundCallbackError

from costdash._wording import counted
from costdash.band_choice import BandChoice, default_method, method_options
from costdash.bands import confidence_ranks
from costdash.costspace import LowerEnvelope, lower_envelope
from costdash.errors import CostdashError, ParameterError
from costdash.view import View, field_named
from dashboard import ids
from dashboard.bandcache import BAND_GRID
from dashboard.jobs import (POLL_INTERVAL_MS, READ_ONLY_JOB, budget_message, busy_message,
                           dataset_job_slot, job_budget_left)
from dashboard.services import Services
from dashboard.storage import DatasetNotFound, valid_id
from dashboard.viewmodel import hull_from_entry
from dashboard.viewstate import problems_note, record_view_js

__all__ = ["CACHE_DOWN", "GRID", "JOB_ERROR_PREFIX", "NO_DATA", "UNSET_WHEN_IMPLIED_JS", "Reply",
           "Resolved", "as_float", "as_int", "background_options", "band_page_head",
           "band_settings", "check_fields", "classifier_picker", "condition_field",
           "conditions_pc", "dataset_line", "default_model", "each", "envelope_of", "fmt_range",
           "follow_implied", "help_panel", "job_controls", "job_error_handler", "job_error_text",
           "method_controls", "method_note", "method_outputs", "method_state", "no_data",
           "number_box", "open_demo", "press_run", "prevalence_of", "progress_reporter",
           "record_view", "register_band_load", "register_run_gate", "resolve", "run_disabled",
           "targets", "warn"]

log = logging.getLogger(__name__)

GRID = BAND_GRID
"""PC(+) values of a band (``linspace(0, 1, 201)``, the core's and the CLI's default)."""

NO_DATA = "No data set is open. Upload a predictions file or open a demo on the Explore page."

CACHE_DOWN = ("The band was computed, but the result cache did not keep it (the cache server "
              "is unreachable), so it cannot be shown. Try again when the cache is back.")


# --- numbers as controls send them --------------------------------------------------------------

def as_int(value: Any) -> Any:
    """A whole number typed in a number box (it may arrive as 1000.0) as an int."""
    if isinstance(value, float) and value.is_integer():
        return int(value)
    return value


def as_float(value: Any) -> float | None:
    """A finite number as a float; anything else (text, None, nan, a bool) as None."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return None
    return float(value) if math.isfinite(value) else None


def fmt_range(lo: float, hi: float) -> str:
    """"0.12–0.57", or one number for an empty range."""
    return f"{lo:.3g}" if lo == hi else f"{lo:.3g}–{hi:.3g}"


def check_fields(values: Mapping[str, Any], required: Sequence[str] = ()
                 ) -> tuple[dict[str, Any], list[str]]:
    """Read a page's controls as the view fields they are.

    A number box sends what was typed with no bounds applied (the boxes carry no ``min`` or
    ``max``: Dash would send None for a value outside them, and the page could not say why), so
    the bounds are checked here, by the view schema, in the words every page, link and API uses.

    Parameters
    ----------
    values : mapping
        ``{field name: raw value}`` (names of :data:`costdash.view.VIEW_FIELDS`).
    required : sequence of str
        Fields for which an empty box is a mistake (the others are optional: empty is unset).

    Returns
    -------
    typed : dict
        The typed value of every valid field (None for an empty optional one).
    problems : list of str
        One message per invalid field, naming it and its bounds, e.g. "Replicates (B) must be a
        whole number from 1 to 10,000; got '20000'."
    """
    typed: dict[str, Any] = {}
    problems: list[str] = []
    for name, raw in values.items():
        f = field_named(name)
        try:
            value = f.parse(raw)
        except ParameterError as exc:
            problems.append(str(exc))
            continue
        if value is None and name in required:
            problems.append(f"{f.requirement()}; the box is empty.")
            continue
        typed[name] = value
    return typed, problems


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


def warn(messages: str | Sequence[str]) -> html.Span:
    """Messages shown in a page's status or error area."""
    text = messages if isinstance(messages, str) else " ".join(messages)
    return html.Span(text, className="warn")


def targets(**named: Any) -> tuple[tuple[str, str, str], ...]:
    """A callback's outputs named once each, in order: ``name=element id`` (its ``children``),
    ``name=(element id, property)``, or ``name=[(id, property), ...]`` where one value fills
    several outputs (the options of both dropdowns of a pair). Gives the ``(name, element id,
    property)`` of every output, the ``TARGETS`` of a :class:`Reply`."""
    def pairs(target: Any) -> list[tuple[str, str]]:
        if isinstance(target, str):
            return [(target, "children")]
        return [target] if isinstance(target, tuple) else list(target)
    return tuple((name, element, prop) for name, target in named.items()
                 for element, prop in pairs(target))


def each(kind: type, prop: str, *elements: str) -> list:
    """``kind(element, prop)`` (an Input, State or Output) of each element: the controls a
    callback reads or fills that share a property, named once each."""
    return [kind(element, prop) for element in elements]


class Reply:
    """What one callback sends back: an attribute per output, each ``no_update`` until set.

    A page's handler fills in what it knows and its callback returns :meth:`as_tuple`.
    Subclasses name their outputs in ``OUTPUTS``, in the order of the callback's ``Output``s; a
    name stands twice where one value fills two outputs (the options of both dropdowns of a
    pair). One list instead of a field per output and a tuple that repeats them, which drifted
    apart as easily as they were written.

    A subclass that also knows where its outputs go sets ``TARGETS`` instead (see
    :func:`targets`): ``OUTPUTS`` are then its names, and :meth:`outputs` is the callback's
    ``Output`` list, so the names and the elements they fill are written once, side by side.
    """

    OUTPUTS: ClassVar[tuple[str, ...]] = ()
    TARGETS: ClassVar[tuple[tuple[str, str, str], ...]] = ()

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        if "TARGETS" in cls.__dict__:
            cls.OUTPUTS = tuple(name for name, _, _ in cls.TARGETS)

    @classmethod
    def outputs(cls, **options: Any) -> list[Output]:
        """The callback's ``Output``s, in the order of :meth:`as_tuple` (``options``, e.g.
        ``allow_duplicate=True``, apply to each)."""
        return [Output(element, prop, **options) for _, element, prop in cls.TARGETS]

    def __init__(self, **values: Any) -> None:
        unknown = set(values).difference(self.OUTPUTS)
        if unknown:
            raise TypeError(f"{type(self).__name__} has no output {sorted(unknown)[0]!r}")
        for name in self.OUTPUTS:
            setattr(self, name, values.get(name, no_update))

    def as_tuple(self) -> tuple:
        return tuple(getattr(self, name) for name in self.OUTPUTS)

    def __eq__(self, other: object) -> bool:
        return type(other) is type(self) and self.as_tuple() == other.as_tuple()

    __hash__ = None  # type: ignore[assignment]  # mutable, as the dataclasses it replaces

    def __repr__(self) -> str:
        names = dict.fromkeys(self.OUTPUTS)
        return f"{type(self).__name__}({', '.join(f'{n}={getattr(self, n)!r}' for n in names)})"


# --- the data set ---------------------------------------------------------------------------------

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


def prevalence_of(services: Services, data_id: str | None) -> float | None:
    """The data set's prevalence from its cached view model; None when it cannot be read (the
    page then says why once its load callback resolves the data set)."""
    if not valid_id(data_id):
        return None
    try:
        return float(services.views.full(data_id)["prevalence"])
    except (DatasetNotFound, CostdashError):
        return None


def dataset_line(view: dict[str, Any]) -> str:
    """"name: 569 cases, 212 positive, 5 classifiers" (and the folds, when there are some)."""
    n_cls = len(view["classifiers"])
    folds = (f"; {counted(view['n_folds'], 'fold')}, pooled into one test set for the bands"
             if view.get("n_folds") else "")
    return (f"{view['name']}: {view['n']:,} cases, {view['n_pos']:,} positive, "
            f"{counted(n_cls, 'classifier')}{folds}")


def envelope_of(entry: dict[str, Any]) -> LowerEnvelope:
    """A classifier's exact lower envelope, from its hull kept in the view model."""
    return lower_envelope(hull_from_entry(entry["hull"]))


def open_demo(services: Services, name: str) -> dict[str, Any]:
    """Store a demo data set (once) and return ``{"id", "name"}`` of it."""
    record = services.put_demo(name)
    return {"id": record.id, "name": record.name}


# --- defaults every page takes from the view -----------------------------------------------------

def default_model(view: View, names: Sequence[str]) -> str | None:
    """The classifier a single-classifier page starts with: the view's ``model``, else the
    first classifier ticked on Explore, else the first one; None without classifiers."""
    if view.model in names:
        return view.model
    ticked = view.selected(list(names))
    return ticked[0] if ticked else (names[0] if names else None)


def conditions_pc(view: View, prevalence: float | None) -> float | None:
    """The PC(+) of the view's conditions (p(+) absent: the data's ``prevalence``, by the one
    default rule, :meth:`costdash.view.View.condition`); None while that is unknown."""
    if view.p_pos is None and prevalence is None:
        return None
    try:
        # With p(+) in the view the prevalence plays no part, so it need not be known.
        return view.condition(view.p_pos if prevalence is None else prevalence).pc
    except CostdashError:
        return None


UNSET_WHEN_IMPLIED_JS = """function (value, implied) {
    return value === implied ? null : value;
}"""
"""Clientside mapping of a box to the value the view records: none while the box shows the value
the view implies (the PC(+) or the p(+) of Explore's conditions), so the view keeps following
them; the typed value otherwise. Inputs: the box's value, the implied value (a store)."""


def follow_implied(app: Dash, view_id: str, value_id: str, implied_id: str) -> None:
    """Register :data:`UNSET_WHEN_IMPLIED_JS`: the store ``view_id`` holds what the view records
    of the control ``value_id`` (its ``value``), given the implied value in the store
    ``implied_id``."""
    app.clientside_callback(UNSET_WHEN_IMPLIED_JS, Output(view_id, "data"),
                            Input(value_id, "value"), Input(implied_id, "data"))


def record_view(app: Dash, store: str, controls: Mapping[str, tuple[str, str]]) -> None:
    """Register the clientside callback that hands a page's controls to the browser's view
    (:func:`dashboard.viewstate.record_view_js`, which writes the address bar): ``controls``
    maps each view field the page sets to the ``(element id, property)`` that holds it; the
    problems it finds go to the store ``store``."""
    app.clientside_callback(record_view_js(list(controls)), Output(store, "data"),
                            *[Input(element, prop) for element, prop in controls.values()])


# --- job controls ---------------------------------------------------------------------------------

SIMULTANEOUS_ON = "on"
"""The value of the whole-curve checklist's one option (``{prefix}-simultaneous``)."""

RUN_BOOTSTRAP = "Run bootstrap"
RUN_CLOSED_FORM = "Compute band"


def number_box(id_: str, value: Any, *, debounce: float = 0.4, **kwargs: Any) -> dcc.Input:
    """A number input that sends what is typed: on Enter, on leaving it, and once typing has
    paused for ``debounce`` seconds.

    No ``min`` or ``max``: the browser would mark a value outside them invalid and Dash would
    send None, so the page could neither keep what it drew nor say what the bounds are. The
    page checks the value with the view schema instead (:func:`check_fields`).

    The pause is timed by assets/viewstate.js (one timer per box, restarted by every key; the
    box's class ``commit-after-<ms>`` says how long), not by dcc.Input's numeric ``debounce``:
    Dash 4.4's clears a stale timer, so every key leaves one running and keys typed at full
    speed had their half-typed numbers committed (and drawn) before their Enter (issue 23).
    """
    pause_ms = max(0, round(debounce * 1000))
    return dcc.Input(id=id_, type="number", value=value, step="any", debounce=True,
                     className=f"num commit-after-{pause_ms}", **kwargs)


def _condition_label(name: str) -> list:
    """What the operating conditions are called on every page (the view schema's labels,
    spelled out)."""
    return {"p_pos": ["p(+): probability that a case is positive"],
            "cost_fn": ["C(−|+): cost of a ", html.B("false negative")],
            "cost_fp": ["C(+|−): cost of a ", html.B("false positive")]}[name]


def condition_field(name: str, id_: str, value: Any, *, extra: Sequence[Any] = (),
                    compact: bool = False, debounce: float = 0.25, **box: Any) -> html.Div:
    """One operating condition (``p_pos``, ``cost_fn`` or ``cost_fp``): its label and number box,
    then ``extra`` (Explore's slider and buttons). ``compact`` stacks label over box, for a
    bar of fields (Folds)."""
    label = html.Label(_condition_label(name), htmlFor=id_)
    number = number_box(id_, value, debounce=debounce, **box)
    if compact:
        return html.Div(className="folds-field condition-field", children=[label, number])
    return html.Div(className="field condition-field", children=[
        html.Div(className="field-head", children=[label, number]), *extra])


def classifier_picker(label: str, element: str, value: str | None) -> html.Div:
    """A band page's classifier dropdown. Until the load callback knows the data set's
    classifiers it offers only the view's ``value``, so the page records the view it opened.
    Searchable: with 50 classifiers, typing part of a name filters the list, as Explore's
    filter does."""
    return html.Div(className="field", children=[
        html.Label(label, htmlFor=element),
        dcc.Dropdown(id=element, options=[value] if value else [], value=value, clearable=False,
                     searchable=True),
    ])


def classifier_options(view: Mapping[str, Any], names: Sequence[str]) -> list[dict[str, Any]]:
    """The options of a page's classifier dropdown for ``names`` of the data set's view model
    (``services.views.full``): each classifier's name, marked "(dominated)" as Explore's list
    and legends mark it when no condition makes it the best choice (off the ROC convex hull),
    with its name as the text a search matches. Plain text: component labels in options that
    change break Dash 4.4.1's renderer (see dashboard/pages/explore.py)."""
    dominated = set(view.get("dominated") or ())
    return [{"label": f"{n} (dominated)" if n in dominated else n, "value": n, "search": n}
            for n in names]


def help_panel(items: Sequence[Any], summary: str = "What am I looking at?") -> html.Details:
    """A page's help: a disclosure titled ``summary``, one bullet per item (text or a list of
    components)."""
    return html.Details(className="help", children=[
        html.Summary(summary), html.Ul([html.Li(item) for item in items])])


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
