"""The Celery worker's entry module: ``celery -A dashboard.worker:celery_app worker``.

``celery_app`` builds the dashboard (``create_app()`` from the environment: the same settings as
the web processes, ``COSTDASH_JOBS_URL`` among them), which registers the background callbacks as
Celery tasks, and answers its Celery app. It is built when first asked for, so importing this
module costs nothing. The job managers themselves are in :mod:`dashboard.jobs`.
"""

from __future__ import annotations

from typing import Any


def __getattr__(name: str) -> Any:
    """``dashboard.worker:celery_app`` for ``celery -A``: build the app, return its Celery app."""
    if name != "celery_app":
        raise AttributeError(name)
    from dash import CeleryManager

    from dashboard.factory import create_app

    app = create_app()
    manager = app._background_manager
    if not isinstance(manager, CeleryManager):
        raise RuntimeError("set COSTDASH_JOBS_URL=redis://... to run background jobs in Celery")
    # The worker's main process only hands jobs to the pool processes it forks: no
    # housekeeping here (the web roles do it), and no pooled database connection for the
    # pool processes to inherit (each starts its own pool after the fork in any case).
    app.server.extensions["costdash-maintenance"].stop()
    app.server.extensions["costdash"].store.dispose()
    return manager.handle
