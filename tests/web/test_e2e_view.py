"""One view state, end to end in headless Chromium: the view a user builds survives navigation,
reaches the exports, commits predictably and travels in read-only links.

A real ``python app.py`` (see conftest's ``live_server``); the data set is stored through the
upload API, as the page's own upload does.
"""

from __future__ import annotations

import json
import re
import time
import urllib.request
from urllib.parse import parse_qs, urlparse

import pytest
from playwright.sync_api import Page, expect

from costdash import OperatingCondition, analyze
from costdash.demo import DEMOS
from costdash.io import load_predictions

from .helpers import wait_data_drawn
from .test_e2e_explore import open_page

pytestmark = pytest.mark.browser

TICKED = ("logreg", "gbm")
UNTICKED = ("forest", "naive_bayes", "stump")
CONDITIONS = {"p_pos": "0.02", "cost_fn": "30", "cost_fp": "1.5", "volume": "5000",
              "unit": "USD", "models": ",".join(TICKED)}
READOUTS = ("pc-value", "slope-value", "chosen-classifier", "chosen-threshold", "chosen-fpr",
            "chosen-tpr", "normalized-cost", "expected-cost", "period-cost", "saving-trivial",
            "cm-tp", "cm-fn", "cm-fp", "cm-tn", "sentence")
BOXES = ("p-pos-input", "cost-fn-input", "cost-fp-input", "volume-input", "unit-input")
READY = "() => { const el = document.getElementById('chosen-classifier');" \
        " return el !== null && el.textContent !== '–'; }"


def upload(server, path) -> str:
    """Store a predictions file through ``POST /api/v1/datasets``; its id."""
    boundary = "costdashtestboundary"
    body = (f"--{boundary}\r\nContent-Disposition: form-data; name=\"file\"; "
            f"filename=\"{path.name}\"\r\nContent-Type: text/csv\r\n\r\n").encode() \
        + path.read_bytes() + f"\r\n--{boundary}--\r\n".encode()
    req = urllib.request.Request(server.url + "/api/v1/datasets", data=body, method="POST",
                                 headers={"Content-Type": f"multipart/form-data; boundary={boundary}"})
    with urllib.request.urlopen(req, timeout=30) as resp:
        return json.loads(resp.read())["id"]


def address(page: Page) -> dict[str, str]:
    """The query of the address bar as the page shows it now (replaceState included)."""
    href = page.evaluate("() => location.href")
    return {k: v[0] for k, v in parse_qs(urlparse(href).query).items()}


def screen(page: Page) -> dict[str, object]:
    """Every readout, box and ticked classifier of Explore."""
    state: dict[str, object] = {i: page.inner_text(f"#{i}") for i in READOUTS}
    state.update({i: page.input_value(f"#{i}") for i in BOXES})
    state["ticked"] = page.eval_on_selector_all(
        "#models-input input:checked", "els => els.map(e => e.value)")
    return state


def open_view(server, page: Page, data_id: str, **extra: str) -> list[str]:
    query = "&".join(f"{k}={v}" for k, v in {"data": data_id, **CONDITIONS, **extra}.items())
    errors = open_page(server, page, "/explore?" + query)
    page.wait_for_function(READY)
    return errors


def download(page: Page, selector: str) -> str:
    with page.expect_download() as info:
        page.click(selector)
    return open(info.value.path(), encoding="utf-8").read()


def test_navigation_keeps_the_view_and_exports_are_the_screen(live_server, page: Page):
    data_id = upload(live_server, DEMOS["breast-cancer"].path)
    errors = open_view(live_server, page, data_id)
    before = screen(page)
    assert before["ticked"] == list(TICKED)
    assert before["chosen-classifier"] in TICKED

    # The screen's numbers are the core's, for the ticked classifiers only.
    dataset = load_predictions(DEMOS["breast-cancer"].path, models=list(TICKED))
    chosen = analyze(dataset, OperatingCondition(0.02, 30.0, 1.5)).operating_point
    assert before["chosen-classifier"] == chosen.vertex.classifier

    for slug in ("compare", "confidence", "folds", "multiclass"):
        page.click(f"#nav-{slug}")
        page.wait_for_function(f"() => location.pathname.endsWith('/{slug}')")
        time.sleep(0.3)   # let the page's own controls record their fields
        carried = address(page)
        for key, value in CONDITIONS.items():
            assert carried.get(key) == value, (slug, key, carried)
        assert carried["data"] == data_id

    page.click("#nav-explore")
    page.wait_for_function(READY)
    page.wait_for_function(
        "([c]) => document.getElementById('chosen-classifier').textContent === c",
        arg=[before["chosen-classifier"]])
    assert screen(page) == before
    assert {k: address(page).get(k) for k in CONDITIONS} == CONDITIONS

    report = download(page, "#export-report")
    hull = download(page, "#export-hull")
    for name in UNTICKED:
        # As HTML text or a JSON string (plot data); plotly.js itself is embedded and names
        # colours such as "forestgreen".
        assert not re.search(f'[">]{name}["<]', report), name
        assert name not in hull
    assert re.search(f'[">]{TICKED[1]}["<]', report)
    assert f'<b class="chosen-classifier">{before["chosen-classifier"]}</b>' in report
    assert before["chosen-threshold"] in report
    assert errors == []


def test_confidence_starts_from_the_conditions(live_server, page: Page):
    data_id = upload(live_server, DEMOS["breast-cancer"].path)
    open_view(live_server, page, data_id)
    page.click("#nav-confidence")
    pc = OperatingCondition(0.02, 30.0, 1.5).pc
    page.wait_for_function(
        "([pc]) => { const el = document.getElementById('confidence-pc');"
        " return el && Math.abs(parseFloat(el.value) - pc) < 1e-3; }", arg=[pc])
    # Its report link is an export of the whole view: Explore's selection and conditions,
    # with this page's classifier as the band.
    page.wait_for_function("() => (document.getElementById('confidence-report')"
                           " .getAttribute('href') || '').includes('model=logreg')")
    href = page.get_attribute("#confidence-report", "href")
    assert href.startswith(f"/api/v1/datasets/{data_id}/report.html?")
    query = {k: v[0] for k, v in parse_qs(urlparse(href).query).items()}
    assert {k: query.get(k) for k in CONDITIONS} == CONDITIONS
    assert page.input_value("#confidence-model") if page.locator(
        "input#confidence-model").count() else True


def test_enter_commits_and_invalid_values_never_reach_the_address(live_server, page: Page):
    data_id = upload(live_server, DEMOS["breast-cancer"].path)
    open_view(live_server, page, data_id)
    page.fill("#cost-fn-input", "60")
    pc = OperatingCondition(0.02, 60.0, 1.5).pc
    # Enter is drawn while its keydown is being dispatched: the readout has changed before the
    # dispatch returns, whatever the machine's load (no waiting for the 250 ms typing debounce).
    shown = page.evaluate("""() => {
        const box = document.getElementById('cost-fn-input');
        box.dispatchEvent(new KeyboardEvent('keydown', {key: 'Enter', bubbles: true}));
        return document.getElementById('pc-value').textContent;
    }""")
    assert abs(float(shown) - pc) < 1e-3
    page.wait_for_function("() => new URLSearchParams(location.search).get('cost_fn') === '60'")
    expect(page.locator("#cost-fn-slider [role=slider]")).to_have_attribute(
        "aria-valuetext", "C(−|+) = 60")

    page.fill("#cost-fp-input", "-2")
    page.press("#cost-fp-input", "Enter")
    expect(page.locator("#conditions-error")).to_contain_text("C(+|−) must be a number above 0")
    expect(page.locator("#pc-value")).to_have_text("–")           # stale numbers are not shown
    expect(page.locator(".explore .results")).to_have_class("results stale")
    time.sleep(0.3)
    assert address(page)["cost_fp"] == "1.5"                     # the last valid value
    assert "cost_fp=1.5" in page.get_attribute("#nav-compare", "href")

    page.fill("#cost-fp-input", "3")
    page.press("#cost-fp-input", "Enter")
    expect(page.locator("#conditions-error")).to_have_text("")
    pc = OperatingCondition(0.02, 60.0, 3.0).pc
    page.wait_for_function(
        "([pc]) => Math.abs(parseFloat(document.getElementById('pc-value').textContent) - pc)"
        " < 1e-3", arg=[pc])


def test_typed_expiry_survives_an_immediate_share_and_a_what_if_reaches_the_address(
        live_server, page: Page, browser):
    data_id = upload(live_server, DEMOS["breast-cancer"].path)
    open_view(live_server, page, data_id)
    page.fill("#share-expiry", "7")
    page.click("#share-button")                                   # no Tab, no wait
    share_url = page.get_attribute("#share-url", "href", timeout=30_000)
    token = share_url.rsplit("/", 1)[1]
    with urllib.request.urlopen(f"{live_server.url}/api/v1/analyses/{token}") as resp:
        saved = json.loads(resp.read())
    assert saved["analysis"]["expires_at"] is not None
    assert saved["view"]["models"] == list(TICKED)
    assert saved["view"]["volume"] == 5000 and saved["view"]["unit"] == "USD"

    page.goto(share_url)
    page.wait_for_function(READY)
    page.fill("#cost-fn-input", "99")
    page.press("#cost-fn-input", "Enter")
    page.wait_for_function("() => new URLSearchParams(location.search).get('cost_fn') === '99'")
    what_if = page.evaluate("() => location.href")
    assert urlparse(what_if).path == f"/s/{token}"
    assert "data=" not in what_if                                 # the link names the analysis
    # A viewer holds the analysis, not the data set: no id in the nav links, no data downloads.
    # The nav stays in the link (issue 22): its pages carry the what-if, the others are not offered.
    curves_href = page.get_attribute("#nav-curves", "href")
    assert curves_href.startswith(f"/s/{token}/curves?") and "cost_fn=99" in curves_href
    assert "data=" not in curves_href
    assert page.get_attribute("#nav-compare", "href") == f"/s/{token}"
    expect(page.locator("#nav-compare")).to_be_hidden()
    expect(page.locator("#export-report")).to_have_count(0)
    other = browser.new_page()
    other.goto(what_if)
    other.wait_for_function(READY)
    assert other.input_value("#cost-fn-input") == "99"
    assert other.inner_text("#chosen-classifier") == page.inner_text("#chosen-classifier")
    other.close()


def test_another_file_brings_its_own_prevalence(live_server, page: Page):
    first = upload(live_server, DEMOS["breast-cancer"].path)
    open_view(live_server, page, first)
    page.click("#demo-rare-digit")
    rare = load_predictions(DEMOS["rare-digit"].path)
    wait_data_drawn(page, rare)
    assert page.eval_on_selector_all("#models-input input:checked",
                                     "els => els.length") == len(rare.scored)
    assert page.input_value("#cost-fn-input") == "30"              # the rest of the view stays
    assert page.input_value("#volume-input") == "5000"


def test_sliders_speak_the_users_terms(live_server, page: Page):
    data_id = upload(live_server, DEMOS["breast-cancer"].path)
    open_view(live_server, page, data_id)
    thumb = page.locator("#p-pos-slider [role=slider]")
    expect(thumb).to_have_attribute("aria-label", "p(+): probability that a case is positive")
    expect(thumb).to_have_attribute("aria-valuetext", "p(+) = 0.02")
    thumb.focus()
    thumb.press("ArrowRight")
    expect(thumb).not_to_have_attribute("aria-valuetext", "p(+) = 0.02")
    assert thumb.get_attribute("aria-valuetext").startswith("p(+) = 0.02")  # 0.0205 etc.


def test_downloads_wait_for_data(live_server, page: Page):
    open_page(live_server, page, "/explore")
    link = page.locator("#export-report")
    expect(link).to_have_attribute("aria-disabled", "true")
    assert "Open a data set first" in link.get_attribute("title")


@pytest.mark.parametrize("path", ["/explore", "/compare", "/confidence", "/folds",
                                  "/multiclass"])
def test_390_px_wide_nothing_overflows_the_page(live_server, browser, path):
    data_id = upload(live_server, DEMOS["breast-cancer"].path)
    page = browser.new_page(viewport={"width": 390, "height": 844})
    query = "&".join(f"{k}={v}" for k, v in {"data": data_id, **CONDITIONS}.items())
    page.goto(f"{live_server.url}{path}?{query}")
    page.wait_for_selector(".js-plotly-plot, .mc-grid, #mc-upload", timeout=30_000)
    page.wait_for_timeout(1500)
    assert page.evaluate("document.documentElement.scrollWidth") <= 390
    # The legend sits under the x axis's title, never on it.
    for graph in page.locator(".js-plotly-plot").all():
        boxes = graph.evaluate("""(gd) => {
            const title = gd.querySelector('.g-xtitle'), legend = gd.querySelector('.legend');
            if (!title || !legend) return null;
            const t = title.getBoundingClientRect(), l = legend.getBoundingClientRect();
            return [t.bottom, l.top];
        }""")
        if boxes:
            assert boxes[0] <= boxes[1] + 0.5, (path, boxes)
    page.close()


def test_upload_messages_name_the_pages_controls(live_server, page: Page, tmp_path):
    errors = open_page(live_server, page, "/explore")
    odd = tmp_path / "odd-labels.csv"
    odd.write_text("y_true,model_a\nred,0.9\nblue,0.2\nred,0.7\nblue,0.4\n")
    page.set_input_files("#upload input[type=file]", files=[
        {"name": odd.name, "mimeType": "text/csv", "buffer": odd.read_bytes()}])
    expect(page.locator("#upload-error")).to_contain_text(
        "the “Positive label” box under Reading options")
    assert "--positive" not in page.inner_text("#upload-error")

    gaps = tmp_path / "gaps.csv"
    gaps.write_text("y_true,model_a\n1,0.9\n0,\n1,0.7\n0,0.4\n")
    page.set_input_files("#upload input[type=file]", files=[
        {"name": gaps.name, "mimeType": "text/csv", "buffer": gaps.read_bytes()}])
    expect(page.locator("#upload-error")).to_contain_text(
        "tick “Drop rows with missing scores” under Reading options")
    page.click(".upload-options summary")
    page.check("#upload-drop-missing input[type=checkbox]")
    page.set_input_files("#upload input[type=file]", files=[
        {"name": gaps.name, "mimeType": "text/csv", "buffer": gaps.read_bytes()}])
    expect(page.locator("#dataset-info")).to_contain_text("gaps.csv: 3 cases")
    expect(page.locator("#upload-error")).to_have_text("")
    # The two refused uploads are answered 400, which the browser logs; nothing else may be.
    assert [e for e in errors if "status of 400" not in e] == []


# --- issue 24: the whole view is valid before it goes anywhere; money and its percentage -------

def test_an_invalid_combination_stays_in_its_box(live_server, page: Page):
    data_id = upload(live_server, DEMOS["breast-cancer"].path)
    errors = open_view(live_server, page, data_id, cost_fn="40")
    page.click(".benefits summary")
    page.fill("#cost-tp-input", "50")
    page.press("#cost-tp-input", "Enter")
    # C(+|+) = 50 is a number, but not beside C(−|+) = 40: the message, in the view's words...
    expect(page.locator("#conditions-error")).to_contain_text(
        "C(+|+) must be below C(−|+) (an error must cost more than the correct decision")
    expect(page.locator("#pc-value")).to_have_text("–")
    time.sleep(0.5)          # past the address bar's 150 ms throttle and the typing debounce
    # ... the box keeps what was typed, and nothing else sees it.
    assert page.input_value("#cost-tp-input") == "50"
    assert "cost_tp" not in address(page)
    for nav in ("#nav-compare", "#nav-curves", "#nav-choice"):
        assert "cost_tp" not in page.get_attribute(nav, "href"), nav
    for link in ("#export-report", "#export-hull", "#export-decision"):
        assert "cost_tp" not in page.get_attribute(link, "href"), link
    # The report of the page is the last valid view: a report, not an error.
    report = download(page, "#export-report")
    assert report.lstrip().lower().startswith("<!doctype html")
    assert 'class="chosen-classifier">' in report
    # Raising C(−|+) above it makes the pair valid: both reach the address together.
    page.fill("#cost-fn-input", "60")
    page.press("#cost-fn-input", "Enter")
    expect(page.locator("#conditions-error")).to_have_text("")
    page.wait_for_function("() => { const q = new URLSearchParams(location.search);"
                           " return q.get('cost_tp') === '50' && q.get('cost_fn') === '60'; }")
    assert "cost_tp=50" in page.get_attribute("#export-report", "href")
    assert errors == []


def test_a_browser_opening_an_invalid_report_gets_a_page(live_server, page: Page):
    data_id = upload(live_server, DEMOS["breast-cancer"].path)
    url = (f"{live_server.url}/api/v1/datasets/{data_id}/report.html?p_pos=0.02&cost_fn=40"
           "&cost_tp=50")
    response = page.goto(url)
    assert response.status == 400 and "text/html" in response.headers["content-type"]
    expect(page.locator("h1")).to_have_text("The report could not be made for this view")
    expect(page.locator("main")).to_contain_text("C(+|+) must be below C(−|+)")
    page.click("text=Open this view on Explore")
    page.wait_for_function("() => location.pathname === '/explore'")
    expect(page.locator(".view-problems")).to_contain_text("C(+|+) must be below C(−|+)")


MONEY = re.compile(r"^(?P<saved>[−\-\d.,]+) \$ \((?P<share>[\d.]+)%\) less than flagging nothing, "
                   r"which costs (?P<trivial>[−\-\d.,]+) \$$")


def test_the_saving_percentage_is_of_the_money_beside_it(live_server, page: Page):
    # Issue 24: digits, p(+) 0.02, C(−|+) 40, C(+|−) 2, C(+|+) −5, 500 cases in $: the page said
    # "−30.8 $ per 500 cases, 96 % less than flagging nothing", which costs 400 $ there.
    data_id = upload(live_server, DEMOS["rare-digit"].path)
    query = {"data": data_id, "p_pos": "0.02", "cost_fn": "40", "cost_fp": "2", "cost_tp": "-5",
             "volume": "500", "unit": "$"}
    open_page(live_server, page, "/explore?" + "&".join(f"{k}={v}" for k, v in query.items()))
    page.wait_for_function(READY)
    dataset = load_predictions(DEMOS["rare-digit"].path)
    analysis = analyze(dataset, OperatingCondition(0.02, 40.0, 2.0, cost_tp=-5.0))
    op = analysis.operating_point
    period = op.expected_cost * 500
    assert period < 0                                  # the benefits outweigh the costs
    card = page.inner_text("#saving-trivial")
    found = MONEY.match(card)
    assert found, card
    number = lambda text: float(text.replace("−", "-").replace(",", ""))  # noqa: E731
    trivial, saved, share = (number(found["trivial"]), number(found["saved"]),
                             float(found["share"]) / 100)
    assert trivial == 400                              # 0.02 x 40 x 500: no positive detected
    assert saved == pytest.approx(400 - period, rel=5e-3)
    assert share == pytest.approx((400 - period) / 400, abs=0.005)   # over 100 %, not 96 %
    sentence = page.inner_text("#sentence")
    assert sentence.endswith(f", {card}.")
    # The report says the same words for the same view (assets/explore-readouts.js and
    # dashboard/report/readouts.py each write them).
    report_url = page.get_attribute("#export-report", "href")
    with urllib.request.urlopen(live_server.url + report_url, timeout=60) as resp:
        report = resp.read().decode("utf-8")
    assert f'<td id="saving-trivial">{card}</td>' in report
    text = re.sub(r"<[^>]+>", "", re.search(r'<p id="sentence">(.*?)</p>', report).group(1))
    assert text == sentence
    # The threshold: the readable one in the sentence and the card, the exact one on hover.
    v = op.vertex
    readable = analysis.classifier(v.classifier).readable_threshold(v.threshold)
    expect(page.locator("#chosen-threshold")).to_have_text(readable)
    hover = page.get_attribute("#sentence .threshold", "title")
    assert hover == page.get_attribute("#chosen-threshold", "title")
    assert float(hover.removeprefix("exactly ")) == v.threshold
    assert page.evaluate("getComputedStyle(document.getElementById('chosen-threshold'))"
                         ".whiteSpace") == "nowrap"
