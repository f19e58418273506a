"""The services the routes and callbacks of one app share (:class:`Services`): the store, the
result cache and the per-data-set precomputation memoised in it (:class:`ViewModels`), the one
door for every other derived result (:attr:`Services.results`, :mod:`dashboard.results`: one
key scheme, scoped by the handle's capability, cleared by :meth:`ViewModels.forget`), and the
rules of shared analyses.

``analyze`` runs once per data set (seconds for millions of scores); its results are packed into
the JSON view model (:mod:`dashboard.viewmodel`) and kept in a shared cache keyed by the data set
id, so every worker process (``gunicorn -w N``) finds them and nothing lives in module globals.
The cache holds JSON text, never pickled objects of ours.

Default: a FileSystemCache under ``COSTDASH_DATA_DIR/cache`` (one host, several processes).
``COSTDASH_CACHE_URL=redis://host:6379/0``: a RedisCache (several hosts).
"""

from __future__ import annotations

import hashlib
import json
import threading
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import flask
from flask import Flask
from flask_caching import Cache

from costdash.analysis import analysis_to_dict, analyze
from costdash.hull import RocHull
from costdash.view import CONDITION_FIELDS, View
from dashboard.config import Settings
from dashboard.storage.demos import shared_demo
from dashboard.results import Results, forget_results
from dashboard.sharing import ShareService, request_lookups
from dashboard.storage import DatasetNotFound, DatasetRecord, DatasetStore, Store
from dashboard.viewmodel import (VIEW_VERSION, build_view_model, hull_from_entry,
                                 restrict_view_model)


def cache_config(settings: Settings) -> dict[str, Any]:
    """flask-caching configuration for the settings.

    Parameters
    ----------
    settings : Settings
        ``cache_url`` picks the backend: ``redis://``, ``rediss://`` or ``unix://`` give a
        :class:`~dashboard.storage.cachebackend.ResilientRedisCache` (Redis errors are misses, with
        short socket timeouts); ``simple://`` a per-process SimpleCache (tests only); None a
        :class:`~dashboard.storage.cachebackend.FileCache` under ``data_dir/cache``. Neither of the
        shared ones pickles: values are text or bytes.

    Returns
    -------
    dict
        The ``config`` of :class:`flask_caching.Cache`.
    """
    common = {"CACHE_DEFAULT_TIMEOUT": settings.cache_timeout, "CACHE_KEY_PREFIX": "costdash:"}
    url = settings.cache_url
    if url and url.startswith(("redis://", "rediss://", "unix://")):
        from dashboard.storage.cachebackend import REDIS_OPTIONS

        return {**common, "CACHE_TYPE": "dashboard.storage.cachebackend.ResilientRedisCache",
                "CACHE_REDIS_URL": url, "CACHE_OPTIONS": dict(REDIS_OPTIONS)}
    if url and url.startswith("simple://"):  # per-process; for tests only
        return {**common, "CACHE_TYPE": "SimpleCache"}
    if url:
        raise ValueError(f"COSTDASH_CACHE_URL must be redis://..., not {url!r}")
    return {**common, "CACHE_TYPE": "dashboard.storage.cachebackend.FileCache",
            "CACHE_DIR": str(settings.data_dir / "cache"), "CACHE_THRESHOLD": 2000}


def init_cache(server: Flask, settings: Settings) -> Cache:
    """The shared result cache of one app, bound to its Flask server.

    Parameters
    ----------
    server : flask.Flask
        The Dash app's server.
    settings : Settings
        See :func:`cache_config`.

    Returns
    -------
    flask_caching.Cache
        Its ``get``, ``set``, ``has`` and ``delete`` never raise for an unreachable Redis: they
        answer as an empty cache would, and the backend logs a rate-limited warning.
    """
    return Cache(server, config=cache_config(settings))


def code_version() -> str:
    """A digest of the code that builds what :meth:`ViewModels.payload` caches: the sources of
    ``costdash`` and ``dashboard`` and the versions of Dash and plotly. Payloads are cached
    under it, so a deployment of other code never serves a page or figure the old code built
    (web roles of two versions may share one Redis for a moment during an upgrade)."""
    import dash
    import plotly

    import costdash

    digest = hashlib.sha256(f"dash {dash.__version__} plotly {plotly.__version__}".encode())
    for root in (Path(costdash.__file__).parent, Path(__file__).parent):
        for path in sorted(root.rglob("*.py")):
            digest.update(str(path.relative_to(root)).encode() + b"\0" + path.read_bytes())
    return digest.hexdigest()[:16]


def payload_json(value: Any) -> str:
    """JSON text of a callback's outputs exactly as Dash sends them (plotly's encoder: figures
    with their numpy arrays as typed arrays, components as their JSON)."""
    from plotly.io.json import to_json_plotly

    return to_json_plotly(value)


REPLY_FROM_PAYLOAD = "costdash.reply-from-payload"
"""The request environment's mark that a callback's outputs came whole from a kept payload
(read by the reply cache of read links, :func:`dashboard.link_preview.install_reply_cache`)."""


def reply_from_payload() -> None:
    """Note that the callback being answered took its outputs whole from a cached payload
    (:meth:`ViewModels.payload`): its reply may be kept. Here, not in the link preview, so that
    the services import nothing of the pages."""
    if flask.has_request_context():
        flask.request.environ[REPLY_FROM_PAYLOAD] = True


class ViewModels:
    """View models of stored data sets, computed once and shared through the cache."""

    payloads_per_data_set = Results.entries_per_kind
    """Payloads of one kind (:meth:`payload`'s ``what``) kept per data set (the results
    service's bound, :attr:`dashboard.results.Results.entries_per_kind`)."""

    def __init__(self, store: DatasetStore, cache: Cache, settings: Settings):
        self.store, self.cache, self.settings = store, cache, settings
        self.version = code_version()
        self._locks: dict[str, tuple[threading.Lock, int]] = {}
        self._locks_lock = threading.Lock()
        self.results = Results(store, cache, settings, self.version)
        """The one door for derived results (:mod:`dashboard.results`), on the same cache."""

    def _key(self, dataset_id: str) -> str:
        return f"view:v{VIEW_VERSION}:{self.settings.max_roc_points}:{dataset_id}"

    def _compute(self, dataset_id: str, record: DatasetRecord) -> str:
        dataset = record.dataset if record.dataset is not None else self.store.get(dataset_id)
        model = build_view_model(dataset, dataset_id=dataset_id, name=record.name,
                                 max_points=self.settings.max_roc_points)
        text = json.dumps(model, allow_nan=False, separators=(",", ":"))
        self.cache.set(self._key(dataset_id), text)
        return text

    def live(self, dataset_id: str) -> bool:
        """Whether the store holds ``dataset_id`` now (:meth:`DatasetStore.exists`), asked once
        per request: a handle the request already found live (its link's analysis was just
        opened, :meth:`~dashboard.sharing.ShareService.open`, or a previous call) is not
        looked up again."""
        lookups = request_lookups()
        if lookups is not None and lookups.get(("live", dataset_id)):
            return True
        found = self.store.exists(dataset_id)
        if found and lookups is not None:
            lookups[("live", dataset_id)] = True
        return found

    def prime(self, record: DatasetRecord) -> None:
        """Compute and cache the view model of a record just stored (uses its loaded data)."""
        if self.cache.get(self._key(record.id)) is None:
            self._compute(record.id, record)

    def full(self, dataset_id: str) -> dict[str, Any]:
        """The view model with every classifier; raises :class:`DatasetNotFound`."""
        text = self.cache.get(self._key(dataset_id))
        if text is not None and not self.live(dataset_id):
            # Deleted while the cache could not be told (Redis was down): the data is gone.
            self.forget(dataset_id)
            text = None
        if text is None:
            record = self.store.info(dataset_id)
            if record is None:
                raise DatasetNotFound(f"no data set with id '{dataset_id}' is stored here; "
                                      "upload the file again")
            text = self._compute(dataset_id, record)
        return json.loads(text)

    def forget(self, dataset_id: str) -> None:
        """Drop the cached results of a data set that was deleted: its view model, the keys
        noted by :meth:`_remember`, and every result of the results service
        (:func:`dashboard.results.forget_results`, all kinds and scopes)."""
        for key in json.loads(self.cache.get(f"keys:{dataset_id}") or "[]"):
            self.cache.delete(key)
        self.cache.delete(f"keys:{dataset_id}")
        self.cache.delete(self._key(dataset_id))
        forget_results(self.cache, dataset_id)
        results = getattr(self, "results", None)
        if results is not None:  # this process's memoised objects of it
            results.forget(dataset_id)

    def analysis_json_text(self, dataset_id: str, view: Mapping[str, Any] | View, *,
                           max_points: int | None = None) -> str:
        """``costdash analyze --json`` of a stored data set under a view's conditions, as JSON
        text (a shared link's route sends it on without parsing 100s of kB per request).

        ``view`` is a :class:`~costdash.view.View` or a saved view (its JSON); its conditions
        mean what they mean everywhere (:meth:`~costdash.view.View.condition`: p(+) unset is
        the data's prevalence, costs unset are 1). ``max_points`` thins each classifier's ROC
        arrays (hull and envelope stay exact). Cached by data set, conditions and thinning
        (several links may share them); raises :class:`DatasetNotFound`.
        """
        if not isinstance(view, View):
            view, _ = View.parse_lenient(view, only=CONDITION_FIELDS)  # checked when saved
        condition = {k: getattr(view, k) for k in CONDITION_FIELDS}

        def compute(_scope: str) -> str:
            dataset = self.store.get(dataset_id)
            result = analyze(dataset, view.condition(dataset.prevalence))
            return json.dumps(analysis_to_dict(result, max_points=max_points), allow_nan=False,
                              separators=(",", ":"))

        # The scope is the caller's (a manage token reads every point through the analysis's
        # read-only handle), so it is given, not read from the handle.
        return self.results.text("analysis", dataset_id,
                                 {"condition": condition, "max_points": max_points}, compute,
                                 scope="full" if max_points is None else "thinned",
                                 checked=False)

    def _remember(self, dataset_id: str, key: str) -> None:
        """Note a cache key derived from a data set, so :meth:`forget` can drop it too."""
        index_key = f"keys:{dataset_id}"
        keys = json.loads(self.cache.get(index_key) or "[]")
        if key not in keys:
            self.cache.set(index_key, json.dumps([*keys, key][-200:]))

    def payload(self, dataset_id: str, what: str, parts: Any, compute: Callable[[], Any], *,
                keep: Callable[[Any], bool] = lambda _value: True,
                checked: bool = True) -> Any:
        """What a callback sends for a data set (figures, a page's component tree), built once
        per data set, ``what`` and ``parts`` and kept in the cache as its JSON text.

        A read link's page makes the same callbacks with the same inputs for every viewer; each
        would otherwise rebuild the same plotly figures (graph-object validation, tens of ms
        each) and encode them again. A hit is the decoded JSON (plain dicts and lists, which
        Dash encodes to the same bytes as the objects they came from); a miss runs ``compute``
        and returns its value as it is, cached when ``keep(value)`` says so (an error answer is
        not). A hit is checked against the store first (``checked``; pass False when the caller
        has just checked that the data set is live), so a deleted or expired data set's
        payloads are never sent. Keys hold :attr:`version`, the settings that shape figures,
        and a digest of ``parts`` (JSON-able: the callback's inputs).
        """
        if ":" in what:
            raise ValueError(f"a payload name has no colon: {what!r}")
        # The results service's key scheme (kind ``payload.<what>``, scope ``page``: the
        # callback's inputs, which the page already restricted to what its handle may see).
        key = self.results.key(f"payload.{what}", dataset_id, "page", parts,
                               version=self.version)
        text = self.cache.get(key)
        if text is not None and (not checked or self.live(dataset_id)):
            reply_from_payload()
            return json.loads(text)
        # One build per key at a time in this process: from a cold start the first viewers of
        # a link all miss together, and each building the same figures would queue every other
        # request behind them (the rest wait for the first and read its entry).
        with self._building(key):
            text = self.cache.get(key)
            if text is not None and (not checked or self.live(dataset_id)):
                reply_from_payload()
                return json.loads(text)
            value = compute()
            if keep(value):
                reply_from_payload()
                self.cache.set(key, payload_json(value))
                self.results.note(f"payload.{what}", dataset_id, key,
                                  bound=self.payloads_per_data_set)
        return value

    @contextmanager
    def _building(self, key: str) -> Iterator[None]:
        """Hold the lock of ``key`` (one per key being built, dropped when nobody holds it)."""
        with self._locks_lock:
            lock, users = self._locks.get(key, (None, 0))
            lock = lock or threading.Lock()
            self._locks[key] = (lock, users + 1)
        try:
            with lock:
                yield
        finally:
            with self._locks_lock:
                lock, users = self._locks[key]
                if users == 1:
                    del self._locks[key]
                else:
                    self._locks[key] = (lock, users - 1)

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
    """What the routes and callbacks of one app share: settings, store, cached view models,
    the derived results (:attr:`results`, the views' :class:`~dashboard.results.Results`) and
    the rules of shared analyses."""

    settings: Settings
    store: Store
    views: ViewModels
    sharing: ShareService
    results: Results = field(init=False, repr=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "results", self.views.results)

    def put_demo(self, name: str) -> DatasetRecord:
        """Store a bundled demo data set (once, under the one handle every visitor shares:
        :func:`dashboard.storage.demos.shared_demo`) and cache its view model."""
        record = shared_demo(self.store, name)
        self.views.prime(record)
        return record
