"""The report's figures in Chromium at 1440 and 390 px (issue 23): as wide as the page lets them
be, two side by side on a wide screen, one per row on a phone, none wider than the window and
every single-panel plot at least 300 px wide there; the threshold-choice panels three a row on
a wide screen, one a row on a phone (each at least 300 px wide, none overlapping)."""

from __future__ import annotations

import pytest
from playwright.sync_api import Page

from costdash.demo import DEMOS
from costdash.io import load_predictions
from costdash.view import View
from dashboard.report import build_report

pytestmark = pytest.mark.browser

SINGLE_PANEL = ("roc-figure", "cost-figure", "curves-pr-figure", "curves-gains-figure",
                "curves-hist-figure", "curves-rel-figure", "choice-money-figure")

FIGURES = """() => Array.from(document.querySelectorAll('.js-plotly-plot')).map(gd => {
    const r = gd.getBoundingClientRect();
    return {id: gd.id, left: r.left, right: r.right, top: r.top, box: r.width,
            drawn: gd._fullLayout.width, plot: gd._fullLayout._size.w};
})"""

PANELS = """() => {
    const gd = document.getElementById('choice-cost-figure'), full = gd._fullLayout;
    const shown = new Set(gd.data.map(t => (t.xaxis || 'x').replace('x', 'xaxis')));
    return Object.keys(full).filter(k => /^xaxis\\d*$/.test(k) && shown.has(k)).map(k => {
        const y = full[k].anchor.replace('y', 'yaxis');
        return {axis: k, left: full[k]._offset, width: full[k]._length,
                top: full[y]._offset, height: full[y]._length};
    });
}"""


@pytest.fixture(scope="module")
def report_file(tmp_path_factory):
    data = load_predictions(DEMOS["breast-cancer"].path)
    view = View.parse({"p_pos": "0.3", "volume": "1000", "pins": "gbm:0.5", "sens_p": "0.2,0.4"})
    path = tmp_path_factory.mktemp("report") / "report.html"
    path.write_text(build_report(data, view=view, name="breast-cancer.csv"), encoding="utf-8")
    return path


def _figures(page: Page, report_file, width: int) -> dict[str, dict]:
    page.set_viewport_size({"width": width, "height": 900})
    page.goto(report_file.as_uri())
    page.wait_for_function("() => document.querySelectorAll('.js-plotly-plot .main-svg').length"
                           " >= 10 && document.readyState === 'complete'")
    page.wait_for_timeout(300)  # the phone margins are set on load
    return {f["id"]: f for f in page.evaluate(FIGURES)}


def test_two_figures_side_by_side_at_1440_px(page: Page, report_file, screenshot_dir):
    figures = _figures(page, report_file, 1440)
    page.locator("#figures").screenshot(path=str(screenshot_dir / "report-figures-1440.png"))
    roc, cost = figures["roc-figure"], figures["cost-figure"]
    assert roc["top"] == cost["top"] and roc["right"] < cost["left"]
    for f in figures.values():
        # Each drawn at its box's width (not at the width its row had before its neighbour).
        assert abs(f["drawn"] - f["box"]) <= 1, f
    assert min(figures[k]["plot"] for k in SINGLE_PANEL) >= 400


def test_nothing_overflows_a_390_px_window(page: Page, report_file, screenshot_dir):
    figures = _figures(page, report_file, 390)
    page.locator("#figures").screenshot(path=str(screenshot_dir / "report-figures-390.png"))
    assert page.evaluate("document.documentElement.scrollWidth") <= 390
    for f in figures.values():
        assert f["left"] >= 0 and f["right"] <= 390 and abs(f["drawn"] - f["box"]) <= 1, f
    for key in SINGLE_PANEL:
        assert figures[key]["plot"] >= 300, figures[key]


def _panels(page: Page) -> list[dict]:
    return page.evaluate(PANELS)


def test_threshold_choice_panels_three_a_row_at_1440_px(page: Page, report_file):
    _figures(page, report_file, 1440)
    panels = _panels(page)
    assert len(panels) >= 4  # the demo's classifiers: more than one row
    assert len({round(p["top"]) for p in panels[:3]}) == 1
    assert panels[3]["top"] > panels[0]["top"] + panels[0]["height"]


def test_threshold_choice_panels_one_a_row_at_390_px(page: Page, report_file, screenshot_dir):
    _figures(page, report_file, 390)
    page.locator("#choice-cost-figure").screenshot(
        path=str(screenshot_dir / "report-choice-panels-390.png"))
    panels = _panels(page)
    assert len(panels) >= 4
    # Its box grew with the column (the panels cover nothing after it).
    box = page.evaluate("""() => { const gd = document.getElementById('choice-cost-figure');
        const fig = gd.closest('.fig');
        let next = fig.nextElementSibling;
        while (next.tagName === 'SCRIPT') next = next.nextElementSibling;
        return [gd.getBoundingClientRect().height, gd._fullLayout.height,
                fig.getBoundingClientRect().bottom, next.getBoundingClientRect().top]; }""")
    assert box[0] >= box[1] and box[2] <= box[3], box
    for p in panels:
        assert p["width"] >= 300 and p["height"] >= 250, p
    for above, below in zip(panels, panels[1:]):
        assert below["top"] >= above["top"] + above["height"], (above, below)
    # Each panel's title sits above its own panel (the titles moved with the panels).
    titles = page.evaluate("""() => Array.from(document.querySelectorAll(
        '#choice-cost-figure .annotation')).map(a => a.getBoundingClientRect().top)""")
    tops = [p["top"] for p in panels]
    gd_top = page.evaluate("document.getElementById('choice-cost-figure')"
                           ".getBoundingClientRect().top")
    for top, title in zip(tops, sorted(titles)[:len(tops)]):
        assert gd_top + top - 40 <= title <= gd_top + top, (top, title)
