/*
 * link-preview.js -- the preview of a read link's Explore page (dashboard/link_preview.py).
 *
 * The preview's own <script src> tag carries its settings as JSON in data-preview-config and
 * runs as the parser reaches it, long before dash-renderer: nothing here waits for Dash. In
 * order it shows the decision (the live page's own decision(), assets/explore-readouts.js, on
 * the link's view), draws the two plots, and hands the page over to the live page once that has
 * drawn them. Any failure takes the preview away, so the page shows as it always did.
 *
 * Dash loads this file again with the rest of assets/ later; that run finds no settings on its
 * tag and does nothing. The functions are kept on window.costdashLinkPreview.
 */
(function () {
    "use strict";

    // The live page's decision on the link's view and conditions; p(+) unset: the data set's
    // own, as the live page's first drawing does (explore.js).
    function showDecision(cfg) {
        var el = cfg.decision && document.getElementById(cfg.decision);
        var E = window.costdashExplore, M = window.costdashMath;
        if (!el || !E || !E.decision || !M) return;
        var k = JSON.parse(el.textContent);
        if (!E.validP(k.p)) k.p = k.view.default_condition.p_pos;
        if (!M.valid(k.p, k.costFn, k.costFp, k.costTp, k.costTn)) return;
        var d = E.decision(k, M);
        var sentence = document.getElementById(cfg.sentence);
        if (sentence) sentence.innerHTML = d.htmls.sentence || "";
        cfg.readouts.forEach(function (id) {
            var out = document.getElementById(cfg.readoutPrefix + id);
            if (out && d.texts[id] !== undefined) out.textContent = d.texts[id];
            if (out && d.titles[id]) out.title = d.titles[id];
        });
        document.documentElement.dataset.linkPreviewDecision = "shown";
    }

    // The two figures, kept as inert JSON, drawn with plotly.js (loaded just before).
    function draw(cfg) {
        var box = document.getElementById(cfg.box);
        try {
            var figs = JSON.parse(document.getElementById(cfg.figures).textContent);
            var graphs = cfg.graphs;
            Promise.all(Object.keys(graphs).map(function (k) {
                return window.Plotly.newPlot(graphs[k], figs[k].data, figs[k].layout,
                                             {responsive: true, displayModeBar: false});
            })).then(function () {
                // For tests and benchmarks; the swap later writes how the preview went.
                var root = document.documentElement;
                if (!("linkPreview" in root.dataset)) root.dataset.linkPreview = "drawn";
            }, function () { if (box) box.remove(); });
        } catch (e) { if (box) box.remove(); }
    }

    // Hands the page over from its preview to the live page. The live page renders underneath,
    // invisible while the preview is in the document (style.css), so removing the preview is
    // the whole swap. It goes once both live graphs hold every trace of the preview and have
    // drawn them (the viewer then sees the same plots, now with their controls), at once when
    // the page shows an error, and after the timeout in any case. The outcome is kept in
    // <html data-link-preview="live|error|timeout"> for tests and benchmarks.
    function swap(cfg) {
        var box = document.getElementById(cfg.box);
        if (!box) return;
        var pairs = cfg.pairs, frame = null, timer = null;
        var want = Object.keys(pairs).map(function (live) {
            var el = document.getElementById(pairs[live]);
            return [live, el ? (el.dataset.uids || "").split(" ").filter(Boolean) : []];
        });
        function liveDrawn(id, uids) {
            var gd = document.querySelector("#" + id + " .js-plotly-plot");
            if (!gd || !gd._fullData || !gd.querySelector(".scatterlayer .trace")) return false;
            var have = new Set(gd._fullData.map(function (t) { return t.uid; }));
            return uids.length > 0 && uids.every(function (u) { return have.has(u); });
        }
        function pageError() {
            var entry = document.getElementById(cfg.entry);
            if (!entry) return false;
            if (entry.querySelector("." + cfg.errorPage + ", ._dash-error")) return true;
            var err = document.getElementById(cfg.uploadError);
            return Boolean(err && err.textContent.trim());
        }
        function finish(outcome) {
            if (frame !== null) cancelAnimationFrame(frame);
            if (timer !== null) clearTimeout(timer);
            frame = timer = null;
            if (!box.isConnected) return;
            Object.keys(pairs).forEach(function (live) {
                var el = document.getElementById(pairs[live]);
                // Its resize listener and plot state go with it.
                if (el && window.Plotly && el._fullLayout) window.Plotly.purge(el);
            });
            box.remove();
            document.documentElement.dataset.linkPreview = outcome;
        }
        function check() {
            frame = null;
            if (!box.isConnected) return;
            if (pageError()) return finish("error");
            if (want.every(function (w) { return liveDrawn(w[0], w[1]); })) return finish("live");
            frame = requestAnimationFrame(check);
        }
        // A frame is checked only when one is drawn; the timeout holds in a tab never shown too.
        timer = setTimeout(function () { finish("timeout"); },
                           Math.max(0, cfg.timeout - performance.now()));
        check();
    }

    window.costdashLinkPreview = {showDecision: showDecision, draw: draw, swap: swap};

    var tag = document.currentScript;
    var text = tag && tag.dataset.previewConfig;
    if (!text) return;
    var cfg;
    try { cfg = JSON.parse(text); } catch (e) { return; }
    // A failure of the decision leaves the preview's readouts as dashes; the live page writes
    // its own as always.
    try { showDecision(cfg); } catch (e) { /* the dashes stay */ }
    draw(cfg);
    swap(cfg);
})();
