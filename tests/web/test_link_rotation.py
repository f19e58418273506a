"""Issue 22, "what a trusted link service offers": the owner replaces or revokes the read-only
link without deleting the analysis (manage page and API), and sees how many times the link was
opened and when last; on SQLite and PostgreSQL, including a database made before the counter
existed."""

from __future__ import annotations

import io
import re
import time

import pytest
import sqlalchemy as sa

from dashboard.factory import create_app
from dashboard.sharing import iso

VIEWER = "10.9.8.7"
"""The address the viewers' requests come from: it must be stored nowhere."""


@pytest.fixture(params=["sqlite", "postgresql"])
def database_url(request, tmp_path):
    if request.param == "sqlite":
        return f"sqlite:///{tmp_path / 'costdash.db'}"
    # A new, empty schema in the module's database (tests/conftest.py): a new database to
    # the store.
    return request.getfixturevalue("fresh_postgres_url")


def _app(tmp_path, database_url):
    return create_app({"data_dir": tmp_path / "data", "database_url": database_url})


def _create(client, csv) -> dict:
    reply = client.post("/api/v1/analyses", data={
        "file": (io.BytesIO(csv.read_bytes()), "bc.csv"), "name": "screening"})
    assert reply.status_code == 201
    return reply.get_json()


def _view(client, path: str):
    return client.get(path, environ_base={"REMOTE_ADDR": VIEWER})


def _dump(engine) -> str:
    """Every value of every row of the store, as text."""
    with engine.connect() as conn:
        meta = sa.MetaData()
        meta.reflect(conn)
        return repr([list(r) for t in meta.sorted_tables for r in conn.execute(sa.select(t))])


@pytest.mark.slow
def test_the_manage_page_replaces_and_revokes_the_link(tmp_path, database_url,
                                                        breast_cancer_csv):
    app = _app(tmp_path, database_url)
    client = app.server.test_client()
    created = _create(client, breast_cancer_csv)
    token, manage = created["url"].rsplit("/", 1)[1], f"/manage/{created['manage_token']}"
    old_handle = created["dataset_id"]
    report = f"/api/v1/datasets/{old_handle}/report.html"

    # Opened: three page loads (one a sub-page) and a read of its JSON; a HEAD is a check,
    # and the owner's read with the manage token is not an opening of the link.
    before = time.time()
    for path in (f"/s/{token}", f"/s/{token}", f"/s/{token}/curves",
                 f"/api/v1/analyses/{token}"):
        assert _view(client, path).status_code == 200
    assert client.head(f"/s/{token}").status_code == 200
    owner = client.get(f"/api/v1/analyses/{token}",
                       headers={"Authorization": f"Bearer {created['manage_token']}"})
    assert owner.get_json()["analysis"]["opens"] == 4
    last = owner.get_json()["analysis"]["last_opened_at"]
    assert iso(before - 1) <= last <= iso(time.time())
    page = client.get(manage).get_data(as_text=True)
    assert f"Opened 4 times; last {last}." in page
    assert VIEWER not in _dump(app.server.extensions["costdash"].store.engine)
    assert client.get(report).status_code == 200

    # Replace: a new link; the old one, and the read-only handle it opened, are dead.
    reply = client.post(manage, data={"action": "rotate"})
    assert reply.status_code == 303 and reply.headers["Location"].endswith("?done=relinked")
    page = client.get(reply.headers["Location"]).get_data(as_text=True)
    new_token = re.search(r"<code id=share-url>[^<]*/s/([A-Za-z0-9_-]{32})</code>", page)[1]
    assert new_token != token and "the old one no longer works" in page
    for dead in (f"/s/{token}", f"/s/{token}/curves", f"/api/v1/analyses/{token}", report,
                 f"/api/v1/datasets/{old_handle}"):
        assert client.get(dead).status_code == 404, dead
    shared = _view(client, f"/api/v1/analyses/{new_token}").get_json()["analysis"]
    assert shared["id"] == created["id"] and "dataset_id" not in shared  # issue 22
    shared = client.get(f"/api/v1/analyses/{new_token}", headers={
        "Authorization": f"Bearer {created['manage_token']}"}).get_json()["analysis"]
    assert shared["dataset_id"] != old_handle  # the owner's answer names the new handle
    assert client.get(f"/api/v1/datasets/{shared['dataset_id']}/report.html").status_code == 200
    assert "Opened 5 times" in client.get(manage).get_data(as_text=True)  # the count stays

    # Revoke: no link at all, the analysis stays; a new link brings it back.
    assert client.post(manage, data={"action": "revoke"}).status_code == 303
    page = client.get(manage).get_data(as_text=True)
    assert "you revoked it" in page and "id=share-url>" not in page
    assert client.get(f"/s/{new_token}").status_code == 404
    assert client.get(f"/api/v1/datasets/{shared['dataset_id']}").status_code == 404
    assert app.server.extensions["costdash"].store.count()["analyses"] == 1
    assert client.post(manage, data={"action": "rotate"}).status_code == 303
    page = client.get(manage).get_data(as_text=True)
    third = re.search(r"<code id=share-url>[^<]*/s/([A-Za-z0-9_-]{32})</code>", page)[1]
    assert _view(client, f"/s/{third}").status_code == 200
    app.server.extensions["costdash"].store.engine.dispose()


def test_the_api_replaces_and_revokes_the_link(tmp_path, database_url, breast_cancer_csv):
    app = _app(tmp_path, database_url)
    client = app.server.test_client()
    created = _create(client, breast_cancer_csv)
    owner = {"Authorization": f"Bearer {created['manage_token']}"}
    link = f"/api/v1/analyses/{created['id']}/link"
    token = created["url"].rsplit("/", 1)[1]
    assert client.post(link).status_code == 401
    assert client.post(link, headers={"Authorization": f"Bearer {token}"}).status_code == 403
    assert client.get(f"/s/{token}").status_code == 200  # a refused request changed nothing
    replaced = client.post(link, headers=owner).get_json()["analysis"]
    assert replaced["opens"] == 1 and replaced["url"] != created["url"]
    assert client.get(f"/s/{token}").status_code == 404
    revoked = client.delete(link, headers=owner).get_json()["analysis"]
    assert revoked["url"] is None and revoked["name"] == "screening"
    assert client.get(replaced["url"].removeprefix("http://localhost")).status_code == 404
    # Renaming a revoked analysis keeps it without a link; deleting still works.
    renamed = client.patch(f"/api/v1/analyses/{created['id']}", json={"name": "kept"},
                           headers=owner).get_json()["analysis"]
    assert renamed["url"] is None and renamed["name"] == "kept"
    assert client.delete(f"/api/v1/analyses/{created['id']}", headers=owner).status_code == 204
    assert client.post(link, headers=owner).status_code == 404
    app.server.extensions["costdash"].store.engine.dispose()


@pytest.mark.slow
def test_a_database_made_before_the_counter_is_migrated(tmp_path, database_url,
                                                        breast_cancer_csv):
    """An existing database (its analyses table without ``opens`` and ``last_opened_at``, a
    saved analysis in it) gets the columns when the app starts on it; the link keeps working
    and counts from 0."""
    app = _app(tmp_path, database_url)
    client = app.server.test_client()
    created = _create(client, breast_cancer_csv)
    token = created["url"].rsplit("/", 1)[1]
    engine = app.server.extensions["costdash"].store.engine
    with engine.begin() as conn:
        for column in ("opens", "last_opened_at"):
            conn.execute(sa.text(f"ALTER TABLE analyses DROP COLUMN {column}"))
    engine.dispose()
    with sa.create_engine(database_url).connect() as conn:
        columns = {c["name"] for c in sa.inspect(conn).get_columns("analyses")}
    assert not columns & {"opens", "last_opened_at"}

    migrated = _app(tmp_path / "again", database_url)
    client = migrated.server.test_client()
    assert client.get(f"/s/{token}").status_code == 200
    got = client.get(f"/api/v1/analyses/{token}",
                     headers={"Authorization": f"Bearer {created['manage_token']}"}).get_json()
    assert got["analysis"]["opens"] == 1 and got["analysis"]["name"] == "screening"
    # A second start on the migrated database changes nothing.
    third = _app(tmp_path / "third", database_url)
    assert third.server.test_client().get(f"/s/{token}").status_code == 200
    for a in (migrated, third):
        a.server.extensions["costdash"].store.engine.dispose()
