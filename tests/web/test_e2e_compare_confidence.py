"""The Compare and Confidence pages in headless Chromium (Playwright + ``dash_thread_server``):
background jobs with progress and cancel, level changes without a new job, URL state.

Screenshots go to ``test-output/screenshots/`` (compare.png, confidence.png).
"""

from __future__ import annotations

import re
import socket
import time

import numpy as np
import pandas as pd
import psutil
import pytest
from playwright.sync_api import Page, expect

from costdash.analysis import summarize_classifier
from costdash.bands import difference_band
from costdash.costspace import envelope_difference
from costdash.demo import load_demo
from costdash.roc import roc_of
from costdash.view import VIEW_FIELDS

from .conftest import APP_ZYGOTE

pytestmark = pytest.mark.browser

VIEW_HAS_BAND_CHOICE = {"method", "simultaneous"} <= {f.name for f in VIEW_FIELDS}
"""Whether links carry the band choice (costdash.view's ``method`` and ``simultaneous``)."""

B = 1000  # the demo has 569 rows: a job of this size computes in about 0.02 s

TRACES = """([graph, uid]) => {
    const plot = document.querySelector('#' + graph + ' .js-plotly-plot');
    if (!plot || !plot._fullData) return null;
    // _fullData: typed arrays (base64 "bdata" in .data) are decoded there
    const t = plot._fullData.find(d => d.uid === uid);
    // legend names break long labels into lines: compare them as one line
    return t ? {x: Array.from(t.x), y: Array.from(t.y),
                name: (t.name || '').replace(/<br>/g, ' ')} : null;
}"""


def trace(page: Page, graph: str, uid: str) -> dict | None:
    # wait_for_function, not evaluate: it has a timeout
    handle = page.wait_for_function(f"(a) => ({{value: ({TRACES})(a)}})", arg=[graph, uid],
                                    timeout=30_000)
    return handle.json_value()["value"]


def wait_trace(page: Page, graph: str, uid: str, name: str = "") -> dict:
    """The trace once plotly has drawn it (the figure prop lands before the plot is redrawn);
    with ``name``, once its legend name contains it."""
    page.wait_for_function(
        "([g, u, n]) => { const p = document.querySelector('#' + g + ' .js-plotly-plot');"
        " const t = p && p._fullData && p._fullData.find(d => d.uid === u);"
        " return !!t && (t.name || '').replace(/<br>/g, ' ').includes(n); }",
        arg=[graph, uid, name], timeout=30_000)
    return trace(page, graph, uid)


def free_port() -> int:
    """A free port: the runner's default ones (58050, ...) collide with test runs of other
    sessions on this machine."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def open_page(server, app, page: Page, path: str) -> list[str]:
    errors: list[str] = []
    page.on("console", lambda m: errors.append(m.text) if m.type == "error" else None)
    page.on("pageerror", lambda e: errors.append(str(e)))
    server(app, port=free_port())
    page.goto(server.url + path)
    return errors


def save_screenshot(page: Page, path) -> None:
    """Not ``page.screenshot(path=...)``: Playwright writes that file from asyncio's default
    executor thread, which dash's ThreadedRunner kills when it stops a server (it kills every
    thread started since the server started), so the next test's write would wait forever."""
    page.evaluate("document.activeElement && document.activeElement.blur()")
    page.wait_for_timeout(300)
    path.write_bytes(page.screenshot(full_page=True))


def exact_difference(dataset, a: str, b: str):
    ea, eb = (summarize_classifier(roc_of(dataset.classifier(n))).envelope for n in (a, b))
    return envelope_difference(ea, eb, a_name=a, b_name=b)


def choose(page: Page, control: str, text: str) -> None:
    """Pick the option of a radio list (``#confidence-method``, ``#compare-method``) whose
    label contains ``text``."""
    page.locator(f"#{control}").get_by_text(text).click()


def job_requests(page: Page) -> list[str]:
    """URLs of background-job requests (start and polls carry ``cacheKey``/``job``)."""
    seen: list[str] = []
    page.on("request", lambda r: seen.append(r.url) if "cacheKey=" in r.url
            or "job=" in r.url else None)
    return seen


def test_compare_crossovers_and_significant_ranges(dash_thread_server, web_app, page: Page,
                                                   screenshot_dir):
    services = web_app.server.extensions["costdash"]
    errors = open_page(dash_thread_server, web_app, page, "/compare")
    expect(page.locator("#compare-error")).to_contain_text("No data set is open")

    record = services.put_demo("breast-cancer")
    page.goto(dash_thread_server.url
              + f"/compare?data={record.id}&a=gbm&b=naive_bayes&replicates={B}")
    expect(page.locator("#compare-dataset")).to_contain_text("breast-cancer.csv: 569 cases")
    demo = load_demo("breast-cancer")
    d = exact_difference(demo, "gbm", "naive_bayes")
    x1, x2 = d.crossovers
    expect(page.locator("#compare-crossovers")).to_contain_text(
        f"cross at PC(+) = {x1:.4g} and {x2:.4g}")
    expect(page.locator("#compare-better")).to_contain_text(
        f"naive_bayes better on PC(+) {x1:.3g}–{x2:.3g}")
    expect(page.locator("#compare-significant")).to_contain_text("Press Compute band")
    wait_trace(page, "compare-difference", "crossovers")
    # The default band is closed form: the replicates box is disabled, and says why.
    expect(page.locator("#compare-replicates")).to_be_disabled()
    expect(page.locator("#compare-method-note")).to_contain_text("replicates are not used")

    page.click("#compare-run")
    expect(page.locator("#compare-significant")).to_contain_text("significantly better",
                                                                 timeout=20_000)
    # The pages' default: thresholds picked on a held-out half, a calibrated paired band.
    band = difference_band(demo.classifier("gbm"), demo.classifier("naive_bayes"),
                           select="split", rng=0)
    better = band.significant[0].better
    # A range of one grid point reads as that point.
    ranges = ", ".join(f"{s.lo:.3g}" if f"{s.lo:.3g}" == f"{s.hi:.3g}" else f"{s.lo:.3g}–{s.hi:.3g}"
                       for s in band.significant if s.better == better)
    expect(page.locator("#compare-significant")).to_contain_text(
        f"{better} significantly better on PC(+) {ranges} (pointwise)")
    expect(page.locator("#compare-significant")).to_contain_text(
        band.label[0].upper() + band.label[1:])
    low = wait_trace(page, "compare-difference", "band-low",
                     "90% discordant-pair Clopper–Pearson–MOVER band")
    assert np.allclose(low["y"], band.low)
    held_out = wait_trace(page, "compare-difference", "band-diff")
    assert np.allclose(held_out["y"], band.diff)
    expect(page.locator("#compare-run")).to_be_enabled()
    expect(page).to_have_url(re.compile(r"a=gbm&b=naive_bayes"))   # defaults are left out

    # Another pair: exact part at once, no band until it is run.
    page.locator("#compare-b").click()
    page.locator(".dash-dropdown-option", has_text="forest").click()
    (x,) = exact_difference(demo, "gbm", "forest").crossovers
    expect(page.locator("#compare-crossovers")).to_contain_text(f"cross at PC(+) = {x:.4g}:")
    expect(page.locator("#compare-significant")).to_contain_text("Press Compute band")
    expect(page).to_have_url(re.compile(r"b=forest"))
    page.goto(dash_thread_server.url
              + f"/compare?data={record.id}&a=gbm&b=naive_bayes&replicates={B}")
    # Restored from the URL, and the band from the server's cache (no new job needed).
    expect(page.locator("#compare-significant")).to_contain_text("significantly better")
    wait_trace(page, "compare-difference", "band-high",
               "90% discordant-pair Clopper–Pearson–MOVER band")
    save_screenshot(page, screenshot_dir / "compare.png")

    # The re-tuned envelopes: a paired bootstrap, exploratory -- no level, no significance.
    choose(page, "compare-method", "Resampling spread of the re-tuned envelopes")
    expect(page.locator("#compare-replicates")).to_be_enabled()
    expect(page.locator("#compare-significant")).to_contain_text(
        f"Press Run bootstrap to compute the paired band of gbm − naive_bayes from {B:,} "
        "replicates")
    page.click("#compare-run")
    expect(page.locator("#compare-significant")).to_contain_text("No significant ranges",
                                                                 timeout=20_000)
    expect(page.locator("#compare-significant")).not_to_contain_text("significantly better")
    spread = difference_band(demo.classifier("gbm"), demo.classifier("naive_bayes"),
                             replicates=B, rng=0)
    low = wait_trace(page, "compare-difference", "band-low", "resampling spread")
    assert np.allclose(low["y"], spread.low) and "%" not in low["name"]
    assert trace(page, "compare-difference", "significant-a") is None
    assert trace(page, "compare-difference", "significant-b") is None
    save_screenshot(page, screenshot_dir / "compare-spread.png")
    assert errors == []


def test_confidence_band_then_level_change_without_a_new_job(dash_thread_server, web_app,
                                                              page: Page, screenshot_dir):
    services = web_app.server.extensions["costdash"]
    record = services.put_demo("breast-cancer")
    errors = open_page(dash_thread_server, web_app, page,
                       f"/confidence?data={record.id}&model=gbm&replicates={B}&pc=0.3")
    expect(page.locator("#confidence-status")).to_contain_text("Press Compute band")
    expect(page.locator("#confidence-replicates")).to_be_disabled()
    wait_trace(page, "confidence-graph", "envelope")

    jobs = job_requests(page)
    started = time.perf_counter()
    page.click("#confidence-run")
    expect(page.locator("#confidence-status")).to_contain_text("computed in", timeout=20_000)
    print(f"held-out band job, click to band: {time.perf_counter() - started:.2f} s")
    assert jobs, "the band should come from a background job"
    # The default: thresholds picked on a held-out half, named in the legend, calibrated.
    high = wait_trace(page, "confidence-graph", "band-high", "90% Clopper–Pearson–MOVER band")
    assert "stratified half" in high["name"]
    low, cost = (trace(page, "confidence-graph", u) for u in ("band-low", "cost"))
    assert low and cost and low["x"] == cost["x"] == high["x"]
    assert "held-out cost" in cost["name"]
    lo, c, hi = (np.array(t["y"]) for t in (low, cost, high))
    assert np.all(lo <= c + 1e-12) and np.all(c <= hi + 1e-12)
    assert np.any(hi > lo)
    assert trace(page, "confidence-graph", "envelope") is not None  # dotted, all rows
    expect(page.locator("#confidence-summary")).to_contain_text("At PC(+) = 0.3")
    expect(page.locator("#confidence-caveat")).to_contain_text("on a stratified random half")
    width90 = page.inner_text("#confidence-width")

    # New level: a normal callback recomputes the cached band's edges; no background job.
    n_jobs = len(jobs)
    page.fill("#confidence-level", "0.8")
    page.keyboard.press("Tab")
    expect(page.locator("#confidence-summary")).to_contain_text("80% band")
    wait_trace(page, "confidence-graph", "band-high", "80% Clopper–Pearson–MOVER band")
    low80 = np.array(trace(page, "confidence-graph", "band-low")["y"])
    assert not np.array_equal(low80, lo) and np.all(low80 >= lo - 1e-12)
    assert page.inner_text("#confidence-width") != width90
    page.wait_for_timeout(600)
    assert len(jobs) == n_jobs, jobs[n_jobs:]
    expect(page).to_have_url(re.compile(r"model=gbm&pc=0\.3&level=0\.8"))
    assert "method=" not in page.url and "simultaneous=" not in page.url

    # A fixed threshold (the deployed model's): a new job, the Clopper–Pearson–MOVER band of its
    # line.
    page.fill("#confidence-threshold", "0.5")
    page.keyboard.press("Tab")
    expect(page.locator("#confidence-status")).to_contain_text("Press Compute band")
    expect(page.locator("#confidence-caveat")).to_contain_text("at its fixed threshold")
    expect(page.locator("#confidence-method")).to_contain_text("Clopper–Pearson–MOVER")
    page.click("#confidence-run")
    expect(page.locator("#confidence-summary")).to_contain_text("At this threshold",
                                                                timeout=20_000)
    page.fill("#confidence-threshold", "")
    page.keyboard.press("Tab")
    expect(page.locator("#confidence-caveat")).to_contain_text("on a stratified random half")
    expect(page.locator("#confidence-status")).to_contain_text("kept from an earlier run")
    # Back to 90%: the same band as the job's.
    page.fill("#confidence-level", "0.9")
    page.keyboard.press("Tab")
    again = wait_trace(page, "confidence-graph", "band-low", "90% Clopper–Pearson–MOVER band")
    assert np.array_equal(np.array(again["y"]), lo)
    assert len(jobs) > n_jobs  # only the fixed-threshold run started a job
    save_screenshot(page, screenshot_dir / "confidence.png")

    # The resampling spread of the re-tuned envelope: a bootstrap, drawn without a level.
    choose(page, "confidence-method", "Resampling spread")
    expect(page.locator("#confidence-replicates")).to_be_enabled()
    expect(page.locator("#confidence-status")).to_contain_text(
        f"Press Run bootstrap to compute the band of gbm from {B:,} replicates")
    page.click("#confidence-run")
    expect(page.locator("#confidence-status")).to_contain_text("computed in", timeout=20_000)
    spread = wait_trace(page, "confidence-graph", "band-high", "resampling spread")
    assert "%" not in spread["name"]
    expect(page.locator("#confidence-summary")).not_to_contain_text("90%")
    expect(page.locator("#confidence-caveat")).to_contain_text("None: the resampling spread")
    if VIEW_HAS_BAND_CHOICE:  # the link carries the choice (the default is left out)
        expect(page).to_have_url(re.compile(r"method=percentile"))
    save_screenshot(page, screenshot_dir / "confidence-spread.png")
    assert errors == []


def _job_processes() -> list[psutil.Process]:
    """Children of this process running Python (the DiskcacheManager's job processes; the
    browser and Playwright's driver are other programs), outside the app.py zygote's tree (it
    and the servers it forks for other modules' tests: tests/support/app_zygote.py)."""
    me = psutil.Process()
    zygote = APP_ZYGOTE.pid
    others = set() if zygote is None else {zygote} | {
        p.pid for p in _descendants(zygote)}
    out = []
    for p in me.children(recursive=True):
        try:
            if p.pid not in others and p.name() == me.name() and \
                    p.status() != psutil.STATUS_ZOMBIE:
                out.append(p)
        except psutil.NoSuchProcess:
            pass
    return out


def _descendants(pid: int) -> list[psutil.Process]:
    try:
        return psutil.Process(pid).children(recursive=True)
    except psutil.NoSuchProcess:
        return []


def test_cancel_a_long_job_keeps_the_page_usable(dash_thread_server, web_app, page: Page,
                                                 tmp_path):
    rng = np.random.default_rng(0)
    n = 150_000
    y = rng.random(n) < 0.3
    path = tmp_path / "big.csv"
    pd.DataFrame({"y_true": y.astype(int),
                  "model": rng.normal(size=n) + 1.2 * y}).to_csv(path, index=False)
    services = web_app.server.extensions["costdash"]
    record = services.store.put(path, "big.csv")
    errors = open_page(dash_thread_server, web_app, page,
                       f"/confidence?data={record.id}&model=model&replicates=10000")
    expect(page.locator("#confidence-dataset")).to_contain_text("big.csv: 150,000 cases")
    choose(page, "confidence-method", "Resampling spread")  # a bootstrap: a long job
    expect(page.locator("#confidence-status")).to_contain_text("Press Run bootstrap")
    page.click("#confidence-run")
    expect(page.locator("#confidence-cancel")).to_be_enabled()
    expect(page.locator("#confidence-run")).to_be_disabled()
    # Progress arrives once per poll: some replicates done, far from all.
    expect(page.locator("#confidence-progress-text")).to_contain_text("of 10,000 replicates",
                                                                       timeout=30_000)
    assert len(_job_processes()) == 1
    page.click("#confidence-cancel")
    expect(page.locator("#confidence-run")).to_be_enabled()
    expect(page.locator("#confidence-cancel")).to_be_disabled()
    expect(page.locator("#confidence-job")).not_to_have_class(re.compile("running"))
    deadline = time.time() + 20
    while _job_processes() and time.time() < deadline:
        time.sleep(0.1)
    assert _job_processes() == []  # the job process was killed, not left running
    expect(page.locator("#confidence-status")).to_contain_text("Press Run bootstrap")

    # Still usable: a small run completes.
    page.fill("#confidence-replicates", "200")
    page.keyboard.press("Tab")
    expect(page.locator("#confidence-status")).to_contain_text("from 200 replicates")
    page.click("#confidence-run")
    expect(page.locator("#confidence-status")).to_contain_text("computed in", timeout=20_000)
    wait_trace(page, "confidence-graph", "band-high")
    assert errors == []
