"""compose.yaml and the Dockerfile say what tests/deploy runs: the same commands for each role
(tests/support/processes.py) and settings that mean what the tests configure.

No Docker engine runs here, so these files are checked against the tested processes instead of
being run (test_dockerfile.py replays the Dockerfile's steps).
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest
import yaml

from dashboard.services import cache_config
from dashboard.config import Settings
from dashboard.jobs import background_manager
from dashboard.storage import database_url
from tests.deploy.dockerfile import parse
from tests.support.processes import (PROXY_COMMAND, PROXY_CONFIG, REPO, WEB_COMMAND, WORKER_COMMAND,
                                     deploy_env)

SHARED = {"COSTDASH_DATABASE_URL", "COSTDASH_CACHE_URL", "COSTDASH_JOBS_URL",
          "COSTDASH_SECRET_KEY", "COSTDASH_DATA_DIR"}
"""The settings every role of the scaled deployment must share (docs/deployment.md)."""

GATE = {"COSTDASH_MAX_HEAVY_JOBS", "COSTDASH_MAX_HEAVY_JOBS_PER_CLIENT",
        "COSTDASH_MAX_HEAVY_JOBS_PER_PROCESS", "COSTDASH_HEAVY_TIMEOUT_SECONDS",
        "COSTDASH_RATE_LIMIT_HEAVY"}
"""The compute gate's limits (issue 22): compose states them for every role, at the defaults
the tests run with."""


@pytest.fixture(scope="module")
def compose() -> dict:
    return yaml.safe_load((REPO / "compose.yaml").read_text())


def interpolate(value: str, env: dict[str, str]) -> str:
    """Compose's ``${VAR}``, ``${VAR:-default}`` and ``${VAR:?error}`` (error when unset)."""
    def one(m: re.Match) -> str:
        name, op, arg = m.group(1), m.group(2), m.group(3)
        if env.get(name):
            return env[name]
        if op == ":-":
            return arg
        raise KeyError(f"{name} must be set: {arg}")
    return re.sub(r"\$\{(\w+)(?:(:-|:\?)([^}]*))?\}", one, value)


def role_env(service: dict, env: dict[str, str]) -> dict[str, str]:
    return {k: interpolate(str(v), env) for k, v in service["environment"].items()}


def test_roles_run_the_tested_commands(compose):
    services = compose["services"]
    assert services["web"]["command"] == WEB_COMMAND == parse(REPO / "Dockerfile").cmd
    worker = services["worker"]["command"]
    assert worker[:len(WORKER_COMMAND)] == WORKER_COMMAND
    assert all(re.fullmatch(r"--concurrency=\d+", a) for a in worker[len(WORKER_COMMAND):])
    # One image for both: Dash names a job's Celery task by a hash of the callback's source.
    assert services["web"]["image"] == services["worker"]["image"]
    assert services["web"]["build"] == services["worker"]["build"] == "."


def test_web_and_worker_share_every_setting(compose):
    env = {"COSTDASH_SECRET_KEY": "k" * 64}
    web, worker = (role_env(compose["services"][s], env) for s in ("web", "worker"))
    # The web role alone sits behind the proxy, and alone builds links (issue 22, finding 11:
    # on the address users reach the proxy at, never on a request's Host).
    assert web.pop("COSTDASH_TRUSTED_PROXIES") == "1"
    public = Settings.from_mapping({"public_url": web.pop("COSTDASH_PUBLIC_URL")}).public_url
    proxy_port = compose["services"]["proxy"]["ports"][0].split(":")[0]
    assert public == f"http://localhost:{proxy_port}"
    assert role_env(compose["services"]["web"], {
        **env, "COSTDASH_PUBLIC_URL": "https://costdash.example.org"})[
        "COSTDASH_PUBLIC_URL"] == "https://costdash.example.org"
    shared = {k for k in web if k.startswith("COSTDASH_")}
    assert shared == SHARED | GATE == {k for k in worker if k.startswith("COSTDASH_")}
    assert {k: web[k] for k in shared} == {k: worker[k] for k in shared}
    # The gate's limits as compose states them are the defaults (what the tests run with).
    stated = Settings.from_env({k: web[k] for k in GATE})
    assert all(getattr(stated, k.removeprefix("COSTDASH_").lower()) ==
               getattr(Settings(), k.removeprefix("COSTDASH_").lower()) for k in GATE)
    # The tests give their roles the same names (and nothing compose lacks).
    tested = deploy_env(Path("/data"), secret_key="k", cache_url="redis://h/0",
                        jobs_url="redis://h/1", database_url="postgresql+psycopg://h/db")
    assert {k for k in tested if k.startswith("COSTDASH_")} == SHARED
    # No default secret key: compose refuses to start without one.
    with pytest.raises(KeyError, match="COSTDASH_SECRET_KEY"):
        role_env(compose["services"]["web"], {})


def test_the_settings_mean_what_the_tests_configure(compose):
    env = role_env(compose["services"]["worker"], {"COSTDASH_SECRET_KEY": "k" * 64})
    settings = Settings.from_env(env)
    services = compose["services"]

    url = database_url(settings)
    pg = services["postgres"]["environment"]
    assert url == (f"postgresql+psycopg://{pg['POSTGRES_USER']}:"
                   f"{interpolate(pg['POSTGRES_PASSWORD'], {})}@postgres:5432/"
                   f"{pg['POSTGRES_DB']}")

    assert cache_config(settings)["CACHE_TYPE"] == "dashboard.storage.cachebackend.ResilientRedisCache"
    assert settings.cache_url.startswith("redis://redis:6379/")
    assert settings.jobs_url.startswith("redis://redis:6379/")
    # Different db numbers: flushing the cache must not drop the job queue.
    assert settings.cache_url != settings.jobs_url

    manager = background_manager(settings)  # builds the Celery app; connects to nothing yet
    conf = manager.handle.conf
    assert conf.broker_url == settings.jobs_url
    assert conf.task_acks_late and conf.task_reject_on_worker_lost
    assert conf.worker_prefetch_multiplier == 1
    assert conf.broker_transport_options["visibility_timeout"] > conf.task_time_limit


def test_ports_and_health_checks_agree(compose):
    dockerfile = parse(REPO / "Dockerfile")
    web = compose["services"]["web"]
    port = int(web["environment"]["PORT"])
    assert port == int(dockerfile.env["PORT"]) and port in dockerfile.expose
    # Exposed to the proxy only (test_every_client_goes_through_the_buffering_proxy).
    assert [str(p) for p in web["expose"]] == [str(port)]
    assert "/healthz" in " ".join(dockerfile.healthcheck)
    assert int(web["environment"]["WEB_CONCURRENCY"]) >= 1
    for name in ("postgres", "redis"):
        assert web["depends_on"][name]["condition"] == "service_healthy"
        assert compose["services"]["worker"]["depends_on"][name]["condition"] == \
            "service_healthy"


def test_every_client_goes_through_the_buffering_proxy(compose):
    services = compose["services"]
    published = {name for name, s in services.items() if s.get("ports")}
    assert published == {"proxy"}
    assert services["proxy"]["build"] == str(PROXY_CONFIG.parent.relative_to(REPO))
    image = parse(PROXY_CONFIG.parent / "Dockerfile")
    assert image.cmd == PROXY_COMMAND
    # The upstream the file names is the web service on the port its command listens on.
    port = services["web"]["environment"]["PORT"]
    assert f"server web:{port};" in PROXY_CONFIG.read_text()
