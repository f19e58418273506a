"""Issue 22, finding 7, on the deployed web role behind nginx (gunicorn x 4 gthread workers,
PostgreSQL, Redis): ``report.html`` cost seconds of CPU per request, uncached and unlimited, and
16 at once held ``/healthz`` for 25 s. Through the compute gate an uncached report or threshold
choice (``choice.json``) takes a slot (at most ``COSTDASH_MAX_HEAVY_JOBS`` = 4 at once, one per
client, two per data set) and computes in a child process; the others are refused at once with
Retry-After; ``/healthz`` stays under a second throughout. 16 clients (their own source
addresses, 127.0.0.2-17, so nginx's X-Forwarded-For names each) each ask about a data set of
their own, so that only the site's cap and the per-process slot stand between them.
"""

from __future__ import annotations

import http.client
import io
import json
import secrets
import threading
import time
import uuid
from concurrent.futures import ThreadPoolExecutor

import numpy as np
import psutil
import pytest
import requests

from tests.support.processes import deploy_env, running, start_proxy, start_web
from tests.support.services import fresh_postgres_database, fresh_redis_url

pytestmark = [pytest.mark.slow, pytest.mark.serial]

CLIENTS = 16
ROWS = 20_000
CLASSIFIERS = 10
TIMEOUT = 60


def predictions(seed: int) -> bytes:
    """``ROWS`` cases (10 % positive), ``CLASSIFIERS`` probability scores, every one distinct."""
    rng = np.random.default_rng(seed)
    y = rng.random(ROWS) < 0.1
    cols = [1 / (1 + np.exp(-(rng.normal(size=ROWS) + (0.5 + 0.2 * k) * y)))
            for k in range(CLASSIFIERS)]
    out = io.StringIO()
    out.write("y_true," + ",".join(f"m{k}" for k in range(CLASSIFIERS)) + "\n")
    np.savetxt(out, np.column_stack([y.astype(float), *cols]), delimiter=",",
               fmt=["%d"] + ["%.9f"] * CLASSIFIERS)
    return out.getvalue().encode()


def request(url: str, method: str, path: str, client: int, *, body: bytes | None = None,
            headers: dict[str, str] | None = None,
            timeout: float = 300) -> tuple[int, dict[str, str], bytes]:
    """One request from source address 127.0.0.(client + 2): nginx sees its own client."""
    host, port = url.removeprefix("http://").split(":")
    conn = http.client.HTTPConnection(host, int(port), timeout=timeout,
                                      source_address=(f"127.0.0.{client + 2}", 0))
    try:
        conn.request(method, path, body=body, headers=headers or {})
        reply = conn.getresponse()
        return reply.status, dict(reply.getheaders()), reply.read()
    finally:
        conn.close()


def upload(url: str, client: int) -> str:
    boundary = uuid.uuid4().hex
    body = (f"--{boundary}\r\nContent-Disposition: form-data; name=\"file\"; "
            f"filename=\"c{client}.csv\"\r\nContent-Type: text/csv\r\n\r\n").encode() \
        + predictions(client) + f"\r\n--{boundary}--\r\n".encode()
    status, _, reply = request(url, "POST", "/api/v1/datasets", client, body=body, headers={
        "Content-Type": f"multipart/form-data; boundary={boundary}"})
    assert status == 200, reply[:300]
    return json.loads(reply)["id"]


MIN_PROBES = 10
"""/healthz probes a storm takes at least (one every 0.1 s while it lasts, then until this)."""


def storm(url: str, paths: list[str]) -> tuple[list[tuple[float, int, dict, bytes]],
                                               list[float]]:
    """Every path at once, path i from client i, while /healthz is probed every 0.1 s."""
    latencies: list[float] = []
    stop = threading.Event()

    def probe() -> None:
        while not stop.is_set():
            started = time.monotonic()
            try:
                ok = requests.get(url + "/healthz", timeout=30).status_code == 200
            except requests.RequestException:
                ok = False
            latencies.append(time.monotonic() - started if ok else float("inf"))
            stop.wait(0.1)

    def one(i: int) -> tuple[float, int, dict, bytes]:
        started = time.monotonic()
        status, headers, body = request(url, "GET", paths[i], i)
        return time.monotonic() - started, status, headers, body

    prober = threading.Thread(target=probe)
    prober.start()
    try:
        with ThreadPoolExecutor(len(paths)) as pool:
            results = list(pool.map(one, range(len(paths))))
    finally:
        # A storm the gate refuses at once can be over within a second: probe on until there
        # are enough probes to judge by (later ones can only raise the maximum checked).
        deadline = time.monotonic() + 30
        while len(latencies) < MIN_PROBES and prober.is_alive() and time.monotonic() < deadline:
            time.sleep(0.05)
        stop.set()
        prober.join()
    return results, latencies


def summary(what: str, results: list, latencies: list[float]) -> str:
    ran = [r for r in results if r[1] == 200]
    refused = [r for r in results if r[1] != 200]
    return (f"{what}: {len(ran)} computed ({sorted(round(r[0], 1) for r in ran)} s), "
            f"{len(refused)} refused ({sorted({r[1] for r in refused})}, at most "
            f"{max((r[0] for r in refused), default=0):.2f} s); /healthz: {len(latencies)} "
            f"probes, max {max(latencies) * 1000:.0f} ms, median "
            f"{np.median(latencies) * 1000:.0f} ms")


def check(results: list, latencies: list[float]) -> None:
    ran = [r for r in results if r[1] == 200]
    refused = [r for r in results if r[1] != 200]
    assert 1 <= len(ran) <= 4 and len(ran) + len(refused) == CLIENTS
    for took, status, headers, body in refused:
        assert status in (429, 503), (status, body[:300])
        assert b"not started" in body and int(headers["Retry-After"]) > 0
        assert took < 5  # refused at once, holding no thread
    assert all(r[0] < TIMEOUT + 10 for r in ran)
    assert len(latencies) > 5 and max(latencies) < 1.0, sorted(latencies)[-5:]


def test_sixteen_reports_and_choices_leave_healthz_fast(tmp_path):
    with fresh_postgres_database() as database, fresh_redis_url() as cache:
        env = deploy_env(tmp_path / "data", secret_key=secrets.token_hex(32),
                         database_url=database, cache_url=cache,
                         COSTDASH_TRUSTED_PROXIES="1",  # nginx's X-Forwarded-For
                         COSTDASH_HEAVY_TIMEOUT_SECONDS=str(TIMEOUT))
        with running(lambda: start_web(env, tmp_path / "web.log", workers=4)) as (web,):
            with running(lambda: start_proxy(web, tmp_path / "nginx")) as (proxy,):
                ids = [upload(proxy.url, i) for i in range(CLIENTS)]
                reports, report_probes = storm(proxy.url, [
                    f"/api/v1/datasets/{d}/report.html?p_pos=0.1&cost_fn=5" for d in ids])
                choices, choice_probes = storm(proxy.url, [
                    f"/api/v1/datasets/{d}/choice.json?p_pos=0.2&cost_fn=4&sens_p=0.1,0.3"
                    for d in ids])
                # What was computed is cached: asked again, the same bytes.
                done = [i for i, r in enumerate(reports) if r[1] == 200]
                again = [request(proxy.url, "GET", f"/api/v1/datasets/{ids[i]}/report.html"
                                 "?p_pos=0.1&cost_fn=5", i) for i in done]
                leftovers = [c for w in web.children()
                             for c in psutil.Process(w.pid).children()]
            log = web.log_text()
    print(f"\n{summary('16 uncached report.html', reports, report_probes)}"
          f"\n{summary('16 uncached choice.json', choices, choice_probes)}")
    check(reports, report_probes)
    check(choices, choice_probes)
    assert [a[2] for a in again] == [reports[i][3] for i in done]
    assert all(b"<html" in r[3][:2000].lower() for r in reports if r[1] == 200)
    assert leftovers == []  # every computation's child process is gone
    assert "Traceback" not in log and "WORKER TIMEOUT" not in log
