"""A read link is a closed world, in headless Chromium (issue 22, findings 1 and 2).

A viewer opens ``/s/<token>`` in a fresh browser: nothing the browser holds (session and local
storage, the DOM's text and every link, every callback's request and reply) names the owner's
upload handle or the analysis's read-only handle, nor the classifier the owner unticked; the
top nav offers only the pages the link grants, and each click stays under ``/s/<token>``.
"""

from __future__ import annotations

from urllib.parse import urlsplit

import pytest
from playwright.sync_api import Page, expect

from dashboard.sharing import ShareService

from .test_e2e_explore import open_page

pytestmark = [pytest.mark.browser, pytest.mark.slow]

UNTICKED = "gamma"


def _held(page: Page) -> str:
    """Everything the page holds that a viewer could read: both storages, the DOM's HTML and
    its text, and every address it links to or sits at."""
    return page.evaluate("""() => JSON.stringify({
        session: Object.fromEntries(Object.keys(sessionStorage).map(
            (k) => [k, sessionStorage.getItem(k)])),
        local: Object.fromEntries(Object.keys(localStorage).map(
            (k) => [k, localStorage.getItem(k)])),
        html: document.documentElement.outerHTML,
        text: document.body.innerText,
        hrefs: [...document.querySelectorAll("[href], [src], [action]")].map(
            (e) => e.getAttribute("href") || e.getAttribute("src") || e.getAttribute("action")),
        at: location.href})""")


def _anchors(page: Page) -> list[str]:
    """Every address the page's links lead to (as written)."""
    return page.evaluate("() => [...document.querySelectorAll('a[href]')]"
                         ".map((a) => a.getAttribute('href'))")


def _inside(href: str, token: str) -> bool:
    """Whether a link stays in the read link (an in-page anchor does)."""
    path = urlsplit(href).path
    return href.startswith("#") or path == f"/s/{token}" or path.startswith(f"/s/{token}/")


def test_a_read_link_holds_no_handle_and_its_nav_stays_in_it(live_server, browser,
                                                             predictions_csv):
    owner = live_server.store.put(predictions_csv, "owner.csv")
    created = ShareService(live_server.store).create(
        owner.id, name="Q3 review", view={"p_pos": 0.2, "models": ["alpha", "beta"],
                                          "pins": [{"model": "alpha", "threshold": 0.5}]})
    token = created.record.share_token
    read_only = created.record.dataset_id
    secrets = (owner.id, read_only)

    viewer = browser.new_context(viewport={"width": 1480, "height": 1250}).new_page()
    exchanges: list = []        # (request body, response) of every callback call
    viewer.on("response", lambda r: exchanges.append((r.request.post_data or "", r))
              if "_dash-update-component" in r.url else None)

    def settled_callbacks() -> str:
        """The callbacks' requests and replies since the last call (read before leaving the
        page: a body is gone once its page is)."""
        viewer.wait_for_load_state("networkidle")
        texts = [sent + "\n" + response.text() for sent, response in exchanges]
        assert all(response.ok for _, response in exchanges), \
            [(r.status, r.url) for _, r in exchanges if not r.ok]
        exchanges.clear()
        assert texts, "no callback was seen: the check would hold nothing"
        return "\n".join(texts)

    errors = open_page(live_server, viewer, f"/s/{token}")
    expect(viewer.locator("#dataset-info")).to_contain_text("owner.csv: 3,000 cases")
    expect(viewer.locator("#pin-0-tp")).not_to_have_text("")     # the owner's saved pin
    replies = settled_callbacks()
    held = _held(viewer)
    for secret in secrets:
        assert secret not in held, "the page holds a handle"
        assert secret not in replies, "a callback carries a handle"
    assert UNTICKED not in held and UNTICKED not in replies
    # Finding 1: the session's "current data set" is never the link's.
    assert viewer.evaluate("() => sessionStorage.getItem('current-data')") in (None, "null")
    assert f"share:{token}" in replies          # the reference the callbacks resolve

    # Finding 2: the nav offers the link's pages only, each under /s/<token>.
    offered = viewer.evaluate("""() => [...document.querySelectorAll("a.nav-link")]
        .filter((a) => a.offsetParent !== null).map((a) => [a.id, a.getAttribute("href")])""")
    assert sorted(i for i, _ in offered) == ["nav-choice", "nav-curves", "nav-explore",
                                             "nav-production", "nav-segments"]
    leaving = [h for h in _anchors(viewer) if not _inside(h, token)]
    assert leaving == [], leaving
    expect(viewer.locator("#nav-compare")).to_be_hidden()
    expect(viewer.locator("#nav-folds")).to_be_hidden()

    for nav, sub, loaded in (("#nav-curves", "/curves", "#curves-info"),
                             ("#nav-choice", "/choice", "#choice-info"),
                             ("#nav-segments", "/segments", "#segments-info"),
                             ("#nav-explore", "", "#dataset-info")):
        viewer.click(nav)
        viewer.wait_for_function("(p) => location.pathname === p", arg=f"/s/{token}{sub}")
        expect(viewer.locator(loaded)).to_contain_text("owner.csv", timeout=60_000)
        replies = settled_callbacks()
        held = _held(viewer)
        assert f"/s/{token}{sub}" in viewer.url and "data=" not in viewer.url
        for secret in secrets:
            assert secret not in held, (nav, "the page holds a handle")
            assert secret not in replies, (nav, "a callback carries a handle")
        assert UNTICKED not in replies, nav
        leaving = [h for h in _anchors(viewer) if not _inside(h, token)]
        assert leaving == [], (nav, leaving)
    assert errors == []
