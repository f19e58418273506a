"""Accounts, optional (issue 27): login through a real OpenID Connect provider started here
(``oidc-provider-mock``, a provider built on Authlib's server, in a thread), uploads and shares
owned by the person who made them, personal API tokens in place of the upload key, the audit
trail, "organisation only" read links, same-origin checks on the session's forms -- and nothing
of it without the settings. The store's part runs on SQLite and on PostgreSQL."""

from __future__ import annotations

import hashlib
import re
import warnings
from urllib.parse import parse_qs, quote, urlsplit

import pytest
import requests
import sqlalchemy as sa

from dashboard.storage.accounts import AccountStore, Person
from dashboard.factory import create_app
from dashboard.storage import SqlStore

with warnings.catch_warnings():
    warnings.simplefilter("ignore")  # the mock's own imports warn about Authlib's deprecations
    from oidc_provider_mock import run_server_in_thread

CLIENT = {"oidc_client_id": "costdash-test", "oidc_client_secret": "not-a-real-secret"}


@pytest.fixture(scope="module")
def provider():
    """The issuer URL of an OpenID Connect provider running for this module."""
    with run_server_in_thread() as server:
        yield f"http://localhost:{server.server_port}"


def accounts_app(tmp_path, issuer: str, **extra):
    return create_app({"data_dir": tmp_path / "data", "oidc_issuer": issuer,
                       "maintenance_seconds": 0, **CLIENT, **extra})


@pytest.fixture
def app(tmp_path, provider):
    return accounts_app(tmp_path, provider)


SITE = "http://localhost"
"""The Origin a page of the app under Flask's test client has."""


def login(client, sub: str, next_path: str = "/explore") -> str:
    """Log ``sub`` in through the provider (its authorisation form answered as a person would)
    and return where the app sent the browser afterwards."""
    start = client.get(f"/auth/login?next={next_path}")
    assert start.status_code == 302
    authorize = start.headers["Location"]
    query = parse_qs(urlsplit(authorize).query)
    assert query["state"][0] and query["nonce"][0]  # Authlib's, kept in the session
    answer = requests.post(authorize, data={"sub": sub}, allow_redirects=False, timeout=10)
    assert answer.status_code == 302
    back = urlsplit(answer.headers["Location"])
    assert back.path == "/auth/callback"
    done = client.get(f"{back.path}?{back.query}")
    assert done.status_code == 302, done.get_data(as_text=True)
    return done.headers["Location"]


def upload(client, csv, **headers):
    with open(csv, "rb") as f:
        return client.post("/api/v1/datasets", data={"file": (f, csv.name)}, headers=headers)


def share(client, csv, name="Churn", **headers):
    with open(csv, "rb") as f:
        return client.post("/api/v1/analyses", data={"file": (f, csv.name), "name": name,
                                                     "p_pos": "0.1"}, headers=headers)


def post_form(client, path, data, origin=SITE):
    headers = {} if origin is None else {"Origin": origin}
    return client.post(path, data=data, headers=headers)


# --- without the settings ------------------------------------------------------------------------

def test_without_the_settings_nothing_changes(tmp_path, predictions_csv):
    app = create_app({"data_dir": tmp_path / "data", "maintenance_seconds": 0,
                      "oidc_issuer": "http://localhost:9", "oidc_client_id": "x"})  # no secret
    server = app.server
    assert "costdash-accounts" not in server.extensions
    assert type(server.extensions["costdash"].sharing).__name__ == "ShareService"
    rules = {r.rule for r in server.url_map.iter_rules()}
    assert not any(r.startswith(("/auth/", "/account", "/api/v1/account")) for r in rules)
    client = server.test_client()
    assert client.get("/explore").status_code == 200
    assert upload(client, predictions_csv).status_code == 200
    assert share(client, predictions_csv).status_code == 201
    assert "account-link" not in client.get("/_dash-layout").get_data(as_text=True)


# --- logging in ---------------------------------------------------------------------------------

def test_anonymous_visitors_are_sent_to_the_provider_and_may_not_upload(app, provider,
                                                                       predictions_csv):
    client = app.server.test_client()
    page = client.get("/compare?p_pos=0.1")
    assert page.status_code == 302
    assert page.headers["Location"] == "/auth/login?next=/compare%3Fp_pos%3D0.1"
    start = client.get("/auth/login?next=/compare")
    assert start.headers["Location"].startswith(provider + "/oauth2/authorize?")
    refused = upload(client, predictions_csv)
    assert refused.status_code == 401 and "Log in" in refused.get_json()["error"]
    assert share(client, predictions_csv).status_code == 401
    assert client.get("/api/v1/account/tokens").status_code == 401
    # Dash's own routes and the health probe stay open (a read link's page needs them).
    assert client.get("/_dash-layout").status_code == 200
    assert client.get("/healthz").status_code == 200
    # The nav offers My analyses.
    assert "account-link" in client.get("/_dash-layout").get_data(as_text=True)


def test_login_returns_to_the_page_and_refuses_foreign_next(app):
    client = app.server.test_client()
    assert login(client, "alice@example.org", "/folds") == "/folds"
    assert client.get("/folds").status_code == 200
    assert client.get("/api/v1/account").get_json()["subject"] == "alice@example.org"
    # The session (signed, not encrypted) holds who logged in, nothing of the provider's
    # tokens, and nothing of the login's state once it is done.
    with client.session_transaction() as kept:
        assert dict(kept) == {"costdash-person": {"sub": "alice@example.org", "name": "",
                                                  "email": "alice@example.org"}}
    for foreign in ("//evil.example/x", "/\\evil.example", "/\t/evil.example",
                    "https://evil.example/", "/%0a/x y"):
        other = app.server.test_client()
        assert login(other, "bob@example.org", quote(foreign, safe="")) == "/account"


def test_an_unreachable_provider_is_a_503_page(tmp_path):
    from tests.support.services import free_port

    app = accounts_app(tmp_path, f"http://127.0.0.1:{free_port()}")
    client = app.server.test_client()
    assert client.get("/explore").status_code == 302
    reply = client.get("/auth/login")
    assert reply.status_code == 503 and "not reachable" in reply.get_data(as_text=True)


def test_the_logins_code_and_state_stay_out_of_logs():
    from dashboard.config import redact_tokens

    line = '"GET /auth/callback?code=1n5CeBXNK4BNbPd39udD5CRo1d4nluCxsGUNY8oGkf5S&state=9v2O HTTP/1.1"'
    assert redact_tokens(line) == \
        '"GET /auth/callback?code=<redacted>&state=<redacted> HTTP/1.1"'


def test_a_forged_callback_is_refused(app):
    client = app.server.test_client()
    client.get("/auth/login")
    forged = client.get("/auth/callback?code=whatever&state=not-the-state")
    assert forged.status_code == 400 and "Login failed" in forged.get_data(as_text=True)
    assert client.get("/explore").status_code == 302


def test_a_callback_is_good_once_and_only_in_the_browser_that_started_it(app):
    started = app.server.test_client()
    authorize = started.get("/auth/login").headers["Location"]
    back = requests.post(authorize, data={"sub": "mallory@example.org"}, allow_redirects=False,
                         timeout=10).headers["Location"]
    path = urlsplit(back).path + "?" + urlsplit(back).query
    # Another browser (a victim sent the link: login CSRF) has no such state: refused.
    victim = app.server.test_client()
    assert victim.get(path).status_code == 400
    assert victim.get("/explore").status_code == 302
    assert started.get(path).status_code == 302
    assert started.get(path).status_code == 400  # the state was used up


def test_logout_needs_a_same_origin_post(app):
    client = app.server.test_client()
    login(client, "alice@example.org")
    assert client.post("/auth/logout", headers={"Origin": "https://evil.example"}
                       ).status_code == 403
    assert client.get("/explore").status_code == 200
    client.get("/auth/logout")  # a GET (a link, an image another site embeds) is no logout
    assert client.get("/explore").status_code == 200
    assert client.post("/auth/logout", headers={"Origin": SITE}).status_code == 200
    assert client.get("/explore").status_code == 302


# --- what a person owns, tokens, trail -------------------------------------------------------

def test_uploads_and_shares_are_the_persons_and_listed(app, predictions_csv):
    alice = app.server.test_client()
    login(alice, "alice@example.org")
    uploaded = upload(alice, predictions_csv)
    assert uploaded.status_code == 200
    shared = share(alice, predictions_csv, name="Churn Q3")
    assert shared.status_code == 201
    mine = alice.get("/api/v1/account/analyses").get_json()["analyses"]
    assert [a["name"] for a in mine] == ["Churn Q3"]
    assert mine[0]["opens"] == 0 and mine[0]["organisation_only"] is False
    # The read link stays a capability: anyone opens it, and it counts.
    anyone = app.server.test_client()
    token = shared.get_json()["url"].rsplit("/", 1)[1]
    assert anyone.get(f"/s/{token}").status_code == 200
    assert alice.get("/api/v1/account/analyses").get_json()["analyses"][0]["opens"] == 1
    page = alice.get("/account").get_data(as_text=True)
    assert "Churn Q3" in page and "Opened once" in page and "predictions.csv" in page
    assert f"/explore?data={uploaded.get_json()['id']}" in page
    # Somebody else sees none of it.
    bob = app.server.test_client()
    login(bob, "bob@example.org")
    assert bob.get("/api/v1/account/analyses").get_json()["analyses"] == []
    assert "Churn Q3" not in bob.get("/account").get_data(as_text=True)
    assert bob.get(f"/account/analyses/{mine[0]['id']}").status_code == 404


def test_personal_tokens_replace_the_upload_key(app, predictions_csv):
    services = app.server.extensions["costdash"]
    alice = app.server.test_client()
    login(alice, "alice@example.org")
    made = alice.post("/api/v1/account/tokens", json={"name": "CI"}, headers={"Origin": SITE})
    assert made.status_code == 201
    body = made.get_json()
    token = body["token"]
    assert token.startswith("cdt_") and len(token) > 40 and body["name"] == "CI"
    # Kept hashed: the token is nowhere in the database, its SHA-256 is.
    with services.store.engine.connect() as conn:
        rows = [tuple(r) for r in conn.execute(sa.text("SELECT * FROM account_tokens"))]
    assert token not in repr(rows)
    assert hashlib.sha256(token.encode()).hexdigest() in repr(rows)
    listed = alice.get("/api/v1/account/tokens").get_json()["tokens"]
    assert [t["id"] for t in listed] == [body["id"]] and "token" not in listed[0]
    assert listed[0]["last_used_at"] is None

    # A pipeline: no session, the token alone.
    pipeline = app.server.test_client()
    auth = {"Authorization": f"Bearer {token}"}
    assert upload(pipeline, predictions_csv).status_code == 401
    assert upload(pipeline, predictions_csv, **auth).status_code == 200
    shared = share(pipeline, predictions_csv, name="From CI", **auth)
    assert shared.status_code == 201
    analysis_id = shared.get_json()["id"]
    assert [a["name"] for a in alice.get("/api/v1/account/analyses").get_json()["analyses"]] \
        == ["From CI"]
    assert pipeline.get("/api/v1/account/tokens", headers=auth).get_json()["tokens"][0][
        "last_used_at"] is not None
    # The owner's token manages the owner's analyses through the API, as the manage token does.
    renamed = pipeline.patch(f"/api/v1/analyses/{analysis_id}", json={"name": "Renamed by CI"},
                             headers=auth)
    assert renamed.status_code == 200 and renamed.get_json()["analysis"]["name"] == "Renamed by CI"
    bob = app.server.test_client()
    login(bob, "bob@example.org")
    bobs = bob.post("/api/v1/account/tokens", json={"name": "bob"},
                    headers={"Origin": SITE}).get_json()["token"]
    assert pipeline.patch(f"/api/v1/analyses/{analysis_id}", json={"name": "x"},
                          headers={"Authorization": f"Bearer {bobs}"}).status_code == 403
    # Nobody revokes another's token; the owner does, and it stops working at once.
    assert bob.delete(f"/api/v1/account/tokens/{body['id']}",
                      headers={"Origin": SITE}).status_code == 404
    assert alice.delete(f"/api/v1/account/tokens/{body['id']}",
                        headers={"Origin": SITE}).status_code == 204
    assert upload(pipeline, predictions_csv, **auth).status_code == 401
    assert alice.delete(f"/api/v1/account/tokens/{body['id']}",
                        headers={"Origin": SITE}).status_code == 404
    assert alice.get("/api/v1/account/tokens").get_json()["tokens"][0]["revoked_at"]
    # Each change is in alice's trail: who, what, when.
    trail = alice.get("/api/v1/account/audit").get_json()["entries"]
    assert [(e["actor"], e["action"]) for e in reversed(trail)] == [
        ("alice@example.org", "token created"), ("alice@example.org", "upload"),
        ("alice@example.org", "share"), ("alice@example.org", "rename"),
        ("alice@example.org", "token revoked")]
    assert all(re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ", e["at"]) for e in trail)
    assert bob.get("/api/v1/account/audit").get_json()["entries"][0]["action"] == \
        "token created"


def test_session_changes_refuse_other_origins(app):
    alice = app.server.test_client()
    login(alice, "alice@example.org")
    for origin in ("https://evil.example", "null", None):
        assert post_form(alice, "/account", {"action": "create-token", "name": "x"},
                         origin).status_code == 403
        headers = {} if origin is None else {"Origin": origin}
        assert alice.post("/api/v1/account/tokens", json={"name": "x"},
                          headers=headers).status_code == 403
    assert alice.get("/api/v1/account/tokens").get_json()["tokens"] == []
    # A form posted from a page with Referrer-Policy: no-referrer (every page here) has
    # "Origin: null": then Sec-Fetch-Site, which no page can set, decides.
    assert alice.post("/account", data={"action": "create-token", "name": "x"},
                      headers={"Origin": "null", "Sec-Fetch-Site": "cross-site"}
                      ).status_code == 403
    assert alice.post("/account", data={"action": "create-token", "name": "x"},
                      headers={"Origin": "https://evil.example", "Sec-Fetch-Site": "same-origin"}
                      ).status_code == 403
    made = alice.post("/account", data={"action": "create-token", "name": "laptop"},
                      headers={"Origin": "null", "Sec-Fetch-Site": "same-origin"})
    assert made.status_code == 201
    assert re.search(r"<code id=new-token>cdt_[A-Za-z0-9_-]+</code>", made.get_data(as_text=True))


@pytest.mark.slow
def test_my_analyses_manage_and_the_trail(app, predictions_csv):
    manage_and_trail(app, predictions_csv)


@pytest.mark.slow
def test_my_analyses_on_postgresql(tmp_path, provider, fresh_postgres_url, predictions_csv):
    manage_and_trail(accounts_app(tmp_path, provider, database_url=fresh_postgres_url),
                     predictions_csv)


def manage_and_trail(app, predictions_csv):
    alice = app.server.test_client()
    login(alice, "alice@example.org")
    body = share(alice, predictions_csv, name="Fraud").get_json()
    analysis, old = body["id"], body["url"].rsplit("/", 1)[1]
    here = f"/account/analyses/{analysis}"
    assert 'id=rotate-button' in alice.get(here).get_data(as_text=True)
    assert post_form(alice, here, {"action": "rotate"}, "https://evil.example").status_code == 403
    assert alice.get(f"/s/{old}").status_code == 200
    rotated = post_form(alice, here, {"action": "rotate"})
    assert rotated.status_code == 303 and rotated.headers["Location"] == f"{here}?done=relinked"
    assert alice.get(f"/s/{old}").status_code == 404
    new = re.search(r"<code id=share-url>[^<]*/s/([A-Za-z0-9_-]{32})</code>",
                    alice.get(here).get_data(as_text=True)).group(1)
    assert new != old and alice.get(f"/s/{new}").status_code == 200
    assert post_form(alice, here, {"action": "rename", "name": "Fraud v2"}).status_code == 303
    assert post_form(alice, here, {"action": "expiry", "expires_in_days": "7"}).status_code == 303
    # The manage link shown at sharing still works, and its changes are recorded as its.
    manage = body["manage_url"].split("/manage/", 1)[1]
    anyone = app.server.test_client()
    assert anyone.post(f"/manage/{manage}", data={"action": "revoke"}).status_code == 303
    listed = alice.get("/api/v1/account/analyses").get_json()["analyses"][0]
    assert listed["name"] == "Fraud v2" and listed["revoked"] and listed["expires_at"]
    gone = post_form(alice, here, {"action": "delete"})
    assert gone.status_code == 303 and gone.headers["Location"] == "/account?done=deleted"
    assert alice.get("/api/v1/account/analyses").get_json()["analyses"] == []
    trail = [(e["actor"], e["action"], e["target"])
             for e in reversed(alice.get("/api/v1/account/audit").get_json()["entries"])]
    assert trail == [("alice@example.org", "share", "Fraud"),
                     ("alice@example.org", "new link", "Fraud"),
                     ("alice@example.org", "rename", "Fraud v2"),
                     ("alice@example.org", "expiry", "Fraud v2"),
                     ("manage link", "revoke link", "Fraud v2"),
                     ("alice@example.org", "delete", "Fraud v2")]
    page = alice.get("/account").get_data(as_text=True)
    assert "manage link" in page and "revoke link" in page and "Fraud v2" in page


def test_organisation_only_links(app, predictions_csv):
    alice = app.server.test_client()
    login(alice, "alice@example.org")
    body = share(alice, predictions_csv, name="Internal").get_json()
    token = body["url"].rsplit("/", 1)[1]
    anyone = app.server.test_client()
    assert anyone.get(f"/s/{token}").status_code == 200
    set_it = post_form(alice, "/account", {"action": "organisation", "analysis": body["id"],
                                           "value": "1"})
    assert set_it.status_code == 303
    assert "Organisation only</span>" in alice.get("/account").get_data(as_text=True)
    opens = alice.get("/api/v1/account/analyses").get_json()["analyses"][0]["opens"]
    # Nobody logged in: the page sends them to log in, the JSON and the callbacks find nothing.
    sent = anyone.get(f"/s/{token}/curves")
    assert sent.status_code == 302 and sent.headers["Location"] == \
        f"/auth/login?next=/s/{token}/curves"
    assert anyone.get(f"/api/v1/analyses/{token}").status_code == 404
    sharing = app.server.extensions["costdash"].sharing
    with app.server.test_request_context(f"/s/{token}"):
        from dashboard.accounts import LoginRequired

        with pytest.raises(LoginRequired):
            sharing.scope(f"share:{token}")
    assert alice.get("/api/v1/account/analyses").get_json()["analyses"][0]["opens"] == opens
    # Somebody of the organisation (logged in) opens it.
    carol = app.server.test_client()
    assert login(carol, "carol@example.org", f"/s/{token}") == f"/s/{token}"
    assert carol.get(f"/s/{token}").status_code == 200
    assert carol.get(f"/api/v1/analyses/{token}").status_code == 200
    # Through the API too, and back to anyone.
    assert alice.patch(f"/api/v1/account/analyses/{body['id']}",
                       json={"organisation_only": False}, headers={"Origin": SITE}
                       ).status_code == 200
    assert anyone.get(f"/s/{token}").status_code == 200
    assert alice.patch(f"/api/v1/account/analyses/{body['id']}", json={"organisation_only": 1},
                       headers={"Origin": SITE}).status_code == 400
    actions = [e["action"] for e in alice.get("/api/v1/account/audit").get_json()["entries"]]
    assert actions[:2] == ["anyone with the link", "organisation only"]


def test_deleting_an_upload_from_my_analyses(app, predictions_csv):
    alice = app.server.test_client()
    login(alice, "alice@example.org")
    handle = upload(alice, predictions_csv).get_json()["id"]
    bob = app.server.test_client()
    login(bob, "bob@example.org")
    assert post_form(bob, "/account", {"action": "delete-upload", "handle": handle}
                     ).status_code == 404
    assert alice.get(f"/api/v1/datasets/{handle}").status_code == 200
    done = post_form(alice, "/account", {"action": "delete-upload", "handle": handle})
    assert done.status_code == 303
    assert alice.get(f"/api/v1/datasets/{handle}").status_code == 404
    assert "No uploads kept" in alice.get("/account").get_data(as_text=True)
    # Deleted through the API by whoever holds the handle: the trail says so too.
    other = upload(alice, predictions_csv).get_json()["id"]
    assert app.server.test_client().delete(f"/api/v1/datasets/{other}").status_code == 204
    trail = [(e["actor"], e["action"]) for e in
             alice.get("/api/v1/account/audit").get_json()["entries"][:2]]
    assert trail == [("upload handle", "delete upload"), ("alice@example.org", "upload")]
    assert "No uploads kept" in alice.get("/account").get_data(as_text=True)


def test_uploads_through_callbacks_need_a_person(app):
    from dashboard.limits import client_limits

    with app.server.test_request_context("/_dash-update-component", method="POST"):
        assert "Log in to upload" in client_limits().upload_refusal()
    alice = app.server.test_client()
    login(alice, "alice@example.org")
    with alice.session_transaction() as kept:
        person = dict(kept)
    with app.server.test_request_context("/_dash-update-component", method="POST"):
        from flask import session

        session.update(person)
        assert client_limits().upload_refusal() is None


# --- the tables, on both databases ----------------------------------------------------------------

@pytest.fixture(params=["sqlite", "postgresql"])
def store(request, tmp_path):
    if request.param == "sqlite":
        url = f"sqlite:///{tmp_path / 'costdash.db'}"
    else:
        url = request.getfixturevalue("fresh_postgres_url")
    sql = SqlStore(url)
    yield AccountStore(sql)
    sql.dispose()


def test_account_tables(store):
    alice, bob = Person("a-sub", "Alice", "alice@example.org"), Person("b-sub")
    store.logged_in(alice, now=1.0)
    store.logged_in(Person("a-sub", "Alice B.", "alice@example.org"), now=2.0)
    assert store.person("a-sub") == Person("a-sub", "Alice B.", "alice@example.org")
    record, token = store.create_token(alice, "ci", now=10.0)
    assert store.token_owner(token, now=11.0).subject == "a-sub"
    assert store.token_owner(token[:-1] + ("A" if token[-1] != "A" else "B")) is None
    assert store.token_owner(token.removeprefix("cdt_")) is None
    assert store.tokens("a-sub")[0].last_used_at == 11.0
    assert not store.revoke_token("b-sub", record.id)
    assert store.revoke_token("a-sub", record.id, now=12.0)
    assert store.token_owner(token) is None and store.tokens("a-sub")[0].revoked_at == 12.0
    store.own_analysis("a-sub", "0123456789abcdef", now=1.0)
    store.own_analysis("a-sub", "fedcba9876543210", require_login=True, now=2.0)
    store.own_analysis("b-sub", "0123456789abcdef")  # already owned: nothing changes
    assert store.analysis_ids("a-sub") == [("fedcba9876543210", True),
                                           ("0123456789abcdef", False)]
    store.set_require_login("0123456789abcdef", True)
    assert store.analysis_owner("0123456789abcdef") == ("a-sub", True)
    store.forget_analyses(["0123456789abcdef"])
    assert store.analysis_owner("0123456789abcdef") is None
    store.own_upload("a-sub", "f" * 32, "x.csv")
    assert store.upload_owner("f" * 32) == "a-sub" and store.upload_owner("e" * 32) is None
    store.audit("a-sub", "Alice", "rename", "x", {"to": "y"}, now=5.0)
    store.audit("a-sub", "manage link", "delete", "y", now=6.0)
    store.audit(bob.subject, "b", "upload", "z", now=7.0)
    assert [(e.actor, e.action, e.at) for e in store.trail("a-sub")] == [
        ("manage link", "delete", 6.0), ("Alice", "rename", 5.0)]


def test_costdash_push_with_a_personal_token(app, predictions_csv, monkeypatch, capsys):
    import json
    import threading

    from werkzeug.serving import make_server

    from costdash.cli import main

    alice = app.server.test_client()
    login(alice, "alice@example.org")
    token = alice.post("/api/v1/account/tokens", json={"name": "push"},
                       headers={"Origin": SITE}).get_json()["token"]
    server = make_server("127.0.0.1", 0, app.server, threaded=True)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        url = f"http://127.0.0.1:{server.server_port}"
        monkeypatch.delenv("COSTDASH_TOKEN", raising=False)
        assert main(["push", str(predictions_csv), "--server", url]) == 2
        assert "Log in to upload" in capsys.readouterr().err
        monkeypatch.setenv("COSTDASH_TOKEN", token)
        assert main(["push", str(predictions_csv), "--server", url, "--name", "Pushed",
                     "--json"]) == 0
        reply = json.loads(capsys.readouterr().out)
    finally:
        server.shutdown()
        thread.join(5)
    mine = alice.get("/api/v1/account/analyses").get_json()["analyses"]
    assert [(a["id"], a["name"]) for a in mine] == [(reply["id"], "Pushed")]
