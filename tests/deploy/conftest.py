"""Fixtures of the deployment tests: the roles of a scaled deployment as real processes
(gunicorn, Celery; tests/support/processes.py) on the machine's Redis, and the browser.

Browser tests use Debian's Chromium through Playwright (no ``playwright install``), headless, as
tests/web does, and hand Playwright bytes, never paths.
"""

from __future__ import annotations

import secrets
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest
import redis
import requests

from tests.support.browser import launch_args
from tests.support.processes import Role, deploy_env, running, start_web, start_worker



@pytest.fixture(scope="session")
def browser_type_launch_args(browser_type_launch_args):
    """pytest-playwright: Debian's Chromium (tests/support/browser.py), headless, as root."""
    return launch_args(browser_type_launch_args)


@pytest.fixture(scope="session")
def browser_context_args(browser_context_args):
    return {**browser_context_args, "viewport": {"width": 1480, "height": 1250}}


@dataclass
class Deployment:
    """One deployment's roles and the environment they share; ``web2`` is a second web role
    (another "host") when the fixture starts one."""

    web: Role
    worker: Role | None
    env: dict[str, str]
    web2: Role | None = None

    @property
    def url(self) -> str:
        return self.web.url

    def upload(self, data: bytes, name: str = "predictions.csv") -> dict:
        """POST a predictions file to the web role; the stored record's summary."""
        resp = requests.post(self.url + "/api/v1/datasets", files={"file": (name, data)},
                             timeout=120)
        assert resp.status_code == 200, resp.text
        return resp.json()

    def store(self, data: bytes, name: str) -> str:
        """Store a predictions file straight into the deployment's database (as another
        process of it would); its data set id."""
        from dashboard.config import Settings
        from dashboard.storage import make_store

        return make_store(Settings.from_env(self.env)).put(data, name).id

    def logs(self) -> str:
        return "\n".join(f"--- {r.name} ---\n{r.log_text()}"
                         for r in (self.web, self.web2, self.worker) if r is not None)


def forget_celery_queue(url: str) -> None:
    """Drop a test's leftovers from the broker (its queue, unacknowledged jobs, the job role's
    start counts), so nothing of one test reaches the next; the session's Redis db is shared."""
    client = redis.Redis.from_url(url)
    names = ["celery", "unacked", "unacked_index", "unacked_mutex"]
    names += client.keys("_kombu.binding.*") + client.keys("costdash:job-starts:*")
    client.delete(*names)


@pytest.fixture
def scaled(tmp_path, redis_url, postgres_url) -> Iterator[Deployment]:
    """The scaled roles: a Celery worker (one pool process) and two web roles (two "hosts",
    gunicorn with two workers each). They share PostgreSQL (storage), Redis (cache and jobs) and
    the secret key, and nothing else: each has its own data dir, as on separate machines."""
    forget_celery_queue(redis_url)
    key = secrets.token_hex(32)

    def env(role: str) -> dict[str, str]:
        return deploy_env(tmp_path / f"{role}-data", secret_key=key, cache_url=redis_url,
                          jobs_url=redis_url, database_url=postgres_url)

    with running(lambda: start_worker(env("worker"), tmp_path / "worker.log", concurrency=1),
                 lambda: start_web(env("web"), tmp_path / "web.log", workers=2),
                 lambda: start_web(env("web2"), tmp_path / "web2.log", workers=2,
                                   name="web2")) as roles:
        worker, web, web2 = roles
        yield Deployment(web, worker, web.env, web2)
    forget_celery_queue(redis_url)


@pytest.fixture
def embedded(tmp_path) -> Iterator[Deployment]:
    """The one-machine default under gunicorn: no Redis, no Celery; jobs run in child processes
    of the web workers, cache and jobs in the data dir."""
    env = deploy_env(tmp_path / "data", secret_key=secrets.token_hex(32))
    with running(lambda: start_web(env, tmp_path / "web.log", workers=2)) as (web,):
        yield Deployment(web, None, env)


@pytest.fixture(scope="session")
def big_csv(tmp_path_factory) -> bytes:
    """150,000 rows, one scored classifier: B = 10,000 replicates take about 10 s."""
    import numpy as np
    import pandas as pd

    rng = np.random.default_rng(0)
    n = 150_000
    y = rng.random(n) < 0.3
    frame = pd.DataFrame({"y_true": y.astype(int),
                          "model": np.round(rng.normal(size=n) + 1.2 * y, 4)})
    return frame.to_csv(index=False).encode()


@pytest.fixture(scope="session")
def demo_csv() -> bytes:
    from costdash.demo import DEMOS

    return Path(DEMOS["breast-cancer"].path).read_bytes()
