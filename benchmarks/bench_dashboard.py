"""Benchmark of the dashboard in headless Chromium (a script, not a test).

    .venv/bin/python benchmarks/bench_dashboard.py            # full size: 20 x 1e6 and 5 x 1e6
    .venv/bin/python benchmarks/bench_dashboard.py --quick    # 20 x 1e5 and 5 x 1e5
    .venv/bin/python benchmarks/bench_dashboard.py --json results.json

Two measurements, each against a real ``python app.py`` on a free port with a temp data dir:

1. **Slider -> repainted plots.** A data set of ``--classifiers`` classifiers x ``--rows`` scores
   is stored and opened; then the p(+) slider's thumb gets ``--samples`` ArrowRight/ArrowLeft key
   presses. Each sample runs from the ``keydown`` (a capture listener's ``performance.now()``) to
   the first moment after both figures have finished ``Plotly.react`` (their ``plotly_react``
   events) *and* the browser has painted that frame (a ``requestAnimationFrame`` callback, then a
   ``MessageChannel`` task, which runs after the paint), and the PC(+) readout has changed too
   (the end is detected with MutationObservers on the figures' shapes layers, or the page's own
   layer of moving marks, and the readout). "After the paint" is after the main thread has
   committed that frame to the compositor (its raster and display follow on other threads).
   The same samples are printed from the key event's own ``timeStamp`` too, which adds the
   time the key waited in the page's task queue (behind, e.g., the previous step's deferred
   Dash updates).

2. **Typed value + Enter -> repainted readouts and plots**, on the same page: ``--samples``
   times a new C(-|+) is put in its number box (``fill``: an ``input`` event, no key) and Enter is
   pressed; each sample runs from the Enter ``keydown`` to the same end as above. The baseline
   measured in the same run is the typing path alone (the same values, no Enter: from the
   ``input`` event until the box's 250 ms typing debounce commits it), and the slider path of 1.
   is measured in the same run too; the script prints both ratios.

   With ``--variants`` the slider path is measured again on the same data set and page for each
   way of drawing it (log FPR and log-odds PC(+) axes, whose moving parts are sampled curves;
   the same plus the zoom to the current choice; hull classifiers only), each printed as a ratio
   against the linear axes' p95 measured in the same run (the baseline).

3. **Upload -> first plot.** A fresh ``--upload-rows`` x ``--upload-classifiers`` CSV (new
   content each repetition, so nothing is de-duplicated or cached) is chosen in the page's file
   input; the time runs from the input's ``change`` event to the paint after both figures show
   the new data set and the readouts are filled in. The server's share (``POST
   /api/v1/datasets``: receive, read, store, analyse) comes from the Resource Timing API. With
   ``--upload-baseline-classifiers K`` the same is measured with K classifiers of the same rows
   in the same run, and the ratio printed.

Issue 10's targets (many classifiers): ``--classifiers 20 --rows 1000000 --variants`` (slider
p95 <= 50 ms) and ``--upload-classifiers 50 --upload-rows 200000
--upload-baseline-classifiers 5`` (first plot < 5 s); ``--many`` sets all of these.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import socket
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from dashboard.storage import SqlStore  # noqa: E402

CHROMIUM = os.environ.get("CHROMIUM_PATH", "/usr/bin/chromium")
LAUNCH_ARGS = ["--no-sandbox", "--disable-gpu", "--disable-background-networking"]

INSTRUMENT = """() => {
    // Once per page (measuring again only empties the list).
    if (window.__instrumented) {
        window.__lat = []; window.__latEvent = []; window.__latFrames = []; return;
    }
    window.__instrumented = true;
    // Frames counted from the key to the frame that painted its change: 1 when the change was
    // painted in the first frame after the key (what "one frame" means on a 60 Hz clock,
    // whatever point of the frame interval the key came at). A rAF loop numbers the frames; a
    // callback asked for during the key's handling runs after the loop's in the next frame.
    window.__frameNo = 0;
    const countFrames = () => { window.__frameNo += 1; requestAnimationFrame(countFrames); };
    requestAnimationFrame(countFrames);
    window.__latFrames = [];
    // A sample ends when both figures' shapes layers and the PC(+) readout have changed in the
    // DOM, and the browser has then painted (rAF, then a task: runs after that frame's paint).
    const targets = {
        roc: document.querySelector('#roc-graph .js-plotly-plot'),
        cost: document.querySelector('#cost-graph .js-plotly-plot'),
        readout: document.getElementById('pc-value'),
    };
    window.__lat = [];
    // The same end, from the event's own timeStamp (when the browser took the key in): adds
    // the time the key waited in the page's queue behind other work, which the listener's
    // clock does not see.
    window.__latEvent = [];
    let pending = null;
    const afterPaint = (fn) => requestAnimationFrame(() => {
        const ch = new MessageChannel();
        ch.port1.onmessage = fn;
        ch.port2.postMessage(null);
    });
    const start = (ev) => {
        pending = {t0: performance.now(), ts: ev.timeStamp, frame0: window.__frameNo,
                   roc: false, cost: false, readout: false};
    };
    // On window, capturing: before every listener of the page (the page draws a slider key
    // or an Enter in its own document-level capture listener, whose DOM changes reach the
    // observers below before a later listener would start the clock).
    window.addEventListener('keydown', start, true);
    window.addEventListener('input', start, true);
    const mark = (which) => {
        if (!pending || pending[which]) return;
        pending[which] = true;
        if (pending.roc && pending.cost && pending.readout) {
            const p = pending;
            pending = null;
            requestAnimationFrame(() => { window.__latFrames.push(window.__frameNo - p.frame0); });
            afterPaint(() => {
                const t = performance.now();
                window.__lat.push(t - p.t0);
                window.__latEvent.push(t - p.ts);
            });
        }
    };
    // The moving marks are Plotly's shapes (a new shapes layer) or, since issue 23, an SVG
    // layer of the page's own whose elements' attributes change.
    for (const [which, el] of Object.entries(targets)) {
        new MutationObserver((records) => {
            if (which === 'readout' || records.some((r) => r.target.closest &&
                    r.target.closest('.shapelayer, .costdash-marks'))) mark(which);
        }).observe(el, {childList: true, subtree: true, characterData: true,
                        attributes: which !== 'readout'});
    }
}"""

READY = """() => {
    const el = document.getElementById('chosen-classifier');
    return el !== null && el.innerText !== '–';
}"""

UPLOAD_INSTRUMENT = """() => {
    window.__upload = {t0: null, t1: null};
    document.addEventListener('change', (ev) => {
        if (ev.target && ev.target.type === 'file') window.__upload.t0 = performance.now();
    }, true);
}"""

UPLOAD_DONE = """([n, name]) => {
    const roc = document.querySelector('#roc-graph .js-plotly-plot');
    const cost = document.querySelector('#cost-graph .js-plotly-plot');
    const info = (document.getElementById('dataset-info') || {}).innerText || '';
    const ready = roc && cost && roc.data && roc.data.length >= n + 2 && cost.data.length >= n + 3
        && info.startsWith(name) && document.getElementById('chosen-classifier').innerText !== '–';
    if (ready && window.__upload.t1 === null) {
        window.__upload.t1 = -1;
        requestAnimationFrame(() => {
            const ch = new MessageChannel();
            ch.port1.onmessage = () => { window.__upload.t1 = performance.now(); };
            ch.port2.postMessage(null);
        });
    }
    return window.__upload.t1 !== null && window.__upload.t1 > 0;
}"""


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Server:
    """``python app.py`` on a free port with its own data dir."""

    def __init__(self, data_dir: Path, max_upload_mb: int = 1024, debug: bool = False,
                 repo: Path = REPO):
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        env = {**os.environ, "COSTDASH_DATA_DIR": str(data_dir),
               "COSTDASH_MAX_UPLOAD_MB": str(max_upload_mb)}
        data_dir.mkdir(parents=True, exist_ok=True)
        self.log = open(data_dir.parent / f"server-{self.port}.log", "wb")
        self.proc = subprocess.Popen([sys.executable, str(repo / "app.py"), "--port",
                                      str(self.port)] + (["--debug"] if debug else []),
                                     cwd=repo, env=env, stdout=self.log,
                                     stderr=subprocess.STDOUT)
        deadline = time.monotonic() + 60
        while True:
            try:
                with urllib.request.urlopen(self.url + "/explore", timeout=2):
                    return
            except OSError:
                if self.proc.poll() is not None or time.monotonic() > deadline:
                    raise RuntimeError("server did not start") from None
                time.sleep(0.1)

    def stop(self) -> None:
        self.proc.terminate()
        self.proc.wait(timeout=20)
        self.log.close()


def scores_table(n_rows: int, n_classifiers: int, seed: int, prevalence: float = 0.1,
                 decimals: int | None = None) -> dict[str, np.ndarray]:
    rng = np.random.default_rng(seed)
    y = rng.random(n_rows) < prevalence
    cols: dict[str, np.ndarray] = {"y_true": y.astype(np.int8)}
    for k in range(n_classifiers):
        s = rng.normal(size=n_rows) + y * (0.4 + 1.6 * k / max(n_classifiers - 1, 1))
        cols[f"model_{k:02d}"] = np.round(s, decimals) if decimals is not None else s
    return cols


def percentile(values: list[float], q: float) -> float:
    return float(np.percentile(np.asarray(values), q))


SLIDER_VARIANTS = {"log axes": "&log_fpr=1&log_pc=1",
                   "log axes + zoom": "&log_fpr=1&log_pc=1&zoom=1",
                   "hull classifiers only": "&hull_only=1"}


def pins_query(n_classifiers: int, pins: int) -> str:
    """``&pins=...``: ``pins`` thresholds on classifiers spread over the data set."""
    if not pins:
        return ""
    picks = [f"model_{(k * max(n_classifiers // pins, 1)) % n_classifiers:02d}:{0.5 + 0.25 * k:g}"
             for k in range(pins)]
    return "&pins=" + ",".join(picks)


def slider_samples(page, samples: int, pause_ms: int) -> list[float]:
    """``samples`` p(+) slider key presses (after 5 to warm up); each one's latency in ms."""
    page.evaluate(INSTRUMENT)
    thumb = page.locator("#p-pos-slider [role=slider]")
    thumb.focus()
    for i in range(samples + 5):
        key = "ArrowRight" if (i // 25) % 2 == 0 else "ArrowLeft"
        before = page.evaluate("window.__lat.length")
        page.keyboard.press(key)
        page.wait_for_function(f"window.__lat.length > {before}", timeout=10_000)
        page.wait_for_timeout(pause_ms)
    return page.evaluate("window.__lat")[5:]          # the first few warm up the JIT


PROFILE_NAMES = ("render", "paintMarks", "fillTable", "paint", "fillPins", "intervalTexts",
                 "decision", "relayout", "quietRelayout", "stepTo", "flushBoxes",
                 "(garbage collector)")


def profile_summary(profile: dict, steps: int) -> dict:
    """A CDP ``Profiler`` profile in ms per step: the main thread's busy time, the time inside
    each function of :data:`PROFILE_NAMES` (inclusive) and the top functions by self time."""
    nodes = {n["id"]: n for n in profile["nodes"]}
    self_us: dict[int, float] = {}
    for node_id, dt in zip(profile["samples"], profile["timeDeltas"]):
        self_us[node_id] = self_us.get(node_id, 0.0) + dt
    children = {n["id"]: n.get("children", []) for n in profile["nodes"]}
    inclusive: dict[int, float] = {}

    def total(node_id: int) -> float:
        if node_id not in inclusive:
            stack, order = [node_id], []
            while stack:                                   # iterative: deep JS stacks
                k = stack.pop()
                order.append(k)
                stack.extend(c for c in children[k] if c not in inclusive)
            for k in reversed(order):
                inclusive[k] = self_us.get(k, 0.0) + sum(inclusive.get(c, 0.0)
                                                         for c in children[k])
        return inclusive[node_id]

    parent = {c: n["id"] for n in profile["nodes"] for c in n.get("children", [])}

    def under(node_id: int, name: str) -> bool:
        k = parent.get(node_id)
        while k is not None:
            if nodes[k]["callFrame"]["functionName"] == name:
                return True
            k = parent.get(k)
        return False

    by_name: dict[str, float] = {}
    self_by_name: dict[str, float] = {}
    for n in profile["nodes"]:
        name = n["callFrame"]["functionName"] or "(anonymous)"
        url = n["callFrame"].get("url", "").rsplit("/", 1)[-1].split("?")[0]
        label = f"{name} {url}".strip()
        self_by_name[label] = self_by_name.get(label, 0.0) + self_us.get(n["id"], 0.0)
        if name in PROFILE_NAMES and not under(n["id"], name):   # a recursive name once
            by_name[name] = by_name.get(name, 0.0) + total(n["id"])
    idle = sum(v for k, v in self_by_name.items() if k.startswith("(idle)"))
    busy = sum(self_us.values()) - idle
    per = lambda us: round(us / 1000 / max(steps, 1), 2)    # noqa: E731
    top = sorted(((k, v) for k, v in self_by_name.items() if not k.startswith("(idle)")),
                 key=lambda kv: -kv[1])[:12]
    return {"steps": steps, "busy_ms_per_step": per(busy),
            "inclusive_ms_per_step": {k: per(v) for k, v in sorted(by_name.items())},
            "top_self_ms_per_step": {k: per(v) for k, v in top}}


def profiled_slider_samples(page, samples: int, pause_ms: int) -> tuple[list[float], dict]:
    """:func:`slider_samples` under the CDP sampling profiler (100 us); latencies and summary."""
    cdp = page.context.new_cdp_session(page)
    cdp.send("Profiler.enable")
    cdp.send("Profiler.setSamplingInterval", {"interval": 100})
    cdp.send("Profiler.start")
    lat = slider_samples(page, samples, pause_ms)
    profile = cdp.send("Profiler.stop")["profile"]
    cdp.detach()
    return lat, profile_summary(profile, samples + 5)


def bench_slider(browser, tmp: Path, n_rows: int, n_classifiers: int, samples: int,
                 args_pause_ms: int = 150, variants: bool = False, pins: int = 0,
                 profile: bool = False) -> dict:
    data_dir = tmp / "slider-data"
    print(f"[slider] generating {n_classifiers} classifiers x {n_rows:,} scores ...", flush=True)
    t = time.perf_counter()
    table = pa.table(scores_table(n_rows, n_classifiers, seed=1))
    parquet = tmp / "slider.parquet"
    pq.write_table(table, parquet)
    del table
    store = SqlStore(f"sqlite:///{data_dir / 'costdash.db'}", max_bytes=4 * 1024**3)
    record = store.put(parquet, "slider.parquet")
    print(f"[slider] stored {parquet.stat().st_size / 1e6:.0f} MB in "
          f"{time.perf_counter() - t:.1f} s", flush=True)
    server = Server(data_dir)
    try:
        page = browser.new_page(viewport={"width": 1480, "height": 1100})
        t = time.perf_counter()
        # Issue 23's bar is with pins shown (each priced at every step) and the strip chart.
        pinned = pins_query(n_classifiers, pins)
        page.goto(f"{server.url}/explore?data={record.id}&p_pos=0.01&cost_fn=10&cost_fp=1"
                  + pinned)
        page.wait_for_function(READY, timeout=300_000)
        if pins:
            page.wait_for_function(f"document.querySelectorAll('.pin-slot:not([hidden])')"
                                   f".length >= {pins}", timeout=60_000)
        first_open = time.perf_counter() - t
        print(f"[slider] first open (analysis of every classifier, cached after): "
              f"{first_open:.1f} s", flush=True)
        t = time.perf_counter()
        page.reload()
        page.wait_for_function(READY, timeout=60_000)
        reopen = time.perf_counter() - t
        page.wait_for_timeout(500)
        lat = slider_samples(page, samples, args_pause_ms)
        lat_event = page.evaluate("window.__latEvent")[5:]
        lat_frames = page.evaluate("window.__latFrames")[5:]
        cpu = None
        if profile:       # a second series, so the profiler's overhead is not in `lat`
            cpu = profiled_slider_samples(page, samples, args_pause_ms)[1]
            print(f"[slider] CPU profile: {json.dumps(cpu)}", flush=True)
        typed = {}
        for mode in ("debounce", "enter"):
            page.evaluate("window.__lat = []")
            for i in range(samples + 5):
                value = f"{10 + (i % 7) * 1.5:g}" if mode == "enter" else f"{11 + (i % 7):g}"
                before = page.evaluate("window.__lat.length")
                page.fill("#cost-fn-input", value)
                if mode == "enter":
                    page.press("#cost-fn-input", "Enter")
                page.wait_for_function(f"window.__lat.length > {before}", timeout=10_000)
                page.wait_for_timeout(args_pause_ms + 300)    # past the debounce's own commit
            typed[mode] = page.evaluate("window.__lat")[5:]
        sizes = page.evaluate("""() => ({
            roc_points: document.querySelector('#roc-graph .js-plotly-plot')._fullData
                .reduce((n, t) => n + (t._length || 0), 0),
            cost_points: document.querySelector('#cost-graph .js-plotly-plot')._fullData
                .reduce((n, t) => n + (t._length || 0), 0),
            hull_vertices: document.querySelector('#roc-graph .js-plotly-plot')._fullData
                .find(t => t.uid === 'hull')._length})""")
        by_variant = {}
        for label, extra in (SLIDER_VARIANTS.items() if variants else ()):
            page.goto(f"{server.url}/explore?data={record.id}&p_pos=0.01&cost_fn=10&cost_fp=1"
                      + extra + pinned)
            page.wait_for_function(READY, timeout=60_000)
            page.wait_for_timeout(800)
            v = slider_samples(page, samples, args_pause_ms)
            by_variant[label] = {"median_ms": round(statistics.median(v), 1),
                                 "p95_ms": round(percentile(v, 95), 1),
                                 "max_ms": round(max(v), 1),
                                 "p95_vs_linear": round(percentile(v, 95) / percentile(lat, 95),
                                                        3)}
            print(f"[slider] {label}: median {by_variant[label]['median_ms']} ms, p95 "
                  f"{by_variant[label]['p95_ms']} ms ({by_variant[label]['p95_vs_linear']}x "
                  "the linear axes' p95, the baseline)", flush=True)
        page.close()
    finally:
        server.stop()
    enter, debounce = typed["enter"], typed["debounce"]
    return {"classifiers": n_classifiers, "rows": n_rows, "samples": len(lat), "pins": pins,
            "first_open_s": round(first_open, 2), "reopen_s": round(reopen, 2),
            "median_ms": round(statistics.median(lat), 1), "p95_ms": round(percentile(lat, 95), 1),
            "max_ms": round(max(lat), 1),
            "from_event_median_ms": round(statistics.median(lat_event), 1),
            "from_event_p95_ms": round(percentile(lat_event, 95), 1),
            "frames_p95": percentile(lat_frames, 95),
            "in_first_frame_share": round(sum(f <= 1 for f in lat_frames) / len(lat_frames), 3),
            "enter_median_ms": round(statistics.median(enter), 1),
            "enter_p95_ms": round(percentile(enter, 95), 1),
            "typing_median_ms": round(statistics.median(debounce), 1),
            "typing_p95_ms": round(percentile(debounce, 95), 1),
            "enter_vs_typing_p95": round(percentile(enter, 95) / percentile(debounce, 95), 3),
            "enter_vs_slider_p95": round(percentile(enter, 95) / percentile(lat, 95), 3),
            "variants": by_variant, "cpu_profile": cpu, **sizes}


def post_dataset(url: str, path: Path) -> str:
    """Store a file through ``POST /api/v1/datasets`` (it is analysed before the reply); its id."""
    boundary = "costdashbenchboundary"
    body = (f"--{boundary}\r\nContent-Disposition: form-data; name=\"file\"; "
            f"filename=\"{path.name}\"\r\nContent-Type: application/octet-stream\r\n\r\n"
            ).encode() + path.read_bytes() + f"\r\n--{boundary}--\r\n".encode()
    req = urllib.request.Request(url + "/api/v1/datasets", data=body, method="POST", headers={
        "Content-Type": f"multipart/form-data; boundary={boundary}"})
    with urllib.request.urlopen(req, timeout=600) as resp:
        return json.loads(resp.read())["id"]


def enter_samples(page, samples: int, pause_ms: int) -> list[float]:
    """``samples`` typed C(-|+) values + Enter (after 5 to warm up); each one's latency in ms."""
    page.evaluate(INSTRUMENT)
    for i in range(samples + 5):
        before = page.evaluate("window.__lat.length")
        value = f"{10 + ((i + 1) % 7) * 1.5:g}"          # never the first value
        if float(value) == float(page.input_value("#cost-fn-input") or "nan"):
            value = f"{10 + ((i + 2) % 7) * 1.5:g}"      # nor the last round's last one
        page.fill("#cost-fn-input", value)
        page.press("#cost-fn-input", "Enter")
        page.wait_for_function(f"window.__lat.length > {before}", timeout=10_000)
        page.wait_for_timeout(pause_ms + 300)          # past the box's own debounced commit
    return page.evaluate("window.__lat")[5:]


def bench_against(browser, tmp: Path, tree: Path, n_rows: int, n_classifiers: int,
                  samples: int, rounds: int = 5, pause_ms: int = 150, pins: int = 0,
                  profile: bool = False) -> dict:
    """The slider path (and the typed value + Enter path) of this checkout against another one
    (``tree``, e.g. a ``git worktree`` of the commit before a change), on the same data, the
    two pages measured in alternating rounds in the same browser, so both see the same machine
    load."""
    parquet = tmp / "against.parquet"
    pq.write_table(pa.table(scores_table(n_rows, n_classifiers, seed=1)), parquet)
    pages, servers = {}, []
    lat: dict[str, list[float]] = {}
    enter: dict[str, list[float]] = {}
    try:
        for label, repo in (("this checkout", REPO), ("baseline", tree)):
            server = Server(tmp / f"against-{len(servers)}" / "data", repo=repo)
            servers.append(server)
            data_id = post_dataset(server.url, parquet)
            page = browser.new_page(viewport={"width": 1480, "height": 1100})
            page.goto(f"{server.url}/explore?data={data_id}&p_pos=0.01&cost_fn=10&cost_fp=1"
                      + pins_query(n_classifiers, pins))
            page.wait_for_function(READY, timeout=300_000)
            page.wait_for_timeout(1500)
            pages[label], lat[label], enter[label] = page, [], []
        cpu: dict[str, list[dict]] = {label: [] for label in pages}
        for r in range(rounds):
            for label, page in pages.items():
                page.bring_to_front()
                lat[label] += slider_samples(page, samples // rounds, pause_ms)
                enter[label] += enter_samples(page, samples // rounds, pause_ms)
                if profile:   # after the timed keys, so the profiler is not in their times
                    cpu[label].append(profiled_slider_samples(page, samples // rounds,
                                                              pause_ms)[1])
            print(f"[against] round {r + 1}/{rounds}: slider p95 so far " + ", ".join(
                f"{k} {percentile(v, 95):.1f} ms" for k, v in lat.items()) + "; Enter p95 " +
                ", ".join(f"{k} {percentile(v, 95):.1f} ms" for k, v in enter.items()),
                flush=True)
    finally:
        for page in pages.values():
            page.close()
        for server in servers:
            server.stop()
    out = {label: {"samples": len(v), "median_ms": round(statistics.median(v), 1),
                   "p95_ms": round(percentile(v, 95), 1)} for label, v in lat.items()}
    out["p95_ratio"] = round(out["this checkout"]["p95_ms"] / out["baseline"]["p95_ms"], 3)
    out["median_ratio"] = round(out["this checkout"]["median_ms"] / out["baseline"]["median_ms"],
                                3)
    out["baseline_tree"] = str(tree)
    if profile:
        def mean_of(summaries: list[dict]) -> dict:
            keys = {k for s in summaries for k in s["inclusive_ms_per_step"]}
            return {"busy_ms_per_step": round(statistics.mean(
                        s["busy_ms_per_step"] for s in summaries), 2),
                    "inclusive_ms_per_step": {k: round(statistics.mean(
                        s["inclusive_ms_per_step"].get(k, 0.0) for s in summaries), 2)
                        for k in sorted(keys)},
                    "top_self_ms_per_step (last round)": summaries[-1]["top_self_ms_per_step"]}
        out["cpu_profile"] = {label: mean_of(v) for label, v in cpu.items()}
    out["pins"] = pins
    out["enter"] = {label: {"samples": len(v), "median_ms": round(statistics.median(v), 1),
                            "p95_ms": round(percentile(v, 95), 1)} for label, v in enter.items()}
    out["enter"]["p95_ratio"] = round(out["enter"]["this checkout"]["p95_ms"]
                                      / out["enter"]["baseline"]["p95_ms"], 3)
    return out


def bench_upload(browser, tmp: Path, n_rows: int, n_classifiers: int, reps: int,
                 repo: Path = REPO, first_rep: int = 0) -> dict:
    results = []
    for rep in range(first_rep, first_rep + reps):   # new content each: nothing de-duplicated
        data_dir = tmp / f"upload-data-{rep}-{repo.name}"
        csv = tmp / f"upload-{rep}.csv"
        pd.DataFrame(scores_table(n_rows, n_classifiers, seed=100 + rep, decimals=6)).to_csv(
            csv, index=False)
        size_mb = csv.stat().st_size / 1e6
        server = Server(data_dir, repo=repo)
        try:
            page = browser.new_page(viewport={"width": 1480, "height": 1100})
            page.goto(f"{server.url}/explore")
            page.wait_for_selector("#upload input[type=file]", state="attached")
            page.evaluate(UPLOAD_INSTRUMENT)
            page.set_input_files("#upload input[type=file]", csv)
            page.wait_for_function(UPLOAD_DONE, arg=[n_classifiers, csv.name], timeout=120_000)
            t0, t1 = page.evaluate("[window.__upload.t0, window.__upload.t1]")
            post = page.evaluate("""() => performance.getEntriesByType('resource')
                .filter(e => e.name.endsWith('/api/v1/datasets'))
                .map(e => [e.duration, e.responseStart - e.requestStart])[0]""")
            page.close()
        finally:
            server.stop()
        total = (t1 - t0) / 1000
        results.append({"total_s": total, "post_s": post[0] / 1000,
                        "server_s": post[1] / 1000})
        print(f"[upload] rep {rep + 1}: {size_mb:.0f} MB CSV, change -> first plot "
              f"{total:.2f} s (POST {post[0] / 1000:.2f} s, of which server "
              f"{post[1] / 1000:.2f} s)", flush=True)
        csv.unlink()
    return {"rows": n_rows, "classifiers": n_classifiers, "csv_mb": round(size_mb, 1),
            "reps": reps, "median_s": round(statistics.median(r["total_s"] for r in results), 2),
            "max_s": round(max(r["total_s"] for r in results), 2),
            "median_post_s": round(statistics.median(r["post_s"] for r in results), 2),
            "median_server_s": round(statistics.median(r["server_s"] for r in results), 2)}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--classifiers", type=int, default=20)
    parser.add_argument("--rows", type=int, default=1_000_000)
    parser.add_argument("--samples", type=int, default=100)
    parser.add_argument("--upload-rows", type=int, default=1_000_000)
    parser.add_argument("--upload-classifiers", type=int, default=5)
    parser.add_argument("--reps", type=int, default=3)
    parser.add_argument("--variants", action="store_true",
                        help="also the slider with log axes, zoom, hull classifiers only")
    parser.add_argument("--upload-baseline-classifiers", type=int, default=0,
                        help="also the first plot with this many classifiers (the baseline)")
    parser.add_argument("--against", type=Path,
                        help="another checkout (e.g. a git worktree of the commit before a "
                             "change): its slider path and first plot measured in the same run, "
                             "alternating with this one's, and the ratios printed")
    parser.add_argument("--many", action="store_true",
                        help="issue 10's targets: 20 x 1e6 slider with --variants, first plot "
                             "of 50 x 2e5 against 5 x 2e5")
    parser.add_argument("--quick", action="store_true", help="1e5 rows instead of 1e6")
    parser.add_argument("--pins", type=int, default=0,
                        help="open the slider page with this many pinned thresholds (issue 23's "
                             "bar: 2, with the strip chart)")
    parser.add_argument("--profile", action="store_true",
                        help="also a CDP CPU profile of the slider keys (ms per step, a second "
                             "series of keys after the timed one)")
    parser.add_argument("--skip-upload", action="store_true")
    parser.add_argument("--skip-slider", action="store_true")
    parser.add_argument("--json", type=Path, help="also write the results here")
    args = parser.parse_args(argv)
    if args.quick:
        args.rows = args.upload_rows = 100_000
    if args.many:
        args.classifiers, args.variants = 20, True
        args.upload_classifiers, args.upload_rows = 50, 200_000
        args.upload_baseline_classifiers = 5

    from playwright.sync_api import sync_playwright

    out: dict = {"machine": {"cpus": os.cpu_count(), "python": platform.python_version(),
                             "platform": platform.platform()}}
    with tempfile.TemporaryDirectory(prefix="costdash-bench-") as tmpdir, sync_playwright() as p:
        tmp = Path(tmpdir)
        browser = p.chromium.launch(executable_path=CHROMIUM, args=LAUNCH_ARGS)
        out["chromium"] = browser.version
        if not args.skip_slider and not args.against:
            out["slider"] = bench_slider(browser, tmp, args.rows, args.classifiers, args.samples,
                                         variants=args.variants, pins=args.pins,
                                         profile=args.profile)
            s = out["slider"]
            print(f"[slider] {s['samples']} key presses: median {s['median_ms']} ms, "
                  f"p95 {s['p95_ms']} ms, max {s['max_ms']} ms; from the key event's timeStamp: "
                  f"median {s['from_event_median_ms']} ms, p95 {s['from_event_p95_ms']} ms; "
                  f"frames from the key to its paint p95 {s['frames_p95']} "
                  f"({s['in_first_frame_share']:.0%} painted in the first frame after the key)",
                  flush=True)
            print(f"[enter] typed value + Enter: median {s['enter_median_ms']} ms, p95 "
                  f"{s['enter_p95_ms']} ms; typing alone (debounce, baseline): p95 "
                  f"{s['typing_p95_ms']} ms; ratio {s['enter_vs_typing_p95']}x the typing path, "
                  f"{s['enter_vs_slider_p95']}x the slider path", flush=True)
        if args.against:
            a = out["against"] = bench_against(browser, tmp, args.against.resolve(), args.rows,
                                               args.classifiers, args.samples, pins=args.pins,
                                               profile=args.profile)
            print(f"[against] slider p95 {a['this checkout']['p95_ms']} ms here, "
                  f"{a['baseline']['p95_ms']} ms in {a['baseline_tree']}: ratio {a['p95_ratio']} "
                  f"(medians: {a['median_ratio']})", flush=True)
            for label, cpu in (a.get("cpu_profile") or {}).items():
                print(f"[against] CPU profile, {label}: {json.dumps(cpu)}", flush=True)
            e = a["enter"]
            print(f"[against] typed value + Enter p95 {e['this checkout']['p95_ms']} ms here, "
                  f"{e['baseline']['p95_ms']} ms in the baseline: ratio {e['p95_ratio']}",
                  flush=True)
            if not args.skip_upload:
                here, there = [], []
                for rep in range(args.reps):        # alternating, one upload each at a time
                    here.append(bench_upload(browser, tmp, args.upload_rows,
                                             args.upload_classifiers, 1,
                                             first_rep=2 * rep)["median_s"])
                    there.append(bench_upload(browser, tmp, args.upload_rows,
                                              args.upload_classifiers, 1,
                                              repo=args.against.resolve(),
                                              first_rep=2 * rep + 1)["median_s"])
                a["upload"] = {"classifiers": args.upload_classifiers, "rows": args.upload_rows,
                               "here_s": here, "baseline_s": there,
                               "median_ratio": round(statistics.median(here)
                                                     / statistics.median(there), 3)}
                print(f"[against] first plot of {args.upload_classifiers} x "
                      f"{args.upload_rows:,}: median {statistics.median(here):.2f} s here, "
                      f"{statistics.median(there):.2f} s in the baseline: ratio "
                      f"{a['upload']['median_ratio']}", flush=True)
            args.skip_upload = args.skip_slider = True
        if not args.skip_upload:
            out["upload"] = bench_upload(browser, tmp, args.upload_rows, args.upload_classifiers,
                                         args.reps)
            u = out["upload"]
            print(f"[upload] median {u['median_s']} s, max {u['max_s']} s", flush=True)
            if args.upload_baseline_classifiers:
                base = bench_upload(browser, tmp, args.upload_rows,
                                    args.upload_baseline_classifiers, args.reps)
                out["upload_baseline"] = base
                u["median_vs_baseline"] = round(u["median_s"] / base["median_s"], 3)
                print(f"[upload] baseline {base['classifiers']} classifiers x "
                      f"{base['rows']:,}: median {base['median_s']} s; "
                      f"{u['classifiers']} classifiers take {u['median_vs_baseline']}x that",
                      flush=True)
        browser.close()
    print(json.dumps(out, indent=2))
    if args.json:
        args.json.write_text(json.dumps(out, indent=2))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
