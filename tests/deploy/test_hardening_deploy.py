"""Findings of issue 11 that need the deployed processes: gunicorn (aborted uploads, tokens in
the access log, links behind a proxy), and a Celery worker (connections inherited by a forked
process). The in-process ones are in tests/web/test_hardening.py; docs/reliability.md lists
them all."""

from __future__ import annotations

import secrets
import time

import pytest
import requests

from tests.support.processes import deploy_env, running, start_web
from tests.support.uploads import tmp_files
from tests.web.test_hardening import (
    BOUNDARY,
    _multipart_head,
    _rows,
    chunked_upload,
    disconnecting_chunked_upload,
    disconnecting_upload,
)

pytestmark = pytest.mark.slow


def test_aborted_and_oversized_uploads_leave_no_file_under_gunicorn(tmp_path, postgres_url):
    """Finding 1 on the deployed web role: 12 uploads chunked over the limit (413) and 24 that
    hang up half-way (12 with a length, 12 chunked), on 2 gthread workers, leave nothing in the
    data dir's tmp, and no traceback in the log."""
    data_dir = tmp_path / "data"
    env = deploy_env(data_dir, secret_key=secrets.token_hex(32), database_url=postgres_url,
                     COSTDASH_MAX_UPLOAD_MB="1")
    over = _multipart_head() + _rows(3 * 1024 * 1024) + f"\r\n--{BOUNDARY}--\r\n".encode()
    half = _multipart_head() + _rows(600 * 1024)
    with running(lambda: start_web(env, tmp_path / "web.log", workers=2)) as (web,):
        for route in ("/api/v1/analyses", "/api/v1/datasets") * 6:
            reply = chunked_upload(web.url, route, over)
            assert reply.startswith(b"HTTP/1.1 413"), reply[:300]
            disconnecting_upload(web.url, route, 900 * 1024, half)
            disconnecting_chunked_upload(web.url, route, half)
        assert tmp_files(data_dir) == [], web.log_text()[-3000:]
        assert requests.get(web.url + "/healthz", timeout=10).status_code == 200
        assert "Traceback" not in web.log_text()


def test_no_token_reaches_any_log_line(tmp_path, breast_cancer_bytes):
    """Finding 7: gunicorn's access log wrote ``POST /manage/<token>`` (and every read link)
    in its request line. A run that uses every route a token travels in -- the manage page
    (GET, rename, expiry, HEAD, a bad action, delete), the read-only page, the API with the
    share token and the bearer token, their 404s after the delete -- leaves neither token in
    any line of the log, and still logs one line per request."""
    env = deploy_env(tmp_path / "data", secret_key=secrets.token_hex(32))
    with running(lambda: start_web(env, tmp_path / "web.log", workers=2)) as (web,):
        created = requests.post(web.url + "/api/v1/analyses",
                                files={"file": ("bc.csv", breast_cancer_bytes)},
                                data={"name": "secret plans"}, timeout=60).json()
        share, manage = created["url"].rsplit("/", 1)[1], created["manage_token"]
        manage_url = f"{web.url}/manage/{manage}"
        s = requests.Session()
        calls = [
            s.get(f"{web.url}/s/{share}", timeout=30),
            s.head(f"{web.url}/s/{share}", timeout=30),
            s.get(f"{web.url}/api/v1/analyses/{share}", timeout=30),
            s.get(manage_url, timeout=30),
            s.head(manage_url, timeout=30),
            s.post(manage_url, data={"action": "rename", "name": "plans"}, timeout=30),
            s.post(manage_url, data={"action": "expiry", "expires_in_days": "3"}, timeout=30),
            s.post(manage_url, data={"action": "nonsense"}, timeout=30),
            s.patch(f"{web.url}/api/v1/analyses/{created['id']}", json={"name": "x"},
                    headers={"Authorization": f"Bearer {manage}"}, timeout=30),
            s.post(manage_url, data={"action": "delete"}, timeout=30),
            s.get(f"{web.url}/s/{share}", timeout=30),
            s.get(manage_url, timeout=30),
            s.get(f"{web.url}/api/v1/analyses/{share}", timeout=30),
        ]
        assert [c.status_code for c in calls] == [200, 200, 200, 200, 200, 200, 200, 400, 200,
                                                  200, 404, 404, 404]
        time.sleep(0.5)
        log = web.log_text()
    lines = log.splitlines()
    assert sum("/manage/" in line for line in lines) >= 8  # one line per request ...
    assert sum("/s/" in line for line in lines) >= 3
    assert not [line for line in lines if share in line or manage in line]  # ... no token
    assert "/manage/<redacted>" in log and "/s/<redacted>" in log


@pytest.fixture(scope="module")
def breast_cancer_bytes() -> bytes:
    from costdash.demo import DEMOS

    return DEMOS["breast-cancer"].path.read_bytes()


def test_the_smaller_findings_under_gunicorn(tmp_path, breast_cancer_bytes):
    """Finding 10 on the web role: links on COSTDASH_PUBLIC_URL whatever the Host header,
    HEAD of a dead link 404, a Dash path traversal 404 without a traceback in the log."""
    public = "https://costdash.example.org"
    env = deploy_env(tmp_path / "data", secret_key=secrets.token_hex(32),
                     COSTDASH_PUBLIC_URL=public)
    with running(lambda: start_web(env, tmp_path / "web.log", workers=2)) as (web,):
        body = requests.post(web.url + "/api/v1/analyses", headers={"Host": "evil.example"},
                             files={"file": ("bc.csv", breast_cancer_bytes)}, timeout=60).json()
        assert body["url"].startswith(public + "/s/")
        assert body["manage_url"].startswith(public + "/manage/")
        assert requests.head(f"{web.url}/s/{'A' * 32}", timeout=30).status_code == 404
        live = body["url"].replace(public, web.url)
        assert requests.head(live, timeout=30).status_code == 200
        for path in ("/_dash-component-suites/dash/..%2f..%2fapp.py",
                     "/_dash-component-suites/dash/%2e%2e/%2e%2e/gunicorn.conf.py"):
            assert requests.get(web.url + path, timeout=30).status_code == 404
        time.sleep(0.5)
        assert "Traceback" not in web.log_text()
