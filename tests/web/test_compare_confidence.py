"""Compare and Confidence pages without a browser: the figure builders against the core's arrays,
the band cache, the job manager choice, the callbacks' handlers as plain functions, and the rules
every page keeps (the view as the one source of state, no page importing another)."""

from __future__ import annotations

import ast
import json
from importlib import import_module
from pathlib import Path

import numpy as np
import pytest
from dash import DiskcacheManager, no_update

from costdash.analysis import summarize_classifier
from costdash.band_choice import band_choice
from costdash.bands import ESTIMAND_SELECTED_SPLIT, cost_band, difference_band
from costdash.conditions import OperatingCondition
from costdash.costspace import envelope_difference
from costdash.demo import load_demo
from costdash.roc import roc_of
from costdash.view import VIEW_FIELDS, View
from dashboard import band_kit, page_kit
from dashboard.config import Settings
from dashboard.figures.bands import band_figure
from dashboard.figures.compare import difference_figure, envelopes_figure
from dashboard.figures.palette import classifier_color
from dashboard.jobs.bandcache import (
    BandCache,
    band_key,
    cost_band_key,
    decode_band,
    difference_band_key,
    encode_band,
)
from dashboard.jobs import background_manager
from dashboard.pages import PAGES, compare, confidence
from dashboard.shell import route

from .helpers import find

COUNTS = "model,tp,fp,fn,tn,threshold\nx,5,1,5,9,0.7\nx,8,4,2,6,0.4\ny,6,2,4,8,\n"
B = 200  # replicates in these tests: small, they only check plumbing against the core


@pytest.fixture(scope="module")
def demo():
    return load_demo("breast-cancer")


@pytest.fixture
def demo_ref(services):
    record = services.put_demo("breast-cancer")
    return {"id": record.id, "name": record.name}


REPLICATES_TOO_MANY = ("Replicates (B) must be a whole number from 1 to 10,000; "
                       "got '20000'.")


def by_uid(fig, uid):
    hits = [t for t in fig.data if t.uid == uid]
    assert len(hits) == 1, [t.uid for t in fig.data]
    return hits[0]


def assert_same(trace_values, core_values):
    np.testing.assert_array_equal(np.asarray(trace_values, dtype=float), core_values)


# --- figure builders -------------------------------------------------------------------------------

def test_band_figure_traces_are_the_core_arrays(demo):
    band = cost_band(demo.classifier("gbm"), replicates=B, rng=1)
    fig = band_figure(band, name="gbm", index=2, pc=0.3)
    for uid, values in (("band-low", band.low), ("band-high", band.high), ("cost", band.cost)):
        trace = by_uid(fig, uid)
        assert isinstance(trace.y, np.ndarray)  # sent as a typed array, not a list
        assert_same(trace.x, band.pc)
        assert_same(trace.y, values)
    assert by_uid(fig, "band-high").fill == "tonexty"
    assert by_uid(fig, "cost").line.color == classifier_color(2)
    assert [s.name for s in fig.layout.shapes] == ["pc"] and fig.layout.shapes[0].x0 == 0.3
    assert "bdata" in fig.to_json()
    assert {t.uid for t in fig.data} == {"all-negative", "all-positive", "band-low", "band-high",
                                        "cost"}


def test_band_figure_without_band_and_with_a_fixed_threshold(demo):
    summary = summarize_classifier(roc_of(demo.classifier("logreg")))
    fig = band_figure(None, name="logreg", index=0, envelope=summary.envelope)
    env = by_uid(fig, "envelope")
    assert_same(env.x, summary.envelope.pc)
    assert_same(env.y, summary.envelope.cost)
    line = cost_band(demo.classifier("logreg"), threshold=0.5, replicates=B, rng=0)
    fig = band_figure(line, name="logreg", index=0, envelope=summary.envelope)
    assert_same(by_uid(fig, "cost").y, line.cost)
    assert by_uid(fig, "envelope").line.dash == "dot"  # the best thresholds, for comparison
    assert "threshold 0.5" in by_uid(fig, "cost").name


def test_compare_figures_are_the_core_arrays(demo):
    a, b = (summarize_classifier(roc_of(demo.classifier(n))).envelope
            for n in ("gbm", "naive_bayes"))
    d = envelope_difference(a, b, a_name="gbm", b_name="naive_bayes")
    assert d.crossovers.size == 2
    fig = envelopes_figure(a, b, names=("gbm", "naive_bayes"), indices=(2, 3), difference=d)
    assert_same(by_uid(fig, "env-a").y, a.cost)
    assert_same(by_uid(fig, "env-b").x, b.pc)
    assert_same(by_uid(fig, "crossovers").x, d.crossovers)
    assert_same(by_uid(fig, "crossovers").y, a(d.crossovers))
    assert by_uid(fig, "env-b").line.color == classifier_color(3)

    # The pages' default: thresholds selected on a stratified half, calibrated.
    band = difference_band(demo.classifier("gbm"), demo.classifier("naive_bayes"),
                           select="split", rng=0)
    fig = difference_figure(d, indices=(2, 3), band=band)
    assert_same(by_uid(fig, "difference").x, d.pc)
    assert_same(by_uid(fig, "difference").y, d.diff)
    assert_same(by_uid(fig, "crossovers").x, d.crossovers)
    assert_same(by_uid(fig, "band-low").y, band.low)
    assert_same(by_uid(fig, "band-high").y, band.high)
    assert_same(by_uid(fig, "band-diff").y, band.diff)  # the band's own (held-out) estimate
    assert by_uid(fig, "band-high").name.replace("<br>", " ") == band.label
    assert band.label.startswith("90% discordant-pair Clopper–Pearson–MOVER band (pointwise)")
    shapes = [(s.x0, s.x1) for s in fig.layout.shapes]
    assert shapes == [(lo, hi) for lo, hi, _ in d.better_intervals()]
    assert band.calibrated and band.significant
    for side, name in (("a", "gbm"), ("b", "naive_bayes")):
        runs = [v for s in band.significant if s.better == name for v in (s.lo, s.hi)]
        if runs:
            assert [x for x in by_uid(fig, f"significant-{side}").x if np.isfinite(x)] == runs
        else:
            assert f"significant-{side}" not in {t.uid for t in fig.data}
    # The re-tuned envelopes: a resampling spread, no level and no significance bars.
    spread = difference_band(demo.classifier("gbm"), demo.classifier("naive_bayes"),
                             replicates=B, rng=0)
    fig = difference_figure(d, indices=(2, 3), band=spread)
    assert_same(by_uid(fig, "band-low").y, spread.low)
    assert not spread.calibrated and spread.significant == ()
    assert "%" not in by_uid(fig, "band-high").name
    assert by_uid(fig, "band-high").name.replace("<br>", " ") == spread.label
    assert not {"significant-a", "significant-b", "band-diff"} & {t.uid for t in fig.data}
    # Without a band: no band traces, still the shading.
    plain = difference_figure(d, indices=(2, 3))
    assert not {"band-low", "band-high"} & {t.uid for t in plain.data}
    assert len(plain.layout.shapes) == len(d.better_intervals())


# --- jobs: manager and band cache ------------------------------------------------------------------

def test_background_manager_choice(tmp_path):
    manager = background_manager(Settings.from_mapping({"data_dir": tmp_path}))
    assert isinstance(manager, DiskcacheManager)
    assert (tmp_path / "jobs").is_dir()
    with pytest.raises(ValueError, match="COSTDASH_JOBS_URL"):
        background_manager(Settings.from_mapping({"data_dir": tmp_path, "jobs_url": "http://x"}))
    assert Settings.from_env({"COSTDASH_JOBS_URL": "redis://h:6379/0"}).jobs_url == \
        "redis://h:6379/0"


def test_celery_manager_when_a_jobs_url_is_set(tmp_path):
    pytest.importorskip("celery")
    from dash import CeleryManager

    settings = Settings.from_mapping({"data_dir": tmp_path, "jobs_url": "redis://127.0.0.1:1/0"})
    assert isinstance(background_manager(settings), CeleryManager)


def test_app_uses_the_manager(web_app):
    assert isinstance(web_app._background_manager, DiskcacheManager)


def test_band_round_trip_and_keys(demo, services):
    band = cost_band(demo.classifier("forest"), replicates=B, rng=3)
    line = cost_band(demo.classifier("forest"), threshold=0.5, replicates=B, rng=3)
    diff = difference_band(demo.classifier("forest"), demo.classifier("gbm"), replicates=B,
                           rng=3)
    # The pages' defaults and the other choices: selected thresholds (+-inf among them),
    # closed form, simultaneous, double bootstrap.
    selected = cost_band(demo.classifier("forest"), select="split", rng=3)
    assert np.isinf(selected.thresholds).any()
    whole = cost_band(demo.classifier("forest"), threshold=0.5, simultaneous=True)
    double = cost_band(demo.classifier("forest"), method="double-bootstrap", replicates=200,
                       rng=3, inner_replicates=10)
    paired = difference_band(demo.classifier("forest"), demo.classifier("gbm"), select="split",
                             rng=3, simultaneous=True)
    for original in (band, line, diff, selected, whole, double, paired):
        back = decode_band(encode_band(original))
        assert type(back) is type(original)
        for name, value in vars(original).items():
            if isinstance(value, np.ndarray):
                np.testing.assert_array_equal(getattr(back, name), value)
                assert not getattr(back, name).flags.writeable
            else:
                assert getattr(back, name) == value, name
        np.testing.assert_array_equal(back.at_level(0.5).low, original.at_level(0.5).low)
    cache = BandCache(services.views.cache)
    key = band_key("cost", data="d", model="forest", threshold=None, replicates=B, seed=3)
    assert key == band_key("cost", seed=3, replicates=B, threshold=None, model="forest", data="d")
    assert key != band_key("cost", data="d", model="forest", threshold=0.5, replicates=B, seed=3)
    assert cache.get(key) is None
    cache.put(key, band)
    np.testing.assert_array_equal(cache.get(key).curves, band.curves)
    assert key.startswith("band:v2:cost:")


def test_band_keys_tell_the_band_choices_apart():
    """A band of another method, selection or scope is never served for this one; the
    replicates of a closed-form band do not matter."""
    def key(method=None, simultaneous=False, threshold=None, replicates=B):
        return cost_band_key("d", "gbm", threshold, replicates, 0,
                             band_choice(method, simultaneous, fixed=threshold is not None))

    keys = {key(), key("percentile"), key("double-bootstrap"), key(simultaneous=True),
            key(threshold=0.5), key("percentile", threshold=0.5),
            key(threshold=0.5, simultaneous=True)}
    assert len(keys) == 7
    assert key() == cost_band_key("d", "gbm", None, B, 0)  # the default: held-out split
    assert key() == key(replicates=B + 1) and key(threshold=0.5) == key(threshold=0.5,
                                                                        replicates=7)
    assert key("percentile") != key("percentile", replicates=B + 1)
    assert key("percentile", simultaneous=True) == key("percentile")  # none to ask for

    def dkey(method=None, simultaneous=False, threshold=None, replicates=B):
        return difference_band_key("d", "a", "b", replicates, 0,
                                   band_choice(method, simultaneous, difference=True,
                                               fixed=threshold is not None), threshold)

    dkeys = {dkey(), dkey("percentile"), dkey(simultaneous=True), dkey(threshold=0.5),
             dkey(threshold=(0.5, 0.6))}
    assert len(dkeys) == 5 and dkey(threshold=0.5) == dkey(threshold=(0.5, 0.5))
    assert compare.band_request_key("d", "a", "b", B, 0) == dkey()


# --- routing and layouts ---------------------------------------------------------------------------

def test_routes_and_id_contract(services):
    content, classes = route("/compare", "", services)
    assert classes[1] == "nav-link active"
    for id_ in ("compare-a", "compare-b", "compare-run", "compare-cancel", "compare-progress",
                "compare-significant", "compare-crossovers", "compare-better",
                "compare-envelopes", "compare-difference", "compare-level",
                "compare-replicates"):
        assert find(content, id_) is not None, id_
    content, classes = route("/confidence", "", services)
    assert classes[2] == "nav-link active"
    for id_ in ("confidence-model", "confidence-threshold", "confidence-replicates",
                "confidence-level", "confidence-run", "confidence-cancel", "confidence-progress",
                "confidence-summary", "confidence-graph", "confidence-pc"):
        assert find(content, id_) is not None, id_


def test_layouts_restore_url_state(services):
    data = "a" * 32
    content, _ = route("/confidence", f"?data={data}&model=gbm&level=0.8&replicates=500"
                       "&threshold=0.4&seed=7&p_pos=0.2&cost_fn=4", services)
    query = View.parse(find(content, "confidence-query").data)
    assert (query.data, query.model, query.p_pos, query.cost_fn) == (data, "gbm", 0.2, 4.0)
    assert find(content, "confidence-data-id").data == data
    assert find(content, "confidence-model").value == "gbm"
    assert find(content, "confidence-level").value == 0.8
    assert find(content, "confidence-replicates").value == 500
    assert find(content, "confidence-threshold").value == 0.4
    assert find(content, "confidence-seed").data == 7
    # p(+) given: its PC(+) needs no data set (0.2*4 / (0.2*4 + 0.8)).
    assert find(content, "confidence-pc").value == pytest.approx(0.5)
    content, _ = route("/compare", f"?data={data}&a=x&b=y&level=2&replicates=abc", services)
    query = View.parse(find(content, "compare-query").data)
    assert (query.data, query.a, query.b) == (data, "x", "y")
    assert (find(content, "compare-a").value, find(content, "compare-b").value) == ("x", "y")
    assert find(content, "compare-level").value == 0.9  # invalid values fall back to defaults
    assert find(content, "compare-replicates").value == 1000
    # ... and the page says which values it left out, in the schema's words.
    text = str(content)
    assert "Confidence level must be a number strictly between 0 and 1; got '2'." in text
    assert "Replicates (B) must be a whole number from 1 to 10,000; got 'abc'." in text


def test_number_boxes_carry_no_bounds(services):
    """A box with min/max makes Dash send None for a value outside them (the band vanished with
    "replicates must be an integer; got None"); the pages check bounds with the view schema."""
    for path, ids in (("/confidence", ("confidence-replicates", "confidence-level",
                                       "confidence-threshold", "confidence-pc")),
                      ("/compare", ("compare-replicates", "compare-level"))):
        content, _ = route(path, "", services)
        for id_ in ids:
            props = find(content, id_).to_plotly_json()["props"]
            assert "min" not in props and "max" not in props, (path, id_)


def test_confidence_reads_the_band_at_the_conditions_of_explore(services, demo_ref, demo):
    """Opened from Explore with conditions, the PC(+) box holds their PC(+); with none, that of
    the data's prevalence (the one default rule); a pc in the view wins."""
    conditions = "p_pos=0.02&cost_fn=30&cost_fp=1.5"
    content, _ = route("/confidence", f"?data={demo_ref['id']}&{conditions}", services)
    expected = OperatingCondition(0.02, 30, 1.5).pc
    assert find(content, "confidence-pc").value == pytest.approx(expected)
    assert find(content, "confidence-pc-implied").data == pytest.approx(expected)
    content, _ = route("/confidence", f"?data={demo_ref['id']}", services)
    assert find(content, "confidence-pc").value == pytest.approx(demo.prevalence)
    content, _ = route("/confidence", f"?data={demo_ref['id']}&{conditions}&pc=0.3", services)
    assert find(content, "confidence-pc").value == 0.3
    assert find(content, "confidence-pc-implied").data == pytest.approx(expected)
    # The data set known only once loaded (the one last opened): the load callback fills it.
    loaded = confidence.load(services, View.parse(conditions), demo_ref)
    assert loaded.pc == pytest.approx(expected) and loaded.pc_implied == loaded.pc
    loaded = confidence.load(services, View.parse(conditions + "&pc=0.3"), demo_ref)
    assert loaded.pc is no_update and loaded.pc_implied == pytest.approx(expected)


def _walk(component):
    """A layout's components, depth first."""
    yield component
    children = getattr(component, "children", None)
    for child in children if isinstance(children, (list, tuple)) else [children]:
        if child is not None and hasattr(child, "to_plotly_json"):
            yield from _walk(child)


def test_pages_record_their_fields_in_the_one_view(web_app):
    """Each page hands its controls to the browser's one view object; none writes the URL."""
    expected = {
        "confidence-url.data": (["data", "model", "threshold", "level", "replicates", "pc",
                                 "method", "simultaneous"],
                                ["confidence-data-id", "confidence-model",
                                 "confidence-threshold", "confidence-level",
                                 "confidence-replicates", "confidence-pc-view",
                                 "confidence-method-view", "confidence-simultaneous"]),
        "compare-url.data": (["data", "a", "b", "level", "replicates", "method", "simultaneous"],
                             ["compare-data-id", "compare-a", "compare-b", "compare-level",
                              "compare-replicates", "compare-method-view",
                              "compare-simultaneous"]),
        "folds-url.data": (["data", "model", "p_pos", "cost_fn", "cost_fp"],
                           ["folds-data-id", "folds-model", "folds-p-view", "folds-cost-fn",
                            "folds-cost-fp"]),
    }
    clientside = {c["output"]: c.get("clientside_function") for c in web_app._callback_list}
    services = web_app.server.extensions["costdash"]
    for output, (fields, inputs) in expected.items():
        callback = web_app.callback_map[output]
        assert [i["id"] for i in callback["inputs"]] == inputs, output
        # One clientside function (assets/pages.js) records every page's fields, named by the
        # store beside the page's own, which the page's layout holds.
        store = output.split(".")[0]
        assert [(i["id"], i["property"]) for i in callback["state"]] == \
            [(f"{store}-fields", "data")], output
        assert clientside[output] == {"namespace": page_kit.PAGES_NAMESPACE,
                                      "function_name": "recordView"}, output
        page = import_module(f"dashboard.pages.{store.split('-')[0]}")
        held = [c.data for c in _walk(page.layout({}, services))
                if getattr(c, "id", None) == f"{store}-fields"]
        assert held == [fields], output
    pages_js = (Path(page_kit.__file__).parent.parent / "assets" / "pages.js").read_text()
    assert "window.costdashView.record(names, values)" in pages_js
    for page in ("compare", "confidence", "folds"):
        source = (Path(page_kit.__file__).parent / "pages" / f"{page}.py").read_text()
        assert "replaceState" not in source and "url_writer" not in source, page
    assert "URL_JS" not in (Path(page_kit.__file__).parent / "pages" / "folds.py").read_text()


def _imported_modules(tree: ast.Module, package: str) -> set[str]:
    """Every module an ``import`` or ``from ... import`` of ``tree`` names, relative ones made
    absolute against ``package``; ``from a import b`` counts as ``a`` and ``a.b``."""
    found: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                parts = package.split(".")[: len(package.split(".")) - node.level + 1]
                base = ".".join(parts + ([base] if base else []))
            found.add(base)
            found.update(f"{base}.{alias.name}" for alias in node.names)
    return found


def test_no_page_imports_another_page():
    pages_dir = Path(page_kit.__file__).parent / "pages"
    modules = {p.stem for p in pages_dir.glob("*.py") if p.stem != "__init__"}
    assert {"compare", "confidence", "folds", "explore"} <= modules
    assert {p.module for p in PAGES} <= {f"dashboard.pages.{m}" for m in modules}
    offenders = {}
    for name in sorted(modules):
        tree = ast.parse((pages_dir / f"{name}.py").read_text())
        others = {f"dashboard.pages.{m}" for m in modules - {name}}
        hits = _imported_modules(tree, "dashboard.pages") & others
        if hits:
            offenders[name] = sorted(hits)
    assert offenders == {}


def test_imported_modules_sees_every_form():
    tree = ast.parse("import dashboard.pages.explore\nfrom dashboard.pages import folds\n"
                     "from .confidence import x\nfrom . import compare\n")
    found = _imported_modules(tree, "dashboard.pages")
    assert {"dashboard.pages.explore", "dashboard.pages.folds", "dashboard.pages.confidence",
            "dashboard.pages.compare"} <= found


def test_defaults_come_from_the_view():
    from costdash import view
    from dashboard.jobs import bandcache as jobs

    assert (jobs.DEFAULT_REPLICATES, jobs.DEFAULT_SEED) == (view.DEFAULT_REPLICATES,
                                                          view.DEFAULT_SEED)
    assert confidence.DEFAULT_LEVEL is view.DEFAULT_LEVEL
    tree = ast.parse(Path(jobs.__file__).read_text())
    assigned = {t.id for node in ast.walk(tree) if isinstance(node, (ast.Assign, ast.AnnAssign))
                for t in (node.targets if isinstance(node, ast.Assign) else [node.target])
                if isinstance(t, ast.Name)}
    assert not {"DEFAULT_REPLICATES", "DEFAULT_SEED"} & assigned


# --- Confidence handlers ---------------------------------------------------------------------------

def test_confidence_load(services, demo_ref):
    loaded = confidence.load(services, {"data": demo_ref["id"], "model": "gbm"}, None)
    assert loaded.model == "gbm" and loaded.data["id"] == demo_ref["id"]
    assert loaded.data_id == demo_ref["id"]
    assert [o["value"] for o in loaded.options] == ["logreg", "forest", "gbm", "naive_bayes",
                                                    "stump"]
    assert loaded.current == {"id": demo_ref["id"], "name": "breast-cancer.csv"}
    # No id in the URL: the data set last opened on another page.
    assert confidence.load(services, {}, demo_ref).model == "logreg"
    empty = confidence.load(services, {}, None)
    assert empty.data is None and "No data set is open" in str(empty.error)
    missing = confidence.load(services, {"data": "f" * 32}, None)
    assert "upload the file again" in str(missing.error)


def test_confidence_model_is_the_views_else_the_first_ticked(services, demo_ref):
    ref = {"data": demo_ref["id"]}
    assert confidence.load(services, {**ref, "models": ["stump", "gbm"]}, None).model == "gbm"
    assert confidence.load(services, {**ref, "model": "forest", "models": ["gbm"]},
                           None).model == "forest"
    # A model the data set does not have: the first ticked one, else the first classifier.
    assert confidence.load(services, {**ref, "model": "nope", "models": ["naive_bayes"]},
                           None).model == "naive_bayes"
    assert confidence.load(services, {**ref, "model": "nope"}, None).model == "logreg"
    content, _ = route("/confidence", f"?data={demo_ref['id']}&models=gbm,stump", services)
    assert View.parse(find(content, "confidence-query").data).models == ("gbm", "stump")


def test_confidence_default_band_is_calibrated_on_a_held_out_half(services, demo_ref, demo):
    first = confidence.render(services, demo_ref, "gbm", None, B, 0.9, None, 0, None)
    assert "Press Compute band" in first.status and first.summary == "–"
    assert first.caveat == ESTIMAND_SELECTED_SPLIT  # the question, before the band exists
    env = summarize_classifier(roc_of(demo.classifier("gbm"))).envelope
    assert_same(by_uid(first.figure, "envelope").y, env.cost)  # exact curve before any band

    calls = []
    done = confidence.compute_band(services, demo_ref, "gbm", None, B, 0,
                                   progress=lambda d, t: calls.append((d, t)))
    assert done["seconds"] > 0 and calls[-1] == (1, 1)  # closed form: one step
    json.dumps(done)  # the browser keeps only this small reply
    shown = confidence.render(services, demo_ref, "gbm", None, B, 0.9, 0.3, 0, done)
    fresh = cost_band(demo.classifier("gbm"), select="split", rng=0)
    assert fresh.calibrated and fresh.kind == "selected" and fresh.tpr is None
    assert_same(by_uid(shown.figure, "band-low").y, fresh.low)
    assert_same(by_uid(shown.figure, "band-high").y, fresh.high)
    assert_same(by_uid(shown.figure, "cost").y, fresh.cost)
    assert by_uid(shown.figure, "band-high").name.replace("<br>", " ") == fresh.label
    assert "stratified half" in fresh.label  # the selection is named
    assert "held-out cost" in by_uid(shown.figure, "cost").name
    assert by_uid(shown.figure, "envelope").line.dash == "dot"  # all rows, for comparison
    assert shown.caveat == fresh.estimand
    summary = str(shown.summary)
    assert "computed in" in shown.status and "At PC(+) = 0.3" in summary
    assert "90% band" in summary and "Threshold picked there" in summary
    # The replicates are not used by a closed-form band: another B is the same band.
    assert "kept from an earlier run" in confidence.render(
        services, demo_ref, "gbm", None, B + 1, 0.9, None, 0, None).status

    # A new level: read back from the cache and recomputed from the counts.
    again = confidence.compute_band(services, demo_ref, "gbm", None, B, 0)
    assert again["seconds"] is None  # cached
    at80 = confidence.render(services, demo_ref, "gbm", None, B, 0.8, None, 0, again)
    fresh80 = cost_band(demo.classifier("gbm"), level=0.8, select="split", rng=0)
    assert_same(by_uid(at80.figure, "band-low").y, fresh80.low)
    assert_same(by_uid(at80.figure, "band-high").y, fresh80.high)
    assert not np.array_equal(fresh80.low, fresh.low)
    assert "80% Clopper–Pearson–MOVER band" in by_uid(at80.figure, "band-high").name
    assert "kept from an earlier run" in at80.status
    # Another seed (another half) or the whole-curve band: not computed yet.
    assert "Press Compute band" in confidence.render(services, demo_ref, "gbm", None, B, 0.9,
                                                     None, 1, done).status
    whole = confidence.render(services, demo_ref, "gbm", None, B, 0.9, None, 0, done,
                              simultaneous=["on"])
    assert "Press Compute band" in whole.status
    done = confidence.compute_band(services, demo_ref, "gbm", None, B, 0, simultaneous=["on"])
    whole = confidence.render(services, demo_ref, "gbm", None, B, 0.9, None, 0, done,
                              simultaneous=["on"])
    fresh = cost_band(demo.classifier("gbm"), select="split", rng=0, simultaneous=True)
    assert_same(by_uid(whole.figure, "band-high").y, fresh.high)
    assert "(whole curve)" in by_uid(whole.figure, "band-high").name


@pytest.mark.slow
def test_confidence_bootstrap_methods_reuse_the_replicates(services, demo_ref, demo):
    """The resampling spread of the re-tuned envelope: a job with progress, no level shown;
    a level change re-cuts the replicates. The double bootstrap: approximate, with a level."""
    spread = {"method": "percentile"}
    first = confidence.render(services, demo_ref, "gbm", None, B, 0.9, None, 0, None, **spread)
    assert "Press Run bootstrap to compute the band of gbm from 200 replicates" in first.status
    calls = []
    done = confidence.compute_band(services, demo_ref, "gbm", None, B, 0,
                                   progress=lambda d, t: calls.append((d, t)), **spread)
    assert done["seconds"] > 0 and calls[-1] == (B, B)
    shown = confidence.render(services, demo_ref, "gbm", None, B, 0.9, 0.3, 0, done, **spread)
    fresh = cost_band(demo.classifier("gbm"), level=0.9, replicates=B, rng=0)
    assert not fresh.calibrated
    assert_same(by_uid(shown.figure, "band-low").y, fresh.low)
    assert_same(by_uid(shown.figure, "band-high").y, fresh.high)
    name = by_uid(shown.figure, "band-high").name
    assert "%" not in name and name.startswith("resampling spread of the re-tuned envelope")
    assert "90%" not in str(shown.summary) and "resampling spread" in str(shown.summary)
    assert shown.caveat == fresh.estimand and shown.caveat.startswith("None: the resampling")
    at80 = confidence.render(services, demo_ref, "gbm", None, B, 0.8, None, 0, None, **spread)
    fresh80 = cost_band(demo.classifier("gbm"), level=0.8, replicates=B, rng=0)
    assert_same(by_uid(at80.figure, "band-low").y, fresh80.low)
    assert not np.array_equal(fresh80.low, fresh.low)
    assert "kept from an earlier run" in at80.status
    assert "Press Run" in confidence.render(services, demo_ref, "gbm", None, B + 1, 0.9, None,
                                            0, done, **spread).status

    # The double bootstrap carries a level: at least 200 replicates.
    problems = confidence.band_settings(None, 100, 0.9, None, "double-bootstrap")[1]
    assert problems and "at least 200 replicates" in problems[0]
    done = confidence.compute_band(services, demo_ref, "gbm", None, 100, 0,
                                   method="double-bootstrap")
    assert done["key"] is None and "at least 200" in done["error"]
    done = confidence.compute_band(services, demo_ref, "gbm", None, B, 0,
                                   method="double-bootstrap")
    out = confidence.render(services, demo_ref, "gbm", None, B, 0.9, None, 0, done,
                            method="double-bootstrap")
    band = by_uid(out.figure, "band-high")
    assert band.name.startswith("90% double-bootstrap calibrated (approximate) band")
    assert "under-covers" in out.caveat


def test_confidence_fixed_threshold(services, demo_ref, demo):
    done = confidence.compute_band(services, demo_ref, "forest", 0.5, float(B), 0)
    out = confidence.render(services, demo_ref, "forest", 0.5, float(B), 0.9, None, 0, done)
    fresh = cost_band(demo.classifier("forest"), threshold=0.5)
    assert fresh.method == "clopper-pearson-mover" and fresh.calibrated
    assert_same(by_uid(out.figure, "cost").y, fresh.cost)
    assert_same(by_uid(out.figure, "band-high").y, fresh.high)
    assert out.caveat == fresh.estimand
    assert "TPR" in str(out.summary) and "90% Clopper–Pearson–MOVER band" in str(out.summary)
    # A curve's method does not fit a fixed threshold: its default instead (same band).
    assert confidence.choice_of(0.5, "split").method == "clopper-pearson-mover"
    assert confidence.compute_band(services, demo_ref, "forest", 0.5, B, 0,
                                   method="double-bootstrap")["key"] == done["key"]
    # The paper's percentile bootstrap: offered, without a level.
    done = confidence.compute_band(services, demo_ref, "forest", 0.5, B, 0, method="percentile")
    out = confidence.render(services, demo_ref, "forest", 0.5, B, 0.9, None, 0, done,
                            method="percentile")
    fresh = cost_band(demo.classifier("forest"), threshold=0.5, method="percentile",
                      replicates=B, rng=0)
    assert_same(by_uid(out.figure, "band-high").y, fresh.high)
    assert "%" not in by_uid(out.figure, "band-high").name
    assert out.caveat == fresh.estimand


def test_method_control_follows_the_question(services, demo_ref):
    """Without a threshold: held-out half (default), spread, double bootstrap; with one:
    Clopper–Pearson–MOVER (default), the old Wilson–MOVER, percentile. The replicates box is
    disabled for closed-form bands,
    and the whole-curve toggle needs one."""
    options, value, whole, note, replicates_off, run, default = confidence.method_control(
        services, demo_ref, "gbm", None, None, [])
    assert [o["value"] for o in options] == ["split", "percentile", "double-bootstrap"]
    assert value == default == "split" and replicates_off and run == "Compute band"
    assert not whole[0]["disabled"] and "replicates are not used" in note
    _, value, whole, _, replicates_off, run, _ = confidence.method_control(
        services, demo_ref, "gbm", None, "percentile", ["on"])
    assert value == "percentile" and whole[0]["disabled"] and not replicates_off
    assert run == "Run bootstrap"
    options, value, _, _, _, _, default = confidence.method_control(
        services, demo_ref, "gbm", 0.5, "double-bootstrap", [])
    assert [o["value"] for o in options] == ["clopper-pearson-mover", "wilson-mover",
                                             "percentile"]
    assert value == default == "clopper-pearson-mover"
    content, _ = route("/confidence", f"?data={demo_ref['id']}&model=gbm", services)
    assert find(content, "confidence-method").value == "split"
    assert find(content, "confidence-replicates").disabled is True
    assert find(content, "confidence-run").children == "Compute band"


VIEW_HAS_BAND_CHOICE = {"method", "simultaneous"} <= {f.name for f in VIEW_FIELDS}


@pytest.mark.slow
@pytest.mark.skipif(not VIEW_HAS_BAND_CHOICE,
                    reason="costdash.view has no method/simultaneous fields yet")
def test_links_carry_the_band_choice(services, demo_ref, client):
    """A link's method= and simultaneous= open the pages on that band, and the report download
    of the same view finds the band the page computed."""
    ref = f"?data={demo_ref['id']}&model=gbm"
    content, _ = route("/confidence", ref + "&method=percentile&simultaneous=1", services)
    assert find(content, "confidence-method").value == "percentile"
    assert find(content, "confidence-replicates").disabled is False
    assert find(content, "confidence-simultaneous").value == ["on"]
    content, _ = route("/confidence", ref + "&threshold=0.5&method=split", services)
    assert find(content, "confidence-method").value == "clopper-pearson-mover"  # fits the question
    content, _ = route("/compare", ref + "&method=percentile", services)
    assert find(content, "compare-method").value == "percentile"
    query = View.parse({"method": "percentile", "simultaneous": True}).to_query()
    assert (query["method"], query["simultaneous"]) == ("percentile", "1")

    assert "error" not in confidence.compute_band(services, demo_ref, "gbm", None, B, 0,
                                                  method="percentile")
    url = f"/api/v1/datasets/{demo_ref['id']}/report.html?model=gbm&replicates={B}"
    html = client.get(url + "&method=percentile").get_data(as_text=True)
    assert '<section id="bands">' in html and "resampling spread" in html
    assert '<section id="bands">' not in client.get(url).get_data(as_text=True)


def test_confidence_bad_inputs(services, demo_ref):
    spread = {"method": "percentile"}
    out = confidence.render(services, demo_ref, "gbm", None, 0, 0.9, None, 0, None, **spread)
    assert "Replicates (B) must be a whole number from 1 to 10,000; got '0'." in str(out.status)
    # A closed-form band does not use the replicates (the box is disabled): not checked.
    assert "Press Compute band" in confidence.render(services, demo_ref, "gbm", None, 0, 0.9,
                                                     None, 0, None).status
    out = confidence.render(services, demo_ref, "gbm", None, B, 1.5, None, 0, None)
    assert ("Confidence level must be a number strictly between 0 and 1; got '1.5'."
            in str(out.status))
    out = confidence.render(services, demo_ref, "gbm", None, B, None, None, 0, None)
    assert "Confidence level must be a number strictly between 0 and 1; the box is empty." \
        in str(out.status)
    out = confidence.render(services, demo_ref, "gbm", None, B, 0.9, 2, 0, None)
    assert "PC(+) to read the band at must be a number from 0 to 1; got '2'." in str(out.status)
    out = confidence.render(services, demo_ref, "gbm", float("inf"), B, 0.9, None, 0, None)
    assert "Fixed threshold must be a number; got 'inf'." in str(out.status)
    done = confidence.compute_band(services, demo_ref, "gbm", None, 20_000, 0, **spread)
    assert done == {"key": None, "error": REPLICATES_TOO_MANY}
    assert "No data set" in confidence.compute_band(services, None, "gbm", None, B, 0)["error"]
    out = confidence.render(services, None, None, None, B, 0.9, None, 0, None)
    assert out.summary == "–"


def test_replicates_out_of_bounds_keep_the_band_and_say_the_bounds(services, demo_ref):
    """Typing 20000 replicates for a bootstrap: the bounded message in the status line, the
    drawn band and its summary stay (no update), Run is disabled and the job would not start."""
    spread = {"method": "percentile"}
    done = confidence.compute_band(services, demo_ref, "gbm", None, B, 0, **spread)
    drawn = confidence.render(services, demo_ref, "gbm", None, B, 0.9, 0.3, 0, done, **spread)
    assert by_uid(drawn.figure, "band-high") is not None
    out = confidence.render(services, demo_ref, "gbm", None, 20000, 0.9, 0.3, 0, done, **spread)
    assert REPLICATES_TOO_MANY in str(out.status)
    assert out.figure is no_update and out.summary is no_update and out.caveat is no_update
    problems = confidence.band_settings(None, 20000, 0.9, 0.3, "percentile")[1]
    assert problems == [REPLICATES_TOO_MANY]
    assert confidence.band_settings(None, 20000, 0.9, 0.3)[1] == []  # closed form: unused
    assert band_kit.run_disabled("job", problems) is True
    assert band_kit.run_disabled("job", []) is False
    assert band_kit.run_disabled("job running", problems) is no_update  # the job owns it
    assert confidence.job_key(demo_ref, "gbm", None, 20000, 0, "percentile") is None
    assert confidence.job_key(demo_ref, "gbm", None, 20000, 0) == cost_band_key(
        demo_ref["id"], "gbm", None, 0, 0)
    # Compare: the same message; its figures and readouts stay as drawn.
    out = compare.render(services, demo_ref, "gbm", "naive_bayes", 20000, 0.9, 0, None,
                         "percentile")
    assert REPLICATES_TOO_MANY in str(out.status)
    assert all(v is no_update for v in (out.envelopes, out.difference, out.crossovers,
                                        out.better, out.significant))
    assert compare.compute_difference(services, demo_ref, "gbm", "naive_bayes", 20000, 0,
                                      method="percentile") == {"key": None,
                                                               "error": REPLICATES_TOO_MANY}
    assert compare.band_settings(20000, 0.9, "percentile")[1] == [REPLICATES_TOO_MANY]
    assert compare.band_settings(20000, 0.9)[1] == []


def test_check_fields_uses_the_schema():
    typed, problems = page_kit.check_fields({"replicates": 1000.0, "level": 0.8,
                                               "threshold": None})
    assert typed == {"replicates": 1000, "level": 0.8, "threshold": None} and problems == []
    assert isinstance(typed["replicates"], int)
    typed, problems = page_kit.check_fields({"replicates": None, "cost_fn": -1},
                                              required=("replicates",))
    assert typed == {} and problems == [
        "Replicates (B) must be a whole number from 1 to 10,000; the box is empty.",
        "C(−|+) must be a number above 0; got '-1'."]


def test_confidence_counts_only_data(services):
    record = services.store.put(COUNTS.encode(), "counts.csv")
    ref = {"id": record.id, "name": "counts.csv"}
    out = confidence.render(services, ref, "x", None, B, 0.9, None, 0, None)
    assert "known only by confusion-matrix counts" in str(out.status)
    assert "known only by confusion-matrix counts" in confidence.compute_band(
        services, ref, "x", None, B, 0)["error"]
    # One matrix picked by its threshold, or a classifier with one matrix: a line band.
    for model, threshold in (("x", 0.4), ("y", None)):
        done = confidence.compute_band(services, ref, model, threshold, B, 0)
        assert "error" not in done, done
        out = confidence.render(services, ref, model, threshold, B, 0.9, None, 0, done)
        assert by_uid(out.figure, "band-high") is not None
    done = confidence.compute_band(services, ref, "x", 0.55, B, 0)
    assert "no confusion matrix at threshold 0.55" in done["error"]


# --- Compare handlers ------------------------------------------------------------------------------

def test_compare_load_defaults_to_the_two_best(services, demo_ref):
    loaded = compare.load(services, {"data": demo_ref["id"]}, None)
    assert (loaded.a, loaded.b) == ("logreg", "forest")  # lowest areas under the cost curve
    assert loaded.data_id == demo_ref["id"]
    loaded = compare.load(services, {"data": demo_ref["id"], "a": "gbm", "b": "nope"}, None)
    assert (loaded.a, loaded.b) == ("gbm", "logreg")
    assert "No data set" in str(compare.load(services, {}, None).error)


def test_compare_pair_defaults_to_the_first_two_ticked(services, demo_ref):
    ref = {"data": demo_ref["id"]}
    loaded = compare.load(services, {**ref, "models": ["stump", "naive_bayes", "gbm"]}, None)
    assert (loaded.a, loaded.b) == ("stump", "naive_bayes")
    # Every classifier stays selectable.
    assert [o["value"] for o in loaded.options] == ["logreg", "forest", "gbm", "naive_bayes",
                                                    "stump"]
    # One ticked: it, then the best other; a given a or b is kept.
    loaded = compare.load(services, {**ref, "models": ["stump"]}, None)
    assert (loaded.a, loaded.b) == ("stump", "logreg")
    loaded = compare.load(services, {**ref, "a": "forest", "models": ["forest", "gbm"]}, None)
    assert (loaded.a, loaded.b) == ("forest", "gbm")
    loaded = compare.load(services, {**ref, "b": "gbm", "models": ["gbm", "stump"]}, None)
    assert (loaded.a, loaded.b) == ("stump", "gbm")
    # The layout starts the dropdowns there too, before the data set is loaded.
    content, _ = route("/compare", f"?data={demo_ref['id']}&models=stump,naive_bayes,gbm",
                       services)
    assert (find(content, "compare-a").value, find(content, "compare-b").value) == \
        ("stump", "naive_bayes")


def test_compare_exact_then_band_then_level(services, demo_ref, demo):
    out = compare.render(services, demo_ref, "gbm", "naive_bayes", B, 0.9, 0, None)
    a, b = (summarize_classifier(roc_of(demo.classifier(n))).envelope
            for n in ("gbm", "naive_bayes"))
    d = envelope_difference(a, b, a_name="gbm", b_name="naive_bayes")
    assert_same(by_uid(out.difference, "difference").y, d.diff)
    assert out.crossovers.startswith("The cost curves cross at PC(+) = "
                                     f"{d.crossovers[0]:.4g} and {d.crossovers[1]:.4g}")
    assert "naive_bayes better on PC(+) " in " ".join(
        p.children[0].children + p.children[1] for p in out.better)
    assert "Press Compute band" in str(out.significant)

    # The default: thresholds selected on a held-out half, a calibrated band with significance.
    done = compare.compute_difference(services, demo_ref, "gbm", "naive_bayes", B, 0)
    assert done["seconds"] > 0
    out = compare.render(services, demo_ref, "gbm", "naive_bayes", B, 0.9, 0, done)
    fresh = difference_band(demo.classifier("gbm"), demo.classifier("naive_bayes"),
                            select="split", rng=0)
    assert_same(by_uid(out.difference, "band-low").y, fresh.low)
    assert_same(by_uid(out.difference, "band-diff").y, fresh.diff)
    text = str(out.significant)
    for s in fresh.significant:
        assert page_kit.fmt_range(s.lo, s.hi) in text   # one number for a one-point range
    assert fresh.significant and "naive_bayes" in text and "significantly better" in text
    assert ("90% discordant-pair Clopper–Pearson–MOVER band (pointwise), thresholds selected on "
            "a stratified half") in text  # fresh.label
    assert "(pointwise)" in text and "closed form on the held-out half" in out.status

    at75 = compare.render(services, demo_ref, "gbm", "naive_bayes", B, 0.75, 0, done)
    fresh75 = difference_band(demo.classifier("gbm"), demo.classifier("naive_bayes"),
                              level=0.75, select="split", rng=0)
    assert_same(by_uid(at75.difference, "band-high").y, fresh75.high)
    assert fresh75.label.split(",")[0] in str(at75.significant)  # "75% discordant-pair ... band"
    again = compare.compute_difference(services, demo_ref, "gbm", "naive_bayes", B, 0)
    assert again["seconds"] is None  # cached: nothing recomputed
    assert "kept from an earlier run" in compare.render(
        services, demo_ref, "gbm", "naive_bayes", B, 0.75, 0, again).status
    # Whole curve: another band, significant over every PC(+) at once.
    whole = {"simultaneous": ["on"]}
    done = compare.compute_difference(services, demo_ref, "gbm", "naive_bayes", B, 0, **whole)
    out = compare.render(services, demo_ref, "gbm", "naive_bayes", B, 0.9, 0, done, **whole)
    fresh = difference_band(demo.classifier("gbm"), demo.classifier("naive_bayes"),
                            select="split", rng=0, simultaneous=True)
    assert_same(by_uid(out.difference, "band-high").y, fresh.high)
    assert "over the whole curve" in str(out.significant)

    # The re-tuned envelopes: a paired bootstrap, exploratory, no level, no significance.
    spread = {"method": "percentile"}
    out = compare.render(services, demo_ref, "gbm", "naive_bayes", B, 0.9, 0, None, **spread)
    assert "Press Run bootstrap" in str(out.significant)
    done = compare.compute_difference(services, demo_ref, "gbm", "naive_bayes", B, 0, **spread)
    out = compare.render(services, demo_ref, "gbm", "naive_bayes", B, 0.9, 0, done, **spread)
    fresh = difference_band(demo.classifier("gbm"), demo.classifier("naive_bayes"),
                            replicates=B, rng=0)
    assert_same(by_uid(out.difference, "band-low").y, fresh.low)
    text = str(out.significant)
    assert "significantly better" not in text and "No significant ranges" in text
    assert "%" not in text and "Resampling spread of the re-tuned envelope" in text
    assert not {"significant-a", "significant-b"} & {t.uid for t in out.difference.data}
    assert f"{B:,} paired replicates" in out.status


def test_compare_method_control(services, demo_ref):
    options, value, _, _, replicates_off, run, default = \
        compare.method_state(compare.choice_of()).as_tuple()
    assert [o["value"] for o in options] == ["split", "percentile"]
    assert value == default == "split" and replicates_off and run == "Compute band"
    state = compare.method_state(compare.choice_of("double-bootstrap"))  # not offered here
    assert state.value == "split"
    state = compare.method_state(compare.choice_of("percentile", ["on"]))
    assert state.simultaneous_options[0]["disabled"] and "not a test" in state.note
    content, _ = route("/compare", f"?data={demo_ref['id']}", services)
    assert find(content, "compare-method").value == "split"
    assert find(content, "compare-simultaneous").value == []


def test_compare_same_classifier_and_counts(services, demo_ref):
    out = compare.render(services, demo_ref, "gbm", "gbm", B, 0.9, 0, None)
    assert "two different classifiers" in out.crossovers
    record = services.store.put(COUNTS.encode(), "counts.csv")
    ref = {"id": record.id, "name": "counts.csv"}
    out = compare.render(services, ref, "x", "y", B, 0.9, 0, None)
    assert "no test rows to evaluate in pairs" in str(out.significant)
    assert by_uid(out.envelopes, "env-a") is not None  # the exact comparison still works
    assert "no test rows" in compare.compute_difference(services, ref, "x", "y", B, 0)["error"]


def test_celery_app_needs_a_jobs_url(tmp_path, monkeypatch):
    """``celery -A dashboard.worker:celery_app worker`` builds the app from the environment."""
    monkeypatch.setenv("COSTDASH_DATA_DIR", str(tmp_path))
    monkeypatch.delenv("COSTDASH_JOBS_URL", raising=False)
    import dashboard.worker as jobs

    with pytest.raises(RuntimeError, match="COSTDASH_JOBS_URL"):
        jobs.celery_app  # noqa: B018
