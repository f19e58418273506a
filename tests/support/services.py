"""The real services the deployment tests talk to: PostgreSQL and Redis started by the machine
(127.0.0.1:5432 trust auth, 127.0.0.1:6379), plus processes the tests start themselves.

Every test session gets its own PostgreSQL database (created here, dropped at the end) and its
own Redis database number, so runs never see each other's rows or keys.
"""

from __future__ import annotations

import os
import secrets
import socket
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager

POSTGRES_ADMIN_URL = os.environ.get("COSTDASH_TEST_POSTGRES",
                                    "postgresql://postgres@127.0.0.1:5432/postgres")
REDIS_HOST, REDIS_PORT = "127.0.0.1", 6379


def _psycopg_dsn(url: str) -> str:
    return url.replace("postgresql+psycopg://", "postgresql://")


@contextmanager
def fresh_postgres_database() -> Iterator[str]:
    """A new, empty PostgreSQL database; yields its SQLAlchemy URL; drops it afterwards."""
    import psycopg

    name = f"costdash_test_{secrets.token_hex(6)}"
    with psycopg.connect(_psycopg_dsn(POSTGRES_ADMIN_URL), autocommit=True) as admin:
        admin.execute(f'CREATE DATABASE "{name}"')
    base = POSTGRES_ADMIN_URL.rsplit("/", 1)[0].replace("postgresql://", "postgresql+psycopg://")
    try:
        yield f"{base}/{name}"
    finally:
        with psycopg.connect(_psycopg_dsn(POSTGRES_ADMIN_URL), autocommit=True) as admin:
            admin.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')


@contextmanager
def fresh_postgres_schema(database_url: str) -> Iterator[str]:
    """A new, empty schema in the database at ``database_url``; yields a URL whose
    connections see that schema only (``search_path``), so a store opened on it starts on no
    tables, as on a new database.

    Creating a schema takes milliseconds where ``CREATE DATABASE`` copies a template (about a
    second on a busy machine): a module shares one database (dropped with it, schemas and
    all) and each test gets a schema of its own."""
    import psycopg

    if "?" in database_url:
        raise ValueError(f"a database URL without query parameters, not {database_url!r}")
    name = f"costdash_test_{secrets.token_hex(6)}"
    with psycopg.connect(_psycopg_dsn(database_url), autocommit=True) as conn:
        conn.execute(f'CREATE SCHEMA "{name}"')
    yield f"{database_url}?options=-csearch_path%3D{name}"


def redis_available() -> bool:
    try:
        with socket.create_connection((REDIS_HOST, REDIS_PORT), timeout=1) as s:
            s.sendall(b"PING\r\n")
            return s.recv(16).startswith(b"+PONG")
    except OSError:
        return False


@contextmanager
def fresh_redis_url() -> Iterator[str]:
    """``redis://127.0.0.1:6379/<n>`` on a database number no other key uses; flushed after."""
    import redis

    for db in range(15, 1, -1):
        client = redis.Redis(host=REDIS_HOST, port=REDIS_PORT, db=db)
        # A claim key makes concurrent sessions pick different numbers.
        if client.set("costdash-test-claim", "1", nx=True, ex=3600):
            try:
                yield f"redis://{REDIS_HOST}:{REDIS_PORT}/{db}"
            finally:
                client.flushdb()
            return
    raise RuntimeError("no free Redis database number (2..15) for the tests")


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def wait_for_http(url: str, timeout: float = 30.0, process=None) -> None:
    """Poll ``url`` until it answers (any status), or fail naming the url."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if process is not None and process.poll() is not None:
            raise RuntimeError(f"the process serving {url} exited with {process.returncode}")
        try:
            urllib.request.urlopen(url, timeout=2)
            return
        except urllib.error.HTTPError:
            return
        except OSError:
            time.sleep(0.2)
    raise TimeoutError(f"{url} did not answer within {timeout} s")
