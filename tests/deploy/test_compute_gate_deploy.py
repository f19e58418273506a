"""Issue 22, finding 5, on the deployed web role (gunicorn x 4 gthread workers, PostgreSQL,
Redis): 16 concurrent Multiclass runs (60 classifiers, B = 100,000) computed in the web
threads, held every thread, and ``/healthz`` timed out for 2.4 minutes. Now Run is a background
job (its POST answers at once with a job handle, the page polls), and inside the job the
compute gate lets at most ``COSTDASH_MAX_HEAVY_JOBS`` (4) run at once, each in a child process
stopped at ``COSTDASH_HEAVY_TIMEOUT_SECONDS``; the others are refused at once, and ``/healthz``
stays under a second throughout.
"""

from __future__ import annotations

import base64
import secrets
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import numpy as np
import psutil
import pytest
import requests

from dashboard.factory import create_app
from tests.support.dashjobs import callback_body, multiclass_run
from tests.support.processes import deploy_env, running, start_web
from tests.support.services import fresh_postgres_database, fresh_redis_url

pytestmark = [pytest.mark.slow, pytest.mark.serial]

RUNS = 16
CLASSIFIERS = 60
REPLICATES = 100_000
TIMEOUT = 15
"""Seconds a run may compute: each run here needs ~21 s of CPU alone, so both runs let
through are stopped; the probes of /healthz cover that whole time (~100 probes)."""


def label_file() -> bytes:
    """600 examples, 3 classes, 60 classifiers (one run: about 21 s of CPU alone)."""
    rng = np.random.default_rng(1)
    y = rng.choice(["a", "b", "c"], 600)
    cols = [np.where(rng.random(600) < 0.7, y, rng.choice(["a", "b", "c"], 600))
            for _ in range(CLASSIFIERS)]
    lines = ["y_true," + ",".join(f"m{i}" for i in range(CLASSIFIERS))]
    lines += [",".join([y[j], *(c[j] for c in cols)]) for j in range(600)]
    return ("\n".join(lines) + "\n").encode()


def alive(process: psutil.Process) -> bool:
    """Whether a process still runs (not ended, not a zombie waiting to be reaped)."""
    try:
        return process.status() != psutil.STATUS_ZOMBIE
    except psutil.NoSuchProcess:
        return False


def test_sixteen_multiclass_runs_leave_healthz_fast(tmp_path):
    local = create_app({"data_dir": tmp_path / "local"})  # the callbacks' request shapes
    raw = label_file()
    with fresh_postgres_database() as database, fresh_redis_url() as cache:
        env = deploy_env(tmp_path / "data", secret_key=secrets.token_hex(32),
                         database_url=database, cache_url=cache,
                         COSTDASH_TRUSTED_PROXIES="1",  # 16 clients, as behind nginx
                         COSTDASH_HEAVY_TIMEOUT_SECONDS=str(TIMEOUT))
        with running(lambda: start_web(env, tmp_path / "web.log", workers=4)) as (web,):
            upload = requests.post(web.url + "/_dash-update-component", json=callback_body(
                local, "multiclass-file-info", {
                    "multiclass-upload.contents": "data:text/csv;base64,"
                                                  + base64.b64encode(raw).decode(),
                    "multiclass-upload.filename": "sixty.csv"}, "multiclass-upload.contents"),
                timeout=60)
            assert upload.status_code == 200, upload.text[:500]
            loaded = upload.json()["response"]
            assert loaded["multiclass-error"]["children"] == ""
            ref = loaded["multiclass-ref"]["data"]
            rows = loaded["multiclass-costs"]["rowData"]

            def run(i: int) -> tuple[float, str]:
                session = requests.Session()
                session.headers["X-Forwarded-For"] = f"198.51.100.{i + 1}"

                def post(path: str, payload: dict[str, Any]) -> tuple[int, Any]:
                    reply = session.post(web.url + path, json=payload, timeout=60)
                    return reply.status_code, (reply.json() if reply.content else None)

                # Run's request takes the gate's slots (or refuses: no job); the job it
                # starts is followed as the page does (polls every 0.5 s).
                seconds, text, _ = multiclass_run(post, local, ref, rows,
                                                  replicates=REPLICATES, seed=i,
                                                  deadline=3 * TIMEOUT, poll=0.5)
                return seconds, text

            latencies: list[float] = []
            stop = threading.Event()

            def probe() -> None:
                while not stop.is_set():
                    started = time.monotonic()
                    try:
                        ok = requests.get(web.url + "/healthz", timeout=30).status_code == 200
                    except requests.RequestException:
                        ok = False
                    latencies.append(time.monotonic() - started if ok else float("inf"))
                    stop.wait(0.1)

            prober = threading.Thread(target=probe)
            prober.start()
            try:
                with ThreadPoolExecutor(RUNS) as pool:
                    results = list(pool.map(run, range(RUNS)))
            finally:
                stop.set()
                prober.join()
            # Every run's job process and the gate's child under it: ended (a finished job
            # process a worker has not reaped yet is a zombie, which computes nothing).
            leftovers = [c for w in web.children()
                         for c in psutil.Process(w.pid).children(recursive=True) if alive(c)]
            log = web.log_text()
    refused = [(t, m) for t, m in results if "not started" in m]
    ran = [(t, m) for t, m in results if "not started" not in m]
    print(f"\n16 runs: {len(ran)} ran ({[round(t, 1) for t, _ in ran]} s), {len(refused)} "
          f"refused (at most {max(t for t, _ in refused):.2f} s); /healthz: "
          f"{len(latencies)} probes, max {max(latencies) * 1000:.0f} ms, median "
          f"{np.median(latencies) * 1000:.0f} ms")
    assert 1 <= len(ran) <= 4 and len(refused) == RUNS - len(ran)
    assert all(m == "" or f"took longer than {TIMEOUT} s" in m for _, m in ran), ran
    assert all(t < 2 * TIMEOUT for t, _ in ran)  # stopped, not held for ever
    assert all(t < 5 for t, _ in refused), refused  # refused at once, holding no thread
    assert len(latencies) > 50 and max(latencies) < 1.0, sorted(latencies)[-5:]
    assert leftovers == []  # every run's child process is gone
    assert "Traceback" not in log and "WORKER TIMEOUT" not in log
