"""Settings of the web dashboard, read from the environment (or given to :func:`create_app`).

Environment variables (all optional):

``COSTDASH_DATA_DIR``        where the embedded default keeps its SQLite index, data files, cache
                             and secret key (default ``./.costdash-data``)
``COSTDASH_CACHE_URL``       ``redis://host:port/db`` to share the result cache between hosts
                             (default: a FileSystemCache under the data dir)
``COSTDASH_JOBS_URL``        ``redis://host:port/db`` to run bootstrap jobs in a Celery worker
                             (default: child processes of the web process, see dashboard/jobs/__init__.py)
``COSTDASH_DATABASE_URL``    where data sets and shared analyses are kept: ``postgresql://user@host/db``
                             (several hosts) or ``sqlite:///path``; default: the SQLite file
                             ``costdash.db`` in the data dir
``COSTDASH_SECRET_KEY``      Flask secret key; generated once and kept in the data dir when unset
``COSTDASH_MAX_UPLOAD_MB``   largest accepted upload (default 200)
``COSTDASH_MAX_ROWS``        most data rows in one upload (default 50,000,000)
``COSTDASH_MAX_CLASSIFIERS`` most classifiers in one upload (default 200)
``COSTDASH_CACHE_MAX_MB``    most megabytes the file cache (the embedded default) takes on disk
                             (default 2048); a Redis cache is bounded by Redis's ``maxmemory``
``COSTDASH_PUBLIC_URL``      the address users reach the service at (``https://costdash.example.org``):
                             links handed out (share, manage, API, report) are built on it instead
                             of on the request's ``Host`` header (default: unset, the request's own)
``COSTDASH_UPLOAD_RETENTION_DAYS`` days an upload no saved analysis uses is kept (default 30; 0:
                             for ever); renewed when the same file is uploaded again
``COSTDASH_MAINTENANCE_SECONDS`` seconds between two runs of the housekeeping of each web process
                             (expired analyses, old unshared uploads, temp files of dead uploads,
                             finished job processes; default 300; 0: only at start)
``COSTDASH_MAX_JOBS_PER_DATASET`` bootstrap jobs that may run at once on one upload or link
                             (default 2); another waits for one to finish
``COSTDASH_MAX_JOBS_PER_DATASET_PER_HOUR`` new bootstrap jobs one upload or link may start in
                             a clock hour (default 60): each seed is a new job and a new
                             cache entry, so this bounds both
``COSTDASH_MAX_HEAVY_JOBS``  expensive computations (Multiclass runs, and what other code
                             runs through :mod:`dashboard.jobs.gate`) running at once on the whole
                             site, every process and host together (default 4); one more is
                             answered 503 with ``Retry-After``
``COSTDASH_MAX_HEAVY_JOBS_PER_PROCESS`` of those at once in one web process (default 1), so
                             its other threads stay free for cheap requests (``/healthz``)
``COSTDASH_MAX_HEAVY_JOBS_PER_CLIENT`` of those at once for one client address (default 1);
                             one more is answered 429
``COSTDASH_HEAVY_TIMEOUT_SECONDS`` seconds one such computation may take before it is stopped
                             and answered 503 (default 90, below gunicorn's 120 s timeout)
``COSTDASH_RATE_LIMIT_HEAVY`` such computations started per client address (default
                             ``120 per hour``)
``COSTDASH_RATE_LIMIT_UPLOADS`` uploads per client address (default ``60 per hour``; the
                             ``limits`` syntax, several separated by ``;``); answered 429 with
                             ``Retry-After`` beyond it
``COSTDASH_RATE_LIMIT_SHARES`` analyses saved (shared) per client address (default ``60 per hour``)
``COSTDASH_TRUSTED_PROXIES`` reverse proxies in front (default 0; 1 behind deploy/nginx): the
                             client address of the rate limits is then taken from
                             ``X-Forwarded-For``, which only a trusted proxy may set
``COSTDASH_UPLOAD_KEYS``     comma-separated keys; when set, uploads, shares and the write API need
                             one (``Authorization: Bearer <key>``, or entered once on the page);
                             viewers of links never do (default: unset, anyone may upload)
``COSTDASH_SECURE_COOKIES``  ``true``: the session cookie is sent over HTTPS only (``Secure``);
                             default: true when ``COSTDASH_PUBLIC_URL`` is ``https://``
``COSTDASH_ALERT_WEBHOOK``   a URL that receives a JSON POST when a production batch leaves a
                             period alerting (docs/production.md; default: unset, none sent)
``COSTDASH_OIDC_ISSUER``, ``COSTDASH_OIDC_CLIENT_ID``, ``COSTDASH_OIDC_CLIENT_SECRET``
                             the organisation's OpenID Connect provider and this app's client at
                             it: with all three, uploading and sharing need a login, and each
                             person has "My analyses" and API tokens (:mod:`dashboard.accounts`;
                             default: unset, no accounts)
"""

from __future__ import annotations

import logging
import os
import re
import secrets
from dataclasses import dataclass, field, fields, replace
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

MB = 1024 * 1024


def public_url(url: str) -> str:
    """``COSTDASH_PUBLIC_URL`` checked: ``http(s)://host[:port]``, no path, no trailing slash."""
    parts = urlsplit(url.strip())
    if parts.scheme not in ("http", "https") or not parts.netloc or "@" in parts.netloc \
            or parts.path.strip("/") or parts.query or parts.fragment:
        raise ValueError("COSTDASH_PUBLIC_URL must be http(s)://host[:port] (no path), not "
                         f"{url!r}")
    return f"{parts.scheme}://{parts.netloc}"


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
    cache_max_bytes : int
        Bytes the file cache may take (0: bounded by its entry count only). A Redis cache is
        bounded by Redis's own ``maxmemory`` (docs/deployment.md).
    public_url : str or None
        ``scheme://host[:port]`` of the service as its users reach it; links are built on it.
        None: on the request's own address (its ``Host`` header).
    upload_retention_days : float
        Days a data set that no saved analysis uses is kept after its (last) upload; 0 keeps
        it for ever.
    maintenance_seconds : float
        Seconds between two runs of the housekeeping (:class:`dashboard.factory.Maintenance`);
        0 runs it only when the app is created.
    max_heavy_jobs, max_heavy_jobs_per_process, max_heavy_jobs_per_client : int
        Expensive computations (:mod:`dashboard.jobs.gate`) at once: on the whole site, in one
        process, for one client address.
    heavy_timeout_seconds : float
        Seconds one expensive computation may run before it is stopped (answered 503).
    rate_limit_heavy : str
        Expensive computations one client address may start (``limits`` syntax).
    secure_cookies : bool or None
        Whether the session cookie carries ``Secure`` (sent over HTTPS only); None: when
        ``public_url`` is ``https://`` (:meth:`cookies_secure`).
    oidc_issuer, oidc_client_id, oidc_client_secret : str or None
        The OpenID Connect provider (its issuer URL, ``<issuer>/.well-known/openid-configuration``
        describes it) and this app's client id and secret there; all three set: accounts
        (:func:`dashboard.accounts.accounts_enabled`).
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
    cache_max_bytes: int = 2048 * MB
    public_url: str | None = None
    upload_retention_days: float = 30.0
    maintenance_seconds: float = 300.0
    max_jobs_per_dataset: int = 2
    max_jobs_per_dataset_per_hour: int = 60
    max_heavy_jobs: int = 4
    max_heavy_jobs_per_process: int = 1
    max_heavy_jobs_per_client: int = 1
    heavy_timeout_seconds: float = 90.0
    rate_limit_heavy: str = "120 per hour"
    rate_limit_uploads: str = "60 per hour"
    rate_limit_shares: str = "60 per hour"
    trusted_proxies: int = 0
    upload_keys: tuple[str, ...] = ()
    secure_cookies: bool | None = None
    alert_webhook: str | None = None
    oidc_issuer: str | None = None
    oidc_client_id: str | None = None
    oidc_client_secret: str | None = None

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
        if env.get("COSTDASH_CACHE_MAX_MB"):
            values["cache_max_bytes"] = int(float(env["COSTDASH_CACHE_MAX_MB"]) * MB)
        if env.get("COSTDASH_PUBLIC_URL"):
            values["public_url"] = env["COSTDASH_PUBLIC_URL"]
        for key in ("upload_retention_days", "maintenance_seconds", "heavy_timeout_seconds"):
            if env.get(f"COSTDASH_{key.upper()}"):
                values[key] = float(env[f"COSTDASH_{key.upper()}"])
        for key in ("max_jobs_per_dataset", "max_jobs_per_dataset_per_hour", "trusted_proxies",
                    "max_heavy_jobs", "max_heavy_jobs_per_process", "max_heavy_jobs_per_client"):
            if env.get(f"COSTDASH_{key.upper()}"):
                values[key] = int(env[f"COSTDASH_{key.upper()}"])
        for key in ("rate_limit_uploads", "rate_limit_shares", "rate_limit_heavy"):
            if env.get(f"COSTDASH_{key.upper()}"):
                values[key] = env[f"COSTDASH_{key.upper()}"]
        if env.get("COSTDASH_UPLOAD_KEYS"):
            values["upload_keys"] = env["COSTDASH_UPLOAD_KEYS"]
        if env.get("COSTDASH_SECURE_COOKIES"):
            values["secure_cookies"] = env["COSTDASH_SECURE_COOKIES"]
        if env.get("COSTDASH_ALERT_WEBHOOK"):
            values["alert_webhook"] = env["COSTDASH_ALERT_WEBHOOK"]
        for key in ("oidc_issuer", "oidc_client_id", "oidc_client_secret"):
            if env.get(f"COSTDASH_{key.upper()}"):
                values[key] = env[f"COSTDASH_{key.upper()}"]
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
        if values.get("public_url"):
            values["public_url"] = public_url(values["public_url"])
        if "heavy_timeout_seconds" in values and not (float(values["heavy_timeout_seconds"]) > 0):
            raise ValueError("heavy_timeout_seconds must be a positive number of seconds, not "
                             f"{values['heavy_timeout_seconds']!r}")
        for key in ("upload_retention_days", "maintenance_seconds"):
            if key in values and not (float(values[key]) >= 0):
                raise ValueError(f"{key} must be a number of at least 0, not {values[key]!r}")
        for key in ("max_jobs_per_dataset", "max_jobs_per_dataset_per_hour", "max_heavy_jobs",
                    "max_heavy_jobs_per_process", "max_heavy_jobs_per_client"):
            if key in values and int(values[key]) < 1:
                raise ValueError(f"{key} must be at least 1, not {values[key]!r}")
        if isinstance(values.get("secure_cookies"), str):
            text = values["secure_cookies"].strip().lower()
            if text not in ("1", "true", "yes", "on", "0", "false", "no", "off"):
                raise ValueError("COSTDASH_SECURE_COOKIES must be true or false, not "
                                 f"{values['secure_cookies']!r}")
            values["secure_cookies"] = text in ("1", "true", "yes", "on")
        if isinstance(values.get("upload_keys"), str):
            values["upload_keys"] = tuple(k.strip() for k in values["upload_keys"].split(",")
                                          if k.strip())
        return replace(cls(), **values)

    def cookies_secure(self) -> bool:
        """Whether the session cookie is marked ``Secure``: as set, else when the public
        address is ``https://`` (behind TLS a browser must never send it in clear)."""
        if self.secure_cookies is not None:
            return self.secure_cookies
        return bool(self.public_url and self.public_url.startswith("https://"))

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


# --- no secrets in logs --------------------------------------------------------------------------

_SECRET_PATH = re.compile(r"(/(?:s|manage)/|/api/v1/(?:analyses|datasets)/)([^\s/?#\"']+)")
# data=: a handle on every page's address; code= and state=: the OpenID Connect login's
# authorisation code and state on /auth/callback (dashboard/accounts.py).
_DATA_PARAMETER = re.compile(r"([?&;](?:data|code|state)=)([^\s&;#\"']+)")
_CAPABILITY = re.compile(r"(?<![A-Za-z0-9_-])[A-Za-z0-9_-]{32}(?![A-Za-z0-9_-])")
_BEARER = re.compile(r"(?i)(bearer\s+)[A-Za-z0-9._~+/=-]+")
_ANALYSIS_ID = re.compile(r"[0-9a-f]{16}")
_ESCAPE = re.compile(r"%([0-9A-Fa-f]{2})")
_PLAIN = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-._~/=")
REDACTED = "<redacted>"


def _unescaped(m: re.Match[str]) -> str:
    # Only characters that are never an escape's point (no control characters, spaces or
    # quotes reach a log line this way): enough that /%73/<token> or data%3D<id> is seen.
    char = chr(int(m.group(1), 16))
    return char if char in _PLAIN else m.group(0)


def redact_tokens(text: str) -> str:
    """``text`` with every capability taken out (``<redacted>``):

    * whatever follows ``/s/``, ``/manage/``, ``/api/v1/analyses/`` (share and manage tokens;
      an analysis id, 16 hex digits, is no secret and is kept) and ``/api/v1/datasets/`` (an
      upload's or a read link's data set handle), ``//`` paths included;
    * the value of a ``data=`` query parameter (a handle, on every page's address), and of
      ``code=`` and ``state=`` (the login's authorisation code, on ``/auth/callback``);
    * anything shaped like a token or a handle (32 URL-safe characters standing alone), wherever
      it is: a mistyped path, a message quoting a handle;
    * bearer tokens.

    Percent-escapes of letters, digits and ``-._~/=`` are read as those characters first, so
    an escaped path (``/%73/<token>``, which the app answers as ``/s/<token>``) is no way
    round it.
    """
    def path(m: re.Match[str]) -> str:
        keep = m.group(1).startswith("/api/v1/analyses/") and _ANALYSIS_ID.fullmatch(m.group(2))
        return m.group(1) + (m.group(2) if keep else REDACTED)

    text = _ESCAPE.sub(_unescaped, text)
    text = _SECRET_PATH.sub(path, text)
    text = _DATA_PARAMETER.sub(lambda m: m.group(1) + REDACTED, text)
    text = _CAPABILITY.sub(REDACTED, text)
    return _BEARER.sub(lambda m: m.group(1) + REDACTED, text)


class RedactTokens(logging.Filter):
    """A logging filter that takes every capability out of every record it sees
    (:func:`redact_tokens`): gunicorn's access and error lines (``"POST /manage/<token>"``,
    ``"GET /explore?data=<handle>"``), Werkzeug's request lines, Flask's "Exception on
    /s/<token>", a traceback's message quoting a handle.

    gunicorn.conf.py puts it on the handlers of every logger; :func:`redact_werkzeug_log` on
    the development server's logger. Kept here, beside the settings, because this module is
    light: gunicorn's master process imports it to configure logging.
    """

    def filter(self, record: logging.LogRecord) -> bool:
        try:
            message = record.getMessage()
        except Exception:  # noqa: BLE001 - a malformed record is logging's business, not ours
            return True
        clean = redact_tokens(message)
        if clean != message:
            record.msg, record.args = clean, ()
        if record.exc_info and not record.exc_text:
            # The traceback's last line repeats the exception's message (a handle in "no data
            # set with id ..."): format it here, redacted, and the handler uses that text.
            record.exc_text = redact_tokens(logging.Formatter().formatException(record.exc_info))
        elif record.exc_text:
            record.exc_text = redact_tokens(record.exc_text)
        return True


def redact_werkzeug_log() -> None:
    """Put :class:`RedactTokens` on Werkzeug's logger (the development server's request
    lines), once per process."""
    logger = logging.getLogger("werkzeug")
    if not any(isinstance(f, RedactTokens) for f in logger.filters):
        logger.addFilter(RedactTokens())
