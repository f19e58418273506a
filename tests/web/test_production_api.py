"""``POST /api/v1/analyses/<manage token>/production`` (issue 25) and the alert webhook: the
watch JSON of the stored batches, their bounds and scope, deletion with the analysis, the rate
limit shared with uploads, and the webhook POST received by a local HTTP server."""

from __future__ import annotations

import io
import json
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import numpy as np
import pandas as pd
import pytest

from costdash.monitor import watch, watch_to_dict
from costdash.production_io import load_production
from dashboard.factory import create_app
from dashboard.storage.production import ProductionStore, post_alerts
from dashboard.config import Settings
from tests.web.helpers import make_predictions

PERIOD_KEYS = {"period", "n", "p_pos", "p_pos_low", "p_pos_high", "pc", "pc_low", "pc_high",
               "choice", "deployed_optimal", "regret_per_period", "alert"}


def production_csv(prevalence: float, n: int = 4000, seed: int = 1, period: str | None = None
                   ) -> bytes:
    """Unlabelled scores of ``alpha`` (as make_predictions draws them) at ``prevalence``."""
    rng = np.random.default_rng(seed)
    y = rng.random(n) < prevalence
    table = {"score": np.round(rng.normal(size=n) + y * 1.6, 3)}
    if period is not None:
        table = {"week": [period] * n, **table}
    return pd.DataFrame(table).to_csv(index=False).encode()


class Hook:
    """A local HTTP server that keeps every JSON body POSTed to it."""

    def __init__(self) -> None:
        self.bodies: list[dict] = []
        received = self.bodies

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:  # noqa: N802 - the stdlib's name
                length = int(self.headers.get("Content-Length") or 0)
                received.append(json.loads(self.rfile.read(length)))
                self.send_response(204)
                self.end_headers()

            def log_message(self, *args) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}/alerts"
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def wait_for(self, count: int, timeout: float = 10.0) -> list[dict]:
        deadline = time.monotonic() + timeout
        while len(self.bodies) < count and time.monotonic() < deadline:
            time.sleep(0.02)
        return list(self.bodies)

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()


@pytest.fixture
def hook():
    h = Hook()
    yield h
    h.close()


@pytest.fixture
def analysis(tmp_path, hook):
    settings = Settings.from_mapping({"data_dir": tmp_path / "data", "alert_webhook": hook.url,
                                      "maintenance_seconds": 0,
                                      "rate_limit_uploads": "6 per hour"})
    app = create_app(settings)
    client = app.server.test_client()
    csv = make_predictions().to_csv(index=False).encode()
    created = client.post("/api/v1/analyses", data={
        "file": (io.BytesIO(csv), "reference.csv"), "p_pos": "0.2", "cost_fn": "1",
        "cost_fp": "1"})
    assert created.status_code == 201, created.get_json()
    return app, client, created.get_json()


def push(client, token: str, body: bytes, name: str, **fields):
    return client.post(f"/api/v1/analyses/{token}/production",
                       data={"file": (io.BytesIO(body), name), **fields})


@pytest.mark.slow
def test_push_answers_the_watch_of_every_batch_and_alerts_once(analysis, hook):
    app, client, created = analysis
    token = created["manage_token"]
    first = push(client, token, production_csv(0.2, seed=1), "2026-01.csv")
    assert first.status_code == 200, first.get_json()
    body = first.get_json()
    assert {"method", "level", "deployed", "periods", "notes", "batch"} <= set(body)
    assert [p["period"] for p in body["periods"]] == ["2026-01"]
    assert set(body["periods"][0]) == PERIOD_KEYS
    assert abs(body["periods"][0]["p_pos"] - 0.2) < 0.05 and not body["periods"][0]["alert"]

    second = push(client, token, production_csv(0.85, seed=2), "2026-02.csv")
    periods = second.get_json()["periods"]
    assert [p["period"] for p in periods] == ["2026-01", "2026-02"]
    assert periods[1]["alert"] and periods[1]["regret_per_period"] > 0
    # The same as the core on the same batches: the API adds no arithmetic.
    services = app.server.extensions["costdash"]
    reference = services.store.get(created["dataset_id"])
    table = pd.concat([load_production(io.BytesIO(production_csv(p, seed=s)), name="x.csv"
                                       ).table.assign(period=lab)
                       for p, s, lab in ((0.2, 1, "2026-01"), (0.85, 2, "2026-02"))])
    expected = watch_to_dict(watch(reference, table, period="period", p_pos=0.2))
    assert periods[1]["p_pos"] == pytest.approx(expected["periods"][1]["p_pos"], abs=1e-12)
    assert second.get_json()["deployed"] == expected["deployed"]

    (alert,) = hook.wait_for(1)
    assert set(alert) == {"analysis", "period", "p_pos", "pc", "interval", "deployed", "choice",
                          "regret"}
    assert alert["analysis"] == created["id"] and alert["period"] == "2026-02"
    assert alert["pc"] == pytest.approx(periods[1]["pc"])
    assert alert["interval"]["pc"] == pytest.approx([periods[1]["pc_low"], periods[1]["pc_high"]])
    assert alert["deployed"]["classifier"] == expected["deployed"]["classifier"]
    assert alert["regret"] == pytest.approx(periods[1]["regret_per_period"])
    # The first batch did not alert, and the second was posted once.
    assert hook.wait_for(2, timeout=0.5) == [alert]


def test_period_column_bad_file_and_scope(analysis):
    app, client, created = analysis
    token = created["manage_token"]
    both = production_csv(0.2, seed=3, period="w1") + production_csv(0.5, seed=4, period="w2"
                                                                     ).split(b"\n", 1)[1]
    reply = push(client, token, both, "weeks.csv")
    assert [p["period"] for p in reply.get_json()["periods"]] == ["w1", "w2"]
    bad = push(client, token, b"score\n0.5\noops\n", "bad.csv")
    assert bad.status_code == 400
    assert bad.get_json()["error"].startswith("bad.csv: column 'score' row 2")
    unknown = push(client, "x" * 32, production_csv(0.2), "a.csv")
    assert unknown.status_code == 404
    assert push(client, token, b"", "empty.csv").status_code == 400
    # Kept under the analysis only, merged into score counts.
    services = app.server.extensions["costdash"]
    store = ProductionStore(services.store)
    (batch,) = store.batches(f"analysis:{created['id']}")
    assert batch.periods == ("w1", "w2") and batch.n == 8000
    assert len(store.table(f"analysis:{created['id']}")) < 8000
    # Deleting the analysis deletes its batches.
    client.delete(f"/api/v1/analyses/{created['id']}",
                  headers={"Authorization": f"Bearer {token}"})
    assert store.count() == 0


@pytest.mark.slow
def test_pushes_count_as_uploads(analysis):
    _app, client, created = analysis
    token = created["manage_token"]
    codes = [push(client, token, production_csv(0.2, n=300), f"p{k}.csv").status_code
             for k in range(6)]
    # One upload went to the analysis itself: 5 more fit in "6 per hour".
    assert codes == [200] * 5 + [429]
    refused = push(client, token, production_csv(0.2, n=300), "p.csv")
    assert refused.status_code == 429 and int(refused.headers["Retry-After"]) > 0


def test_a_dead_webhook_is_logged_and_nothing_waits(caplog):
    started = time.monotonic()
    thread = post_alerts("http://127.0.0.1:9/nothing", [{"period": "x"}], timeout=0.5)
    assert time.monotonic() - started < 0.2
    thread.join(5)
    assert "not delivered" in caplog.text
    assert post_alerts(None, [{"period": "x"}]) is None
    url = "http://127.0.0.1:8125/hook"
    assert Settings.from_env({"COSTDASH_ALERT_WEBHOOK": url}).alert_webhook == url
    assert Settings.from_env({}).alert_webhook is None


def exercise_production(api, small_limit_api) -> None:
    """Every documented reply of the route, checked against the OpenAPI document (called by
    tests/web/test_openapi.py's test that every documented reply is exercised)."""
    from tests.web.test_openapi import Api

    csv = make_predictions(n=100).to_csv(index=False).encode()
    for each in (api, small_limit_api):
        created = each.client.post("/api/v1/analyses", data={
            "file": (io.BytesIO(csv), "ref.csv")}).get_json()
        url = f"/api/v1/analyses/{created['manage_token']}/production"
        if each is small_limit_api:
            each.call("post", url, 413, data={"file": (io.BytesIO(production_csv(0.2)),
                                                       "big.csv")})
            continue
        each.call("post", url, 200, data={"file": (io.BytesIO(production_csv(0.2, n=300)),
                                                   "a.csv")})
        each.call("post", url, 400, data={"file": (io.BytesIO(b"score\nx\n"), "b.csv")})
        each.call("post", url.replace(created["manage_token"], "0" * 32), 404,
                  data={"file": (io.BytesIO(b"score\n1\n"), "c.csv")})
        services = each.client.application.extensions["costdash"]
        with pytest.MonkeyPatch.context() as patch:
            import sqlalchemy as sa
            patch.setattr(services.store, "engine",
                          sa.create_engine("sqlite:////nonexistent-dir/costdash.db"))
            each.call("post", url, 503, data={"file": (io.BytesIO(b"score\n1\n"), "d.csv")})
    # The upload limit: its own app, so the others' counts stay as they were.
    import tempfile

    with tempfile.TemporaryDirectory() as tmp:
        limited = Api(create_app(Settings.from_mapping({
            "data_dir": tmp, "maintenance_seconds": 0, "rate_limit_uploads": "1 per hour"})
        ).server.test_client())
        created = limited.client.post("/api/v1/analyses", data={
            "file": (io.BytesIO(csv), "ref.csv")}).get_json()
        limited.call("post", f"/api/v1/analyses/{created['manage_token']}/production", 429,
                     data={"file": (io.BytesIO(b"score\n1\n"), "e.csv")})
        api.seen |= limited.seen
