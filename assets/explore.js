/*
 * explore.js -- clientside callbacks of the Explore page (window.dash_clientside.costdash).
 *
 * Everything a slider moves is drawn here, in the browser, from the small "client model" the
 * server put in the `view-store` (hull vertices, their log edge slopes, each classifier's
 * fixed-threshold point): the iso-performance line and chosen vertex in ROC space, the PC(+) line
 * and chosen point in cost space (layout shapes; the curves themselves are never re-sent), the
 * readouts, and the address bar. The cost arithmetic it needs lives in costmath.js (the client
 * mirror of the core); this file only formats and draws.
 *
 * Sections: slider scales; formatting; geometry (clipping lines to the unit square); shape slots;
 * callbacks (`explore`, `fillSensitivity`, `constraintRequest`, `writeUrlFromOthers`); slider
 * steps; readouts; drawing the moving parts; the address bar. The comments at "shape slots",
 * "slider steps", "readouts" and "drawing the moving parts" say why each is done the way it is
 * (measured; see docs/dashboard.md).
 */
(function () {
    "use strict";

    const dc = (window.dash_clientside = window.dash_clientside || {});
    const M = () => window.costdashMath;
    const NU = () => dc.no_update;

    // --- slider scales (mirror of dashboard/explore_layout.py p_to_slider, cost_to_slider) ----------
    const P_RANGE = [-6, 6];
    const COST_RANGE = [-3, 6];
    const clamp = (x, lo, hi) => Math.min(Math.max(x, lo), hi);

    function pToSlider(p) {
        let s;
        if (p <= 0.1) s = Math.log10(p);
        else if (p >= 0.9) s = -Math.log10(1 - p);
        else s = (p - 0.5) / 0.4;
        return clamp(s, P_RANGE[0], P_RANGE[1]);
    }

    function sliderToP(s) {
        // Rounded so the number box shows a short value: 3 significant digits of p (or of 1 - p).
        if (s <= -1) return Number(Math.pow(10, s).toPrecision(3));
        if (s >= 1) return 1 - Number(Math.pow(10, -s).toPrecision(3));
        return Number((0.5 + 0.4 * s).toFixed(4));
    }

    const costToSlider = (c) => clamp(Math.log10(c), COST_RANGE[0], COST_RANGE[1]);
    const sliderToCost = (s) => Number(Math.pow(10, s).toPrecision(3));
    const isNum = (v) => typeof v === "number" && Number.isFinite(v);
    const validP = (p) => isNum(p) && p > 0 && p < 1;
    const validCost = (c) => isNum(c) && c > 0;

    function triggered() {
        const t = (dc.callback_context && dc.callback_context.triggered) || [];
        return new Set(t.map((x) => x.prop_id));
    }

    // --- number formatting ---------------------------------------------------------------------

    /** A plain number with at least `sig` significant digits (fixed, or exponent when tiny/huge). */
    function fmtNum(x, sig) {
        sig = sig || 4;
        if (x === null || x === undefined || Number.isNaN(x)) return "–";
        if (!Number.isFinite(x)) return x > 0 ? "inf" : "-inf";
        if (x === 0) return (0).toFixed(sig - 1);
        const a = Math.abs(x);
        if (a >= 1e-4 && a < 1e15) {
            const e = Math.floor(Math.log10(a));
            return x.toFixed(clamp(sig - 1 - e, 0, 100));
        }
        return x.toExponential(sig - 1);
    }

    /** Friendly number for sentences: 3 significant digits with thousands separators. */
    function friendly(x) {
        if (!isNum(x)) return "–";
        if (x !== 0 && Math.abs(x) < 0.001) return x.toExponential(2);
        return x.toLocaleString("en-US", {maximumSignificantDigits: 3});
    }

    const withUnit = (text, unit) => (unit ? text + " " + unit : text);

    /** A score threshold exactly (the shortest text that reads back as it, as
     * costdash.analysis.threshold_text writes it): a deployment compares scores with it, and a
     * rounded 0.499996 would read as the fixed 0.5 it is not. */
    function thresholdText(t) {
        return t === null || t === undefined ? "none" : String(t);
    }

    function percent(x) {
        const v = 100 * x;
        return (Math.abs(v) >= 10 ? v.toFixed(0) : v.toFixed(1)) + "%";
    }

    // --- geometry for drawing (not cost math: clipping lines to the unit square) ----------------

    /** The part of the line through (x0, y0) with slope m inside [0, 1]^2, as two points. */
    function clipLine(x0, y0, m) {
        if (!Number.isFinite(m)) return [[x0, 0], [x0, 1]];
        if (m === 0) return [[0, y0], [1, y0]];
        const pts = [[0, y0 - m * x0], [1, y0 + m * (1 - x0)], [x0 - y0 / m, 0],
            [x0 + (1 - y0) / m, 1]];
        const eps = 1e-12;
        const inside = pts.filter(([x, y]) => x >= -eps && x <= 1 + eps && y >= -eps && y <= 1 + eps)
            .map(([x, y]) => [clamp(x, 0, 1), clamp(y, 0, 1)]);
        if (inside.length < 2) return null;
        inside.sort((a, b) => a[0] - b[0] || a[1] - b[1]);
        return [inside[0], inside[inside.length - 1]];
    }

    /** The segment of {(x, y): a x + b y = c} inside [0, 1]^2 (capacity lines). */
    function clipLinear(a, b, c) {
        const pts = [];
        if (b !== 0) pts.push([0, c / b], [1, (c - a) / b]);
        if (a !== 0) pts.push([c / a, 0], [(c - b) / a, 1]);
        const eps = 1e-12;
        const inside = pts.filter(([x, y]) => x >= -eps && x <= 1 + eps && y >= -eps && y <= 1 + eps)
            .map(([x, y]) => [clamp(x, 0, 1), clamp(y, 0, 1)]);
        if (inside.length < 2) return null;
        inside.sort((p, q) => p[0] - q[0] || p[1] - q[1]);
        return [inside[0], inside[inside.length - 1]];
    }

    // --- shape slots ----------------------------------------------------------------------------
    //
    // Each figure carries a FIXED list of shapes, one slot per moving part, always with the same
    // type and attributes; only coordinates and colours change. Plotly then redraws just the
    // shapes layer (a few ms); adding, removing or retyping a shape (or touching annotations)
    // makes it re-plot every trace instead (50-150 ms with 20 classifiers, measured). An unused
    // slot is parked outside the axes (whose ranges are fixed), where it is clipped away. The
    // first drawing of a new figure goes through the figure prop (a Patch), which sets the slots.

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
    const PIN_SLOTS = 4;
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
        el.style.cssText = "left:" + px + "px;top:" + ya._offset + "px;height:" + ya._length +
            "px;display:" + (inside ? "block" : "none");
        el.dataset.x = String(rangesX);
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

    function vertexName(name) {
        if (name === "all-negative") return "flag nothing";
        if (name === "all-positive") return "flag everything";
        return name;
    }

    // --- the callbacks ---------------------------------------------------------------------------

    /**
     * The conditions to use, and what the sliders and number boxes must be set to.
     *
     * The number boxes hold the conditions. A box typed in: its slider follows. A box set from its
     * slider (see "slider steps" below): the slider is left alone, and the newest slider value is
     * used (the box may lag a step behind during a drag). "Use the data's prevalence", or a first
     * data set with no p(+) yet: p(+) = the data's prevalence. Returns {p, costFn, costFp, sync}
     * with sync = [pSlider, pBox, fnSlider, fnBox, fpSlider, fpBox] (no_update where unchanged).
     */
    let openedData = null;        // {id, page}: the data set this page view opened with
    const pageLoads = () => (window.costdashView ? window.costdashView.loads() : 0);

    function resolveConditions(t, view, pB, fnB, fpB) {
        const sync = [NU(), NU(), NU(), NU(), NU(), NU()];
        const values = [];
        const boxes = [["p", "p-pos", pB, validP, pToSlider], ["costFn", "cost-fn", fnB, validCost,
            costToSlider], ["costFp", "cost-fp", fpB, validCost, costToSlider]];
        boxes.forEach(([key, id, box, valid, toSlider], k) => {
            let v = box;
            if (t.has(id + "-input.value")) {
                if (fromSlider[key] !== undefined && fromSlider[key] === box) {
                    if (last && valid(last[key])) v = last[key];   // the newest slider value
                } else if (valid(box)) {
                    sync[2 * k] = toSlider(box);
                }
            }
            values.push(v);
        });
        let p = values[0];
        // Another data set than the one this page opened with brings its own p(+); the
        // conditions the address carried belong to the data set they came with.
        const opened = view && (openedData === null || openedData.page !== pageLoads());
        const newData = !opened && view && t.has("view-store.data") && openedData.id !== view.id;
        if (opened || newData) openedData = {id: view.id, page: pageLoads()};
        let wanted = null;
        if (view && t.has("prevalence-button.n_clicks")) wanted = view.prevalence;
        // p(+) unset: the core's default rule, applied by the server (default_condition).
        else if (view && (newData || (t.has("view-store.data") && !validP(p)))) {
            wanted = view.default_condition.p_pos;
        }
        if (validP(wanted)) {
            p = wanted;
            sync[0] = pToSlider(p);
            sync[1] = p;
        }
        return {p: p, costFn: values[1], costFp: values[2], sync: sync};
    }

    /** Turning sensitivity on fills empty ranges around the current conditions. */
    function fillSensitivity(on, p, fn, fp, pLo, pHi, fnLo, fnHi, fpLo, fpHi) {
        const out = [NU(), NU(), NU(), NU(), NU(), NU()];
        if (!on || !on.length) return out;
        const r3 = (x) => Number(x.toPrecision(3));
        if (validP(p) && !isNum(pLo) && !isNum(pHi)) {
            out[0] = r3(p / 2);
            out[1] = r3(Math.min(2 * p, (1 + p) / 2));
        }
        if (validCost(fn) && !isNum(fnLo) && !isNum(fnHi)) {
            out[2] = r3(fn / 2);
            out[3] = r3(fn * 2);
        }
        if (validCost(fp) && !isNum(fpLo) && !isNum(fpHi)) {
            out[4] = r3(fp / 2);
            out[5] = r3(fp * 2);
        }
        return out;
    }

    /** What the constraint callback (server, core) needs; null when no constraint is set. */
    function constraintRequestOf(maxFpr, capacity, p, volume) {
        const np = isNum(maxFpr) ? maxFpr : null;
        const cap = isNum(capacity) ? capacity : null;
        if (np === null && cap === null) return null;
        return {max_fpr: np, capacity: cap, p: cap === null ? null : (isNum(p) ? p : null),
            volume: cap === null ? null : (isNum(volume) ? volume : null)};
    }

    const same = (a, b) => JSON.stringify(a === undefined ? null : a) ===
        JSON.stringify(b === undefined ? null : b);

    /** The constraint inputs changed (p(+) and volume changes are handled in `explore`). */
    function constraintRequest(maxFpr, capacity, p, volume, previous) {
        const req = constraintRequestOf(maxFpr, capacity, p, volume);
        return same(req, previous) ? NU() : req;
    }

    function ownVertexText(hull, j) {
        if (j === 0) return "flag nothing";
        if (j === hull.fpr.length - 1) return "flag everything";
        const t = hull.threshold[j];
        return t === null ? "FPR " + fmtNum(hull.fpr[j], 3) + ", TPR " + fmtNum(hull.tpr[j], 3)
            : "≥ " + thresholdText(t);
    }

    function describeMixed(pt) {
        const one = (name, thr) => name + (thr === null ? "" : " (score ≥ " + thresholdText(thr) + ")");
        if (pt.left === pt.right || pt.weight === 0) {
            return one(vertexName(pt.left_classifier), pt.left_threshold);
        }
        return "mix " + one(vertexName(pt.right_classifier), pt.right_threshold) + " with probability " +
            fmtNum(pt.weight, 3) + " and " + one(vertexName(pt.left_classifier), pt.left_threshold) +
            " otherwise";
    }

    // --- readouts: written straight into their elements ---------------------------------------
    //
    // The readouts are plain text in elements the layout leaves empty (or holding a placeholder),
    // written here rather than returned as Dash outputs: every output is a store dispatch that
    // re-runs a selector for every component on the page, and component trees returned from a
    // callback are re-mounted on every run (plotly/dash#3846, Dash 4.2 - 4.4.1), which together
    // cost a few hundred ms per slider step with 20 classifiers. React never re-renders these
    // elements (no callback outputs to them), so the text stays.

    const esc = (t) => String(t).replace(/[&<>"']/g, (ch) => ({"&": "&amp;", "<": "&lt;",
        ">": "&gt;", '"': "&quot;", "'": "&#39;"}[ch]));

    function paint(texts, htmls, shown) {
        for (const [id, on] of Object.entries(shown || {})) {
            const el = document.getElementById(id);
            if (el && el.hidden === on) el.hidden = !on;
        }
        for (const [id, text] of Object.entries(texts)) {
            const el = document.getElementById(id);
            if (el && el.textContent !== text) el.textContent = text;
        }
        for (const [id, html] of Object.entries(htmls || {})) {
            const el = document.getElementById(id);
            if (el && el.__costdashHtml !== html) {
                el.innerHTML = html;
                el.__costdashHtml = html;
            }
        }
    }

    /** The per-classifier table: rows (name and swatch) once per view, then cell text only. */
    function fillTable(view, cells, chosen) {
        const body = document.getElementById("fixed-table-body");
        if (!body) return;
        const key = view.id + "|" + view.classifiers.map((cl) => cl.name).join("\u0000");
        if (body.__costdashKey !== key) {
            const swatch = {};
            for (const st of view.styles || []) swatch[st.name] = st.swatch;
            // The classifier's swatch (colour, dash, marker) as in the list, else its colour.
            const look = (cl) => (swatch[cl.name]
                ? "background:no-repeat center/contain url(&quot;data:image/svg+xml," +
                  esc(encodeURIComponent(swatch[cl.name])) + "&quot;);width:2.2rem"
                : "background-color:" + esc(cl.color));
            body.innerHTML = view.classifiers.map((cl) => '<tr><td><span class="swatch" ' +
                'style="' + look(cl) + '"></span>' + esc(cl.name) + "</td>" +
                '<td class="num"></td>'.repeat(5) + "</tr>").join("");
            body.__costdashKey = key;
        }
        view.classifiers.forEach((cl, r) => {
            const row = body.rows[r];
            if (!row) return;
            const want = cl.name === chosen ? "chosen" : "";
            if (row.className !== want) row.className = want;
            cells[r].forEach((text, k) => {
                const td = row.cells[k + 1];
                if (td && td.textContent !== text) td.textContent = text;
            });
        });
    }

    const READOUT_IDS = ["pc-value", "slope-value", "chosen-classifier", "chosen-threshold",
        "chosen-fpr", "chosen-tpr", "cm-tp", "cm-fn", "cm-fp", "cm-tn", "normalized-cost",
        "expected-cost", "period-cost", "saving-trivial"];

    /**
     * The Explore page's live callback: number boxes, volume, unit, "use the data's prevalence",
     * a new view (data set or classifiers), sensitivity and constraint results all land here.
     *
     * Resolves the conditions (a typed box moves its slider), writes the readouts, redraws the
     * moving parts of both figures, keeps the constraint request and the address bar current.
     * Slider steps are drawn before they get here (see "slider steps").
     */
    function explore(view, pB, fnB, fpB, tpB, tnB, volume, unit, _clicks, sens, cons, pins,
                     single, request, maxFpr, capacity, key, ref, lines, sensOn, pLo, pHi, fnLo, fnHi,
                     fpLo, fpHi) {
        const t = triggered();
        const r = resolveConditions(t, view, pB, fnB, fpB);
        last = {view: view, p: r.p, costFn: r.costFn, costFp: r.costFp, costTp: tpB,
            costTn: tnB, volume: volume, unit: unit, sens: sens, cons: cons, pins: pins,
            single: single};
        const drawn = render(last, t.has("view-store.data"));
        if (t.has("view-store.data")) styleModels(view, currentFilter);
        const req = constraintRequestOf(maxFpr, capacity, r.p, volume);
        recordView(key, ref, r.p, r.costFn, r.costFp, volume, unit, lines, sensOn, pLo, pHi, fnLo,
                   fnHi, fpLo, fpHi, maxFpr, capacity);
        window.costdashView.set({cost_tp: tpB, cost_tn: tnB});
        return [...drawn, ...r.sync, same(req, request) ? NU() : req];
    }

    // --- slider steps ------------------------------------------------------------------------------
    //
    // The sliders are not inputs of any Dash callback. A slider step through Dash's callback
    // machinery costs tens of ms of main-thread work with a page this size, and the browser cannot
    // paint until it is done. Instead, a MutationObserver on each slider's thumb sees the new value
    // (aria-valuenow, set as soon as Dash has stored the slider's value) and draws the step at once
    // from the arguments of the last `explore` call. The matching number box is set afterwards,
    // after the frame is painted (several steps of a drag coalesce into one update); that runs
    // `explore`, which finds everything already drawn (paint() and drawOverlay() skip unchanged
    // content) and updates the address bar.
    let last = null;                 // conditions and data of the last drawing
    const fromSlider = {};           // the value each box was last given from its slider
    const pendingBoxes = {};
    let boxTimer = false;
    const SLIDERS = {"p-pos-slider": ["p", "p-pos-input"], "cost-fn-slider": ["costFn",
        "cost-fn-input"], "cost-fp-slider": ["costFp", "cost-fp-input"]};
    const watched = new WeakSet();

    function flushBoxes() {
        boxTimer = false;
        for (const [boxId, value] of Object.entries(pendingBoxes)) {
            delete pendingBoxes[boxId];
            dc.set_props(boxId, {value: value});
        }
    }

    function onSliderStep(key, boxId, v) {
        const value = key === "p" ? sliderToP(v) : sliderToCost(v);
        const cur = last && last[key];
        const curPos = isNum(cur) ? (key === "p" ? pToSlider(cur) : costToSlider(cur)) : null;
        if (curPos !== null && Math.abs(curPos - v) < 1e-9) return;   // followed a typed value
        if (last) {
            last = Object.assign({}, last, {[key]: value});
            if (last.view && M().valid(last.p, last.costFn, last.costFp, last.costTp,
                                       last.costTn)) {
                render(last, false);
            }
        }
        fromSlider[key] = value;
        pendingBoxes[boxId] = value;
        if (!boxTimer) {
            boxTimer = true;
            // In the frame after the one that shows this step, so the step paints first.
            requestAnimationFrame(() => requestAnimationFrame(() => setTimeout(flushBoxes, 0)));
        }
    }

    // --- typed values: Enter draws at once -----------------------------------------------------------
    //
    // Enter in a condition box is drawn here from the last drawing's arguments, like a slider
    // step, before Dash sees the value: going through Dash first (the box's value, the `explore`
    // callback, the sliders it moves) costs tens of ms before the browser may paint. The event is
    // marked so viewstate.js commits the box's value after this frame is painted; that runs
    // `explore`, which finds everything drawn.
    const TYPED = {"p-pos-input": "p", "cost-fn-input": "costFn", "cost-fp-input": "costFp",
        "cost-tp-input": "costTp", "cost-tn-input": "costTn", "volume-input": "volume"};

    document.addEventListener("keydown", (ev) => {
        const key = ev.key === "Enter" && ev.target ? TYPED[ev.target.id] : undefined;
        if (!key || !last || !last.view) return;
        const text = ev.target.value;
        const value = text === "" ? null : Number(text);
        const next = Object.assign({}, last, {[key]: value});
        if (invalidConditions(next).length) {
            return;     // the callback shows the message
        }
        last = next;
        render(last, false);
        ev.costdashDrawn = true;
        // dcc.Input would also answer Enter (its n_submit, which nothing here uses) with a store
        // dispatch in this same task; the value is committed after the paint instead.
        ev.stopPropagation();
    }, true);

    // A screen reader reads a slider in the user's terms (p(+) = 0.03), not as the slider's
    // own log-scale position (-1.52).
    const SLIDER_TERMS = {
        "p-pos-slider": ["p(+): probability that a case is positive", "p(+)", sliderToP],
        "cost-fn-slider": ["C(−|+): cost of a false negative", "C(−|+)", sliderToCost],
        "cost-fp-slider": ["C(+|−): cost of a false positive", "C(+|−)", sliderToCost],
    };

    function describeSlider(id, thumb) {
        const [label, short, fromSlider] = SLIDER_TERMS[id];
        if (thumb.getAttribute("aria-label") !== label) thumb.setAttribute("aria-label", label);
        const v = Number(thumb.getAttribute("aria-valuenow"));
        if (!Number.isFinite(v)) return;
        const text = short + " = " + friendly(fromSlider(v));
        if (thumb.getAttribute("aria-valuetext") !== text) thumb.setAttribute("aria-valuetext", text);
    }

    function watchSliders() {
        for (const [id, [key, boxId]] of Object.entries(SLIDERS)) {
            const thumb = document.querySelector("#" + id + " [role=slider]");
            if (!thumb || watched.has(thumb)) continue;
            watched.add(thumb);
            describeSlider(id, thumb);
            new MutationObserver(() => {
                const v = Number(thumb.getAttribute("aria-valuenow"));
                describeSlider(id, thumb);
                if (Number.isFinite(v)) onSliderStep(key, boxId, v);
            }).observe(thumb, {attributes: true, attributeFilter: ["aria-valuenow"]});
        }
    }

    new MutationObserver(watchSliders).observe(document.documentElement,
        {childList: true, subtree: true});

    /** The messages of the conditions that are not valid, in the view schema's words, and the
     * core's rule that an error must cost more than the matching correct decision. */
    function invalidConditions(k) {
        const V = window.costdashView;
        const out = [];
        const values = {p_pos: k.p, cost_fn: k.costFn, cost_fp: k.costFp, cost_tp: k.costTp,
            cost_tn: k.costTn, volume: k.volume};
        const optional = new Set(["volume", "cost_tp", "cost_tn"]);
        for (const [name, value] of Object.entries(values)) {
            const r = V.check(name, value);
            if (r.error) out.push(r.error);
            else if (r.value === null && !optional.has(name)) out.push(V.requirement(name) + ".");
        }
        if (out.length) return out;
        // The view's rule across fields, in its words (costdash.view._priced_above_its_error).
        const pairs = [[k.costFn, k.costTp, "C(−|+)", "C(+|+)"], [k.costFp, k.costTn, "C(+|−)",
            "C(−|−)"]];
        for (const [error, right, errorLabel, rightLabel] of pairs) {
            const r = isNum(right) ? right : 0;
            if (!(error - r > 0)) {
                out.push(rightLabel + " must be below " + errorLabel + " (an error must cost " +
                    "more than the correct decision, or every case would best be decided " +
                    "wrongly); got " + rightLabel + " = " + r + ", " + errorLabel + " = " +
                    error + ".");
            }
        }
        return out;
    }

    function setStale(on) {
        const el = document.querySelector(".explore .results");
        if (el && el.classList.contains("stale") !== on) {
            el.classList.toggle("stale", on);
            el.setAttribute("aria-busy", on ? "true" : "false");
        }
    }

    // --- pinned thresholds: the cards' text (cards laid out once, one per slot) ---------------

    const PIN_TEXTS = ["title", "tp", "fn", "fp", "tn", "tp-rate", "fn-rate", "fp-rate",
        "tn-rate", "precision", "recall", "specificity", "npv", "f1", "cost", "period-cost",
        "regret", "regret-share", "verdict", "optimal", "beats", "test"];

    function pinTitle(pin) {
        let text = pin.model + ", score ≥ " + thresholdText(pin.threshold);
        if (pin.error) return text;
        if (pin.point_threshold === null) text += " (above every score: flags nothing)";
        else if (pin.point_threshold !== pin.threshold) {
            text += " (the same cases as ≥ " + thresholdText(pin.point_threshold) + ")";
        }
        return text;
    }

    /** Every slot blank ("–"), shown when it holds a pin; returns the pins (a list). */
    function blankPins(k, texts, shown) {
        const pins = Array.isArray(k.pins) ? k.pins.slice(0, PIN_SLOTS) : [];
        for (let s = 0; s < PIN_SLOTS; s++) {
            const pin = pins[s];
            shown["pin-" + s] = Boolean(pin);
            shown["pin-" + s + "-body"] = Boolean(pin && !pin.error);
            for (const name of PIN_TEXTS) texts["pin-" + s + "-" + name] = "–";
            texts["pin-" + s + "-error"] = pin && pin.error ? pin.error : "";
            if (pin) texts["pin-" + s + "-title"] = pinTitle(pin);
        }
        shown["pins-empty"] = pins.length === 0;
        return pins;
    }

    function pcInterval(iv) {
        return "PC(+) " + fmtNum(iv[0]) + " to " + fmtNum(iv[1]);
    }

    /**
     * The pins' readouts at conditions `c` (costmath.pointMetrics, the mirror of
     * costdash.pinned.point_metrics) against the best choice (f, tp), and their shapes.
     */
    function fillPins(pins, c, best, vol, unit, colorOf, texts, R, C, g, pcX) {
        const math = M();
        const money = (x) => withUnit(fmtNum(x), unit);
        pins.forEach((e, s) => {
            if (e.error) return;
            const id = (name) => "pin-" + s + "-" + name;
            const m = math.pointMetrics(c, e.fpr, e.tpr, best.fpr, best.tpr,
                                        vol === null ? 1 : vol);
            if (vol !== null) {
                texts[id("tp")] = friendly(m.tp);
                texts[id("fn")] = friendly(m.fn);
                texts[id("fp")] = friendly(m.fp);
                texts[id("tn")] = friendly(m.tn);
            }
            texts[id("tp-rate")] = "TPR " + fmtNum(e.tpr);
            texts[id("fn-rate")] = "FNR " + fmtNum(1 - e.tpr);
            texts[id("fp-rate")] = "FPR " + fmtNum(e.fpr);
            texts[id("tn-rate")] = "TNR " + fmtNum(1 - e.fpr);
            texts[id("precision")] = fmtNum(m.precision);
            texts[id("recall")] = fmtNum(m.recall);
            texts[id("specificity")] = fmtNum(m.specificity);
            texts[id("npv")] = fmtNum(m.npv);
            texts[id("f1")] = fmtNum(m.f1);
            texts[id("cost")] = money(m.expectedCost);
            texts[id("period-cost")] = vol === null ? "–" : money(m.periodCost);
            texts[id("regret")] = vol === null ? money(m.regret) + " per case"
                : money(m.periodRegret);
            texts[id("regret-share")] = Number.isNaN(m.regretShare) ? "–" : percent(m.regretShare);
            const tiny = 1e-12 * (Math.abs(c.costScale) + Math.abs(c.constant));
            const bestText = vertexName(best.name) +
                (best.threshold === null ? "" : " at score ≥ " + thresholdText(best.threshold));
            texts[id("verdict")] = m.regret <= tiny ? "This is the best choice at these conditions."
                : "Using " + bestText + " instead saves " + (vol === null
                    ? money(m.regret) + " per case" : money(m.periodRegret) + " per period") +
                (Number.isNaN(m.regretShare) ? "" : " (" + percent(m.regretShare) + ")") + ".";
            const iv = e.optimal_pc;
            texts[id("optimal")] = iv === null ? "never (under " + e.model + "'s ROC hull)"
                : iv[0] === iv[1] ? "only at PC(+) " + fmtNum(iv[0]) + " (inside a hull edge)"
                : pcInterval(iv) + (c.pc >= iv[0] && c.pc <= iv[1] ? " (now inside)" : "");
            texts[id("beats")] = e.beats_pc === null ? "nowhere" : pcInterval(e.beats_pc) +
                (c.pc > e.beats_pc[0] && c.pc < e.beats_pc[1] ? " (now inside)" : "");
            texts[id("test")] = "On the test set: TP " + e.tp + ", FN " + e.fn + ", FP " +
                e.fp + ", TN " + e.tn + " (FPR " + fmtNum(e.fpr) + ", TPR " +
                fmtNum(e.tpr) + ").";

            const color = colorOf[e.model] || COLORS.iso;
            const badge = document.getElementById(id("badge"));
            if (badge && badge.dataset.color !== color) {
                badge.dataset.color = color;
                badge.style.color = color;
            }
            const mark = R["pin-" + s];
            pin(mark, g.rx(e.fpr), e.tpr, color);
            mark.label.font.color = color;
            drawLine(C[id("line")], g.costSeg(e.fpr, e.tpr, 0, 1));
            C[id("line")].line.color = color;
            if (iv !== null) {
                drawLine(C[id("optimal")], g.costSeg(e.fpr, e.tpr, iv[0], iv[1]));
                C[id("optimal")].line.color = color;
            }
            const markC = C["pin-" + s];
            pin(markC, pcX, m.normalizedCost, color);
            markC.label.font.color = color;
        });
    }

    /** Readouts and the moving parts of both figures, for the current conditions. */
    function render(k, viewChanged) {
        const view = k.view, p = k.p, costFn = k.costFn, costFp = k.costFp, volume = k.volume,
            sens = k.sens, cons = k.cons;
        let unit = k.unit;
        const texts = {}, htmls = {}, shown = {};
        for (const id of READOUT_IDS) texts[id] = "–";
        texts["conditions-error"] = "";
        texts["roc-caption"] = "ROC space";
        texts["cost-caption"] = "Cost space";
        htmls["sensitivity-readout"] = "";
        htmls["constraint-readout"] = "";
        const pins = blankPins(k, texts, shown);
        if (!view) {
            texts.sentence = "Upload a predictions file or open a demo to start.";
            paint(texts, htmls, shown);
            return [NU(), NU()];
        }
        const math = M();
        const problems = invalidConditions(k);
        if (problems.length) {
            // The readouts would be of other conditions than the boxes show: blank them and say
            // why, rather than leave numbers that no longer answer the question.
            texts["conditions-error"] = problems.join(" ");
            texts.sentence = "Fix the value marked above to see the best choice.";
            paint(texts, htmls, shown);
            setStale(true);
            return [NU(), NU()];
        }
        setStale(false);
        unit = (unit || "").trim();
        const vol = isNum(volume) && volume > 0 ? volume : null;
        const c = math.conditions(p, costFn, costFp, k.costTp, k.costTn);
        const hull = view.hull;
        const i = math.optimalIndex(hull.log_edges, c.logSlope, view.tie_log_slope);
        const f = hull.fpr[i], tp = hull.tpr[i], name = hull.classifier[i], thr = hull.threshold[i];
        const ne = math.normalizedCost(c, f, tp);
        const ec = math.expectedCost(c, ne);
        const trivialNeg = c.pc <= c.oneMinusPc;   // the better trivial classifier
        const saving = math.saving(c, ne);
        const colorOf = {};
        for (const cl of view.classifiers) colorOf[cl.name] = cl.color;
        const color = colorOf[name] || "#1f2328";
        const trivialChosen = i === 0 || i === hull.fpr.length - 1;

        texts["pc-value"] = fmtNum(c.pc);
        texts["slope-value"] = fmtNum(c.slope);
        texts["chosen-classifier"] = name;
        texts["chosen-threshold"] = thresholdText(thr);
        texts["chosen-fpr"] = fmtNum(f);
        texts["chosen-tpr"] = fmtNum(tp);
        if (vol !== null) {
            const counts = math.expectedCounts(c, f, tp, vol);
            ["cm-tp", "cm-fn", "cm-fp", "cm-tn"].forEach((id, k) => {
                texts[id] = friendly(counts[k]);
            });
        }
        texts["normalized-cost"] = fmtNum(ne);
        texts["expected-cost"] = withUnit(fmtNum(ec), unit);
        texts["period-cost"] = vol === null ? "–" : withUnit(fmtNum(ec * vol), unit);
        const trivialLabel = trivialNeg ? "flagging nothing" : "flagging everything";
        texts["saving-trivial"] = trivialChosen ? "0% (a trivial choice is best)"
            : percent(saving) + " less than " + trivialLabel;

        // Each classifier: its own best threshold here vs the fixed threshold. The table's rows
        // are built once per set of classifiers; a step only rewrites the cells' text.
        const money = (x) => vol === null ? withUnit(fmtNum(x), unit) : withUnit(fmtNum(x * vol), unit);
        const cells = [];
        for (const cl of view.classifiers) {
            const j = math.optimalIndex(cl.hull.log_edges, c.logSlope, view.tie_log_slope);
            const ecOwn = math.expectedCost(c, math.normalizedCost(c, cl.hull.fpr[j], cl.hull.tpr[j]));
            let fixed = ["–", "–", "–"];
            if (cl.at_fixed) {
                const extra = math.extraCost(c, cl.at_fixed.fpr, cl.at_fixed.tpr, cl.hull.fpr[j],
                                             cl.hull.tpr[j]);
                const ecFix = ecOwn + extra;
                fixed = ["FPR " + fmtNum(cl.at_fixed.fpr, 3) + ", TPR " + fmtNum(cl.at_fixed.tpr, 3),
                    money(ecFix), money(extra) + (ecOwn > 0 ? " (" + percent(extra / ecOwn) + ")" : "")];
            }
            cells.push([ownVertexText(cl.hull, j), money(ecOwn), ...fixed]);
        }
        fillTable(view, cells, name);

        // The plain-language sentence.
        const per = vol === null ? "per case" : "per " + friendly(vol) + " cases";
        const moneyText = friendly(vol === null ? ec : ec * vol) + (unit ? " " + unit : "");
        if (name === "all-negative") {
            texts.sentence = "At these costs no classifier beats flagging nothing: " + moneyText +
                " " + per + ", all of it missed positives.";
        } else if (name === "all-positive") {
            texts.sentence = "At these costs, flag everything: " + moneyText + " " + per +
                ", all of it false alarms.";
        } else {
            const thrText = thr === null ? "" : " with threshold " + thresholdText(thr);
            const cmp = saving < 0.0005 ? "about the same as " + trivialLabel
                : percent(saving) + " less than " + trivialLabel;
            texts.sentence = "At these costs, use " + name + thrText + ": " + moneyText + " " +
                per + ", " + cmp + ".";
        }

        // The moving parts of both figures (fixed slots, see "shape slots").
        const g = geometry(view, math);
        const rocS = rocSlots(Boolean(g.ax.log_fpr)), costS = costSlots(Boolean(g.ax.log_pc));
        const pcX = g.ax.log_pc ? math.logOddsOf(c) : c.pc;
        const R = Object.fromEntries(rocS.map((x) => [x.name, x]));
        const C = Object.fromEntries(costS.map((x) => [x.name, x]));
        const seg = clipLine(f, tp, c.slope);
        if (seg) drawLine(R["iso-performance"], g.rocSeg(seg[0], seg[1]));
        const ring = color === "#1f2328" ? COLORS.iso : color;
        pin(R.chosen, g.rx(f), tp, ring);
        place(C.pc, [pcX, 0], [pcX, 1]);
        placeRangesLine(pcX);
        drawLine(C["chosen-line"], g.costSeg(f, tp, 0, 1));
        C["chosen-line"].line.color = color;
        pin(C.chosen, pcX, ne, ring);
        texts["roc-caption"] = "ROC space: " + vertexName(name) +
            (thr === null ? "" : " at score ≥ " + thresholdText(thr)) + " is best here";
        texts["cost-caption"] = "Cost space: PC(+) = " + fmtNum(c.pc) + ", normalized cost " +
            fmtNum(ne);

        // Sensitivity: the hull segment and the PC(+) band covered by the ranges.
        if (sens && sens.error) {
            htmls["sensitivity-readout"] = esc(sens.error);
        } else if (sens && sens.vertices) {
            const vs = sens.vertices;
            const x = (v) => g.rx(hull.fpr[v]), y = (v) => hull.tpr[v];
            const vertex = (v) => [hull.fpr[v], hull.tpr[v]];
            const along = [];
            vs.slice(1).forEach((v, k) => along.push(...g.rocSeg(vertex(vs[k]), vertex(v))));
            R.sensitivity.path = vs.length === 1
                ? "M" + (x(vs[0]) - 0.008) + "," + y(vs[0]) + " L" + (x(vs[0]) + 0.008) + "," + y(vs[0])
                : along.map((p, k) => (k ? "L" : "M") + p[0] + "," + p[1]).join(" ");
            place(C.sensitivity, [g.cx(sens.pc_range[0]), 0], [g.cx(sens.pc_range[1]), 1]);
            htmls["sensitivity-readout"] = esc("Over these ranges PC(+) runs from " +
                fmtNum(sens.pc_range[0]) + " to " + fmtNum(sens.pc_range[1]) +
                "; optimal somewhere in them: " + sens.classifiers.map(vertexName).join(", ") + ".");
        }

        // Constraints: Neyman-Pearson and capacity points, with the cost of obeying them.
        const notes = [];
        const addConstraint = (key, label, res) => {
            if (!res) return;
            if (res.error) {
                notes.push(label + ": " + res.error);
                return;
            }
            const neC = math.normalizedCost(c, res.fpr, res.tpr);
            const extra = math.extraCost(c, res.fpr, res.tpr, f, tp);
            pin(R[key], g.rx(res.fpr), res.tpr);
            drawLine(C[key + "-line"], g.costSeg(res.fpr, res.tpr, 0, 1));
            pin(C[key], pcX, neC);
            if (key === "np") {
                place(R["np-limit"], [g.rx(res.limit), 0], [g.rx(res.limit), 1]);
            } else {
                const segC = clipLinear(res.n_neg, res.n_pos, res.limit);
                if (segC) drawLine(R["capacity-limit"], g.rocSeg(segC[0], segC[1]));
            }
            const costText = vol === null
                ? withUnit(fmtNum(extra), unit) + " per case"
                : withUnit(fmtNum(extra * vol), unit) + " per period";
            notes.push(label + ": " + describeMixed(res) + " (FPR " + fmtNum(res.fpr, 3) + ", TPR " +
                fmtNum(res.tpr, 3) + "); obeying it costs " + costText + " more than the best " +
                "choice" + (ec > 0 ? " (" + percent(extra / ec) + ")" : "") + ".");
            // Beside the mix, the best single threshold under the same constraint (no coin
            // flips), once the server has it for this very constraint.
            const one = k.single && k.single[key];
            if (!one || one.limit !== res.limit ||
                (key === "capacity" && one.n_pos !== res.n_pos)) return;
            if (one.error) {
                notes.push({single: key, text: "Without coin flips: " + one.error});
                return;
            }
            pin(R[key + "-single"], g.rx(one.fpr), one.tpr);
            pin(C[key + "-single"], pcX, math.normalizedCost(c, one.fpr, one.tpr));
            const oneText = "Without coin flips, the best single threshold: " +
                vertexName(one.classifier) + (one.threshold === null ? ""
                : " at score ≥ " + thresholdText(one.threshold)) + " (FPR " + fmtNum(one.fpr, 3) +
                ", TPR " + fmtNum(one.tpr, 3) + ")";
            if (one.fpr === res.fpr && one.tpr === res.tpr) {
                notes.push({single: key, text: oneText + ": the mix needs no coin flip here."});
                return;
            }
            const gain = res.tpr - one.tpr;                 // what the mix catches more
            const dCost = math.extraCost(c, res.fpr, res.tpr, one.fpr, one.tpr);
            const caught = vol === null ? "" : " (" + friendly(gain * c.p * vol) +
                " positives per period)";
            const money = (x) => (vol === null ? withUnit(fmtNum(Math.abs(x)), unit) + " per case"
                : withUnit(fmtNum(Math.abs(x) * vol), unit) + " per period");
            notes.push({single: key, text: oneText + ". The mix gains TPR +" + fmtNum(gain, 3) +
                caught + " and costs " + money(dCost) + (dCost <= 0 ? " less" : " more") +
                " than this threshold."});
        };
        if (cons) {
            addConstraint("np", "Neyman–Pearson (FPR ≤ " + fmtNum(cons.np && cons.np.limit, 3) + ")",
                cons.np);
            addConstraint("capacity", "Capacity (at most " + friendly(cons.capacity &&
                cons.capacity.limit) + " flagged)", cons.capacity);
        }
        htmls["constraint-readout"] = notes.map((t) => (typeof t === "string"
            ? "<p>" + esc(t) + "</p>"
            : '<p class="single" data-constraint="' + t.single + '">' + esc(t.text) + "</p>"))
            .join("");
        fillPins(pins, c, {fpr: f, tpr: tp, name: name, threshold: thr}, vol, unit, colorOf,
                 texts, R, C, g, pcX);
        paint(texts, htmls, shown);

        const drawn = [
            drawOverlay("roc-graph", view, rocS, viewChanged),
            drawOverlay("cost-graph", view, costS, viewChanged),
        ];
        zoomTarget = {view: view, f: f, tp: tp, pcX: pcX, ne: ne, trivial: math.trivialCost(c),
            g: g};
        if (zoomOn) applyZoom(false);
        if (viewChanged) whenPlotted(view);
        return drawn;
    }

    // --- drawing the moving parts ----------------------------------------------------------------
    //
    // The moving parts are layout shapes only. Sending them through the figure
    // prop (a Patch) makes dcc.Graph call Plotly.react, which here re-plots every trace: 60-120 ms
    // per figure with 20 classifiers on a 2-vCPU machine, measured. Plotly.relayout of just the
    // shapes redraws the shapes layer in 1-8 ms (as long as the list keeps its structure, see
    // "shape slots"). So, once a figure of the current view is on
    // screen, its shapes are redrawn directly; the Patch is used only when a new figure arrives
    // (then dcc.Graph plots figure and shapes together). dcc.Graph listens to plotly_relayout to
    // copy layout edits into its figure prop, which would start the slow Plotly.react after all,
    // so that one event is muted while we draw. After any re-plot by dcc.Graph (new figure,
    // legend click) the latest shapes are put back.

    const latest = {};

    function graphDiv(id) {
        return document.querySelector("#" + id + " .js-plotly-plot");
    }

    function hook(gd, id) {
        if (gd.__costdashHooked) return;
        gd.__costdashHooked = true;
        gd.__costdashMute = 0;
        const emit = gd.emit;
        gd.emit = function (name) {
            if (name === "plotly_relayout" && gd.__costdashMute > 0) return undefined;
            return emit.apply(this, arguments);
        };
        gd.on("plotly_react", () => {
            const want = latest[id];
            if (want && gd.layout && gd.layout.shapes !== want) quietRelayout(gd, want);
            gd.__costdashZoom = null;            // a new figure: its own ranges
            if (zoomOn) applyZoom(false);
        });
        if (id === "ranges-graph") gd.on("plotly_afterplot", () => placeRangesLine());
        gd.on("plotly_hover", (ev) => {
            const pt = ev && ev.points && ev.points[0];
            focus(pt && pt.data ? classifierOfUid(pt.data.uid) : null);
        });
        gd.on("plotly_unhover", () => focus(null));
    }

    function quietRelayout(gd, want) {
        gd.__costdashMute += 1;
        return window.Plotly.relayout(gd, {shapes: want})
            .catch(() => undefined)
            .finally(() => { gd.__costdashMute -= 1; });
    }

    const drawnJson = {};

    function drawOverlay(id, view, shapes, viewChanged) {
        latest[id] = shapes;
        const gd = graphDiv(id);
        const ready = gd && gd._fullLayout && window.Plotly && !viewChanged &&
            gd.layout && gd.layout.uirevision === view.id;
        if (gd) hook(gd, id);
        const json = JSON.stringify(shapes);
        if (ready) {
            if (drawnJson[id] !== json || gd.__costdashDrawn !== json) {
                drawnJson[id] = json;
                gd.__costdashDrawn = json;
                quietRelayout(gd, shapes);
            }
            return NU();
        }
        drawnJson[id] = json;
        const patch = new dc.Patch();
        patch.assign(["layout", "shapes"], shapes);
        return patch.build();
    }

    // --- zoom to the region around the current choice -------------------------------------------
    //
    // With zoom on, each figure's axes show a window around the chosen point (its size in the
    // axes' own terms: decades on log axes). Setting an axis range re-plots every trace (tens of
    // ms), so a slider step moves the window only when the point has left its middle 60%.

    let zoomOn = false;
    let zoomTarget = null;

    function zoomWindows(z) {
        const math = M(), g = z.g, ax = g.ax, home = (z.view.axes && z.view.axes.home) || {};
        const clampTo = (r, lo, hi) => Math.min(Math.max(r, lo), hi);
        const out = {};
        const rocHome = home.roc || [[-0.01, 1.01], [-0.01, 1.01]];
        if (ax.log_fpr) {
            out["roc-graph"] = [math.zoomRange(g.rx(z.f), 1, rocHome[0][0], rocHome[0][1]),
                math.zoomRange(z.tp, 0.2, rocHome[1][0], rocHome[1][1])];
        } else {
            const h = clampTo(1.5 * Math.max(z.f, 1 - z.tp), 0.04, 0.5);
            out["roc-graph"] = [math.zoomRange(z.f, h, rocHome[0][0], rocHome[0][1]),
                math.zoomRange(z.tp, h, rocHome[1][0], rocHome[1][1])];
        }
        const pc = ax.log_pc ? null : z.pcX;
        const x = ax.log_pc ? math.zoomRange(z.pcX, 1.5, -math.LOG_ODDS_LIMIT, math.LOG_ODDS_LIMIT)
            : math.zoomRange(pc, clampTo(1.5 * Math.min(pc, 1 - pc), 0.02, 0.5), 0, 1);
        const costHome = home.cost || [[0, 1], [-0.01, 1]];
        const top = clampTo(2.5 * Math.max(z.ne, 0.3 * z.trivial), 1e-9, costHome[1][1]);
        out["cost-graph"] = [x, [-0.02 * top, top]];
        out["ranges-graph"] = [x, null];
        return out;
    }

    function applyZoom(force) {
        if (!zoomTarget || !window.Plotly) return;
        const windows = zoomWindows(zoomTarget);
        const points = {"roc-graph": [zoomTarget.g.rx(zoomTarget.f), zoomTarget.tp],
            "cost-graph": [zoomTarget.pcX, zoomTarget.ne], "ranges-graph": [zoomTarget.pcX, null]};
        for (const [id, [xr, yr]] of Object.entries(windows)) {
            const gd = graphDiv(id);
            if (!gd || !gd._fullLayout) continue;
            const cur = gd.__costdashZoom;
            const inner = (r, v) => v === null || (v >= r[0] + 0.2 * (r[1] - r[0]) &&
                                                   v <= r[1] - 0.2 * (r[1] - r[0]));
            if (!force && cur && inner(cur[0], points[id][0]) && (cur[1] === null ||
                inner(cur[1], points[id][1])) && Math.abs((cur[1] ? cur[1][1] : 1) -
                (yr ? yr[1] : 1)) <= 0.5 * (yr ? yr[1] : 1)) continue;
            gd.__costdashZoom = [xr, yr];
            const props = {"xaxis.range": xr, "xaxis.autorange": false};
            if (yr) Object.assign(props, {"yaxis.range": yr, "yaxis.autorange": false});
            quietRelayoutProps(gd, props);
        }
    }

    /** Once the three figures of a new view are plotted (they arrive through Dash, after this
     * callback), hook them (hover, shapes) and zoom them when the zoom is on: the first drawing
     * of a page may come before the graphs exist. */
    let plottedTimer = null;

    function whenPlotted(view) {
        if (plottedTimer !== null) clearTimeout(plottedTimer);
        let tries = 0;
        const check = () => {
            plottedTimer = null;
            const gds = FOCUS_GRAPHS.map(graphDiv);
            const ready = gds.every((gd) => gd && gd._fullLayout && gd.layout &&
                                    gd.layout.uirevision === view.id);
            if (ready) {
                gds.forEach((gd, k) => hook(gd, FOCUS_GRAPHS[k]));
                if (zoomOn) applyZoom(false);
            } else if (++tries < 150) {
                plottedTimer = setTimeout(check, 100);
            }
        };
        plottedTimer = setTimeout(check, 0);
    }

    function unzoom() {
        const view = zoomTarget && zoomTarget.view;
        const home = (view && view.axes && view.axes.home) || {};
        for (const id of ["roc-graph", "cost-graph", "ranges-graph"]) {
            const gd = graphDiv(id);
            if (!gd || !gd.__costdashZoom || !home[id.replace("-graph", "")]) continue;
            gd.__costdashZoom = null;
            const [xr, yr] = home[id.replace("-graph", "")];
            const props = {"xaxis.range": xr};
            if (yr) props["yaxis.range"] = yr;
            quietRelayoutProps(gd, props);
        }
    }

    function quietRelayoutProps(gd, props) {
        gd.__costdashMute += 1;
        return window.Plotly.relayout(gd, props)
            .catch(() => undefined)
            .finally(() => { gd.__costdashMute -= 1; });
    }

    /** The zoom toggle (a field of the view). */
    function setZoom(value) {
        zoomOn = Boolean(value && value.length);
        if (zoomOn) applyZoom(true);
        else unzoom();
        return NU();
    }

    // --- hover: one classifier emphasised in every view ---------------------------------------
    //
    // Hovering a classifier's trace (or its row in the list) marks its traces in all three
    // figures with a CSS class and dims the others (style.css), without a Plotly redraw, so it
    // costs nothing on the slider path. Traces are found by their uid (roc-<i>, env-<i>,
    // lines-<i>, best-<i>, range-<i>: i the classifier's position), read from the data d3 keeps
    // on each trace's group.

    const FOCUS_GRAPHS = ["roc-graph", "cost-graph", "ranges-graph"];
    const KEEP = new Set(["hull", "hull-vertices", "envelope"]);   // stay drawn, as context
    let focused = null;

    function classifierOfUid(uid) {
        const m = /^(?:roc|env|lines|best|range)-(\d+)$/.exec(uid || "");
        return m ? Number(m[1]) : null;
    }

    function focus(index) {
        if (index === focused) return;
        focused = index;
        for (const id of FOCUS_GRAPHS) {
            const gd = graphDiv(id);
            if (!gd) continue;
            gd.classList.toggle("costdash-focus", index !== null);
            gd.querySelectorAll("g.trace").forEach((el) => {
                const d = el.__data__;
                const uid = d && d[0] && d[0].trace ? d[0].trace.uid : null;
                el.classList.toggle("costdash-hl", index !== null &&
                                    classifierOfUid(uid) === index);
                el.classList.toggle("costdash-keep", KEEP.has(uid));
            });
        }
        document.querySelectorAll("#models-input label").forEach((el, k) => {
            el.classList.toggle("costdash-hl", k === focused);
        });
    }

    document.addEventListener("mouseover", (ev) => {
        const label = ev.target.closest && ev.target.closest("#models-input label");
        if (!label) return;
        const labels = Array.from(document.querySelectorAll("#models-input label"));
        focus(labels.indexOf(label));
    });
    document.addEventListener("mouseout", (ev) => {
        const label = ev.target.closest && ev.target.closest("#models-input label");
        if (label && !(ev.relatedTarget && label.contains(ev.relatedTarget))) focus(null);
    });

    // --- the classifier list: swatches and the filter ------------------------------------------
    //
    // The list is the plots' legend: each row gets its classifier's swatch (colour, dash and
    // marker, the same SVG the server draws for it) and the filter hides the rows whose name does
    // not contain the text. Both are CSS rules by row position, written into one <style>
    // element: the Checklist's options stay plain text (see explore.py) and React never sees it.

    let currentFilter = "";
    let currentView = null;

    function matching(view, text) {
        const want = (text || "").trim().toLowerCase();
        return (view ? view.styles || [] : []).filter((st) => !want ||
            st.name.toLowerCase().indexOf(want) >= 0).map((st) => st.name);
    }

    function styleModels(view, text) {
        currentView = view || currentView;
        currentFilter = text || "";
        view = currentView;
        let el = document.getElementById("costdash-models-style");
        if (!el) {
            el = document.createElement("style");
            el.id = "costdash-models-style";
            document.head.appendChild(el);
        }
        const styles = (view && view.styles) || [];
        const want = currentFilter.trim().toLowerCase();
        const rules = styles.map((st, k) => {
            const row = "#models-input label:nth-of-type(" + (k + 1) + ")";
            const svg = "url(\"data:image/svg+xml," + encodeURIComponent(st.swatch) + "\")";
            const hide = want && st.name.toLowerCase().indexOf(want) < 0;
            return row + " .dash-options-list-option-text::before{background-image:" + svg + "}" +
                (hide ? row + "{display:none}" : "");
        });
        const css = rules.join("\n");
        if (el.textContent !== css) el.textContent = css;
        const shown = matching(view, currentFilter).length;
        return styles.length ? (want ? shown + " of " + styles.length + " shown"
            : styles.length + " classifiers") : "";
    }

    /** The filter box: the rows shown, and the count. */
    function filterModels(text, view) {
        return styleModels(view, text);
    }

    /** "tick shown" (add the shown ones) and "only shown" (exactly the shown ones). */
    function tickShown(_add, _only, text, view, value) {
        const t = triggered();
        const shown = matching(view, text);
        if (!view || !shown.length) return NU();
        const names = view.styles.map((st) => st.name);
        const keep = new Set(t.has("models-only-shown.n_clicks") ? shown
            : (value || []).concat(shown));
        return names.filter((n) => keep.has(n));
    }

    // --- the view: what this page hands to the one view object (assets/viewstate.js) ----------

    /** Explore's fields of the view, as its controls hold them. The view object checks each
     * value with the schema and keeps the last valid one, so an invalid box never reaches the
     * address bar, the nav links or the exports. */
    function recordView(key, ref, p, costFn, costFp, volume, unit, lines, sensOn, pLo, pHi, fnLo,
                        fnHi, fpLo, fpHi, maxFpr, capacity) {
        const on = Boolean(sensOn && sensOn.length);
        const range = (lo, hi) => (on && isNum(lo) && isNum(hi) ? [lo, hi] : null);
        const data = (key && key.id) || (ref && ref.id) || null;
        return window.costdashView.set({
            data: data, models: key ? key.models : (ref && ref.models),
            p_pos: p, cost_fn: costFn, cost_fp: costFp, volume: volume, unit: unit,
            lines: Boolean(lines && lines.length),
            sens_p: range(pLo, pHi), sens_fn: range(fnLo, fnHi), sens_fp: range(fpLo, fpHi),
            max_fpr: maxFpr, capacity: capacity,
        });
    }

    /** recordView, for the callback on the inputs `explore` does not watch (Dash wants Inputs
     * before States, so the arguments come in another order). */
    function recordViewFromOthers(key, ref, lines, sensOn, pLo, pHi, fnLo, fnHi, fpLo, fpHi, maxFpr,
                                  capacity, p, costFn, costFp, volume, unit) {
        recordView(key, ref, p, costFn, costFp, volume, unit, lines, sensOn, pLo, pHi, fnLo, fnHi,
                   fpLo, fpHi, maxFpr, capacity);
        return window.costdashView.search(window.costdashView.get());
    }

    /** The Share button: the whole view as the view object holds it, with the share form's
     * committed values, read at click time. */
    function shareRequest(clicks, name, expiry) {
        if (!clicks) return NU();
        return {clicks: clicks, view: window.costdashView.get(), name: name, expiry: expiry};
    }

    // --- the pinned-thresholds panel ------------------------------------------------------------
    //
    // The view's pins live in the `pins-view` store ({id: the data set they belong to, pins:
    // [{model, threshold}]}) and in the one view object; a thin server callback turns them into
    // exact ROC points (`pins-store`), which `explore` prices at the conditions on every step.
    // The threshold slider steps through the thresholds of the classifier's thinned ROC curve
    // (`pin-grid`, from the server; no scores); the number box takes any exact threshold.

    let pinGrid = null;

    /** The classifier list of the panel: the ticked classifiers; the choice kept when it still is
     * one, else the first pinned classifier or the first ticked one. */
    function pinModels(view, current, state) {
        if (!view) return [NU(), NU()];
        const names = view.classifiers.map((cl) => cl.name);
        const pinned = ((state && state.pins) || []).map((p) => p.model)
            .filter((n) => names.indexOf(n) >= 0);
        const value = names.indexOf(current) >= 0 ? current : (pinned[0] || names[0] || null);
        return [names.map((n) => ({label: n, value: n})), value === current ? NU() : value];
    }

    function nearestIndex(values, x) {
        let lo = 0, hi = values.length - 1;
        while (lo < hi) {                      // first value >= x
            const mid = (lo + hi) >> 1;
            if (values[mid] < x) lo = mid + 1;
            else hi = mid;
        }
        if (lo > 0 && Math.abs(values[lo - 1] - x) <= Math.abs(values[lo] - x)) lo -= 1;
        return lo;
    }

    function pinPreview(grid, i, box) {
        if (!grid || !grid.threshold.length) return grid && grid.error ? grid.error : "";
        const exact = isNum(box) && box === grid.threshold[i];
        return (exact ? "" : "Nearest drawn point: ") + "score ≥ " +
            thresholdText(grid.threshold[i]) + " gives FPR " + fmtNum(grid.fpr[i]) +
            ", TPR " + fmtNum(grid.tpr[i]) + " on the test set.";
    }

    /** The slider and the number box follow each other: a slider step puts its threshold in the
     * box; a typed threshold moves the slider to the nearest drawn one (the box keeps the exact
     * value); a new classifier's grid puts the slider at the box's value (or in the middle). */
    function pinControls(index, box, grid) {
        const t = triggered();
        pinGrid = grid;
        describePinSlider();
        if (!grid || !grid.threshold || !grid.threshold.length) {
            return [NU(), NU(), pinPreview(grid, 0, box)];
        }
        const th = grid.threshold, top = th.length - 1;
        const boxIndex = isNum(box) ? nearestIndex(th, box) : null;
        if (t.has("pin-slider.value") && isNum(index)) {
            const i = clamp(Math.round(index), 0, top);
            return [NU(), boxIndex === i ? NU() : th[i], pinPreview(grid, i, boxIndex === i ? box
                : th[i])];
        }
        if (t.has("pin-threshold-input.value")) {
            if (boxIndex === null) return [NU(), NU(), ""];
            return [boxIndex === index ? NU() : boxIndex, NU(), pinPreview(grid, boxIndex, box)];
        }
        if (boxIndex !== null) return [boxIndex, NU(), pinPreview(grid, boxIndex, box)];
        const mid = Math.floor(top / 2);
        return [mid, th[mid], pinPreview(grid, mid, th[mid])];
    }

    /** Pin, Remove, and another data set (whose classifiers the pins do not name). */
    function editPins(_add, _submit, _r0, _r1, _r2, _r3, ref, model, box, state) {
        const t = triggered();
        const pins = ((state && state.pins) || []).slice();
        const id = state ? state.id || null : null;
        const V = window.costdashView;
        const save = (list, dataId) => {
            V.set({pins: list.length ? list : null});
            return [{id: dataId, pins: list}, ""];
        };
        if (t.has("dataset-ref.data")) {
            const refId = (ref && ref.id) || null;
            return refId === id ? [NU(), NU()] : save([], refId);
        }
        for (let k = 0; k < PIN_SLOTS; k++) {
            if (t.has("pin-" + k + "-remove.n_clicks")) {
                return save(pins.filter((_, i) => i !== k), id);
            }
        }
        if (!model) return [NU(), "Choose a classifier first."];
        if (!isNum(box)) return [NU(), "Type a threshold or move the slider first."];
        if (pins.some((p) => p.model === model && p.threshold === box)) {
            return [NU(), model + " is already pinned at " + thresholdText(box) + "."];
        }
        if (pins.length >= PIN_SLOTS) {
            return [NU(), "At most " + PIN_SLOTS + " pinned thresholds: remove one first."];
        }
        const next = pins.concat([{model: model, threshold: box}]);
        const checked = V.check("pins", next);
        if (checked.error) return [NU(), checked.error];
        return save(next, id);
    }

    /** The threshold slider speaks thresholds, not its index. */
    function describePinSlider() {
        const thumb = document.querySelector("#pin-slider [role=slider]");
        if (!thumb) return;
        if (!watched.has(thumb)) {
            watched.add(thumb);
            new MutationObserver(describePinSlider).observe(thumb,
                {attributes: true, attributeFilter: ["aria-valuenow"]});
        }
        const grid = pinGrid;
        const label = "Threshold" + (grid && grid.model ? " of " + grid.model : "");
        if (thumb.getAttribute("aria-label") !== label) thumb.setAttribute("aria-label", label);
        const i = Number(thumb.getAttribute("aria-valuenow"));
        if (!grid || !grid.threshold || !Number.isInteger(i) || grid.threshold[i] === undefined) {
            return;
        }
        const text = "score ≥ " + thresholdText(grid.threshold[i]);
        if (thumb.getAttribute("aria-valuetext") !== text) {
            thumb.setAttribute("aria-valuetext", text);
        }
    }

    dc.costdash = Object.assign(dc.costdash || {}, {
        pinModels, pinControls, editPins, setZoom, filterModels, tickShown,
        explore, fillSensitivity, constraintRequest, recordView, recordViewFromOthers, shareRequest,
        _internals: {pToSlider, sliderToP, costToSlider, sliderToCost, fmtNum, clipLine, clipLinear,
            classifierOfUid, focus},
    });
})();
