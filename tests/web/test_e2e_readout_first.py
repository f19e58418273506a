"""Explore's readout comes with the view, before the server's follow-ups (issue 23), in
headless Chromium.

The sensitivity ranges, constraints, pins, single thresholds and intervals are answered by
server callbacks after the view; the readout (chosen classifier, threshold, expected cost, the
sentence) needs only the view and the conditions. Here the follow-ups' requests are held back:
the readout must already show the core's choice and cost while they wait, their parts must not
show anything yet (nor anything of another data set), and once they are let through the page
must show exactly what a page that never waited shows.
"""

from __future__ import annotations

import json
import re
import time

import pytest
from playwright.sync_api import Page, Route, expect

from costdash import OperatingCondition, analyze
from costdash.conditions import default_condition
from costdash.criteria import sensitivity
from costdash.demo import DEMOS
from costdash.io import load_predictions
from dashboard import ids

from .test_e2e_explore import choose_file, open_page, screenshot

pytestmark = pytest.mark.browser

CALLBACKS = re.compile(r"/_dash-update-component(\?|$)")
FOLLOW_UPS = (ids.SENSITIVITY_STORE, ids.CONSTRAINT_STORE, ids.PINS_STORE,
              ids.SINGLE_THRESHOLD_STORE, ids.INTERVAL_STORE)
SHOWN = (ids.CHOSEN_CLASSIFIER, ids.CHOSEN_THRESHOLD, ids.EXPECTED_COST, ids.PERIOD_COST,
         ids.NORMALIZED_COST, ids.PC_VALUE, ids.SENTENCE, "sensitivity-readout",
         "constraint-readout", "expected-cost-interval", "period-cost-interval",
         "cost-interval-note", "fixed-table-body", "pin-0-cost-interval",
         "pin-0-regret-interval", "roc-caption", "cost-caption")
"""Everything the readout and the follow-ups write, by element id."""

URL = ("/explore?data={id}&p_pos=0.05&cost_fn=20&cost_fp=1&volume=1000&unit=EUR"
       "&sens_p=0.02,0.1&sens_fn=10,40&sens_fp=1,1&max_fpr=0.1&pins=gbm:0.5")


class Holder:
    """Holds back the callback requests that answer a follow-up store; lets the rest through."""

    def __init__(self) -> None:
        self.held: list[tuple[Route, str]] = []
        self.holding = True

    def __call__(self, route: Route) -> None:
        outputs = self.outputs(route)
        if self.holding and any(f"{store}.data" in outputs for store in FOLLOW_UPS):
            self.held.append((route, outputs))
        else:
            route.continue_()

    @staticmethod
    def outputs(route: Route) -> str:
        try:
            return str(json.loads(route.request.post_data or "{}").get("output", ""))
        except ValueError:
            return ""

    def release(self) -> None:
        self.holding = False
        for route, _ in self.held:
            route.continue_()
        self.held.clear()

    def names(self) -> set[str]:
        return {store for _, out in self.held for store in FOLLOW_UPS if f"{store}.data" in out}


def shown(page: Page) -> dict[str, str]:
    return page.evaluate("(ids) => Object.fromEntries(ids.map((id) => [id, "
                         "(document.getElementById(id) || {}).textContent]))", list(SHOWN))


def wait_held(page: Page, holder: Holder, wanted: set[str]) -> None:
    deadline = time.monotonic() + 30
    while not wanted <= holder.names():
        assert time.monotonic() < deadline, f"never asked: {wanted - holder.names()}"
        page.wait_for_timeout(50)


def expect_readout(page: Page, dataset, p: float, cost_fn: float, volume: float | None,
                   unit: str = "") -> None:
    op = analyze(dataset, OperatingCondition(p, cost_fn, 1.0)).operating_point
    expect(page.locator(f"#{ids.CHOSEN_CLASSIFIER}")).to_have_text(op.vertex.classifier,
                                                                   timeout=30_000)
    cost = page.inner_text(f"#{ids.EXPECTED_COST}").split()[0]
    assert float(cost) == pytest.approx(op.expected_cost, rel=1e-3)
    per = "per case" if volume is None else f"per {volume:,.0f} cases"
    expect(page.locator(f"#{ids.SENTENCE}")).to_contain_text(
        f"At these costs, use {op.vertex.classifier} with threshold")
    expect(page.locator(f"#{ids.SENTENCE}")).to_contain_text(per)


@pytest.mark.slow
def test_readout_before_the_follow_ups_then_the_same_page_as_without_waiting(
        live_server, page: Page, screenshot_dir):
    record = live_server.store.put(DEMOS["breast-cancer"].path, "breast-cancer.csv")
    url = URL.format(id=record.id)
    dataset = load_predictions(DEMOS["breast-cancer"].path)

    holder = Holder()
    page.route(CALLBACKS, holder)
    errors = open_page(live_server, page, url)
    wait_held(page, holder, {ids.SENSITIVITY_STORE, ids.CONSTRAINT_STORE, ids.PINS_STORE})
    expect_readout(page, dataset, 0.05, 20.0, 1000)
    # Still held: the readout did not wait for them, and their parts show nothing yet.
    assert {ids.SENSITIVITY_STORE, ids.CONSTRAINT_STORE, ids.PINS_STORE} <= holder.names()
    waiting = shown(page)
    assert waiting["sensitivity-readout"] == ""
    assert waiting["constraint-readout"] == ""
    assert waiting["pin-0-cost-interval"] in ("", None)
    assert waiting["expected-cost-interval"] == ""
    # The link's pin is on its way: not "none yet".
    expect(page.locator("#pins-empty")).to_be_hidden()
    screenshot(page, screenshot_dir / "explore-readout-first.png")

    holder.release()
    result = sensitivity(analyze(dataset).hull, (0.02, 0.1), (10, 40), (1, 1))
    expect(page.locator("#sensitivity-readout")).to_contain_text(
        "optimal somewhere in them: " + ", ".join(result.classifiers))
    expect(page.locator("#constraint-readout")).to_contain_text("Neyman–Pearson (FPR ≤ 0.100)")
    expect(page.locator("#constraint-readout .single")).to_have_count(1)
    expect(page.locator("#pin-0-cost-interval")).to_contain_text("CI")
    expect(page.locator("#expected-cost-interval")).to_contain_text("range")
    expect(page.locator("#pin-0")).to_be_visible()
    expect(page.locator("#pins-empty")).to_be_hidden()
    page.wait_for_timeout(500)
    after = shown(page)
    # The readout drawn first is the readout that stays.
    for id_ in (ids.CHOSEN_CLASSIFIER, ids.CHOSEN_THRESHOLD, ids.EXPECTED_COST,
                ids.PERIOD_COST, ids.SENTENCE):
        assert after[id_] == waiting[id_], id_

    # A page that never waited shows exactly the same, follow-ups and all.
    other = page.context.new_page()
    try:
        more_errors = open_page(live_server, other, url)
        expect(other.locator("#pin-0-cost-interval")).to_contain_text("CI", timeout=30_000)
        expect(other.locator("#constraint-readout .single")).to_have_count(1)
        expect(other.locator("#sensitivity-readout")).to_contain_text("optimal somewhere")
        other.wait_for_timeout(500)
        assert shown(other) == after
    finally:
        other.close()
    assert errors == [] and more_errors == []


@pytest.mark.slow
def test_an_upload_shows_its_readout_while_the_follow_ups_wait(live_server, page: Page,
                                                               predictions_csv):
    """A fresh upload over an open data set with a constraint and sensitivity on: the new data
    set's readout while the follow-ups are held, none of the old data set's follow-ups beside
    it, then the new data set's follow-ups."""
    record = live_server.store.put(DEMOS["breast-cancer"].path, "breast-cancer.csv")
    errors = open_page(live_server, page, URL.format(id=record.id).replace("&pins=gbm:0.5", ""))
    expect(page.locator("#constraint-readout .single")).to_have_count(1, timeout=30_000)
    expect(page.locator("#sensitivity-readout")).to_contain_text("optimal somewhere")

    holder = Holder()
    page.route(CALLBACKS, holder)
    choose_file(page, predictions_csv)
    expect(page.locator("#dataset-info")).to_contain_text("predictions.csv: 3,000 cases",
                                                          timeout=30_000)
    dataset = load_predictions(predictions_csv)
    wait_held(page, holder, {ids.SENSITIVITY_STORE, ids.CONSTRAINT_STORE})
    # The new data set brings its p(+); the costs and volume stay.
    p = default_condition(dataset.prevalence).p_pos
    expect(page.locator(f"#{ids.P_POS_INPUT}")).to_have_value(str(p))
    expect_readout(page, dataset, p, 20.0, 1000)
    assert {ids.SENSITIVITY_STORE, ids.CONSTRAINT_STORE} <= holder.names()
    assert page.inner_text("#sensitivity-readout") == ""
    assert page.inner_text("#constraint-readout") == ""

    holder.release()
    expect(page.locator("#constraint-readout .single")).to_have_count(1, timeout=30_000)
    result = sensitivity(analyze(dataset).hull, (0.02, 0.1), (10, 40), (1, 1))
    expect(page.locator("#sensitivity-readout")).to_contain_text(
        "optimal somewhere in them: " + ", ".join(result.classifiers))
    expect_readout(page, dataset, p, 20.0, 1000)
    assert errors == []
