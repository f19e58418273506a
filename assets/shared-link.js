/*
 * shared-link.js -- an open page of a read-only link says so when the link is gone.
 *
 * A viewer's tab keeps working from what it loaded (the readouts are computed in the browser),
 * so a link deleted or expired meanwhile would go unnoticed, and a server callback failing for
 * that reason would say nothing a viewer can use. On the pages of a read-only link (the shell
 * puts the `shared-check` store and the hidden `shared-gone` note on them, dashboard/shell.py),
 * the next interaction (a click, a key, a changed control) and the tab coming back into view
 * bump the store; a server callback looks the link up and shows the note once it is gone. The
 * data set's own error line, which would ask the viewer to upload a file, is hidden then
 * (assets/style.css).
 *
 * At most one check every CHECK_MS; an interaction during that time is checked at its end, so
 * the next interaction after a deletion is always answered.
 */
(function () {
    "use strict";

    const CHECK_MS = 2000;
    let last = -Infinity, pending = null, asked = 0;

    /** The note while the link is not known to be gone; null elsewhere (or once it is). */
    function liveNote() {
        const note = document.getElementById("shared-gone");
        return note && note.hidden ? note : null;
    }

    function check() {
        pending = null;
        const dc = window.dash_clientside;
        if (!liveNote() || !dc || !dc.set_props) return;
        last = performance.now();
        asked += 1;
        dc.set_props("shared-check", {data: asked});
    }

    function soon() {
        if (pending !== null || !liveNote()) return;
        const wait = last + CHECK_MS - performance.now();
        if (wait <= 0) check();
        else pending = setTimeout(check, wait);
    }

    for (const type of ["pointerdown", "keydown", "change"]) {
        document.addEventListener(type, soon, true);
    }
    document.addEventListener("visibilitychange", () => {
        if (document.visibilityState === "visible") soon();
    });

    window.costdashSharedLink = {check, asked: () => asked};
})();
