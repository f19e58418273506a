/*
 * upload.js -- file upload for the Explore page without base64 through Dash callbacks.
 *
 * Dash's html components have no <input>, so a plain <input type=file> is added inside the element
 * with id "upload" (it also accepts drag and drop). The chosen file is POSTed as multipart/form-data
 * to /api/v1/datasets, which streams it to disk, reads it with costdash.load_predictions and
 * replies {id, name, n, classifiers} or {error}. Success sets the `dataset-ref` store (the page then
 * loads the cached analysis); a failure shows the loader's message in `upload-error` and leaves the
 * data set that was open untouched.
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
    ];

    function inBrowserTerms(message) {
        return CONTROLS.reduce((text, [flag, control]) => text.replace(flag, control), message);
    }

    async function upload(file, zone) {
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
            const msg = payload && payload.error ? inBrowserTerms(payload.error)
                : "Upload of " + file.name + " failed" + (resp ? " (HTTP " + resp.status + ")." : ".");
            setProps("upload-error", {children: msg});
            return;
        }
        setProps("upload-error", {children: ""});
        setProps("dataset-ref", {data: {id: payload.id, name: payload.name, models: null}});
    }

    window.costdashUpload = {inBrowserTerms};

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
