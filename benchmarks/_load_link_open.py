"""Link open -> both plots drawn, in headless Chromium, against a bare page that loads the same
plotly.js and draws the same two figures (``bench_load.py --link-open``)."""

from __future__ import annotations

import json
import statistics
import tempfile
from contextlib import ExitStack
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import numpy as np
import requests

from benchmarks._load_core import JSON_HEADERS, TIMEOUT, web_role
from benchmarks._load_viewers import (
    DRAWN_JS, INTERACTIVE_JS, PLOTS, VIEWPORT, capture_viewer, launch_chromium,
    wanted_traces)

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
    drawn them (``performance.now()``), in the live graphs or in the read link's preview
    (dashboard/link_preview.py): the viewer sees them either way. For the dashboard, the same
    open also records when the live page is interactive (its own graphs drawn, no preview
    left) and how the preview ended (``data-link-preview``: "live", "error", "timeout";
    "none" without a preview). Returns the samples in ms, their medians and the ratio.
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
    interactive: list[float] = []
    previews: list[str] = []
    scripts: list[str] = []
    with sync_playwright() as p:
        browser = launch_chromium(p)
        try:
            # Which plotly.js the dashboard's page loads: the bare page loads the same file.
            probe = browser.new_page(viewport=VIEWPORT)
            probe.on("request", lambda r: scripts.append(r.url) if r.resource_type == "script"
                     and "plotly" in r.url.lower() else None)
            probe.goto(f"{base}/s/{share}")
            probe.wait_for_function(INTERACTIVE_JS, arg=want, timeout=timeout * 1000,
                                    polling="raf")
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
                        # ... and when the live page took over from a preview (or drew, without
                        # one): the plots drawn and their controls working.
                        page.wait_for_function(INTERACTIVE_JS, arg=want,
                                               timeout=timeout * 1000, polling="raf")
                        interactive.append(round(page.evaluate("window.__interactiveAt"), 1))
                        previews.append(page.evaluate(
                            "document.documentElement.dataset.linkPreview || 'none'"))
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
            "interactive_ms": interactive,
            "interactive_median_ms": statistics.median(interactive),
            "preview": previews,
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

