"""The requests of the loopback load test, the clients that send them and the summary of their
timings (benchmarks/bench_load.py is the script; its docstring says what runs)."""

from __future__ import annotations

import os
import re
import secrets
import sys
import threading
import time
from collections import Counter, defaultdict
from collections.abc import Callable, Iterator
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass
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
        if target.body is None:
            resp = session.request(target.method, base + target.path, timeout=TIMEOUT)
        else:
            resp = session.request(target.method, base + target.path, data=target.body,
                                   headers=JSON_HEADERS, timeout=TIMEOUT)
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


def run_load(base: str, analyses: list[Saved] | list[dict[str, Target]], clients: int,
             requests_per_client: int, mix: tuple[str, ...] = MIX) -> LoadResult:
    """``clients`` threads, started together, each sending ``requests_per_client`` requests.

    Client ``i`` reads analysis ``i mod len(analyses)`` and starts its walk through ``mix`` at
    position ``i``, so at any moment every kind of request is in flight. ``analyses`` are saved
    analyses (the kinds of :func:`targets_for`) or, per analysis, the targets by kind (a
    viewer's page: :func:`viewer_targets`).
    """
    per_analysis = [a if isinstance(a, dict) else targets_for(a) for a in analyses]
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


def run_baseline(base: str, saved: Saved | dict[str, Target], n: int) -> LoadResult:
    """One client, ``n`` sequential requests of each kind (kinds interleaved)."""
    targets = saved if isinstance(saved, dict) else targets_for(saved)
    samples: list[Sample] = []
    start = time.perf_counter()
    with requests.Session() as session:
        for _ in range(n):
            for kind in targets:
                samples.append(timed_get(session, base, targets[kind]))
    return LoadResult(samples, time.perf_counter() - start, 1, n * len(targets))


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
    for kind in dict.fromkeys(s.kind for s in load.samples):
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


