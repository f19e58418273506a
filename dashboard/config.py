"""Settings of the web dashboard, read from the environment (or given to :func:`create_app`).

Environment variables (all optional):

``COSTDASH_DATA_DIR``        where the embedded default keeps its SQLite index, data files, cache
                             and secret key (default ``./.costdash-data``)
``COSTDASH_CACHE_URL``       ``redis://host:port/db`` to share the result cache between hosts
                             (default: a FileSystemCache under the data dir)
``COSTDASH_JOBS_URL``        ``redis://host:port/db`` to run bootstrap jobs in a Celery worker
                             (default: child processes of the web process, see dashboard/jobs.py)
``COSTDASH_DATABASE_URL``    where data sets and shared analyses are kept: ``postgresql://user@host/db``
                             (several hosts) or ``sqlite:///path``; default: the SQLite file
                             ``costdash.db`` in the data dir
``COSTDASH_SECRET_KEY``      Flask secret key; generated once and kept in the data dir when unset
``COSTDASH_MAX_UPLOAD_MB``   largest accepted upload (default 200)
``COSTDASH_MAX_ROWS``        most data rows in one upload (default 50,000,000)
``COSTDASH_MAX_CLASSIFIERS`` most classifiers in one upload (default 200)
"""

from __future__ import annotations

import os
import secrets
from dataclasses import dataclass, field, fields, replace
from pathlib import Path
from typing import Any

MB = 1024 * 1024


@dataclass(frozen=True)
class Settings:
    """Everything :func:`dashboard.create_app` needs to know; immutable.

    Attributes
    ----------
    data_dir : Path
        Root of the embedded storage (SQLite index, data files, cache, secret key).
    cache_url : str or None
        ``redis://...`` for a RedisCache; None for a FileSystemCache under ``data_dir``.
    jobs_url : str or None
        Broker and result backend of a Celery worker for background jobs; None runs them in
        child processes (DiskcacheManager under ``data_dir/jobs``). See :mod:`dashboard.jobs`.
    database_url : str or None
        SQLAlchemy URL of the store (see :func:`dashboard.storage.database_url`); None: the
        SQLite file ``data_dir/costdash.db``.
    secret_key : str or None
        Flask secret key; None means "read or create ``data_dir/secret_key``".
    max_upload_bytes : int
        Largest predictions file accepted by the upload route (413 above it).
    max_rows, max_classifiers : int
        Most data rows and classifiers in one upload (400 with a message above them).
    max_roc_points : int
        Each classifier's ROC curve is thinned to at most this many points for display.
    max_cost_lines : int
        At most this many cost lines per classifier in the "all cost lines" view.
    cache_timeout : int
        Seconds a cached view model lives (0: until evicted).
    """

    data_dir: Path = field(default_factory=lambda: Path(".costdash-data"))
    cache_url: str | None = None
    jobs_url: str | None = None
    database_url: str | None = None
    secret_key: str | None = None
    max_upload_bytes: int = 200 * MB
    max_rows: int = 50_000_000
    max_classifiers: int = 200
    max_roc_points: int = 400
    max_cost_lines: int = 60
    cache_timeout: int = 7 * 24 * 3600

    @classmethod
    def from_env(cls, env: dict[str, str] | None = None, **overrides: Any) -> Settings:
        """Settings from ``COSTDASH_*`` environment variables, then ``overrides``."""
        env = dict(os.environ if env is None else env)
        values: dict[str, Any] = {}
        if env.get("COSTDASH_DATA_DIR"):
            values["data_dir"] = Path(env["COSTDASH_DATA_DIR"])
        if env.get("COSTDASH_CACHE_URL"):
            values["cache_url"] = env["COSTDASH_CACHE_URL"]
        if env.get("COSTDASH_JOBS_URL"):
            values["jobs_url"] = env["COSTDASH_JOBS_URL"]
        if env.get("COSTDASH_DATABASE_URL"):
            values["database_url"] = env["COSTDASH_DATABASE_URL"]
        if env.get("COSTDASH_SECRET_KEY"):
            values["secret_key"] = env["COSTDASH_SECRET_KEY"]
        if env.get("COSTDASH_MAX_UPLOAD_MB"):
            values["max_upload_bytes"] = int(float(env["COSTDASH_MAX_UPLOAD_MB"]) * MB)
        for key in ("max_rows", "max_classifiers"):
            if env.get(f"COSTDASH_{key.upper()}"):
                values[key] = int(env[f"COSTDASH_{key.upper()}"])
        return cls.from_mapping({**values, **overrides})

    @classmethod
    def from_mapping(cls, config: dict[str, Any]) -> Settings:
        """Settings from a plain dict (unknown keys are an error, so typos do not pass silently)."""
        known = {f.name for f in fields(cls)}
        unknown = set(config) - known
        if unknown:
            raise TypeError(f"unknown dashboard setting(s): {', '.join(sorted(unknown))}; "
                            f"known: {', '.join(sorted(known))}")
        values = dict(config)
        if "data_dir" in values:
            values["data_dir"] = Path(values["data_dir"])
        return replace(cls(), **values)

    def resolved_secret_key(self) -> str:
        """The secret key: the configured one, else one generated once and kept in the data dir."""
        if self.secret_key:
            return self.secret_key
        path = self.data_dir / "secret_key"
        try:
            return path.read_text().strip()
        except FileNotFoundError:
            pass
        self.data_dir.mkdir(parents=True, exist_ok=True)
        key = secrets.token_hex(32)
        tmp = path.with_suffix(f".tmp-{os.getpid()}")
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        with os.fdopen(fd, "w") as f:
            f.write(key)
        try:
            # Another worker may have won the race: keep whichever landed first.
            os.link(tmp, path)
        except FileExistsError:
            pass
        finally:
            tmp.unlink(missing_ok=True)
        return path.read_text().strip()
