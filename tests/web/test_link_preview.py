"""A read link's preview (dashboard/link_preview.py): the HTML of
``GET /s/<token>`` carries the view's two figures, drawn before Dash boots, and the live page
takes over once it has drawn the same traces.

Server side with Flask's test client: which requests get a preview, that its figures are the
view-load callback's (same traces, uids and data, same cache entry), and that users' text
cannot break out of it. Browser side in headless Chromium: the preview is drawn, then swapped
for the live page, which is visible and answers its controls.
"""

from __future__ import annotations

import io
import json
import re
import time

from typing import TYPE_CHECKING

import pandas as pd
import pytest
import requests

from costdash.io import load_predictions
from dashboard import ids, link_preview
from dashboard.services import ViewModels
from dashboard.shell import route

from .helpers import find
from .test_viewer_cache import _callback_body, _post

if TYPE_CHECKING:  # the browser tests import Playwright themselves: collection never needs it
    from playwright.sync_api import Page

FIGURES_SCRIPT = re.compile(
    r'<script type="application/json" id="link-preview-figures">(.*?)</script>', re.S)
HAS_PREVIEW = 'id="link-preview"'
CALLBACKS = re.compile(r"/_dash-update-component(\?|$)")
"""Dash's callback requests (their address carries a query, ``?endId=...``)."""


def _save(client, csv_bytes: bytes, name: str = "Q3 review", **fields: str) -> dict:
    reply = client.post("/api/v1/analyses", data={
        "file": (io.BytesIO(csv_bytes), "preds.csv"), "name": name, **fields})
    assert reply.status_code == 201, reply.data[:300]
    return reply.get_json()


def _token(saved: dict) -> str:
    return saved["url"].rsplit("/", 1)[1]


def _preview_figures(text: str) -> dict:
    found = FIGURES_SCRIPT.findall(text)
    assert len(found) == 1, "exactly one preview figures script"
    return json.loads(found[0])


def _view_load_figures(app, services, token: str, search: str = "") -> dict:
    """What the page's view-load callback answers, with the inputs its page starts with."""
    content, _ = route(f"/s/{token}", search, services)
    values = {"dataset-ref.data": find(content, ids.DATASET_REF).data}
    for id_ in (ids.MODELS_INPUT, ids.COST_LINES_TOGGLE, ids.HULL_ONLY_TOGGLE,
                ids.LOG_FPR_TOGGLE, ids.LOG_PC_TOGGLE):
        values[f"{id_}.value"] = find(content, id_).value
    body = _callback_body(app, ids.ROC_GRAPH, values)
    reply = json.loads(_post(app.server.test_client(), body).data)["response"]
    return {"roc": reply[ids.ROC_GRAPH]["figure"], "cost": reply[ids.COST_GRAPH]["figure"]}


def _assert_same_figures(preview: dict, live: dict) -> None:
    for key in ("roc", "cost"):
        assert [t.get("uid") for t in preview[key]["data"]] == \
            [t.get("uid") for t in live[key]["data"]]
        assert preview[key]["data"] == live[key]["data"]
        layout = dict(live[key]["layout"])
        layout.pop("uirevision", None)  # the data set's handle: left out of the preview
        assert preview[key]["layout"] == layout


def test_a_read_link_carries_the_view_loads_figures_built_once(web_app, services, client,
                                                               predictions_csv, monkeypatch):
    saved = _save(client, predictions_csv.read_bytes(), p_pos="0.1")
    token = _token(saved)
    built = []
    real = ViewModels.payload

    def counting(self, dataset_id, what, parts, compute, **kw):
        return real(self, dataset_id, what, parts, lambda: built.append(what) or compute(), **kw)

    monkeypatch.setattr(ViewModels, "payload", counting)
    reply = client.get(f"/s/{token}")
    assert reply.status_code == 200
    text = reply.get_data(as_text=True)
    preview = _preview_figures(text)
    # The same figures as the page's callback, from the same cache entry: built once.
    _assert_same_figures(preview, _view_load_figures(web_app, services, token))
    assert built.count("explore-view") == 1
    # Before Dash's scripts (it runs first), with dcc.Graph's plotly.js and the uids to wait for.
    assert text.index(HAS_PREVIEW) < text.index('id="react-entry-point"') < \
        text.index("dash_renderer")
    assert '<script src="/_dash-component-suites/plotly/package_data/plotly.min.js">' in text
    uids = re.search(r'id="link-preview-roc" class="link-preview-graph" data-uids="([^"]*)"',
                     text).group(1).split()
    assert uids == [t["uid"] for t in preview["roc"]["data"] if t.get("uid")]
    assert "Shared analysis: Q3 review" in text
    # Same headers as the page without it: inline scripts allowed, the link's secret kept in.
    assert reply.headers["Content-Security-Policy"] == "frame-ancestors 'none'"
    assert reply.headers["Referrer-Policy"] == "no-referrer"
    assert reply.headers["Cache-Control"] == "no-store"
    # Capabilities, not ids: neither the data set's handle nor the uploader's data id.
    fragment = text[text.index(HAS_PREVIEW):text.index('id="react-entry-point"')]
    record = services.sharing.open(token)
    assert record.dataset_id not in fragment and saved["dataset_id"] not in fragment
    assert saved["id"] not in fragment and token not in fragment
    # Every later viewer gets the fragment as it was kept: nothing built again.
    first = list(built)
    assert first.count("link-preview") == 1
    again = client.get(f"/s/{token}").get_data(as_text=True)
    assert again[again.index(HAS_PREVIEW):again.index('id="react-entry-point"')] == fragment
    assert built == first
    # A rename is a new fragment (the banner names the analysis); the figures stay cached.
    manage = saved["manage_url"].rsplit("/", 1)[1]
    services.sharing.rename(services.sharing.managed(manage), "Q4 review")
    assert "Shared analysis: Q4 review" in client.get(f"/s/{token}").get_data(as_text=True)
    assert built[len(first):].count("link-preview") == 1 and \
        "explore-view" not in built[len(first):]


@pytest.mark.slow
def test_a_link_query_gets_the_preview_of_that_view(web_app, services, client, predictions_csv):
    """The link's own query (a viewer's what-if) goes through the page's parsing: every cost
    line drawn (``lines=1``) is another cost figure, and the preview is that one."""
    token = _token(_save(client, predictions_csv.read_bytes()))
    plain = _preview_figures(client.get(f"/s/{token}").get_data(as_text=True))
    lines = _preview_figures(client.get(f"/s/{token}?lines=1").get_data(as_text=True))
    assert lines["cost"]["data"] != plain["cost"]["data"]
    _assert_same_figures(lines, _view_load_figures(web_app, services, token, "?lines=1"))


def test_no_preview_but_for_a_live_read_links_explore_page(services, client, predictions_csv,
                                                           monkeypatch):
    saved = _save(client, predictions_csv.read_bytes())
    token = _token(saved)
    assert HAS_PREVIEW in client.get(f"/s/{token}").get_data(as_text=True)
    for path in (f"/s/{token}/choice", f"/s/{token}/curves", "/explore", "/curves",
                 "/s/" + "A" * 32, "/s/short"):
        assert HAS_PREVIEW not in client.get(path).get_data(as_text=True), path
    calls = []
    real = link_preview.link_figures
    monkeypatch.setattr(link_preview, "link_figures",
                        lambda *a, **k: calls.append(a) or real(*a, **k))
    assert client.head(f"/s/{token}").status_code == 200 and calls == []
    assert client.post(f"/s/{token}").status_code == 405
    # Expired, then deleted: the friendly 404, no preview.
    services.store.update_analysis(saved["id"], expires_at=time.time() - 1)
    reply = client.get(f"/s/{token}")
    assert reply.status_code == 404 and HAS_PREVIEW not in reply.get_data(as_text=True)
    services.store.update_analysis(saved["id"], expires_at=None)
    assert HAS_PREVIEW in client.get(f"/s/{token}").get_data(as_text=True)
    services.sharing.delete(services.sharing.open(token))
    reply = client.get(f"/s/{token}")
    assert reply.status_code == 404 and HAS_PREVIEW not in reply.get_data(as_text=True)


def test_a_failing_preview_serves_the_plain_page(client, predictions_csv, monkeypatch, caplog):
    token = _token(_save(client, predictions_csv.read_bytes()))

    def broken(*_args, **_kwargs):
        raise RuntimeError(f"boom {token}")

    monkeypatch.setattr(link_preview, "link_figures", broken)
    reply = client.get(f"/s/{token}")
    text = reply.get_data(as_text=True)
    assert reply.status_code == 200 and HAS_PREVIEW not in text
    assert 'id="react-entry-point"' in text
    assert "link preview not built (RuntimeError)" in caplog.text
    assert token not in caplog.text  # the link's secret stays out of the log


def test_users_text_cannot_break_out_of_the_preview(client):
    evil = "</script><script>alert(1)</script>"
    table = pd.DataFrame({"y_true": [0, 1, 0, 1, 1, 0, 0, 1], evil: [.1, .9, .3, .8, .6, .2, .4, .7],
                          "b&<>": [.2, .7, .1, .9, .5, .3, .6, .8]})
    saved = _save(client, table.to_csv(index=False).encode(), name="<img src=x onerror=alert(2)>")
    text = client.get(f"/s/{_token(saved)}").get_data(as_text=True)
    preview = _preview_figures(text)
    names = {t.get("name") for t in preview["roc"]["data"]}
    assert any(evil in (n or "") for n in names) and any("b&<>" in (n or "") for n in names)
    fragment = text[text.index(HAS_PREVIEW):text.index('id="react-entry-point"')]
    # The JSON's own text has no "<", ">" or "&": nothing in it ends the script element.
    raw = FIGURES_SCRIPT.search(fragment).group(1)
    assert "<" not in raw and ">" not in raw and "&" not in raw
    # The figures and the decision as JSON, the decision's three scripts, plotly.js and
    # assets/link-preview.js (the decision's lines, the drawing, the swap), its settings inert
    # in its own tag: no inline code.
    assert fragment.count("</script>") == 7
    assert "<script>" not in fragment
    assert "alert(1)</script>" not in text and "<img src=x" not in fragment
    assert "&lt;img src=x onerror=alert(2)&gt;" in fragment


def test_the_fragment_is_pure():
    figure = {"data": [{"uid": "a", "name": "x</script>", "type": "scatter"}], "layout": {}}
    html_text = link_preview.preview_fragment("N & M", {"roc": figure, "cost": figure},
                                              "/p.js?a=1&b=2")
    assert 'src="/p.js?a=1&amp;b=2"' in html_text
    assert "N &amp; M" in html_text and "x\\u003c/script\\u003e" in html_text
    assert 'data-uids="a"' in html_text
    # The page's own graphs are watched, never given a second element of the same id.
    assert 'id="roc-graph"' not in html_text and 'id="cost-graph"' not in html_text


# --- in headless Chromium --------------------------------------------------------------------

PREVIEW_DRAWN = """() => {
    // Both preview plots hold every uid their container names and have drawn them.
    return ['link-preview-roc', 'link-preview-cost'].every((id) => {
        const gd = document.getElementById(id);
        if (!gd || !gd._fullData || !gd.querySelector('.scatterlayer .trace')) return false;
        const want = gd.getAttribute('data-uids').split(' ').filter(Boolean);
        const have = new Set(gd._fullData.map((t) => t.uid));
        return want.length > 0 && want.every((u) => have.has(u));
    });
}"""

LIVE_UIDS = """(id) => {
    const gd = document.querySelector('#' + id + ' .js-plotly-plot');
    return gd && gd._fullData ? gd._fullData.map((t) => t.uid) : null;
}"""


def _is_view_load(request) -> bool:
    body = request.post_data or ""
    return "/_dash-update-component" in request.url and '"output":"..roc-graph.figure' in \
        body.replace(" ", "")


@pytest.mark.browser
def test_the_preview_is_drawn_then_handed_to_the_live_page(live_server, page: Page,
                                                            predictions_csv):
    from playwright.sync_api import expect

    from .test_e2e_explore import assert_readouts, open_page, set_conditions

    reply = requests.post(live_server.url + "/api/v1/analyses", timeout=60, files={
        "file": ("preds.csv", predictions_csv.read_bytes())},
        data={"name": "Q3 review", "p_pos": "0.1", "cost_fn": "5"})
    assert reply.status_code == 201, reply.text
    link = reply.json()["url"].removeprefix(live_server.url)

    # The view load is held back until the preview has been checked: the preview is then on
    # screen for sure, whatever the machine's speed.
    held = []
    page.route(CALLBACKS, lambda r: held.append(r) if _is_view_load(r.request)
               else r.continue_())
    view_replies = []
    page.on("response", lambda r: view_replies.append(r) if _is_view_load(r.request) else None)
    errors = open_page(live_server, page, link)
    page.wait_for_function(PREVIEW_DRAWN, timeout=30_000)
    expect(page.locator("#link-preview .shared-banner")).to_contain_text("Q3 review")
    expect(page.locator("#link-preview")).to_contain_text("Loading the controls")
    assert page.evaluate("() => getComputedStyle(document.getElementById("
                         "'react-entry-point')).visibility") == "hidden"
    preview = json.loads(page.text_content("#link-preview-figures"))
    want = {key: [t["uid"] for t in preview[key]["data"] if t.get("uid")]
            for key in ("roc", "cost")}
    page.wait_for_function("() => document.documentElement.dataset.linkPreview === 'drawn'")
    page.screenshot(path="/tmp/preview-state.png")

    # The live page takes over once its graphs hold the same traces.
    deadline = time.monotonic() + 30
    while not held:  # the page asks for its view (the route handler runs while we wait)
        assert time.monotonic() < deadline, "the page never asked for its view"
        page.wait_for_timeout(50)
    for r in held:
        r.continue_()
    page.unroute(CALLBACKS)
    page.wait_for_function("() => document.documentElement.dataset.linkPreview === 'live'",
                           timeout=30_000)
    expect(page.locator("#link-preview")).to_have_count(0)
    for key, graph in (("roc", "roc-graph"), ("cost", "cost-graph")):
        have = page.evaluate(LIVE_UIDS, graph)
        assert set(want[key]) <= set(have)
    # The figures the page received are the preview's (same uids and data).
    assert len(view_replies) == 1
    response = view_replies[0].json()["response"]
    for key, graph in (("roc", ids.ROC_GRAPH), ("cost", ids.COST_GRAPH)):
        assert response[graph]["figure"]["data"] == preview[key]["data"]
    assert page.evaluate("() => getComputedStyle(document.getElementById("
                         "'react-entry-point')).visibility") == "visible"
    expect(page.locator("#roc-graph")).to_be_visible()
    page.screenshot(path="/tmp/preview-after.png")

    # Interactive: a slider step and typed conditions reach the readouts.
    dataset = load_predictions(predictions_csv)
    assert_readouts(page, dataset, 0.1, 5.0, 1.0)
    thumb = page.locator("#p-pos-slider [role=slider]")
    thumb.focus()
    thumb.press("ArrowRight")
    expect(page.locator("#p-pos-input")).not_to_have_value("0.1")
    set_conditions(page, 0.3, 1.0, 1.0)
    assert_readouts(page, dataset, 0.3, 1.0, 1.0)
    assert errors == []


@pytest.mark.browser
def test_an_error_on_the_page_takes_the_preview_away(live_server, page: Page, predictions_csv):
    """The view load failing (here: answered with a server error) must not leave the viewer on
    the static preview until the timeout: the page's error shows at once."""
    from playwright.sync_api import expect

    reply = requests.post(live_server.url + "/api/v1/analyses", timeout=60, files={
        "file": ("preds.csv", predictions_csv.read_bytes())}, data={"name": "x"})
    link = reply.json()["url"].removeprefix(live_server.url)
    page.route(CALLBACKS, lambda r: r.fulfill(
        status=200, content_type="application/json",
        body=json.dumps({"multi": True, "response": {
            ids.UPLOAD_ERROR: {"children": "The data set could not be read."}}}))
        if _is_view_load(r.request) else r.continue_())
    page.goto(live_server.url + link)
    page.wait_for_function("() => document.documentElement.dataset.linkPreview === 'error'",
                           timeout=30_000)
    expect(page.locator("#link-preview")).to_have_count(0)
    expect(page.locator("#upload-error")).to_have_text("The data set could not be read.")
    expect(page.locator("#upload-error")).to_be_visible()
