"""costdash's web dashboard (Dash 4): the app factory and its layers.

Layers, imports going one way only (README, "Layout of the code"; tests/test_layers.py)::

    costdash (core numpy)  ->  figures
    config, storage/ (records, tables, sql, sharedstate, labelfiles, production, demos,
    cachebackend), jobs/ (bandcache), viewmodel, results
        ->  sharing, services  ->  pages (explore_layout), shell, page_kit, band_kit (ids)  |
            api/ (openapi_doc, production, manage), responses, report/ (format, readouts,
            curves, choice), uploads, limits, jobs/gate
        ->  factory.create_app, worker  ->  app.py

A subpackage's ``__init__.py`` is its face, the module it replaced (``dashboard.storage``,
``dashboard.jobs``, ``dashboard.report``, ``dashboard.api``); its parts never import it.

``assets/`` (top level) holds the browser side: ``costmath.js`` (client mirror of the core's
operating-condition arithmetic), the Explore page's ``explore-*.js`` parts (listed in
``explore-base.js``) and ``explore.js`` (its clientside callbacks), ``upload.js``, CSS.
"""

from __future__ import annotations

from typing import Any

__all__ = ["create_app"]


def create_app(config: Any = None):  # noqa: ANN201 - re-exported lazily (dash import is heavy)
    from dashboard.factory import create_app as _create_app

    return _create_app(config)
