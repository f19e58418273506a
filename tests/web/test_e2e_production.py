"""The Production page in headless Chromium (issue 25's "Done when"): two production periods
uploaded, the estimate per period with its interval, the policy's ranges and an alert seen;
screenshots at 1440 and 390 px."""

from __future__ import annotations

import pytest
from playwright.sync_api import Page, expect

from tests.web.helpers import make_predictions
from tests.web.test_production_api import production_csv

pytestmark = [pytest.mark.browser, pytest.mark.slow]


def figure_state(page: Page) -> dict:
    return page.evaluate(
        """() => {
            const gd = document.querySelector('#production-graph .js-plotly-plot');
            if (!gd || !gd._fullData) return null;
            const t = uid => gd._fullData.find(d => d.uid === uid);
            const est = t('estimate'), alert = t('alert');
            return {x: est ? Array.from(est.x) : [], y: est ? Array.from(est.y) : [],
                    alerts: alert ? Array.from(alert.x) : [],
                    rects: (gd.layout.shapes || []).filter(s => s.type === 'rect').length,
                    dashed: (gd.layout.shapes || []).filter(
                        s => s.type === 'line' && s.line && s.line.dash === 'dash').length,
                    notes: (gd.layout.annotations || []).map(a => a.text)};
        }""")


def wait_periods(page: Page, n: int) -> dict:
    page.wait_for_function(
        """n => {
            const gd = document.querySelector('#production-graph .js-plotly-plot');
            const est = gd && gd._fullData && gd._fullData.find(d => d.uid === 'estimate');
            return !!est && est.x.length === n;
        }""", arg=n, timeout=60_000)
    return figure_state(page)


def save_screenshot(page: Page, screenshot_dir, name: str) -> None:
    """Full-page PNG (written by the test: see test_e2e_folds_multiclass.save_screenshot)."""
    page.evaluate("document.activeElement && document.activeElement.blur()")
    page.mouse.move(0, 0)
    page.wait_for_timeout(300)  # plotly's transitions
    (screenshot_dir / name).write_bytes(page.screenshot(full_page=True))


def test_two_periods_show_the_estimate_the_ranges_and_an_alert(dash_thread_server, web_app,
                                                              page: Page, tmp_path,
                                                              screenshot_dir):
    services = web_app.server.extensions["costdash"]
    record = services.store.put(make_predictions().to_csv(index=False).encode(),
                                "reference.csv")
    january, february = tmp_path / "2026-01.csv", tmp_path / "2026-02.csv"
    january.write_bytes(production_csv(0.2, seed=1))
    february.write_bytes(production_csv(0.85, seed=2))
    errors: list[str] = []
    page.on("pageerror", lambda e: errors.append(str(e)))
    page.set_viewport_size({"width": 1440, "height": 1000})
    dash_thread_server(web_app)
    page.goto(dash_thread_server.url + f"/production?data={record.id}&p_pos=0.2&cost_fn=1"
              "&cost_fp=1")
    expect(page.locator("#production-table")).to_contain_text("No production batches yet")
    upload = page.locator("#production-upload input[type=file]")

    upload.set_input_files(str(january))
    first = wait_periods(page, 1)
    assert first["x"] == ["2026-01"] and first["alerts"] == []
    upload.set_input_files(str(february))
    shown = wait_periods(page, 2)

    # The estimate per period, the policy's ranges as bands (named) and the deployed range.
    assert shown["x"] == ["2026-01", "2026-02"]
    assert shown["y"][0] < 0.35 < shown["y"][1]
    assert shown["rects"] >= 2 and shown["dashed"] == 2
    assert any(n.startswith("alpha") for n in shown["notes"])
    # The alert: a red cross on the figure, a row of the table, the summary.
    assert shown["alerts"] == ["2026-02"]
    table = page.locator("#production-table")
    expect(table.locator("tr.alert")).to_have_count(1)
    expect(table.locator("tr.alert")).to_contain_text("2026-02")
    expect(table.locator("tr.alert")).to_contain_text("ALERT")
    expect(page.locator("#production-summary")).to_contain_text("Alerts: 2026-02.")
    expect(page.locator("#production-batches")).to_contain_text("2026-02.csv (4,000 cases")
    save_screenshot(page, screenshot_dir, "production-1440.png")

    # A bad file: one line naming it, its column and row; the figure stays.
    bad = tmp_path / "broken.csv"
    bad.write_text("score\n0.3\nn/a?\n")
    upload.set_input_files(str(bad))
    expect(page.locator("#production-error")).to_have_text(
        "broken.csv: column 'score' row 2: 'n/a?' is not a finite number (1 such rows)")
    assert figure_state(page)["x"] == ["2026-01", "2026-02"]

    page.set_viewport_size({"width": 390, "height": 844})
    page.wait_for_timeout(500)  # the graph's resize
    save_screenshot(page, screenshot_dir, "production-390.png")
    width = page.evaluate("document.documentElement.scrollWidth")
    assert width <= 390 + 1, f"the page scrolls sideways at 390 px ({width} px wide)"
    # The table scrolls inside its card (the site's narrow-screen rule for these tables)
    # rather than hiding the alert column.
    table = page.locator("#production-table table")
    overflow, wide, shown_width = table.evaluate(
        "t => [getComputedStyle(t).overflowX, t.scrollWidth, t.clientWidth]")
    assert overflow == "auto" and wide > shown_width
    # Scrolled to its end, the alert cell lies within the table's visible box.
    inside = table.evaluate("""t => { t.scrollLeft = t.scrollWidth;
        const cell = t.querySelector('tr.alert td:last-child').getBoundingClientRect();
        const box = t.getBoundingClientRect();
        return cell.left >= box.left - 1 && cell.right <= box.right + 1; }""")
    assert inside
    assert errors == []
