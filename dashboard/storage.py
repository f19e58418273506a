"""Where uploaded data sets live: a small interface and its embedded default (SQLite + files).

A data set is identified by a content hash: the SHA-256 of the uploaded bytes combined with the
loader options and the file's format suffix, so the same file read the same way is stored once,
whoever uploads it and under whatever name. The loader (:func:`costdash.load_predictions`) runs
once, at upload; what is kept is the *normalised* data (labels as booleans, scores as float64,
fold codes) as one Parquet file, which reads back in a fraction of the time the original CSV
would take and never needs the loader options again. Nothing is pickled.

The SQL is kept portable (``?`` placeholders rewritten in one place, ``ON CONFLICT DO NOTHING``)
so a PostgreSQL implementation can share it behind the same interface.
"""

from __future__ import annotations

import hashlib
import io
import json
import os
import re
import sqlite3
import time
from abc import ABC, abstractmethod
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from dataclasses import asdict, dataclass, field
from pathlib import Path, PurePath
from typing import IO, Any

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq

from costdash.dataset import CountedClassifier, Dataset, ScoredClassifier
from costdash.errors import CostdashError, ParameterError

__all__ = ["DatasetNotFound", "DatasetRecord", "DatasetStore", "LoaderOptions",
           "SqliteDatasetStore", "dataset_from_tables", "dataset_to_tables", "make_store"]

_ID_PATTERN = re.compile(r"^[0-9a-f]{32}$")
_CHUNK = 1 << 20
_FORMAT_VERSION = 1


class DatasetNotFound(CostdashError, KeyError):
    """No stored data set has this id."""

    def __str__(self) -> str:  # KeyError would quote the message
        return str(self.args[0]) if self.args else "data set not found"


# --- loader options -------------------------------------------------------------------------------

_TRUE = {"1", "true", "yes", "on"}
_FALSE = {"", "0", "false", "no", "off"}


@dataclass(frozen=True)
class LoaderOptions:
    """The options of :func:`costdash.load_predictions` that change what a file means.

    Named like the command line's options (``--label-column`` is ``label_column``); form fields
    of the upload route may use either spelling.
    """

    layout: str = "auto"
    label_column: str | None = None
    model_column: str | None = None
    score_column: str | None = None
    fold_column: str | None = None
    positive: str | None = None
    models: tuple[str, ...] | None = None
    drop_missing: bool = False

    @classmethod
    def from_form(cls, form: Mapping[str, Any]) -> LoaderOptions:
        """Options from form fields (a werkzeug ``MultiDict`` or a plain dict of strings).

        ``models`` may be repeated or comma-separated. Unknown fields raise
        :class:`~costdash.errors.ParameterError` naming the known ones.
        """
        known = {f for f in cls.__dataclass_fields__}
        values: dict[str, Any] = {}
        for raw_key in form:
            key = raw_key.replace("-", "_").lstrip("_")
            if key not in known:
                raise ParameterError(f"unknown loader option '{raw_key}'; known options: "
                                     f"{', '.join(sorted(known))}")
            getlist = getattr(form, "getlist", None)
            items = [str(v) for v in (getlist(raw_key) if getlist else [form[raw_key]])]
            if key == "models":
                names = [m.strip() for item in items for m in item.split(",") if m.strip()]
                values[key] = tuple(names) or None
            elif key == "drop_missing":
                text = items[-1].strip().lower()
                if text not in _TRUE | _FALSE:
                    raise ParameterError(f"drop_missing must be true or false, not '{items[-1]}'")
                values[key] = text in _TRUE
            else:
                text = items[-1].strip()
                values[key] = text or None
        if values.get("layout") is None:
            values["layout"] = "auto"
        return cls(**values)

    def as_kwargs(self) -> dict[str, Any]:
        """Keyword arguments for :func:`costdash.load_predictions`."""
        kwargs = asdict(self)
        kwargs["models"] = list(self.models) if self.models else None
        return kwargs

    def canonical(self) -> str:
        """A stable text form: equal options give equal text (part of the data set id)."""
        return json.dumps(self.as_kwargs(), sort_keys=True, separators=(",", ":"))


# --- records and the interface --------------------------------------------------------------------

@dataclass(frozen=True)
class DatasetRecord:
    """What the index knows about a stored data set (no arrays)."""

    id: str
    name: str
    sha256: str
    options: LoaderOptions
    layout: str
    positive_label: str
    n: int
    n_pos: int
    n_neg: int
    classifiers: tuple[str, ...]
    size_bytes: int
    created_at: float
    dataset: Dataset | None = field(default=None, compare=False, repr=False)
    """The loaded data set when :meth:`DatasetStore.put` just read it (not persisted)."""

    def summary(self) -> dict[str, Any]:
        """The upload route's JSON reply."""
        return {"id": self.id, "name": self.name, "n": self.n,
                "classifiers": list(self.classifiers)}


def dataset_id(sha256: str, options: LoaderOptions, filename: str) -> str:
    """The content-hash id: raw bytes, loader options and the format-relevant file suffix."""
    suffix = "".join(PurePath(filename.lower()).suffixes[-2:])
    key = f"costdash-dataset-v1\n{sha256}\n{options.canonical()}\n{suffix}"
    return hashlib.sha256(key.encode()).hexdigest()[:32]


def valid_id(value: object) -> bool:
    return isinstance(value, str) and bool(_ID_PATTERN.match(value))


class DatasetStore(ABC):
    """Keeps uploaded data sets, each once per content hash.

    Implementations: :class:`SqliteDatasetStore` (embedded default); a PostgreSQL one will sit
    behind the same four methods.
    """

    max_bytes: int

    @abstractmethod
    def put(self, source: bytes | str | os.PathLike[str], filename: str,
            options: LoaderOptions | None = None, *, sha256: str | None = None) -> DatasetRecord:
        """Store a predictions file and return its record.

        ``source`` is the raw bytes or the path of a file holding them; ``sha256`` their hash when
        the caller already computed it while receiving them. A file already stored (same bytes,
        options and format) is not read again; its existing record comes back.

        Raises
        ------
        InputFileError, ParameterError
            The loader's own errors, whose messages are meant for the user.
        """

    @abstractmethod
    def get(self, dataset_id: str) -> Dataset:
        """The stored data set; :class:`DatasetNotFound` when there is none with this id."""

    @abstractmethod
    def info(self, dataset_id: str) -> DatasetRecord | None:
        """The record of a stored data set, or None."""

    def exists(self, dataset_id: str) -> bool:
        return self.info(dataset_id) is not None


def make_store(settings: Any) -> DatasetStore:
    """The store the settings ask for (only the embedded default exists so far)."""
    if getattr(settings, "database_url", None):
        raise NotImplementedError("COSTDASH_DATABASE_URL is not supported yet; unset it to use "
                                  "the embedded SQLite store")
    return SqliteDatasetStore(settings.data_dir, max_bytes=settings.max_upload_bytes)


# --- Dataset <-> Arrow tables ---------------------------------------------------------------------

def _shares_rows(scored: tuple[ScoredClassifier, ...]) -> bool:
    first = scored[0]
    return all(c.y_true is first.y_true or (c.y_true.shape == first.y_true.shape
                                             and np.array_equal(c.y_true, first.y_true))
               for c in scored[1:]) and all(
        (c.fold is None) == (first.fold is None)
        and (c.fold is None or c.fold is first.fold or np.array_equal(c.fold, first.fold))
        for c in scored[1:])


def dataset_to_tables(ds: Dataset) -> tuple[dict[str, Any], dict[str, pa.Table]]:
    """The data set as Arrow tables plus a JSON-able description of how to read them back.

    Scored classifiers sharing their rows (the wide layout) become one table with a label column,
    an optional fold column and one score column per classifier (named by position, so any
    classifier name is safe); otherwise one long table with a model code per row. Counted
    classifiers become one table of confusion matrices.
    """
    meta: dict[str, Any] = {
        "format": _FORMAT_VERSION, "source": ds.source, "layout": ds.layout,
        "positive_label": ds.positive_label, "fold_labels": list(ds.fold_labels),
        "scored": [c.name for c in ds.scored], "counted": [c.name for c in ds.counted],
        "scored_shape": None, "counted_thresholds": [c.threshold is not None for c in ds.counted],
    }
    tables: dict[str, pa.Table] = {}
    if ds.scored:
        has_fold = ds.scored[0].fold is not None
        if _shares_rows(ds.scored):
            meta["scored_shape"] = "wide"
            cols = {"y_true": pa.array(ds.scored[0].y_true, pa.bool_())}
            if has_fold:
                cols["fold"] = pa.array(ds.scored[0].fold.astype(np.int32))
            for i, c in enumerate(ds.scored):
                cols[f"s{i}"] = pa.array(c.score, pa.float64())
        else:
            meta["scored_shape"] = "long"
            sizes = [c.y_true.size for c in ds.scored]
            cols = {
                "model": pa.array(np.repeat(np.arange(len(sizes), dtype=np.int32), sizes)),
                "y_true": pa.array(np.concatenate([c.y_true for c in ds.scored]), pa.bool_()),
                "score": pa.array(np.concatenate([c.score for c in ds.scored]), pa.float64()),
            }
            if has_fold:
                cols["fold"] = pa.array(np.concatenate([c.fold for c in ds.scored])
                                        .astype(np.int32))
        tables["scored"] = pa.table(cols)
    if ds.counted:
        sizes = [c.tp.size for c in ds.counted]
        thresholds = [c.threshold if c.threshold is not None else np.full(c.tp.size, np.nan)
                      for c in ds.counted]
        tables["counted"] = pa.table({
            "model": pa.array(np.repeat(np.arange(len(sizes), dtype=np.int32), sizes)),
            **{k: pa.array(np.concatenate([getattr(c, k) for c in ds.counted]).astype(np.int64))
               for k in ("tp", "fp", "fn", "tn")},
            "threshold": pa.array(np.concatenate(thresholds), pa.float64()),
        })
    return meta, tables


def _np(table: pa.Table, name: str) -> np.ndarray:
    return table.column(name).to_numpy()


def dataset_from_tables(meta: dict[str, Any], tables: dict[str, pa.Table]) -> Dataset:
    """Inverse of :func:`dataset_to_tables`."""
    scored: list[ScoredClassifier] = []
    counted: list[CountedClassifier] = []
    if meta["scored"]:
        t = tables["scored"]
        has_fold = "fold" in t.column_names
        if meta["scored_shape"] == "wide":
            y = _np(t, "y_true").astype(bool)
            fold = _np(t, "fold").astype(np.int64) if has_fold else None
            scored = [ScoredClassifier(name, y, np.ascontiguousarray(_np(t, f"s{i}"),
                                                                     dtype=np.float64), fold)
                      for i, name in enumerate(meta["scored"])]
        else:
            model = _np(t, "model")
            y, score = _np(t, "y_true").astype(bool), _np(t, "score").astype(np.float64)
            fold = _np(t, "fold").astype(np.int64) if has_fold else None
            bounds = np.searchsorted(model, np.arange(len(meta["scored"]) + 1))
            for i, name in enumerate(meta["scored"]):
                s = slice(bounds[i], bounds[i + 1])
                scored.append(ScoredClassifier(name, y[s].copy(), score[s].copy(),
                                               None if fold is None else fold[s].copy()))
    if meta["counted"]:
        t = tables["counted"]
        model = _np(t, "model")
        bounds = np.searchsorted(model, np.arange(len(meta["counted"]) + 1))
        arrays = {k: _np(t, k).astype(np.int64) for k in ("tp", "fp", "fn", "tn")}
        thr = _np(t, "threshold").astype(np.float64)
        for i, name in enumerate(meta["counted"]):
            s = slice(bounds[i], bounds[i + 1])
            counted.append(CountedClassifier(
                name, *(arrays[k][s].copy() for k in ("tp", "fp", "fn", "tn")),
                threshold=thr[s].copy() if meta["counted_thresholds"][i] else None))
    return Dataset(source=meta["source"], layout=meta["layout"],
                   positive_label=meta["positive_label"], scored=tuple(scored),
                   counted=tuple(counted), fold_labels=tuple(meta["fold_labels"]))


# --- the embedded default -------------------------------------------------------------------------

_SCHEMA = """
CREATE TABLE IF NOT EXISTS datasets (
    id TEXT PRIMARY KEY,
    name TEXT NOT NULL,
    raw_sha256 TEXT NOT NULL,
    options TEXT NOT NULL,
    layout TEXT NOT NULL,
    positive_label TEXT NOT NULL,
    n BIGINT NOT NULL,
    n_pos BIGINT NOT NULL,
    n_neg BIGINT NOT NULL,
    classifiers TEXT NOT NULL,
    meta TEXT NOT NULL,
    blob TEXT NOT NULL,
    size_bytes BIGINT NOT NULL,
    created_at DOUBLE PRECISION NOT NULL
)
"""
_COLUMNS = ("id", "name", "raw_sha256", "options", "layout", "positive_label", "n", "n_pos",
            "n_neg", "classifiers", "meta", "blob", "size_bytes", "created_at")


def _sha256_of(source: bytes | str | os.PathLike[str]) -> str:
    h = hashlib.sha256()
    if isinstance(source, bytes):
        h.update(source)
    else:
        with open(source, "rb") as f:
            while chunk := f.read(_CHUNK):
                h.update(chunk)
    return h.hexdigest()


class SqliteDatasetStore(DatasetStore):
    """SQLite index plus one Parquet file per data set under ``data_dir``.

    Layout::

        data_dir/costdash.sqlite3          the index (table ``datasets``)
        data_dir/datasets/ab/<id>.scored.parquet   normalised scores (and .counted.parquet)

    Safe with several processes on one host: files are written under a temporary name and
    renamed into place, and the index insert ignores a row that another worker inserted first.
    """

    placeholder = "?"

    def __init__(self, data_dir: str | os.PathLike[str], *, max_bytes: int = 200 * 1024**2):
        self.data_dir = Path(data_dir)
        self.max_bytes = int(max_bytes)
        self.files_dir = self.data_dir / "datasets"
        self.files_dir.mkdir(parents=True, exist_ok=True)
        self.db_path = self.data_dir / "costdash.sqlite3"
        with self._connect() as db:
            db.execute(_SCHEMA)

    @contextmanager
    def _connect(self) -> Iterator[sqlite3.Connection]:
        db = sqlite3.connect(self.db_path, timeout=30)
        try:
            db.execute("PRAGMA journal_mode=WAL")
            with db:
                yield db
        finally:
            db.close()

    def _sql(self, query: str) -> str:
        return query.replace("?", self.placeholder)

    # interface ---------------------------------------------------------------------------------

    def put(self, source: bytes | str | os.PathLike[str] | IO[bytes], filename: str,
            options: LoaderOptions | None = None, *, sha256: str | None = None) -> DatasetRecord:
        from costdash.io import load_predictions

        options = options or LoaderOptions()
        if hasattr(source, "read"):
            source = source.read()
        sha256 = sha256 or _sha256_of(source)
        ds_id = dataset_id(sha256, options, filename)
        existing = self.info(ds_id)
        if existing is not None:
            return existing
        raw = source if isinstance(source, bytes) else Path(source)
        size = len(raw) if isinstance(raw, bytes) else raw.stat().st_size
        dataset = load_predictions(io.BytesIO(raw) if isinstance(raw, bytes) else raw,
                                   name=filename, max_bytes=self.max_bytes,
                                   **options.as_kwargs())
        meta, tables = dataset_to_tables(dataset)
        blob = f"{ds_id[:2]}/{ds_id}"
        (self.files_dir / ds_id[:2]).mkdir(parents=True, exist_ok=True)
        for part, table in tables.items():
            final = self.files_dir / f"{blob}.{part}.parquet"
            tmp = final.with_name(f".{final.name}.{os.getpid()}.{time.time_ns()}")
            pq.write_table(table, tmp, compression="zstd")
            os.replace(tmp, final)
        record = DatasetRecord(
            id=ds_id, name=filename, sha256=sha256, options=options, layout=dataset.layout,
            positive_label=dataset.positive_label, n=dataset.n, n_pos=dataset.n_pos,
            n_neg=dataset.n_neg, classifiers=dataset.names, size_bytes=size,
            created_at=time.time(), dataset=dataset)
        row = (record.id, record.name, record.sha256, options.canonical(), record.layout,
               record.positive_label, record.n, record.n_pos, record.n_neg,
               json.dumps(list(record.classifiers)), json.dumps(meta), blob, size,
               record.created_at)
        with self._connect() as db:
            db.execute(self._sql(f"INSERT INTO datasets ({', '.join(_COLUMNS)}) VALUES "
                                 f"({', '.join('?' * len(_COLUMNS))}) "
                                 "ON CONFLICT (id) DO NOTHING"), row)
        return record

    def _row(self, dataset_id: str) -> tuple | None:
        if not valid_id(dataset_id):
            return None
        with self._connect() as db:
            return db.execute(self._sql(f"SELECT {', '.join(_COLUMNS)} FROM datasets "
                                        "WHERE id = ?"), (dataset_id,)).fetchone()

    def info(self, dataset_id: str) -> DatasetRecord | None:
        row = self._row(dataset_id)
        if row is None:
            return None
        r = dict(zip(_COLUMNS, row))
        opts = json.loads(r["options"])
        opts["models"] = tuple(opts["models"]) if opts.get("models") else None
        return DatasetRecord(
            id=r["id"], name=r["name"], sha256=r["raw_sha256"], options=LoaderOptions(**opts),
            layout=r["layout"], positive_label=r["positive_label"], n=int(r["n"]),
            n_pos=int(r["n_pos"]), n_neg=int(r["n_neg"]),
            classifiers=tuple(json.loads(r["classifiers"])), size_bytes=int(r["size_bytes"]),
            created_at=float(r["created_at"]))

    def get(self, dataset_id: str) -> Dataset:
        row = self._row(dataset_id)
        if row is None:
            raise DatasetNotFound(f"no data set with id '{dataset_id}' is stored here; "
                                  "upload the file again")
        r = dict(zip(_COLUMNS, row))
        meta = json.loads(r["meta"])
        tables = {}
        for part in ("scored", "counted"):
            if meta[part]:
                tables[part] = pq.read_table(self.files_dir / f"{r['blob']}.{part}.parquet")
        return dataset_from_tables(meta, tables)
