"""The Explore page: ROC space and cost space side by side, driven by live operating conditions.

Server side (this module): the layout (initialised from the URL query), and thin callbacks that
load a data set's cached view model and draw the two figures' static traces, store demo data
sets, and ask the core for sensitivity ranges and constraints. Browser side
(``assets/explore.js``, arithmetic in ``assets/costmath.js``): everything a slider or number box
moves -- the iso-performance line, the chosen vertex, the PC(+) line, the readouts and the
address bar -- from the hull vertices held in ``view-store``, so a slider never waits for the
server. The readouts are written by that JS into the elements laid out here (their text is not a
Dash prop), see docs/dashboard.md for why.

Element ids used by users' automation and the acceptance checks (a stable contract):
``upload``, ``demo-<name>``, ``p-pos-input``, ``cost-fn-input``, ``cost-fp-input``,
``volume-input``, ``pc-value``, ``slope-value``, ``chosen-classifier``, ``chosen-threshold``,
``normalized-cost``, ``expected-cost``, ``roc-graph``, ``cost-graph``, ``upload-error``.

Pinned thresholds (``pins=gbm:0.5,logreg:0.42``, at most :data:`costdash.view.MAX_PINS`): the
panel's Pin/Remove edit the view's pins in the browser, :func:`pinned_result` turns them into
exact ROC points with the core (``costdash.pinned``; counts and rates only, never scores) and
``explore.js`` prices them at the conditions on every step, in fixed cards ``pin-<k>`` (ids
``pin-<k>-tp``, ``-fn``, ``-fp``, ``-tn``, ``-precision``, ``-recall``, ``-specificity``,
``-npv``, ``-f1``, ``-cost``, ``-period-cost``, ``-regret``, ``-regret-share``, ``-optimal``,
``-beats``, ``-test``, ``-remove``) and fixed shape slots. Panel ids: ``pin-model``,
``pin-slider``, ``pin-threshold-input``, ``pin-add``, ``pin-message``.

URL: ``/explore?data=<id>&p_pos=&cost_fn=&cost_fp=&volume=&unit=&models=a,b`` plus, when used,
``lines=1``, ``sens_p=lo,hi``, ``sens_fn=lo,hi``, ``sens_fp=lo,hi``, ``max_fpr=``, ``capacity=``,
``pins=``:
fields of the one view (:class:`costdash.view.View`), parsed once by the shell's routing and
written back only by ``assets/viewstate.js``; the other pages' fields ride along untouched.
"""

from __future__ import annotations

import hashlib
import json
import math
from dataclasses import dataclass, replace
from typing import Any

import flask
from dash import ClientsideFunction, Dash, Input, Output, State, ctx, dcc, html, no_update

from costdash.conditions import OperatingCondition
from costdash.criteria import (MixedOperatingPoint, SingleThreshold, neyman_pearson, sensitivity,
                               single_threshold_neyman_pearson, single_threshold_workforce,
                               workforce)
from costdash.demo import DEMOS
from costdash.errors import CostdashError, ParameterError
from costdash.pinned import pin_threshold
from costdash.roc import roc_of
from costdash.view import MAX_PINS, View, field_named
from dashboard import ids
from dashboard.services import Services
from dashboard.limits import client_limits
from dashboard.components import condition_field, number_box, open_demo
from dashboard.figures import classifier_colors, cost_figure, roc_figure
from dashboard.figures.axes import fpr_floor
from dashboard.figures.common import LEGEND_MAX, graph_config
from dashboard.figures.palette import classifier_style
from dashboard.figures.ranges import ranges_figure, ranges_height
from dashboard.storage import AnalysisRecord, DatasetNotFound, valid_id
from dashboard.viewmodel import client_model, pin_grid, pinned_entry
from dashboard.viewstate import page_view, problems_note, record_view_js

P_SLIDER = (-6.0, 6.0)
COST_SLIDER = (-3.0, 6.0)
P_MARKS = {-6: "10⁻⁶", -4: "10⁻⁴", -2: "0.01", 0: "0.5", 2: "0.99", 4: "0.9999",
           6: "1−10⁻⁶"}
COST_MARKS = {-3: "0.001", -2: "0.01", -1: "0.1", 0: "1", 1: "10", 2: "100", 3: "1k", 4: "10k",
              5: "100k", 6: "1M"}


# --- slider scales (presentation; mirrored in assets/explore.js) ---------------------------------

def p_to_slider(p: float) -> float:
    """Slider position of p(+): log10 p below 0.1, log10 of 1 - p above 0.9, linear between.

    So the marks are exact: -6 is 1e-6, -2 is 0.01, 0 is 0.5, 2 is 0.99, 6 is 1 - 1e-6.
    """
    if p <= 0.1:
        s = math.log10(p)
    elif p >= 0.9:
        s = -math.log10(1.0 - p)
    else:
        s = (p - 0.5) / 0.4
    return min(max(s, P_SLIDER[0]), P_SLIDER[1])


def cost_to_slider(c: float) -> float:
    return min(max(math.log10(c), COST_SLIDER[0]), COST_SLIDER[1])


# --- layout ----------------------------------------------------------------------------------

def _number(id_: str, value: Any, **kwargs: Any) -> dcc.Input:
    """A number box (the shared one: no min/max, bounds said by the view schema; Enter and
    leaving it commit at once, see assets/viewstate.js); label it with an enclosing
    ``html.Label`` or ``htmlFor``."""
    return number_box(id_, value, debounce=0.25, **kwargs)


def _readout(label: str, id_: str, *, title: str | None = None,
             wide: bool = False) -> html.Div:
    return html.Div(className="readout" + (" wide" if wide else ""), title=title, children=[
        html.Span(label, className="readout-label"),
        html.Span("–", id=id_, className="readout-value"),
    ])


def _retention_text(days: float) -> str:
    """How long an upload is kept (``COSTDASH_UPLOAD_RETENTION_DAYS``)."""
    if days <= 0:
        return "Uploads are kept until deleted."
    return (f"Your upload is deleted {days:g} day{'s' if days != 1 else ''} after its last "
            "upload or share; a share link keeps its data for as long as the link lives.")


def _upload_key_box(services: Services) -> list:
    """Where a public instance (``COSTDASH_UPLOAD_KEYS``) takes the key, once per browser."""
    if not services.settings.upload_keys:
        return []
    return [html.Div(className="upload-key", children=[
        html.Label(["Upload key ", dcc.Input(id=ids.UPLOAD_KEY, type="password",
                                             className="text", debounce=True)]),
        html.Button("Use key", id=ids.UPLOAD_KEY_BUTTON, n_clicks=0, className="demo-button"),
        html.Span(id=ids.UPLOAD_KEY_STATUS, className="note", **{"aria-live": "polite"}),
    ])]


def _upload_zone(services: Services) -> html.Div:
    limit_mb = services.settings.max_upload_bytes / 1024**2
    return html.Div(className="upload-block", children=[
        *_upload_key_box(services),
        html.Div(id=ids.UPLOAD, className="upload-zone", tabIndex="-1",
                 **{"data-max-bytes": str(services.settings.max_upload_bytes)}, children=[
                     html.Span("Drop a predictions file here (CSV, TSV, Parquet, JSON lines; "
                               f"up to {limit_mb:g} MB) or choose one: ",
                               className="upload-text"),
                 ]),
        html.P(_retention_text(services.settings.upload_retention_days),
               id=ids.UPLOAD_RETENTION, className="note retention"),
        html.Details(className="upload-options", children=[
            html.Summary("Reading options"),
            html.Div(className="upload-options-grid", children=[
                html.Label(["Positive label ", dcc.Input(id=ids.UPLOAD_POSITIVE, type="text",
                                                         placeholder="e.g. 1, yes, malignant",
                                                         className="text")]),
                html.Label(["Label column ", dcc.Input(id=ids.UPLOAD_LABEL_COLUMN, type="text",
                                                       placeholder="auto", className="text")]),
                html.Label(["Layout ", html.Select(id=ids.UPLOAD_LAYOUT, children=[
                    html.Option(v, value=v) for v in ("auto", "wide", "long", "counts", "score_counts")])]),
                dcc.Checklist(id=ids.UPLOAD_DROP_MISSING, className="toggle",
                              options=[{"label": " Drop rows with missing scores",
                                        "value": "drop"}], value=[]),
            ]),
        ]),
    ])


def _conditions_panel(s: View) -> html.Section:
    p_slider = p_to_slider(s.p_pos) if s.p_pos is not None else -2.0
    return html.Section(className="panel conditions", children=[
        html.H2("Operating conditions"),
        condition_field("p_pos", ids.P_POS_INPUT, s.p_pos, placeholder="p(+)", extra=[
            dcc.Slider(id=ids.P_POS_SLIDER, min=P_SLIDER[0], max=P_SLIDER[1], step=0.01,
                       value=p_slider, marks=P_MARKS, updatemode="drag",
                       allow_direct_input=False, className="slider"),
            html.Button("Use the data's prevalence", id=ids.PREVALENCE_BUTTON, n_clicks=0,
                        className="link-button")]),
        *[condition_field(name, f"{name.replace('_', '-')}-input", getattr(s, name), extra=[
            dcc.Slider(id=f"{name.replace('_', '-')}-slider", min=COST_SLIDER[0],
                       max=COST_SLIDER[1], step=0.01, value=cost_to_slider(getattr(s, name)),
                       marks=COST_MARKS, updatemode="drag", allow_direct_input=False,
                       className="slider")]) for name in ("cost_fn", "cost_fp")],
        html.Details(className="tool benefits", open=bool(s.cost_tp or s.cost_tn), children=[
            html.Summary("Costs of the correct decisions (optional)"),
            html.Div(className="field-row", children=[
                html.Label(["C(+|+): a detected positive ", _number(ids.COST_TP_INPUT, s.cost_tp)]),
                html.Label(["C(−|−): a correct rejection ", _number(ids.COST_TN_INPUT, s.cost_tn)]),
            ]),
            html.P(className="explain", children=[
                "As in Weka's cost/benefit matrix; a benefit is a negative cost (a caught "
                "fraud that recovers 40: C(+|+) = −40). The choice depends only on the "
                "differences ", html.B("C(−|+) − C(+|+)"), " and ", html.B("C(+|−) − C(−|−)"),
                ", which take the costs' place in PC(+) = p(+)(C(−|+) − C(+|+)) / "
                "[p(+)(C(−|+) − C(+|+)) + p(−)(C(+|−) − C(−|−))] and in cost space; the money "
                "figures add the constant p(+)C(+|+) + p(−)C(−|−) that no decision changes."]),
        ]),
        html.P(className="explain", children=[
            html.B("C(−|+)"), " is what a ", html.I("missed positive"),
            " costs (a positive case classified negative: an undetected tumour, an unflagged "
            "fraud). ", html.B("C(+|−)"), " is what a ", html.I("false alarm"),
            " costs (a negative case flagged positive: a needless biopsy, a blocked customer). "
            "Only p(+) and the ratio of the two costs decide which classifier and threshold "
            "are best; the costs' size sets the money figures.",
        ]),
        html.Div(className="field-row", children=[
            html.Label(["Volume (cases per period) ",
                        _number(ids.VOLUME_INPUT, s.volume)]),
            html.Label(["Currency / unit ",
                        dcc.Input(id=ids.UNIT_INPUT, type="text", value=s.unit, maxLength=12,
                                  debounce=0.25, className="text unit")]),
        ]),
        html.Div(id=ids.CONDITIONS_ERROR, className="error", role="alert"),
    ])


def _flag(id_: str, label: str, on: bool) -> dcc.Checklist:
    """A one-box toggle for a flag of the view."""
    return dcc.Checklist(id=id_, options=[{"label": label, "value": "on"}],
                         value=["on"] if on else [], className="toggle")


def _classifiers_panel(s: View) -> html.Section:
    # The list is the plots' legend past LEGEND_MAX classifiers: assets/explore.js gives each
    # row its classifier's swatch (colour, dash, marker) and hides the rows the filter leaves
    # out, with CSS it writes (no change to the Checklist's own props, see docs/dashboard.md).
    return html.Section(className="panel classifiers-panel", children=[
        html.H2("Classifiers"),
        html.Div(className="models-tools", children=[
            html.Label([html.Span("Filter classifiers", className="sr-only"),
                        dcc.Input(id=ids.MODELS_FILTER, type="text", value=s.filter or "",
                                  placeholder="filter by name", debounce=0.2, maxLength=100,
                                  className="text models-filter")]),
            html.Button("tick shown", id=ids.MODELS_TICK_SHOWN, n_clicks=0,
                        className="link-button",
                        title="Tick every classifier the filter shows (and keep the others)"),
            html.Button("only shown", id=ids.MODELS_ONLY_SHOWN, n_clicks=0,
                        className="link-button",
                        title="Tick exactly the classifiers the filter shows"),
            html.Span(id=ids.MODELS_COUNT, className="note", **{"aria-live": "polite"}),
        ]),
        dcc.Checklist(id=ids.MODELS_INPUT, options=[{"label": m, "value": m}
                                                  for m in (s.models or [])],
                      value=list(s.models or []), className="models", inputClassName="check"),
        _flag(ids.HULL_ONLY_TOGGLE, " hull classifiers only (hide the dominated ones)",
              s.hull_only),
        dcc.Checklist(id=ids.COST_LINES_TOGGLE,
                      options=[{"label": " show every cost line (not just the envelopes)",
                                "value": "lines"}],
                      value=["lines"] if s.lines else [], className="toggle"),
    ])


def _plot_options(s: View) -> html.Div:
    """Rare events: log axes and a zoom to the region around the current choice."""
    return html.Div(className="plot-options", role="group",
                    **{"aria-label": "Plot options"}, children=[
        _flag(ids.LOG_FPR_TOGGLE, " log FPR axis (ROC)", s.log_fpr),
        _flag(ids.LOG_PC_TOGGLE, " log-odds PC(+) axis (cost)", s.log_pc),
        _flag(ids.ZOOM_TOGGLE, " zoom to the current choice", s.zoom),
    ])


def _pins_panel(s: View) -> html.Section:
    return html.Section(className="panel pins-panel", children=[
        html.H2("Pinned thresholds"),
        html.P(className="explain", children=[
            "Price a threshold already in use (a case is flagged when its score ≥ the "
            f"threshold) at the conditions above, against the best choice: up to {MAX_PINS} "
            "at once, e.g. production and a candidate."]),
        html.Div(className="field", children=[
            html.Label("Classifier", htmlFor=ids.PIN_MODEL),
            dcc.Dropdown(id=ids.PIN_MODEL, options=[], value=None, clearable=False,
                         searchable=True, placeholder="open a data set first"),
        ]),
        html.Div(className="field-head", children=[
            html.Label("Threshold (score ≥)", htmlFor=ids.PIN_THRESHOLD_INPUT),
            _number(ids.PIN_THRESHOLD_INPUT, None, placeholder="e.g. 0.5"),
        ]),
        dcc.Slider(id=ids.PIN_SLIDER, min=0, max=1, step=1, value=0, marks={},
                   updatemode="drag", allow_direct_input=False, className="slider"),
        html.Div(id=ids.PIN_PREVIEW, className="note", **{"aria-live": "polite"}),
        html.Button("Pin this threshold", id=ids.PIN_ADD, n_clicks=0, className="demo-button"),
        html.Div(id=ids.PIN_MESSAGE, className="error", role="alert"),
    ])


def _pin_slot(k: int) -> html.Div:
    """One pin's card: laid out once, hidden until a pin fills it; assets/explore.js writes its
    text (see docs/dashboard.md for why the readouts are not Dash outputs)."""
    def i(name: str) -> str:
        return ids.pin_field(k, name)

    def cell(name: str, title: str) -> html.Td:
        return html.Td(title=title, children=[html.Span("–", id=i(name)),
                                              html.Span("–", id=i(f"{name}-rate"),
                                                        className="rate")])

    return html.Div(id=ids.pin_slot(k), className="pin-slot", hidden=True, children=[
        html.Div(className="pin-head", children=[
            html.Span(str(k + 1), id=i("badge"), className="pin-badge",
                      **{"aria-hidden": "true"}),
            html.Span("–", id=i("title"), className="pin-title"),
            html.Button("Remove", id=i("remove"), n_clicks=0, className="link-button",
                        **{"aria-label": f"Remove pinned threshold {k + 1}"}),
        ]),
        html.P(id=i("error"), className="error"),
        html.Div(id=i("body"), className="pin-body", children=[
            html.Table(className="confusion", children=[
                html.Thead(html.Tr([html.Th("per period"), html.Th("flagged"),
                                    html.Th("not flagged")])),
                html.Tbody([
                    html.Tr([html.Th("positive"), cell("tp", "TP"), cell("fn", "FN (missed)")]),
                    html.Tr([html.Th("negative"), cell("fp", "FP (false alarms)"),
                             cell("tn", "TN")]),
                ]),
            ]),
            html.Div(className="readout-grid pin-metrics", children=[
                _readout("precision", i("precision"),
                         title="p(+)TPR / (p(+)TPR + p(−)FPR): at the conditions' p(+)"),
                _readout("recall (TPR)", i("recall")),
                _readout("specificity (TNR)", i("specificity")),
                _readout("NPV", i("npv"), title="p(−)TNR / (p(−)TNR + p(+)FNR)"),
                _readout("F1", i("f1")),
                _readout("cost per case", i("cost")),
                _readout("cost per period", i(ids.PERIOD_COST)),
                _readout("regret per period", i("regret"),
                         title="what it costs more than the best choice"),
                _readout("regret share", i("regret-share"),
                         title="the regret as a share of the best choice's cost"),
            ]),
            html.P(id=i("verdict"), className="pin-verdict"),
            html.P(className="pin-ranges", children=[
                "Optimal for its classifier: ", html.Span("–", id=i("optimal")),
                ". Beats both trivial classifiers: ", html.Span("–", id=i("beats")), "."]),
            html.P(id=i("test"), className="pin-test"),
        ]),
    ])


def _pins_card() -> html.Div:
    return html.Div(className="card wide pins-card", children=[
        html.H3("Pinned thresholds at these conditions"),
        html.P("None yet: choose a classifier and a threshold under “Pinned thresholds” and "
               "pin it.", id=ids.PINS_EMPTY, className="explain"),
        html.Div(className="pin-slots", children=[_pin_slot(k) for k in range(MAX_PINS)]),
    ])


def _range_inputs(key: str, label: str, values: tuple[float | None, float | None]) -> html.Div:
    lo, hi = values
    return html.Div(className="range-row", children=[
        html.Span(label, className="range-label"),
        html.Label([html.Span(f"{label} from", className="sr-only"),
                    _number(f"sens-{key}-lo", lo)]),
        html.Span("to"),
        html.Label([html.Span(f"{label} to", className="sr-only"),
                    _number(f"sens-{key}-hi", hi)]),
    ])


def _analysis_panel(s: View) -> html.Section:
    ranges = {"p": s.sens_p, "fn": s.sens_fn, "fp": s.sens_fp}
    sens_on = any(r is not None for r in ranges.values())
    return html.Section(className="panel", children=[
        html.Details(open=sens_on, className="tool", children=[
            html.Summary("Sensitivity: ranges of conditions"),
            dcc.Checklist(id=ids.SENS_ON, options=[{"label": " highlight what is optimal over "
                                                           "these ranges", "value": "on"}],
                          value=["on"] if sens_on else [], className="toggle"),
            _range_inputs("p", "p(+)", ranges["p"] or (None, None)),
            _range_inputs("fn", "C(−|+)", ranges["fn"] or (None, None)),
            _range_inputs("fp", "C(+|−)", ranges["fp"] or (None, None)),
            html.Div(id=ids.SENSITIVITY_READOUT, className="note"),
        ]),
        html.Details(open=s.max_fpr is not None or s.capacity is not None, className="tool",
                     children=[
            html.Summary("Constraints"),
            html.Label(["Neyman–Pearson: false positive rate at most ",
                        _number(ids.NP_MAX_FPR_INPUT, s.max_fpr,
                                placeholder="e.g. 0.05")]),
            html.Label(["Capacity: flag at most ",
                        _number(ids.CAPACITY_INPUT, s.capacity,
                                placeholder="cases"),
                        " cases per period"]),
            html.Div(id=ids.CONSTRAINT_READOUT, className="note"),
        ]),
    ])


def _readouts() -> html.Section:
    return html.Section(className="readouts", children=[
        html.Div(className="card", children=[
            html.H3("Best choice"),
            html.Div(className="readout-grid", children=[
                _readout("PC(+)", ids.PC_VALUE, title="probability × cost: the x of cost space"),
                _readout("iso-performance slope", ids.SLOPE_VALUE,
                         title="p(−)C(+|−) / (p(+)C(−|+)): the slope of the iso-performance line"),
                _readout("classifier", ids.CHOSEN_CLASSIFIER),
                _readout("threshold (score ≥)", ids.CHOSEN_THRESHOLD),
                _readout("FPR", ids.CHOSEN_FPR),
                _readout("TPR", ids.CHOSEN_TPR),
            ]),
        ]),
        html.Div(className="card", children=[
            html.H3("Cost"),
            html.Div(className="readout-grid", children=[
                _readout("normalized expected cost", ids.NORMALIZED_COST),
                _readout("expected cost per case", ids.EXPECTED_COST),
                _readout("cost per period", ids.PERIOD_COST),
                _readout("saving vs the best trivial choice", ids.SAVING_TRIVIAL, wide=True),
            ]),
        ]),
        html.Div(className="card", children=[
            html.H3(["Expected counts per period"]),
            html.Table(className="confusion", children=[
                html.Thead(html.Tr([html.Th(""), html.Th("flagged (predicted +)"),
                                    html.Th("not flagged (predicted −)")])),
                html.Tbody([
                    html.Tr([html.Th("positive cases"), html.Td("–", id=ids.CM_TP, title="TP"),
                             html.Td("–", id=ids.CM_FN, title="FN (missed)")]),
                    html.Tr([html.Th("negative cases"),
                             html.Td("–", id=ids.CM_FP, title="FP (false alarms)"),
                             html.Td("–", id=ids.CM_TN, title="TN")]),
                ]),
            ]),
        ]),
        html.Div(className="card wide", children=[
            html.H3(id=ids.FIXED_TITLE, children="Each classifier: best threshold vs 0.5"),
            html.Table(className="fixed", children=[
                html.Thead(html.Tr([html.Th("classifier"), html.Th("best threshold here"),
                                    html.Th("cost per period"), html.Th("at threshold 0.5"),
                                    html.Th("cost per period"), html.Th("0.5 costs more by")])),
                html.Tbody(id=ids.FIXED_TABLE_BODY),
            ]),
        ]),
        _pins_card(),
    ])


HELP = [
    html.Summary("What am I looking at?"),
    html.Ul([
        html.Li(["Left, ", html.B("ROC space"), ": each classifier's ROC curve (false positive "
                 "rate against true positive rate as its threshold moves). The black line is "
                 "the ROC convex hull of all of them: only its vertices can ever be the best "
                 "choice. Faded, dashed curves are dominated: never best under any conditions."]),
        html.Li(["The dashed straight line is the ", html.B("iso-performance line"), " for your "
                 "conditions: all points on it cost the same. Slid up and left until it touches "
                 "the hull, it marks the best classifier and threshold (the ringed vertex)."]),
        html.Li(["Right, ", html.B("cost space"), ": x is PC(+), which folds p(+) and both "
                 "costs into one number; y is the normalized expected cost (0 = perfect, the "
                 "dotted diagonals are flagging nothing or everything). Each classifier's "
                 "curve is its lower envelope; the black curve is the best achievable. The "
                 "vertical line is your PC(+); the bars under the axis are each classifier's "
                 "operating range, where it beats both trivial choices."]),
        html.Li("Move a slider or type a value: both plots and the numbers below update at "
                "once. The address bar always holds the current view: copy it to share it."),
        html.Li("Keyboard: Tab to a slider, then the arrow keys (Page Up/Down for big steps)."),
    ]),
]


# Served by dashboard/api.py; assets/viewstate.js points each link at the whole view (the
# report and CSVs are the screen) and disables them, with the reason, until data is open.
EXPORTS = (("report.html", "Download report (HTML)"), ("decision.json", "Export decision"),
           ("hull.csv", "hull.csv"), ("envelope.csv", "envelope.csv"),
           ("operating_ranges.csv", "operating ranges.csv"))


NO_EXPORT_YET = "Open a data set first: the downloads are of the data on screen."


def _exports() -> html.Nav:
    links = [html.A(label, id=f"export-{kind.split('.')[0].replace('_', '-')}", download="",
                    className="export-link", title=NO_EXPORT_YET,
                    **{"data-export": kind, "aria-disabled": "true"})
             for kind, label in EXPORTS]
    return html.Nav(className="exports", **{"aria-label": "Downloads"},
                    children=[html.Span("Downloads:"), *links])


def _share_panel() -> html.Section:
    return html.Section(className="panel share", children=[
        html.H2("Share"),
        html.P("Save this view with its data and get a read-only link for stakeholders: they "
               "can move the sliders but change nothing. You also get a private manage link "
               "(rename, expiry, delete).", className="explain"),
        html.Label(["Name ", dcc.Input(id=ids.SHARE_NAME, type="text", maxLength=200,
                                       placeholder="e.g. Q3 fraud model review",
                                       className="text")]),
        html.Label(["Expires in days ", _number(ids.SHARE_EXPIRY, None, placeholder="never")]),
        html.Button("Create share link", id=ids.SHARE_BUTTON, n_clicks=0, className="demo-button"),
        html.Div(id=ids.SHARE_RESULT, className="share-result", **{"aria-live": "polite"}),
    ])


def _shared_banner(shared: AnalysisRecord) -> html.Section:
    return html.Section(id=ids.SHARED_BANNER, className="shared-banner", children=[
        html.B(f"Shared analysis: {shared.name}"),
        html.Span(" · read-only. Move the sliders to explore what-ifs; nothing you change here "
                  "is saved. "),
        html.A("Back to the saved view", href=f"/s/{shared.share_token}", id=ids.SHARED_RESET),
    ])


def layout(query: dict[str, list[str]], services: Services, *,
           shared: AnalysisRecord | None = None, **_: Any) -> html.Div:
    """The Explore page, initialised from the URL query.

    With ``shared`` (a saved analysis opened by its read-only link) the data comes from the
    analysis, the upload and share controls are hidden and a banner says it is read-only.
    """
    s, problems = page_view(query)
    if shared is not None:
        s = replace(s, data=shared.dataset_id)
    ref = {"id": s.data, "models": list(s.models) if s.models else None} if s.data else None
    demos = [html.Button(d.title, id=ids.demo(name), n_clicks=0, className="demo-button",
                         title=d.description) for name, d in DEMOS.items()]
    hidden = {"display": "none"} if shared is not None else None
    return html.Div(className="explore" + (" read-only" if shared else ""), children=[
        dcc.Store(id=ids.DATASET_REF, data=ref),
        dcc.Store(id=ids.VIEW_STORE),
        dcc.Store(id=ids.VIEW_KEY),
        dcc.Store(id=ids.SENSITIVITY_STORE),
        dcc.Store(id=ids.CONSTRAINT_REQUEST),
        dcc.Store(id=ids.CONSTRAINT_STORE),
        # Beside each constraint's randomized mix, the best single threshold (server, core).
        dcc.Store(id=ids.SINGLE_THRESHOLD_STORE),
        dcc.Store(id=ids.URL_STATE),
        dcc.Store(id=ids.SHARE_REQUEST),
        # The view's pins and the data set they name; their exact points; the slider's grid.
        dcc.Store(id=ids.PINS_VIEW, data={"id": s.data, "pins": field_named("pins")
                                        .to_json_value(s.pins) if s.pins else []}),
        dcc.Store(id=ids.PINS_STORE),
        dcc.Store(id=ids.PIN_GRID),
        dcc.Store(id=ids.ZOOM_STATE),
        dcc.Store(id=ids.PLOT_OPTIONS_STATE),
        *([_shared_banner(shared)] if shared is not None else []),
        html.Section(className="data-bar", children=[
            html.Div(_upload_zone(services), style=hidden),
            html.Div(className="demos", style=hidden,
                     children=[html.Span("or open a demo:"), *demos]),
            html.Div(id=ids.UPLOAD_STATUS, className="status", **{"aria-live": "polite"}),
            html.Div(id=ids.UPLOAD_ERROR, className="error", role="alert"),
            html.Div(id=ids.DATASET_INFO, className="dataset-info"),
            problems_note(problems),
        ]),
        html.Div(className="explore-grid", children=[
            html.Aside(className="controls", children=[
                _conditions_panel(s), _classifiers_panel(s), _pins_panel(s), _analysis_panel(s),
                *([_share_panel()] if shared is None else [])]),
            html.Div(className="results", children=[
                html.P(id=ids.SENTENCE, className="sentence", **{"aria-live": "polite"},
                       children="Upload a predictions file or open a demo to start."),
                # Downloads are the data set's API: not part of what a read-only link grants.
                *([_exports()] if shared is None else []),
                _plot_options(s),
                html.Div(className="plots", children=[
                    html.Figure(className="plot", children=[
                        html.Div(className="graph-box", children=dcc.Graph(
                            id=ids.ROC_GRAPH, figure=roc_figure(None), style={"height": "100%"},
                            config=graph_config("roc"),
                            className="graph roc")),
                        html.Figcaption("ROC space", id=ids.ROC_CAPTION),
                    ]),
                    html.Figure(className="plot", children=[
                        html.Div(className="graph-box", children=dcc.Graph(
                            id=ids.COST_GRAPH, figure=cost_figure(None), style={"height": "100%"},
                            config=graph_config("cost"),
                            className="graph cost")),
                        html.Figcaption("Cost space", id=ids.COST_CAPTION),
                    ]),
                ]),
                html.Figure(className="plot ranges-plot", children=[
                    dcc.Graph(id=ids.RANGES_GRAPH, figure=ranges_figure(None),
                              style={"height": f"{ranges_height(None)}px"},
                              config=graph_config("operating-ranges"), className="graph ranges"),
                    html.Figcaption(id=ids.RANGES_CAPTION, children=[
                        "Operating ranges: where each classifier on the lower envelope is the "
                        "best choice (thick) and where it beats both trivial choices (thin)"]),
                ]),
                _readouts(),
                html.Details(HELP, className="help"),
            ]),
        ]),
    ])


# --- server-side handlers (plain functions; the callbacks below only wire them) ---------------

def demo_reference(services: Services, name: str) -> dict[str, Any]:
    """Store a demo data set (once) and return the reference the page keeps (every classifier
    ticked: a new data set resets the selection)."""
    return {**open_demo(services, name), "models": None}


def dataset_text(view: dict[str, Any]) -> str:
    n_cls = len(view["classifiers"])
    return (f"{view['name']}: {view['n']:,} cases, {view['n_pos']:,} positive (label "
            f"'{view['positive_label']}', prevalence {view['prevalence']:.4g}), "
            f"{n_cls} classifier{'s' if n_cls != 1 else ''}"
            + (f", {view['n_folds']} folds" if view["n_folds"] else ""))


@dataclass
class ViewOutputs:
    roc: Any = no_update
    cost: Any = no_update
    ranges: Any = no_update
    ranges_style: Any = no_update
    client: Any = no_update
    key: Any = no_update
    options: Any = no_update
    models: Any = no_update
    info: Any = no_update
    error: Any = no_update
    current: Any = no_update

    def as_tuple(self) -> tuple:
        return (self.roc, self.cost, self.ranges, self.ranges_style, self.client, self.key, self.options, self.models,
                self.info, self.error, self.current)


def load_view(services: Services, ref: dict[str, Any] | None, models: list[str] | None,
              lines: bool, triggered: str | None, *, hull_only: bool = False,
              log_fpr: bool = False, log_pc: bool = False) -> ViewOutputs:
    """Everything that changes when the data set, the set of classifiers or the way they are
    drawn (every cost line, hull classifiers only, log axes) changes."""
    if not ref or not ref.get("id"):
        return ViewOutputs()
    try:
        full = services.views.full(ref["id"])
    except (DatasetNotFound, CostdashError) as exc:
        return ViewOutputs(error=str(exc))
    names = [c["name"] for c in full["classifiers"]]
    if triggered == ids.MODELS_INPUT:
        wanted = [m for m in names if m in set(models or [])]
    elif ref.get("models"):
        wanted = [m for m in names if m in set(ref["models"])] or names
    else:
        wanted = names
    if not wanted:
        return ViewOutputs(error="Select at least one classifier.")
    view = services.views.view(ref["id"], wanted)
    colors = classifier_colors(names)
    # Plain-text labels: component labels in a Checklist whose options change break Dash 4.4.1's
    # renderer ("Cannot read properties of undefined (reading 'props')" in recordUiEdit).
    options = [{"label": m, "value": m} for m in names]
    # Past LEGEND_MAX classifiers the list with its swatches is the legend (the plots' own
    # would take the space of the plot).
    legend = None if len(wanted) <= LEGEND_MAX else False
    client = client_model(view, colors)
    client["styles"] = [{"name": c["name"], "index": c["index"],
                         **classifier_style(c["index"]).as_json()}
                        for c in full["classifiers"]]
    roc = roc_figure(view, log_fpr_scale=log_fpr, hull_only=hull_only, legend=legend)
    cost = cost_figure(view, lines=lines, max_lines=services.settings.max_cost_lines,
                       log_pc_scale=log_pc, hull_only=hull_only, legend=legend)
    ranges = ranges_figure(view, log_pc_scale=log_pc)
    # The axes' modes for the moving parts' coordinates, and the ranges the zoom returns to.
    client["axes"] = {"log_fpr": log_fpr, "log_pc": log_pc, "fpr_floor": fpr_floor(view["n_neg"]),
                      "hull_only": hull_only, "home": {
                          "roc": [list(roc.layout.xaxis.range), list(roc.layout.yaxis.range)],
                          "cost": [list(cost.layout.xaxis.range), list(cost.layout.yaxis.range)],
                          "ranges": [list(ranges.layout.xaxis.range), None]}}
    return ViewOutputs(
        roc=roc, cost=cost, ranges=ranges,
        ranges_style={"height": f"{ranges_height(view)}px"},
        client=client,
        key={"id": ref["id"], "models": None if wanted == names else wanted},
        options=options, models=wanted, info=dataset_text(view), error="",
        current={"id": ref["id"], "name": full["name"]})


def _finite(*values: Any) -> bool:
    return all(isinstance(v, (int, float)) and math.isfinite(v) for v in values)


def _json_float(x: float) -> float | None:
    return x if math.isfinite(x) else None


def sensitivity_result(services: Services, key: dict[str, Any] | None, on: bool,
                       p: tuple[Any, Any], fn: tuple[Any, Any], fp: tuple[Any, Any],
                       correct: tuple[Any, Any] = (None, None)) -> dict[str, Any] | None:
    """What is optimal over ranges of p(+) and both costs (core: ``criteria.sensitivity``).

    ``correct`` holds C(+|+) and C(−|−) (None: 0), the costs of the correct decisions.
    """
    if not on or not key:
        return None
    if not _finite(*p, *fn, *fp):
        return {"error": "Give both ends of every range."}
    tp, tn = (c if _finite(c) else 0.0 for c in correct)
    try:
        hull = services.views.hull(key["id"], key.get("models"))
        r = sensitivity(hull, p, fn, fp, cost_tp=tp, cost_tn=tn)
    except CostdashError as exc:
        return {"error": str(exc)}
    return {"pc_range": list(r.pc_range), "slope_range": [_json_float(s) for s in r.slope_range],
            "vertices": list(r.vertices), "classifiers": list(r.classifiers),
            "trivial_optimal": r.trivial_optimal}


def _mixed(point: MixedOperatingPoint) -> dict[str, Any]:
    return {"fpr": point.fpr, "tpr": point.tpr, "left": point.left, "right": point.right,
            "weight": point.weight, "left_classifier": point.left_classifier,
            "right_classifier": point.right_classifier,
            "left_threshold": _json_float(point.left_threshold),
            "right_threshold": _json_float(point.right_threshold)}


def constraint_result(services: Services, key: dict[str, Any] | None,
                      request: dict[str, Any] | None) -> dict[str, Any] | None:
    """Neyman-Pearson and capacity operating points (core: ``neyman_pearson``, ``workforce``)."""
    if not request or not key:
        return None
    try:
        hull = services.views.hull(key["id"], key.get("models"))
    except CostdashError as exc:
        return {"np": {"error": str(exc)}}
    out: dict[str, Any] = {}
    max_fpr = request.get("max_fpr")
    if max_fpr is not None:
        try:
            out["np"] = {**_mixed(neyman_pearson(hull, float(max_fpr))), "limit": max_fpr}
        except CostdashError as exc:
            out["np"] = {"error": str(exc)}
    capacity, p, volume = request.get("capacity"), request.get("p"), request.get("volume")
    if capacity is not None:
        try:
            OperatingCondition(p)  # validates p(+)
            if not _finite(volume) or volume <= 0:
                raise ValueError("set a positive volume (cases per period) to use a capacity")
            point = workforce(hull, n_pos=p * volume, n_neg=(1.0 - p) * volume,
                              capacity=float(capacity))
            out["capacity"] = {**_mixed(point), "limit": capacity, "n_pos": p * volume,
                               "n_neg": (1.0 - p) * volume}
        except (CostdashError, ValueError, TypeError) as exc:
            out["capacity"] = {"error": str(exc)}
    return out or None


SINGLE_CACHE_VERSION = 1


def _single(point: SingleThreshold) -> dict[str, Any]:
    return {"classifier": point.classifier, "threshold": _json_float(point.threshold),
            "fpr": point.fpr, "tpr": point.tpr, "tp": point.tp, "fp": point.fp}


def single_threshold_result(services: Services, key: dict[str, Any] | None,
                            constraints: dict[str, Any] | None) -> dict[str, Any] | None:
    """Beside each randomized constraint point of ``constraints`` (the ``constraint-store``:
    Neyman-Pearson ``np``, capacity ``capacity``), the best single threshold that obeys the same
    constraint (core: ``single_threshold_neyman_pearson``, ``single_threshold_workforce``).

    Exact: over every ROC point of the ticked classifiers, so the data set is read (once for
    both) on a cache miss; cached per data set, ticked classifiers and constraint. A separate
    callback from the mixes', so a large data set never delays them.
    """
    if not constraints or not key or not key.get("id"):
        return None
    specs: dict[str, tuple] = {}
    np_point, cap_point = constraints.get("np") or {}, constraints.get("capacity") or {}
    if "limit" in np_point:
        specs["np"] = ("np", float(np_point["limit"]))
    if "limit" in cap_point:
        specs["capacity"] = ("capacity", float(cap_point["limit"]), cap_point["n_pos"],
                             cap_point["n_neg"])
    if not specs:
        return None
    models = key.get("models")
    out: dict[str, Any] = {}
    missing: dict[str, tuple[tuple, str]] = {}
    for name, spec in specs.items():
        digest = hashlib.sha256(json.dumps([models, spec]).encode()).hexdigest()[:32]
        cache_key = f"single:v{SINGLE_CACHE_VERSION}:{key['id']}:{digest}"
        text = services.views.cache.get(cache_key)
        if text:
            out[name] = json.loads(text)
        else:
            missing[name] = (spec, cache_key)
    if not missing:
        return out
    try:
        dataset = services.store.get(key["id"])
    except CostdashError as exc:
        return {**out, **{name: {"error": str(exc)} for name in missing}}
    wanted = set(models) if models else None
    rocs = [roc_of(c) for c in (*dataset.scored, *dataset.counted)
            if wanted is None or c.name in wanted]
    for name, (spec, cache_key) in missing.items():
        try:
            point = (single_threshold_neyman_pearson(rocs, spec[1]) if spec[0] == "np" else
                     single_threshold_workforce(rocs, capacity=spec[1], n_pos=spec[2],
                                                n_neg=spec[3]))
            # The constraint it answers, so the page never shows it beside another one's mix.
            entry = {**_single(point), "limit": spec[1],
                     **({"n_pos": spec[2]} if spec[0] == "capacity" else {})}
        except CostdashError as exc:
            entry = {"error": str(exc)}
        services.views.cache.set(cache_key, json.dumps(entry, allow_nan=False))
        out[name] = entry
    return out


def pin_grid_result(services: Services, key: dict[str, Any] | None,
                    model: str | None) -> dict[str, Any] | None:
    """The thresholds the threshold slider steps through: those of ``model``'s thinned ROC curve
    in the cached view model (:func:`dashboard.viewmodel.pin_grid`), lowest first."""
    if not key or not key.get("id") or not model:
        return None
    try:
        full = services.views.full(key["id"])
    except CostdashError as exc:
        return {"model": model, "threshold": [], "fpr": [], "tpr": [], "error": str(exc)}
    entry = next((c for c in full["classifiers"] if c["name"] == model), None)
    if entry is None:
        return None
    grid = pin_grid(entry)
    if not grid["threshold"]:
        grid["error"] = (f"{model} has no score thresholds (it was given as confusion "
                         "matrices): nothing to pin.")
    return grid


PIN_CACHE_VERSION = 1


def _pin_cache_key(dataset_id: str, name: str, threshold: float) -> str:
    digest = hashlib.sha256(json.dumps([name, threshold]).encode()).hexdigest()[:32]
    return f"pin:v{PIN_CACHE_VERSION}:{dataset_id}:{digest}"


def pinned_result(services: Services, key: dict[str, Any] | None,
                  state: dict[str, Any] | None) -> list[dict[str, Any]]:
    """The view's pinned thresholds as exact ROC points (core: ``costdash.pinned``).

    ``state`` is the page's ``pins-view`` store: ``{"id": data set, "pins": [{"model",
    "threshold"}]}``. Each pin becomes :func:`dashboard.viewmodel.pinned_entry` (cached per data
    set, classifier and threshold; a miss reads the data set once for all the pins it needs), or
    ``{"model", "threshold", "error"}`` when its classifier is not in the data set or not ticked.
    Only counts and rates reach the browser, never scores.
    """
    if not key or not key.get("id") or not state or not state.get("pins"):
        return []
    if state.get("id") not in (None, key["id"]):
        return []           # pins of another data set (the page clears them)
    try:
        pins = field_named("pins").parse(state["pins"]) or ()
    except ParameterError as exc:
        return [{"model": "", "threshold": None, "error": str(exc)}]
    try:
        full = services.views.full(key["id"])
    except CostdashError as exc:
        return [{"model": n, "threshold": t, "error": str(exc)} for n, t in pins]
    names = [c["name"] for c in full["classifiers"]]
    ticked = set(key.get("models") or names)
    out: list[dict[str, Any] | None] = []
    missing: dict[int, tuple[str, float, str]] = {}
    for name, threshold in pins:
        if name not in names:
            out.append({"model": name, "threshold": threshold,
                        "error": f"This data set has no classifier named '{name}'."})
        elif name not in ticked:
            out.append({"model": name, "threshold": threshold,
                        "error": f"{name} is not ticked under Classifiers."})
        else:
            cache_key = _pin_cache_key(key["id"], name, threshold)
            text = services.views.cache.get(cache_key)
            out.append(json.loads(text) if text else None)
            if text is None:
                missing[len(out) - 1] = (name, threshold, cache_key)
    if missing:
        try:
            dataset = services.store.get(key["id"])
        except CostdashError as exc:
            for i, (name, threshold, _) in missing.items():
                out[i] = {"model": name, "threshold": threshold, "error": str(exc)}
            return [o for o in out if o is not None]
        classifiers = {c.name: c for c in (*dataset.scored, *dataset.counted)}
        rocs: dict[str, Any] = {}
        for i, (name, threshold, cache_key) in missing.items():
            if name not in rocs:
                rocs[name] = roc_of(classifiers[name])   # one sort per classifier
            try:
                entry = pinned_entry(pin_threshold(rocs[name], threshold))
            except CostdashError as exc:
                out[i] = {"model": name, "threshold": threshold, "error": str(exc)}
                continue
            services.views.cache.set(cache_key, json.dumps(entry, allow_nan=False))
            out[i] = entry
    return [o for o in out if o is not None]


def share_view(services: Services, view: dict[str, Any], name: str | None,
               expires_in_days: Any, root_url: str) -> Any:
    """Save the open data set and the ``view`` (the browser's view object, JSON) as an
    analysis; the links to show, or an error."""
    data = view.get("data")
    if not data:
        return html.P("Open a data set first.", className="error")
    limits = client_limits()
    if not limits.key_accepted():
        return html.P("This instance needs an upload key to share: enter it above the upload "
                      "box.", className="error", role="alert")
    refusal = limits.share_refusal()
    if refusal:
        return html.P(refusal, className="error", role="alert")
    try:
        record = services.store.info(data) if valid_id(data) else None
        if record is None:
            raise DatasetNotFound("the data set is no longer stored; upload it again")
        saved = {k: v for k, v in view.items() if k != "data"}
        new = services.sharing.create(
            data, name=(name or "").strip() or record.name, view=saved,
            expires_in_days=expires_in_days)
    except CostdashError as exc:
        return html.P(str(exc), className="error", role="alert")
    root = root_url.rstrip("/")
    share_url = f"{root}/s/{new.record.share_token}"
    manage_url = f"{root}/manage/{new.manage_token}"
    return html.Div([
        html.P(["Read-only link (send this): ",
                html.A(share_url, href=share_url, id=ids.SHARE_URL, target="_blank")]),
        html.P(["Manage link (keep it private; shown once): ",
                html.A(manage_url, href=manage_url, id=ids.MANAGE_URL, target="_blank")]),
    ])


# --- callbacks -----------------------------------------------------------------------------------

def _cs(name: str) -> ClientsideFunction:
    return ClientsideFunction(namespace="costdash", function_name=name)


def register_callbacks(app: Dash, services: Services) -> None:
    demo_ids = [ids.demo(name) for name in DEMOS]

    @app.callback(Output(ids.UPLOAD_KEY_STATUS, "children"),
                  Input(ids.UPLOAD_KEY_BUTTON, "n_clicks"), Input(ids.UPLOAD_KEY, "value"),
                  prevent_initial_call=True)
    def _upload_key(_clicks, key):
        if client_limits().remember_key(key):
            return "Key accepted: you can upload and share."
        return "That is not an upload key of this instance."

    @app.callback(Output(ids.DATASET_REF, "data"), [Input(i, "n_clicks") for i in demo_ids],
                  prevent_initial_call=True)
    def _demo(*_clicks):
        if not ctx.triggered_id:
            return no_update
        return demo_reference(services, ctx.triggered_id.removeprefix("demo-"))

    @app.callback(
        Output(ids.ROC_GRAPH, "figure"), Output(ids.COST_GRAPH, "figure"),
        Output(ids.RANGES_GRAPH, "figure"), Output(ids.RANGES_GRAPH, "style"),
        Output(ids.VIEW_STORE, "data"), Output(ids.VIEW_KEY, "data"),
        Output(ids.MODELS_INPUT, "options"), Output(ids.MODELS_INPUT, "value"),
        Output(ids.DATASET_INFO, "children"), Output(ids.UPLOAD_ERROR, "children"),
        Output(ids.CURRENT_DATA, "data"),
        Input(ids.DATASET_REF, "data"), Input(ids.MODELS_INPUT, "value"),
        Input(ids.COST_LINES_TOGGLE, "value"), Input(ids.HULL_ONLY_TOGGLE, "value"),
        Input(ids.LOG_FPR_TOGGLE, "value"), Input(ids.LOG_PC_TOGGLE, "value"))
    def _load_view(ref, models, lines, hull_only, log_fpr, log_pc):
        triggered = ctx.triggered_id if isinstance(ctx.triggered_id, str) else None
        flags = [bool(lines), bool(hull_only), bool(log_fpr), bool(log_pc)]

        def outputs():
            return load_view(services, ref, models, flags[0], triggered, hull_only=flags[1],
                             log_fpr=flags[2], log_pc=flags[3]).as_tuple()
        if not ref or not ref.get("id"):
            return outputs()
        # Every viewer of a link (and every reload) asks for the same figures: built once per
        # data set and inputs, then sent from the cache (an error answer is not kept).
        parts = [ref, models if triggered == ids.MODELS_INPUT else None, flags,
                 triggered == ids.MODELS_INPUT]
        return tuple(services.views.payload(str(ref["id"]), "explore-view", parts, outputs,
                                            keep=lambda out: all(o is not no_update for o in out)))

    @app.callback(
        Output(ids.SENSITIVITY_STORE, "data"),
        Input(ids.SENS_ON, "value"), Input(ids.SENS_P_LO, "value"), Input(ids.SENS_P_HI, "value"),
        Input(ids.SENS_FN_LO, "value"), Input(ids.SENS_FN_HI, "value"),
        Input(ids.SENS_FP_LO, "value"), Input(ids.SENS_FP_HI, "value"), Input(ids.VIEW_KEY, "data"),
        Input(ids.COST_TP_INPUT, "value"), Input(ids.COST_TN_INPUT, "value"))
    def _sensitivity(on, p_lo, p_hi, fn_lo, fn_hi, fp_lo, fp_hi, key, cost_tp, cost_tn):
        return sensitivity_result(services, key, bool(on), (p_lo, p_hi), (fn_lo, fn_hi),
                                  (fp_lo, fp_hi), (cost_tp, cost_tn))

    @app.callback(Output(ids.SINGLE_THRESHOLD_STORE, "data"),
                  Input(ids.CONSTRAINT_STORE, "data"), State(ids.VIEW_KEY, "data"))
    def _single_thresholds(constraints, key):
        return single_threshold_result(services, key, constraints)

    @app.callback(Output(ids.CONSTRAINT_STORE, "data"),
                  Input(ids.CONSTRAINT_REQUEST, "data"), Input(ids.VIEW_KEY, "data"))
    def _constraints(request, key):
        return constraint_result(services, key, request)

    # Browser side (assets/explore.js). One clientside callback does everything a number box,
    # the data or the "prevalence" button moves (readouts, the figures' moving parts, the
    # constraint request, the address bar); the sliders are watched by the JS directly (a slider
    # step is drawn before any callback runs, then its number box is set), see explore.js.
    app.clientside_callback(
        _cs("explore"),
        Output(ids.ROC_GRAPH, "figure", allow_duplicate=True),
        Output(ids.COST_GRAPH, "figure", allow_duplicate=True),
        Output(ids.P_POS_SLIDER, "value"), Output(ids.P_POS_INPUT, "value"),
        Output(ids.COST_FN_SLIDER, "value"), Output(ids.COST_FN_INPUT, "value"),
        Output(ids.COST_FP_SLIDER, "value"), Output(ids.COST_FP_INPUT, "value"),
        Output(ids.CONSTRAINT_REQUEST, "data", allow_duplicate=True),
        Input(ids.VIEW_STORE, "data"),
        Input(ids.P_POS_INPUT, "value"), Input(ids.COST_FN_INPUT, "value"),
        Input(ids.COST_FP_INPUT, "value"), Input(ids.COST_TP_INPUT, "value"),
        Input(ids.COST_TN_INPUT, "value"),
        Input(ids.VOLUME_INPUT, "value"), Input(ids.UNIT_INPUT, "value"),
        Input(ids.PREVALENCE_BUTTON, "n_clicks"),
        Input(ids.SENSITIVITY_STORE, "data"), Input(ids.CONSTRAINT_STORE, "data"),
        Input(ids.PINS_STORE, "data"), Input(ids.SINGLE_THRESHOLD_STORE, "data"),
        State(ids.CONSTRAINT_REQUEST, "data"),
        State(ids.NP_MAX_FPR_INPUT, "value"), State(ids.CAPACITY_INPUT, "value"),
        State(ids.VIEW_KEY, "data"), State(ids.DATASET_REF, "data"),
        State(ids.COST_LINES_TOGGLE, "value"), State(ids.SENS_ON, "value"),
        State(ids.SENS_P_LO, "value"), State(ids.SENS_P_HI, "value"),
        State(ids.SENS_FN_LO, "value"), State(ids.SENS_FN_HI, "value"),
        State(ids.SENS_FP_LO, "value"), State(ids.SENS_FP_HI, "value"),
        prevent_initial_call=True)
    app.clientside_callback(
        _cs("fillSensitivity"),
        Output(ids.SENS_P_LO, "value"), Output(ids.SENS_P_HI, "value"),
        Output(ids.SENS_FN_LO, "value"), Output(ids.SENS_FN_HI, "value"),
        Output(ids.SENS_FP_LO, "value"), Output(ids.SENS_FP_HI, "value"),
        Input(ids.SENS_ON, "value"),
        State(ids.P_POS_INPUT, "value"), State(ids.COST_FN_INPUT, "value"),
        State(ids.COST_FP_INPUT, "value"),
        State(ids.SENS_P_LO, "value"), State(ids.SENS_P_HI, "value"),
        State(ids.SENS_FN_LO, "value"), State(ids.SENS_FN_HI, "value"),
        State(ids.SENS_FP_LO, "value"), State(ids.SENS_FP_HI, "value"),
        prevent_initial_call=True)
    # Share reads the view object at click time (viewstate.js commits a box being typed in
    # before the click lands), then the server saves it.
    app.clientside_callback(
        _cs("shareRequest"), Output(ids.SHARE_REQUEST, "data"),
        Input(ids.SHARE_BUTTON, "n_clicks"), State(ids.SHARE_NAME, "value"),
        State(ids.SHARE_EXPIRY, "value"), prevent_initial_call=True)

    @app.callback(Output(ids.SHARE_RESULT, "children"), Input(ids.SHARE_REQUEST, "data"),
                  prevent_initial_call=True)
    def _share(request):
        if not request:
            return no_update
        return share_view(services, request.get("view") or {}, request.get("name"),
                          request.get("expiry"), flask.request.url_root)

    # Pinned thresholds: the panel's classifier list, the slider's grid (the thinned curve's
    # thresholds, from the cached view model), slider and box following each other, Pin/Remove
    # (browser), then the exact points (server, core) that `explore` prices at the conditions.
    app.clientside_callback(
        _cs("pinModels"), Output(ids.PIN_MODEL, "options"), Output(ids.PIN_MODEL, "value"),
        Input(ids.VIEW_STORE, "data"), State(ids.PIN_MODEL, "value"), State(ids.PINS_VIEW, "data"))

    @app.callback(Output(ids.PIN_GRID, "data"), Output(ids.PIN_SLIDER, "max"),
                  Output(ids.PIN_SLIDER, "marks"), Output(ids.PIN_SLIDER, "disabled"),
                  Input(ids.PIN_MODEL, "value"), State(ids.VIEW_KEY, "data"),
                  prevent_initial_call=True)
    def _pin_grid(model, key):
        grid = pin_grid_result(services, key, model)
        thresholds = (grid or {}).get("threshold") or []
        if not thresholds:
            return grid, 1, {}, True
        top = len(thresholds) - 1
        return grid, max(top, 1), {0: f"{thresholds[0]:.4g}", top: f"{thresholds[-1]:.4g}"}, \
            top == 0

    app.clientside_callback(
        _cs("pinControls"), Output(ids.PIN_SLIDER, "value"),
        Output(ids.PIN_THRESHOLD_INPUT, "value"), Output(ids.PIN_PREVIEW, "children"),
        Input(ids.PIN_SLIDER, "value"), Input(ids.PIN_THRESHOLD_INPUT, "value"),
        Input(ids.PIN_GRID, "data"), prevent_initial_call=True)
    app.clientside_callback(
        _cs("editPins"), Output(ids.PINS_VIEW, "data"), Output(ids.PIN_MESSAGE, "children"),
        Input(ids.PIN_ADD, "n_clicks"), Input(ids.PIN_THRESHOLD_INPUT, "n_submit"),
        *[Input(f"pin-{k}-remove", "n_clicks") for k in range(MAX_PINS)],
        Input(ids.DATASET_REF, "data"),
        State(ids.PIN_MODEL, "value"), State(ids.PIN_THRESHOLD_INPUT, "value"),
        State(ids.PINS_VIEW, "data"), prevent_initial_call=True)

    @app.callback(Output(ids.PINS_STORE, "data"), Input(ids.PINS_VIEW, "data"),
                  Input(ids.VIEW_KEY, "data"))
    def _pins(state, key):
        return pinned_result(services, key, state)

    app.clientside_callback(
        _cs("constraintRequest"),
        Output(ids.CONSTRAINT_REQUEST, "data"),
        Input(ids.NP_MAX_FPR_INPUT, "value"), Input(ids.CAPACITY_INPUT, "value"),
        State(ids.P_POS_INPUT, "value"), State(ids.VOLUME_INPUT, "value"),
        State(ids.CONSTRAINT_REQUEST, "data"))
    # Many classifiers, rare events: the list's filter and its buttons, the zoom (browser), and
    # these controls' fields of the view.
    app.clientside_callback(
        _cs("filterModels"), Output(ids.MODELS_COUNT, "children"),
        Input(ids.MODELS_FILTER, "value"), Input(ids.VIEW_STORE, "data"))
    app.clientside_callback(
        _cs("tickShown"), Output(ids.MODELS_INPUT, "value", allow_duplicate=True),
        Input(ids.MODELS_TICK_SHOWN, "n_clicks"), Input(ids.MODELS_ONLY_SHOWN, "n_clicks"),
        State(ids.MODELS_FILTER, "value"), State(ids.VIEW_STORE, "data"),
        State(ids.MODELS_INPUT, "value"), prevent_initial_call=True)
    app.clientside_callback(_cs("setZoom"), Output(ids.ZOOM_STATE, "data"),
                            Input(ids.ZOOM_TOGGLE, "value"))
    app.clientside_callback(
        record_view_js(["hull_only", "filter", "log_fpr", "log_pc", "zoom"]),
        Output(ids.PLOT_OPTIONS_STATE, "data"),
        Input(ids.HULL_ONLY_TOGGLE, "value"), Input(ids.MODELS_FILTER, "value"),
        Input(ids.LOG_FPR_TOGGLE, "value"), Input(ids.LOG_PC_TOGGLE, "value"),
        Input(ids.ZOOM_TOGGLE, "value"))
    # The address bar for the inputs `explore` does not watch (it writes it for the others).
    app.clientside_callback(
        _cs("recordViewFromOthers"),
        Output(ids.URL_STATE, "data"),
        Input(ids.VIEW_KEY, "data"), Input(ids.DATASET_REF, "data"),
        Input(ids.COST_LINES_TOGGLE, "value"),
        Input(ids.SENS_ON, "value"), Input(ids.SENS_P_LO, "value"), Input(ids.SENS_P_HI, "value"),
        Input(ids.SENS_FN_LO, "value"), Input(ids.SENS_FN_HI, "value"),
        Input(ids.SENS_FP_LO, "value"), Input(ids.SENS_FP_HI, "value"),
        Input(ids.NP_MAX_FPR_INPUT, "value"), Input(ids.CAPACITY_INPUT, "value"),
        State(ids.P_POS_INPUT, "value"), State(ids.COST_FN_INPUT, "value"),
        State(ids.COST_FP_INPUT, "value"), State(ids.VOLUME_INPUT, "value"),
        State(ids.UNIT_INPUT, "value"))
