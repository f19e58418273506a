"""Findings of issue 11 ("a hosted service you can put on the internet") that an app in this
process can show, each reproduced by a test: concurrent saves (5), aborted uploads (1), expiry
at read time (8), fork safety of the engine (9), and the smaller ones (10). The findings that
need gunicorn or Celery are in tests/deploy/test_hardening_deploy.py; docs/reliability.md has
the list."""

from __future__ import annotations

import io
import re
import socket
import threading
import time
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager

import pytest
import requests
from werkzeug.serving import make_server

from dashboard.config import Settings
from dashboard.factory import create_app
from tests.support.uploads import tmp_files


@contextmanager
def serving(app) -> Iterator[str]:
    """The app's Flask server on a free port of 127.0.0.1 (Werkzeug, one thread per request)."""
    server = make_server("127.0.0.1", 0, app.server, threaded=True)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_port}"
    finally:
        server.shutdown()
        thread.join(timeout=10)
        server.server_close()


@pytest.fixture(params=["sqlite", "postgresql"])
def backend_settings(request, tmp_path) -> Iterator[Settings]:
    """Settings of a fresh app on each back end (PostgreSQL: a new, empty schema per test in
    the module's database, tests/conftest.py)."""
    if request.param == "sqlite":
        yield Settings.from_mapping({"data_dir": tmp_path / "data"})
        return
    url = request.getfixturevalue("fresh_postgres_url")
    yield Settings.from_mapping({"data_dir": tmp_path / "data", "database_url": url})


def _dispose(app) -> None:
    app.server.extensions["costdash"].store.engine.dispose()


# --- finding 5: concurrent saves of one file ---------------------------------------------------

@pytest.mark.slow
@pytest.mark.parametrize("route", ["/api/v1/analyses", "/api/v1/datasets"])
def test_twenty_concurrent_saves_of_one_file_all_succeed(backend_settings, breast_cancer_csv,
                                                         route):
    """Before the fix, 11 of 20 answered 500 on PostgreSQL (UniqueViolation on the parts)."""
    app = create_app(backend_settings)
    raw = breast_cancer_csv.read_bytes()
    barrier = threading.Barrier(20)
    try:
        with serving(app) as url:
            def post(i: int) -> requests.Response:
                barrier.wait()
                return requests.post(url + route, files={"file": (f"bc-{i}.csv", raw)},
                                     data={"name": f"copy {i}"} if "analyses" in route else {},
                                     timeout=120)

            with ThreadPoolExecutor(20) as pool:
                replies = list(pool.map(post, range(20)))
            assert [r.status_code for r in replies] == [201 if "analyses" in route else 200] * 20, \
                [r.text for r in replies if r.status_code >= 300][:3]
            ids = {r.json().get("dataset_id", r.json().get("id")) for r in replies}
            assert len(ids) == 20  # a handle each (finding 3), the content stored once:
            counts = app.server.extensions["costdash"].store.count()
            assert counts["datasets"] == 1 and counts["dataset_parts"] == 1
            assert counts["analyses"] == (20 if "analyses" in route else 0)
            # Every link works.
            if "analyses" in route:
                for r in replies[:3]:
                    token = r.json()["url"].rsplit("/", 1)[1]
                    assert requests.get(f"{url}/api/v1/analyses/{token}",
                                        timeout=60).status_code == 200
    finally:
        _dispose(app)


# --- finding 1: aborted uploads leave no temp file ------------------------------------------------

BOUNDARY = "costdashboundary"


def _multipart_head(filename: str = "big.csv") -> bytes:
    return (f"--{BOUNDARY}\r\nContent-Disposition: form-data; name=\"file\"; "
            f"filename=\"{filename}\"\r\nContent-Type: text/csv\r\n\r\n").encode()


def _rows(n_bytes: int) -> bytes:
    line = b"1,0.25\n"
    return b"y_true,m\n" + line * (n_bytes // len(line))


def _send(url: str, request_head: str, body_parts: list[bytes], *, read_reply: bool = True,
          ) -> bytes:
    host, port = url.removeprefix("http://").split(":")
    with socket.create_connection((host, int(port)), timeout=30) as s:
        s.sendall(request_head.encode())
        try:
            for part in body_parts:
                s.sendall(part)
        except OSError:  # the server may refuse before it has read everything
            pass
        if not read_reply:
            return b""
        reply = b""
        try:
            s.settimeout(10)
            while chunk := s.recv(65536):
                reply += chunk
                head, sep, body = reply.partition(b"\r\n\r\n")
                length = re.search(rb"(?im)^content-length:\s*(\d+)", head)
                if sep and length and len(body) >= int(length.group(1)):
                    break
        except OSError:
            pass
        return reply


def chunked_upload(url: str, path: str, body: bytes) -> bytes:
    """POST ``body`` with ``Transfer-Encoding: chunked`` (no Content-Length to refuse it on)."""
    head = (f"POST {path} HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n"
            f"Content-Type: multipart/form-data; boundary={BOUNDARY}\r\nConnection: close\r\n\r\n")
    chunks = [b"%x\r\n%s\r\n" % (len(body[i:i + 65536]), body[i:i + 65536])
              for i in range(0, len(body), 65536)]
    return _send(url, head, [*chunks, b"0\r\n\r\n"])


def disconnecting_chunked_upload(url: str, path: str, sent: bytes) -> None:
    """Send ``sent`` as chunks of a chunked body, then hang up before its last chunk."""
    head = (f"POST {path} HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n"
            f"Content-Type: multipart/form-data; boundary={BOUNDARY}\r\n\r\n")
    chunks = [b"%x\r\n%s\r\n" % (len(sent[i:i + 65536]), sent[i:i + 65536])
              for i in range(0, len(sent), 65536)]
    _send(url, head, chunks, read_reply=False)


def disconnecting_upload(url: str, path: str, announced: int, sent: bytes) -> None:
    """Announce ``announced`` bytes, send ``sent`` (fewer), then hang up."""
    head = (f"POST {path} HTTP/1.1\r\nHost: x\r\nContent-Length: {announced}\r\n"
            f"Content-Type: multipart/form-data; boundary={BOUNDARY}\r\n\r\n")
    _send(url, head, [sent], read_reply=False)


def leftovers(settings: Settings, wait: float = 5.0) -> list[str]:
    """Files left in the data dir's tmp (see :func:`tests.support.uploads.tmp_files`)."""
    return tmp_files(settings.data_dir, wait)


@pytest.fixture
def small_limit_app(tmp_path):
    settings = Settings.from_mapping({"data_dir": tmp_path / "data",
                                      "max_upload_bytes": 1024 * 1024})
    app = create_app(settings)
    yield app, settings
    _dispose(app)


@pytest.mark.parametrize("route", ["/api/v1/analyses", "/api/v1/datasets"])
def test_a_chunked_upload_over_the_limit_leaves_no_temp_file(small_limit_app, route):
    app, settings = small_limit_app
    body = _multipart_head() + _rows(3 * 1024 * 1024) + f"\r\n--{BOUNDARY}--\r\n".encode()
    with serving(app) as url:
        reply = chunked_upload(url, route, body)
        assert reply.startswith(b"HTTP/1.1 413"), reply[:300]
        assert b"upload limit" in reply
        assert leftovers(settings) == []


@pytest.mark.parametrize("route", ["/api/v1/analyses", "/api/v1/datasets",
                                   "/manage/" + "x" * 32, "/_dash-update-component"])
def test_a_client_hanging_up_mid_upload_leaves_no_temp_file(small_limit_app, route):
    """Any route that reads a form (the manage page's too) spools file parts to the data dir:
    whatever ends the request, the files go with it."""
    app, settings = small_limit_app
    sent = _multipart_head() + _rows(600 * 1024)
    with serving(app) as url:
        for _ in range(3):
            disconnecting_upload(url, route, 900 * 1024, sent)
            disconnecting_chunked_upload(url, route, sent)
        assert leftovers(settings) == []
        # The server still serves.
        assert requests.get(url + "/healthz", timeout=10).status_code == 200


def test_a_file_sent_to_a_route_that_takes_none_leaves_no_temp_file(small_limit_app,
                                                                      breast_cancer_csv):
    app, settings = small_limit_app
    client = app.server.test_client()
    created = client.post("/api/v1/analyses", data={
        "file": (io.BytesIO(breast_cancer_csv.read_bytes()), "bc.csv")}).get_json()
    manage = "/manage/" + created["manage_token"]
    reply = client.post(manage, data={"action": "rename", "name": "renamed",
                                      "file": (io.BytesIO(b"y_true,m\n1,0.5\n" * 1000), "f.csv")})
    assert reply.status_code == 303
    assert leftovers(settings, wait=0) == []


def test_temp_files_nobody_writes_are_swept_periodically(tmp_path, breast_cancer_csv):
    """A worker killed mid-upload (or an older version's leak) leaves temp files: the
    maintenance sweep removes them while the app runs, not only at start, and leaves alone the
    files of uploads still arriving."""
    from dashboard.api import HashingFile
    from dashboard.factory import Maintenance

    settings = Settings.from_mapping({"data_dir": tmp_path / "data"})
    app = create_app(settings)
    maintenance: Maintenance = app.server.extensions["costdash-maintenance"]
    tmp = settings.data_dir / "tmp"
    tmp.mkdir(parents=True, exist_ok=True)
    dead = tmp / "upload-dead"
    dead.write_bytes(b"y_true,m\n" * 1000)  # nobody holds it open
    arriving = HashingFile(tmp)  # an upload in progress: its writer holds it
    arriving.write(b"y_true,m\n")
    try:
        maintenance.run_once(now=time.time() + maintenance.grace + 1)
        assert not dead.exists()
        assert arriving.path.exists()
    finally:
        arriving.discard()
        _dispose(app)
    assert not arriving.path.exists()


def test_the_sweep_runs_on_its_schedule(tmp_path):
    import os

    settings = Settings.from_mapping({"data_dir": tmp_path / "data", "maintenance_seconds": 0.2})
    app = create_app(settings)
    maintenance = app.server.extensions["costdash-maintenance"]
    runs = maintenance.runs
    tmp = settings.data_dir / "tmp"
    tmp.mkdir(parents=True, exist_ok=True)
    dead = tmp / "upload-killed-mid-way"
    dead.write_bytes(b"partial")
    old = time.time() - 3600
    os.utime(dead, (old, old))
    # The file goes in a round's first step and the round is counted after its last, which on a
    # busy machine can come a while later: wait for both.
    deadline = time.monotonic() + 10
    while (dead.exists() or maintenance.runs <= runs) and time.monotonic() < deadline:
        time.sleep(0.05)
    try:
        assert not dead.exists()
        assert maintenance.runs > runs
    finally:
        maintenance.stop()
        _dispose(app)


@pytest.mark.slow
def test_the_temp_file_of_a_process_killed_mid_upload_is_swept(tmp_path):
    """The lock dies with its process: a writer killed with SIGKILL leaves a file the sweep
    takes, while a live writer's file stays."""
    import signal
    import subprocess
    import sys

    from dashboard.api import sweep_upload_files

    tmp = tmp_path / "tmp"
    code = ("import sys, time; from pathlib import Path; from dashboard.api import HashingFile;"
            f"f = HashingFile(Path({str(tmp)!r})); f.write(b'y_true,m\\n' * 1000); f.flush();"
            "print(f.path, flush=True); time.sleep(60)")
    child = subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE, text=True)
    try:
        path = tmp / child.stdout.readline().strip().rsplit("/", 1)[1]
        assert path.exists()
        assert sweep_upload_files(tmp, older_than=time.time() + 3600) == 0  # alive: kept
        child.send_signal(signal.SIGKILL)
        child.wait(timeout=10)
        assert path.exists()
        assert sweep_upload_files(tmp, older_than=time.time() - 3600) == 0  # too young
        assert sweep_upload_files(tmp, older_than=time.time() + 3600) == 1
        assert not path.exists()
    finally:
        child.kill()
        child.wait()


# --- finding 7: no token in any log line ---------------------------------------------------------

def test_redact_tokens():
    from dashboard.config import redact_tokens

    share, manage = "M06No-oZTKiPNdczaZxYPjPBHZAmhF10", "UfyU7XJxSwNnCIxKakadyB1Tef1vsMoc"
    line = (f'127.0.0.1 "POST /manage/{manage}?done=1 HTTP/1.1" 303 "GET /s/{share}/" '
            f'GET /api/v1/analyses/{share} PATCH /api/v1/analyses/0123456789abcdef '
            f'Authorization: Bearer {manage} /s/%41{share[1:]}')
    clean = redact_tokens(line)
    assert share not in clean and manage not in clean and share[1:] not in clean
    assert "/manage/<redacted>?done=1" in clean and "/s/<redacted>/" in clean
    assert "/api/v1/analyses/0123456789abcdef" in clean  # an id is no secret
    # Issue 22, finding 9: a data= value is a handle, a capability too.
    assert redact_tokens("/explore?data=abc&p_pos=0.1") == "/explore?data=<redacted>&p_pos=0.1"


def test_the_development_server_logs_no_token(small_limit_app, breast_cancer_csv, caplog):
    import logging

    app, _settings = small_limit_app
    caplog.set_level(logging.INFO, logger="werkzeug")
    with serving(app) as url:
        body = requests.post(url + "/api/v1/analyses", timeout=60, files={
            "file": ("bc.csv", breast_cancer_csv.read_bytes())}).json()
        share, manage = body["url"].rsplit("/", 1)[1], body["manage_token"]
        assert requests.get(f"{url}/s/{share}", timeout=30).status_code == 200
        assert requests.post(f"{url}/manage/{manage}", data={"action": "delete"},
                             timeout=30).status_code == 200
        assert requests.get(f"{url}/manage/{manage}", timeout=30).status_code == 404
    text = "\n".join(r.getMessage() for r in caplog.records)
    assert "/manage/<redacted>" in text and "/s/<redacted>" in text
    assert share not in text and manage not in text


# --- finding 8: expiry at read time on every route; purge and sweep on a schedule ---------------

CSVS = ("operating_ranges", "hull", "envelope")


def _routes(share: str, dataset_id: str) -> list[str]:
    return [f"/s/{share}", f"/api/v1/analyses/{share}", f"/api/v1/datasets/{dataset_id}",
            f"/api/v1/datasets/{dataset_id}/report.html",
            *(f"/api/v1/datasets/{dataset_id}/{name}.csv" for name in CSVS)]


def _expire(services, analysis_id: str) -> None:
    """The analysis expires now (as time passing would), without anything else happening."""
    services.store.update_analysis(analysis_id, expires_at=time.time() - 1)


@pytest.fixture
def expiring(backend_settings, breast_cancer_csv):
    app = create_app(backend_settings)
    client = app.server.test_client()
    services = app.server.extensions["costdash"]
    body = client.post("/api/v1/analyses", data={
        "file": (io.BytesIO(breast_cancer_csv.read_bytes()), "bc.csv"),
        "expires_in_days": "1"}).get_json()
    yield app, client, services, body
    _dispose(app)


@pytest.mark.slow
def test_an_expired_analysis_answers_404_on_every_route_at_once(expiring):
    """Before: report.html and the CSVs of its data set answered 200 until someone saved
    another analysis (that is when the purge ran)."""
    _app, client, services, body = expiring
    share, dataset_id = body["url"].rsplit("/", 1)[1], body["dataset_id"]
    routes = _routes(share, dataset_id)
    assert [client.get(r).status_code for r in routes] == [200] * len(routes)
    services.views.full(dataset_id)  # cached: the cache must not keep it alive either

    _expire(services, body["id"])
    assert [client.get(r).status_code for r in routes] == [404] * len(routes)
    assert [client.head(r).status_code for r in routes] == [404] * len(routes)
    from dashboard.storage import DatasetNotFound

    with pytest.raises(DatasetNotFound):  # the pages and jobs read through this
        services.views.full(dataset_id)
    with pytest.raises(DatasetNotFound):
        services.store.get(dataset_id)
    # Nothing was purged yet: the owner may still renew it from the manage page.
    assert services.store.count()["analyses"] == 1
    renew = client.post(f"/manage/{body['manage_token']}",
                        data={"action": "expiry", "expires_in_days": "2"})
    assert renew.status_code == 303
    assert [client.get(r).status_code for r in routes] == [200] * len(routes)


def test_a_data_set_another_live_analysis_uses_stays_readable(expiring, breast_cancer_csv):
    _app, client, services, body = expiring
    other = client.post("/api/v1/analyses", data={
        "file": (io.BytesIO(breast_cancer_csv.read_bytes()), "bc.csv")}).get_json()
    assert other["dataset_id"] != body["dataset_id"]  # the same bytes, a handle each
    _expire(services, body["id"])
    share = body["url"].rsplit("/", 1)[1]
    assert client.get(f"/s/{share}").status_code == 404
    assert client.get(f"/api/v1/datasets/{body['dataset_id']}/hull.csv").status_code == 404
    assert client.get(f"/api/v1/datasets/{other['dataset_id']}/hull.csv").status_code == 200


@pytest.mark.slow
def test_uploading_the_file_of_an_expired_analysis_again_works(expiring, breast_cancer_csv):
    _app, client, services, body = expiring
    _expire(services, body["id"])
    again = client.post("/api/v1/analyses", data={
        "file": (io.BytesIO(breast_cancer_csv.read_bytes()), "bc.csv")})
    assert again.status_code == 201, again.get_json()
    new = again.get_json()
    assert new["dataset_id"] != body["dataset_id"]
    assert client.get(f"/api/v1/datasets/{new['dataset_id']}/report.html").status_code == 200
    assert client.get(new["url"].removeprefix("http://localhost")).status_code == 200
    assert client.get(body["url"].removeprefix("http://localhost")).status_code == 404
    assert services.store.count() == {"datasets": 1, "dataset_parts": 1, "analyses": 1,
                                      "handles": 1}
    plain = client.post("/api/v1/datasets", data={
        "file": (io.BytesIO(breast_cancer_csv.read_bytes()), "bc.csv")})
    assert plain.status_code == 200


def test_housekeeping_purges_expired_analyses_and_old_unshared_uploads(expiring,
                                                                        predictions_csv):
    app, client, services, body = expiring
    maintenance = app.server.extensions["costdash-maintenance"]
    unshared = client.post("/api/v1/datasets", data={
        "file": (io.BytesIO(predictions_csv.read_bytes()), "p.csv")}).get_json()
    assert services.store.count() == {"datasets": 2, "dataset_parts": 2, "analyses": 1,
                                      "handles": 2}
    _expire(services, body["id"])
    now = time.time()
    done = maintenance.run_once(now=now)
    assert done["expired"] == 1 and done["unshared"] == 0
    assert services.store.count() == {"datasets": 1, "dataset_parts": 1, "analyses": 0,
                                      "handles": 1}
    assert client.get(f"/api/v1/datasets/{unshared['id']}").status_code == 200
    # Past the retention (30 days by default), an upload nobody shared goes too.
    retention = services.settings.upload_retention_days * 86400
    assert maintenance.run_once(now=now + retention - 60)["unshared"] == 0
    assert maintenance.run_once(now=now + retention + 60)["unshared"] == 1
    assert services.store.count() == {"datasets": 0, "dataset_parts": 0, "analyses": 0,
                                      "handles": 0}
    assert client.get(f"/api/v1/datasets/{unshared['id']}").status_code == 404


def test_an_upload_kept_for_ever_when_retention_is_zero(tmp_path, predictions_csv):
    app = create_app(Settings.from_mapping({"data_dir": tmp_path / "d",
                                            "upload_retention_days": 0}))
    services = app.server.extensions["costdash"]
    services.store.put(predictions_csv, "p.csv")
    done = app.server.extensions["costdash-maintenance"].run_once(now=time.time() + 1e9)
    assert done["unshared"] == 0 and services.store.count()["datasets"] == 1
    _dispose(app)


# --- finding 10: the smaller ones ------------------------------------------------------------------

def _finished_job(_key, _progress_key, _args, _context):
    return None


def test_finished_job_processes_are_reaped(tmp_path):
    """Dash's DiskcacheManager never waits for the job processes it starts: a finished one
    stayed a zombie until the same web process started another job. Each poll of a job and
    the housekeeping collect them now."""
    import psutil

    from dashboard.jobs import background_manager, reap_jobs

    manager = background_manager(Settings.from_mapping({"data_dir": tmp_path / "d"}))
    pids = [manager.call_job_fn(f"k{i}", _finished_job, [], {}) for i in range(3)]

    def zombie(pid: int) -> bool:
        try:
            return psutil.Process(pid).status() == psutil.STATUS_ZOMBIE
        except psutil.NoSuchProcess:
            return False

    deadline = time.monotonic() + 20
    while not all(zombie(p) for p in pids) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert all(zombie(p) for p in pids)  # what the finding saw
    assert manager.job_running(pids[0]) is False  # a poll of one job reaps them all
    assert reap_jobs() == 0
    assert not any(psutil.pid_exists(p) for p in pids)


@pytest.mark.slow
def test_links_are_built_on_the_public_url_not_the_host_header(tmp_path, breast_cancer_csv):
    public = "https://costdash.example.org"
    app = create_app(Settings.from_mapping({"data_dir": tmp_path / "d",
                                            "public_url": public + "/"}))
    client = app.server.test_client()
    evil = {"Host": "evil.example:666", "X-Forwarded-Host": "evil.example"}
    body = client.post("/api/v1/analyses", headers=evil, data={
        "file": (io.BytesIO(breast_cancer_csv.read_bytes()), "bc.csv")}).get_json()
    assert body["url"].startswith(public + "/s/")
    assert body["manage_url"] == f"{public}/manage/{body['manage_token']}"
    token = body["url"].rsplit("/", 1)[1]
    got = client.get(f"/api/v1/analyses/{token}", headers=evil).get_json()
    assert got["analysis"]["url"] == body["url"]
    manage = client.get(f"/manage/{body['manage_token']}", headers=evil).get_data(as_text=True)
    assert f"{public}/s/{token}" in manage and "evil.example" not in manage
    report = client.get(f"/api/v1/datasets/{body['dataset_id']}/report.html",
                        headers=evil).get_data(as_text=True)
    assert "evil.example" not in report
    openapi = client.get("/api/v1/openapi.json", headers=evil).get_data(as_text=True)
    assert public in openapi and "evil.example" not in openapi
    _dispose(app)
    with pytest.raises(ValueError, match="COSTDASH_PUBLIC_URL"):
        Settings.from_mapping({"public_url": "costdash.example.org/app"})


def test_without_a_public_url_links_are_relative_unless_the_host_is_this_machine(
        client, breast_cancer_csv):
    """Issue 22, finding 11: without COSTDASH_PUBLIC_URL a link built on the Host header goes
    wherever the client says; links are relative then, except on a loopback host."""
    def links(host: str) -> dict:
        return client.post("/api/v1/analyses", headers={"Host": host}, data={
            "file": (io.BytesIO(breast_cancer_csv.read_bytes()), "bc.csv")}).get_json()

    body = links("intranet:8050")
    assert body["url"] == f"/s/{body['url'].rsplit('/', 1)[1]}"
    assert body["manage_url"] == f"/manage/{body['manage_token']}"
    for host in ("127.0.0.1:8050", "localhost", "[::1]:8050"):
        assert links(host)["url"].startswith(f"http://{host}/s/")


@pytest.mark.parametrize("path", ["/s/" + "A" * 32, "/s/nonsense", "/manage/" + "A" * 32])
def test_head_of_a_dead_link_is_404(client, path):
    """Before: the 404 guard of /s/ looked at GET only, so HEAD reached Dash (200)."""
    assert client.get(path).status_code == 404
    assert client.head(path).status_code == 404


def test_head_of_a_live_manage_link_is_200(client, breast_cancer_csv):
    body = client.post("/api/v1/analyses", data={
        "file": (io.BytesIO(breast_cancer_csv.read_bytes()), "bc.csv")}).get_json()
    assert client.head(f"/manage/{body['manage_token']}").status_code == 200  # was 400
    assert client.head(body["url"].removeprefix("http://localhost")).status_code == 200


@pytest.mark.parametrize("path", [
    "/_dash-component-suites/dash/..%2f..%2fapp.py",
    "/_dash-component-suites/dash/../../app.py",
    "/_dash-component-suites/dash/%2e%2e/%2e%2e/dashboard/config.py",
    "/_dash-component-suites/dash/dcc/not-a-script.js",
    "/_dash-component-suites/not_a_package/x.js",
])
def test_dash_path_traversal_is_404_not_500(client, path, caplog):
    reply = client.get(path)
    assert reply.status_code == 404
    assert b"import" not in reply.data and b"Traceback" not in reply.data
    assert "Traceback" not in caplog.text
    assert client.get("/_dash-component-suites/dash/dcc/dash_core_components.js"
                      ).status_code == 200


# A full disk: reported as such (507), not as "the database is not reachable" (503).

@contextmanager
def small_disk(path, size: str, owner: str | None = None) -> Iterator[None]:
    """A tmpfs of ``size`` mounted at ``path`` (skips the test where mounting is not allowed)."""
    import shutil
    import subprocess

    path.mkdir(parents=True, exist_ok=True)
    mounted = subprocess.run(["mount", "-t", "tmpfs", "-o", f"size={size}", "tmpfs", str(path)],
                             capture_output=True, check=False)
    if mounted.returncode != 0:
        pytest.skip(f"cannot mount a small tmpfs here: {mounted.stderr.decode().strip()}")
    try:
        if owner:
            shutil.chown(path, owner, owner)
        yield
    finally:
        subprocess.run(["umount", "-l", str(path)], check=False)


def _fill(directory, leave: int = 0) -> None:
    """Fill the file system of ``directory`` up to ``leave`` free bytes."""
    import os

    free = os.statvfs(directory).f_bavail * os.statvfs(directory).f_frsize
    with open(directory / "filler", "wb") as f:
        try:
            f.write(b"\0" * max(0, free - leave))
        except OSError:
            pass


def _big_csv(rows: int = 200_000) -> bytes:
    import numpy as np

    rng = np.random.default_rng(1)
    lines = [f"{int(y)},{s:.17g}" for y, s in zip(rng.random(rows) < 0.3, rng.random(rows))]
    return ("y_true,m\n" + "\n".join(lines) + "\n").encode()


def test_a_full_disk_under_the_upload_is_reported_as_full(tmp_path, breast_cancer_csv):
    data_dir = tmp_path / "d"
    app = create_app(Settings.from_mapping({"data_dir": data_dir}))
    client = app.server.test_client()
    try:
        with small_disk(data_dir / "tmp", "64k"):
            _fill(data_dir / "tmp")
            reply = client.post("/api/v1/analyses", data={
                "file": (io.BytesIO(breast_cancer_csv.read_bytes()), "bc.csv")})
            assert reply.status_code == 507, reply.get_data(as_text=True)
            assert "disk is full" in reply.get_json()["error"]
            assert "not reachable" not in reply.get_json()["error"]
            assert sorted(p.name for p in (data_dir / "tmp").iterdir()) == ["filler"]
        services = app.server.extensions["costdash"]
        assert services.store.count() == {"datasets": 0, "dataset_parts": 0, "analyses": 0,
                                          "handles": 0}
    finally:
        _dispose(app)


def test_a_full_sqlite_database_is_reported_as_full(tmp_path, breast_cancer_csv):
    """SQLite's own "database or disk is full" (SQLITE_FULL), here from a page limit."""
    import sqlalchemy as sa

    app = create_app(Settings.from_mapping({"data_dir": tmp_path / "d"}))
    services = app.server.extensions["costdash"]
    with services.store.engine.connect() as conn:
        pages = conn.execute(sa.text("PRAGMA page_count")).scalar()
    services.store.engine.dispose()
    sa.event.listen(services.store.engine, "connect", lambda c, _r: c.execute(
        f"PRAGMA max_page_count={pages + 2}"))
    client = app.server.test_client()
    try:
        reply = client.post("/api/v1/analyses", data={
            "file": (io.BytesIO(_big_csv(20_000)), "big.csv")})
        assert reply.status_code == 507, reply.get_data(as_text=True)
        assert "disk is full" in reply.get_json()["error"]
        assert services.store.count() == {"datasets": 0, "dataset_parts": 0, "analyses": 0,
                                          "handles": 0}
        assert client.get("/healthz").status_code == 200  # reads still work
    finally:
        _dispose(app)


@pytest.mark.slow
def test_a_full_postgresql_disk_is_reported_as_full(tmp_path):
    """PostgreSQL's ``disk_full`` (SQLSTATE 53100), for real: the app's tables live in a
    tablespace on a 1 MB tmpfs, and a 1.6 MB data set does not fit."""
    import os
    import tempfile
    from pathlib import Path

    import psycopg

    from tests.support.services import POSTGRES_ADMIN_URL, fresh_postgres_database

    base = Path(tempfile.mkdtemp(prefix="costdash-pg-"))  # the server's user must reach it
    os.chmod(base, 0o755)
    disk = base / "disk"
    admin_dsn = POSTGRES_ADMIN_URL
    space = f"costdash_small_{secrets_hex()}"
    with small_disk(disk, "1m", owner="postgres"):
        with psycopg.connect(admin_dsn, autocommit=True) as admin:
            admin.execute(f"CREATE TABLESPACE {space} LOCATION '{disk}'")
        try:
            with fresh_postgres_database() as url:
                name = url.rsplit("/", 1)[1]
                with psycopg.connect(admin_dsn, autocommit=True) as admin:
                    admin.execute(f'ALTER DATABASE "{name}" SET default_tablespace = {space}')
                app = create_app(Settings.from_mapping({"data_dir": tmp_path / "d",
                                                        "database_url": url}))
                client = app.server.test_client()
                try:
                    reply = client.post("/api/v1/analyses", data={
                        "file": (io.BytesIO(_big_csv()), "big.csv")})
                    assert reply.status_code == 507, reply.get_data(as_text=True)
                    assert "disk is full" in reply.get_json()["error"]
                    page = client.post("/manage/" + "A" * 32, data={"action": "delete"})
                    assert page.status_code == 404  # reads still work
                finally:
                    _dispose(app)
        finally:
            with psycopg.connect(admin_dsn, autocommit=True) as admin:
                admin.execute(f"DROP TABLESPACE IF EXISTS {space}")
    disk.rmdir()
    base.rmdir()


def secrets_hex() -> str:
    import secrets

    return secrets.token_hex(4)


# --- finding 4 (part): the result cache is bounded on both back ends ----------------------------

def test_the_file_cache_is_bounded_in_bytes(tmp_path):
    """flask-caching bounds the file cache by entries only (2,000 x a 17 MB band = 33 GB);
    the bytes are bounded too, the oldest-written entries going first."""
    app = create_app(Settings.from_mapping({"data_dir": tmp_path / "d",
                                            "cache_max_bytes": 100_000}))
    cache = app.server.extensions["costdash"].views.cache
    for i in range(40):
        assert cache.set(f"band-{i}", b"\0" * 10_000)
        time.sleep(0.002)  # distinct write times
    directory = tmp_path / "d" / "cache"
    total = sum(p.stat().st_size for p in directory.iterdir() if p.is_file())
    assert total <= 100_000 + 10_100
    assert cache.get("band-39") is not None and cache.get("band-0") is None
    _dispose(app)


def test_an_unbounded_redis_is_reported(tmp_path, redis_url, caplog):
    """Redis's own maxmemory bounds a Redis cache; a Redis that has none (this machine's, as
    installed) gets a warning naming the setting (docs/deployment.md)."""
    app = create_app(Settings.from_mapping({"data_dir": tmp_path / "d", "cache_url": redis_url}))
    backend = app.server.extensions["costdash"].views.cache.cache
    maxmemory, policy = backend.memory_policy()
    assert backend.warn_if_unbounded() == (maxmemory == 0 or policy == "noeviction")
    if maxmemory == 0 or policy == "noeviction":
        assert "maxmemory-policy volatile-lru" in caplog.text
    _dispose(app)
