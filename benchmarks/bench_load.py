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

With ``--viewers`` the load includes **a viewer's page**: a read link is opened in headless
Chromium, which records the requests its page makes (the page, Dash's layout and dependencies,
every callback POST); the web role is restarted with an empty cache (a cold start) and the
clients replay those requests, with API reads, health checks and dead links; the same load
without callbacks runs next in the same run, for the ratio (:func:`run_viewers`). With
``--link-open``, link open -> both plots drawn for 20 classifiers x 200,000 scores in headless
Chromium, against a bare page that loads the same plotly.js and draws the same two figures
(:func:`run_link_open`): medians and their ratio.

    .venv/bin/python benchmarks/bench_load.py --viewers                 # 50 x 200, cold start
    .venv/bin/python benchmarks/bench_load.py --link-open --samples 5

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
import shutil
import statistics
import sys
import tempfile
import threading
import time
from collections import Counter, defaultdict
from collections.abc import Callable, Iterator
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass, replace
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


# --- a viewer's page: its requests captured from Chromium, then replayed ---------------------------

CHROMIUM = os.environ.get("CHROMIUM_PATH", "/usr/bin/chromium")
LAUNCH_ARGS = ["--no-sandbox", "--disable-gpu", "--disable-background-networking"]
VIEWPORT = {"width": 1480, "height": 1250}
PLOTS = ("roc-graph", "cost-graph")
"""The two plots of a read link's page ("both plots drawn")."""

DRAWN_JS = """(want) => {
    // Both plots hold the traces of the figures the view load sent (their uids) and have drawn
    // them (a trace group in the SVG); the moment is kept in window.__drawnAt.
    const ok = Object.entries(want).every(([id, uids]) => {
        const gd = document.querySelector('#' + id + ' .js-plotly-plot');
        if (!gd || !gd._fullData || !gd.querySelector('.scatterlayer .trace')) return false;
        const have = new Set(gd._fullData.map((t) => t.uid));
        return uids.every((u) => have.has(u));
    });
    if (ok && window.__drawnAt === undefined) window.__drawnAt = performance.now();
    return ok;
}"""


@dataclass(frozen=True)
class Captured:
    """One request the read link's page made in Chromium: the page itself, Dash's layout and
    dependencies, and each callback POST (its body as the browser sent it)."""

    kind: str
    method: str
    path: str
    body: str | None
    status: int
    outputs: tuple[str, ...] = ()


def callback_kind(body: str) -> str:
    """A short name for a callback POST, after its first output (``cb-page-content`` is the
    routing callback, ``cb-roc-graph`` Explore's view load)."""
    first = json.loads(body)["output"].strip(".").split(".")[0]
    return f"cb-{first}"


def is_view_load(resp: Any) -> bool:
    """Whether a response is Explore's view load (the callback that sends both figures)."""
    if "/_dash-update-component" not in resp.url or not resp.request.post_data:
        return False
    return callback_kind(resp.request.post_data) == "cb-roc-graph"


def launch_chromium(playwright: Any) -> Any:
    return playwright.chromium.launch(executable_path=CHROMIUM, args=LAUNCH_ARGS)


def wanted_traces(figures: dict[str, dict[str, Any]]) -> dict[str, list[str]]:
    """The trace uids each plot must show once drawn (those of the figures the view load sent)."""
    return {plot: [t["uid"] for t in figures[plot]["data"] if t.get("uid")] for plot in PLOTS}


def capture_viewer(base: str, share: str, timeout: float = 120.0) -> list[Captured]:
    """Open ``/s/<share>`` in headless Chromium and record the requests the page makes that a
    browser does not cache (static scripts and styles are left out): the page, ``_dash-layout``,
    ``_dash-dependencies`` and every callback POST, until both plots are drawn and the network
    is idle.

    Runs in a thread of its own: Playwright's sync API refuses a thread whose asyncio loop is
    running, which is the test session's once pytest-playwright has started a browser."""
    from concurrent.futures import ThreadPoolExecutor

    with ThreadPoolExecutor(1) as pool:
        return pool.submit(_capture_viewer_in_this_thread, base, share, timeout).result()


def _capture_viewer_in_this_thread(base: str, share: str, timeout: float) -> list[Captured]:
    from playwright.sync_api import sync_playwright

    seen: list[Captured] = []

    def on_response(resp: Any) -> None:
        req = resp.request
        parts = urlsplit(req.url)
        path = parts.path + (f"?{parts.query}" if parts.query else "")
        if req.resource_type == "document":
            seen.append(Captured("link", "GET", path, None, resp.status))
        elif parts.path in ("/_dash-layout", "/_dash-dependencies"):
            seen.append(Captured(parts.path.strip("/_"), req.method, path, None, resp.status))
        elif parts.path == "/_dash-update-component":
            body = req.post_data
            outputs: tuple[str, ...] = ()
            if resp.status == 200:
                outputs = tuple(sorted(resp.json().get("response", {})))
            seen.append(Captured(callback_kind(body), "POST", path, body, resp.status, outputs))

    with sync_playwright() as p:
        browser = launch_chromium(p)
        try:
            page = browser.new_page(viewport=VIEWPORT)
            page.on("response", on_response)
            with page.expect_response(is_view_load, timeout=timeout * 1000) as view:
                page.goto(f"{base}/s/{share}", timeout=timeout * 1000)
            response = view.value.json()["response"]
            want = wanted_traces({plot: response[plot]["figure"] for plot in PLOTS})
            page.wait_for_function(DRAWN_JS, arg=want, timeout=timeout * 1000, polling="raf")
            page.wait_for_load_state("networkidle", timeout=timeout * 1000)
            page.wait_for_timeout(500)  # the last callbacks' replies are handled
        finally:
            browser.close()
    kinds = [c.kind for c in seen]
    if len(set(kinds)) != len(kinds):  # one request of a kind per visit: numbered otherwise
        counts: Counter = Counter()
        numbered = []
        for c in seen:
            counts[c.kind] += 1
            numbered.append(c if counts[c.kind] == 1 else replace(c, kind=f"{c.kind}#{counts[c.kind]}"))
        seen = numbered
    return seen


def retarget(captured: list[Captured], source: Saved, target: Saved) -> list[Captured]:
    """The requests of ``source``'s page made for ``target``'s: the link's token and its data
    handle swapped in the paths and callback bodies (the analyses differ in nothing else the
    page sends)."""
    def swap(text: str | None) -> str | None:
        if text is None:
            return None
        text = text.replace(source.share, target.share)
        return text.replace(source.data, target.data)
    if not source.data or not any(source.data in (c.body or "") for c in captured):
        raise RuntimeError("the captured page does not name its data handle: capture each")
    return [replace(c, path=swap(c.path), body=swap(c.body)) for c in captured]


def viewer_targets(saved: Saved, captured: list[Captured]) -> dict[str, Target]:
    """A viewer's page (``captured``) as targets, plus the API read, the health check and a
    dead link of :func:`targets_for`. Every reply must have the status the browser got; a
    callback's JSON must answer the outputs it answered in the browser."""
    base = targets_for(saved)
    out: dict[str, Target] = {}
    for c in captured:
        if c.kind == "link":
            out["link"] = base["link"]
        elif c.method == "POST":
            out[c.kind] = Target(c.kind, c.path, c.status, _answers(c.outputs), "POST", c.body)
        else:
            out[c.kind] = Target(c.kind, c.path, c.status, lambda r: len(r.content) > 0)
    for kind in ("api", "healthz", "dead-link"):
        out[kind] = base[kind]
    return out


def _answers(outputs: tuple[str, ...]) -> Callable[[requests.Response], bool]:
    def check(resp: requests.Response) -> bool:
        return not outputs or tuple(sorted(resp.json()["response"])) == outputs
    return check


def viewer_mix(captured: list[Captured]) -> tuple[str, ...]:
    """One cycle of a client of the load with callbacks: a viewer's whole page (the link, then
    the requests its page made, in order), an API read, a health check and a dead link."""
    return (*[c.kind for c in captured], "api", "healthz", "dead-link")


def empty_cache(cache_url: str | None, data_dir: Path) -> None:
    """Drop every cached result (the view models, payloads, analyses' JSON) of a deployment."""
    if cache_url:
        import redis

        client = redis.Redis.from_url(cache_url)
        for key in client.scan_iter("costdash:*"):
            client.delete(key)
    else:
        shutil.rmtree(data_dir / "cache", ignore_errors=True)


def run_viewers(backend: str = "postgres", clients: int = 50, requests_per_client: int = 200,
                workers: int = 4, analyses: int = 3, baseline: int = 20, rows: int = 2000,
                cold: bool = True, plain: bool = True, capture_all: bool = False,
                workdir: Path | None = None) -> dict[str, Any]:
    """The load with a viewer's callbacks, from a cold start, and the same load without them.

    1. The web role starts, ``analyses`` analyses are saved and the first link is opened in
       headless Chromium, which records the requests its page makes (:func:`capture_viewer`);
       the other links' pages make the same requests with their own token and data handle
       (:func:`retarget`; ``capture_all`` opens each in Chromium instead).
    2. With ``cold``, the web role is stopped, the result cache emptied and a new web role
       started on the same database: fresh workers, nothing cached, no warm-up.
    3. **Load with callbacks** at once: ``clients`` x ``requests_per_client`` in the cycle of
       :func:`viewer_mix` (client ``i`` replays the page of analysis ``i mod analyses``).
    4. The single-client baseline of every kind (``baseline`` each), then, with ``plain``, the
       **same load without callbacks** (the mix of :data:`MIX`), for the ratio.

    Returns ``config``, ``captured`` (the first analysis's page), ``viewer`` (:class:`LoadResult`
    with callbacks), ``plain`` (without, or None), ``baseline``, ``summary`` and
    ``plain_summary``, ``server_problems`` (of both roles' logs), ``worker_pids``, ``log``.
    """
    config = {"backend": backend, "clients": clients, "requests": requests_per_client,
              "workers": workers, "analyses": analyses, "baseline": baseline, "rows": rows,
              "cold": cold, "callbacks": True}
    with ExitStack() as stack:
        if workdir is None:
            workdir = Path(stack.enter_context(
                tempfile.TemporaryDirectory(prefix="costdash-viewers-")))
        extra: dict[str, str] = {}
        if backend == "postgres":
            extra["database_url"] = stack.enter_context(fresh_postgres_database())
            extra["cache_url"] = stack.enter_context(fresh_redis_url())
        env = deploy_env(workdir / "data", secret_key=secrets.token_hex(32), **extra)
        clock = time.perf_counter()
        phases: dict[str, float] = {}

        def phase(name: str) -> None:
            nonlocal clock
            now = time.perf_counter()
            phases[name] = round(now - clock, 1)
            clock = now

        role = start_web(env, workdir / "web-capture.log", workers=workers)
        phase("start")
        logs = []
        try:
            saved = save_analyses(role.url, analyses, rows)
            phase("save")
            if capture_all:
                captured = [capture_viewer(role.url, s.share) for s in saved]
            else:  # one page in Chromium; the others are the same requests for their link
                first = capture_viewer(role.url, saved[0].share)
                captured = [retarget(first, saved[0], s) for s in saved]
            phase("capture")
        except BaseException:
            role.stop()
            raise
        finally:
            if cold:  # its log before its workers are stopped (that is logged, not a problem)
                logs.append(role.log_text())
                role.stop()
        kinds = [[c.kind for c in page] for page in captured]
        if any(sorted(k) != sorted(kinds[0]) for k in kinds):  # the same requests, in any order
            raise RuntimeError(f"the pages made different requests: {kinds}")
        if cold:
            empty_cache(extra.get("cache_url"), workdir / "data")
            role = start_web(env, workdir / "web.log", workers=workers)
            phase("restart")
        try:
            targets = [viewer_targets(s, page) for s, page in zip(saved, captured)]
            mix = viewer_mix(captured[0])
            cpu_before = cpu_seconds(role)
            viewer = run_load(role.url, targets, clients, requests_per_client, mix)
            cpu_after = cpu_seconds(role)
            phase("load")
            single = run_baseline(role.url, targets[0], baseline)
            plain_load = (run_load(role.url, saved, clients, requests_per_client)
                          if plain else None)
        finally:
            logs.append(role.log_text())
            role.stop()
            phase("rest")
    log = "\n".join(logs)
    cpu = {k: round(cpu_after[k] - cpu_before[k], 1) for k in cpu_before}
    return {"config": config, "captured": captured[0], "viewer": viewer, "plain": plain_load,
            "baseline": single, "summary": {**summary(viewer, single), "cpu_seconds": cpu},
            "plain_summary": summary(plain_load, single) if plain_load else None,
            "server_problems": server_problems(log), "worker_pids": worker_pids(log),
            "log": log, "phases_s": phases}


# --- link open -> both plots drawn, against a bare plotly.js page --------------------------------

def wide_parquet(seed: int, rows: int, classifiers: int) -> bytes:
    """A wide predictions file (Parquet) of ``classifiers`` x ``rows`` scores."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    rng = np.random.default_rng(seed)
    y = rng.random(rows) < 0.3
    columns = {"y_true": y.astype(np.int8)}
    for m in range(classifiers):
        columns[f"model_{m:02d}"] = np.round(rng.normal(size=rows) + (0.3 + 0.08 * m) * y, 5)
    sink = pa.BufferOutputStream()
    pq.write_table(pa.table(columns), sink)
    return sink.getvalue().to_pybytes()


VIEW_REPLY_JS = """() => Math.max(...performance.getEntriesByType('resource')
    .filter((e) => e.name.includes('/_dash-update-component') && e.encodedBodySize > 100000)
    .map((e) => e.responseEnd), 0)"""

BARE_PAGE = """<!doctype html><html><head><meta charset="utf-8"><title>bare plotly.js</title>
<script src="{plotly}"></script></head><body>
<div style="display:flex"><div id="roc-graph" style="width:700px;height:560px"><div class="g"
 style="height:100%"></div></div><div id="cost-graph" style="width:700px;height:560px"><div
 class="g" style="height:100%"></div></div></div>
<script>
fetch("figures.json").then((r) => r.json()).then((figs) => {{
  for (const id of ["roc-graph", "cost-graph"]) {{
    const f = figs[id];
    Plotly.newPlot(document.querySelector("#" + id + " .g"), f.data, f.layout,
                   {{responsive: true}});
  }}
}});
</script></body></html>"""


def link_open(base: str, share: str, samples: int = 5, timeout: float = 180.0
              ) -> dict[str, Any]:
    """Link open -> both plots drawn, in headless Chromium, against the floor: a bare page that
    loads the same plotly.js (from the same server) and draws the same two figures (those the
    view load sent, fetched as JSON like the dashboard's), measured alternately in the same run.

    Each sample is a fresh browser context (nothing cached) and runs from the navigation's
    start to the first animation frame in which both plots hold the view's traces and have
    drawn them (``performance.now()``). Returns the samples in ms, their medians and the ratio.
    """
    from playwright.sync_api import sync_playwright

    captured = capture_viewer(base, share, timeout)
    view = next(c for c in captured if c.kind == "cb-roc-graph")
    reply = requests.post(base + view.path, data=view.body, headers=JSON_HEADERS, timeout=TIMEOUT)
    reply.raise_for_status()
    response = reply.json()["response"]
    figures = {plot: response[plot]["figure"] for plot in PLOTS}
    want = wanted_traces(figures)
    figures_json = json.dumps(figures)
    timings: dict[str, list[float]] = {"dashboard": [], "bare": []}
    replies: list[float] = []
    scripts: list[str] = []
    with sync_playwright() as p:
        browser = launch_chromium(p)
        try:
            # Which plotly.js the dashboard's page loads: the bare page loads the same file.
            probe = browser.new_page(viewport=VIEWPORT)
            probe.on("request", lambda r: scripts.append(r.url) if r.resource_type == "script"
                     and "plotly" in r.url.lower() else None)
            probe.goto(f"{base}/s/{share}")
            probe.wait_for_function(DRAWN_JS, arg=want, timeout=timeout * 1000, polling="raf")
            probe.close()
            plotly_url = next(u for u in scripts if "dash-renderer" not in u)
            # Served by the browser itself (page.route), at an address of the dashboard's
            # origin: Chromium blocks a loopback script from any other origin.
            bare = f"{base}/__bare-plotly-floor__"
            page_html = BARE_PAGE.format(plotly=plotly_url)

            def serve_bare(route: Any) -> None:
                path = urlsplit(route.request.url).path
                if path.endswith("/figures.json"):
                    route.fulfill(status=200, body=figures_json, content_type="application/json")
                else:
                    route.fulfill(status=200, body=page_html, content_type="text/html")

            for i in range(2 * samples):
                which = ("dashboard", "bare")[i % 2]
                context = browser.new_context(viewport=VIEWPORT)
                try:
                    page = context.new_page()
                    if which == "bare":
                        page.route(f"{bare}/**", serve_bare)
                        page.goto(f"{bare}/")
                    else:
                        page.goto(f"{base}/s/{share}")
                    page.wait_for_function(DRAWN_JS, arg=want, timeout=timeout * 1000,
                                           polling="raf")
                    timings[which].append(round(page.evaluate("window.__drawnAt"), 1))
                    if which == "dashboard":  # when the view load's reply (the largest) ended
                        replies.append(round(page.evaluate(VIEW_REPLY_JS), 1))
                finally:
                    context.close()
        finally:
            browser.close()
    dash_median = statistics.median(timings["dashboard"])
    bare_median = statistics.median(timings["bare"])
    return {"samples_ms": timings, "median_ms": {"dashboard": dash_median, "bare": bare_median},
            "ratio": round(dash_median / bare_median, 2), "plotly_js": plotly_url,
            "view_reply_ms": replies, "view_reply_median_ms": statistics.median(replies),
            "figure_bytes": {plot: len(json.dumps(figures[plot])) for plot in PLOTS},
            "view_load_bytes": len(reply.content),
            "traces": {plot: len(figures[plot]["data"]) for plot in PLOTS}}


def run_link_open(classifiers: int = 20, rows: int = 200_000, samples: int = 5,
                  workers: int = 4, backend: str = "postgres",
                  workdir: Path | None = None) -> dict[str, Any]:
    """:func:`link_open` on a web role holding one analysis of ``classifiers`` x ``rows``."""
    with ExitStack() as stack:
        if workdir is None:
            workdir = Path(stack.enter_context(
                tempfile.TemporaryDirectory(prefix="costdash-link-open-")))
        role = stack.enter_context(web_role(backend, workdir, workers))
        resp = requests.post(role.url + "/api/v1/analyses", timeout=600,
                             files={"file": ("big.parquet", wide_parquet(7, rows, classifiers))},
                             data={"name": "link open", "p_pos": "0.1", "cost_fn": "5"})
        if resp.status_code != 201:
            raise RuntimeError(f"saving the analysis failed: {resp.status_code} {resp.text}")
        share = resp.json()["url"].rsplit("/", 1)[1]
        result = link_open(role.url, share, samples)
    return {"config": {"classifiers": classifiers, "rows": rows, "samples": samples,
                       "workers": workers, "backend": backend}, **result}


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


def print_summary(s: dict[str, Any], config: dict[str, Any]) -> None:
    print(f"\n{config['clients']} clients x {config['requests']} requests, "
          f"{config['workers']} gunicorn workers, backend {config['backend']}")
    print(f"{s['requests']} requests in {s['wall_s']:.2f} s: {s['throughput_rps']:.0f} req/s; "
          f"errors: {s['errors']} (baseline: {s['baseline_errors']})")
    o = s["overall"]
    print(f"overall latency  p50 {o['p50']:.1f} ms  p95 {o['p95']:.1f} ms  p99 {o['p99']:.1f} ms; "
          f"p95 / single-client healthz p95 = {s['overall_p95_over_baseline_healthz_p95']}x")
    print("\n| kind | n | body bytes | p50 ms | p95 ms | p99 ms | single-client p50 ms | "
          "single-client p95 ms | p95 ratio |\n|---|---:|---:|---:|---:|---:|---:|---:|---:|")
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


def print_viewers(result: dict[str, Any]) -> None:
    """The load with callbacks, the same load without them, and their ratios."""
    s, plain = result["summary"], result["plain_summary"]
    config = result["config"]
    print(f"\nA viewer's page, captured from Chromium ({len(result['captured'])} requests: "
          f"{', '.join(c.kind for c in result['captured'])}); "
          f"{'cold start: fresh workers, empty cache, no warm-up' if config['cold'] else 'warm'}")
    print("\n== with callbacks ==")
    print_summary(s, config)
    if plain is not None:
        print("\n== the same load without callbacks (baseline, same run) ==")
        print_summary(plain, {**config, "callbacks": False})
        print(f"\nwith / without callbacks: p95 {s['overall']['p95']:.0f} / "
              f"{plain['overall']['p95']:.0f} ms = {s['overall']['p95'] / plain['overall']['p95']:.2f}x; "
              f"throughput {s['throughput_rps']:.0f} / {plain['throughput_rps']:.0f} req/s = "
              f"{s['throughput_rps'] / plain['throughput_rps']:.2f}x; errors {s['errors']} / "
              f"{plain['errors']}")


def print_link_open(result: dict[str, Any]) -> None:
    c, m = result["config"], result["median_ms"]
    print(f"\nLink open -> both plots drawn, {c['classifiers']} classifiers x {c['rows']:,} "
          f"scores, headless Chromium, median of {c['samples']} (fresh context each):")
    print(f"  dashboard /s/<token>: {m['dashboard']:.0f} ms  {result['samples_ms']['dashboard']}")
    print(f"  bare plotly.js page:  {m['bare']:.0f} ms  {result['samples_ms']['bare']}")
    print(f"  dashboard: the view load's reply had arrived at {result['view_reply_median_ms']:.0f} ms "
          f"(median; {result['view_reply_ms']}), the rest is the browser's")
    print(f"  ratio {result['ratio']}x (target <= 1.3x); view load reply "
          f"{result['view_load_bytes']:,} B; figures {result['figure_bytes']}; traces "
          f"{result['traces']}; plotly.js {result['plotly_js']}")


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
    parser.add_argument("--viewers", action="store_true",
                        help="the load with a viewer's callbacks (captured from Chromium), from "
                             "a cold start, and the same load without them in the same run")
    parser.add_argument("--warm", action="store_true",
                        help="with --viewers: keep the workers and cache of the capture")
    parser.add_argument("--link-open", action="store_true",
                        help="link open -> both plots drawn in Chromium vs a bare plotly.js page")
    parser.add_argument("--classifiers", type=int, default=20, help="for --link-open")
    parser.add_argument("--scores", type=int, default=200_000, help="for --link-open")
    parser.add_argument("--samples", type=int, default=5,
                        help="for --link-open: opens of each page (median)")
    args = parser.parse_args(argv)

    if args.viewers or args.link_open:
        return main_viewers(args)
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


def main_viewers(args: argparse.Namespace) -> int:
    out: dict[str, Any] = {}
    failed = False
    print(f"Python {platform.python_version()}, {os.cpu_count()} CPUs, "
          f"{platform.machine()}, load average {os.getloadavg()[0]:.2f} at start")
    if args.viewers:
        before = os.getloadavg()[0]
        result = run_viewers(args.backend, args.clients, args.requests, args.workers,
                             args.analyses, min(args.baseline, 20), args.rows,
                             cold=not args.warm)
        after = os.getloadavg()[0]
        print_viewers(result)
        print(f"load average {before:.2f} before, {after:.2f} after")
        for sample in result["viewer"].errors[:5]:
            print(f"ERROR {sample.kind}: {sample.error}")
        for line in result["server_problems"][:10]:
            print(f"SERVER LOG: {line}")
        failed |= bool(result["viewer"].errors or result["server_problems"])
        out["viewers"] = {"config": result["config"], "summary": result["summary"],
                          "plain_summary": result["plain_summary"],
                          "server_problems": result["server_problems"],
                          "loadavg": [before, after]}
    if args.link_open:
        before = os.getloadavg()[0]
        result = run_link_open(args.classifiers, args.scores, args.samples, args.workers,
                               args.backend)
        after = os.getloadavg()[0]
        print_link_open(result)
        print(f"load average {before:.2f} before, {after:.2f} after")
        out["link_open"] = {**result, "loadavg": [before, after]}
    if args.json:
        args.json.write_text(json.dumps(out, indent=2, default=str))
    return 1 if failed else 0


if __name__ == "__main__":
    raise SystemExit(main())
