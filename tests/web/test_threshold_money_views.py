"""Issue 28's views on the Threshold choice and Curves pages, without a browser: money against
the threshold (item 1), the top-fraction table (item 2) and the readable reliability diagram
with its "calibrate, then choose" preview (item 6), each checked against an independent
computation (brute force over thresholds; scikit-learn's precision_recall_curve,
calibration_curve and isotonic regression)."""

from __future__ import annotations

import numpy as np
import pytest
from dash import html, no_update
from sklearn.calibration import calibration_curve
from sklearn.isotonic import IsotonicRegression
from sklearn.linear_model import LogisticRegression
from sklearn.metrics import precision_recall_curve

from costdash.calibration import default_folds
from costdash.demo import load_demo
from costdash.view import View
from dashboard.pages import choice, curves

from .helpers import find

VIEW = "p_pos=0.1&cost_fn=20&cost_fp=1&cost_tp=-2&volume=1000&unit=€&models=logreg,gbm,stump"


def _text(component) -> str:
    if component is None:
        return ""
    if isinstance(component, (str, int, float)):
        return str(component)
    if isinstance(component, (list, tuple)):
        return "".join(_text(c) for c in component)
    return _text(getattr(component, "children", None))


def _rows(table, prefix):
    """{row id: [cell texts]} of a table whose rows carry ids starting with ``prefix``."""
    if isinstance(table, list):
        table = next(t for t in table if isinstance(t, html.Table))
    out = {}
    for tr in table.children[1].children:
        if tr.id and tr.id.startswith(prefix):
            out[tr.id] = [_text(c) for c in tr.children]
    return out


def _brute_money(y, s, p_pos, cost_fn, cost_fp, cost_tp=0.0, cost_tn=0.0):
    """Expected cost per case of flagging score >= t for every distinct score t, counted
    case by case (and flagging nothing first)."""
    pi = y.mean()
    ts = np.r_[np.inf, np.unique(s)[::-1]]
    out = []
    for t in ts:
        flag = s >= t
        tpr, fpr = (flag & y).sum() / y.sum(), (flag & ~y).sum() / (~y).sum()
        out.append(p_pos * (tpr * cost_tp + (1 - tpr) * cost_fn)
                   + (1 - p_pos) * (fpr * cost_fp + (1 - fpr) * cost_tn))
    del pi
    return ts, np.array(out)


@pytest.fixture(scope="module")
def demo():
    return load_demo("breast-cancer")


# --- money against the threshold -----------------------------------------------------------------

def test_money_curve_is_the_brute_force_cost_of_every_threshold(services, demo):
    record = services.put_demo("breast-cancer")
    view = View.parse(f"data={record.id}&{VIEW}&model=gbm&pins=gbm:0.5,logreg:0.3")
    out = choice.money_view(services, choice.reference(view), "gbm", None,
                            [{"model": "gbm", "threshold": 0.5},
                             {"model": "logreg", "threshold": 0.3}])
    assert out.error == "" and out.model == "gbm"
    c = demo.classifier("gbm")
    y, s = c.y_true.astype(bool), c.score
    ts, money = _brute_money(y, s, 0.1, 20.0, 1.0, -2.0)
    traces = {t.uid: t for t in out.figure.data}
    cost = traces["cost"]
    # Every drawn point is one of the brute force's thresholds at its cost, for 1000 cases.
    lookup = dict(zip(ts[1:].tolist(), (money[1:] * 1000).tolist()))
    assert len(cost.x) == len(ts) - 1              # small enough: nothing thinned
    for x, yv in zip(cost.x, cost.y):
        assert yv == pytest.approx(lookup[x], rel=1e-12, abs=1e-9)
    best = int(np.argmin(money))
    assert traces["cheapest"].x[0] == ts[best]
    assert traces["cheapest"].y[0] == pytest.approx(money[best] * 1000)
    # The gbm pin (slot 0) at its brute-force cost; the logreg pin is not this plot's.
    pin = traces["pin-0"]
    flag = s >= 0.5
    tpr, fpr = (flag & y).sum() / y.sum(), (flag & ~y).sum() / (~y).sum()
    assert pin.y[0] == pytest.approx(1000 * (0.1 * (tpr * -2 + (1 - tpr) * 20)
                                             + 0.9 * fpr), rel=1e-12)
    assert "pin-1" not in traces
    note = _text(out.note)
    assert "the cheapest threshold" in note and "Pin 1" in note and "Pin 2" not in note
    # Options: every ticked classifier, searchable by name.
    assert [o["value"] for o in out.options] == ["logreg", "gbm", "stump"]


@pytest.mark.slow
def test_money_defaults_to_the_current_choice_and_refuses_a_bad_capacity(services):
    record = services.put_demo("breast-cancer")
    view = View.parse(f"data={record.id}&{VIEW}")
    out = choice.money_view(services, choice.reference(view), None, None, [])
    full = services.views.full(record.id)
    assert out.model in ("logreg", "gbm", "stump") and out.error == ""
    from costdash.hull import optimal_vertex
    from dashboard.viewmodel import hull_from_entry
    hull = hull_from_entry(services.views.view(record.id, ["logreg", "gbm", "stump"])["hull"])
    assert out.model == optimal_vertex(hull, view.condition(full["prevalence"])).classifier
    bad = choice.money_view(services, choice.reference(view), "gbm", -5, [])
    assert "Capacity" in _text(bad.error) and bad.figure is no_update


def test_a_click_pins_and_a_second_click_unpins():
    click = {"points": [{"customdata": 0.25, "x": 0.25, "y": 3.0}]}
    pins, message = choice.pin_click(click, [], "gbm")
    assert pins == [{"model": "gbm", "threshold": 0.25}] and "Pinned gbm" in message
    again, message = choice.pin_click(click, pins, "gbm")
    assert again == [] and "Unpinned" in message
    full = [{"model": f"m{k}", "threshold": 0.1} for k in range(4)]
    assert choice.pin_click(click, full, "gbm")[0] is no_update
    assert choice.pin_click({"points": [{"customdata": None}]}, [], "gbm")[0] is no_update
    # A click in the browser carries the threshold as x (customdata of base64 arrays is lost).
    pins, _ = choice.pin_click({"points": [{"x": 0.75, "y": 3.0}]}, [], "gbm")
    assert pins == [{"model": "gbm", "threshold": 0.75}]
    _, message = choice.pin_click(click, [], "gbm", shared=True)
    assert "nothing is saved" in message


def test_the_pins_store_reaches_the_choice_summary(services):
    record = services.put_demo("breast-cancer")
    view = View.parse(f"data={record.id}&{VIEW}")
    out = choice.choice_view(services, choice.reference(view), "", None, None,
                             pins=[{"model": "gbm", "threshold": 0.5}])
    rows = {tr.id: _text(tr) for tr in html.Div(out.table).children.children[1].children}
    gbm = next(v for v in rows.values() if v.startswith("gbm"))
    assert "≥ 0.5 (pinned)" in gbm


# --- the top-fraction table ----------------------------------------------------------------------

def test_decile_table_against_precision_recall_curve_and_counting(services, demo):
    record = services.put_demo("breast-cancer")
    view = View.parse(f"data={record.id}&{VIEW}")
    out = choice.money_view(services, choice.reference(view), "logreg", 125, [])
    c = demo.classifier("logreg")
    y, s = c.y_true.astype(bool), c.score
    n = y.size
    precision, recall, thresholds = precision_recall_curve(y, s)
    rows = _rows(out.table, "choice-deciles")
    share = 125 / 1000
    fractions = sorted({*(k / 10 for k in range(1, 11)), share})
    assert len(rows) == len(fractions)
    for k, f in enumerate(fractions):
        rid = "choice-deciles-capacity" if f == share else f"choice-deciles-row-{k}"
        cells = rows[rid]
        # Brute force: the most top-scored cases within f·n that do not split a tie.
        order = np.sort(s)[::-1]
        allowed = int(np.floor(f * n + 1e-9 * n))
        ts = [t for t in np.unique(s) if (s >= t).sum() <= allowed]
        t = min(ts) if ts else None
        flagged = 0 if t is None else int((s >= t).sum())
        caught = 0 if t is None else int((y & (s >= t)).sum())
        assert cells[7] == f"{flagged:,}" and cells[5] == f"{caught:,}", (f, cells)
        if t is not None:
            j = int(np.searchsorted(thresholds, t))     # scikit-learn's point at score >= t
            assert thresholds[j] == t
            assert cells[3] == f"{precision[j]:.1%}" and cells[6] == f"{recall[j]:.1%}"
            assert cells[4] == f"{precision[j] / y.mean():.3g}"
            fpr = (flagged - caught) / (~y).sum()
            cost = 0.1 * (recall[j] * -2 + (1 - recall[j]) * 20) + 0.9 * fpr
            assert cells[2] == f"{cost * 1000:,.2f} €"
        del order
    assert "(capacity)" in rows["choice-deciles-capacity"][0]
    assert "Within the capacity (12.50% of cases)" in _text(out.note)
    traces = {t.uid: t for t in out.figure.data}
    assert "capacity" in traces


# --- reliability and calibrate, then choose ------------------------------------------------------

def _ref(record_id, extra=""):
    view = View.parse(f"data={record_id}&{VIEW}{extra}")
    return curves.reference(view)


@pytest.mark.parametrize("strategy", ["uniform", "quantile"])
def test_reliability_bins_match_scikit_learn(services, demo, strategy):
    record = services.put_demo("breast-cancer")
    out = curves.curves_view(services, _ref(record.id), "gbm", 0.1, 20, 1, None,
                             quantile_bins=["on"] if strategy == "quantile" else [])
    traces = {t.uid: t for t in out.rel.data}
    c = demo.classifier("gbm")
    y, s = c.y_true.astype(int), c.score
    prob_true, prob_pred = calibration_curve(y, s, n_bins=curves.REL_BINS, strategy=strategy)
    index = services.views.full(record.id)
    i = next(e["index"] for e in index["classifiers"] if e["name"] == "gbm")
    np.testing.assert_allclose(traces[f"rel-{i}"].x, prob_pred, rtol=1e-12)
    np.testing.assert_allclose(traces[f"rel-{i}"].y, prob_true, rtol=1e-12)
    # The counts under it: the selected classifier's examples per bin, by counting.
    counts = traces["rel-counts"]
    edges = (np.linspace(0, 1, curves.REL_BINS + 1) if strategy == "uniform"
             else np.percentile(s, np.linspace(0, 100, curves.REL_BINS + 1)))
    ids = np.searchsorted(edges[1:-1], s)
    expected = np.bincount(ids, minlength=curves.REL_BINS)
    assert np.asarray(counts.y).sum() == y.size
    np.testing.assert_array_equal(np.asarray(counts.y), expected)


def _isotonic_cross_fit(y, s, fold):
    out = np.empty(s.size)
    for k in np.unique(fold):
        held = fold == k
        iso = IsotonicRegression(out_of_bounds="clip").fit(s[~held], y[~held])
        out[held] = iso.predict(s[held])
    return out


def _platt_cross_fit(y, s, fold):
    out = np.empty(s.size)
    for k in np.unique(fold):
        held = fold == k
        yt = y[~held]
        n_pos, n_neg = yt.sum(), (~yt.astype(bool)).sum()
        # Platt's smoothed targets as a weighted logistic regression on duplicated rows.
        t = np.where(yt == 1, (n_pos + 1) / (n_pos + 2), 1 / (n_neg + 2))
        x = np.r_[s[~held], s[~held]][:, None]
        lab = np.r_[np.ones(yt.size), np.zeros(yt.size)]
        w = np.r_[t, 1 - t]
        lr = LogisticRegression(C=1e12, tol=1e-12, max_iter=10000).fit(x, lab, sample_weight=w)
        out[held] = lr.predict_proba(s[held][:, None])[:, 1]
    return out


def test_calibrate_then_choose_preview_against_independent_cross_fitting(services, demo):
    record = services.put_demo("breast-cancer")
    table = curves.calibrate_preview(services, _ref(record.id), "gbm", 0.1, 20, 1)
    assert isinstance(table, list), table
    c = demo.classifier("gbm")
    y, s = c.y_true.astype(int), c.score
    fold = c.fold if c.fold is not None else default_folds(y)
    pi = y.mean()
    # The threshold probability of the conditions at the data's prevalence: the Bayes rule
    # with the cost differences C(+|−) − C(−|−) = 1 and C(−|+) − C(+|+) = 20 + 2.
    odds = 1.0 / 22.0 * (0.9 / 0.1) * pi / (1 - pi)
    tau = odds / (1 + odds)

    def cost(flag):
        yb = y.astype(bool)
        tpr, fpr = (flag & yb).sum() / yb.sum(), (flag & ~yb).sum() / (~yb).sum()
        return 1000 * (0.1 * (tpr * -2 + (1 - tpr) * 20) + 0.9 * fpr)

    rows = _rows(table, "curves-calibrate-")
    expected = {"scores": cost(s >= tau),
                "isotonic": cost(_isotonic_cross_fit(y, s, fold) >= tau),
                "platt": cost(_platt_cross_fit(y, s, fold) >= tau - 1e-9)}
    _, money = _brute_money(y.astype(bool), s, 0.1, 20.0, 1.0, -2.0)
    expected["best"] = money.min() * 1000
    for method, value in expected.items():
        cells = rows[f"curves-calibrate-{method}"]
        assert cells[1] == f"{value:,.2f} €", (method, cells)
    assert f"{tau:.4g}" in _text(table)


def test_preview_refuses_scores_that_are_not_probabilities(services, tmp_path):
    rng = np.random.default_rng(3)
    n = 300
    y = rng.random(n) < 0.3
    margin = np.round(rng.normal(size=n) + 1.2 * y, 3)
    path = tmp_path / "margins.csv"
    path.write_text("y_true,margin\n" + "\n".join(f"{int(a)},{b}" for a, b in zip(y, margin)))
    record = services.store.put(path, "margins.csv")
    table = curves.calibrate_preview(services, _ref(record.id, ""), "margin", 0.3, 1, 1)
    rows = _rows(table, "curves-calibrate-")
    assert "not within [0, 1]" in rows["curves-calibrate-scores"][-1]
    assert rows["curves-calibrate-isotonic"][1].endswith("€")      # calibration still works


# --- on a read-only link -------------------------------------------------------------------------

def test_read_link_shows_the_views_from_its_thinned_curves(tmp_path, breast_cancer_csv):
    """Through a read link (at most 40 points per curve here) the money curve, the table and the
    calibrate table are read off the thinned curves the link shows: no count at a threshold
    between them, and the owner's handle appears nowhere."""
    import json

    from dashboard.config import Settings
    from dashboard.factory import create_app
    from dashboard.shell import route
    from dashboard.viewmodel import thinned_roc

    app = create_app(Settings.from_mapping({"data_dir": tmp_path / "data",
                                            "max_roc_points": 40}))
    services = app.server.extensions["costdash"]
    record = services.store.put(breast_cancer_csv, "b.csv")
    new = services.sharing.create(record.id, name="Shared", view={
        "p_pos": 0.2, "cost_fn": 10, "cost_fp": 1, "models": ["gbm", "logreg"],
        "model": "gbm", "capacity": 100})
    token = new.record.share_token
    content, _ = route(f"/s/{token}/choice", "?p_pos=0.3&quantile_bins=1", services)
    ref = find(content, "choice-ref").data
    assert ref["shared"] is True and record.id not in json.dumps(ref)
    assert find(content, choice.MONEY_MODEL).value == "gbm"
    assert find(content, choice.MONEY_CAPACITY).value == 100
    out = choice.money_view(services, ref, "gbm", 100, [])
    assert out.error == ""
    entry = next(c for c in services.views.full(record.id)["classifiers"] if c["name"] == "gbm")
    thin = thinned_roc(entry)
    shown = set(thin.threshold[1:].tolist())
    cost = next(t for t in out.figure.data if t.uid == "cost")
    assert set(cost.x) <= shown and len(cost.x) <= 40
    flagged = set((thin.tp + thin.fp).tolist())
    for cells in _rows(out.table, "choice-deciles").values():
        assert int(cells[7].replace(",", "")) in flagged
    assert "thinned" in _text(out.note)
    text = json.dumps([out.figure.to_plotly_json(), _text(out.note), _text(out.table)],
                      default=str)
    assert record.id not in text and new.manage_token not in text
    # Curves: the calibrate table's "scores" and "best" rows are points of the thinned curve.
    content, _ = route(f"/s/{token}/curves", "?p_pos=0.3&quantile_bins=1", services)
    assert find(content, curves.QUANTILE_BINS).value == ["on"]
    cref = find(content, "curves-ref").data
    table = curves.calibrate_preview(services, cref, "gbm", 0.3, 10, 1)
    rows = _rows(table, "curves-calibrate-")
    for method in ("scores", "best"):
        t = float(rows[f"curves-calibrate-{method}"][3].split("≥")[1])
        assert t in shown, method
    assert "thinned" in _text(table)
    _, message = choice.pin_click({"points": [{"x": float(cost.x[3])}]}, [], "gbm",
                                  shared=bool(ref.get("shared")))
    assert "nothing is saved" in message


# --- the report ----------------------------------------------------------------------------------

def test_report_carries_money_table_counts_and_calibrate(demo):
    """The report of a view shows what the pages show for it: the money section for the view's
    classifier with its capacity row, quantile bins with the counts under the reliability
    diagram, and the calibrate table, with the same numbers."""
    import re

    from dashboard.report import build_report

    view = View.parse(f"{VIEW}&model=gbm&capacity=125&quantile_bins=1&pins=gbm:0.5")
    page = build_report(demo, view=view)
    section = page[page.index('<section id="threshold-money">'):]
    section = section[:section.index("</section>")]
    assert "gbm at these conditions" in section and "Pin 1 (score ≥ 0.5)" in section
    c = demo.classifier("gbm")
    y, s = c.y_true.astype(bool), c.score
    _, money = _brute_money(y, s, 0.1, 20.0, 1.0, -2.0)
    from dashboard.report.format import friendly
    assert f"expected cost {friendly(money.min() * 1000)} € per period" in section
    assert "12.5% (capacity)" in section
    rows = re.findall(r"<tr>(.*?)</tr>", section)
    assert len(rows) == 1 + 11                   # the header, deciles and the capacity
    assert "rel-counts" in page and "quantile bins" in page
    assert "Calibrate, then choose the threshold: gbm" in page


# --- the API ---------------------------------------------------------------------------------------

def test_api_answers_the_pages_numbers(services, client, demo):
    record = services.put_demo("breast-cancer")
    query = f"{VIEW}&model=gbm&capacity=125&pins=gbm:0.5"
    reply = client.get(f"/api/v1/datasets/{record.id}/threshold-money.json?{query}")
    assert reply.status_code == 200
    got = reply.get_json()
    assert got["classifier"] == "gbm"
    c = demo.classifier("gbm")
    y, s = c.y_true.astype(bool), c.score
    ts, money = _brute_money(y, s, 0.1, 20.0, 1.0, -2.0)
    assert got["cheapest"]["expected_cost"] == pytest.approx(money.min(), rel=1e-12)
    assert got["cheapest"]["threshold"] == ts[int(np.argmin(money))]
    flag = s >= 0.5
    tpr, fpr = (flag & y).sum() / y.sum(), (flag & ~y).sum() / (~y).sum()
    assert got["pins"] == [{"threshold": 0.5, "expected_cost": pytest.approx(
        0.1 * (tpr * -2 + (1 - tpr) * 20) + 0.9 * fpr, rel=1e-12)}]
    table = got["top_fractions"]
    assert table["fraction"][table["capacity"]] == 0.125
    cal = got["calibrate_then_choose"]
    assert [r["method"] for r in cal["rows"]] == ["scores", "platt", "isotonic", "best"]
    # The same numbers the pages show.
    view = View.parse(f"data={record.id}&{query}")
    page = choice.money_view(services, choice.reference(view), "gbm", 125,
                             [{"model": "gbm", "threshold": 0.5}])
    assert f"{got['cheapest']['expected_cost'] * 1000:,.2f} €" in _text(page.note)
