"""Background jobs: the Dash background-callback managers (diskcache or Celery).

Manager (:func:`background_manager`, passed to ``Dash(background_callback_manager=...)``):

* default: a ``DiskcacheManager`` whose store is ``COSTDASH_DATA_DIR/jobs``. Every job runs in a
  child process of the web process (single host; any number of gunicorn workers sharing the data
  dir). Cancel kills the child.
* ``COSTDASH_JOBS_URL=redis://host:6379/0``: a ``CeleryManager`` with that broker and result
  backend. Run a worker with the same code and settings as the web processes::

      COSTDASH_JOBS_URL=... COSTDASH_CACHE_URL=... celery -A dashboard.worker:celery_app worker

  ``dashboard.worker:celery_app`` builds the app (``create_app()`` from the environment), which
  registers the background callbacks as Celery tasks. The worker must share the result cache with
  the web processes (``COSTDASH_CACHE_URL=redis://...``, or the same data dir on one host) and the
  secret key (``COSTDASH_SECRET_KEY``), which signs job handles.

  Failures (docs/deployment.md has what was tested): a job is acknowledged only when it ends, so
  when its pool process dies (SIGKILL, the OOM killer) it goes back to the queue and runs again;
  after :data:`MAX_DELIVERIES` starts it fails instead. A job that ends in FAILURE without a
  result (that, or the time limit) reaches the page as a background-callback error, which the
  page's ``on_error`` shows. A running job keeps a heartbeat key alive; when its whole worker
  dies (nobody reports that before the broker's visibility timeout), the page's polls find the
  job started but silent and mark it failed (:class:`JobLost`). Cancel also marks a job revoked
  that no worker runs any more.

The bands the jobs compute are kept in the shared result cache (:mod:`dashboard.jobs.bandcache`); the
Celery worker's entry module is :mod:`dashboard.worker`.
"""

from __future__ import annotations

import os
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from dash import CeleryManager, DiskcacheManager

    from dashboard.config import Settings

__all__ = ["JobAbandoned", "JobLost", "background_manager", "job_client", "job_failure_message",
           "reap_jobs", "submitting_client"]

JOB_EXPIRE = 3600
"""Seconds a finished job's return value waits in the manager's store for its poll."""

POLL_INTERVAL_MS = 500
"""How often the browser asks a running job for progress and its result."""


JOB_TIME_LIMIT = 3600
"""Seconds a bootstrap job may run in a Celery worker before it is killed and reported failed
(the largest band, B = 10,000 on a million rows, takes minutes)."""

VISIBILITY_TIMEOUT = 2 * JOB_TIME_LIMIT
"""Seconds before the Redis broker hands an unacknowledged job to another worker. Jobs are
acknowledged when they end (``acks_late``), so this must exceed the longest job, or a running
job would be started a second time elsewhere; it is also how long a job whose whole worker
(or host) died waits before another worker picks it up."""

MAX_DELIVERIES = 2
"""Times a job is started when its worker process dies under it (killed, out of memory):
once more after the first death, then it is reported failed instead of killing worker after
worker."""


def busy_message(limit: int) -> str:
    return (f"{limit} bootstrap job{'s are' if limit != 1 else ' is'} already running on this "
            "data set, or you already run as many computations as one client may, or the "
            "server runs as many as it may; try again when one finishes.")


CLIENT_KEY = "costdash_client"
"""The key of a background job's context that names the client who submitted it (set by the
managers of :func:`background_manager` when the job is queued, inside the request)."""


def submitting_client() -> str | None:
    """The client address of the request being served (the compute gate's client key:
    ``ProxyFix`` has applied a trusted proxy's ``X-Forwarded-For``); None outside a request."""
    from flask import has_request_context, request

    return (request.remote_addr or "unknown") if has_request_context() else None


def job_client() -> str | None:
    """The client who submitted the background job running now (see :data:`CLIENT_KEY`);
    None outside a job, or for a job queued by code older than the key."""
    try:
        from dash._callback_context import context_value  # Dash's job context (no public getter)

        context = context_value.get()
    except (ImportError, LookupError):
        return None
    found = context.get(CLIENT_KEY) if isinstance(context, dict) else None
    return str(found) if found else None


def _with_client(context: Any) -> Any:
    """The job's context with the submitting client in it: a job process (a fork, a Celery
    worker on another host) has no request to read the address from."""
    if isinstance(context, dict):
        context[CLIENT_KEY] = submitting_client()
    return context


def budget_message(per_hour: int) -> str:
    return (f"This data set has started {per_hour} bootstrap jobs in the last hour, its limit; "
            "bands already computed still show. Try again later.")


def _store_of(cache: Any) -> Any:
    """The SQL store of the app whose result cache ``cache`` is (flask-caching keeps its app),
    or None (a bare cache)."""
    app = getattr(cache, "app", None)
    services = getattr(app, "extensions", {}).get("costdash") if app is not None else None
    return getattr(services, "store", None)


def job_budget_left(cache: Any, data_id: str, per_hour: int) -> bool:
    """Count one new job on a data set in the last hour; whether it is within ``per_hour``.

    With the client choosing the seed, each request could otherwise be a new job and a new
    cache entry; this bounds both per data set, and the upload limits bound data sets per
    client. The count is a moving window of the rate limiter's kind in the app's SQL store
    (:class:`dashboard.storage.sharedstate.SqlLimiterStorage`): every web and job process counts
    together, and no cache pressure evicts it (issue 22, finding 6: a full Redis evicted the
    counters it used to be kept in). With the database unreachable nothing is counted.
    """
    store = _store_of(cache)
    if store is None:  # a cache of no app: count in it, as before
        key = f"jobbudget:{data_id}:{int(time.time() // 3600)}"
        cache.add(key, 0, timeout=3600)
        spent = cache.cache.inc(key)
        return spent is None or spent <= per_hour
    from dashboard.storage.sharedstate import SqlLimiterStorage
    from dashboard.storage import StorageUnavailable

    try:
        return SqlLimiterStorage(store=store).acquire_entry(f"jobbudget:{data_id}", per_hour,
                                                            3600)
    except StorageUnavailable:
        return True


READ_ONLY_JOB = ("A read-only link computes bands only at the settings its owner saved "
                 "(method, replicates, seed and threshold): change them back, or ask the owner "
                 "for this band.")


SLOT_LIFETIME = 60
"""Seconds a job slot lives without being renewed: a job renews it every third of that while
it runs, so the slot of a job killed on another host frees within a minute."""



@contextmanager
def dataset_job_slot(cache: Any, data_id: str, limit: int,
                     client: str | None = None) -> Iterator[bool]:
    """Hold one of ``limit`` slots for a job on one data set while the job runs; yields
    whether a slot was free.

    With a client (``client``, else the one who submitted the running job,
    :func:`job_client`) the job also holds one of that client's slots of expensive work
    (``COSTDASH_MAX_HEAVY_JOBS_PER_CLIENT``, the compute gate's scope ``client:<address>``,
    shared with Multiclass runs): new handles are free, so per-data-set caps alone let one
    client start any number of jobs over many handles (issue 22, finding 6).

    A slot is a lease in the app's SQL store (:func:`dashboard.storage.sharedstate.take_slot`, the
    compute gate's kind, scope ``jobs:<data set>``) naming its holder (host, process, token),
    together with one of the site's slots of expensive work (:mod:`dashboard.jobs.gate`,
    ``COSTDASH_MAX_HEAVY_JOBS``; none free: no slot, as when the data set's are taken):
    shared by every web and job process, and never evicted by cache pressure (issue 22,
    finding 6). The holder renews it while it runs; a job killed mid-way (kill -9, out of
    memory) cannot give it back, so a slot whose holder is an ended process of this host is
    taken over at once, and one of another host expires within :data:`SLOT_LIFETIME`. With the
    database down nothing can be counted: the job runs (and fails reading its data, or says
    why).
    """
    from dashboard.storage.sharedstate import give_back, renew, take_slot
    from dashboard.storage import StorageUnavailable

    store = _store_of(cache)
    if store is None:
        raise ValueError("dataset_job_slot needs the result cache of an app (its store)")
    settings = cache.app.extensions["costdash"].settings
    site = int(getattr(settings, "max_heavy_jobs", 0) or 0)
    per_client = int(getattr(settings, "max_heavy_jobs_per_client", 0) or 0)
    client = client or job_client()
    # The client's, the data set's, then the site's (the compute gate's order): bands,
    # Multiclass runs and reports together are at most COSTDASH_MAX_HEAVY_JOBS at once.
    scopes = [(f"jobs:{data_id}", limit)]
    if client and per_client:
        scopes.insert(0, (f"client:{client}", per_client))
    if site:
        scopes.append(("site:all", site))
    held: list[Any] = []
    unreachable = False
    try:
        for scope, most in scopes:
            lease = take_slot(store, scope, most, SLOT_LIFETIME)
            if lease is None:
                while held:
                    give_back(store, held.pop())
                break
            held.append(lease)
    except StorageUnavailable:
        unreachable = True
    stop = threading.Event()
    if held:
        def keep() -> None:
            while not stop.wait(SLOT_LIFETIME / 3):
                try:
                    renew(store, held, SLOT_LIFETIME)
                except StorageUnavailable:
                    pass

        threading.Thread(target=keep, name="costdash-job-slot", daemon=True).start()
    try:
        yield bool(held) or unreachable
    finally:
        stop.set()
        for lease in held:
            try:
                give_back(store, lease)
            except StorageUnavailable:
                pass  # it expires by itself


class JobAbandoned(RuntimeError):
    """A job whose worker process died under it :data:`MAX_DELIVERIES` times."""


HEARTBEAT_EVERY = 2.0
"""Seconds between two heartbeats of a running Celery job (a key in the result backend)."""

HEARTBEAT_TTL = 10.0
"""Seconds a heartbeat lasts: a started job without one for this long has lost its worker
(the whole worker, or its host, died: nobody else reports that before the visibility
timeout)."""

LOST_AFTER_POLLS = 3
"""Polls in a row that must find a started job without a heartbeat before it is reported lost
(one could fall between the job's start and its first heartbeat)."""


class JobLost(RuntimeError):
    """A started job whose worker stopped sending heartbeats (see :data:`HEARTBEAT_TTL`)."""


def _alive_key(task_id: str) -> str:
    return f"costdash:job-alive:{task_id}"


class _Heartbeat:
    """Keeps ``costdash:job-alive:<task id>`` alive while a job runs (a daemon thread)."""

    def __init__(self, client: Any, task_id: str):
        self.client, self.key = client, _alive_key(task_id)
        self.stop = threading.Event()
        self.thread = threading.Thread(target=self._beat, daemon=True, name="job-heartbeat")

    def _beat(self) -> None:
        while not self.stop.wait(HEARTBEAT_EVERY):
            try:
                self.client.set(self.key, b"1", ex=int(HEARTBEAT_TTL))
            except Exception:  # noqa: BLE001 - a missed beat is retried; the job goes on
                pass

    def __enter__(self) -> _Heartbeat:
        self.client.set(self.key, b"1", ex=int(HEARTBEAT_TTL))
        self.thread.start()
        return self

    def __exit__(self, *exc: Any) -> None:
        self.stop.set()
        self.thread.join(timeout=HEARTBEAT_EVERY)
        try:
            self.client.delete(self.key)
        except Exception:  # noqa: BLE001 - it expires by itself
            pass


def job_failure_message(exc: BaseException | None) -> str:
    """What the page says about a Celery job that ended without a result.

    Parameters
    ----------
    exc : BaseException or None
        The task's result when its state is FAILURE (an exception instance).

    Returns
    -------
    str
        One sentence for the user; the details are in the worker's log.
    """
    name = type(exc).__name__
    # Celery rebuilds an exception from JSON by name, not always as our class.
    if isinstance(exc, (JobAbandoned, JobLost)) or name in ("JobAbandoned", "JobLost"):
        return str(exc)
    if name in ("TimeLimitExceeded", "SoftTimeLimitExceeded"):
        return (f"The bootstrap job ran longer than the {JOB_TIME_LIMIT} s limit and was "
                "stopped. Try fewer replicates.")
    if name == "WorkerLostError":
        return ("The bootstrap job failed: the worker process running it died "
                f"({exc}). Run it again, or with fewer replicates.")
    return f"The bootstrap job failed ({name}: {exc}). The details are in the worker's log."


def _celery(url: str) -> Any:
    from celery import Celery, Task  # optional dependency: dash[celery]

    class JobTask(Task):
        """A Dash background job that survives the death of its worker process once.

        ``acks_late`` with ``reject_on_worker_lost``: the broker forgets a job only when it
        ended, and a job whose pool process died (SIGKILL, the OOM killer) goes back to the
        queue; the browser keeps polling (the task stays STARTED) and gets the rerun's result.
        Each start is counted in the result backend, so a job that kills its process every
        time ends as a failure the page reports (:class:`JobAbandoned`) instead of looping.
        """

        acks_late = True
        reject_on_worker_lost = True

        def __call__(self, *args: Any, **kwargs: Any) -> Any:
            client = getattr(self.backend, "client", None)
            task_id = self.request.id
            if client is not None and task_id and self.name.startswith("background_callback_"):
                key = f"costdash:job-starts:{task_id}"
                starts = client.incr(key)
                client.expire(key, JOB_EXPIRE)
                if starts > MAX_DELIVERIES:
                    raise JobAbandoned(
                        f"The bootstrap job was stopped: the worker process running it died "
                        f"{starts - 1} times (killed, or out of memory). Try fewer replicates, "
                        "or ask the operator to look at the workers.")
                with _Heartbeat(client, task_id):
                    return super().__call__(*args, **kwargs)
            return super().__call__(*args, **kwargs)

    app = Celery("costdash", broker=url, backend=url, task_cls=JobTask)
    app.conf.update(
        task_track_started=True, result_expires=JOB_EXPIRE,
        # Job arguments and results go through Redis: JSON only, never pickle (Celery's
        # default today, stated so that no configuration elsewhere can change it).
        task_serializer="json", result_serializer="json", accept_content=["json"],
        task_acks_late=True, task_reject_on_worker_lost=True,
        # A job is seconds to minutes of CPU: a worker process takes one at a time, so a
        # queued job goes to whichever process frees up first instead of waiting behind another.
        worker_prefetch_multiplier=1,
        task_time_limit=JOB_TIME_LIMIT,
        broker_transport_options={"visibility_timeout": VISIBILITY_TIMEOUT},
        broker_connection_retry_on_startup=True,
        # Queuing a job goes through the result backend first; with Redis gone, Celery's
        # default (20 retries a second apart) holds the page's request 20 s before the page
        # can say so. Five still ride out a Redis restart while a worker stores a result.
        result_backend_transport_options={"retry_policy": {
            "max_retries": 5, "interval_start": 0, "interval_step": 1, "interval_max": 1}},
        redis_socket_connect_timeout=3,
    )
    return app


def _celery_manager(celery_app: Any, expire: int) -> CeleryManager:
    from celery import states
    from dash import CeleryManager

    class JobManager(CeleryManager):
        """Dash's CeleryManager, plus: a job that ended in FAILURE without writing a result
        (its process died for good, or it hit the time limit) is reported to the page as a
        background-callback error, which the page's ``on_error`` shows; Dash alone would treat
        it like a cancel and say nothing."""

        def call_job_fn(self, key: str, job_fn: Any, args: Any, context: Any) -> Any:
            return super().call_job_fn(key, job_fn, args, _with_client(context))

        def terminate_job(self, job: Any) -> None:
            # Dash's Cancel only revokes the task, and the page keeps polling until the task
            # stops looking alive. A task that no worker runs any more (its worker was killed
            # whole) stays STARTED, so the page would poll for ever: mark it revoked too.
            super().terminate_job(job)
            if job and self.get_task(job).state not in states.READY_STATES:
                self.handle.backend.mark_as_revoked(job, "cancelled from the page")

        def _lost(self, job: Any) -> bool:
            """Whether a started job's worker stopped sending heartbeats (died whole)."""
            client = getattr(self.handle.backend, "client", None)
            if client is None:
                return False
            silent_key = f"costdash:job-silent:{job}"
            if client.exists(_alive_key(job)):
                client.delete(silent_key)
                return False
            silent = client.incr(silent_key)
            client.expire(silent_key, JOB_EXPIRE)
            return silent >= LOST_AFTER_POLLS

        def get_result(self, key: str, job: Any) -> Any:
            result = super().get_result(key, job)
            if result is self.UNDEFINED and job:
                task = self.get_task(job)
                if task is not None and task.status in ("STARTED", "PROGRESS") and \
                        self._lost(job):
                    self.handle.backend.mark_as_failure(job, JobLost(
                        "The bootstrap job was lost: the worker running it stopped answering "
                        f"(no heartbeat for {HEARTBEAT_TTL:g} s; its host or process may have "
                        "died). Run it again."))
                    task = self.get_task(job)
                if task is not None and task.status == "FAILURE":
                    message = job_failure_message(task.result)
                    task.forget()
                    return {"background_callback_error": {"msg": message, "tb": ""}}
            return result

    return JobManager(celery_app, expire=expire)


def background_manager(settings: Settings) -> DiskcacheManager | CeleryManager:
    """The background-callback manager the settings ask for (see the module docstring)."""
    url = getattr(settings, "jobs_url", None)
    if url:
        if not url.startswith(("redis://", "rediss://", "amqp://", "amqps://")):
            raise ValueError(f"COSTDASH_JOBS_URL must be redis://... or amqp://..., not {url!r}")
        return _celery_manager(_celery(url), JOB_EXPIRE)
    directory = settings.data_dir / "jobs"
    directory.mkdir(parents=True, exist_ok=True)
    return _diskcache_manager()(_guarded_cache(str(directory)), expire=JOB_EXPIRE)


class _ForkGuard:
    """Keeps the forks of job processes apart from this process's use of the jobs' SQLite file.

    SQLite keeps the locks of a process's connections in the library's memory: a process forked
    while another thread is inside a transaction on the file inherits a lock that nobody in the
    child will ever release, and its first write waits on it until diskcache's timeout (a
    Multiclass job forked while other threads served polls hung so; issue 22). Uses of the
    cache count themselves in; a fork waits until none is in progress and holds new ones back
    while it forks (a few milliseconds). A thread already inside a use is never held back
    (diskcache's methods call one another)."""

    def __init__(self) -> None:
        self.cond = threading.Condition()
        self.active = 0
        self.forking = False
        self.depth = threading.local()

    @contextmanager
    def use(self) -> Iterator[None]:
        depth = getattr(self.depth, "n", 0)
        if depth == 0:
            with self.cond:
                while self.forking:
                    self.cond.wait()
                self.active += 1
        self.depth.n = depth + 1
        try:
            yield
        finally:
            self.depth.n = depth
            if depth == 0:
                with self.cond:
                    self.active -= 1
                    self.cond.notify_all()

    @contextmanager
    def fork(self) -> Iterator[None]:
        with self.cond:
            while self.forking:
                self.cond.wait()
            self.forking = True
            while self.active:
                self.cond.wait()
        try:
            yield
        finally:
            with self.cond:
                self.forking = False
                self.cond.notify_all()


_fork_guard = _ForkGuard()


def _new_fork_guard() -> None:
    # The child starts alone: no use is in progress in it, and its fork is over.
    global _fork_guard
    _fork_guard = _ForkGuard()


os.register_at_fork(after_in_child=_new_fork_guard)

_GUARDED = ("get", "set", "add", "delete", "touch", "incr", "decr", "pop", "clear", "expire",
            "cull", "evict", "read", "push", "pull", "peek", "check", "close", "transact",
            "__getitem__", "__setitem__", "__delitem__", "__contains__")


def _guarded_cache(directory: str) -> Any:
    """A ``diskcache.Cache`` (JSON values) whose every use counts in :class:`_ForkGuard`."""
    import diskcache

    def guard(name: str) -> Any:
        method = getattr(diskcache.Cache, name)

        def guarded(self: Any, *args: Any, **kwargs: Any) -> Any:
            with _fork_guard.use():
                return method(self, *args, **kwargs)
        guarded.__name__ = name
        return guarded

    cls = type("GuardedCache", (diskcache.Cache,), {name: guard(name) for name in _GUARDED
                                                     if name != "transact"})
    # JSONDisk: job arguments, progress and results are kept as JSON, never pickled.
    return cls(directory, disk=diskcache.JSONDisk)


def reap_jobs() -> int:
    """Collect the exit status of this process's finished job processes; returns how many.

    Dash's ``DiskcacheManager`` starts each job as a child process and never waits for it, so
    a finished job stays a zombie until the same web process starts its next job. This is
    called on every poll of a job (:func:`_diskcache_manager`) and by the app's housekeeping
    (:class:`dashboard.factory.Maintenance`).
    """
    import sys

    mp = sys.modules.get("multiprocess")  # imported by Dash when it starts a job
    if mp is None:
        return 0
    children = mp.process._children  # noqa: SLF001 - the set active_children() prunes
    before = len(children)
    mp.active_children()  # joins (reaps) those that ended
    return before - len(children)


def _diskcache_manager() -> type[DiskcacheManager]:
    from dash import DiskcacheManager

    class JobProcesses(DiskcacheManager):
        """Dash's DiskcacheManager whose finished job processes do not linger as zombies."""

        def call_job_fn(self, key: str, job_fn: Any, args: Any, context: Any) -> Any:
            # Not while another thread is inside the jobs' SQLite file (see _ForkGuard).
            with _fork_guard.fork():
                return super().call_job_fn(key, job_fn, args, _with_client(context))

        def job_running(self, job: Any) -> bool:
            reap_jobs()
            return super().job_running(job)

    return JobProcesses
