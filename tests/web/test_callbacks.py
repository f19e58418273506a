"""Server side of the dashboard without a browser: routing, callbacks as plain functions, the
upload route through Flask's test client, and the app factory."""

from __future__ import annotations

import io
import math

import numpy as np
import pytest

from costdash import analyze
from costdash.criteria import neyman_pearson, sensitivity, workforce
from costdash.errors import InputFileError
from costdash.io import load_predictions
from dashboard.config import Settings
from dashboard.factory import create_app
from dashboard.pages import PAGES, Page, explore, placeholder
from dashboard.pages.explore import p_to_slider
from dashboard.shell import route

from .helpers import find

# --- routing and layout --------------------------------------------------------------------------

@pytest.mark.slow
def test_routes(services):
    content, classes = route("/explore", "", services)
    assert find(content, "roc-graph") is not None and classes[0] == "nav-link active"
    content, _ = route("/", None, services)
    assert find(content, "cost-graph") is not None
    for i, page in enumerate(PAGES):
        content, classes = route(page.path, "", services)
        assert "Page not found" not in str(content) and classes[i] == "nav-link active"
    content, _ = route("/nope", "", services)
    assert "Page not found" in str(content)
    stub = placeholder.layout({"data": ["abc"]}, services, page=Page("/x", "X", None, "soon"))
    assert "Not available yet" in str(stub) and "/explore?data=abc" in str(stub)


def test_layout_has_the_id_contract(services):
    content, _ = route("/explore", "", services)
    for id_ in ("upload", "demo-breast-cancer", "demo-rare-digit", "p-pos-input",
                "cost-fn-input", "cost-fp-input", "volume-input", "pc-value", "slope-value",
                "chosen-classifier", "chosen-threshold", "normalized-cost", "expected-cost",
                "roc-graph", "cost-graph", "upload-error"):
        assert find(content, id_) is not None, id_


def test_layout_restores_url_state(services):
    query = {"data": ["a" * 32], "p_pos": ["0.01"], "cost_fn": ["50"], "cost_fp": ["1"],
             "volume": ["250"], "unit": ["$"], "models": ["x,y"], "lines": ["1"],
             "sens_p": ["0.001,0.1"], "max_fpr": ["0.05"]}
    content = explore.layout(query, services)
    assert find(content, "p-pos-input").value == 0.01
    assert find(content, "p-pos-slider").value == pytest.approx(-2)
    assert find(content, "cost-fn-input").value == 50
    assert find(content, "cost-fn-slider").value == pytest.approx(math.log10(50))
    assert find(content, "volume-input").value == 250
    assert find(content, "unit-input").value == "$"
    assert find(content, "dataset-ref").data == {"id": "a" * 32, "models": ["x", "y"]}
    assert find(content, "models-input").value == ["x", "y"]
    assert find(content, "cost-lines-toggle").value == ["lines"]
    assert find(content, "sens-p-lo").value == 0.001 and find(content, "sens-on").value == ["on"]
    assert find(content, "np-max-fpr-input").value == 0.05


def test_layout_leaves_bad_values_at_their_defaults_and_says_why(services):
    content = explore.layout({"data": ["../etc"], "p_pos": ["2"], "cost_fn": ["-1"],
                              "volume": ["x"], "sens_fn": ["1"]}, services)
    assert find(content, "dataset-ref").data is None
    assert find(content, "p-pos-input").value is None
    assert find(content, "cost-fn-input").value == 1.0
    assert find(content, "volume-input").value == 1000.0
    assert find(content, "sens-on").value == []
    note = str(content)
    for words in ("Data set '../etc' is not a data set id",
                  "p(+) must be a number strictly between 0 and 1; got '2'.",
                  "C(−|+) must be a number above 0; got '-1'.",
                  "Volume must be a number at least 0; got 'x'.",
                  "Sensitivity range of C(−|+) must be two numbers (from, to) above 0; got '1'."):
        assert words in note, words


@pytest.mark.parametrize("p, s", [(1e-6, -6), (0.01, -2), (0.1, -1), (0.5, 0), (0.9, 1),
                                  (0.99, 2), (1 - 1e-6, 6), (1e-9, -6)])
def test_p_slider_scale(p, s):
    assert p_to_slider(p) == pytest.approx(s, abs=1e-9)


# --- server callbacks as functions -------------------------------------------------------------

@pytest.fixture
def demo_ref(services):
    return explore.demo_reference(services, "breast-cancer")


def test_demo_reference_stores_once(services, demo_ref):
    again = explore.demo_reference(services, "breast-cancer")
    # Stored once, and one shared handle per demo (issue 22, finding 6): opening it mints no
    # new handle for anonymous clients to multiply job caps with.
    assert again["id"] == demo_ref["id"] and again["models"] is None
    assert services.store.exists(demo_ref["id"]) and services.store.exists(again["id"])
    assert services.store.count()["datasets"] == 1


def test_load_view(services, demo_ref, breast_cancer_csv):
    out = explore.load_view(services, demo_ref, None, False, "dataset-ref")
    expected = analyze(load_predictions(breast_cancer_csv))
    assert out.error == ""
    assert out.models == list(expected.dataset.names)
    hull = [t for t in out.roc.data if t.uid == "hull"][0]
    np.testing.assert_array_equal(hull.x, expected.hull.fpr)
    assert out.client["hull"]["classifier"] == list(expected.hull.classifier)
    assert out.key == {"id": demo_ref["id"], "models": None}
    assert "569 cases" in out.info and out.current["id"] == demo_ref["id"]


def test_load_view_subset_from_checklist(services, demo_ref, breast_cancer_csv):
    out = explore.load_view(services, demo_ref, ["stump", "gbm"], False, "models-input")
    assert out.models == ["gbm", "stump"]
    assert out.key["models"] == ["gbm", "stump"]
    expected = analyze(load_predictions(breast_cancer_csv, models=["gbm", "stump"]))
    assert out.client["hull"]["classifier"] == list(expected.hull.classifier)
    assert [t.meta for t in out.cost.data if t.uid.startswith("env-")] == ["gbm", "stump"]
    empty = explore.load_view(services, demo_ref, [], False, "models-input")
    assert empty.error == "Select at least one classifier." and empty.roc is explore.no_update


def test_load_view_models_from_url(services, demo_ref):
    out = explore.load_view(services, {**demo_ref, "models": ["forest"]}, [], True, None)
    assert out.models == ["forest"]
    assert [t.meta for t in out.cost.data if t.uid.startswith("lines-")] == ["forest"]


def test_load_view_unknown_id(services):
    out = explore.load_view(services, {"id": "0" * 32}, None, False, None)
    assert "upload the file again" in out.error and out.roc is explore.no_update
    assert explore.load_view(services, None, None, False, None).error is explore.no_update


def test_sensitivity_result_is_the_core(services, demo_ref):
    key = {"id": demo_ref["id"], "models": None}
    got = explore.sensitivity_result(services, key, True, (0.01, 0.2), (5, 50), (1, 2))
    hull = analyze(services.store.get(demo_ref["id"])).hull
    r = sensitivity(hull, (0.01, 0.2), (5, 50), (1, 2))
    assert got["vertices"] == list(r.vertices) and got["classifiers"] == list(r.classifiers)
    assert got["pc_range"] == list(r.pc_range)
    assert explore.sensitivity_result(services, key, False, (1, 2), (1, 2), (1, 2)) is None
    assert "both ends" in explore.sensitivity_result(services, key, True, (None, 0.2),
                                                     (1, 2), (1, 2))["error"]
    bad = explore.sensitivity_result(services, key, True, (0.5, 0.1), (1, 2), (1, 2))
    assert "empty" in bad["error"]


def test_constraint_result_is_the_core(services, demo_ref):
    key = {"id": demo_ref["id"], "models": None}
    hull = analyze(services.store.get(demo_ref["id"])).hull
    got = explore.constraint_result(services, key, {"max_fpr": 0.05, "capacity": 300,
                                                    "p": 0.2, "volume": 1000})
    np_point = neyman_pearson(hull, 0.05)
    assert (got["np"]["fpr"], got["np"]["tpr"], got["np"]["weight"]) == \
        (np_point.fpr, np_point.tpr, np_point.weight)
    cap = workforce(hull, n_pos=200, n_neg=800, capacity=300)
    assert (got["capacity"]["fpr"], got["capacity"]["tpr"]) == (cap.fpr, cap.tpr)
    bad = explore.constraint_result(services, key, {"max_fpr": 2, "capacity": None})
    assert "[0, 1]" in bad["np"]["error"]
    no_volume = explore.constraint_result(services, key, {"capacity": 5, "p": 0.2, "volume": 0})
    assert "volume" in no_volume["capacity"]["error"]
    assert explore.constraint_result(services, key, None) is None


def test_dataset_text():
    view = {"name": "f.csv", "n": 12000, "n_pos": 30, "positive_label": "1",
            "prevalence": 0.0025, "classifiers": [{}], "n_folds": 0}
    assert explore.dataset_text(view) == ("f.csv: 12,000 cases, 30 positive (label '1', "
                                          "prevalence 0.0025), 1 classifier")


# --- the upload route --------------------------------------------------------------------------

def upload(client, path_or_bytes, name="predictions.csv", **form):
    data = path_or_bytes.read_bytes() if hasattr(path_or_bytes, "read_bytes") else path_or_bytes
    return client.post("/api/v1/datasets", data={"file": (io.BytesIO(data), name), **form},
                       content_type="multipart/form-data")


def test_upload_good_file(client, services, predictions_csv):
    resp = upload(client, predictions_csv)
    assert resp.status_code == 200, resp.get_json()
    body = resp.get_json()
    assert set(body) == {"id", "name", "n", "classifiers", "target_class", "segment_column"}
    assert body["target_class"] is None and body["segment_column"] is None
    assert body["name"] == "predictions.csv" and body["n"] == 3000
    assert body["classifiers"] == ["alpha", "beta", "gamma"]
    assert services.store.exists(body["id"])
    # The analysis is cached by the time the upload returns.
    assert services.views.cache.get(services.views._key(body["id"])) is not None
    again = upload(client, predictions_csv, "again.csv").get_json()
    assert again["id"] != body["id"] and again["name"] == "again.csv"
    assert not list((services.settings.data_dir / "tmp").glob("upload-*"))   # temp files gone
    info = client.get(f"/api/v1/datasets/{body['id']}").get_json()
    assert info["n_pos"] + info["n_neg"] == 3000
    assert client.get("/api/v1/datasets/" + "0" * 32).status_code == 404


def test_upload_bad_file_gives_the_loader_message(client, bad_csv):
    resp = upload(client, bad_csv, "broken.csv")
    assert resp.status_code == 400
    with pytest.raises(InputFileError) as info:
        load_predictions(bad_csv, name="broken.csv")
    assert resp.get_json() == {"error": str(info.value)}


def test_upload_options_as_form_fields(client):
    text = b"outcome,m\nsick,0.9\nwell,0.1\nsick,0.7\nwell,0.4\n"
    assert "--label-column" in upload(client, text, "l.csv").get_json()["error"]
    assert "--positive" in upload(client, text, "l.csv", label_column="outcome").get_json()["error"]
    ok = upload(client, text, "l.csv", positive="sick", label_column="outcome")
    assert ok.status_code == 200 and ok.get_json()["classifiers"] == ["m"]
    unknown = upload(client, text, "l.csv", colour="red")
    assert unknown.status_code == 400 and "unknown loader option" in unknown.get_json()["error"]


def test_upload_without_file(client):
    resp = client.post("/api/v1/datasets", data={"positive": "1"},
                       content_type="multipart/form-data")
    assert resp.status_code == 400 and "'file'" in resp.get_json()["error"]


def test_upload_too_large(tmp_path, predictions_csv):
    app = create_app(Settings.from_mapping({"data_dir": tmp_path / "d", "max_upload_bytes": 1000}))
    resp = upload(app.server.test_client(), predictions_csv)
    assert resp.status_code == 413
    assert "over the 1000 bytes upload limit" in resp.get_json()["error"]
    small = upload(app.server.test_client(), b"y_true,a\n1,0.9\n0,0.1\n1,0.8\n0,0.3\n", "s.csv")
    assert small.status_code == 200


# --- app factory ----------------------------------------------------------------------------------

def test_root_redirects_to_explore_keeping_the_query(client):
    resp = client.get("/?data=abc&p_pos=0.1")
    assert resp.status_code == 302 and resp.headers["Location"] == "/explore?data=abc&p_pos=0.1"
    assert client.get("/explore").status_code == 200


def test_secret_key_generated_once_and_kept(tmp_path):
    first = create_app({"data_dir": tmp_path / "k"}).server.secret_key
    assert len(first) == 64 and (tmp_path / "k" / "secret_key").read_text() == first
    assert create_app({"data_dir": tmp_path / "k"}).server.secret_key == first
    assert create_app({"data_dir": tmp_path / "k", "secret_key": "s"}).server.secret_key == "s"


def test_settings_from_env(tmp_path):
    s = Settings.from_env({"COSTDASH_DATA_DIR": str(tmp_path), "COSTDASH_MAX_UPLOAD_MB": "5",
                           "COSTDASH_CACHE_URL": "redis://localhost:6379/0"})
    assert s.data_dir == tmp_path and s.max_upload_bytes == 5 * 1024**2
    from dashboard.services import cache_config
    assert cache_config(s)["CACHE_TYPE"].endswith("RedisCache")
    assert cache_config(Settings.from_mapping({"data_dir": tmp_path}))["CACHE_TYPE"] == \
        "dashboard.storage.cachebackend.FileCache"
    with pytest.raises(TypeError, match="unknown dashboard setting"):
        Settings.from_mapping({"data_dri": tmp_path})


def test_two_apps_share_nothing_in_memory(tmp_path, predictions_csv):
    a = create_app({"data_dir": tmp_path / "a"})
    b = create_app({"data_dir": tmp_path / "b"})
    ident = upload(a.server.test_client(), predictions_csv).get_json()["id"]
    assert a.server.extensions["costdash"].store.exists(ident)
    assert not b.server.extensions["costdash"].store.exists(ident)


def test_a_second_worker_finds_the_cached_analysis(tmp_path, predictions_csv):
    """Two app instances on one data dir (two gunicorn workers): the cache is shared."""
    one = create_app({"data_dir": tmp_path / "w"})
    two = create_app({"data_dir": tmp_path / "w"})
    ident = upload(one.server.test_client(), predictions_csv).get_json()["id"]
    views = two.server.extensions["costdash"].views
    assert views.cache.get(views._key(ident)) is not None
    with two.server.app_context():
        view = views.full(ident)
    assert view["hull"]["classifier"] == list(analyze(load_predictions(predictions_csv))
                                              .hull.classifier)


def test_healthz_answers_ok_while_the_store_is_readable(client, web_app, monkeypatch):
    assert client.get("/healthz").get_json() == {"status": "ok"}
    store = web_app.server.extensions["costdash"].store

    def broken():
        raise OSError("disk gone")

    monkeypatch.setattr(store, "ping", broken)
    response = client.get("/healthz")
    assert response.status_code == 503 and response.get_json()["status"] == "error"


def test_explore_states_how_long_uploads_are_kept(tmp_path):
    from dashboard.factory import create_app

    for days, words in ((30.0, "deleted 30 days after its last upload"),
                        (1.0, "deleted 1 day after"), (0.0, "kept until deleted")):
        app = create_app({"data_dir": tmp_path / f"d{days:g}", "upload_retention_days": days})
        content = explore.layout({}, app.server.extensions["costdash"])
        assert words in find(content, "upload-retention").children
