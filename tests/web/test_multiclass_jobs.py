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
from dashboard.jobs.gate import ComputeRefused, gate_for
from dashboard.jobs import CLIENT_KEY, _with_client, dataset_job_slot, job_client
from dashboard.pages import multiclass
from tests.support.dashjobs import callback_body, cancel_job, follow_job, multiclass_run

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


def _run_body(app, ref, rows, replicates: int, seed: int = 3, ticket=None) -> dict:
    """The body of the run's job callback (as after Run's request; ``ticket`` None: a
    request that skipped Run's)."""
    return callback_body(app, "multiclass-bcost.children@", {
        "multiclass-ticket.data": ticket or {"slots": [], "n": 1},
        "multiclass-ref.data": ref, "multiclass-costs.rowData": rows,
        "multiclass-level.value": 0.95, "multiclass-replicates.value": replicates,
        "multiclass-laplace.value": 0.1, "multiclass-laplace-delta.value": 0,
        "multiclass-seed.value": seed, "multiclass-a.value": "m0", "multiclass-b.value": "m1"},
        "multiclass-ticket.data")


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
    _, alert, run = multiclass_run(post, app, ref, rows, replicates=20_000, deadline=60)
    assert alert == "" and run is not None and run.response is not None, (alert, run)
    assert "response" not in run.handles  # the job's POST itself computed nothing
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


def test_a_refused_run_starts_no_job(tmp_path):
    """Run takes the gate's slots in its request: a client already computing is refused there,
    at once, and no job process starts; another client's run goes on."""
    app = create_app({"data_dir": tmp_path / "data", "max_heavy_jobs_per_client": 1,
                      "max_heavy_jobs_per_process": 4})
    services = app.server.extensions["costdash"]
    post = _post_as(app, CLIENT)
    ref, rows = _load(app, post, _labels(3), "three.csv")
    with gate_for(services).slot("report", client=CLIENT):
        seconds, refused, job = multiclass_run(post, app, ref, rows, replicates=200)
        _, other, other_job = multiclass_run(_post_as(app, "198.51.100.8"), app, ref, rows,
                                             replicates=200, deadline=30)
    assert job is None and "already have 1 computation running" in refused
    assert other == "" and other_job is not None
    assert "multiclass-bcost" in other_job.response
    assert gate_for(services).busy() == {}  # the job gave back the slots it took over


def test_a_job_without_a_ticket_counts_against_the_client_who_queued_it(tmp_path):
    """A request straight to the job's callback (no ticket from Run's request): the job goes
    through the gate itself, counted against the client recorded when it was queued."""
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
    # A forged ticket (slots nobody reserved) is not whole: the job takes its own.
    forged = follow_job(post, _run_body(app, ref, rows, 200, ticket={
        "slots": [["site:all", 0, "0123456789abcdef"]], "n": 2}), deadline=30)
    assert forged.response["multiclass-error"]["children"] == ""


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

    _, alert, run = multiclass_run(post, app, ref, rows, replicates=100_000, deadline=60,
                                   on_poll=cancel_after_progress)
    assert alert == "" and run.response is None and run.progress
    # The cancelled job's process and the gate's child are stopped at once, but a busy machine
    # (the whole suite at load 6) has left them up to 10 s to go: they must go, not go fast.
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        left = [p for p in psutil.Process().children(recursive=True)
                if p.pid not in before and p.is_running() and p.status() != "zombie"]
        if not left:
            break
        time.sleep(0.1)
    assert left == []
    _, alert, again = multiclass_run(post, app, ref, rows, replicates=100, seed=4, deadline=30)
    assert alert == "" and again.response["multiclass-error"]["children"] == ""


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
    from dashboard.page_kit import open_demo
    from dashboard.storage.demos import REFRESH_AFTER
    from dashboard.storage.sql import handles_table

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


def test_a_job_is_not_forked_inside_another_threads_transaction(tmp_path):
    """A job process forked while another thread of the web process was inside a write
    transaction on the jobs' SQLite file inherited a lock nobody releases, and its first write
    hung (16 Multiclass runs on gunicorn: a job never answered). The fork now waits for it."""
    import threading

    from dashboard import jobs
    from dashboard.config import Settings

    manager = jobs.background_manager(Settings(data_dir=tmp_path))
    cache = manager.handle
    holding, release = threading.Event(), threading.Event()

    def hold() -> None:
        with jobs._fork_guard.use(), cache.transact():
            cache.set("busy", 1)  # the write lock is held
            holding.set()
            release.wait(30)

    holder = threading.Thread(target=hold)
    holder.start()
    assert holding.wait(10)
    started: list[int] = []
    forker = threading.Thread(target=lambda: started.append(
        # The job's body writes its result to the jobs' file, as Dash's jobs do (a fork:
        # a closure is fine).
        manager.call_job_fn("result-1", lambda key, *_: cache.set(key, "done"), [], {})))
    forker.start()
    deadline = time.monotonic() + 10
    while not jobs._fork_guard.forking and time.monotonic() < deadline:
        time.sleep(0.01)
    assert jobs._fork_guard.forking and not started  # waiting for the transaction
    release.set()
    holder.join(10)
    forker.join(10)
    assert started
    deadline = time.monotonic() + 15
    while cache.get("result-1") is None and time.monotonic() < deadline:
        time.sleep(0.05)
    assert cache.get("result-1") == "done"
