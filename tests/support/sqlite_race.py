"""The child side of the SQLite start race (tests/web/test_storage.py): a worker process that
opens the store on new files together with its siblings.

A module of its own so a spawned child imports only this and the store (about half of what
importing the test module, with numpy and the loader, costs), and one child runs every round:
the race is on each new file, not on the interpreter's start.
"""

from __future__ import annotations

from typing import Any


def start_and_write_rounds(urls: list[str], barrier: Any, results: Any) -> None:
    """For each URL in turn: wait for the siblings, open the store (creating the schema if
    needed), then write at once, as the housekeeping does; put ``(round, outcome)`` on
    ``results``, ``"ok"`` or the exception. A round that fails still joins the next rounds'
    barriers, so the siblings never wait for it in vain."""
    from dashboard.storage import SqlStore

    for round_, url in enumerate(urls):
        try:
            barrier.wait(timeout=120)
            store = SqlStore(url)
            store.purge_expired()
        except Exception as exc:  # noqa: BLE001 - reported to the parent
            results.put((round_, f"{type(exc).__name__}: {exc}"))
        else:
            results.put((round_, "ok"))
