"""The upload route writes the data while it primes the view model (issue 23): the handle it
answers with is always stored, a failure of either side leaves nothing behind, and its
``Server-Timing`` names the phases."""

from __future__ import annotations

import errno
import io
import threading

import pytest
import sqlalchemy as sa

import dashboard.storage.sql as sql
from dashboard.storage import LoaderOptions


def _post(client, path):
    return client.post("/api/v1/datasets",
                       data={"file": (io.BytesIO(path.read_bytes()), path.name)},
                       content_type="multipart/form-data")


def _handles(store) -> int:
    with store.engine.begin() as conn:
        return conn.execute(sa.select(sa.func.count()).select_from(sql.handles_table)
                            ).scalar_one()


def test_meanwhile_runs_on_the_read_data_while_the_store_writes(services, predictions_csv,
                                                                monkeypatch):
    store, seen = services.store, []
    writing = threading.Event()
    release = threading.Event()
    real = sql._parquet_bytes

    def slow_parquet(table):
        writing.set()
        assert release.wait(10), "meanwhile never let the writing go on"
        return real(table)
    monkeypatch.setattr(sql, "_parquet_bytes", slow_parquet)

    def meanwhile(record):
        # The store is writing (on its own thread) while this runs: both at once.
        assert writing.wait(10)
        seen.append((record.id, record.dataset is not None, store.exists(record.id)))
        release.set()

    record = store.put(predictions_csv, "p.csv", LoaderOptions(), meanwhile=meanwhile)
    assert seen == [(record.id, True, False)]   # not yet saved while meanwhile ran...
    assert record.stored and store.exists(record.id)   # ...and saved when put returned
    assert store.get(record.id).names == record.dataset.names


def test_meanwhile_of_a_file_stored_already_sees_a_saved_handle(services, predictions_csv):
    store, seen = services.store, []
    store.put(predictions_csv, "p.csv", LoaderOptions())
    record = store.put(predictions_csv, "p.csv", LoaderOptions(),
                       meanwhile=lambda r: seen.append(store.exists(r.id)))
    assert seen == [True] and not record.stored


def test_an_error_of_meanwhile_comes_once_the_handle_is_saved(services, predictions_csv):
    store, ids = services.store, []

    def fail(record):
        ids.append(record.id)
        raise RuntimeError("priming failed")
    with pytest.raises(RuntimeError, match="priming failed"):
        store.put(predictions_csv, "p.csv", LoaderOptions(), meanwhile=fail)
    # Saved all the same: the caller (the route) knows the handle and removes it.
    assert store.exists(ids[0])


def test_a_failed_priming_leaves_no_handle(client, services, predictions_csv, monkeypatch):
    def fail(record):
        raise RuntimeError("priming failed")
    monkeypatch.setattr(services.views, "prime", fail)
    r = _post(client, predictions_csv)
    assert r.status_code == 500 and "error" in r.json
    assert _handles(services.store) == 0


def test_a_failed_write_leaves_no_handle_nor_view_model(client, services, predictions_csv,
                                                        monkeypatch):
    primed = []
    real_prime = services.views.prime

    def prime(record):
        primed.append(record.id)
        real_prime(record)

    def full_disk(table):
        raise OSError(errno.ENOSPC, "No space left on device")
    monkeypatch.setattr(services.views, "prime", prime)
    monkeypatch.setattr(sql, "_parquet_bytes", full_disk)
    r = _post(client, predictions_csv)
    assert r.status_code == 507
    assert primed and _handles(services.store) == 0
    # The view model primed under the handle that never was is gone from the cache too.
    assert services.views.cache.get(services.views._key(primed[0])) is None


def test_the_route_names_its_phases(client, predictions_csv):
    r = _post(client, predictions_csv)
    assert r.status_code == 200
    timing = dict(part.strip().split(";dur=") for part in
                  r.headers["Server-Timing"].split(","))
    assert set(timing) == {"total", "cpu", "form", "read", "prime", "store"}
    assert all(float(v) >= 0 for v in timing.values())
    assert float(timing["read"]) + float(timing["prime"]) <= float(timing["total"])
