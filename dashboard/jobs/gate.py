"""The compute gate: every expensive computation a request asks for runs bounded.

Issue 22 (findings 5 and 7): a Multiclass run (60 classifiers, B = 100,000) or an uncached
``report.html`` computed in the web thread with no limit, so 16 at once held every gunicorn
thread and ``/healthz`` waited minutes; gthread never applies its timeout to a running request.
Through the gate, expensive work

* runs only while it holds a **slot** on three scopes at once: the site (at most
  ``COSTDASH_MAX_HEAVY_JOBS``, every process and host together), the client address (at most
  ``COSTDASH_MAX_HEAVY_JOBS_PER_CLIENT``) and, when it reads one, the data set or file (at most
  ``COSTDASH_MAX_JOBS_PER_DATASET``); plus a per-process semaphore
  (``COSTDASH_MAX_HEAVY_JOBS_PER_PROCESS``), so a process always keeps threads for cheap
  requests. Slots are rows of the SQL store (:mod:`dashboard.storage.sharedstate`): shared by every
  process and host, never evicted by cache pressure. A slot is a lease renewed while its work
  runs; the lease of a process killed mid-way is taken over at once on its own host and
  expires within :data:`LEASE_SECONDS` elsewhere;
* counts against the client's rate limit ``COSTDASH_RATE_LIMIT_HEAVY``;
* **never waits**: without a free slot the request is refused at once with
  :class:`ComputeRefused` (HTTP 429 for the client's own limits, 503 when the site is busy,
  both with ``Retry-After``), so waiting requests hold no thread;
* runs in a **child process** with a deadline (:func:`run_bounded`,
  ``COSTDASH_HEAVY_TIMEOUT_SECONDS``, below gunicorn's timeout): past it the child is killed and
  the request answered 503 (:class:`ComputeTimedOut`) instead of holding its thread for ever.

Use (the small documented API other routes wrap their work in)::

    from dashboard.jobs.gate import heavy_work, run_bounded

    with heavy_work(services, client_key(), "report", handle=data_id) as deadline:
        html = run_bounded(build_report, record, view, timeout=deadline.seconds_left())

or in one call ``gate_for(services).run("report", build_report, record, view,
client=client_key(), handle=data_id)``. ``run_bounded``'s function must return JSON-able
values (text, numbers, lists, dicts): the result crosses a pipe as JSON, never pickled. An
HTTP route lets :class:`ComputeRefused` propagate: the handler :func:`install_gate` registers
answers it (JSON under ``/api/`` and ``/_dash``, a short HTML page elsewhere). A page callback
catches it and shows :attr:`ComputeRefused.message`.
"""

from __future__ import annotations

import json
import logging
import multiprocessing
import os
import resource
import signal
import threading
import time
import weakref
from collections.abc import Callable, Iterator
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass
from typing import Any

import sqlalchemy as sa
from flask import (Flask, Response, current_app, has_app_context, has_request_context, jsonify,
                   request)

from costdash import errors as core_errors
from costdash.errors import CostdashError
from dashboard.services import Services
from dashboard.storage.sharedstate import (Lease, compute_slots_table, give_back, hand_over,
                                           renew, take_slot, transaction)

__all__ = ["LEASE_SECONDS", "ComputeGate", "ComputeRefused", "ComputeTimedOut", "Deadline",
           "client_key", "gate_for", "heavy_work", "install_gate", "run_bounded"]

log = logging.getLogger(__name__)

LEASE_SECONDS = 60.0
"""Seconds a slot lives without being renewed (its holder renews it every third of that)."""

RETRY_AFTER_BUSY = 10
"""Seconds a refused client is told to wait when the site or the client has no free slot."""


class ComputeRefused(Exception):
    """Expensive work that may not run now (no free slot, a rate limit), or was stopped.

    Not a :class:`~costdash.errors.CostdashError`: routes must not answer it as a bad
    request (400); :func:`install_gate`'s handler answers :attr:`status` with ``Retry-After``.

    Attributes
    ----------
    message : str
        One sentence for the user.
    status : int
        429 (the client's own limit) or 503 (the site is busy, or the work ran out of time).
    retry_after : int
        Seconds after which trying again makes sense.
    """

    def __init__(self, message: str, status: int, retry_after: int):
        super().__init__(message)
        self.message, self.status, self.retry_after = message, status, int(retry_after)


class ComputeTimedOut(ComputeRefused):
    """The work ran past its deadline and was stopped (503)."""


@dataclass(frozen=True)
class Deadline:
    """When the gated work must be done (``time.monotonic()`` seconds)."""

    at: float

    def seconds_left(self) -> float:
        return max(0.0, self.at - time.monotonic())


def client_key() -> str:
    """The client this request counts against: its address (behind a trusted proxy, the one
    ``X-Forwarded-For`` names: ``ProxyFix`` has set it); ``"local"`` outside a request."""
    if has_request_context():
        return request.remote_addr or "unknown"
    return "local"


def _duration(seconds: float) -> str:
    return f"{seconds:.0f} s" if seconds < 120 else f"{seconds / 60:.0f} min"


class ComputeGate:
    """The gate of one app (see the module docstring); :func:`gate_for` finds it.

    Parameters
    ----------
    services : Services
        The app's services: its store keeps the leases, its settings the limits.
    """

    def __init__(self, services: Services):
        s = services.settings
        self.services = services
        self.store = services.store
        self.site_limit = int(s.max_heavy_jobs)
        self.client_limit = int(s.max_heavy_jobs_per_client)
        self.handle_limit = int(s.max_jobs_per_dataset)
        self.timeout = float(s.heavy_timeout_seconds)
        self.per_process = threading.BoundedSemaphore(int(s.max_heavy_jobs_per_process))
        self._held: set[Lease] = set()
        self._held_lock = threading.Lock()
        self._renewer: threading.Thread | None = None

    # one scope ---------------------------------------------------------------------------------

    def _take(self, scope: str, limit: int) -> Lease | None:
        return take_slot(self.store, scope, limit, LEASE_SECONDS)

    def _give_back(self, lease: Lease) -> None:
        with self._held_lock:
            self._held.discard(lease)
        try:
            give_back(self.store, lease)
        except Exception:  # noqa: BLE001 - the lease expires by itself
            log.warning("could not give back a compute slot of %s", lease.scope.split(":")[0])

    def _renew_all(self) -> None:
        while True:
            time.sleep(LEASE_SECONDS / 3)
            with self._held_lock:
                leases = list(self._held)
                if not leases:  # nothing held: end (the next lease starts another thread)
                    self._renewer = None
                    return
            try:
                renew(self.store, leases, LEASE_SECONDS)
            except Exception:  # noqa: BLE001 - retried at the next round
                log.warning("could not renew %d compute slot(s)", len(leases))

    def _hold(self, lease: Lease) -> None:
        with self._held_lock:
            self._held.add(lease)
            if self._renewer is None or not self._renewer.is_alive():
                self._renewer = threading.Thread(target=self._renew_all, daemon=True,
                                                 name="costdash-compute-leases")
                self._renewer.start()

    def busy(self) -> dict[str, int]:
        """Slots held now, by kind of scope (``site``, ``client``, ``data``)."""
        t = compute_slots_table
        now = time.time()
        with transaction(self.store) as conn:
            scopes = conn.execute(sa.select(t.c.scope).where(t.c.expires_at > now)).scalars()
            out: dict[str, int] = {}
            for scope in scopes:
                kind = scope.split(":", 1)[0]
                out[kind] = out.get(kind, 0) + 1
        return out

    # the gate ------------------------------------------------------------------------------------

    @contextmanager
    def slot(self, what: str, *, client: str, handle: str | None = None) -> Iterator[Deadline]:
        """Hold a slot on the site, the client and ``handle`` while the body runs; yields its
        :class:`Deadline`. Raises :class:`ComputeRefused` at once when one is not free, or
        when the client is over its rate limit.

        Parameters
        ----------
        what : str
            What is computed (``"multiclass"``, ``"report"``): named in messages and logs.
        client : str
            Whom it counts against (:func:`client_key`).
        handle : str, optional
            The data set or file it reads (a handle); None: no per-data-set cap.
        """
        if not self.per_process.acquire(blocking=False):
            raise ComputeRefused(
                f"The server is busy with other computations; the {what} was not started. "
                f"Try again in {_duration(RETRY_AFTER_BUSY)}.", 503, RETRY_AFTER_BUSY)
        with ExitStack() as stack:
            stack.callback(self.per_process.release)
            refusal = self._rate_refusal(client)
            if refusal is not None:
                raise refusal
            for lease in self._take_scopes(what, client, handle):
                self._hold(lease)
                stack.callback(self._give_back, lease)
            yield Deadline(time.monotonic() + self.timeout)

    def _take_scopes(self, what: str, client: str, handle: str | None) -> list[Lease]:
        """The client's, the data's and the site's slots, or :class:`ComputeRefused` (each
        slot taken before the refusal given back)."""
        scopes = [(f"client:{client}", self.client_limit,
                   f"You already have {self.client_limit} computation"
                   f"{'s' if self.client_limit != 1 else ''} running; the {what} was not "
                   "started. Wait for it to finish.", 429)]
        if handle:
            scopes.append((f"data:{handle}", self.handle_limit,
                           f"{self.handle_limit} computation"
                           f"{'s are' if self.handle_limit != 1 else ' is'} already running "
                           f"on this data; the {what} was not started.", 429))
        scopes.append(("site:all", self.site_limit,
                       f"The server is busy with {self.site_limit} other computation"
                       f"{'s' if self.site_limit != 1 else ''}; the {what} was not started.",
                       503))
        taken: list[Lease] = []
        for scope, limit, message, status in scopes:
            lease = self._take(scope, limit)
            if lease is None:
                log.info("compute gate: %s refused (%s full)", what, scope.split(":")[0])
                for mine in taken:
                    self._give_back(mine)
                raise ComputeRefused(f"{message} Try again in "
                                     f"{_duration(RETRY_AFTER_BUSY)}.", status,
                                     RETRY_AFTER_BUSY)
            taken.append(lease)
        return taken

    def reserve(self, what: str, *, client: str,
                handle: str | None = None) -> list[list[Any]]:
        """Take the slots of work a background job will do, in the request that queues it:
        a refusal (:class:`ComputeRefused`, the client's rate limit counted) costs no job
        process. Returns the job's ticket, ``[[scope, slot, token], ...]``, which names no
        host or process; the job takes the slots over with :meth:`adopted` within
        :data:`LEASE_SECONDS`, or they expire. Not held by this process (never renewed here)."""
        refusal = self._rate_refusal(client)
        if refusal is not None:
            raise refusal
        return [[lease.scope, lease.slot, lease.holder.rsplit(":", 1)[1]]
                for lease in self._take_scopes(what, client, handle)]

    @contextmanager
    def adopted(self, ticket: Any) -> Iterator[Deadline | None]:
        """Hold the slots of ``ticket`` (:meth:`reserve`) in this process while the body
        runs, renewed; yields the :class:`Deadline`, or None when the ticket is not whole
        (malformed, or a slot given back or expired: the caller takes its own with
        :meth:`slot`)."""
        mine: list[Lease] = []
        whole = isinstance(ticket, list) and bool(ticket)
        for item in ticket if whole else []:
            try:
                scope, slot, token = item
                lease = hand_over(self.store, str(scope), int(slot), str(token),
                                  LEASE_SECONDS)
            except (TypeError, ValueError):
                lease = None
            if lease is None:
                whole = False
            else:
                mine.append(lease)
        with ExitStack() as stack:
            for lease in mine:
                self._hold(lease)
                stack.callback(self._give_back, lease)
            if not whole:
                stack.close()
                yield None
                return
            yield Deadline(time.monotonic() + self.timeout)

    def _rate_refusal(self, client: str) -> ComputeRefused | None:
        # The app's limiter (dashboard.limits, which installs this gate: looked up, not
        # imported); outside a request (a test, a command) nothing is counted.
        limits = current_app.extensions.get("costdash-limits") if has_app_context() else None
        found = None if limits is None else limits.heavy_refusal(client)
        if found is None:
            return None
        message, wait = found
        return ComputeRefused(message, 429, wait)

    def run(self, what: str, fn: Callable[..., Any], *args: Any, client: str,
            handle: str | None = None,
            progress: Callable[[int, int], None] | None = None) -> Any:
        """``fn(*args)`` through the gate, in a child process stopped at the deadline
        (``progress``: see :func:`run_bounded`)."""
        with self.slot(what, client=client, handle=handle) as deadline:
            return run_bounded(fn, *args, timeout=deadline.seconds_left(), what=what,
                               progress=progress)


_gates: weakref.WeakKeyDictionary[Services, ComputeGate] = weakref.WeakKeyDictionary()
_gates_lock = threading.Lock()


def _after_fork_in_child() -> None:
    # A forked process (a background job's, a Celery pool process) starts with no gate: its
    # parent's held leases, per-process semaphore and registry lock (possibly held by another
    # thread at the fork) are the parent's, not its own.
    global _gates, _gates_lock
    _gates, _gates_lock = weakref.WeakKeyDictionary(), threading.Lock()


os.register_at_fork(after_in_child=_after_fork_in_child)


def gate_for(services: Services) -> ComputeGate:
    """The gate of the app whose services these are (made on first use)."""
    with _gates_lock:
        gate = _gates.get(services)
        if gate is None:
            gate = _gates[services] = ComputeGate(services)
        return gate


@contextmanager
def heavy_work(services: Services, client: str, what: str,
               handle: str | None = None) -> Iterator[Deadline]:
    """Run the body as gated expensive work (see :meth:`ComputeGate.slot`); yields its
    :class:`Deadline`, to pass to :func:`run_bounded` as ``timeout=deadline.seconds_left()``."""
    with gate_for(services).slot(what, client=client, handle=handle) as deadline:
        yield deadline


# --- the child process ---------------------------------------------------------------------------

def _die_with_parent() -> None:
    """Ask the kernel to kill this process when the thread that forked it ends (Linux): a
    background job cancelled from the page, or a Celery pool process killed, takes its
    computation with it instead of leaving it running to its CPU limit."""
    import ctypes

    try:
        libc = ctypes.CDLL(None, use_errno=True)
        libc.prctl(1, signal.SIGKILL)  # PR_SET_PDEATHSIG
    except (OSError, AttributeError):
        pass


def _child(writer: Any, fn: Callable[..., Any], args: tuple, cpu_seconds: int,
           with_progress: bool) -> None:
    _die_with_parent()
    try:
        # A backstop if the parent cannot kill us: the kernel stops a child past its CPU time.
        resource.setrlimit(resource.RLIMIT_CPU, (cpu_seconds, cpu_seconds + 5))
    except (ValueError, OSError):
        pass

    def report(done: int, total: int) -> None:
        writer.send_bytes(json.dumps(["progress", int(done), int(total)]).encode())

    try:
        reply = ["ok", fn(*args, progress=report) if with_progress else fn(*args)]
    except CostdashError as exc:
        reply = ["costdash", type(exc).__name__, str(exc)]
    except Exception as exc:  # noqa: BLE001 - reported to the parent, which logs it
        log.exception("gated work failed")
        reply = ["crash", f"{type(exc).__name__}: {exc}"]
    try:
        writer.send_bytes(json.dumps(reply, allow_nan=True).encode())
    finally:
        writer.close()


def run_bounded(fn: Callable[..., Any], *args: Any, timeout: float,
                what: str = "computation",
                progress: Callable[[int, int], None] | None = None) -> Any:
    """``fn(*args)`` in a forked child process, stopped after ``timeout`` seconds.

    Parameters
    ----------
    fn : callable
        Returns JSON-able values (they cross a pipe as JSON); inherits this process's memory
        (fork), so ``args`` may be anything, unpickled.
    timeout : float
        Seconds; past them the child is killed and :class:`ComputeTimedOut` raised.
    what : str
        Named in the message.
    progress : callable, optional
        ``progress(done, total)``, called in this process as the child reports: the child
        calls ``fn(*args, progress=report)`` and each ``report(done, total)`` crosses the pipe.
        None: ``fn(*args)``.

    Returns
    -------
    Any
        ``fn``'s value, through JSON. A :class:`~costdash.errors.CostdashError` it raises is
        raised here again (same class when the core defines it); any other failure as a
        ``RuntimeError`` (its details logged by the child).
    """
    # os.fork, not multiprocessing.Process: a Celery pool process is a daemonic process, which
    # multiprocessing does not let have children.
    reader, writer = multiprocessing.Pipe(duplex=False)
    pid = os.fork()
    if pid == 0:  # the child: never returns into the caller's code
        try:
            reader.close()
            _child(writer, fn, args, int(timeout) + 5, progress is not None)
        finally:
            os._exit(0)
    writer.close()
    ends = time.monotonic() + max(0.0, timeout)
    ended = False
    try:
        while True:
            if not reader.poll(max(0.0, ends - time.monotonic())):
                raise ComputeTimedOut(
                    f"The {what} took longer than {_duration(timeout)}, the limit of one "
                    "computation here, and was stopped. Try it with less work (fewer "
                    "classifiers or replicates).", 503, RETRY_AFTER_BUSY)
            try:
                reply = json.loads(reader.recv_bytes())
            except EOFError:
                _, status = os.waitpid(pid, 0)
                ended = True
                raise RuntimeError(f"the {what}'s process died (exit code "
                                   f"{os.waitstatus_to_exitcode(status)})") from None
            if reply[0] != "progress":
                break
            if progress is not None:
                progress(reply[1], reply[2])
    finally:
        reader.close()
        if not ended:
            try:
                os.kill(pid, signal.SIGKILL)  # done already, or past its deadline
            except ProcessLookupError:
                pass
            os.waitpid(pid, 0)
    if reply[0] == "ok":
        return reply[1]
    if reply[0] == "costdash":
        cls = getattr(core_errors, reply[1], CostdashError)
        if not (isinstance(cls, type) and issubclass(cls, CostdashError)):
            cls = CostdashError
        raise cls(reply[2])
    raise RuntimeError(f"the {what} failed: {reply[1]}")


# --- HTTP ---------------------------------------------------------------------------------------

def refusal_response(exc: ComputeRefused) -> Response:
    """The answer to a refused or stopped computation: ``exc.status`` with ``Retry-After``;
    JSON ``{"error": ...}`` under ``/api/`` and ``/_dash``, a short HTML page elsewhere."""
    from html import escape

    if not has_request_context() or request.path.startswith(("/api/", "/_dash")):
        reply = jsonify({"error": exc.message})
    else:
        reply = Response(f"<!doctype html><title>costdash: busy</title><p>{escape(exc.message)}"
                         "</p>", mimetype="text/html")
    reply.status_code = exc.status
    reply.headers["Retry-After"] = str(exc.retry_after)
    return reply


def install_gate(server: Flask, services: Services) -> ComputeGate:
    """Make the app's gate and answer :class:`ComputeRefused` on every route."""
    server.register_error_handler(ComputeRefused, refusal_response)
    return gate_for(services)
