"""The Explore page's download links in headless Chromium: they follow the open data set and the
operating conditions in the address bar at the moment they are clicked."""

from __future__ import annotations

import re

import pytest
from playwright.sync_api import Page, expect

from costdash import OperatingCondition, analyze
from costdash.demo import DEMOS
from costdash.io import load_predictions
from dashboard.report import csv_exports

from .test_e2e_explore import open_page, query, set_conditions

pytestmark = pytest.mark.browser


def download_text(page: Page, selector: str) -> tuple[str, str]:
    with page.expect_download() as info:
        page.click(selector)
    download = info.value
    return download.suggested_filename, open(download.path(), encoding="utf-8").read()


def test_export_links_follow_the_current_view(live_server, page: Page):
    errors = open_page(live_server, page)
    page.click("#demo-breast-cancer")
    expect(page.locator("#dataset-info")).to_contain_text("breast-cancer.csv")
    set_conditions(page, 0.05, 20.0, 1.0)
    page.wait_for_function("() => new URLSearchParams(location.search).get('cost_fn') === '20'")
    assert query(page).get("data")

    dataset = load_predictions(DEMOS["breast-cancer"].path)
    result = analyze(dataset, OperatingCondition(0.05, 20.0, 1.0))
    name, report = download_text(page, "#export-report")
    assert name.endswith(".html")
    chosen = result.operating_point.vertex
    assert f'Use <b class="chosen-classifier">{chosen.classifier}</b>' in report
    assert "(false negative)</dt><dd>20</dd>" in report      # the conditions of the view
    # Its one script is the server's plotly.js (issue 23: 5 MB less), which the server serves.
    sources = re.findall(r'<script src="([^"]+)"', report)
    assert len(sources) == 1 and sources[0].startswith(
        f"{live_server.url}/_dash-component-suites/plotly/package_data/plotly.v")
    assert page.request.get(sources[0]).status == 200
    # Beside it, the standalone file (plotly.js inside, opens offline) of the same view.
    href = page.get_attribute("#export-report-standalone", "href")
    assert href.endswith("&standalone=1") and "cost_fn=20" in href
    name, standalone = download_text(page, "#export-report-standalone")
    assert name.endswith(".html") and not re.findall(r'<script src="', standalone)
    assert f'Use <b class="chosen-classifier">{chosen.classifier}</b>' in standalone
    assert "(false negative)</dt><dd>20</dd>" in standalone

    name, hull = download_text(page, "#export-hull")
    assert name.endswith("hull.csv")
    assert hull.replace("\r\n", "\n") == csv_exports(analyze(dataset))["hull.csv"].replace("\r\n", "\n")
    assert errors == []
