"""Accounts, optional (issue 27): logging in through the organisation's OpenID Connect provider.

With ``COSTDASH_OIDC_ISSUER``, ``COSTDASH_OIDC_CLIENT_ID`` and ``COSTDASH_OIDC_CLIENT_SECRET``
set (:func:`accounts_enabled`), :func:`install_accounts` makes uploading and sharing a matter of
being someone:

* the dashboard's pages send an anonymous visitor to the provider (``/auth/login``, Authlib's
  Flask client: the provider's metadata from ``<issuer>/.well-known/openid-configuration``,
  ``authorize_redirect``, ``authorize_access_token``; Authlib keeps the state and the nonce in
  the session and checks the ID token) and back; who logged in is kept in Flask's signed
  session under the app's secret key (the provider's ``sub``, name and e-mail; no token);
* an anonymous ``POST /api/v1/datasets`` or ``/api/v1/analyses`` answers 401; the API takes a
  personal token (``Authorization: Bearer cdt_...``, made on "My analyses" or through
  ``POST /api/v1/account/tokens``) in place of the shared upload key;
* what a person uploads or shares is theirs: "My analyses" (:mod:`dashboard.my_analyses`)
  lists it, with the manage page's operations (:func:`dashboard.api.manage.manage_page`, the rules
  of :class:`~dashboard.sharing.ShareService`), and every change is recorded (who, what, when:
  :class:`AccountShareService` writes the trail, whichever door the change came through);
* read links stay capabilities anyone may open, unless their owner ticks "organisation only":
  the link then sends an anonymous viewer to log in first (every way in: its pages, their
  callbacks, its JSON, through :meth:`AccountShareService.open`).

State-changing routes of the session (``/auth/logout``, the forms of "My analyses", the
account API without a bearer token) are POST (or DELETE/PATCH) and refuse a request whose
``Origin`` (else ``Sec-Fetch-Site``) is not this site: no other site can make a logged-in
browser change anything (the session cookie is also ``SameSite=Lax``).

Without the three settings nothing here runs: the app is exactly what it was.
"""

from __future__ import annotations

import logging
import re
from collections.abc import Mapping
from typing import Any

from flask import (Blueprint, Flask, current_app, g, has_request_context, jsonify, redirect,
                   request, session, url_for)

from costdash.errors import CostdashError
from dashboard.storage.accounts import TOKEN_PREFIX, AccountStore, Person
from dashboard.config import Settings
from dashboard.pages import page_for
from dashboard.responses import page
from dashboard.sharing import (AnalysisNotFound, NotAuthorized, ShareService, analysis_summary,
                               clean_name, iso)
from dashboard.storage import AnalysisRecord, SqlStore, Store

__all__ = ["AccountShareService", "Accounts", "LoginRequired", "accounts", "accounts_enabled",
           "current_person", "install_accounts", "same_origin", "sharing_service"]

log = logging.getLogger(__name__)

_EXTENSION = "costdash-accounts"
_SESSION_PERSON = "costdash-person"
_SESSION_NEXT = "costdash-next"
_UPLOAD_ENDPOINTS = ("costdash_api.create_dataset", "costdash_api.create_analysis")
_OPEN_PREFIXES = ("/s/", "/manage/", "/api/", "/_dash", "/_reload-hash", "/_favicon", "/assets/",
                  "/auth/", "/healthz", "/favicon.ico")
"""Paths an anonymous visitor reaches without logging in: read links and manage links (each a
capability of its own), the API (it answers 401 itself where it must), Dash's own routes and
assets (a read link's page needs them), the login routes and the health probe."""


def accounts_enabled(settings: Settings) -> bool:
    """Whether the instance logs people in: the issuer, client id and secret all set."""
    return bool(settings.oidc_issuer and settings.oidc_client_id and settings.oidc_client_secret)


class LoginRequired(AnalysisNotFound):
    """A read link its owner keeps to the organisation, opened by nobody logged in: it answers
    as a link that leads nowhere (its pages send the viewer to log in first)."""


class Accounts:
    """One app's accounts: the tables and the provider's client
    (``server.extensions["costdash-accounts"]``)."""

    def __init__(self, store: AccountStore, client: Any):
        self.store = store
        self.client = client


def accounts() -> Accounts | None:
    """The accounts of the app serving this request; None when it has none."""
    return current_app.extensions.get(_EXTENSION)


def current_person() -> Person | None:
    """Who makes this request: the bearer of a live personal token, else the person logged in
    in this browser's session; None for nobody (or an app without accounts)."""
    if not has_request_context():
        return None
    found = accounts()
    if found is None:
        return None
    if "costdash_person" in g:
        return g.costdash_person
    person = None
    scheme, _, token = (request.headers.get("Authorization") or "").strip().partition(" ")
    token = token.strip()
    if scheme.lower() == "bearer" and token.startswith(TOKEN_PREFIX):
        person = found.store.token_owner(token)
    else:
        kept = session.get(_SESSION_PERSON)
        if isinstance(kept, Mapping) and isinstance(kept.get("sub"), str) and kept["sub"]:
            person = Person(kept["sub"], str(kept.get("name") or ""),
                            str(kept.get("email") or ""))
    g.costdash_person = person
    return person


def _bearer_person() -> bool:
    """Whether this request's person came with a personal token (not the session)."""
    scheme, _, token = (request.headers.get("Authorization") or "").strip().partition(" ")
    return scheme.lower() == "bearer" and token.strip().startswith(TOKEN_PREFIX)


def same_origin() -> bool:
    """Whether a browser says this request comes from a page of this site: its ``Origin`` is
    this site's, or, when it sends none or ``null`` (it sends ``null`` for a form posted from a
    page with ``Referrer-Policy: no-referrer``, which every page here has), its
    ``Sec-Fetch-Site`` is ``same-origin`` (a header no page can set). A request that says
    neither is refused."""
    origin = request.headers.get("Origin")
    if origin is not None and origin != "null":
        return origin.rstrip("/") == request.host_url.rstrip("/")
    return request.headers.get("Sec-Fetch-Site") == "same-origin"


_LOCAL_PATH = re.compile(r"/(?![/\\])[A-Za-z0-9._~!$&'()*+,;=:@%/?-]*")
"""A path of this site: no scheme, no host, no ``//`` or ``/\\`` start, and none of the
characters (spaces, tabs, newlines, backslashes) a browser drops or reads as ``/`` on the way
to another site."""


def _safe_next(value: str | None) -> str:
    """Where to go after logging in: a path of this site, never another site's address."""
    if not value or len(value) > 2000 or not _LOCAL_PATH.fullmatch(value):
        return "/account"
    return value


def login_url(next_path: str | None = None) -> str:
    from urllib.parse import quote

    return "/auth/login?next=" + quote(_safe_next(next_path), safe="/")


# --- the rules of sharing, with owners and a trail ---------------------------------------------

class AccountShareService(ShareService):
    """:class:`~dashboard.sharing.ShareService` of an instance with accounts.

    * an analysis saved by someone logged in is theirs (:meth:`create`);
    * a read link its owner keeps to the organisation opens for people logged in only
      (:meth:`open`: :class:`LoginRequired` otherwise; outside a request -- a background
      job started by a request that was checked -- it opens);
    * the owner's personal token manages the owner's analyses through the API, as their manage
      token does (:meth:`authorize`);
    * every change to an owned analysis -- from "My analyses", its manage link or the API --
      is written to its owner's trail, naming who made it.
    """

    def __init__(self, store: Store, forget_dataset: Any = None, *,
                 accounts_store: AccountStore):
        super().__init__(store, forget_dataset)
        self.accounts = accounts_store

    def create(self, dataset_id: str, **kwargs: Any):
        new = super().create(dataset_id, **kwargs)
        person = current_person()
        if person is not None:
            self.accounts.own_analysis(person.subject, new.record.id)
            self.accounts.audit(person.subject, person.label, "share", new.record.name,
                                {"analysis": new.record.id})
        return new

    def open(self, share_token: str, now: float | None = None) -> AnalysisRecord:
        record = super().open(share_token, now)
        if has_request_context():
            owner = self.accounts.analysis_owner(record.id)
            if owner is not None and owner[1] and current_person() is None:
                raise LoginRequired("This link is for people of the organisation: log in "
                                    "to open it.")
        return record

    def authorize(self, analysis_id: str, authorization: str | None) -> AnalysisRecord:
        try:
            return super().authorize(analysis_id, authorization)
        except NotAuthorized:
            person = current_person() if _bearer_person() else None
            owner = self.accounts.analysis_owner(analysis_id)
            if person is None or owner is None or owner[0] != person.subject:
                raise
            record = self.store.find_analysis(id=analysis_id)
            if record is None:
                raise AnalysisNotFound(f"no analysis with id '{analysis_id}'") from None
            return record

    def owned(self, person: Person, analysis_id: str) -> tuple[AnalysisRecord, bool]:
        """``person``'s analysis ``analysis_id`` and its "organisation only" option;
        :class:`AnalysisNotFound` when it is not theirs (or not there)."""
        owner = self.accounts.analysis_owner(analysis_id)
        record = (self.store.find_analysis(id=analysis_id)
                  if owner is not None and owner[0] == person.subject else None)
        if record is None:
            raise AnalysisNotFound(f"you have no analysis with id '{analysis_id}'")
        return record, owner[1]

    def _audit(self, record: AnalysisRecord, action: str, detail: Mapping[str, Any]) -> None:
        owner = self.accounts.analysis_owner(record.id)
        if owner is None:
            return
        person = current_person()
        actor = person.label if person is not None else "manage link"
        self.accounts.audit(owner[0], actor, action, record.name,
                            {"analysis": record.id, **detail})

    def rename(self, record: AnalysisRecord, name: Any) -> AnalysisRecord:
        new = super().rename(record, name)
        self._audit(new, "rename", {"from": record.name, "to": new.name})
        return new

    def set_expiry(self, record: AnalysisRecord, expires_in_days: Any,
                   now: float | None = None) -> AnalysisRecord:
        new = super().set_expiry(record, expires_in_days, now)
        self._audit(new, "expiry", {"expires_at": iso(new.expires_at)})
        return new

    def replace_link(self, record: AnalysisRecord) -> AnalysisRecord:
        new = super().replace_link(record)
        self._audit(new, "new link", {})
        return new

    def revoke_link(self, record: AnalysisRecord) -> AnalysisRecord:
        new = super().revoke_link(record)
        self._audit(new, "revoke link", {})
        return new

    def delete(self, record: AnalysisRecord) -> None:
        super().delete(record)
        self._audit(record, "delete", {})
        self.accounts.forget_analyses([record.id])

    def set_require_login(self, record: AnalysisRecord, value: bool) -> None:
        """The per-link option: the read link opens for people logged in only (or anyone)."""
        self.accounts.set_require_login(record.id, value)
        self._audit(record, "organisation only" if value else "anyone with the link", {})


def sharing_service(settings: Settings, store: Store, forget_dataset: Any) -> ShareService:
    """The rules of sharing for these settings: :class:`AccountShareService` with accounts,
    else the plain :class:`~dashboard.sharing.ShareService`."""
    if accounts_enabled(settings) and isinstance(store, SqlStore):
        return AccountShareService(store, forget_dataset, accounts_store=AccountStore(store))
    return ShareService(store, forget_dataset)


# --- routes --------------------------------------------------------------------------------------

auth_pages = Blueprint("costdash_accounts", __name__)
"""``/auth/login``, ``/auth/callback``, ``/auth/logout`` and the account API."""


def _error(message: str, status: int):
    return jsonify({"error": message}), status


@auth_pages.get("/auth/login")
def login():
    session[_SESSION_NEXT] = _safe_next(request.args.get("next"))
    try:
        return accounts().client.authorize_redirect(url_for("costdash_accounts.callback",
                                                            _external=True))
    except OSError as exc:  # the provider's metadata could not be fetched (requests' errors)
        log.warning("OpenID Connect provider unreachable: %s", type(exc).__name__)
        return page("Login unavailable", "<h1>The organisation's login is not reachable</h1>"
                    "<p>Try again in a minute; if it lasts, tell the operator.</p>", 503)


@auth_pages.get("/auth/callback")
def callback():
    found = accounts()
    try:
        token = found.client.authorize_access_token()
    except Exception as exc:  # noqa: BLE001 - whatever failed (a refusal, a state that does
        # not match, an ID token that does not verify, the provider unreachable), nobody is
        # logged in; the log says what (never the code or the state: see redact_tokens).
        log.info("login refused: %s: %s", type(exc).__name__, getattr(exc, "error", ""))
        return page("Login failed", "<h1>Login failed</h1><p>The organisation's login did not "
                    "complete (it was refused, or it took too long). "
                    "<a href='/auth/login'>Try again</a>.</p>", 400)
    claims = token.get("userinfo") or {}
    if not claims.get("sub"):
        return page("Login failed", "<h1>Login failed</h1><p>The provider named nobody.</p>",
                    400)
    person = Person(str(claims["sub"])[:255], str(claims.get("name") or "")[:200],
                    str(claims.get("email") or "")[:200])
    found.store.logged_in(person)
    session[_SESSION_PERSON] = {"sub": person.subject, "name": person.name,
                                "email": person.email}
    return redirect(_safe_next(session.pop(_SESSION_NEXT, None)))


@auth_pages.post("/auth/logout")
def logout():
    if not same_origin():
        return page("Not logged out", "<h1>Refused</h1><p>Log out from this site's own "
                    "page.</p>", 403)
    session.pop(_SESSION_PERSON, None)
    return page("Logged out", "<h1>Logged out</h1><p>You are logged out of costdash (not of "
                "your organisation's login). <a href='/auth/login'>Log in again</a>.</p>")


def _person_or_401() -> tuple[Person | None, Any]:
    person = current_person()
    if person is None:
        return None, _error("log in first, or send 'Authorization: Bearer <personal token>' "
                            "(made on My analyses)", 401)
    if request.method not in ("GET", "HEAD") and not _bearer_person() and not same_origin():
        return None, _error("this request comes from another site: refused", 403)
    return person, None


def _token_json(token: Any) -> dict[str, Any]:
    return {"id": token.id, "name": token.name, "created_at": iso(token.created_at),
            "last_used_at": iso(token.last_used_at), "revoked_at": iso(token.revoked_at)}


def create_token_for(person: Person, name: Any) -> tuple[Any, str]:
    """A new personal token (recorded in the trail); ParameterError for a bad name."""
    found = accounts()
    clean = clean_name(name if name not in (None, "") else "API token")
    try:
        record, token = found.store.create_token(person, clean)
    except ValueError as exc:
        raise CostdashError(str(exc)) from None
    found.store.audit(person.subject, person.label, "token created", clean, {"token": record.id})
    return record, token


def revoke_token_for(person: Person, token_id: str) -> bool:
    found = accounts()
    tokens = {t.id: t for t in found.store.tokens(person.subject)}
    if not found.store.revoke_token(person.subject, token_id):
        return False
    found.store.audit(person.subject, person.label, "token revoked", tokens[token_id].name,
                      {"token": token_id})
    return True


@auth_pages.get("/api/v1/account")
def whoami():
    person, refused = _person_or_401()
    if refused:
        return refused
    return jsonify({"subject": person.subject, "name": person.name, "email": person.email})


@auth_pages.get("/api/v1/account/tokens")
def list_tokens():
    person, refused = _person_or_401()
    if refused:
        return refused
    return jsonify({"tokens": [_token_json(t) for t in accounts().store.tokens(person.subject)]})


@auth_pages.post("/api/v1/account/tokens")
def create_token():
    person, refused = _person_or_401()
    if refused:
        return refused
    body = request.get_json(silent=True)
    name = body.get("name") if isinstance(body, dict) else request.form.get("name")
    try:
        record, token = create_token_for(person, name)
    except CostdashError as exc:
        return _error(str(exc), 400)
    return jsonify({**_token_json(record), "token": token}), 201


@auth_pages.delete("/api/v1/account/tokens/<token_id>")
def revoke_token(token_id: str):
    person, refused = _person_or_401()
    if refused:
        return refused
    if not revoke_token_for(person, token_id):
        return _error(f"you have no live token with id '{token_id}'", 404)
    return "", 204


def owned_analyses(person: Person) -> list[tuple[AnalysisRecord, bool]]:
    """``person``'s analyses that still exist (newest first) and their "organisation only"
    option; rows of analyses deleted elsewhere (a manage link, the expiry purge) go."""
    found = accounts()
    sharing = current_app.extensions["costdash"].sharing
    out, gone = [], []
    for analysis_id, require_login in found.store.analysis_ids(person.subject):
        record = sharing.store.find_analysis(id=analysis_id)
        if record is None:
            gone.append(analysis_id)
        else:
            out.append((record, require_login))
    found.store.forget_analyses(gone)
    return out


@auth_pages.get("/api/v1/account/analyses")
def list_analyses():
    person, refused = _person_or_401()
    if refused:
        return refused
    return jsonify({"analyses": [
        {**analysis_summary(record, managed=True), "organisation_only": require_login,
         "revoked": record.revoked}
        for record, require_login in owned_analyses(person)]})


@auth_pages.patch("/api/v1/account/analyses/<analysis_id>")
def update_owned_analysis(analysis_id: str):
    """``{"organisation_only": true}``: the read link opens for people logged in only."""
    person, refused = _person_or_401()
    if refused:
        return refused
    body = request.get_json(silent=True)
    if not isinstance(body, dict) or set(body) != {"organisation_only"} \
            or not isinstance(body["organisation_only"], bool):
        return _error('send {"organisation_only": true} or {"organisation_only": false}', 400)
    sharing = current_app.extensions["costdash"].sharing
    try:
        record, _ = sharing.owned(person, analysis_id)
    except AnalysisNotFound as exc:
        return _error(str(exc), 404)
    sharing.set_require_login(record, body["organisation_only"])
    return jsonify({"id": record.id, "organisation_only": body["organisation_only"]})


@auth_pages.get("/api/v1/account/audit")
def audit_trail():
    person, refused = _person_or_401()
    if refused:
        return refused
    return jsonify({"entries": [
        {"at": iso(e.at), "actor": e.actor, "action": e.action, "target": e.target,
         "detail": e.detail} for e in accounts().store.trail(person.subject)]})


# --- the gates --------------------------------------------------------------------------------

def _gate() -> Any:
    """Before everything else: uploads need a person; a page needs a person (a read link only
    when its owner keeps it to the organisation)."""
    endpoint = request.endpoint
    if endpoint in _UPLOAD_ENDPOINTS:
        if current_person() is None:
            return _error("Log in to upload (this instance logs people in through the "
                          "organisation), or send 'Authorization: Bearer <personal token>' "
                          "made on My analyses.", 401)
        return None
    if request.method not in ("GET", "HEAD"):
        return None
    path = request.path
    if path.startswith("/s/"):
        token = path[3:].partition("/")[0]
        sharing = current_app.extensions["costdash"].sharing
        try:
            sharing.open(token)
        except LoginRequired:
            return redirect(login_url(path))
        except AnalysisNotFound:
            return None  # the link guard answers its 404
        return None
    if path.startswith(_OPEN_PREFIXES) or current_person() is not None:
        return None
    if path == "/" or page_for(path) is not None or path == "/account" \
            or path.startswith("/account/"):
        query = request.query_string.decode("utf-8", "replace")
        return redirect(login_url(path + (f"?{query}" if query else "")))
    return None


def _note_upload(response: Any) -> Any:
    """After an upload by someone: the upload handle is theirs, and the trail says so; after
    an owned upload's deletion through the API (its handle is the right to it): the trail
    says who."""
    if request.endpoint == "costdash_api.delete_dataset" and response.status_code == 204:
        handle = (request.view_args or {}).get("dataset_id", "")
        found = accounts()
        owner = found.store.upload_owner(handle)
        if owner is not None:
            person = current_person()
            found.store.forget_uploads([handle])
            found.store.audit(owner, person.label if person else "upload handle",
                              "delete upload", handle[:6] + "…")
        return response
    if request.endpoint != "costdash_api.create_dataset" or response.status_code != 200:
        return response
    person = current_person()
    body = response.get_json(silent=True) or {}
    if person is not None and isinstance(body.get("id"), str):
        found = accounts()
        found.store.own_upload(person.subject, body["id"], str(body.get("name") or ""))
        found.store.audit(person.subject, person.label, "upload", str(body.get("name") or ""),
                          {"rows": body.get("n")})
    return response


def install_accounts(app: Any, services: Any, pages: tuple[Blueprint, ...] = ()
                     ) -> Accounts | None:
    """Log people in on ``app`` when the settings name a provider (:func:`accounts_enabled`),
    and serve ``pages`` (:data:`dashboard.my_analyses.my_analyses_pages`); nothing otherwise.
    ``services.sharing`` must be :func:`sharing_service`'s."""
    settings: Settings = services.settings
    if not accounts_enabled(settings):
        return None
    from authlib.integrations.flask_client import OAuth

    server: Flask = app.server
    oauth = OAuth(server)
    issuer = settings.oidc_issuer.rstrip("/")
    client = oauth.register(
        "organisation", client_id=settings.oidc_client_id,
        client_secret=settings.oidc_client_secret,
        server_metadata_url=f"{issuer}/.well-known/openid-configuration",
        client_kwargs={"scope": "openid email profile"})
    found = Accounts(AccountStore(services.store), client)
    server.extensions[_EXTENSION] = found
    server.register_blueprint(auth_pages)
    for blueprint in pages:
        server.register_blueprint(blueprint)
    # First of all: a request refused here is neither counted (rate limits) nor seen opened.
    server.before_request_funcs.setdefault(None, []).insert(0, _gate)
    server.after_request(_note_upload)
    return found
