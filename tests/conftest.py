"""Session-wide fixtures for the real services: a fresh PostgreSQL database, a Redis db number."""

from __future__ import annotations

import pytest

from tests.support.services import fresh_postgres_database, fresh_redis_url


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
