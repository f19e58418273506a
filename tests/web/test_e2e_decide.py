"""The full cost/benefit matrix and the decision export, end to end in headless Chromium."""

from __future__ import annotations

import json

import pytest
from playwright.sync_api import Page, expect

from costdash import OperatingCondition, analyze
from costdash.decision import decide, decision_to_dict
from costdash.demo import DEMOS
from costdash.io import load_predictions

from .test_e2e_view import READY, download, open_view, upload

pytestmark = pytest.mark.browser


def number(page: Page, id_: str) -> float:
    return float(page.inner_text(f"#{id_}").split()[0])


def test_benefits_shift_the_money_and_decide_through_the_differences(live_server, page: Page):
    data_id = upload(live_server, DEMOS["breast-cancer"].path)
    errors = open_view(live_server, page, data_id, cost_tp="-10")
    dataset = load_predictions(DEMOS["breast-cancer"].path, models=["logreg", "gbm"])
    with_gain = analyze(dataset, OperatingCondition(0.02, 30.0, 1.5, cost_tp=-10.0))
    differences = analyze(dataset, OperatingCondition(0.02, 40.0, 1.5))
    page.wait_for_function(
        "([c]) => Math.abs(parseFloat(document.getElementById('expected-cost').textContent)"
        " - c) < 1e-3", arg=[with_gain.operating_point.expected_cost])
    # The choice is that of the differences; the money adds p(+)·C(+|+) = 0.02·-10.
    assert page.inner_text("#chosen-classifier") == \
        differences.operating_point.vertex.classifier
    assert number(page, "pc-value") == pytest.approx(differences.operating_point.condition.pc,
                                                     rel=1e-3)
    assert number(page, "expected-cost") == pytest.approx(
        differences.operating_point.expected_cost - 0.2, rel=1e-3)
    # A gain dressed as a cost is refused in words, and never reaches the address bar.
    page.fill("#cost-tp-input", "50")
    page.press("#cost-tp-input", "Enter")
    expect(page.locator("#conditions-error")).to_have_text(
        "C(+|+) must be below C(−|+) (an error must cost more than the correct decision, or "
        "every case would best be decided wrongly); got C(+|+) = 50, C(−|+) = 30.")
    expect(page.locator("#pc-value")).to_have_text("–")
    assert "cost_tp=-10" in page.evaluate("() => location.search")
    page.fill("#cost-tp-input", "-10")
    page.press("#cost-tp-input", "Enter")
    page.wait_for_function(READY)

    decision = json.loads(download(page, "#export-decision"))
    assert decision == json.loads(json.dumps(decision_to_dict(decide(with_gain))))
    assert errors == []
