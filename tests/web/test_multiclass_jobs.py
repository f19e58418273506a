"""Issue 22: Multiclass Run as a background job (progress, Cancel) behind the compute gate,
band jobs counted per client, and the demo's handle kept through the upload retention sweep.
Over HTTP with Flask's test client, the app's own job manager (a process per job), no
browser."""

from __future__ import annotations

import base64
import time

import numpy as np
import pytest
import sqlalchemy as sa

from dashboard.factory import create_app
from dashboard.gate import ComputeRefused, gate_for
from dashboard.jobs import CLIENT_KEY, _with_client, dataset_job_slot, job_client
from dashboard.pages import multiclass
from tests.support.dashjobs import callback_body, cancel_job, follow_job

pytestmark = pytest.mark.slow

CLIENT = "198.51.100.7"


def _labels(classifiers: int, rows: int = 600) -> str:
    rng = np.random.default_rng(1)
    y = rng.choice(list("abc"), rows)
    cols = [np.where(rng.random(rows) < 0.7, y, rng.choice(list("abc"), rows))
            for _ in range(classifiers)]
    return ("y_true," + ",".join(f"m{i}" for i in range(classifiers)) + "\n" + "".join(
        ",".join([y[j], *(c[j] for c in cols)]) + "\n" for j in range(rows)))


def _post_as(app, address: str):
    client = app.server.test_client()

    def post(path: str, body):
        reply = client.post(path, json=body, environ_base={"REMOTE_ADDR": address})
        return reply.status_code, reply.get_json(silent=True)
    return post


def _load(app, post, text: str, name: str) -> tuple[dict, list]:
    body = callback_body(app, "multiclass-file-info", {
        "multiclass-upload.contents": "data:text/csv;base64,"
                                      + base64.b64encode(text.encode()).decode(),
        "multiclass-upload.filename": name}, "multiclass-upload.contents")
    status, reply = post("/_dash-update-component", body)
    assert status == 200, reply
    out = reply["response"]
    assert out["multiclass-error"]["children"] == ""
    return out["multiclass-ref"]["data"], out["multiclass-costs"]["rowData"]


def _run_body(app, ref, rows, replicates: int, seed: int = 3) -> dict:
    return callback_body(app, "multiclass-bcost.children@", {
        "multiclass-ref.data": ref, "multiclass-costs.rowData": rows,
        "multiclass-level.value": 0.95, "multiclass-replicates.value": replicates,
        "multiclass-laplace.value": 0.1, "multiclass-laplace-delta.value": 0,
        "multiclass-seed.value": seed, "multiclass-a.value": "m0", "multiclass-b.value": "m1",
        "multiclass-run.n_clicks": 1}, "multiclass-run.n_clicks")


def _text(node) -> str:
    """The text of a Dash component tree as JSON (the reply's children)."""
    if isinstance(node, dict):
        return _text(node.get("props", {}).get("children"))
    if isinstance(node, list):
        return " ".join(_text(n) for n in node)
    return "" if node is None else str(node)


def test_a_multiclass_run_is_a_background_job_with_progress(tmp_path):
    """Run answers at once with a job handle (no web thread computes); the polls carry the
    intervals done so far; the answer is the same numbers as the run computed inline."""
    app = create_app({"data_dir": tmp_path / "data", "heavy_timeout_seconds": 60})
    post = _post_as(app, CLIENT)
    text = _labels(12)
    ref, rows = _load(app, post, text, "twelve.csv")
    started = time.monotonic()
    run = follow_job(post, _run_body(app, ref, rows, 20_000), deadline=60)
    assert run.response is not None, run
    first_reply = run.handles
    assert "response" not in first_reply  # the POST itself computed nothing
    texts = [p["multiclass-progress-text.children"] for p in run.progress]
    assert texts and all(t.endswith("of 13 intervals") for t in texts), texts  # 12 + the pair
    assert run.progress[-1]["multiclass-progress.max"] == 13
    out = run.response
    assert out["multiclass-error"]["children"] == ""
    services = app.server.extensions["costdash"]
    inline = multiclass.run_multiclass(services, ref, rows, replicates=20_000, seed=3, a="m0",
                                       b="m1")
    table = _text(out["multiclass-bcost"]["children"])
    for row in inline.rows:
        assert multiclass.fmt(row["low"]) in table and multiclass.fmt(row["high"]) in table
    assert multiclass.fmt(inline.delta_result.delta) in _text(
        out["multiclass-bdeltacost"]["children"])
    print(f"\n12 classifiers, B = 20,000: {run.seconds:.1f} s, {len(run.progress)} progress "
          f"polls; total {time.monotonic() - started:.1f} s")


def test_a_run_counts_against_the_client_who_pressed_run(tmp_path):
    """The job runs in another process with no request: the client recorded when it was
    queued is the one the gate counts (a client already computing is refused, another not)."""
    app = create_app({"data_dir": tmp_path / "data", "max_heavy_jobs_per_client": 1,
                      "max_heavy_jobs_per_process": 4})
    services = app.server.extensions["costdash"]
    post = _post_as(app, CLIENT)
    ref, rows = _load(app, post, _labels(3), "three.csv")
    with gate_for(services).slot("report", client=CLIENT):
        refused = follow_job(post, _run_body(app, ref, rows, 200), deadline=30)
        other = follow_job(_post_as(app, "198.51.100.8"), _run_body(app, ref, rows, 200),
                           deadline=30)
    assert "already have 1 computation running" in refused.response["multiclass-error"][
        "children"]
    assert "multiclass-bcost" not in refused.response  # the results on screen stay
    assert other.response["multiclass-error"]["children"] == ""


def test_cancel_stops_the_run_and_frees_its_slots(tmp_path):
    """60 classifiers at B = 100,000 (about 21 s of CPU): cancelled after its first progress,
    the job and the gate's child are gone, and the same client may run again at once (the
    killed holder's slots are taken over)."""
    import psutil

    app = create_app({"data_dir": tmp_path / "data", "heavy_timeout_seconds": 120,
                      "max_heavy_jobs_per_client": 1, "max_heavy_jobs": 1})
    post = _post_as(app, CLIENT)
    ref, rows = _load(app, post, _labels(60), "sixty.csv")
    before = {p.pid for p in psutil.Process().children(recursive=True)}

    def cancel_after_progress(run) -> bool:
        if not run.progress:
            return False
        assert cancel_job(post, app, multiclass.MULTICLASS_CANCEL, run) == 200
        return True

    run = follow_job(post, _run_body(app, ref, rows, 100_000), deadline=60,
                     on_poll=cancel_after_progress)
    assert run.response is None and run.progress
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline:
        left = [p for p in psutil.Process().children(recursive=True)
                if p.pid not in before and p.is_running() and p.status() != "zombie"]
        if not left:
            break
        time.sleep(0.1)
    assert left == []
    again = follow_job(post, _run_body(app, ref, rows[:], 100, seed=4), deadline=30)
    assert again.response["multiclass-error"]["children"] == ""


def test_band_jobs_count_per_client(tmp_path):
    """A band job holds one of its client's slots (shared with Multiclass runs), so new
    handles no longer let one client start any number of jobs."""
    app = create_app({"data_dir": tmp_path / "data", "max_heavy_jobs": 8,
                      "max_heavy_jobs_per_client": 1, "max_jobs_per_dataset": 2})
    services = app.server.extensions["costdash"]
    cache = services.views.cache
    with dataset_job_slot(cache, "a" * 32, 2, client=CLIENT) as free:
        assert free and gate_for(services).busy() == {"client": 1, "jobs": 1, "site": 1}
        with dataset_job_slot(cache, "b" * 32, 2, client=CLIENT) as second:
            assert not second  # another handle, the same client
        with dataset_job_slot(cache, "b" * 32, 2, client="198.51.100.8") as other:
            assert other
        with pytest.raises(ComputeRefused, match="already have 1 computation"):
            with gate_for(services).slot("Multiclass run", client=CLIENT):
                pass
    assert gate_for(services).busy() == {}


def test_the_job_manager_records_the_submitting_client(tmp_path):
    """The client key crosses into the job with its context (set when the job is queued)."""
    from dash._callback_context import context_value
    from dash._utils import AttributeDict

    app = create_app({"data_dir": tmp_path / "data"})
    with app.server.test_request_context("/_dash-update-component", method="POST",
                                         environ_base={"REMOTE_ADDR": CLIENT}):
        context = _with_client(AttributeDict(path="/"))
    assert context[CLIENT_KEY] == CLIENT
    token = context_value.set(context)
    try:
        assert job_client() == CLIENT
    finally:
        context_value.reset(token)
    assert job_client() is None


def test_a_demos_handle_outlives_the_upload_retention(tmp_path):
    """The 30-day sweep deletes uploads no analysis uses. A demo clicked within the retention
    keeps its handle (a click renews it, once a day at most); one nobody opened is swept and
    the next click stores it again under the very same handle."""
    from dashboard.components import open_demo
    from dashboard.demos import REFRESH_AFTER
    from dashboard.sqlstore import handles_table

    app = create_app({"data_dir": tmp_path / "data", "upload_retention_days": 30})
    services = app.server.extensions["costdash"]
    handle = open_demo(services, "breast-cancer")["id"]
    day, now = 86_400.0, time.time()

    def age(days: float) -> None:
        with services.store.engine.begin() as conn:
            conn.execute(handles_table.update().where(handles_table.c.handle == handle)
                         .values(created_at=now - days * day))

    # Opened 29 days after its upload: renewed, so the sweep a week later keeps it.
    age(29)
    assert open_demo(services, "breast-cancer")["id"] == handle
    assert services.sharing.sweep_unshared(30, now + 7 * day) == 0
    assert services.store.info(handle) is not None
    # A second click the same day writes nothing (the upload time stays).
    age(REFRESH_AFTER / day / 2)
    open_demo(services, "breast-cancer")
    with services.store.engine.connect() as conn:
        kept = conn.execute(sa.select(handles_table.c.created_at)
                            .where(handles_table.c.handle == handle)).scalar_one()
    assert kept == pytest.approx(now - REFRESH_AFTER / 2)
    # Nobody opened it for 31 days: swept like any upload, then back under the same handle.
    age(31)
    assert services.sharing.sweep_unshared(30, now) == 1
    assert services.store.info(handle) is None
    assert open_demo(services, "breast-cancer")["id"] == handle
    assert services.store.info(handle) is not None
    assert services.store.count()["handles"] == 1
