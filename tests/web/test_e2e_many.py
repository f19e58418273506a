"""Many classifiers and rare events on Explore, in headless Chromium (issue 10 items 5 and 7).

A real ``python app.py`` (conftest's ``live_server``) with a data set of 20 classifiers at 3%
prevalence: the classifier filter and its buttons, "hull classifiers only", hover-highlight across
the plots, the log FPR and log-odds PC(+) axes with the moving parts on them, and the zoom; every
one of these controls in the address bar and back after a reload. Expected numbers come from the
core (:func:`costdash.analyze`), not from the page.
"""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest
from playwright.sync_api import Page, expect

from costdash import OperatingCondition, analyze
from costdash.io import load_predictions

from .test_e2e_explore import open_page
from .test_e2e_view import READY, address, upload

pytestmark = pytest.mark.browser

FAMILIES = ["logreg", "gbm", "forest", "svm", "knn", "mlp", "bayes", "tree", "xgb", "lgbm"]
P, COST_FN, COST_FP = 0.03, 20.0, 1.0


@pytest.fixture(scope="module")
def many_csv(tmp_path_factory):
    rng = np.random.default_rng(5)
    y = rng.random(6000) < 0.03
    cols = {"y_true": y.astype(int)}
    for k in range(20):
        cols[f"{FAMILIES[k % 10]}_{k // 10 + 1}"] = rng.normal(size=y.size) \
            + y * (0.8 + 2.2 * rng.random())
    path = tmp_path_factory.mktemp("many") / "many20.csv"
    pd.DataFrame(cols).to_csv(path, index=False)
    return path


def figure(page: Page, graph: str) -> dict:
    return page.evaluate(f"""() => {{
        const gd = document.querySelector('#{graph} .js-plotly-plot');
        return {{metas: gd.data.map((t) => t.meta || null), uids: gd.data.map((t) => t.uid),
                 xtitle: gd.layout.xaxis.title.text, xrange: gd.layout.xaxis.range,
                 shapes: Object.fromEntries(gd.layout.shapes.map((s) => [s.name, s]))}};
    }}""")


def shown_rows(page: Page) -> list[str]:
    return page.eval_on_selector_all(
        "#models-input label", "els => els.filter(e => getComputedStyle(e).display !== 'none')"
        ".map(e => e.innerText.trim())")


def checked(page: Page, id_: str) -> bool:
    return page.eval_on_selector(f"#{id_} input", "e => e.checked")


def test_filter_hull_only_log_axes_and_zoom_survive_a_reload(live_server, page: Page, many_csv):
    data_id = upload(live_server, many_csv)
    names = list(pd.read_csv(many_csv, nrows=1).columns[1:])
    errors = open_page(live_server, page, f"/explore?data={data_id}&p_pos={P}&cost_fn={COST_FN}"
                                          f"&cost_fp={COST_FP}")
    page.wait_for_function(READY)
    assert len(shown_rows(page)) == 20
    # Past 8 classifiers the list is the legend: none of theirs in the plots' own legends.
    assert page.evaluate("() => document.querySelector('#roc-graph .js-plotly-plot').data"
                         ".filter(t => t.meta && t.showlegend !== false).length") == 0

    # The filter hides the other rows (case-insensitive), "only shown" ticks exactly the shown.
    page.fill("#models-filter", "GBM")
    want = [n for n in names if "gbm" in n]
    page.wait_for_function("n => Array.from(document.querySelectorAll('#models-input label'))"
                           ".filter(e => getComputedStyle(e).display !== 'none').length === n",
                           arg=len(want))
    assert shown_rows(page) == want
    expect(page.locator("#models-count")).to_have_text(f"{len(want)} of 20 shown")
    page.click("#models-only-shown")
    page.wait_for_function("n => document.querySelectorAll('#models-input input:checked')"
                           ".length === n", arg=len(want))
    page.wait_for_function("() => new URLSearchParams(location.search).get('filter') === 'GBM'")
    page.wait_for_function("m => new URLSearchParams(location.search).get('models') === m",
                           arg=",".join(want))
    page.fill("#models-filter", "")
    page.click("#models-tick-shown")                          # every row shown: tick them all
    page.wait_for_function("() => document.querySelectorAll('#models-input input:checked')"
                           ".length === 20")
    page.wait_for_function("() => !new URLSearchParams(location.search).has('models')")

    # Hull classifiers only: the plots draw exactly the classifiers the core puts on the hull.
    analysis = analyze(load_predictions(many_csv))
    on_hull = set(analysis.hull.classifier) & set(names)
    assert 0 < len(on_hull) < 20
    page.check("#hull-only-toggle input")
    page.wait_for_function("n => document.querySelector('#roc-graph .js-plotly-plot').data"
                           ".filter(t => t.meta).length === n", arg=len(on_hull))
    assert set(m for m in figure(page, "roc-graph")["metas"] if m) == on_hull
    assert set(m for m in figure(page, "cost-graph")["metas"] if m) == on_hull

    # Log axes: the chosen point and the current PC(+) drawn in the axes' coordinates.
    page.check("#log-fpr-toggle input")
    page.check("#log-pc-toggle input")
    page.wait_for_function("() => document.querySelector('#cost-graph .js-plotly-plot')"
                           ".layout.xaxis.title.text.includes('log odds')")
    op = analyze(load_predictions(many_csv), OperatingCondition(P, COST_FN, COST_FP))
    floor = 0.5 / analysis.dataset.n_neg
    want_x = math.log10(max(op.operating_point.vertex.fpr, floor))
    want_pc = math.log10(op.operating_point.condition.pc / (1 - op.operating_point.condition.pc))

    def check_log_axes() -> None:
        page.wait_for_function(
            "x => Math.abs(document.querySelector('#roc-graph .js-plotly-plot').layout.shapes"
            ".find(s => s.name === 'chosen').xanchor - x) < 1e-9", arg=want_x)
        roc, cost = figure(page, "roc-graph"), figure(page, "cost-graph")
        assert "log scale" in roc["xtitle"] and "log odds" in cost["xtitle"]
        assert roc["shapes"]["iso-performance"]["type"] == "path"       # a curve here
        assert cost["shapes"]["pc"]["x0"] == pytest.approx(want_pc, abs=1e-9)
        assert cost["shapes"]["chosen"]["xanchor"] == pytest.approx(want_pc, abs=1e-9)
        line = page.eval_on_selector("#ranges-graph .ranges-pc-line",
                                     "e => [Number(e.dataset.x), e.style.display]")
        assert line[0] == pytest.approx(want_pc, abs=1e-9) and line[1] == "block"

    check_log_axes()

    # Zoom to the choice: both plots' windows hold the chosen point.
    page.check("#zoom-toggle input")
    page.wait_for_function("() => { const r = document.querySelector('#cost-graph "
                           ".js-plotly-plot').layout.xaxis.range; return r[1] - r[0] < 3.01; }")
    lo, hi = figure(page, "cost-graph")["xrange"]
    assert lo <= want_pc <= hi and hi - lo == pytest.approx(3.0)
    lo, hi = figure(page, "roc-graph")["xrange"]
    assert lo <= want_x <= hi and hi - lo == pytest.approx(2.0)
    query = address(page)
    assert {k: query.get(k) for k in ("hull_only", "log_fpr", "log_pc", "zoom")} == \
        {"hull_only": "1", "log_fpr": "1", "log_pc": "1", "zoom": "1"}

    # A reload (the address alone) brings all of it back.
    page.reload()
    page.wait_for_function(READY)
    for id_ in ("hull-only-toggle", "log-fpr-toggle", "log-pc-toggle", "zoom-toggle"):
        assert checked(page, id_), id_
    check_log_axes()
    assert set(m for m in figure(page, "roc-graph")["metas"] if m) == on_hull
    page.wait_for_function("() => { const r = document.querySelector('#cost-graph "
                           ".js-plotly-plot').layout.xaxis.range; return r[1] - r[0] < 3.01; }")
    assert errors == []


def test_hovering_a_classifier_highlights_it_in_every_plot(live_server, page: Page, many_csv):
    data_id = upload(live_server, many_csv)
    errors = open_page(live_server, page, f"/explore?data={data_id}&p_pos={P}&cost_fn={COST_FN}"
                                          f"&cost_fp={COST_FP}")
    page.wait_for_function(READY)
    page.hover("#models-input label:nth-of-type(4)")         # svm_1, position 3
    lit = page.evaluate("""() => ['roc-graph', 'cost-graph'].map((id) => {
        const gd = document.querySelector('#' + id + ' .js-plotly-plot');
        return [gd.classList.contains('costdash-focus'),
                Array.from(gd.querySelectorAll('g.trace.costdash-hl'))
                    .map((el) => el.__data__[0].trace.uid)];
    })""")
    assert lit == [[True, ["roc-3"]], [True, ["env-3"]]]
    # Its swatch in the list is the style its traces are drawn in.
    roc3 = page.evaluate("() => document.querySelector('#roc-graph .js-plotly-plot').data"
                         ".find(t => t.uid === 'roc-3')")
    swatch = page.eval_on_selector(
        "#models-input label:nth-of-type(4) .dash-options-list-option-text",
        "e => getComputedStyle(e, '::before').backgroundImage")
    assert roc3["line"]["color"].lower().replace("#", "%23") in swatch.lower()
    page.mouse.move(5, 5)
    page.wait_for_function("() => !document.querySelector('#roc-graph .js-plotly-plot')"
                           ".classList.contains('costdash-focus')")
    assert errors == []


def many_file(tmp_path, k: int):
    rng = np.random.default_rng(11)
    y = rng.random(8000) < 0.03
    cols = {"y_true": y.astype(int)}
    for j in range(k):
        cols[f"{FAMILIES[j % 10]}_{j // 10 + 1}"] = rng.normal(size=y.size) \
            + y * (0.8 + 2.2 * rng.random())
    path = tmp_path / f"many{k}.csv"
    pd.DataFrame(cols).to_csv(path, index=False)
    return path


@pytest.mark.parametrize("k, extra, name", [
    (20, "", "many-20"), (50, "", "many-50"),
    (50, "&p_pos=0.002&hull_only=1&log_fpr=1&log_pc=1&zoom=1", "many-50-rare")])
def test_screenshots_with_20_and_50_classifiers(live_server, page: Page, tmp_path,
                                                screenshot_dir, k, extra, name):
    """docs/screenshots/many-20.png, many-50.png and many-50-rare.png (hull classifiers only,
    log axes, zoomed to the choice at p(+) = 0.002) come from here (copied from test-output)."""
    page.set_viewport_size({"width": 1480, "height": 1560})
    path = many_file(tmp_path, k)
    data_id = upload(live_server, path)
    params = {"p_pos": "0.02", "cost_fn": "30", "cost_fp": "1",
              **dict(kv.split("=") for kv in extra.split("&") if kv)}
    errors = open_page(live_server, page, f"/explore?data={data_id}&"
                       + "&".join(f"{k}={v}" for k, v in params.items()))
    page.wait_for_function(READY)
    page.wait_for_timeout(800)
    # A log axis or zoom in the address redraws the graph once more: its plot div can be
    # between two drawings here (seen at load 6: null).
    page.wait_for_function("() => document.querySelector('#roc-graph .js-plotly-plot')?.data")
    styles = page.evaluate("""() => document.querySelector('#roc-graph .js-plotly-plot').data
        .filter((t) => t.meta).map((t) => [t.line.color, t.line.dash, t.showlegend])""")
    drawn = k
    if "hull_only" in extra:
        hull = analyze(load_predictions(path)).hull
        drawn = len(set(hull.classifier) - {"all-negative", "all-positive"})
    assert len(styles) == drawn
    assert len({(c, d) for c, d, _ in styles}) == drawn           # no two alike
    assert not any(shown for _, _, shown in styles)                # the list is the legend
    # The plots keep their size: the legend left (one line: hull / envelope) is short.
    legend_h = page.evaluate("""() => { const l = document.querySelector(
        '#roc-graph .js-plotly-plot .legend'); return l ? l.getBoundingClientRect().height : 0; }""")
    assert legend_h < 40
    rows = page.evaluate("() => document.querySelectorAll('#ranges-graph .ytick').length")
    assert rows >= 1
    # As bytes, never a path (see conftest).
    (screenshot_dir / f"{name}.png").write_bytes(
        page.screenshot(clip={"x": 0, "y": 0, "width": 1480, "height": 1560}))
    assert errors == []


def test_constraints_show_the_best_single_threshold_beside_the_mix(live_server, page: Page):
    """Issue 10 item 3: beside the randomized Neyman–Pearson and capacity points, the best single
    threshold under the same constraint, against the core over every ROC point."""
    from costdash.criteria import (neyman_pearson, single_threshold_neyman_pearson,
                                   single_threshold_workforce, workforce)
    from costdash.demo import DEMOS
    from costdash.roc import roc_of
    from costdash.view import number_text

    path = DEMOS["breast-cancer"].path
    data_id = upload(live_server, path)
    p, volume, max_fpr, capacity = 0.3, 1000.0, 0.02, 290.0
    errors = open_page(live_server, page, f"/explore?data={data_id}&p_pos={p}&cost_fn=5"
                                          f"&cost_fp=1&volume=1000&max_fpr={max_fpr}"
                                          f"&capacity={capacity:g}")
    page.wait_for_function(READY)
    dataset = load_predictions(path)
    rocs = [roc_of(c) for c in (*dataset.scored, *dataset.counted)]
    hull = analyze(dataset).hull
    n_pos, n_neg = p * volume, (1 - p) * volume
    cases = {"np": (single_threshold_neyman_pearson(rocs, max_fpr), neyman_pearson(hull, max_fpr)),
             "capacity": (single_threshold_workforce(rocs, n_pos=n_pos, n_neg=n_neg,
                                                     capacity=capacity),
                          workforce(hull, n_pos=n_pos, n_neg=n_neg, capacity=capacity))}
    for key, (one, mix) in cases.items():
        assert one.tpr <= mix.tpr
        locator = page.locator(f"#constraint-readout p.single[data-constraint={key}]")
        expect(locator).to_contain_text(f"{one.classifier} at score ≥ "
                                        f"{number_text(one.threshold)}")
        text = locator.inner_text()
        if (one.fpr, one.tpr) != (mix.fpr, mix.tpr):
            gain = float(text.split("TPR +")[1].split()[0])
            assert gain == pytest.approx(mix.tpr - one.tpr, rel=2e-3, abs=1e-9)
        roc = figure(page, "roc-graph")["shapes"][f"{key}-single"]
        assert (roc["xanchor"], roc["yanchor"]) == pytest.approx((one.fpr, one.tpr))
    assert errors == []
