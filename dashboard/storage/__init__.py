"""Where uploaded data sets and shared analyses live: small interfaces, one SQL implementation.

Clients never see how a data set is stored; they hold **handles**. Every upload gets its own
unguessable handle (128 random bits), which grants that upload and nothing else, and every
saved analysis gets a read-only handle of its own, which lives exactly as long as the analysis.
Behind the handles, the bytes are stored once by a content hash (the SHA-256 of the uploaded
bytes combined with the loader options and the file's format suffix), so the same file read the
same way is stored once, whoever uploads it; the content hash never leaves storage. That
way nobody can test whether a file was uploaded, learn another uploader's file name, or delete
more than they hold: deleting a handle removes the stored data only when no other handle and no
analysis needs it. The loader (:func:`costdash.load_predictions`) runs
once, at upload; what is kept is the *normalised* data (labels as booleans, scores as float64,
fold codes) as one Parquet file, which reads back in a fraction of the time the original CSV
would take and never needs the loader options again. Nothing is pickled.

The parts: :mod:`dashboard.storage.records` (the records, the interfaces and their errors),
:mod:`dashboard.storage.tables` (a data set as Arrow tables) and :mod:`dashboard.storage.sql` (the one
implementation, :class:`SqlStore`: SQLite by default, PostgreSQL when several hosts share the
data, chosen by one URL, :func:`database_url`); everything else imports them from here.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from dashboard.storage.records import (AnalysisRecord, AnalysisStore, DatasetNotFound,
                                       DatasetRecord, DatasetStore, LoaderOptions, StorageFull,
                                       StorageUnavailable, Store, dataset_id, new_handle, valid_id)
from dashboard.storage.sql import SqlStore
from dashboard.storage.tables import dataset_from_tables, dataset_to_tables

__all__ = ["AnalysisRecord", "AnalysisStore", "DatasetNotFound", "DatasetRecord", "DatasetStore",
           "LoaderOptions", "SqlStore", "StorageFull", "StorageUnavailable", "Store",
           "dataset_from_tables", "dataset_id", "dataset_to_tables", "database_url", "make_store",
           "new_handle", "valid_id"]


def database_url(settings: Any) -> str:
    """The SQLAlchemy URL the settings ask for: ``COSTDASH_DATABASE_URL`` or the SQLite file."""
    url = getattr(settings, "database_url", None)
    if not url:
        return f"sqlite:///{Path(settings.data_dir).resolve() / 'costdash.db'}"
    for prefix in ("postgres://", "postgresql://"):  # psycopg 3, not the SQLAlchemy default
        if url.startswith(prefix):
            return "postgresql+psycopg://" + url[len(prefix):]
    if url.startswith(("postgresql+psycopg://", "sqlite:///")):
        return url
    raise ValueError("COSTDASH_DATABASE_URL must be postgresql://user@host:port/db or "
                     f"sqlite:///path, not {url.split('@')[-1]!r}")


def make_store(settings: Any) -> Store:
    """The store the settings ask for (see :func:`database_url`)."""
    Path(settings.data_dir).mkdir(parents=True, exist_ok=True)
    return SqlStore(database_url(settings), max_bytes=settings.max_upload_bytes,
                    max_rows=settings.max_rows, max_classifiers=settings.max_classifiers)
