"""State every web process and host must share and no cache pressure may evict, kept in the
SQL store's database beside the data sets (SQLite embedded, PostgreSQL scaled):

* ``rate_windows``: the rate limiter's moving windows (:class:`SqlLimiterStorage`, the
  ``costdash-sql://`` storage of flask-limiter). They used to live in the result cache's Redis,
  where 70 anonymous band jobs filled Redis to its ``maxmemory`` and evicted every counter
  (issue 22, finding 6): a database does not evict rows.
* ``compute_slots``: the leases of :mod:`dashboard.jobs.gate` (expensive work running now, site-wide,
  per client and per data set).
* ``label_files``: the Multiclass page's uploaded label files (:mod:`dashboard.storage.labelfiles`), so
  any replica can run them.
* ``demo_handles``: the one upload handle of each bundled demo (:mod:`dashboard.storage.demos`).

The tables are created next to the store's own (:func:`shared_tables`), once per engine; the
store's schema (``dashboard.storage.sql``) does not know them.
"""

from __future__ import annotations

import json
import os
import secrets
import socket
import threading
import time
import weakref
from dataclasses import dataclass
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import sqlalchemy as sa
from limits.storage import MovingWindowSupport, Storage

from dashboard.storage.sql import _unavailable  # the store's translation of driver errors
from dashboard.storage.records import StorageUnavailable
from dashboard.storage.sql import SqlStore

__all__ = ["Lease", "SqlLimiterStorage", "compute_slots_table", "demo_handles_table", "hand_over",
           "give_back", "holder_gone", "label_files_table", "rate_windows_table", "renew",
           "shared_tables", "take_slot", "transaction", "upsert"]

_metadata = sa.MetaData()

rate_windows_table = sa.Table(
    "rate_windows", _metadata,
    sa.Column("key", sa.String(400), primary_key=True),
    # JSON list of the hit times (seconds since the epoch), newest last; at most the limit.
    sa.Column("hits", sa.Text, nullable=False),
    sa.Column("expires_at", sa.Float, nullable=False, index=True),
)

compute_slots_table = sa.Table(
    "compute_slots", _metadata,
    sa.Column("scope", sa.String(200), primary_key=True),
    sa.Column("slot", sa.Integer, primary_key=True),
    sa.Column("holder", sa.String(200), nullable=False),
    sa.Column("expires_at", sa.Float, nullable=False),
)

label_files_table = sa.Table(
    "label_files", _metadata,
    sa.Column("handle", sa.String(64), primary_key=True),
    sa.Column("name", sa.Text, nullable=False),
    sa.Column("content", sa.LargeBinary, nullable=False),
    sa.Column("size_bytes", sa.BigInteger, nullable=False),
    sa.Column("created_at", sa.Float, nullable=False, index=True),
)

demo_handles_table = sa.Table(
    "demo_handles", _metadata,
    sa.Column("name", sa.String(100), primary_key=True),
    sa.Column("handle", sa.String(32), nullable=False),
)

_LOCK = 731_942_016
"""PostgreSQL advisory lock id of this schema (the store's is one less)."""

_ready: weakref.WeakSet[sa.Engine] = weakref.WeakSet()
_ready_lock = threading.Lock()


def shared_tables(store: SqlStore) -> sa.Engine:
    """The store's engine, with this module's tables created (once per engine and process)."""
    engine = store.engine
    if engine in _ready:
        return engine
    with _ready_lock:
        if engine in _ready:
            return engine
        deadline = time.monotonic() + 30.0
        while True:
            try:
                with engine.begin() as conn:
                    if store.dialect == "postgresql":
                        conn.execute(sa.text("SELECT pg_advisory_xact_lock(:k)"), {"k": _LOCK})
                    _metadata.create_all(conn, checkfirst=True)
                break
            except sa.exc.OperationalError as exc:
                # Workers starting together on one SQLite file: as in SqlStore._create_schema.
                if (store.dialect == "sqlite" and time.monotonic() < deadline and any(
                        r in str(exc) for r in ("already exists", "database is locked"))):
                    time.sleep(0.05)
                    continue
                raise
        _ready.add(engine)
    return engine


@contextmanager
def transaction(store: SqlStore) -> Iterator[sa.Connection]:
    """A transaction on the store's database with these tables present; a full disk raises
    :class:`~dashboard.storage.StorageFull`, an unreachable database
    :class:`~dashboard.storage.StorageUnavailable` (the store's own rules)."""
    try:
        shared_tables(store)
    except (sa.exc.OperationalError, sa.exc.InterfaceError) as exc:
        raise _unavailable(exc) from exc
    with store._begin() as conn:  # noqa: SLF001 - the store's transaction, errors translated
        yield conn


_created: set[tuple[int, int]] = set()
_created_lock = threading.Lock()


def ensure_tables(store: SqlStore, metadata: sa.MetaData) -> None:
    """Create a part's own tables (``metadata``) in the store's database on first use.

    A memo per process of which (engine, metadata) pairs are done, not state: it only spares
    the ``CREATE TABLE IF NOT EXISTS`` round trips, and every process reaches the same tables.
    """
    key = (id(store.engine), id(metadata))
    if key in _created:
        return
    with _created_lock:
        with transaction(store) as conn:
            metadata.create_all(conn, checkfirst=True)
        _created.add(key)


def upsert(store: SqlStore, table: sa.Table) -> Any:
    """The dialect's ``INSERT`` (with ``on_conflict_do_nothing`` / ``_do_update``)."""
    if store.dialect == "sqlite":
        from sqlalchemy.dialects.sqlite import insert
    else:
        from sqlalchemy.dialects.postgresql import insert
    return insert(table)


# --- leases: slots of work running now -----------------------------------------------------------

def _process_gone(pid: int) -> bool:
    """Whether process ``pid`` of this host has ended (a zombie has: it only waits to be
    reaped)."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as f:
            return f.read().rsplit(b")", 1)[1].split()[0] == b"Z"
    except FileNotFoundError:
        return True
    except OSError:  # no /proc (not Linux): ask the kernel
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            return True
        except PermissionError:
            return False
        return False


def holder_gone(value: object) -> bool:
    """Whether a slot's holder (``host:pid:token``) is a process of this host that has ended."""
    host, _, rest = str(value).partition(":")
    pid = rest.partition(":")[0]
    return host == socket.gethostname() and pid.isdigit() and _process_gone(int(pid))


@dataclass(frozen=True, eq=False)
class Lease:
    """One held slot: ``(scope, slot)`` held by ``holder`` (``host:pid:token``)."""

    scope: str
    slot: int
    holder: str


def take_slot(store: SqlStore, scope: str, limit: int, lifetime: float) -> Lease | None:
    """One of the ``limit`` slots of ``scope`` for ``lifetime`` seconds, or None when every
    one is held.

    A slot is free when it has no row, its lease expired, or its holder is an ended process of
    this host (killed mid-way: taken over at once; one of another host expires). The slots are
    read first, then each free-looking one is taken by one statement of its own (an upsert
    whose ``WHERE`` sees the row as it is then), so two processes never both take a slot; and
    no transaction reads before it writes (SQLite refuses the write of a reader whose snapshot
    another writer made stale)."""
    t = compute_slots_table
    holder = f"{socket.gethostname()}:{os.getpid()}:{secrets.token_hex(8)}"
    now = time.time()
    with transaction(store) as conn:
        taken = {r.slot: r for r in conn.execute(
            sa.select(t.c.slot, t.c.holder, t.c.expires_at).where(t.c.scope == scope))}
    for slot in range(limit):
        row = taken.get(slot)
        if row is not None and row.expires_at > now and not holder_gone(row.holder):
            continue
        stale = t.c.expires_at <= now if row is None else sa.or_(
            t.c.expires_at <= now, t.c.holder == row.holder)
        stmt = (upsert(store, t)
                .values(scope=scope, slot=slot, holder=holder, expires_at=now + lifetime)
                .on_conflict_do_update(index_elements=[t.c.scope, t.c.slot],
                                       set_={"holder": holder, "expires_at": now + lifetime},
                                       where=stale)
                .returning(t.c.slot))
        with transaction(store) as conn:
            if conn.execute(stmt).first() is not None:
                return Lease(scope, slot, holder)
    return None


def renew(store: SqlStore, leases: list[Lease], lifetime: float) -> None:
    """Extend ``leases`` by ``lifetime`` seconds from now (those still theirs)."""
    t = compute_slots_table
    with transaction(store) as conn:
        for lease in leases:
            conn.execute(t.update().where(t.c.scope == lease.scope, t.c.slot == lease.slot,
                                          t.c.holder == lease.holder)
                         .values(expires_at=time.time() + lifetime))


def hand_over(store: SqlStore, scope: str, slot: int, token: str,
              lifetime: float) -> Lease | None:
    """Slot ``(scope, slot)``, held by the holder whose token is ``token``, held by this process
    from now (a new holder: host, this pid, a new token) for ``lifetime`` seconds; None when
    that holder no longer has it (given back, or expired and taken).

    A request takes the slots of a background job (so a refusal needs no job process) and the
    job's process takes them over (so a killed job's slots are taken over at once). The token
    alone names the holder: what the browser carries between the two names no host or pid."""
    t = compute_slots_table
    holder = f"{socket.gethostname()}:{os.getpid()}:{secrets.token_hex(8)}"
    now = time.time()
    if not (isinstance(token, str) and len(token) == 16 and token.isalnum()):
        return None
    with transaction(store) as conn:
        moved = conn.execute(t.update().where(
            t.c.scope == scope, t.c.slot == slot, t.c.holder.endswith(f":{token}"),
            t.c.expires_at > now).values(holder=holder, expires_at=now + lifetime)).rowcount
    return Lease(scope, slot, holder) if moved == 1 else None


def give_back(store: SqlStore, lease: Lease) -> None:
    """Free ``lease``'s slot (when it is still its holder's)."""
    t = compute_slots_table
    with transaction(store) as conn:
        conn.execute(t.delete().where(t.c.scope == lease.scope, t.c.slot == lease.slot,
                                      t.c.holder == lease.holder))


# --- the rate limiter's storage ------------------------------------------------------------------

class SqlLimiterStorage(Storage, MovingWindowSupport):
    """A ``limits`` storage (moving windows) in the SQL store: ``costdash-sql://``.

    Each key is one row holding the times of its hits in the window (at most the limit's
    count, so a few hundred bytes); a hit locks the row (``SELECT ... FOR UPDATE`` on
    PostgreSQL, SQLite's single writer), prunes, checks and appends in one transaction, so
    processes and hosts sharing the database count together and exactly. Rows whose window
    has passed are deleted now and then by the hits themselves.

    Parameters
    ----------
    uri : str
        ``costdash-sql://`` (the store comes in ``store``).
    store : SqlStore
        The app's store (``storage_options={"store": ...}`` of flask-limiter).
    """

    STORAGE_SCHEME = ["costdash-sql"]
    SWEEP_EVERY = 300.0
    """Seconds between two deletions of windows that have passed (per process)."""

    def __init__(self, uri: str | None = None, wrap_exceptions: bool = False,
                 store: SqlStore | None = None, **options: Any) -> None:
        if store is None:
            raise ValueError("costdash-sql:// needs the store (storage_options={'store': ...})")
        super().__init__(uri, wrap_exceptions=wrap_exceptions, **options)
        self.store = store
        self._swept = 0.0

    @property
    def base_exceptions(self) -> type[Exception] | tuple[type[Exception], ...]:
        return (sa.exc.SQLAlchemyError, StorageUnavailable)

    def _row(self, conn: sa.Connection, key: str, expiry: float, now: float) -> list[float]:
        t = rate_windows_table
        conn.execute(upsert(self.store, t).values(key=key, hits="[]", expires_at=now + expiry)
                     .on_conflict_do_nothing())
        text = conn.execute(sa.select(t.c.hits).where(t.c.key == key).with_for_update()
                            ).scalar_one()
        return [h for h in json.loads(text) if h > now - expiry]

    def acquire_entry(self, key: str, limit: int, expiry: int, amount: int = 1) -> bool:
        if amount > limit:
            return False
        now = time.time()
        with transaction(self.store) as conn:
            hits = self._row(conn, key, expiry, now)
            if len(hits) + amount > limit:
                return False
            hits = [*hits, *([now] * amount)][-limit:]
            t = rate_windows_table
            conn.execute(t.update().where(t.c.key == key).values(
                hits=json.dumps(hits), expires_at=now + expiry))
        self._sweep(now)
        return True

    def get_moving_window(self, key: str, limit: int, expiry: int) -> tuple[float, int]:
        now = time.time()
        t = rate_windows_table
        with transaction(self.store) as conn:
            text = conn.execute(sa.select(t.c.hits).where(t.c.key == key)).scalar()
        hits = [h for h in json.loads(text or "[]") if h > now - expiry]
        return (min(hits), len(hits)) if hits else (now, 0)

    def _sweep(self, now: float) -> None:
        if now - self._swept < self.SWEEP_EVERY:
            return
        self._swept = now
        t = rate_windows_table
        with transaction(self.store) as conn:
            conn.execute(t.delete().where(t.c.expires_at < now))

    # Fixed-window counters (the moving window is the strategy used; these complete the
    # interface): the count is the row's number of hits, all at the window's start.
    def incr(self, key: str, expiry: int, amount: int = 1) -> int:
        now = time.time()
        t = rate_windows_table
        with transaction(self.store) as conn:
            conn.execute(upsert(self.store, t).values(key=key, hits="[]", expires_at=now + expiry)
                         .on_conflict_do_nothing())
            row = conn.execute(sa.select(t.c.hits, t.c.expires_at).where(t.c.key == key)
                               .with_for_update()).one()
            hits, ends = json.loads(row.hits), row.expires_at
            if ends <= now:
                hits, ends = [], now + expiry
            hits = [*hits, *([now] * amount)]
            conn.execute(t.update().where(t.c.key == key).values(hits=json.dumps(hits),
                                                                   expires_at=ends))
        return len(hits)

    def get(self, key: str) -> int:
        t = rate_windows_table
        with transaction(self.store) as conn:
            row = conn.execute(sa.select(t.c.hits, t.c.expires_at).where(t.c.key == key)).first()
        return 0 if row is None or row.expires_at <= time.time() else len(json.loads(row.hits))

    def get_expiry(self, key: str) -> float:
        t = rate_windows_table
        with transaction(self.store) as conn:
            ends = conn.execute(sa.select(t.c.expires_at).where(t.c.key == key)).scalar()
        return float(ends) if ends is not None else time.time()

    def check(self) -> bool:
        try:
            with transaction(self.store) as conn:
                conn.execute(sa.text("SELECT 1"))
            return True
        except Exception:  # noqa: BLE001 - a health check answers, it does not raise
            return False

    def reset(self) -> int | None:
        with transaction(self.store) as conn:
            return conn.execute(rate_windows_table.delete()).rowcount

    def clear(self, key: str) -> None:
        with transaction(self.store) as conn:
            conn.execute(rate_windows_table.delete().where(rate_windows_table.c.key == key))
