"""The Threshold choice page end to end in headless Chromium: opened from Explore with the view's
conditions, ticked classifiers and a sensitivity box; the minimax-regret and Bayes choices it
shows against :func:`costdash.robust.robust_choice` computed here; the curves it draws against
the core; its own controls recorded in the view, which survives navigation.

A real ``python app.py`` (conftest's ``live_server``); the data set is stored through the upload
API, as the page's own upload does.
"""

from __future__ import annotations

import time

import pytest
from playwright.sync_api import Page

from costdash import OperatingCondition, analyze
from costdash.choice_curves import threshold_choice
from costdash.demo import DEMOS
from costdash.io import load_predictions
from costdash.robust import ConditionBox, robust_choice
from costdash.view import number_text

from .test_e2e_curves import trace
from .test_e2e_view import CONDITIONS, READY, TICKED, address, open_view, upload

pytestmark = pytest.mark.browser

P, C_FN, C_FP, VOLUME = 0.02, 30.0, 1.5, 5000.0       # CONDITIONS of test_e2e_view
BOX = {"sens_p": "0.01,0.05", "sens_fn": "20,60"}
CHOICE_READY = ("() => { const el = document.getElementById('choice-minimax');"
                " return el !== null && el.textContent !== ''; }")


def choice_text(classifier: str, threshold: float | None) -> str:
    return f"{classifier} at score ≥ {number_text(threshold)}"


def test_choice_from_explore_shows_the_cores_robust_choice(live_server, page: Page,
                                                           screenshot_dir):
    path = DEMOS["breast-cancer"].path
    data_id = upload(live_server, path)
    errors = open_view(live_server, page, data_id, **BOX)

    page.click("#nav-choice")
    page.wait_for_function("() => location.pathname.endsWith('/choice')")
    page.wait_for_function(CHOICE_READY)

    # The robust choices of the core, for the ticked classifiers over the box, per 5,000 cases.
    dataset = load_predictions(path, models=list(TICKED))
    analysis = analyze(dataset, OperatingCondition(P, C_FN, C_FP))
    box = ConditionBox.around(analysis.operating_point.condition, (0.01, 0.05), (20.0, 60.0))
    robust = robust_choice(analysis, box, volume=VOLUME)
    mm, bayes = robust.minimax_regret, robust.bayes
    assert page.inner_text("#choice-minimax") == choice_text(mm.classifier, mm.threshold)
    assert page.inner_text("#choice-minimax-regret") == f"{mm.value:,.2f} USD"
    assert page.inner_text("#choice-bayes") == choice_text(bayes.classifier, bayes.threshold)
    assert page.inner_text("#choice-bayes-cost") == f"{bayes.value:,.2f} USD"
    worst = robust.worst_condition
    assert f"p(+) = {worst.p_pos:g}, C(−|+) = {worst.cost_fn:g}" in \
        page.inner_text("#choice-worst")
    assert ("worth it" in page.inner_text("#choice-switching")) == robust.worth_switching

    # Cost space: gbm's (panel 1) score-driven curve is the core's Brier curve, point for point,
    # and the decision curves mark the pₜ of the costs, C(+|-) / (C(-|+) + C(+|-)).
    gbm = threshold_choice(roc=analysis.classifier("gbm").roc)
    drawn = trace(page, "choice-cost-graph", "score_driven-1")
    assert drawn["x"] == pytest.approx(gbm.score_driven.pc.tolist(), abs=0)
    assert drawn["y"] == pytest.approx(gbm.score_driven.cost.tolist(), abs=0)
    assert page.inner_text("#choice-pt") == f"{C_FP / (C_FN + C_FP):.4g}"
    assert page.inner_text("#choice-pc") == f"{analysis.operating_point.condition.pc:.4g}"
    screenshot_dir.joinpath("choice.png").write_bytes(page.screenshot(full_page=True))

    # The page's own control is a view field: a Beta over PC(+) goes to the address.
    page.fill("#choice-beta-a", "2")
    page.press("#choice-beta-a", "Enter")
    page.wait_for_function("() => location.search.includes('beta_a=2')")

    # The view survives navigation: Explore gets it back whole, and this page again from there.
    page.click("#nav-explore")
    page.wait_for_function(READY)
    time.sleep(0.3)
    carried = address(page)
    for key, value in {**CONDITIONS, **BOX, "beta_a": "2"}.items():
        assert carried.get(key) == value, (key, carried)
    page.click("#nav-choice")
    page.wait_for_function("() => location.pathname.endsWith('/choice')")
    page.wait_for_function(CHOICE_READY)
    assert page.input_value("#choice-beta-a") == "2"
    assert page.inner_text("#choice-minimax") == choice_text(mm.classifier, mm.threshold)
    assert "Beta(2, 1)" in page.inner_text("#choice-conditions")
    assert errors == []


def test_390_px_wide_nothing_overflows_the_choice_page(live_server, browser):
    data_id = upload(live_server, DEMOS["breast-cancer"].path)
    page = browser.new_page(viewport={"width": 390, "height": 844})
    query = "&".join(f"{k}={v}" for k, v in {"data": data_id, **CONDITIONS, **BOX}.items())
    page.goto(f"{live_server.url}/choice?{query}")
    page.wait_for_function(CHOICE_READY)
    page.wait_for_timeout(1000)
    assert page.evaluate("document.documentElement.scrollWidth") <= 390
    # The legend sits under the x axes' titles, never on them.
    for graph in page.locator(".js-plotly-plot").all():
        boxes = graph.evaluate("""(gd) => {
            const legend = gd.querySelector('.legend');
            const titles = Array.from(gd.querySelectorAll('.g-xtitle, [class^="g-x"][class$="title"]'));
            if (!legend || !titles.length) return null;
            return [Math.max(...titles.map((t) => t.getBoundingClientRect().bottom)),
                    legend.getBoundingClientRect().top];
        }""")
        if boxes:
            assert boxes[0] <= boxes[1] + 0.5, boxes
    page.screenshot(path=str(live_server.log.parent / "choice-390.png"), full_page=True)
    page.close()
