"""A cold ``report.html`` reuses what the dashboard already keeps (issue 23: the cached view
model, the calibrated curves the Curves page computed) and shows exactly what it showed when it
computed them itself; its figures fill their box (width 100 %, height fixed)."""

from __future__ import annotations

import datetime as dt
import io
import json
import re

import pytest

from costdash.io import load_predictions
from costdash.view import View
from dashboard.config import Settings
from dashboard.factory import create_app
from dashboard.report import build_report
from dashboard.api import report_inputs
from dashboard.report.format import FIGURE_SIZE
from dashboard.results import calibrated_roc_result

from .helpers import make_predictions

WHEN = dt.datetime(2026, 1, 2, 3, 4, tzinfo=dt.timezone.utc)
FIXED = {"generated": WHEN, "name": "p.csv", "dashboard_url": "http://example.test",
         "plotly_src": "http://example.test/plotly.js",
         "standalone_url": "http://example.test/standalone"}
VIEWS = {
    "plain": {},
    # Log axes, hull classifiers only, constraints, sensitivity, pins and another classifier's
    # distributions: every section and figure the view can change.
    "rich": {"p_pos": "0.1", "cost_fn": "6", "log_fpr": "1", "log_pc": "1", "hull_only": "1",
             "max_fpr": "0.1", "volume": "1000", "capacity": "80", "unit": "EUR",
             "sens_p": "0.05,0.2", "pins": "alpha:0.5,gamma:0.2", "model": "beta"},
}


def _app(tmp_path, max_roc_points: int = 400):
    return create_app(Settings.from_mapping({"data_dir": tmp_path / "data",
                                             "cache_url": "simple://",
                                             "max_roc_points": max_roc_points}))


def _stored(app, csv_text: str) -> str:
    reply = app.server.test_client().post(
        "/api/v1/datasets", data={"file": (io.BytesIO(csv_text.encode()), "p.csv")},
        content_type="multipart/form-data")
    assert reply.status_code == 200, reply.get_json()
    return reply.get_json()["id"]


@pytest.fixture
def stored(tmp_path):
    """An app and a stored data set whose curves the report thins (3,000 scores with ties)."""
    app = _app(tmp_path)
    text = make_predictions(n=3000, seed=11).to_csv(index=False)
    return app, _stored(app, text), load_predictions(io.BytesIO(text.encode()), name="p.csv")


@pytest.mark.parametrize("max_points", [None, 400], ids=["full", "read-link"])
@pytest.mark.parametrize("which", sorted(VIEWS))
@pytest.mark.slow
def test_a_report_from_the_cached_view_model_is_the_same_report(stored, monkeypatch, which,
                                                                max_points):
    app, data_id, dataset = stored
    services = app.server.extensions["costdash"]
    view = View.parse(VIEWS[which])
    computed = build_report(dataset, view=view, max_points=max_points, **FIXED)
    kept = report_inputs(services, data_id, max_points)
    assert set(kept) == {"view_model", "calibrated"}

    def no_second_analysis(*_args, **_kwargs):
        raise AssertionError("the view model was built again")

    monkeypatch.setattr("dashboard.report.build_view_model", no_second_analysis)
    reused = build_report(dataset, view=view, max_points=max_points, **FIXED, **kept)
    assert reused == computed


@pytest.mark.parametrize("max_points", [None, 400], ids=["full", "read-link"])
@pytest.mark.slow
def test_the_calibrated_curves_the_curves_page_computed_are_not_fitted_again(stored,
                                                                             monkeypatch,
                                                                             max_points):
    app, data_id, dataset = stored
    services = app.server.extensions["costdash"]
    view = View.parse({"p_pos": "0.1", "cost_fn": "6", "model": "beta"})
    computed = build_report(dataset, view=view, max_points=max_points, **FIXED)
    assert 'class="calibrate"' in computed
    if max_points is not None:  # what a read link's Curves page computes: the thinned curves
        monkeypatch.setattr(services.results, "scope", lambda _id: "thinned")
    for method in ("platt", "isotonic"):
        calibrated_roc_result(services.results, data_id, "beta", method)
    monkeypatch.undo()
    # Read first: its one-time warm-up (two small reports) fits calibrations of its own.
    kept = report_inputs(services, data_id, max_points)
    fits = []
    import costdash.calibration

    real = costdash.calibration.calibrate_classifier
    monkeypatch.setattr(costdash.calibration, "calibrate_classifier",
                        lambda *a, **k: fits.append(a) or real(*a, **k))
    assert build_report(dataset, view=view, max_points=max_points, **FIXED, **kept) == computed
    assert fits == []
    # Without them (another classifier shown) the report fits its own, and says the same.
    other = View.parse({"p_pos": "0.1", "cost_fn": "6", "model": "gamma"})
    assert build_report(dataset, view=other, max_points=max_points, **FIXED, **kept) == \
        build_report(dataset, view=other, max_points=max_points, **FIXED)
    assert len(fits) == 4


def test_nothing_is_reused_when_the_cached_view_model_has_other_points(tmp_path):
    """``max_roc_points`` 300: the cached view model's curves are not the report's 400 points
    (a full report), but they are a read link's (300)."""
    app = _app(tmp_path, max_roc_points=300)
    data_id = _stored(app, make_predictions(n=3000, seed=11).to_csv(index=False))
    services = app.server.extensions["costdash"]
    assert report_inputs(services, data_id, None) == {}
    assert set(report_inputs(services, data_id, 300)) == {"view_model", "calibrated"}


def _figures(html: str) -> dict[str, list]:
    return {m.group(1): json.loads("[" + m.group(2) + "]") for m in re.finditer(
        r'Plotly\.newPlot\(\s*"([^"]+)",\s*(.*?)\s*\)\s*};?\s*</script>', html, re.S)}


@pytest.mark.slow
def test_the_figures_fill_their_box_and_keep_their_height(stored):
    _app_, _id, dataset = stored
    figures = _figures(build_report(dataset, view=View.parse(VIEWS["rich"]), **FIXED))
    assert {"roc-figure", "cost-figure", "ranges-figure", "curves-pr-figure",
            "choice-cost-figure", "choice-money-figure"} <= set(figures)
    for div_id, (_data, layout, _config) in figures.items():
        assert "width" not in layout and layout["autosize"] is True, div_id
    for div_id in ("roc-figure", "cost-figure", "curves-pr-figure", "curves-gains-figure",
                   "curves-hist-figure", "curves-rel-figure", "choice-money-figure"):
        assert figures[div_id][1]["height"] == FIGURE_SIZE[1], div_id


@pytest.mark.parametrize("scope", ["full", "thinned"])
@pytest.mark.slow
def test_a_report_keeps_its_calibrations_for_the_next_view(stored, monkeypatch, tmp_path,
                                                           scope):
    """The report route's child hands back the shown classifier's calibrations (issue 23: they
    do not depend on the view) as the cross-fit's maps; the web process keeps them, so the
    next report at other conditions fits none (it makes the curves from the maps), and says
    what a report fitting its own says; the Curves page's curve from them is the one it
    fits."""
    import costdash.calibration

    from .test_results_service import Tally

    app, data_id, dataset = stored
    services = app.server.extensions["costdash"]
    client = app.server.test_client()
    if scope == "thinned":  # a read link's report: its curves thinned to max_roc_points
        reply = client.post("/api/v1/analyses", data={
            "file": (io.BytesIO(make_predictions(n=3000, seed=11).to_csv(index=False).encode()),
                     "p.csv"), "name": "Q3"}, content_type="multipart/form-data")
        assert reply.status_code == 201, reply.get_json()
        data_id = reply.get_json()["dataset_id"]
        assert services.results.scope(data_id) == "thinned"
    max_points = services.results.max_points(scope)
    fits = Tally(tmp_path / "fits")  # the report is built in the compute gate's child
    real = costdash.calibration.calibrate_classifier
    # A fit: a call without maps (with them, the curve is made from kept maps).
    monkeypatch.setattr(costdash.calibration, "calibrate_classifier",
                        lambda c, method, *a, **k: k.get("maps") is None
                        and fits.add([c.name, method]) or real(c, method, *a, **k))
    base = f"/api/v1/datasets/{data_id}/report.html"
    assert client.get(f"{base}?p_pos=0.3&model=beta").status_code == 200
    assert ["beta", "platt"] in fits.values() and ["beta", "isotonic"] in fits.values()
    kept_keys = [k for k in services.results.keys_of(data_id)
                 if k.startswith("result:calibration-maps:")]
    assert len(kept_keys) == 2 and all(f":{scope}:" in k for k in kept_keys)
    # A new view (other conditions, the same classifier shown) through the route: no fit.
    fits.path.write_text("")
    assert client.get(f"{base}?p_pos=0.1&cost_fn=6&model=beta").status_code == 200
    assert fits.values() == []
    # What it builds from them is byte for byte the report that fits its own.
    view = View.parse({"p_pos": "0.1", "cost_fn": "6", "model": "beta"})
    kept = report_inputs(services, data_id, max_points, view)
    reused = build_report(dataset, view=view, max_points=max_points, **FIXED, **kept)
    assert fits.values() == []
    assert reused == build_report(dataset, view=view, max_points=max_points, **FIXED)
    assert len(fits.values()) == 2
    # The Curves page makes its curve from the kept maps too: the curve it would fit.
    if scope == "full":
        from dashboard.results import calibrated_roc_result

        fits.path.write_text("")
        from_maps = calibrated_roc_result(services.results, data_id, "beta", "platt")
        assert fits.values() == []
        roc = real(dataset.classifier("beta"), "platt")
        assert from_maps["tp"] == roc.tp.tolist() and from_maps["fp"] == roc.fp.tolist()

