/*
 * explore.js -- clientside callbacks of the Explore page (window.dash_clientside.costdash).
 *
 * Everything a slider moves is drawn in the browser, from the small "client model" the server
 * put in the `view-store` (hull vertices, their log edge slopes, each classifier's
 * fixed-threshold point): the iso-performance line and chosen vertex in ROC space, the PC(+) line
 * and chosen point in cost space (layout shapes; the curves themselves are never re-sent), the
 * readouts, and the address bar. The cost arithmetic it needs lives in costmath.js (the client
 * mirror of the core); these files only format and draw.
 *
 * This file holds the callbacks' entry points (`explore`, `exploreFollowUps`,
 * `fillSensitivity`, `constraintRequest`, `recordView`, `recordViewFromOthers`, `shareRequest`)
 * and registers every callback of the page under the names dashboard/pages/explore.py gives
 * them. The parts they use are in the explore-*.js files before it (explore-base.js lists
 * them), on window.costdashExplore. The comments at "shape slots" (explore-geometry.js),
 * "slider steps" (explore-sliders.js), "readouts" (explore-readouts.js), "drawing the moving
 * parts" (explore-plots.js) and "follow ups" (below) say why each is done the way it is
 * (measured; see docs/dashboard.md).
 */
(function () {
    "use strict";

    const E = window.costdashExplore;
    const {dc, NU, isNum, validP, validCost, pToSlider, costToSlider, triggered} = E;
    const S = E.state;

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

    // A box commits a typed value on Enter or on leaving it (viewstate.js), and its typing
    // debounce commits the same value once more up to 0.25 s after the last key: a slider step
    // taken in between would be undone by that late copy.
    const LATE_COMMIT_MS = 600;

    function lateCopy(key, box) {
        const typed = S.typed[key];
        return Boolean(typed) && typed.value === box && (S.stepped[key] || 0) > typed.at &&
            performance.now() - typed.at < LATE_COMMIT_MS;
    }

    function resolveConditions(t, view, pB, fnB, fpB) {
        const sync = [NU(), NU(), NU(), NU(), NU(), NU()];
        const values = [];
        const boxes = [["p", "p-pos", pB, validP, pToSlider], ["costFn", "cost-fn", fnB, validCost,
            costToSlider], ["costFp", "cost-fp", fpB, validCost, costToSlider]];
        boxes.forEach(([key, id, box, valid, toSlider], k) => {
            let v = box;
            if (t.has(id + "-input.value")) {
                if (S.fromSlider[key] !== undefined && S.fromSlider[key] === box) {
                    if (S.last && valid(S.last[key])) v = S.last[key];   // the newest slider value
                } else if (lateCopy(key, box) && S.last && valid(S.last[key])) {
                    v = S.last[key];            // the slider's step stands; the box shows it again
                    sync[2 * k + 1] = v;
                } else if (valid(box)) {
                    sync[2 * k] = toSlider(box);
                    S.typed[key] = {value: box, at: performance.now()};
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
            // Not into a box being typed in (unless asked, by the prevalence button): its Enter
            // or leaving it commits what was typed, which then stands. Nor into its slider: the
            // slider's new value reaches its thumb a render later, after an Enter may have drawn
            // the typed value, and would read as a step back to the prevalence.
            const typing = S.editing["p-pos-input"] && !t.has("prevalence-button.n_clicks");
            if (!typing) {
                sync[0] = pToSlider(p);
                sync[1] = p;
            }
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

    // --- follow ups: what the server adds to the readout -----------------------------------------
    //
    // The sensitivity ranges, constraints, pins, single thresholds and intervals come from
    // server callbacks that run after the view arrives, one after another (the pins before their
    // intervals, the constraints before their single thresholds). Dash holds a callback until
    // every pending producer of its inputs has answered, so when they were inputs of `explore`
    // the readout came 0.7-1.5 s after the plots of a fresh upload (issue 23). They now go to
    // `exploreFollowUps`, and `explore` draws the readout from the view and the conditions alone,
    // with the follow-ups it has: none yet for another data set or set of classifiers (those
    // of the last one name its hull's vertices), the last ones for the same (the view of other
    // axes or lines: the server sends them again, the same). Whatever order the two run in, the
    // last drawing has the view, the conditions and the follow-ups of that view.
    const noFollowUps = () => ({sens: null, cons: null, pins: null, single: null, intervals: null});
    let followUps = noFollowUps();
    let followUpsOf = null;     // the data set and classifiers they were computed for

    const viewIdentity = (view) => (view ? view.id + "\u0000" +
        view.classifiers.map((cl) => cl.name).join("\u0000") : null);

    /**
     * Everything `explore` did for one call, whatever triggered it: resolves the conditions,
     * draws (unless what is on screen is exactly this), keeps the address bar current. Returns
     * the resolved conditions and the constraint request they make.
     */
    function draw(t, view, pB, fnB, fpB, tpB, tnB, volume, unit, maxFpr, capacity, key, ref,
                  lines, sensOn, pLo, pHi, fnLo, fnHi, fpLo, fpHi) {
        const r = resolveConditions(t, view, pB, fnB, fpB);
        const next = Object.assign({view: view, p: r.p, costFn: r.costFn, costFp: r.costFp,
            costTp: tpB, costTn: tnB, volume: volume, unit: unit}, followUps);
        // A slider step or an Enter was drawn before Dash saw it; the number box it then sets
        // lands here with exactly what is on screen: nothing to draw again (a second drawing
        // per step, after its paint, that delayed the next key).
        const prev = S.last;
        const drawn = prev && !t.has("view-store.data") &&
            Object.keys(next).every((name) => next[name] === prev[name]);
        S.last = next;
        if (!drawn) E.render(S.last, t.has("view-store.data"));
        if (t.has("view-store.data")) E.restyleModels(view);
        const req = constraintRequestOf(maxFpr, capacity, r.p, volume);
        recordView(key, ref, r.p, r.costFn, r.costFp, volume, unit, lines, sensOn, pLo, pHi, fnLo,
                   fnHi, fpLo, fpHi, maxFpr, capacity);
        window.costdashView.set({cost_tp: tpB, cost_tn: tnB});
        return {r: r, req: req};
    }

    /**
     * The Explore page's live callback: number boxes, volume, unit, "use the data's prevalence"
     * and a new view (data set or classifiers) land here.
     *
     * Resolves the conditions (a typed box moves its slider), writes the readouts, redraws the
     * moving parts of both figures, keeps the constraint request and the address bar current.
     * Slider steps are drawn before they get here (see "slider steps"); the server's follow-ups
     * are added by `exploreFollowUps`.
     */
    function explore(view, pB, fnB, fpB, tpB, tnB, volume, unit, _clicks, request, maxFpr,
                     capacity, key, ref, lines, sensOn, pLo, pHi, fnLo, fnHi, fpLo, fpHi) {
        const t = triggered();
        if (t.has("view-store.data") && viewIdentity(view) !== followUpsOf) {
            followUps = noFollowUps();          // pending: this view's are on their way
        }
        const out = draw(t, view, pB, fnB, fpB, tpB, tnB, volume, unit, maxFpr, capacity, key,
                         ref, lines, sensOn, pLo, pHi, fnLo, fnHi, fpLo, fpHi);
        return [...out.r.sync, same(out.req, request) ? NU() : out.req];
    }

    /**
     * The server's follow-ups (sensitivity, constraints, pins, single thresholds, intervals)
     * answered: drawn with the view and conditions on screen. Dash calls this once all of them
     * that were asked have answered; the conditions are read as `explore` reads them when
     * nothing of its own triggered it.
     */
    function exploreFollowUps(sens, cons, pins, single, intervals, view, pB, fnB, fpB, tpB, tnB,
                              volume, unit, maxFpr, capacity, key, ref, lines, sensOn, pLo, pHi,
                              fnLo, fnHi, fpLo, fpHi) {
        const t = triggered();
        followUps = {sens: sens, cons: cons, pins: pins, single: single, intervals: intervals};
        followUpsOf = viewIdentity(view);
        draw(t, view, pB, fnB, fpB, tpB, tnB, volume, unit, maxFpr, capacity, key, ref, lines,
             sensOn, pLo, pHi, fnLo, fnHi, fpLo, fpHi);
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

    dc.costdash = Object.assign(dc.costdash || {}, {
        pinModels: E.pinModels, pinControls: E.pinControls, editPins: E.editPins,
        setZoom: E.setZoom, filterModels: E.filterModels, tickShown: E.tickShown,
        explore, exploreFollowUps, fillSensitivity, constraintRequest, recordView,
        recordViewFromOthers, shareRequest,
        _internals: {pToSlider, sliderToP: E.sliderToP, costToSlider, sliderToCost: E.sliderToCost,
            fmtNum: E.fmtNum, clipLine: E.clipLine, clipLinear: E.clipLinear,
            classifierOfUid: E.classifierOfUid, focus: E.focus},
    });
})();
