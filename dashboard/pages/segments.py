"""The Segments page: one threshold for everyone, or one per segment (issue 28, item 4)?

For a data set uploaded with a segment column (region, product, site: offered below Explore's
upload zone once a file is read, ``segment_column`` of ``POST /api/v1/datasets``), per segment: its
rows and p(+) (its prevalence), the classifier and threshold optimal on its rows at that p(+) and
the view's costs, its expected cost, and the regret of the shared choice (the one the view's
conditions make on every row) on the same rows; above, what a threshold per segment saves in all.
The numbers are :func:`costdash.segments.segment_policy`'s (the rows of ``costdash decide
--segment-column``'s ``decision.segments``), obtained through the results service
(:func:`dashboard.results.segments_result`). No arithmetic here beyond scaling to the period.

On a read link (``/s/<token>/segments``) the page is read-only like the link's others: the
viewer may change the conditions as a what-if; nothing is saved.

Element ids (a stable contract): ``segments-p-pos``, ``segments-cost-fn``, ``segments-cost-fp``,
``segments-info``, ``segments-error``, ``segments-message``, ``segments-summary``,
``segments-graph``, ``segments-table``.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping
from contextlib import AbstractContextManager, contextmanager
from dataclasses import replace
from typing import Any

from dash import Dash, Input, Output, dcc, html

from costdash.errors import CostdashError
from costdash.view import View, field_named, number_text
from dashboard import ids
from dashboard.figures.common import graph_config, threshold_text
from dashboard.figures.segments import segments_figure
from dashboard.jobs.gate import ComputeRefused, client_key, heavy_work, run_bounded
from dashboard.page_kit import (check_fields, condition_field, each, follow_implied, record_view,
                                view_fields_store, warn)
from dashboard.results import segments_result
from dashboard.services import Services
from dashboard.storage import DatasetNotFound
from dashboard.viewstate import page_view, problems_note

NO_DATA = ("No data set is open. Upload a predictions file on the Explore page; once it is "
           "read, choose its segment column below the upload zone (a text column is offered), "
           "then come back here.")
NO_SEGMENTS = ("This data set has no segment column. Upload the file again on Explore and, once "
               "it is read, choose its segment column (region, product, site ...) below the "
               "upload zone; the file must have the wide layout (one row per case).")

HELP = html.Details(className="help segments-why", children=[
    html.Summary("What the numbers mean"),
    html.P(["Each segment is decided at ", html.B("its own p(+)"), " (its prevalence in the "
            "file) and the view's costs: the classifier and threshold shown are optimal on its "
            "rows. The ", html.B("shared threshold"), " is the choice the view's conditions make "
            "on the whole file, priced on each segment's rows at the segment's p(+)."]),
    html.P([html.B("Regret"), " is what keeping the shared threshold costs a segment per case "
            "(never below 0); the saving in all is the regret summed over the segments' rows. "
            "Per period, the volume is shared by the segments in proportion to their rows."]),
    html.P("A segment's own threshold is chosen on the same rows it is priced on (in hindsight): "
           "with few positive rows in a segment the saving is optimistic."),
])


def reference(view: View, *, shared: bool = False) -> dict[str, Any] | None:
    """What the page keeps of the view that its controls do not set (and whether it is a read
    link's, whose view never records the data set id)."""
    if not view.data:
        return None
    return {"id": view.data, "models": list(view.models or ()), "cost_tp": view.cost_tp,
            "cost_tn": view.cost_tn, "volume": view.volume, "unit": view.unit,
            "shared": shared}


def layout(query: Mapping[str, Any], services: Services, *, shared: Any = None,
           **_: Any) -> html.Div:
    """The Segments page, initialised from the view in the URL query (with ``shared``, a saved
    analysis opened by its read link, read-only)."""
    view, problems = page_view(query)
    if shared is not None:
        view = replace(view, data=shared.dataset_id)
    prevalence = None
    if view.data and shared is None:
        record = services.store.info(view.data)
        prevalence = record.prevalence if record is not None and record.n else None
    p_pos = view.p_pos if prevalence is None else view.condition(prevalence).p_pos
    return html.Div(className="segments-page", children=[
        dcc.Store(id=ids.SEGMENTS_REF, data=reference(view, shared=shared is not None)),
        dcc.Store(id=ids.SEGMENTS_DATA_ID, data=None if shared is not None else view.data),
        dcc.Store(id=ids.SEGMENTS_P_IMPLIED, data=prevalence),
        dcc.Store(id=ids.SEGMENTS_P_VIEW),
        dcc.Store(id=ids.SEGMENTS_URL),
        view_fields_store(ids.SEGMENTS_URL, VIEW_CONTROLS),
        *([html.P([html.B(f"Shared analysis: {shared.name}"), " — read-only: change the "
                   "conditions to see what if; nothing you do here is saved."],
                  className="shared-banner segments-shared")] if shared is not None else []),
        html.Section(className="data-bar folds-bar", children=[
            problems_note(problems),
            html.Div(className="folds-controls", children=[
                condition_field("p_pos", ids.SEGMENTS_P_POS, p_pos, compact=True,
                                placeholder="p(+)"),
                condition_field("cost_fn", ids.SEGMENTS_COST_FN, view.cost_fn, compact=True),
                condition_field("cost_fp", ids.SEGMENTS_COST_FP, view.cost_fp, compact=True),
            ]),
            html.Div(id=ids.SEGMENTS_INFO, className="dataset-info"),
            html.Div(id=ids.SEGMENTS_ERROR, className="error", role="alert"),
            html.Div(id=ids.SEGMENTS_MESSAGE, className="notice", role="status",
                     children=None if view.data else NO_DATA),
        ]),
        html.Section(className="card segments-readout", children=[
            html.P(id=ids.SEGMENTS_SUMMARY, className="segments-sentence"),
            # Wider than a phone: it scrolls in its box, the page does not.
            html.Div(id=ids.SEGMENTS_TABLE, className="table-scroll",
                     style={"overflowX": "auto", "maxWidth": "100%"}),
        ]),
        # Not in the pages' grid of fixed-height plots: one row per segment, the figure's own
        # height (the callback sets it), the whole width.
        html.Section(className="card segments-plot", children=[
            dcc.Graph(id=ids.SEGMENTS_GRAPH, figure=segments_figure(None),
                      config=graph_config("segments"), style=graph_style(None)),
            html.P("Expected cost per period of each segment: grey with the shared threshold, "
                   "coloured (the classifier's colour and hatching) with a threshold of its "
                   "own; the gap is the regret of sharing.", className="note"),
        ]),
        HELP,
    ])


# --- server side (a plain function; the callback only wires it) ------------------------------

def _gated(services: Services, data_id: str
           ) -> Callable[[], AbstractContextManager[Callable[[Callable[[], Any]], Any]]]:
    """A miss computed through the compute gate (a slot for this client and data set, a child
    process with a deadline), as the Threshold choice page's."""
    client = client_key()

    @contextmanager
    def run() -> Iterator[Callable[[Callable[[], Any]], Any]]:
        with heavy_work(services, client, "segments", handle=data_id) as deadline:
            yield lambda fn: run_bounded(fn, timeout=deadline.seconds_left(), what="segments")

    return run


def graph_style(figure: Any) -> dict[str, str]:
    """The graph's box: as tall as its figure (one row per segment)."""
    height = getattr(getattr(figure, "layout", None), "height", None) or 240
    return {"height": f"{int(height)}px", "width": "100%"}


def _money(value: float, unit: str) -> str:
    return f"{number_text(float(f'{value:.4g}'))} {unit}".strip()


def segments_table(rows: list[dict[str, Any]], *, volume: float, unit: str) -> html.Table:
    """One row per segment: n, p(+), its choice, its cost and the regret of sharing, per case
    and per period."""
    total = sum(int(r["n"]) for r in rows) or 1
    head = html.Tr([html.Th(t) for t in ("segment", "n", "p(+)", "classifier", "threshold",
                                         "expected cost / case", "regret vs shared / case",
                                         "saving / period")])
    body = []
    for r in rows:
        period = volume * int(r["n"]) / total
        body.append(html.Tr([
            html.Td(str(r["segment"]), className="segment-name"),
            html.Td(f"{int(r['n']):,}"), html.Td(f"{float(r['p_pos']):.4g}"),
            html.Td(str(r["classifier"])),
            html.Td(threshold_text(r["threshold"]).removeprefix("score ")
                    if r["threshold"] is not None else "—"),
            html.Td(f"{float(r['expected_cost']):.4g}"),
            html.Td(f"{float(r['regret_vs_shared']):.4g}"),
            html.Td(_money(float(r["regret_vs_shared"]) * period, unit)),
        ]))
    # One line per row (the box scrolls sideways at 390 px instead of rows growing tall).
    return html.Table(className="readout-table segments-rows", style={"whiteSpace": "nowrap"},
                      children=[html.Thead(head), html.Tbody(body)])


def segments_view(services: Services, ref: dict[str, Any] | None, p_pos: Any, cost_fn: Any,
                  cost_fp: Any) -> dict[str, Any]:
    """Everything on the page for a data set and the conditions: ``info``, ``error``,
    ``message``, ``summary``, ``figure``, ``table`` and ``p_implied``."""
    out: dict[str, Any] = {"info": "", "error": "", "message": "", "summary": "",
                           "figure": segments_figure(None), "table": None, "p_implied": None}
    ref = services.sharing.page_ref(ref)   # a read link's -> its scope
    if not ref or not ref.get("id"):
        out["message"] = NO_DATA
        return out
    typed, problems = check_fields({"p_pos": p_pos, "cost_fn": cost_fn, "cost_fp": cost_fp})
    try:
        full = services.views.full(ref["id"])
    except (DatasetNotFound, CostdashError) as exc:
        out["error"] = str(exc)
        return out
    out["p_implied"] = prevalence = float(full["prevalence"])
    out["info"] = (f"{full['name']}: {full['n']:,} cases, {full['n_pos']:,} positive "
                   f"(prevalence {prevalence:.4g})")
    if problems:
        out["error"] = warn(problems)
        return out
    volume = float(ref.get("volume") or field_named("volume").default)
    unit = str(ref.get("unit") or "")
    try:
        view = View().with_values(models=ref.get("models") or None, p_pos=typed["p_pos"],
                                  cost_fn=typed["cost_fn"], cost_fp=typed["cost_fp"],
                                  cost_tp=ref.get("cost_tp"), cost_tn=ref.get("cost_tn"))
        result = segments_result(services.results, ref["id"], view,
                                 run=_gated(services, ref["id"]))
    except (DatasetNotFound, CostdashError) as exc:
        out["error"] = str(exc)
        return out
    except ComputeRefused as exc:
        out["error"] = exc.message
        return out
    if result.get("segment_column") is None:
        out["message"] = NO_SEGMENTS
        out["figure"] = segments_figure(None, message="No segment column")
        return out
    if result.get("error"):
        out["error"] = result["error"]
        return out
    rows, shared = result["segments"], result["shared"]
    index = {c["name"]: c["index"] for c in full["classifiers"]}
    out["info"] += f"; {len(rows)} segments of column ‘{result['segment_column']}’"
    saving = float(result["saving_per_case"])
    shared_cost = float(shared["expected_cost"])
    out["summary"] = [
        "One shared threshold: ", html.B(str(shared["classifier"])),
        f" at {threshold_text(shared['threshold'])}, expected cost {shared_cost:.4g} per case "
        f"({_money(shared_cost * volume, unit)} per period of {volume:,.0f} cases). A threshold "
        "per segment saves ", html.B(f"{saving:.4g} per case"),
        f" ({_money(saving * volume, unit)} per period)",
        "." if saving > 0 else ": the shared threshold is already each segment's best."]
    out["table"] = segments_table(rows, volume=volume, unit=unit)
    out["figure"] = segments_figure(rows, shared=shared, volume=volume, unit=unit, index=index)
    return out


OUTPUTS = (("info", ids.SEGMENTS_INFO, "children"), ("error", ids.SEGMENTS_ERROR, "children"),
           ("message", ids.SEGMENTS_MESSAGE, "children"),
           ("summary", ids.SEGMENTS_SUMMARY, "children"),
           ("figure", ids.SEGMENTS_GRAPH, "figure"), ("style", ids.SEGMENTS_GRAPH, "style"),
           ("table", ids.SEGMENTS_TABLE, "children"),
           ("p_implied", ids.SEGMENTS_P_IMPLIED, "data"))

VIEW_CONTROLS = {"data": (ids.SEGMENTS_DATA_ID, "data"), "p_pos": (ids.SEGMENTS_P_VIEW, "data"),
                 "cost_fn": (ids.SEGMENTS_COST_FN, "value"),
                 "cost_fp": (ids.SEGMENTS_COST_FP, "value")}
"""The view fields this page's controls set (:func:`page_kit.record_view`)."""


def register_callbacks(app: Dash, services: Services) -> None:
    @app.callback(*[Output(i, p) for _, i, p in OUTPUTS], Input(ids.SEGMENTS_REF, "data"),
                  *each(Input, "value", ids.SEGMENTS_P_POS, ids.SEGMENTS_COST_FN,
                        ids.SEGMENTS_COST_FP))
    def _view(ref, p_pos, cost_fn, cost_fp):
        out = segments_view(services, ref, p_pos, cost_fn, cost_fp)
        out["style"] = graph_style(out["figure"])
        return tuple(out[k] for k, _, _ in OUTPUTS)

    follow_implied(app, ids.SEGMENTS_P_VIEW, ids.SEGMENTS_P_POS, ids.SEGMENTS_P_IMPLIED)
    record_view(app, ids.SEGMENTS_URL, VIEW_CONTROLS)
