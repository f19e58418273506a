"""Issue 28's views in headless Chromium with 20 classifiers, at 1440 and 390 px: money against
the threshold and the top-fraction table on Threshold choice (a click on the plot pins the
threshold, into the address bar; a second click unpins it), the reliability diagram with its
counts, quantile bins and the "calibrate, then choose" table on Curves. The screenshots
(``test-output/screenshots/issue28-<page>-<width>.png``) were looked at."""

from __future__ import annotations

import json
import urllib.request

import pandas as pd
import pytest
from playwright.sync_api import Page

from .test_e2e_explore import open_page
from .test_e2e_many_curves_choice import check_geometry, fifty
from .test_e2e_view import address, upload

pytestmark = [pytest.mark.browser, pytest.mark.slow]

CONDITIONS = "p_pos=0.02&cost_fn=30&cost_fp=1&volume=1000&capacity=25"

POINT = """([graph, uid, k]) => {
    const gd = document.querySelector('#' + graph + ' .js-plotly-plot');
    const t = gd._fullData.find((d) => d.uid === uid);   // arrays decoded
    const i = Math.min(k, t.x.length - 1);
    const xa = gd._fullLayout.xaxis, ya = gd._fullLayout.yaxis;
    const r = gd.getBoundingClientRect();
    return {x: r.left + xa._offset + xa.l2p(t.x[i]), y: r.top + ya._offset + ya.l2p(t.y[i]),
            threshold: t.customdata[i]};
}"""


def twenty(tmp_path):
    """20 classifiers, every second one's scores mapped to probabilities."""
    path = fifty(tmp_path)
    frame = pd.read_csv(path)
    frame = frame[list(frame.columns[:21])]
    frame.to_csv(path, index=False)
    return path


def traces(page: Page, graph: str) -> list[str]:
    return page.evaluate(f"""() => document.querySelector('#{graph} .js-plotly-plot')
        .data.map((t) => t.uid)""")


@pytest.mark.parametrize("width", [1440, 390])
def test_money_plot_table_and_click_to_pin(live_server, page: Page, tmp_path, screenshot_dir,
                                           width):
    path = twenty(tmp_path)
    names = list(pd.read_csv(path, nrows=1).columns[1:])
    data_id = upload(live_server, path)
    page.set_viewport_size({"width": width, "height": 1000})
    model = names[1]
    errors = open_page(live_server, page,
                       f"/choice?data={data_id}&{CONDITIONS}&model={model}")
    page.wait_for_selector("#choice-deciles table", timeout=90_000)
    page.wait_for_selector("#choice-table table", timeout=90_000)
    page.wait_for_timeout(500)
    # Deciles and the capacity's row (25 of 1000 cases: 2.5 %), first.
    rows = page.eval_on_selector_all("#choice-deciles tbody tr", "els => els.map(e => e.id)")
    assert rows[0] == "choice-deciles-capacity" and len(rows) == 11
    assert "2.5% (capacity)" in page.inner_text("#choice-deciles-capacity")
    assert {"cost", "cheapest", "capacity"} <= set(traces(page, "choice-money-graph"))
    assert model in page.inner_text("#choice-money-note")
    # The section's download is the API's answer for the view on screen.
    href = page.get_attribute("a[data-export='threshold-money.json']", "href")
    assert f"model={model}" in href and "capacity=25" in href
    with urllib.request.urlopen(live_server.url + href, timeout=30) as resp:
        got = json.loads(resp.read())
    assert got["classifier"] == model
    cheapest = f"{got['cheapest']['expected_cost'] * 1000:,.2f} €"
    assert cheapest in page.inner_text("#choice-money-note")
    # The plot is legible at this width: no figure under 300 px.
    geometry = [g for g in page.evaluate(GEOMETRY) if g["id"] == "choice-money-graph"]
    check_geometry(geometry)
    (screenshot_dir / f"issue28-choice-{width}.png").write_bytes(
        page.screenshot(full_page=True))

    # A click on the curve pins its threshold: the pin is drawn, named and in the address.
    page.locator("#choice-money-graph").scroll_into_view_if_needed()
    point = page.evaluate(POINT, ["choice-money-graph", "cost", 40])
    page.mouse.click(point["x"], point["y"])
    page.wait_for_function("() => (new URLSearchParams(location.search).get('pins') || '')"
                           ".length > 0", timeout=20_000)
    pins = address(page)["pins"]
    assert pins.startswith(model + ":")
    page.wait_for_function("""() => document.querySelector('#choice-money-graph .js-plotly-plot')
        .data.some((t) => t.uid === 'pin-0')""", timeout=20_000)
    assert "Pinned" in page.inner_text("#choice-pin-message")
    assert "Pin 1" in page.inner_text("#choice-money-note")
    # The threshold-choice table's fixed threshold follows the pin.
    page.wait_for_function(f"""() => Array.from(document.querySelectorAll('#choice-table tr'))
        .some((tr) => tr.innerText.startsWith({model!r}) && tr.innerText.includes('(pinned)'))""",
                           timeout=60_000)
    # The capacity box moves the cutoff row.
    page.fill("#choice-capacity", "150")
    page.keyboard.press("Enter")
    page.wait_for_function("""() => (document.querySelector('#choice-deciles-capacity') || {})
        .innerText && document.querySelector('#choice-deciles-capacity').innerText
        .startsWith('15%')""", timeout=20_000)
    page.wait_for_function("() => new URLSearchParams(location.search).get('capacity') "
                           "=== '150'")
    # Clicking the pin unpins it.
    page.wait_for_timeout(500)
    point = page.evaluate(POINT, ["choice-money-graph", "pin-0", 0])
    page.mouse.click(point["x"], point["y"])
    page.wait_for_function("() => !new URLSearchParams(location.search).get('pins')",
                           timeout=20_000)
    assert errors == []


GEOMETRY = """() => Array.from(document.querySelectorAll('.js-plotly-plot')).map((gd) => {
    const box = (el) => { const r = el.getBoundingClientRect();
                          return [r.left, r.top, r.right, r.bottom]; };
    const drags = Array.from(gd.querySelectorAll('.nsewdrag')).map(box);
    const legend = gd.querySelector('.legend');
    const titles = Array.from(gd.querySelectorAll('.g-xtitle text, .g-ytitle text'))
        .filter((t) => t.textContent.trim()).map(box);
    return {id: gd.closest('[id]').id, svg: box(gd.querySelector('.main-svg')), drags,
            legend: legend ? box(legend) : null, titles, classifiers: 0};
})"""


@pytest.mark.parametrize("width", [1440, 390])
def test_reliability_counts_quantile_bins_and_calibrate_then_choose(live_server, page: Page,
                                                                     tmp_path, screenshot_dir,
                                                                     width):
    path = twenty(tmp_path)
    names = list(pd.read_csv(path, nrows=1).columns[1:])
    data_id = upload(live_server, path)
    page.set_viewport_size({"width": width, "height": 1000})
    model = names[1]                       # scores mapped to probabilities
    errors = open_page(live_server, page, f"/curves?data={data_id}&{CONDITIONS}&model={model}")
    page.wait_for_selector("#curves-calibrate table", timeout=90_000)
    page.wait_for_selector("#curves-brier table", timeout=90_000)
    page.wait_for_timeout(500)
    assert "rel-counts" in traces(page, "curves-rel-graph")
    text = page.inner_text("#curves-calibrate")
    assert "pₜ =" in text and "isotonic on folds" in text
    rows = page.eval_on_selector_all("#curves-calibrate tbody tr", "els => els.map(e => e.id)")
    assert rows == ["curves-calibrate-scores", "curves-calibrate-platt",
                    "curves-calibrate-isotonic", "curves-calibrate-best"]
    check_geometry([g for g in page.evaluate(GEOMETRY) if g["id"] == "curves-rel-graph"])
    uniform = page.evaluate("""() => Array.from(document.querySelector(
        '#curves-rel-graph .js-plotly-plot')._fullData.find((t) => t.uid === 'rel-counts').y)""")
    page.check("#curves-quantile-bins input")
    page.wait_for_function("() => new URLSearchParams(location.search).get('quantile_bins') "
                           "=== '1'")
    page.wait_for_function("""(before) => {
        const t = document.querySelector('#curves-rel-graph .js-plotly-plot')._fullData
            .find((d) => d.uid === 'rel-counts');
        return t && JSON.stringify(Array.from(t.y)) !== JSON.stringify(before);
    }""", arg=uniform, timeout=30_000)
    counts = page.evaluate("""() => Array.from(document.querySelector(
        '#curves-rel-graph .js-plotly-plot')._fullData.find((t) => t.uid === 'rel-counts').y)""")
    # Quantile bins hold about as many examples each (8,000 cases in 10 bins).
    assert sum(counts) == 8000 and max(counts) - min(counts) <= 2
    page.locator("#curves-rel-graph").scroll_into_view_if_needed()
    page.wait_for_timeout(500)
    (screenshot_dir / f"issue28-curves-{width}.png").write_bytes(
        page.screenshot(full_page=True))
    assert errors == []
