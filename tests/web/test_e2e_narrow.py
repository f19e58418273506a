"""Explore, Compare, Folds and Confidence at 390 px wide (a phone), in headless Chromium
(issue 23, "390 px on every page").

Each page's plots are measured on screen: every figure at least 300 px wide and tall, its axis
titles inside the figure (not clipped by its edge), its legend no taller than its plotting
area, and nothing wider than the screen. A full-page screenshot of each is kept in
test-output/screenshots/ to be looked at.

Not held to the 300 px: Explore's ranges strip (``ranges-graph``), a one-row chart of the
PC(+) intervals under the cost plot, ~130 px tall by design.
"""

from __future__ import annotations

import pytest
from playwright.sync_api import Page

from costdash.demo import DEMOS

from .test_e2e_view import CONDITIONS, upload

pytestmark = pytest.mark.browser

STRIPS = {"ranges-graph"}
AREA_PAGES = {"explore", "folds"}
"""Pages whose plotting areas (inside the axes) are held to 300 x 300 px too: at 390 px their
plots run edge to edge (assets/style.css)."""

MEASURE = """() => Array.from(document.querySelectorAll('.js-plotly-plot')).map((gd) => {
    const box = (el) => { const r = el.getBoundingClientRect();
        return {left: r.left, top: r.top, right: r.right, bottom: r.bottom, width: r.width,
                height: r.height}; };
    const area = gd.querySelector('.nsewdrag');
    const legend = gd.querySelector('.legend');
    return {id: gd.parentElement.id || gd.id, visible: gd.offsetParent !== null,
            graph: box(gd), area: area ? box(area) : null, legend: legend ? box(legend) : null,
            titles: Array.from(gd.querySelectorAll('.g-xtitle text, .g-ytitle text'))
                .filter((t) => t.textContent.trim()).map((t) => [t.textContent, box(t)])};
})"""


@pytest.mark.slow
@pytest.mark.parametrize("path", ["explore", "compare", "folds", "confidence"])
def test_at_390_px_plots_are_legible(live_server, browser, path, screenshot_dir):
    data_id = upload(live_server, DEMOS["breast-cancer"].path)
    page: Page = browser.new_page(viewport={"width": 390, "height": 844})
    query = "&".join(f"{k}={v}" for k, v in {"data": data_id, **CONDITIONS}.items())
    page.goto(f"{live_server.url}/{path}?{query}")
    page.wait_for_selector(".js-plotly-plot .nsewdrag", timeout=30_000)
    # Until every figure has drawn its axes' titles (the page's figures come in one reply).
    page.wait_for_function("""() => { const g = document.querySelectorAll('.js-plotly-plot');
        return g.length > 0 && Array.from(g).every((gd) => gd.querySelector('.g-xtitle text')); }""",
                           timeout=30_000)
    page.wait_for_timeout(300)                      # Plotly's resize to the 390 px column
    (screenshot_dir / f"narrow-390-{path}.png").write_bytes(page.screenshot(full_page=True))
    assert page.evaluate("document.documentElement.scrollWidth") <= 390
    graphs = [g for g in page.evaluate(MEASURE) if g["visible"]]
    assert graphs, path
    for g in graphs:
        where = (path, g["id"])
        if g["id"] not in STRIPS:
            assert g["graph"]["width"] >= 300 and g["graph"]["height"] >= 300, (where, g["graph"])
        if g["id"] not in STRIPS and path in AREA_PAGES:
            # The plotting area itself (inside the axes), not just the figure around it.
            assert g["area"]["width"] >= 299.5 and g["area"]["height"] >= 299.5, (where, g["area"])
        for text, t in g["titles"]:
            inside = (t["left"] >= g["graph"]["left"] - 0.5 and t["right"] <= g["graph"]["right"] + 0.5
                      and t["top"] >= g["graph"]["top"] - 0.5
                      and t["bottom"] <= g["graph"]["bottom"] + 0.5)
            assert inside, (where, text, t, g["graph"])
        if g["legend"] and g["area"]:
            assert g["legend"]["height"] <= g["area"]["height"], (where, g["legend"], g["area"])
    page.close()
