/*
 * link-preview.js -- hands a read link's page over from its preview to the live page.
 *
 * The server draws a read link's two plots into the HTML before Dash boots
 * (dashboard/link_preview.py); the live page renders underneath, invisible while the preview
 * is in the document (style.css: `#link-preview ~ #react-entry-point`), so removing the preview
 * is the whole swap. It goes once both live graphs hold every trace of the preview and have
 * drawn them (the viewer then sees the same plots, now with their controls), or at once when
 * the page shows an error, or after TIMEOUT_MS whatever happened: a viewer is never left on a
 * static picture. The outcome is kept in <html data-link-preview="..."> for tests and
 * benchmarks.
 */
(function () {
    "use strict";

    const preview = document.getElementById("link-preview");
    if (!preview) return;

    const TIMEOUT_MS = 20000;
    const PAIRS = [["roc-graph", "link-preview-roc"], ["cost-graph", "link-preview-cost"]];

    function wanted(previewId) {
        const el = document.getElementById(previewId);
        return el ? (el.getAttribute("data-uids") || "").split(" ").filter(Boolean) : [];
    }

    const want = PAIRS.map(([live, shown]) => [live, wanted(shown)]);

    /** Whether the live graph `id` has drawn every trace of `uids`. */
    function liveDrawn(id, uids) {
        const gd = document.querySelector("#" + id + " .js-plotly-plot");
        if (!gd || !gd._fullData || !gd.querySelector(".scatterlayer .trace")) return false;
        const have = new Set(gd._fullData.map((t) => t.uid));
        return uids.length > 0 && uids.every((u) => have.has(u));
    }

    /** Whether the page says something went wrong instead of drawing the view. */
    function pageError() {
        const entry = document.getElementById("react-entry-point");
        if (!entry) return false;
        if (entry.querySelector(".placeholder-page, ._dash-error")) return true;
        const err = document.getElementById("upload-error");
        return Boolean(err && err.textContent.trim());
    }

    let frame = null;
    let timer = null;

    function finish(outcome) {
        if (frame !== null) cancelAnimationFrame(frame);
        if (timer !== null) clearTimeout(timer);
        frame = timer = null;
        if (!preview.isConnected) return;
        for (const [, shown] of PAIRS) {
            const el = document.getElementById(shown);
            // Its resize listener and WebGL/SVG state go with it.
            if (el && window.Plotly && el._fullLayout) window.Plotly.purge(el);
        }
        preview.remove();
        document.documentElement.setAttribute("data-link-preview", outcome);
    }

    function check() {
        frame = null;
        if (!preview.isConnected) return;
        if (pageError()) return finish("error");
        if (want.every(([id, uids]) => liveDrawn(id, uids))) return finish("live");
        frame = requestAnimationFrame(check);
    }

    // A frame is checked only when one is drawn; the timeout holds even in a tab never shown.
    timer = setTimeout(() => finish("timeout"), Math.max(0, TIMEOUT_MS - performance.now()));
    check();
})();
