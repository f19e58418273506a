"""Explore's moving marks in headless Chromium (issue 23): a slider step draws the iso-performance
line, the PC(+) line, the chosen points and the pins in an SVG layer of the page's own (no
Plotly.relayout per step). After a series of slider keys that layer must sit where Plotly itself
draws the figure's shapes, the shapes must be the current conditions', and a downloaded SVG (and
the figure's JSON) must carry them.
"""

from __future__ import annotations

import pytest
from playwright.sync_api import Page, expect

from costdash import OperatingCondition
from costdash.demo import DEMOS

from .test_e2e_view import open_view, upload

pytestmark = pytest.mark.browser

PINS = "gbm:0.5,logreg:0.3"

# For each slot of the figure: where the layer drew it (its element's box, in px from the plot's
# corner) and where the axes' own mapping (l2p, _offset) puts the shape's data: a pixel-sized
# mark's centre at its anchor, a line's or path's box around its end points.
WHERE = """(gid) => {
    const gd = document.querySelector('#' + gid + ' .js-plotly-plot');
    const fl = gd._fullLayout, xa = fl.xaxis, ya = fl.yaxis, gs = fl._size;
    const origin = gd.querySelector('.main-svg').getBoundingClientRect();
    const px = (ref, v) => ref === 'paper' ? gs.l + gs.w * v : xa._offset + xa.l2p(v);
    const py = (ref, v) => ref === 'paper' ? gs.t + gs.h * (1 - v) : ya._offset + ya.l2p(v);
    const inside = (x, y) => x >= xa._offset - 0.5 && x <= xa._offset + xa._length + 0.5 &&
        y >= ya._offset - 0.5 && y <= ya._offset + ya._length + 0.5;
    const marks = Array.from(gd.querySelectorAll('.costdash-mark'));
    return gd.layout.shapes.map((s, k) => {
        const el = marks[k] && marks[k].firstElementChild;
        const r = el.getBoundingClientRect();
        const drawn = {left: r.left - origin.left, top: r.top - origin.top, width: r.width,
                       height: r.height};
        let want = null;
        if (s.xsizemode === 'pixel') {
            const x = px(s.xref, s.xanchor), y = py(s.yref, s.yanchor);
            if (inside(x, y)) want = {cx: x, cy: y};
        } else {
            const pts = s.type === 'path'
                ? Array.from(s.path.matchAll(/(-?[\\d.eE+-]+),(-?[\\d.eE+-]+)/g),
                             (m) => [Number(m[1]), Number(m[2])])
                : [[s.x0, s.y0], [s.x1, s.y1]];
            const xs = pts.map((p) => px(s.xref, p[0])), ys = pts.map((p) => py(s.yref, p[1]));
            if (xs.every((x, i) => inside(x, ys[i]))) {
                want = {left: Math.min(...xs), top: Math.min(...ys),
                        width: Math.max(...xs) - Math.min(...xs),
                        height: Math.max(...ys) - Math.min(...ys)};
            }
        }
        return {name: s.name, drawn: drawn, want: want,
                shown: marks[k].getAttribute('display') !== 'none'};
    });
}"""

# The same figure drawn by Plotly itself (its shapes layer, which the page hides): each slot's
# box and its label's, against the layer's.
PLOTLY_DRAWN = """async (gid) => {
    const gd = document.querySelector('#' + gid + ' .js-plotly-plot');
    await Plotly.relayout(gd, {shapes: gd.layout.shapes.slice()});
    gd.classList.remove('costdash-marked');
    const box = (el) => { if (!el) return null; const r = el.getBoundingClientRect();
        return [r.left, r.top, r.width, r.height]; };
    const marks = Array.from(gd.querySelectorAll('.costdash-mark'));
    const out = gd.layout.shapes.map((s, k) => ({name: s.name,
        plotly: box(gd.querySelector('.shapelayer path[data-index="' + k + '"]')),
        plotlyLabel: box(gd.querySelector('.shapelayer .shape-label[data-index="' + k +
                                          '"] text')),
        layer: box(marks[k].querySelector('path, ellipse, rect')),
        layerLabel: box(marks[k].querySelector('text'))}));
    gd.classList.add('costdash-marked');
    return out;
}"""


def shape_map(page: Page, graph: str) -> dict[str, dict]:
    return page.evaluate(f"""() => Object.fromEntries(
        document.querySelector('#{graph} .js-plotly-plot').layout.shapes
            .map((s) => [s.name, s]))""")


def settled(page: Page) -> None:
    """The last key's value has reached its box (set after the paint) and the address bar."""
    page.wait_for_function("""() => {
        const last = window.costdashExplore.state.last;
        return last && Number(document.getElementById('p-pos-input').value) === last.p &&
            Number(document.getElementById('cost-fn-input').value) === last.costFn &&
            new URLSearchParams(location.search).get('p_pos') === String(last.p); }""")
    page.wait_for_timeout(200)


def test_slider_marks_sit_on_the_figures_shapes_and_reach_the_download(live_server,
                                                                        page: Page):
    data_id = upload(live_server, DEMOS["breast-cancer"].path)
    errors = open_view(live_server, page, data_id, pins=PINS)
    expect(page.locator("#pin-1-precision")).not_to_have_text("–")
    p_thumb = page.locator("#p-pos-slider [role=slider]")
    p_thumb.focus()
    for key in ["ArrowRight"] * 9 + ["ArrowLeft"] * 3 + ["PageUp"]:
        p_thumb.press(key)
    fn_thumb = page.locator("#cost-fn-slider [role=slider]")
    fn_thumb.focus()
    for key in ["ArrowLeft"] * 7:
        fn_thumb.press(key)
    settled(page)

    p = float(page.input_value("#p-pos-input"))
    fn = float(page.input_value("#cost-fn-input"))
    fp = float(page.input_value("#cost-fp-input"))
    assert (p, fn) != (0.02, 30.0)                 # the keys moved both conditions
    pc = OperatingCondition(p, fn, fp).pc
    roc, cost = shape_map(page, "roc-graph"), shape_map(page, "cost-graph")
    # The figure's own shapes are the current conditions' (what a download draws).
    assert cost["pc"]["x0"] == pytest.approx(pc, abs=1e-12)
    assert cost["chosen"]["xanchor"] == pytest.approx(pc, abs=1e-12)
    assert cost["pin-0"]["xanchor"] == pytest.approx(pc, abs=1e-12)
    assert -9 < roc["pin-1"]["xanchor"] <= 1 and roc["pin-2"]["xanchor"] == -9   # 2 pins
    assert float(page.inner_text("#pc-value")) == pytest.approx(pc, rel=1e-3)

    for graph in ("roc-graph", "cost-graph"):
        placed = page.evaluate(WHERE, graph)
        checked = 0
        assert any(m["want"] for m in placed if m["name"] in ("pc", "iso-performance"))
        for mark in placed:
            if mark["want"] is None:
                continue
            assert mark["shown"], mark["name"]
            d, w = mark["drawn"], mark["want"]
            if "cx" in w:
                assert d["left"] + d["width"] / 2 == pytest.approx(w["cx"], abs=1.0), mark
                assert d["top"] + d["height"] / 2 == pytest.approx(w["cy"], abs=1.0), mark
            else:
                for k in ("left", "top", "width", "height"):
                    assert d[k] == pytest.approx(w[k], abs=1.5), (mark, k)
            checked += 1
        # iso-performance or pc line, the chosen point and both pins at least.
        assert checked >= 4, (graph, placed)

        # Plotly's own drawing of the same shapes: the same boxes, labels included.
        both = page.evaluate(PLOTLY_DRAWN, graph)
        compared = 0
        for slot in both:
            if slot["plotly"] is None or slot["plotly"][2] == 0 and slot["plotly"][3] == 0:
                continue
            if slot["plotly"][0] < 0:                     # parked, clipped away
                continue
            assert slot["layer"] == pytest.approx(slot["plotly"], abs=1.0), slot
            if slot["plotlyLabel"] is not None:
                assert slot["layerLabel"] == pytest.approx(slot["plotlyLabel"], abs=1.5), slot
            compared += 1
        assert compared >= 4, (graph, both)

    # Another key after Plotly drew the shapes itself: its (stale) copy stays hidden, the layer
    # moves.
    p_thumb.focus()
    p_thumb.press("ArrowRight")
    settled(page)
    assert page.evaluate("""() => getComputedStyle(document.querySelector(
        '#cost-graph .js-plotly-plot .shapelayer')).display""") == "none"
    pc2 = OperatingCondition(float(page.input_value("#p-pos-input")), fn, fp).pc
    assert pc2 != pc
    pc_mark = next(m for m in page.evaluate(WHERE, "cost-graph") if m["name"] == "pc")
    assert pc_mark["drawn"]["left"] == pytest.approx(pc_mark["want"]["left"], abs=1.0)

    # The SVG download (the mode bar's button) draws the marks as the figure's shapes, where
    # the figure's axes put them: the pins' numbers and the PC(+) line at this PC(+).
    gd = "document.querySelector('#cost-graph .js-plotly-plot')"
    page.hover("#cost-graph .js-plotly-plot")
    with page.expect_download() as info:
        page.click("#cost-graph .modebar-btn[data-title='Download plot as an SVG']")
    svg = open(info.value.path(), encoding="utf-8").read()
    labels = page.evaluate(f"""(svg) => {{
        const doc = new DOMParser().parseFromString(svg, 'image/svg+xml');
        const layer = doc.querySelectorAll('.shapelayer path');
        return {{paths: layer.length,
                 labels: Array.from(doc.querySelectorAll('.shape-label text'),
                                    (t) => t.textContent),
                 dashed: Array.from(layer).filter((p) => (p.getAttribute('style') || '')
                     .includes('stroke-dasharray')).length,
                 slots: {gd}.layout.shapes.length}}; }}""", svg)
    assert labels["paths"] == labels["slots"]
    assert labels["labels"] == ["1", "2", "3", "4"]            # every pin slot, 2 parked
    assert labels["dashed"] >= 3                               # PC(+) line, pins' cost lines
    assert errors == []
