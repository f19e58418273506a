"""Multiclass Run as a Celery job (issue 22): the scaled roles (two web "hosts", a Celery
worker, PostgreSQL, Redis). Run's request on one web role takes the gate's slots, the worker's
pool process takes them over and computes in the gate's child, and the other web role follows
the job; a run past the limit is stopped, and Cancel frees the client at once. No browser: the
requests the page makes (tests/support/dashjobs.py)."""

from __future__ import annotations

import base64
import time
from typing import Any

import numpy as np
import psutil
import pytest
import requests

from dashboard.factory import create_app
from tests.support.dashjobs import callback_body, cancel_job, multiclass_run

pytestmark = [pytest.mark.slow]

CLIENT = "198.51.100.9"


def _labels(classifiers: int, rows: int = 600) -> bytes:
    rng = np.random.default_rng(2)
    y = rng.choice(list("abc"), rows)
    cols = [np.where(rng.random(rows) < 0.7, y, rng.choice(list("abc"), rows))
            for _ in range(classifiers)]
    return ("y_true," + ",".join(f"m{i}" for i in range(classifiers)) + "\n" + "".join(
        ",".join([y[j], *(c[j] for c in cols)]) + "\n" for j in range(rows))).encode()


def _poster(url: str):
    session = requests.Session()

    def post(path: str, payload: dict[str, Any]) -> tuple[int, Any]:
        reply = session.post(url + path, json=payload, timeout=60)
        return reply.status_code, (reply.json() if reply.content else None)
    return post


def _computing(process: psutil.Process) -> bool:
    """Whether a process runs and uses more than half a core over 0.2 s."""
    try:
        return (process.status() != psutil.STATUS_ZOMBIE
                and process.cpu_percent(interval=0.2) > 50)
    except psutil.NoSuchProcess:
        return False


def test_a_celery_worker_runs_multiclass_and_cancel_frees_the_client(scaled, tmp_path):
    local = create_app({"data_dir": tmp_path / "local"})  # the callbacks' request shapes
    post = _poster(scaled.url)
    status, reply = post("/_dash-update-component", callback_body(local, "multiclass-file-info", {
        "multiclass-upload.contents": "data:text/csv;base64,"
                                      + base64.b64encode(_labels(12)).decode(),
        "multiclass-upload.filename": "twelve.csv"}, "multiclass-upload.contents"))
    assert status == 200, reply
    out = reply["response"]
    assert out["multiclass-error"]["children"] == ""
    ref, rows = out["multiclass-ref"]["data"], out["multiclass-costs"]["rowData"]

    # A run: Run's request on the first web role, the polls on the second.
    polls = _poster(scaled.web2.url)

    def split(path: str, payload: dict[str, Any]) -> tuple[int, Any]:
        return (polls if "cacheKey=" in path else post)(path, payload)

    seconds, alert, job = multiclass_run(split, local, ref, rows, replicates=2000, deadline=90)
    assert alert == "" and job is not None and job.response is not None, scaled.logs()
    assert "m0" in str(job.response["multiclass-bcost"]["children"])
    worker_log = scaled.worker.log_text()
    assert "succeeded" in worker_log and "Traceback" not in worker_log, scaled.logs()

    # A long run (12 classifiers at B = 100,000), cancelled after its first progress: the
    # worker's pool process and the gate's child under it stop computing, and the client may
    # run again at once.
    def cancel_after_progress(run) -> bool:
        if not run.progress:
            return False
        assert cancel_job(post, local, "multiclass-cancel", run) == 200
        return True

    _, alert, job = multiclass_run(post, local, ref, rows, replicates=100_000, seed=5,
                                   deadline=90, on_poll=cancel_after_progress)
    assert alert == "" and job.response is None and job.progress, scaled.logs()
    worker = psutil.Process(scaled.worker.pid)
    deadline = time.monotonic() + 20
    while time.monotonic() < deadline:
        busy = [p for p in worker.children(recursive=True) if _computing(p)]
        if not busy:
            break
    assert busy == [], busy
    _, alert, again = multiclass_run(post, local, ref, rows, replicates=200, seed=6,
                                     deadline=90)
    assert alert == "" and again is not None and again.response is not None, scaled.logs()
    assert again.response["multiclass-error"]["children"] == ""
    print(f"\ncelery multiclass: first run {seconds:.1f} s from the click")
