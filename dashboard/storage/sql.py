"""The SQL store: :class:`SqlStore`, the one implementation of :mod:`dashboard.storage`'s
interfaces, its tables, the read-time expiry of handles and the pools of forked children.

One implementation, :class:`SqlStore` (SQLAlchemy 2 Core), serves both back ends, chosen by
one URL (``COSTDASH_DATABASE_URL``): a SQLite file under the data directory by default, or
PostgreSQL (``postgresql+psycopg://...``) when several hosts share the data. The Parquet bytes
live in the database beside their index row, so one transaction saves a data set or an analysis
whole (a crash mid-save leaves nothing half-written) and every host sees the same data.
The schema is created on start-up.
"""

from __future__ import annotations

import hashlib
import io
import json
import os
import re
import time
import weakref
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from dataclasses import replace
from pathlib import Path
from typing import IO, Any

import pyarrow as pa
import pyarrow.parquet as pq
import sqlalchemy as sa

from costdash.dataset import Dataset
from dashboard.storage.records import (AnalysisRecord, DatasetNotFound, DatasetRecord,
                                       LoaderOptions, StorageFull, StorageUnavailable, Store,
                                       dataset_id, new_handle, valid_id)
from dashboard.storage.tables import dataset_from_tables, dataset_to_tables

_CHUNK = 1 << 20



_metadata = sa.MetaData()

datasets_table = sa.Table(
    "datasets", _metadata,
    sa.Column("id", sa.String(32), primary_key=True),
    sa.Column("name", sa.Text, nullable=False),
    sa.Column("raw_sha256", sa.String(64), nullable=False),
    sa.Column("options", sa.Text, nullable=False),
    sa.Column("layout", sa.String(16), nullable=False),
    sa.Column("positive_label", sa.Text, nullable=False),
    sa.Column("n", sa.BigInteger, nullable=False),
    sa.Column("n_pos", sa.BigInteger, nullable=False),
    sa.Column("n_neg", sa.BigInteger, nullable=False),
    sa.Column("classifiers", sa.Text, nullable=False),
    sa.Column("meta", sa.Text, nullable=False),
    sa.Column("size_bytes", sa.BigInteger, nullable=False),
    sa.Column("created_at", sa.Float, nullable=False),
)

dataset_parts_table = sa.Table(
    "dataset_parts", _metadata,
    sa.Column("dataset_id", sa.String(32), sa.ForeignKey("datasets.id"), primary_key=True),
    sa.Column("part", sa.String(16), primary_key=True),
    sa.Column("parquet", sa.LargeBinary, nullable=False),
)

analyses_table = sa.Table(
    "analyses", _metadata,
    sa.Column("id", sa.String(24), primary_key=True),
    sa.Column("share_key", sa.String(64), nullable=False, unique=True),
    sa.Column("share_token", sa.String(64), nullable=False),
    sa.Column("manage_key", sa.String(64), nullable=False, unique=True),
    sa.Column("dataset_id", sa.String(32), sa.ForeignKey("datasets.id"), nullable=False,
              index=True),
    sa.Column("name", sa.Text, nullable=False),
    sa.Column("view", sa.Text, nullable=False),
    sa.Column("created_at", sa.Float, nullable=False),
    sa.Column("expires_at", sa.Float, nullable=True, index=True),
    # How often the read-only link was opened, and when last: no address, no agent.
    # Added after the first release: _add_missing_columns gives older databases them.
    sa.Column("opens", sa.BigInteger, nullable=False, server_default="0"),
    sa.Column("last_opened_at", sa.Float, nullable=True),
)

handles_table = sa.Table(
    "handles", _metadata,
    sa.Column("handle", sa.String(32), primary_key=True),
    sa.Column("dataset_id", sa.String(32), sa.ForeignKey("datasets.id"), nullable=False,
              index=True),
    sa.Column("name", sa.Text, nullable=False),
    # Upload handles: when last uploaded or shared (retention counts from there).
    sa.Column("created_at", sa.Float, nullable=False, index=True),
    # Read-only handles: the analysis they belong to (NULL for an upload handle).
    sa.Column("analysis_id", sa.String(24), nullable=True, unique=True),
)

_SCHEMA_LOCK = 731_942_015
"""PostgreSQL advisory lock id: workers starting together create the schema one at a time."""


def _sha256_of(source: bytes | str | os.PathLike[str]) -> str:
    h = hashlib.sha256()
    if isinstance(source, bytes):
        h.update(source)
    else:
        with open(source, "rb") as f:
            while chunk := f.read(_CHUNK):
                h.update(chunk)
    return h.hexdigest()


def _parquet_bytes(table: pa.Table) -> bytes:
    # Scores have about as many distinct values as rows: a dictionary for them is built and
    # then dropped by the writer (a third of a 50 x 200,000 upload's storing time); labels,
    # folds and names keep theirs.
    coded = [f.name for f in table.schema if not pa.types.is_floating(f.type)]
    sink = io.BytesIO()
    pq.write_table(table, sink, compression="zstd", use_dictionary=coded)
    return sink.getvalue()


_DISK_FULL = ("database or disk is full", "no space left on device", "disk quota exceeded")


def _disk_full(exc: Exception) -> bool:
    """Whether a driver error says the disk is full (SQLite's SQLITE_FULL, PostgreSQL's
    SQLSTATE 53100 ``disk_full``, or the OS's ENOSPC in the message)."""
    orig = getattr(exc, "orig", exc)
    if getattr(orig, "sqlstate", None) == "53100" or getattr(orig, "sqlite_errorname", None) \
            == "SQLITE_FULL":
        return True
    text = str(orig).lower()
    return any(phrase in text for phrase in _DISK_FULL)


def _unavailable(exc: Exception) -> StorageUnavailable:
    # The driver's message may carry the URL; keep only its first line, without credentials.
    first = str(getattr(exc, "orig", exc)).strip().splitlines()[0] if str(exc).strip() else ""
    detail = f"{type(exc).__name__}: {re.sub(r'//[^@/]*@', '//', first)[:200]}"
    if _disk_full(exc):
        return StorageFull(f"the database's disk is full ({detail})")
    return StorageUnavailable(f"the database is unavailable ({detail})")


class SqlStore(Store):
    """Data sets and analyses in one SQL database through SQLAlchemy Core.

    Parameters
    ----------
    url : str
        ``sqlite:///path/costdash.db`` (the embedded default) or
        ``postgresql+psycopg://user@host:port/db``.
    max_bytes : int
        Largest predictions file :meth:`put` reads.
    max_rows, max_classifiers : int, optional
        Largest number of rows and of classifiers :meth:`put` accepts (None: no limit).

    Several processes (gunicorn workers) and, with PostgreSQL, several hosts can share one
    database: rows are inserted with ``ON CONFLICT DO NOTHING ... RETURNING`` on the
    content-hash key, so two workers storing the same file at once store it once, and each
    knows whether it was the one (:attr:`DatasetRecord.stored`).

    Every read of a data set (:meth:`info`, :meth:`exists`, :meth:`get`) sees only live ones:
    a data set whose analyses have all expired reads as gone at once (see :func:`_live`),
    before :meth:`purge_expired` deletes it.
    """

    def __init__(self, url: str, *, max_bytes: int = 200 * 1024**2,
                 max_rows: int | None = None, max_classifiers: int | None = None):
        self.url = url
        self.max_bytes = int(max_bytes)
        self.limits = {"max_rows": max_rows, "max_classifiers": max_classifiers}
        self.dialect = "sqlite" if url.startswith("sqlite") else "postgresql"
        if self.dialect == "sqlite":
            Path(url.removeprefix("sqlite:///")).parent.mkdir(parents=True, exist_ok=True)
            self.engine = sa.create_engine(url, connect_args={"timeout": 30})
            sa.event.listen(self.engine, "connect", _sqlite_pragmas)
        else:
            self.engine = sa.create_engine(url, pool_pre_ping=True, pool_size=5,
                                           max_overflow=5, pool_timeout=10,
                                           connect_args={"connect_timeout": 5})
        _engines.add(self.engine)
        self._create_schema()

    def __repr__(self) -> str:
        return f"SqlStore({self.engine.url.render_as_string(hide_password=True)!r})"

    def _create_schema(self) -> None:
        # Workers start together on a new SQLite file. Checking for the tables reads, creating
        # them then writes; when another worker wrote in between, SQLite answers "database is
        # locked" at once instead of waiting (it cannot let a reader of an old snapshot write),
        # or the CREATE finds the table made; either way the check-and-create runs again.
        deadline = time.monotonic() + 30.0
        while True:
            try:
                with self.engine.begin() as conn:
                    if self.dialect == "postgresql":
                        conn.execute(sa.text("SELECT pg_advisory_xact_lock(:k)"),
                                     {"k": _SCHEMA_LOCK})
                    _metadata.create_all(conn, checkfirst=True)
                    _add_missing_columns(conn)
                    _give_analyses_their_handles(conn)
                return
            except sa.exc.OperationalError as exc:
                # Another worker created a table between the check and the CREATE (SQLite
                # commits each CREATE on its own, so the rest may still be missing), or added
                # a column: check again.
                racing = ("already exists", "database is locked", "duplicate column")
                if (self.dialect == "sqlite" and any(r in str(exc) for r in racing)
                        and time.monotonic() < deadline):
                    time.sleep(0.05)
                    continue
                raise _unavailable(exc) from exc

    @contextmanager
    def _begin(self) -> Iterator[sa.Connection]:
        """A transaction; connection failures become :class:`StorageUnavailable`."""
        try:
            with self.engine.begin() as conn:
                yield conn
        except (sa.exc.OperationalError, sa.exc.InterfaceError, sa.exc.TimeoutError) as exc:
            raise _unavailable(exc) from exc

    def _insert_ignoring_duplicates(self, table: sa.Table) -> Any:
        if self.dialect == "sqlite":
            from sqlalchemy.dialects.sqlite import insert
        else:
            from sqlalchemy.dialects.postgresql import insert
        return insert(table).on_conflict_do_nothing()

    def ping(self) -> None:
        with self._begin() as conn:
            conn.execute(sa.text("SELECT 1"))

    # data sets ---------------------------------------------------------------------------------

    def put(self, source: bytes | str | os.PathLike[str] | IO[bytes], filename: str,
            options: LoaderOptions | None = None, *, sha256: str | None = None) -> DatasetRecord:
        from costdash.io import load_predictions

        options = options or LoaderOptions()
        if hasattr(source, "read"):
            source = source.read()
        sha256 = sha256 or _sha256_of(source)
        ds_id = dataset_id(sha256, options, filename)
        now = time.time()
        handle_row = {"handle": new_handle(), "dataset_id": ds_id, "name": filename,
                      "created_at": now, "analysis_id": None}
        existing = self._content_row(ds_id)
        if existing is not None:
            with self._begin() as conn:
                conn.execute(handles_table.insert(), handle_row)
            return self._record(existing._mapping, handle_row)
        raw = source if isinstance(source, bytes) else Path(source)
        size = len(raw) if isinstance(raw, bytes) else raw.stat().st_size
        dataset = load_predictions(io.BytesIO(raw) if isinstance(raw, bytes) else raw,
                                   name=filename, max_bytes=self.max_bytes, **self.limits,
                                   **options.as_kwargs())
        meta, tables = dataset_to_tables(dataset)
        parts = [{"dataset_id": ds_id, "part": part, "parquet": _parquet_bytes(table)}
                 for part, table in tables.items()]
        row = {"id": ds_id, "name": filename, "raw_sha256": sha256,
               "options": options.canonical(), "layout": dataset.layout,
               "positive_label": dataset.positive_label, "n": dataset.n,
               "n_pos": dataset.n_pos, "n_neg": dataset.n_neg,
               "classifiers": json.dumps(list(dataset.names)), "meta": json.dumps(meta),
               "size_bytes": size, "created_at": now}
        with self._begin() as conn:
            # RETURNING, not rowcount: psycopg reports -1 as the rowcount of
            # INSERT ... ON CONFLICT DO NOTHING, whether or not the row went in.
            inserted = conn.execute(self._insert_ignoring_duplicates(datasets_table)
                                    .returning(datasets_table.c.id), row).first()
            if inserted is not None:  # None: another worker stored the same file meanwhile
                conn.execute(dataset_parts_table.insert(), parts)
            conn.execute(handles_table.insert(), handle_row)
        return replace(self._record(row, handle_row), dataset=dataset,
                       stored=inserted is not None)

    def _content_row(self, content_id: str) -> sa.Row | None:
        columns = [c for c in datasets_table.c if c.name != "meta"]
        with self._begin() as conn:
            return conn.execute(sa.select(*columns).where(datasets_table.c.id == content_id)
                                ).first()

    @staticmethod
    def _record(content: Mapping[str, Any], handle: Mapping[str, Any]) -> DatasetRecord:
        opts = json.loads(content["options"])
        opts["models"] = tuple(opts["models"]) if opts.get("models") else None
        return DatasetRecord(
            id=handle["handle"], name=handle["name"], sha256=content["raw_sha256"],
            options=LoaderOptions(**opts), layout=content["layout"],
            positive_label=content["positive_label"], n=int(content["n"]),
            n_pos=int(content["n_pos"]), n_neg=int(content["n_neg"]),
            classifiers=tuple(json.loads(content["classifiers"])),
            size_bytes=int(content["size_bytes"]), created_at=float(handle["created_at"]),
            analysis_id=handle["analysis_id"])

    def _live_handle(self, handle: str, *columns: Any) -> sa.Row | None:
        """``columns`` of the handle's row joined with its content, when the handle is live."""
        if not valid_id(handle):
            return None
        query = (sa.select(*columns)
                 .select_from(handles_table.join(
                     datasets_table, handles_table.c.dataset_id == datasets_table.c.id))
                 .where(handles_table.c.handle == handle, _live(time.time())))
        with self._begin() as conn:
            return conn.execute(query).first()

    def info(self, dataset_id: str) -> DatasetRecord | None:
        content = [c for c in datasets_table.c if c.name not in ("meta", "name", "created_at")]
        row = self._live_handle(dataset_id, *content, *handles_table.c)
        if row is None:
            return None
        return self._record(row._mapping, row._mapping)

    def exists(self, dataset_id: str) -> bool:
        return self._live_handle(dataset_id, handles_table.c.handle) is not None

    def get(self, dataset_id: str) -> Dataset:
        missing = DatasetNotFound(f"no data set with id '{dataset_id}' is stored here; "
                                  "upload the file again")
        row = self._live_handle(dataset_id, datasets_table.c.id, datasets_table.c.meta)
        if row is None:
            raise missing
        content_id, meta_text = row
        with self._begin() as conn:
            parts = conn.execute(sa.select(dataset_parts_table.c.part,
                                           dataset_parts_table.c.parquet)
                                 .where(dataset_parts_table.c.dataset_id == content_id)).all()
        tables = {part: pq.read_table(pa.BufferReader(blob)) for part, blob in parts}
        return dataset_from_tables(json.loads(meta_text), tables)

    def discard_dataset(self, dataset_id: str) -> bool:
        if not valid_id(dataset_id):
            return False
        with self._begin() as conn:
            gone = conn.execute(handles_table.delete().where(
                handles_table.c.handle == dataset_id, handles_table.c.analysis_id.is_(None))
                .returning(handles_table.c.dataset_id)).scalars().all()
            self._delete_unneeded_content(conn, gone)
        return bool(gone)

    @staticmethod
    def _delete_unneeded_content(conn: sa.Connection, content_ids: Any) -> None:
        """Delete stored content no handle and no analysis needs any more."""
        candidates = sorted(set(content_ids))
        if not candidates:
            return
        needed = set(conn.execute(sa.select(handles_table.c.dataset_id).where(
            handles_table.c.dataset_id.in_(candidates))).scalars())
        needed |= set(conn.execute(sa.select(analyses_table.c.dataset_id).where(
            analyses_table.c.dataset_id.in_(candidates))).scalars())
        unneeded = [d for d in candidates if d not in needed]
        if unneeded:
            conn.execute(dataset_parts_table.delete().where(
                dataset_parts_table.c.dataset_id.in_(unneeded)))
            conn.execute(datasets_table.delete().where(datasets_table.c.id.in_(unneeded)))

    def dispose(self) -> None:
        self.engine.dispose()

    def count(self) -> dict[str, int]:
        """Rows per table (for health pages and tests)."""
        with self._begin() as conn:
            return {t.name: int(conn.execute(sa.select(sa.func.count()).select_from(t)).scalar())
                    for t in (datasets_table, dataset_parts_table, analyses_table,
                              handles_table)}

    # analyses ----------------------------------------------------------------------------------

    def add_analysis(self, record: AnalysisRecord, share_key: str) -> AnalysisRecord:
        upload = self._live_handle(record.dataset_id, handles_table.c.dataset_id,
                                   handles_table.c.name, handles_table.c.analysis_id)
        if upload is None or upload.analysis_id is not None:
            raise DatasetNotFound(f"no data set with id '{record.dataset_id}' is stored here")
        now = time.time()
        view_handle = new_handle()
        with self._begin() as conn:
            conn.execute(analyses_table.insert(), {
                "id": record.id, "share_key": share_key, "share_token": record.share_token,
                "manage_key": record.manage_key, "dataset_id": upload.dataset_id,
                "name": record.name, "view": json.dumps(dict(record.view), sort_keys=True),
                "created_at": record.created_at, "expires_at": record.expires_at})
            conn.execute(handles_table.insert(), {
                "handle": view_handle, "dataset_id": upload.dataset_id, "name": upload.name,
                "created_at": now, "analysis_id": record.id})
            # Sharing counts as using the upload: its retention starts again.
            conn.execute(handles_table.update().where(
                handles_table.c.handle == record.dataset_id).values(created_at=now))
        return replace(record, dataset_id=view_handle)

    _analysis_columns = (*[c for c in analyses_table.c if c.name != "dataset_id"],
                         handles_table.c.handle.label("dataset_id"))

    @staticmethod
    def _analysis(row: sa.Row | None) -> AnalysisRecord | None:
        if row is None:
            return None
        r = row._mapping
        return AnalysisRecord(id=r["id"], name=r["name"], dataset_id=r["dataset_id"],
                              view=json.loads(r["view"]), share_token=r["share_token"],
                              manage_key=r["manage_key"], created_at=float(r["created_at"]),
                              expires_at=None if r["expires_at"] is None
                              else float(r["expires_at"]),
                              opens=int(r["opens"]),
                              last_opened_at=None if r["last_opened_at"] is None
                              else float(r["last_opened_at"]))

    def _select_analyses(self) -> Any:
        return sa.select(*self._analysis_columns).select_from(analyses_table.join(
            handles_table, handles_table.c.analysis_id == analyses_table.c.id))

    def find_analysis(self, *, id: str | None = None, share_key: str | None = None,
                      manage_key: str | None = None) -> AnalysisRecord | None:
        given = [(c, v) for c, v in (("id", id), ("share_key", share_key),
                                     ("manage_key", manage_key)) if v is not None]
        if len(given) != 1:
            raise TypeError("give exactly one of id, share_key, manage_key")
        column, value = given[0]
        if not isinstance(value, str) or len(value) > 64:
            return None
        with self._begin() as conn:
            return self._analysis(conn.execute(
                self._select_analyses().where(analyses_table.c[column] == value)).first())

    def update_analysis(self, analysis_id: str, *, name: str | None = None,
                        expires_at: float | None | type[Ellipsis] = ...) -> AnalysisRecord | None:
        values: dict[str, Any] = {}
        if name is not None:
            values["name"] = name
        if expires_at is not ...:
            values["expires_at"] = expires_at
        with self._begin() as conn:
            if values:
                conn.execute(analyses_table.update()
                             .where(analyses_table.c.id == analysis_id).values(**values))
            return self._analysis(conn.execute(
                self._select_analyses().where(analyses_table.c.id == analysis_id)).first())

    def record_open(self, share_key: str, now: float) -> None:
        with self._begin() as conn:
            if self.dialect == "postgresql":
                # A count lost in a crash is worth less than a flush of the log per view.
                conn.execute(sa.text("SET LOCAL synchronous_commit TO OFF"))
            conn.execute(analyses_table.update().where(analyses_table.c.share_key == share_key)
                         .values(opens=analyses_table.c.opens + 1, last_opened_at=now))

    def replace_link(self, analysis_id: str, share_token: str,
                     share_key: str) -> tuple[AnalysisRecord, str] | None:
        with self._begin() as conn:
            old = conn.execute(sa.select(handles_table).where(
                handles_table.c.analysis_id == analysis_id)).first()
            if old is None:
                return None
            conn.execute(analyses_table.update().where(analyses_table.c.id == analysis_id)
                         .values(share_token=share_token, share_key=share_key))
            conn.execute(handles_table.delete().where(handles_table.c.handle == old.handle))
            conn.execute(handles_table.insert(), {
                "handle": new_handle(), "dataset_id": old.dataset_id, "name": old.name,
                "created_at": time.time(), "analysis_id": analysis_id})
            record = self._analysis(conn.execute(
                self._select_analyses().where(analyses_table.c.id == analysis_id)).first())
        return record, old.handle

    def _delete_analyses(self, conn: sa.Connection, where: Any) -> tuple[int, tuple[str, ...]]:
        doomed = conn.execute(sa.select(analyses_table.c.id, analyses_table.c.dataset_id)
                              .where(where)).all()
        if not doomed:
            return 0, ()
        ids = [a for a, _ in doomed]
        handles = tuple(conn.execute(handles_table.delete().where(
            handles_table.c.analysis_id.in_(ids)).returning(handles_table.c.handle)).scalars())
        conn.execute(analyses_table.delete().where(analyses_table.c.id.in_(ids)))
        self._delete_unneeded_content(conn, [d for _, d in doomed])
        return len(doomed), handles

    def delete_analysis(self, analysis_id: str) -> tuple[str, ...] | None:
        with self._begin() as conn:
            n, handles = self._delete_analyses(conn, analyses_table.c.id == analysis_id)
        return handles if n else None

    def purge_expired(self, now: float | None = None) -> tuple[str, ...]:
        with self._begin() as conn:
            _, handles = self._delete_analyses(conn, _expired(now or time.time()))
        return handles

    def sweep_unshared(self, older_than: float, limit: int = 500) -> tuple[str, ...]:
        query = sa.select(handles_table.c.handle).where(
            handles_table.c.analysis_id.is_(None), handles_table.c.created_at < older_than
        ).limit(limit)
        if self.dialect == "postgresql":  # a share of one of them waits for this to end
            query = query.with_for_update(skip_locked=True)
        with self._begin() as conn:
            handles = tuple(conn.execute(query).scalars())
            if handles:
                conn.execute(handles_table.delete().where(handles_table.c.handle.in_(handles)))
            # Content no handle and no analysis needs: what the handles above held, and
            # orphans of a save cut short (content stored, its handle never written).
            orphans = conn.execute(sa.select(datasets_table.c.id).where(
                datasets_table.c.created_at < older_than,
                ~sa.exists().where(handles_table.c.dataset_id == datasets_table.c.id),
                ~sa.exists().where(analyses_table.c.dataset_id == datasets_table.c.id))
                .limit(limit)).scalars().all()
            self._delete_unneeded_content(conn, orphans)
        return handles


def _add_missing_columns(conn: sa.Connection) -> None:
    """Columns added to a table after databases were made with it, added to those databases
    (``create_all`` makes missing tables only): ``ALTER TABLE ... ADD COLUMN``, with the
    column's default for the rows already there."""
    for table in _metadata.sorted_tables:
        present = {c["name"] for c in sa.inspect(conn).get_columns(table.name)}
        for column in table.columns:
            if column.name in present:
                continue
            kind = column.type.compile(dialect=conn.dialect)
            default = (f" DEFAULT {column.server_default.arg}"
                       if column.server_default is not None else "")
            null = "" if column.nullable else " NOT NULL"
            conn.execute(sa.text(f'ALTER TABLE {table.name} ADD COLUMN "{column.name}" '
                                 f"{kind}{default}{null}"))


def _give_analyses_their_handles(conn: sa.Connection) -> None:
    """Analyses saved before handles existed get their read-only handle, so their links keep
    working. (Bare data set ids of that time were content hashes, i.e. guessable: they are not
    carried over; their owners upload the file again.)"""
    missing = conn.execute(sa.select(analyses_table.c.id, analyses_table.c.dataset_id,
                                     datasets_table.c.name)
                           .select_from(analyses_table.join(
                               datasets_table, datasets_table.c.id == analyses_table.c.dataset_id))
                           .where(~sa.exists().where(
                               handles_table.c.analysis_id == analyses_table.c.id))).all()
    if missing:
        conn.execute(handles_table.insert(), [
            {"handle": new_handle(), "dataset_id": content, "name": name,
             "created_at": time.time(), "analysis_id": analysis}
            for analysis, content, name in missing])


def _expired(now: float) -> Any:
    """SQL: the analysis has expired by ``now``."""
    return analyses_table.c.expires_at <= now


def _live(now: float) -> Any:
    """SQL: the handle may be read at ``now``: an upload handle always (until the retention
    sweep deletes it), an analysis's read-only handle while the analysis has not expired.

    Expiry is enforced here, at read time, on every route that reads a data set (report,
    CSVs, API, pages, jobs): a link that expired answers as if it were gone at once, not when
    the next purge removes it."""
    unexpired = sa.exists().where(
        analyses_table.c.id == handles_table.c.analysis_id,
        sa.or_(analyses_table.c.expires_at.is_(None), analyses_table.c.expires_at > now))
    return sa.or_(handles_table.c.analysis_id.is_(None), unexpired)


_engines: weakref.WeakSet[sa.Engine] = weakref.WeakSet()
"""Every engine of this process, for :func:`_forget_inherited_connections`."""


def _forget_inherited_connections() -> None:
    """In a forked child: give every engine a new, empty pool without closing the parent's
    connections (``dispose(close=False)``, SQLAlchemy's advice for multiprocessing).

    A pooled connection inherited through ``fork`` is the parent's socket: a Celery pool
    process (forked from the worker that built the app), a job's child process (forked from a
    web worker) or a worker of ``gunicorn --preload`` would talk on it at the same time as its
    parent and the other children, and see the other's transaction state ("can't change
    'autocommit' now: connection in transaction status INTRANS"). psycopg does not close a
    connection it did not open in this process when the old pool is garbage collected."""
    for engine in list(_engines):
        try:
            engine.dispose(close=False)
        except Exception:  # noqa: BLE001, S110 - the child must start even so
            pass


os.register_at_fork(after_in_child=_forget_inherited_connections)


def _sqlite_pragmas(dbapi_connection: Any, _record: Any) -> None:
    # WAL lets readers (every worker's page views) proceed while one worker writes.
    cursor = dbapi_connection.cursor()
    cursor.execute("PRAGMA journal_mode=WAL")
    cursor.execute("PRAGMA busy_timeout=30000")
    cursor.close()
