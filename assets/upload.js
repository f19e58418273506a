/*
 * upload.js -- file upload for the Explore page without base64 through Dash callbacks.
 *
 * Dash's html components have no <input>, so a plain <input type=file> is added inside the element
 * with id "upload" (it also accepts drag and drop). The chosen file is POSTed as multipart/form-data
 * to /api/v1/datasets, which streams it to disk, reads it with costdash.load_predictions and
 * replies {id, name, n, classifiers} or {error}. Success sets the `dataset-ref` store (the page then
 * loads the cached analysis); a failure shows the loader's message in `upload-error` and leaves the
 * data set that was open untouched. A multiclass file (its reply lists `target_classes`) shows a
 * target-class selector instead; once a file is read, a segment column may be chosen (a text
 * column of a CSV/TSV file is offered when detected). Either re-sends the file with the option.
 */
(function () {
    "use strict";

    function dashConfig() {
        const el = document.getElementById("_dash-config");
        try {
            return el ? JSON.parse(el.textContent) : {};
        } catch (e) {
            return {};
        }
    }

    function apiUrl() {
        const prefix = dashConfig().requests_pathname_prefix || "/";
        return prefix.replace(/\/?$/, "/") + "api/v1/datasets";
    }

    function setProps(id, props) {
        if (window.dash_clientside && window.dash_clientside.set_props) {
            window.dash_clientside.set_props(id, props);
        }
    }

    function size(n) {
        const units = [["GB", 1024 ** 3], ["MB", 1024 ** 2], ["kB", 1024]];
        for (const [u, s] of units) if (n >= s) return (n / s).toFixed(1) + " " + u;
        return n + " bytes";
    }

    function option(id) {
        const el = document.getElementById(id);
        const box = el && el.querySelector ? el.querySelector("input[type=checkbox]") : null;
        if (box) return box.checked ? "true" : "";
        return el && el.value ? el.value.trim() : "";
    }

    // The loader's messages name its command-line options; on this page the same choices are
    // controls under "Reading options", so a message names the control to use.
    const CONTROLS = [
        [/--positive LABEL/g, "the “Positive label” box under Reading options"],
        [/--positive/g, "“Positive label”"],
        [/use --drop-missing/g, "tick “Drop rows with missing scores” under Reading options"],
        [/--drop-missing/g, "“Drop rows with missing scores” (Reading options)"],
        [/with --label-column/g, "in the “Label column” box under Reading options"],
        [/--label-column/g, "“Label column” (Reading options)"],
        [/--layout/g, "“Layout” (Reading options)"],
        [/--target-class CLASS/g, "the target-class selector"],
        [/--segment-column/g, "the segment column"],
    ];

    function inBrowserTerms(message) {
        return CONTROLS.reduce((text, [flag, control]) => text.replace(flag, control), message);
    }

    // --- issue 28: a target class for a multiclass file, a segment column -----------------
    // Both are options of the upload (properties of the data set, part of its id): choosing
    // one uploads the same file again with it. The blocks are made here, like the file input.

    const LABELS = ["y_true", "label", "labels", "target", "class", "y", "actual", "truth",
        "outcome", "fold", "folds", "cv_fold", "model", "classifier", "id", "row_id", "index"];

    function block(zone, id) {
        let el = document.getElementById(id);
        if (!el) {
            el = document.createElement("div");
            el.id = id;
            el.className = "notice";
            el.setAttribute("role", "status");
            el.style.margin = "0.4rem 0";
            // Below the zone, the target class first (it decides what the file is).
            const before = id === "upload-segment" ? document.getElementById("upload-target") : null;
            const after = before || zone;
            after.parentNode.insertBefore(el, after.nextSibling);
        }
        el.replaceChildren();
        el.hidden = false;
        return el;
    }

    function hide(id) {
        const el = document.getElementById(id);
        if (el) el.hidden = true;
    }

    function showTargetClasses(file, zone, classes, chosen, opts) {
        const el = block(zone, "upload-target");
        const label = document.createElement("label");
        label.htmlFor = "upload-target-class";
        label.textContent = chosen
            ? "Analysed: one class against the rest. Target class "
            : file.name + " has " + classes.length + " classes and a score column per class "
                + "(<classifier>:<class>): analyse which class against the rest? ";
        const select = document.createElement("select");
        select.id = "upload-target-class";
        if (!chosen) select.appendChild(new Option("choose a class…", ""));
        for (const c of classes) select.appendChild(new Option(c, c, false, c === chosen));
        select.addEventListener("change", () => {
            if (select.value) upload(file, zone, {...opts, target_class: select.value});
        });
        el.append(label, select);
    }

    async function segmentCandidates(file) {
        // Text files only (the first 256 kB): columns whose values are not numbers, with a few
        // distinct values, that are not the label, fold, model or id column.
        if (!/\.(csv|tsv|txt)$/i.test(file.name)) return [];
        let text;
        try {
            text = await file.slice(0, 256 * 1024).text();
        } catch (e) {
            return [];
        }
        const lines = text.split(/\r?\n/).filter((l) => l.length);
        if (lines.length < 3) return [];
        const sep = [",", "\t", ";", "|"].reduce((best, s) =>
            lines[0].split(s).length > lines[0].split(best).length ? s : best, ",");
        const unquote = (v) => v.trim().replace(/^"(.*)"$/, "$1");
        const header = lines[0].split(sep).map(unquote);
        const rows = lines.slice(1, lines.length - 1).map((l) => l.split(sep));
        return header.filter((name, k) => {
            if (LABELS.includes(name.toLowerCase()) || name.includes(":")) return false;
            // Cells are unquoted as they are read, and a column stops at its 51st distinct
            // value (too many for segments, whatever they are): a score column costs a few
            // dozen cells, not all of them, while the page draws the data set (issue 23).
            const values = new Set();
            for (const r of rows) {
                if (r[k] === undefined) continue;
                const v = unquote(r[k]);
                if (v === "") continue;
                values.add(v);
                if (values.size > 50) return false;
            }
            const numeric = [...values].every((v) => Number.isFinite(Number(v)));
            return !numeric && values.size >= 2;
        });
    }

    async function showSegments(file, zone, payload, opts) {
        const el = block(zone, "upload-segment");
        if (payload.segment_column) {
            el.append("Segments: column “" + payload.segment_column + "” — open the Segments "
                + "page in the top bar for a threshold per segment.");
            return;
        }
        const found = await segmentCandidates(file);
        let field;
        if (found.length) {
            el.append((found.length === 1 ? "Column “" + found[0] + "” holds" : "Columns "
                + found.map((c) => "“" + c + "”").join(", ") + " hold")
                + " text: read one as segments (a threshold per segment)? ");
            field = document.createElement("select");
            for (const c of found) field.appendChild(new Option(c, c));
        } else {
            el.append("Segments (optional): a column of each row's region, product or site ");
            field = document.createElement("input");
            field.type = "text";
            field.placeholder = "column name";
            field.size = 12;
        }
        field.id = "upload-segment-column";
        field.setAttribute("aria-label", "Segment column");
        const read = document.createElement("button");
        read.id = "upload-segment-read";
        read.type = "button";
        read.textContent = "Read segments";
        read.style.marginLeft = "0.4rem";
        read.addEventListener("click", () => {
            if (field.value.trim()) upload(file, zone, {...opts, segment_column: field.value.trim()});
        });
        el.append(field, read);
    }

    async function upload(file, zone, extra) {
        // A new upload starts: the last one's error no longer describes anything on screen.
        setProps("upload-error", {children: ""});
        const max = Number(zone.dataset.maxBytes || 0);
        if (max && file.size > max) {
            setProps("upload-error", {children: file.name + " is " + size(file.size) +
                    ", over the " + size(max) + " upload limit."});
            return;
        }
        const body = new FormData();
        body.append("file", file, file.name);
        const opts = {positive: option("upload-positive"), label_column: option("upload-label-column"),
            layout: option("upload-layout"), drop_missing: option("upload-drop-missing")};
        Object.assign(opts, extra || {});
        for (const [k, v] of Object.entries(opts)) if (v && v !== "auto") body.append(k, v);
        zone.classList.add("busy");
        setProps("upload-status", {children: "Reading " + file.name + " (" + size(file.size) + ")…"});
        let resp, payload = null;
        try {
            resp = await fetch(apiUrl(), {method: "POST", body: body});
            try {
                payload = await resp.json();
            } catch (e) {
                payload = null;
            }
        } catch (e) {
            resp = null;
        } finally {
            zone.classList.remove("busy");
            setProps("upload-status", {children: ""});
        }
        if (!resp || !resp.ok || !payload || !payload.id) {
            if (payload && payload.target_classes && payload.target_classes.length) {
                // A multiclass file: the selector asks for the class instead of an error.
                hide("upload-segment");
                showTargetClasses(file, zone, payload.target_classes, null, opts);
                return;
            }
            const msg = payload && payload.error ? inBrowserTerms(payload.error)
                : "Upload of " + file.name + " failed" + (resp ? " (HTTP " + resp.status + ")." : ".");
            setProps("upload-error", {children: msg});
            return;
        }
        setProps("upload-error", {children: ""});
        const target = document.getElementById("upload-target-class");
        if (payload.target_class && target) {
            showTargetClasses(file, zone, [...target.options].map((o) => o.value).filter(Boolean),
                payload.target_class, opts);
        } else if (!payload.target_class) {
            hide("upload-target");
        }
        // The data set first: its view is asked for before the segment offer reads the file.
        setProps("dataset-ref", {data: {id: payload.id, name: payload.name, models: null}});
        showSegments(file, zone, payload, opts);
    }

    window.costdashUpload = {inBrowserTerms, segmentCandidates};

    const wired = new WeakSet();

    function install() {
        const zone = document.getElementById("upload");
        if (!zone) return;
        if (!zone.querySelector("input[type=file]")) {
            const input = document.createElement("input");
            input.type = "file";
            input.id = "upload-file";
            input.accept = ".csv,.tsv,.txt,.gz,.parquet,.json,.jsonl,.ndjson";
            input.setAttribute("aria-label", "Choose a predictions file");
            input.addEventListener("change", () => {
                if (input.files && input.files.length) {
                    const f = input.files[0];
                    input.value = "";   // choosing the same file again still uploads it
                    upload(f, zone);
                }
            });
            zone.appendChild(input);
        }
        if (wired.has(zone)) return;
        wired.add(zone);
        zone.addEventListener("dragover", (ev) => {
            ev.preventDefault();
            zone.classList.add("dragging");
        });
        zone.addEventListener("dragleave", () => zone.classList.remove("dragging"));
        zone.addEventListener("drop", (ev) => {
            ev.preventDefault();
            zone.classList.remove("dragging");
            const files = ev.dataTransfer && ev.dataTransfer.files;
            if (files && files.length) upload(files[0], zone);
        });
    }

    new MutationObserver(install).observe(document.documentElement, {childList: true, subtree: true});
    document.addEventListener("DOMContentLoaded", install);
})();
