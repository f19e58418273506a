/*
 * viewstate.js -- the browser's one view object and its one writer (window.costdashView).
 *
 * The view (costdash/view.py) is every control a user sets. Its schema -- field names, kinds,
 * bounds, defaults, labels -- comes from the server as an inert JSON script element
 * (#costdash-view-schema), so this file holds no list of fields of its own. Pages hand it their
 * controls' committed values (`record`, `set`); it checks each value against the schema with the
 * same words as the server's parser, keeps the valid ones, and writes from that one object:
 *   - the address bar (history.replaceState, at most every 150 ms: a slider drag must not flood
 *     the history),
 *   - the nav links (each carries the whole view, so another page opens with it and brings it
 *     back),
 *   - the export links (report, CSVs: the view in their query, so an export is the screen).
 * An invalid value never reaches any of them: the last valid value stays. "Invalid" is of the
 * whole view: each value on its own, and the rules across fields (costdash.view.VIEW_RULES, in
 * the schema as each field's `below`: C(+|+) = 50 is a fine number but not beside C(−|+) = 40).
 * The boxes keep what was typed, with its message; the view keeps the last valid whole.
 *
 * It also makes number boxes commit predictably: Enter and leaving the box commit the typed
 * value at once (the typing debounce applies only while typing), so a button clicked right
 * after typing reads the typed value.
 */
(function () {
    "use strict";

    let schemaCache = null;

    function schema() {
        if (schemaCache) return schemaCache;
        const el = document.getElementById("costdash-view-schema");
        schemaCache = el ? JSON.parse(el.textContent) : [];
        return schemaCache;
    }

    function fieldOf(name) {
        return schema().find((f) => f.name === name) || null;
    }

    const isNum = (v) => typeof v === "number" && Number.isFinite(v);

    function inBounds(f, x) {
        if (!isNum(x)) return false;
        if (f.low !== null && (f.low_open ? x <= f.low : x < f.low)) return false;
        if (f.high !== null && (f.high_open ? x >= f.high : x > f.high)) return false;
        return true;
    }

    /** "<requirement>; got '<value>'." -- the server's words (costdash.view.ViewField). */
    function problem(f, raw) {
        const one = (x) => (x && typeof x === "object" && !Array.isArray(x)
            ? one(x.model) + ":" + one(x.threshold) : String(x));
        let shown = Array.isArray(raw) ? raw.map(one).join(",") : one(raw);
        if (shown.length > 40) shown = shown.slice(0, 40) + "…";
        return f.requirement + "; got '" + shown + "'.";
    }

    function toNumber(raw) {
        if (typeof raw === "number") return raw;
        if (typeof raw === "string" && raw.trim() !== "") return Number(raw.trim());
        return NaN;
    }

    const blank = (raw) => raw === null || raw === undefined ||
        (typeof raw === "string" && raw.trim() === "") || (Array.isArray(raw) && raw.length === 0);

    /**
     * The typed value of `raw` for field `f`: {value} (null = unset) or {error}.
     * Mirrors ViewField.parse for the kinds a control can produce.
     */
    function check(f, raw) {
        if (blank(raw)) return {value: null};
        if (f.kind === "float" || f.kind === "int") {
            const x = toNumber(raw);
            if (!inBounds(f, x) || (f.kind === "int" && !Number.isInteger(x))) {
                return {error: problem(f, raw)};
            }
            return {value: x};
        }
        if (f.kind === "range") {
            const parts = Array.isArray(raw) ? raw : String(raw).split(",");
            if (parts.length !== 2 || parts.some(blank)) return {value: null};
            const lo = toNumber(parts[0]), hi = toNumber(parts[1]);
            if (!inBounds(f, lo) || !inBounds(f, hi)) return {error: problem(f, parts)};
            if (lo > hi) {
                return {error: f.label + ": the low end (" + lo + ") is above the high end (" +
                    hi + ")."};
            }
            return {value: [lo, hi]};
        }
        if (f.kind === "flag") {
            const on = Array.isArray(raw) ? raw.length > 0 : Boolean(raw);
            return {value: on ? true : null};
        }
        if (f.kind === "names") {
            const names = (Array.isArray(raw) ? raw : String(raw).split(","))
                .map((s) => String(s).trim()).filter((s) => s);
            return {value: names.length ? Array.from(new Set(names)) : null};
        }
        if (f.kind === "pins") return checkPins(f, raw);
        const text = f.kind === "text" ? String(raw) : String(raw).trim();
        return {value: text.slice(0, f.max_length)};
    }

    /** Pins (ViewField._pins): "gbm:0.5,logreg:0.42", or a list of such items, {model,
     * threshold} objects or [name, threshold] pairs -> [{model, threshold}], duplicates dropped. */
    function checkPins(f, raw) {
        let items;
        if (typeof raw === "string") items = raw.split(",");
        else if (Array.isArray(raw)) {
            items = [];
            for (const item of raw) {
                if (typeof item === "string") items.push(...item.split(","));
                else items.push(item);
            }
        } else items = [raw];
        const pins = [], seen = new Set();
        for (const item of items) {
            let name, number;
            if (typeof item === "string") {
                if (item.trim() === "") continue;
                const k = item.lastIndexOf(":");
                if (k < 0) return {error: problem(f, raw)};
                name = item.slice(0, k);
                number = item.slice(k + 1);
            } else if (Array.isArray(item) && item.length === 2) {
                [name, number] = item;
            } else if (item && typeof item === "object") {
                name = item.model;
                number = item.threshold;
            } else {
                return {error: problem(f, raw)};
            }
            if (typeof name !== "string" || !(typeof number === "number" ||
                                                typeof number === "string")) {
                return {error: problem(f, raw)};
            }
            name = name.trim();
            const t = toNumber(number);
            if (!name || name.indexOf(",") >= 0 || name.length > f.max_length ||
                !isNum(t)) {
                return {error: problem(f, raw)};
            }
            const key = JSON.stringify([name, t]);
            if (seen.has(key)) continue;
            seen.add(key);
            pins.push({model: name, threshold: t});
        }
        if (f.max_items !== null && pins.length > f.max_items) return {error: problem(f, raw)};
        return {value: pins.length ? pins : null};
    }

    // --- rules across fields (costdash.view.ViewRule) ----------------------------------------

    function rules() {
        const out = [];
        for (const f of schema()) out.push(...(f.below || []));
        return out;
    }

    /** A field's value in a view object: absent is its default. */
    function valueIn(view, name) {
        const v = view[name];
        return v === null || v === undefined ? fieldOf(name).default : v;
    }

    /** The message when `view` breaks `rule` (ViewRule.problem, the same words), else null. */
    function ruleProblem(rule, view) {
        const x = valueIn(view, rule.low), y = valueIn(view, rule.high);
        if (x === null || x === undefined || y === null || y === undefined) return null;
        const low = fieldOf(rule.low), high = fieldOf(rule.high);
        if (high.kind === "range") {
            if (y[0] - x > 0) return null;
            return high.label + " must lie above " + low.label + " (" + rule.reason + "); got " +
                high.label + " = " + numText(y[0]) + " to " + numText(y[1]) + ", " + low.label +
                " = " + numText(x) + ".";
        }
        if (y - x > 0) return null;
        return low.label + " must be below " + high.label + " (" + rule.reason + "); got " +
            low.label + " = " + numText(x) + ", " + high.label + " = " + numText(y) + ".";
    }

    /**
     * The whole view's problems: {name: message} for every raw value of `values` that is not
     * valid on its own, then for the rules across fields that the valid ones break, judged
     * with the fields `values` does not hold taken from `base` (default: none, i.e. their
     * defaults). A broken rule's message goes to each of its fields that `values` holds.
     */
    function validate(values, base) {
        const found = {};
        const view = Object.assign({}, base || {});
        for (const [name, raw] of Object.entries(values)) {
            const f = fieldOf(name);
            if (!f) continue;
            const r = check(f, raw);
            if (r.error) found[name] = r.error;
            else if (r.value === null) delete view[name];
            else view[name] = r.value;
        }
        const alone = Object.assign({}, found);     // the values invalid on their own
        for (const rule of rules()) {
            if (alone[rule.low] || alone[rule.high]) continue;
            const message = ruleProblem(rule, view);
            if (message === null) continue;
            for (const name of [rule.drops, rule.low, rule.high]) {
                if (name in values && !found[name]) found[name] = message;
            }
        }
        return found;
    }

    function numText(x) {
        return String(x);   // JS's shortest round-trip form, like Python's repr
    }

    function format(f, v) {
        if (f.kind === "names") return v.join(",");
        if (f.kind === "pins") return v.map((p) => p.model + ":" + numText(p.threshold)).join(",");
        if (f.kind === "range") return numText(v[0]) + "," + numText(v[1]);
        if (f.kind === "flag") return v ? "1" : "0";
        if (f.kind === "float" || f.kind === "int") return numText(v);
        return String(v);
    }

    const sameValue = (a, b) => JSON.stringify(a) === JSON.stringify(b);

    /** "?..." for a view object, in schema order; unset fields and defaults left out (the
     * `always` fields -- conditions, volume, unit -- travel even at their defaults). */
    function search(view, omit) {
        const q = new URLSearchParams();
        for (const f of schema()) {
            const v = view[f.name];
            if (v === null || v === undefined) continue;
            if (omit && omit.indexOf(f.name) >= 0) continue;
            if (!f.always && sameValue(v, f.default)) continue;
            q.set(f.name, format(f, v));
        }
        const text = q.toString().replace(/%2C/g, ",").replace(/%3A/g, ":");
        return text ? "?" + text : "";
    }

    // --- the one view object ----------------------------------------------------------------------

    let current = {};
    let loadedPath = null;
    let recorded = {};      // fields recorded on this page since it was loaded
    let entered = {};       // each field's value as this page's controls hold it (valid alone)
    let loadCount = 0;      // pages loaded: a page's scripts tell a new page view by it

    const path = () => window.location.pathname.replace(/\/$/, "") || "/";
    // A read link's pages (/s/<token>, /s/<token>/curves, ...): the viewer holds the link, never
    // a data set id, and every link stays inside it.
    const sharedRoot = () => {
        const m = /^\/s\/([^/]+)/.exec(path());
        return m ? "/s/" + m[1] : null;
    };
    const isShared = () => sharedRoot() !== null;
    /** The top nav's pages a read link grants and their sub-page (dashboard/shell.py's
     * SHARED_NAV); the others stay at the link's Explore page, hidden by the server. */
    const SHARED_NAV = {explore: "", curves: "/curves", choice: "/choice",
                        production: "/production", segments: "/segments"};

    /** The page's view as the server parsed it (the routing callback's `view-state`). */
    function load(state) {
        if (!state) return window.dash_clientside.no_update;
        const samePage = loadedPath === state.path;
        current = Object.assign({}, state.view || {}, samePage ? recorded : {});
        if (!samePage) {
            recorded = {};
            entered = {};
        }
        loadedPath = state.path;
        loadCount += 1;
        scheduleWrite();
        return window.dash_clientside.no_update;
    }

    /**
     * Set view fields from controls: {name: raw value}. The view takes them when the whole view
     * is valid with them; a value invalid on its own, or breaking a rule across fields with
     * what the page's other controls hold, is returned as {name: message} and leaves its field
     * at the last valid value (so the address bar, the nav and the exports never see it).
     * Unknown names are ignored.
     */
    function set(values) {
        const found = {};
        for (const [name, raw] of Object.entries(values)) {
            const f = fieldOf(name);
            // On a read-only link the analysis, not a data set id, is what the viewer holds.
            if (!f || (name === "data" && isShared())) continue;
            const r = check(f, raw);
            if (r.error) {
                found[name] = r.error;
                delete entered[name];       // the control holds no value: the view's stands
            } else {
                entered[name] = r.value;
            }
        }
        // What the controls hold over the last valid view; a field in a broken rule that the
        // controls changed goes back to its last valid value, until none is broken (the last
        // valid view itself breaks none, so this ends).
        const next = Object.assign({}, current);
        for (const [name, value] of Object.entries(entered)) {
            if (value === null) delete next[name];
            else next[name] = value;
        }
        const changed = (name) => !sameValue(next[name] === undefined ? null : next[name],
            current[name] === undefined ? null : current[name]);
        for (let broken = true; broken;) {
            broken = false;
            for (const rule of rules()) {
                const message = ruleProblem(rule, next);
                if (message === null) continue;
                for (const name of [rule.drops, rule.low, rule.high]) {
                    if (!changed(name)) continue;
                    broken = true;
                    if (!found[name]) found[name] = message;
                    if (current[name] === undefined) delete next[name];
                    else next[name] = current[name];
                }
                if (broken) break;
            }
        }
        for (const name of Object.keys(entered)) {
            if (!changed(name)) continue;
            recorded[name] = next[name] === undefined ? null : next[name];
        }
        current = next;
        scheduleWrite();
        return found;
    }

    /** `set` for a page's clientside callback: values in the order of `names`. */
    function record(names, values) {
        const v = {};
        names.forEach((n, i) => { v[n] = values[i]; });
        return set(v);
    }

    const get = () => Object.assign({}, current);

    // --- writing: address bar, nav links, export links ------------------------------------------

    let timer = null;
    let dirty = false;

    function scheduleWrite() {
        dirty = true;
        if (timer !== null) return;
        flush();
        timer = setTimeout(() => {
            timer = null;
            if (dirty) flush();
        }, 150);
    }

    function flush() {
        dirty = false;
        const own = search(current, isShared() ? ["data"] : []);
        const target = window.location.pathname + own + window.location.hash;
        if (target !== window.location.pathname + window.location.search + window.location.hash) {
            window.history.replaceState(window.history.state, "", target);
        }
        writeNavLinks();
        writeExportLinks();
    }

    function writeNavLinks() {
        const root = sharedRoot();
        const q = search(current, root === null ? [] : ["data"]);
        document.querySelectorAll("a.nav-link[id^='nav-']").forEach((a) => {
            const slug = a.id.slice(4);
            let href = "/" + slug + q;
            if (root !== null) {
                href = Object.prototype.hasOwnProperty.call(SHARED_NAV, slug)
                    ? root + SHARED_NAV[slug] + q : root;
            }
            if (a.getAttribute("href") !== href && window.dash_clientside.set_props) {
                window.dash_clientside.set_props(a.id, {href: href});
            }
        });
    }

    /** The export link of `kind` (report.html, hull.csv, ...) for the view; null without data. */
    function exportHref(kind, view) {
        view = view || current;
        if (!view.data || isShared()) return null;
        // A kind may carry its own parameter (report.html?standalone=1): after the view's.
        const [path, extra] = kind.split("?");
        const query = search(view, ["data"]);
        return "/api/v1/datasets/" + encodeURIComponent(view.data) + "/" + path +
            (extra ? (query ? query + "&" : "?") + extra : query);
    }

    function writeExportLinks() {
        document.querySelectorAll("a[data-export]").forEach((a) => {
            const href = exportHref(a.dataset.export);
            if (href === null) {
                a.setAttribute("aria-disabled", "true");
                a.title = "Open a data set first: the downloads are of the data on screen.";
                a.removeAttribute("href");
            } else {
                a.removeAttribute("aria-disabled");
                a.title = "";
                a.setAttribute("href", href);
            }
        });
    }

    // Export links are written on every view change; a click before any write (or with no data)
    // is stopped here.
    document.addEventListener("click", (ev) => {
        const link = ev.target.closest && ev.target.closest("a[data-export]");
        if (!link) return;
        const href = exportHref(link.dataset.export);
        if (href === null) {
            ev.preventDefault();
            return;
        }
        link.setAttribute("href", href);
    }, true);

    // --- number boxes commit on Enter and on leaving them ------------------------------------------
    //
    // dcc.Input's debounce delays the value until typing pauses; Enter and blur should not wait
    // (a button clicked right after typing must see the typed value). set_props writes the value
    // into Dash's store synchronously, before the click's callback reads its States; the
    // debounce's own later commit of the same value changes nothing.

    function commit(el) {
        if (!committable(el) || !window.dash_clientside || !window.dash_clientside.set_props) {
            return;
        }
        if (el.type === "number") {
            const text = el.value;
            let value = null;
            if (text !== "") {
                value = Number(text);
                if (!Number.isFinite(value)) return;
            } else if (el.validity && el.validity.badInput) {
                return;     // not a number yet: leave it to the typing path
            }
            window.dash_clientside.set_props(el.id, {value: value});
        } else {
            window.dash_clientside.set_props(el.id, {value: el.value});
        }
    }

    // Only dcc.Input boxes: other inputs with an id (an AG Grid cell editor, the file input)
    // are not Dash components, and set_props on them throws.
    const committable = (el) => Boolean(el && el.tagName === "INPUT" && el.id &&
        el.classList.contains("dash-input-element") && (el.type === "number" || el.type === "text"));

    const afterPaint = (fn) => requestAnimationFrame(() => requestAnimationFrame(
        () => setTimeout(fn, 0)));

    document.addEventListener("keydown", (ev) => {
        if (ev.key !== "Enter" || !committable(ev.target)) return;
        const el = ev.target;
        clearTimeout(pauseTimers.get(el));
        // A page that drew the typed value itself (explore.js) lets that frame paint first. By
        // then the next value may be being typed (keys at full speed): the box no longer holds
        // the value drawn, and committing its text would commit half a number (drawn, and sent
        // to the address bar, before its Enter). That newer value commits itself (its Enter,
        // leaving the box, or the typing debounce), so a stale commit is dropped.
        if (ev.costdashDrawn) {
            const drawn = el.value;
            afterPaint(() => {
                if (el.value === drawn) commit(el);
            });
        } else {
            commit(el);
        }
    }, true);
    document.addEventListener("blur", (ev) => {
        if (committable(ev.target)) {
            clearTimeout(pauseTimers.get(ev.target));
            commit(ev.target);
        }
    }, true);

    // The typing pause (dashboard/page_kit.py number_box: dcc.Input's own debounce is off,
    // its class says the pause): one timer per box, restarted by every key, so a value is
    // committed only once typing has paused, never half typed while the keys still come.
    const pauseTimers = new WeakMap();
    document.addEventListener("input", (ev) => {
        const el = ev.target;
        if (!committable(el)) return;
        const box = el.closest(".dash-input-container");
        const found = box && /(?:^|\s)commit-after-(\d+)(?:\s|$)/.exec(box.className);
        if (!found) return;
        clearTimeout(pauseTimers.get(el));
        pauseTimers.set(el, setTimeout(() => {
            pauseTimers.delete(el);
            if (el.isConnected) commit(el);
        }, Number(found[1])));
    }, true);
    // A pointer press on a button commits the box that has the focus before the click lands.
    document.addEventListener("pointerdown", (ev) => {
        const button = ev.target.closest && ev.target.closest("button, a, [role=button]");
        if (button && committable(document.activeElement)) commit(document.activeElement);
    }, true);

    window.costdashView = {schema, check: (name, raw) => check(fieldOf(name), raw), validate,
        search, load, set, record, get, exportHref, commit,
        requirement: (name) => fieldOf(name).requirement, loads: () => loadCount};
    const dc = (window.dash_clientside = window.dash_clientside || {});
    dc.costdash = Object.assign(dc.costdash || {}, {loadView: load});
})();
