"""The requests of the loopback load test, the clients that send them and the summary of their
timings (benchmarks/bench_load.py is the script; its docstring says what runs)."""

from __future__ import annotations

import http.client
import json
import os
import re
import secrets
import select
import sys
import threading
import time
from collections import Counter, defaultdict
from collections.abc import Callable, Iterator, Mapping
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import numpy as np
import psutil
import requests

REPO = Path(__file__).resolve().parents[1]
if str(REPO) not in sys.path:
    sys.path.insert(0, str(REPO))

from tests.support.processes import Role, deploy_env, start_web  # noqa: E402
from tests.support.services import fresh_postgres_database, fresh_redis_url  # noqa: E402

KINDS = ("link", "api", "healthz", "dead-link")
MIX = ("link", "api", "link", "api", "healthz", "link", "api", "dead-link")
"""One cycle of a client's requests: link views and API reads dominate, as on a shared link."""
TIMEOUT = 60.0
JSON_HEADERS = {"Content-Type": "application/json"}


# --- the requests ---------------------------------------------------------------------------------

@dataclass(frozen=True)
class Saved:
    """A saved analysis the clients read."""

    id: str
    name: str
    share: str
    manage: str
    data: str = ""
    """The analysis's read-only data handle (what its page's callbacks read)."""


@dataclass(frozen=True)
class Target:
    """One kind of request: its path, the status it must get and a check of its body (a POST
    sends ``body``, JSON, as the page's callbacks do)."""

    kind: str
    path: str
    status: int
    check: Callable[[requests.Response], bool]
    method: str = "GET"
    body: str | None = None


def targets_for(saved: Saved) -> dict[str, Target]:
    """The four kinds of :data:`KINDS` aimed at one saved analysis."""
    dead = secrets.token_urlsafe(24)  # well-formed, unknown: the lookup runs, then 404
    return {
        "link": Target("link", f"/s/{saved.share}", 200,
                       lambda r: b"react-entry-point" in r.content
                       and saved.manage.encode() not in r.content),
        "api": Target("api", f"/api/v1/analyses/{saved.share}", 200,
                      lambda r: _is_analysis(r.json(), saved)),
        "healthz": Target("healthz", "/healthz", 200, lambda r: r.json() == {"status": "ok"}),
        "dead-link": Target("dead-link", f"/s/{dead}", 404,
                            lambda r: b"leads nowhere" in r.content),
    }


def _is_analysis(body: dict[str, Any], saved: Saved) -> bool:
    return (body["analysis"]["id"] == saved.id and body["analysis"]["name"] == saved.name
            and len(body["classifiers"]) > 0)


@dataclass
class Sample:
    kind: str
    seconds: float
    status: int | None
    error: str | None = None
    size: int = 0


class Reply:
    """What a check sees of a reply: ``status_code``, ``content`` (bytes), ``text`` and
    ``json()`` (the names of :class:`requests.Response`, so a check reads either)."""

    __slots__ = ("status_code", "content")

    def __init__(self, status_code: int, content: bytes):
        self.status_code, self.content = status_code, content

    @property
    def text(self) -> str:
        return self.content.decode("utf-8", "replace")

    def json(self) -> Any:
        return json.loads(self.content)


class Connection:
    """One client's keep-alive HTTP/1.1 connection to the server (:mod:`http.client`: a
    fraction of the CPU of ``requests`` per request; the clients share the machine with the
    server, so what they spend is taken from it).

    A connection the server closed while idle (gunicorn's ``keepalive`` is 5 s) is noticed
    before the request is sent, and a request that finds it closed as it is sent is sent again
    once on a new connection (:attr:`reconnects` counts both), as urllib3 does for
    ``requests``: neither is the server failing a request.
    """

    def __init__(self, base: str, timeout: float = TIMEOUT):
        parts = urlsplit(base)
        self.host, self.port, self.timeout = parts.hostname, parts.port or 80, timeout
        self.conn: http.client.HTTPConnection | None = None
        self.reconnects = 0

    def _fresh(self) -> http.client.HTTPConnection:
        self.close()
        self.conn = http.client.HTTPConnection(self.host, self.port, timeout=self.timeout)
        return self.conn

    def _stale(self) -> bool:
        sock = self.conn.sock if self.conn is not None else None
        if sock is None:
            return False
        readable, _, _ = select.select([sock], [], [], 0)
        return bool(readable)  # an idle keep-alive socket is readable only once closed

    def request(self, method: str, path: str, body: bytes | None,
                headers: Mapping[str, str]) -> Reply:
        reused = self.conn is not None and self.conn.sock is not None
        if self.conn is None or self._stale():
            if self.conn is not None:
                self.reconnects += 1
            self._fresh()
            reused = False
        try:
            return self._send(method, path, body, headers)
        except (http.client.RemoteDisconnected, ConnectionResetError, BrokenPipeError):
            if not reused:
                raise
            self.reconnects += 1
            self._fresh()
            return self._send(method, path, body, headers)

    def _send(self, method: str, path: str, body: bytes | None,
              headers: Mapping[str, str]) -> Reply:
        assert self.conn is not None
        self.conn.request(method, path, body=body, headers=headers)
        resp = self.conn.getresponse()
        content = resp.read()  # reading the body is part of the latency
        if resp.will_close:
            self.close()
        return Reply(resp.status, content)

    def close(self) -> None:
        if self.conn is not None:
            self.conn.close()
            self.conn = None


_VERIFIED: dict[tuple[Any, ...], bool] = {}
"""Replies already checked, by (target, status, digest of the body): a check is a function of
the body, so the same bytes get the same verdict without decoding 100 kB of JSON again."""


def _check(target: Target, reply: Reply) -> str | None:
    """None when ``reply`` has the target's status and its body passes the target's check,
    else what is wrong."""
    if reply.status_code != target.status:
        return f"status {reply.status_code}, expected {target.status}: {reply.content[:200]!r}"
    key = (target.kind, target.method, target.path, target.body, reply.status_code,
           hash(reply.content))
    if key in _VERIFIED:
        return None
    try:
        if not target.check(reply):
            return f"unexpected body: {reply.content[:200]!r}"
    except ValueError as exc:  # JSON that does not parse
        return f"bad JSON ({exc}): {reply.content[:200]!r}"
    _VERIFIED[key] = True
    return None


KIND_HEADER = "X-Load-Kind"
"""Names the kind of each request for the server's access log (gunicorn.conf.py logs it with
the server's time when ``COSTDASH_LOG_REQUEST_KIND=1``: :func:`server_times`)."""


def _encoded(target: Target) -> tuple[bytes | None, dict[str, str]]:
    """The request body as bytes and its headers, made once per target (not per request)."""
    if target.body is None:
        return None, {KIND_HEADER: target.kind}
    body = target.body.encode()
    return body, {**JSON_HEADERS, "Content-Length": str(len(body)), KIND_HEADER: target.kind}


def timed_request(conn: Connection, target: Target,
                  encoded: tuple[bytes | None, dict[str, str]] | None = None) -> Sample:
    """One request on a keep-alive connection, timed from before sending to the whole body
    read; checked (:func:`_check`)."""
    body, headers = encoded if encoded is not None else _encoded(target)
    start = time.perf_counter()
    try:
        reply = conn.request(target.method, target.path, body, headers)
        elapsed = time.perf_counter() - start
    except (OSError, http.client.HTTPException) as exc:
        conn.close()
        return Sample(target.kind, time.perf_counter() - start, None,
                      f"{type(exc).__name__}: {exc}")
    return Sample(target.kind, elapsed, reply.status_code, _check(target, reply),
                  len(reply.content))


def timed_get(session: requests.Session, base: str, target: Target) -> Sample:
    """One request through ``requests`` (kept for callers outside the load; the load's clients
    use :func:`timed_request`), timed from before sending to the whole body read; checked."""
    start = time.perf_counter()
    try:
        if target.body is None:
            resp = session.request(target.method, base + target.path, timeout=TIMEOUT)
        else:
            resp = session.request(target.method, base + target.path, data=target.body,
                                   headers=JSON_HEADERS, timeout=TIMEOUT)
        content = resp.content
        elapsed = time.perf_counter() - start
    except requests.RequestException as exc:
        return Sample(target.kind, time.perf_counter() - start, None,
                      f"{type(exc).__name__}: {exc}")
    return Sample(target.kind, elapsed, resp.status_code,
                  _check(target, Reply(resp.status_code, content)), len(content))


# --- running it -----------------------------------------------------------------------------------

@dataclass
class LoadResult:
    """Samples of one phase and its wall time."""

    samples: list[Sample]
    wall_seconds: float
    clients: int
    requests_per_client: int
    reconnects: int = 0
    """Keep-alive connections found closed by the server and opened again (not errors)."""

    @property
    def errors(self) -> list[Sample]:
        return [s for s in self.samples if s.error is not None]

    def statuses(self) -> dict[str, Counter]:
        out: dict[str, Counter] = defaultdict(Counter)
        for s in self.samples:
            out[s.kind][s.status] += 1
        return dict(out)

    def latencies(self, kind: str | None = None) -> np.ndarray:
        return np.array([s.seconds for s in self.samples if kind is None or s.kind == kind])


def run_load(base: str, analyses: list[Saved] | list[dict[str, Target]], clients: int,
             requests_per_client: int, mix: tuple[str, ...] = MIX) -> LoadResult:
    """``clients`` threads, started together, each sending ``requests_per_client`` requests.

    Client ``i`` reads analysis ``i mod len(analyses)`` and starts its walk through ``mix`` at
    position ``i``, so at any moment every kind of request is in flight. ``analyses`` are saved
    analyses (the kinds of :func:`targets_for`) or, per analysis, the targets by kind (a
    viewer's page: :func:`viewer_targets`). Each client keeps one keep-alive connection
    (:class:`Connection`, as a browser would) and sends bodies encoded before the clock starts.
    """
    per_analysis = [a if isinstance(a, dict) else targets_for(a) for a in analyses]
    encoded = [{kind: _encoded(t) for kind, t in targets.items()} for targets in per_analysis]
    samples: list[list[Sample]] = [[] for _ in range(clients)]
    reconnects = [0] * clients
    barrier = threading.Barrier(clients + 1)

    def client(i: int) -> None:
        targets, bodies = per_analysis[i % len(per_analysis)], encoded[i % len(per_analysis)]
        conn = Connection(base)
        try:
            barrier.wait()
            for k in range(requests_per_client):
                kind = mix[(i + k) % len(mix)]
                samples[i].append(timed_request(conn, targets[kind], bodies[kind]))
        finally:
            reconnects[i] = conn.reconnects
            conn.close()

    threads = [threading.Thread(target=client, args=(i,), daemon=True) for i in range(clients)]
    for t in threads:
        t.start()
    barrier.wait()  # every client has its connection object: the clock starts now
    start = time.perf_counter()
    for t in threads:
        t.join()
    wall = time.perf_counter() - start
    return LoadResult([s for per in samples for s in per], wall, clients, requests_per_client,
                      sum(reconnects))


def run_baseline(base: str, saved: Saved | dict[str, Target], n: int) -> LoadResult:
    """One client, ``n`` sequential requests of each kind (kinds interleaved)."""
    targets = saved if isinstance(saved, dict) else targets_for(saved)
    bodies = {kind: _encoded(t) for kind, t in targets.items()}
    samples: list[Sample] = []
    conn = Connection(base)
    start = time.perf_counter()
    try:
        for _ in range(n):
            for kind in targets:
                samples.append(timed_request(conn, targets[kind], bodies[kind]))
    finally:
        conn.close()
    return LoadResult(samples, time.perf_counter() - start, 1, n * len(targets),
                      conn.reconnects)


def predictions_csv(seed: int, n: int = 5000, models: int = 3) -> bytes:
    """A wide predictions file; a different seed gives different content (another data set)."""
    rng = np.random.default_rng(seed)
    y = rng.random(n) < 0.3
    columns = {"y_true": y.astype(int)}
    for m in range(models):
        columns[f"model_{m}"] = np.round(rng.normal(size=n) + (0.8 + 0.4 * m) * y, 4)
    header = ",".join(columns)
    rows = np.column_stack(list(columns.values()))
    lines = [",".join(f"{v:g}" for v in row) for row in rows]
    return (header + "\n" + "\n".join(lines) + "\n").encode()


def save_analyses(base: str, count: int, rows: int = 2000) -> list[Saved]:
    """Save ``count`` analyses of different files (``rows`` examples each) through the API."""
    saved = []
    for i in range(count):
        resp = requests.post(base + "/api/v1/analyses", timeout=120,
                             files={"file": (f"load-{i}.csv", predictions_csv(seed=i, n=rows))},
                             data={"name": f"load test {i}", "p_pos": "0.2", "cost_fn": "5"})
        if resp.status_code != 201:
            raise RuntimeError(f"saving analysis {i} failed: {resp.status_code} {resp.text}")
        body = resp.json()
        saved.append(Saved(body["id"], body["name"], body["url"].rsplit("/", 1)[1],
                           body["manage_token"], body.get("dataset_id", "")))
    return saved


@contextmanager
def web_role(backend: str, workdir: Path, workers: int) -> Iterator[Role]:
    """The web role on ``backend`` ("postgres": fresh database + Redis cache; "sqlite")."""
    with ExitStack() as stack:
        extra: dict[str, str] = {}
        if backend == "postgres":
            extra["database_url"] = stack.enter_context(fresh_postgres_database())
            extra["cache_url"] = stack.enter_context(fresh_redis_url())
        elif backend != "sqlite":
            raise ValueError(f"unknown backend {backend!r}")
        env = deploy_env(workdir / "data", secret_key=secrets.token_hex(32),
                         COSTDASH_LOG_REQUEST_KIND="1", **extra)
        role = start_web(env, workdir / "web.log", workers=workers)
        try:
            yield role
        finally:
            role.stop()


def cpu_seconds(role: Role) -> dict[str, float]:
    """CPU time (user + system) so far of the gunicorn workers and of this client process.

    On a small machine the clients compete with the server for the CPUs; the split says how
    much of the run the server itself used."""
    server = 0.0
    for worker in role.children():
        try:
            t = worker.cpu_times()
            server += t.user + t.system
        except psutil.NoSuchProcess:
            pass
    me = os.times()
    t = psutil.cpu_times()
    # Everything the machine's CPUs did: the difference to server + client is PostgreSQL,
    # Redis and whatever else runs (other sessions' jobs on a shared machine).
    busy = sum(t) - t.idle - getattr(t, "iowait", 0.0)
    return {"server_workers": server, "client": me.user + me.system, "machine": busy}


def server_problems(log_text: str) -> list[str]:
    """Lines of the gunicorn log that show a failure: tracebacks, 5xx replies, worker restarts."""
    bad = re.compile(r'Traceback|" 5\d\d |WORKER TIMEOUT|Worker \(pid:\d+\) was sent|'
                     r"\[ERROR\]|\[CRITICAL\]")
    return [line for line in log_text.splitlines() if bad.search(line)]


def server_times(log_text: str) -> dict[str, np.ndarray]:
    """The server's time of each request (seconds, gunicorn's ``%(D)s``: from the request
    parsed to the reply written, in the worker) by the kind its client named
    (:data:`KIND_HEADER`); empty unless the role logged them (``COSTDASH_LOG_REQUEST_KIND``)."""
    out: dict[str, list[float]] = defaultdict(list)
    for kind, us in re.findall(r" kind=(\S+) us=(\d+)", log_text):
        if kind != "-":
            out[kind].append(int(us) / 1e6)
    return {kind: np.array(v) for kind, v in out.items()}


def worker_pids(log_text: str) -> Counter:
    """Requests per worker, from the access log's ``pid=`` field (gunicorn.conf.py)."""
    return Counter(re.findall(r'" \d{3} .* pid=<?(\d+)>?', log_text))



# --- reporting ------------------------------------------------------------------------------------

def percentiles_ms(x: np.ndarray) -> dict[str, float]:
    if len(x) == 0:
        return {"p50": float("nan"), "p95": float("nan"), "p99": float("nan")}
    p50, p95, p99 = np.percentile(x, [50, 95, 99]) * 1000
    return {"p50": round(float(p50), 2), "p95": round(float(p95), 2), "p99": round(float(p99), 2)}


def summary(load: LoadResult, baseline: LoadResult,
            server: Mapping[str, np.ndarray] | None = None) -> dict[str, Any]:
    """Throughput, percentiles per kind and overall, errors, and loaded/baseline p95 ratios;
    with ``server`` (:func:`server_times` of the load's requests), each kind's server time."""
    out: dict[str, Any] = {
        "requests": len(load.samples), "wall_s": round(load.wall_seconds, 3),
        "throughput_rps": round(len(load.samples) / load.wall_seconds, 1),
        "errors": len(load.errors), "overall": percentiles_ms(load.latencies()),
        "baseline_errors": len(baseline.errors), "kinds": {},
        "statuses": {k: {str(s): n for s, n in c.items()} for k, c in load.statuses().items()},
        "reconnects": load.reconnects,
    }
    for kind in dict.fromkeys(s.kind for s in load.samples):
        loaded, single = percentiles_ms(load.latencies(kind)), percentiles_ms(
            baseline.latencies(kind))
        sizes = [s.size for s in load.samples if s.kind == kind]
        out["kinds"][kind] = {"n": int(len(load.latencies(kind))), "load": loaded,
                              "bytes": int(np.mean(sizes)) if sizes else 0,
                              "baseline": single,
                              "p95_ratio": round(loaded["p95"] / single["p95"], 1)}
        if server and kind in server:
            out["kinds"][kind]["server"] = {**percentiles_ms(server[kind]),
                                             "n": int(len(server[kind]))}
    healthz = out["kinds"]["healthz"]["baseline"]["p95"]
    out["overall_p95_over_baseline_healthz_p95"] = round(out["overall"]["p95"] / healthz, 1)
    return out


