"""Bootstrap jobs through the real deployment roles: gunicorn (two workers) serving the
Confidence page in headless Chromium, and a Celery worker on Redis computing the band.

Prints the click-to-band time of both job back ends (docs/deployment.md quotes them).
"""

from __future__ import annotations

import re
import time
from collections import Counter

import numpy as np
import pytest
from playwright.sync_api import Page, expect

from tests.support.processes import start_web

pytestmark = [pytest.mark.browser, pytest.mark.slow]

B = 1000

BAND = """(uid) => {
    const p = document.querySelector('#confidence-graph .js-plotly-plot');
    const t = p && p._fullData && p._fullData.find(d => d.uid === uid);
    return t ? Array.from(t.y) : null;
}"""


def band_trace(page: Page, uid: str) -> list[float]:
    page.wait_for_function(f"() => ({BAND})('{uid}') !== null", timeout=10_000)
    return page.evaluate(BAND, uid)


def watch_errors(page: Page) -> list[str]:
    errors: list[str] = []
    page.on("console", lambda m: errors.append(m.text) if m.type == "error" else None)
    page.on("pageerror", lambda e: errors.append(str(e)))
    return errors


def choose_bootstrap(page: Page) -> None:
    """The page's default band is closed form (thresholds picked on a held-out half): pick the
    resampling spread of the re-tuned envelope, a bootstrap of B replicates."""
    page.locator("#confidence-method").get_by_text("Resampling spread").click()


def run_band(page: Page, url: str) -> float:
    """Open the Confidence page, run the bootstrap, wait for the band; seconds from the click."""
    page.goto(url)
    expect(page.locator("#confidence-status")).to_contain_text("Press Compute band",
                                                               timeout=20_000)
    choose_bootstrap(page)
    expect(page.locator("#confidence-status")).to_contain_text("Press Run bootstrap")
    started = time.perf_counter()
    page.click("#confidence-run")
    expect(page.locator("#confidence-status")).to_contain_text("computed in", timeout=60_000)
    seconds = time.perf_counter() - started
    low, high = np.array(band_trace(page, "band-low")), np.array(band_trace(page, "band-high"))
    cost = np.array(band_trace(page, "cost"))
    assert low.shape == cost.shape == high.shape == (201,)
    assert np.all(low <= cost + 1e-12) and np.all(cost <= high + 1e-12) and np.any(high > low)
    expect(page.locator("#confidence-run")).to_be_enabled()
    return seconds


def dash_pids(web_log: str) -> Counter:
    """How many Dash callback requests each gunicorn worker served (from the access log)."""
    return Counter(re.findall(r'"POST /_dash-update-component[^"]*" 200 .* pid=<(\d+)>', web_log))


def polls(web_log: str) -> list[str]:
    """Access-log lines of job polls (requests carrying the signed ``cacheKey`` and ``job``)."""
    return [line for line in web_log.splitlines()
            if "/_dash-update-component?" in line and "cacheKey=" in line]


def send_polls_to(page: Page, other: str) -> None:
    """The browser's job polls go to another web role: the job is started by one host and
    followed by another, as behind a load balancer without sticky sessions. (The handler runs
    only while the test is in a Playwright call: wait with Playwright, not time.sleep.)"""
    def reroute(route):
        url = route.request.url
        if "cacheKey=" in url:
            route.continue_(url=other + url[url.index("/_dash-update-component"):])
        else:
            route.continue_()
    page.route("**/_dash-update-component*", reroute)


def test_a_celery_worker_computes_the_band_and_any_web_role_follows_it(scaled, demo_csv,
                                                                       page: Page):
    record = scaled.upload(demo_csv, "breast-cancer.csv")
    errors = watch_errors(page)
    send_polls_to(page, scaled.web2.url)
    seconds = run_band(page, f"{scaled.url}/confidence?data={record['id']}&model=gbm"
                             f"&replicates={B}&pc=0.3")
    status = page.inner_text("#confidence-status")
    print(f"\ncelery: B={B} click to band {seconds:.2f} s ({status}); callbacks per web "
          f"worker: {dict(dash_pids(scaled.web.log_text()))} + "
          f"{dict(dash_pids(scaled.web2.log_text()))} (polls)")

    worker_log = scaled.worker.log_text()
    ran = re.findall(r"Task (background_callback_\w+)\[([0-9a-f-]+)\] succeeded", worker_log)
    assert len(ran) == 1, scaled.logs()
    # The first web role started the job; the second, which shares only Redis, the database
    # and the secret key, verified its signed handles and delivered the result.
    assert polls(scaled.web2.log_text()) and not polls(scaled.web.log_text()), scaled.logs()
    assert all('" 200 ' in line for line in polls(scaled.web2.log_text()))

    # The band is in Redis: a fresh page load shows it with no new job.
    page.unroute("**/_dash-update-component*")
    page.goto(f"{scaled.url}/confidence?data={record['id']}&model=gbm&replicates={B}&pc=0.3")
    expect(page.locator("#confidence-status")).to_contain_text("Press Compute band",
                                                               timeout=20_000)
    choose_bootstrap(page)
    expect(page.locator("#confidence-status")).to_contain_text("kept from an earlier run",
                                                               timeout=20_000)
    expect(page.locator("#confidence-summary")).to_contain_text("At PC(+) = 0.3")
    assert len(re.findall(r"Task background_callback_\w+\[[0-9a-f-]+\] succeeded",
                          scaled.worker.log_text())) == 1
    assert errors == []


def test_a_web_role_with_another_secret_key_cannot_follow_the_job(scaled, demo_csv, tmp_path,
                                                                  page: Page):
    """Why every role needs the same COSTDASH_SECRET_KEY: Dash signs job handles with it."""
    record = scaled.upload(demo_csv, "breast-cancer.csv")
    stranger = start_web({**scaled.env, "COSTDASH_SECRET_KEY": "not-the-shared-key"},
                         tmp_path / "stranger.log", workers=1, name="stranger")
    try:
        send_polls_to(page, stranger.url)
        page.goto(f"{scaled.url}/confidence?data={record['id']}&model=gbm&replicates=300")
        expect(page.locator("#confidence-status")).to_contain_text("Press Compute band",
                                                                   timeout=20_000)
        choose_bootstrap(page)
        expect(page.locator("#confidence-status")).to_contain_text("Press Run bootstrap")
        page.click("#confidence-run")
        # The job runs, but the stranger cannot read its handles: to the page it ends with
        # no result.
        deadline = time.monotonic() + 30
        while "succeeded" not in scaled.worker.log_text() and time.monotonic() < deadline:
            # Not time.sleep: Playwright's sync API runs the reroute handler only while the
            # test is inside a Playwright call, and the job's first request waits for it.
            page.wait_for_timeout(200)
        assert "succeeded" in scaled.worker.log_text(), scaled.logs()
        expect(page.locator("#confidence-run")).to_be_enabled(timeout=20_000)
        page.wait_for_timeout(1000)  # a few more poll intervals: still nothing
        assert "computed in" not in page.inner_text("#confidence-status")
        expect(page.locator("#confidence-status")).to_contain_text("Press Run bootstrap")
        assert polls(stranger.log_text())
    finally:
        stranger.stop()


def test_embedded_jobs_under_gunicorn_for_comparison(embedded, demo_csv, page: Page):
    record = embedded.upload(demo_csv, "breast-cancer.csv")
    errors = watch_errors(page)
    seconds = run_band(page, f"{embedded.url}/confidence?data={record['id']}&model=gbm"
                             f"&replicates={B}&pc=0.3")
    print(f"\nembedded (DiskcacheManager): B={B} click to band {seconds:.2f} s "
          f"({page.inner_text('#confidence-status')}); callbacks per web worker: "
          f"{dict(dash_pids(embedded.web.log_text()))}")
    assert errors == []
