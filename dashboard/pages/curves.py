"""The Curves page: precision–recall, gains and lift, score distributions and reliability, all
under the one view's conditions, ticked classifiers, pinned thresholds and capacity.

Every number comes from :mod:`costdash.curves` (and the hull, the optimal vertex, the capacity
point and the pinned points from the core's other modules); the figures from
:mod:`dashboard.figures.curves`. Callbacks only wire them.

* **Precision–recall**: each ticked classifier's curve, the ROC convex hull mapped into PR space
  with the correct (non-linear) interpolation, iso-F1 lines, the current choice (the optimal hull
  vertex under the conditions) and the pinned thresholds. Precision is taken at the conditions'
  p(+): the test set's counts when p(+) is the data's prevalence (the default).
* **Gains and lift**: share of positives caught against share of cases flagged, the capacity
  (``capacity`` / ``volume`` of the view) and the best the hull catches within it.
* **Score distributions** of one classifier (the view's ``model``; else the current choice's
  classifier; else the first ticked), per class on shared bins, with the chosen and pinned
  thresholds.
* **Reliability** of every ticked classifier whose scores are probabilities, with its Brier
  score (the others are named with the reason), in equal-width or quantile bins (the view's
  ``quantile_bins``, ``curves-quantile-bins``), the shown classifier's examples per bin under it.
* **Calibrate, then choose** (``curves-calibrate``): the shown classifier flagged from the
  conditions' threshold probability as its scores are and after Platt and isotonic calibration
  on folds, beside its best threshold (:mod:`costdash.calibrated_choice`, through
  :func:`dashboard.results.calibrate_choose_result`).

Hovering a threshold in any plot marks it in all four, in the browser (no server round trip).

Element ids (a stable contract): ``curves-model``, ``curves-p-pos``, ``curves-cost-fn``,
``curves-cost-fp``, ``curves-capacity``, ``curves-pr-graph``, ``curves-gains-graph``,
``curves-hist-graph``, ``curves-rel-graph``, ``curves-choice`` (the sentence),
``curves-table`` (a row per marked point: ``curves-row-choice``, ``curves-row-pin-<k>``),
``curves-brier`` (the Brier scores' table, cells ``curves-brier-<i>``), ``curves-info``,
``curves-error``, ``curves-message``; the classifier list (issue 23): ``curves-filter``,
``curves-hull-only`` (the view's ``filter`` and ``hull_only``), ``curves-legend``.

Server-side state only through the services: the view model (cached hull and thinned ROC
curves) and, through the results service (:mod:`dashboard.results`), per data set, the score
histograms and reliability bins (computed once from the stored data) and the ROC points of
pinned thresholds (exact for an upload handle, on the thinned curve for a read-only one).
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping
from dataclasses import replace
from typing import Any

import numpy as np
from dash import ClientsideFunction, Dash, Input, Output, dcc, html

from costdash.conditions import OperatingCondition, default_condition
from costdash.curves import (Reliability, ScoreHistograms, capacity_on_gains, curve_point,
                             gains_curve, iso_f1, pr_curve, pr_hull, reliability,
                             score_histograms)
from costdash.dataset import CountedClassifier
from costdash.errors import CostdashError
from costdash.hull import ALL_NEGATIVE, ALL_POSITIVE, optimal_vertex
from costdash.pinned import pin_threshold
from costdash.roc import RocCurve, roc_of
from costdash.view import View, combination_problems, field_named, number_text
from dashboard.page_kit import (PAGES_NAMESPACE, Reply, check_fields, condition_field,
                                default_model, each, follow_implied, number_box, record_view,
                                targets, view_fields_store, warn)
from dashboard.figures.common import graph_config, threshold_text
from dashboard.figures.curves import (Mark, gains_figure, histogram_figure, pr_figure,
                                      reliability_figure)
from dashboard.figures.classifier_list import (HULL_ONLY_ON, brier_table, classifier_tools,
                                               grouped_reasons, shown_classifiers, swatch_legend)
from dashboard.results import calibrate_choose_result
from dashboard.services import Services
from dashboard.storage import DatasetNotFound
from dashboard.viewmodel import hull_from_entry, thinned_roc
from dashboard.viewstate import page_view, problems_note

NO_DATA = ("No data set is open. Upload a predictions file or open a demo on the Explore page; "
           "this page then shows its curves under the same conditions.")
HIST_BINS = 40
REL_BINS = 10
PER_EDGE = 32
SCORES_VERSION = 1
GRAPHS = ("curves-pr-graph", "curves-gains-graph", "curves-hist-graph", "curves-rel-graph")
QUANTILE_BINS = "curves-quantile-bins"
CALIBRATE = "curves-calibrate"
"""The reliability bins' toggle (the view's ``quantile_bins``) and the "calibrate, then choose"
table (rows ``curves-calibrate-<method>``: ``scores``, ``platt``, ``isotonic``, ``best``)."""


# --- layout ----------------------------------------------------------------------------------

def _graph(id_: str, figure: Any, caption: str) -> html.Figure:
    return html.Figure(className="plot", children=[
        html.Div(className="graph-box", children=dcc.Graph(
            id=id_, figure=figure, clear_on_unhover=True, style={"height": "100%"},
            config=graph_config(id_.removesuffix("-graph")), className="graph")),
        html.Figcaption(caption),
    ])


HELP = html.Details(className="help curves-why", children=[
    html.Summary("How to read these curves, and why the hull is curved in PR space"),
    html.P([
        "Every curve is a view of the same thresholds: hovering a point or a threshold in one "
        "plot marks it in all four. The ", html.B("current choice"), " (★) is the ROC convex "
        "hull vertex that is optimal under your conditions, as on Explore; the ",
        html.B("pinned thresholds"), " (◆) are Explore's pins."]),
    html.P([
        html.B("Precision"), " depends on the prior: it is taken at the conditions' p(+), so at "
        "a rarer prevalence than the test set's it is lower for the same threshold. Between two "
        "hull vertices a mix of the two classifiers moves true and false positives together "
        "linearly, so precision TP/(TP+FP) is not a straight line in PR space (Davis & Goadrich "
        "2006): the dashed curve is that mix, and a straight line between the vertices would "
        "promise precision nothing can deliver."]),
    html.P([
        html.B("Gains"), " show the share of positives caught against the share of cases "
        "flagged (at the conditions' p(+)); with a capacity (cases per period over the volume) "
        "the dashed line is the most you may flag and the square the best the hull catches "
        "within it. ", html.B("Lift"), " is their ratio."]),
    html.P([
        "The ", html.B("reliability diagram"), " needs scores that are probabilities in [0, 1]; "
        "it and the Brier score (mean squared difference of score and outcome) are about the "
        "test set as it is, not the conditions' p(+)."]),
])


def reference(view: View, *, shared: bool = False) -> dict[str, Any] | None:
    """What the page keeps of the view that its own controls do not set: the data set, the
    ticked classifiers, the pins, the costs of the correct decisions, the volume and unit (and
    whether it is a read-only link's, whose view never records the data set id)."""
    if not view.data:
        return None
    return {"id": view.data, "model": view.model, "models": list(view.models or ()),
            "pins": [[n, t] for n, t in (view.pins or ())],
            "cost_tp": view.cost_tp, "cost_tn": view.cost_tn, "volume": view.volume,
            "unit": view.unit, "shared": shared}


def layout(query: Mapping[str, Any], services: Services, *, shared: Any = None,
           **_: Any) -> html.Div:
    """The Curves page, initialised from the view in the URL query.

    With ``shared`` (a saved analysis, :class:`dashboard.sharing.AnalysisRecord`, opened by its
    read-only link at ``/s/<token>/curves``) the data comes from the analysis: the viewer may
    change the conditions as a what-if; nothing is saved and the address never holds the data
    set id.
    """
    view, problems = page_view(query)
    if shared is not None:
        view = replace(view, data=shared.dataset_id)
    prevalence = None
    if view.data:
        record = services.store.info(view.data)
        prevalence = record.prevalence if record is not None and record.n else None
    p_pos = view.p_pos if prevalence is None else view.condition(prevalence).p_pos
    return html.Div(className="curves-page", children=[
        dcc.Store(id="curves-ref", data=reference(view, shared=shared is not None)),
        dcc.Store(id="curves-data-id", data=None if shared is not None else view.data),
        dcc.Store(id="curves-p-implied", data=prevalence),
        dcc.Store(id="curves-p-view"),
        dcc.Store(id="curves-url"),
        view_fields_store("curves-url", VIEW_CONTROLS),
        dcc.Store(id="curves-hover"),
        *([html.P([html.B(f"Shared analysis: {shared.name}"), " — read-only: change the "
                   "conditions to see what if; nothing you do here is saved."],
                  className="shared-banner curves-shared")] if shared is not None else []),
        html.Section(className="data-bar folds-bar", children=[
            problems_note(problems),
            html.Div(className="folds-controls", children=[
                html.Div(className="folds-field folds-model-field", children=[
                    html.Label("Scores of", htmlFor="curves-model"),
                    dcc.Dropdown(id="curves-model", options=[view.model] if view.model else [],
                                 value=view.model, clearable=False, searchable=True,
                                 placeholder="classifier"),
                ]),
                condition_field("p_pos", "curves-p-pos", p_pos, compact=True,
                                placeholder="p(+)"),
                condition_field("cost_fn", "curves-cost-fn", view.cost_fn, compact=True),
                condition_field("cost_fp", "curves-cost-fp", view.cost_fp, compact=True),
                html.Div(className="folds-field condition-field", children=[
                    html.Label(["Capacity: cases flagged per period ",
                                html.Span(f"(volume {view.volume:,.0f})", className="hint")],
                               htmlFor="curves-capacity"),
                    number_box("curves-capacity", view.capacity, placeholder="no limit"),
                ]),
            ]),
            html.Div(id="curves-info", className="dataset-info"),
            html.Div(id="curves-error", className="error", role="alert"),
            html.Div(id="curves-message", className="notice", role="status",
                     children=None if view.data else NO_DATA),
        ]),
        html.Section(className="card curves-classifiers", children=[
            classifier_tools("curves", view)]),
        html.Section(className="card curves-readout", children=[
            html.P(id="curves-choice", className="curves-sentence"),
            html.Div(id="curves-table"),
            html.Div(id="curves-brier", className="note"),
        ]),
        html.Div(className="plots", children=[
            _graph("curves-pr-graph", pr_figure([], {}),
                   "Precision–recall: each classifier, the ROC hull mapped with the correct "
                   "interpolation (dashed), iso-F1 lines, ★ the current choice, ◆ pins"),
            _graph("curves-gains-graph", gains_figure([], {}),
                   "Cumulative gains (top) and lift (bottom) against the share of cases "
                   "flagged, with the capacity"),
            _graph("curves-hist-graph", histogram_figure(None),
                   "Score distribution per class (share of each class) with the chosen and "
                   "pinned thresholds"),
            _graph("curves-rel-graph", reliability_figure([], {}),
                   "Reliability: observed share of positives against the mean score per bin, "
                   "with each classifier's Brier score; under it, the examples per bin of the "
                   "classifier whose scores are shown"),
        ]),
        html.Section(className="card curves-calibration", children=[
            html.H2("Calibrate, then choose the threshold"),
            dcc.Checklist(id=QUANTILE_BINS,
                          options=[{"label": " quantile bins in the reliability diagram (about "
                                             "as many examples each)", "value": HULL_ONLY_ON}],
                          value=[HULL_ONLY_ON] if view.quantile_bins else [],
                          className="toggle"),
            html.Div(id=CALIBRATE, style={"overflowX": "auto"}),
            CALIBRATE_HELP,
        ]),
        HELP,
    ])


# --- server-side handlers (plain functions; the callbacks below only wire them) ---------------

def _arr(values: Any) -> list[float | None]:
    return [v if math.isfinite(v) else None for v in np.asarray(values, dtype=float).tolist()]


def _nan(values: list[float | None]) -> np.ndarray:
    return np.array([np.nan if v is None else v for v in values], dtype=np.float64)


def score_summaries(services: Services, data_id: str, strategy: str = "uniform"
                    ) -> dict[str, Any]:
    """Per classifier: its score histograms and reliability bins (``strategy``: equal-width or
    quantile, :func:`costdash.curves.reliability`; or why there are none), from the stored data,
    computed once per data set and strategy through the results service (kind
    ``curves-scores``: bins are counts over ranges of scores, the same in either scope)."""
    def compute(_scope: str) -> dict[str, Any]:
        dataset = services.store.get(data_id)
        out: dict[str, Any] = {}
        for c in (*dataset.scored, *dataset.counted):
            if isinstance(c, CountedClassifier):
                why = (f"{c.name} was given as confusion matrices: there are no scores to "
                       "histogram or calibrate.")
                out[c.name] = {"hist": None, "hist_error": why, "rel": None, "rel_error": why}
                continue
            weight = c.count
            h = score_histograms(c.y_true, c.score, bins=HIST_BINS, weight=weight, name=c.name)
            entry: dict[str, Any] = {"hist": {
                "edges": h.edges.tolist(), "positives": h.positives.tolist(),
                "negatives": h.negatives.tolist(), "share_positives": h.share_positives.tolist(),
                "share_negatives": h.share_negatives.tolist()}, "hist_error": None}
            try:
                r = reliability(c.y_true, c.score, bins=REL_BINS, weight=weight, name=c.name,
                                strategy=strategy)
                entry["rel"] = {"edges": r.edges.tolist(), "mean_score": _arr(r.mean_score),
                                "observed": _arr(r.observed), "count": r.count.tolist(),
                                "brier": r.brier, "strategy": strategy}
                entry["rel_error"] = None
            except CostdashError as exc:
                entry["rel"], entry["rel_error"] = None, str(exc)
            out[c.name] = entry
        return out

    return services.results.json("curves-scores", data_id,
                                 {"version": SCORES_VERSION, "hist": HIST_BINS, "rel": REL_BINS,
                                  **({"strategy": strategy} if strategy != "uniform" else {})},
                                 compute)


def histograms_of(name: str, entry: dict[str, Any]) -> ScoreHistograms:
    h = entry["hist"]
    return ScoreHistograms(name=name, edges=np.asarray(h["edges"], dtype=np.float64),
                           positives=np.asarray(h["positives"], dtype=np.int64),
                           negatives=np.asarray(h["negatives"], dtype=np.int64),
                           share_positives=np.asarray(h["share_positives"], dtype=np.float64),
                           share_negatives=np.asarray(h["share_negatives"], dtype=np.float64))


def reliability_of(name: str, entry: dict[str, Any]) -> Reliability:
    r = entry["rel"]
    return Reliability(name=name, edges=np.asarray(r["edges"], dtype=np.float64),
                       mean_score=_nan(r["mean_score"]), observed=_nan(r["observed"]),
                       count=np.asarray(r["count"], dtype=np.int64), brier=float(r["brier"]),
                       strategy=r.get("strategy", "uniform"))


def pinned_points(services: Services, data_id: str, pins: list[tuple[str, float]]
                  ) -> list[dict[str, Any]]:
    """The ROC point of each pin, through the results service (kind ``pin-point``, per data
    set, classifier and threshold); ``{"error"}`` for one that cannot be priced. In the full
    scope (an upload handle) the exact point of the full curve; in the thinned scope (a
    read-only handle) the point of the thinned curve the link shows (the last one still
    flagging score >= the threshold), so no pin reads an exact count."""
    results = services.results
    scope = results.scope(data_id)
    out: list[dict[str, Any]] = []
    rocs: dict[str, RocCurve] = {}

    def roc_named(name: str) -> RocCurve:
        if name not in rocs:
            if scope == "thinned":
                entries = {c["name"]: c for c in services.views.full(data_id)["classifiers"]}
                if name not in entries:
                    raise KeyError(name)
                rocs[name] = thinned_roc(entries[name])
            else:
                rocs[name] = roc_of(services.store.get(data_id).classifier(name))
        return rocs[name]

    for name, threshold in pins:
        def compute(_scope: str, name: str = name, threshold: float = threshold) -> str:
            try:
                p = pin_threshold(roc_named(name), threshold)
                return json.dumps({"fpr": p.fpr, "tpr": p.tpr})
            except (KeyError, CostdashError) as exc:
                return json.dumps({"error": str(exc)})

        text = results.text("pin-point", data_id, [name, threshold], compute, scope=scope,
                            checked=False, keep=lambda t: '"error"' not in t)
        out.append(json.loads(text))
    return out


def _fmt(x: float, pct: bool = False) -> str:
    if not math.isfinite(x):
        return "–"
    return f"{x:.2%}" if pct else f"{x:.4g}"


def readout_table(rows: list[tuple[Mark, Any]], volume: float) -> html.Table:
    """One row per marked point: where it lands on every curve."""
    head = html.Thead(html.Tr([html.Th(h) for h in (
        "", "classifier", "threshold", "recall", "precision", "F1", "flagged", "per period",
        "lift")]))
    body = []
    for mark, p in rows:
        rid = "curves-row-choice" if mark.slot < 0 else f"curves-row-pin-{mark.slot}"
        body.append(html.Tr(id=rid, children=[
            html.Th(mark.label),
            html.Td(mark.classifier),
            html.Td(threshold_text(None if math.isnan(mark.threshold) else mark.threshold)),
            html.Td(_fmt(p.recall), className="num", id=f"{rid}-recall"),
            html.Td(_fmt(p.precision), className="num", id=f"{rid}-precision"),
            html.Td(_fmt(p.f1), className="num", id=f"{rid}-f1"),
            html.Td(_fmt(p.flagged, pct=True), className="num", id=f"{rid}-flagged"),
            html.Td(f"{p.flagged * volume:,.1f}", className="num"),
            html.Td(_fmt(p.lift), className="num", id=f"{rid}-lift"),
        ]))
    return html.Table(className="folds-table curves-table", children=[head, html.Tbody(body)])


class CurvesOutputs(Reply):
    TARGETS = targets(options=("curves-model", "options"), model=("curves-model", "value"),
                      data_id=("curves-data-id", "data"), p_pos=("curves-p-pos", "value"),
                      p_implied=("curves-p-implied", "data"), pr=("curves-pr-graph", "figure"),
                      gains=("curves-gains-graph", "figure"), hist=("curves-hist-graph", "figure"),
                      rel=("curves-rel-graph", "figure"), choice="curves-choice",
                      table="curves-table", brier="curves-brier", info="curves-info",
                      error="curves-error", message="curves-message", legend="curves-legend")


def _empty(message: str = "", error: str = "") -> CurvesOutputs:
    return CurvesOutputs(options=[], model=None, pr=pr_figure([], {}), gains=gains_figure([], {}),
                         hist=histogram_figure(None), rel=reliability_figure([], {}),
                         choice="", table="", brier="", info="", error=error, message=message,
                         legend=[])


def _choice_sentence(mark: Mark, p: Any, prior: float, from_counts: bool) -> list:
    at = "on the test set's counts" if from_counts else f"at p(+) = {prior:.4g}"
    if mark.classifier in (ALL_NEGATIVE, ALL_POSITIVE):
        return [f"Under these conditions the best choice is the trivial classifier "
                f"{mark.classifier}: ", html.B("no threshold does better"), " than flagging "
                + ("nothing." if mark.classifier == ALL_NEGATIVE else "everything.")]
    return ["Current choice: ", html.B(mark.classifier), f" at {threshold_text(mark.threshold)}"
            f" — recall {_fmt(p.recall)}, precision {_fmt(p.precision)} ({at}), F1 "
            f"{_fmt(p.f1)}; it flags {_fmt(p.flagged, pct=True)} of cases, a lift of "
            f"{_fmt(p.lift)}."]


def curves_view(services: Services, ref: dict[str, Any] | None, model: str | None,
                p_pos: Any, cost_fn: Any, cost_fp: Any, capacity: Any,
                name_filter: Any = None, hull_only: Any = None,
                quantile_bins: Any = None) -> CurvesOutputs:
    """Everything on the page for a data set, the view's selection and pins, the conditions and
    the capacity. An empty p(+) box is the data's prevalence (and is filled in). The hull and
    the choice are of every ticked classifier; the curves drawn are those of the ticked ones
    the filter and "hull classifiers only" leave (:func:`shown_classifiers`)."""
    ref = services.sharing.page_ref(ref, services.views.full)   # a read link's -> its scope
    if not ref or not ref.get("id"):
        return CurvesOutputs(message=NO_DATA, data_id=None)
    typed, problems = check_fields({"p_pos": p_pos, "cost_fn": cost_fn, "cost_fp": cost_fp,
                                    "capacity": capacity})
    if not problems:
        # The view's rules across fields, with the costs of the correct decisions it carries
        # (the browser keeps the last valid view meanwhile: assets/viewstate.js).
        problems = [str(p) for _, p in combination_problems(
            {**typed, "cost_tp": ref.get("cost_tp"), "cost_tn": ref.get("cost_tn")})]
    try:
        full = services.views.full(ref["id"])
    except (DatasetNotFound, CostdashError) as exc:
        return _empty(error=str(exc))
    entries = {c["name"]: c for c in full["classifiers"]}
    names = list(entries)
    ticked = View(models=tuple(ref.get("models") or ()) or None).selected(names)
    if not ticked:
        return _empty(message="None of the ticked classifiers is in this data set.")
    hull = hull_from_entry(services.views.view(ref["id"], ticked)["hull"])
    shown = shown_classifiers(ticked, name_filter, hull_only, set(hull.classifier))
    prevalence = float(full["prevalence"])
    n_pos, n_neg = int(full["n_pos"]), int(full["n_neg"])
    out = CurvesOutputs(data_id=None if ref.get("shared") else ref["id"],
                        p_implied=prevalence, error="", message="",
                        info=f"{full['name']}: {full['n']:,} cases, {full['n_pos']:,} positive "
                             f"(prevalence {prevalence:.4g}); {len(ticked)} of {len(names)} "
                             "classifiers ticked")
    if problems:
        out.error = warn(problems)
        return out
    if typed["p_pos"] is None:
        out.p_pos = prevalence
    try:
        condition = default_condition(prevalence, typed["p_pos"], typed["cost_fn"],
                                      typed["cost_fp"], ref.get("cost_tp"), ref.get("cost_tn"))
    except CostdashError as exc:
        out.error = str(exc)
        return out
    # At the data's prevalence precision is the test set's own TP / (TP + FP).
    prior_arg = None if typed["p_pos"] in (None, prevalence) else condition.p_pos
    index = {name: entries[name]["index"] for name in names}
    revision = f"{ref['revision']}:{','.join(ticked)}"
    out.legend = swatch_legend(shown, index, len(ticked))
    if not shown:
        out.message = "No ticked classifier is left by the filter and the hull-only flag."

    rocs = [thinned_roc(entries[n]) for n in shown]
    prs = [pr_curve(r, p_pos=prior_arg) for r in rocs]
    prior = (prs[0] if prs else pr_curve(thinned_roc(entries[ticked[0]]),
                                         p_pos=prior_arg)).prior
    gains = [gains_curve(r, p_pos=prior_arg) for r in rocs]
    vertex = optimal_vertex(hull, condition)
    marks = [Mark("current choice", vertex.classifier, vertex.threshold, vertex.fpr,
                  vertex.tpr)]
    pin_list = [(str(n), float(t)) for n, t in ref.get("pins") or ()]
    notes: list[str] = []
    if pin_list:
        try:
            points = pinned_points(services, ref["id"], pin_list)
        except (DatasetNotFound, CostdashError) as exc:
            points = [{"error": str(exc)}] * len(pin_list)
        for k, ((name, t), pt) in enumerate(zip(pin_list, points)):
            if "error" in pt:
                notes.append(f"Pin {k + 1} ({name}:{t:g}): {pt['error']}")
            elif name not in ticked:
                notes.append(f"Pin {k + 1} ({name}) is not ticked, so it is not drawn.")
            else:
                marks.append(Mark(f"pin {k + 1}", name, t, pt["fpr"], pt["tpr"], slot=k))
    capacity_share = capacity_point = None
    volume = float(ref.get("volume") or field_named("volume").default)
    if typed["capacity"] is not None and volume > 0:
        on_gains = capacity_on_gains(hull, p_pos=condition.p_pos, volume=volume,
                                     capacity=typed["capacity"])
        capacity_share, capacity_point = on_gains.share, (on_gains.flagged, on_gains.caught)

    out.pr = pr_figure(prs, index, hull=pr_hull(hull, n_pos=n_pos, n_neg=n_neg, p_pos=prior_arg,
                                                per_edge=PER_EDGE),
                       iso=iso_f1(), marks=marks, uirevision=revision)
    out.gains = gains_figure(gains, index, capacity_share=capacity_share,
                             capacity_point=capacity_point, marks=marks, uirevision=revision)

    # The classifier whose scores are shown: the view's, else the current choice's.
    pick = shown or ticked
    if model not in pick:
        chosen = View(model=ref.get("model") if ref.get("model") in pick else
                      (vertex.classifier if vertex.classifier in pick else None),
                      models=tuple(pick))
        model = default_model(chosen, pick)
    out.options = [{"label": n, "value": n} for n in pick]
    out.model = model
    try:
        summaries = score_summaries(services, ref["id"],
                                    "quantile" if quantile_bins else "uniform")
    except (DatasetNotFound, CostdashError) as exc:
        summaries = {}
        notes.append(str(exc))
    entry = summaries.get(model) or {}
    out.hist = (histogram_figure(histograms_of(model, entry), marks=marks, uirevision=revision)
                if entry.get("hist") else
                histogram_figure(None, message=entry.get("hist_error") or "No scores."))
    rels, refused = [], {}
    for n in shown:
        e = summaries.get(n) or {}
        if e.get("rel"):
            rels.append(reliability_of(n, e))
        else:
            refused[n] = e.get("rel_error") or "no scores"
    selected = next((r for r in rels if r.name == model), None)
    out.rel = reliability_figure(rels, index, refused=refused, uirevision=revision,
                                 counts=selected)

    rows = [(m, curve_point(m.fpr, m.tpr, prior=prior)) for m in marks]
    out.choice = _choice_sentence(marks[0], rows[0][1], prior, prior_arg is None)
    if capacity_point is not None:
        out.choice = [*out.choice, f" Within the capacity ({capacity_share:.2%} of cases) the "
                      f"hull catches at most {capacity_point[1]:.2%} of positives."]
    out.table = readout_table(rows, volume)
    # A table, and one line per reason a classifier has none (issue 23: 50 classifiers made
    # a wall of text).
    out.brier = [brier_table(rels, index) if rels else None,
                 *grouped_reasons(refused, "reliability diagram or Brier score"),
                 *[html.P(note) for note in notes]]
    return out


# --- calibrate, then choose the threshold (issue 28, item 6) ----------------------------------

CALIBRATE_LABELS = {"scores": "scores as they are", "platt": "Platt (logistic) on folds",
                    "isotonic": "isotonic on folds", "best": "best threshold (hindsight)"}


def calibrated_choice(services: Services, data_id: str, model: str,
                      condition: OperatingCondition) -> dict[str, Any]:
    """:func:`costdash.calibrated_choice.choose_after_calibration` of ``model`` at
    ``condition``, through the results service
    (:func:`dashboard.results.calibrate_choose_result`, kind ``calibrate-choose``, the
    calibrated curves kind ``calibrated-roc``; thinned in the thinned scope)."""
    return calibrate_choose_result(services.results, services.views, data_id, model, condition)


def calibrate_preview(services: Services, ref: dict[str, Any] | None, model: Any, p_pos: Any,
                      cost_fn: Any, cost_fp: Any) -> Any:
    """The "calibrate, then choose" table of the classifier whose scores are shown: flagging
    score >= the threshold probability of the conditions before and after each calibration,
    beside the best threshold of the scores, in money per period."""
    ref = services.sharing.page_ref(ref, services.views.full)
    if not ref or not ref.get("id") or not model:
        return ""
    typed, problems = check_fields({"p_pos": p_pos, "cost_fn": cost_fn, "cost_fp": cost_fp})
    if problems:
        return html.P(warn(problems), className="error")
    try:
        full = services.views.full(ref["id"])
        prevalence = float(full["prevalence"])
        condition = default_condition(prevalence, typed["p_pos"], typed["cost_fn"],
                                      typed["cost_fp"], ref.get("cost_tp"), ref.get("cost_tn"))
        result = calibrated_choice(services, ref["id"], str(model), condition)
    except (DatasetNotFound, CostdashError) as exc:
        return html.P(str(exc), className="error")
    if "error" in result:
        return html.P(result["error"], className="note")
    volume = float(ref.get("volume") or field_named("volume").default)
    unit = str(ref.get("unit") if ref.get("unit") is not None else field_named("unit").default)
    per = "per period" if volume else "per case"
    scale = volume or 1.0

    def money(x: float | None) -> str:
        return "–" if x is None else f"{x * scale:,.2f} {unit}".strip()

    # The money first: a narrow screen shows the first columns (the table scrolls sideways).
    head = html.Thead(html.Tr([html.Th(h) for h in (
        "", f"expected cost {per}", "more than the best", "flag", "flagged", "why not")]))
    body = []
    for r in result["rows"]:
        t = r["threshold"]
        flag = ("flag nothing" if t is None and not r["refused"] else
                "–" if r["refused"] else
                f"{'score' if r['method'] in ('scores', 'best') else 'calibrated p'} ≥ "
                f"{number_text(float(f'{t:.6g}'))}")
        body.append(html.Tr(id=f"{CALIBRATE}-{r['method']}", children=[
            html.Th(CALIBRATE_LABELS.get(r["method"], r["method"])),
            html.Td(money(r["expected_cost"]), className="num", style={"whiteSpace": "nowrap"}),
            html.Td(money(r["regret"]), className="num", style={"whiteSpace": "nowrap"}),
            html.Td(flag),
            html.Td("–" if r["flagged"] is None else f"{r['flagged']:.2%}", className="num"),
            html.Td(r["refused"] or "", className="note"),
        ]))
    rows = {r["method"]: r for r in result["rows"]}
    done = [m for m in ("platt", "isotonic") if not rows[m]["refused"]]
    sentence: list[Any] = [
        "At these conditions a probability is worth flagging from ",
        html.B(f"pₜ = {result['tau']:.4g}", id=f"{CALIBRATE}-tau"),
        f" (the cost ratio at the data's prevalence {result['prevalence']:.4g}). "]
    if done:
        better = min(done, key=lambda m: rows[m]["expected_cost"])
        sentence += [f"Calibrating {model}'s scores ({CALIBRATE_LABELS[better]}) and flagging "
                     "from pₜ costs ", html.B(money(rows[better]["expected_cost"])),
                     f" {per}, against ",
                     html.B(money(rows["scores"]["expected_cost"])) if not
                     rows["scores"]["refused"] else "no number",
                     " reading the scores as they are and ",
                     html.B(money(rows["best"]["expected_cost"])),
                     " at the best threshold chosen with hindsight."]
    notes = []
    if ref.get("shared"):
        notes.append(html.P("On this read-only link the curves are the thinned ones the link "
                            "shows.", className="note"))
    return [html.P(sentence, className="curves-sentence"),
            html.Table(className="folds-table curves-calibrate-table",
                       children=[head, html.Tbody(body)]), *notes]


CALIBRATE_HELP = html.Details(className="help", children=[
    html.Summary("Why calibrate before choosing the threshold"),
    html.P(["Scores that are probabilities need no curve to be thresholded: flag a case when its "
            "probability of being positive is at least pₜ, the cost ratio C(+|−)/(C(−|+) + "
            "C(+|−)) moved to your p(+) (with costs of correct decisions, their differences). "
            "When the scores are not calibrated, that threshold costs more than the best one. A ",
            html.B("calibration"), " maps each fold's scores through a Platt (logistic) or "
            "isotonic fit on the other folds (the data's fold column, else 5 stratified folds), "
            "so no case is calibrated by a fit that saw it; the table shows what flagging from "
            "pₜ costs before and after, and the best threshold of the scores as they are "
            "(chosen with hindsight on the test set, which no rule can promise). The "
            "reliability diagram above shows why: points below the diagonal are scores that "
            "promise more positives than they hold. Its bars count the examples per bin; ",
            html.B("quantile bins"), " hold about as many each, so a crowded score range is "
            "not one point."]),
])


VIEW_CONTROLS = {"data": ("curves-data-id", "data"), "model": ("curves-model", "value"),
                 "p_pos": ("curves-p-view", "data"), "cost_fn": ("curves-cost-fn", "value"),
                 "cost_fp": ("curves-cost-fp", "value"), "capacity": ("curves-capacity", "value"),
                 "filter": ("curves-filter", "value"), "hull_only": ("curves-hull-only", "value"),
                 "quantile_bins": (QUANTILE_BINS, "value")}
"""The view fields this page's controls set (:func:`page_kit.record_view`)."""
VIEW_FIELDS = list(VIEW_CONTROLS)


HOVER = ClientsideFunction(PAGES_NAMESPACE, "curvesHover")
"""Clientside (assets/pages.js ``curvesHover``): the hovered threshold (a classifier and a
score) marked in every plot's ``hover`` traces: on its curve (the last point still flagging ``score >= threshold``), or as a
vertical line on the score axis of its histogram and its reliability curve."""


# --- callbacks -----------------------------------------------------------------------------------

def register_callbacks(app: Dash, services: Services) -> None:
    @app.callback(*CurvesOutputs.outputs(), Input("curves-ref", "data"),
                  *each(Input, "value", "curves-model", "curves-p-pos", "curves-cost-fn",
                        "curves-cost-fp", "curves-capacity", "curves-filter", "curves-hull-only",
                        QUANTILE_BINS))
    def _view(ref, model, p_pos, cost_fn, cost_fp, capacity, name_filter, hull_only, quantile):
        return curves_view(services, ref, model, p_pos, cost_fn, cost_fp, capacity,
                           name_filter, hull_only, quantile).as_tuple()

    @app.callback(Output(CALIBRATE, "children"), Input("curves-ref", "data"),
                  *each(Input, "value", "curves-model", "curves-p-pos", "curves-cost-fn",
                        "curves-cost-fp"))
    def _calibrate(ref, model, p_pos, cost_fn, cost_fp):
        return calibrate_preview(services, ref, model, p_pos, cost_fn, cost_fp)

    app.clientside_callback(
        HOVER, Output("curves-hover", "data"),
        [Input(g, "hoverData") for g in GRAPHS], prevent_initial_call=True)
    follow_implied(app, "curves-p-view", "curves-p-pos", "curves-p-implied")
    record_view(app, "curves-url", VIEW_CONTROLS)
