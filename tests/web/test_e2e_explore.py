"""The Explore page in headless Chromium (Playwright + a real ``python app.py``, see conftest).

The readouts are computed in the browser (assets/costmath.js); these tests check them against
the Python core (:func:`costdash.analyze`) for ordinary and extreme conditions.
"""

from __future__ import annotations

import math
import re
from urllib.parse import parse_qs, urlparse

import pytest
from playwright.sync_api import Page, expect

from costdash import OperatingCondition, analyze
from costdash.analysis import threshold_text
from costdash.criteria import sensitivity
from costdash.demo import DEMOS
from costdash.errors import InputFileError
from costdash.io import load_predictions

from .helpers import wait_data_drawn

pytestmark = pytest.mark.browser

# (p(+), C(-|+), C(+|-)): ordinary ones, and the extremes the log-domain arithmetic is for.
CONDITIONS = [
    (0.2, 1.0, 1.0),
    (0.01, 50.0, 1.0),
    (1e-6, 1e6, 1.0),
    (1e-6, 1.0, 1.0),
    (0.5, 1.0, 1e6),
    (0.999999, 1e6, 1.0),
    (0.3, 1.0, 1e-3),
]

TYPING_DEBOUNCE_MS = 250
"""The condition boxes' typing debounce (``debounce=0.25`` in dashboard/explore_layout.py)."""

WAIT_NUMBER = """([id, expected, rel]) => {
    const el = document.getElementById(id);
    if (!el) return false;
    const x = parseFloat(el.innerText);
    return Number.isFinite(x) && Math.abs(x - expected) <= rel * Math.abs(expected);
}"""


def number(page: Page, id_: str) -> float:
    text = page.inner_text(f"#{id_}").strip()
    return float(text.split()[0])


def wait_number(page: Page, id_: str, expected: float, rel: float = 1e-3) -> None:
    page.wait_for_function(WAIT_NUMBER, arg=[id_, expected, rel], timeout=30_000)


def open_page(server, page: Page, path: str = "/explore") -> list[str]:
    """Open ``path``; returns the list the page's console errors will be collected in."""
    errors: list[str] = []
    page.on("console", lambda m: errors.append(m.text) if m.type == "error" else None)
    page.on("pageerror", lambda e: errors.append(str(e)))
    page.goto(server.url + path)
    return errors


def choose_file(page: Page, path) -> None:
    """Pick a file in the upload input (as bytes: see conftest on why never a path)."""
    page.set_input_files("#upload input[type=file]", files=[
        {"name": path.name, "mimeType": "text/csv", "buffer": path.read_bytes()}])


def screenshot(page: Page, path) -> None:
    path.write_bytes(page.screenshot(full_page=True))


def set_conditions(page: Page, p: float, cost_fn: float, cost_fp: float) -> None:
    """Type the conditions, as a user does once the data set is drawn: a data set's first
    drawing sets an empty p(+) box to its prevalence, which would replace a value typed in it
    before (seen in CI when the upload's reply and the typing raced)."""
    page.wait_for_function("() => { const el = document.getElementById('chosen-classifier');"
                           " return el !== null && el.textContent !== '–'; }")
    for id_, value in (("p-pos-input", p), ("cost-fn-input", cost_fn),
                       ("cost-fp-input", cost_fp)):
        page.fill(f"#{id_}", repr(value))
    page.keyboard.press("Tab")


def assert_readouts(page: Page, dataset, p: float, cost_fn: float, cost_fp: float,
                    volume: float | None = None) -> None:
    """Every readout equals the core's value (4 significant digits, 6 for the threshold)."""
    analysis = analyze(dataset, OperatingCondition(p, cost_fn, cost_fp))
    op = analysis.operating_point
    cond = op.condition
    # Wait until the page shows these conditions (several readouts: PC(+) alone can coincide).
    wait_number(page, "pc-value", cond.pc)
    wait_number(page, "normalized-cost", op.normalized_cost)
    wait_number(page, "expected-cost", op.expected_cost)
    expect(page.locator("#chosen-classifier")).to_have_text(op.vertex.classifier)
    assert number(page, "pc-value") == pytest.approx(cond.pc, rel=1e-3)
    slope = page.inner_text("#slope-value")
    if math.isinf(cond.slope):
        assert slope == "inf"
    else:
        assert float(slope) == pytest.approx(cond.slope, rel=1e-3)
    if math.isnan(op.vertex.threshold):
        expect(page.locator("#chosen-threshold")).to_have_text("none")
    else:
        # The shortest decimal that flags the same cases, the exact threshold on hover.
        readable = analysis.classifier(op.vertex.classifier).readable_threshold(
            op.vertex.threshold)
        expect(page.locator("#chosen-threshold")).to_have_text(readable)
        assert page.get_attribute("#chosen-threshold", "title") == \
            "exactly " + threshold_text(op.vertex.threshold)
    assert number(page, "chosen-fpr") == pytest.approx(op.vertex.fpr, rel=1e-3, abs=1e-12)
    assert number(page, "chosen-tpr") == pytest.approx(op.vertex.tpr, rel=1e-3, abs=1e-12)
    assert number(page, "normalized-cost") == pytest.approx(op.normalized_cost, rel=1e-3)
    assert number(page, "expected-cost") == pytest.approx(op.expected_cost, rel=1e-3)
    if volume:
        assert number(page, "period-cost") == pytest.approx(op.expected_cost * volume, rel=1e-3)
    # at least 4 significant digits in the plain readouts
    for id_ in ("pc-value", "normalized-cost", "expected-cost"):
        digits = re.sub(r"[^0-9]", "", page.inner_text(f"#{id_}").split()[0].split("e")[0])
        assert len(digits.lstrip("0")) >= 4, page.inner_text(f"#{id_}")


def wait_url_param(page: Page, key: str, value: float) -> None:
    page.wait_for_function(
        "([k, v]) => parseFloat(new URLSearchParams(location.search).get(k)) === v",
        arg=[key, value], timeout=20_000)


def query(page: Page) -> dict[str, str]:
    return {k: v[0] for k, v in parse_qs(urlparse(page.url).query).items()}


def test_upload_type_conditions_readouts_and_url(live_server, page: Page, predictions_csv,
                                                 screenshot_dir):
    errors = open_page(live_server, page)
    choose_file(page, predictions_csv)
    expect(page.locator("#dataset-info")).to_contain_text("predictions.csv: 3,000 cases")
    dataset = load_predictions(predictions_csv)
    # The first load sets p(+) to the data's prevalence.
    expect(page.locator("#p-pos-input")).to_have_value(str(dataset.prevalence))
    assert_readouts(page, dataset, dataset.prevalence, 1.0, 1.0)

    page.fill("#volume-input", "500")
    page.fill("#unit-input", "$")
    for p, cost_fn, cost_fp in CONDITIONS:
        set_conditions(page, p, cost_fn, cost_fp)
        assert_readouts(page, dataset, p, cost_fn, cost_fp, volume=500)
        # The address bar follows a frame after the readouts, one parameter at a time.
        for key, value in (("p_pos", p), ("cost_fn", cost_fn), ("cost_fp", cost_fp)):
            wait_url_param(page, key, value)
        assert re.search(r"/explore\?data=[0-9a-f]{32}&p_pos=", page.url)
    q = query(page)
    p, cost_fn, cost_fp = CONDITIONS[-1]
    assert float(q["p_pos"]) == p and float(q["cost_fn"]) == cost_fn
    assert float(q["cost_fp"]) == cost_fp
    assert q["volume"] == "500" and q["unit"] == "$" and "models" not in q
    assert live_server.store.exists(q["data"])
    expect(page.locator("#expected-cost")).to_have_text(re.compile(r" \$$"))
    screenshot(page, screenshot_dir / "explore-upload.png")
    assert errors == []


def test_url_restores_the_view(live_server, page: Page, predictions_csv):
    record = live_server.store.put(predictions_csv, "predictions.csv")
    url = (f"/explore?data={record.id}&p_pos=0.01&cost_fn=50&cost_fp=1&volume=250&unit=GBP"
           "&models=alpha,gamma")
    errors = open_page(live_server, page, url)
    expect(page.locator("#dataset-info")).to_contain_text("predictions.csv")
    expect(page.locator("#p-pos-input")).to_have_value("0.01")
    expect(page.locator("#cost-fn-input")).to_have_value("50")
    expect(page.locator("#volume-input")).to_have_value("250")
    expect(page.locator("#unit-input")).to_have_value("GBP")
    expect(page.locator("#models-input input[type=checkbox]:checked")).to_have_count(2)
    subset = load_predictions(predictions_csv, models=["alpha", "gamma"])
    assert_readouts(page, subset, 0.01, 50.0, 1.0, volume=250)
    # The slider follows the number box: log10(0.01) = -2.
    expect(page.locator("#p-pos-slider [role=slider]")).to_have_attribute("aria-valuenow", "-2")
    # The address bar keeps the same view (nothing lost on the way).
    expect(page).to_have_url(re.compile("models=alpha,gamma"))
    q = query(page)
    assert (q["data"], q["p_pos"], q["cost_fn"], q["volume"], q["unit"]) == \
        (record.id, "0.01", "50", "250", "GBP")
    # Only the two selected classifiers are drawn.
    names = page.evaluate("document.querySelector('#roc-graph .js-plotly-plot').data"
                          ".map(t => t.meta || t.uid)")
    assert names == ["chance", "alpha", "gamma", "hull"]
    assert errors == []


def test_bad_upload_shows_the_loader_message_and_keeps_the_data(live_server, page: Page,
                                                                 bad_csv):
    open_page(live_server, page)
    page.click("#demo-breast-cancer")
    expect(page.locator("#dataset-info")).to_contain_text("breast-cancer.csv: 569 cases")
    expect(page.locator("#chosen-classifier")).not_to_have_text("–")
    chosen = page.inner_text("#chosen-classifier")
    data_id = query(page).get("data")
    choose_file(page, bad_csv)
    with pytest.raises(InputFileError) as info:
        load_predictions(bad_csv, name="broken.csv")
    expect(page.locator("#upload-error")).to_have_text(str(info.value))
    expect(page.locator("#dataset-info")).to_contain_text("breast-cancer.csv")
    expect(page.locator("#chosen-classifier")).to_have_text(chosen)
    assert query(page).get("data") == data_id
    # The next upload: while it is on its way, the last one's error is gone (issue 24).
    held = []
    page.route("**/api/v1/datasets", lambda route: held.append(route))
    choose_file(page, DEMOS["rare-digit"].path)
    expect(page.locator("#upload-status")).to_contain_text("Reading rare-digit.csv")
    expect(page.locator("#upload-error")).to_have_text("")
    assert len(held) == 1
    held[0].continue_()
    expect(page.locator("#dataset-info")).to_contain_text("rare-digit.csv")
    expect(page.locator("#upload-error")).to_have_text("")


def test_demos_slider_keyboard_sensitivity_and_constraints(live_server, page: Page,
                                                           screenshot_dir):
    errors = open_page(live_server, page)
    page.click("#demo-rare-digit")
    expect(page.locator("#dataset-info")).to_contain_text("rare-digit.csv")
    page.click("#demo-breast-cancer")
    expect(page.locator("#dataset-info")).to_contain_text("breast-cancer.csv")
    dataset = load_predictions(DEMOS["breast-cancer"].path)
    # The rare digits' readouts are still on screen: wait for the breast-cancer data's first
    # drawing, which sets p(+) to its prevalence (it would replace a p(+) typed before it).
    wait_data_drawn(page, dataset)
    set_conditions(page, 0.05, 20.0, 1.0)
    assert_readouts(page, dataset, 0.05, 20.0, 1.0)

    # Keyboard on the p(+) slider: one step up the log scale, the box and readouts follow.
    # At once, before the boxes' typing debounce (0.25 s) has run out: the p(+) box committed
    # 0.05 on leaving it and its debounce commits it once more; that late copy must not put the
    # slider back from this step (it did, 3 runs in 8).
    thumb = page.locator("#p-pos-slider [role=slider]")
    thumb.focus()
    thumb.press("ArrowRight")
    expect(page.locator("#p-pos-input")).not_to_have_value("0.05")
    page.wait_for_timeout(TYPING_DEBOUNCE_MS + 150)     # past the late copy: the step stands
    expect(page.locator("#p-pos-input")).not_to_have_value("0.05")
    p = float(page.input_value("#p-pos-input"))
    assert p == pytest.approx(10 ** (math.log10(0.05) + 0.01), rel=1e-2)
    assert_readouts(page, dataset, p, 20.0, 1.0)

    # Sensitivity: ranges of conditions -> the classifiers optimal somewhere in them (core).
    page.click("text=Sensitivity: ranges of conditions")
    page.check("#sens-on input[type=checkbox]")
    expect(page.locator("#sens-p-lo")).not_to_have_value("")
    for id_, value in (("sens-p-lo", "0.02"), ("sens-p-hi", "0.2"), ("sens-fn-lo", "5"),
                       ("sens-fn-hi", "50"), ("sens-fp-lo", "1"), ("sens-fp-hi", "1")):
        page.fill(f"#{id_}", value)
    page.keyboard.press("Tab")
    hull = analyze(dataset).hull
    result = sensitivity(hull, (0.02, 0.2), (5, 50), (1, 1))
    expect(page.locator("#sensitivity-readout")).to_contain_text(
        "optimal somewhere in them: " + ", ".join(result.classifiers))
    expect(page).to_have_url(re.compile(r"sens_p=0\.02,0\.2"))

    # Neyman-Pearson constraint: drawn and priced.
    page.click("text=Constraints")
    page.fill("#np-max-fpr-input", "0.01")
    page.keyboard.press("Tab")
    expect(page.locator("#constraint-readout")).to_contain_text("Neyman–Pearson (FPR ≤ 0.0100)")
    expect(page.locator("#constraint-readout")).to_contain_text("obeying it costs")
    shapes = page.evaluate("document.querySelector('#roc-graph .js-plotly-plot').layout.shapes"
                           ".map(s => s.name)")
    assert {"iso-performance", "chosen", "sensitivity", "np", "np-limit"} <= set(shapes)
    page.wait_for_timeout(300)
    screenshot(page, screenshot_dir / "explore-demo.png")
    assert errors == []


def test_full_view_from_url_and_screenshot(live_server, page: Page, predictions_csv,
                                          screenshot_dir):
    """Every URL parameter at once (sensitivity ranges, a constraint, all-lines toggle off)."""
    record = live_server.store.put(predictions_csv, "predictions.csv")
    url = (f"/explore?data={record.id}&p_pos=0.2&cost_fn=4&cost_fp=1&volume=1000&unit=€"
           "&sens_p=0.1,0.3&sens_fn=2,8&sens_fp=1,1&max_fpr=0.1")
    errors = open_page(live_server, page, url)
    dataset = load_predictions(predictions_csv)
    assert_readouts(page, dataset, 0.2, 4.0, 1.0, volume=1000)
    result = sensitivity(analyze(dataset).hull, (0.1, 0.3), (2, 8), (1, 1))
    expect(page.locator("#sensitivity-readout")).to_contain_text(
        "optimal somewhere in them: " + ", ".join(result.classifiers))
    expect(page.locator("#constraint-readout")).to_contain_text("Neyman–Pearson (FPR ≤ 0.100)")
    expect(page.locator("#sens-on input[type=checkbox]")).to_be_checked()
    q = query(page)
    assert (q["sens_p"], q["sens_fn"], q["max_fpr"], q["unit"]) == ("0.1,0.3", "2,8", "0.1", "€")
    page.wait_for_timeout(300)
    screenshot(page, screenshot_dir / "explore.png")
    assert errors == []


def test_slider_keys_are_drawn_at_once_then_the_slider_and_box_follow(live_server, page: Page):
    """Arrow and Page keys on a slider are drawn in the key's own handler (issue 23) at the
    position the slider itself would take (Radix: on the 0.01 grid, x10 with Shift or Page
    Up/Down); the thumb and the number box follow; keys it does not take (End) still move the
    slider, and the drawing follows it."""
    record = live_server.store.put(DEMOS["breast-cancer"].path, "breast-cancer.csv")
    errors = open_page(live_server, page, f"/explore?data={record.id}&p_pos=0.05&cost_fn=30"
                                          "&cost_fp=1")
    dataset = load_predictions(DEMOS["breast-cancer"].path)
    assert_readouts(page, dataset, 0.05, 30.0, 1.0)
    thumb = page.locator("#cost-fn-slider [role=slider]")
    thumb.focus()
    # Keys that reach the slider component bubble up to the document; the taken ones do not.
    page.evaluate("""() => { window.__bubbled = [];
        document.addEventListener('keydown', (ev) => window.__bubbled.push(ev.key)); }""")
    # log10(30) = 1.477 rounds to the grid's 1.48, so Radix steps from 1.48.
    for key, position in (("PageUp", 1.58), ("Shift+ArrowLeft", 1.48), ("ArrowLeft", 1.47),
                          ("ArrowUp", 1.48)):
        page.keyboard.press(key)
        expect(thumb).to_have_attribute("aria-valuenow", f"{position:g}")
        cost = float(f"{10 ** position:.3g}")      # the box's value: 3 significant digits
        page.wait_for_function("(v) => parseFloat(document.getElementById('cost-fn-input')"
                               ".value) === v", arg=cost)
        assert_readouts(page, dataset, 0.05, cost, 1.0)
    assert page.evaluate("window.__bubbled") == ["Shift"]     # the modifier's own keydown
    page.keyboard.press("End")                     # the slider's own key: to its maximum
    expect(thumb).to_have_attribute("aria-valuenow", "6")
    assert page.evaluate("window.__bubbled") == ["Shift", "End"]
    assert_readouts(page, dataset, 0.05, 1e6, 1.0)
    assert query(page)["cost_fn"] == "1000000"
    assert errors == []
