"""Explore's readouts in relayout boundaries, and a slider step's table and pins a frame later
(issue 23: a slider step in one frame), in headless Chromium.

Each readout card's content, the sentence and the plots' captions sit in a ``relayout-box``
with ``contain: size layout`` whose height a ResizeObserver keeps equal to its content's
(assets/explore-readouts.js): nothing may be clipped or overlapped, at 1440 or 390 px, with long
classifier names and large amounts. A slider step paints the per-classifier table and the pins'
cards after the readout's frame is painted: they must end up exactly as a full drawing at the
same conditions paints them.
"""

from __future__ import annotations

import pytest
from playwright.sync_api import Page

from costdash.demo import DEMOS

from .test_e2e_view import CONDITIONS, READY, open_view, upload

pytestmark = pytest.mark.browser

PINS = {"pins": "logreg:0.5,gbm:0.25"}

# The texts a step changes outside the readouts: the table's cells and the pins' cards.
REST = """() => [
    ...Array.from(document.querySelectorAll('#fixed-table-body td')).map((td) => td.textContent),
    ...Array.from(document.querySelectorAll('.pin-slot:not([hidden]) [id^=pin-]'))
        .filter((el) => el.children.length === 0).map((el) => el.id + '=' + el.textContent)]"""

# Every box: its height, its content's, and whether it is contained.
BOXES = """() => Array.from(document.querySelectorAll('.relayout-box')).map((box) => {
    const inner = box.firstElementChild;
    const b = box.getBoundingClientRect(), i = inner.getBoundingClientRect();
    return {box: b.height, inner: i.height, innerBottom: i.bottom, boxBottom: b.bottom,
            sized: box.classList.contains('sized'),
            contain: getComputedStyle(box).contain,
            what: (box.closest('[id]') || box).id || box.parentElement.className};
})"""


def _pinned_page(live_server, page: Page, **extra: str) -> None:
    data_id = upload(live_server, DEMOS["breast-cancer"].path)
    open_view(live_server, page, data_id, **PINS, **extra)
    page.wait_for_function("document.querySelectorAll('.pin-slot:not([hidden])').length === 2")
    page.wait_for_function("document.getElementById('pin-1-cost').textContent !== '–'")
    page.wait_for_timeout(300)


def test_a_slider_steps_table_and_pins_are_those_of_its_conditions(live_server, page: Page):
    _pinned_page(live_server, page)
    before = page.evaluate(REST)
    readout = page.inner_text("#pc-value")
    page.focus("#p-pos-slider [role=slider]")
    for _ in range(3):
        page.keyboard.press("ArrowRight")
    page.wait_for_function(f"document.getElementById('pc-value').textContent !== '{readout}'")
    page.wait_for_timeout(400)          # the next frame, and the slider's own update after it
    stepped = page.evaluate(REST)
    assert stepped != before            # the step changed the table and the pins
    # A full drawing at the conditions now on screen paints the very same texts.
    page.evaluate("() => { const E = window.costdashExplore; E.render(E.state.last, false); }")
    assert page.evaluate(REST) == stepped

    # Right after a step's key (before its next frame), a full drawing of the same conditions
    # must not be overwritten by the step's later rest: the newest drawing wins.
    page.evaluate("""() => new Promise((done) => {
        const E = window.costdashExplore, S = E.state;
        const next = Object.assign({}, S.last, {p: S.last.p * 1.5});
        E.render(next, false, true);                  // a step: its rest a frame later
        S.last = next;
        E.render(Object.assign({}, next, {p: next.p * 1.5}), false);   // all at once, newer
        setTimeout(done, 400);          // past the step's rest (an idle callback, <= 100 ms)
    })""")
    newest = page.evaluate(REST)
    page.evaluate("""() => { const E = window.costdashExplore;
        E.render(Object.assign({}, E.state.last, {p: E.state.last.p * 1.5}), false); }""")
    assert page.evaluate(REST) == newest


@pytest.mark.parametrize("width", [1440, 390])
def test_readout_boxes_hold_their_text(live_server, browser, width):
    page = browser.new_page(viewport={"width": width, "height": 900})
    try:
        # A long unit and a large volume: the longest amounts the readouts write.
        _pinned_page(live_server, page, volume="123456789000", unit="thousand-EUR")
        boxes = page.evaluate(BOXES)
        assert len(boxes) >= 5 + 3          # 5 cards, the sentence, 2 captions
        for b in boxes:
            assert b["sized"] and "size" in b["contain"], b
            assert abs(b["box"] - b["inner"]) < 1.0, b
            assert b["innerBottom"] <= b["boxBottom"] + 1.0, b
        # A step whose sentence and captions change length: still their content's height, in
        # the frame that shows them (the observer runs before that frame's paint).
        page.evaluate("""() => { const E = window.costdashExplore;
            E.render(Object.assign({}, E.state.last, {unit: 'EUR (thousands, before tax)'}),
                     false); }""")
        heights = page.evaluate("""() => new Promise((done) => requestAnimationFrame(() =>
            done(Array.from(document.querySelectorAll('.relayout-box')).map((box) =>
                [box.getBoundingClientRect().height,
                 box.firstElementChild.getBoundingClientRect().height]))))""")
        assert all(abs(b - i) < 1.0 for b, i in heights), heights
        assert page.evaluate("document.documentElement.scrollWidth") <= width
    finally:
        page.close()


def test_the_sentence_keeps_its_nodes_when_only_its_text_changes(live_server, page: Page):
    data_id = upload(live_server, DEMOS["breast-cancer"].path)
    open_view(live_server, page, data_id)
    page.wait_for_function(READY)
    page.evaluate("""() => { window.__node = document.querySelector('#sentence .relayout-inner')
        .firstChild; }""")
    text = page.inner_text("#sentence")
    page.focus("#cost-fn-slider [role=slider]")
    page.keyboard.press("ArrowRight")
    page.wait_for_function(f"document.getElementById('sentence').innerText !== {text!r}")
    # The same text node, its data rewritten (no nodes re-attached: that laid out the page).
    assert page.evaluate("""() => document.querySelector('#sentence .relayout-inner')
        .firstChild === window.__node""")
    assert CONDITIONS["unit"] in page.inner_text("#sentence")


def test_a_menu_open_in_a_box_is_above_the_next_card(live_server, page: Page):
    # Containment makes each box a stacking context: the interval level's open menu (in the
    # Cost card) must not be painted under the table's text below it.
    _pinned_page(live_server, page)
    page.locator("#interval-level").scroll_into_view_if_needed()
    page.click("#interval-level")
    option = page.get_by_role("option").last
    option.wait_for()
    box = option.bounding_box()
    on_top = page.evaluate("""([x, y]) => {
        const el = document.elementFromPoint(x, y);
        return Boolean(el && el.closest('[role=option]'));
    }""", [box["x"] + box["width"] / 2, box["y"] + box["height"] / 2])
    assert on_top
