/*
 * explore-readouts.js -- render(): for one set of conditions, the Explore page's readouts
 * (written straight into their elements), the per-classifier table, the sentence, and the moving
 * parts of both figures (handed to explore-plots.js to draw). Called by the `explore` callback,
 * a slider step and a typed value + Enter.
 */
(function () {
    "use strict";

    const E = window.costdashExplore;
    const {M, isNum, fmtNum, friendly, withUnit, thresholdText, vertexThreshold, thresholdHtml,
        percent, vertexName, esc} = E;
    const {clipLine, clipLinear, COLORS, rocSlots, costSlots, placeRangesLine, drawLine,
        geometry, place, pin} = E;
    const {blankPins, fillPins} = E;
    const {drawOverlay, zoomTo, whenPlotted, setText} = E;

    // --- readouts: written straight into their elements ---------------------------------------
    //
    // The readouts are plain text in elements the layout leaves empty (or holding a placeholder),
    // written here rather than returned as Dash outputs: every output is a store dispatch that
    // re-runs a selector for every component on the page, and component trees returned from a
    // callback are re-mounted on every run (plotly/dash#3846, Dash 4.2 - 4.4.1), which together
    // cost a few hundred ms per slider step with 20 classifiers. React never re-renders these
    // elements (no callback outputs to them), so the text stays.

    // --- relayout boundaries (issue 23: a step in one frame) -----------------------------------
    //
    // Every readout sits in a grid or flex item, and Chromium never makes one of those a relayout
    // boundary: a step's new text laid out the page from its root (~2,700 layout objects, 3 ms
    // of a 10 ms frame with 20 classifiers and 2 pins). Each readout card's content, the sentence
    // and the plots' captions are therefore in a `relayout-box` (a block, which can be one) with
    // `contain: size layout` and an explicit height, always its `relayout-inner`'s: a
    // ResizeObserver sets it in the same frame as any change of the content's height (before
    // that frame's paint), so nothing is ever clipped or overlapped, and a step whose text keeps
    // the heights lays out only the boxes it wrote into. Until a box is measured it has no
    // containment (class `sized`, style.css).
    let boxObserver = null;
    const observed = new WeakSet();

    function fitBox(inner, height) {
        const box = inner.parentNode;
        if (!box || !box.classList || !box.classList.contains("relayout-box")) return;
        if (box.__costdashHeight !== height) {
            box.__costdashHeight = height;
            box.style.height = height + "px";
        }
        if (!box.classList.contains("sized")) box.classList.add("sized");
    }

    // Looked up again only when the page's cards were replaced (a page view of Explore again):
    // a document-wide query per step costs a walk of every element after each DOM change.
    let boxSample = null;

    function observeBoxes() {
        if (typeof ResizeObserver === "undefined") return;
        if (boxSample && boxSample.isConnected) return;
        const inners = document.querySelectorAll(".relayout-inner");
        boxSample = inners.length ? inners[0] : null;
        if (!boxObserver) {
            boxObserver = new ResizeObserver((entries) => {
                for (const e of entries) {
                    const size = e.borderBoxSize && e.borderBoxSize[0];
                    fitBox(e.target, size ? size.blockSize : e.target.getBoundingClientRect().height);
                }
            });
        }
        for (const el of inners) {
            if (!observed.has(el)) {
                observed.add(el);
                boxObserver.observe(el);
            }
        }
    }

    // The sentence and the captions are the page's (dashboard/pages/explore.py) and hold only
    // what this file writes: their box is made here, inside them.
    const BOXED = {"sentence": true, "roc-caption": true, "cost-caption": true};

    function innerOf(el) {
        const inner = el.__costdashInner;
        if (inner && inner.parentNode && inner.parentNode.parentNode === el) return inner;
        const box = document.createElement("span");
        box.className = "relayout-box";
        const fresh = document.createElement("span");
        fresh.className = "relayout-inner";
        while (el.firstChild) fresh.appendChild(el.firstChild);
        box.appendChild(fresh);
        el.appendChild(box);
        el.__costdashInner = fresh;
        if (boxObserver && !observed.has(fresh)) {
            observed.add(fresh);
            boxObserver.observe(fresh);
        }
        return fresh;
    }

    function target(id) {
        const el = document.getElementById(id);
        return el && BOXED[id] ? innerOf(el) : el;
    }

    // HTML written as text where only text changed: the sentence changes every step (its money),
    // and replacing its nodes re-attaches layout objects, which lays out past the boundary.
    const parser = document.createElement("template");

    function sameShape(a, b) {
        if (a.childNodes.length !== b.childNodes.length) return false;
        for (let k = 0; k < a.childNodes.length; k++) {
            const x = a.childNodes[k], y = b.childNodes[k];
            if (x.nodeType !== y.nodeType) return false;
            if (x.nodeType === 3) continue;
            if (x.nodeType !== 1 || x.tagName !== y.tagName ||
                x.attributes.length !== y.attributes.length) return false;
            for (const at of y.attributes) {
                if (x.getAttribute(at.name) !== at.value) return false;
            }
            if (!sameShape(x, y)) return false;
        }
        return true;
    }

    function copyTexts(a, b) {
        for (let k = 0; k < a.childNodes.length; k++) {
            const x = a.childNodes[k], y = b.childNodes[k];
            if (x.nodeType === 3) {
                if (x.data !== y.data) x.data = y.data;
            } else {
                copyTexts(x, y);
            }
        }
    }

    function setHtml(el, html) {
        if (el.__costdashHtml === html) return;
        el.__costdashHtml = html;
        parser.innerHTML = html;
        const fresh = parser.content;
        if (el.childNodes.length && sameShape(el, fresh)) copyTexts(el, fresh);
        else el.innerHTML = html;
    }

    function paint(texts, htmls, shown, titles) {
        observeBoxes();
        for (const [id, on] of Object.entries(shown || {})) {
            const el = document.getElementById(id);
            if (el && el.hidden === on) el.hidden = !on;
        }
        for (const [id, text] of Object.entries(texts)) {
            const el = target(id);
            if (el) setText(el, text);
        }
        for (const [id, title] of Object.entries(titles || {})) {
            const el = document.getElementById(id);
            if (el && el.title !== title) el.title = title;
        }
        for (const [id, html] of Object.entries(htmls || {})) {
            const el = target(id);
            if (el) setHtml(el, html);
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
            cells[r].forEach((cell, k) => {
                const td = row.cells[k + 1];
                if (!td) return;
                const text = typeof cell === "string" ? cell : cell.text;
                const title = typeof cell === "string" ? "" : cell.title;
                setText(td, text);
                if (td.title !== title) td.title = title;
            });
        });
    }

    const READOUT_IDS = ["pc-value", "slope-value", "chosen-classifier", "chosen-threshold",
        "chosen-fpr", "chosen-tpr", "cm-tp", "cm-fn", "cm-fp", "cm-tn", "normalized-cost",
        "expected-cost", "period-cost", "saving-trivial"];

    /** A classifier's own best vertex for the table: its readable threshold, the exact one
     * in the cell's title. */
    function ownVertexText(hull, j) {
        if (j === 0) return "flag nothing";
        if (j === hull.fpr.length - 1) return "flag everything";
        if (hull.threshold[j] === null) {
            return "FPR " + fmtNum(hull.fpr[j], 3) + ", TPR " + fmtNum(hull.tpr[j], 3);
        }
        const th = vertexThreshold(hull, j);
        return {text: "≥ " + th.text, title: "exactly ≥ " + th.exact};
    }

    /** A constrained point in words; its vertices' thresholds readable when they are the
     * overall hull's (the server's constraint answer names them by index into it). */
    function describeMixed(pt, hull) {
        const threshold = (index, thr) => (hull && hull.threshold[index] === thr
            ? vertexThreshold(hull, index).text : thresholdText(thr));
        const one = (name, index, thr) => name + (thr === null ? ""
            : " (score ≥ " + threshold(index, thr) + ")");
        if (pt.left === pt.right || pt.weight === 0) {
            return one(vertexName(pt.left_classifier), pt.left, pt.left_threshold);
        }
        return "mix " + one(vertexName(pt.right_classifier), pt.right, pt.right_threshold) +
            " with probability " + fmtNum(pt.weight, 3) + " and " +
            one(vertexName(pt.left_classifier), pt.left, pt.left_threshold) + " otherwise";
    }

    /**
     * The saving against the better trivial choice, in money with its share of what that
     * choice costs (both per period with a volume, else per case): the percentage is of the
     * money named in the same words (dashboard/report/readouts.py writes the same text).
     */
    function savingText(math, c, ne, scale, unit, label) {
        const money = (x) => withUnit(friendly(x * scale), unit);
        const trivial = math.trivialMoney(c);
        const costs = ", which costs " + money(trivial);
        const trivialNe = math.trivialCost(c);
        if (trivialNe - ne <= 0.0005 * trivialNe) return "about the same as " + label + costs;
        const share = math.saving(c, ne);
        return money(math.savingMoney(c, ne)) + (isNum(share) ? " (" + percent(share) + ")" : "") +
            " less than " + label + costs;
    }

    /** The messages of the conditions that are not valid: the view's one validation
     * (assets/viewstate.js: each value, then the rules across fields, in the server's words),
     * and a required condition left empty. */
    function invalidConditions(k) {
        const V = window.costdashView;
        const values = {p_pos: k.p, cost_fn: k.costFn, cost_fp: k.costFp, cost_tp: k.costTp,
            cost_tn: k.costTn, volume: k.volume};
        const found = V.validate(values);
        for (const name of ["p_pos", "cost_fn", "cost_fp"]) {
            if (!found[name] && (values[name] === null || values[name] === undefined ||
                                 values[name] === "")) {
                found[name] = V.requirement(name) + ".";
            }
        }
        return Array.from(new Set(Object.values(found)));
    }

    function setStale(on) {
        const el = document.querySelector(".explore .results");
        if (el && el.classList.contains("stale") !== on) {
            el.classList.toggle("stale", on);
            el.setAttribute("aria-busy", on ? "true" : "false");
        }
    }

    /**
     * The decision at one set of valid conditions: the chosen vertex, the readouts' text (by
     * element id), the threshold's exact value (titles) and the plain-language sentence (HTML).
     * Pure (no DOM): render() paints it, and a read link's preview (dashboard/link_preview.py)
     * runs this very function on the same view and conditions, so its first paint states the
     * numbers the live page then shows.
     */
    function decision(k, math) {
        const texts = {}, htmls = {}, titles = {};
        const unit = (k.unit || "").trim();
        const vol = isNum(k.volume) && k.volume > 0 ? k.volume : null;
        const c = math.conditions(k.p, k.costFn, k.costFp, k.costTp, k.costTn);
        const view = k.view, hull = view.hull;
        const i = math.optimalIndex(hull.log_edges, c.logSlope, view.tie_log_slope);
        const f = hull.fpr[i], tp = hull.tpr[i], name = hull.classifier[i], thr = hull.threshold[i];
        const ne = math.normalizedCost(c, f, tp);
        const ec = math.expectedCost(c, ne);
        const trivialNeg = c.pc <= c.oneMinusPc;   // the better trivial classifier
        const th = vertexThreshold(hull, i);
        const colorOf = {};
        for (const cl of view.classifiers) colorOf[cl.name] = cl.color;
        const color = colorOf[name] || "#1f2328";
        const trivialChosen = i === 0 || i === hull.fpr.length - 1;

        texts["pc-value"] = fmtNum(c.pc);
        texts["slope-value"] = fmtNum(c.slope);
        texts["chosen-classifier"] = name;
        texts["chosen-threshold"] = th.text;
        titles["chosen-threshold"] = thr === null ? "" : "exactly " + th.exact;
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
        const savingWords = savingText(math, c, ne, vol === null ? 1 : vol, unit, trivialLabel);
        texts["saving-trivial"] = trivialChosen ? "0% (a trivial choice is best)" : savingWords;

        // The plain-language sentence.
        const per = vol === null ? "per case" : "per " + friendly(vol) + " cases";
        const moneyText = friendly(vol === null ? ec : ec * vol) + (unit ? " " + unit : "");
        if (name === "all-negative") {
            htmls.sentence = esc("At these costs no classifier beats flagging nothing: " +
                moneyText + " " + per + ", all of it missed positives.");
        } else if (name === "all-positive") {
            htmls.sentence = esc("At these costs, flag everything: " + moneyText + " " + per +
                ", all of it false alarms.");
        } else {
            const thrHtml = thr === null ? "" : " with threshold " + thresholdHtml(th);
            htmls.sentence = "At these costs, use " + esc(name) + thrHtml + ": " +
                esc(moneyText + " " + per + ", " + savingWords + ".");
        }

        return {texts, htmls, titles, vol, unit, c, hull, i, f, tp, name, thr, th, ne, ec, color,
            colorOf, savingWords};
    }

    // --- intervals under the costs (issue 28 item 5) ------------------------------------------
    //
    // The server sends condition-free limits (`interval-store`, costdash.readout_intervals) once
    // per classifiers, pins and level; costmath.js combines them at this step's PC(+). The
    // chosen threshold was picked on these cases: its range carries no level. A pin is a
    // threshold fixed beforehand: its cost interval carries the level (closed form, calibrated);
    // its regret is against the picked best choice: a range without a level.

    const INTERVAL_IDS = ["expected-cost-interval", "period-cost-interval", "cost-interval-note"];
    const PIN_INTERVALS = ["cost-interval", "period-cost-interval", "regret-interval",
        "interval-note"];

    const pct = (level) => String(Number((100 * level).toFixed(3))) + "%";
    const sameRates = (lim, fpr, tpr) => Boolean(lim) &&
        Math.abs(lim.fp / lim.n_neg - fpr) <= 1e-12 &&
        Math.abs(1 - lim.fn / lim.n_pos - tpr) <= 1e-12;

    function rangeText(lo, hi, scale, unit) {
        return withUnit(fmtNum(lo * scale, 3) + " to " + fmtNum(hi * scale, 3), unit);
    }

    /** The intervals' text for the chosen vertex `d` and the pins (by element id). */
    function intervalTexts(k, d, pins, math, texts, titles) {
        for (const id of INTERVAL_IDS) texts[id] = "";
        for (let s = 0; s < E.PIN_SLOTS; s++) {
            for (const n of PIN_INTERVALS) texts["pin-" + s + "-" + n] = "";
        }
        const iv = k.intervals;
        if (!iv || iv.error || !Array.isArray(iv.hull)) {
            if (iv && iv.error) texts["cost-interval-note"] = "No interval: " + iv.error;
            return;
        }
        const {c, vol, unit, i} = d;
        const scale = vol === null ? 1 : vol;
        const lim = iv.hull[i];
        const level = pct(iv.level);
        if (sameRates(lim, d.f, d.tp)) {
            if (lim.exact) {
                texts["expected-cost-interval"] = "exact";
                texts["cost-interval-note"] = "A trivial choice's cost is known exactly (no " +
                    "rates to estimate): no interval.";
            } else {
                const r = math.costInterval(c, lim);
                texts["expected-cost-interval"] = "range " + rangeText(r.low, r.high, 1, unit);
                if (vol !== null) {
                    texts["period-cost-interval"] = "range " + rangeText(r.low, r.high, vol, unit);
                }
                texts["cost-interval-note"] = "Range: what this threshold may cost on new cases " +
                    "like these (the " + level + " Clopper–Pearson–MOVER interval of its test-set " +
                    "error rates), without a confidence level: it was picked as the best on these " +
                    "same cases, which flatters its cost here. A pinned threshold fixed " +
                    "beforehand gets its level.";
            }
        } else {
            texts["cost-interval-note"] = "Interval: computing…";
        }
        pins.forEach((p, s) => {
            if (p.error) return;
            const id = (n) => "pin-" + s + "-" + n;
            const e = (iv.pins || []).find((q) => q.model === p.model &&
                q.threshold === p.threshold);
            if (!e || !sameRates(e.cost, p.fpr, p.tpr)) {
                texts[id("interval-note")] = "Interval: computing…";
                return;
            }
            const r = math.costInterval(c, e.cost);
            texts[id("cost-interval")] = level + " CI " + rangeText(r.low, r.high, 1, unit);
            if (vol !== null) {
                texts[id("period-cost-interval")] = level + " CI " +
                    rangeText(r.low, r.high, vol, unit);
            }
            let regretNote = e.regret_note || "";
            const pair = e.regret && e.regret[i];
            if (pair) {
                const g = math.regretInterval(c, pair);
                texts[id("regret-interval")] = "range " + rangeText(g.low, g.high, scale, unit);
                regretNote = "Regret range: against the best choice on the same cases " +
                    "(discordant-pair MOVER), without a level: the best choice was picked on " +
                    "these cases.";
            }
            texts[id("interval-note")] = level + " intervals (CI): what this threshold would " +
                "cost on new cases like these, if it was fixed before these cases were scored " +
                "(Clopper–Pearson–MOVER on its test-set error rates). " + regretNote;
        });
    }

    /** Readouts and the moving parts of both figures, for the current conditions. */
    // --- the rest of a step, one frame later ---------------------------------------------------
    //
    // A step's text is laid out, painted and layerized before its frame is shown: with 20
    // classifiers and 2 pins, the per-classifier table (~60 cells that change) and the pins' cards
    // (~40) were most of that frame's layout (~300 dirty objects, 2.5 ms CPU) and of its JS. The
    // bar is the readout repainted in one frame (issue 23), so those two follow, from the same
    // computation, once the step's frame is painted: an idle callback asked for in that frame's
    // animation callbacks (so after its paint and after any task already waiting; at most 100 ms
    // later when the page is never idle), and shown in the frame after. Not a second
    // requestAnimationFrame: that frame begins at once when the main thread is free, and holds
    // every task posted after the step's paint (tried: a third of the samples then took both
    // frames, 45-65 ms at load 5-8). A newer drawing replaces a pending rest; a drawing that
    // paints everything at once (no view, invalid conditions) drops it.
    let restToken = 0;

    function deferRest(fn) {
        const token = ++restToken;
        const run = () => {
            if (token === restToken) fn();
        };
        requestAnimationFrame(() => {
            if (typeof requestIdleCallback === "function") requestIdleCallback(run, {timeout: 100});
            else setTimeout(run, 0);
        });
    }

    /** `step`: a slider step or a typed value + Enter (explore-sliders.js), whose table and pin
     * cards may follow a frame later; every other drawing paints all at once. */
    function render(k, viewChanged, step) {
        restToken++;                                    // a pending rest is of older conditions
        const view = k.view, sens = k.sens, cons = k.cons;
        const texts = {}, htmls = {}, shown = {}, titles = {"chosen-threshold": ""};
        for (const id of READOUT_IDS) texts[id] = "–";
        for (const id of INTERVAL_IDS) texts[id] = "";
        texts["conditions-error"] = "";
        htmls.sentence = "";
        texts["roc-caption"] = "ROC space";
        texts["cost-caption"] = "Cost space";
        htmls["sensitivity-readout"] = "";
        htmls["constraint-readout"] = "";
        const pins = blankPins(k, texts, shown);
        if (!view) {
            htmls.sentence = esc("Upload a predictions file or open a demo to start.");
            paint(texts, htmls, shown, titles);
            return;
        }
        const math = M();
        const problems = invalidConditions(k);
        if (problems.length) {
            // The readouts would be of other conditions than the boxes show: blank them and say
            // why, rather than leave numbers that no longer answer the question.
            texts["conditions-error"] = problems.join(" ");
            htmls.sentence = esc("Fix the value marked above to see the best choice.");
            paint(texts, htmls, shown, titles);
            setStale(true);
            return;
        }
        setStale(false);
        const d = decision(k, math);
        Object.assign(texts, d.texts);
        Object.assign(htmls, d.htmls);
        Object.assign(titles, d.titles);
        const {vol, unit, c, hull, f, tp, name, thr, th, ne, ec, color, colorOf} = d;
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
            (thr === null ? "" : " at score ≥ " + th.text) + " is best here";
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
            notes.push(label + ": " + describeMixed(res, hull) + " (FPR " + fmtNum(res.fpr, 3) + ", TPR " +
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
        fillPins(pins, c, {fpr: f, tpr: tp, name: name, threshold: thr, thresholdText: th.text},
                 vol, unit, colorOf, texts, R, C, g, pcX);
        intervalTexts(k, d, pins, math, texts, titles);

        // The figures' marks first (attributes of their own SVG layer; a pin's label is
        // measured once, when the layer is built): nothing in them reads the page's layout
        // after the text below has changed it.
        drawOverlay("roc-graph", view, rocS);
        drawOverlay("cost-graph", view, costS);
        // The readouts, the sentence and the marks in this frame; on a step, the per-classifier
        // table and the pins' cards in the next one (deferRest).
        const rest = {};
        for (const id of Object.keys(texts)) {
            if (id.startsWith("pin-")) {
                rest[id] = texts[id];
                delete texts[id];
            }
        }
        paint(texts, htmls, shown, titles);
        const paintRest = () => {
            fillTable(view, cells, name);
            paint(rest);
        };
        if (step) deferRest(paintRest);
        else paintRest();
        zoomTo({view: view, f: f, tp: tp, pcX: pcX, ne: ne, trivial: math.trivialCost(c), g: g});
        if (viewChanged) whenPlotted(view);
    }

    Object.assign(E, {render, decision, invalidConditions, intervalTexts});
})();
