/*
 * Export links on the Explore page (`a[data-export]`): their targets depend on the data set and
 * the operating conditions in the address bar, which the live slider path rewrites without Dash
 * seeing it, so each link reads the address at the moment it is followed.
 */
(function () {
    "use strict";
    const CONDITIONS = ["p_pos", "cost_fn", "cost_fp"];

    function exportHref(kind, search) {
        const query = new URLSearchParams(search);
        const id = query.get("data");
        if (!id) return null;
        let href = "/api/v1/datasets/" + encodeURIComponent(id) + "/" + kind;
        if (kind === "report.html") {
            const conditions = new URLSearchParams();
            for (const key of CONDITIONS) {
                if (query.get(key)) conditions.set(key, query.get(key));
            }
            const text = conditions.toString();
            if (text) href += "?" + text;
        }
        return href;
    }

    function follow(ev) {
        const link = ev.target.closest && ev.target.closest("a[data-export]");
        if (!link) return;
        const href = exportHref(link.dataset.export, window.location.search);
        if (href === null) {
            ev.preventDefault();
            return;
        }
        link.href = href;
    }

    document.addEventListener("click", follow, true);
    document.addEventListener("auxclick", follow, true);
    window.costdashExports = {exportHref};
})();
