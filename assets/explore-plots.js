/*
 * explore-plots.js -- the Explore page's plots beyond their figures: the moving parts drawn into
 * them (an SVG layer of their own, kept as the figure's layout shapes too, never re-plotted),
 * the zoom to the current choice, the hover that emphasises one classifier in every view, and
 * the classifier list as their legend.
 */
(function () {
    "use strict";

    const E = window.costdashExplore;
    const {M, NU, triggered, graphDiv} = E;
    const {placeRangesLine} = E;

    // --- drawing the moving parts ----------------------------------------------------------------
    //
    // The moving parts (the shape slots of explore-geometry.js) are drawn by this file into an
    // SVG layer of its own inside each plot, not by Plotly: a step only sets the attributes of
    // elements that already exist, positioned with the axes' own pixel mapping (l2p, _offset).
    // Plotly.relayout of the shapes, which this replaced, re-ran Plotly's layout defaults over
    // every trace: ~30 ms of a ~48 ms step with 20 classifiers and pins (CPU profile, issue 23),
    // and a Patch of the figure prop re-plots every trace (60-120 ms per figure, issue 11).
    //
    // The same slots stay the figure's own shapes (gd.layout.shapes, a plain assignment, no
    // redraw), so a PNG/SVG download, which plots a copy of gd.data and gd.layout, shows them,
    // and so do the tests that read them. When Plotly does redraw a figure (zoom, resize, a new
    // figure, a legend click) it draws them too, at the same places; its own copy is hidden
    // (class costdash-marked) because it would be stale after the next step. The layer is
    // placed again after every drawing of the figure (plotly_afterplot, plotly_react) and while
    // a pan or zoom is dragged (plotly_relayouting), from the axes as they are then.
    //
    // dcc.Graph listens to plotly_relayout to copy layout edits into its figure prop, which would
    // start a slow Plotly.react, so that one event is muted while this file relayouts (zoom).

    const latest = {};
    const SVG_NS = "http://www.w3.org/2000/svg";

    /** Whether `gd` shows a figure of `view` (a figure's uirevision is its data set). */
    function plottedFor(gd, view) {
        return Boolean(gd && gd._fullLayout && gd.layout && gd.layout.uirevision === view.id);
    }

    function hook(gd, id) {
        if (gd.__costdashHooked) return;
        gd.__costdashHooked = true;
        gd.__costdashId = id;
        gd.__costdashMute = 0;
        hideOwnShapes();
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
        else {
            gd.on("plotly_afterplot", () => putLatest(gd, id));
            gd.on("plotly_relayouting", () => putLatest(gd, id));
        }
        gd.on("plotly_hover", (ev) => {
            const pt = ev && ev.points && ev.points[0];
            focus(pt && pt.data ? classifierOfUid(pt.data.uid) : null);
        });
        gd.on("plotly_unhover", () => focus(null));
    }

    // Plotly's stroke dashes (Drawing.dashStyle), so the marks look as its shapes did.
    function dashArray(dash, width) {
        const w = Math.max(width || 1, 3);
        const pattern = {dot: [w, w], dash: [3 * w, 3 * w], longdash: [5 * w, 5 * w],
            dashdot: [3 * w, w, w, w], longdashdot: [5 * w, 2 * w, w, 2 * w]}[dash];
        return pattern ? pattern.map((x) => x + "px").join(",") : "";
    }

    const svgEl = (name, attrs, parent) => {
        const el = document.createElementNS(SVG_NS, name);
        for (const [k, v] of Object.entries(attrs || {})) el.setAttribute(k, v);
        if (parent) parent.appendChild(el);
        return el;
    };

    function set(el, name, value) {
        const v = String(value);
        const cache = el.__costdashAttrs || (el.__costdashAttrs = {});
        if (cache[name] !== v) {
            cache[name] = v;
            el.setAttribute(name, v);
        }
    }

    /**
     * The layer of a graph (built on first use and again when Plotly rebuilt its SVG): two
     * groups, one in Plotly's SVG under the traces (layer "below", where Plotly puts such
     * shapes) and one over them (layer "above"), each clipped to the plotting area, with one
     * element per slot of `shapes` (the slots never change their kind or number for a figure).
     */
    function layerOf(gd, shapes) {
        const svg = gd.querySelector(".main-svg");
        if (!svg) return null;
        let L = gd.__costdashMarks;
        const key = shapes.map((s) => s.name + ":" + s.type + ":" + s.layer).join("|");
        if (L && L.svg === svg && L.key === key && L.below.isConnected && L.above.isConnected) {
            // React may have rewritten the graph's class list (a new className of dcc.Graph).
            if (!gd.classList.contains("costdash-marked")) gd.classList.add("costdash-marked");
            return L;
        }
        if (L) {
            L.below.remove();
            L.above.remove();
            if (L.clip) L.clip.remove();
            if (L.own) L.own.remove();
        }
        const uid = "costdash-marks-clip-" + (gd.__costdashId || "plot");
        let defs = svg.querySelector("defs");
        if (!defs) {
            defs = svgEl("defs", {}, null);
            svg.insertBefore(defs, svg.firstChild);
        }
        const clip = svgEl("clipPath", {id: uid}, defs);
        const clipRect = svgEl("rect", {}, clip);
        const group = (cls) => svgEl("g", {"class": "costdash-marks " + cls,
            "clip-path": "url(#" + uid + ")", "aria-hidden": "true"});
        const below = group("costdash-marks-below"), above = group("costdash-marks-above");
        // Where Plotly draws its own shapes of each layer (or as near as this SVG allows).
        const lower = svg.querySelector(".layer-below") || svg.querySelector(".cartesianlayer");
        if (lower) lower.parentNode.insertBefore(below, lower.nextSibling);
        else svg.appendChild(below);
        // The marks that move go in an SVG of their own over the plot's (under Plotly's top SVG:
        // legend, hover labels), on a compositing layer of its own: a step then repaints these
        // few elements, not the SVG of every trace under them.
        let own = null;
        if (window.costdashMarksInPlotly === true) {        // for measuring, as Plotly did
            const upper = gd.querySelector(".layer-above");
            if (upper) upper.parentNode.insertBefore(above, upper.nextSibling);
            else svg.appendChild(above);
        } else {
            own = svgEl("svg", {"class": "costdash-marks-svg", "aria-hidden": "true",
                style: "position:absolute;left:0;top:0;pointer-events:none;overflow:hidden;" +
                    "will-change:transform"}, null);
            own.appendChild(above);
            svg.parentNode.insertBefore(own, svg.nextSibling);
        }
        const nodes = shapes.map((s) => {
            const parent = s.layer === "below" ? below : above;
            const g = svgEl("g", {"class": "costdash-mark", "data-name": s.name}, parent);
            const kind = s.type === "circle" ? "ellipse" : (s.type === "rect" &&
                s.xsizemode === "pixel") ? "rect" : "path";
            const shape = svgEl(kind, {"fill-rule": "evenodd"}, g);
            const label = s.label ? svgEl("text", {"text-anchor": "start"}, g) : null;
            if (label) label.textContent = s.label.text;
            return {g, shape, label, kind};
        });
        L = gd.__costdashMarks = {svg, own, key, below, above, clip, clipRect, nodes,
            textHeight: {}};
        gd.classList.add("costdash-marked");
        return L;
    }

    /** Plotly's own drawing of the moving shapes (after a zoom, a resize or a new figure) is
     * hidden where the layer draws them: after the next step it would be stale. */
    function hideOwnShapes() {
        if (document.getElementById("costdash-marks-style")) return;
        const el = document.createElement("style");
        el.id = "costdash-marks-style";
        el.textContent = ".js-plotly-plot.costdash-marked .main-svg .shapelayer{display:none}";
        document.head.appendChild(el);
    }

    /** The height Plotly gives a label's text box (it places the text by it), measured once
     * per font size (a layout read, at the layer's first drawing only). */
    function textHeight(L, el, size) {
        if (L.textHeight[size] === undefined) {
            let h = 0;
            try {
                h = el.getBBox().height;
            } catch (err) {
                h = 0;
            }
            if (!(h > 0)) return 1.3 * size;     // not laid out yet: Plotly's line spacing
            L.textHeight[size] = h;
        }
        return L.textHeight[size];
    }

    /** Draw `shapes` (data coordinates of the figure's axes, or paper) into the layer of `gd`,
     * by attributes only. */
    function paintMarks(gd, shapes) {
        const full = gd._fullLayout;
        const xa = full && full.xaxis, ya = full && full.yaxis, gs = full && full._size;
        if (!xa || !ya || !gs || typeof xa.l2p !== "function") return;
        const L = layerOf(gd, shapes);
        if (!L) return;
        if (L.own) {
            set(L.own, "width", full.width);
            set(L.own, "height", full.height);
        }
        set(L.clipRect, "x", xa._offset);
        set(L.clipRect, "y", ya._offset);
        set(L.clipRect, "width", Math.max(xa._length, 0));
        set(L.clipRect, "height", Math.max(ya._length, 0));
        const px = (ref, v) => (ref === "paper" ? gs.l + gs.w * v : xa._offset + xa.l2p(v));
        const py = (ref, v) => (ref === "paper" ? gs.t + gs.h * (1 - v) : ya._offset + ya.l2p(v));
        const r = (v) => Math.round(v * 100) / 100;
        const family = (full.font && full.font.family) || "sans-serif";
        shapes.forEach((s, k) => {
            const n = L.nodes[k];
            let d = null, transform = null, ax = 0, ay = 0;
            if (s.xsizemode === "pixel") {
                ax = px(s.xref, s.xanchor);
                ay = py(s.yref, s.yanchor);
                if (!Number.isFinite(ax) || !Number.isFinite(ay)) {
                    set(n.g, "display", "none");
                    return;
                }
                transform = "translate(" + r(ax) + "," + r(ay) + ")";
                if (n.kind === "ellipse") {
                    set(n.shape, "cx", (s.x0 + s.x1) / 2);
                    set(n.shape, "cy", -(s.y0 + s.y1) / 2);
                    set(n.shape, "rx", Math.abs(s.x1 - s.x0) / 2);
                    set(n.shape, "ry", Math.abs(s.y1 - s.y0) / 2);
                } else if (n.kind === "rect") {
                    set(n.shape, "x", Math.min(s.x0, s.x1));
                    set(n.shape, "y", -Math.max(s.y0, s.y1));
                    set(n.shape, "width", Math.abs(s.x1 - s.x0));
                    set(n.shape, "height", Math.abs(s.y1 - s.y0));
                } else {
                    // A path in pixels about its anchor, y upwards (as Plotly reads it).
                    d = s.path.replace(/(-?[\d.eE+-]+),(-?[\d.eE+-]+)/g,
                        (_, x, y) => x + "," + (-Number(y)));
                }
            } else if (s.type === "path") {
                d = s.path.replace(/(-?[\d.eE+-]+),(-?[\d.eE+-]+)/g, (_, x, y) =>
                    r(px(s.xref, Number(x))) + "," + r(py(s.yref, Number(y))));
            } else if (s.type === "line") {
                d = "M" + r(px(s.xref, s.x0)) + "," + r(py(s.yref, s.y0)) + " L" +
                    r(px(s.xref, s.x1)) + "," + r(py(s.yref, s.y1));
            } else {                                          // a rect in data/paper units
                const x0 = px(s.xref, s.x0), x1 = px(s.xref, s.x1);
                const y0 = py(s.yref, s.y0), y1 = py(s.yref, s.y1);
                d = "M" + r(x0) + "," + r(y0) + " H" + r(x1) + " V" + r(y1) + " H" + r(x0) + " Z";
            }
            if (d !== null && d.indexOf("NaN") >= 0) {
                set(n.g, "display", "none");
                return;
            }
            set(n.g, "display", "inline");
            set(n.g, "opacity", s.opacity === undefined ? 1 : s.opacity);
            if (transform !== null) set(n.g, "transform", transform);
            if (d !== null) set(n.shape, "d", d);
            const line = s.line || {};
            const width = line.width === undefined ? 2 : line.width;
            set(n.shape, "stroke", width > 0 ? line.color || "#444" : "none");
            set(n.shape, "stroke-width", width + "px");
            set(n.shape, "stroke-dasharray", dashArray(line.dash, width) || "none");
            set(n.shape, "fill", s.type === "line" ? "none" : s.fillcolor || "rgba(0,0,0,0)");
            if (n.label) {
                // Plotly's place for a "bottom left" label of a closed shape: padding + 3 px in
                // from its left edge; the text box's bottom `padding` px above its bottom edge.
                const lab = s.label, font = lab.font || {}, size = font.size || 12;
                const pad = lab.padding === undefined ? 3 : lab.padding;
                const half = n.kind === "path" ? pathHalf(s.path) : Math.abs(s.x1 - s.x0) / 2;
                set(n.label, "font-size", size + "px");
                set(n.label, "font-family", family);
                set(n.label, "fill", font.color || "#444");
                set(n.label, "x", r(-half + pad + 3));
                set(n.label, "y", r(half - pad + size - textHeight(L, n.label, size)));
            }
        });
    }

    /** Half the width of a small pixel path about its anchor (the pins' diamonds). */
    function pathHalf(path) {
        const xs = (path.match(/-?[\d.]+(?=,)/g) || []).map(Number);
        return xs.length ? Math.max(...xs.map(Math.abs)) : 0;
    }

    /** The latest moving parts into a graph: its layer and the figure's own shapes. */
    function putLatest(gd, id) {
        const want = latest[id];
        if (!want || !gd._fullLayout || !gd.layout) return;
        gd.layout.shapes = want;
        paintMarks(gd, want);
    }

    /** Draw `shapes` into a figure of `view` when one is on screen (a new view's figure may be
     * one of the old view: the new one replaces it, and plotly_react puts these back); else
     * keep them for whenPlotted. */
    function drawOverlay(id, view, shapes) {
        latest[id] = shapes;
        const gd = graphDiv(id);
        if (!plottedFor(gd, view)) return;
        hook(gd, id);
        try {
            putLatest(gd, id);
        } catch (err) {
            console.error(err);   // the readouts are drawn after the marks, and must still be
        }
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
            .finally(() => {
                gd.__costdashMute -= 1;
                const id = gd.__costdashId;
                if (id && latest[id]) putLatest(gd, id);   // the axes moved under the marks
            });
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
