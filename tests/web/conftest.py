"""Fixtures of the web dashboard's tests: fresh apps on temp data dirs, data files, the browser.

Browser tests (marked ``browser``) use Playwright with Debian's Chromium (no ``playwright
install``), headless, as root too, against a real ``python app.py`` subprocess on a free port with
a temp ``COSTDASH_DATA_DIR`` (``live_server``).

Why not dash's ``dash_thread_server``: its teardown stops the server by raising SystemExit in
*every* thread started after it (``dash.testing.application_runners.KillerThread.kill``), which
includes the worker threads Playwright's sync API uses to read and write files. After one such
teardown, the next ``page.screenshot(path=...)`` or ``set_input_files(<path>)`` in the session
waits forever. For the same reason these tests hand Playwright bytes, never paths, so they stay
safe when other test modules of the session use ``dash_thread_server``.
"""

from __future__ import annotations

import contextlib
import os
import socket
import subprocess
import time
import urllib.request
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from costdash.demo import DEMOS
from dashboard.config import Settings
from dashboard.factory import create_app
from dashboard.storage import SqlStore, database_url

from tests.support.app_zygote import Zygote
from tests.support.browser import launch_args

from .helpers import make_predictions

REPO = Path(__file__).resolve().parents[2]
SCREENSHOTS = REPO / "test-output" / "screenshots"


@pytest.fixture(scope="session")
def browser_type_launch_args(browser_type_launch_args):
    """pytest-playwright: Debian's Chromium (tests/support/browser.py), headless, as root."""
    return launch_args(browser_type_launch_args)


EXPECT_TIMEOUT_MS = 20_000
"""How long a browser test's ``expect`` waits for the page. Playwright's 5 s default is met on
a quiet machine, but the whole suite runs three workers, each with its own server and Chromium,
on two cores: a page that paints in 1 s alone took over 5 s there, and CI failed on waits, not on
wrong values. A wait only bounds how long a right answer may take; every check stays as strict."""


@pytest.fixture(scope="session", autouse=True)
def patient_browser_expectations():
    """Playwright's ``expect`` waits :data:`EXPECT_TIMEOUT_MS` (imported here, not at module
    level: the fast tier collects this conftest without Playwright)."""
    try:
        from playwright.sync_api import expect
    except ImportError:
        return
    expect.set_options(timeout=EXPECT_TIMEOUT_MS)


@pytest.fixture(scope="session")
def browser_context_args(browser_context_args):
    return {**browser_context_args, "viewport": {"width": 1480, "height": 1250}}


@pytest.fixture
def settings(tmp_path) -> Settings:
    return Settings.from_mapping({"data_dir": tmp_path / "data"})


@pytest.fixture
def web_app(settings):
    """A fresh dashboard on an empty temp data dir."""
    return create_app(settings)


@pytest.fixture
def services(web_app):
    return web_app.server.extensions["costdash"]


@pytest.fixture
def client(web_app):
    return web_app.server.test_client()


@pytest.fixture(scope="session")
def breast_cancer_csv() -> Path:
    return DEMOS["breast-cancer"].path


@pytest.fixture(scope="session")
def predictions_csv(tmp_path_factory) -> Path:
    path = tmp_path_factory.mktemp("files") / "predictions.csv"
    make_predictions().to_csv(path, index=False)
    return path


@pytest.fixture(scope="session")
def bad_csv(tmp_path_factory) -> Path:
    """A file the loader rejects: a score column with text in it."""
    path = tmp_path_factory.mktemp("files") / "broken.csv"
    path.write_text("y_true,alpha\n1,0.9\n0,oops\n1,0.7\n0,0.2\n")
    return path


@pytest.fixture(scope="session")
def screenshot_dir() -> Path:
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    return SCREENSHOTS


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@dataclass
class LiveServer:
    url: str
    data_dir: Path
    store: SqlStore
    log: Path


APP_ZYGOTE = Zygote()
"""Forks this worker's ``python app.py`` servers (tests/support/app_zygote.py: the imports are
paid once per worker, not once per server)."""


@pytest.fixture(scope="session", autouse=True)
def app_zygote_stopped_at_the_end() -> Iterator[None]:
    yield
    APP_ZYGOTE.stop()


@contextlib.contextmanager
def running_app(tmp_path: Path, *, ready_path: str = "/explore",
                env: dict[str, str] | None = None) -> Iterator[str]:
    """``python app.py --port N`` (forked by :data:`APP_ZYGOTE`) with its data dir under
    ``tmp_path`` and ``env`` added; yields its URL once ``ready_path`` answers 200; stopped
    (SIGTERM) after."""
    port = free_port()
    log = tmp_path / "server.log"
    full_env = {**os.environ, "COSTDASH_DATA_DIR": str(tmp_path / "live-data"),
                "PYTHONUNBUFFERED": "1", **(env or {})}
    full_env.pop("PORT", None)
    proc = APP_ZYGOTE.start([str(REPO / "app.py"), "--port", str(port)], env=full_env,
                            cwd=REPO, log=log)
    url = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 60
        while True:
            try:
                with urllib.request.urlopen(url + ready_path, timeout=2) as resp:
                    if resp.status == 200:
                        break
            except OSError:
                if proc.poll() is not None or time.monotonic() > deadline:
                    raise RuntimeError("app.py did not start:\n" + log.read_text()) from None
                time.sleep(0.1)
        yield url
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


@contextlib.contextmanager
def _live_server(tmp_path: Path) -> Iterator[LiveServer]:
    data_dir = tmp_path / "live-data"
    with running_app(tmp_path) as url:
        store = SqlStore(database_url(Settings.from_mapping({"data_dir": data_dir})))
        yield LiveServer(url, data_dir, store, tmp_path / "server.log")


@pytest.fixture(scope="module")
def live_server(tmp_path_factory) -> Iterator[LiveServer]:
    """``python app.py --port N`` with its own data dir, shared by the tests of one module.

    Each test still gets a fresh browser context (no cookies, no storage) and uploads or stores
    its own data set. Starting the server is ~2 s of CPU (dash, plotly, pandas imported, the
    layout built) and 3-5 s of wall time at the whole suite's load: one per module instead of
    one per test took ~50 starts out of a CI run (docs/development.md). A test that needs a
    server nobody else has touched asks for :func:`fresh_live_server`."""
    with _live_server(tmp_path_factory.mktemp("live")) as server:
        yield server


@pytest.fixture
def fresh_live_server(tmp_path) -> Iterator[LiveServer]:
    """``python app.py --port N`` with its own empty data dir; stopped (SIGTERM) after the test."""
    with _live_server(tmp_path) as server:
        yield server
