/*
 * explore-base.js -- what every part of the Explore page's script shares, on one namespace
 * object, window.costdashExplore (`E` in each file).
 *
 * The Explore page's browser side is split by what each file holds; every page loads them in
 * the order ASSET_SCRIPTS of dashboard/factory.py declares, this file first and the others after:
 *
 *   explore-base.js       the namespace, slider scales, number text, small DOM helpers, and the
 *                         state the files share (the last drawing's arguments)
 *   explore-geometry.js   lines clipped to the unit square, the figures' shape slots, the
 *                         coordinates of the axes (linear or log)
 *   explore-pins.js       the pinned-thresholds panel (callbacks) and the pins' cards and shapes
 *   explore-plots.js      drawing the moving parts into the plots, zoom, hover, the classifier list
 *   explore-readouts.js   render(): the readouts and the moving parts for one set of conditions
 *   explore-sliders.js    slider steps and typed values drawn before Dash sees them
 *   explore.js            the clientside callbacks' entry points (window.dash_clientside.costdash)
 *
 * A file may take at load time what a file before it defines; what a later file defines it
 * reaches through E when called.
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

    // One formatter: Number.toLocaleString with options builds a new one on every call, ~2 ms
    // of a slider step with pins (CPU profile, issue 23); the text is the same.
    const FRIENDLY = new Intl.NumberFormat("en-US", {maximumSignificantDigits: 3});

    /** Friendly number for sentences: 3 significant digits with thousands separators. */
    function friendly(x) {
        if (!isNum(x)) return "–";
        if (x !== 0 && Math.abs(x) < 0.001) return x.toExponential(2);
        return FRIENDLY.format(x);
    }

    const withUnit = (text, unit) => (unit ? text + " " + unit : text);

    /** A score threshold exactly (the shortest text that reads back as it, as
     * costdash.analysis.threshold_text writes it): a deployment compares scores with it, and a
     * rounded 0.499996 would read as the fixed 0.5 it is not. */
    function thresholdText(t) {
        return t === null || t === undefined ? "none" : String(t);
    }

    /** The threshold of vertex `i` of a hull as people read it and paste it: the shortest
     * decimal that flags the same cases (costdash.analysis.readable_threshold, computed by the
     * server for every vertex), with the exact one for its title; "none" without one. */
    function vertexThreshold(hull, i) {
        const t = hull.threshold[i];
        if (t === null || t === undefined) return {text: "none", exact: "none"};
        const readable = hull.threshold_text && hull.threshold_text[i];
        return {text: readable || thresholdText(t), exact: thresholdText(t)};
    }

    /** A vertexThreshold as HTML: the readable text, the exact one on hover, on one line. */
    function thresholdHtml(th) {
        return '<span title="exactly ' + esc(th.exact) + '" class="threshold">' +
            esc(th.text) + "</span>";
    }

    function percent(x) {
        const v = 100 * x;
        return (Math.abs(v) >= 10 ? v.toFixed(0) : v.toFixed(1)) + "%";
    }

    function vertexName(name) {
        if (name === "all-negative") return "flag nothing";
        if (name === "all-positive") return "flag everything";
        return name;
    }

    const esc = (t) => String(t).replace(/[&<>"']/g, (ch) => ({"&": "&amp;", "<": "&lt;",
        ">": "&gt;", '"': "&quot;", "'": "&#39;"}[ch]));

    /**
     * An element's text, written only when it changed, and into its one text node when it has
     * one: a new text node (what `textContent =` makes) is a new layout object to build and
     * attach, and a childList change that every subtree observer of the page answers (the
     * slider watchers here and in upload.js); a text node's data is neither (issue 23: a
     * hundred readouts change on a slider step). Empty text removes the node, so `:empty`
     * still applies.
     */
    function setText(el, text) {
        const node = el.firstChild;
        if (text !== "" && node !== null && node.nodeType === 3 && node === el.lastChild) {
            if (node.data !== text) node.data = text;
        } else if (el.textContent !== text) {
            el.textContent = text;
        }
    }

    function graphDiv(id) {
        return document.querySelector("#" + id + " .js-plotly-plot");
    }

    // Pinned thresholds: costdash.view.MAX_PINS cards and shape slots in each figure.
    const PIN_SLOTS = 4;

    window.costdashExplore = {
        dc, M, NU, clamp, pToSlider, sliderToP, costToSlider, sliderToCost, isNum, validP,
        validCost, triggered, fmtNum, friendly, withUnit, thresholdText, vertexThreshold,
        thresholdHtml, percent, vertexName, esc,
        graphDiv, setText, PIN_SLOTS,
        // Slider thumbs already watched (a MutationObserver each).
        watched: new WeakSet(),
        // The last drawing's arguments (conditions and data: `explore` and the slider steps
        // set it), the value each number box was last given from its slider, and when a typed
        // value last moved a slider (typed) and a slider last stepped (stepped), and the boxes
        // typed in since their last commit (editing, by element id).
        state: {last: null, fromSlider: {}, typed: {}, stepped: {}, editing: {}},
    };
})();
