"""DatasetStore on both back ends (SQLite file, real PostgreSQL): round trips of every layout,
de-duplication by content hash, transactional saves, loader options."""

from __future__ import annotations

import numpy as np
import pytest

from costdash.dataset import Dataset
from costdash.errors import InputFileError, ParameterError
from costdash.io import load_predictions
from dashboard.storage import (DatasetNotFound, LoaderOptions, SqlStore,
                               dataset_from_tables, dataset_to_tables)

LONG = ("model,y_true,score,fold\n" + "".join(
    f"{m},{y},{s},{f}\n" for m, rows in (("a", [(1, .9, 1), (0, .2, 1), (1, .6, 2), (0, .7, 2)]),
                                         ("b", [(1, .8, 1), (0, .1, 1), (1, .5, 2), (0, .3, 2)]))
    for y, s, f in rows))
COUNTS = "model,tp,fp,fn,tn,threshold\nx,5,1,5,9,0.7\nx,8,4,2,6,0.4\ny,6,2,4,8,\n"


def assert_same(a: Dataset, b: Dataset) -> None:
    assert (a.source, a.layout, a.positive_label, a.fold_labels) == \
        (b.source, b.layout, b.positive_label, b.fold_labels)
    assert a.names == b.names
    for ca, cb in zip(a.scored, b.scored):
        assert ca.name == cb.name
        np.testing.assert_array_equal(ca.y_true, cb.y_true)
        np.testing.assert_array_equal(ca.score, cb.score)
        assert ca.score.dtype == np.float64 and ca.y_true.dtype == bool
        if cb.fold is None:
            assert ca.fold is None
        else:
            np.testing.assert_array_equal(ca.fold, cb.fold)
    for ca, cb in zip(a.counted, b.counted):
        for k in ("tp", "fp", "fn", "tn"):
            np.testing.assert_array_equal(getattr(ca, k), getattr(cb, k))
        if cb.threshold is None:
            assert ca.threshold is None
        else:
            np.testing.assert_array_equal(ca.threshold, cb.threshold)


@pytest.fixture(params=["sqlite", "postgresql"])
def store_url(request, tmp_path) -> str:
    """A fresh database of each back end (PostgreSQL: a new, empty schema per test in the
    module's database, tests/conftest.py; the store creates its tables there as on a new
    database)."""
    if request.param == "sqlite":
        return f"sqlite:///{tmp_path / 'costdash.db'}"
    return request.getfixturevalue("fresh_postgres_url")


@pytest.fixture
def store(store_url) -> SqlStore:
    s = SqlStore(store_url)
    yield s
    s.engine.dispose()


def test_round_trip_wide_with_folds(store, breast_cancer_csv):
    record = store.put(breast_cancer_csv.read_bytes(), "breast-cancer.csv")
    expected = load_predictions(breast_cancer_csv)
    assert record.classifiers == expected.names
    assert (record.n, record.n_pos, record.n_neg) == (expected.n, expected.n_pos, expected.n_neg)
    got = store.get(record.id)
    assert_same(got, expected)
    # The wide layout keeps one shared label array, as the loader gives it.
    assert all(c.y_true is got.scored[0].y_true for c in got.scored)


@pytest.mark.parametrize("text, name", [(LONG, "long.csv"), (COUNTS, "counts.csv")])
def test_round_trip_long_and_counts(store, tmp_path, text, name):
    path = tmp_path / name
    path.write_text(text)
    record = store.put(path, name)
    assert_same(store.get(record.id), load_predictions(path))


def test_tables_round_trip_without_disk(breast_cancer_csv):
    ds = load_predictions(breast_cancer_csv, models=["gbm", "stump"])
    meta, tables = dataset_to_tables(ds)
    assert_same(dataset_from_tables(meta, tables), ds)


def test_same_content_stored_once(store, breast_cancer_csv, tmp_path):
    raw = breast_cancer_csv.read_bytes()
    first = store.put(raw, "a.csv")
    second = store.put(raw, "renamed.csv")      # same bytes, same options: same content
    # ... but each upload has its own handle and name: the second uploader learns nothing
    # about the first (issue 11, finding 3).
    assert second.id != first.id and second.name == "renamed.csv"
    assert store.info(first.id).name == "a.csv" and store.info(second.id).name == "renamed.csv"
    assert second.dataset is None                # not read again
    assert store.count() == {"datasets": 1, "dataset_parts": 1, "analyses": 0, "handles": 2}
    # Other loader options read the file differently: another data set.
    third = store.put(raw, "a.csv", LoaderOptions(models=("gbm",)))
    assert third.id != first.id and third.classifiers == ("gbm",)
    assert store.count()["datasets"] == 2


def test_data_is_parquet_not_pickle(store, breast_cancer_csv):
    import sqlalchemy as sa

    from dashboard.storage.sql import dataset_parts_table

    store.put(breast_cancer_csv, "b.csv")
    with store.engine.connect() as conn:
        blobs = conn.execute(sa.select(dataset_parts_table.c.parquet)).scalars().all()
    assert blobs and all(bytes(b)[:4] == b"PAR1" and bytes(b)[-4:] == b"PAR1" for b in blobs)


def test_bad_file_raises_loader_error_and_stores_nothing(store, bad_csv):
    with pytest.raises(InputFileError) as info:
        store.put(bad_csv, "broken.csv")
    with pytest.raises(InputFileError) as direct:
        load_predictions(bad_csv, name="broken.csv")
    assert str(info.value) == str(direct.value)
    assert store.count() == {"datasets": 0, "dataset_parts": 0, "analyses": 0, "handles": 0}


def test_unknown_ids(store):
    assert store.info("0" * 32) is None and not store.exists("0" * 32)
    assert store.info("../../etc/passwd") is None
    with pytest.raises(DatasetNotFound, match="upload the file again"):
        store.get("0" * 32)


def test_store_persists_across_instances(store_url, breast_cancer_csv):
    record = SqlStore(store_url).put(breast_cancer_csv, "b.csv")
    again = SqlStore(store_url)
    assert again.exists(record.id)
    assert again.info(record.id).classifiers == record.classifiers
    assert again.get(record.id).n == record.n


def test_loader_options_from_form():
    opts = LoaderOptions.from_form({"positive": "yes", "label-column": "truth",
                                    "models": "a, b,c", "drop_missing": "true", "layout": ""})
    assert opts == LoaderOptions(layout="auto", label_column="truth", positive="yes",
                                 models=("a", "b", "c"), drop_missing=True)
    assert opts.as_kwargs()["models"] == ["a", "b", "c"]
    assert LoaderOptions.from_form({}) == LoaderOptions()
    with pytest.raises(ParameterError, match="unknown loader option 'colour'"):
        LoaderOptions.from_form({"colour": "red"})
    with pytest.raises(ParameterError, match="drop_missing"):
        LoaderOptions.from_form({"drop_missing": "maybe"})


def test_options_reach_the_loader(store, tmp_path):
    path = tmp_path / "labels.csv"
    path.write_text("label,m\nsick,0.9\nwell,0.1\nsick,0.7\nwell,0.4\n")
    with pytest.raises(InputFileError, match="--positive"):
        store.put(path, "labels.csv")
    record = store.put(path, "labels.csv", LoaderOptions(positive="sick"))
    assert record.positive_label == "sick" and record.n_pos == 2


@pytest.mark.slow
def test_caches_and_job_stores_never_pickle(tmp_path, redis_url):
    """Whoever can write to the cache directory or Redis must not get a web process to
    unpickle something: values are tagged text or bytes, anything else reads as a miss."""
    import pickle

    import diskcache
    import redis

    from dashboard.config import Settings
    from dashboard.factory import create_app
    from dashboard.jobs import _celery, background_manager

    for cache_url in (None, redis_url):
        app = create_app(Settings.from_mapping({"data_dir": tmp_path / str(bool(cache_url)),
                                                "cache_url": cache_url}))
        cache = app.server.extensions["costdash"].views.cache
        cache.set("text", "ä json")
        cache.set("blob", b"\x00npz")
        assert cache.get("text") == "ä json" and cache.get("blob") == b"\x00npz"
        with pytest.raises(TypeError, match="no pickle"):
            cache.set("object", {"a": 1})
    client = redis.Redis.from_url(redis_url)
    assert client.get("costdash:text") == "sä json".encode()
    client.set("costdash:planted", b"!" + pickle.dumps(["not", "ours"]))
    assert cache.get("planted") is None
    files = create_app(Settings.from_mapping({"data_dir": tmp_path / "f"})).server
    file_cache = files.extensions["costdash"].views.cache
    file_cache.set("k", "v")
    raw = [f.read_bytes() for f in (tmp_path / "f" / "cache").iterdir() if f.is_file()]
    assert any(b[4:] == b"sv" for b in raw)  # 4-byte expiry, then the tagged value
    assert all(b"\x80" not in b[4:6] for b in raw)  # no pickle protocol header

    manager = background_manager(Settings.from_mapping({"data_dir": tmp_path / "j"}))
    assert isinstance(manager.handle.disk, diskcache.JSONDisk)
    conf = _celery(redis_url).conf
    assert (conf.task_serializer, conf.result_serializer, list(conf.accept_content)) == \
        ("json", "json", ["json"])


def test_concurrent_saves_of_one_file_store_it_once(store, breast_cancer_csv):
    """Finding 5 of issue 11: 20 threads saving the same file at once. psycopg reports -1 as
    the rowcount of ``INSERT ... ON CONFLICT DO NOTHING``, which was read as "inserted", so the
    losers inserted the data set's parts again (UniqueViolation, a 500)."""
    from concurrent.futures import ThreadPoolExecutor
    from threading import Barrier

    raw = breast_cancer_csv.read_bytes()
    barrier = Barrier(20)

    def save(i: int):
        barrier.wait()
        return store.put(raw, f"copy-{i}.csv")

    with ThreadPoolExecutor(20) as pool:
        records = list(pool.map(save, range(20)))
    assert len({r.id for r in records}) == 20  # a handle each
    # Exactly one save stored the content; the others found it stored.
    assert sum(r.stored for r in records) == 1
    assert store.count() == {"datasets": 1, "dataset_parts": 1, "analyses": 0, "handles": 20}
    assert all(store.get(r.id).n == records[0].n for r in records)


def test_a_forked_process_does_not_use_its_parents_connections(store):
    """Finding 9 of issue 11: a Celery pool process (or a job's child process) forked after
    the app had used the database inherited the pooled connection -- the parent's socket -- and
    both talked on it ("can't change 'autocommit' now: connection in transaction status
    INTRANS"). After fork the child's engine starts a pool of its own."""
    import os

    import sqlalchemy as sa

    who = ("SELECT pg_backend_pid()" if store.dialect == "postgresql"
           else "SELECT 1")  # SQLite: the connection object itself tells
    with store.engine.connect() as conn:  # a pooled connection, checked in again
        parent = (conn.execute(sa.text(who)).scalar(), id(conn.connection.dbapi_connection))
    read, write = os.pipe()
    pid = os.fork()
    if pid == 0:  # the child: report the connection it gets, and whether it works
        try:
            with store.engine.connect() as conn:
                mine = (conn.execute(sa.text(who)).scalar(),
                        id(conn.connection.dbapi_connection))
            store.count()
            os.write(write, repr(mine).encode())
        finally:
            os._exit(0)
    os.close(write)
    child = eval(os.read(read, 1000).decode())  # noqa: S307 - a tuple of two ints we wrote
    os.waitpid(pid, 0)
    if store.dialect == "postgresql":
        assert child[0] != parent[0]  # another server session, not the parent's
    assert child[1] != parent[1]
    # The parent's connection still works.
    with store.engine.connect() as conn:
        assert conn.execute(sa.text(who)).scalar() == parent[0]
    assert store.count()["datasets"] == 0


@pytest.mark.slow
def test_workers_starting_together_on_a_new_sqlite_file_all_start(tmp_path):
    """Seen in CI: two gunicorn workers on a fresh SQLite file; one's schema check read, the
    other wrote, and the first got "database is locked" at once and failed to boot.

    Three rounds of six workers, each round on a new file. The six spawned children run all
    three rounds (a barrier before each), so the race is run three times for six interpreter
    starts, and each child imports only the store (tests/support/sqlite_race.py)."""
    import multiprocessing

    from tests.support.sqlite_race import start_and_write_rounds

    ctx = multiprocessing.get_context("spawn")
    urls = [f"sqlite:///{tmp_path / f'race{round_}' / 'costdash.db'}" for round_ in range(3)]
    barrier, queue = ctx.Barrier(6), ctx.Queue()
    workers = [ctx.Process(target=start_and_write_rounds, args=(urls, barrier, queue))
               for _ in range(6)]
    for worker in workers:
        worker.start()
    try:
        outcomes = [queue.get(timeout=120) for _ in range(6 * len(urls))]
    finally:
        for worker in workers:
            worker.join(timeout=60)
    assert all(worker.exitcode == 0 for worker in workers)
    results = {round_: [o for r, o in outcomes if r == round_] for round_ in range(len(urls))}
    assert results == {round_: ["ok"] * 6 for round_ in range(len(urls))}, results
