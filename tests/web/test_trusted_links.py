"""Issue 22, findings 10 and 11 and "what a trusted link service offers", in process: the
session cookie keeps no upload key, the share counters count per deployment, malformed
callback requests get a clean 400, share pages and their API answers are noindex, a 405 names
what is allowed. (Rotating and revoking links, and their open counts, are in
tests/web/test_link_rotation.py; the logs, under gunicorn and nginx, in
tests/deploy/test_log_redaction.py.)"""

from __future__ import annotations

import io
import json
import logging

import pytest
import redis

from dashboard.factory import create_app
from dashboard.limits import key_id
from dashboard.pages import explore
from tests.support.services import fresh_redis_url

KEY = "k-secret-upload-key-0123456789"


def _app(tmp_path, **settings):
    return create_app({"data_dir": tmp_path / "data", **settings})


def _callback(client, output: str, inputs: list[dict], changed: list[str]):
    body = {"output": output, "outputs": {"id": output.split(".")[0],
                                          "property": output.split(".")[1]},
            "inputs": inputs, "changedPropIds": changed, "state": []}
    return client.post("/_dash-update-component", json=body)


def _enter_key(client, key: str):
    return _callback(client, "upload-key-status.children",
                     [{"id": "upload-key-button", "property": "n_clicks", "value": 1},
                      {"id": "upload-key", "property": "value", "value": key}],
                     ["upload-key-button.n_clicks"])


def _session(app, client) -> tuple[dict, str]:
    """The session cookie's payload, decoded with the app's own serializer, and its text."""
    cookie = client.get_cookie(app.server.config["SESSION_COOKIE_NAME"])
    assert cookie is not None
    serializer = app.server.session_interface.get_signing_serializer(app.server)
    return serializer.loads(cookie.value), cookie.value


def test_the_session_keeps_a_key_id_never_the_key(tmp_path, breast_cancer_csv):
    """Finding 10: the key entered on the page was kept in clear in the signed (not encrypted)
    cookie. Now its HMAC under the secret key is kept, and it still opens uploads."""
    app = _app(tmp_path, upload_keys=KEY, secret_key="s" * 64)
    client = app.server.test_client()
    reply = _enter_key(client, KEY)
    assert reply.status_code == 200 and "Key accepted" in reply.get_data(as_text=True)
    payload, text = _session(app, client)
    assert KEY not in json.dumps(payload) and KEY not in text
    assert payload == {"_permanent": True, "costdash-upload-key-id": key_id(KEY, "s" * 64)}
    # The cookie alone lets this browser share, as before.
    data = client.post("/api/v1/datasets", headers={"Authorization": f"Bearer {KEY}"},
                       data={"file": (io.BytesIO(breast_cancer_csv.read_bytes()), "bc.csv")},
                       content_type="multipart/form-data").get_json()["id"]
    limits = app.server.extensions["costdash-limits"]
    with app.server.test_request_context("/_dash-update-component", method="POST",
                                         headers={"Cookie": f"session={text}"}):
        assert limits.key_accepted()
        share = explore.share_view(app.server.extensions["costdash"], {"data": data}, "x",
                                   None, "")
        assert "/s/" in json.dumps(share.to_plotly_json(), default=lambda o: o.to_plotly_json())
    # A key removed from the list: its id opens nothing any more.
    other = _app(tmp_path / "other", upload_keys="another-key", secret_key="s" * 64)
    with other.server.test_request_context("/", headers={"Cookie": f"session={text}"}):
        assert not other.server.extensions["costdash-limits"].key_accepted()
    # A session cookie of the old kind (the key itself) no longer counts.
    old = app.server.session_interface.get_signing_serializer(app.server).dumps(
        {"costdash-upload-key": KEY})
    with app.server.test_request_context("/", headers={"Cookie": f"session={old}"}):
        assert not limits.key_accepted()


@pytest.mark.parametrize("settings, secure", [
    ({}, False),
    ({"public_url": "http://costdash.internal:8080"}, False),
    ({"public_url": "https://costdash.example.org"}, True),
    ({"public_url": "https://costdash.example.org", "secure_cookies": "false"}, False),
    ({"secure_cookies": "true"}, True),
])
def test_the_session_cookie_is_samesite_lax_and_secure_behind_tls(tmp_path, settings, secure):
    app = _app(tmp_path, upload_keys=KEY, **settings)
    reply = _enter_key(app.server.test_client(), KEY)
    (cookie,) = reply.headers.getlist("Set-Cookie")
    attributes = [a.strip().lower() for a in cookie.split(";")[1:]]
    assert "samesite=lax" in attributes and "httponly" in attributes
    assert ("secure" in attributes) is secure


def test_secure_cookies_setting_is_checked(tmp_path):
    from dashboard.config import Settings

    assert Settings.from_env({"COSTDASH_SECURE_COOKIES": "yes"}).cookies_secure()
    with pytest.raises(ValueError, match="COSTDASH_SECURE_COOKIES"):
        Settings.from_env({"COSTDASH_SECURE_COOKIES": "maybe"})


def test_share_counters_count_per_deployment(tmp_path, breast_cancer_csv):
    """Finding 11: the share counters ignored the limiter's per-deployment prefix, so two
    deployments on one store (production and a staging copy) counted one client's shares
    together. The counters live in the SQL store (issue 22, finding 6: not in the cache)."""
    import sqlalchemy as sa

    shared = f"sqlite:///{tmp_path / 'shared.db'}"
    with fresh_redis_url() as url:
        apps = [_app(tmp_path / name, cache_url=url, rate_limit_shares="1 per hour",
                     secret_key=name * 64, database_url=shared) for name in ("a", "b")]
        replies = []
        for app in apps:
            data = app.server.test_client().post(
                "/api/v1/datasets", data={"file": (io.BytesIO(breast_cancer_csv.read_bytes()),
                                                   "bc.csv")},
                content_type="multipart/form-data").get_json()["id"]
            with app.server.test_request_context("/_dash-update-component", method="POST",
                                                 environ_base={"REMOTE_ADDR": "10.1.1.1"}):
                reply = explore.share_view(app.server.extensions["costdash"], {"data": data},
                                           "x", None, "")
            replies.append(json.dumps(reply.to_plotly_json(),
                                      default=lambda o: o.to_plotly_json()))
        assert all("/s/" in r for r in replies), replies  # one share each: both allowed
        assert redis.Redis.from_url(url).keys("*shares*") == []
        with apps[0].server.extensions["costdash"].store.engine.connect() as conn:
            keys = [k for k in conn.execute(sa.text("SELECT key FROM rate_windows")).scalars()
                    if "shares" in k]
        prefixes = {app.server.extensions["costdash-limits"].key_prefix for app in apps}
        assert len(prefixes) == 2
        assert len(keys) == 2 and all(any(p in k for p in prefixes) for k in keys), keys


@pytest.mark.parametrize("body, problem", [
    ({"output": "no-such-output.children", "inputs": []}, "no callback has the output"),
    ({"inputs": []}, "no callback has the output"),
    (["not", "an", "object"], "JSON object"),
    ({"output": "upload-key-status.children", "inputs": "x"}, "inputs must be a list"),
    ({"output": "upload-key-status.children", "inputs": [{"id": "upload-key"}]},
     "inputs must be a list"),
    ({"output": "upload-key-status.children",
      "inputs": [{"id": "upload-key-button", "property": "n_clicks", "value": 1}]},
     "takes 2 inputs, not 1"),
    ({"output": "upload-key-status.children", "outputs": 3,
      "inputs": [{"id": "upload-key-button", "property": "n_clicks", "value": 1},
                 {"id": "upload-key", "property": "value", "value": "x"}]}, "outputs must be"),
])
def test_a_malformed_callback_request_is_a_clean_400(client, caplog, body, problem):
    """Finding 11: an unknown callback output answered 500 with a traceback in the log."""
    with caplog.at_level(logging.INFO):
        reply = client.post("/_dash-update-component", json=body)
    assert reply.status_code == 400, reply.get_data(as_text=True)[:300]
    assert problem in reply.get_json()["error"]
    assert "Traceback" not in reply.get_data(as_text=True)
    assert not [r for r in caplog.records if r.exc_info or r.levelno >= logging.ERROR]


def test_a_wellformed_callback_request_still_runs(tmp_path):
    app = _app(tmp_path, upload_keys=KEY)
    reply = _enter_key(app.server.test_client(), "wrong")
    assert reply.status_code == 200 and "not an upload key" in reply.get_data(as_text=True)


@pytest.mark.slow
def test_share_pages_and_their_api_answers_are_noindex(client, breast_cancer_csv):
    created = client.post("/api/v1/analyses", data={
        "file": (io.BytesIO(breast_cancer_csv.read_bytes()), "bc.csv")}).get_json()
    token = created["url"].rsplit("/", 1)[1]
    for path in (f"/s/{token}", f"/s/{token}/curves", f"/api/v1/analyses/{token}",
                 f"/manage/{created['manage_token']}", "/s/" + "A" * 32,
                 f"/api/v1/datasets/{created['dataset_id']}/report.html",
                 f"/api/v1/datasets/{created['dataset_id']}/hull.csv"):
        reply = client.get(path)
        assert reply.headers.get("X-Robots-Tag") == "noindex, nofollow", (path, reply.status)
    assert "X-Robots-Tag" not in client.get("/explore").headers


@pytest.mark.parametrize("method, path, allow", [
    ("PUT", "/api/v1/analyses", "POST"),
    ("POST", "/api/v1/analyses/0123456789abcdef", "GET, HEAD, PATCH, DELETE"),
    ("PUT", "/api/v1/datasets/" + "0" * 32, "GET, HEAD, DELETE"),
])
def test_a_405_names_the_allowed_methods(client, method, path, allow):
    reply = client.open(path, method=method)
    assert reply.status_code == 405
    assert reply.headers["Allow"] == allow
    assert method in reply.get_json()["error"]


def test_the_share_panel_gives_relative_links_on_an_untrusted_host(tmp_path,
                                                                    breast_cancer_csv):
    """Finding 11: the Share panel built its links on the request's Host."""
    app = _app(tmp_path)
    client = app.server.test_client()
    data = client.post("/api/v1/datasets", data={
        "file": (io.BytesIO(breast_cancer_csv.read_bytes()), "bc.csv")},
        content_type="multipart/form-data").get_json()["id"]
    body = {"output": "share-result.children",
            "outputs": {"id": "share-result", "property": "children"},
            "inputs": [{"id": "share-request", "property": "data",
                        "value": {"view": {"data": data}, "name": "x"}}],
            "changedPropIds": ["share-request.data"], "state": []}
    for host, root in (("evil.example", ""), ("127.0.0.1:8050", "http://127.0.0.1:8050")):
        reply = client.post("/_dash-update-component", json=body, headers={"Host": host})
        assert reply.status_code == 200
        text = json.dumps(reply.get_json())
        assert f'"href": "{root}/s/' in text and f'"href": "{root}/manage/' in text, text[:500]
        assert "evil.example" not in text


@pytest.mark.parametrize("line, kept", [
    ("GET //s/{t}/curves HTTP/1.1", "GET //s/<redacted>/curves HTTP/1.1"),
    ("GET /%73/{t} HTTP/1.1", "GET /s/<redacted> HTTP/1.1"),
    ("GET /s%2F{t}", "GET /s/<redacted>"),
    ("GET /explore?p_pos=0.2&data={h}&models=a,b",
     "GET /explore?p_pos=0.2&data=<redacted>&models=a,b"),
    ("GET /explore?data={h}&data={h}", "GET /explore?data=<redacted>&data=<redacted>"),
    ("GET /explore?d%61ta%3D{h}", "GET /explore?data=<redacted>"),
    ("GET /api/v1/datasets/{h}/report.html", "GET /api/v1/datasets/<redacted>/report.html"),
    ("GET //api/v1/analyses/{t}", "GET //api/v1/analyses/<redacted>"),
    ("POST /api/v1/analyses/0123456789abcdef/link",
     "POST /api/v1/analyses/0123456789abcdef/link"),
    ("DatasetNotFound: no data set with id '{h}'",
     "DatasetNotFound: no data set with id '<redacted>'"),
    ("GET /s//{t} HTTP/1.1", "GET /s//<redacted> HTTP/1.1"),
    ('GET /explore?unit=%E2%82%AC&p_pos=0.1 "x%0Ay"',
     'GET /explore?unit=%E2%82%AC&p_pos=0.1 "x%0Ay"'),
])
def test_every_capability_is_taken_out_of_log_lines(line, kept):
    """Finding 9, the function behind every gunicorn and Werkzeug log line (the deployed
    processes: tests/deploy/test_log_redaction.py)."""
    from dashboard.config import redact_tokens

    t, h = "M06No-oZTKiPNdczaZxYPjPBHZAmhF10", "0123456789abcdef0123456789abcdef"
    assert redact_tokens(line.format(t=t, h=h)) == kept


def test_a_traceback_quoting_a_handle_is_redacted():
    from dashboard.config import RedactTokens

    handle = "0123456789abcdef0123456789abcdef"
    try:
        raise KeyError(f"no data set with id '{handle}'")
    except KeyError:
        import sys

        record = logging.LogRecord("x", logging.ERROR, __file__, 1, "failed on %s",
                                   (f"/api/v1/datasets/{handle}",), sys.exc_info())
    RedactTokens().filter(record)
    text = logging.Formatter().format(record)
    assert handle not in text and "Traceback" in text and "<redacted>" in text
