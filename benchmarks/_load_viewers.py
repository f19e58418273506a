"""A viewer's page for the loopback load test: the requests a read link's page makes, captured
from headless Chromium, then replayed by the clients of :mod:`benchmarks._load_core` from a cold
start (``bench_load.py --viewers``)."""

from __future__ import annotations

import json
import os
import secrets
import shutil
import tempfile
import time
from collections import Counter
from collections.abc import Callable
from contextlib import ExitStack
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import requests

from benchmarks._load_core import (
    Saved, Target, cpu_seconds, run_baseline, run_load, save_analyses, server_problems,
    server_times, summary, targets_for, worker_pids)
from tests.support.processes import deploy_env, start_web
from tests.support.services import fresh_postgres_database, fresh_redis_url

CHROMIUM = os.environ.get("CHROMIUM_PATH", "/usr/bin/chromium")
LAUNCH_ARGS = ["--no-sandbox", "--disable-gpu", "--disable-background-networking"]
VIEWPORT = {"width": 1480, "height": 1250}
PLOTS = ("roc-graph", "cost-graph")
"""The two plots of a read link's page ("both plots drawn")."""
PREVIEWS = {"roc-graph": "link-preview-roc", "cost-graph": "link-preview-cost"}
"""Where the read link's preview (dashboard/link_preview.py) draws each plot before Dash boots."""

_HOLDS_JS = """
    // Whether the plot `gd` holds every trace of `uids` (by uid) and has drawn them (a trace
    // group in its SVG).
    const holds = (gd, uids) => {
        if (!gd || !gd._fullData || !gd.querySelector('.scatterlayer .trace')) return false;
        const have = new Set(gd._fullData.map((t) => t.uid));
        return uids.every((u) => have.has(u));
    };
    const live = (id) => document.querySelector('#' + id + ' .js-plotly-plot');
"""

DRAWN_JS = """(want) => {""" + _HOLDS_JS + """
    // Both plots are drawn with the traces of the figures the view load sent: each either in
    // the live graph or in the link's preview (the viewer sees the plot either way). The moment
    // is kept in window.__drawnAt.
    const previews = %s;
    const ok = Object.entries(want).every(([id, uids]) =>
        holds(live(id), uids) || holds(document.getElementById(previews[id] || ''), uids));
    if (ok && window.__drawnAt === undefined) window.__drawnAt = performance.now();
    return ok;
}""" % json.dumps(PREVIEWS)

INTERACTIVE_JS = """(want) => {""" + _HOLDS_JS + """
    // The live page is interactive: its own graphs hold the view's traces and no preview
    // covers them any more. The moment is kept in window.__interactiveAt.
    const ok = !document.getElementById('link-preview') &&
        Object.entries(want).every(([id, uids]) => holds(live(id), uids));
    if (ok && window.__interactiveAt === undefined) window.__interactiveAt = performance.now();
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

    pending: set[Any] = set()
    last_change = [time.monotonic()]

    def started(req: Any) -> None:
        if urlsplit(req.url).path == "/_dash-update-component":
            pending.add(req)
            last_change[0] = time.monotonic()

    def ended(req: Any) -> None:
        pending.discard(req)
        last_change[0] = time.monotonic()

    with sync_playwright() as p:
        browser = launch_chromium(p)
        try:
            page = browser.new_page(viewport=VIEWPORT)
            page.on("request", started)
            page.on("requestfinished", ended)
            page.on("requestfailed", ended)
            page.on("response", on_response)
            with page.expect_response(is_view_load, timeout=timeout * 1000) as view:
                page.goto(f"{base}/s/{share}", timeout=timeout * 1000)
            response = view.value.json()["response"]
            want = wanted_traces({plot: response[plot]["figure"] for plot in PLOTS})
            # The live page, not a preview: every request the page makes is to be captured.
            page.wait_for_function(INTERACTIVE_JS, arg=want, timeout=timeout * 1000,
                                   polling="raf")
            page.wait_for_load_state("networkidle", timeout=timeout * 1000)
            # Every callback the page sent has its reply, and none was sent for a second: on a
            # busy machine the page's last callbacks come late (a capture that stopped at the
            # network's first idle moment missed two of them).
            deadline = time.monotonic() + timeout
            while pending or time.monotonic() - last_change[0] < 1.0:
                if time.monotonic() > deadline:
                    raise TimeoutError(f"{len(pending)} callbacks of the page never answered")
                page.wait_for_timeout(100)
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
    """The requests of ``source``'s page made for ``target``'s: the link's token swapped in the
    paths and callback bodies (the analyses differ in nothing else the page sends). A read
    link's page names its data by the link (``share:<token>``), never by a handle (issue 22):
    a capture that holds the handle is refused rather than replayed."""
    def swap(text: str | None) -> str | None:
        return None if text is None else text.replace(source.share, target.share)
    if not any(source.share in (c.body or "") + (c.path or "") for c in captured):
        raise RuntimeError("the captured page does not name its link's token: capture each")
    if source.data and any(source.data in (c.body or "") for c in captured):
        raise RuntimeError("the captured page names its data handle, which a read link's "
                           "page must not")
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
        env = deploy_env(workdir / "data", secret_key=secrets.token_hex(32),
                         COSTDASH_LOG_REQUEST_KIND="1", **extra)
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
            mark = len(role.log_text())
            viewer = run_load(role.url, targets, clients, requests_per_client, mix)
            cpu_after = cpu_seconds(role)
            phase("load")
            time.sleep(0.5)  # the last access-log lines written (after their replies)
            viewer_server = server_times(role.log_text()[mark:])
            single = run_baseline(role.url, targets[0], baseline)
            mark = len(role.log_text())
            plain_load = (run_load(role.url, saved, clients, requests_per_client)
                          if plain else None)
            time.sleep(0.5)
            plain_server = server_times(role.log_text()[mark:])
        finally:
            logs.append(role.log_text())
            role.stop()
            phase("rest")
    log = "\n".join(logs)
    cpu = {k: round(cpu_after[k] - cpu_before[k], 1) for k in cpu_before}
    return {"config": config, "captured": captured[0], "viewer": viewer, "plain": plain_load,
            "baseline": single,
            "summary": {**summary(viewer, single, viewer_server), "cpu_seconds": cpu},
            "plain_summary": summary(plain_load, single, plain_server) if plain_load else None,
            "server_problems": server_problems(log), "worker_pids": worker_pids(log),
            "log": log, "phases_s": phases}

