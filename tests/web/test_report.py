"""The static HTML report and CSV exports: ``dashboard.report``, ``costdash report`` and the routes."""

from __future__ import annotations

import csv
import io
import re
import subprocess
import sys
from html import escape
from pathlib import Path

import numpy as np
import plotly
import pytest

from costdash import analyze
from costdash.cli import main
from costdash.conditions import OperatingCondition
from costdash.io import load_predictions
from dashboard.report import build_report, csv_exports, safe_cell

from .helpers import make_predictions, shown_chosen_threshold

XSS = "<script>alert(1)</script>"
EVIL_FILE = "<img src=x onerror=alert(2)>.csv"
BUNDLE = Path(plotly.__file__).parent / "package_data" / "plotly.min.js"
MARKER = re.search(r"plotly\.js v[0-9.]+", BUNDLE.read_text(encoding="utf-8")[:500]).group(0)


def bundle_count(text: str) -> int:
    return text.count(MARKER)


@pytest.fixture(scope="module")
def bundle_marker_count() -> int:
    """How often the marker occurs in plotly.min.js itself (the report must hold it once)."""
    n = bundle_count(BUNDLE.read_text(encoding="utf-8"))
    assert n >= 1
    return n


@pytest.fixture(scope="module")
def hostile_csv(tmp_path_factory) -> Path:
    """Classifier names that are HTML and spreadsheet formulas."""
    table = make_predictions(n=800, seed=3).rename(
        columns={"alpha": XSS, "beta": "=1+2", "gamma": "@SUM(1)"})
    path = tmp_path_factory.mktemp("files") / EVIL_FILE
    table.to_csv(path, index=False)
    return path


def _no_external_resources(html: str) -> None:
    assert not re.search(r"<script[^>]*\bsrc\s*=", html, re.I)
    assert not re.search(r"<link[^>]*\bhref\s*=\s*[\"']?https?:", html, re.I)
    assert "cdn.plot.ly/plotly" not in html


def _span(html: str, css_class: str) -> str:
    return re.search(rf'class="{css_class}">(.*?)</b>', html).group(1)


# --- dashboard.report --------------------------------------------------------------------------

def test_report_is_self_contained(predictions_csv, bundle_marker_count):
    ds = load_predictions(predictions_csv)
    html = build_report(ds, OperatingCondition(0.3, 4.0, 1.0), title="My report")
    assert html.startswith("<!DOCTYPE html>") and html.rstrip().endswith("</html>")
    assert bundle_count(html) == bundle_marker_count            # plotly.js embedded once
    _no_external_resources(html)
    assert html.count('id="roc-figure"') == 1 and html.count('id="cost-figure"') == 1
    assert "<title>My report</title>" in html


def test_report_numbers_equal_the_core(predictions_csv):
    ds = load_predictions(predictions_csv)
    cond = OperatingCondition(0.3, 4.0, 1.0)
    html = build_report(ds, cond)
    op = analyze(ds, cond).operating_point
    assert _span(html, "chosen-classifier") == escape(op.vertex.classifier)
    shown_chosen_threshold(html, analyze(ds, cond))
    table = re.search(r'<table class="operating-point">.*?</table>', html, re.S).group(0)
    cells = re.findall(r"<td[^>]*>(.*?)</td>", table)
    assert cells[0] == escape(op.vertex.classifier)
    assert [float(c) for c in cells[2:]] == pytest.approx(
        [op.vertex.fpr, op.vertex.tpr, op.normalized_cost, op.expected_cost], rel=1e-3)
    # Every classifier is listed with its AUC and hull membership.
    result = analyze(ds, cond)
    classifiers = re.search(r'<table class="classifiers">.*?</table>', html, re.S).group(0)
    for c in result.classifiers:
        row = re.search(rf"<tr><td class=\"name\">{re.escape(escape(c.name))}</td>(.*?)</tr>",
                        classifiers).group(1)
        tds = re.findall(r"<td>(.*?)</td>", row)
        assert float(tds[0]) == pytest.approx(c.roc.auc, rel=1e-3)
        assert tds[-1] == ("yes" if c.name in result.hull.classifier else "no")
    hull = re.search(r'<table class="hull">.*?</table>', html, re.S).group(0)
    assert hull.count("<tr>") == 1 + result.hull.fpr.size
    # The header carries the conditions.
    assert f"{cond.pc:.4g}" in html and f"{ds.n:,}" in html


@pytest.mark.slow
def test_report_escapes_user_strings(hostile_csv):
    ds = load_predictions(hostile_csv)
    html = build_report(ds, None, name=hostile_csv.name, title=XSS)
    assert XSS not in html
    assert "<img" not in html
    assert escape(XSS) in html and escape(EVIL_FILE) in html
    # The figures' JSON escapes '<' too, so a name cannot close the script element.
    for script in re.findall(r"<script[^>]*>(.*?)</script>", html, re.S):
        assert "alert(1)" not in script or "<script>" not in script


@pytest.mark.slow
def test_report_with_bands(predictions_csv):
    from costdash.bands import cost_band

    ds = load_predictions(predictions_csv)
    band = cost_band(ds.scored[0], replicates=50, rng=1, grid=21)
    html = build_report(ds, None, bands=[band])
    assert html.count('id="band-figure-0"') == 1 and 'class="bands"' in html
    _no_external_resources(html)
    # An uncalibrated band (the re-tuned envelope's spread) is shown without a level, with
    # its label and what it is (not) a band for.
    section = html[html.index('<section id="bands">'):]
    assert "none (a spread)" in section and "90%" not in section
    assert escape(band.label) in section and escape(band.estimand) in section
    selected = cost_band(ds.scored[0], select="split", rng=1, grid=21)
    section = build_report(ds, None, bands=[selected])
    section = section[section.index('<section id="bands">'):]
    assert "<td>0.9</td>" in section and escape(selected.label) in section


def test_csv_exports_equal_the_core(predictions_csv):
    result = analyze(load_predictions(predictions_csv))
    files = csv_exports(result)
    assert set(files) == {"hull.csv", "envelope.csv", "operating_ranges.csv"}

    hull = list(csv.DictReader(io.StringIO(files["hull.csv"])))
    assert list(hull[0]) == ["fpr", "tpr", "classifier", "threshold"]
    np.testing.assert_array_equal([float(r["fpr"]) for r in hull], result.hull.fpr)
    np.testing.assert_array_equal([float(r["tpr"]) for r in hull], result.hull.tpr)
    assert tuple(r["classifier"] for r in hull) == result.hull.classifier
    thr = [float(r["threshold"]) if r["threshold"] else np.nan for r in hull]
    np.testing.assert_array_equal(thr, result.hull.threshold)

    env = list(csv.DictReader(io.StringIO(files["envelope.csv"])))
    np.testing.assert_array_equal([float(r["pc"]) for r in env], result.envelope.pc)
    np.testing.assert_array_equal([float(r["cost"]) for r in env], result.envelope.cost)

    ranges = list(csv.DictReader(io.StringIO(files["operating_ranges.csv"])))
    assert list(ranges[0]) == ["classifier", "lo", "hi", "auc", "cost_area", "on_hull"]
    for row, c in zip(ranges, result.classifiers, strict=True):
        assert row["classifier"] == c.name
        assert float(row["auc"]) == c.roc.auc and float(row["cost_area"]) == c.cost_area
        if c.operating_range is None:
            assert row["lo"] == row["hi"] == ""
        else:
            assert (float(row["lo"]), float(row["hi"])) == tuple(c.operating_range)
        assert row["on_hull"] == ("true" if c.name in result.hull.classifier else "false")


def test_csv_formula_injection_guard(hostile_csv):
    assert safe_cell("=cmd") == "'=cmd" and safe_cell("+1") == "'+1"
    assert safe_cell("-1") == "'-1" and safe_cell("@x") == "'@x"
    assert safe_cell("alpha") == "alpha" and safe_cell(XSS) == XSS
    files = csv_exports(analyze(load_predictions(hostile_csv)))
    names = [r["classifier"] for r in csv.DictReader(io.StringIO(files["operating_ranges.csv"]))]
    assert names == [XSS, "'=1+2", "'@SUM(1)"]
    for text in files.values():
        for row in csv.reader(io.StringIO(text)):
            for cell in row:
                assert not cell.startswith(("=", "+", "@")), cell
    # Numbers are not touched: a negative threshold stays a number.
    hull = list(csv.DictReader(io.StringIO(files["hull.csv"])))
    for r in hull:
        assert not r["threshold"].startswith("'")
        float(r["threshold"] or "nan")


# --- costdash report ---------------------------------------------------------------------------

@pytest.mark.slow
def test_cli_writes_report(predictions_csv, tmp_path, capsys, bundle_marker_count):
    out = tmp_path / "r.html"
    code = main(["report", str(predictions_csv), "-o", str(out), "--p-pos", "0.3",
                 "--cost-fn", "4", "--cost-fp", "1"])
    assert code == 0
    assert capsys.readouterr().out.strip() == str(out)
    html = out.read_text(encoding="utf-8")
    assert bundle_count(html) == bundle_marker_count
    _no_external_resources(html)
    analysis = analyze(load_predictions(predictions_csv), OperatingCondition(0.3, 4.0, 1.0))
    op = analysis.operating_point
    assert _span(html, "chosen-classifier") == op.vertex.classifier
    shown_chosen_threshold(html, analysis)
    assert escape(predictions_csv.name) in html


@pytest.mark.slow
def test_cli_report_with_bands_matches_cost_band(predictions_csv, tmp_path, capsys):
    from costdash.bands import cost_band

    out = tmp_path / "r.html"
    assert main(["report", str(predictions_csv), "-o", str(out), "--band", "beta",
                 "--band", "alpha", "--band", "beta", "--replicates", "120", "--level", "0.8",
                 "--seed", "3"]) == 0
    html = out.read_text(encoding="utf-8")
    assert html.count('id="band-figure-') == 2  # asked twice for beta: one band
    dataset = load_predictions(predictions_csv)
    beta = dataset.scored[[c.name for c in dataset.scored].index("beta")]
    # The pages' default: thresholds picked on a held-out half (closed form, calibrated).
    band = cost_band(beta, level=0.8, select="split", rng=3)
    section = html[html.index('<section id="bands">'):]
    assert "beta" in section and escape(band.label) in section and "– (closed form)" in section
    # --method percentile: the re-tuned envelope's spread, with its replicates and no level.
    assert main(["report", str(predictions_csv), "-o", str(out), "--band", "beta",
                 "--replicates", "120", "--level", "0.8", "--seed", "3",
                 "--method", "percentile"]) == 0
    section = out.read_text(encoding="utf-8")
    section = section[section.index('<section id="bands">'):]
    band = cost_band(beta, level=0.8, replicates=120, rng=3)
    assert "<td>120</td>" in section and escape(band.label) in section
    assert "none (a spread)" in section
    capsys.readouterr()
    assert main(["report", str(predictions_csv), "-o", str(out), "--band", "beta",
                 "--method", "wilson-mover"]) == 2
    assert "--method wilson-mover does not fit a whole curve" in capsys.readouterr().err
    assert main(["report", str(predictions_csv), "-o", str(out), "--band", "nope"]) == 2
    assert "--band nope" in capsys.readouterr().err


def test_cli_bad_condition(predictions_csv, tmp_path, capsys):
    out = tmp_path / "r.html"
    assert main(["report", str(predictions_csv), "-o", str(out), "--p-pos", "1.5"]) == 2
    assert "p(+)" in capsys.readouterr().err and not out.exists()


@pytest.mark.slow
def test_cli_without_plotly(predictions_csv, tmp_path):
    """Without plotly the command fails with one clear line, not a traceback."""
    code = ("import sys; sys.modules['plotly'] = None; "
            "from costdash.cli import main; "
            f"sys.exit(main(['report', {str(predictions_csv)!r}, '-o', "
            f"{str(tmp_path / 'r.html')!r}]))")
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert proc.returncode == 2, proc.stderr
    assert "costdash: error:" in proc.stderr and "plotly" in proc.stderr
    assert "Traceback" not in proc.stderr


@pytest.mark.slow
def test_core_does_not_import_plotly():
    code = ("import sys, costdash, costdash.cli, dashboard.commands; "
            "from costdash.cli import build_parser; build_parser(); "
            "sys.exit(1 if 'plotly' in sys.modules else 0)")
    assert subprocess.run([sys.executable, "-c", code]).returncode == 0


# --- the routes --------------------------------------------------------------------------------

def upload(client, path: Path, name: str = "predictions.csv") -> str:
    resp = client.post("/api/v1/datasets", data={"file": (io.BytesIO(path.read_bytes()), name)},
                       content_type="multipart/form-data")
    assert resp.status_code == 200, resp.get_json()
    return resp.get_json()["id"]


@pytest.mark.slow
def test_report_route(client, predictions_csv, bundle_marker_count):
    dataset_id = upload(client, predictions_csv)
    # ?standalone=1: plotly.js inside, nothing loaded from anywhere (a file that opens offline).
    resp = client.get(f"/api/v1/datasets/{dataset_id}/report.html?p_pos=0.3&cost_fn=4&cost_fp=1"
                      "&standalone=1")
    assert resp.status_code == 200
    assert resp.mimetype == "text/html"
    disposition = resp.headers["Content-Disposition"]
    assert disposition.startswith("attachment;") and ".html" in disposition
    html = resp.get_data(as_text=True)
    assert bundle_count(html) == bundle_marker_count
    _no_external_resources(html)
    # By default (issue 23: 5 MB less) plotly.js is the server's own, its one script address.
    served = client.get(f"/api/v1/datasets/{dataset_id}/report.html?p_pos=0.3&cost_fn=4"
                        "&cost_fp=1").get_data(as_text=True)
    assert bundle_count(served) == 0
    assert re.findall(r"<script[^>]*\bsrc\s*=\s*\"([^\"]+)\"", served) == [
        f"http://localhost/_dash-component-suites/plotly/package_data/"
        f"plotly.v{plotly.__version__.replace('.', '_')}m{int(BUNDLE.stat().st_mtime)}.min.js"]
    op = analyze(load_predictions(predictions_csv), OperatingCondition(0.3, 4.0, 1.0)).operating_point
    assert _span(html, "chosen-classifier") == op.vertex.classifier
    # Defaults: the data's prevalence, unit costs.
    default = client.get(f"/api/v1/datasets/{dataset_id}/report.html")
    assert default.status_code == 200
    ds = load_predictions(predictions_csv)
    assert f"{OperatingCondition(ds.prevalence).pc:.4g}" in default.get_data(as_text=True)


@pytest.mark.parametrize("query", ["p_pos=1.5", "p_pos=abc", "cost_fn=0", "cost_fp=-1",
                                   "cost_fn=nan"])
def test_report_route_bad_condition(client, predictions_csv, query):
    dataset_id = upload(client, predictions_csv)
    resp = client.get(f"/api/v1/datasets/{dataset_id}/report.html?{query}")
    assert resp.status_code == 400
    assert resp.get_json()["error"]


def test_csv_routes(client, predictions_csv):
    dataset_id = upload(client, predictions_csv)
    expected = csv_exports(analyze(load_predictions(predictions_csv)))
    for name, text in expected.items():
        resp = client.get(f"/api/v1/datasets/{dataset_id}/{name}")
        assert resp.status_code == 200, name
        assert resp.mimetype == "text/csv"
        assert resp.headers["Content-Disposition"].startswith("attachment;")
        assert resp.get_data(as_text=True) == text
    assert client.get(f"/api/v1/datasets/{dataset_id}/scores.csv").status_code == 404


def test_routes_unknown_ids(client):
    for dataset_id in ("0" * 32, "not-an-id", "<script>"):
        for path in ("report.html", "hull.csv", "envelope.csv", "operating_ranges.csv"):
            resp = client.get(f"/api/v1/datasets/{dataset_id}/{path}")
            assert resp.status_code == 404, (dataset_id, path)
            assert resp.is_json and "no data set" in resp.get_json()["error"]


@pytest.mark.slow
def test_report_download_includes_bands_computed_on_the_confidence_page(tmp_path,
                                                                        predictions_csv):
    from dashboard.factory import create_app
    from costdash.view import View
    from dashboard.pages.confidence import compute_band

    app = create_app({"data_dir": tmp_path / "d"})
    services = app.server.extensions["costdash"]
    record = services.store.put(predictions_csv, "predictions.csv")
    http = app.server.test_client()
    url = f"/api/v1/datasets/{record.id}/report.html"
    assert '<section id="bands">' not in http.get(url).get_data(as_text=True)

    data = {"id": record.id, "name": record.name}
    done = compute_band(services, data, "beta", None, 150, 4)
    assert done["key"] and "error" not in done
    # The page's report link: the whole view, whose model is the band's (assets/viewstate.js).
    href = url + View.parse({"model": "beta", "replicates": 150, "level": 0.8,
                             "seed": 4}).to_search()
    with_band = http.get(href).get_data(as_text=True)
    section = with_band[with_band.index('<section id="bands">'):]
    # The page's default band (held-out half, closed form: the replicates are not used).
    assert "beta" in section and "80% Clopper–Pearson–MOVER band" in section
    assert "– (closed form)" in section
    # Without band parameters, the page's defaults: this band had another seed (another half).
    assert '<section id="bands">' not in http.get(url).get_data(as_text=True)
    assert http.get(url + "?level=2").status_code == 400
    assert http.get(url + "?replicates=x").status_code == 400


# --- the view in the report ---------------------------------------------------------------------

def test_readout_formats_are_the_pages():
    """assets/explore-base.js's fmtNum, friendly and percent, as docs/dashboard.md states them."""
    from dashboard.report import friendly, percent, readout

    assert [readout(x) for x in (1 / 11, 10.0, 1e-6, float("inf"), 0.0, 123456.789, 2.5e20)] == \
        ["0.09091", "10.00", "1.000e-6", "inf", "0.000", "123457", "2.500e+20"]
    assert [friendly(x) for x in (1234.5, 0.5, 2.0, 0.0004567, 1.23e7)] == \
        ["1,230", "0.5", "2", "4.57e-4", "12,300,000"]
    assert [percent(x) for x in (0.1234, 0.05678, -0.5)] == ["12%", "5.7%", "-50%"]


def test_report_of_a_view(predictions_csv):
    from costdash.view import View

    ds = load_predictions(predictions_csv)
    view = View.parse("models=alpha,gamma&p_pos=0.3&cost_fn=4&volume=10&unit=kr&model=beta")
    html = build_report(ds, view=view)
    op = analyze(ds, OperatingCondition(0.3, 4.0, 1.0), models=["alpha", "gamma"]).operating_point
    assert _span(html, "chosen-classifier") == op.vertex.classifier
    assert "beta" not in html.split('id="figures"')[0]  # unticked: not even the view's model=
    assert "model=beta" not in html and "/explore?models=alpha,gamma&amp;p_pos=0.3" in html
    with pytest.raises(TypeError):
        build_report(ds, OperatingCondition(0.3), view=view)
    with pytest.raises(Exception, match="'delta'"):
        build_report(ds, view=View.parse("models=alpha,delta"))


def test_cli_report_volume_unit_and_view(predictions_csv, tmp_path, capsys):
    out = tmp_path / "r.html"
    assert main(["report", str(predictions_csv), "-o", str(out), "--volume", "40", "--unit",
                 "£", "--view", "models=beta&cost_fn=3", "--band", "beta",
                 "--replicates", "30"]) == 0
    html = out.read_text(encoding="utf-8")
    ds = load_predictions(predictions_csv)
    op = analyze(ds, OperatingCondition(ds.prevalence, 3.0, 1.0), models=["beta"])
    assert "per 40 cases" in html and " £" in html
    assert 'id="band-figure-0"' in html
    assert _span(html, "chosen-classifier") == op.operating_point.vertex.classifier
    # A band of a classifier the view does not tick is refused.
    assert main(["report", str(predictions_csv), "-o", str(out), "--view", "models=beta",
                 "--band", "alpha"]) == 2
    assert "not among the view's classifiers" in capsys.readouterr().err


@pytest.mark.slow
def test_the_report_draws_the_views_axes_strip_chart_and_single_thresholds(breast_cancer_csv):
    """Issue 10 item 8: what Explore shows for many classifiers and rare events (log axes,
    hull classifiers only, the operating-ranges strip chart) and the best single threshold
    beside each constraint's mix are in the report too."""
    import re

    from costdash.criteria import single_threshold_neyman_pearson
    from costdash.io import load_predictions
    from costdash.view import View
    from dashboard.report import build_report

    data = load_predictions(breast_cancer_csv)
    view = View.parse({"p_pos": "0.05", "cost_fn": "10", "log_fpr": "1", "log_pc": "1",
                       "hull_only": "1", "max_fpr": "0.1", "volume": "1000"})
    html = build_report(data, view=view, name="bc.csv")
    assert 'id="ranges-figure"' in html and "Operating ranges: where each classifier" in html
    single = single_threshold_neyman_pearson([c.roc for c in _rocs(data)], 0.1)
    text = re.search(r'id="constraint-np-single">([^<]*)<', html).group(1)
    assert f"{single.classifier} at score" in text and "the mix above gains TPR" in text
    plain = build_report(data, view=View.parse({"p_pos": "0.05", "cost_fn": "10"}), name="bc.csv")
    # The view's axes: log-odds PC(+) in cost space and the strip chart only when asked.
    assert "PC(+), log odds" in html and "PC(+), log odds" not in plain


def _rocs(data):
    from costdash.analysis import analyze

    return analyze(data).classifiers


def test_the_level_cell_names_where_a_partly_earned_level_holds():
    """A double bootstrap earns its level on part of the PC(+) range only: the report's level
    column says where, instead of a bare 0.9; a spread has none."""
    from types import SimpleNamespace

    import numpy as np

    from dashboard.report import _band_level_cell

    partly = SimpleNamespace(calibrated=True, level=0.9, level_range=(0.7, 0.8),
                             level_holds=np.array([False, True, True, False]))
    assert _band_level_cell(partly) == "0.9 on PC(+) 0.7–0.8 only"
    whole = SimpleNamespace(calibrated=True, level=0.95, level_range=(0.0, 1.0),
                            level_holds=np.array([True, True]))
    assert _band_level_cell(whole) == "0.95"
    spread = SimpleNamespace(calibrated=False, level=0.9, level_range=None,
                             level_holds=np.array([False]))
    assert _band_level_cell(spread) == "none (a spread)"
