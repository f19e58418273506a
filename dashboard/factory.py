"""``create_app(config)``: a fresh, self-contained Dash app (tests get one each)."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

from dash import Dash
from flask import redirect, request

from dashboard.api import install_api
from dashboard.cache import Services, ViewModels, init_cache
from dashboard.config import Settings
from dashboard.jobs import background_manager
from dashboard.links import install_links
from dashboard.pages import PAGES, page_module
from dashboard.sharing import ShareService
from dashboard.shell import register_routing, shell_layout
from dashboard.storage import make_store
from dashboard.viewstate import schema_script

ASSETS = Path(__file__).resolve().parent.parent / "assets"
STALE_UPLOAD_SECONDS = 24 * 3600


def _settings(config: Settings | dict[str, Any] | None) -> Settings:
    if isinstance(config, Settings):
        return config
    return Settings.from_env(**(config or {}))


def _remove_stale_uploads(tmp: Path) -> None:
    """Temp files of uploads interrupted mid-way (the route removes the others itself)."""
    if not tmp.is_dir():
        return
    cutoff = time.time() - STALE_UPLOAD_SECONDS
    for f in tmp.glob("upload-*"):
        try:
            if f.stat().st_mtime < cutoff:
                f.unlink()
        except OSError:
            pass


def create_app(config: Settings | dict[str, Any] | None = None) -> Dash:
    """Build the dashboard.

    Parameters
    ----------
    config : Settings or dict, optional
        Settings, or overrides of :meth:`Settings.from_env` (e.g. ``{"data_dir": tmp_path}``).

    Returns
    -------
    dash.Dash
        ``app.server`` is the Flask app (WSGI: ``gunicorn app:server``); its
        ``extensions["costdash"]`` holds the :class:`~dashboard.cache.Services`.
    """
    settings = _settings(config)
    settings.data_dir.mkdir(parents=True, exist_ok=True)
    _remove_stale_uploads(settings.data_dir / "tmp")
    app = Dash("costdash", assets_folder=str(ASSETS), title="costdash", update_title=None,
               suppress_callback_exceptions=True, serve_locally=True,
               background_callback_manager=background_manager(settings))
    server = app.server
    server.secret_key = settings.resolved_secret_key()
    store = make_store(settings)
    cache = init_cache(server, settings)
    views = ViewModels(store, cache, settings)
    services = Services(settings, store, views, ShareService(store, views.forget))
    server.extensions["costdash"] = services
    install_api(server, services)
    install_links(server, services)

    @server.before_request
    def _root_to_default_page():
        if request.method == "GET" and request.path == app.get_relative_path("/"):
            query = request.query_string.decode()
            return redirect(app.get_relative_path(PAGES[0].path) + (f"?{query}" if query else ""))
        return None

    # The view schema rides in every page as inert JSON for assets/viewstate.js.
    app.index_string = app.index_string.replace("{%app_entry%}",
                                                "{%app_entry%}\n" + schema_script(), 1)
    app.layout = shell_layout()
    register_routing(app, services)
    for page in PAGES:
        page_module(page).register_callbacks(app, services)
    return app


def finish_setup(server: Any) -> None:
    """Run Dash's one-time setup to the end before any thread serves a request.

    Dash does that setup (registering the script paths it serves, among others) in a
    before-request hook that marks itself done as it *starts*: with a threaded server, a second
    request arriving meanwhile skips it and, for a script not yet registered, gets a 500 and
    the page stays on "Loading...". One request through the app's Flask ``server`` first avoids
    the race (gunicorn.conf.py calls this in each worker; app.py before serving).
    """
    server.test_client().get("/healthz")
