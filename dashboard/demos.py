"""The bundled demos as shared data sets: one upload handle per demo for every visitor.

Each click on a demo button used to store the demo again under a new upload handle, with no key
and no limit, and every per-data-set cap (jobs at once, jobs an hour) counted per handle: 70
anonymous band jobs over 50 demo handles filled Redis in a minute (issue 22, finding 6). Now a
demo is stored once, under one handle recorded in the ``demo_handles`` table of the SQL store
(:mod:`dashboard.sharedstate`), which every process and host reads; so the caps of that handle
bound what all visitors of a demo start together. Its handle cannot be deleted through the API
(:func:`dashboard.limits.install_limits` refuses it). When the handle is gone all the same (the
upload retention swept it), the next click stores the demo under a new one and records it.
"""

from __future__ import annotations

import sqlalchemy as sa

from costdash.demo import DEMOS
from dashboard.sharedstate import demo_handles_table, transaction, upsert
from dashboard.storage import DatasetRecord, LoaderOptions, SqlStore, valid_id

__all__ = ["is_demo_handle", "shared_demo"]


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
