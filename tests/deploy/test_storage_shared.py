"""The scaled storage for real: PostgreSQL shared by web roles on different ports, and what the
app does while the database is away (through a TCP proxy the test stops and restarts)."""

from __future__ import annotations

import secrets

import pytest
import requests

from costdash.demo import DEMOS
from dashboard.storage import SqlStore
from tests.support.processes import deploy_env, running, start_web
from tests.support.services import fresh_postgres_database
from tests.support.tcp_proxy import TcpProxy

pytestmark = pytest.mark.slow


def post_analysis(base: str, data: bytes, **fields) -> requests.Response:
    return requests.post(base + "/api/v1/analyses", files={"file": ("breast-cancer.csv", data)},
                         data=fields, timeout=60)


def token_of(url: str) -> str:
    return url.rsplit("/", 1)[1]


def test_two_web_roles_on_different_ports_serve_the_same_link(tmp_path, redis_url):
    data = DEMOS["breast-cancer"].path.read_bytes()
    with fresh_postgres_database() as db_url:
        secret = secrets.token_hex(32)
        # Different data dirs: nothing is shared through the disk, only PostgreSQL and Redis.
        env_a = deploy_env(tmp_path / "a", secret_key=secret, database_url=db_url,
                           cache_url=redis_url)
        env_b = deploy_env(tmp_path / "b", secret_key=secret, database_url=db_url,
                           cache_url=redis_url)
        with running(lambda: start_web(env_a, tmp_path / "a.log", workers=2),
                     lambda: start_web(env_b, tmp_path / "b.log", workers=2)) as (a, b):
            assert a.url != b.url
            created = post_analysis(a.url, data, p_pos="0.2", cost_fn="4")
            assert created.status_code == 201, created.text
            body = created.json()
            token = token_of(body["url"])
            assert body["url"].startswith(a.url)

            for base in (a.url, b.url):
                assert requests.get(f"{base}/s/{token}", timeout=30).status_code == 200
                got = requests.get(f"{base}/api/v1/analyses/{token}", timeout=30)
                assert got.status_code == 200
                assert got.json()["view"] == {"p_pos": 0.2, "cost_fn": 4.0, "cost_fp": 1.0,
                                              "volume": 1000.0, "unit": "€"}

            gone = requests.delete(f"{b.url}/api/v1/analyses/{body['id']}", timeout=30,
                                   headers={"Authorization": f"Bearer {body['manage_token']}"})
            assert gone.status_code == 204
            for base in (a.url, b.url):
                assert requests.get(f"{base}/s/{token}", timeout=30).status_code == 404
                assert requests.get(f"{base}/api/v1/analyses/{token}",
                                    timeout=30).status_code == 404
        store = SqlStore(db_url)
        assert store.count() == {"datasets": 0, "dataset_parts": 0, "analyses": 0,
                                 "handles": 0}
        store.engine.dispose()


def test_database_down_gives_a_clear_error_and_loses_nothing(tmp_path):
    data = DEMOS["breast-cancer"].path.read_bytes()
    with fresh_postgres_database() as db_url, TcpProxy("127.0.0.1", 5432) as proxy:
        proxied = db_url.replace("127.0.0.1:5432", f"127.0.0.1:{proxy.port}")
        env = deploy_env(tmp_path / "d", secret_key=secrets.token_hex(32), database_url=proxied)
        with running(lambda: start_web(env, tmp_path / "web.log", workers=2)) as (web,):
            body = post_analysis(web.url, data, p_pos="0.1").json()
            token = token_of(body["url"])
            assert requests.get(f"{web.url}/s/{token}", timeout=30).status_code == 200

            proxy.stop()
            page = requests.get(f"{web.url}/s/{token}", timeout=60)
            assert page.status_code == 503
            assert "The database is not reachable right now" in page.text
            assert "Traceback" not in page.text
            api = requests.get(f"{web.url}/api/v1/analyses/{token}", timeout=60)
            assert api.status_code == 503 and "database" in api.json()["error"]
            refused = post_analysis(web.url, data, p_pos="0.3", name="while down")
            assert refused.status_code == 503 and "nothing was changed" in refused.json()["error"]
            assert requests.get(f"{web.url}/healthz", timeout=60).status_code == 503
            # Pages that need no stored data still load.
            assert requests.get(f"{web.url}/explore", timeout=30).status_code == 200

            proxy.restart()
            again = requests.get(f"{web.url}/api/v1/analyses/{token}", timeout=60)
            assert again.status_code == 200 and again.json()["view"]["p_pos"] == 0.1
            assert requests.get(f"{web.url}/s/{token}", timeout=30).status_code == 200
            assert requests.get(f"{web.url}/healthz", timeout=30).status_code == 200
            assert post_analysis(web.url, data).status_code == 201
        store = SqlStore(db_url)
        counts = store.count()
        store.engine.dispose()
        # The save refused while the database was away left no row behind.
        assert counts == {"datasets": 1, "dataset_parts": 1, "analyses": 2, "handles": 2}
