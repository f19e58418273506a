"""Session-wide fixtures for the real services: a fresh PostgreSQL database, a Redis db number."""

from __future__ import annotations

import pytest

from tests.support.services import (fresh_postgres_database, fresh_postgres_schema,
                                    fresh_redis_url)


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
