/*
 * explore-geometry.js -- where the Explore page's moving parts go: lines clipped to the unit
 * square, the fixed shape slots of both figures, the display coordinates of the view's axes
 * (linear, log FPR, log-odds PC(+)) and the operating-range strip chart's PC(+) line. Drawing
 * only; the cost arithmetic is costmath.js's.
 */
(function () {
    "use strict";

    const E = window.costdashExplore;
    const {clamp, graphDiv, PIN_SLOTS} = E;

    // --- geometry for drawing (not cost math: clipping lines to the unit square) ----------------

    /** The two extreme points of `pts` (a line's crossings of the square's edges) that lie in
     * [0, 1]^2, or null when fewer than two do. */
    function segmentInside(pts) {
        const eps = 1e-12;
        const inside = pts.filter(([x, y]) => x >= -eps && x <= 1 + eps && y >= -eps && y <= 1 + eps)
            .map(([x, y]) => [clamp(x, 0, 1), clamp(y, 0, 1)]);
        if (inside.length < 2) return null;
        inside.sort((p, q) => p[0] - q[0] || p[1] - q[1]);
        return [inside[0], inside[inside.length - 1]];
    }

    /** The part of the line through (x0, y0) with slope m inside [0, 1]^2, as two points. */
    function clipLine(x0, y0, m) {
        if (!Number.isFinite(m)) return [[x0, 0], [x0, 1]];
        if (m === 0) return [[0, y0], [1, y0]];
        return segmentInside([[0, y0 - m * x0], [1, y0 + m * (1 - x0)], [x0 - y0 / m, 0],
            [x0 + (1 - y0) / m, 1]]);
    }

    /** The segment of {(x, y): a x + b y = c} inside [0, 1]^2 (capacity lines). */
    function clipLinear(a, b, c) {
        const pts = [];
        if (b !== 0) pts.push([0, c / b], [1, (c - a) / b]);
        if (a !== 0) pts.push([c / a, 0], [(c - b) / a, 1]);
        return segmentInside(pts);
    }

    // --- shape slots ----------------------------------------------------------------------------
    //
    // Each figure carries a FIXED list of shapes, one slot per moving part, always with the same
    // type and attributes; only coordinates and colours change. explore-plots.js draws them in
    // an SVG layer of its own, one element per slot, so a step only changes attributes; they are
    // the figure's layout shapes too (what a download draws). Adding, removing or retyping a
    // Plotly shape (or touching annotations) would make Plotly re-plot every trace (50-150 ms
    // with 20 classifiers, measured). An unused slot is parked outside the axes (whose ranges
    // are fixed), where it is clipped away. A new figure comes from the server without shapes.

    const COLORS = {iso: "#1f2328", np: "#D55E00", capacity: "#CC79A7",
        band: "rgba(230,159,0,0.16)", segment: "rgba(230,159,0,0.55)"};
    const PARK = -9;   // outside both figures' fixed axis ranges

    const lineSlot = (name, color, width, dash, yref) => ({name: name, type: "line", xref: "x",
        yref: yref || "y", x0: PARK, y0: PARK, x1: PARK, y1: PARK, layer: "above", opacity: 1,
        line: {color: color, width: width, dash: dash}});
    // On a log axis a straight line of the linear axes (an iso-performance line, a cost line) is
    // a curve: its slot is a path sampled along it (see `geometry` in render) instead of a line.
    const PARK_PATH = "M" + PARK + "," + PARK + " L" + PARK + "," + PARK;
    const curveSlot = (name, color, width, dash, curved) => (curved ? {name: name, type: "path",
        xref: "x", yref: "y", path: PARK_PATH, layer: "above", opacity: 1,
        fillcolor: "rgba(0,0,0,0)", line: {color: color, width: width, dash: dash}}
        : lineSlot(name, color, width, dash));
    const markSlot = (name, shape, color, size) => ({name: name, type: shape, xref: "x", yref: "y",
        xsizemode: "pixel", ysizemode: "pixel", xanchor: PARK, yanchor: PARK, x0: -size,
        x1: size, y0: -size, y1: size, layer: "above", opacity: 1,
        fillcolor: "rgba(255,255,255,0.35)", line: {color: color, width: 2.5, dash: "solid"}});

    // Pinned thresholds: PIN_SLOTS (costdash.view.MAX_PINS) fixed slots in each figure, a diamond
    // numbered like the pin's card in ROC space; in cost space the pin's cost line, the piece of
    // it where the threshold is optimal for its classifier (thick) and a diamond at the current
    // PC(+). Unused slots stay parked; a pin's number never changes text (a label edit would be a
    // structure change).
    const DIAMOND = (r) => "M0," + r + " L" + r + ",0 L0,-" + r + " L-" + r + ",0 Z";
    const pinMark = (name, k, size) => ({name: name, type: "path", xref: "x", yref: "y",
        xsizemode: "pixel", ysizemode: "pixel", xanchor: PARK, yanchor: PARK, path: DIAMOND(size),
        layer: "above", opacity: 1, fillcolor: "rgba(255,255,255,0.85)",
        line: {color: COLORS.iso, width: 2.2, dash: "solid"},
        label: {text: String(k + 1), textposition: "bottom left", padding: 6,
            font: {size: 11, color: COLORS.iso}}});

    function pinRocSlots() {
        const out = [];
        for (let k = 0; k < PIN_SLOTS; k++) out.push(pinMark("pin-" + k, k, 7));
        return out;
    }

    function pinCostSlots(curved) {
        const out = [];
        for (let k = 0; k < PIN_SLOTS; k++) {
            out.push(curveSlot("pin-" + k + "-line", COLORS.iso, 1.4, "longdash", curved));
            const piece = curveSlot("pin-" + k + "-optimal", COLORS.iso, 6, "solid", curved);
            piece.opacity = 0.35;
            out.push(piece);
            out.push(pinMark("pin-" + k, k, 6));
        }
        return out;
    }

    function rocSlots(curved) {
        return [
            {name: "sensitivity", type: "path", xref: "x", yref: "y", layer: "below", opacity: 1,
                path: "M" + PARK + "," + PARK + " L" + PARK + "," + PARK,
                fillcolor: "rgba(0,0,0,0)", line: {color: COLORS.segment, width: 16, dash: "solid"}},
            ...pinRocSlots(),
            curveSlot("iso-performance", COLORS.iso, 1.8, "dash", curved),
            markSlot("chosen", "circle", COLORS.iso, 9),
            lineSlot("np-limit", COLORS.np, 1.2, "dashdot"),
            markSlot("np", "rect", COLORS.np, 8),
            markSlot("np-single", "circle", COLORS.np, 5),
            curveSlot("capacity-limit", COLORS.capacity, 1.2, "dashdot", curved),
            markSlot("capacity", "rect", COLORS.capacity, 8),
            markSlot("capacity-single", "circle", COLORS.capacity, 5),
        ];
    }

    function costSlots(curved) {
        return [
            {name: "sensitivity", type: "rect", xref: "x", yref: "paper", layer: "below",
                opacity: 1, x0: PARK, x1: PARK, y0: 0, y1: 1, fillcolor: COLORS.band,
                line: {color: "rgba(0,0,0,0)", width: 0, dash: "solid"}},
            lineSlot("pc", COLORS.iso, 1.5, "dash", "paper"),
            ...pinCostSlots(curved),
            curveSlot("chosen-line", COLORS.iso, 1.2, "dot", curved),
            markSlot("chosen", "circle", COLORS.iso, 8),
            curveSlot("np-line", COLORS.np, 1.2, "dashdot", curved),
            markSlot("np", "rect", COLORS.np, 7),
            markSlot("np-single", "circle", COLORS.np, 4),
            curveSlot("capacity-line", COLORS.capacity, 1.2, "dashdot", curved),
            markSlot("capacity", "rect", COLORS.capacity, 7),
            markSlot("capacity-single", "circle", COLORS.capacity, 4),
        ];
    }

    // The operating-range strip chart's line at the current PC(+) is a positioned element over
    // the plot, not a Plotly shape: a third Plotly.relayout per slider step cost more than the
    // other two together at the tail (measured, docs/benchmarks.md). Placed again after every
    // re-plot (zoom, new figure) from the axis's own pixel mapping.
    let rangesX = null;

    function placeRangesLine(x) {
        if (x !== undefined) rangesX = x;
        const gd = graphDiv("ranges-graph");
        if (!gd || !gd._fullLayout || rangesX === null) return;
        const xa = gd._fullLayout.xaxis, ya = gd._fullLayout.yaxis;
        let el = gd.querySelector(".ranges-pc-line");
        if (!el) {
            el = document.createElement("div");
            el.className = "ranges-pc-line";
            el.setAttribute("aria-hidden", "true");
            gd.appendChild(el);
        }
        const px = xa._offset + xa.l2p(rangesX);
        const inside = px >= xa._offset - 0.5 && px <= xa._offset + xa._length + 0.5;
        // Moved by a transform on its own compositing layer (style.css: will-change), not by
        // `left`: a step then needs no layout or repaint of it, only the compositor's move.
        const css = "top:" + ya._offset + "px;height:" + ya._length + "px;transform:translateX(" +
            px + "px);display:" + (inside ? "block" : "none");
        if (el.__costdashCss !== css) {
            el.style.cssText = css;
            el.__costdashCss = css;
        }
        const at = String(rangesX);
        if (el.dataset.x !== at) el.dataset.x = at;
    }

    /** Draw `points` (display coordinates, in order) into a line slot (first to last) or a
     * path slot (through every point). */
    function drawLine(slot, points) {
        if (!points || points.length < 2) return;
        if (slot.type === "line") {
            place(slot, points[0], points[points.length - 1]);
            return;
        }
        slot.path = points.map((p, k) => (k ? "L" : "M") + p[0] + "," + p[1]).join(" ");
    }

    /**
     * Display coordinates of the two figures for the view's axes (linear, log FPR, log-odds
     * PC(+); costmath.js does the arithmetic): `rx` (FPR), `cx` (PC(+)), `rocSeg` (a straight
     * ROC segment between two points, sampled on a log axis) and `costSeg` (the cost line of ROC
     * point (fpr, tpr) over PC(+) from lo to hi).
     */
    function geometry(view, math) {
        const ax = view.axes || {};
        const floor = ax.fpr_floor || 1e-9;
        const rx = ax.log_fpr ? (f) => math.logFpr(f, floor) : (f) => f;
        const cx = ax.log_pc ? (pc) => math.logOdds(pc) : (pc) => pc;
        const rocSeg = (p, q) => {
            if (!ax.log_fpr) return [p, q];
            const span = q[0] - p[0];
            return math.fprSamples(p[0], q[0], floor, 0.1).map((f) =>
                [rx(f), p[1] + (q[1] - p[1]) * (span === 0 ? 1 : (f - p[0]) / span)]);
        };
        const costAt = (f, t, pc) => math.normalizedCost({pc: pc, oneMinusPc: 1 - pc}, f, t);
        const costSeg = (f, t, lo, hi) => (ax.log_pc
            ? math.pcSamples(lo, hi, 0.1).map((pc) => [cx(pc), costAt(f, t, pc)])
            : [[lo, costAt(f, t, lo)], [hi, costAt(f, t, hi)]]);
        return {ax: ax, rx: rx, cx: cx, rocSeg: rocSeg, costSeg: costSeg};
    }

    function place(slot, p, q) {
        slot.x0 = p[0];
        slot.y0 = p[1];
        slot.x1 = q[0];
        slot.y1 = q[1];
    }

    function pin(slot, x, y, color) {
        slot.xanchor = x;
        slot.yanchor = y;
        if (color) slot.line.color = color;
    }

    Object.assign(E, {clipLine, clipLinear, COLORS, rocSlots, costSlots, placeRangesLine,
        drawLine, geometry, place, pin});
})();
