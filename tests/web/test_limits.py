"""Per-client rate limits and optional upload keys (issue 11: "bounded everything", "optional
upload authentication"): 429 with Retry-After beyond the limit, counted per client address
(in the SQL store, where every app sharing it counts together), keys for uploads and
shares only."""

from __future__ import annotations

import io
import json

import pytest

from dashboard.factory import create_app
from dashboard.pages import explore
from tests.support.services import fresh_redis_url


def _app(tmp_path, **settings):
    return create_app({"data_dir": tmp_path / "data", **settings})


def _upload(client, raw: bytes, address: str, route: str = "/api/v1/datasets", **headers):
    return client.post(route, data={"file": (io.BytesIO(raw), "bc.csv")},
                       content_type="multipart/form-data",
                       environ_base={"REMOTE_ADDR": address}, headers=headers)


@pytest.fixture
def raw(breast_cancer_csv) -> bytes:
    return breast_cancer_csv.read_bytes()


def test_uploads_beyond_the_limit_answer_429_with_retry_after(tmp_path, raw):
    app = _app(tmp_path, rate_limit_uploads="3 per hour")
    client = app.server.test_client()
    statuses = [_upload(client, raw, "10.0.0.1").status_code for _ in range(2)]
    # Both upload routes count together.
    statuses.append(_upload(client, raw, "10.0.0.1", "/api/v1/analyses").status_code)
    refused = _upload(client, raw, "10.0.0.1")
    assert statuses == [200, 200, 201] and refused.status_code == 429
    wait = int(refused.headers["Retry-After"])
    assert 0 < wait <= 3600
    assert "at most 3 per 1 hour" in refused.get_json()["error"]
    # Nothing of the refused request was stored; another client is counted apart.
    assert app.server.extensions["costdash"].store.count()["handles"] == 3
    assert _upload(client, raw, "10.0.0.2").status_code == 200


def test_forwarded_addresses_count_only_behind_a_trusted_proxy(tmp_path, raw):
    spoofed = [{"X-Forwarded-For": f"192.0.2.{i}"} for i in range(3)]
    bare = _app(tmp_path / "bare", rate_limit_uploads="1 per hour").server.test_client()
    # Without a trusted proxy the header is anybody's: it does not make a new client.
    assert [_upload(bare, raw, "10.0.0.9", **h).status_code for h in spoofed] == [200, 429, 429]
    proxied = _app(tmp_path / "proxied", rate_limit_uploads="1 per hour",
                   trusted_proxies=1).server.test_client()
    # Behind nginx every request comes from the proxy's address; the header names the client.
    assert [_upload(proxied, raw, "127.0.0.1", **h).status_code for h in spoofed] == [200] * 3
    assert _upload(proxied, raw, "127.0.0.1", **spoofed[0]).status_code == 429


def test_the_scaled_deployment_counts_in_its_store_across_apps(tmp_path, raw):
    with fresh_redis_url() as url:
        # One deployment: its roles share the secret key and the database, where the counters
        # are (and count apart from any other deployment).
        settings = {"rate_limit_uploads": "2 per hour", "cache_url": url,
                    "secret_key": "k" * 64,
                    "database_url": f"sqlite:///{tmp_path / 'shared.db'}"}
        first = _app(tmp_path / "a", **settings).server.test_client()
        second = _app(tmp_path / "b", **settings).server.test_client()
        assert _upload(first, raw, "10.0.0.5").status_code == 200
        assert _upload(second, raw, "10.0.0.5").status_code == 200
        assert _upload(first, raw, "10.0.0.5").status_code == 429
        assert _upload(second, raw, "10.0.0.5").status_code == 429
        other = _app(tmp_path / "c", **{**settings, "secret_key": "o" * 64}).server.test_client()
        assert _upload(other, raw, "10.0.0.5").status_code == 200


def _share(app, data: str, address: str) -> str:
    services = app.server.extensions["costdash"]
    with app.server.test_request_context("/_dash-update-component", method="POST",
                                         environ_base={"REMOTE_ADDR": address}):
        reply = explore.share_view(services, {"data": data}, "x", None, "http://localhost/")
    return json.dumps(reply.to_plotly_json(), default=lambda o: o.to_plotly_json())


def test_shares_beyond_the_limit_are_refused_with_the_wait(tmp_path, raw):
    app = _app(tmp_path, rate_limit_shares="2 per hour")
    data = _upload(app.server.test_client(), raw, "10.0.0.3").get_json()["id"]
    replies = [_share(app, data, "10.0.0.3") for _ in range(3)]
    assert all("/s/" in r for r in replies[:2])
    assert "Too many analyses saved from your address: at most 2 per 1 hour" in replies[2]
    assert "Try again in" in replies[2] and "/s/" not in replies[2]
    assert app.server.extensions["costdash"].store.count()["analyses"] == 2


def test_upload_keys_guard_uploads_and_shares_but_not_links(tmp_path, raw):
    app = _app(tmp_path, upload_keys="k-one, k-two")
    client = app.server.test_client()
    refused = _upload(client, raw, "10.0.0.4")
    assert refused.status_code == 401 and "upload key" in refused.get_json()["error"]
    assert _upload(client, raw, "10.0.0.4", Authorization="Bearer wrong").status_code == 401
    assert _upload(client, raw, "10.0.0.4", "/api/v1/analyses").status_code == 401
    assert app.server.extensions["costdash"].store.count()["handles"] == 0
    made = _upload(client, raw, "10.0.0.4", "/api/v1/analyses", Authorization="Bearer k-two")
    assert made.status_code == 201
    link = made.get_json()["url"].removeprefix("http://localhost")
    assert client.get(link).status_code == 200  # a viewer needs no key
    token = link.rsplit("/", 1)[1]
    assert client.get(f"/api/v1/analyses/{token}").status_code == 200
    # The browser: a share without the key is refused; the key entered once opens it.
    data = _upload(client, raw, "10.0.0.4", Authorization="Bearer k-one").get_json()["id"]
    assert "needs an upload key" in _share(app, data, "10.0.0.4")
    limits = app.server.extensions["costdash-limits"]
    with app.server.test_request_context("/_dash-update-component", method="POST"):
        assert not limits.remember_key("nope")
        assert limits.remember_key("k-one")
        assert limits.key_accepted()


def test_explore_shows_the_key_box_only_when_keys_are_set(tmp_path):
    from dashboard.shell import route

    def page_text(app) -> str:
        content, _ = route("/explore", "", app.server.extensions["costdash"])
        return json.dumps(content.to_plotly_json(), default=lambda o: o.to_plotly_json())

    assert '"upload-key"' not in page_text(_app(tmp_path / "open"))
    assert '"upload-key"' in page_text(_app(tmp_path / "keyed", upload_keys="k"))
