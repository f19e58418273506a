"""Shared analyses on both back ends: the API, read-only links, manage links, expiry, deletion,
de-duplication, transactional saves, restarts, tokens and headers."""

from __future__ import annotations

import io
import json
import re
import time

import pytest
import sqlalchemy as sa

from costdash.analysis import analysis_to_dict, analyze
from costdash.conditions import OperatingCondition
from costdash.errors import ParameterError
from costdash.io import load_predictions
from costdash.view import View
from dashboard import sharing as sharing_module
from dashboard.config import Settings
from dashboard.factory import create_app
from dashboard.responses import SECURITY_HEADERS
from dashboard.sharing import AnalysisNotFound, normalise_view, view_to_query
from dashboard.shell import route


@pytest.fixture(params=["sqlite", "postgresql"])
def backend_settings(request, tmp_path) -> Settings:
    """Settings of a fresh app on each back end (PostgreSQL: a new, empty schema of its own in
    the module's database, tests/conftest.py)."""
    if request.param == "sqlite":
        return Settings.from_mapping({"data_dir": tmp_path / "data"})
    return Settings.from_mapping({"data_dir": tmp_path / "data",
                                  "database_url": request.getfixturevalue("fresh_postgres_url")})


@pytest.fixture
def app(backend_settings):
    app = create_app(backend_settings)
    yield app
    app.server.extensions["costdash"].store.engine.dispose()


@pytest.fixture
def http(app):
    return app.server.test_client()


@pytest.fixture
def services(app):
    return app.server.extensions["costdash"]


def post_analysis(http, path, **fields):
    data = {"file": (io.BytesIO(path.read_bytes()), path.name), **fields}
    return http.post("/api/v1/analyses", data=data, content_type="multipart/form-data")


def token_of(url: str) -> str:
    return url.rstrip("/").rsplit("/", 1)[1]


def test_post_get_matches_the_cli_json(http, breast_cancer_csv):
    r = post_analysis(http, breast_cancer_csv, p_pos="0.1", cost_fn="5", cost_fp="1",
                      name="Q3 review")
    assert r.status_code == 201, r.get_json()
    body = r.get_json()
    assert set(body) >= {"id", "url", "manage_url"}
    assert body["url"].startswith("http://localhost/s/")
    assert body["manage_url"].startswith("http://localhost/manage/")
    assert token_of(body["url"]) != token_of(body["manage_url"])

    # Every ROC point for the owner (the manage token); a viewer's are thinned (issue 11, 6).
    got = http.get(f"/api/v1/analyses/{token_of(body['url'])}",
                   headers={"Authorization": f"Bearer {body['manage_token']}"})
    assert got.status_code == 200
    result = got.get_json()
    expected = analysis_to_dict(analyze(load_predictions(breast_cancer_csv),
                                        OperatingCondition(0.1, 5.0, 1.0)))
    expected = json.loads(json.dumps(expected))
    assert {k: result[k] for k in expected} == expected
    # The saved view with what was not sent at its defaults (always written: the conditions,
    # the volume and the unit).
    assert result["view"] == {"p_pos": 0.1, "cost_fn": 5.0, "cost_fp": 1.0, "volume": 1000.0,
                              "unit": "€"}
    assert result["analysis"]["name"] == "Q3 review"
    assert result["analysis"]["id"] == body["id"]
    assert body["manage_token"] not in got.get_data(as_text=True)


def test_default_condition_is_the_prevalence(http, breast_cancer_csv):
    body = post_analysis(http, breast_cancer_csv).get_json()
    result = http.get(f"/api/v1/analyses/{token_of(body['url'])}").get_json()
    ds = load_predictions(breast_cancer_csv)
    assert result["view"]["p_pos"] == pytest.approx(ds.prevalence)
    assert result["analysis"]["name"] == breast_cancer_csv.name


def test_tokens_are_long_random_and_distinct(http, breast_cancer_csv):
    bodies = [post_analysis(http, breast_cancer_csv).get_json() for _ in range(5)]
    tokens = [token_of(b["url"]) for b in bodies] + [token_of(b["manage_url"]) for b in bodies]
    assert len(set(tokens)) == len(tokens)
    for t in tokens:
        assert re.fullmatch(r"[A-Za-z0-9_-]{32}", t)  # 32 base64 characters: 192 bits
    assert sharing_module.TOKEN_BYTES * 8 >= 128


def test_same_file_is_stored_once_and_deleted_with_its_last_analysis(
        http, services, breast_cancer_csv):
    first = post_analysis(http, breast_cancer_csv, name="a").get_json()
    second = post_analysis(http, breast_cancer_csv, name="b", p_pos="0.3").get_json()
    # Stored once, but each analysis reads it through a handle of its own (issue 11, 3).
    assert first["dataset_id"] != second["dataset_id"]
    assert services.store.count() == {"datasets": 1, "dataset_parts": 1, "analyses": 2,
                                      "handles": 2}

    r = http.delete(f"/api/v1/analyses/{first['id']}",
                    headers={"Authorization": f"Bearer {first['manage_token']}"})
    assert r.status_code == 204 and r.get_data() == b""
    assert services.store.count() == {"datasets": 1, "dataset_parts": 1, "analyses": 1,
                                      "handles": 1}
    assert http.get(f"/api/v1/analyses/{token_of(second['url'])}").status_code == 200
    assert not services.store.exists(first["dataset_id"])

    http.delete(f"/api/v1/analyses/{second['id']}",
                headers={"Authorization": f"Bearer {second['manage_token']}"})
    assert services.store.count() == {"datasets": 0, "dataset_parts": 0, "analyses": 0,
                                      "handles": 0}
    # The data is gone from the cache too: the Explore page cannot open it any more.
    with pytest.raises(Exception, match="upload the file again"):
        services.views.full(first["dataset_id"])


@pytest.mark.slow
def test_deleted_link_answers_404_with_a_friendly_page(http, breast_cancer_csv):
    body = post_analysis(http, breast_cancer_csv).get_json()
    token = token_of(body["url"])
    assert http.get(f"/s/{token}").status_code == 200
    http.delete(f"/api/v1/analyses/{body['id']}",
                headers={"Authorization": f"Bearer {body['manage_token']}"})
    page = http.get(f"/s/{token}")
    assert page.status_code == 404 and page.mimetype == "text/html"
    assert "This link leads nowhere" in page.get_data(as_text=True)
    assert http.get(f"/api/v1/analyses/{token}").status_code == 404
    assert http.get("/s/not-a-token").status_code == 404
    assert http.get("/s/" + "A" * 32).status_code == 404


@pytest.mark.parametrize("headers, status", [
    ({}, 401), ({"Authorization": "Basic abc"}, 401), ({"Authorization": "Bearer "}, 401),
    ({"Authorization": "Bearer " + "x" * 32}, 403)])
def test_delete_needs_the_manage_token(http, services, breast_cancer_csv, headers, status):
    body = post_analysis(http, breast_cancer_csv).get_json()
    r = http.delete(f"/api/v1/analyses/{body['id']}", headers=headers)
    assert r.status_code == status and r.get_json()["error"]
    assert services.store.count()["analyses"] == 1


def test_share_token_does_not_manage(http, services, breast_cancer_csv):
    body = post_analysis(http, breast_cancer_csv).get_json()
    r = http.delete(f"/api/v1/analyses/{body['id']}",
                    headers={"Authorization": f"Bearer {token_of(body['url'])}"})
    assert r.status_code == 403
    assert http.get(f"/manage/{token_of(body['url'])}").status_code == 404
    assert services.store.count()["analyses"] == 1


def test_unknown_analysis_id_is_404(http):
    r = http.delete("/api/v1/analyses/0123456789abcdef",
                    headers={"Authorization": "Bearer " + "x" * 32})
    assert r.status_code == 404 and "error" in r.get_json()


def test_bearer_check_is_constant_time(services, breast_cancer_csv, monkeypatch):
    record = services.store.put(breast_cancer_csv, "b.csv")
    new = services.sharing.create(record.id, name="n", view={})
    calls = []
    real = sharing_module.hmac.compare_digest
    monkeypatch.setattr(sharing_module.hmac, "compare_digest",
                        lambda a, b: calls.append((a, b)) or real(a, b))
    services.sharing.authorize(new.record.id, f"Bearer {new.manage_token}")
    assert calls and all(len(a) == len(b) == 64 for a, b in calls)


def test_patch_renames_and_sets_expiry(http, breast_cancer_csv):
    body = post_analysis(http, breast_cancer_csv).get_json()
    auth = {"Authorization": f"Bearer {body['manage_token']}"}
    r = http.patch(f"/api/v1/analyses/{body['id']}", json={"name": "  Renamed  "}, headers=auth)
    assert r.status_code == 200 and r.get_json()["analysis"]["name"] == "Renamed"
    r = http.patch(f"/api/v1/analyses/{body['id']}", json={"expires_in_days": 2}, headers=auth)
    expires = r.get_json()["analysis"]["expires_at"]
    assert expires and time.strptime(expires, "%Y-%m-%dT%H:%M:%SZ")
    r = http.patch(f"/api/v1/analyses/{body['id']}", json={"expires_in_days": None},
                   headers=auth)
    assert r.get_json()["analysis"]["expires_at"] is None
    for bad in ({"expires_in_days": -1}, {"name": ""}, {"colour": "red"}, [1]):
        r = http.patch(f"/api/v1/analyses/{body['id']}", json=bad, headers=auth)
        assert r.status_code == 400 and r.get_json()["error"]


def test_expired_links_are_404_and_purged_with_their_data(http, services, breast_cancer_csv):
    body = post_analysis(http, breast_cancer_csv, expires_in_days="1").get_json()
    token = token_of(body["url"])
    assert body["expires_at"] is not None
    services.store.update_analysis(body["id"], expires_at=time.time() - 1)
    assert http.get(f"/s/{token}").status_code == 404
    assert http.get(f"/api/v1/analyses/{token}").status_code == 404
    # The manage link still works, so an expired analysis can be renewed.
    manage = http.get(f"/manage/{body['manage_token']}")
    assert manage.status_code == 200 and "Expired" in manage.get_data(as_text=True)
    services.sharing.purge_expired()
    assert services.store.count() == {"datasets": 0, "dataset_parts": 0, "analyses": 0,
                                      "handles": 0}


@pytest.mark.slow
def test_manage_page_renames_sets_expiry_and_deletes(http, services, breast_cancer_csv):
    body = post_analysis(http, breast_cancer_csv, name="<script>alert(1)</script>").get_json()
    url = f"/manage/{body['manage_token']}"
    page = http.get(url).get_data(as_text=True)
    assert "<script>alert(1)</script>" not in page and "&lt;script&gt;" in page
    assert body["url"] in page
    r = http.post(url, data={"action": "rename", "name": "Fraud model"})
    assert r.status_code == 303
    assert "Fraud model" in http.get(r.headers["Location"]).get_data(as_text=True)
    r = http.post(url, data={"action": "expiry", "expires_in_days": "abc"})
    assert r.status_code == 400 and "expires_in_days" in r.get_data(as_text=True)
    r = http.post(url, data={"action": "expiry", "expires_in_days": "7"})
    assert r.status_code == 303
    assert services.sharing.managed(body["manage_token"]).expires_at is not None
    r = http.post(url, data={"action": "delete"})
    assert r.status_code == 200 and "Deleted" in r.get_data(as_text=True)
    assert http.get(url).status_code == 404
    assert services.store.count()["analyses"] == 0


@pytest.mark.slow
def test_read_only_layout_has_the_saved_view_and_no_secrets(services, breast_cancer_csv):
    record = services.store.put(breast_cancer_csv, "b.csv")
    new = services.sharing.create(record.id, name="Shared", view={
        "p_pos": 0.2, "cost_fn": 10, "cost_fp": 1, "models": ["gbm", "logreg"], "lines": True})
    content, _ = route(f"/s/{new.record.share_token}", "", services)
    text = json.dumps(content.to_plotly_json(), default=lambda o: o.to_plotly_json())
    assert new.manage_token not in text
    assert "shared-banner" in text and "share-button" not in text
    assert '"p-pos-input"' in text and '"value": 0.2' in text
    assert '"cost-fn-input"' in text and '"value": 10.0' in text
    # The page keeps the link's data reference, neither the uploader's handle (issue 11,
    # finding 3) nor the analysis's read-only handle (issue 22, finding 1).
    assert f'"share:{new.record.share_token}"' in text
    assert new.record.dataset_id not in text and record.id not in text
    # A query string varies the view for this visit only.
    content, _ = route(f"/s/{new.record.share_token}", "?p_pos=0.4", services)
    assert '"value": 0.4' in json.dumps(content.to_plotly_json(),
                                        default=lambda o: o.to_plotly_json())
    assert services.sharing.open(new.record.share_token).view["p_pos"] == 0.2


@pytest.mark.slow
def test_links_survive_a_restart(backend_settings, breast_cancer_csv):
    first = create_app(backend_settings)
    body = post_analysis(first.server.test_client(), breast_cancer_csv, p_pos="0.2").get_json()
    first.server.extensions["costdash"].store.engine.dispose()
    second = create_app(backend_settings)
    http = second.server.test_client()
    assert http.get(f"/s/{token_of(body['url'])}").status_code == 200
    assert http.get(f"/api/v1/analyses/{token_of(body['url'])}").get_json()["view"]["p_pos"] == 0.2
    second.server.extensions["costdash"].store.engine.dispose()


def test_a_crash_mid_save_leaves_nothing(services, breast_cancer_csv, monkeypatch):
    from dashboard.storage import sql as storage

    real_insert = storage.dataset_parts_table.insert

    class Crash(RuntimeError):
        pass

    def crashing_insert(*args, **kwargs):
        raise Crash("power cut after the index row, before the data")

    monkeypatch.setattr(storage.dataset_parts_table, "insert", crashing_insert)
    with pytest.raises(Crash):
        services.store.put(breast_cancer_csv, "b.csv")
    monkeypatch.setattr(storage.dataset_parts_table, "insert", real_insert)
    assert services.store.count() == {"datasets": 0, "dataset_parts": 0, "analyses": 0,
                                      "handles": 0}
    assert services.store.put(breast_cancer_csv, "b.csv").n > 0  # and saving works afterwards


@pytest.mark.slow
def test_security_headers_everywhere(http, breast_cancer_csv):
    body = post_analysis(http, breast_cancer_csv).get_json()
    for path in ("/explore", f"/s/{token_of(body['url'])}", f"/manage/{body['manage_token']}",
                 "/s/missing", "/api/v1/analyses/x", "/healthz"):
        r = http.get(path)
        for name, value in SECURITY_HEADERS.items():
            assert r.headers.get(name) == value, (path, name)
    assert http.get(f"/s/{token_of(body['url'])}").headers["Cache-Control"] == "no-store"
    assert http.get(f"/manage/{body['manage_token']}").headers["Cache-Control"] == "no-store"


def test_unknown_api_paths_and_methods_are_json(http):
    r = http.get("/api/v1/nothing-here")
    assert r.status_code == 404 and "error" in r.get_json()
    r = http.put("/api/v1/analyses/abc")
    assert r.status_code == 405 and "error" in r.get_json()


def test_view_round_trips_through_the_query():
    view = normalise_view({"p_pos": "0.25", "cost_fn": "3", "cost_fp": 1, "models": "a,b",
                           "lines": "1", "sens_p": "0.1,0.4", "unit": "$", "junk": "x",
                           "data": "0" * 32})
    assert view == {"p_pos": 0.25, "cost_fn": 3.0, "cost_fp": 1.0, "models": ["a", "b"],
                    "lines": True, "sens_p": [0.1, 0.4], "unit": "$", "volume": 1000.0}
    assert view == View.parse(view).to_json()  # the saved shape is the view's JSON
    assert normalise_view({k: v[0] for k, v in view_to_query(view).items()}) == view
    assert view_to_query(view) == {k: [v] for k, v in View.parse(view).to_query().items()}
    for bad, label in (({"p_pos": "1"}, "p(+)"), ({"p_pos": "nan"}, "p(+)"),
                       ({"cost_fn": "-1"}, "C(−|+)"), ({"sens_p": "0.1"}, "Sensitivity range"),
                       ({"max_fpr": "2"}, "Neyman–Pearson FPR limit")):
        with pytest.raises(ParameterError) as error:
            normalise_view(bad)
        assert str(error.value).startswith(label) and " must be " in str(error.value)


@pytest.mark.slow
def test_every_view_field_is_saved_and_shown(http, breast_cancer_csv):
    """The analyses API takes every view field, keeps them, and shows them with the conditions
    analysed; the link opens with them."""
    r = post_analysis(http, breast_cancer_csv, cost_fn="4", volume="120", unit="kr",
                      sens_fp="0.5,2", capacity="30", model="gbm", level="0.8", seed="3")
    assert r.status_code == 201, r.get_json()
    body = r.get_json()
    result = http.get(f"/api/v1/analyses/{token_of(body['url'])}").get_json()
    ds = load_predictions(breast_cancer_csv)
    assert result["view"] == {"p_pos": ds.n_pos / ds.n, "cost_fn": 4.0, "cost_fp": 1.0,
                              "volume": 120.0, "unit": "kr", "sens_fp": [0.5, 2.0],
                              "capacity": 30.0, "model": "gbm", "level": 0.8, "seed": 3}
    # p(+) is exactly the prevalence the analysis used.
    assert result["view"]["p_pos"] == result["operating_point"]["p_pos"]
    page = http.get(f"/s/{token_of(body['url'])}")
    assert page.status_code == 200


def test_stored_views_open_leniently(services, breast_cancer_csv):
    """A view saved before a bound was tightened still opens; the bad value is left out."""
    assert view_to_query({"p_pos": 0.3, "volume": -5, "unit": "$"}) == {
        "p_pos": ["0.3"], "cost_fn": ["1"], "cost_fp": ["1"], "volume": ["1000"],
        "unit": ["$"]}


def test_open_rejects_garbage_tokens_without_a_query(services, monkeypatch):
    monkeypatch.setattr(services.store, "find_analysis",
                        lambda **_: pytest.fail("queried the database for a malformed token"))
    for token in ("", "short", "x" * 33, "../../etc/passwd", "A" * 31 + "!"):
        with pytest.raises(AnalysisNotFound):
            services.sharing.open(token)


def test_analyses_reference_stored_datasets(services, breast_cancer_csv):
    with pytest.raises(Exception, match="no data set"):
        services.sharing.create("0" * 32, name="x", view={})
    with services.store.engine.connect() as conn:
        names = set(sa.inspect(conn).get_table_names())
    assert {"datasets", "dataset_parts", "analyses"} <= names


def test_row_and_classifier_limits_reject_the_upload_and_store_nothing(tmp_path,
                                                                       breast_cancer_csv):
    app = create_app({"data_dir": tmp_path / "d", "max_rows": 100, "max_classifiers": 3})
    http = app.server.test_client()
    r = post_analysis(http, breast_cancer_csv)
    assert r.status_code == 400 and "more than the limit of 100" in r.get_json()["error"]
    r = post_analysis(http, breast_cancer_csv, models="gbm,logreg,stump,forest")
    assert r.status_code == 400
    assert app.server.extensions["costdash"].store.count()["datasets"] == 0
    env = Settings.from_env({"COSTDASH_MAX_ROWS": "7", "COSTDASH_MAX_CLASSIFIERS": "2"})
    assert (env.max_rows, env.max_classifiers) == (7, 2)


def test_analysis_is_named_after_this_upload_not_an_earlier_one(http, services,
                                                                breast_cancer_csv, tmp_path):
    post_analysis(http, breast_cancer_csv)
    renamed = tmp_path / "confidential-client-x.csv"
    renamed.write_bytes(breast_cancer_csv.read_bytes())
    first, second = renamed, tmp_path / "mine.csv"
    second.write_bytes(breast_cancer_csv.read_bytes())
    a = post_analysis(http, first).get_json()
    b = post_analysis(http, second).get_json()
    assert services.store.count()["datasets"] == 1  # stored once ...
    assert a["dataset_id"] != b["dataset_id"]       # ... read through handles of their own
    assert b["name"] == "mine.csv"             # ... but each analysis keeps its uploader's name
    got = http.get(f"/api/v1/analyses/{token_of(b['url'])}").get_json()
    assert "confidential" not in json.dumps(got["analysis"])


def test_multi_megabyte_upload_passes_the_form_limits(tmp_path):
    """Werkzeug applies its form memory limit to its read buffer too: it must stay far above
    the parser's chunk size, or every file over it is refused as 'form too large'."""
    import numpy as np

    rng = np.random.default_rng(0)
    n = 250_000
    path = tmp_path / "big.csv"
    path.write_text("y_true,a\n" + "\n".join(
        f"{y},{s:.6f}" for y, s in zip(rng.integers(0, 2, n), rng.random(n))))
    assert path.stat().st_size > 2_500_000
    app = create_app({"data_dir": tmp_path / "d"})
    r = post_analysis(app.server.test_client(), path)
    assert r.status_code == 201, r.get_json()


def test_a_cached_view_of_a_deleted_data_set_is_not_served(services, breast_cancer_csv,
                                                             monkeypatch):
    """A delete that could not reach the cache (Redis down) must not leave the data viewable."""
    record = services.store.put(breast_cancer_csv, "b.csv")
    new = services.sharing.create(record.id, name="x", view={})
    link_data = new.record.dataset_id
    assert services.views.full(link_data)["name"] == "b.csv"  # cached now
    monkeypatch.setattr(services.views, "forget", lambda _id: None)  # the cache missed the delete
    services.sharing.delete(new.record)
    monkeypatch.undo()
    with pytest.raises(Exception, match="upload the file again"):
        services.views.full(link_data)
