"""Issue 22, finding 4, on the deployed web role: a 120 kB JSON-lines upload of 20,000 nested
objects made pyarrow's JSON reader segfault, and gunicorn lost the worker and every request
it was serving. Now the upload is a clear 400 naming the file and the line, through both upload
routes and through nginx, and every worker lives (same pids, no signal in the log) and answers.
"""

from __future__ import annotations

import secrets
import shutil
import time

import pytest
import requests

from tests.support.processes import deploy_env, running, start_proxy, start_web

pytestmark = pytest.mark.slow

NESTED = ('{"a":' * 20_000 + "1" + "}" * 20_000 + "\n").encode()
WIDE = "".join(f'{{"y": {i % 2}, "k{i}": 0.5}}\n' for i in range(20_000)).encode()
"""20,000 records that each name a field of their own: a table of 400 million empty cells."""


def test_hostile_json_uploads_are_400_and_every_worker_lives(tmp_path):
    if shutil.which("nginx") is None:
        pytest.fail("nginx is not installed: scripts/test.sh installs Debian's nginx")
    env = deploy_env(tmp_path / "data", secret_key=secrets.token_hex(32))
    with running(lambda: start_web(env, tmp_path / "web.log", workers=2)) as (web,):
        with running(lambda: start_proxy(web, tmp_path / "nginx")) as (proxy,):
            workers = sorted(p.pid for p in web.children())
            replies = []
            for url in (web.url, proxy.url):
                for route in ("/api/v1/datasets", "/api/v1/analyses"):
                    for name, data in (("nested.jsonl", NESTED), ("wide.jsonl", WIDE)):
                        replies.append((name, requests.post(
                            url + route, files={"file": (name, data)}, timeout=120)))
            time.sleep(0.5)
            alive = sorted(p.pid for p in web.children())
            health = [requests.get(web.url + "/healthz", timeout=10).status_code
                      for _ in range(8)]
            log = web.log_text()
    for name, reply in replies:
        assert reply.status_code == 400, (name, reply.status_code, reply.text[:300])
        message = reply.json()["error"]
        assert message.startswith(f"{name}: ") and len(message) < 400, message
    nested = [r.json()["error"] for n, r in replies if n == "nested.jsonl"]
    assert all("line 1 nests objects or arrays more than 8 deep" in m for m in nested)
    wide = [r.json()["error"] for n, r in replies if n == "wide.jsonl"]
    assert all("more than 20,000 different fields" in m for m in wide)
    assert alive == workers and len(workers) == 2
    assert health == [200] * 8
    for sign in ("SIGSEGV", "was sent", "Worker exiting", "Traceback", "Booting worker"):
        lines = [ln for ln in log.splitlines() if sign in ln]
        # The two workers' boot lines are the only ones allowed.
        assert len(lines) == (2 if sign == "Booting worker" else 0), lines
