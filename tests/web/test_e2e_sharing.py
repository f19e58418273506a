"""Sharing in headless Chromium: the uploader saves a view, a stakeholder opens the read-only
link, moves a slider (what-if), and the uploader deletes it through the manage link."""

from __future__ import annotations

import pytest
from playwright.sync_api import Page, expect

from costdash.io import load_predictions

from .test_e2e_explore import assert_readouts, choose_file, open_page, screenshot, set_conditions

pytestmark = pytest.mark.browser


def test_share_open_read_only_and_delete(live_server, page: Page, browser, predictions_csv,
                                         screenshot_dir):
    errors = open_page(live_server, page)
    choose_file(page, predictions_csv)
    expect(page.locator("#dataset-info")).to_contain_text("predictions.csv: 3,000 cases")
    dataset = load_predictions(predictions_csv)
    set_conditions(page, 0.05, 20.0, 1.0)
    assert_readouts(page, dataset, 0.05, 20.0, 1.0)

    page.fill("#share-name", "Churn model <b>review</b>")
    page.click("#share-button")
    share = page.locator("#share-url")
    expect(share).to_contain_text("/s/")
    share_url = share.inner_text()
    manage_url = page.locator("#manage-url").inner_text()
    manage_token = manage_url.rsplit("/", 1)[1]
    screenshot(page, screenshot_dir / "explore-shared.png")

    # A stakeholder, in a fresh browser context (no session state of the uploader's).
    viewer = browser.new_context(viewport={"width": 1480, "height": 1250}).new_page()
    viewer_errors = open_page(live_server, viewer, share_url.removeprefix(live_server.url))
    expect(viewer.locator("#shared-banner")).to_contain_text("Churn model <b>review</b>")
    assert_readouts(viewer, dataset, 0.05, 20.0, 1.0)
    expect(viewer.locator("#share-button")).to_have_count(0)
    expect(viewer.locator("#upload")).to_be_hidden()
    assert manage_token not in viewer.content()
    screenshot(viewer, screenshot_dir / "shared-read-only.png")

    # What-if: the viewer's change updates the plots but saves nothing.
    set_conditions(viewer, 0.3, 1.0, 1.0)
    assert_readouts(viewer, dataset, 0.3, 1.0, 1.0)
    # The address bar keeps the link and adds the what-if, so it can be sent back.
    viewer.wait_for_function("() => new URLSearchParams(location.search).get('p_pos') === '0.3'")
    what_if = viewer.evaluate("() => location.href")
    assert what_if.startswith(share_url + "?") and "data=" not in what_if
    again = viewer.context.new_page()
    again.goto(share_url)
    assert_readouts(again, dataset, 0.05, 20.0, 1.0)
    # While the link lives, interacting checks it and says nothing.
    viewer.wait_for_function("() => window.costdashSharedLink !== undefined")
    with viewer.expect_response(lambda r: "_dash-update-component" in r.url):
        viewer.evaluate("() => window.costdashSharedLink.check()")
    expect(viewer.locator("#shared-gone")).to_be_hidden()

    # The uploader deletes it; the link then answers with the friendly 404 page.
    page.goto(manage_url)
    expect(page.locator("#share-url")).to_have_text(share_url)
    page.on("dialog", lambda d: d.accept())
    page.click("#delete-button")
    expect(page.locator("h1")).to_have_text("Deleted")
    response = again.goto(share_url)
    assert response.status == 404
    expect(again.locator("h1")).to_have_text("This link leads nowhere")
    screenshot(again, screenshot_dir / "shared-deleted.png")
    # The viewer's tab, open all along, says so at its next interaction (issue 24), instead of
    # a failing callback's "upload the file again".
    expect(viewer.locator("#shared-gone")).to_be_hidden()
    viewer.click("#models-input input[type=checkbox] >> nth=1")
    expect(viewer.locator("#shared-gone")).to_be_visible()
    expect(viewer.locator("#shared-gone")).to_contain_text(
        "This link was deleted or has expired")
    expect(viewer.locator("#upload-error")).to_be_hidden()
    screenshot(viewer, screenshot_dir / "shared-gone-while-open.png")
    assert errors == [] and viewer_errors == []
