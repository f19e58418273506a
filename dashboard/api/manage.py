"""The pages of shared links: ``/manage/<token>`` and the 404 guard of ``/s/<token>``.

* ``/s/<token>``: the read-only view is a Dash page (the shell routes it, see
  :mod:`dashboard.shell`); :func:`_guard_shared_links` answers **404 with a friendly page**
  before Dash when the token leads nowhere (deleted, expired, mistyped), so a dead link is a
  real 404.
* ``/manage/<token>``: rename, set or clear the expiry, replace or revoke the read-only link,
  delete; how many times the link was opened and when last. Plain HTML forms posting back to
  the same address (the token in the path is the credential; pages are ``no-store``).

The rules (tokens, expiry, what deleting removes) are :mod:`dashboard.sharing`'s; the page
frame and the headers every response gets are :mod:`dashboard.responses`'.
"""

from __future__ import annotations

import html
from collections.abc import Callable

from flask import Blueprint, Flask, Response, current_app, redirect, request

from costdash.errors import CostdashError
from dashboard.responses import link_root, not_found_page, page
from dashboard.sharing import AnalysisNotFound, ShareService, iso
from dashboard.shell import SHARED_PAGES
from dashboard.storage import AnalysisRecord, StorageUnavailable

__all__ = ["MANAGE_NOTE", "install_manage", "manage_page", "manage_pages"]

manage_pages = Blueprint("costdash_manage", __name__)
"""``/manage/<token>`` and the guard of ``/s/<token>``; its route functions find the app's
sharing rules with :func:`_sharing`."""


def _sharing() -> ShareService:
    return current_app.extensions["costdash"].sharing


def _opened(record: AnalysisRecord) -> str:
    if not record.opens:
        return "Not opened yet."
    times = "once" if record.opens == 1 else f"{record.opens:,} times"
    return f"Opened {times}; last {iso(record.last_opened_at)}."


def _link_part(record: AnalysisRecord, share_url: str | None) -> str:
    e = html.escape
    if share_url is None:
        return ("<p id=share-url-revoked><b>No read-only link:</b> you revoked it. Make a new "
                "one below to share the analysis again.</p>")
    return ("<p>Read-only link (send this one):<br>"
            f"<code id=share-url>{e(share_url)}</code></p>")


MANAGE_NOTE = ("This page&#39;s own address is the manage link: keep it to yourself. Whoever "
               "has it can rename or delete the analysis.")


def _manage_body(record: AnalysisRecord, share_url: str | None, message: str = "",
                 error: str = "", note: str = MANAGE_NOTE) -> str:
    e = html.escape
    expiry = iso(record.expires_at)
    return "".join([
        f"<h1>Manage “{e(record.name)}”</h1>",
        f"<p class=ok role=status>{e(message)}</p>" if message else "",
        f"<p class=err role=alert>{e(error)}</p>" if error else "",
        _link_part(record, share_url),
        f"<p id=link-opens>{e(_opened(record))} (A count and a time: nothing about who "
        "opened it is kept.)</p>",
        f"<p class=note>{note}</p>",  # HTML: MANAGE_NOTE, or My analyses' own
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
        "<form method=post><input type=hidden name=action value=rotate>"
        "<p>A new read-only link: the current one stops working at once (send the new one to "
        "those who should keep access).</p>"
        f"<button type=submit id=rotate-button>{'New link' if share_url else 'Make a link'}"
        "</button></form>",
        "" if share_url is None else
        "<form method=post><input type=hidden name=action value=revoke>"
        "<p>Revoke the read-only link: it stops working; the analysis stays, and you can make "
        "a new link later.</p><button type=submit class=danger id=revoke-button>Revoke link"
        "</button></form>",
        "<form method=post onsubmit=\"return confirm('Delete this analysis and its data?')\">"
        "<input type=hidden name=action value=delete>"
        "<p>Deleting removes the saved view and the uploaded data (unless another analysis "
        "uses the same file); the read-only link then answers 404.</p>"
        "<button type=submit class=danger id=delete-button>Delete</button></form>",
    ])


@manage_pages.before_app_request
def _guard_shared_links():
    if request.method in ("GET", "HEAD") and request.path.startswith("/s/"):
        # /s/<token> or one of its sub-pages (/s/<token>/curves ...): the token is the first
        # segment; a sub-page the link does not have is as dead as a wrong token.
        token, _, sub = request.path[3:].rstrip("/").partition("/")
        if sub not in SHARED_PAGES:
            return not_found_page()
        try:
            record = _sharing().open(token)
        except AnalysisNotFound:
            return not_found_page()
        if request.method == "GET":  # HEAD is a check, not an opening
            _sharing().record_open(record)
    return None


def _share_url(record: AnalysisRecord) -> str | None:
    return None if record.revoked else f"{link_root() or ''}/s/{record.share_token}"


@manage_pages.route("/manage/<token>", methods=["GET", "POST"])
def manage(token: str):
    try:
        record = _sharing().managed(token)
    except AnalysisNotFound:
        return not_found_page()
    return manage_page(record, f"/manage/{token}")


def manage_page(record: AnalysisRecord, here: str, *, note: str = MANAGE_NOTE,
                after_delete: Callable[[], Response] | None = None) -> Response:
    """The manage page of ``record`` served at ``here``: the page (GET), or the change its
    form posts (POST: rename, expiry, new link, revoke, delete), then back to ``here``.
    The manage link's page, and a logged-in owner's page of one analysis
    (:mod:`dashboard.my_analyses`, which gives its own ``note`` and ``after_delete``)."""
    sharing = _sharing()
    if request.method in ("GET", "HEAD"):
        done = {"renamed": "Renamed.", "expiry": "Expiry saved.",
                "relinked": "New read-only link made: the old one no longer works.",
                "revoked": "Read-only link revoked."}.get(request.args.get("done", ""), "")
        return page(f"Manage {record.name}",
                    _manage_body(record, _share_url(record), done, note=note))
    action = request.form.get("action")
    try:
        if action == "rename":
            sharing.rename(record, request.form.get("name", ""))
            return redirect(f"{here}?done=renamed", code=303)
        if action == "expiry":
            sharing.set_expiry(record, request.form.get("expires_in_days"))
            return redirect(f"{here}?done=expiry", code=303)
        if action == "rotate":
            sharing.replace_link(record)
            return redirect(f"{here}?done=relinked", code=303)
        if action == "revoke":
            sharing.revoke_link(record)
            return redirect(f"{here}?done=revoked", code=303)
        if action == "delete":
            sharing.delete(record)
            if after_delete is not None:
                return after_delete()
            return page("Deleted", "<h1>Deleted</h1><p>The analysis and its data are gone; "
                        "its read-only link now answers 404.</p>"
                        "<p><a href='/explore'>Back to costdash</a></p>")
    except AnalysisNotFound:
        return not_found_page()
    except StorageUnavailable:
        raise
    except CostdashError as exc:
        return page(f"Manage {record.name}",
                    _manage_body(record, _share_url(record), error=str(exc), note=note), 400)
    return page(f"Manage {record.name}",
                _manage_body(record, _share_url(record), error="Unknown action.", note=note),
                400)


def install_manage(server: Flask) -> None:
    """Serve the manage pages and guard the read-only links on ``server``."""
    server.register_blueprint(manage_pages)
