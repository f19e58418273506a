"""What every response outside Dash's own callbacks gets: the security headers, the small
server-rendered HTML pages (404 of a dead link, 503 while the database is down, 507 when the disk
is full), JSON errors under ``/api/`` (an unknown API path is a JSON 404, not Dash's page) and a
404 for a Dash script path nobody registered.

One blueprint, :data:`responses`, installs these app-wide policies
(:func:`install_responses`); :func:`link_root` is where every link the app hands out starts.
"""

from __future__ import annotations

import html
import ipaddress
import logging
from typing import Any

from dash.exceptions import DependencyException
from flask import Blueprint, Flask, Response, current_app, jsonify, request
from werkzeug.exceptions import MethodNotAllowed

from dashboard.storage import StorageFull, StorageUnavailable

__all__ = ["MAX_ADDRESS_BYTES", "SECURITY_HEADERS", "callback_request_problem", "disk_full_page",
           "install_callback_guard", "install_responses", "link_root", "not_found_page", "page",
           "responses", "unavailable_page"]

log = logging.getLogger(__name__)

SECURITY_HEADERS = {
    "X-Content-Type-Options": "nosniff",
    # Links carry secrets in their path: never send them on to other sites.
    "Referrer-Policy": "no-referrer",
    "Content-Security-Policy": "frame-ancestors 'none'",
    "X-Frame-Options": "DENY",
}

_STYLE = """
body{font:15px/1.5 system-ui,-apple-system,"Segoe UI",sans-serif;color:#1f2933;background:#f5f7fa;
margin:0}
header{background:#102a43;color:#fff;padding:.7rem 1.5rem;font-weight:600}
header a{color:#fff;text-decoration:none}
main{max-width:46rem;margin:2rem auto;background:#fff;border:1px solid #d9e2ec;border-radius:8px;
padding:1.5rem 2rem}
h1{font-size:1.4rem;margin-top:0}
label{display:block;margin:.8rem 0 .3rem;font-weight:600}
input[type=text],input[type=number]{padding:.35rem .5rem;border:1px solid #9fb3c8;border-radius:4px;
width:20rem;max-width:100%}
button{padding:.4rem .9rem;border-radius:4px;border:1px solid #334e68;background:#334e68;color:#fff;
cursor:pointer;margin-top:.4rem}
button.danger{background:#ab091e;border-color:#ab091e}
code{background:#f0f4f8;padding:.1rem .3rem;border-radius:3px;word-break:break-all}
.note{color:#52606d}.ok{color:#0e7c3a}.err{color:#ab091e}
form{margin:1rem 0;padding-top:.6rem;border-top:1px solid #e4e7eb}
"""


def _loopback(host: str) -> bool:
    """Whether a ``Host`` header (``name[:port]``, ``[v6]:port``) names this machine."""
    if host.startswith("["):
        name = host[1:].split("]", 1)[0]
    else:
        name = host.rsplit(":", 1)[0] if host.count(":") == 1 else host
    if name.lower() == "localhost":
        return True
    try:
        return ipaddress.ip_address(name).is_loopback
    except ValueError:
        return False


def link_root() -> str | None:
    """Where the links this request hands out start: ``scheme://host`` of the service, or
    None when the request's address cannot be trusted (links are then relative, ``/s/...``).

    With ``COSTDASH_PUBLIC_URL`` set, every request is seen at that address
    (:class:`dashboard.factory.PublicAddress`), so links are built on it. Without it, the
    request's ``Host`` header is whatever the client sent: a link built on it could point
    anywhere, and one cached or shown to somebody else would send them there. So only a
    loopback host (``localhost``, ``127.0.0.1``, ``[::1]``: the embedded default and tests,
    which nobody else can be sent to) gives absolute links; any other gives relative ones,
    which the client resolves against the address it actually used.
    """
    if current_app.extensions["costdash"].settings.public_url or _loopback(request.host):
        return request.url_root.rstrip("/")
    return None


def page(title: str, body: str, status: int = 200) -> Response:
    """A small self-contained HTML page (``body`` must be escaped already)."""
    text = (f"<!doctype html><html lang=en><head><meta charset=utf-8>"
            f"<meta name=viewport content='width=device-width,initial-scale=1'>"
            f"<meta name=robots content=noindex><title>{html.escape(title)} · costdash</title>"
            f"<style>{_STYLE}</style></head><body><header><a href='/explore'>costdash</a>"
            f"</header><main>{body}</main></body></html>")
    response = Response(text, status=status, mimetype="text/html")
    response.headers["Cache-Control"] = "no-store"
    return response


def not_found_page() -> Response:
    return page("Link not found", (
        "<h1>This link leads nowhere</h1><p>The analysis it pointed to was deleted, its link "
        "expired, or the address was mistyped. Ask whoever sent it for a new link.</p>"
        "<p><a href='/explore'>Open costdash</a> to analyse your own predictions.</p>"), 404)


def unavailable_page() -> Response:
    return page("Database unavailable", (
        "<h1>The database is not reachable right now</h1><p>Nothing was lost: saved analyses "
        "and links will work again as soon as the database is back. Please try again in a "
        "minute.</p>"), 503)


def disk_full_page() -> Response:
    return page("Disk full", (
        "<h1>The server's disk is full</h1><p>Nothing was changed, and what was saved before "
        "is safe. The operator has to free space; please try again later.</p>"), 507)


_METHOD_ORDER = ("GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS")
MAX_ADDRESS_BYTES = 8000
"""Longest path and query the app answers (414 above it)."""


def _api_methods(path: str) -> set[str]:
    """The methods an ``/api/`` route answers at ``path`` (Dash's catch-all excluded)."""
    adapter = current_app.url_map.bind("localhost")
    methods: set[str] = set()
    for method in ("GET", "POST", "PATCH", "DELETE", "PUT"):
        try:
            rule, _ = adapter.match(path, method=method, return_rule=True)
        except Exception:  # noqa: BLE001 - NotFound, MethodNotAllowed, RequestRedirect
            continue
        if rule.rule.startswith("/api/"):
            methods.add(method)
    if "GET" in methods:
        methods.add("HEAD")
    return methods


responses = Blueprint("costdash_responses", __name__)
"""The app-wide response policies (no routes of its own)."""


@responses.before_app_request
def _address_too_long():
    # gunicorn refuses request lines over its limit_request_line (8190 in gunicorn.conf.py)
    # with a plain 414 of its own; below that the app answers, in the API's JSON.
    size = len(request.path.encode("utf-8", "surrogateescape")) + len(request.query_string)
    if size <= MAX_ADDRESS_BYTES:
        return None
    message = (f"The address is {size:,} bytes long, over the limit of {MAX_ADDRESS_BYTES:,}; "
               "fewer classifiers in models, or the API's POST, make it shorter.")
    if request.path.startswith(("/api/", "/_dash")) or request.path == "/healthz":
        return jsonify({"error": message}), 414
    return page("Address too long", f"<h1>This address is too long</h1><p>{html.escape(message)}"
                "</p>", 414)


@responses.before_app_request
def _unknown_api_path():
    path = request.path
    if path.startswith("/api/") and (request.url_rule is None
                                     or not request.url_rule.rule.startswith("/api/")):
        # Dash's catch-all route would answer unknown API paths with its HTML page.
        allowed = _api_methods(path) if isinstance(request.routing_exception,
                                                   MethodNotAllowed) else set()
        if allowed:
            reply = jsonify({"error": f"{request.method} is not allowed on {path}"})
            # RFC 9110: a 405 names the methods the resource has.
            reply.headers["Allow"] = ", ".join(m for m in _METHOD_ORDER if m in allowed)
            return reply, 405
        return jsonify({"error": f"no API endpoint {request.method} {path}; see "
                                 "/api/v1/openapi.json"}), 404
    return None


@responses.app_errorhandler(StorageUnavailable)
def _storage_down(exc: StorageUnavailable):
    if isinstance(exc, StorageFull):
        log.error("disk full: %s", exc)
        if request.path.startswith(("/api/", "/_dash")):
            return jsonify({"error": "The server's disk is full; nothing was stored. "
                                     "Try again later, or tell the operator."}), 507
        return disk_full_page()
    log.warning("storage unavailable: %s", exc)
    if request.path.startswith(("/api/", "/_dash")):
        return jsonify({"error": "The database is not reachable right now; nothing was "
                                 "changed. Try again in a minute."}), 503
    return unavailable_page()


@responses.app_errorhandler(DependencyException)
def _no_such_script(exc: DependencyException):
    # Dash answers a component-suite path it did not register -- a path traversal
    # attempt (/_dash-component-suites/dash/..%2f..%2fapp.py) or a mistyped name -- by
    # raising; that is a 404, not a 500 with a traceback in the log.
    log.info("no such script: %s", request.path[:200])
    return Response("Not found\n", status=404, mimetype="text/plain")


@responses.after_app_request
def _security_headers(response: Response) -> Response:
    for name, value in SECURITY_HEADERS.items():
        response.headers.setdefault(name, value)
    if request.path.startswith(("/s/", "/manage/")):
        response.headers["Cache-Control"] = "no-store"
    if request.path.startswith(_UNLISTED):
        # A link is meant for whom it was sent to: a search engine that finds one (a page
        # that links it, a browser that reports visited addresses) must not list it.
        response.headers["X-Robots-Tag"] = "noindex, nofollow"
    return response


_UNLISTED = ("/s/", "/manage/", "/api/")
"""Paths of shared links, manage links and the API (read links' JSON, reports, exports)."""


# --- Dash's callback route ----------------------------------------------------------------------

def _is_dependency(item: Any) -> bool:
    """A callback input, state or output as the renderer sends it: ``{"id", "property"}``, or
    a list of them (pattern-matching ids)."""
    if isinstance(item, list):
        return all(_is_dependency(i) for i in item)
    return isinstance(item, dict) and "id" in item and isinstance(item.get("property"), str)


def callback_request_problem(body: Any, callback_map: dict[str, Any]) -> str | None:
    """What is wrong with a ``/_dash-update-component`` body, or None when Dash can run it.

    Dash looks the output up and unpacks inputs and state without checking them: an unknown
    output or a malformed list is a ``KeyError`` or ``TypeError`` in its dispatch, answered
    500 with a traceback in the log. Those are the client's mistakes (or a probe), so they get
    a 400 naming the problem."""
    if not isinstance(body, dict):
        return "send the callback as a JSON object"
    output = body.get("output")
    if not isinstance(output, str) or output not in callback_map:
        return f"no callback has the output {str(output)[:200]!r}"
    spec = callback_map[output]
    for key in ("inputs", "state"):
        given = body.get(key, [])
        if not (isinstance(given, list) and all(_is_dependency(i) for i in given)):
            return f"{key} must be a list of {{id, property}} objects"
        if len(given) != len(spec.get(key) or []):
            return f"this callback takes {len(spec.get(key) or [])} {key}, not {len(given)}"
    outputs = body.get("outputs", [])
    if not (_is_dependency(outputs) or isinstance(outputs, dict) and _is_dependency([outputs])):
        return "outputs must be an {id, property} object or a list of them"
    changed = body.get("changedPropIds", [])
    if not (isinstance(changed, list) and all(isinstance(c, str) for c in changed)):
        return "changedPropIds must be a list of strings"
    return None


def install_callback_guard(app: Any) -> None:
    """Answer malformed requests to the Dash app's callback route with a clean 400 (see
    :func:`callback_request_problem`) before Dash's dispatch sees them."""
    route = app.config.routes_pathname_prefix + "_dash-update-component"

    @app.server.before_request
    def _check_callback_request():
        if request.method != "POST" or request.path != route:
            return None
        problem = callback_request_problem(request.get_json(silent=True), app.callback_map)
        if problem is None:
            return None
        log.info("callback request refused: %s", problem)
        return jsonify({"error": problem}), 400


def install_responses(server: Flask) -> None:
    """Apply the response policies to every request of ``server``."""
    server.register_blueprint(responses)
