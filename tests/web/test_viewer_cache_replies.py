"""A read link's routing callback and view load are answered from their whole replies, kept in
the result cache (issue 23: ``dashboard.link_preview.install_reply_cache``). A kept reply is
byte for byte Dash's, is only ever sent while the link is live and as it was (name, saved view),
and goes with the link's handle; an owner's upload handle and other callbacks are not kept."""

from __future__ import annotations

import io
import json
import time

import pytest

from dashboard import ids
from dashboard.link_preview import REPLY_KIND
from dashboard.services import ViewModels


@pytest.fixture
def app(web_app):
    """The app of tests/web/conftest.py (its ``services`` fixture is this app's)."""
    return web_app


@pytest.fixture
def link(app, breast_cancer_csv):
    return app.server.test_client().post("/api/v1/analyses", data={
        "file": (io.BytesIO(breast_cancer_csv.read_bytes()), "bc.csv"), "name": "Q3",
        "p_pos": "0.2"}).get_json()


def _body(app, output_id: str, values: dict[str, object]) -> str:
    """The POST a browser sends for the callback whose outputs include ``output_id``."""
    key = next(k for k in app.callback_map if f"{output_id}." in k and "@" not in k)
    entry = app.callback_map[key]
    outputs = [{"id": o.split(".")[0], "property": o.split(".")[1]}
               for o in key.strip(".").split("...")]
    if not key.startswith(".."):  # one output: Dash sends it alone, not in a list
        outputs = outputs[0]
    inputs = [{**i, "value": values.get(f"{i['id']}.{i['property']}")} for i in entry["inputs"]]
    return json.dumps({"output": key, "outputs": outputs, "inputs": inputs,
                       "changedPropIds": [f"{inputs[0]['id']}.{inputs[0]['property']}"],
                       "state": [{**s, "value": values.get(f"{s['id']}.{s['property']}")}
                                 for s in entry["state"]]})


def _post(client, body: str):
    return client.post("/_dash-update-component", data=body, content_type="application/json")


class PayloadReads:
    """Counts every read of the payload cache (a hit or a build): Dash running the routing
    callback or the view load reads it once; a kept reply reads nothing."""

    def __init__(self, monkeypatch):
        self.calls: list[str] = []
        real = ViewModels.payload

        def counting(views, dataset_id, what, *args, **kwargs):
            self.calls.append(what)
            return real(views, dataset_id, what, *args, **kwargs)
        monkeypatch.setattr(ViewModels, "payload", counting)


def _kept(services, handle: str) -> list[str]:
    return [k for k in services.results.keys_of(handle) if k.startswith(f"result:{REPLY_KIND}:")]


def test_a_read_links_view_load_reply_is_kept_and_sent_the_same(app, services, link,
                                                                 monkeypatch):
    client = app.server.test_client()
    share = link["url"].rsplit("/", 1)[1]
    handle = services.sharing.open(share).dataset_id
    body = _body(app, ids.ROC_GRAPH, {"dataset-ref.data": {"id": f"share:{share}",
                                                           "models": None}})
    first = _post(client, body)
    assert first.status_code == 200 and len(_kept(services, handle)) == 1
    dispatched = PayloadReads(monkeypatch)
    second = _post(client, body)
    assert dispatched.calls == []                       # the callback did not run
    assert second.data == first.data and second.mimetype == "application/json"
    reply = json.loads(second.data)["response"]
    assert any(t.get("uid") == "hull" for t in reply[ids.ROC_GRAPH]["figure"]["data"])
    # Still only what the link shows: the reply names no data handle.
    assert handle.encode() not in second.data and link["dataset_id"].encode() not in second.data
    # The response policies apply to a kept reply as to Dash's.
    assert second.headers.get("X-Content-Type-Options") == first.headers.get(
        "X-Content-Type-Options")

    # Other inputs: another reply, built by Dash.
    lines = _body(app, ids.ROC_GRAPH, {"dataset-ref.data": {"id": f"share:{share}",
                                                            "models": None},
                                       "cost-lines-toggle.value": ["lines"]})
    assert _post(client, lines).data != first.data and len(dispatched.calls) == 1


def test_a_kept_reply_never_outlives_the_link_or_its_state(app, services, link, monkeypatch):
    client = app.server.test_client()
    share = link["url"].rsplit("/", 1)[1]
    body = _body(app, ids.PAGE_CONTENT, {"url.pathname": f"/s/{share}", "url.search": ""})
    assert b"Shared analysis: Q3" in _post(client, body).data
    record = services.sharing.open(share)
    assert len(_kept(services, record.dataset_id)) == 1

    services.sharing.rename(record, "Q4")              # the banner names it: another reply
    assert b"Shared analysis: Q4" in _post(client, body).data

    services.store.update_analysis(record.id, expires_at=time.time() - 1)
    assert b"This link leads nowhere" in _post(client, body).data
    services.store.update_analysis(record.id, expires_at=None)
    assert b"Shared analysis: Q4" in _post(client, body).data

    new = services.sharing.replace_link(services.sharing.open(share))
    assert _kept(services, record.dataset_id) == []    # the old handle's replies went
    assert b"This link leads nowhere" in _post(client, body).data
    moved = _body(app, ids.PAGE_CONTENT, {"url.pathname": f"/s/{new.share_token}",
                                          "url.search": ""})
    assert b"Shared analysis: Q4" in _post(client, moved).data

    services.sharing.delete(services.sharing.open(new.share_token))
    assert _kept(services, new.dataset_id) == []
    assert b"This link leads nowhere" in _post(client, moved).data


def test_only_read_links_and_kept_payloads_give_kept_replies(app, services, link):
    client = app.server.test_client()
    share = link["url"].rsplit("/", 1)[1]
    handle = services.sharing.open(share).dataset_id
    # The owner's upload handle: answered by Dash every time, nothing kept.
    owner = _body(app, ids.ROC_GRAPH, {"dataset-ref.data": {"id": link["dataset_id"],
                                                           "models": None}})
    assert _post(client, owner).status_code == 200
    assert _kept(services, link["dataset_id"]) == []
    # Another callback of the read link's page (its pins): not one whose reply is kept.
    pins = _body(app, ids.PINS_STORE, {"view-key.data": {"id": f"share:{share}",
                                                         "models": None}})
    assert _post(client, pins).status_code == 200
    # An error answer (a classifier the link does not show) is not kept either.
    error = _body(app, ids.ROC_GRAPH, {"dataset-ref.data": {"id": f"share:{share}",
                                                           "models": None},
                                       "models-input.value": ["no such classifier"]})
    error = error.replace('"changedPropIds": ["dataset-ref.data"]',
                          '"changedPropIds": ["models-input.value"]')
    assert b"Select at least one classifier" in _post(client, error).data
    assert _kept(services, handle) == []


def test_a_read_links_pin_grid_is_kept_unless_it_holds_an_error(app, services, link,
                                                                  monkeypatch):
    from dashboard.pages import explore

    client = app.server.test_client()
    share = link["url"].rsplit("/", 1)[1]
    handle = services.sharing.open(share).dataset_id
    names = [c["name"] for c in services.views.full(handle)["classifiers"]]
    key = {"id": f"share:{share}", "models": None}
    grid = _body(app, ids.PIN_GRID, {"pin-model.value": names[0], "view-key.data": key})
    first = _post(client, grid)
    assert first.status_code == 200 and b'"threshold"' in first.data
    assert len(_kept(services, handle)) == 1

    computed: list[str] = []
    real = explore.pin_grid_result

    def counting(services_, key_, model):
        computed.append(model)
        if model == names[1]:       # a database that failed a moment: an error in the reply
            return {"model": model, "threshold": [], "fpr": [], "tpr": [],
                    "error": "the database is not reachable right now"}
        return real(services_, key_, model)
    monkeypatch.setattr(explore, "pin_grid_result", counting)
    again = _post(client, grid)
    assert again.data == first.data and computed == []

    other = _body(app, ids.PIN_GRID, {"pin-model.value": names[1], "view-key.data": key})
    assert b"not reachable" in _post(client, other).data
    assert b"not reachable" in _post(client, other).data and computed == [names[1]] * 2
    assert len(_kept(services, handle)) == 1
