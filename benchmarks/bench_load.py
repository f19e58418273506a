"""Loopback load test of the web role (a script, not a test; tests/deploy/test_load.py runs a
small bounded instance of the same code).

    .venv/bin/python benchmarks/bench_load.py                       # PostgreSQL + Redis, 50 x 200
    .venv/bin/python benchmarks/bench_load.py --backend sqlite      # SQLite file + file cache
    .venv/bin/python benchmarks/bench_load.py --clients 20 --requests 25 --json out.json

What runs, all on 127.0.0.1:

1. The web role exactly as deployed (``gunicorn -c gunicorn.conf.py app:server``, started by
   tests/support/processes.py) with ``--workers`` worker processes (default 4, ``gthread``
   with the config's 4 threads each). Storage: a fresh PostgreSQL database and a fresh Redis
   database number for the result cache (``--backend postgres``, the default), or the
   embedded default: a SQLite file and a file cache in a temp data dir (``--backend sqlite``).
2. ``--analyses`` shared analyses are saved through ``POST /api/v1/analyses`` (different files,
   so different data sets), and every worker is warmed up.
3. **Baseline**, in the same run, before the load: one client, ``--baseline`` sequential
   requests of each kind.
4. **Load**: ``--clients`` threads start together (a barrier), each with its own
   ``requests.Session`` (keep-alive, as a browser would), and send ``--requests`` requests each,
   cycling through the mix below from a different starting point per client.

The mix (a "link view" is the read-only page's HTML, the request a shared link makes first):

=============  =====================================  ========  ==============================
kind           request                                expected  checked in the body
=============  =====================================  ========  ==============================
link           ``GET /s/<share token>``               200       Dash page, no manage token
api            ``GET /api/v1/analyses/<share token>`` 200       the analysis's id and name
healthz        ``GET /healthz``                       200       ``{"status": "ok"}``
dead-link      ``GET /s/<unknown token>``             404       the friendly 404 page
=============  =====================================  ========  ==============================

Every response is checked (status and body); anything else, a connection error or a timeout
counts as an error and the first few are printed. Output: throughput, p50/p95/p99 latency
overall and per kind, errors, the single-client baseline and the ratios of the loaded p95s to
it; the server log is scanned for tracebacks and 5xx lines. The client threads share the
machine (and Python's GIL) with the server, so on a small machine the figures include the
client's own overhead: they are an upper bound of the server's latency.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import re
import secrets
import sys
import tempfile
import threading
import time
from collections import Counter, defaultdict
from collections.abc import Callable, Iterator
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

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


# --- the requests ---------------------------------------------------------------------------------

@dataclass(frozen=True)
class Saved:
    """A saved analysis the clients read."""

    id: str
    name: str
    share: str
    manage: str


@dataclass(frozen=True)
class Target:
    """One kind of request: its path, the status it must get and a check of its body."""

    kind: str
    path: str
    status: int
    check: Callable[[requests.Response], bool]


def targets_for(saved: Saved) -> dict[str, Target]:
    """The four kinds of :data:`KINDS` aimed at one saved analysis."""
    dead = secrets.token_urlsafe(24)  # well-formed, unknown: the lookup runs, then 404
    return {
        "link": Target("link", f"/s/{saved.share}", 200,
                       lambda r: "react-entry-point" in r.text and saved.manage not in r.text),
        "api": Target("api", f"/api/v1/analyses/{saved.share}", 200,
                      lambda r: _is_analysis(r.json(), saved)),
        "healthz": Target("healthz", "/healthz", 200, lambda r: r.json() == {"status": "ok"}),
        "dead-link": Target("dead-link", f"/s/{dead}", 404, lambda r: "leads nowhere" in r.text),
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


def timed_get(session: requests.Session, base: str, target: Target) -> Sample:
    """One request, timed from before sending to the whole body read; checked."""
    start = time.perf_counter()
    try:
        resp = session.get(base + target.path, timeout=TIMEOUT)
        size = len(resp.content)  # reading the body is part of the latency
        elapsed = time.perf_counter() - start
    except requests.RequestException as exc:
        return Sample(target.kind, time.perf_counter() - start, None,
                      f"{type(exc).__name__}: {exc}")
    error = None
    if resp.status_code != target.status:
        error = f"status {resp.status_code}, expected {target.status}: {resp.text[:200]!r}"
    else:
        try:
            if not target.check(resp):
                error = f"unexpected body: {resp.text[:200]!r}"
        except ValueError as exc:  # JSON that does not parse
            error = f"bad JSON ({exc}): {resp.text[:200]!r}"
    return Sample(target.kind, elapsed, resp.status_code, error, size)


# --- running it -----------------------------------------------------------------------------------

@dataclass
class LoadResult:
    """Samples of one phase and its wall time."""

    samples: list[Sample]
    wall_seconds: float
    clients: int
    requests_per_client: int

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


def run_load(base: str, analyses: list[Saved], clients: int, requests_per_client: int,
             mix: tuple[str, ...] = MIX) -> LoadResult:
    """``clients`` threads, started together, each sending ``requests_per_client`` requests.

    Client ``i`` reads analysis ``i mod len(analyses)`` and starts its walk through ``mix`` at
    position ``i``, so at any moment every kind of request is in flight.
    """
    per_analysis = [targets_for(a) for a in analyses]
    samples: list[list[Sample]] = [[] for _ in range(clients)]
    barrier = threading.Barrier(clients + 1)

    def client(i: int) -> None:
        targets = per_analysis[i % len(per_analysis)]
        with requests.Session() as session:
            barrier.wait()
            for k in range(requests_per_client):
                samples[i].append(timed_get(session, base, targets[mix[(i + k) % len(mix)]]))

    threads = [threading.Thread(target=client, args=(i,), daemon=True) for i in range(clients)]
    for t in threads:
        t.start()
    barrier.wait()  # every client has its session: the clock starts with the first request
    start = time.perf_counter()
    for t in threads:
        t.join()
    wall = time.perf_counter() - start
    return LoadResult([s for per in samples for s in per], wall, clients, requests_per_client)


def run_baseline(base: str, saved: Saved, n: int) -> LoadResult:
    """One client, ``n`` sequential requests of each kind (kinds interleaved)."""
    targets = targets_for(saved)
    samples: list[Sample] = []
    start = time.perf_counter()
    with requests.Session() as session:
        for _ in range(n):
            for kind in KINDS:
                samples.append(timed_get(session, base, targets[kind]))
    return LoadResult(samples, time.perf_counter() - start, 1, n * len(KINDS))


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
                           body["manage_token"]))
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
        env = deploy_env(workdir / "data", secret_key=secrets.token_hex(32), **extra)
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
    return {"server_workers": server, "client": me.user + me.system}


def server_problems(log_text: str) -> list[str]:
    """Lines of the gunicorn log that show a failure: tracebacks, 5xx replies, worker restarts."""
    bad = re.compile(r'Traceback|" 5\d\d |WORKER TIMEOUT|Worker \(pid:\d+\) was sent|'
                     r"\[ERROR\]|\[CRITICAL\]")
    return [line for line in log_text.splitlines() if bad.search(line)]


def worker_pids(log_text: str) -> Counter:
    """Requests per worker, from the access log's ``pid=`` field (gunicorn.conf.py)."""
    return Counter(re.findall(r'" \d{3} .* pid=<?(\d+)>?', log_text))


# --- reporting ------------------------------------------------------------------------------------

def percentiles_ms(x: np.ndarray) -> dict[str, float]:
    if len(x) == 0:
        return {"p50": float("nan"), "p95": float("nan"), "p99": float("nan")}
    p50, p95, p99 = np.percentile(x, [50, 95, 99]) * 1000
    return {"p50": round(float(p50), 2), "p95": round(float(p95), 2), "p99": round(float(p99), 2)}


def summary(load: LoadResult, baseline: LoadResult) -> dict[str, Any]:
    """Throughput, percentiles per kind and overall, errors, and loaded/baseline p95 ratios."""
    out: dict[str, Any] = {
        "requests": len(load.samples), "wall_s": round(load.wall_seconds, 3),
        "throughput_rps": round(len(load.samples) / load.wall_seconds, 1),
        "errors": len(load.errors), "overall": percentiles_ms(load.latencies()),
        "baseline_errors": len(baseline.errors), "kinds": {},
        "statuses": {k: {str(s): n for s, n in c.items()} for k, c in load.statuses().items()},
    }
    for kind in KINDS:
        loaded, single = percentiles_ms(load.latencies(kind)), percentiles_ms(
            baseline.latencies(kind))
        sizes = [s.size for s in load.samples if s.kind == kind]
        out["kinds"][kind] = {"n": int(len(load.latencies(kind))), "load": loaded,
                              "bytes": int(np.mean(sizes)) if sizes else 0,
                              "baseline": single,
                              "p95_ratio": round(loaded["p95"] / single["p95"], 1)}
    healthz = out["kinds"]["healthz"]["baseline"]["p95"]
    out["overall_p95_over_baseline_healthz_p95"] = round(out["overall"]["p95"] / healthz, 1)
    return out


def print_summary(s: dict[str, Any], config: dict[str, Any]) -> None:
    print(f"\n{config['clients']} clients x {config['requests']} requests, "
          f"{config['workers']} gunicorn workers, backend {config['backend']}")
    print(f"{s['requests']} requests in {s['wall_s']:.2f} s: {s['throughput_rps']:.0f} req/s; "
          f"errors: {s['errors']} (baseline: {s['baseline_errors']})")
    o = s["overall"]
    print(f"overall latency  p50 {o['p50']:.1f} ms  p95 {o['p95']:.1f} ms  p99 {o['p99']:.1f} ms; "
          f"p95 / single-client healthz p95 = {s['overall_p95_over_baseline_healthz_p95']}x")
    print(f"\n| kind | n | body bytes | p50 ms | p95 ms | p99 ms | single-client p50 ms | "
          f"single-client p95 ms | p95 ratio |\n|---|---:|---:|---:|---:|---:|---:|---:|---:|")
    for kind, k in s["kinds"].items():
        load, single = k["load"], k["baseline"]
        print(f"| {kind} | {k['n']} | {k['bytes']:,} | {load['p50']:.1f} | {load['p95']:.1f} | "
              f"{load['p99']:.1f} | {single['p50']:.1f} | {single['p95']:.1f} "
              f"| {k['p95_ratio']}x |")
    print(f"\nstatuses: {s['statuses']}")
    if "cpu_seconds" in s:
        print(f"CPU seconds during the load: server workers {s['cpu_seconds']['server_workers']}, "
              f"client threads {s['cpu_seconds']['client']} (wall {s['wall_s']:.1f} s)")


def run(backend: str = "postgres", clients: int = 50, requests_per_client: int = 200,
        workers: int = 4, analyses: int = 3, baseline: int = 100, rows: int = 2000,
        workdir: Path | None = None) -> dict[str, Any]:
    """Start the web role, save analyses, measure the baseline then the load.

    Parameters
    ----------
    backend : {"postgres", "sqlite"}
        Storage and cache of the web role (see :func:`web_role`).
    clients, requests_per_client : int
        Concurrent client threads and requests each sends.
    workers : int
        gunicorn worker processes.
    analyses : int
        Saved analyses the clients read (client ``i`` reads number ``i mod analyses``).
    baseline : int
        Sequential single-client requests of each kind measured before the load.
    rows : int
        Examples in each saved analysis's file (three classifiers); the analysis JSON grows with
        it (every ROC point is in it).
    workdir : Path, optional
        Where the data dir and the server log go (a temp dir by default).

    Returns
    -------
    dict
        ``config``, ``load`` and ``baseline`` (:class:`LoadResult`), ``summary``
        (:func:`summary`), ``server_problems`` (log lines), ``worker_pids`` (requests per
        worker pid) and ``log`` (the server log).
    """
    config = {"backend": backend, "clients": clients, "requests": requests_per_client,
              "workers": workers, "analyses": analyses, "baseline": baseline, "rows": rows}
    with ExitStack() as stack:
        if workdir is None:
            workdir = Path(stack.enter_context(
                tempfile.TemporaryDirectory(prefix="costdash-load-")))
        role = stack.enter_context(web_role(backend, workdir, workers))
        saved = save_analyses(role.url, analyses, rows)
        # Warm-up: every worker imports lazily and opens its pools on first use.
        warm = run_load(role.url, saved, clients=max(workers * 4, 8), requests_per_client=len(MIX))
        if warm.errors:
            raise RuntimeError(f"warm-up failed: {warm.errors[0].error}")
        single = run_baseline(role.url, saved[0], baseline)
        cpu_before = cpu_seconds(role)
        load = run_load(role.url, saved, clients, requests_per_client)
        cpu_after = cpu_seconds(role)
        log = role.log_text()
    cpu = {k: round(cpu_after[k] - cpu_before[k], 1) for k in cpu_before}
    return {"config": config, "load": load, "baseline": single,
            "summary": {**summary(load, single), "cpu_seconds": cpu},
            "server_problems": server_problems(log), "worker_pids": worker_pids(log), "log": log}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--backend", choices=("postgres", "sqlite"), default="postgres")
    parser.add_argument("--clients", type=int, default=50)
    parser.add_argument("--requests", type=int, default=200, help="requests per client")
    parser.add_argument("--workers", type=int, default=4)
    parser.add_argument("--analyses", type=int, default=3)
    parser.add_argument("--baseline", type=int, default=100,
                        help="single-client requests of each kind before the load")
    parser.add_argument("--rows", type=int, default=2000,
                        help="examples in each saved analysis's file (3 classifiers)")
    parser.add_argument("--json", type=Path, help="also write the summary here")
    args = parser.parse_args(argv)

    load_before = os.getloadavg()
    result = run(args.backend, args.clients, args.requests, args.workers, args.analyses,
                 args.baseline, args.rows)
    load_after = os.getloadavg()
    print(f"Python {platform.python_version()}, {os.cpu_count()} CPUs, load average "
          f"{load_before[0]:.2f} before, {load_after[0]:.2f} after")
    print_summary(result["summary"], result["config"])
    pids = result["worker_pids"]
    print(f"requests per worker pid (whole run): {dict(sorted(pids.items()))}")
    for sample in result["load"].errors[:5]:
        print(f"ERROR {sample.kind}: {sample.error}")
    for line in result["server_problems"][:10]:
        print(f"SERVER LOG: {line}")
    if args.json:
        args.json.write_text(json.dumps({"config": result["config"], "summary": result["summary"],
                                         "server_problems": result["server_problems"],
                                         "worker_pids": dict(pids),
                                         "loadavg": [load_before[0], load_after[0]]}, indent=2))
    return 1 if result["load"].errors or result["server_problems"] else 0


if __name__ == "__main__":
    raise SystemExit(main())
