/*
 * explore-pins.js -- pinned thresholds on the Explore page: the panel's clientside callbacks
 * (classifier list, threshold slider and box, Pin/Remove) and the pins' cards and shapes at the
 * current conditions (render() in explore-readouts.js calls blankPins and fillPins).
 */
(function () {
    "use strict";

    const E = window.costdashExplore;
    const {M, NU, clamp, isNum, triggered, fmtNum, friendly, withUnit, thresholdText, percent,
        vertexName, watched, PIN_SLOTS} = E;
    const {COLORS, drawLine, pin} = E;

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
        // No answer yet (null: the server's pins follow the view) is not "none yet".
        shown["pins-empty"] = Array.isArray(k.pins) && pins.length === 0;
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
                (best.threshold === null ? "" : " at score ≥ " + best.thresholdText);
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

    Object.assign(E, {pinModels, pinControls, editPins, blankPins, fillPins});
})();
