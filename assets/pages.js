/*
 * pages.js -- clientside callbacks of the pages other than Explore's own (which are explore.js),
 * as named functions of window.dash_clientside.costdash_pages, referenced from Python with
 * ClientsideFunction("costdash_pages", <name>) (dashboard/page_kit.py PAGES_NAMESPACE).
 *
 *   unsetWhenImplied  a box's value as the view records it (page_kit.follow_implied)
 *   recordView        a page's controls handed to the browser's view (page_kit.record_view)
 *   windowWidth       the window's width (the Threshold choice page)
 *   curvesHover       the hovered threshold marked in every plot of the Curves page
 */
(function () {
    "use strict";

    const dc = (window.dash_clientside = window.dash_clientside || {});

    dc.costdash_pages = Object.assign(dc.costdash_pages || {}, {
        // None while the box shows the value the view implies (the PC(+) or the p(+) of
        // Explore's conditions), so the view keeps following them; the typed value otherwise.
        // Inputs: the box's value, the implied value (a store).
        unsetWhenImplied: function (value, implied) {
            return value === implied ? null : value;
        },

        // The inputs' values, in order, are the view fields named by the last argument (the
        // state of the page's "<store>-fields" store, page_kit.view_fields_store). Returns the
        // checked problems ({field: message}); fields whose value is invalid keep their last
        // valid value in the address bar (assets/viewstate.js record).
        recordView: function () {
            const values = Array.from(arguments);
            const names = values.pop();
            return window.costdashView.record(names, values);
        },

        windowWidth: function (_ref) {
            return window.innerWidth;
        },

        curvesHover: function (prHover, gainsHover, histHover, relHover) {
            const C = window.dash_clientside;
            const trig = (C.callback_context.triggered || [])[0];
            if (!trig) { return C.no_update; }
            // The graphs are the callback's inputs, in order (GRAPHS of dashboard/pages/curves.py).
            const graphs = C.callback_context.inputs_list.map((i) => i.id);
            const gdOf = (id) => document.querySelector("#" + id + " .js-plotly-plot");
            const source = trig.prop_id.split(".")[0];
            let sel = null;
            const hover = trig.value;
            if (hover && hover.points && hover.points.length) {
                const pt = hover.points[0];
                const gd = gdOf(source);
                // The figures send arrays base64-encoded: read the decoded ones plotly.js keeps.
                const trace = gd && gd._fullData && gd._fullData[pt.curveNumber];
                const meta = (trace && trace.meta) || {};
                const cd = trace && trace.customdata ? trace.customdata[pt.pointNumber] : undefined;
                const t = (Array.isArray(cd) || ArrayBuffer.isView(cd)) ? cd[0] : cd;
                let who = meta.classifier;
                if (meta.role === "vertices" && trace.text) { who = trace.text[pt.pointNumber]; }
                if (who && typeof t === "number" && Number.isFinite(t)) {
                    sel = {classifier: who, threshold: t};
                }
            }
            for (const id of graphs) {
                const gd = gdOf(id);
                if (!gd || !gd._fullData) { continue; }
                const full = gd._fullData;
                const targets = [], xs = [], ys = [], modes = [];
                full.forEach((h, i) => {
                    if (!h.meta || h.meta.role !== "hover") { return; }
                    let x = [], y = [], mode = "markers";
                    if (sel) {
                        const curve = full.find((c) => c.meta && c.meta.role === "curve" &&
                            c.meta.classifier === sel.classifier && c.yaxis === h.yaxis);
                        if (curve) {
                            const cd = curve.customdata;
                            let j = -1;
                            for (let k = 0; k < cd.length; k++) { if (cd[k] >= sel.threshold) { j = k; } }
                            if (j >= 0) { x = [curve.x[j]]; y = [curve.y[j]]; }
                        } else if (full.some((c) => c.meta && c.meta.role === "bins" &&
                                             c.meta.classifier === sel.classifier)) {
                            x = [sel.threshold, sel.threshold]; y = [0, h.meta.top || 1];
                            mode = "lines";
                        } else if (full.some((c) => c.meta && c.meta.role === "calibration" &&
                                             c.meta.classifier === sel.classifier)) {
                            x = [sel.threshold, sel.threshold]; y = [0, 1]; mode = "lines";
                        }
                    }
                    targets.push(i); xs.push(x); ys.push(y); modes.push(mode);
                });
                if (targets.length) { window.Plotly.restyle(gd, {x: xs, y: ys, mode: modes}, targets); }
            }
            return sel;
        }
    });
})();
