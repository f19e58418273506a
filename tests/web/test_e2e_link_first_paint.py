"""A read link's first paint carries the numbers (issue 23), in headless Chromium.

Every Dash callback is held back, so what is on screen is the page's HTML alone (the link
preview, dashboard/link_preview.py): it must show the decision sentence and the readouts
(chosen classifier, threshold, expected cost), and once the callbacks are let through the live
page must show the very same text (both come from assets/explore-readouts.js's ``decision()``
on the same view and conditions), and the core's choice.
"""

from __future__ import annotations

import re
import time

import pytest
import requests
from playwright.sync_api import Page, expect

from costdash import OperatingCondition, analyze
from costdash.io import load_predictions
from dashboard import ids

pytestmark = pytest.mark.browser

CALLBACKS = re.compile(r"/_dash-update-component(\?|$)")
READOUTS = (ids.CHOSEN_CLASSIFIER, ids.CHOSEN_THRESHOLD, ids.EXPECTED_COST, ids.PERIOD_COST)


def _shown(page: Page, prefix: str) -> dict[str, str]:
    return {id_: page.inner_text(f"#{prefix}{id_}").strip() for id_ in READOUTS}


@pytest.mark.slow
def test_the_first_paint_shows_the_decision_the_live_page_then_shows(live_server, page: Page,
                                                                     predictions_csv):
    reply = requests.post(live_server.url + "/api/v1/analyses", timeout=60, files={
        "file": ("preds.csv", predictions_csv.read_bytes())},
        data={"name": "Q3 review", "p_pos": "0.1", "cost_fn": "5", "volume": "20000",
              "unit": "EUR"})
    assert reply.status_code == 201, reply.text
    link = reply.json()["url"].removeprefix(live_server.url)

    held = []
    page.route(CALLBACKS, lambda route: held.append(route))   # no callback is answered
    page.goto(live_server.url + link)
    page.wait_for_function("() => document.documentElement.dataset.linkPreviewDecision"
                           " === 'shown'", timeout=30_000)
    first_sentence = page.inner_text("#link-preview-sentence").strip()
    first = _shown(page, "link-preview-")
    assert page.evaluate("() => document.getElementById('chosen-classifier') === null || "
                         "document.getElementById('chosen-classifier').textContent === '–'")
    op = analyze(load_predictions(predictions_csv),
                 OperatingCondition(0.1, 5.0, 1.0)).operating_point
    assert first[ids.CHOSEN_CLASSIFIER] == op.vertex.classifier
    assert first_sentence.startswith(f"At these costs, use {op.vertex.classifier} with threshold")
    assert "EUR per 20,000 cases" in first_sentence
    assert float(first[ids.EXPECTED_COST].split()[0]) == pytest.approx(op.expected_cost, rel=1e-3)
    assert first[ids.PERIOD_COST].endswith("EUR")
    page.screenshot(path=str(live_server.log.parent / "first-paint.png"))

    # Let the callbacks through: the live page takes over and says the same.
    deadline = time.monotonic() + 30
    while not held:
        assert time.monotonic() < deadline, "the page never called back"
        page.wait_for_timeout(50)
    for route in held:
        route.continue_()
    page.unroute(CALLBACKS)
    page.wait_for_function("() => document.documentElement.dataset.linkPreview === 'live'",
                           timeout=30_000)
    expect(page.locator("#chosen-classifier")).to_have_text(first[ids.CHOSEN_CLASSIFIER])
    assert _shown(page, "") == first
    assert page.inner_text(f"#{ids.SENTENCE}").strip() == first_sentence
