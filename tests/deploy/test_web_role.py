"""The web role under gunicorn (gunicorn.conf.py): a freshly started worker serves the page's
scripts to concurrent first requests.

Dash finishes its one-time setup in the first request's thread while marking it done at the
start, so with threaded workers a concurrent first request could get a 500 for a script and
leave the page on "Loading..." (seen here: 3 of 30 script requests in 1 of 4 fresh starts
without the fix). gunicorn.conf.py's ``post_worker_init`` runs the setup before the worker
serves. A race, so this test can only catch a regression often, not always.
"""

from __future__ import annotations

import re
import secrets
from concurrent.futures import ThreadPoolExecutor

import pytest
import requests

from tests.support.processes import deploy_env, running, start_web

pytestmark = pytest.mark.slow


def test_fresh_workers_serve_concurrent_first_requests_for_the_scripts(tmp_path):
    env = deploy_env(tmp_path / "data", secret_key=secrets.token_hex(32))
    with running(lambda: start_web(env, tmp_path / "web.log", workers=3)) as (web,):
        close = {"Connection": "close"}  # a new connection each: any worker may take it
        page = requests.get(web.url + "/explore", headers=close, timeout=10)
        scripts = re.findall(r'src="(/_dash-component-suites/[^"]+)"', page.text)
        assert len(scripts) >= 5, page.text[:500]

        def status(path: str) -> int:
            return requests.get(web.url + path, headers=close, timeout=30).status_code

        with ThreadPoolExecutor(24) as pool:
            statuses = list(pool.map(status, scripts * 4))
        log = web.log_text()
    assert statuses == [200] * len(statuses), [l for l in log.splitlines() if "Error" in l][:5]
    assert "is registered but the path requested is not valid" not in log
