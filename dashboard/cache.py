"""The per-data-set precomputation, memoised with flask-caching, and the services callbacks use.

``analyze`` runs once per data set (seconds for millions of scores); its results are packed into
the JSON view model (:mod:`dashboard.viewmodel`) and kept in a shared cache keyed by the data set
id, so every worker process (``gunicorn -w N``) finds them and nothing lives in module globals.
The cache holds JSON text, never pickled objects of ours.

Default: a FileSystemCache under ``COSTDASH_DATA_DIR/cache`` (one host, several processes).
``COSTDASH_CACHE_URL=redis://host:6379/0``: a RedisCache (several hosts).
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from flask import Flask
from flask_caching import Cache

from costdash.demo import DEMOS
from costdash.hull import RocHull
from dashboard.config import Settings
from dashboard.storage import DatasetNotFound, DatasetRecord, DatasetStore, LoaderOptions
from dashboard.viewmodel import (VIEW_VERSION, build_view_model, hull_from_entry,
                                 restrict_view_model)


def cache_config(settings: Settings) -> dict[str, Any]:
    """flask-caching configuration for the settings."""
    common = {"CACHE_DEFAULT_TIMEOUT": settings.cache_timeout, "CACHE_KEY_PREFIX": "costdash:"}
    url = settings.cache_url
    if url and url.startswith(("redis://", "rediss://", "unix://")):
        return {**common, "CACHE_TYPE": "RedisCache", "CACHE_REDIS_URL": url}
    if url and url.startswith("simple://"):  # per-process; for tests only
        return {**common, "CACHE_TYPE": "SimpleCache"}
    if url:
        raise ValueError(f"COSTDASH_CACHE_URL must be redis://..., not {url!r}")
    return {**common, "CACHE_TYPE": "FileSystemCache",
            "CACHE_DIR": str(settings.data_dir / "cache"), "CACHE_THRESHOLD": 2000}


def init_cache(server: Flask, settings: Settings) -> Cache:
    return Cache(server, config=cache_config(settings))


class ViewModels:
    """View models of stored data sets, computed once and shared through the cache."""

    def __init__(self, store: DatasetStore, cache: Cache, settings: Settings):
        self.store, self.cache, self.settings = store, cache, settings

    def _key(self, dataset_id: str) -> str:
        return f"view:v{VIEW_VERSION}:{self.settings.max_roc_points}:{dataset_id}"

    def _compute(self, dataset_id: str, record: DatasetRecord) -> str:
        dataset = record.dataset if record.dataset is not None else self.store.get(dataset_id)
        view = build_view_model(dataset, dataset_id=dataset_id, name=record.name,
                                max_points=self.settings.max_roc_points)
        text = json.dumps(view, allow_nan=False, separators=(",", ":"))
        self.cache.set(self._key(dataset_id), text)
        return text

    def prime(self, record: DatasetRecord) -> None:
        """Compute and cache the view model of a record just stored (uses its loaded data)."""
        if self.cache.get(self._key(record.id)) is None:
            self._compute(record.id, record)

    def full(self, dataset_id: str) -> dict[str, Any]:
        """The view model with every classifier; raises :class:`DatasetNotFound`."""
        text = self.cache.get(self._key(dataset_id))
        if text is None:
            record = self.store.info(dataset_id)
            if record is None:
                raise DatasetNotFound(f"no data set with id '{dataset_id}' is stored here; "
                                      "upload the file again")
            text = self._compute(dataset_id, record)
        return json.loads(text)

    def view(self, dataset_id: str, models: list[str] | None = None) -> dict[str, Any]:
        """The view model restricted to ``models`` (all classifiers when None)."""
        full = self.full(dataset_id)
        names = [c["name"] for c in full["classifiers"]]
        if models is None or list(models) == names:
            return full
        return restrict_view_model(full, models)

    def hull(self, dataset_id: str, models: list[str] | None = None) -> RocHull:
        """The ROC convex hull of ``models``, as the core's :class:`RocHull`."""
        return hull_from_entry(self.view(dataset_id, models)["hull"])


@dataclass(frozen=True)
class Services:
    """What the routes and callbacks of one app share: settings, store, cached view models."""

    settings: Settings
    store: DatasetStore
    views: ViewModels

    def put_demo(self, name: str) -> DatasetRecord:
        """Store a bundled demo data set (once) and cache its view model."""
        demo = DEMOS[name]
        record = self.store.put(demo.path, f"{name}.csv", LoaderOptions())
        self.views.prime(record)
        return record
