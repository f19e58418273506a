"""The Explore page's layout builders: the slider scales (mirrored in
``assets/explore-base.js``), the panels of the controls (upload, operating conditions,
classifiers, plot options, pinned thresholds, sensitivity and constraints, share), the readout
cards that ``assets/explore-readouts.js`` writes into, the help text, the downloads and the
read-only banner.

Laid out by :func:`dashboard.pages.explore.layout`, which re-exports the public names
(``p_to_slider``, ``HELP``, ``EXPORTS``, ...). Not under ``pages/``: every module there is a
page, and no page imports another. Element ids come from :mod:`dashboard.ids`.
"""

from __future__ import annotations

import math
from typing import Any

from dash import dcc, html

from costdash.view import MAX_PINS, View
from dashboard import ids
from dashboard.page_kit import condition_field, help_panel, number_box
from dashboard.services import Services
from dashboard.storage import AnalysisRecord

INTERVAL_LEVELS = (0.8, 0.9, 0.95, 0.99)
"""The levels of the intervals beside the costs that the selector offers (the view's ``level``;
another value from a link is offered too)."""

P_SLIDER = (-6.0, 6.0)
COST_SLIDER = (-3.0, 6.0)
P_MARKS = {-6: "10⁻⁶", -4: "10⁻⁴", -2: "0.01", 0: "0.5", 2: "0.99", 4: "0.9999",
           6: "1−10⁻⁶"}
COST_MARKS = {-3: "0.001", -2: "0.01", -1: "0.1", 0: "1", 1: "10", 2: "100", 3: "1k", 4: "10k",
              5: "100k", 6: "1M"}


# --- slider scales (presentation; mirrored in assets/explore-base.js) ----------------------------

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
             wide: bool = False, value_class: str = "", interval: str | None = None) -> html.Div:
    # ``interval``: the id of the interval written under the value (assets/explore-readouts.js
    # and explore-pins.js; empty until the server's limits arrive).
    return html.Div(className="readout" + (" wide" if wide else ""), title=title, children=[
        html.Span(label, className="readout-label"),
        html.Span("–", id=id_, className=f"readout-value {value_class}".strip()),
        *([html.Span("", id=interval, className="readout-interval")] if interval else []),
    ])


def _boxed(children: list[Any]) -> html.Div:
    """A card's content in a relayout boundary: ``relayout-box`` gets ``contain: size layout``
    with its height set to ``relayout-inner``'s (assets/explore-readouts.js, a ResizeObserver, in
    the same frame as any change of it), so a slider step's new text lays out this card only,
    not the page from its root (grid and flex items are never relayout boundaries in Chromium;
    a block inside one is). Nothing is clipped: the box always has its content's height."""
    return html.Div(className="relayout-box", children=html.Div(className="relayout-inner",
                                                                children=children))


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
    # The list is the plots' legend past LEGEND_MAX classifiers: assets/explore-plots.js gives each
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
    """One pin's card: laid out once, hidden until a pin fills it; assets/explore-pins.js writes its
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
                _readout("cost per case", i("cost"), interval=i("cost-interval")),
                _readout("cost per period", i(ids.PERIOD_COST),
                         interval=i("period-cost-interval")),
                _readout("regret per period", i("regret"),
                         title="what it costs more than the best choice",
                         interval=i("regret-interval")),
                _readout("regret share", i("regret-share"),
                         title="the regret as a share of the best choice's cost"),
            ]),
            html.P(id=i("interval-note"), className="interval-note"),
            html.P(id=i("verdict"), className="pin-verdict"),
            html.P(className="pin-ranges", children=[
                "Optimal for its classifier: ", html.Span("–", id=i("optimal")),
                ". Beats both trivial classifiers: ", html.Span("–", id=i("beats")), "."]),
            html.P(id=i("test"), className="pin-test"),
        ]),
    ])


def _pins_card() -> html.Div:
    return html.Div(className="card wide pins-card", children=_boxed([
        html.H3("Pinned thresholds at these conditions"),
        html.P("None yet: choose a classifier and a threshold under “Pinned thresholds” and "
               "pin it.", id=ids.PINS_EMPTY, className="explain"),
        html.Div(className="pin-slots", children=[_pin_slot(k) for k in range(MAX_PINS)]),
    ]))


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


def _interval_line(s: View) -> html.Div:
    """What the intervals under the costs answer (written by assets/explore-readouts.js) and
    their level (the view's ``level``, shared with the Confidence page)."""
    levels = sorted({*INTERVAL_LEVELS, s.level})
    return html.Div(className="interval-line", children=[
        html.P("", id=ids.COST_INTERVAL_NOTE, className="interval-note",
               **{"aria-live": "polite"}),
        html.Label(className="interval-level", children=[
            "Interval level ",
            dcc.Dropdown(id=ids.INTERVAL_LEVEL, value=s.level, clearable=False,
                         searchable=False, className="level-select",
                         options=[{"label": f"{100 * v:g}%", "value": v} for v in levels]),
        ]),
    ])


def _readouts(s: View) -> html.Section:
    return html.Section(className="readouts", children=[
        html.Div(className="card", children=_boxed([
            html.H3("Best choice"),
            html.Div(className="readout-grid", children=[
                _readout("PC(+)", ids.PC_VALUE, title="probability × cost: the x of cost space"),
                _readout("iso-performance slope", ids.SLOPE_VALUE,
                         title="p(−)C(+|−) / (p(+)C(−|+)): the slope of the iso-performance line"),
                _readout("classifier", ids.CHOSEN_CLASSIFIER),
                # The shortest decimal that flags the same cases; the exact one on hover
                # (assets/explore-readouts.js), never broken across lines.
                _readout("threshold (score ≥)", ids.CHOSEN_THRESHOLD, value_class="threshold"),
                _readout("FPR", ids.CHOSEN_FPR),
                _readout("TPR", ids.CHOSEN_TPR),
            ]),
        ])),
        html.Div(className="card", children=_boxed([
            html.H3("Cost"),
            html.Div(className="readout-grid", children=[
                _readout("normalized expected cost", ids.NORMALIZED_COST),
                _readout("expected cost per case", ids.EXPECTED_COST,
                         interval=ids.EXPECTED_COST_INTERVAL),
                _readout("cost per period", ids.PERIOD_COST, interval=ids.PERIOD_COST_INTERVAL),
                _readout("saving vs the best trivial choice", ids.SAVING_TRIVIAL, wide=True),
            ]),
            _interval_line(s),
        ])),
        html.Div(className="card", children=_boxed([
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
        ])),
        html.Div(className="card wide", children=_boxed([
            html.H3(id=ids.FIXED_TITLE, children="Each classifier: best threshold vs 0.5"),
            html.Table(className="fixed", children=[
                html.Thead(html.Tr([html.Th("classifier"), html.Th("best threshold here"),
                                    html.Th("cost per period"), html.Th("at threshold 0.5"),
                                    html.Th("cost per period"), html.Th("0.5 costs more by")])),
                html.Tbody(id=ids.FIXED_TABLE_BODY),
            ]),
        ])),
        _pins_card(),
    ])


HELP = help_panel([
    ["Left, ", html.B("ROC space"), ": each classifier's ROC curve (false positive "
     "rate against true positive rate as its threshold moves). The black line is "
     "the ROC convex hull of all of them: only its vertices can ever be the best "
     "choice. Faded, dashed curves are dominated: never best under any conditions."],
    ["The dashed straight line is the ", html.B("iso-performance line"), " for your "
     "conditions: all points on it cost the same. Slid up and left until it touches "
     "the hull, it marks the best classifier and threshold (the ringed vertex)."],
    ["Right, ", html.B("cost space"), ": x is PC(+), which folds p(+) and both "
     "costs into one number; y is the normalized expected cost (0 = perfect, the "
     "dotted diagonals are flagging nothing or everything). Each classifier's "
     "curve is its lower envelope; the black curve is the best achievable. The "
     "vertical line is your PC(+); the bars under the axis are each classifier's "
     "operating range, where it beats both trivial choices."],
    "Move a slider or type a value: both plots and the numbers below update at "
        "once. The address bar always holds the current view: copy it to share it.",
    "Keyboard: Tab to a slider, then the arrow keys (Page Up/Down for big steps).",
])


# Served by dashboard/api/__init__.py; assets/viewstate.js points each link at the whole view (the
# report and CSVs are the screen) and disables them, with the reason, until data is open.
EXPORTS = (("report.html", "Download report (HTML)"),
           # plotly.js inside: the file opens offline (the default loads it from this server).
           ("report.html?standalone=1", "standalone (offline, ~5 MB more)"),
           ("decision.json", "Export decision"),
           ("hull.csv", "hull.csv"), ("envelope.csv", "envelope.csv"),
           ("operating_ranges.csv", "operating ranges.csv"))


NO_EXPORT_YET = "Open a data set first: the downloads are of the data on screen."


def _exports() -> html.Nav:
    links = [html.A(label, id=f"export-{kind.split('.')[0].replace('_', '-')}"
                    + ("-standalone" if kind.endswith("standalone=1") else ""), download="",
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
