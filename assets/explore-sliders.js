/*
 * explore-sliders.js -- the Explore page's slider steps and typed values (Enter), drawn at once
 * from the last drawing's arguments before Dash's callbacks see them, and the sliders' words
 * for a screen reader.
 */
(function () {
    "use strict";

    const E = window.costdashExplore;
    const {M, dc, isNum, pToSlider, sliderToP, costToSlider, sliderToCost, friendly, watched} = E;
    const S = E.state;
    const {render, invalidConditions} = E;

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
    const pendingBoxes = {};
    let boxTimer = false;
    const SLIDERS = {"p-pos-slider": ["p", "p-pos-input"], "cost-fn-slider": ["costFn",
        "cost-fn-input"], "cost-fp-slider": ["costFp", "cost-fp-input"]};
    const SLIDER_STEP = 0.01;   // the sliders' step (dashboard/explore_layout.py)

    const pendingSliders = {};

    function flushBoxes() {
        boxTimer = false;
        for (const [sliderId, value] of Object.entries(pendingSliders)) {
            delete pendingSliders[sliderId];
            dc.set_props(sliderId, {value: value});
        }
        for (const [boxId, value] of Object.entries(pendingBoxes)) {
            delete pendingBoxes[boxId];
            dc.set_props(boxId, {value: value});
        }
    }

    function onSliderStep(key, boxId, v) {
        const last = S.last;
        const cur = last && last[key];
        const curPos = isNum(cur) ? (key === "p" ? pToSlider(cur) : costToSlider(cur)) : null;
        if (curPos !== null && Math.abs(curPos - v) < 1e-9) return;   // followed a typed value
        stepTo(key, boxId, v);
    }

    /** Draw the slider position `v` of condition `key` now; its number box (and, for a key
     * press, the slider itself) follow after this frame is painted. */
    function stepTo(key, boxId, v, sliderId) {
        const value = key === "p" ? sliderToP(v) : sliderToCost(v);
        const last = S.last;
        if (last) {
            const next = S.last = Object.assign({}, last, {[key]: value});
            if (next.view && M().valid(next.p, next.costFn, next.costFp, next.costTp,
                                       next.costTn)) {
                render(next, false, true);
            }
        }
        S.fromSlider[key] = value;
        S.stepped[key] = performance.now();
        pendingBoxes[boxId] = value;
        if (sliderId) pendingSliders[sliderId] = v;
        if (!boxTimer) {
            boxTimer = true;
            // In the frame after the one that shows this step, so the step paints first.
            requestAnimationFrame(() => requestAnimationFrame(() => setTimeout(flushBoxes, 0)));
        }
    }

    // --- slider keys: drawn before Dash sees them ----------------------------------------------------
    //
    // A key on a slider's thumb goes to the slider component, whose new value is a Dash store
    // dispatch (every component's selectors re-run, then React) before the thumb's
    // aria-valuenow changes: tens of ms with pins and 20 classifiers on screen, all before the
    // browser may paint (issue 23: 49-53 ms p95 with a 16.7 ms bar). So the arrow and page keys
    // are taken here: the next position is computed as the slider would (Radix's
    // getNextStepValue: on the step grid, x10 with Shift or Page Up/Down, clamped), drawn at
    // once, and handed to the slider and its number box after the frame is painted. Other keys
    // (Home, End) go to the slider as before; a position the slider then reports is drawn by the
    // observer below.
    const STEP_KEYS = {ArrowRight: 1, ArrowUp: 1, ArrowLeft: -1, ArrowDown: -1, PageUp: 1,
        PageDown: -1};
    const decimals = (step) => ((String(step).split(".")[1] || "").length);
    const roundTo = (x, d) => Math.round(x * 10 ** d) / 10 ** d;

    function nextStep(value, min, max, step, direction, multiplier) {
        const d = decimals(step), l = (value - min) / step, u = Math.round(l);
        const onGrid = roundTo(u * step + min, d) === roundTo(value, d);
        const n = onGrid ? u + multiplier * direction : (direction > 0 ? Math.ceil(l) : Math.floor(l));
        return Math.min(Math.max(roundTo(n * step + min, d), min), max);
    }

    const TAKE_SLIDER_KEYS = () => window.costdashTakeSliderKeys !== false;

    document.addEventListener("keydown", (ev) => {
        const dir = STEP_KEYS[ev.key];
        if (!TAKE_SLIDER_KEYS() || !dir || ev.altKey || ev.ctrlKey || ev.metaKey || !S.last || !S.last.view) return;
        const thumb = ev.target;
        if (!thumb || !thumb.getAttribute || thumb.getAttribute("role") !== "slider") return;
        const sliderId = Object.keys(SLIDERS).find((id) => {
            const el = document.getElementById(id);
            return el && el.contains(thumb);
        });
        if (!sliderId) return;
        const [key, boxId] = SLIDERS[sliderId];
        const min = Number(thumb.getAttribute("aria-valuemin"));
        const max = Number(thumb.getAttribute("aria-valuemax"));
        const cur = S.last[key];
        const pos = isNum(cur) ? (key === "p" ? pToSlider(cur) : costToSlider(cur))
            : Number(thumb.getAttribute("aria-valuenow"));
        if (![min, max, pos].every(Number.isFinite)) return;
        const multiplier = ev.shiftKey || ev.key === "PageUp" || ev.key === "PageDown" ? 10 : 1;
        const v = nextStep(Math.min(Math.max(pos, min), max), min, max, SLIDER_STEP, dir,
                           multiplier);
        ev.preventDefault();
        ev.stopPropagation();
        if (Math.abs(v - pos) < 1e-12) return;
        stepTo(key, boxId, v, sliderId);
    }, true);

    // --- typed values: Enter draws at once -----------------------------------------------------------
    //
    // Enter in a condition box is drawn here from the last drawing's arguments, like a slider
    // step, before Dash sees the value: going through Dash first (the box's value, the `explore`
    // callback, the sliders it moves) costs tens of ms before the browser may paint. The event is
    // marked so viewstate.js commits the box's value after this frame is painted; that runs
    // `explore`, which finds everything drawn.
    const TYPED = {"p-pos-input": "p", "cost-fn-input": "costFn", "cost-fp-input": "costFp",
        "cost-tp-input": "costTp", "cost-tn-input": "costTn", "volume-input": "volume"};

    // A box typed in since its value was last committed (Enter or leaving it): the data set's
    // first drawing must not write its default p(+) into a box the user is typing in (typed
    // before the view arrived, the keys that followed were appended to the prevalence, and the
    // readout never showed the typed value: issue 23).
    document.addEventListener("input", (ev) => {
        if (ev.target && TYPED[ev.target.id]) S.editing[ev.target.id] = true;
    }, true);
    const doneEditing = (ev) => {
        if (ev.target && TYPED[ev.target.id]) delete S.editing[ev.target.id];
    };
    document.addEventListener("blur", doneEditing, true);

    document.addEventListener("keydown", (ev) => {
        if (ev.key === "Enter") doneEditing(ev);
        const key = ev.key === "Enter" && ev.target ? TYPED[ev.target.id] : undefined;
        if (!key || !S.last || !S.last.view) return;
        const text = ev.target.value;
        const value = text === "" ? null : Number(text);
        const next = Object.assign({}, S.last, {[key]: value});
        if (invalidConditions(next).length) {
            return;     // the callback shows the message
        }
        S.last = next;
        render(S.last, false, true);
        ev.costdashDrawn = true;
        // dcc.Input would also answer Enter (its n_submit, which nothing here uses, and with
        // debounce=True its value) with a store dispatch in this same task; the value is
        // committed after the paint instead. It answers on keypress, which follows.
        ev.stopPropagation();
        drawnEnter = ev.target;
    }, true);
    let drawnEnter = null;
    document.addEventListener("keypress", (ev) => {
        if (ev.key === "Enter" && ev.target === drawnEnter) ev.stopPropagation();
        drawnEnter = null;
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

    // This runs on every change of the page's element tree (a slider step's new sentence is
    // one): a thumb already watched and still in the page is not looked up again.
    const thumbs = {};

    function watchSliders() {
        for (const [id, [key, boxId]] of Object.entries(SLIDERS)) {
            if (thumbs[id] && thumbs[id].isConnected) continue;
            const thumb = document.querySelector("#" + id + " [role=slider]");
            if (!thumb || watched.has(thumb)) continue;
            thumbs[id] = thumb;
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

})();
