"""Pinned thresholds on Explore: the server's exact points, then end to end in headless Chromium.

Every number the page shows for a pin is checked against numbers computed here by brute force
over the scores: the confusion matrix counted with ``score >= threshold`` and weighted to the
view's p(+) and volume, precision, recall, specificity, NPV, F1, the cost of each decision
summed over the cases, and the regret against the best of every threshold of every ticked
classifier. The pins then travel: the address bar, Compare and back, the report.
"""

from __future__ import annotations

import math
import re
import time

import numpy as np
import pytest
from playwright.sync_api import Page, expect

from costdash import OperatingCondition
from costdash.demo import DEMOS
from costdash.io import load_predictions
from costdash.pinned import pin_threshold
from costdash.roc import roc_of
from dashboard.pages.explore import pin_grid_result, pinned_result

from .test_e2e_view import CONDITIONS, READY, TICKED, address, download, open_view, upload

DEMO = load_predictions(DEMOS["breast-cancer"].path)
P, COST_FN, COST_FP, VOLUME = 0.02, 30.0, 1.5, 5000.0


def scores(name: str) -> tuple[np.ndarray, np.ndarray]:
    c = next(c for c in DEMO.scored if c.name == name)
    return c.y_true, c.score


def brute_force(name: str, threshold: float, cond: OperatingCondition,
                volume: float) -> dict[str, float]:
    """What a pin must show, from the scores alone."""
    def price(y, s, t):
        flagged = s >= t
        w_pos, w_neg = cond.p_pos * volume / y.sum(), (1 - cond.p_pos) * volume / (~y).sum()
        counts = {"tp": w_pos * np.sum(y & flagged), "fn": w_pos * np.sum(y & ~flagged),
                  "fp": w_neg * np.sum(~y & flagged), "tn": w_neg * np.sum(~y & ~flagged)}
        cost = (counts["tp"] * cond.cost_tp + counts["fn"] * cond.cost_fn
                + counts["fp"] * cond.cost_fp + counts["tn"] * cond.cost_tn) / volume
        return counts, cost

    # The best choice: every threshold of every ticked classifier, and flagging nothing.
    best = min(price(*scores(m), t)[1] for m in TICKED
               for t in [*np.unique(scores(m)[1]), np.inf])
    def ratio(a, b):
        return a / b if b > 0 else math.nan    # nothing flagged / everything flagged

    y, s = scores(name)
    c, cost = price(y, s, threshold)
    return {**c, "precision": ratio(c["tp"], c["tp"] + c["fp"]),
            "recall": ratio(c["tp"], c["tp"] + c["fn"]),
            "specificity": ratio(c["tn"], c["tn"] + c["fp"]),
            "npv": ratio(c["tn"], c["tn"] + c["fn"]),
            "f1": ratio(2 * c["tp"], 2 * c["tp"] + c["fp"] + c["fn"]), "cost": cost,
            "period-cost": cost * volume, "regret": (cost - best) * volume,
            "regret-share": 100 * (cost - best) / best,
            "test": (int(np.sum(y & (s >= threshold))), int(np.sum(~y & (s >= threshold))))}


# --- the server's part: exact points from the cached data, never scores -------------------------

def test_the_server_turns_pins_into_exact_points(services, monkeypatch):
    record = services.put_demo("breast-cancer")
    key = {"id": record.id, "models": list(TICKED)}
    state = {"id": record.id, "pins": [{"model": "gbm", "threshold": 0.5},
                                        {"model": "forest", "threshold": 0.3},
                                        {"model": "nope", "threshold": 1},
                                        {"model": "logreg", "threshold": 0.123456789}]}
    out = pinned_result(services, key, state)
    assert [o["model"] for o in out] == ["gbm", "forest", "nope", "logreg"]
    assert out[1]["error"] == "forest is not ticked under Classifiers."
    assert out[2]["error"] == "This data set has no classifier named 'nope'."
    for entry, (name, t) in ((out[0], ("gbm", 0.5)), (out[3], ("logreg", 0.123456789))):
        y, s = scores(name)
        flagged = s >= t
        assert (entry["tp"], entry["fp"], entry["fn"], entry["tn"]) == (
            np.sum(y & flagged), np.sum(~y & flagged), np.sum(y & ~flagged),
            np.sum(~y & ~flagged))
        assert entry["point_threshold"] == s[flagged].min()
        assert set(entry) == {"model", "threshold", "point_threshold", "fpr", "tpr", "tp", "fp",
                              "fn", "tn", "optimal_pc", "beats_pc"}          # no scores
    # Cached: the same answer without reading the data set again.
    monkeypatch.setattr(services.store, "get", lambda _id: pytest.fail("read the data again"))
    assert pinned_result(services, key, state) == out
    # Pins of another data set, or none: nothing.
    assert pinned_result(services, key, {**state, "id": "0" * 32}) == []
    assert pinned_result(services, None, state) == []
    bad = pinned_result(services, key, {"id": record.id, "pins": ["gbm"]})
    assert bad[0]["error"].startswith("Pinned thresholds must be")


def test_the_slider_steps_through_exact_points(services):
    record = services.put_demo("breast-cancer")
    grid = pin_grid_result(services, {"id": record.id, "models": None}, "gbm")
    assert grid["model"] == "gbm" and 2 < len(grid["threshold"]) <= 400
    assert grid["threshold"] == sorted(grid["threshold"])
    roc = roc_of(next(c for c in DEMO.scored if c.name == "gbm"))
    for t, f, tp in list(zip(grid["threshold"], grid["fpr"], grid["tpr"]))[::17]:
        pin = pin_threshold(roc, t)
        assert (pin.fpr, pin.tpr) == (f, tp)
    assert pin_grid_result(services, {"id": record.id}, "nope") is None


# --- in the browser ------------------------------------------------------------------------------

PIN_NUMBERS = ("tp", "fn", "fp", "tn", "precision", "recall", "specificity", "npv", "f1", "cost",
               "period-cost", "regret", "regret-share")


def number(text: str) -> float:
    return float(text.split()[0].replace(",", "").rstrip("%"))


def pin_card(page: Page, slot: int) -> dict[str, str]:
    ids = [*PIN_NUMBERS, "title", "test", "optimal", "beats", "verdict"]
    return {i: page.inner_text(f"#pin-{slot}-{i}") for i in ids}


def check_card(card: dict[str, str], expected: dict[str, float]) -> None:
    for key in PIN_NUMBERS:
        want = expected[key]
        if math.isnan(want):
            assert card[key] == "–", key
        elif key == "regret-share":      # a percentage: 0 decimals from 10%, else 1
            assert number(card[key]) == pytest.approx(want, abs=0.5 if want >= 10 else 0.05)
        elif key in ("tp", "fn", "fp", "tn"):   # 3 significant digits
            assert number(card[key]) == pytest.approx(want, rel=5e-3), key
        else:                                   # at least 4 significant digits
            assert number(card[key]) == pytest.approx(want, rel=1e-3), key
    tp, fp = expected["test"]
    assert card["test"].startswith(f"On the test set: TP {tp}, ")
    assert f", FP {fp}, " in card["test"]


def choose_model(page: Page, name: str) -> None:
    page.locator("#pin-model").click()
    page.locator(".dash-dropdown-option", has_text=name).click()
    expect(page.locator("#pin-slider [role=slider]")).to_have_attribute(
        "aria-label", f"Threshold of {name}")


def shapes(page: Page, graph: str) -> dict[str, dict]:
    return page.evaluate(f"""() => Object.fromEntries(
        document.querySelector('#{graph} .js-plotly-plot').layout.shapes
            .map((s) => [s.name, s]))""")


def wait_filled(page: Page, slot: int, title: str) -> None:
    expect(page.locator(f"#pin-{slot}-title")).to_contain_text(title)
    expect(page.locator(f"#pin-{slot}-precision")).not_to_have_text("–")


@pytest.mark.browser
def test_pin_thresholds_live_and_travelling(live_server, page: Page, screenshot_dir):
    data_id = upload(live_server, DEMOS["breast-cancer"].path)
    errors = open_view(live_server, page, data_id)
    cond = OperatingCondition(P, COST_FN, COST_FP)
    expect(page.locator("#pins-empty")).to_be_visible()
    expect(page.locator("#pin-0")).to_be_hidden()

    # Production: gbm at the 0.5 everybody starts with, typed.
    choose_model(page, "gbm")
    page.fill("#pin-threshold-input", "0.5")
    page.click("#pin-add")
    wait_filled(page, 0, "gbm, score ≥ 0.5")
    check_card(pin_card(page, 0), brute_force("gbm", 0.5, cond, VOLUME))
    expect(page.locator("#pins-empty")).to_be_hidden()

    # A candidate: logreg at a threshold picked with the keyboard on the slider.
    choose_model(page, "logreg")
    thumb = page.locator("#pin-slider [role=slider]")
    thumb.focus()
    for _ in range(12):
        thumb.press("ArrowRight")
    page.wait_for_function("() => { const t = document.querySelector('#pin-slider [role=slider]');"
                           " return (t.getAttribute('aria-valuetext') || '').endsWith("
                           "document.getElementById('pin-threshold-input').value); }")
    text = page.input_value("#pin-threshold-input")
    candidate = float(text)
    assert thumb.get_attribute("aria-valuetext") == f"score ≥ {text}"
    page.click("#pin-add")
    wait_filled(page, 1, f"logreg, score ≥ {text}")
    check_card(pin_card(page, 1), brute_force("logreg", candidate, cond, VOLUME))

    # In the address bar (colons and commas readable), drawn in both figures.
    pins = f"gbm:0.5,logreg:{text}"
    page.wait_for_function("([p]) => new URLSearchParams(location.search).get('pins') === p",
                           arg=[pins])
    assert f"pins={pins}" in page.evaluate("() => location.search")
    y, s = scores("gbm")
    fpr, tpr = np.sum(~y & (s >= 0.5)) / np.sum(~y), np.sum(y & (s >= 0.5)) / np.sum(y)
    roc, cost = shapes(page, "roc-graph"), shapes(page, "cost-graph")
    assert (roc["pin-0"]["xanchor"], roc["pin-0"]["yanchor"]) == pytest.approx((fpr, tpr))
    assert (cost["pin-0-line"]["y0"], cost["pin-0-line"]["y1"]) == pytest.approx((fpr, 1 - tpr))
    assert cost["pin-0"]["xanchor"] == pytest.approx(cond.pc)
    assert cost["pin-0"]["yanchor"] == pytest.approx(cond.normalized_cost(fpr, tpr))
    assert roc["pin-2"]["xanchor"] == roc["pin-3"]["xanchor"] == -9          # parked
    path = screenshot_dir / "explore-pinned.png"
    path.write_bytes(page.screenshot(full_page=True))

    # Live: other conditions reprice both pins at once (the regret against the new best).
    page.fill("#cost-fn-input", "60")
    page.press("#cost-fn-input", "Enter")
    cond = OperatingCondition(P, 60.0, COST_FP)
    want = brute_force("gbm", 0.5, cond, VOLUME)
    page.wait_for_function(
        "([r]) => Math.abs(parseFloat(document.getElementById('pin-0-regret').textContent"
        ".replace(/,/g, '')) - r) <= 1e-3 * Math.abs(r)", arg=[want["regret"]])
    check_card(pin_card(page, 0), want)
    check_card(pin_card(page, 1), brute_force("logreg", candidate, cond, VOLUME))
    before = [pin_card(page, 0), pin_card(page, 1)]

    # The report holds them, as a table.
    report = download(page, "#export-report")
    section = report[report.index('<section id="pinned">'):]
    section = section[:section.index("</section>")]
    assert re.search(r'<td class="name">gbm</td><td class="name">0\.5</td>', section)
    assert f'<td class="name">logreg</td><td class="name">{text}</td>' in section
    assert before[0]["regret"] in section and before[1]["precision"] in section

    # Compare and back: the pins travel with the view and come back as they were.
    page.click("#nav-compare")
    page.wait_for_function("() => location.pathname.endsWith('/compare')")
    time.sleep(0.3)
    assert address(page)["pins"] == pins
    assert "pins=" in page.get_attribute("#nav-explore", "href")
    page.click("#nav-explore")
    page.wait_for_function(READY)
    wait_filled(page, 1, f"logreg, score ≥ {text}")
    assert [pin_card(page, 0), pin_card(page, 1)] == before
    assert {k: address(page).get(k) for k in CONDITIONS} == {**CONDITIONS, "cost_fn": "60"}

    # Remove the production pin: the candidate moves up, the address follows.
    page.click("#pin-0-remove")
    wait_filled(page, 0, f"logreg, score ≥ {text}")
    expect(page.locator("#pin-1")).to_be_hidden()
    page.wait_for_function("([p]) => new URLSearchParams(location.search).get('pins') === p",
                           arg=[f"logreg:{text}"])
    assert errors == []


@pytest.mark.browser
def test_pins_from_a_link_and_their_limits(live_server, page: Page):
    data_id = upload(live_server, DEMOS["breast-cancer"].path)
    errors = open_view(live_server, page, data_id,
                       pins="gbm:0.5,forest:0.3,gbm:0.9,logreg:-1")
    wait_filled(page, 0, "gbm, score ≥ 0.5")
    # An unticked classifier's pin says so; flagging everything is priced like any threshold.
    expect(page.locator("#pin-1-error")).to_have_text("forest is not ticked under Classifiers.")
    expect(page.locator("#pin-1-body")).to_be_hidden()
    wait_filled(page, 3, "logreg, score ≥ -1")
    card = pin_card(page, 3)
    check_card(card, brute_force("logreg", -1.0, OperatingCondition(P, COST_FN, COST_FP), VOLUME))
    assert "flags nothing" not in card["title"]
    # A fifth pin (Enter in the box pins too) is refused with the reason; the four stay.
    choose_model(page, "gbm")
    page.fill("#pin-threshold-input", "0.7")
    page.press("#pin-threshold-input", "Enter")
    expect(page.locator("#pin-message")).to_have_text(
        "At most 4 pinned thresholds: remove one first.")
    # Another data set: the pins named the old one's classifiers and go.
    page.click("#demo-rare-digit")
    expect(page.locator("#pin-0")).to_be_hidden()
    page.wait_for_function("() => !new URLSearchParams(location.search).has('pins')")
    assert errors == []
