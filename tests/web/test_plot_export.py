"""PNG and SVG downloads of the plots: the shared ``dcc.Graph`` config and the SVG mode-bar button.

The config is checked against the keys dcc.Graph declares for it, and the pages' layouts against
it; in Chromium, both mode-bar buttons of a Folds plot are clicked and the downloaded files read.
"""

from __future__ import annotations

import typing
import xml.etree.ElementTree as ET
from typing import TYPE_CHECKING

import pytest
from dash import dcc

from costdash.demo import DEMOS
from dashboard.figures.common import GRAPH_CONFIG, graph_config
from dashboard.pages import compare, folds, multiclass
from dashboard.storage import LoaderOptions

if TYPE_CHECKING:  # collection never needs Playwright; only the browser test uses it
    from playwright.sync_api import Page

SVG_NS = "{http://www.w3.org/2000/svg}"
PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"

# Each page's graphs and the file name of their downloads (without the extension).
DOWNLOAD_NAMES = {
    compare: {"compare-envelopes": "costdash-compare-envelopes",
              "compare-difference": "costdash-compare-difference"},
    folds: {"folds-cost-graph": "costdash-folds-cost", "folds-roc-graph": "costdash-folds-roc"},
    multiclass: {"multiclass-graph": "costdash-multiclass-costs"},
}


def declared_keys(typed_dict: type) -> set[str]:
    return set(typed_dict.__required_keys__ | typed_dict.__optional_keys__)


def graphs_in(component) -> list[dcc.Graph]:
    """Every dcc.Graph in a layout tree."""
    if isinstance(component, dcc.Graph):
        return [component]
    children = getattr(component, "children", None)
    if children is None or isinstance(children, str | int | float):
        return []
    if not isinstance(children, list | tuple):
        children = [children]
    return [g for child in children for g in graphs_in(child)]


def test_graph_config_uses_only_what_dcc_graph_declares():
    config = graph_config("roc")
    assert set(config) <= declared_keys(dcc.Graph.Config)
    image = config["toImageButtonOptions"]
    assert set(image) <= declared_keys(dcc.Graph.ConfigToImageButtonOptions)
    (formats,) = typing.get_args(dcc.Graph.ConfigToImageButtonOptions.__annotations__["format"])
    assert image["format"] in typing.get_args(formats)
    assert image == {"format": "png", "scale": 2, "filename": "costdash-roc"}
    assert config["showSendToCloud"] is False and config["displaylogo"] is False


def test_graph_config_is_a_fresh_copy_each_time():
    first = graph_config("roc")
    first["toImageButtonOptions"]["filename"] = "changed"
    first["displaylogo"] = True
    assert graph_config("roc")["toImageButtonOptions"]["filename"] == "costdash-roc"
    assert "filename" not in GRAPH_CONFIG["toImageButtonOptions"]
    assert GRAPH_CONFIG["displaylogo"] is False


@pytest.mark.parametrize("module", list(DOWNLOAD_NAMES), ids=lambda m: m.__name__)
@pytest.mark.slow
def test_page_graphs_use_the_shared_config_named_after_the_plot(module, services):
    graphs = graphs_in(module.layout({}, services))
    assert {g.id: g.config["toImageButtonOptions"]["filename"] for g in graphs} == \
        DOWNLOAD_NAMES[module]
    for g in graphs:
        name = g.config["toImageButtonOptions"]["filename"].removeprefix("costdash-")
        assert g.config == graph_config(name)


def test_download_names_are_unique_across_pages():
    names = [n for per_page in DOWNLOAD_NAMES.values() for n in per_page.values()]
    assert len(names) == len(set(names))


def download(page: Page, graph_id: str, button_title: str) -> tuple[str, bytes]:
    """Click a mode-bar button of a graph; the downloaded file's name and bytes."""
    page.hover(f"#{graph_id} .js-plotly-plot")
    with page.expect_download() as info:
        page.click(f"#{graph_id} .modebar-btn[data-title='{button_title}']")
    # Read here rather than with save_as(path): see conftest.py on Playwright and file paths.
    with open(info.value.path(), "rb") as f:
        return info.value.suggested_filename, f.read()


@pytest.mark.browser
def test_plot_downloads_as_png_and_svg(live_server, page: Page):
    record = live_server.store.put(DEMOS["breast-cancer"].path, "breast-cancer.csv",
                                   LoaderOptions())
    errors: list[str] = []
    page.on("pageerror", lambda e: errors.append(str(e)))
    page.goto(f"{live_server.url}/folds?data={record.id}&model=gbm")
    page.wait_for_function(
        """() => {
            const gd = document.querySelector('#folds-cost-graph .js-plotly-plot');
            return !!(gd && gd._fullData && gd._fullData.some(t => t.uid === 'average'));
        }""", timeout=20_000)
    titles = page.eval_on_selector_all(
        "#folds-cost-graph .modebar-btn", "buttons => buttons.map(b => b.dataset.title)")
    assert "Download plot as a PNG" in titles and "Download plot as an SVG" in titles
    assert "Share chart..." not in titles

    name, png = download(page, "folds-cost-graph", "Download plot as a PNG")
    assert name == "costdash-folds-cost.png" and png.startswith(PNG_SIGNATURE)

    name, svg = download(page, "folds-cost-graph", "Download plot as an SVG")
    assert name == "costdash-folds-cost.svg"
    root = ET.fromstring(svg)
    assert root.tag == f"{SVG_NS}svg"
    texts = {"".join(t.itertext()) for t in root.iter(f"{SVG_NS}text")}
    assert {"PC(+) (probability × cost)", "Normalized expected cost"} <= texts

    # The ROC plot beside it downloads under its own name.
    name, svg = download(page, "folds-roc-graph", "Download plot as an SVG")
    assert name == "costdash-folds-roc.svg" and b"True positive rate (TPR)" in svg
    assert errors == []
