"""The Folds and Multiclass pages without a browser: figure builders draw the core's arrays,
and the server handlers (called as plain functions) give the core's numbers and messages."""

from __future__ import annotations

import base64

import numpy as np
import pytest
from dash import no_update

from costdash.conditions import OperatingCondition
from costdash.demo import load_demo
from costdash.folds import dataset_fold_averages, fold_spread
from costdash.multiclass import (
    bcost,
    bdeltacost,
    confusion3d_from_labels,
    confusion_from_labels,
    load_cost_matrix,
    load_label_predictions,
)
from costdash.roc import thin_indices
from dashboard.figures.folds import folds_cost_figure, folds_roc_figure
from dashboard.figures.multiclass import bcost_figure
from dashboard.figures.palette import classifier_color
from dashboard.pages import folds, multiclass
from dashboard.pages.multiclass import (
    DEMO_COSTS_NAME,
    demo_path,
    fmt,
    load_input,
    run_multiclass,
)
from dashboard.shell import route

from .helpers import find


def trace(fig, uid):
    hits = [t for t in fig.data if t.uid == uid]
    assert len(hits) == 1, uid
    return hits[0]


def texts(component) -> str:
    """All the text in a component tree."""
    if component is None:
        return ""
    if isinstance(component, (str, int, float)):
        return str(component)
    if isinstance(component, (list, tuple)):
        return " ".join(texts(c) for c in component)
    return texts(getattr(component, "children", None))


# --- Folds: figure builders ------------------------------------------------------------------

@pytest.fixture(scope="module")
def bc():
    return load_demo("breast-cancer")


@pytest.fixture(scope="module")
def averages(bc):
    return dataset_fold_averages(bc, "forest")


def test_folds_cost_figure_draws_the_core_arrays(averages):
    condition = OperatingCondition(0.2, 5.0, 1.0)
    spread = fold_spread(averages, condition)
    fig = folds_cost_figure(averages, 1, condition=condition, spread=spread)
    avg = trace(fig, "average")
    np.testing.assert_array_equal(avg.x, averages.cost_pc)
    np.testing.assert_array_equal(avg.y, averages.cost_mean)
    assert avg.line.color == classifier_color(1) and avg.line.width > 3
    np.testing.assert_array_equal(trace(fig, "band-low").y, averages.cost_low)
    np.testing.assert_array_equal(trace(fig, "band-high").y, averages.cost_high)
    assert trace(fig, "band-low").fill == "tonexty"
    for k, env in enumerate(averages.envelopes):
        t = trace(fig, f"fold-{k}")
        np.testing.assert_array_equal(t.x, env.pc)
        np.testing.assert_array_equal(t.y, env.cost)
        assert t.line.width < avg.line.width and t.meta == averages.fold_labels[k]
    chosen = trace(fig, "chosen")
    np.testing.assert_array_equal(chosen.y, spread.normalized_costs)
    assert set(chosen.x) == {condition.pc}
    assert fig.layout.shapes[0].x0 == condition.pc
    assert fig.layout.xaxis.title.text.startswith("PC(+)")
    assert fig.layout.yaxis.title.text == "Normalized expected cost"


def test_folds_roc_figure_draws_the_core_arrays(averages):
    fig = folds_roc_figure(averages, 1, max_points=30)
    np.testing.assert_array_equal(trace(fig, "vertical").x, averages.roc_fpr)
    np.testing.assert_array_equal(trace(fig, "vertical").y, averages.roc_tpr_mean)
    np.testing.assert_array_equal(trace(fig, "vertical").customdata, averages.roc_tpr_std)
    np.testing.assert_array_equal(trace(fig, "vertical-high").y,
                                  np.minimum(averages.roc_tpr_mean + averages.roc_tpr_std, 1))
    np.testing.assert_array_equal(trace(fig, "vertical-low").y,
                                  np.maximum(averages.roc_tpr_mean - averages.roc_tpr_std, 0))
    np.testing.assert_array_equal(trace(fig, "threshold").x, averages.threshold_fpr)
    np.testing.assert_array_equal(trace(fig, "threshold").y, averages.threshold_tpr)
    idx = thin_indices(averages.pooled.fpr.size, 30)
    np.testing.assert_array_equal(trace(fig, "pooled").x, averages.pooled.fpr[idx])
    np.testing.assert_array_equal(trace(fig, "pooled").y, averages.pooled.tpr[idx])
    for k, roc in enumerate(averages.rocs):
        idx = thin_indices(roc.fpr.size, 30)
        np.testing.assert_array_equal(trace(fig, f"roc-fold-{k}").y, roc.tpr[idx])
    assert fig.layout.xaxis.title.text == "False positive rate (FPR)"


def test_empty_folds_figures():
    assert [t.uid for t in folds_cost_figure(None).data] == ["all-negative", "all-positive"]
    assert [t.uid for t in folds_roc_figure(None).data] == ["chance"]


# --- Folds: page state and handlers ----------------------------------------------------------

def test_folds_layout_reads_the_view(services):
    content, _ = route("/folds", f"?data={'a' * 32}&model=gbm&p_pos=0.2&cost_fn=5&cost_fp=0.5",
                       services)
    assert find(content, "folds-ref").data == {"id": "a" * 32, "model": "gbm", "models": []}
    assert find(content, "folds-model").value == "gbm"
    assert (find(content, "folds-p-pos").value, find(content, "folds-cost-fn").value,
            find(content, "folds-cost-fp").value) == (0.2, 5.0, 0.5)
    # Bad values: left at their defaults, and the page says which, with their bounds.
    content, _ = route("/folds", "?data=../x&p_pos=1&cost_fn=-2&cost_fp=nan", services)
    assert find(content, "folds-ref").data is None
    assert find(content, "folds-p-pos").value is None
    assert (find(content, "folds-cost-fn").value, find(content, "folds-cost-fp").value) == \
        (1.0, 1.0)
    text = str(content)
    assert "p(+) must be a number strictly between 0 and 1; got '1'." in text
    assert "C(−|+) must be a number above 0; got '-2'." in text
    for id_ in ("folds-p-pos", "folds-cost-fn", "folds-cost-fp"):
        props = find(content, id_).to_plotly_json()["props"]
        assert "min" not in props and "max" not in props, id_


@pytest.fixture
def bc_ref(services):
    return folds.demo_reference(services, "breast-cancer")


def test_folds_layout_ids_and_url_state(services, bc_ref):
    content, classes = route("/folds", f"?data={bc_ref['id']}&model=gbm&cost_fn=5", services)
    assert classes[3].endswith("active")
    for id_ in ("folds-model", "folds-p-pos", "folds-cost-fn", "folds-cost-fp",
                "folds-cost-graph", "folds-roc-graph", "folds-spread", "folds-error"):
        assert find(content, id_) is not None, id_
    assert find(content, "folds-model").value == "gbm"
    assert find(content, "folds-cost-fn").value == 5.0
    # p(+) not in the URL: the data's prevalence.
    assert find(content, "folds-p-pos").value == pytest.approx(212 / 569)
    assert find(content, "folds-ref").data == {"id": bc_ref["id"], "model": "gbm", "models": []}
    assert find(content, "folds-p-implied").data == pytest.approx(212 / 569)


def test_folds_start_from_the_conditions_and_selection_of_explore(services, bc_ref, bc):
    """Opened from Explore: its conditions fill the boxes; no p(+) means the data's prevalence
    (the one default rule); no model means the first ticked classifier."""
    content, _ = route("/folds", f"?data={bc_ref['id']}&p_pos=0.02&cost_fn=30&cost_fp=1.5"
                       "&models=stump,gbm", services)
    assert (find(content, "folds-p-pos").value, find(content, "folds-cost-fn").value,
            find(content, "folds-cost-fp").value) == (0.02, 30.0, 1.5)
    ref = find(content, "folds-ref").data
    assert ref == {"id": bc_ref["id"], "model": None, "models": ["stump", "gbm"]}
    out = folds.folds_view(services, ref, None, 0.02, 30.0, 1.5)
    assert out.model == "gbm"  # the first ticked, in the data's order
    assert out.p_pos is no_update and out.data_id == bc_ref["id"]
    spread = fold_spread(dataset_fold_averages(bc, "gbm"), OperatingCondition(0.02, 30, 1.5))
    assert f"{folds._fmt(spread.cost_mean)} ± {folds._fmt(spread.cost_std)}" in \
        texts(out.spread)
    content, _ = route("/folds", f"?data={bc_ref['id']}&cost_fn=30", services)
    assert find(content, "folds-p-pos").value == pytest.approx(bc.prevalence)


def test_folds_view_is_the_core(services, bc_ref, bc):
    out = folds.folds_view(services, bc_ref, None, None, 5.0, 1.0)
    assert out.error == "" and out.message == "" and out.model == "logreg"
    assert [o["value"] for o in out.options] == list(bc.names)
    assert out.p_pos == pytest.approx(bc.prevalence)  # filled in
    averages = dataset_fold_averages(bc, "logreg")
    np.testing.assert_array_equal(trace(out.cost, "average").y, averages.cost_mean)
    spread = fold_spread(averages, OperatingCondition(bc.prevalence, 5.0, 1.0))
    text = texts(out.spread)
    assert f"{folds._fmt(spread.cost_mean)} ± {folds._fmt(spread.cost_std)}" in text
    assert f"{folds._fmt(spread.threshold_mean)} ± {folds._fmt(spread.threshold_std)}" in text
    for t in spread.thresholds:
        assert f"score ≥ {t:.6g}" in text
    # A classifier from the dropdown, then one from the URL reference.
    out = folds.folds_view(services, bc_ref, "stump", 0.1, 1.0, 1.0)
    assert out.model == "stump" and out.p_pos is folds.no_update
    assert trace(out.cost, "average").line.color == classifier_color(4)
    out = folds.folds_view(services, {**bc_ref, "model": "gbm"}, None, 0.1, 1.0, 1.0)
    assert out.model == "gbm"


def test_folds_view_errors_and_messages(services, bc_ref, predictions_csv):
    bad = folds.folds_view(services, bc_ref, "gbm", 1.5, 1.0, 1.0)
    assert "p(+) must be a number strictly between 0 and 1; got '1.5'." in str(bad.error)
    # What was drawn stays: the cost figure and the spread are not updated.
    assert bad.cost is no_update and bad.spread is no_update
    assert trace(bad.roc, "vertical") is not None  # the ROC side does not depend on them
    bad = folds.folds_view(services, bc_ref, "gbm", 0.2, -1.0, 1.0)
    assert "C(−|+) must be a number above 0; got '-1'." in str(bad.error)
    record = services.store.put(predictions_csv, "predictions.csv")
    no_folds = folds.folds_view(services, {"id": record.id}, None, None, 1.0, 1.0)
    assert no_folds.message == folds.NO_FOLDS and no_folds.options == []
    assert [t.uid for t in no_folds.cost.data] == ["all-negative", "all-positive"]
    missing = folds.folds_view(services, {"id": "0" * 32}, None, None, 1.0, 1.0)
    assert "upload the file again" in missing.error
    nothing = folds.folds_view(services, None, None, None, 1.0, 1.0)
    assert nothing.demos_hidden is False and nothing.cost is folds.no_update
    assert nothing.message == folds.NO_DATA


def test_one_fold_is_one_fold(services, tmp_path):
    # Issue 24: "1 folds" on the pages.
    from dashboard.page_kit import dataset_line
    from dashboard.pages.explore import dataset_text

    from .helpers import make_predictions

    table = make_predictions(n=300, seed=2)
    table["fold"] = "only"
    path = tmp_path / "one-fold.csv"
    table.to_csv(path, index=False)
    record = services.store.put(path, "one-fold.csv")
    out = folds.folds_view(services, {"id": record.id}, "alpha", 0.2, 1.0, 1.0)
    full = services.views.full(record.id)
    for text in (out.info, texts(out.spread), trace(out.cost, "average").hovertemplate,
                 dataset_line(full), dataset_text(full)):
        assert "1 fold" in text and "1 folds" not in text, text
    assert "3 classifiers" in dataset_line(full) and "3 classifiers" in dataset_text(full)


# --- Multiclass: figure builder ----------------------------------------------------------------

def test_bcost_figure_draws_the_core_intervals():
    data = load_label_predictions(demo_path())
    labels, costs = load_cost_matrix(demo_path(DEMO_COSTS_NAME))
    rows = []
    for i, c in enumerate(data.classifiers):
        r = bcost(confusion_from_labels(c.y_pred, c.y_true, labels), costs, rng=3,
                  replicates=200)
        rows.append({"name": c.name, "index": i, "cost": r.cost, "low": r.low, "high": r.high,
                     "normal_low": r.normal_low, "normal_high": r.normal_high, "result": r})
    fig = bcost_figure(rows, 0.9)
    for r in rows:
        i, res = r["index"], r["result"]
        np.testing.assert_array_equal(trace(fig, f"bcost-{i}").x, [res.low, res.high])
        np.testing.assert_array_equal(trace(fig, f"normal-{i}").x,
                                      [res.normal_low, res.normal_high])
        np.testing.assert_array_equal(trace(fig, f"cost-{i}").x, [res.cost])
        assert trace(fig, f"bcost-{i}").line.color == classifier_color(i)
    assert list(fig.layout.yaxis.ticktext) == ["cautious", "accurate", "quick"]
    assert trace(fig, "bcost-0").y[0] > trace(fig, "bcost-2").y[0]  # first on top
    assert fig.layout.title.text == "BCOST 90% intervals"
    assert len(bcost_figure(None).data) == 0


# --- Multiclass: handlers ----------------------------------------------------------------------

def triage_demo_csv() -> str:
    """How costdash/data/multiclass-triage.csv was made (no randomness: exact counts).

    Counts per (true class, predicted class) are fixed; inside a true class each classifier's
    predictions are spread over the patients by its own permutation i -> (a*i + b) mod n_j
    (a coprime to n_j), and the rows are interleaved the same way.
    """
    classes = ["routine", "urgent", "emergency"]
    sizes = [360, 180, 60]
    counts = {  # per true class: predicted routine, urgent, emergency
        "cautious": [[288, 61, 11], [7, 151, 22], [0, 3, 57]],
        "accurate": [[335, 22, 3], [18, 155, 7], [4, 10, 46]],
        "quick": [[317, 36, 7], [36, 130, 14], [6, 12, 42]],
    }
    steps = {"cautious": (7, 0), "accurate": (11, 5), "quick": (13, 17)}
    y_true = np.repeat(np.array(classes, dtype=object), sizes)
    columns = {"y_true": y_true}
    for name, per_class in counts.items():
        a, b = steps[name]
        columns[name] = np.concatenate([
            np.repeat(np.array(classes, dtype=object), row)[(a * np.arange(n) + b) % n]
            for n, row in zip(sizes, per_class)])
    order = (7 * np.arange(y_true.size) + 3) % y_true.size
    lines = [",".join(columns)] + [",".join(str(col[i]) for col in columns.values())
                                   for i in order]
    return "\n".join(lines) + "\n"


def test_demo_files_are_the_documented_ones():
    assert demo_path().read_text() == triage_demo_csv()
    labels, costs = load_cost_matrix(demo_path(DEMO_COSTS_NAME))
    assert labels == ["routine", "urgent", "emergency"]
    np.testing.assert_array_equal(costs, [[0, 10, 50], [1, 0, 20], [3, 1, 0]])


@pytest.fixture
def demo(services):
    out = load_input(services, "multiclass-demo")
    assert out.error == ""
    return out


def test_demo_loads_labels_costs_and_pair(demo):
    assert "600 examples, 3 classifiers (cautious, accurate, quick)" in demo.info
    assert [r["predicted"] for r in demo.rows] == ["routine", "urgent", "emergency"]
    assert demo.rows[0] == {"predicted": "routine", "c0": 0, "c1": 10, "c2": 50}
    assert [c["headerName"] for c in demo.columns[1]["children"]] == ["routine", "urgent",
                                                                      "emergency"]
    assert (demo.a, demo.b) == ("cautious", "accurate")


def test_run_on_the_demo_is_bcost_and_bdeltacost(services, demo):
    rows = [dict(r) for r in demo.rows]
    rows[2]["c0"] = 7.5  # an edited cell: predicting emergency for a routine case
    out = run_multiclass(services, demo.ref, rows, level=0.9, replicates=500, laplace=0.2,
                         laplace_delta=0.0, seed=11, a="quick", b="accurate")
    assert out.error == ""
    labels, costs = load_cost_matrix(demo_path(DEMO_COSTS_NAME))
    costs[2, 0] = 7.5
    data = load_label_predictions(demo_path())
    text = texts(out.bcost)
    for row, c in zip(out.rows, data.classifiers):
        res = bcost(confusion_from_labels(c.y_pred, c.y_true, labels), costs, level=0.9,
                    replicates=500, laplace=0.2, rng=11)
        assert (row["cost"], row["low"], row["high"], row["normal_low"], row["normal_high"]) \
            == (res.cost, res.low, res.high, res.normal_low, res.normal_high)
        assert f"{c.name} {res.n:,} {fmt(res.cost)} {fmt(res.low)} {fmt(res.high)}" in text
    np.testing.assert_array_equal(trace(out.figure, "bcost-2").x,
                                  [out.rows[2]["low"], out.rows[2]["high"]])
    y_a, y_b, y_true = data.pair("quick", "accurate")
    d = bdeltacost(confusion3d_from_labels(y_a, y_b, y_true, labels), costs, level=0.9,
                   replicates=500, laplace=0.0, rng=11)
    got = out.delta_result
    assert (got.delta, got.low, got.high, got.reject) == (d.delta, d.low, d.high, d.reject)
    readout = texts(out.delta)
    assert f"[{fmt(d.low)}, {fmt(d.high)}]" in readout
    verdict = "reject ‘equal expected cost’ at the 90% level" if d.reject else "do not reject"
    assert verdict in readout


@pytest.mark.parametrize("value, message", [
    (-1, "row 1 ('routine'), column 'urgent': '-1' is negative (tick ‘allow negative costs’"),
    ("abc", "row 1 ('routine'), column 'urgent': 'abc' is not a number"),
    (None, "row 1 ('routine'), column 'urgent': '' is not a number"),
    ("inf", "row 1 ('routine'), column 'urgent': 'inf' is not a finite number"),
])
def test_invalid_cost_matrix_shows_the_core_message(services, demo, value, message):
    rows = [dict(r) for r in demo.rows]
    rows[0]["c1"] = value
    out = run_multiclass(services, demo.ref, rows, a="cautious", b="accurate")
    assert out.error.startswith("the cost matrix table, ") and message in out.error
    assert "Traceback" not in out.error and str(services.settings.data_dir) not in out.error
    assert out.bcost == "–" and out.delta == "–"  # no stale results


def test_negative_costs_when_allowed(services, demo):
    rows = [dict(r) for r in demo.rows]
    rows[0]["c0"] = -2  # a correct 'routine' call as a benefit
    out = run_multiclass(services, demo.ref, rows, a="cautious", b="accurate",
                         allow_negative=True)
    assert out.error == "" and out.rows[0]["cost"] < 0.41


@pytest.mark.parametrize("kwargs, message", [
    ({"level": 1.5}, "level must be strictly between 0 and 1"),
    ({"level": None}, "level must be a number strictly between 0 and 1"),
    ({"replicates": 10.5}, "replicates must be an integer"),
    ({"replicates": 0}, "replicates must be between 1 and 100000"),
    ({"laplace": -0.1}, "laplace (the Laplace correction lambda) must be finite and >= 0"),
    ({"seed": -1}, "the seed must be a whole number ≥ 0"),
])
def test_invalid_settings_show_the_message(services, demo, kwargs, message):
    out = run_multiclass(services, demo.ref, demo.rows, **kwargs)
    assert message in out.error


def test_run_pair_choices_and_fresh_seed(services, demo):
    same = run_multiclass(services, demo.ref, demo.rows, a="quick", b="quick", seed=None)
    assert same.error == "" and same.delta == "Choose two different classifiers A and B."
    assert run_multiclass(services, None, demo.rows).error == ("Load a label file or the demo "
                                                               "first.")


def test_unexpected_failure_is_a_message_not_a_traceback(services, demo, monkeypatch):
    def boom(*args, **kwargs):
        raise RuntimeError("internal detail")
    monkeypatch.setattr(multiclass, "bcost", boom)
    out = run_multiclass(services, demo.ref, demo.rows)
    assert "went wrong" in out.error and "internal detail" not in out.error


def upload(text: str) -> str:
    return "data:text/csv;base64," + base64.b64encode(text.encode()).decode()


def test_upload_long_layout_prefills_zero_one_costs(services):
    text = ("model,y_true,y_pred\n" + "a,1,1\na,2,2\na,3,1\na,2,3\n"
            "b,1,1\nb,2,1\nb,3,3\nb,2,2\n")
    out = load_input(services, "multiclass-upload", contents=upload(text), filename="long.csv")
    assert out.error == "" and out.ref["name"] == "long.csv"
    assert "long layout" in out.info and "2 classifiers (a, b)" in out.info
    assert [r["predicted"] for r in out.rows] == ["1", "2", "3"]
    assert [[r[f"c{j}"] for j in range(3)] for r in out.rows] == [[0, 1, 1], [1, 0, 1],
                                                                  [1, 1, 0]]
    run = run_multiclass(services, out.ref, out.rows, a="a", b="b", seed=1)
    assert run.error == ""
    assert [r["cost"] for r in run.rows] == [0.5, 0.25]  # 0/1 costs: the error rates
    assert run.delta_result.delta == 0.25


def test_upload_errors_name_the_users_file(services, demo):
    out = load_input(services, "multiclass-upload", contents=upload("y_true,a\n1,\n2,2\n"),
                     filename="gaps.csv")
    assert out.error == "gaps.csv, column 'a': empty label in row(s) 1"
    assert out.ref is multiclass.no_update  # the previous file stays
    out = load_input(services, "multiclass-upload", contents="not a data url", filename="x.csv")
    assert "could not read the upload" in out.error


def test_cost_matrix_csv_upload(services, demo):
    text = "actual\\predicted,routine,urgent,emergency\nroutine,0,1,3\nurgent,10,0,1\n" \
           "emergency,50,20,0\n"
    out = load_input(services, "multiclass-cost-upload", cost_contents=upload(text),
                     cost_filename="sk.csv", transpose=True, ref=demo.ref)
    assert out.error == "" and out.rows == demo.rows  # the transpose of the demo's matrix
    bad = load_input(services, "multiclass-cost-upload", ref=demo.ref, cost_filename="ab.csv",
                     cost_contents=upload(",routine,urgent\nroutine,0,1\nurgent,1,0\n"))
    assert bad.error.startswith("labels do not match: multiclass-triage.csv has labels missing "
                                "from ab.csv: 'emergency'")
    bad = load_input(services, "multiclass-cost-upload", cost_filename="neg.csv",
                     cost_contents=upload(",x,y\nx,0,-1\ny,1,0\n"))
    assert bad.error.startswith("neg.csv, row 1 ('x'), column 'y': '-1' is negative")


def test_multiclass_layout_ids(services):
    content, classes = route("/multiclass", "", services)
    from dashboard.pages import PAGES

    assert classes[[p.path for p in PAGES].index("/multiclass")].endswith("active")
    for id_ in ("multiclass-upload", "multiclass-demo", "multiclass-costs", "multiclass-run",
                "multiclass-bcost", "multiclass-bdeltacost", "multiclass-a", "multiclass-b",
                "multiclass-graph", "multiclass-error", "multiclass-level",
                "multiclass-replicates", "multiclass-laplace", "multiclass-seed"):
        assert find(content, id_) is not None, id_
    assert "ROWS = PREDICTED class, COLUMNS = ACTUAL class" in texts(content)
