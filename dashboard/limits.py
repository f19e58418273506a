"""Per-client rate limits and optional upload keys: what one client may create is bounded.

Uploads (``POST /api/v1/datasets``, ``POST /api/v1/analyses``, the Multiclass page's label
files), shares (the Share button, which saves an analysis) and expensive computations
(:mod:`dashboard.jobs.gate`) are counted per client address in a moving window (flask-limiter). The
counters live in the SQL store (:class:`dashboard.storage.sharedstate.SqlLimiterStorage`), so all web
processes and hosts sharing the database count together, and no cache pressure can evict them:
they used to live in the result cache's Redis, where bootstrap bands filling ``maxmemory``
evicted every counter (issue 22, finding 6). With the database unreachable they count in
process memory meanwhile. Beyond the limit a client gets 429 with ``Retry-After``. Behind a
reverse proxy the client address is the proxy's, unless ``COSTDASH_TRUSTED_PROXIES`` says
how many proxies set ``X-Forwarded-For`` (ProxyFix).

With ``COSTDASH_UPLOAD_KEYS`` set (a public instance), uploads and shares need one of the keys:
``Authorization: Bearer <key>`` on the API, or the key entered once on the Explore page. The
browser's session cookie then keeps the key's id (an HMAC of it under the secret key), never
the key: Flask's session is signed, not encrypted, so whoever sees the cookie could read a key
kept in it; an id grants nothing elsewhere, and dies with the key when the operator removes
it from the list. Read links never need a key.
"""

from __future__ import annotations

import hashlib
import hmac
import math
import time
from dataclasses import dataclass
from typing import Any

from flask import Flask, current_app, jsonify, request, session
from flask_limiter import Limiter, RequestLimit
from limits import RateLimitItem, parse_many
from werkzeug.middleware.proxy_fix import ProxyFix

from dashboard.config import Settings
from dashboard.storage.demos import is_demo_handle
from dashboard.jobs.gate import install_gate
from dashboard.storage.sharedstate import SqlLimiterStorage

__all__ = ["ClientLimits", "install_limits", "client_limits"]

_EXTENSION = "costdash-limits"
_UPLOAD_ENDPOINTS = ("costdash_api.create_dataset", "costdash_api.create_analysis")
_SESSION_KEY = "costdash-upload-key-id"
_STORAGE = SqlLimiterStorage.STORAGE_SCHEME[0]
"""``costdash-sql``: the limiter's storage, registered with ``limits`` by its class."""


def key_id(key: str, secret: str) -> str:
    """The id of an upload key kept in a session: HMAC-SHA256 under the app's secret key."""
    return hmac.new(secret.encode(), key.encode(), hashlib.sha256).hexdigest()


def _client_address() -> str:
    return request.remote_addr or "unknown"


@dataclass
class ClientLimits:
    """The app's limiter and the rules it enforces (``server.extensions["costdash-limits"]``)."""

    limiter: Limiter
    uploads: list[RateLimitItem]
    shares: list[RateLimitItem]
    heavy: list[RateLimitItem]
    upload_keys: tuple[str, ...]
    key_prefix: str = ""
    """The deployment's prefix of the limiter's counters (flask-limiter puts it on the upload
    counters; the share counters, hit here, need it too)."""
    secret: str = ""

    def share_refusal(self) -> str | None:
        """Count one share for this request's client; the message to show when it is over
        its limit (None: go ahead)."""
        return self._hit(self.shares, "shares", "analyses saved")

    def upload_refusal(self) -> str | None:
        """Count one upload that does not go through the upload routes (a Multiclass label
        file, a production batch) against the client's upload limit; the message when it is
        over (None: go ahead). With accounts, nobody logged in may upload at all."""
        if current_app.extensions.get("costdash-accounts") is not None \
                and not self.key_accepted():
            return "Log in to upload: this instance logs people in through the organisation."
        return self._hit(self.uploads, "uploads", "uploads")

    def heavy_refusal(self, client: str) -> tuple[str, int] | None:
        """Count one expensive computation for ``client``; the message and the seconds to
        wait when it is over ``COSTDASH_RATE_LIMIT_HEAVY`` (None: go ahead)."""
        return self._hit_with_wait(self.heavy, "heavy", "computations", client)

    def _hit(self, items: list[RateLimitItem], scope: str, what: str) -> str | None:
        found = self._hit_with_wait(items, scope, what, _client_address())
        return None if found is None else found[0]

    def _hit_with_wait(self, items: list[RateLimitItem], scope: str, what: str,
                       client: str) -> tuple[str, int] | None:
        keys = (self.key_prefix, scope, client)
        for item in items:
            if not self.limiter.limiter.hit(item, *keys):
                reset, _ = self.limiter.limiter.get_window_stats(item, *keys)
                wait = max(1, math.ceil(reset - time.time()))
                return (f"Too many {what} from your address: at most {item}. Try again in "
                        f"{_duration(wait)}.", wait)
        return None

    def remember_key(self, given: str | None) -> bool:
        """Keep the id of a key entered in the browser in its session cookie, if it is one of
        the keys; whether it was."""
        given = (given or "").strip()
        if not any(hmac.compare_digest(given.encode(), k.encode()) for k in self.upload_keys):
            return False
        session[_SESSION_KEY] = key_id(given, self.secret)
        session.permanent = True
        return True

    def key_accepted(self) -> bool:
        """Whether this request carries an upload key (header) or a key's id (session), when
        keys are set. With accounts (:mod:`dashboard.accounts`) a person takes the keys'
        place: someone logged in, or the bearer of a personal token."""
        if current_app.extensions.get("costdash-accounts") is not None:
            from dashboard.accounts import current_person

            return current_person() is not None
        if not self.upload_keys:
            return True
        scheme, _, given = (request.headers.get("Authorization") or "").partition(" ")
        if scheme.lower() == "bearer" and given.strip() and any(
                hmac.compare_digest(given.strip().encode(), k.encode())
                for k in self.upload_keys):
            return True
        kept = session.get(_SESSION_KEY)
        return isinstance(kept, str) and any(
            hmac.compare_digest(kept.encode(), key_id(k, self.secret).encode())
            for k in self.upload_keys)


def _duration(seconds: int) -> str:
    if seconds < 120:
        return f"{seconds} s"
    return f"{math.ceil(seconds / 60)} min"


def client_limits() -> ClientLimits:
    """The limits of the app serving this request."""
    return current_app.extensions[_EXTENSION]


def _too_many(limit: RequestLimit) -> Any:
    wait = max(1, math.ceil(limit.reset_at - time.time()))
    reply = jsonify({"error": f"Too many uploads from your address: at most {limit.limit}. "
                              f"Try again in {_duration(wait)}."})
    reply.status_code = 429
    reply.headers["Retry-After"] = str(wait)
    return reply


def install_limits(server: Flask, settings: Settings) -> ClientLimits:
    """Count uploads, shares and expensive work per client on ``server`` (counters in the
    SQL store of ``server.extensions["costdash"]``); require upload keys when set; install
    the compute gate (:func:`dashboard.jobs.gate.install_gate`) and keep the shared demos from
    being deleted."""
    if settings.trusted_proxies:
        server.wsgi_app = ProxyFix(server.wsgi_app, x_for=settings.trusted_proxies)
    services = server.extensions["costdash"]
    secret = settings.resolved_secret_key()
    # Per deployment (its roles share the secret key): two deployments on one database, a
    # staging copy beside production, count apart.
    prefix = "costdash-limits-" + hashlib.sha256(secret.encode()).hexdigest()[:12]
    limiter = Limiter(
        _client_address, app=server, strategy="moving-window",
        storage_uri=f"{_STORAGE}://", storage_options={"store": services.store},
        # The database down must not stop uploads: count in memory meanwhile.
        swallow_errors=True, in_memory_fallback_enabled=True,
        headers_enabled=True, retry_after="delta-seconds", on_breach=_too_many,
        key_prefix=prefix)
    for endpoint in _UPLOAD_ENDPOINTS:
        view = server.view_functions[endpoint]
        server.view_functions[endpoint] = limiter.shared_limit(
            settings.rate_limit_uploads, scope="uploads",
            # A request refused for want of a key is not an upload.
            exempt_when=lambda: not client_limits().key_accepted())(view)
    limits = ClientLimits(limiter, uploads=list(parse_many(settings.rate_limit_uploads)),
                          shares=list(parse_many(settings.rate_limit_shares)),
                          heavy=list(parse_many(settings.rate_limit_heavy)),
                          upload_keys=settings.upload_keys, key_prefix=prefix, secret=secret)
    server.extensions[_EXTENSION] = limits
    install_gate(server, services)

    @server.before_request
    def _demos_stay() -> Any:
        # A demo is one data set every visitor shares (dashboard.storage.demos): its handle is no
        # one's to delete.
        if request.method == "DELETE" and request.path.startswith("/api/v1/datasets/"):
            handle = request.path.removeprefix("/api/v1/datasets/")
            if is_demo_handle(services.store, handle):
                return jsonify({"error": "This is a demo data set that every visitor shares; "
                                         "it cannot be deleted."}), 403
        return None

    @server.before_request
    def _require_upload_key() -> Any:
        if request.endpoint in _UPLOAD_ENDPOINTS and not limits.key_accepted():
            return jsonify({"error": "This instance needs an upload key to accept files: "
                                     "send 'Authorization: Bearer <key>' (ask its operator "
                                     "for one). Read links need none."}), 401

    return limits
