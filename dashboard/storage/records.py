"""What storage promises, whatever holds the data: the records of a stored data set and of a
saved analysis, the loader options an upload is read with, handles and their check, the errors
of an unavailable or full store, and the interfaces (:class:`DatasetStore`,
:class:`AnalysisStore`; :class:`Store`, both) that :mod:`dashboard.storage.sql` implements.
Import them from :mod:`dashboard.storage`."""

from __future__ import annotations

import hashlib
import json
import os
import re
import secrets
import time
from abc import ABC, abstractmethod
from collections.abc import Mapping
from dataclasses import asdict, dataclass, field
from pathlib import PurePath
from typing import Any

from costdash.dataset import Dataset
from costdash.errors import CostdashError, ParameterError

_ID_PATTERN = re.compile(r"^[0-9a-f]{32}$")


class DatasetNotFound(CostdashError, KeyError):
    """No stored data set has this id."""

    def __str__(self) -> str:  # KeyError would quote the message
        return str(self.args[0]) if self.args else "data set not found"


class StorageUnavailable(CostdashError):
    """The database cannot be reached (or refused the connection); nothing was changed.

    A :class:`CostdashError`, so a page callback shows its message; HTTP routes answer 503
    for it (``dashboard.responses``), never the 400 of other such errors."""


class StorageFull(StorageUnavailable):
    """The disk under the database (or the upload's temp file) is full; nothing was changed.

    A :class:`StorageUnavailable`, so every path that lets an outage through lets this through
    too; HTTP routes answer 507 and say the disk is full, not that the database is away."""


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
    target_class: str | None = None
    """One-vs-rest on a multiclass file: this class against the rest. A property of the data
    set, not of a view: it decides what y_true and the scores are, so it is part of the id."""
    segment_column: str | None = None
    """A column of each row's segment (region, product, site), kept with the data set."""

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
        kwargs = self.as_kwargs()
        for later in ("target_class", "segment_column"):  # unset: the ids they had before
            if kwargs[later] is None:
                del kwargs[later]
        return json.dumps(kwargs, sort_keys=True, separators=(",", ":"))


# --- records and the interface --------------------------------------------------------------------

@dataclass(frozen=True)
class DatasetRecord:
    """What the index knows about a stored data set, as seen through one handle (no arrays).

    ``id`` is the handle (what clients hold), ``name`` the file name its uploader gave.
    """

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
    stored: bool = field(default=False, compare=False)
    """True when :meth:`DatasetStore.put` stored the content in this call; False when it was
    there already, or another process stored the same file meanwhile."""
    analysis_id: str | None = None
    """Set when ``id`` is the read-only handle of a saved analysis: it grants that analysis's
    view of the data (pages, bounded cached jobs), not the data set API or new shares."""

    @property
    def read_only(self) -> bool:
        return self.analysis_id is not None

    @property
    def prevalence(self) -> float:
        """The data's prevalence, exactly as :attr:`costdash.dataset.Dataset.prevalence`
        computes it (``n_pos / n``), without loading the data."""
        return self.n_pos / self.n

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


def new_handle() -> str:
    """An unguessable handle: 128 random bits as 32 hex digits (the id format of the view)."""
    return secrets.token_hex(16)


class DatasetStore(ABC):
    """Keeps uploaded data sets behind handles (each content stored once)."""

    max_bytes: int

    @abstractmethod
    def put(self, source: bytes | str | os.PathLike[str], filename: str,
            options: LoaderOptions | None = None, *, sha256: str | None = None) -> DatasetRecord:
        """Store a predictions file and return its record under a new handle.

        ``source`` is the raw bytes or the path of a file holding them; ``sha256`` their hash when
        the caller already computed it while receiving them. A file already stored (same bytes,
        options and format) is not read again; every call returns a new handle all the same.

        Raises
        ------
        InputFileError, ParameterError
            The loader's own errors, whose messages are meant for the user.
        StorageUnavailable
            The database cannot be reached; nothing was stored.
        """

    @abstractmethod
    def get(self, dataset_id: str) -> Dataset:
        """The data set behind a live handle; :class:`DatasetNotFound` otherwise."""

    @abstractmethod
    def info(self, dataset_id: str) -> DatasetRecord | None:
        """The record behind a live handle, or None."""

    def exists(self, dataset_id: str) -> bool:
        return self.info(dataset_id) is not None

    @abstractmethod
    def ping(self) -> None:
        """Raise :class:`StorageUnavailable` unless the database answers."""

    @abstractmethod
    def discard_dataset(self, dataset_id: str) -> bool:
        """Delete an upload handle, and the stored data when nothing else needs it; whether the
        handle was deleted (a read-only handle of an analysis is not: delete the analysis)."""


@dataclass(frozen=True)
class AnalysisRecord:
    """A saved analysis: a stored data set and the view its uploader settled on.

    The share token is the secret in the read-only link; the manage token is never stored, only
    its SHA-256 (``manage_key``), so a leaked database does not hand out delete rights.
    ``dataset_id`` is the analysis's own read-only handle (:attr:`DatasetRecord.read_only`),
    never the uploader's: the link's pages read the data through it, and it dies with the
    analysis.
    """

    id: str
    name: str
    dataset_id: str
    view: Mapping[str, Any]
    share_token: str
    """The read-only link's token; empty once the owner revoked the link."""
    manage_key: str
    created_at: float
    expires_at: float | None
    opens: int = 0
    """How many times the read-only link was opened (its pages and its API reads)."""
    last_opened_at: float | None = None

    def expired(self, now: float | None = None) -> bool:
        return self.expires_at is not None and self.expires_at <= (now or time.time())

    @property
    def revoked(self) -> bool:
        """The owner closed the read-only link (the analysis stays; a new link may follow)."""
        return not self.share_token


class AnalysisStore(ABC):
    """Keeps saved analyses (rows pointing at stored data sets)."""

    @abstractmethod
    def add_analysis(self, record: AnalysisRecord, share_key: str) -> AnalysisRecord:
        """Insert a new analysis of the upload handle ``record.dataset_id``; ``share_key`` is
        the SHA-256 of its share token. Returns it as stored: with its own read-only handle as
        ``dataset_id``. :class:`DatasetNotFound` when the handle is not a live upload handle."""

    @abstractmethod
    def find_analysis(self, *, id: str | None = None, share_key: str | None = None,
                      manage_key: str | None = None) -> AnalysisRecord | None:
        """The analysis with this id, share-token hash or manage-token hash (expired included)."""

    @abstractmethod
    def update_analysis(self, analysis_id: str, *, name: str | None = None,
                        expires_at: float | None | type[Ellipsis] = ...) -> AnalysisRecord | None:
        """Rename and/or set the expiry (``None`` clears it); None when there is no such row."""

    @abstractmethod
    def delete_analysis(self, analysis_id: str) -> tuple[str, ...] | None:
        """Delete an analysis and its read-only handle and, in the same transaction, the stored
        data when nothing else needs it. Returns the handles that went (None when there was no
        such analysis)."""

    @abstractmethod
    def purge_expired(self, now: float | None = None) -> tuple[str, ...]:
        """Delete expired analyses (and data only they needed); returns the handles that went."""

    @abstractmethod
    def record_open(self, share_key: str, now: float) -> None:
        """Count one opening of the read-only link whose token hashes to ``share_key``, at
        ``now`` (a counter and a time stamp: nothing about who opened it)."""

    @abstractmethod
    def replace_link(self, analysis_id: str, share_token: str,
                     share_key: str) -> tuple[AnalysisRecord, str] | None:
        """Give the analysis a new read-only link (``share_token``, empty to revoke it, and the
        hash ``share_key`` it is found by) and a new read-only handle, in one transaction: the
        old link and everything it reached answer as gone. Returns the record and the old
        handle, or None when there is no such analysis."""


class Store(DatasetStore, AnalysisStore):
    """Data sets and the analyses that point at them, in one database: the store the app's
    :class:`~dashboard.services.Services` hold (:class:`SqlStore` is the one implementation)."""

    @abstractmethod
    def sweep_unshared(self, older_than: float, limit: int = 500) -> tuple[str, ...]:
        """Delete upload handles (last) used before ``older_than`` (a time stamp), and stored
        data nothing needs any more (orphans of a save cut short included); at most ``limit``
        handles per call; returns them."""

    def dispose(self) -> None:
        """Drop pooled connections (before a fork: the children open their own)."""
