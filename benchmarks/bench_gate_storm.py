"""Issue 22, finding 7, against any tree: 16 concurrent uncached ``report.html`` and 16
``choice.json`` through nginx to gunicorn x 4 (PostgreSQL, Redis), with ``/healthz`` probed
every 0.1 s; prints what was computed, what refused, and ``/healthz``'s latencies.

    .venv/bin/python benchmarks/bench_gate_storm.py                 # this tree
    .venv/bin/python benchmarks/bench_gate_storm.py /tmp/before     # e.g. git archive <commit>

The storms and clients are those of ``tests/deploy/test_report_choice_gate_deploy.py`` (imported
from this checkout); the web role runs the given tree's code (its working directory and
``PYTHONPATH``). Needs the machine's PostgreSQL, Redis and nginx, as the deploy tests.
"""

from __future__ import annotations

import argparse
import secrets
import sys
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from tests.deploy.test_report_choice_gate_deploy import (  # noqa: E402
    CLIENTS, storm, summary, upload)
from tests.support.processes import deploy_env, running, start_proxy, start_web  # noqa: E402
from tests.support.services import fresh_postgres_database, fresh_redis_url  # noqa: E402


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("tree", type=Path, nargs="?", default=REPO)
    tree = parser.parse_args().tree.resolve()
    tmp = Path(tempfile.mkdtemp())
    with fresh_postgres_database() as database, fresh_redis_url() as cache:
        env = deploy_env(tmp / "data", secret_key=secrets.token_hex(32), database_url=database,
                         cache_url=cache, COSTDASH_TRUSTED_PROXIES="1", PYTHONPATH=str(tree))
        with running(lambda: start_web(env, tmp / "web.log", workers=4, cwd=tree)) as (web,):
            with running(lambda: start_proxy(web, tmp / "nginx")) as (proxy,):
                ids = [upload(proxy.url, i) for i in range(CLIENTS)]
                reports, report_probes = storm(proxy.url, [
                    f"/api/v1/datasets/{d}/report.html?p_pos=0.1&cost_fn=5" for d in ids])
                choices, choice_probes = storm(proxy.url, [
                    f"/api/v1/datasets/{d}/choice.json?p_pos=0.2&cost_fn=4&sens_p=0.1,0.3"
                    for d in ids])
    print(summary(f"{tree}: 16 uncached report.html", reports, report_probes))
    print(summary(f"{tree}: 16 uncached choice.json", choices, choice_probes))


if __name__ == "__main__":
    main()
