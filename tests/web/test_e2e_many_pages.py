"""Compare and Confidence with 50 classifiers, in headless Chromium (issue 23, "the
many-classifier tools on every page").

Their classifier pickers are searchable (typing part of a name filters the 50, as Explore's
filter does) and mark the classifiers no condition makes the best choice "(dominated)", as
Explore's list and legends do; the core (:func:`costdash.analyze`) says which those are. A
390 px screenshot of each is kept in test-output/screenshots/.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from playwright.sync_api import Page, expect

from costdash import analyze
from costdash.io import load_predictions

from .test_e2e_view import upload

pytestmark = pytest.mark.browser

FAMILIES = ["logreg", "gbm", "forest", "svm", "knn", "mlp", "bayes", "tree", "xgb", "lgbm"]


@pytest.fixture(scope="module")
def many50_csv(tmp_path_factory):
    rng = np.random.default_rng(6)
    y = rng.random(3000) < 0.05
    cols = {"y_true": y.astype(int)}
    for k in range(50):
        cols[f"{FAMILIES[k % 10]}_{k // 10 + 1}"] = np.round(
            rng.normal(size=y.size) + y * (0.8 + 2.2 * rng.random()), 4)
    path = tmp_path_factory.mktemp("many50") / "many50.csv"
    pd.DataFrame(cols).to_csv(path, index=False)
    return path


@pytest.mark.slow
@pytest.mark.parametrize(("path", "picker"), [("compare", "compare-a"),
                                              ("confidence", "confidence-model")])
def test_pickers_filter_and_mark_dominated_at_50(live_server, browser, many50_csv, path, picker,
                                                 screenshot_dir):
    analysis = analyze(load_predictions(many50_csv))
    dominated = {c.name for c in analysis.classifiers} - set(analysis.hull.classifier)
    assert dominated and len(dominated) < 50
    data_id = upload(live_server, many50_csv)
    page: Page = browser.new_page(viewport={"width": 390, "height": 844})
    page.goto(f"{live_server.url}/{path}?data={data_id}")
    page.wait_for_selector(".js-plotly-plot .nsewdrag", timeout=30_000)
    page.click(f"#{picker}")
    options = page.locator(".dash-dropdown-option")
    expect(options).to_have_count(50)
    shown = options.all_inner_texts()
    for text in shown:
        name = text.removesuffix(" (dominated)")
        assert text.endswith(" (dominated)") == (name in dominated), text
    page.fill(".dash-dropdown-search", "knn")
    expect(options).to_have_count(5)
    assert all(t.startswith("knn_") for t in options.all_inner_texts())
    (screenshot_dir / f"many50-390-{path}.png").write_bytes(page.screenshot(full_page=True))
    options.first.click()
    expect(page.locator(f"#{picker}")).to_contain_text("knn_1")
    page.close()
