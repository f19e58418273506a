"""The Threshold choice page: beyond the envelope, for the ticked classifiers of the one view.

Three parts (docs/threshold-choice.md), every number from :mod:`costdash.choice_summary` (the
core's threshold-choice, H-measure, decision-curve, robust and calibration modules), every
figure from :mod:`dashboard.figures.choice`; callbacks only wire them:

1. **What each way of choosing thresholds costs**: per classifier, in cost space, the
   score-driven (Brier) curve, the rate-driven curve and the fixed threshold (the view's pin for
   it, else its own best threshold at the conditions) beside its envelope (optimal), with a
   table of their expected losses (PC(+) uniform, or the view's Beta), the gaps between them
   named, H-measure and Brier score next to AUC. Scores not in [0, 1] get the reason instead of
   the Brier curve; the calibration picker (Platt or isotonic, cross-fitted on folds) draws the
   curve of the calibrated scores.
2. **Decision curves**: net benefit against the threshold probability, treat-all and
   treat-none, with the pₜ of the current conditions marked.
3. **Choices that hold up**: over the view's sensitivity box (set on Explore), the
   minimax-regret and Bayes fixed choices in money per period, the worst corner, and whether
   switching by condition (the policy table) is worth it.

Before them, **money against the threshold** (issue 28): one classifier's expected cost per
period at every threshold (:func:`costdash.threshold_money.cost_by_threshold`), the cheapest and
the pins marked, a click pinning the threshold clicked (the view's ``pins``), and its top-fraction
table with the capacity's row (:func:`~costdash.threshold_money.top_fraction_table`), through the
results service (:func:`dashboard.results.threshold_money_result`).

Controls (view fields): ``calibration`` (``choice-calibration``), ``beta_a`` and ``beta_b``
(``choice-beta-a``, ``choice-beta-b``), ``model`` (``choice-money-model``), ``capacity``
(``choice-capacity``) and ``pins`` (the ``choice-pins`` store, which a click on
``choice-money-graph`` edits). The conditions, ticked classifiers, pins, sensitivity box,
volume and unit come from the view (Explore sets them) and travel on with it.

Nothing here runs on Explore's slider path: the page computes on the server when it is opened
or its own controls change, through the results service (:mod:`dashboard.results`): the result
is cached per data set and view, the costly condition-free curves apart and reused under other
conditions (:func:`choice_json`).
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import replace
from typing import Any

import numpy as np
from dash import ClientsideFunction, Dash, Input, Output, State, dcc, html, no_update

from costdash._wording import counted
from costdash.conditions import OperatingCondition
from costdash.errors import CostdashError
from costdash.hull import optimal_vertex
from costdash.threshold_money import CostByThreshold
from costdash.view import MAX_PINS, View, field_named, number_text
from dashboard import ids
from dashboard.page_kit import (PAGES_NAMESPACE, Reply, check_fields, classifier_options, each,
                                number_box, record_view, targets, view_fields_store, warn)
from dashboard.figures.choice import MAX_COLS, decision_curve_figure, threshold_choice_figure
from dashboard.figures.classifier_list import (classifier_tools, grouped_reasons,
                                               shown_classifiers, swatch_legend)
from dashboard.figures.common import LEGEND_MAX, graph_config
from dashboard.figures.threshold_money import money_by_threshold_figure
from dashboard.jobs.gate import ComputeRefused, client_key, heavy_work, run_bounded
from dashboard.results import threshold_money_result
from dashboard.services import Services
from dashboard.storage import DatasetNotFound
from dashboard.viewmodel import hull_from_entry
from dashboard.viewstate import page_view, problems_note

NO_DATA = ("No data set is open. Upload a predictions file or open a demo on the Explore page; "
           "this page then shows what each way of choosing thresholds costs under the same "
           "conditions.")
CACHE_VERSION = 1
PAGE_MAX_POINTS = 2000
"""Each threshold-choice curve is thinned to at most this many points on the page (the
expected losses stay exact)."""

CHOICE_WIDTH = "choice-width"
"""The window's width, sent by the browser once the page loads (:data:`WIDTH`)."""
CHOICE_FILTER = "choice-filter"
CHOICE_HULL_ONLY = "choice-hull-only"
CHOICE_LEGEND = "choice-legend"
"""The classifier list's filter, flag and list (made by
:func:`dashboard.figures.classifier_list.classifier_tools` with the prefix ``choice``)."""

MONEY_MODEL = "choice-money-model"
MONEY_CAPACITY = "choice-capacity"
MONEY_GRAPH = "choice-money-graph"
MONEY_NOTE = "choice-money-note"
MONEY_TABLE = "choice-deciles"
MONEY_ERROR = "choice-money-error"
MONEY_PIN_MESSAGE = "choice-pin-message"
CHOICE_PINS = "choice-pins"
"""The money section's ids: the classifier (the view's ``model``), the capacity box (``capacity``),
the plot, the sentence under it, the top-fraction table (rows ``choice-deciles-row-<k>``, the
capacity's ``choice-deciles-capacity``), its error, the pin message, and the store of the view's
``pins`` (a click on the plot pins the threshold clicked, as Explore's Pin does)."""
VIEW_CONTROLS = {"data": (ids.CHOICE_DATA_ID, "data"),
                 "calibration": (ids.CHOICE_CALIBRATION, "value"),
                 "beta_a": (ids.CHOICE_BETA_A, "value"), "beta_b": (ids.CHOICE_BETA_B, "value"),
                 "filter": (CHOICE_FILTER, "value"), "hull_only": (CHOICE_HULL_ONLY, "value"),
                 "model": (MONEY_MODEL, "value"), "capacity": (MONEY_CAPACITY, "value"),
                 "pins": (CHOICE_PINS, "data")}
"""The view fields this page's controls set (:func:`page_kit.record_view`)."""
VIEW_FIELDS = list(VIEW_CONTROLS)

CALIBRATION_OPTIONS = [
    {"label": "scores as they are", "value": ""},
    {"label": "Platt (logistic) on folds", "value": "platt"},
    {"label": "isotonic on folds", "value": "isotonic"},
]

RELEVANT = ("models", "p_pos", "cost_fn", "cost_fp", "cost_tp", "cost_tn", "volume", "unit",
            "sens_p", "sens_fn", "sens_fp", "pins", "calibration", "beta_a", "beta_b")
"""The view fields the page's numbers depend on (its cache key)."""


# --- layout ----------------------------------------------------------------------------------

MIN_PANEL_WIDTH = 300
"""Narrowest a plot (a panel of the cost grid included) is drawn, in CSS pixels (issue 23: at
390 px the grid's three panels were ~100 px each). Below it the grid scrolls sideways."""


def grid_columns(width: Any) -> int:
    """Panels per row of the cost grid for a window ``width`` px wide (the browser's, sent once
    the page loads; None: :data:`MAX_COLS`): as many as keep ~300 px each, at least one."""
    if not isinstance(width, (int, float)) or width <= 0:
        return MAX_COLS
    return max(1, min(MAX_COLS, int((width - 100) // 360)))


def grid_min_width(columns: int) -> dict[str, str]:
    """The cost grid's style: :data:`MIN_PANEL_WIDTH` per column plus the axes' margins; wider
    than its box, it scrolls sideways."""
    least = MIN_PANEL_WIDTH if columns == 1 else columns * MIN_PANEL_WIDTH + 100
    return {"minWidth": f"{least}px"}


WIDTH = ClientsideFunction(PAGES_NAMESPACE, "windowWidth")
"""Clientside (assets/pages.js ``windowWidth``): the window's width."""
"""Clientside: the window's width, once the page's reference is set (before the page's
callback, which waits for it: one computation, in the right number of columns)."""


def _graph(id_: str, caption: str) -> html.Figure:
    cost = id_ == ids.CHOICE_COST_GRAPH
    # At least one plot's width; the panel grid's is set with its columns (grid_min_width).
    width = MIN_PANEL_WIDTH
    return html.Figure(className="plot choice-plot", children=[
        html.Div(style={"overflowX": "auto"}, children=dcc.Graph(
            id=id_, figure=threshold_choice_figure([], {}) if cost
            else decision_curve_figure(None, {}),
            config=graph_config(id_.removesuffix("-graph")), className="graph",
            style={"minWidth": f"{width}px"})),
        html.Figcaption(caption),
    ])


HELP_COST = html.Details(className="help", children=[
    html.Summary("What these curves are, and how the losses are averaged"),
    html.P(["The ", html.B("optimal"), " curve is the classifier's own lower envelope: the best "
            "threshold chosen with hindsight at every condition. Deployed systems choose "
            "thresholds by a rule. ", html.B("Score-driven"), " (the Brier curve) reads the "
            "scores as probabilities and flags score ≥ c, the cost proportion "
            "c = C(+|−)/(C(−|+) + C(+|−)) at the data's prevalence; each vertical step is a "
            "score where the flagged set changes. ", html.B("Rate-driven"), " flags the share "
            "1 − c of all cases. ", html.B("Fixed"), " keeps one threshold (your pin for that "
            "classifier on Explore, else its best threshold at today's conditions) whatever the "
            "conditions: one straight cost line."]),
    html.P(["Expected loss: the mean normalized cost with PC(+) uniform on [0, 1] (or the "
            "Beta you set), the same measure as the envelope's area; the gaps are named: ",
            html.B("calibration loss"), " = score-driven − optimal, ", html.B("rate loss"),
            " = rate-driven − optimal, ", html.B("fixed loss"), " = fixed − optimal. Over "
            "cost proportions instead (the papers' measure, costs summing to 2) the Brier curve's "
            "area is the Brier score and the rate-driven one's is 1/3 + π(1 − π)(1 − 2·AUC) "
            "(docs/threshold-choice.md). The H-measure (Hand) uses Beta(2, 1 + n₋/n₊) over the "
            "cost proportion, the hmeasure package's default."]),
    html.P(["Scores that are not probabilities (outside [0, 1]) have no Brier curve; pick a ",
            html.B("calibration"), ": each fold's scores are mapped by a Platt or isotonic "
            "fit on the other folds (the data's fold column, else 5 stratified folds), and the "
            "score-driven and decision curves are those of the calibrated scores. It refits per "
            "fold: a few seconds per 100,000 scores."]),
])

HELP_DCA = html.Details(className="help", children=[
    html.Summary("Decision curves and cost space: the exact correspondence"),
    html.P(["A case is flagged when its score ≥ pₜ, and net benefit = TP/n − FP/n · pₜ/(1 − pₜ); "
            "treat-all flags everyone, treat-none no one (0). A threshold probability ", html.B(
                "is a cost ratio"), ": C(+|−)/C(−|+) = pₜ/(1 − pₜ), i.e. pₜ = C(+|−) / (C(−|+) + "
            "C(+|−)), the cost proportion (with costs of correct decisions, their differences). "
            "It does not depend on p(+). At the test set's prevalence π it is the cost-space "
            "point PC(+) = π(1 − pₜ) / (π(1 − pₜ) + (1 − π)pₜ), and net benefit = π − "
            "(π(1 − pₜ) + (1 − π)pₜ)/(1 − pₜ) · NE: a model's decision curve is its score-driven "
            "(Brier) curve re-scaled, treat-all and treat-none are the trivial classifiers."]),
    html.P("Decision curves read scores as probabilities: a classifier whose scores are not in "
           "[0, 1] is not drawn unless a calibration is picked above."),
])

HELP_ROBUST = html.Details(className="help", children=[
    html.Summary("How the robust choices are found"),
    html.P(["Candidates are every threshold of every ticked classifier and the trivial choices. ",
            html.B("Regret"), " at a condition is a choice's cost minus the best any classifier "
            "reaches there (the envelope), per period. It is convex in the costs, so its worst "
            "case over the box is at one of its 8 corners. ", html.B("Minimax regret"), ": the "
            "smallest worst case. ", html.B("Bayes"), ": the least expected cost with p(+) and "
            "the costs uniform over their ranges (the choice optimal at the box's centre). When "
            "no fixed choice keeps the worst-case regret at 0, ", html.B("switching"), " by "
            "condition (the policy table) is worth it to the extent of the expected saving "
            "shown."]),
])


def reference(view: View, *, shared: bool = False) -> dict[str, Any] | None:
    """What the page keeps of the view: the data set and the fields its numbers depend on (and
    whether it is a read-only link's, whose view never records the data set id)."""
    if not view.data:
        return None
    return {"id": view.data, "view": view.to_json(), "shared": shared}


def layout(query: Mapping[str, Any], services: Services, *, shared: Any = None,
           **_: Any) -> html.Div:
    """The Threshold choice page, initialised from the view in the URL query (with ``shared``,
    a saved analysis opened by its read-only link at ``/s/<token>/choice``: the data comes
    from the analysis and nothing is saved)."""
    view, problems = page_view(query)
    if shared is not None:
        view = replace(view, data=shared.dataset_id)
    beta_a = view.beta_a
    beta_b = view.beta_b
    return html.Div(className="choice-page", children=[
        dcc.Store(id=ids.CHOICE_REF, data=reference(view, shared=shared is not None)),
        dcc.Store(id=ids.CHOICE_DATA_ID, data=None if shared is not None else view.data),
        dcc.Store(id=ids.CHOICE_URL),
        view_fields_store(ids.CHOICE_URL, VIEW_CONTROLS),
        dcc.Store(id=CHOICE_WIDTH),
        dcc.Store(id=CHOICE_PINS, data=field_named("pins").to_json_value(view.pins)
                  if view.pins else []),
        *([html.P([html.B(f"Shared analysis: {shared.name}"), " — read-only: nothing you do "
                   "here is saved."], className="shared-banner")] if shared is not None
          else []),
        html.Section(className="data-bar folds-bar", children=[
            problems_note(problems),
            html.P(id=ids.CHOICE_CONDITIONS, className="choice-conditions"),
            html.Div(className="folds-controls", children=[
                html.Div(className="folds-field", style={"minWidth": "15rem"},
                         title="Each fold's scores mapped by a calibration fitted on the other "
                               "folds (the data's, else 5 stratified ones); a few seconds per "
                               "100,000 scores.", children=[
                    html.Label("Score-driven and decision curves of",
                               htmlFor=ids.CHOICE_CALIBRATION),
                    dcc.Dropdown(id=ids.CHOICE_CALIBRATION, options=CALIBRATION_OPTIONS,
                                 value=view.calibration or "", clearable=False,
                                 searchable=False),
                ]),
                html.Div(className="folds-field", children=[
                    html.Label(["Expected losses with PC(+) ~ Beta(a, b): a ",
                                html.Span("(empty: 1)", className="hint")],
                               htmlFor=ids.CHOICE_BETA_A),
                    number_box(ids.CHOICE_BETA_A, beta_a, placeholder="1"),
                ]),
                html.Div(className="folds-field", children=[
                    html.Label(["b ", html.Span("(both empty: uniform)", className="hint")],
                               htmlFor=ids.CHOICE_BETA_B),
                    number_box(ids.CHOICE_BETA_B, beta_b, placeholder="1"),
                ]),
                html.Div(className="folds-field", children=[
                    html.Span("Download", className="label"),
                    html.A("choice.json", href="#", className="export-link",
                           **{"data-export": "choice.json"}),
                ]),
            ]),
            html.Div(id=ids.CHOICE_INFO, className="dataset-info"),
            html.Div(id=ids.CHOICE_ERROR, className="error", role="alert"),
            html.Div(id=ids.CHOICE_MESSAGE, className="notice", role="status",
                     children=None if view.data else NO_DATA),
        ]),
        html.Section(className="card choice-classifiers", children=[
            classifier_tools("choice", view)]),
        money_section(view),
        html.Section(className="card", children=[
            html.H2("What each way of choosing thresholds costs"),
            _graph(ids.CHOICE_COST_GRAPH,
                   "Cost space per classifier: optimal (its envelope, black), score-driven "
                   "(Brier curve, vermillion; vertical steps are jumps), rate-driven (blue, "
                   "dotted), the fixed threshold (green, dashed) and the trivial classifiers "
                   "(grey); red dotted: your PC(+); shaded: the sensitivity box. The y axis is "
                   "zoomed to the optimal, score-driven and fixed curves: double-click a panel "
                   "to see the rate-driven one whole."),
            html.Div(id=ids.CHOICE_TABLE, style={"overflowX": "auto"}),
            html.Div(id=ids.CHOICE_REFUSED, className="note"),
            HELP_COST,
        ]),
        html.Section(className="card", children=[
            html.H2("Decision curves"),
            html.P(id=ids.CHOICE_DCA_NOTE, className="choice-sentence"),
            _graph(ids.CHOICE_DCA_GRAPH,
                   "Net benefit per case against the threshold probability: each classifier, "
                   "treat all (dashed grey), treat none (black); red dotted: the pₜ of your "
                   "costs."),
            HELP_DCA,
        ]),
        html.Section(className="card", children=[
            html.H2("Choices that hold up when the conditions are uncertain"),
            html.Div(id=ids.CHOICE_ROBUST),
            HELP_ROBUST,
        ]),
    ])


# --- server-side handlers (plain functions; the callbacks below only wire them) ---------------

CURVES_FIELDS = ("models", "calibration", "beta_a", "beta_b")
"""The view fields the condition-free curves depend on (their own cache key): a change of the
conditions, pins or box reuses them and computes only what it changes."""


def choice_json(services: Services, data_id: str, view: View) -> dict[str, Any]:
    """:func:`costdash.choice_summary.choice_summary_of_view` of a stored data set, through the
    results service (:meth:`dashboard.results.Results.choice_text`): cached per data set and
    view (the fields of :data:`RELEVANT`); its condition-free curves are cached apart, per data
    set and :data:`CURVES_FIELDS`, and reused under other conditions, so a new condition
    computes only its own part. A read-only handle gets the thinned scope.

    A view not cached yet is computed through the compute gate (issue 22, finding 7): one slot
    counted against the request's client and ``data_id``, in a child process with a deadline;
    raises :class:`dashboard.jobs.gate.ComputeRefused` when no slot is free."""
    client = client_key()

    @contextmanager
    def gated() -> Iterator[Callable[[Callable[[], Any]], Any]]:
        with heavy_work(services, client, "threshold choice", handle=data_id) as deadline:
            yield lambda fn: run_bounded(fn, timeout=deadline.seconds_left(),
                                         what="threshold choice")

    return json.loads(services.results.choice_text(data_id, view, max_points=PAGE_MAX_POINTS,
                                                   run=gated))


def _loss(x: float | None) -> str:
    return "–" if x is None else f"{x:.4f}"


def _num(x: float | None, digits: int = 4) -> str:
    return "–" if x is None or not math.isfinite(x) else f"{x:.{digits}g}"


def _money(x: float, unit: str) -> str:
    """Money as Explore writes it: the number, then the unit."""
    return f"{x:,.2f} {unit}".strip()


def _choice_text(classifier: str, threshold: float | None) -> str:
    if threshold is None:
        return {"all-negative": "flag nothing (all-negative)",
                "all-positive": "flag everything (all-positive)"}.get(classifier, classifier)
    return f"{classifier} at score ≥ {number_text(threshold)}"


def loss_table(summary: dict[str, Any]) -> html.Table:
    """Expected losses of each method, the named gaps, H-measure and Brier score by AUC."""
    head = html.Thead(html.Tr([html.Th(h) for h in (
        "classifier", "AUC", "H-measure", "Brier score", "optimal", "score-driven",
        "rate-driven", "fixed", "fixed threshold", "calibration loss", "rate loss",
        "fixed loss")]))
    body = []
    for k, c in enumerate(summary["classifiers"]):
        tc, gaps = c["threshold_choice"], c["threshold_choice_gaps"]
        loss = {m: (tc[m] or {}).get("expected_loss") for m in tc}
        fixed = tc.get("fixed") or {}
        where = {"pin": " (pinned)", "conditions": " (best now)"}.get(c.get("fixed_from"), "")
        body.append(html.Tr(id=f"{ids.CHOICE_TABLE}-row-{k}", children=[
            html.Th(c["name"]),
            html.Td(_num(c["auc"]), className="num"),
            html.Td(_num(c["h_measure"]), className="num"),
            html.Td(_num(c["brier_score"]), className="num"),
            html.Td(_loss(loss.get("optimal")), className="num"),
            html.Td(_loss(loss.get("score_driven")), className="num"),
            html.Td(_loss(loss.get("rate_driven")), className="num"),
            html.Td(_loss(loss.get("fixed")), className="num"),
            html.Td(("–" if fixed.get("threshold") is None
                     else f"≥ {number_text(fixed['threshold'])}") + where,
                    style={"whiteSpace": "nowrap"}),
            html.Td(_loss(gaps.get("calibration_loss")), className="num"),
            html.Td(_loss(gaps.get("rate_loss")), className="num"),
            html.Td(_loss(gaps.get("fixed_loss")), className="num"),
        ]))
    return html.Table(className="folds-table choice-table", children=[head, html.Tbody(body)])


def _beta_words(beta: list[float]) -> str:
    return ("PC(+) uniform on [0, 1]" if beta == [1.0, 1.0]
            else f"PC(+) ~ Beta({beta[0]:g}, {beta[1]:g})")


def dca_note(summary: dict[str, Any]) -> list:
    """The sentence linking the decision curves to the conditions."""
    dca, cond = summary["decision_curves"], summary["conditions"]
    cur = dca["current"]
    pt = cur["pt"]
    best = [(n, v) for n, v in cur["net_benefit"].items() if v is not None]
    best.sort(key=lambda nv: -nv[1])
    parts: list[Any] = [
        "Your costs: C(+|−)/C(−|+) = ", html.B(_num(cur["cost_ratio"])), ", so pₜ = ",
        html.B(_num(pt), id=ids.CHOICE_PT), " (flag score ≥ pₜ). At the test set's prevalence "
        f"π = {_num(dca['prevalence'])} that is PC(+) = {_num(cur['pc_at_prevalence'])} in cost "
        f"space; your conditions' PC(+) is {_num(cond['pc'])} at p(+) = {_num(cond['p_pos'])}."]
    if best:
        name, value = best[0]
        parts += [" At pₜ the highest net benefit is ", html.B(name), f"'s {value:.4f} per case "
                  f"(treat-all {_num(cur['treat_all'])}, treat-none 0)."]
    if summary.get("calibration"):
        parts.append(f" Scores calibrated by {summary['calibration']} on folds.")
    return parts


def _beta_choices(summary: dict[str, Any]) -> list:
    """The robust choices under the view's Beta over PC(+) (none without one)."""
    rp = summary.get("robust_pc")
    if rp is None:
        return []
    a, b = rp["beta"]
    lo, hi = rp["pc_range"]
    by, mm = rp["bayes"], rp["minimax_regret"]
    return [html.P(id=ids.CHOICE_BETA_CHOICES, className="choice-beta", children=[
        f"With PC(+) ~ Beta({a:g}, {b:g}): the least expected normalized cost is ",
        html.B(_choice_text(by["classifier"], by["threshold"])),
        f" ({by['expected_cost']:.4f}); over its central 95% (PC(+) {lo:.3g} to {hi:.3g}) the "
        "smallest worst-case normalized regret is ",
        html.B(_choice_text(mm["classifier"], mm["threshold"])),
        f" ({mm['max_regret']:.4f})."])]


def robust_panel(summary: dict[str, Any], home: str = "/explore") -> list:
    """The minimax-regret and Bayes choices, the worst corner, switching and the policy
    (``home``: Explore's address, inside a read link the link's own)."""
    robust = summary.get("robust")
    if robust is None:
        return [html.P([summary.get("robust_refused") or "No robust choice.", " ",
                        dcc.Link("Set ranges on Explore", href=home), "."],
                       className="note"), *_beta_choices(summary)]
    unit = summary.get("unit") or ""
    box, mm, by, sw = robust["box"], robust["minimax_regret"], robust["bayes"], \
        robust["switching"]
    wc = mm["worst_condition"]
    per = "per period" if summary.get("volume") else "per case"
    vol = summary.get("volume") or 0

    def rng(name: str, lo_hi: list[float]) -> str:
        lo, hi = lo_hi
        return f"{name} = {lo:g}" if lo == hi else f"{name} in [{lo:g}, {hi:g}]"

    rows = [html.Tr([html.Th(c) for c in ("from PC(+)", "to PC(+)", "use", "threshold")])]
    for p in robust.get("policy", []):
        rows.append(html.Tr([html.Td(f"{p['pc_lo']:.4f}", className="num"),
                             html.Td(f"{p['pc_hi']:.4f}", className="num"),
                             html.Td(p["classifier"]),
                             html.Td("–" if p["threshold"] is None
                                     else f"score ≥ {number_text(p['threshold'])}")]))
    worth = sw["worth_it"]
    return [
        html.P(["Over the box ", rng("p(+)", box["p_pos"]), ", ", rng("C(−|+)", box["cost_fn"]),
                ", ", rng("C(+|−)", box["cost_fp"]),
                f" (PC(+) from {robust['pc_range'][0]:.4g} to {robust['pc_range'][1]:.4g}), "
                + (f"money per period of {vol:,.0f} cases:" if vol else "money per case:")]),
        html.Ul(className="choice-robust-list", children=[
            html.Li(["Minimax regret: ", html.B(_choice_text(mm["classifier"], mm["threshold"]),
                                                id=ids.CHOICE_MINIMAX),
                     "; worst-case regret ",
                     html.B(_money(mm["max_regret"], unit), id=ids.CHOICE_MINIMAX_REGRET),
                     f" {per}, ",
                     html.Span(f"at p(+) = {wc['p_pos']:g}, C(−|+) = {wc['cost_fn']:g}, "
                               f"C(+|−) = {wc['cost_fp']:g} (PC(+) {wc['pc']:.4g})",
                               id=ids.CHOICE_WORST), "."]),
            html.Li(["Bayes (uniform over the box): ",
                     html.B(_choice_text(by["classifier"], by["threshold"]), id=ids.CHOICE_BAYES),
                     "; expected cost ", html.B(_money(by["expected_cost"], unit),
                                                id=ids.CHOICE_BAYES_COST),
                     f" {per}, worst-case regret {_money(by['max_regret'], unit)}."]),
        ]),
        html.P(id=ids.CHOICE_SWITCHING, className="choice-switching", children=(
            [html.B("Switching by condition is worth it: "),
             f"no single choice keeps the worst-case regret within "
             f"{_money(sw['tolerance'], unit)}; the policy table below ({len(sw['optimal_choices'])}"
             f" choices reached in the box) saves {_money(sw['expected_saving'], unit)} {per} on "
             "average over the Bayes choice, and up to the minimax regret when the conditions "
             "sit at the worst corner."] if worth else
            [html.B("One fixed choice is enough: "),
             "it is optimal everywhere in the box (no regret), so switching saves nothing."])),
        html.Table(id=ids.CHOICE_POLICY, className="folds-table choice-policy",
                   children=[html.Tbody(rows)]),
        *_beta_choices(summary),
    ]


class ChoiceOutputs(Reply):
    TARGETS = targets(cost=(ids.CHOICE_COST_GRAPH, "figure"), table=ids.CHOICE_TABLE,
                      refused=ids.CHOICE_REFUSED, dca=(ids.CHOICE_DCA_GRAPH, "figure"),
                      dca_note=ids.CHOICE_DCA_NOTE, robust=ids.CHOICE_ROBUST,
                      conditions=ids.CHOICE_CONDITIONS, data_id=(ids.CHOICE_DATA_ID, "data"),
                      info=ids.CHOICE_INFO, error=ids.CHOICE_ERROR, message=ids.CHOICE_MESSAGE,
                      legend=CHOICE_LEGEND, cost_style=(ids.CHOICE_COST_GRAPH, "style"))


def _empty(message: str = "", error: str = "") -> ChoiceOutputs:
    return ChoiceOutputs(cost=threshold_choice_figure([], {}, message=message or None),
                         table="", refused="", dca=decision_curve_figure(None, {}),
                         dca_note="", robust="", conditions="", info="", error=error,
                         message=message, legend=[])


def choice_view(services: Services, ref: dict[str, Any] | None, calibration: Any,
                beta_a: Any, beta_b: Any, name_filter: Any = None,
                hull_only: Any = None, width: Any = None, pins: Any = None) -> ChoiceOutputs:
    """Everything on the page for the view in ``ref`` with the page's own controls. Computed
    for every ticked classifier (the robust choices among them all); drawn and tabled for
    those the filter and "hull classifiers only" leave (:func:`shown_classifiers`). ``pins``:
    the page's pins store (the view's, and those a click on the money plot added), which
    replace the view's."""
    ref = services.sharing.page_ref(ref)    # a read link's reference -> its handle and scope
    if not ref or not ref.get("id"):
        return ChoiceOutputs(message=NO_DATA, data_id=None)
    data_id = ref["id"]
    typed, problems = check_fields({"calibration": calibration, "beta_a": beta_a,
                                    "beta_b": beta_b})
    if typed.get("calibration") not in (None, "platt", "isotonic"):
        problems.append("Calibration must be platt or isotonic.")
    if problems:
        return ChoiceOutputs(error=warn(problems))
    base, _ = View.parse_lenient(ref.get("view") or {})
    view = replace(base, calibration=typed.get("calibration"), beta_a=typed.get("beta_a"),
                   beta_b=typed.get("beta_b"))
    if pins is not None:
        view = replace(view, pins=_pins_of(pins) or None)
    try:
        full = services.views.full(data_id)
        summary = choice_json(services, data_id, view)
    except (DatasetNotFound, CostdashError) as exc:
        return _empty(error=str(exc))
    except ComputeRefused as exc:  # busy, over the client's share, or stopped at the deadline
        return _empty(error=exc.message)
    index = {c["name"]: c["index"] for c in full["classifiers"]}
    cond = summary["conditions"]
    robust = summary.get("robust")
    out = ChoiceOutputs(data_id=None if ref.get("shared") else data_id, error="", message="")
    ticked = [c["name"] for c in summary["classifiers"]]
    on_hull = (set(hull_from_entry(services.views.view(data_id, ticked)["hull"]).classifier)
               if hull_only else None)
    names = set(shown_classifiers(ticked, name_filter, hull_only, on_hull))
    shown = [c for c in summary["classifiers"] if c["name"] in names]
    out.legend = swatch_legend([c["name"] for c in shown], index, len(ticked))
    if not shown:
        out.message = "No ticked classifier is left by the filter and the hull-only flag."
    out.info = (f"{full['name']}: {full['n']:,} cases, {full['n_pos']:,} positive (prevalence "
                f"{summary['prevalence']:.4g}); {len(summary['classifiers'])} of "
                f"{len(full['classifiers'])} classifiers ticked"
                + (f"; {counted(full['n_folds'], 'fold')}" if full.get("n_folds") else
                   "; no fold column (calibration uses 5 stratified folds)"))
    out.conditions = [
        "Conditions from the view: p(+) = ", html.B(_num(cond["p_pos"])), ", C(−|+) = ",
        html.B(_num(cond["cost_fn"])), ", C(+|−) = ", html.B(_num(cond["cost_fp"])),
        " → PC(+) = ", html.B(_num(cond["pc"]), id=ids.CHOICE_PC), ". Expected losses with ",
        _beta_words(summary["beta"]), ". ",
        dcc.Link("Change them on Explore", href=ref["home"]), "."]
    columns = grid_columns(width)
    out.cost_style = grid_min_width(min(columns, max(1, len(shown))))
    out.cost = threshold_choice_figure(
        shown, index, pc_now=cond["pc"], columns=columns,
        box_pc=None if robust is None else robust["pc_range"],
        uirevision=f"{ref['revision']}:{columns}:{','.join(c['name'] for c in shown)}")
    out.table = loss_table({**summary, "classifiers": shown})
    # One line per reason, not one per classifier (issue 23: a wall of text at 50).
    out.refused = [
        *grouped_reasons({c["name"]: c["threshold_choice_gaps"]["score_driven_refused"]
                          for c in shown
                          if c["threshold_choice_gaps"].get("score_driven_refused")},
                         "score-driven curve"),
        *grouped_reasons({n: why for n, why in
                          (summary["decision_curves"].get("refused") or {}).items()
                          if n in names}, "decision curve")]
    dca = summary["decision_curves"]
    dca = {**dca, "net_benefit": {k: v for k, v in dca["net_benefit"].items()
                                  if k in names or k in ("all", "none")},
           "refused": {k: v for k, v in (dca.get("refused") or {}).items() if k in names}}
    out.dca = decision_curve_figure(dca, index, uirevision=f"{ref['revision']}:dca",
                                    legend=False if len(shown) > LEGEND_MAX else None)
    out.dca_note = dca_note(summary)
    out.robust = robust_panel(summary, ref["home"])
    return out


# --- money against the threshold and the top-fraction table (issue 28, items 1 and 2) -----------



def money_json(services: Services, data_id: str, model: str, condition: OperatingCondition,
               share: float | None, pins: list[float]) -> dict[str, Any]:
    """Money against the threshold of ``model`` and its top-fraction table with the capacity's
    ``share``, through the results service (:func:`dashboard.results.threshold_money_result`,
    kind ``threshold-money``; the thinned curve in the thinned scope)."""
    return threshold_money_result(services.results, services.views, data_id, model, condition,
                                  share, pins)


def money_curve(result: dict[str, Any], condition: OperatingCondition) -> CostByThreshold:
    """The drawn points of :func:`money_json`'s result as the core's result."""
    def arr(key: str) -> np.ndarray:
        return np.array([np.nan if v is None else v for v in result[key]], dtype=np.float64)

    return CostByThreshold(classifier=result["classifier"], condition=condition,
                           threshold=arr("threshold"), fpr=arr("fpr"), tpr=arr("tpr"),
                           normalized_cost=arr("normalized_cost"),
                           expected_cost=arr("expected_cost"), best=int(result["best"]))


def _pct(x: float | None) -> str:
    return "–" if x is None else f"{x:.1%}"


def decile_table(table: dict[str, Any], volume: float, unit: str) -> html.Table:
    """Per top fraction of scores: the cutoff, cases flagged, positives captured, cumulative
    precision, lift and the expected cost per period; the capacity's row marked."""
    # The columns a narrow screen shows first come first (the table scrolls sideways).
    head = html.Thead(html.Tr([html.Th(h) for h in (
        "top of scores", "flag score ≥", f"expected cost per {'period' if volume else 'case'}",
        "cumulative precision", "lift", "positives captured", "share of positives",
        "flagged")]))
    rows = []
    cap = table.get("capacity")
    for k, f in enumerate(table["fraction"]):
        t = table["threshold"][k]
        cost = table["expected_cost"][k]
        capacity = k == cap
        rows.append(html.Tr(
            id=f"{MONEY_TABLE}-capacity" if capacity else f"{MONEY_TABLE}-row-{k}",
            className="capacity-row" if capacity else None,
            style={"fontWeight": "bold", "background": "#fff8c5"} if capacity else None,
            children=[
                html.Th(f"{f * 100:.4g}% (capacity)" if capacity else f"{f * 100:.4g}%"),
                html.Td("flag nothing" if t is None else number_text(float(f"{t:.6g}"))),
                html.Td("–" if cost is None else _money(cost * (volume or 1), unit),
                        className="num", style={"whiteSpace": "nowrap"}),
                html.Td(_pct(table["precision"][k]), className="num"),
                html.Td(_num(table["lift"][k], 3), className="num"),
                html.Td(f"{table['positives'][k]:,}", className="num"),
                html.Td(_pct(table["recall"][k]), className="num"),
                html.Td(f"{table['flagged'][k]:,}", className="num"),
            ]))
    return html.Table(className="folds-table choice-deciles", children=[head, html.Tbody(rows)])


class MoneyOutputs(Reply):
    TARGETS = targets(figure=(MONEY_GRAPH, "figure"), options=(MONEY_MODEL, "options"),
                      model=(MONEY_MODEL, "value"), note=MONEY_NOTE, table=MONEY_TABLE,
                      error=MONEY_ERROR)


def _pins_of(pins: Any) -> tuple[tuple[str, float], ...]:
    try:
        return field_named("pins").parse(pins) or ()
    except CostdashError:
        return ()


def money_view(services: Services, ref: dict[str, Any] | None, model: Any, capacity: Any,
               pins: Any) -> MoneyOutputs:
    """Money against the threshold of one classifier at the view's conditions, its cheapest
    threshold and pins, and its top-fraction table with the capacity's cutoff. ``model``: the
    dropdown's (else the view's, else the classifier of the current choice, else the first
    ticked); ``pins``: the page's pins store (the view's, plus the clicks)."""
    ref = services.sharing.page_ref(ref, services.views.full)
    empty = money_by_threshold_figure(None)
    if not ref or not ref.get("id"):
        return MoneyOutputs(figure=empty, options=[], note="", table="", error="")
    typed, problems = check_fields({"capacity": capacity})
    if problems:
        return MoneyOutputs(error=warn(problems))
    data_id = ref["id"]
    view, _ = View.parse_lenient(ref.get("view") or {})
    try:
        full = services.views.full(data_id)
        names = [c["name"] for c in full["classifiers"]]
        ticked = view.selected(names) or names
        condition = view.condition(float(full["prevalence"]))
        if model not in ticked:
            model = view.model if view.model in ticked else None
        if model is None:
            vertex = optimal_vertex(hull_from_entry(services.views.view(data_id, ticked)["hull"]),
                                    condition)
            model = vertex.classifier if vertex.classifier in ticked else ticked[0]
        volume = float(view.volume)
        share = (None if typed["capacity"] is None or volume <= 0
                 else float(typed["capacity"]) / volume)
        pinned = [(k, t) for k, (n, t) in enumerate(_pins_of(pins)) if n == model]
        result = money_json(services, data_id, model, condition, share, [t for _, t in pinned])
    except (DatasetNotFound, CostdashError) as exc:
        return MoneyOutputs(figure=empty, note="", table="", error=str(exc))
    curve = money_curve(result, condition)
    unit = view.unit or ""
    index = {c["name"]: c["index"] for c in full["classifiers"]}
    table = result["table"]
    cap_k = table.get("capacity")
    cap_threshold = None if cap_k is None else table["threshold"][cap_k]
    out = MoneyOutputs(options=classifier_options(full, ticked), model=model, error="")
    out.figure = money_by_threshold_figure(
        curve, volume=volume or 1.0, unit=unit, index=index.get(model, 0),
        pins=[t for _, t in pinned], pin_slots=[k for k, _ in pinned],
        capacity_threshold=cap_threshold,
        uirevision=f"{ref['revision']}:{model}")
    per = "per period" if volume else "per case"
    best_t = curve.best_threshold
    note: list[Any] = [
        html.B(model), ": the cheapest threshold at these conditions is ",
        html.B("flag nothing" if best_t is None else f"score ≥ {number_text(best_t)}",
               id=f"{MONEY_NOTE}-best"),
        f", expected cost {_money(curve.best_expected_cost * (volume or 1), unit)} {per}."]
    for k, t in pinned:
        i = curve.at(t)
        extra = (curve.expected_cost[i] - curve.best_expected_cost) * (volume or 1)
        note.append(f" Pin {k + 1} (score ≥ {number_text(t)}) costs "
                    f"{_money(curve.expected_cost[i] * (volume or 1), unit)}, "
                    f"{_money(extra, unit)} more.")
    if share is not None and share >= 1:
        note.append(f" The capacity ({typed['capacity']:,.6g} of {volume:,.6g} cases) flags "
                    "everything it likes: no cutoff.")
    elif cap_k is not None:
        note.append(f" Within the capacity ({share:.2%} of cases) the top scores give a cost of "
                    f"{_money(table['expected_cost'][cap_k] * (volume or 1), unit)} {per}.")
    if ref.get("shared"):
        note.append(" On this read-only link the curve is the thinned one the link shows.")
    out.note = note
    out.table = decile_table(table, volume, unit)
    return out


def pin_click(click: Any, pins: Any, model: Any, shared: bool = False) -> tuple[Any, str]:
    """A click on the money plot: pin the threshold clicked for ``model`` (the view's pins, at
    most :data:`costdash.view.MAX_PINS`), or unpin it when it is pinned already. Returns the new
    pins (as the view's JSON, or ``no_update``) and a message."""
    points = (click or {}).get("points") or []
    if not points or not model:
        return no_update, ""
    # The x of every point of the plot is its threshold (customdata says so too, but a click
    # on a trace whose arrays the figure sent base64-encoded carries no customdata).
    t = points[0].get("customdata")
    if isinstance(t, list):
        t = t[0] if t else None
    if t is None:
        t = points[0].get("x")
    if not isinstance(t, (int, float)) or isinstance(t, bool) or not math.isfinite(t):
        return no_update, "Flagging nothing has no threshold to pin."
    current = list(_pins_of(pins))
    if (model, float(t)) in current:
        current.remove((model, float(t)))
        message = f"Unpinned {model} at score ≥ {number_text(float(t))}."
    elif len(current) >= MAX_PINS:
        return no_update, f"At most {MAX_PINS} pinned thresholds: click a pin to remove it."
    else:
        current.append((model, float(t)))
        message = (f"Pinned {model} at score ≥ {number_text(float(t))} (pin {len(current)}); "
                   "click it again to unpin.")
    if shared:
        message += " A what-if on this read-only link: nothing is saved."
    return field_named("pins").to_json_value(current) if current else [], message


def money_section(view: View) -> html.Section:
    """The card: classifier, capacity, the plot, the sentence and the table."""
    return html.Section(className="card choice-money", children=[
        html.H2("Money against the threshold"),
        html.Div(className="folds-controls", children=[
            html.Div(className="folds-field folds-model-field", style={"minWidth": "14rem"},
                     children=[
                html.Label("Classifier", htmlFor=MONEY_MODEL),
                dcc.Dropdown(id=MONEY_MODEL, options=[view.model] if view.model else [],
                             value=view.model, clearable=False, searchable=True,
                             placeholder="type to find a classifier"),
            ]),
            html.Div(className="folds-field", style={"minWidth": "14rem"}, children=[
                html.Label(["Capacity: cases flagged per period ",
                            html.Span(f"(volume {view.volume:,.0f})", className="hint")],
                           htmlFor=MONEY_CAPACITY),
                number_box(MONEY_CAPACITY, view.capacity, placeholder="no limit"),
            ]),
            html.Div(className="folds-field", children=[
                html.Span("Download", className="label"),
                html.A("threshold-money.json", href="#", className="export-link",
                       style={"whiteSpace": "nowrap"},
                       **{"data-export": "threshold-money.json"}),
            ]),
        ]),
        html.Div(id=MONEY_ERROR, className="error", role="alert"),
        html.Figure(className="plot choice-plot", children=[
            dcc.Graph(id=MONEY_GRAPH, figure=money_by_threshold_figure(None),
                      config=graph_config("choice-money"), className="graph"),
            html.Figcaption("Expected cost per period against the threshold (flag a case when "
                            "its score ≥ it) at the view's conditions: ★ the cheapest, ◆ the "
                            "pins, dashed: the capacity's cutoff. Click a point to pin its "
                            "threshold (click a pin to unpin it)."),
        ]),
        html.P(id=MONEY_PIN_MESSAGE, className="note", role="status"),
        html.P(id=MONEY_NOTE, className="choice-sentence"),
        html.H3("Acting on the top scores"),
        html.Div(id=MONEY_TABLE, style={"overflowX": "auto"}),
        html.Details(className="help", children=[
            html.Summary("How the table is read"),
            html.P(["Row ", html.I("top k%"), " flags the cases with the highest scores, as "
                    "many as fit in k% of all cases without splitting a tie (so fewer where "
                    "many cases share a score). ", html.B("Cumulative precision"), ": positives "
                    "among them; ", html.B("lift"), ": that over the prevalence; ",
                    html.B("positives captured"), ": how many of all positives they hold. The ",
                    html.B("capacity"), " row (cases per period over the volume) moves with the "
                    "capacity box. Costs are at the view's conditions (p(+) and the costs), "
                    "counts are the test set's."]),
        ]),
    ])


# --- callbacks -----------------------------------------------------------------------------------

def register_callbacks(app: Dash, services: Services) -> None:
    @app.callback(*ChoiceOutputs.outputs(), Input(ids.CHOICE_REF, "data"),
                  *each(Input, "value", ids.CHOICE_CALIBRATION, ids.CHOICE_BETA_A,
                        ids.CHOICE_BETA_B, CHOICE_FILTER, CHOICE_HULL_ONLY),
                  Input(CHOICE_WIDTH, "data"), Input(CHOICE_PINS, "data"))
    def _view(ref, calibration, beta_a, beta_b, name_filter, hull_only, width, pins):
        return choice_view(services, ref, calibration, beta_a, beta_b, name_filter,
                           hull_only, width, pins).as_tuple()

    @app.callback(*MoneyOutputs.outputs(), Input(ids.CHOICE_REF, "data"),
                  Input(MONEY_MODEL, "value"), Input(MONEY_CAPACITY, "value"),
                  Input(CHOICE_PINS, "data"))
    def _money(ref, model, capacity, pins):
        return money_view(services, ref, model, capacity, pins).as_tuple()

    @app.callback(Output(CHOICE_PINS, "data"), Output(MONEY_PIN_MESSAGE, "children"),
                  Input(MONEY_GRAPH, "clickData"), State(CHOICE_PINS, "data"),
                  State(MONEY_MODEL, "value"), State(ids.CHOICE_REF, "data"),
                  prevent_initial_call=True)
    def _pin(click, pins, model, ref):
        return pin_click(click, pins, model, bool((ref or {}).get("shared")))

    app.clientside_callback(WIDTH, Output(CHOICE_WIDTH, "data"),
                            Input(ids.CHOICE_REF, "data"))

    record_view(app, ids.CHOICE_URL, VIEW_CONTROLS)
