"""Element ids live in one module, :mod:`dashboard.ids`, shared by the pages, the browser scripts
and the tests: every id a script in ``assets/`` names is there, and the pages that use the module
name no id as a bare string."""

from __future__ import annotations

import ast
import re
from pathlib import Path

from dashboard import ids

ROOT = Path(__file__).resolve().parents[2]

ID_VALUES = {v for k, v in vars(ids).items() if k.isupper() and isinstance(v, str)}

NOT_IDS = {
    # attributes the scripts set
    "aria-busy", "aria-label", "aria-valuenow", "aria-valuetext", "aria-disabled", "aria-hidden",
    "aria-valuemin", "aria-valuemax",
    # plotly shapes and trace names drawn or looked up by explore.js
    "all-negative", "all-positive", "capacity-limit", "capacity-line", "chosen-line",
    "iso-performance", "np-limit", "np-line", "hull-vertices", "np-single", "capacity-single",
    # CSS classes, and elements the scripts create themselves
    "costdash-focus", "costdash-hl", "costdash-keep", "costdash-models-style",
    "dash-input-element", "upload-file", "ranges-pc-line",
    # the readouts' relayout boundaries (explore_layout.py's _boxed, explore-readouts.js)
    "relayout-box", "relayout-inner",
    # the plotly mode-bar button plot-export.js adds
    "costdash-download-svg",
    # the moving marks' own SVG layer (explore-plots.js): its classes and the SVG attributes
    # and font names it writes
    "costdash-mark", "costdash-marked", "costdash-marks-above", "costdash-marks-below",
    "costdash-marks-style", "costdash-marks-svg", "clip-path", "data-name", "fill-rule",
    "font-family", "font-size", "sans-serif", "stroke-dasharray", "stroke-width", "text-anchor",
}
"""Kebab-case strings of the scripts that are not element ids of the pages."""

CONVERTED = ("dashboard/shell.py", "dashboard/viewstate.py", "dashboard/pages/explore.py",
             "dashboard/explore_layout.py",
             "dashboard/pages/compare.py", "dashboard/pages/confidence.py",
             "dashboard/pages/folds.py", "dashboard/pages/multiclass.py")
"""Modules whose element ids all come from :mod:`dashboard.ids`."""


def script_names() -> dict[str, set[str]]:
    """The kebab-case string literals of each script in assets/."""
    pattern = re.compile(r"""["']([a-z][a-z0-9]*(?:-[a-z0-9]+)+)["']""")
    return {p.name: set(pattern.findall(p.read_text(encoding="utf-8")))
            for p in sorted((ROOT / "assets").glob("*.js"))}


def known(name: str) -> bool:
    """An id, the prefix a script builds ids from (``"p-pos"`` + ``"-input"``), or a part of
    the pin cards (``pin-<k>-<field>``)."""
    return (name in ID_VALUES or name in ids.PIN_FIELDS
            or any(v.startswith(name + "-") for v in ID_VALUES))


def test_every_id_the_scripts_name_is_in_the_ids_module():
    unknown = {script: sorted(n for n in names if n not in NOT_IDS and not known(n))
               for script, names in script_names().items()}
    assert {k: v for k, v in unknown.items() if v} == {}


def test_the_readme_ids_for_automation_are_there():
    for value in ("upload", "p-pos-input", "cost-fn-input", "cost-fp-input", "volume-input",
                  "pc-value", "slope-value", "chosen-classifier", "chosen-threshold",
                  "normalized-cost", "expected-cost", "roc-graph", "cost-graph", "upload-error"):
        assert value in ID_VALUES or value in ids.PIN_FIELDS or known(value), value
    assert ids.demo("breast_cancer") == "demo-breast_cancer"
    assert ids.pin_field(2, "tp-rate") == "pin-2-tp-rate"


def test_constants_are_named_after_their_ids():
    for name, value in vars(ids).items():
        if name.isupper() and isinstance(value, str) and name != "VIEW_SCHEMA":
            assert name == value.upper().replace("-", "_"), name


def _bare_ids(path: Path) -> list[str]:
    """``id="..."`` keywords and ``Input/Output/State("...")`` first arguments."""
    found = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if not isinstance(node, ast.Call):
            continue
        func = node.func.id if isinstance(node.func, ast.Name) else getattr(node.func, "attr", "")
        if func in ("Input", "Output", "State") and node.args and \
                isinstance(node.args[0], ast.Constant) and isinstance(node.args[0].value, str):
            found.append(f"{func}({node.args[0].value!r}) line {node.lineno}")
        for kw in node.keywords:
            if kw.arg in ("id", "htmlFor") and isinstance(kw.value, ast.Constant):
                found.append(f"{kw.arg}={kw.value.value!r} line {node.lineno}")
    return found


def test_the_pages_take_their_ids_from_the_module():
    bare = {module: _bare_ids(ROOT / module) for module in CONVERTED}
    assert {k: v for k, v in bare.items() if v} == {}


def test_the_documented_pin_cards_are_the_pages():
    # Issue 24: docs/dashboard.md said pin-1..pin-4 where the page has pin-0..pin-3.
    from costdash.view import MAX_PINS
    from dashboard.explore_layout import _pins_card

    def all_ids(component) -> set[str]:
        found = {getattr(component, "id", None)}
        children = getattr(component, "children", None)
        for child in children if isinstance(children, list) else [children]:
            if child is not None and not isinstance(child, str):
                found |= all_ids(child)
        return found - {None}

    cards = sorted(i for i in all_ids(_pins_card()) if re.fullmatch(r"pin-\d+", i))
    docs = (ROOT / "docs" / "dashboard.md").read_text(encoding="utf-8")
    first, last = re.search(r"cards `pin-<k>` \(k = (\d+)\.\.(\d+)", docs).groups()
    assert cards == [ids.pin_slot(k) for k in range(int(first), int(last) + 1)]
    assert len(cards) == MAX_PINS
    for name in ("curves-row-pin-<k>", "mark-pin-<k>"):
        assert name in docs
    assert re.search(r"`curves-row-pin-<k>` \(k = 0\.\.3", docs)
