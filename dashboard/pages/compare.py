"""The Compare page: two classifiers' cost curves, their exact difference, and whether it is
more than test-set noise.

Exact part (instant): each classifier's own lower envelope (from the cached view model's hulls),
their difference a - b with its crossovers and the PC(+) ranges where each is better
(:func:`costdash.costspace.envelope_difference`). Band part (a background job, see
:mod:`dashboard.jobs`): the paired band of the difference
(:func:`costdash.bands.difference_band`, chosen with :func:`costdash.band_choice.band_choice`),
both classifiers evaluated on the same rows. By default the thresholds of each are picked per
PC(+) on a stratified half of the rows and the difference of their costs is banded on the other
half (discordant-pair Clopper–Pearson–MOVER, closed form, calibrated): the PC(+) ranges where it
excludes 0 are significant (pointwise, or over the whole curve with "whole curve"). The other
choice, the paired bootstrap of the two re-tuned envelopes (paper 000 §9), is an exploratory
resampling spread: no level and no significant ranges (``band.significance_note`` says why). As
on the Confidence page, the band stays in the server's result cache and a change of level only
re-reads it (``band.at_level``).

Element ids (a stable contract): ``compare-a``, ``compare-b``, ``compare-method``,
``compare-simultaneous``, ``compare-replicates``, ``compare-level``, ``compare-run``,
``compare-cancel``, ``compare-progress``, ``compare-envelopes``, ``compare-difference``,
``compare-crossovers``, ``compare-better``, ``compare-significant``, ``compare-status``,
``compare-dataset``, ``compare-error``.

The page opens with the whole view (:class:`costdash.view.View`): its own fields ``a``, ``b``,
``level``, ``replicates``, ``seed`` (and ``method`` and ``simultaneous`` once the view has
them), and Explore's ticked classifiers, whose first two are the pair when ``a`` and ``b`` are
absent (with none ticked: the two best). It hands its controls to
the browser's one view object (``assets/viewstate.js``), which writes the address bar.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping
from typing import Any

from dash import Dash, Input, Output, State, callback_context, dcc, html

from costdash.band_choice import BandChoice, band_choice
from costdash.bands import DifferenceBand, difference_band
from costdash.costspace import DifferenceCurve, envelope_difference
from costdash.dataset import CountedClassifier
from costdash.errors import CostdashError
from costdash.view import DEFAULT_LEVEL, DEFAULT_SEED, View
from dashboard import ids
from dashboard.jobs.bandcache import BandCache, difference_band_key
from dashboard.band_kit import band_settings as job_settings
from dashboard.band_kit import (GRID, background_options, band_page_head, job_controls, job_gate,
                                method_controls, method_outputs, method_state, press_run,
                                progress_reporter, register_band_load, register_run_gate)
from dashboard.page_kit import (NO_DATA, Reply, classifier_options, classifier_picker,
                                dataset_line, each, envelope_of, fmt_range, follow_implied,
                                help_panel, record_view, resolve, targets, view_fields_store,
                                warn)
from dashboard.figures.bands import band_figure
from dashboard.figures.common import graph_config
from dashboard.figures.compare import difference_figure, envelopes_figure
from dashboard.services import Services
from dashboard.sharing import READ_LINK_PAGES_ONLY
from dashboard.viewstate import page_view

HELP = help_panel([
    ["Left: each classifier's own ", html.B("cost curve"), " (its lower envelope: "
     "at every PC(+) its best threshold, or a trivial choice when that is cheaper). "
     "x is PC(+), which folds the class prior and both costs into one number; y is "
     "the normalized expected cost. Lower is better."],
    ["Right: the ", html.B("difference"), " a − b of the two curves. Below the "
     "zero line a is cheaper, above it b is. Circles mark the crossovers, where the "
     "better classifier changes; the shading shows which one is better where, on "
     "this test set (exact, no grid)."],
    ["Compute band (the default, ", html.B("thresholds picked on a held-out "
     "half"), "): on a stratified half of the rows each classifier's best threshold "
     "is picked at every PC(+); on the other half, the same rows for both (paired, "
     "so their correlation is kept), the grey band is a calibrated band of the "
     "difference of those thresholds' costs (the dashed grey line). Where it lies "
     "entirely on one side of zero the difference is significant; the bars along "
     "the bottom mark those ranges."],
    ["The band measures test-set sampling variability of these two fixed models, "
     "not of the learning algorithms. It is pointwise: scan many PC(+) values and "
     "some will look significant by chance; ", html.B("whole curve"), " makes the "
     "ranges significant over every PC(+) at once."],
    [html.B("Resampling spread of the re-tuned envelopes"), ": the paired bootstrap "
     "re-tunes both classifiers' thresholds on every resample, as the curves on the "
     "left do. When the two differ in flexibility that is not a valid test (it "
     "finds differences that are not there), so it is drawn without a level and "
     "without significant ranges."],
])


def choice_of(method: Any = None, simultaneous: Any = False) -> BandChoice:
    """The difference band the controls ask for (no fixed thresholds on this page)."""
    return band_choice(method, simultaneous, difference=True)


def band_settings(replicates: Any, level: Any, method: Any = None, simultaneous: Any = False
                  ) -> tuple[dict[str, Any], list[str]]:
    """The difference band's settings, typed and checked (:func:`band_kit.band_settings`):
    a closed-form band does not use (or check) the replicates (``typed["replicates"]`` None).
    ``typed["choice"]`` is the :class:`~costdash.band_choice.BandChoice`."""
    choice = choice_of(method, simultaneous)
    typed, problems = job_settings({"replicates": replicates, "level": level}, choice)
    typed.setdefault("replicates", None)
    typed["choice"] = choice
    return typed, problems


def layout(query: Mapping[str, Any], services: Services, **_: Any) -> html.Div:
    """The Compare page, initialised from the view in the URL query."""
    view, problems = page_view(query)
    # Until the load callback knows the data set's classifiers, the dropdowns hold the view's
    # pair (or its first two ticked classifiers), so the page starts recording the same view.
    a, b = view.a, view.b
    if view.models and a is None and b is None:
        a, b = (list(view.models) + [None, None])[:2]
    # ``method`` and ``simultaneous`` are view fields once costdash.view has them.
    simultaneous = bool(getattr(view, "simultaneous", False))
    choice = choice_of(getattr(view, "method", None), simultaneous)
    return html.Div(className="bands-page compare", children=[
        *band_page_head("compare", view, problems,
                        stores=[view_fields_store(ids.COMPARE_URL, VIEW_CONTROLS)]),
        html.Div(className="page-grid", children=[
            html.Aside(className="controls", children=[
                html.Section(className="panel", children=[
                    html.H2("Compare two classifiers"),
                    classifier_picker("a", ids.COMPARE_A, a),
                    classifier_picker("b", ids.COMPARE_B, b),
                ]),
                html.Section(className="panel", children=[
                    html.H2("Is the difference real?"),
                    html.P(className="explain", children=[
                        "A band of a − b on the same rows for both: where a calibrated band "
                        "excludes 0, one classifier is significantly better."]),
                    *method_controls("compare", choice, simultaneous),
                    *job_controls("compare", view.replicates, view.level, choice),
                ]),
            ]),
            html.Div(className="results", children=[
                html.P(id=ids.COMPARE_CROSSOVERS, className="sentence", children="–",
                       **{"aria-live": "polite"}),
                html.Div(className="plots", children=[
                    html.Figure(className="plot", children=[
                        html.Div(className="graph-box", children=dcc.Graph(
                            id=ids.COMPARE_ENVELOPES, style={"height": "100%"},
                            config=graph_config("compare-envelopes"))),
                        html.Figcaption("Each classifier's cost curve (lower envelope)"),
                    ]),
                    html.Figure(className="plot", children=[
                        html.Div(className="graph-box", children=dcc.Graph(
                            id=ids.COMPARE_DIFFERENCE, style={"height": "100%"},
                            config=graph_config("compare-difference"))),
                        html.Figcaption("Difference a − b (below 0: a is cheaper)"),
                    ]),
                ]),
                html.Div(className="readouts two", children=[
                    html.Div(className="card", children=[
                        html.H3("Better on this test set (exact)"),
                        html.Div("–", id=ids.COMPARE_BETTER, className="summary"),
                    ]),
                    html.Div(className="card", children=[
                        html.H3("Significantly better (paired band)"),
                        html.Div("–", id=ids.COMPARE_SIGNIFICANT, className="summary",
                                 **{"aria-live": "polite"}),
                    ]),
                ]),
                HELP,
            ]),
        ]),
    ])


# --- server-side handlers (plain functions; the callbacks below only wire them) --------------------

class Loaded(Reply):
    OUTPUTS = ("options", "options", "a", "b", "data", "data_id", "info", "error", "current")


def best_pair(view: dict[str, Any]) -> tuple[str, str]:
    """The two classifiers with the lowest area under their cost curve (the two best on
    average over PC(+)), in that order."""
    ranked = sorted(view["classifiers"], key=lambda c: (c["cost_area"], c["index"]))
    names = [c["name"] for c in ranked]
    return names[0], names[1] if len(names) > 1 else names[0]


def default_pair(view: View, model: dict[str, Any]) -> tuple[str, str]:
    """The pair the page starts with: the view's ``a`` and ``b``; where absent, the first two
    classifiers ticked on Explore; where those run out, the two best (:func:`best_pair`).

    Parameters
    ----------
    view : View
        The page's view.
    model : dict
        The data set's view model (its classifiers).
    """
    names = [c["name"] for c in model["classifiers"]]
    ticked = [n for n in view.models or () if n in names]
    given = [n for n in (view.a, view.b) if n in names]
    # Candidates in order of preference; the first two distinct fill the missing places.
    fill = [n for n in [*ticked, *best_pair(model), *names] if n not in given]
    a = view.a if view.a in names else (fill.pop(0) if fill else names[0])
    b = view.b if view.b in names else next((n for n in fill if n != a), a)
    return a, b


def load(services: Services, query: View | Mapping[str, Any] | None,
         current: dict | None) -> Loaded:
    """Resolve the data set (the view's, else the one last opened) and fill both dropdowns
    (every classifier; the pair of :func:`default_pair`)."""
    view = query if isinstance(query, View) else page_view(query)[0]
    r = resolve(services, view.data, current)
    if not r.ok or services.sharing.read_only(r.id):
        return Loaded(options=[], a=None, b=None, data=None, data_id=None, info="",
                      error=r.error if not r.ok else READ_LINK_PAGES_ONLY)
    a, b = default_pair(view, r.view)
    return Loaded(options=classifier_options(r.view, r.names), a=a, b=b,
                  data={"id": r.id, "name": r.view["name"]}, data_id=r.id,
                  info=dataset_line(r.view), error="",
                  current={"id": r.id, "name": r.view["name"]})


def band_request_key(data_id: str, a: str, b: str, replicates: int, seed: int,
                     choice: BandChoice | None = None) -> str:
    """Cache key of the paired band of ``a - b`` (:func:`dashboard.jobs.bandcache.difference_band_key`:
    the method, whole curve or not, the selection, the replicates of a bootstrap)."""
    return difference_band_key(data_id, a, b, replicates, seed,
                               choice if choice is not None else choice_of())


def unpaired_message(name: str) -> str:
    return (f"{name} is known only by confusion-matrix counts, so there are no test rows to "
            "evaluate in pairs: the band of a difference needs both classifiers' scores on "
            "the same rows.")


def failed_job_reply(message: str) -> dict[str, Any] | None:
    """The job's output when it could not even be queued: the band key of the request (from the
    callback's state) and the message, which :func:`render` shows. None for a poll (no state)."""
    states = callback_context.states
    data = states.get("compare-data.data")
    a, b = states.get("compare-a.value"), states.get("compare-b.value")
    if not data or not data.get("id") or not a or not b:
        return None
    choice = choice_of(states.get("compare-method.value"),
                       states.get("compare-simultaneous.value"))
    typed, problems = job_settings({"replicates": states.get("compare-replicates.value"),
                                    "level": DEFAULT_LEVEL}, choice)
    if problems:
        return None
    seed = states.get("compare-seed.data")
    key = band_request_key(data["id"], a, b, typed.get("replicates") or 0,
                           DEFAULT_SEED if seed is None else seed, choice)
    return {"key": key, "error": message}


def compute_difference(services: Services, data: dict | None, a: str | None, b: str | None,
                       replicates: Any, seed: int | None,
                       progress: Callable[[int, int], None] | None = None, *,
                       method: Any = None, simultaneous: Any = False) -> dict[str, Any]:
    """The background job: the paired band of a - b (unless cached), kept in the result cache.

    ``method`` and ``simultaneous``: the band asked for (:func:`choice_of`; None: thresholds
    selected on a held-out half). Returns ``{"key", "seconds"}`` or ``{"key", "error"}``
    (``key`` None when the settings are invalid: nothing is computed then).
    """
    seed = DEFAULT_SEED if seed is None else seed
    if not data or not data.get("id") or not a or not b:
        return {"key": None, "error": NO_DATA}
    # Run is disabled while a setting is invalid; this guards a click that raced the check.
    choice = choice_of(method, simultaneous)
    typed, problems = job_settings({"replicates": replicates, "level": DEFAULT_LEVEL}, choice)
    if problems:
        return {"key": None, "error": " ".join(problems)}
    replicates = typed.get("replicates") or 0
    key = band_request_key(data["id"], a, b, replicates, seed, choice)
    bands = BandCache(services.views.cache)
    if bands.has(key):
        return {"key": key, "seconds": None}

    def saved_key(saved: View) -> str:
        return band_request_key(data["id"], a, b, saved.replicates, saved.seed,
                                choice_of(saved.method, saved.simultaneous))

    with job_gate(services, data["id"], key, saved_key) as refusal:
        if refusal:
            return {"key": key, "error": refusal}
        return _compute_difference(services, data["id"], a, b, key, replicates, seed, choice,
                                   progress)


def _compute_difference(services: Services, data_id: str, a: str, b: str, key: str,
                        replicates: int, seed: int, choice: BandChoice,
                        progress: Callable[[int, int], None] | None) -> dict[str, Any]:
    bands = BandCache(services.views.cache)
    try:
        dataset = services.store.get(data_id)
        ca, cb = dataset.classifier(a), dataset.classifier(b)
    except KeyError as exc:
        return {"key": key, "error": f"no classifier named {exc.args[0]!r} in this data set"}
    except CostdashError as exc:
        return {"key": key, "error": str(exc)}
    for c in (ca, cb):
        if isinstance(c, CountedClassifier):
            return {"key": key, "error": unpaired_message(c.name)}
    start = time.perf_counter()
    try:
        band = difference_band(ca, cb, level=DEFAULT_LEVEL, replicates=max(replicates, 1),
                               rng=seed, grid=GRID, progress=progress, **choice.arguments())
    except CostdashError as exc:
        return {"key": key, "error": str(exc)}
    seconds = time.perf_counter() - start
    bands.put(key, band)
    return {"key": key, "seconds": seconds}


def crossover_text(d: DifferenceCurve) -> str:
    intervals = d.better_intervals()
    if not intervals:
        return f"{d.a} and {d.b} have the same cost curve: neither is ever better."
    if d.crossovers.size == 0:
        return f"They never cross: {intervals[0][2]} is better or equal at every PC(+)."
    xs = [f"{x:.4g}" for x in d.crossovers]
    joined = xs[0] if len(xs) == 1 else ", ".join(xs[:-1]) + " and " + xs[-1]
    return (f"The cost curves cross at PC(+) = {joined}: the better classifier changes "
            f"there ({len(xs)} crossover{'s' if len(xs) != 1 else ''}).")


def better_text(d: DifferenceCurve) -> list:
    """"gbm better on PC(+) 0–0.12, 0.57–1" per classifier, exact."""
    out = []
    for name in (d.a, d.b):
        ranges = [fmt_range(lo, hi) for lo, hi, who in d.better_intervals() if who == name]
        if ranges:
            out.append(html.P([html.B(name), f" better on PC(+) {', '.join(ranges)}"]))
    return out or [html.P("Identical cost curves.")]


def significant_text(band: DifferenceBand) -> list:
    """What the band is (``band.label``: a level only when it is calibrated), then "gbm
    significantly better on PC(+) 0.12–0.57" per classifier from its significant ranges, or, for
    an uncalibrated band, why there are none (``band.significance_note``)."""
    label = f"{band.label[0].upper()}{band.label[1:]}"
    if not band.calibrated:
        note = band.significance_note
        return [html.P(label + ".", className="muted"),
                html.P(note[0].upper() + note[1:] + ".", className="significance-note")]
    head = f"{label}; ranges are grid values, every 0.005."
    scope = "over the whole curve" if band.simultaneous else "pointwise"
    lines = []
    for name in (band.a, band.b):
        ranges = [fmt_range(s.lo, s.hi) for s in band.significant if s.better == name]
        if ranges:
            lines.append(html.P([html.B(name), f" significantly better on PC(+) "
                                 f"{', '.join(ranges)} ({scope})"], className="significant"))
    if not lines:
        lines = [html.P(f"Nowhere significant ({scope}): at every PC(+) the band includes 0, so "
                        "these rows cannot tell them apart.", className="significant")]
    return [html.P(head, className="muted"), *lines]


class Rendered(Reply):
    TARGETS = targets(envelopes=(ids.COMPARE_ENVELOPES, "figure"),
                      difference=(ids.COMPARE_DIFFERENCE, "figure"),
                      crossovers=ids.COMPARE_CROSSOVERS, better=ids.COMPARE_BETTER,
                      significant=ids.COMPARE_SIGNIFICANT, status=ids.COMPARE_STATUS)


def _blank(message: Any) -> Rendered:
    empty = band_figure(None, name="", index=0)
    return Rendered(envelopes=empty, difference=empty, crossovers=message, better="–",
                    significant="–", status="")


def render(services: Services, data: dict | None, a: str | None, b: str | None,
           replicates: Any, level: Any, seed: int | None, done: dict | None,
           method: Any = None, simultaneous: Any = False) -> Rendered:
    """Both figures and the readouts: exact curves always, the band when it was computed for
    these settings (read from the cache, at the requested level).

    A band setting out of its bounds changes only the status line, which says what the bounds
    are; the figures and readouts keep what was drawn.
    """
    seed = DEFAULT_SEED if seed is None else seed
    if not data or not data.get("id"):
        return _blank(NO_DATA)
    typed, problems = band_settings(replicates, level, method, simultaneous)
    if problems:
        return Rendered(status=warn(problems))
    replicates, level, choice = typed["replicates"], typed["level"], typed["choice"]
    r = resolve(services, data["id"], None)
    ea, eb = r.entry(a), r.entry(b)
    if ea is None or eb is None:
        return _blank(r.error or "Pick two classifiers.")
    env_a, env_b = envelope_of(ea), envelope_of(eb)
    d = envelope_difference(env_a, env_b, a_name=a, b_name=b)
    indices = (ea["index"], eb["index"])
    out = Rendered(envelopes=envelopes_figure(env_a, env_b, names=(a, b), indices=indices,
                                              difference=d),
                   difference=difference_figure(d, indices=indices),
                   crossovers=crossover_text(d), better=better_text(d), status="")
    if a == b:
        out.crossovers = "Pick two different classifiers to compare."
        out.significant = "–"
        return out
    unpaired = next((e["name"] for e in (ea, eb) if not e["scored"]), None)
    if unpaired:
        out.significant = html.P(unpaired_message(unpaired), className="warn")
        return out
    key = band_request_key(data["id"], a, b, replicates or 0, seed, choice)
    band = BandCache(services.views.cache).get(key)
    if band is None:
        failed = done and done.get("key") == key and done.get("error")
        out.significant = (html.P(done["error"], className="warn") if failed else
                           html.P(press_run(choice, replicates, f"the paired band of {a} − {b}"),
                                  className="muted"))
        return out
    band = band.at_level(level)
    out.difference = difference_figure(d, indices=indices, band=band)
    out.significant = significant_text(band)
    just_run = done and done.get("key") == key and done.get("seconds") is not None
    how = (f"closed form on the held-out half (seed {seed} for the split)"
           if band.selection == "split" else "closed form" if band.replicates == 0
           else f"{band.replicates:,} paired replicates (seed {seed})")
    out.status = how + (f", computed in {done['seconds']:.2f} s." if just_run else
                        ", kept from an earlier run (nothing recomputed).")
    return out


VIEW_CONTROLS = {"data": (ids.COMPARE_DATA_ID, "data"), "a": (ids.COMPARE_A, "value"),
                 "b": (ids.COMPARE_B, "value"), "level": (ids.COMPARE_LEVEL, "value"),
                 "replicates": (ids.COMPARE_REPLICATES, "value"),
                 "method": (ids.COMPARE_METHOD_VIEW, "data"),
                 "simultaneous": (ids.COMPARE_SIMULTANEOUS, "value")}
"""The view fields this page's controls set (:func:`page_kit.record_view`); ``method`` and
``simultaneous`` are ignored by the browser's view until costdash.view has them."""
VIEW_FIELDS = list(VIEW_CONTROLS)


# --- callbacks -------------------------------------------------------------------------------------

def register_callbacks(app: Dash, services: Services) -> None:
    register_band_load(
        app, "compare", lambda query, current: load(services, query, current),
        pickers=[Output(ids.COMPARE_A, "options"), Output(ids.COMPARE_B, "options"),
                 Output(ids.COMPARE_A, "value"), Output(ids.COMPARE_B, "value")])

    @app.callback(
        Output(ids.COMPARE_DONE, "data"),
        Input(ids.COMPARE_RUN, "n_clicks"),
        State(ids.COMPARE_DATA, "data"), State(ids.COMPARE_A, "value"),
        State(ids.COMPARE_B, "value"),
        State(ids.COMPARE_REPLICATES, "value"), State(ids.COMPARE_SEED, "data"),
        State(ids.COMPARE_METHOD, "value"), State(ids.COMPARE_SIMULTANEOUS, "value"),
        **background_options("compare", error_reply=failed_job_reply))
    def _run(set_progress, _clicks, data, a, b, replicates, seed, method, simultaneous):
        return compute_difference(services, data, a, b, replicates, seed,
                                  progress_reporter(set_progress), method=method,
                                  simultaneous=simultaneous)

    @app.callback(*method_outputs("compare"),
                  Input(ids.COMPARE_METHOD, "value"), Input(ids.COMPARE_SIMULTANEOUS, "value"))
    def _method(method, simultaneous):
        return method_state(choice_of(method, simultaneous)).as_tuple()

    register_run_gate(
        app, "compare",
        each(Input, "value", ids.COMPARE_REPLICATES, ids.COMPARE_LEVEL, ids.COMPARE_METHOD),
        lambda replicates, level, method: band_settings(replicates, level, method)[1])

    @app.callback(
        *Rendered.outputs(), Input(ids.COMPARE_DATA, "data"),
        *each(Input, "value", ids.COMPARE_A, ids.COMPARE_B, ids.COMPARE_REPLICATES,
              ids.COMPARE_LEVEL, ids.COMPARE_METHOD, ids.COMPARE_SIMULTANEOUS),
        Input(ids.COMPARE_DONE, "data"), State(ids.COMPARE_SEED, "data"))
    def _render(data, a, b, replicates, level, method, simultaneous, done, seed):
        return render(services, data, a, b, replicates, level, seed, done, method,
                      simultaneous).as_tuple()

    follow_implied(app, ids.COMPARE_METHOD_VIEW, ids.COMPARE_METHOD, ids.COMPARE_METHOD_DEFAULT)
    record_view(app, ids.COMPARE_URL, VIEW_CONTROLS)
