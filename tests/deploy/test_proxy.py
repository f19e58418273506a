"""The scaled deployment's reverse proxy (deploy/nginx/nginx.conf, Debian's nginx) in front of
gunicorn: slow clients no longer stall the web role (issue 11, finding 2).

gunicorn's gthread workers hand a connection to a thread as soon as its first bytes arrive and
the thread waits for the rest with no read timeout, so a few dozen clients that send half a
request and go quiet take every thread. The first test shows that on bare gunicorn (so the
second one means something); the second puts nginx in front and measures /healthz under the
same 64 stalled clients.
"""

from __future__ import annotations

import secrets
import shutil
import socket
import time
from contextlib import ExitStack

import pytest
import requests

from tests.support.processes import PROXY_CONFIG, deploy_env, running, start_proxy, start_web

pytestmark = [pytest.mark.slow, pytest.mark.serial]

SLOW_CLIENTS = 64


def stall(url: str, stack: ExitStack) -> None:
    """Open SLOW_CLIENTS connections that each send part of a request and then nothing."""
    host, port = url.removeprefix("http://").split(":")
    for i in range(SLOW_CLIENTS):
        sock = stack.enter_context(socket.create_connection((host, int(port)), timeout=5))
        # Half the headers: the thread that takes the connection waits for the rest.
        sock.sendall(b"GET /healthz HTTP/1.1\r\nHost: costdash\r\n")
    time.sleep(0.5)  # every connection reached the server and holds whatever it took


def healthz_times(url: str, n: int, timeout: float) -> list[float | None]:
    """Seconds per sequential /healthz (None for a timeout), each on a new connection."""
    times: list[float | None] = []
    for _ in range(n):
        start = time.perf_counter()
        try:
            r = requests.get(url + "/healthz", timeout=timeout, headers={"Connection": "close"})
            r.raise_for_status()
            times.append(time.perf_counter() - start)
        except requests.Timeout:
            times.append(None)
    return times


@pytest.fixture(scope="module")
def web(tmp_path_factory):
    if shutil.which("nginx") is None:
        pytest.fail("nginx is not installed: scripts/test.sh installs Debian's nginx")
    tmp = tmp_path_factory.mktemp("proxy")
    env = deploy_env(tmp / "data", secret_key=secrets.token_hex(32))
    # One worker: with two, the kernel hands each connection to whichever worker accepts first,
    # and now and then one worker took (nearly) all 64 stalled clients while the other answered
    # every /healthz (seen once in CI: 0 of 10 timed out). One worker's 4 threads are always
    # the ones the stalled clients hold, as they are a deployment's when 64 x workers clients stall.
    with running(lambda: start_web(env, tmp / "web.log", workers=1)) as (role,):
        yield role


def test_slow_clients_stall_bare_gunicorn(web):
    with ExitStack() as stack:
        stall(web.url, stack)
        times = healthz_times(web.url, 10, timeout=0.5)
    # Most time out (seen: 7 to 9 of 10; a thread freed now and then lets one through), so the
    # p95 is far above the proxy's 100 ms target below.
    assert times.count(None) >= 2, times
    # Once they go, it answers again.
    assert None not in healthz_times(web.url, 3, timeout=5.0)


def test_behind_the_proxy_slow_clients_do_not_raise_healthz_p95_above_100_ms(web, tmp_path):
    with running(lambda: start_proxy(web, tmp_path / "nginx")) as (proxy,):
        healthz_times(proxy.url, 5, timeout=5.0)  # warm the upstream connections
        with ExitStack() as stack:
            stall(proxy.url, stack)
            times = healthz_times(proxy.url, 60, timeout=2.0)
        log = proxy.log_text()
    assert None not in times, times
    p95 = sorted(times)[int(0.95 * len(times)) - 1]
    print(f"/healthz behind nginx with {SLOW_CLIENTS} stalled clients: "
          f"median {sorted(times)[len(times) // 2] * 1000:.1f} ms, p95 {p95 * 1000:.1f} ms")
    assert p95 <= 0.100, f"p95 {p95 * 1000:.0f} ms; {sorted(times)[-5:]}"
    assert '"GET /healthz"' in log


def test_the_proxy_log_redacts_link_tokens(web, tmp_path):
    token = secrets.token_urlsafe(24)
    with running(lambda: start_proxy(web, tmp_path / "nginx")) as (proxy,):
        requests.get(f"{proxy.url}/s/{token}?p_pos=0.2", timeout=10)
        requests.post(f"{proxy.url}/manage/{token}", timeout=10)
        # nginx writes its access line after the response: wait for it, at most 5 s.
        deadline = time.monotonic() + 5
        while '"POST /manage/' not in (log := proxy.log_text()) and \
                time.monotonic() < deadline:
            time.sleep(0.02)
    assert token not in log
    assert '"GET /s/<token>?p_pos=0.2"' in log and '"POST /manage/<token>"' in log


def test_the_tested_file_is_the_one_the_image_uses():
    dockerfile = (PROXY_CONFIG.parent / "Dockerfile").read_text()
    assert "COPY nginx.conf /etc/nginx/costdash.conf" in dockerfile
