"""The Folds and Multiclass pages in headless Chromium (Playwright + dash's ``dash_thread_server``).

What the pages show is checked against the core: the cost-space average against
:func:`costdash.folds.fold_averages`, the spread readout against :func:`fold_spread`, and the
BCOST / BDELTACOST readouts against :func:`costdash.multiclass.bcost` / ``bdeltacost`` called
with the same seed on the same (edited) cost matrix.
"""

from __future__ import annotations

import re

import numpy as np
import pytest
from playwright.sync_api import Page, expect

from costdash.conditions import OperatingCondition
from costdash.demo import load_demo
from costdash.folds import dataset_fold_averages, fold_spread
from costdash.multiclass import (bcost, bdeltacost, confusion3d_from_labels,
                                 confusion_from_labels, load_cost_matrix,
                                 load_label_predictions)
from dashboard.pages.folds import _fmt
from dashboard.pages.multiclass import DEMO_COSTS_NAME, demo_path, fmt

pytestmark = pytest.mark.browser


def open_page(server, app, page: Page, path: str) -> list[str]:
    errors: list[str] = []
    page.on("console", lambda m: errors.append(m.text) if m.type == "error" else None)
    page.on("pageerror", lambda e: errors.append(str(e)))
    server(app)
    page.goto(server.url + path)
    return errors


def trace_array(page: Page, graph: str, uid: str, axis: str) -> list[float]:
    return page.evaluate(
        """([graph, uid, axis]) => {
            // _fullData holds the arrays decoded (data keeps the base64 typed-array specs).
            const gd = document.querySelector('#' + graph + ' .js-plotly-plot');
            return Array.from(gd._fullData.find(t => t.uid === uid)[axis]);
        }""", [graph, uid, axis])


def wait_trace(page: Page, graph: str, uid: str) -> None:
    page.wait_for_function(
        """([graph, uid]) => {
            const gd = document.querySelector('#' + graph + ' .js-plotly-plot');
            return !!(gd && gd._fullData && gd._fullData.some(t => t.uid === uid));
        }""", arg=[graph, uid], timeout=30_000)


def save_screenshot(page: Page, screenshot_dir, name: str) -> None:
    """Full-page PNG under test-output/screenshots.

    Written here rather than with ``screenshot(path=...)``: Playwright writes that file from an
    asyncio executor thread, and dash's ThreadedRunner, when it stops a test's server, raises
    SystemExit in every thread started after the server thread -- that executor worker
    included -- so the next test's ``screenshot(path=...)`` would wait forever.
    """
    page.evaluate("document.activeElement && document.activeElement.blur()")
    page.mouse.move(0, 0)
    page.wait_for_timeout(300)  # let plotly finish its transitions
    (screenshot_dir / name).write_bytes(page.screenshot(full_page=True))


def test_folds_average_trace_spread_and_url(dash_thread_server, web_app, page: Page,
                                           screenshot_dir):
    record = web_app.server.extensions["costdash"].put_demo("breast-cancer")
    errors = open_page(dash_thread_server, web_app, page,
                       f"/folds?data={record.id}&model=gbm&p_pos=0.2&cost_fn=5&cost_fp=1")
    expect(page.locator("#folds-info")).to_contain_text("569 cases")
    averages = dataset_fold_averages(load_demo("breast-cancer"), "gbm")
    spread = fold_spread(averages, OperatingCondition(0.2, 5.0, 1.0))

    # The bold cost-space average is the core's vertical average, exactly.
    wait_trace(page, "folds-cost-graph", "average")
    np.testing.assert_allclose(trace_array(page, "folds-cost-graph", "average", "x"),
                               averages.cost_pc, rtol=1e-12)
    np.testing.assert_allclose(trace_array(page, "folds-cost-graph", "average", "y"),
                               averages.cost_mean, rtol=1e-12)
    wait_trace(page, "folds-roc-graph", "vertical")
    np.testing.assert_allclose(trace_array(page, "folds-roc-graph", "vertical", "y"),
                               averages.roc_tpr_mean, rtol=1e-12)
    # The spread readout is fold_spread's.
    expect(page.locator("#folds-cost-mean")).to_have_text(
        f"{_fmt(spread.cost_mean)} ± {_fmt(spread.cost_std)}")
    expect(page.locator("#folds-threshold-mean")).to_have_text(
        f"{_fmt(spread.threshold_mean)} ± {_fmt(spread.threshold_std)}")
    expect(page.locator("#folds-spread tbody tr")).to_have_count(len(averages.fold_labels) + 2)

    # New conditions: the spread follows and the address bar keeps the view.
    page.fill("#folds-p-pos", "0.05")
    page.keyboard.press("Tab")
    spread = fold_spread(averages, OperatingCondition(0.05, 5.0, 1.0))
    expect(page.locator("#folds-cost-mean")).to_have_text(
        f"{_fmt(spread.cost_mean)} ± {_fmt(spread.cost_std)}")
    # The whole view, in the schema's order; Folds' own fields among Explore's.
    expect(page).to_have_url(re.compile(r"/folds\?data=[0-9a-f]{32}&p_pos=0\.05&cost_fn=5"
                                        r"&cost_fp=1&volume=1000&unit=%E2%82%AC&model=gbm$"))
    save_screenshot(page, screenshot_dir, "folds.png")
    assert errors == []


def test_multiclass_demo_edit_run(dash_thread_server, web_app, page: Page, screenshot_dir):
    errors = open_page(dash_thread_server, web_app, page, "/multiclass")
    expect(page.locator(".mc-orientation")).to_contain_text(
        "ROWS = PREDICTED class, COLUMNS = ACTUAL class")
    page.click("#multiclass-demo")
    expect(page.locator("#multiclass-file-info")).to_contain_text("600 examples")
    rows = page.locator("#multiclass-costs .ag-center-cols-container .ag-row")
    expect(rows).to_have_count(3)

    # Edit one cost: predicting 'routine' for a true 'emergency' now costs 100 (was 50).
    cell = page.locator('#multiclass-costs .ag-center-cols-container .ag-row[row-index="0"] '
                        '.ag-cell[col-id="c2"]')
    expect(cell).to_have_text("50")
    cell.click()
    page.keyboard.press("Control+A")
    page.keyboard.type("100")
    page.keyboard.press("Enter")
    expect(cell).to_have_text("100")
    page.fill("#multiclass-seed", "7")
    page.click("#multiclass-run")

    labels, costs = load_cost_matrix(demo_path(DEMO_COSTS_NAME))
    costs[0, 2] = 100.0
    data = load_label_predictions(demo_path())
    for c in data.classifiers:
        res = bcost(confusion_from_labels(c.y_pred, c.y_true, labels), costs, rng=7)
        row = page.locator(f'#multiclass-bcost tr[data-name="{c.name}"]')
        expect(row.locator("td.cost")).to_have_text(fmt(res.cost))
        expect(row.locator("td.low")).to_have_text(fmt(res.low))
        expect(row.locator("td.high")).to_have_text(fmt(res.high))
    y_a, y_b, y_true = data.pair("cautious", "accurate")
    delta = bdeltacost(confusion3d_from_labels(y_a, y_b, y_true, labels), costs, rng=7)
    expect(page.locator("#multiclass-delta-value")).to_have_text(fmt(delta.delta))
    expect(page.locator("#multiclass-delta-interval")).to_have_text(
        f"[{fmt(delta.low)}, {fmt(delta.high)}]")
    assert delta.reject  # the demo's two first classifiers differ clearly
    expect(page.locator("#multiclass-delta-verdict")).to_contain_text(
        "reject ‘equal expected cost’ at the 95% level. cautious costs less than accurate")
    wait_trace(page, "multiclass-graph", "bcost-0")
    save_screenshot(page, screenshot_dir, "multiclass.png")

    # A negative cost: the core's message, no traceback, no stale results.
    cell.click()
    page.keyboard.press("Control+A")
    page.keyboard.type("-3")
    page.keyboard.press("Enter")
    page.click("#multiclass-run")
    expect(page.locator("#multiclass-error")).to_contain_text(
        "row 1 ('routine'), column 'emergency': '-3' is negative")
    expect(page.locator("#multiclass-bcost")).to_have_text("–")
    assert errors == []
