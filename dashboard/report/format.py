"""The report's text and HTML pieces: numbers written as the Explore page writes them
(``assets/explore-base.js``: fmtNum, friendly, percent), so the report and the screen show the
same text for the same view; escaped HTML tables and definition lists; a figure as an inline
``<div>`` and the fixed size of every figure (the report is also printed).

Used by :mod:`dashboard.report` and its section modules (:mod:`dashboard.report.readouts`,
:mod:`dashboard.report.curves`, :mod:`dashboard.report.choice`); ``readout``, ``friendly`` and
``percent`` are re-exported by :mod:`dashboard.report`.
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterable, Sequence
from html import escape
from typing import Any

import plotly.graph_objects as go
import plotly.io as pio
from _plotly_utils.utils import is_homogeneous_array, is_skipped_key, to_typed_array_spec

from costdash.analysis import Analysis, threshold_text
from costdash.hull import ALL_NEGATIVE, ALL_POSITIVE

REPORT_MAX_POINTS = 400
"""Each ROC curve is thinned to at most this many points in the report's figures."""

CHOSEN_COLOR = "#d62728"
FIGURE_SIZE = (530, 560)
"""Width and height in pixels of a figure of the report on a wide screen (two side by side).
Only the height is fixed: a figure is as wide as the page lets it be (``autosize``, width
100 %, redrawn when the window is resized), so a phone shows it whole (:func:`sized`)."""


def sized(fig: go.Figure | dict, height: int | None = FIGURE_SIZE[1]) -> go.Figure | dict:
    """``fig`` as wide as its box on the page and ``height`` pixels tall (None: the height its
    builder gave it): a ``go.Figure``, or a plain figure dict (:func:`plain_figure`)."""
    update = {"autosize": True, **({} if height is None else {"height": height})}
    if isinstance(fig, dict):
        fig["layout"] = {**fig["layout"], **update}
        return fig
    fig.update_layout(**update)
    return fig


_TEMPLATES: dict[str, dict] = {}


def plain_figure(spec: dict) -> dict:
    """A figure dict of plain values (a builder's ``..._dict``) as the report writes it:
    its template, when named, spelled out as validation would (plotly.js knows no template
    names); the figure is the one ``go.Figure(spec)`` would give, without validating each of
    its properties (issue 23)."""
    layout = spec["layout"]
    name = layout.get("template")
    if isinstance(name, str):
        if name not in _TEMPLATES:
            _TEMPLATES[name] = pio.templates[name].to_plotly_json()
        layout = {**layout, "template": _TEMPLATES[name]}
    return {"data": spec["data"], "layout": layout}


def _e(value: object) -> str:
    return escape(str(value), quote=True)


def _num(value: float | None, digits: int = 4) -> str:
    if value is None:
        return "–"
    value = float(value)
    if math.isnan(value):
        return "–"
    if math.isinf(value):
        return "∞" if value > 0 else "−∞"
    return f"{value:.{digits}g}"


def _threshold(value: float | None) -> str:
    """A threshold that never reads as another one (``0.499996`` is not ``0.5``)."""
    return threshold_text(value)


def readable_threshold_text(analysis: Analysis, classifier: str, value: float | None) -> str:
    """The threshold of one of ``classifier``'s vertices as the Explore page shows it: the
    shortest decimal that flags the same cases (:meth:`costdash.analysis.ClassifierSummary.
    readable_threshold`); the exact text when the classifier is not the analysis's."""
    try:
        return analysis.classifier(classifier).readable_threshold(value)
    except KeyError:
        return _threshold(value)


def _threshold_html(analysis: Analysis, classifier: str, value: float | None,
                    css_class: str = "threshold") -> str:
    """:func:`readable_threshold_text` as HTML: on one line, the exact value on hover."""
    shown = readable_threshold_text(analysis, classifier, value)
    return f'<span{_exact_title(value)} class="{css_class}">{_e(shown)}</span>'


def _exact_title(value: float | None) -> str:
    """`` title="exactly <the threshold>"`` for an element showing a readable threshold."""
    exact = _threshold(value)
    return f' title="exactly {_e(exact)}"' if exact != "none" else ""


def readout(value: float | None, sig: int = 4) -> str:
    """A number as the Explore page's readouts show it: at least ``sig`` significant digits,
    fixed point from 1e-4 to 1e15, else an exponent (``0.09091``, ``10.00``, ``1.000e-6``)."""
    if value is None or math.isnan(value):
        return "–"
    if math.isinf(value):
        return "inf" if value > 0 else "-inf"
    if value == 0:
        return f"{0:.{sig - 1}f}"
    magnitude = abs(value)
    if 1e-4 <= magnitude < 1e15:
        decimals = min(max(sig - 1 - math.floor(math.log10(magnitude)), 0), 100)
        return f"{value:.{decimals}f}"
    # JavaScript's toExponential: no "+0" padding of the exponent ("1.000e-6", "1.000e+20").
    return re.sub(r"e([+-])0*(\d)", r"e\1\2", f"{value:.{sig - 1}e}")


def friendly(value: float | None) -> str:
    """A count or sum for sentences: 3 significant digits with thousands separators."""
    if value is None or not math.isfinite(value):
        return "–"
    if value != 0 and abs(value) < 0.001:
        return re.sub(r"e([+-])0*(\d)", r"e\1\2", f"{value:.2e}")
    rounded = float(f"{value:.3g}")
    return f"{int(rounded):,}" if rounded.is_integer() else f"{rounded:,}"


def percent(fraction: float) -> str:
    value = 100 * fraction
    return (f"{value:.0f}" if abs(value) >= 10 else f"{value:.1f}") + "%"


def _with_unit(text: str, unit: str) -> str:
    return f"{text} {unit}" if unit else text


def _vertex_name(name: str) -> str:
    return {ALL_NEGATIVE: "flag nothing", ALL_POSITIVE: "flag everything"}.get(name, name)


def _table(headers: Sequence[str], rows: Iterable[Sequence[str]], *, name_cols: int = 1,
           css_class: str = "") -> str:
    """An HTML table; cells must already be escaped HTML. The first ``name_cols`` are left-aligned."""
    head = "".join(f'<th class="name">{h}</th>' if i < name_cols else f"<th>{h}</th>"
                   for i, h in enumerate(headers))
    body = "".join(
        "<tr>" + "".join(f'<td class="name">{c}</td>' if i < name_cols else f"<td>{c}</td>"
                         for i, c in enumerate(row)) + "</tr>"
        for row in rows)
    cls = f' class="{css_class}"' if css_class else ""
    return f"<table{cls}><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>"


def _meta(items: Iterable[tuple[str, str]], css_class: str = "meta") -> str:
    """A definition list; keys and values must already be escaped HTML."""
    return (f'<dl class="{css_class}">' + "".join(f"<dt>{k}</dt><dd>{v}</dd>" for k, v in items)
            + "</dl>")


PLOTLY_JS_PATH = "_dash-component-suites/plotly/package_data/plotly.min.js"
"""Where a costdash app serves plotly.js (the file dcc.Graph loads, which the report embeds in
its standalone form), below the app's root."""


def plotly_js_url(root: str) -> str:
    """The address of the app's plotly.js under ``root`` (``scheme://host``), fingerprinted
    as Dash fingerprints its own scripts (the plotly package's version and the file's
    modification time): Dash serves it with a cache lifetime of a year, and a new plotly gives
    a new address."""
    import os

    import plotly
    from dash.fingerprint import build_fingerprint

    relative = PLOTLY_JS_PATH.split("/plotly/", 1)[1]  # package_data/plotly.min.js
    modified = int(os.stat(os.path.join(os.path.dirname(plotly.__file__), relative)).st_mtime)
    folder = PLOTLY_JS_PATH.rsplit("/", 1)[0]
    name = build_fingerprint(relative, plotly.__version__, modified).rsplit("/", 1)[1]
    return f"{root.rstrip('/')}/{folder}/{name}"


def plotly_script(src: str | None) -> str:
    """The report's ``<head>`` script tag of plotly.js loaded from ``src`` (empty for a
    standalone report, which embeds it with its first figure)."""
    if src is None:
        return ""
    return f'<script src="{_e(src)}" charset="utf-8"></script>'


def plotly_missing_note(src: str | None, standalone_url: str | None) -> tuple[str, str]:
    """A note, hidden while plotly.js loads from ``src``, and the script at the end of the
    report that shows it when it did not (opened offline, or the server is gone): what is
    missing and where the standalone report is. Empty for a standalone report."""
    if src is None:
        return "", ""
    where = (f' <a href="{_e(standalone_url)}">Download the standalone report</a> (plotly.js '
             "inside, about 5 MB more) to read it offline." if standalone_url else
             " Download the report again with <code>?standalone=1</code> added to its address "
             "to read it offline.")
    note = ('<p id="plotly-missing" style="background:#fff3cd;padding:0.5em" hidden>The figures are drawn by plotly.js '
            f"from {_e(src.split('/_dash-component-suites/')[0] or 'the costdash server')}, "
            f"which did not load here.{where} The tables and numbers are all here.</p>")
    return note, ("<script>if (!window.Plotly) "
                  "{document.getElementById('plotly-missing').hidden = false;}</script>")


def _encoded(obj: Any) -> Any:
    """``obj`` as :meth:`go.Figure.to_dict` gives it (numpy arrays as base64 typed arrays,
    plotly's ``convert_to_base64``), without ``to_dict``'s deep copy of every array: the
    containers are new, the arrays and scalars shared. Like ``convert_to_base64``, only a
    dict's values are encoded (not a list's items)."""
    if isinstance(obj, dict):
        return {k: (v if is_skipped_key(k) else to_typed_array_spec(v)
                    if is_homogeneous_array(v) else _encoded(v)) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return [_encoded(v) for v in obj]
    return obj


def _figure_html(fig: go.Figure | dict, first: bool, div_id: str) -> str:
    """A figure as the report's ``<div>``: a ``go.Figure``, or a plain figure dict whose
    layout and traces are already what plotly's validation would make of them (a full
    template, ``type`` on every trace, no None). Either way the JSON is the one
    ``pio.to_html(fig)`` writes, without ``to_dict``'s deep copy of every array (issue 23)."""
    # A figure's own dicts, which to_dict deep-copies (plotly is pinned, 7.1.0; the report
    # drops the figure once it is written).
    spec = {"data": fig._data, "layout": fig._layout} if isinstance(fig, go.Figure) else fig
    return pio.to_html(_encoded(spec), include_plotlyjs=bool(first), full_html=False,
                       div_id=div_id, config={"displaylogo": False}, validate=False)
