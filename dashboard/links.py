"""The server-rendered pages around shared links, and the headers every response carries.

* ``/s/<token>``: the read-only view is a Dash page (the shell routes it, see
  :mod:`dashboard.pages.shared`); this module answers **404 with a friendly page** before Dash
  when the token leads nowhere (deleted, expired, mistyped), so a dead link is a real 404.
* ``/manage/<token>``: rename, set or clear the expiry, delete. Plain HTML forms posting back to
  the same address (the token in the path is the credential; pages are ``no-store``).
* Security headers on every response; the database being down gives a 503 page (or JSON under
  ``/api/``) instead of a traceback.
"""

from __future__ import annotations

import html
import logging
from dash.exceptions import DependencyException
from flask import Flask, Response, jsonify, redirect, request
from werkzeug.exceptions import MethodNotAllowed

from costdash.errors import CostdashError
from dashboard.services import Services
from dashboard.sharing import AnalysisNotFound, iso
from dashboard.storage import AnalysisRecord, StorageFull, StorageUnavailable

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


def _manage_body(record: AnalysisRecord, share_url: str, message: str = "",
                 error: str = "") -> str:
    e = html.escape
    expiry = iso(record.expires_at)
    return "".join([
        f"<h1>Manage “{e(record.name)}”</h1>",
        f"<p class=ok role=status>{e(message)}</p>" if message else "",
        f"<p class=err role=alert>{e(error)}</p>" if error else "",
        "<p>Read-only link (send this one):<br>",
        f"<code id=share-url>{e(share_url)}</code></p>",
        "<p class=note>This page's own address is the manage link: keep it to yourself. "
        "Whoever has it can rename or delete the analysis.</p>",
        f"<p>Created {e(iso(record.created_at) or '')}; "
        + (f"expires {e(expiry)}." if expiry else "does not expire.")
        + (" <b class=err>Expired: the read-only link answers 404 until you renew it.</b>"
           if record.expired() else "") + "</p>",
        "<form method=post><input type=hidden name=action value=rename>"
        "<label for=name>Name</label>"
        f"<input type=text id=name name=name maxlength=200 value=\"{e(record.name)}\">"
        " <button type=submit id=rename-button>Rename</button></form>",
        "<form method=post><input type=hidden name=action value=expiry>"
        "<label for=expires_in_days>Expire in days (empty: never)</label>"
        "<input type=number id=expires_in_days name=expires_in_days min=0.01 step=any>"
        " <button type=submit id=expiry-button>Set expiry</button></form>",
        "<form method=post onsubmit=\"return confirm('Delete this analysis and its data?')\">"
        "<input type=hidden name=action value=delete>"
        "<p>Deleting removes the saved view and the uploaded data (unless another analysis "
        "uses the same file); the read-only link then answers 404.</p>"
        "<button type=submit class=danger id=delete-button>Delete</button></form>",
    ])


def _api_rule_exists(server: Flask, path: str) -> bool:
    """Whether some method of an ``/api/`` route answers ``path`` (Dash's catch-all excluded)."""
    adapter = server.url_map.bind("localhost")
    for method in ("GET", "POST", "PATCH", "DELETE", "PUT"):
        try:
            rule, _ = adapter.match(path, method=method, return_rule=True)
        except Exception:  # noqa: BLE001 - NotFound, MethodNotAllowed, RequestRedirect
            continue
        if rule.rule.startswith("/api/"):
            return True
    return False


def install_links(server: Flask, services: Services) -> None:
    """Register the manage page, the 404 guard of read-only links and the response policies."""
    sharing = services.sharing

    @server.before_request
    def _guard_shared_links():
        path = request.path
        if request.method in ("GET", "HEAD") and path.startswith("/s/"):
            token = path[3:].rstrip("/")
            try:
                sharing.open(token)
            except AnalysisNotFound:
                return not_found_page()
        if path.startswith("/api/") and (request.url_rule is None
                                         or not request.url_rule.rule.startswith("/api/")):
            # Dash's catch-all route would answer unknown API paths with its HTML page.
            if isinstance(request.routing_exception, MethodNotAllowed) and _api_rule_exists(
                    server, path):
                return jsonify({"error": f"{request.method} is not allowed on {path}"}), 405
            return jsonify({"error": f"no API endpoint {request.method} {path}; see "
                                     "/api/v1/openapi.json"}), 404
        return None

    def _share_url(record: AnalysisRecord) -> str:
        return f"{request.url_root.rstrip('/')}/s/{record.share_token}"

    @server.route("/manage/<token>", methods=["GET", "POST"])
    def manage(token: str):
        try:
            record = sharing.managed(token)
        except AnalysisNotFound:
            return not_found_page()
        if request.method in ("GET", "HEAD"):
            done = {"renamed": "Renamed.", "expiry": "Expiry saved."}.get(
                request.args.get("done", ""), "")
            return page(f"Manage {record.name}", _manage_body(record, _share_url(record), done))
        action = request.form.get("action")
        try:
            if action == "rename":
                sharing.rename(record, request.form.get("name", ""))
                return redirect(f"/manage/{token}?done=renamed", code=303)
            if action == "expiry":
                sharing.set_expiry(record, request.form.get("expires_in_days"))
                return redirect(f"/manage/{token}?done=expiry", code=303)
            if action == "delete":
                sharing.delete(record)
                return page("Deleted", "<h1>Deleted</h1><p>The analysis and its data are gone; "
                            "its read-only link now answers 404.</p>"
                            "<p><a href='/explore'>Back to costdash</a></p>")
        except AnalysisNotFound:
            return not_found_page()
        except StorageUnavailable:
            raise
        except CostdashError as exc:
            return page(f"Manage {record.name}",
                        _manage_body(record, _share_url(record), error=str(exc)), 400)
        return page(f"Manage {record.name}",
                    _manage_body(record, _share_url(record), error="Unknown action."), 400)

    @server.errorhandler(StorageUnavailable)
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

    @server.errorhandler(DependencyException)
    def _no_such_script(exc: DependencyException):
        # Dash answers a component-suite path it did not register -- a path traversal
        # attempt (/_dash-component-suites/dash/..%2f..%2fapp.py) or a mistyped name -- by
        # raising; that is a 404, not a 500 with a traceback in the log.
        log.info("no such script: %s", request.path[:200])
        return Response("Not found\n", status=404, mimetype="text/plain")

    @server.after_request
    def _security_headers(response: Response) -> Response:
        for name, value in SECURITY_HEADERS.items():
            response.headers.setdefault(name, value)
        if request.path.startswith(("/s/", "/manage/")):
            response.headers["Cache-Control"] = "no-store"
        return response

