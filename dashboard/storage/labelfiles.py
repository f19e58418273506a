"""Where the Multiclass page keeps uploaded label files: in the SQL store's database (the
``label_files`` table of :mod:`dashboard.storage.sharedstate`), each upload under a handle of its own
(256 random bits), so any web process and any replica runs a file the browser refers to by
``{"sha", "name"}`` (``sha`` holds the handle). They used to be files in each replica's own
data dir, so behind a round-robin proxy a run failed about half the time (issue 22, finding 8).

A handle, not the content's hash: knowing a file's hash must not tell whether someone uploaded
it (issue 11, finding 3). A file is **read and validated before it is kept**
(:func:`costdash.multiclass.load_label_predictions`): a file the page cannot run is never
stored. It is stored in one ``INSERT``, so a full disk (:class:`~dashboard.storage.StorageFull`)
leaves nothing behind; files are swept after the upload retention. The bundled demo is never
stored: its reference is :data:`DEMO_HANDLE`, read from the package.

Label files are small (the page takes at most 20 MB); the data sets of the other pages live in
:mod:`dashboard.storage`.
"""

from __future__ import annotations

import io
import re
import secrets
import time

import sqlalchemy as sa

from costdash.errors import InputFileError
from costdash.multiclass import LabelPredictions, load_label_predictions
from dashboard.storage.sharedstate import label_files_table, transaction
from dashboard.storage.sql import SqlStore

__all__ = ["DEMO_HANDLE", "LabelFiles"]

_SHA = re.compile(r"^[0-9a-f]{64}$")

DEMO_HANDLE = "demo"
"""The reference of the bundled demo file (read from the package, never stored)."""


class LabelFiles:
    """Label files in the store's database, each named by its upload's handle."""

    def __init__(self, store: SqlStore):
        self.store = store

    @staticmethod
    def check(sha: object) -> str:
        """``sha`` when it is a handle's form; InputFileError otherwise."""
        if not isinstance(sha, str) or not _SHA.match(sha):
            raise InputFileError("the label file reference is invalid; upload the file again")
        return sha

    def put(self, raw: bytes, name: str) -> tuple[str, LabelPredictions]:
        """Read ``raw`` as a label file named ``name`` (InputFileError naming it when it
        cannot be run), then keep it; returns its new handle and what it holds.

        Raises :class:`~dashboard.storage.StorageFull` on a full disk, with nothing kept."""
        data = load_label_predictions(io.BytesIO(raw), name=name)
        handle = secrets.token_hex(32)
        with transaction(self.store) as conn:
            conn.execute(label_files_table.insert().values(
                handle=handle, name=name, content=bytes(raw), size_bytes=len(raw),
                created_at=time.time()))
        return handle, data

    def get(self, sha: object) -> bytes | None:
        """The bytes of file ``sha``; None when it is not stored (swept, or never was)."""
        t = label_files_table
        with transaction(self.store) as conn:
            return conn.execute(sa.select(t.c.content).where(t.c.handle == self.check(sha))
                                ).scalar()

    def exists(self, sha: object) -> bool:
        t = label_files_table
        with transaction(self.store) as conn:
            return conn.execute(sa.select(t.c.handle).where(t.c.handle == self.check(sha))
                                ).first() is not None

    def count(self) -> int:
        with transaction(self.store) as conn:
            return int(conn.execute(sa.select(sa.func.count()).select_from(label_files_table)
                                    ).scalar_one())

    def sweep(self, retention_days: float, now: float | None = None) -> int:
        """Delete label files uploaded more than ``retention_days`` ago (0: keep them); how
        many went."""
        if not retention_days or retention_days <= 0:
            return 0
        cutoff = (time.time() if now is None else now) - retention_days * 86400
        t = label_files_table
        with transaction(self.store) as conn:
            return conn.execute(t.delete().where(t.c.created_at < cutoff)).rowcount
