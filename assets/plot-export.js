/*
 * PNG and SVG downloads of every plot. Plotly's camera button downloads one format (a PNG here,
 * named by the Graph's `toImageButtonOptions`, see dashboard/figures/common.py `graph_config`);
 * this adds a mode-bar button that downloads the same plot as SVG, under the same name.
 *
 * A custom mode-bar button needs a `click` function, which a dcc.Graph `config` (JSON from
 * Python) cannot carry, so the button becomes part of plotly's default config instead
 * (`Plotly.setPlotConfig`). That has to happen before the first plot is drawn, and dcc loads
 * plotly.js on demand, after the assets: so it happens the moment plotly.js defines
 * `window.Plotly`.
 */
(function () {
    "use strict";

    function downloadSvg(gd) {
        const options = gd._context.toImageButtonOptions || {};
        const request = {format: "svg"};
        for (const key of ["filename", "width", "height"]) {
            if (key in options) request[key] = options[key];
        }
        return window.Plotly.downloadImage(gd, request);
    }

    function svgButton(Plotly) {
        return {
            name: "costdash-download-svg",
            title: "Download plot as an SVG",
            icon: Plotly.Icons.disk,
            click: downloadSvg,
        };
    }

    function install(Plotly) {
        Plotly.setPlotConfig({modeBarButtonsToAdd: [svgButton(Plotly)]});
    }

    if (window.Plotly) {
        install(window.Plotly);
    } else {
        let plotly;
        Object.defineProperty(window, "Plotly", {
            configurable: true,
            enumerable: true,
            get() { return plotly; },
            set(value) {
                plotly = value;
                // Once: from then on window.Plotly is a plain property again.
                Object.defineProperty(window, "Plotly", {
                    value, writable: true, configurable: true, enumerable: true,
                });
                install(value);
            },
        });
    }
})();
