""""My analyses" (``/account``): a logged-in person's analyses, uploads, API tokens and trail.

Served beside Dash as small HTML pages with plain forms, like the manage pages
(:mod:`dashboard.api.manage`), and only on an instance with accounts (:mod:`dashboard.accounts`):

* each analysis with its read link, how often it was opened and when last, its expiry and
  whether its link is for the organisation only (a toggle); its own page,
  ``/account/analyses/<id>``, is the manage page (:func:`dashboard.api.manage.manage_page`: rename,
  expiry, new link, revoke, delete), reached through the login instead of the manage link;
* each upload still kept, to open on Explore or delete;
* personal API tokens: make one (shown once), see when each was last used, revoke;
* the trail: every change to the person's things, who made it and when.

Every form posts back (``POST``) and is refused unless the browser says it comes from this
site (:func:`dashboard.accounts.same_origin`).
"""

from __future__ import annotations

import html
import json
import time
from typing import Any

from flask import Blueprint, current_app, redirect, request

from costdash.errors import CostdashError
from dashboard.storage.accounts import Person
from dashboard.accounts import (accounts, create_token_for, current_person, login_url,
                                owned_analyses, revoke_token_for, same_origin)
from dashboard.api.manage import manage_page
from dashboard.responses import link_root, not_found_page, page
from dashboard.sharing import AnalysisNotFound
from dashboard.storage import valid_id

__all__ = ["my_analyses_pages"]

my_analyses_pages = Blueprint("costdash_my_analyses", __name__)

_STYLE = """<style>
main{max-width:60rem}
h2{font-size:1.1rem;margin:1.6rem 0 .5rem}
ul.items{list-style:none;padding:0;margin:0}
li.item{border:1px solid #d9e2ec;border-radius:6px;padding:.7rem .9rem;margin:.6rem 0}
li.item p{margin:.25rem 0}
.item-head{display:flex;flex-wrap:wrap;gap:.5rem;align-items:baseline}
.item-head a{font-weight:600;font-size:1.05rem}
.badge{font-size:.8rem;padding:.05rem .45rem;border-radius:999px;background:#e8f0fe;color:#1a4d8f}
.badge.open{background:#eef2f5;color:#52606d}
.actions{display:flex;flex-wrap:wrap;gap:.5rem;align-items:center;margin-top:.4rem}
.actions form,form.inline{display:inline;margin:0;padding:0;border:0}
.actions button,form.inline button{margin:0}
button,a.button{font:inherit;font-size:.9rem;line-height:1.3}
button.secondary{background:#fff;color:#334e68}
a.button{display:inline-block;padding:.4rem .9rem;border-radius:4px;border:1px solid #334e68;
color:#334e68;text-decoration:none}
table.trail{border-collapse:collapse;width:100%;font-size:.9rem}
table.trail th,table.trail td{text-align:left;padding:.3rem .4rem;border-bottom:1px solid #e4e7eb;
vertical-align:top}
.who{display:flex;flex-wrap:wrap;gap:.6rem;align-items:center}
@media (max-width:600px){main{margin:0;border-radius:0;padding:1rem}
table.trail th:nth-child(2),table.trail td:nth-child(2){display:none}}
</style>"""

_DONE = {"deleted": "Analysis deleted: its link answers 404.",
         "organisation": "Saved: the link is for people of the organisation (logged in).",
         "anyone": "Saved: anyone with the link may open it.",
         "revoked-token": "Token revoked: it no longer works.",
         "deleted-upload": "Upload deleted."}


def _when(t: float | None) -> str:
    """A time for people to read (UTC, to the minute); the API gives ISO 8601."""
    return "" if t is None else time.strftime("%Y-%m-%d %H:%M", time.gmtime(t))


def _opened(opens: int, last: float | None) -> str:
    if not opens:
        return "Not opened yet"
    times = "once" if opens == 1 else f"{opens:,} times"
    return f"Opened {times}; last {_when(last)} UTC"


def _analyses_part(person: Person) -> str:
    e = html.escape
    root = link_root() or ""
    items = []
    for record, organisation in owned_analyses(person):
        link = ("<span class=note>No read link (revoked)</span>" if record.revoked else
                f"<code class=share-link>{e(root)}/s/{e(record.share_token)}</code>")
        expiry = _when(record.expires_at)
        expires = (f"expires {e(expiry)} UTC" if expiry else "does not expire") + (
            " <b class=err>(expired)</b>" if record.expired() else "")
        badge = ("<span class=badge>Organisation only</span>" if organisation else
                 "<span class='badge open'>Anyone with the link</span>")
        toggle = ("Let anyone with the link open it" if organisation
                  else "Organisation only")
        items.append(
            f"<li class=item id='analysis-{e(record.id)}'><div class=item-head>"
            f"<a href='/account/analyses/{e(record.id)}'>{e(record.name)}</a>{badge}</div>"
            f"<p>{link}</p>"
            f"<p class=note><span class=opens>{e(_opened(record.opens, record.last_opened_at))}"
            f"</span> · created {e(_when(record.created_at))} · {expires}</p>"
            "<div class=actions>"
            f"<a class=button href='/account/analyses/{e(record.id)}'>Rename, expiry, new link, "
            "delete</a>"
            "<form method=post><input type=hidden name=action value=organisation>"
            f"<input type=hidden name=analysis value='{e(record.id)}'>"
            f"<input type=hidden name=value value='{'0' if organisation else '1'}'>"
            f"<button type=submit class=secondary>{toggle}</button></form></div></li>")
    if not items:
        return ("<p class=note id=no-analyses>No analyses yet: open a data set on "
                "<a href='/explore'>Explore</a> and use Share.</p>")
    return f"<ul class=items id=analyses>{''.join(items)}</ul>"


def _uploads_part(person: Person) -> str:
    e = html.escape
    found = accounts()
    store = current_app.extensions["costdash"].store
    items, gone = [], []
    for row in found.store.uploads(person.subject):
        info = store.info(row["handle"])
        if info is None:
            gone.append(row["handle"])
            continue
        items.append(
            f"<li class=item><div class=item-head><b>{e(info.name)}</b>"
            f"<span class=note>{info.n:,} rows · {len(info.classifiers)} classifiers · "
            f"uploaded {e(_when(row['created_at']))}</span></div><div class=actions>"
            f"<a class=button href='/explore?data={e(info.id)}'>Open on Explore</a>"
            "<form method=post><input type=hidden name=action value=delete-upload>"
            f"<input type=hidden name=handle value='{e(info.id)}'>"
            "<button type=submit class=danger>Delete</button></form></div></li>")
    found.store.forget_uploads(gone)
    if not items:
        return "<p class=note>No uploads kept.</p>"
    return f"<ul class=items id=uploads>{''.join(items)}</ul>"


def _tokens_part(person: Person, new_token: str | None) -> str:
    e = html.escape
    rows = []
    for t in accounts().store.tokens(person.subject):
        state = (f"revoked {e(_when(t.revoked_at))}" if not t.live else
                 f"last used {e(_when(t.last_used_at))}" if t.last_used_at else "never used")
        revoke = ("" if not t.live else
                  "<form method=post><input type=hidden name=action value=revoke-token>"
                  f"<input type=hidden name=token value='{e(t.id)}'>"
                  "<button type=submit class=danger>Revoke</button></form>")
        rows.append(f"<li class=item id='token-{e(t.id)}'><div class=item-head><b>{e(t.name)}"
                    f"</b><span class=note>made {e(_when(t.created_at))} · {state}</span>"
                    f"</div>{'<div class=actions>' + revoke + '</div>' if revoke else ''}</li>")
    shown = ("" if new_token is None else
             "<p class=ok role=status>Your new token (copy it now: it is shown once):<br>"
             f"<code id=new-token>{e(new_token)}</code></p>")
    return "".join([
        "<p class=note>For the API (<code>Authorization: Bearer &lt;token&gt;</code>) and "
        "<code>costdash push</code> (<code>COSTDASH_TOKEN=&lt;token&gt;</code>): uploads and "
        "shares made with it are yours.</p>",
        shown,
        "<form method=post class=inline><input type=hidden name=action value=create-token>"
        "<label for=token-name>Token name</label>"
        "<input type=text id=token-name name=name maxlength=200 placeholder='e.g. CI pipeline'> "
        "<button type=submit id=create-token>Make a token</button></form>",
        f"<ul class=items id=tokens>{''.join(rows)}</ul>" if rows else "",
    ])


def _trail_part(person: Person) -> str:
    e = html.escape
    rows = []
    for entry in accounts().store.trail(person.subject, limit=100):
        try:
            detail = json.loads(entry.detail) if entry.detail else {}
        except ValueError:
            detail = {}
        extra = ""
        if entry.action == "rename":
            extra = f" → {detail.get('to', '')}"
        elif entry.action == "expiry":
            extra = f" → {detail.get('expires_at') or 'never'}"
        rows.append(f"<tr><td>{e(_when(entry.at))}</td><td>{e(entry.actor)}</td>"
                    f"<td>{e(entry.action)}</td><td>{e(entry.target + extra)}</td></tr>")
    if not rows:
        return "<p class=note>Nothing changed yet.</p>"
    return ("<table class=trail id=audit><thead><tr><th>When (UTC)</th><th>Who</th>"
            "<th>What</th><th>On</th></tr></thead><tbody>" + "".join(rows) + "</tbody></table>")


def _account_page(person: Person, message: str = "", error: str = "",
                  new_token: str | None = None, status: int = 200):
    e = html.escape
    body = "".join([
        _STYLE,
        "<div class=who><h1 style='margin:0'>My analyses</h1>"
        f"<span class=note id=person>{e(person.label)}</span>"
        "<form method=post action='/auth/logout' class=inline>"
        "<button type=submit id=logout class=secondary>Log out</button></form></div>",
        f"<p class=ok role=status>{e(message)}</p>" if message else "",
        f"<p class=err role=alert>{e(error)}</p>" if error else "",
        "<h2>Analyses</h2><p class=note>A read link opens for anyone who has it, without an "
        "account; “Organisation only” makes it ask for the organisation's login first.</p>",
        _analyses_part(person),
        "<h2>Uploads</h2>", _uploads_part(person),
        "<h2>API tokens</h2>", _tokens_part(person, new_token),
        "<h2>Activity</h2><p class=note>Every change to your analyses, uploads and tokens: who "
        "made it (you, or whoever holds an analysis's manage link) and when.</p>",
        _trail_part(person),
    ])
    return page("My analyses", body, status)


def _refused() -> Any:
    return page("Refused", "<h1>Refused</h1><p>This form was sent from another site. Use the "
                "page on this site.</p>", 403)


@my_analyses_pages.route("/account", methods=["GET", "POST"])
def account():
    person = current_person()
    if person is None:
        return redirect(login_url("/account"))
    if request.method in ("GET", "HEAD"):
        return _account_page(person, _DONE.get(request.args.get("done", ""), ""))
    if not same_origin():
        return _refused()
    action = request.form.get("action")
    services = current_app.extensions["costdash"]
    try:
        if action == "create-token":
            _record, token = create_token_for(person, request.form.get("name"))
            return _account_page(person, "Token made.", new_token=token, status=201)
        if action == "revoke-token":
            if not revoke_token_for(person, request.form.get("token", "")):
                return _account_page(person, error="You have no such live token.", status=404)
            return redirect("/account?done=revoked-token", code=303)
        if action == "organisation":
            record, _ = services.sharing.owned(person, request.form.get("analysis", ""))
            value = request.form.get("value") == "1"
            services.sharing.set_require_login(record, value)
            return redirect(f"/account?done={'organisation' if value else 'anyone'}", code=303)
        if action == "delete-upload":
            handle = request.form.get("handle", "")
            found = accounts()
            if not valid_id(handle) or found.store.upload_owner(handle) != person.subject:
                return _account_page(person, error="You have no such upload.", status=404)
            info = services.store.info(handle)
            services.store.discard_dataset(handle)
            services.views.forget(handle)
            found.store.forget_uploads([handle])
            found.store.audit(person.subject, person.label, "delete upload",
                              info.name if info else handle[:6] + "…")
            return redirect("/account?done=deleted-upload", code=303)
    except AnalysisNotFound as exc:
        return _account_page(person, error=str(exc), status=404)
    except CostdashError as exc:
        return _account_page(person, error=str(exc), status=400)
    return _account_page(person, error="Unknown action.", status=400)


@my_analyses_pages.route("/account/analyses/<analysis_id>", methods=["GET", "POST"])
def analysis(analysis_id: str):
    """One of the person's analyses: the manage page, reached through the login."""
    person = current_person()
    if person is None:
        return redirect(login_url(f"/account/analyses/{analysis_id}"))
    if request.method == "POST" and not same_origin():
        return _refused()
    try:
        record, _ = current_app.extensions["costdash"].sharing.owned(person, analysis_id)
    except AnalysisNotFound:
        return not_found_page()
    return manage_page(
        record, f"/account/analyses/{record.id}",
        note="Yours: you reach this page by logging in (the manage link shown when you shared "
             "it works too). <a href='/account' id=back-to-account>Back to My analyses</a>",
        after_delete=lambda: redirect("/account?done=deleted", code=303))
