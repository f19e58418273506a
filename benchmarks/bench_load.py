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
4. **Load**: ``--clients`` threads start together (a barrier), each with its own keep-alive
   connection (as a browser would; :mod:`http.client`, bodies encoded before the clock starts:
   the clients share the CPUs with the server, so their own cost is kept small and printed),
   and send ``--requests`` requests each, cycling through the mix below from a different
   starting point per client. Each request names its kind in a header, which the web role logs
   with the worker's own time (``COSTDASH_LOG_REQUEST_KIND=1``): the "server" columns.

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
``--link-open``, link open -> both plots drawn (in the live graphs or the read link's
preview) for 20 classifiers x 200,000 scores in headless Chromium, against a bare page that
loads the same plotly.js and draws the same two figures (:func:`run_link_open`): medians and
their ratio, and when the live page became interactive.

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
import sys
import tempfile
from contextlib import ExitStack
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
if str(REPO) not in sys.path:
    sys.path.insert(0, str(REPO))

# The parts live in private modules; their names stay importable from here (tests and notebooks
# import them from bench_load).
from benchmarks._load_core import (  # noqa: E402,F401
    JSON_HEADERS, KINDS, MIX, TIMEOUT, LoadResult, Sample, Saved, Target, cpu_seconds,
    percentiles_ms, predictions_csv, run_baseline, run_load, save_analyses, server_problems,
    summary, targets_for, timed_get, web_role, worker_pids)
from benchmarks._load_link_open import (  # noqa: E402,F401
    BARE_PAGE, VIEW_REPLY_JS, link_open, run_link_open, wide_parquet)
from benchmarks._load_viewers import (  # noqa: E402,F401
    CHROMIUM, DRAWN_JS, LAUNCH_ARGS, PLOTS, VIEWPORT, Captured, callback_kind, capture_viewer,
    empty_cache, is_view_load, launch_chromium, retarget, run_viewers, viewer_mix,
    viewer_targets, wanted_traces)


# --- reporting and the command line ---------------------------------------------------------------

def print_summary(s: dict[str, Any], config: dict[str, Any]) -> None:
    print(f"\n{config['clients']} clients x {config['requests']} requests, "
          f"{config['workers']} gunicorn workers, backend {config['backend']}")
    print(f"{s['requests']} requests in {s['wall_s']:.2f} s: {s['throughput_rps']:.0f} req/s; "
          f"errors: {s['errors']} (baseline: {s['baseline_errors']})")
    o = s["overall"]
    print(f"overall latency  p50 {o['p50']:.1f} ms  p95 {o['p95']:.1f} ms  p99 {o['p99']:.1f} ms; "
          f"p95 / single-client healthz p95 = {s['overall_p95_over_baseline_healthz_p95']}x")
    print("\n| kind | n | body bytes | p50 ms | p95 ms | p99 ms | server p50 ms | server p95 ms "
          "| single-client p50 ms | single-client p95 ms | p95 ratio |\n"
          "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
    for kind, k in s["kinds"].items():
        load, single = k["load"], k["baseline"]
        server = k.get("server") or {"p50": float("nan"), "p95": float("nan")}
        print(f"| {kind} | {k['n']} | {k['bytes']:,} | {load['p50']:.1f} | {load['p95']:.1f} | "
              f"{load['p99']:.1f} | {server['p50']:.1f} | {server['p95']:.1f} | "
              f"{single['p50']:.1f} | {single['p95']:.1f} | {k['p95_ratio']}x |")
    print("(server: the worker's time from the request parsed to the reply written, from the "
          "access log; the rest of a request's time is queueing and the client)")
    print(f"\nstatuses: {s['statuses']}; keep-alive connections reopened: "
          f"{s.get('reconnects', 0)}")
    if "cpu_seconds" in s:
        cpu, n = s["cpu_seconds"], s["requests"]
        print(f"CPU seconds during the load: server workers {cpu['server_workers']}, "
              f"client threads {cpu['client']} (wall {s['wall_s']:.1f} s); per request "
              f"{1000 * cpu['server_workers'] / n:.2f} ms server, "
              f"{1000 * cpu['client'] / n:.2f} ms client")
        if "machine" in cpu:
            print(f"the machine's CPUs were busy {cpu['machine']} s of "
                  f"{os.cpu_count() * s['wall_s']:.1f} s; besides server and client "
                  f"(PostgreSQL, Redis, anything else running): "
                  f"{cpu['machine'] - cpu['server_workers'] - cpu['client']:.1f} s")


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
    print(f"  dashboard: interactive (its own graphs drawn, no preview left) at "
          f"{result['interactive_median_ms']:.0f} ms (median; {result['interactive_ms']}); "
          f"preview: {result['preview']}")
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
