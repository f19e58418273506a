"""Session-wide fixtures for the real services: a fresh PostgreSQL database, a Redis db number;
and the order the modules run in."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from tests.support import cpu_use
from tests.support.services import (fresh_postgres_database, fresh_postgres_schema,
                                    fresh_redis_url)


def pytest_configure(config):
    cpu_use.register(config)


@pytest.fixture(autouse=True)
def no_housekeeping_outlives_its_test():
    """Stops the housekeeping of every app the test made (dashboard/factory.py schedules it on
    one thread per process, every ``maintenance_seconds``).

    Left running, an app whose PostgreSQL database the test dropped tried to connect every
    round for the rest of the worker's life; a Multiclass job forked in a later test while that
    thread was inside libpq's connect inherited its lock, hung in its own connect, and kept
    the Playwright driver's pipe open, so the worker never finished (a whole-suite run,
    2026-11-27). An app the test still holds is dropped after it anyway."""
    yield
    factory = sys.modules.get("dashboard.factory")
    if factory is not None:
        with factory._scheduler_lock:
            factory._scheduled.clear()


@pytest.fixture(scope="session")
def postgres_url():
    """SQLAlchemy URL (``postgresql+psycopg://...``) of a database created for this session."""
    with fresh_postgres_database() as url:
        yield url


@pytest.fixture(scope="session")
def redis_url():
    """``redis://127.0.0.1:6379/<n>`` of a Redis database number claimed for this session."""
    with fresh_redis_url() as url:
        yield url


@pytest.fixture(scope="module")
def module_postgres_url():
    """SQLAlchemy URL of a PostgreSQL database created for one test module (dropped after it)."""
    with fresh_postgres_database() as url:
        yield url


@pytest.fixture
def fresh_postgres_url(module_postgres_url):
    """A URL on which a store starts as on a new PostgreSQL database: a new, empty schema of
    the module's database (``search_path``), milliseconds where ``CREATE DATABASE`` takes
    about a second on a busy machine."""
    with fresh_postgres_schema(module_postgres_url) as url:
        yield url


DURATIONS = Path(__file__).with_name("durations.json")


def _refuse_serial_tests_scripts_test_sh_would_not_find(items) -> None:
    """scripts/test.sh's serial run collects only the files that say ``mark.serial``; a test
    marked serial some other way (a conftest, a shared marker list) would run in neither half."""
    hidden = sorted({str(item.path) for item in items if item.get_closest_marker("serial")
                     and "mark.serial" not in Path(str(item.path)).read_text(encoding="utf-8")})
    if hidden:
        raise pytest.UsageError("tests marked serial in files that do not say `mark.serial` "
                                f"(scripts/test.sh's serial run would miss them): {hidden}")


def pytest_collection_modifyitems(session, config, items):
    """Longest modules first (seconds from tests/durations.json, scripts/test_durations.py).

    pytest-xdist hands the first quarter of the tests out in turn and the rest as workers free
    up: with the long modules first they run side by side from the start, and the short tests
    fill the gaps at the end, instead of one long module running alone while the other workers
    wait. A module keeps its own order (its fixtures are set up once per worker); a module not
    in the file goes first, since a new module may be a slow one. The order is the same in
    every worker, as xdist requires.
    """
    _refuse_serial_tests_scripts_test_sh_would_not_find(items)
    try:
        seconds = json.loads(DURATIONS.read_text())
    except (OSError, ValueError):
        return
    root = Path(str(config.rootpath))
    unknown = float("inf")

    def module_of(item) -> str:
        try:
            return Path(str(item.path)).relative_to(root).as_posix()
        except ValueError:
            return str(item.path)

    position = {id(item): index for index, item in enumerate(items)}
    items.sort(key=lambda item: (-seconds.get(module_of(item), unknown), position[id(item)]))
