"""The browser scripts load in the order one tuple declares (issue 26): ``ASSET_SCRIPTS`` of
:mod:`dashboard.factory`, not the alphabetical order Dash gives assets/*.js by itself."""

from __future__ import annotations

import re

from dashboard import factory
from dashboard.factory import ASSET_SCRIPTS, ASSETS, create_app

SCRIPT_SRC = re.compile(r'<script src="([^"]+)"')


def _page_scripts(app, path: str = "/explore") -> list[str]:
    text = app.server.test_client().get(path).get_data(as_text=True)
    return SCRIPT_SRC.findall(text)


def _asset_names(srcs: list[str]) -> list[str]:
    return [re.sub(r"\?.*$", "", s.split("/assets/", 1)[1]) for s in srcs if "/assets/" in s]


def test_every_script_of_assets_is_declared_exactly_once():
    on_disk = sorted(p.name for p in ASSETS.glob("*.js"))
    assert len(set(ASSET_SCRIPTS)) == len(ASSET_SCRIPTS), "a script is declared twice"
    assert sorted(ASSET_SCRIPTS) == on_disk


def test_the_page_loads_the_scripts_in_the_declared_order(web_app):
    srcs = _page_scripts(web_app)
    assert _asset_names(srcs) == list(ASSET_SCRIPTS)
    assets = [s for s in srcs if "/assets/" in s]
    # Each with Dash's cache-busting fingerprint (the file's modification time), together,
    # where Dash puts assets: after the component libraries' dependencies, before dash-renderer
    # (which starts the callbacks the scripts' clientside functions serve).
    assert all(re.search(r"\?m=[0-9.]+$", s) for s in assets)
    first = srcs.index(assets[0])
    assert srcs[first:first + len(assets)] == assets
    renderer = next(i for i, s in enumerate(srcs) if "dash-renderer/build/dash_renderer" in s)
    assert first + len(assets) <= renderer
    assert any("/deps/react@" in s for s in srcs[:first])


def test_the_order_is_the_declaration_not_the_file_names(monkeypatch, settings):
    reversed_order = tuple(reversed(ASSET_SCRIPTS))
    monkeypatch.setattr(factory, "ASSET_SCRIPTS", reversed_order)
    assert _asset_names(_page_scripts(create_app(settings))) == list(reversed_order)
