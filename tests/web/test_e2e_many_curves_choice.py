"""Curves and Threshold choice with 50 classifiers, at 1440 and 390 px, in headless Chromium
(issue 23: "the many-classifier tools on every page" and "390 px on every page").

Explore's classifier tools on both pages: the filter by name and "hull classifiers only" narrow
what is drawn (and go to the address bar), the classifiers shown are listed with their swatches
(the plots' own legends then hold none of them); the Brier scores are a table, the classifiers
without one a single line. At both widths no plot is under 300 px wide or tall, no legend is
taller than its plot and no axis title is clipped. The screenshots
(``test-output/screenshots/many-50-<page>-<width>.png``) were looked at.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from playwright.sync_api import Page

from costdash import analyze
from costdash.io import load_predictions

from .test_e2e_explore import open_page
from .test_e2e_many import many_file
from .test_e2e_view import upload

pytestmark = [pytest.mark.browser, pytest.mark.slow]

CONDITIONS = "p_pos=0.02&cost_fn=30&cost_fp=1"


def fifty(tmp_path):
    """The 50-classifier file of test_e2e_many, every second classifier's scores mapped to
    probabilities (so some have a reliability diagram and a Brier score, some not)."""
    path = many_file(tmp_path, 50)
    frame = pd.read_csv(path)
    for k, name in enumerate(frame.columns[1:]):
        if k % 2:
            frame[name] = np.round(1 / (1 + np.exp(-(frame[name] - 2))), 6)
    frame.to_csv(path, index=False)
    return path


GEOMETRY = """() => Array.from(document.querySelectorAll('.js-plotly-plot')).map((gd) => {
    const box = (el) => { const r = el.getBoundingClientRect();
                          return [r.left, r.top, r.right, r.bottom]; };
    const svg = gd.querySelector('.main-svg');
    const drags = Array.from(gd.querySelectorAll('.nsewdrag')).map(box);
    const legend = gd.querySelector('.legend');
    const titles = Array.from(gd.querySelectorAll('.g-xtitle text, .g-ytitle text'))
        .filter((t) => t.textContent.trim()).map(box);
    return {id: gd.parentElement.id || gd.closest('[id]').id, svg: box(svg), drags,
            legend: legend ? box(legend) : null, titles,
            classifiers: gd.data.filter((t) => t.meta && t.meta.classifier
                                     && t.showlegend !== false
                                     && ['curve', 'calibration', 'model'].includes(t.meta.role))
                .length};
})"""


def check_geometry(plots: list[dict]) -> None:
    """No figure under 300 px either way (its plot areas at least 200 px wide and tall), no
    legend taller than its plot, every axis title inside its figure, no classifier in a plot's
    own legend (the list is the legend)."""
    assert plots
    for p in plots:
        # Each plot area (each panel of the cost grid) at least 200 px wide: a figure of 300
        # px less its axes' labels.
        for left, top, right, bottom in p["drags"]:
            assert right - left >= 200, p
        main = max(p["drags"], key=lambda d: (d[2] - d[0]) * (d[3] - d[1]))
        width, height = main[2] - main[0], main[3] - main[1]
        assert width >= 200 and p["svg"][2] - p["svg"][0] >= 300, p
        assert p["svg"][3] - p["svg"][1] >= 300, p
        if p["id"] != "curves-gains-graph":
            assert height >= 200, p
        if p["legend"]:
            assert p["legend"][3] - p["legend"][1] <= height, p
        sl, st, sr, sb = p["svg"]
        for left, top, right, bottom in p["titles"]:
            assert left >= sl - 1 and right <= sr + 1 and top >= st - 1 and bottom <= sb + 1, p
        assert p["classifiers"] == 0, p


def legend_names(page: Page, prefix: str) -> list[str]:
    return page.eval_on_selector_all(f"#{prefix}-legend .legend-item",
                                     "els => els.map(e => e.innerText.trim())")


@pytest.mark.parametrize("width", [1440, 390])
@pytest.mark.parametrize("name, ready", [
    ("curves", "curves-brier table"), ("choice", "choice-table table")])
def test_fifty_classifiers_at_width(live_server, page: Page, tmp_path, screenshot_dir, width,
                                    name, ready):
    path = fifty(tmp_path)
    names = list(pd.read_csv(path, nrows=1).columns[1:])
    data_id = upload(live_server, path)
    page.set_viewport_size({"width": width, "height": 1000})
    errors = open_page(live_server, page, f"/{name}?data={data_id}&{CONDITIONS}")
    page.wait_for_selector(f"#{ready}", timeout=90_000)
    page.wait_for_function(f"n => document.querySelectorAll('#{name}-legend .legend-item')"
                           ".length === n", arg=50)
    page.wait_for_timeout(500)  # plotly's last relayout
    assert legend_names(page, name) == names
    check_geometry(page.evaluate(GEOMETRY))
    if name == "curves":
        # The Brier scores: one row per probability classifier, the others in one line.
        rows = page.eval_on_selector_all("#curves-brier tbody tr", "els => els.length")
        assert rows == 25
        lines = page.eval_on_selector_all("#curves-brier p", "els => els.map(e => e.innerText)")
        assert len(lines) == 1 and "for 25 classifiers" in lines[0]
    else:
        assert page.eval_on_selector_all("#choice-table tbody tr", "els => els.length") == 50
        assert len(page.eval_on_selector_all("#choice-refused p", "els => els")) <= 2
    (screenshot_dir / f"many-50-{name}-{width}.png").write_bytes(
        page.screenshot(full_page=True))

    # The filter narrows what is drawn and goes to the address bar; "hull classifiers only"
    # leaves the hull's classifiers.
    page.fill(f"#{name}-filter", "gbm")
    want = [n for n in names if "gbm" in n]
    page.wait_for_function(f"n => document.querySelectorAll('#{name}-legend .legend-item')"
                           ".length === n", arg=len(want))
    assert legend_names(page, name) == want
    page.wait_for_function("() => new URLSearchParams(location.search).get('filter') === 'gbm'")
    graph = "curves-pr-graph" if name == "curves" else "choice-cost-graph"
    drawn = page.evaluate(f"""() => Array.from(new Set(document.querySelector(
        '#{graph} .js-plotly-plot').data.filter((t) => t.meta && t.meta.classifier
        && t.meta.role !== 'trivial' && !(t.uid || '').startsWith('mark'))
        .map((t) => t.meta.classifier)))""")
    assert sorted(drawn) == sorted(want)
    page.fill(f"#{name}-filter", "")
    page.check(f"#{name}-hull-only input")
    hull = sorted(set(analyze(load_predictions(path)).hull.classifier)
                  - {"all-negative", "all-positive"})
    page.wait_for_function(f"n => document.querySelectorAll('#{name}-legend .legend-item')"
                           ".length === n", arg=len(hull))
    assert sorted(legend_names(page, name)) == hull
    assert errors == []
