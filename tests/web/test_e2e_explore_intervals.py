"""Explore's intervals beside the headline costs in headless Chromium: shown with the readouts,
moving with the slider in the same paint, at the level the selector puts into the view, and
legible at 1440 and 390 px.

Every number is checked against one computed here from the scores (counts by brute force,
Clopper-Pearson from scipy.stats.beta, the gamma limit from scipy.stats.gamma, MOVER written
out: tests/web/test_explore_intervals.py's oracles).
"""

from __future__ import annotations

import re

import numpy as np
import pytest
from playwright.sync_api import Page, expect

from costdash import OperatingCondition, analyze
from costdash.demo import DEMOS
from costdash.io import load_predictions

from .test_e2e_explore import open_page, screenshot
from .test_explore_intervals import cost_range, regret_range, scores

pytestmark = pytest.mark.browser

TICKED = ["logreg", "gbm"]
DATASET = load_predictions(DEMOS["breast-cancer"].path, models=TICKED)
VOLUME = 5000.0
URL = ("/explore?data={id}&p_pos=0.02&cost_fn=30&cost_fp=1.5&volume=5000&unit=USD"
       "&models=logreg,gbm&pins=gbm:0.5")
NUM = r"-?[\d,]*\.?\d+(?:e-?\d+)?"


def numbers(text: str) -> list[float]:
    """The two ends of "90% CI 308 to 609 USD" or "range 114 to 317 USD"."""
    text = re.sub(r"^.*?(CI|range)\s", "", text)
    return [float(v.replace(",", "")) for v in re.findall(NUM, text)]


def expected(p: float, level: float) -> dict[str, list[float]]:
    """The chosen range per period, the pin's interval per period and its regret range."""
    cond = OperatingCondition(p, 30.0, 1.5)
    op = analyze(DATASET, cond).operating_point
    y, s = scores(op.vertex.classifier)
    best = s >= op.vertex.threshold
    n_pos, n_neg = int(y.sum()), int((~y).sum())
    chosen = cost_range(int(np.sum(y & ~best)), n_pos, int(np.sum(~y & best)), n_neg, level,
                        cond)
    yg, sg = scores("gbm")
    flag = sg >= 0.5
    pin = cost_range(int(np.sum(yg & ~flag)), n_pos, int(np.sum(~yg & flag)), n_neg, level, cond)
    _, r_low, r_high = regret_range(yg, flag, best, level, cond)
    return {"period-cost-interval": [v * VOLUME for v in chosen],
            "pin-0-period-cost-interval": [v * VOLUME for v in pin],
            "pin-0-regret-interval": [r_low * VOLUME, r_high * VOLUME]}


def shown(page: Page) -> dict[str, str]:
    return page.evaluate("""() => Object.fromEntries(['period-cost-interval',
        'expected-cost-interval', 'cost-interval-note', 'pin-0-period-cost-interval',
        'pin-0-cost-interval', 'pin-0-regret-interval', 'pin-0-interval-note', 'p-pos-input',
        'expected-cost'].map((id) => {
            const el = document.getElementById(id);
            return [id, el ? (el.value !== undefined && el.tagName === 'INPUT' ? el.value
                                                                               : el.innerText)
                       : null];
        }))""")


def assert_intervals(page: Page, p: float, level: float) -> dict[str, str]:
    texts = shown(page)
    for id_, want in expected(p, level).items():
        # Three significant digits on the page.
        assert numbers(texts[id_]) == pytest.approx(want, rel=6e-3), (id_, texts[id_])
    return texts


def test_intervals_are_shown_move_with_the_slider_and_follow_the_level(
        live_server, page: Page, screenshot_dir):
    record = live_server.store.put(DEMOS["breast-cancer"].path, "breast-cancer.csv")
    errors = open_page(live_server, page, URL.format(id=record.id))
    expect(page.locator("#period-cost-interval")).to_contain_text("range", timeout=30_000)
    expect(page.locator("#pin-0-period-cost-interval")).to_contain_text("90% CI")
    texts = assert_intervals(page, 0.02, 0.9)
    # What each answers, in words; a level only where it is earned.
    assert "without a confidence level" in texts["cost-interval-note"]
    assert "picked as the best on these same cases" in texts["cost-interval-note"]
    assert "%" not in texts["period-cost-interval"]
    assert "if it was fixed before these cases were scored" in texts["pin-0-interval-note"]
    assert "without a level" in texts["pin-0-interval-note"]
    assert "%" not in texts["pin-0-regret-interval"]

    # The p(+) slider: 30 quick steps; the interval is repainted with the readout (one render),
    # so whenever the readout shows new conditions the interval is theirs.
    thumb = page.locator("#p-pos-slider [role=slider]")
    thumb.focus()
    for _ in range(30):
        thumb.press("ArrowRight")
    # 30 steps of 0.01 on the log10 scale (the first may snap to the step grid)
    page.wait_for_function("() => Math.log10(window.costdashView.get().p_pos) > "
                           "Math.log10(0.02) + 0.28", timeout=20_000)
    page.wait_for_timeout(400)
    p = page.evaluate("window.costdashView.get().p_pos")
    after = assert_intervals(page, p, 0.9)
    assert after["period-cost-interval"] != texts["period-cost-interval"]
    assert after["pin-0-period-cost-interval"] != texts["pin-0-period-cost-interval"]

    # The level: into the view (address bar), and every interval at it.
    page.locator("#interval-level").click()
    page.locator(".dash-dropdown-option", has_text="95%").click()
    expect(page).to_have_url(re.compile(r"level=0\.95"))
    expect(page.locator("#pin-0-period-cost-interval")).to_contain_text("95% CI")
    assert_intervals(page, p, 0.95)
    assert "95%" in shown(page)["cost-interval-note"]
    page.wait_for_timeout(300)
    screenshot(page, screenshot_dir / "explore-intervals-1440.png")

    # A link of this view opens with the same intervals (the level travels in the view).
    page.goto(page.url)
    expect(page.locator("#pin-0-period-cost-interval")).to_contain_text("95% CI",
                                                                         timeout=30_000)
    assert_intervals(page, p, 0.95)
    assert errors == []


def test_intervals_at_390_px(live_server, page: Page, screenshot_dir):
    record = live_server.store.put(DEMOS["breast-cancer"].path, "breast-cancer.csv")
    page.set_viewport_size({"width": 390, "height": 844})
    errors = open_page(live_server, page, URL.format(id=record.id))
    expect(page.locator("#pin-0-period-cost-interval")).to_contain_text("90% CI",
                                                                         timeout=30_000)
    assert_intervals(page, 0.02, 0.9)
    # Nothing wider than the screen: each interval wraps inside its card.
    for id_ in ("period-cost-interval", "cost-interval-note", "pin-0-period-cost-interval",
                "pin-0-regret-interval", "pin-0-interval-note"):
        box = page.locator(f"#{id_}").bounding_box()
        assert box["x"] >= 0 and box["x"] + box["width"] <= 390, (id_, box)
    page.wait_for_timeout(300)
    screenshot(page, screenshot_dir / "explore-intervals-390.png")
    assert errors == []
