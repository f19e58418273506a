/*
 * shared-link.js -- an open page of a read-only link says so when the link is gone.
 *
 * A viewer's tab keeps working from what it loaded (the readouts are computed in the browser),
 * so a link deleted or expired meanwhile would go unnoticed, and a server callback failing for
 * that reason would say nothing a viewer can use. On the pages of /s/<token>, the next
 * interaction (a click, a key, a changed control) and the tab coming back into view ask the
 * server with HEAD of the page's own address: the links' guard (dashboard/manage.py) answers it
 * 404 once the link is deleted or expired, and HEAD is a check, not an opening. Then the note
 * the shell put on the page (#shared-gone, dashboard/shell.py) is shown, and the data set's own
 * error line, which would ask the viewer to upload a file, is hidden.
 *
 * At most one check every CHECK_MS; an interaction during that time is checked at its end, so
 * the next interaction after a deletion is always answered.
 */
(function () {
    "use strict";

    const CHECK_MS = 2000;
    const READ_LINK = /^\/s\/[^/]+(\/(curves|choice))?\/?$/;
    let last = -Infinity, pending = null, gone = false, inFlight = false;

    const onReadLink = () => READ_LINK.test(window.location.pathname);

    function showGone() {
        gone = true;
        const note = document.getElementById("shared-gone");
        if (note) note.hidden = false;
        document.body.classList.add("link-gone");
    }

    async function check() {
        pending = null;
        if (gone || inFlight || !onReadLink()) return;
        inFlight = true;
        last = performance.now();
        try {
            const resp = await fetch(window.location.pathname, {method: "HEAD", cache: "no-store",
                credentials: "same-origin"});
            if (resp.status === 404) showGone();
        } catch (e) {
            // Offline or the server down: not a deleted link; the next interaction asks again.
        } finally {
            inFlight = false;
        }
    }

    function soon() {
        if (gone || pending !== null || !onReadLink()) return;
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

    window.costdashSharedLink = {check, gone: () => gone};
})();
