"""A read link's callbacks come from the result cache (issue 11, finding 11): the routing
callback and Explore's view load are built once per data set and inputs
(``ViewModels.payload``) and then sent as cached JSON. The cached answer must be exactly the
built one, and it must never outlive the link: deleting or expiring the analysis, renaming it,
or a deployment of other code must not serve the old payload.
"""

from __future__ import annotations

import io
import json
import time

import pytest

from dashboard import ids
from dashboard.factory import create_app
from dashboard.services import ViewModels


@pytest.fixture
def app(settings):
    return create_app(settings)


@pytest.fixture
def services(app):
    return app.server.extensions["costdash"]


@pytest.fixture
def link(app, breast_cancer_csv):
    body = app.server.test_client().post("/api/v1/analyses", data={
        "file": (io.BytesIO(breast_cancer_csv.read_bytes()), "bc.csv"), "name": "Q3",
        "p_pos": "0.2"}).get_json()
    return body


def _callback_body(app, output_id: str, values: dict[str, object]) -> str:
    """The POST a browser sends for the callback whose outputs include ``output_id``."""
    key = next(k for k in app.callback_map if f"{output_id}." in k and "@" not in k)
    entry = app.callback_map[key]
    outputs = [{"id": o.split(".")[0], "property": o.split(".")[1]}
               for o in key.strip(".").split("...")]
    inputs = [{**i, "value": values.get(f"{i['id']}.{i['property']}")} for i in entry["inputs"]]
    return json.dumps({"output": key, "outputs": outputs, "inputs": inputs,
                       "changedPropIds": [f"{inputs[0]['id']}.{inputs[0]['property']}"],
                       "state": [{**s, "value": None} for s in entry["state"]]})


def _post(client, body: str):
    reply = client.post("/_dash-update-component", data=body, content_type="application/json")
    assert reply.status_code == 200, reply.data[:500]
    return reply



def test_the_routing_callback_of_a_link_is_built_once_and_sent_the_same(app, services, link,
                                                                         monkeypatch):
    client = app.server.test_client()
    share = link["url"].rsplit("/", 1)[1]
    body = _callback_body(app, ids.PAGE_CONTENT, {"url.pathname": f"/s/{share}",
                                                  "url.search": ""})
    built = []
    real = ViewModels.payload

    def counting(self, dataset_id, what, parts, compute, **kw):
        return real(self, dataset_id, what, parts, lambda: built.append(what) or compute(), **kw)

    monkeypatch.setattr(ViewModels, "payload", counting)
    first, second = _post(client, body).data, _post(client, body).data
    assert first == second and b"Shared analysis: Q3" in first
    assert built == ["route"]  # the second came from the cache

    # Renamed: another page (the banner names it), built afresh.
    record = services.sharing.open(share)
    services.sharing.rename(record, "Q4")
    assert b"Shared analysis: Q4" in _post(client, body).data and built == ["route"] * 2
    # Expired or deleted: the link leads nowhere at once, whatever the cache holds.
    services.store.update_analysis(record.id, expires_at=time.time() - 1)
    assert b"This link leads nowhere" in _post(client, body).data
    services.store.update_analysis(record.id, expires_at=None)
    assert b"Shared analysis: Q4" in _post(client, body).data
    services.sharing.delete(services.sharing.open(share))
    assert b"This link leads nowhere" in _post(client, body).data


def test_the_view_load_is_built_once_and_never_outlives_its_data(app, services, link,
                                                                 monkeypatch):
    client = app.server.test_client()
    handle = link["dataset_id"]
    body = _callback_body(app, ids.ROC_GRAPH, {"dataset-ref.data": {"id": handle,
                                                                    "models": None}})
    built = []
    real = ViewModels.payload

    def counting(self, dataset_id, what, parts, compute, **kw):
        return real(self, dataset_id, what, parts, lambda: built.append(what) or compute(), **kw)

    monkeypatch.setattr(ViewModels, "payload", counting)
    first, second = _post(client, body).data, _post(client, body).data
    assert first == second
    figure = json.loads(first)["response"][ids.ROC_GRAPH]["figure"]
    assert any(t.get("uid") == "hull" for t in figure["data"])
    assert built == ["explore-view"]

    # Other inputs (every cost line) are another payload; the first stays cached.
    lines = _callback_body(app, ids.ROC_GRAPH, {"dataset-ref.data": {"id": handle,
                                                                     "models": None},
                                                "cost-lines-toggle.value": ["lines"]})
    assert _post(client, lines).data != first and built == ["explore-view"] * 2
    assert _post(client, body).data == first and len(built) == 2

    # The analysis expires: its handle's cached figures are not sent, the page says why.
    services.store.update_analysis(link["id"], expires_at=time.time() - 1)
    reply = json.loads(_post(client, body).data)["response"]
    assert ids.ROC_GRAPH not in reply
    assert "no data set" in reply[ids.UPLOAD_ERROR]["children"]


def test_payloads_are_keyed_by_the_code(services):
    """Another version of the code (or of Dash or plotly) never reads this one's payloads."""
    from dashboard.services import code_version

    assert services.views.version == code_version() and len(code_version()) == 16
    calls = []
    value = services.views.payload("x" * 32, "t", {"a": 1},
                                   lambda: calls.append(1) or {"b": 2}, checked=False)
    again = services.views.payload("x" * 32, "t", {"a": 1}, lambda: calls.append(1),
                                   checked=False)
    assert value == again == {"b": 2} and calls == [1]
    services.views.version = "another"
    services.views.payload("x" * 32, "t", {"a": 1}, lambda: calls.append(1) or {"b": 3},
                           checked=False)
    assert calls == [1, 1]


def test_an_error_page_is_answered_never_kept(app, services, link, monkeypatch):
    """The database failing between the link's lookup and the page's build gives the "not
    reachable" page once; the next viewer gets the link's page, not that one from the cache."""
    from dashboard.storage import StorageUnavailable

    client = app.server.test_client()
    share = link["url"].rsplit("/", 1)[1]
    body = _callback_body(app, ids.PAGE_CONTENT, {"url.pathname": f"/s/{share}",
                                                  "url.search": ""})
    real, calls = services.sharing.open, []

    def flaky(token, now=None):
        calls.append(token)
        if len(calls) == 2:  # the lookup passed; the page's own lookup fails
            raise StorageUnavailable("gone for a moment")
        return real(token, now)

    monkeypatch.setattr(services.sharing, "open", flaky)
    assert b"not reachable right now" in _post(client, body).data
    assert b"Shared analysis: Q3" in _post(client, body).data


def test_payloads_of_a_data_set_are_bounded(services):
    """New inputs on every request do not grow the cache without end: the oldest go."""
    views = services.views
    views.payloads_per_data_set = 3
    built = []
    for i in range(5):
        views.payload("d" * 32, "t", {"q": i}, lambda i=i: built.append(i) or {"i": i},
                      checked=False)
    again = [views.payload("d" * 32, "t", {"q": i}, lambda i=i: built.append(i) or {"i": i},
                           checked=False) for i in (2, 3, 4)]
    assert again == [{"i": 2}, {"i": 3}, {"i": 4}] and built == [0, 1, 2, 3, 4]
    views.payload("d" * 32, "t", {"q": 0}, lambda: built.append(0) or {"i": 0}, checked=False)
    assert built == [0, 1, 2, 3, 4, 0]  # evicted, built again
