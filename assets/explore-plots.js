/*
 * explore-plots.js -- the Explore page's plots beyond their figures: the moving parts drawn into
 * them (layout shapes, without a re-plot of the traces), the zoom to the current choice, the
 * hover that emphasises one classifier in every view, and the classifier list as their legend.
 */
(function () {
    "use strict";

    const E = window.costdashExplore;
    const {M, NU, triggered, graphDiv} = E;
    const {placeRangesLine} = E;

    // --- drawing the moving parts ----------------------------------------------------------------
    //
    // The moving parts are layout shapes only, drawn by Plotly.relayout of just the shapes: it
    // redraws the shapes layer in 1-8 ms (as long as the list keeps its structure, see "shape
    // slots"). They never go through the figure prop: a Patch makes dcc.Graph call Plotly.react,
    // which here re-plots every trace (60-120 ms per figure with 20 classifiers on a 2-vCPU
    // machine, measured), and for a new view that was a second full drawing of both figures
    // right after their first (issue 11). So dcc.Graph draws a new figure without them, and they
    // are put in as soon as it is on screen: on a graph already drawn once, by its plotly_react
    // event (after any re-plot by dcc.Graph: new figure, legend click); on a graph's first
    // drawing, by whenPlotted. dcc.Graph listens to plotly_relayout to copy layout edits into its
    // figure prop, which would start the slow Plotly.react after all, so that one event is muted
    // while we draw.

    const latest = {};

    /** Whether `gd` shows a figure of `view` (a figure's uirevision is its data set). */
    function plottedFor(gd, view) {
        return Boolean(gd && gd._fullLayout && gd.layout && gd.layout.uirevision === view.id);
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
            putLatest(gd, id);
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

    // Plotly.relayout re-runs the layout defaults, and with autosize they read the graph's
    // size from its computed style (plotAutoSize): a synchronous layout of the whole page,
    // which a step has just changed (readouts, the table), once per graph: the largest part
    // of a slider step with pins and 20 classifiers (issue 23). The shapes do not change the
    // graph's size, so the size it has is passed in for that one call (the user layout is put
    // back at once; a resize relayouts with autosize as before).
    function quietRelayout(gd, want, json) {
        gd.__costdashMute += 1;
        gd.__costdashDrawn = json || JSON.stringify(want);
        const lay = gd.layout, full = gd._fullLayout;
        const pin = Boolean(lay && full && full.autosize && full.width > 0 && full.height > 0 &&
            lay.width === undefined && lay.height === undefined);
        const had = pin && Object.prototype.hasOwnProperty.call(lay, "autosize");
        const autosize = pin ? lay.autosize : undefined;
        if (pin) Object.assign(lay, {autosize: false, width: full.width, height: full.height});
        let done;
        try {
            done = window.Plotly.relayout(gd, {shapes: want});
        } finally {
            if (pin) {
                delete lay.width;
                delete lay.height;
                if (had) lay.autosize = autosize;
                else delete lay.autosize;
                if (gd._fullLayout) gd._fullLayout.autosize = true;
            }
        }
        return Promise.resolve(done)
            .catch(() => undefined)
            .finally(() => { gd.__costdashMute -= 1; });
    }

    /** The latest moving parts into a graph that does not show them (a figure just drawn). */
    function putLatest(gd, id) {
        const want = latest[id];
        if (want && gd.layout && gd.layout.shapes !== want) quietRelayout(gd, want);
    }

    /** Draw `shapes` into a figure of `view` when one is on screen (a new view's figure may be
     * one of the old view: the new one replaces it, and plotly_react puts these back); else
     * keep them for whenPlotted. */
    function drawOverlay(id, view, shapes, viewChanged) {
        latest[id] = shapes;
        const gd = graphDiv(id);
        if (!plottedFor(gd, view)) return;
        hook(gd, id);
        const json = JSON.stringify(shapes);
        if (viewChanged || gd.__costdashDrawn !== json) quietRelayout(gd, shapes, json);
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

    /** Once each figure of a new view is plotted (they arrive through Dash, after the `explore`
     * callback; the first drawing of a page may come before the graphs exist), hook it (hover,
     * shapes), put its moving parts in, and zoom it when the zoom is on. Checked once a frame,
     * for at most PLOTTED_FRAMES frames shown (a hidden page shows none). */
    const PLOTTED_FRAMES = 900;
    let plottedFrame = null;

    function whenPlotted(view) {
        if (plottedFrame !== null) cancelAnimationFrame(plottedFrame);
        const waiting = new Set(FOCUS_GRAPHS);
        let frames = 0;
        const check = () => {
            plottedFrame = null;
            let drawn = false;
            for (const id of Array.from(waiting)) {
                const gd = graphDiv(id);
                if (!plottedFor(gd, view)) continue;
                waiting.delete(id);
                hook(gd, id);
                putLatest(gd, id);
                drawn = true;
            }
            if (drawn && zoomOn) applyZoom(false);
            if (waiting.size && ++frames < PLOTTED_FRAMES) {
                plottedFrame = requestAnimationFrame(check);
            }
        };
        check();
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

    /** The point the zoom follows (render() gives it at every drawing), zoomed to when on. */
    function zoomTo(target) {
        zoomTarget = target;
        if (zoomOn) applyZoom(false);
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

    /** The list's swatches of another view, with the filter as it is. */
    const restyleModels = (view) => styleModels(view, currentFilter);

    Object.assign(E, {drawOverlay, zoomTo, whenPlotted, setZoom, classifierOfUid,
        focus, restyleModels, filterModels, tickShown});
})();
