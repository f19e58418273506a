"""The bundled demos as shared data sets: one upload handle per demo for every visitor.

Each click on a demo button used to store the demo again under a new upload handle, with no key
and no limit, and every per-data-set cap (jobs at once, jobs an hour) counted per handle: 70
anonymous band jobs over 50 demo handles filled Redis in a minute (issue 22, finding 6). Now a
demo is stored once, under one handle recorded in the ``demo_handles`` table of the SQL store
(:mod:`dashboard.storage.sharedstate`), which every process and host reads; so the caps of that handle
bound what all visitors of a demo start together. Its handle cannot be deleted through the API
(:func:`dashboard.limits.install_limits` refuses it). The upload retention counts from a handle's
last upload: a click on a demo whose handle is older than :data:`REFRESH_AFTER` counts as one, so
a demo in use is never swept; one nobody opened for the whole retention is swept like any upload,
and the next click stores it again **under the same handle** (links and views that name it work
again, and its caps stay one set).
"""

from __future__ import annotations

import time

import sqlalchemy as sa

from costdash.demo import DEMOS
from dashboard.storage.sharedstate import demo_handles_table, transaction, upsert
from dashboard.storage.sql import handles_table
from dashboard.storage.records import DatasetRecord, LoaderOptions, valid_id
from dashboard.storage.sql import SqlStore

__all__ = ["REFRESH_AFTER", "is_demo_handle", "shared_demo"]

REFRESH_AFTER = 86_400.0
"""Seconds after which a click on a demo renews its handle's upload time (one ``UPDATE`` a day
at most, instead of a write per click)."""


def _renew(store: SqlStore, handle: str, now: float) -> None:
    """Count a click as the demo's upload when the last one is :data:`REFRESH_AFTER` old."""
    with transaction(store) as conn:
        conn.execute(handles_table.update().where(
            handles_table.c.handle == handle, handles_table.c.analysis_id.is_(None),
            handles_table.c.created_at < now - REFRESH_AFTER).values(created_at=now))


def _recreate(store: SqlStore, name: str, handle: str) -> DatasetRecord | None:
    """Store demo ``name`` again under its recorded ``handle`` (swept by the retention); None
    when the handle names something else now."""
    record = store.put(DEMOS[name].path, f"{name}.csv", LoaderOptions())
    try:
        with transaction(store) as conn:
            conn.execute(handles_table.update().where(handles_table.c.handle == record.id)
                         .values(handle=handle))
    except sa.exc.IntegrityError:  # another process re-created it first: keep theirs
        store.discard_dataset(record.id)
    return store.info(handle)


def shared_demo(store: SqlStore, name: str) -> DatasetRecord:
    """The record of demo ``name`` under its one shared handle (stored on first use).

    Parameters
    ----------
    store : SqlStore
        The app's store.
    name : str
        A key of :data:`costdash.demo.DEMOS`.

    Returns
    -------
    DatasetRecord
        Through the demo's handle; ``dataset`` is set when this call stored it.
    """
    demo = DEMOS[name]
    t = demo_handles_table
    with transaction(store) as conn:
        kept = conn.execute(sa.select(t.c.handle).where(t.c.name == name)).scalar()
    if kept is not None:
        record = store.info(kept)
        if record is not None:
            _renew(store, kept, time.time())
            return record
        record = _recreate(store, name, kept)
        if record is not None:
            return record
    record = store.put(demo.path, f"{name}.csv", LoaderOptions())
    # Record the new handle, unless another process recorded a live one meanwhile (only the
    # handle seen dead above, or none, is replaced).
    with transaction(store) as conn:
        conn.execute(upsert(store, t).values(name=name, handle=record.id).on_conflict_do_update(
            index_elements=[t.c.name], set_={"handle": record.id},
            where=t.c.handle == (kept or "")))
        winner = conn.execute(sa.select(t.c.handle).where(t.c.name == name)).scalar_one()
    if winner == record.id:
        return record
    store.discard_dataset(record.id)  # the content stays: the winner's handle needs it
    return store.info(winner) or record


def is_demo_handle(store: SqlStore, handle: str) -> bool:
    """Whether ``handle`` is the shared handle of a demo."""
    if not valid_id(handle):
        return False
    t = demo_handles_table
    with transaction(store) as conn:
        return conn.execute(sa.select(t.c.name).where(t.c.handle == handle)).first() is not None
