"""Cache backends for flask-caching: no pickle anywhere, and Redis outages are misses.

Values are text or bytes only (JSON view models, ``.npz`` bands), written with
:class:`TextBytesSerializer` instead of cachelib's default pickle, so whoever can write to the
cache directory or to Redis cannot make a web process unpickle something of their choosing: an
entry that is not ours reads as a miss.

The shared cache only saves work: every value in it (view models, bootstrap bands) can be computed
again from the database. So when Redis is unreachable, :class:`ResilientRedisCache` answers as an
empty cache would (a miss on reads, nothing stored on writes) instead of raising, and the pages and
the API keep serving from the database, only slower. It logs a warning, at most once per
:data:`WARN_EVERY` seconds per process, with the number of failed operations since the last one.

After a connection failure it does not try Redis again for :data:`RETRY_AFTER` seconds: every
request makes several cache calls, and each would otherwise wait for its own connect timeout when
the Redis host is gone without refusing connections (a blackholed address). The short socket
timeouts in :data:`REDIS_OPTIONS` bound the wait of the first call.

Use it through flask-caching (``CACHE_TYPE="dashboard.storage.cachebackend.ResilientRedisCache"``, see
:func:`dashboard.services.cache_config`); the ``Cache`` object keeps its usual interface.
"""

from __future__ import annotations

import functools
import logging
import os
import threading
import time
from collections.abc import Callable
from typing import Any

from cachelib.serializers import BaseRedisSerializer
from flask_caching.backends.filesystemcache import FileSystemCache
from flask_caching.backends.rediscache import RedisCache
from redis.exceptions import ConnectionError as RedisConnectionError
from redis.exceptions import RedisError
from redis.exceptions import TimeoutError as RedisTimeoutError

__all__ = ["REDIS_OPTIONS", "RETRY_AFTER", "WARN_EVERY", "FileCache", "ResilientRedisCache",
           "TextBytesSerializer"]

log = logging.getLogger(__name__)
config_log = logging.getLogger(__name__ + ".config")
"""Advice about Redis's own settings (its memory bound), apart from the outage warnings."""

WARN_EVERY = 30.0
"""Seconds between two warnings about an unusable Redis (per cache object, i.e. per process)."""

RETRY_AFTER = 5.0
"""Seconds the cache acts as empty after a connection failure before it tries Redis again."""

REDIS_OPTIONS: dict[str, Any] = {
    "socket_connect_timeout": 1.0,
    "socket_timeout": 2.0,
    # A pooled connection that Redis (or a proxy) closed while idle is checked before use,
    # so one restart of Redis does not cost one failed request per pooled connection.
    "health_check_interval": 15,
}
"""``redis.Redis`` options of the cache's client: a dead Redis costs a request about a second."""

_DOWN_ERRORS = (RedisConnectionError, RedisTimeoutError, OSError)

_MISS: dict[str, Callable[..., Any]] = {
    "get": lambda *a, **k: None,
    "get_many": lambda *keys: [None] * len(keys),
    "get_dict": lambda *keys: dict.fromkeys(keys),
    "has": lambda *a, **k: False,
    "set": lambda *a, **k: False,
    "add": lambda *a, **k: False,
    "set_many": lambda *a, **k: [],
    "delete": lambda *a, **k: False,
    "delete_many": lambda *a, **k: [],
    "unlink": lambda *a, **k: 0,
    "clear": lambda *a, **k: False,
    "inc": lambda *a, **k: None,
    "dec": lambda *a, **k: None,
}
"""What each cache method answers while Redis is unusable: what an empty cache would."""


class TextBytesSerializer(BaseRedisSerializer):
    """Cache values as tagged text or bytes; anything else is refused when written, and an
    entry in any other form (a pickle) reads as a miss instead of being unpickled.

    Integers stay plain ASCII, as cachelib's Redis serializer writes them, for ``inc``/``dec``.
    """

    def dumps(self, value: Any, protocol: int | None = None) -> bytes:
        if type(value) is int:
            return str(value).encode("ascii")
        if isinstance(value, str):
            return b"s" + value.encode("utf-8")
        if isinstance(value, (bytes, bytearray, memoryview)):
            return b"b" + bytes(value)
        raise TypeError(f"the cache keeps text and bytes only (no pickle), not "
                        f"{type(value).__name__}")

    def loads(self, value: bytes | None) -> Any:
        if not value:
            return None
        tag, body = value[:1], value[1:]
        if tag == b"s":
            return body.decode("utf-8")
        if tag == b"b":
            return body
        if value.isdigit() or (tag == b"-" and body.isdigit()):
            return int(value)
        return None

    def dump(self, value: Any, f: Any, protocol: int | None = None) -> None:
        f.write(self.dumps(value))

    def load(self, f: Any) -> Any:
        return self.loads(f.read())


class FileCache(FileSystemCache):
    """flask-caching's FileSystemCache without pickle (see :class:`TextBytesSerializer`), and
    bounded in bytes as well as in entries.

    flask-caching bounds the number of files only (``CACHE_THRESHOLD``); with bootstrap bands
    of 17 MB each, 2,000 entries are 33 GB. When :attr:`max_bytes` is set (``create_app`` sets
    it from ``COSTDASH_CACHE_MAX_MB``), each write that takes the directory over it removes
    the entries written longest ago until the directory is at 80 % of it. Every value can be
    computed again, so an entry removed early costs time, never data.
    """

    serializer = TextBytesSerializer()
    max_bytes: int = 0
    """Bytes the cache's files may take (0: only the entry threshold bounds it)."""

    def set(self, key: str, value: Any, timeout: Any = None,  # type: ignore[override]
            mgmt_element: bool = False) -> bool:
        stored = super().set(key, value, timeout, mgmt_element)
        if stored and not mgmt_element and self.max_bytes:
            self.bound_bytes()
        return stored

    def bound_bytes(self) -> int:
        """Remove the oldest-written entries while the files take more than
        :attr:`max_bytes`, down to 80 % of it; returns the bytes the cache then takes."""
        entries, total = [], 0
        for name in self._list_dir():
            try:
                st = os.stat(name)
            except OSError:
                continue
            entries.append((st.st_mtime, st.st_size, name))
            total += st.st_size
        if total <= self.max_bytes:
            return total
        target = 0.8 * self.max_bytes
        for _mtime, size, name in sorted(entries):
            try:
                os.remove(name)
            except FileNotFoundError:
                continue
            except OSError:
                break
            self._update_count(delta=-1)
            total -= size
            if total <= target:
                break
        return total


class ResilientRedisCache(RedisCache):
    """flask-caching's ``RedisCache`` that treats Redis errors as misses (see the module).

    Parameters
    ----------
    *args, **kwargs
        Those of :class:`flask_caching.backends.RedisCache`.

    Attributes
    ----------
    failures : int
        Operations that failed since the last warning was logged.
    """

    serializer = TextBytesSerializer()

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.failures = 0
        self._down_until = 0.0
        self._warned_at: float | None = None
        self._lock = threading.Lock()

    def __repr__(self) -> str:
        return f"ResilientRedisCache({self._where()})"

    def _where(self) -> str:
        try:
            kwargs = self._write_client.connection_pool.connection_kwargs
            return f"redis://{kwargs.get('host')}:{kwargs.get('port')}/{kwargs.get('db', 0)}"
        except AttributeError:
            return "redis"

    def _failed(self, operation: str, exc: BaseException, down: bool) -> None:
        now = time.monotonic()
        with self._lock:
            self.failures += 1
            if down:
                self._down_until = now + RETRY_AFTER
            if self._warned_at is not None and now - self._warned_at < WARN_EVERY:
                return
            self._warned_at, count, self.failures = now, self.failures, 0
        log.warning("Redis cache at %s failed (%s on %s: %s); serving without the cache, from "
                    "the database (%d failed cache operation%s since the last warning; next "
                    "warning in %.0f s at the earliest)", self._where(), type(exc).__name__,
                    operation, exc, count, "" if count == 1 else "s", WARN_EVERY)

    def _is_down(self) -> bool:
        return time.monotonic() < self._down_until

    @property
    def available(self) -> bool:
        """False while the cache is skipping Redis after a connection failure."""
        return not self._is_down()

    def memory_policy(self) -> tuple[int, str] | None:
        """Redis's ``maxmemory`` and ``maxmemory-policy``; None when it does not say (down,
        or ``CONFIG`` disabled, as on some managed services)."""
        if self._is_down():
            return None
        try:
            got = self._write_client.config_get("maxmemory*")
            return int(got.get("maxmemory", 0)), str(got.get("maxmemory-policy", ""))
        except (RedisError, OSError, ValueError):
            return None

    def warn_if_unbounded(self) -> bool:
        """Log a warning when Redis may grow without bound or refuse writes when full
        (``maxmemory`` 0, or the ``noeviction`` policy); True when it did. docs/deployment.md
        has the settings: ``maxmemory`` and ``volatile-lru`` (``allkeys-lru`` on a Redis that
        holds the cache alone)."""
        policy = self.memory_policy()
        if policy is None:
            return False
        maxmemory, name = policy
        if maxmemory and name not in ("noeviction", ""):
            return False
        config_log.warning("Redis cache at %s has maxmemory %s and maxmemory-policy %s: the result "
                    "cache (bootstrap bands are ~17 MB each) can fill its memory. Set maxmemory "
                    "and maxmemory-policy volatile-lru (every cache entry has a TTL; queued jobs "
                    "have none), see docs/deployment.md.", self._where(),
                    maxmemory or "0 (no limit)", name or "?")
        return True


def _guarded(name: str) -> Callable[..., Any]:
    method = getattr(RedisCache, name)
    miss = _MISS[name]

    @functools.wraps(method)
    def guarded(self: ResilientRedisCache, *args: Any, **kwargs: Any) -> Any:
        if self._is_down():
            with self._lock:
                self.failures += 1
            return miss(*args, **kwargs)
        try:
            return method(self, *args, **kwargs)
        except _DOWN_ERRORS as exc:
            self._failed(name, exc, down=True)
        except RedisError as exc:  # e.g. OOM on a big set: Redis is up, this call failed
            self._failed(name, exc, down=False)
        return miss(*args, **kwargs)
    return guarded


for _name in _MISS:
    setattr(ResilientRedisCache, _name, _guarded(_name))
del _name
