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

    function flushBoxes() {
        boxTimer = false;
        for (const [boxId, value] of Object.entries(pendingBoxes)) {
            delete pendingBoxes[boxId];
            dc.set_props(boxId, {value: value});
        }
    }

    function onSliderStep(key, boxId, v) {
        const value = key === "p" ? sliderToP(v) : sliderToCost(v);
        const last = S.last;
        const cur = last && last[key];
        const curPos = isNum(cur) ? (key === "p" ? pToSlider(cur) : costToSlider(cur)) : null;
        if (curPos !== null && Math.abs(curPos - v) < 1e-9) return;   // followed a typed value
        if (last) {
            const next = S.last = Object.assign({}, last, {[key]: value});
            if (next.view && M().valid(next.p, next.costFn, next.costFp, next.costTp,
                                       next.costTn)) {
                render(next, false);
            }
        }
        S.fromSlider[key] = value;
        S.stepped[key] = performance.now();
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
        render(S.last, false);
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

})();
