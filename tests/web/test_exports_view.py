"""Exports are the screen: the report and CSV routes read the whole view from their query.

The Explore page links its downloads as ``/api/v1/datasets/<id>/report.html?<the view>`` (and
``hull.csv``, ``envelope.csv``, ``operating_ranges.csv``). For a view ticking two of the breast
cancer demo's five classifiers, the exports hold nothing of the other three; the report states
the choice of :func:`costdash.analyze` of the ticked classifiers under the view's conditions,
and the money figures of the Explore page (period cost = expected cost x volume, in the unit);
bad values are a JSON 400 naming the field and its bounds.
"""

from __future__ import annotations

import csv
import io
import re
from html import unescape
from pathlib import Path
from urllib.parse import urlsplit

import plotly
import pytest

from costdash.analysis import analyze, select_classifiers, threshold_text
from costdash.cli import main
from costdash.criteria import neyman_pearson, sensitivity, workforce
from costdash.io import load_predictions
from costdash.view import View
from dashboard.report import csv_exports, friendly, percent, readout

from .helpers import shown_chosen_threshold

TICKED = ("logreg", "stump")
UNTICKED = ("forest", "gbm", "naive_bayes")
QUERY = ("models=logreg,stump&p_pos=0.2&cost_fn=5&cost_fp=1&volume=250&unit=%24"
         "&sens_p=0.05,0.4&max_fpr=0.1&capacity=40&colour=blue")
"""The view of most tests (``colour`` is not a view field: ignored, as every page does)."""

BUNDLE = Path(plotly.__file__).parent / "package_data" / "plotly.min.js"
BUNDLE_MARKER = re.search(r"plotly\.js v[0-9.]+",
                          BUNDLE.read_text(encoding="utf-8")[:600]).group(0)


@pytest.fixture
def demo_id(client, breast_cancer_csv) -> str:
    resp = client.post("/api/v1/datasets", content_type="multipart/form-data",
                       data={"file": (io.BytesIO(breast_cancer_csv.read_bytes()),
                                      "breast-cancer.csv")})
    assert resp.status_code == 200, resp.get_json()
    assert resp.get_json()["classifiers"] == ["logreg", "forest", "gbm", "naive_bayes", "stump"]
    return resp.get_json()["id"]


@pytest.fixture(scope="module")
def demo(breast_cancer_csv):
    return load_predictions(breast_cancer_csv)


def view_of(query: str) -> View:
    return View.parse(query)


def without_plotly_bundle(html: str) -> str:
    """The report without the embedded plotly.js (whose code happens to contain "forest");
    a report loading it from the server (the route's default) as it is."""
    if BUNDLE_MARKER not in html:
        return html
    at = html.index(BUNDLE_MARKER)
    start, end = html.rindex("<script", 0, at), html.index("</script>", at)
    return html[:start] + html[end + len("</script>"):]


def cell(html: str, element_id: str) -> str:
    """The text of the element with this id (tags inside it, such as a threshold's, dropped)."""
    found = re.search(rf'<(\w+)[^>]*\bid="{element_id}"[^>]*>(.*?)</\1>', html, re.DOTALL)
    return unescape(re.sub(r"<[^>]+>", "", found.group(2)))


def section(html: str, name: str) -> str:
    return re.search(rf'<section id="{name}">.*?</section>', html, re.DOTALL).group(0)


def expected_analysis(demo, query: str):
    view = view_of(query)
    return view, analyze(demo, view.condition(demo.prevalence), models=view.models)


# --- only the ticked classifiers -----------------------------------------------------------------

@pytest.mark.parametrize("name", ["hull", "envelope", "operating_ranges"])
def test_csv_exports_hold_only_the_ticked_classifiers(client, demo_id, demo, name):
    resp = client.get(f"/api/v1/datasets/{demo_id}/{name}.csv?{QUERY}")
    assert resp.status_code == 200, resp.get_data(as_text=True)
    text = resp.get_data(as_text=True)
    _, analysis = expected_analysis(demo, QUERY)
    # Exactly the core's tables of the two: their own hull, envelope and ranges.
    assert text == csv_exports(analysis)[f"{name}.csv"]
    for other in UNTICKED:
        assert other not in text
    rows = list(csv.DictReader(io.StringIO(text)))
    if name == "operating_ranges":
        assert [r["classifier"] for r in rows] == list(TICKED)
    if name == "hull":
        assert {r["classifier"] for r in rows} <= {*TICKED, "all-negative", "all-positive"}
    # The overall hull of the two differs from the hull of all five (the page's point).
    everything = client.get(f"/api/v1/datasets/{demo_id}/{name}.csv").get_data(as_text=True)
    assert everything == csv_exports(analyze(demo))[f"{name}.csv"]
    if name != "envelope":
        assert any(other in everything for other in UNTICKED)


def test_csv_hull_is_the_hull_of_the_ticked_classifiers_alone(client, demo_id, demo):
    text = client.get(f"/api/v1/datasets/{demo_id}/hull.csv?models=stump").get_data(
        as_text=True)
    hull = analyze(select_classifiers(demo, ["stump"])).hull
    rows = list(csv.DictReader(io.StringIO(text)))
    assert [r["classifier"] for r in rows] == list(hull.classifier)
    assert [float(r["fpr"]) for r in rows] == hull.fpr.tolist()


@pytest.mark.slow
def test_report_holds_only_the_ticked_classifiers(client, demo_id):
    resp = client.get(f"/api/v1/datasets/{demo_id}/report.html?{QUERY}")
    assert resp.status_code == 200, resp.get_data(as_text=True)[:500]
    html = without_plotly_bundle(resp.get_data(as_text=True))
    for other in UNTICKED:
        assert other not in html, other
    for name in TICKED:
        assert name in section(html, "classifiers")
    assert "2 of 5 (the ticked ones)" in section(html, "header")


# --- the same choice and money figures as the Explore screen -----------------------------------

@pytest.mark.slow
def test_report_states_the_choice_of_the_core(client, demo_id, demo):
    html = client.get(f"/api/v1/datasets/{demo_id}/report.html?{QUERY}").get_data(as_text=True)
    _, analysis = expected_analysis(demo, QUERY)
    op = analysis.operating_point
    assert op.vertex.classifier in TICKED  # a real choice, not a trivial one
    assert op.condition.p_pos == 0.2 and op.condition.cost_fn == 5.0
    assert re.search(r'class="chosen-classifier">(.*?)</b>', html).group(1) == op.vertex.classifier
    shown = shown_chosen_threshold(html, analysis)
    assert len(shown) <= len(threshold_text(op.vertex.threshold))


@pytest.mark.slow
def test_report_money_figures_are_the_screens(client, demo_id, demo):
    html = client.get(f"/api/v1/datasets/{demo_id}/report.html?{QUERY}").get_data(as_text=True)
    view, analysis = expected_analysis(demo, QUERY)
    op = analysis.operating_point
    cond, v = op.condition, op.vertex
    per_case = op.expected_cost
    assert cell(html, "expected-cost") == f"{readout(per_case)} $"
    period = cell(html, "period-cost")
    assert period == f"{readout(per_case * view.volume)} $"
    assert float(period.split()[0]) == pytest.approx(per_case * 250, rel=1e-3)
    # Expected counts per period: TP = tpr p V, FN, FP = fpr (1 - p) V, TN.
    p, volume = cond.p_pos, view.volume
    expected = {"cm-tp": v.tpr * p * volume, "cm-fn": (1 - v.tpr) * p * volume,
                "cm-fp": v.fpr * (1 - p) * volume, "cm-tn": (1 - v.fpr) * (1 - p) * volume}
    for key, value in expected.items():
        assert cell(html, key) == friendly(value), key
        assert float(cell(html, key).replace(",", "")) == pytest.approx(value, rel=5e-3)
    # Against the better trivial choice, in money and as a share of what it costs (no
    # benefits here: flagging nothing costs p(+)C(−|+) a case, flagging everything p(−)C(+|−)).
    nothing = cond.pc <= 1 - cond.pc
    trivial = p * cond.cost_fn if nothing else (1 - p) * cond.cost_fp
    label = "flagging nothing" if nothing else "flagging everything"
    saved = trivial - per_case
    expected_saving = (f"{friendly(saved * volume)} $ ({percent(saved / trivial)}) less than "
                       f"{label}, which costs {friendly(trivial * volume)} $")
    assert cell(html, "saving-trivial") == expected_saving
    sentence = cell(html, "sentence")
    assert sentence == (f"At these costs, use {v.classifier} with threshold "
                        f"{analysis.classifier(v.classifier).readable_threshold(v.threshold)}: "
                        f"{friendly(per_case * volume)} $ per 250 cases, {expected_saving}.")


@pytest.mark.slow
def test_report_sensitivity_and_constraints_are_the_cores(client, demo_id, demo):
    html = client.get(f"/api/v1/datasets/{demo_id}/report.html?{QUERY}").get_data(as_text=True)
    view, analysis = expected_analysis(demo, QUERY)
    cond = analysis.operating_point.condition
    # Unset cost ranges are the point values.
    sens = sensitivity(analysis.hull, view.sens_p, (5.0, 5.0), (1.0, 1.0))
    readout_text = cell(html, "sensitivity-readout")
    assert readout_text.startswith(f"Over these ranges PC(+) runs from {readout(sens.pc_range[0])}"
                                   f" to {readout(sens.pc_range[1])}; optimal somewhere in them: ")
    for name in sens.classifiers:
        shown = {"all-negative": "flag nothing", "all-positive": "flag everything"}.get(name, name)
        assert shown in readout_text
    best = analysis.operating_point.expected_cost
    np_point = neyman_pearson(analysis.hull, 0.1)
    np_text = unescape(section(html, "constraints"))
    assert "Neyman–Pearson (FPR ≤ 0.100): " in np_text
    assert f"(FPR {readout(np_point.fpr, 3)}, TPR {readout(np_point.tpr, 3)})" in np_text
    np_extra = cond.expected_cost(cond.normalized_cost(np_point.fpr, np_point.tpr)) - best
    assert f"obeying it costs {readout(np_extra * 250)} $ per period" in np_text
    cap = workforce(analysis.hull, n_pos=0.2 * 250, n_neg=0.8 * 250, capacity=40)
    assert "Capacity (at most 40 flagged): " in np_text
    assert f"(FPR {readout(cap.fpr, 3)}, TPR {readout(cap.tpr, 3)})" in np_text


@pytest.mark.slow
def test_report_lists_the_view_and_links_back_to_it(client, demo_id):
    html = client.get(f"/api/v1/datasets/{demo_id}/report.html?{QUERY}").get_data(as_text=True)
    listed = dict(re.findall(r"<dt>(.*?)</dt><dd>(.*?)</dd>", section(html, "view")))
    listed = {unescape(k): unescape(v) for k, v in listed.items()}
    assert listed["Data set"] == demo_id
    assert listed["Classifiers"] == "logreg, stump"
    assert listed["p(+)"] == "0.2" and listed["C(−|+)"] == "5" and listed["C(+|−)"] == "1"
    assert listed["Volume"] == "250" and listed["Unit"] == "$"
    assert listed["Sensitivity range of p(+)"] == "0.05 to 0.4"
    assert listed["Neyman–Pearson FPR limit"] == "0.1" and listed["Capacity"] == "40"
    href = unescape(re.search(r'<a id="open-view" href="([^"]*)"', html).group(1))
    parts = urlsplit(href)
    # Absolute: a downloaded report is opened from disk and must still lead back.
    assert (parts.scheme, parts.netloc, parts.path) == ("http", "localhost", "/explore")
    assert View.parse(parts.query) == view_of(QUERY).with_values(data=demo_id)


@pytest.mark.slow
def test_report_of_the_default_view_says_the_prevalence(client, demo_id, demo):
    html = client.get(f"/api/v1/datasets/{demo_id}/report.html").get_data(as_text=True)
    listed = dict(re.findall(r"<dt>(.*?)</dt><dd>(.*?)</dd>", section(html, "view")))
    assert unescape(listed["p(+)"]).endswith("(the data's prevalence)")
    assert float(listed["p(+)"].split()[0]) == demo.prevalence
    assert "Classifiers" not in listed  # none ticked: all of them, as on the page
    assert cell(html, "period-cost").endswith(" €")


@pytest.mark.slow
def test_report_without_volume_has_no_period_figures(client, demo_id):
    html = client.get(f"/api/v1/datasets/{demo_id}/report.html?volume=0&unit=").get_data(
        as_text=True)
    assert cell(html, "period-cost") == "–" and cell(html, "cm-tp") == "–"
    assert "per case" in cell(html, "sentence")


# --- bands: the view's settings, the ticked classifiers ----------------------------------------

@pytest.mark.slow
def test_report_bands_follow_the_view(client, services, demo_id):
    from dashboard.pages.confidence import compute_band

    data = {"id": demo_id, "name": "breast-cancer.csv"}
    for model in ("logreg", "forest"):
        assert "error" not in compute_band(services, data, model, None, 60, 5)
    url = f"/api/v1/datasets/{demo_id}/report.html?models=logreg,stump&replicates=60"

    def bands(query: str = "", seed: int = 5) -> str | None:
        html = client.get(f"{url}&seed={seed}{query}").get_data(as_text=True)
        return section(html, "bands") if '<section id="bands">' in html else None

    # Neither band nor model: every ticked scored classifier whose band is cached.
    shown = bands("&level=0.8")
    assert shown is not None and "logreg" in shown and "forest" not in shown
    body = re.search(r'<table class="bands">.*?<tbody>(.*?)</tbody>', shown, re.DOTALL).group(1)
    (row,) = re.findall(r"<tr>(.*?)</tr>", body)
    cells = re.findall(r"<td[^>]*>(.*?)</td>", row)
    # The page's default band: thresholds picked on a held-out half, closed form, calibrated
    # (a level, and the band's label; what it is a band for is listed under the table).
    assert cells == ["logreg", "selected", "picked per PC(+) on a held-out half",
                     "clopper-pearson-mover", "0.8", "– (closed form)", "5",
                     ("80% Clopper–Pearson–MOVER band (pointwise), thresholds selected on a "
                      "stratified half and banded on the other half")]
    assert "The population cost, on new data, of the thresholds selected" in shown
    assert bands("&model=logreg") is not None
    assert bands("&model=forest") is None           # not ticked: not this report's
    assert bands("&band=forest") is None
    assert bands("&band=logreg&model=stump") is not None   # band wins over model
    assert bands(seed=6) is None                    # computed with another seed: not cached


# --- bad values: 400 with the bound ------------------------------------------------------------

EXPORTS = ("report.html", "hull.csv", "envelope.csv", "operating_ranges.csv")


@pytest.mark.parametrize("path", EXPORTS)
@pytest.mark.parametrize("query, message", [
    ("p_pos=2", "p(+) must be a number strictly between 0 and 1; got '2'."),
    ("cost_fn=0", "C(−|+) must be a number above 0; got '0'."),
    ("volume=-5", "Volume must be a number at least 0; got '-5'."),
    ("sens_p=0.5", ("Sensitivity range of p(+) must be two numbers (from, to) strictly between "
                    "0 and 1; got '0.5'.")),
    ("replicates=0", "Replicates (B) must be a whole number from 1 to 10,000; got '0'."),
    ("max_fpr=1.5", "Neyman–Pearson FPR limit must be a number from 0 to 1; got '1.5'."),
])
def test_bad_values_are_400_with_the_bound(client, demo_id, path, query, message):
    resp = client.get(f"/api/v1/datasets/{demo_id}/{path}?models=logreg&{query}")
    assert resp.status_code == 400
    assert resp.get_json() == {"error": message}


@pytest.mark.parametrize("path", EXPORTS)
@pytest.mark.slow
def test_unknown_classifiers_are_400_naming_them(client, demo_id, path):
    resp = client.get(f"/api/v1/datasets/{demo_id}/{path}?models=logreg,nope,Gbm")
    assert resp.status_code == 400
    message = resp.get_json()["error"]
    assert "'nope'" in message and "'Gbm'" in message and "'logreg'" not in message.split(";")[0]


@pytest.mark.slow
@pytest.mark.parametrize("path", EXPORTS)
def test_unknown_parameters_and_the_querys_data_are_ignored(client, demo_id, path):
    base = client.get(f"/api/v1/datasets/{demo_id}/{path}?models=stump")
    other = client.get(f"/api/v1/datasets/{demo_id}/{path}?models=stump&data=not-an-id"
                       "&colour=blue&band=")
    assert base.status_code == other.status_code == 200
    if path.endswith(".csv"):
        assert base.get_data() == other.get_data()


# --- thresholds that are not 0.5 do not read as 0.5 --------------------------------------------

def test_threshold_text_is_distinct_from_round_values():
    assert threshold_text(0.499996) == "0.499996"
    assert threshold_text(0.4999996) == "0.4999996"
    assert threshold_text(0.5) == "0.5" and threshold_text(0.25) == "0.25"
    assert threshold_text(None) == "none" and threshold_text(float("nan")) == "none"
    for value in (0.1 + 0.2, 1 / 3, 0.5 - 2**-40, 123456.75, -1e-9):
        assert float(threshold_text(value)) == value


def test_report_shows_a_threshold_just_below_half(client, tmp_path):
    path = tmp_path / "near-half.csv"
    path.write_text("y_true,a,b\n1,0.9,0.8\n1,0.4999996,0.3\n0,0.2,0.6\n0,0.1,0.1\n")
    resp = client.post("/api/v1/datasets", content_type="multipart/form-data",
                       data={"file": (io.BytesIO(path.read_bytes()), path.name)})
    dataset_id = resp.get_json()["id"]
    html = client.get(f"/api/v1/datasets/{dataset_id}/report.html?p_pos=0.5").get_data(
        as_text=True)
    assert re.search(r'class="chosen-classifier">(.*?)</b>', html).group(1) == "a"
    # a's next score down is 0.2: 0.4 flags the same cases; the exact value is on hover.
    assert re.search(r'<b title="exactly 0.4999996" class="chosen-threshold">0.4</b>', html)


# --- the command line gives the same report for the same view -----------------------------------

@pytest.mark.slow
def test_cli_report_is_the_downloads_for_the_same_view(client, demo_id, breast_cancer_csv,
                                                       tmp_path, capsys):
    out = tmp_path / "r.html"
    view_query = "models=logreg,stump&sens_p=0.05,0.4&max_fpr=0.1&capacity=40&p_pos=0.9"
    assert main(["report", str(breast_cancer_csv), "-o", str(out), "--view", view_query,
                 "--p-pos", "0.2", "--cost-fn", "5", "--volume", "250", "--unit", "$"]) == 0
    capsys.readouterr()
    cli = out.read_text(encoding="utf-8")
    served = client.get(f"/api/v1/datasets/{demo_id}/report.html?{QUERY}").get_data(
        as_text=True)
    for name in ("operating-point", "money", "sensitivity", "constraints", "classifiers",
                 "hull"):
        assert section(cli, name) == section(served, name), name
    for other in UNTICKED:
        assert other not in without_plotly_bundle(cli)


def test_cli_report_refuses_bad_view_options_in_the_views_words(breast_cancer_csv, tmp_path,
                                                                capsys):
    out = tmp_path / "r.html"
    assert main(["report", str(breast_cancer_csv), "-o", str(out), "--volume", "-1"]) == 2
    assert capsys.readouterr().err == ("costdash: error: Volume must be a number at least 0; "
                                       "got '-1'.\n")
    assert main(["report", str(breast_cancer_csv), "-o", str(out), "--view", "models=nope"]) == 2
    assert "'nope'" in capsys.readouterr().err
    assert main(["report", str(breast_cancer_csv), "-o", str(out), "--level", "1"]) == 2
    assert "Confidence level must be a number strictly between 0 and 1" in \
        capsys.readouterr().err
    assert not out.exists()


# --- a view invalid as a whole --------------------------------------------------------------------

BROWSER_ACCEPT = "text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8"


def test_a_report_of_an_invalid_combination_is_a_readable_page(client, demo_id):
    # Issue 24: C(+|+) = 50 above C(−|+) = 40 (each valid alone) made "Download report" show
    # a raw JSON 400 page.
    url = f"/api/v1/datasets/{demo_id}/report.html?p_pos=0.02&cost_fn=40&cost_tp=50"
    page = client.get(url, headers={"Accept": BROWSER_ACCEPT})
    assert page.status_code == 400 and page.mimetype == "text/html"
    text = page.get_data(as_text=True)
    assert text.lstrip().lower().startswith("<!doctype html")
    assert "C(+|+) must be below C(−|+)" in unescape(text)
    back = unescape(re.search(r"<a href='([^']*)'>Open this view on Explore", text).group(1))
    assert back.startswith(f"/explore?data={demo_id}&") and "cost_tp=50" in back
    # An API client (no Accept, or JSON first) still gets the JSON error, same words.
    for headers in ({}, {"Accept": "application/json"}):
        reply = client.get(url, headers=headers)
        assert reply.status_code == 400 and reply.is_json
        assert reply.get_json()["error"].startswith("C(+|+) must be below C(−|+)")
    # An unknown data set, from a browser: a page too, without a link to it.
    gone = client.get("/api/v1/datasets/" + "0" * 32 + "/report.html",
                      headers={"Accept": BROWSER_ACCEPT})
    assert gone.status_code == 404 and gone.mimetype == "text/html"
    assert "data=" not in gone.get_data(as_text=True)


@pytest.mark.slow
def test_report_sensitivity_counts_the_costs_of_the_correct_decisions(client, demo_id, demo):
    # The page asks the core with C(+|+) and C(−|−); the report did without them.
    query = "p_pos=0.2&cost_fn=5&cost_tp=-20&cost_tn=0.5&sens_p=0.05,0.4&sens_fn=2,8"
    html = client.get(f"/api/v1/datasets/{demo_id}/report.html?{query}").get_data(as_text=True)
    view, analysis = expected_analysis(demo, query)
    with_benefits = sensitivity(analysis.hull, view.sens_p, view.sens_fn, (1.0, 1.0),
                                cost_tp=-20.0, cost_tn=0.5)
    without = sensitivity(analysis.hull, view.sens_p, view.sens_fn, (1.0, 1.0))
    assert with_benefits.pc_range != without.pc_range
    assert cell(html, "sensitivity-readout").startswith(
        f"Over these ranges PC(+) runs from {readout(with_benefits.pc_range[0])} to "
        f"{readout(with_benefits.pc_range[1])}; ")
