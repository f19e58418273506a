"""Issue 22, "every expensive path is a bounded job or a cached answer" (findings 5, 6, 8):
the compute gate (dashboard/jobs/gate.py), the limiter's counters in the SQL store, shared demos,
and the Multiclass page's label files in the store. In-process; the gunicorn measurement of
/healthz under 16 concurrent runs is tests/deploy/test_compute_gate_deploy.py."""

from __future__ import annotations

import base64
import io
import os
import socket
import threading
import time

import pytest
import sqlalchemy as sa

from costdash.errors import ParameterError
from dashboard.factory import create_app
from dashboard.jobs.gate import (ComputeRefused, ComputeTimedOut, client_key, gate_for, run_bounded)
from dashboard.storage.labelfiles import LabelFiles
from dashboard.pages import multiclass
from dashboard.storage.sharedstate import compute_slots_table
from tests.support.services import fresh_redis_url


def _app(tmp_path, **settings):
    return create_app({"data_dir": tmp_path / "data", **settings})


def _services(app):
    return app.server.extensions["costdash"]


def _slow(seconds: float) -> str:
    time.sleep(seconds)
    return "done"


# --- slots -------------------------------------------------------------------------------------

def test_site_client_and_data_slots_refuse_at_once_with_retry_after(tmp_path):
    app = _app(tmp_path, max_heavy_jobs=2, max_heavy_jobs_per_process=10,
               max_heavy_jobs_per_client=1, max_jobs_per_dataset=1)
    gate = gate_for(_services(app))
    with gate.slot("report", client="10.0.0.1", handle="a" * 32):
        # The same client: its own limit (429).
        with pytest.raises(ComputeRefused) as refused:
            with gate.slot("report", client="10.0.0.1"):
                pass
        assert refused.value.status == 429 and refused.value.retry_after > 0
        assert "already have 1 computation running" in refused.value.message
        # Another client on the same data set: the data set's cap (429).
        with pytest.raises(ComputeRefused, match="already running on this data") as refused:
            with gate.slot("report", client="10.0.0.2", handle="a" * 32):
                pass
        assert refused.value.status == 429
        with gate.slot("report", client="10.0.0.3", handle="b" * 32):
            assert gate.busy() == {"site": 2, "client": 2, "data": 2}
            # The site is full (503): a fourth client waits for nothing, it is told at once.
            started = time.monotonic()
            with pytest.raises(ComputeRefused, match="busy with 2 other computations") as busy:
                with gate.slot("report", client="10.0.0.4"):
                    pass
            assert busy.value.status == 503 and time.monotonic() - started < 2
    # Everything given back, the refused attempts included.
    assert gate.busy() == {}
    with gate.slot("report", client="10.0.0.4"):
        pass


def test_one_process_keeps_threads_for_cheap_requests(tmp_path):
    app = _app(tmp_path, max_heavy_jobs=8, max_heavy_jobs_per_client=8,
               max_heavy_jobs_per_process=1)
    gate = gate_for(_services(app))
    with gate.slot("report", client="10.0.0.1"):
        with pytest.raises(ComputeRefused, match="busy with other computations") as refused:
            with gate.slot("report", client="10.0.0.2"):
                pass
    assert refused.value.status == 503


def test_two_apps_on_one_store_share_the_site_slots(tmp_path):
    """gunicorn x 4 (or two hosts on one PostgreSQL): the slots are rows of the store."""
    shared = f"sqlite:///{tmp_path / 'shared.db'}"
    first = gate_for(_services(_app(tmp_path / "a", database_url=shared, max_heavy_jobs=1)))
    second = gate_for(_services(_app(tmp_path / "b", database_url=shared, max_heavy_jobs=1)))
    with first.slot("report", client="10.0.0.1"):
        with pytest.raises(ComputeRefused, match="busy"):
            with second.slot("report", client="10.0.0.2"):
                pass
    with second.slot("report", client="10.0.0.2"):
        pass


def test_the_slot_of_a_killed_process_is_taken_over(tmp_path):
    """A process killed mid-computation cannot give its slot back: a holder that is an ended
    process of this host is taken over at once (one of another host expires in a minute)."""
    import multiprocessing

    app = _app(tmp_path, max_heavy_jobs=1)
    services = _services(app)
    gone = multiprocessing.get_context("fork").Process(target=time.sleep, args=(0,))
    gone.start()
    gone.join()
    with services.store.engine.begin() as conn:
        conn.execute(compute_slots_table.insert().values(
            scope="site:all", slot=0, holder=f"{socket.gethostname()}:{gone.pid}:x",
            expires_at=time.time() + 60))
        conn.execute(compute_slots_table.insert().values(
            scope="client:10.0.0.9", slot=0, holder="other-host:1:x",
            expires_at=time.time() + 60))
    gate = gate_for(services)
    with gate.slot("report", client="10.0.0.1"):
        pass
    with pytest.raises(ComputeRefused):  # a live lease of another host stands
        with gate.slot("report", client="10.0.0.9"):
            pass


@pytest.mark.slow
def test_a_held_slot_is_renewed_while_its_work_runs(tmp_path, monkeypatch):
    from dashboard.jobs import gate as gate_module

    monkeypatch.setattr(gate_module, "LEASE_SECONDS", 1.5)  # renewed every 0.5 s
    app = _app(tmp_path, max_heavy_jobs=1, max_heavy_jobs_per_process=5,
               max_heavy_jobs_per_client=5)
    gate = gate_for(_services(app))
    with gate.slot("report", client="10.0.0.1"):
        deadline = time.monotonic() + 4
        while time.monotonic() < deadline:  # several lifetimes: renewed, never free
            with pytest.raises(ComputeRefused):
                with gate.slot("report", client="10.0.0.2"):
                    pass
            time.sleep(0.1)


def test_heavy_work_counts_against_the_clients_rate_limit(tmp_path):
    app = _app(tmp_path, rate_limit_heavy="2 per hour", max_heavy_jobs_per_client=5)
    services = _services(app)
    gate = gate_for(services)
    with app.server.test_request_context("/_dash-update-component", method="POST",
                                         environ_base={"REMOTE_ADDR": "10.0.0.7"}):
        assert client_key() == "10.0.0.7"
        for _ in range(2):
            with gate.slot("report", client=client_key()):
                pass
        with pytest.raises(ComputeRefused, match="Too many computations") as refused:
            with gate.slot("report", client=client_key()):
                pass
        assert refused.value.status == 429 and 0 < refused.value.retry_after <= 3600
        with gate.slot("report", client="10.0.0.8"):  # another client counts apart
            pass


# --- the child process and its deadline -----------------------------------------------------

def test_work_past_its_deadline_is_stopped():
    started = time.monotonic()
    with pytest.raises(ComputeTimedOut, match="took longer than 1 s") as stopped:
        run_bounded(_slow, 30, timeout=1.0, what="report")
    assert stopped.value.status == 503 and time.monotonic() - started < 10
    assert run_bounded(_slow, 0, timeout=10) == "done"


def test_work_keeps_its_errors_and_returns_json():
    def bad() -> None:
        raise ParameterError("replicates must be at most 5")

    with pytest.raises(ParameterError, match="replicates must be at most 5"):
        run_bounded(bad, timeout=10)
    with pytest.raises(RuntimeError, match="ZeroDivisionError"):
        run_bounded(lambda: 1 / 0, timeout=10)
    assert run_bounded(lambda: {"a": [1.5, "x", None]}, timeout=10) == {"a": [1.5, "x", None]}
    gone = run_bounded(os.getpid, timeout=10)
    assert gone != os.getpid()


def test_a_refusal_is_an_http_status_with_retry_after(tmp_path):
    app = _app(tmp_path, max_heavy_jobs=1, max_heavy_jobs_per_process=5)
    services = _services(app)

    @app.server.route("/api/v1/heavy-probe")
    def probe():
        return gate_for(services).run("report", _slow, 0, client=client_key())

    client = app.server.test_client()
    assert client.get("/api/v1/heavy-probe").get_data(as_text=True) == "done"
    with gate_for(services).slot("report", client="10.9.9.9"):
        reply = client.get("/api/v1/heavy-probe")
    assert reply.status_code == 503 and int(reply.headers["Retry-After"]) > 0
    assert "busy" in reply.get_json()["error"]


# --- Multiclass Run through the gate ------------------------------------------------------------

@pytest.fixture
def mc_app(tmp_path):
    return _app(tmp_path, max_heavy_jobs_per_client=1, max_heavy_jobs_per_process=4,
                heavy_timeout_seconds=60)


def _demo(services):
    out = multiclass.load_input(services, "multiclass-demo")
    assert out.error == ""
    return out


def test_multiclass_run_goes_through_the_gate(mc_app):
    services = _services(mc_app)
    demo = _demo(services)
    runner = multiclass.gated_runner(services, "10.0.0.1", demo.ref)
    gated = multiclass.run_multiclass(services, demo.ref, demo.rows, a="quick", b="accurate",
                                      replicates=300, seed=3, runner=runner)
    inline = multiclass.run_multiclass(services, demo.ref, demo.rows, a="quick",
                                       b="accurate", replicates=300, seed=3)
    assert gated.error == "" and gated.rows == inline.rows
    assert gated.delta_result == inline.delta_result
    # The same client while one of its runs holds its slot: refused, results kept on screen.
    with gate_for(services).slot("Multiclass run", client="10.0.0.1"):
        refused = multiclass.run_multiclass(services, demo.ref, demo.rows, runner=runner)
    assert "already have 1 computation running" in refused.error
    assert refused.bcost is multiclass.no_update and refused.figure is multiclass.no_update


@pytest.mark.slow
def test_a_multiclass_run_past_the_timeout_is_stopped(tmp_path):
    """60 classifiers at B = 100,000 is about 21 s of CPU here: stopped at the 1 s limit."""
    import numpy as np

    app = _app(tmp_path, heavy_timeout_seconds=1)
    services = _services(app)
    rng = np.random.default_rng(1)
    y = rng.choice(list("abc"), 600)
    cols = [np.where(rng.random(600) < 0.7, y, rng.choice(list("abc"), 600)) for _ in range(60)]
    text = "y_true," + ",".join(f"m{i}" for i in range(60)) + "\n" + "".join(
        ",".join([y[j], *(c[j] for c in cols)]) + "\n" for j in range(600))
    loaded = multiclass.load_input(services, "multiclass-upload", contents=_data_url(text),
                                   filename="sixty.csv")
    assert loaded.error == ""
    started = time.monotonic()
    out = multiclass.run_multiclass(services, loaded.ref, loaded.rows, replicates=100_000,
                                    runner=multiclass.gated_runner(services, "10.0.0.1",
                                                                   loaded.ref))
    assert "took longer than 1 s" in out.error and "was stopped" in out.error
    assert time.monotonic() - started < 15
    assert gate_for(services).busy() == {}


# --- demos ------------------------------------------------------------------------------------

@pytest.mark.slow
def test_fifty_demo_clicks_make_no_new_handles(tmp_path):
    """Finding 6: each click minted an upload handle; now one handle per demo, whoever asks,
    however many processes ask at once."""
    from dashboard.page_kit import open_demo

    app = _app(tmp_path)
    services = _services(app)
    first = open_demo(services, "breast-cancer")
    handles = set()
    errors: list[BaseException] = []

    def click() -> None:
        try:
            handles.add(open_demo(services, "breast-cancer")["id"])
        except BaseException as exc:  # noqa: BLE001 - reported below
            errors.append(exc)

    threads = [threading.Thread(target=click) for _ in range(49)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert errors == [] and handles == {first["id"]}
    assert services.store.count()["handles"] == 1
    # The Multiclass demo stores nothing at all.
    for _ in range(20):
        _demo(services)
    assert LabelFiles(services.store).count() == 0


def test_concurrent_first_demo_clicks_keep_one_handle(tmp_path):
    """Two processes storing a demo for the first time at once: one handle is kept, the
    other discarded."""
    shared = f"sqlite:///{tmp_path / 'shared.db'}"
    apps = [_app(tmp_path / str(i), database_url=shared) for i in range(4)]
    got: list[str] = []
    threads = [threading.Thread(target=lambda a=a: got.append(_services(a).put_demo(
        "breast-cancer").id)) for a in apps]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len(set(got)) == 1 and len(got) == 4
    assert _services(apps[0]).store.count()["handles"] == 1


def test_a_demos_handle_cannot_be_deleted(tmp_path):
    app = _app(tmp_path)
    handle = _services(app).put_demo("breast-cancer").id
    client = app.server.test_client()
    reply = client.delete(f"/api/v1/datasets/{handle}")
    assert reply.status_code == 403 and "demo" in reply.get_json()["error"]
    assert client.get(f"/api/v1/datasets/{handle}").status_code == 200


# --- the limiter's counters ---------------------------------------------------------------------

def test_filling_the_cache_leaves_the_rate_limits_counting(tmp_path, breast_cancer_csv):
    """Finding 6: bands filling Redis to maxmemory evicted every rate-limit counter. The
    counters are rows of the SQL store now: here the cache is filled and then emptied
    outright (the worst an eviction can do), and the limit still counts."""
    import redis

    raw = breast_cancer_csv.read_bytes()
    with fresh_redis_url() as url:
        app = _app(tmp_path, cache_url=url, rate_limit_uploads="3 per hour")
        client = app.server.test_client()

        def upload():
            return client.post("/api/v1/datasets", data={"file": (io.BytesIO(raw), "bc.csv")},
                               content_type="multipart/form-data",
                               environ_base={"REMOTE_ADDR": "10.0.0.1"}).status_code

        assert [upload(), upload()] == [200, 200]
        cache = _services(app).views.cache
        for i in range(40):
            cache.set(f"filler:{i}", b"\0" * 1_000_000)
        server = redis.Redis.from_url(url)
        assert server.dbsize() >= 40
        assert not [k for k in server.keys("*") if b"limit" in k]  # nothing of the limiter
        server.flushdb()  # every key evicted
        assert [upload(), upload()] == [200, 429]


def test_the_file_cache_bound_leaves_the_rate_limits_counting(tmp_path, breast_cancer_csv):
    raw = breast_cancer_csv.read_bytes()
    app = _app(tmp_path, rate_limit_uploads="2 per hour", cache_max_bytes=2_000_000)
    client = app.server.test_client()

    def upload():
        return client.post("/api/v1/datasets", data={"file": (io.BytesIO(raw), "bc.csv")},
                           content_type="multipart/form-data",
                           environ_base={"REMOTE_ADDR": "10.0.0.1"}).status_code

    assert upload() == 200
    cache = _services(app).views.cache
    for i in range(10):  # five times the bound: the oldest entries go
        cache.set(f"filler:{i}", b"\0" * 1_000_000)
    assert cache.get("filler:0") is None
    assert [upload(), upload()] == [200, 429]


# --- label files --------------------------------------------------------------------------------

def _data_url(text: str) -> str:
    return "data:text/csv;base64," + base64.b64encode(text.encode()).decode()


LABELS = "y_true,a,b\n" + "".join(f"{c},{c},{'xyz'[(i + 1) % 3]}\n"
                                  for i, c in enumerate("xyzxyzxyzxyz"))


def test_a_label_file_is_read_before_it_is_kept(mc_app):
    services = _services(mc_app)
    files = LabelFiles(services.store)
    bad = multiclass.load_input(services, "multiclass-upload",
                                contents=_data_url("y_true,a\n1,\n2,2\n"), filename="gaps.csv")
    assert bad.error.startswith("gaps.csv") and files.count() == 0
    good = multiclass.load_input(services, "multiclass-upload", contents=_data_url(LABELS),
                                 filename="l.csv")
    assert good.error == "" and files.count() == 1
    assert files.get(good.ref["sha"]) == LABELS.encode()


def test_label_uploads_count_against_the_upload_limit(tmp_path):
    app = _app(tmp_path, rate_limit_uploads="2 per hour")
    services = _services(app)
    errors = []
    with app.server.test_request_context("/_dash-update-component", method="POST",
                                         environ_base={"REMOTE_ADDR": "10.0.0.3"}):
        for _ in range(3):
            errors.append(multiclass.load_input(
                services, "multiclass-upload", contents=_data_url(LABELS),
                filename="l.csv").error)
    assert errors[:2] == ["", ""] and "Too many uploads" in errors[2]
    assert LabelFiles(services.store).count() == 2


def test_a_label_file_on_a_full_disk_leaves_nothing(tmp_path):
    """Finding 8: a label upload on a full disk answered 500 and left a partial file. SQLite's
    own "database or disk is full" (a page limit, as tests/web/test_hardening.py does)."""
    app = _app(tmp_path)
    services = _services(app)
    LabelFiles(services.store).count()  # the tables exist before the limit is set
    with services.store.engine.connect() as conn:
        pages = conn.execute(sa.text("PRAGMA page_count")).scalar()
    services.store.engine.dispose()
    sa.event.listen(services.store.engine, "connect", lambda c, _r: c.execute(
        f"PRAGMA max_page_count={pages + 2}"))
    big = "y_true,a,b\n" + "".join(f"{c},{c},{'xyz'[i % 3]}\n"
                                   for i, c in enumerate("xyz" * 40_000))
    out = multiclass.load_input(services, "multiclass-upload", contents=_data_url(big),
                                filename="big.csv")
    assert out.error == multiclass.DISK_FULL
    assert out.ref is multiclass.no_update
    assert LabelFiles(services.store).count() == 0
    assert not (services.settings.data_dir / "multiclass").exists()


def test_a_label_file_runs_through_either_replica(tmp_path):
    """Finding 8: label files lived in each replica's data dir; behind a round robin a run
    failed about half the time. Two apps with their own data dirs and one database."""
    shared = f"sqlite:///{tmp_path / 'shared.db'}"
    one = _services(_app(tmp_path / "one", database_url=shared))
    two = _services(_app(tmp_path / "two", database_url=shared))
    loaded = multiclass.load_input(one, "multiclass-upload", contents=_data_url(LABELS),
                                   filename="l.csv")
    assert loaded.error == ""
    runs = [multiclass.run_multiclass(s, loaded.ref, loaded.rows, a="a", b="b", replicates=200)
            for s in (one, two)]
    assert [r.error for r in runs] == ["", ""] and runs[0].rows == runs[1].rows


def test_band_jobs_take_a_site_slot_too(tmp_path):
    """Bands, Multiclass runs and reports are one pool of expensive work: with the site's
    slots taken, a band job is refused (its page says busy) though its data set has room."""
    from dashboard.jobs import dataset_job_slot

    app = _app(tmp_path, max_heavy_jobs=1, max_jobs_per_dataset=2)
    services = _services(app)
    cache = services.views.cache
    with dataset_job_slot(cache, "e" * 32, 2) as free:
        assert free and gate_for(services).busy() == {"jobs": 1, "site": 1}
        with pytest.raises(ComputeRefused, match="busy"):
            with gate_for(services).slot("report", client="10.0.0.1"):
                pass
        with dataset_job_slot(cache, "e" * 32, 2) as second:
            assert not second
    assert gate_for(services).busy() == {}
    with gate_for(services).slot("report", client="10.0.0.1"):
        with dataset_job_slot(cache, "f" * 32, 2) as free:
            assert not free
