"""``create_app(config)``: a fresh, self-contained Dash app (tests get one each)."""

from __future__ import annotations

import logging
import os
import threading
import time
import weakref
from pathlib import Path
from typing import Any

from dash import Dash
from flask import redirect, request

from dashboard.accounts import install_accounts, sharing_service
from dashboard.api import install_api
from dashboard.storage.labelfiles import LabelFiles
from dashboard.limits import install_limits
from dashboard.link_preview import install_link_preview
from dashboard.config import Settings, redact_werkzeug_log
from dashboard.jobs import background_manager, reap_jobs
from dashboard.api.manage import install_manage
from dashboard.my_analyses import my_analyses_pages
from dashboard.pages import PAGES, page_module
from dashboard.api.production import install_production_api
from dashboard.storage.production import production_forgetting
from dashboard.responses import install_callback_guard, install_responses
from dashboard.services import Services, ViewModels, init_cache
from dashboard.shell import register_routing, shell_layout
from dashboard.storage import make_store
from dashboard.uploads import sweep_upload_files
from dashboard.viewstate import schema_script

ASSETS = Path(__file__).resolve().parent.parent / "assets"

ASSET_SCRIPTS = (
    "costmath.js",          # window.costdashMath: the conditions' arithmetic the others use
    "explore-base.js",      # window.costdashExplore, which the Explore parts below extend
    "explore-geometry.js",  # the Explore parts: each may take at load time what one before
    "explore-pins.js",      # it defines (assets/explore-base.js lists them)
    "explore-plots.js",
    "explore-readouts.js",
    "explore-sliders.js",
    "explore.js",           # the Explore page's clientside callbacks, after all its parts
    "link-preview.js",      # a read link's preview (also loaded by the preview itself)
    "pages.js",             # the other pages' clientside callbacks
    "plot-export.js",
    "shared-link.js",
    "upload.js",
    "viewstate.js",         # the browser's view object and URL writer
)
"""The browser scripts of assets/, in the order every page loads them: declared here, not
implied by the file names (Dash would load assets/*.js alphabetically). :func:`create_app`
tells Dash to leave .js files of assets/ alone (``assets_ignore``) and adds these, in this
order, where Dash puts assets (after the component libraries, before dash-renderer) with its
cache-busting ``?m=<mtime>``; tests/web/test_asset_scripts.py checks every assets/*.js is here
exactly once and that pages load them in this order."""

log = logging.getLogger(__name__)

UPLOAD_GRACE_SECONDS = 60.0
"""A temp upload file nobody holds is removed once it is this old (the grace covers the moment
between its creation and its writer taking the lock)."""


def _settings(config: Settings | dict[str, Any] | None) -> Settings:
    if isinstance(config, Settings):
        return config
    return Settings.from_env(**(config or {}))


class PublicAddress:
    """WSGI middleware: every request is seen at ``COSTDASH_PUBLIC_URL`` (its scheme and host),
    whatever ``Host`` header it came with, so every link the app builds from
    ``request.url_root`` -- share and manage links, the API's, the report's, the OpenAPI
    servers -- points at the service, never at an address a client (or a proxy that does not
    pass the host on) made up."""

    def __init__(self, app: Any, public_url: str):
        scheme, _, host = public_url.partition("://")
        self.app, self.scheme, self.host = app, scheme, host

    def __call__(self, environ: dict[str, Any], start_response: Any) -> Any:
        environ["HTTP_HOST"] = self.host
        environ["wsgi.url_scheme"] = self.scheme
        return self.app(environ, start_response)


class Maintenance:
    """The housekeeping of one app, run when the app is created and then every
    ``settings.maintenance_seconds`` by one daemon thread per process (:func:`_schedule`):

    * temp files of uploads whose writer died (a worker killed mid-upload; the route removes
      every other one itself) -- :func:`dashboard.uploads.sweep_upload_files`;
    * expired analyses, and the data sets only they used (their links already answer 404 at
      once: every read checks the expiry; this frees the space);
    * data sets no analysis uses, uploaded more than ``upload_retention_days`` ago (unshared
      Explore uploads, and orphans of a save cut short: a process killed between storing the
      data set and the analysis, a full disk);
    * finished job processes of the embedded job manager (:func:`dashboard.jobs.reap_jobs`).

    Every step is idempotent, so several processes (gunicorn workers, hosts) may run it at
    once. A failing step is logged and the others still run.
    """

    grace = UPLOAD_GRACE_SECONDS

    def __init__(self, services: Services):
        self.services = services
        self.interval = float(services.settings.maintenance_seconds)
        self.due = time.monotonic() + self.interval
        self.runs = 0
        self.last: dict[str, Any] = {}

    def run_once(self, now: float | None = None) -> dict[str, Any]:
        """One round of every step; returns what each did (counts, or the error's name)."""
        now = time.time() if now is None else now
        settings = self.services.settings
        sharing = self.services.sharing
        steps = {
            "temp_files": lambda: sweep_upload_files(settings.data_dir / "tmp",
                                                     older_than=now - self.grace),
            "expired": lambda: sharing.purge_expired(now),
            "unshared": lambda: sharing.sweep_unshared(settings.upload_retention_days, now),
            "label_files": lambda: LabelFiles(self.services.store).sweep(
                settings.upload_retention_days, now),
            "job_processes": reap_jobs,
        }
        done: dict[str, Any] = {}
        for name, step in steps.items():
            try:
                done[name] = step()
            except Exception as exc:  # noqa: BLE001 - the next round tries again
                log.warning("costdash maintenance: %s failed (%s: %s)", name,
                            type(exc).__name__, exc)
                done[name] = type(exc).__name__
        self.runs += 1
        self.last = done
        return done

    def start(self) -> None:
        """Run every ``interval`` seconds from now on (in this process; nothing if 0)."""
        if self.interval > 0:
            _schedule(self)

    def stop(self) -> None:
        with _scheduler_lock:
            _scheduled.discard(self)


_scheduled: weakref.WeakSet[Maintenance] = weakref.WeakSet()
_scheduler_lock = threading.Lock()
_scheduler_wake = threading.Event()
_scheduler: threading.Thread | None = None


def _scheduler_loop() -> None:
    while True:
        now = time.monotonic()
        with _scheduler_lock:
            due = [m for m in _scheduled if m.due <= now]
            waits = [m.due - now for m in _scheduled if m.due > now]
        while due:
            m = due.pop()
            m.due = time.monotonic() + m.interval
            m.run_once()
            waits.append(m.interval)
            del m  # no strong reference while asleep: a dropped app goes away
        _scheduler_wake.wait(min([60.0, *waits]))
        _scheduler_wake.clear()


def _schedule(maintenance: Maintenance) -> None:
    """Add ``maintenance`` to this process's scheduler thread (started on first use). Apps are
    held weakly, so an app a test drops is not kept alive by its housekeeping."""
    global _scheduler
    with _scheduler_lock:
        _scheduled.add(maintenance)
        if _scheduler is None or not _scheduler.is_alive():
            _scheduler = threading.Thread(target=_scheduler_loop, daemon=True,
                                          name="costdash-maintenance")
            _scheduler.start()
    _scheduler_wake.set()


def _after_fork_in_child() -> None:
    # A forked process (a job's child process, a Celery pool process) does not inherit the
    # thread, and must not run its parent's housekeeping: it starts with none.
    global _scheduler, _scheduler_lock, _scheduler_wake, _scheduled
    _scheduler, _scheduler_lock, _scheduler_wake = None, threading.Lock(), threading.Event()
    _scheduled = weakref.WeakSet()


os.register_at_fork(after_in_child=_after_fork_in_child)


_warned_redis: set[str] = set()


def _bound_cache(cache: Any, settings: Settings) -> None:
    """The file cache gets its byte bound; a Redis cache's bound is Redis's own, and an
    unbounded Redis is worth a warning (once per process and URL)."""
    from dashboard.storage.cachebackend import FileCache, ResilientRedisCache

    backend = cache.cache
    if isinstance(backend, FileCache):
        backend.max_bytes = int(settings.cache_max_bytes)
    elif isinstance(backend, ResilientRedisCache) and settings.cache_url not in _warned_redis:
        _warned_redis.add(str(settings.cache_url))
        backend.warn_if_unbounded()


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
        ``extensions["costdash"]`` holds the :class:`~dashboard.services.Services`.
    """
    settings = _settings(config)
    settings.data_dir.mkdir(parents=True, exist_ok=True)
    redact_werkzeug_log()  # the development server's request lines carry link tokens
    app = Dash("costdash", assets_folder=str(ASSETS), assets_ignore=r"\.js$", title="costdash",
               update_title=None, suppress_callback_exceptions=True, serve_locally=True,
               background_callback_manager=background_manager(settings))
    for name in ASSET_SCRIPTS:  # served as Dash serves assets, in the declared order
        app.scripts.append_script({"asset_path": name, "filepath": str(ASSETS / name)})
    server = app.server
    server.secret_key = settings.resolved_secret_key()
    # The session holds only an upload key's id (dashboard.limits); it is not sent along with
    # requests other sites start (Lax), nor over plain HTTP behind TLS (Secure).
    server.config.update(SESSION_COOKIE_SAMESITE="Lax", SESSION_COOKIE_HTTPONLY=True,
                         SESSION_COOKIE_SECURE=settings.cookies_secure())
    if settings.public_url:
        server.wsgi_app = PublicAddress(server.wsgi_app, settings.public_url)  # type: ignore[method-assign]
    store = make_store(settings)
    cache = init_cache(server, settings)
    _bound_cache(cache, settings)
    views = ViewModels(store, cache, settings)
    views.forget = production_forgetting(views.forget, store)  # type: ignore[method-assign]
    services = Services(settings, store, views, sharing_service(settings, store, views.forget))
    server.extensions["costdash"] = services
    install_api(server, services)
    install_limits(server, settings)
    install_production_api(server)
    install_responses(server)
    install_callback_guard(app)
    install_manage(server)
    # None without COSTDASH_OIDC_* (no accounts: nothing changes)
    accounts = install_accounts(app, services, pages=(my_analyses_pages,))
    maintenance = Maintenance(services)
    maintenance.run_once()  # what a previous run left (a crash, a kill -9)
    maintenance.start()
    server.extensions["costdash-maintenance"] = maintenance

    @server.before_request
    def _root_to_default_page():
        if request.method == "GET" and request.path == app.get_relative_path("/"):
            query = request.query_string.decode()
            return redirect(app.get_relative_path(PAGES[0].path) + (f"?{query}" if query else ""))
        return None

    # The view schema rides in every page as inert JSON for assets/viewstate.js.
    app.index_string = app.index_string.replace("{%app_entry%}",
                                                "{%app_entry%}\n" + schema_script(), 1)
    app.layout = shell_layout(accounts=accounts is not None)
    register_routing(app, services)
    install_link_preview(app, services)
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

    pandas is imported here too. plotly's validators look it up with
    ``sys.modules.get("pandas")``, so while one thread's first upload or view imports it, another
    thread drawing a figure finds the half-imported module and fails with "partially initialized
    module 'pandas' has no attribute 'Series'" (12 of 10,000 requests of a cold start under load).

    plotly's figure classes, validators and template are loaded here too
    (:func:`dashboard.report.warm_figures`, ~0.5 CPU s once per process), before the process
    serves: the first report would otherwise wait for them (issue 23), and a warm-up in the
    background would compete with the first requests (an upload) for the cores.
    """
    import pandas  # noqa: F401 - fully imported before the first thread can look it up

    from dashboard.report import warm_figures

    server.test_client().get("/healthz")
    warm_figures()
