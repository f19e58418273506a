"""The page kit: what every page's layout and callbacks share, so that no page imports another.

Reading a page's controls through the view schema (:mod:`costdash.view`): the number box, the
operating-condition fields, the classifier picker and the help panel; a callback's outputs named
once (:class:`Reply`, :func:`targets`); resolving the data set a page shows; the defaults every
page takes from the view (the classifier, the PC(+) of the conditions); recording the view in the
browser. The band pages' job kit (controls, run gate, progress, errors) is :mod:`dashboard.band_kit`.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, ClassVar

from dash import ClientsideFunction, Dash, Input, Output, State, dcc, html, no_update

from costdash._wording import counted
from costdash.costspace import LowerEnvelope, lower_envelope
from costdash.errors import CostdashError, ParameterError
from costdash.view import View, field_named
from dashboard.services import Services
from dashboard.storage import DatasetNotFound, valid_id
from dashboard.viewmodel import hull_from_entry

__all__ = ["NO_DATA", "PAGES_NAMESPACE", "RECORD_VIEW", "UNSET_WHEN_IMPLIED", "Reply", "Resolved",
           "as_float", "as_int", "check_fields", "classifier_options", "classifier_picker", "condition_field",
           "conditions_pc", "dataset_line", "default_model", "each", "envelope_of", "fmt_range",
           "follow_implied", "help_panel", "no_data", "number_box", "open_demo", "prevalence_of",
           "record_view", "resolve", "targets", "view_fields_store", "warn"]

NO_DATA = "No data set is open. Upload a predictions file or open a demo on the Explore page."


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


PAGES_NAMESPACE = "costdash_pages"
"""The namespace of the pages' clientside functions (``window.dash_clientside.costdash_pages``,
assets/pages.js)."""

UNSET_WHEN_IMPLIED = ClientsideFunction(PAGES_NAMESPACE, "unsetWhenImplied")
"""Clientside mapping of a box to the value the view records (assets/pages.js
``unsetWhenImplied``): none while the box shows the value the view implies (the PC(+) or the
p(+) of Explore's conditions), so the view keeps following them; the typed value otherwise.
Inputs: the box's value, the implied value (a store)."""

RECORD_VIEW = ClientsideFunction(PAGES_NAMESPACE, "recordView")
"""Clientside (assets/pages.js ``recordView``): the controls' values, in order, are the view
fields the last argument names (:func:`view_fields_store`); gives the checked problems."""


def follow_implied(app: Dash, view_id: str, value_id: str, implied_id: str) -> None:
    """Register :data:`UNSET_WHEN_IMPLIED`: the store ``view_id`` holds what the view records
    of the control ``value_id`` (its ``value``), given the implied value in the store
    ``implied_id``."""
    app.clientside_callback(UNSET_WHEN_IMPLIED, Output(view_id, "data"),
                            Input(value_id, "value"), Input(implied_id, "data"))


def view_fields_store(store: str, controls: Mapping[str, Any]) -> dcc.Store:
    """The store beside ``store`` (``{store}-fields``) holding the names of the view fields the
    page's controls set, in the order of ``controls``: the data :func:`record_view`'s one
    clientside function reads. A page's layout holds it next to ``store``."""
    return dcc.Store(id=f"{store}-fields", data=list(controls))


def record_view(app: Dash, store: str, controls: Mapping[str, tuple[str, str]]) -> None:
    """Register the clientside callback that hands a page's controls to the browser's view
    (:data:`RECORD_VIEW`, which writes the address bar through assets/viewstate.js):
    ``controls`` maps each view field the page sets to the ``(element id, property)`` that
    holds it, and the page's layout holds :func:`view_fields_store` of the same ``controls``;
    the problems it finds go to the store ``store``."""
    app.clientside_callback(RECORD_VIEW, Output(store, "data"),
                            *[Input(element, prop) for element, prop in controls.values()],
                            State(f"{store}-fields", "data"))


# --- controls ------------------------------------------------------------------------------------

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

