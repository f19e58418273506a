"""Issue 23's row "upload → first readout, 20 × 200k (browser)" (a script, not a test).

    .venv/bin/python benchmarks/bench_upload.py                  # 20 x 200,000, 5 fresh pages
    .venv/bin/python benchmarks/bench_upload.py --reps 7 --json upload.json
    .venv/bin/python benchmarks/bench_upload.py --fresh-server   # a new server per page too
    .venv/bin/python benchmarks/bench_upload.py --against /tmp/before  # and another checkout

A real ``python app.py`` (``bench_dashboard.Server``: a free port, a temp data dir) serves
Explore; each repetition opens it in a fresh headless Chromium page with no data, sets the
page's file input to a new CSV of ``--classifiers`` classifiers × ``--rows`` rows at 5 %
prevalence (``bench_results.write_csv``, a new seed each time, so nothing is de-duplicated or
cached) and times from the input's ``change`` event until the Explore readout (chosen
classifier and expected cost) shows that data set's values, then the browser has painted (a
``requestAnimationFrame`` and a task after it). Before the repetitions, one upload on a page of
its own warms the server up (imports, first SQLite writes; not counted; ``--fresh-server``
counts a cold server instead).

Printed per repetition and as median / p95:

* **total**: change → readout painted (the bar: ≤ 1.5 s);
* **server share**: the upload route's own time (its ``Server-Timing`` header: reading and
  storing the file, priming the view model; and its CPU time), and the view-load callbacks the
  page sends afterwards (their Resource Timing wait, ``responseStart - requestStart``);
* **browser share**: the rest -- sending the file, receiving and decoding the replies, the
  clientside callbacks and the drawing -- with the renderer's main-thread busy time over the
  whole wait (Chrome DevTools Protocol ``Performance.getMetrics`` ``TaskDuration``);
* CPU seconds of the server process over the repetition (``/proc``), since the machine may be
  shared and wall times then say less than CPU times;
* which of Explore's plots had their margins pushed by Plotly's automargin (laid out and
  drawn a second time for it): none is the aim; unlike the times it does not depend on the
  machine's load.

The baselines, measured in the same run on the same files: ``pandas.read_csv`` +
scikit-learn's ``roc_curve`` per classifier (what a script would do), and the bare ``POST
/api/v1/datasets`` from Python (no browser); the ratios of the total to each are printed.
With ``--against TREE`` (e.g. ``git worktree add /tmp/before <commit>``) each file is also
uploaded to a server of that checkout, the two alternating which goes first, and the ratio of
the medians printed. ``--trace DIR`` also writes a Chromium performance trace of each repetition there
(open it in chrome://tracing or Perfetto).
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
sys.path.insert(0, str(HERE))

from bench_dashboard import CHROMIUM, LAUNCH_ARGS, Server, percentile, post_dataset  # noqa: E402
from bench_results import write_csv  # noqa: E402

INSTRUMENT = """() => {
    // The clock starts in a capture listener on the document, before upload.js's own listener
    // on the input sees the change.
    window.__up = {t0: null, t1: null, plots: null};
    document.addEventListener('change', (ev) => {
        if (ev.target && ev.target.type === 'file' && window.__up.t0 === null)
            window.__up.t0 = performance.now();
    }, true);
}"""

DONE = """([names, file]) => {
    // Done: the readout names one of the file's classifiers with an expected cost, the data
    // set line names the file, then a frame has been painted.
    const up = window.__up;
    if (up.t0 === null) return false;
    const text = (id) => ((document.getElementById(id) || {}).innerText || '').trim();
    const plots = ['roc-graph', 'cost-graph'].every((id) => {
        const el = document.querySelector('#' + id + ' .js-plotly-plot');
        return el && el.data && el.data.some((t) => names.includes(t.name));
    });
    if (plots && up.plots === null) up.plots = performance.now();
    const ready = names.includes(text('chosen-classifier')) && /\\d/.test(text('expected-cost'))
        && text('dataset-info').includes(file);
    if (ready && up.t1 === null) {
        up.t1 = -1;
        requestAnimationFrame(() => {
            const ch = new MessageChannel();
            ch.port1.onmessage = () => { up.t1 = performance.now(); };
            ch.port2.postMessage(null);
        });
    }
    return up.t1 !== null && up.t1 > 0;
}"""

PUSHED = """() => ['roc-graph', 'cost-graph', 'ranges-graph'].filter((id) => {
    // A plot whose margins Plotly's automargin pushed past the figure's own: it was laid out
    // and drawn a second time for that (plotly.js doAutoMargin -> _doPlot).
    const fl = (document.querySelector('#' + id + ' .js-plotly-plot') || {})._fullLayout;
    return fl && fl._size && ['l', 'r', 't', 'b'].some(
        (k) => Math.abs(fl._size[k] - fl.margin[k]) > 0.5);
}).map((id) => id.replace('-graph', ''))"""

TIMINGS = """([t0, t1]) => {
    const all = performance.getEntriesByType('resource');
    const post = all.filter((e) => e.name.endsWith('/api/v1/datasets') && e.startTime >= t0)[0];
    const after = all.filter((e) => e.name.includes('_dash-update-component')
        && post && e.startTime >= post.responseEnd && e.startTime <= t1);
    return {
        post: post && {start: post.startTime, requestStart: post.requestStart,
                       responseStart: post.responseStart, end: post.responseEnd,
                       server: Object.fromEntries((post.serverTiming || []).map(
                           (s) => [s.name, s.duration]))},
        callbacks: after.map((e) => ({start: e.startTime, wait: e.responseStart - e.requestStart,
                                      end: e.responseEnd, bytes: e.encodedBodySize})),
    };
}"""


def proc_cpu(pid: int) -> float:
    """User + system CPU seconds of a process so far (Linux ``/proc``)."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def baseline_pandas_sklearn(csv: Path) -> tuple[float, float]:
    """Wall and CPU seconds of ``pandas.read_csv`` + ``sklearn.metrics.roc_curve`` per classifier."""
    import pandas as pd
    from sklearn.metrics import roc_curve

    t, c = time.perf_counter(), time.process_time()
    df = pd.read_csv(csv)
    y = df["y_true"].to_numpy()
    for name in df.columns:
        if name != "y_true":
            roc_curve(y, df[name].to_numpy())
    return time.perf_counter() - t, time.process_time() - c


def baseline_post(url: str, csv: Path) -> float:
    """Wall seconds of the bare upload (the same route, from Python, no browser) of ``csv``
    with one more line break at the end: the same rows (a blank line is no row), other bytes,
    so the server reads, stores and analyses it again instead of finding the page's upload."""
    again = csv.with_name("again-" + csv.name)
    again.write_bytes(csv.read_bytes() + b"\n")
    try:
        t = time.perf_counter()
        post_dataset(url, again)
        return time.perf_counter() - t
    finally:
        again.unlink()


def one_upload(browser, server: Server, csv: Path, names: list[str],
               trace: Path | None = None) -> dict:
    """Open Explore with no data in a fresh page, choose ``csv``, time until its readout."""
    page = browser.new_page(viewport={"width": 1480, "height": 1100})
    try:
        page.goto(f"{server.url}/explore")
        page.wait_for_selector("#upload input[type=file]", state="attached")
        page.wait_for_load_state("networkidle")      # the empty page's own callbacks are done
        page.evaluate(INSTRUMENT)
        cdp = page.context.new_cdp_session(page)
        cdp.send("Performance.enable")

        def busy() -> float:
            metrics = cdp.send("Performance.getMetrics")["metrics"]
            return next(m["value"] for m in metrics if m["name"] == "TaskDuration")
        if trace is not None:
            browser.start_tracing(page=page, path=str(trace), screenshots=False)
        cpu0, busy0 = proc_cpu(server.proc.pid), busy()
        page.set_input_files("#upload input[type=file]", csv)
        page.wait_for_function(DONE, arg=[names, csv.name], timeout=300_000, polling=20)
        busy1, cpu1 = busy(), proc_cpu(server.proc.pid)
        if trace is not None:
            browser.stop_tracing()
        t0, t1, plots = page.evaluate("[window.__up.t0, window.__up.t1, window.__up.plots]")
        page.wait_for_timeout(500)      # the plots settled (a pushed margin redraws after)
        pushed = page.evaluate(PUSHED)
        timings = page.evaluate(TIMINGS, [t0, t1])
    finally:
        page.close()
    post = timings["post"]
    server_route = post["server"].get("total", post["responseStart"] - post["requestStart"])
    callbacks_wait = sum(c["wait"] for c in timings["callbacks"])
    total = t1 - t0
    return {
        "total_s": total / 1000,
        "plots_s": (plots - t0) / 1000 if plots else None,
        "post_s": (post["end"] - t0) / 1000,
        "server_route_s": server_route / 1000,
        "server_route_cpu_s": post["server"].get("cpu", float("nan")) / 1000,
        "server_phases_ms": {k: round(v, 1) for k, v in post["server"].items()},
        "callbacks_after_post": len(timings["callbacks"]),
        "callbacks_wait_s": callbacks_wait / 1000,
        "callbacks_mb": sum(c["bytes"] for c in timings["callbacks"]) / 1e6,
        "browser_s": (total - server_route - callbacks_wait) / 1000,
        "after_post_s": (t1 - post["end"]) / 1000,
        "renderer_busy_s": busy1 - busy0,
        "server_cpu_s": cpu1 - cpu0,
        "margins_pushed": pushed,
    }


def summary(values: list[float]) -> str:
    return f"median {statistics.median(values):.2f} s, p95 {percentile(values, 95):.2f} s"


def describe(r: dict) -> str:
    return (f"change -> readout {r['total_s']:.2f} s (plots {r['plots_s'] or float('nan'):.2f} "
            f"s); server: upload route {r['server_route_s']:.2f} s (cpu "
            f"{r['server_route_cpu_s']:.2f} s), {r['callbacks_after_post']} callbacks after it "
            f"waited {r['callbacks_wait_s']:.2f} s ({r['callbacks_mb']:.2f} MB); browser "
            f"{r['browser_s']:.2f} s (renderer busy {r['renderer_busy_s']:.2f} s); POST done at "
            f"{r['post_s']:.2f} s; server process cpu {r['server_cpu_s']:.2f} s; margins "
            f"pushed: {', '.join(r['margins_pushed']) or 'none'}")


def medians(reps: list[dict]) -> dict:
    totals = [r["total_s"] for r in reps]
    return {"total_median_s": round(statistics.median(totals), 3),
            "total_p95_s": round(percentile(totals, 95), 3),
            **{f"{k}_median_s": round(statistics.median(r[f"{k}_s"] for r in reps), 3)
               for k in ("server_route", "server_route_cpu", "callbacks_wait", "browser",
                         "renderer_busy", "server_cpu", "after_post")},
            "reps_detail": reps}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rows", type=int, default=200_000)
    parser.add_argument("--classifiers", type=int, default=20)
    parser.add_argument("--reps", type=int, default=5, help="fresh pages (at least 5)")
    parser.add_argument("--fresh-server", action="store_true",
                        help="a new server for every page (its first upload is cold)")
    parser.add_argument("--against", type=Path,
                        help="another checkout (e.g. git worktree of an older commit): each file "
                             "uploaded to it too, alternating, and the ratio printed")
    parser.add_argument("--trace", type=Path, help="write a Chromium trace per page here")
    parser.add_argument("--json", type=Path, help="also write the results here")
    args = parser.parse_args(argv)
    if args.reps < 5:
        parser.error("--reps: at least 5 fresh pages (a p95 of fewer says nothing)")

    from playwright.sync_api import sync_playwright

    trees = {"this checkout": REPO}
    if args.against:
        trees["against"] = args.against.resolve()
    names = [f"model_{k:02d}" for k in range(args.classifiers)]
    reps: dict[str, list[dict]] = {label: [] for label in trees}
    base_sk: list[tuple[float, float]] = []
    base_post: list[float] = []
    print(f"load average before: {os.getloadavg()[0]:.2f} ({os.cpu_count()} CPUs)", flush=True)
    with tempfile.TemporaryDirectory(prefix="costdash-upload-") as tmpdir, \
            sync_playwright() as p:
        tmp = Path(tmpdir)
        browser = p.chromium.launch(executable_path=CHROMIUM, args=LAUNCH_ARGS)
        servers: dict[str, Server] = {}
        try:
            if not args.fresh_server:
                warm = tmp / "warm-up.csv"
                write_csv(warm, args.rows, args.classifiers, seed=99)
                for k, (label, repo) in enumerate(trees.items()):
                    servers[label] = Server(tmp / f"data-{k}", repo=repo)
                    one_upload(browser, servers[label], warm, names)
            if args.trace:
                args.trace.mkdir(parents=True, exist_ok=True)
            for rep in range(args.reps):
                csv = tmp / f"upload-{rep}.csv"
                write_csv(csv, args.rows, args.classifiers, seed=100 + rep)
                order = list(trees.items())
                if rep % 2:      # alternating: neither tree always goes first
                    order.reverse()
                for label, repo in order:
                    here = servers.get(label) or Server(tmp / f"data-{label[:4]}-{rep}",
                                                        repo=repo)
                    try:
                        trace = (args.trace / f"upload-{label.split()[0]}-{rep}.json"
                                 if args.trace else None)
                        r = one_upload(browser, here, csv, names, trace)
                        if label == "this checkout":
                            # The baselines on the same file, between the pages: the same load.
                            base_sk.append(baseline_pandas_sklearn(csv))
                            base_post.append(baseline_post(here.url, csv))
                    finally:
                        if here is not servers.get(label):
                            here.stop()
                    reps[label].append(r)
                    print(f"[{rep + 1}/{args.reps}] {label}: {describe(r)}", flush=True)
                print(f"[{rep + 1}/{args.reps}] baselines: pandas+sklearn {base_sk[-1][0]:.2f} s "
                      f"(cpu {base_sk[-1][1]:.2f} s), bare POST {base_post[-1]:.2f} s", flush=True)
                csv.unlink()
        finally:
            for server in servers.values():
                server.stop()
            browser.close()
    sk = statistics.median(w for w, _ in base_sk)
    bare = statistics.median(base_post)
    out = {"rows": args.rows, "classifiers": args.classifiers, "reps": args.reps,
           "fresh_server": args.fresh_server, "load_after": round(os.getloadavg()[0], 2),
           "bar_s": 1.5, "baseline_pandas_sklearn_median_s": round(sk, 3),
           "baseline_pandas_sklearn_cpu_median_s": round(
               statistics.median(c for _, c in base_sk), 3),
           "baseline_bare_post_median_s": round(bare, 3)}
    for label, results in reps.items():
        m = out[label] = medians(results)
        totals = [r["total_s"] for r in results]
        print(f"{label}: upload -> first readout, {args.classifiers} x {args.rows:,}: "
              f"{summary(totals)} (bar 1.5 s: "
              f"{'met' if percentile(totals, 95) <= 1.5 else 'not met'} at p95); server route "
              f"median {m['server_route_median_s']:.2f} s (cpu "
              f"{m['server_route_cpu_median_s']:.2f} s), view-load callbacks "
              f"{m['callbacks_wait_median_s']:.2f} s, browser {m['browser_median_s']:.2f} s, "
              f"POST's end -> readout {m['after_post_median_s']:.2f} s "
              f"(renderer busy {m['renderer_busy_median_s']:.2f} s); server process cpu "
              f"{m['server_cpu_median_s']:.2f} s", flush=True)
    here = out["this checkout"]
    here["ratio_vs_pandas_sklearn"] = round(here["total_median_s"] / sk, 2)
    here["ratio_vs_bare_post"] = round(here["total_median_s"] / bare, 2)
    print(f"baselines, same run, same files: pandas.read_csv + sklearn roc_curve x "
          f"{args.classifiers} median {sk:.2f} s -> ratio {here['ratio_vs_pandas_sklearn']}x; "
          f"bare POST (this checkout) median {bare:.2f} s -> ratio "
          f"{here['ratio_vs_bare_post']}x; load average after {out['load_after']}", flush=True)
    if args.against:
        ratio = round(here["total_median_s"] / out["against"]["total_median_s"], 3)
        out["ratio_vs_against"] = ratio
        print(f"this checkout / {trees['against']}: median total ratio {ratio}", flush=True)
    if args.json:
        args.json.write_text(json.dumps(out, indent=2))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
