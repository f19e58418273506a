"""Faults of the job role, for real: the Celery pool process running a bootstrap job is killed
(SIGKILL, as the OOM killer would) while the Confidence page waits for the band.

What the deployment promises (docs/deployment.md): the job is started once more; if its process
dies again, the page says the job failed and Run works again; the web roles keep serving
throughout.
"""

from __future__ import annotations

import os
import re
import secrets
import signal
import time

import psutil
import pytest
import redis
import requests
from playwright.sync_api import Page, expect

from dashboard.jobs import MAX_DELIVERIES
from tests.support.processes import deploy_env, running, start_web, start_worker
from tests.support.services import free_port

pytestmark = [pytest.mark.browser, pytest.mark.slow]

B = 10_000  # on 150,000 rows: about 10 s of work, so there is time to kill it mid-way


def job_starts(redis_url: str) -> dict[str, int]:
    """Starts of each job so far, as the job role counts them (task id -> starts)."""
    client = redis.Redis.from_url(redis_url)
    return {k.decode().rsplit(":", 1)[1]: int(client.get(k) or 0)
            for k in client.keys("costdash:job-starts:*")}


def wait_until(condition, timeout: float, what: str, logs=lambda: "") -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        if time.monotonic() > deadline:
            raise AssertionError(f"{what}: not within {timeout} s\n{logs()}")
        time.sleep(0.1)


def kill_running_pool_process(deployment, redis_url: str, starts: int) -> int:
    """SIGKILL the worker's pool process once the job has been started ``starts`` times;
    returns its pid."""
    wait_until(lambda: starts in job_starts(redis_url).values(), 60,
               f"the job's start #{starts}", deployment.logs)
    # --concurrency=1: one pool process (it may be a moment before one replaces a killed one)
    wait_until(lambda: len(deployment.worker.children()) == 1, 30, "a pool process",
               deployment.logs)
    (child,) = deployment.worker.children()
    child.send_signal(signal.SIGKILL)
    psutil.wait_procs([child], timeout=10)
    return child.pid


def assert_web_serves(deployment, dataset_id: str) -> None:
    """Other pages and the API answer while the job role is in trouble."""
    for path in ("/explore", "/folds", f"/api/v1/datasets/{dataset_id}", "/healthz"):
        resp = requests.get(deployment.url + path, timeout=10)
        assert resp.status_code == 200, (path, resp.status_code, resp.text[:300])


def choose_bootstrap(page: Page) -> None:
    """The page's default band is closed form (thresholds picked on a held-out half): pick the
    resampling spread of the re-tuned envelope, a bootstrap with replicates and progress."""
    page.locator("#confidence-method").get_by_text("Resampling spread").click()
    expect(page.locator("#confidence-status")).to_contain_text("Press Run bootstrap",
                                                               timeout=20_000)


def open_and_run(page: Page, url: str) -> None:
    page.goto(url)
    expect(page.locator("#confidence-dataset")).to_contain_text("150,000 cases", timeout=20_000)
    choose_bootstrap(page)
    page.click("#confidence-run")
    expect(page.locator("#confidence-cancel")).to_be_enabled()


def test_a_job_whose_pool_process_is_killed_is_run_again_to_completion(
        scaled, big_csv, redis_url, page: Page):
    dataset_id = scaled.store(big_csv, "big.csv")
    open_and_run(page, f"{scaled.url}/confidence?data={dataset_id}&model=model"
                       f"&replicates={B}")
    expect(page.locator("#confidence-progress-text")).to_contain_text(
        f"of {B:,} replicates", timeout=30_000)
    killed = kill_running_pool_process(scaled, redis_url, starts=1)
    assert_web_serves(scaled, dataset_id)

    # The broker got the job back (acks_late + reject_on_worker_lost) and a new pool process
    # runs it; the page kept polling and gets the band of the second run.
    wait_until(lambda: 2 in job_starts(redis_url).values(), 60, "the rerun", scaled.logs)
    assert_web_serves(scaled, dataset_id)
    expect(page.locator("#confidence-status")).to_contain_text("computed in", timeout=120_000)
    expect(page.locator("#confidence-summary")).to_contain_text(f"from {B:,} bootstrap")
    expect(page.locator("#confidence-run")).to_be_enabled()
    log = scaled.worker.log_text()
    assert re.search(rf"pid:{killed} exited with 'signal 9 \(SIGKILL\)'", log), log
    assert len(re.findall(r"Task background_callback_\w+\[[0-9a-f-]+\] succeeded", log)) == 1


def test_a_job_whose_process_dies_every_time_is_reported_failed(
        scaled, big_csv, redis_url, page: Page):
    dataset_id = scaled.store(big_csv, "big.csv")
    # Another seed than the test above: its band is in the session's Redis already.
    open_and_run(page, f"{scaled.url}/confidence?data={dataset_id}&model=model"
                       f"&replicates={B}&seed=1")
    for start in range(1, MAX_DELIVERIES + 1):
        kill_running_pool_process(scaled, redis_url, starts=start)
        assert_web_serves(scaled, dataset_id)

    # Started MAX_DELIVERIES times, killed each time: the next delivery gives up, and the page
    # says so instead of waiting for ever; Run works again.
    expect(page.locator("#confidence-status")).to_contain_text(
        f"worker process running it died {MAX_DELIVERIES} times", timeout=60_000)
    expect(page.locator("#confidence-run")).to_be_enabled()
    expect(page.locator("#confidence-cancel")).to_be_disabled()
    assert "JobAbandoned" in scaled.worker.log_text()
    print("\npage after two deaths:", page.inner_text("#confidence-status"))

    page.fill("#confidence-replicates", "200")
    page.keyboard.press("Tab")
    expect(page.locator("#confidence-status")).to_contain_text("from 200 replicates")
    page.click("#confidence-run")
    expect(page.locator("#confidence-status")).to_contain_text("computed in", timeout=60_000)


def test_cancel_stops_a_celery_job_for_good(scaled, big_csv, redis_url, page: Page):
    """Cancel terminates the pool process's job (SIGTERM); with acks_late that must not count
    as a lost worker, or the job would come back."""
    dataset_id = scaled.store(big_csv, "big.csv")
    open_and_run(page, f"{scaled.url}/confidence?data={dataset_id}&model=model"
                       f"&replicates={B}&seed=2")
    expect(page.locator("#confidence-progress-text")).to_contain_text(
        f"of {B:,} replicates", timeout=30_000)
    page.click("#confidence-cancel")
    expect(page.locator("#confidence-run")).to_be_enabled()
    expect(page.locator("#confidence-status")).to_contain_text("Press Run bootstrap")
    wait_until(lambda: re.search(r"Terminating [0-9a-f-]+ \((?:15|Signals.SIGTERM)\)",
                                 scaled.worker.log_text()), 30, "the worker's terminate",
               scaled.logs)
    # Long enough for a requeued job to be received again (the reruns above take < 1 s).
    time.sleep(3)
    log = scaled.worker.log_text()
    assert len(re.findall(r"Task background_callback_\w+\[[0-9a-f-]+\] received", log)) == 1, log
    assert list(job_starts(redis_url).values()) == [1]
    assert "succeeded" not in log


def test_a_job_lost_with_its_whole_worker_is_reported_failed(scaled, big_csv, redis_url,
                                                             tmp_path, page: Page):
    """The worker's main process dies too (SIGKILL to the whole worker, as when its host or
    container goes): nobody reports the job lost, and the broker would hand it to another
    worker only after its visibility timeout. Its heartbeat stops, so the page says the job
    was lost within about HEARTBEAT_TTL seconds; Run works again, with another worker."""
    from dashboard.jobs import HEARTBEAT_TTL

    dataset_id = scaled.store(big_csv, "big.csv")
    open_and_run(page, f"{scaled.url}/confidence?data={dataset_id}&model=model"
                       f"&replicates={B}&seed=3")
    expect(page.locator("#confidence-progress-text")).to_contain_text(
        f"of {B:,} replicates", timeout=30_000)
    assert redis.Redis.from_url(redis_url).keys("costdash:job-alive:*")  # it beats
    os.killpg(scaled.worker.pid, signal.SIGKILL)
    scaled.worker.process.wait(timeout=10)
    killed_at = time.monotonic()
    assert_web_serves(scaled, dataset_id)

    expect(page.locator("#confidence-status")).to_contain_text(
        "the worker running it stopped answering", timeout=int((HEARTBEAT_TTL + 30) * 1000))
    print(f"\nlost job reported {time.monotonic() - killed_at:.1f} s after the kill")
    expect(page.locator("#confidence-run")).to_be_enabled()
    expect(page.locator("#confidence-cancel")).to_be_disabled()

    with running(lambda: start_worker(scaled.env, tmp_path / "worker2.log")) as (other,):
        page.fill("#confidence-replicates", "200")
        page.keyboard.press("Tab")
        expect(page.locator("#confidence-status")).to_contain_text("from 200 replicates")
        page.click("#confidence-run")
        expect(page.locator("#confidence-status")).to_contain_text("computed in",
                                                                   timeout=60_000)
        assert "succeeded" in other.log_text()


def test_an_unreachable_job_queue_is_reported_on_the_page(tmp_path, demo_csv, page: Page):
    """COSTDASH_JOBS_URL names a Redis that is not there: the page says the job could not
    start, and everything else works."""
    env = deploy_env(tmp_path / "data", secret_key=secrets.token_hex(32),
                     jobs_url=f"redis://127.0.0.1:{free_port()}/0")
    with running(lambda: start_web(env, tmp_path / "web.log", workers=2)) as (web,):
        resp = requests.post(web.url + "/api/v1/datasets",
                             files={"file": ("demo.csv", demo_csv)}, timeout=60)
        assert resp.status_code == 200, resp.text
        dataset_id = resp.json()["id"]
        page.goto(f"{web.url}/confidence?data={dataset_id}&model=gbm&replicates=200")
        # The default band (closed form) is a job too.
        expect(page.locator("#confidence-status")).to_contain_text("Press Compute band",
                                                                   timeout=20_000)
        page.click("#confidence-run")
        expect(page.locator("#confidence-status")).to_contain_text(
            "could not be started", timeout=60_000)
        expect(page.locator("#confidence-run")).to_be_enabled()
        for path in ("/explore", f"/api/v1/datasets/{dataset_id}", "/healthz"):
            assert requests.get(web.url + path, timeout=10).status_code == 200
        print("\npage:", page.inner_text("#confidence-status"))
        assert "bootstrap job could not start" in web.log_text()
