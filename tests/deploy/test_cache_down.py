"""Redis down: the result cache (COSTDASH_CACHE_URL) is only a cache, so the app keeps serving
pages and the API from the database, and says so in its log (a rate-limited warning).

Real Redis and real sockets: a port where nothing listens, and a TCP proxy in front of the
machine's Redis that the test stops and restarts.
"""

from __future__ import annotations

import io
import logging
import secrets
import time

import pytest
import redis
import requests

from costdash.demo import DEMOS
from dashboard.storage import cachebackend
from dashboard.factory import create_app
from dashboard.pages.confidence import CACHE_DOWN, compute_band
from tests.support.processes import deploy_env, running, start_web
from tests.support.services import free_port
from tests.support.tcp_proxy import TcpProxy
from tests.web.helpers import make_predictions

DEMO = DEMOS["breast-cancer"].path.read_bytes()
OTHER = make_predictions(n=400, seed=3).to_csv(index=False).encode()


def upload(client, data: bytes, name: str):
    return client.post("/api/v1/datasets", data={"file": (io.BytesIO(data), name)},
                       content_type="multipart/form-data")


def load_confidence(app, client, dataset_id: str) -> dict:
    """The Confidence page's first callback, as the browser sends it: resolves the data set
    through the cached view model."""
    key = next(k for k in app.callback_map if "confidence-model.options" in k)
    outputs = [dict(zip(("id", "property"), part.split(".", 1)))
               for part in key.strip(".").split("...")]
    resp = client.post("/_dash-update-component", json={
        "output": key, "outputs": outputs, "changedPropIds": ["confidence-query.data"],
        "inputs": [{"id": "confidence-query", "property": "data",
                    "value": {"data": dataset_id}}],
        "state": [{"id": "current-data", "property": "data", "value": None}]})
    assert resp.status_code == 200, resp.get_data(as_text=True)[:500]
    return resp.get_json()["response"]


def cache_warnings(caplog) -> list[logging.LogRecord]:
    return [r for r in caplog.records
            if r.name == "dashboard.storage.cachebackend" and r.levelno == logging.WARNING]


def serves_everything(app, client) -> str:
    """GET /explore, an upload, its record and a page callback all answer; the data set id."""
    assert client.get("/explore").status_code == 200
    resp = upload(client, DEMO, "breast-cancer.csv")
    assert resp.status_code == 200, resp.get_json()
    dataset_id = resp.get_json()["id"]
    info = client.get(f"/api/v1/datasets/{dataset_id}")
    assert info.status_code == 200 and info.get_json()["n_pos"] + info.get_json()["n_neg"] == 569
    page = load_confidence(app, client, dataset_id)
    assert page["confidence-model"]["value"] == "logreg"
    assert "569 cases" in page["confidence-dataset"]["children"]
    return dataset_id


def test_no_redis_listening_the_app_serves_from_the_database(tmp_path, caplog):
    app = create_app({"data_dir": tmp_path / "data",
                      "cache_url": f"redis://127.0.0.1:{free_port()}/0"})
    client = app.server.test_client()
    with caplog.at_level(logging.WARNING, logger="dashboard.storage.cachebackend"):
        dataset_id = serves_everything(app, client)
        services = app.server.extensions["costdash"]
        # A band can be computed but not kept for the page: the job says so.
        reply = compute_band(services, {"id": dataset_id}, "gbm", None, 50, 0)
        assert reply["error"] == CACHE_DOWN
    # Many failed cache calls, one warning (at most one per WARN_EVERY seconds).
    (warning,) = cache_warnings(caplog)
    assert "ConnectionError" in warning.getMessage() and "serving without the cache" in \
        warning.getMessage()


def test_redis_going_away_mid_run_and_coming_back(tmp_path, caplog, redis_url, monkeypatch):
    # Retry Redis soon after a failure, so the test sees the recovery without a long wait.
    monkeypatch.setattr(cachebackend, "RETRY_AFTER", 0.2)
    real = redis.Redis.from_url(redis_url)
    # Other tests of the session may have cached these data sets in this db: start without.
    for key in real.scan_iter("costdash:view:*"):
        real.delete(key)
    target = real.connection_pool.connection_kwargs
    with TcpProxy(target["host"], target["port"]) as proxy:
        db = redis_url.rsplit("/", 1)[1]
        app = create_app({"data_dir": tmp_path / "data",
                          "cache_url": f"redis://127.0.0.1:{proxy.port}/{db}"})
        client = app.server.test_client()
        cache = app.server.extensions["costdash"].views.cache

        # Up: the upload's view model lands in the real Redis, through the proxy.
        first = upload(client, OTHER, "first.csv").get_json()["id"]
        assert real.keys(f"costdash:view:*:{first}") and proxy.connections >= 1

        proxy.stop()
        with caplog.at_level(logging.WARNING, logger="dashboard.storage.cachebackend"):
            dataset_id = serves_everything(app, client)
            assert load_confidence(app, client, first)["confidence-model"]["value"] == "alpha"
            assert cache.get(f"view:anything:{first}") is None and not cache.set("k", 1)
        (warning,) = cache_warnings(caplog)
        assert "failed" in warning.getMessage()
        assert not real.keys(f"costdash:view:*:{dataset_id}")  # nothing was stored meanwhile

        proxy.restart()
        deadline = time.monotonic() + 10
        while not cache.set("probe", 1):
            assert time.monotonic() < deadline, "the cache did not use Redis again"
            time.sleep(0.1)
        # Back: a page load caches the view model of the data set uploaded during the outage.
        load_confidence(app, client, dataset_id)
        assert real.keys(f"costdash:view:*:{dataset_id}")
        real.delete("costdash:probe")


def test_gunicorn_logs_the_warning_and_keeps_serving(tmp_path, redis_url):
    """The web role as deployed (gunicorn.conf.py): the warning reaches its log."""
    real = redis.Redis.from_url(redis_url)
    target = real.connection_pool.connection_kwargs
    db = redis_url.rsplit("/", 1)[1]
    with TcpProxy(target["host"], target["port"]) as proxy:
        env = deploy_env(tmp_path / "data", secret_key=secrets.token_hex(32),
                         cache_url=f"redis://127.0.0.1:{proxy.port}/{db}")
        with running(lambda: start_web(env, tmp_path / "web.log", workers=2)) as (web,):
            proxy.stop()
            for name in ("a.csv", "b.csv"):
                resp = requests.post(web.url + "/api/v1/datasets",
                                     files={"file": (name, OTHER if name == "a.csv" else DEMO)},
                                     timeout=60)
                assert resp.status_code == 200, resp.text
                info = requests.get(f"{web.url}/api/v1/datasets/{resp.json()['id']}", timeout=10)
                assert info.status_code == 200
            for path in ("/explore", "/confidence", "/healthz"):
                assert requests.get(web.url + path, timeout=10).status_code == 200
            log = web.log_text()
    assert "[WARNING] Redis cache at redis://127.0.0.1:" in log, log
    assert "serving without the cache" in log


@pytest.fixture(autouse=True)
def _no_leftover_proxy_threads():
    """Each proxy is stopped by its test (its threads would keep sockets open otherwise)."""
    yield
    import threading

    deadline = time.monotonic() + 5
    while any(t.name.startswith("tcp-proxy-") for t in threading.enumerate()):
        assert time.monotonic() < deadline, [t.name for t in threading.enumerate()]
        time.sleep(0.05)
