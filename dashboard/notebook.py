"""``costdash.show``: the Explore page inline in a notebook, and the decision for the view on it.

A notebook user calls ``view = costdash.show(frame, p_pos=0.01, cost_fn=50)`` and gets the
Explore page in the output cell (Jupyter, JupyterLab, VS Code: Dash's own ``jupyter_mode``), on a
private app of its own: the embedded store (SQLite and the file cache) in a temporary folder, a
free port on 127.0.0.1. ``view.decision()`` is then what ``costdash decide`` says for the view the
user has on the page at that moment (the data set, the ticked classifiers, the conditions), and
``view.url`` opens the same page in a browser tab.

How the view gets from the page to ``decision()``: the page's view lives in the browser (its
number boxes, the classifier list and the data reference, kept by ``assets/viewstate.js``). This
module adds one callback to its own app, with inputs and no outputs, which hears every change of
those and records the view on the server, in the app's result cache under a key of this app
(:attr:`NotebookDashboard.key`); ``decision()`` reads it there. Not a module global (two
``show`` calls are two apps, each with its own key and cache) and not the browser (the kernel
cannot ask it). The last page to change the view wins when the same app is open in the notebook
and in a browser tab.

The core (``costdash/``) never imports the dashboard: ``costdash.show`` is a lazy name of
``costdash/__init__.py`` that imports this module when first looked up (``_LAZY``; the layer rule
of ``tests/test_layers.py`` reads import statements, and a module named in a string is not one).
Dash's notebook support is its private ``dash._jupyter`` (``requirements.txt`` pins Dash).
"""

from __future__ import annotations

import atexit
import json
import os
import secrets
import shutil
import socket
import sys
import tempfile
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from dash import Dash, Input
from flask import redirect, request

from costdash.analysis import analyze
from costdash.conditions import OperatingCondition
from costdash.decision import decide
from costdash.errors import ParameterError
from costdash.view import View, field_named
from dashboard import ids
from dashboard.config import Settings
from dashboard.factory import create_app, finish_setup
from dashboard.services import Services
from dashboard.storage import LoaderOptions, valid_id

if TYPE_CHECKING:
    from costdash.analysis import Analysis
    from costdash.decision import Decision

__all__ = ["NotebookDashboard", "ON_SCREEN_FIELDS", "show"]

ON_SCREEN_FIELDS = ("data", "models", "p_pos", "cost_fn", "cost_fp", "cost_tp", "cost_tn")
"""The fields of the view that ``costdash decide`` depends on: what the page's callback records."""

_INPUTS = (
    ("models", ids.MODELS_INPUT, "value"),
    ("p_pos", ids.P_POS_INPUT, "value"),
    ("cost_fn", ids.COST_FN_INPUT, "value"),
    ("cost_fp", ids.COST_FP_INPUT, "value"),
    ("cost_tp", ids.COST_TP_INPUT, "value"),
    ("cost_tn", ids.COST_TN_INPUT, "value"),
)
"""Each recorded field and the Explore element whose property holds it on screen (``data`` comes
from the page's data reference, ``ids.DATASET_REF``)."""

_LABEL = "label"


@dataclass(frozen=True)
class NotebookDashboard:
    """The Explore page :func:`show` opened, and the decision for the view on it.

    Attributes
    ----------
    url : str
        The page with the data set and the conditions given to :func:`show`; opens it in a
        browser (the app serves as long as the kernel runs, or until :meth:`close`).
    key : str
        The result-cache key under which the page's callback records the view on screen.
    initial : View
        The view :func:`show` opened (its data set, classifiers and conditions): what
        :meth:`view` answers until the page has recorded one.
    app : dash.Dash
        The app serving the page (its own store and cache, in :attr:`folder`).
    folder : pathlib.Path
        The temporary folder of the embedded store (removed by :meth:`close` and at exit).
    """

    url: str
    key: str
    initial: View
    app: Dash
    folder: Path

    @property
    def services(self) -> Services:
        """The app's :class:`~dashboard.services.Services` (store, cache, view models)."""
        return self.app.server.extensions["costdash"]

    def view(self) -> View:
        """The view on the page now: the data set, the ticked classifiers and the conditions
        last recorded by the page (:data:`ON_SCREEN_FIELDS`), else :attr:`initial`."""
        with self.app.server.app_context():
            text = self.services.views.cache.get(self.key)
        if not text:
            return self.initial
        return View.parse(json.loads(text), only=ON_SCREEN_FIELDS)

    def condition(self) -> OperatingCondition:
        """The operating conditions of :meth:`view` (p(+) unset is the data's prevalence)."""
        view = self.view()
        return view.condition(self._dataset(view).prevalence)

    def analysis(self) -> Analysis:
        """:func:`costdash.analyze` of the data set on the page under its view: the ticked
        classifiers only, at the conditions on screen."""
        view = self.view()
        dataset = self._dataset(view)
        # Right after the page switched data sets its list may still hold the previous one's
        # names for a moment: the ticked classifiers are those this data set has.
        ticked = view.selected(dataset.names) if view.models else None
        return analyze(dataset, view.condition(dataset.prevalence), models=ticked or None)

    def decision(self) -> Decision:
        """What ``costdash decide`` says for the view on the page now: the classifier and
        threshold to deploy, where they hold, and the policy over every PC(+)
        (:func:`costdash.decide` of :meth:`analysis`)."""
        return decide(self.analysis())

    def close(self) -> None:
        """Stop serving the page and remove the temporary folder."""
        _stop(self.app, self.folder)

    def _dataset(self, view: View) -> Any:
        return self.services.store.get(view.data or self.initial.data or "")

    def __repr__(self) -> str:
        return (f"<costdash Explore page at {self.url}: .decision() follows the view on "
                "the page>")


def show(data: Any, scores: Mapping[str, Sequence[float]] | None = None, /, *,
         p_pos: float | None = None, cost_fn: float | None = None,
         cost_fp: float | None = None, cost_tp: float | None = None,
         cost_tn: float | None = None, models: Sequence[str] | None = None,
         name: str | None = None, height: int = 900, host: str = "127.0.0.1",
         port: int | None = None, mode: str = "inline", **loader: Any) -> NotebookDashboard:
    """Open the Explore page of ``data`` inline in a notebook.

    Parameters
    ----------
    data : pandas.DataFrame, str, os.PathLike or array-like
        A frame in any layout :func:`costdash.load_predictions` reads, the path of a predictions
        file, or the true labels ``y_true`` when ``scores`` is given.
    scores : mapping of str to array-like, optional
        With ``y_true`` as ``data``: each classifier's scores, by name (the wide layout).
    p_pos, cost_fn, cost_fp, cost_tp, cost_tn : float, optional
        The conditions the page opens with (p(+) unset is the data's prevalence, the costs of
        errors unset are 1, of correct decisions 0), checked as ``costdash decide`` checks them.
    models : sequence of str, optional
        The classifiers ticked at the start (all when None); the data set keeps every one.
    name : str, optional
        The data set's name on the page (default: the file's name, ``DataFrame`` or
        ``scores``).
    height : int
        Height of the inline frame, in pixels.
    host, port : str, int
        Where the app listens (default 127.0.0.1 on a free port).
    mode : {"inline", "external", "tab", "jupyterlab"}
        Dash's ``jupyter_mode``: the frame in the cell, a link, a new tab, a JupyterLab tab.
    **loader
        Options of :func:`costdash.load_predictions` that change what the data means:
        ``layout``, ``label_column``, ``model_column``, ``score_column``, ``fold_column``,
        ``positive``, ``drop_missing``.

    Returns
    -------
    NotebookDashboard
        ``.decision()`` (the decision for the view on the page), ``.view()``, ``.analysis()``,
        ``.url`` and ``.close()``.

    Raises
    ------
    ParameterError
        A condition or classifier name out of range, or an unknown loader option.
    InputFileError
        What the loader says about the data.
    """
    known = sorted(set(LoaderOptions.__dataclass_fields__) - {"models"})
    unknown = sorted(set(loader) - set(known))
    if unknown:
        raise ParameterError(f"show() has no option {', '.join(unknown)}; its loader options "
                             f"are {', '.join(known)}")
    initial = View.parse({"p_pos": p_pos, "cost_fn": cost_fn, "cost_fp": cost_fp,
                          "cost_tp": cost_tp, "cost_tn": cost_tn,
                          "models": list(models) if models else None}, only=ON_SCREEN_FIELDS)
    folder = Path(tempfile.mkdtemp(prefix="costdash-notebook-"))
    try:
        # The embedded store in the temporary folder, whatever COSTDASH_* the kernel has: a
        # notebook's page never writes into a shared database or cache. Nothing expires while the
        # kernel runs, and the data is the user's own, so no row bound (the file's size bound
        # is raised to the file's size when it is stored, :func:`_put`).
        settings = Settings.from_env({}, data_dir=folder, upload_retention_days=0,
                                     maintenance_seconds=0, max_rows=10**12)
        app = create_app(settings)
        services: Services = app.server.extensions["costdash"]
        record = _store(services, data, scores, name, LoaderOptions(**loader))
        if initial.models:
            analyze(services.store.get(record.id), models=list(initial.models))  # names checked
        initial = View.parse({**initial.to_json(), "data": record.id}, only=ON_SCREEN_FIELDS)
        services.views.prime(record)
        key = f"notebook-view:{secrets.token_hex(8)}"
        record_view_on_screen(app, services, key, initial)
        start = "/explore" + initial.to_search()
        _open_root_at(app, start)
        _allow_notebook_frames(app)
        _no_session_storage(app.layout)
        url = _run(app, host, port, mode, height)
    except BaseException:
        shutil.rmtree(folder, ignore_errors=True)
        raise
    shown = NotebookDashboard(url=url.rstrip("/") + start, key=key, initial=initial, app=app,
                              folder=folder)
    # At exit, not when the object is dropped: the server (Dash keeps it) may still be serving
    # the frame from the folder.
    atexit.register(_stop, app, folder)
    return shown


# --- the view on screen ----------------------------------------------------------------------

def on_screen_view(previous: View, ref: Any, values: Mapping[str, Any]) -> View:
    """The view the page shows, from its data reference and the values of its boxes.

    A box holding a value the page refuses (empty while being typed in, out of range) keeps the
    field's previous value, as the page's view object keeps the last valid one
    (``assets/viewstate.js``); values that break a rule across fields (the cost of a correct
    decision above that of the error) keep the whole previous view. An empty classifier list
    keeps the previous one (the page draws nothing then and asks for a classifier).
    """
    raw = previous.to_json()
    data = ref.get("id") if isinstance(ref, dict) else None
    if valid_id(data):
        raw["data"] = data
    for name, value in values.items():
        if name == "models" and not value:
            continue
        try:
            parsed = field_named(name).parse(value)
        except ParameterError:
            continue
        if parsed is not None:
            raw[name] = field_named(name).to_json_value(parsed)
    try:
        return View.parse(raw, only=ON_SCREEN_FIELDS)
    except ParameterError:
        return previous


def record_view_on_screen(app: Dash, services: Services, key: str, initial: View) -> None:
    """Add to ``app`` the callback that records the Explore page's view (:func:`on_screen_view`)
    in the app's result cache under ``key``, whenever the data, the ticked classifiers or a
    condition changes on the page; before the first change the view is ``initial``. The
    callback has no outputs (Dash >= 2.17): it only listens."""

    @app.callback(Input(ids.DATASET_REF, "data"),
                  *[Input(element, prop) for _, element, prop in _INPUTS])
    def _record_view_on_screen(ref: Any, *values: Any) -> None:
        cache = services.views.cache
        text = cache.get(key)
        previous = View.parse(json.loads(text), only=ON_SCREEN_FIELDS) if text else initial
        view = on_screen_view(previous, ref, dict(zip((n for n, _, _ in _INPUTS), values)))
        # No expiry: the view stays as long as the page does (the cache is the app's own).
        cache.set(key, json.dumps(view.to_json()), timeout=0)


# --- data in, app out ------------------------------------------------------------------------

def _store(services: Services, data: Any, scores: Mapping[str, Sequence[float]] | None,
           name: str | None, options: LoaderOptions) -> Any:
    """Store ``data`` in the app's store as an upload would be; its record (a new handle)."""
    import numpy as np
    import pandas as pd

    if scores is not None:
        if not isinstance(scores, Mapping) or not scores:
            raise ParameterError("scores must be a mapping of classifier names to scores, "
                                 "e.g. {'gbm': gbm.predict_proba(X)[:, 1]}")
        label = _LABEL
        while label in scores:  # a classifier may be called "label"
            label = "_" + label
        frame = pd.DataFrame({label: np.asarray(data),
                              **{str(k): np.asarray(v, dtype=float) for k, v in scores.items()}})
        options = LoaderOptions(**{**options.__dict__, "label_column": label,
                                   "layout": "wide"})
        return _store_frame(services, frame, name or "scores", options)
    if isinstance(data, pd.DataFrame):
        return _store_frame(services, data, name or "DataFrame", options)
    if isinstance(data, (str, os.PathLike)):
        path = Path(data)
        return _put(services, path, name or path.name, options)
    raise ParameterError("show() takes a DataFrame, the path of a predictions file, or y_true "
                         f"with a mapping of classifier names to scores; not {type(data).__name__}")


def _store_frame(services: Services, frame: Any, name: str, options: LoaderOptions) -> Any:
    """A frame goes in as a Parquet file (the loader's fastest reader, types kept)."""
    frame = frame.rename(columns=str).reset_index(drop=True)
    path = Path(services.settings.data_dir) / "tmp" / f"{secrets.token_hex(8)}.parquet"
    path.parent.mkdir(parents=True, exist_ok=True)
    frame.to_parquet(path, index=False)
    try:
        filename = name if name.lower().endswith(".parquet") else f"{name}.parquet"
        return _put(services, path, filename, options)
    finally:
        path.unlink(missing_ok=True)


def _put(services: Services, path: Path, filename: str, options: LoaderOptions) -> Any:
    """Store a file of any size: the store's size bound is the server's guard against one
    upload taking its memory, and the loader reads at most the bound (plus one byte)."""
    store = services.store
    store.max_bytes = max(store.max_bytes, path.stat().st_size)
    return store.put(path, filename, options)


def _open_root_at(app: Dash, start: str) -> None:
    """The app's root opens this notebook's page (``start``: the Explore page with the data and
    conditions): Dash's inline frame (and Colab's) shows the root of the port. Ahead of the
    factory's own redirect of the root, which would open an empty Explore page."""

    def _root_to_notebook_page() -> Any:
        if request.method == "GET" and request.path == app.get_relative_path("/") \
                and not request.query_string:
            return redirect(app.get_relative_path(start))
        return None

    app.server.before_request_funcs.setdefault(None, []).insert(0, _root_to_notebook_page)


NOTEBOOK_FRAME_ANCESTORS = (
    "'self' http://localhost:* http://127.0.0.1:* https://localhost:* "
    "https://127.0.0.1:* vscode-webview: vscode-file: "
    "https://colab.research.google.com https://*.googleusercontent.com")
"""Who may frame a notebook's page: a notebook front end on this machine (Jupyter, JupyterLab),
VS Code's webviews, Colab's output frames, and the page's own origin (a Jupyter server proxy
serving it under the notebook's address). Any other site still may not."""


def _allow_notebook_frames(app: Dash) -> None:
    """Let the notebook frame the page. Every response of the dashboard forbids framing
    (``X-Frame-Options: DENY``, ``frame-ancestors 'none'``: a hosted page must not be
    clickjacked), which would leave the inline frame blank; this app serves one user's notebook
    on a loopback port, so framing is allowed to :data:`NOTEBOOK_FRAME_ANCESTORS`."""

    def _frame_in_notebook(response: Any) -> Any:
        response.headers.pop("X-Frame-Options", None)
        response.headers["Content-Security-Policy"] = \
            f"frame-ancestors {NOTEBOOK_FRAME_ANCESTORS}"
        return response

    # Flask runs a level's after-request functions last registered first: at the front of the
    # list this one runs after the dashboard's security headers were set.
    app.server.after_request_funcs.setdefault(None, []).insert(0, _frame_in_notebook)


def _no_session_storage(layout: Any) -> None:
    """Keep the shell's stores in the page's memory, not the browser's session storage.

    The frame's page (127.0.0.1) is another site than a notebook at ``localhost:8888``, and a
    browser that blocks third-party storage (Chromium headless, Chrome without third-party
    cookies, Safari) refuses a cross-site frame its session storage: Dash's store then throws
    and the page opens without its data. In a notebook the page is one tab's single-page app,
    so memory keeps the data set across its pages as the session would.
    """
    todo = [layout]
    while todo:
        node = todo.pop()
        if getattr(node, "storage_type", None) == "session":
            node.storage_type = "memory"
        children = getattr(node, "children", None)
        if isinstance(children, (list, tuple)):
            todo.extend(children)
        elif children is not None and not isinstance(children, str):
            todo.append(children)


def _free_port(host: str) -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind((host, 0))
        return int(s.getsockname()[1])


def _run(app: Dash, host: str, port: int | None, mode: str, height: int) -> str:
    """Serve ``app`` from a thread of this process and show it; the address of its root."""
    from dash._jupyter import jupyter_dash

    finish_setup(app.server)  # Dash's one-time setup before the threaded server's first request
    port = port or _free_port(host)
    if jupyter_dash.active:
        app.run(jupyter_mode=mode, jupyter_height=height, host=host, port=port)
        prefix = app.config.requests_pathname_prefix or "/"
        from dash._jupyter import _jupyter_config

        # Behind a Jupyter server proxy (Dash's infer_jupyter_proxy_config) the page is at the
        # notebook server's address under the proxy's prefix, as Dash's own frame is.
        base = str(_jupyter_config.get("server_url", f"http://{host}:{port}")).rstrip("/")
        return f"{base}{prefix}"
    # Not in a notebook (a script, a plain interpreter): the same server thread Dash would
    # start, and the address printed.
    import threading

    from werkzeug.serving import make_server

    server = make_server(host, port, app.server, threaded=True)
    threading.Thread(target=server.serve_forever, daemon=True,
                     name=f"costdash-notebook-{port}").start()
    app.server.extensions["costdash-notebook-server"] = server
    url = f"http://{host}:{port}/"
    print(f"costdash Explore page on {url}", file=sys.stderr)
    return url


def _stop(app: Dash, folder: Path) -> None:
    """Shut the app's server down (Dash's, or the thread :func:`_run` started) and remove the
    folder of its store; idempotent."""
    from dash._jupyter import jupyter_dash

    server = app.server.extensions.pop("costdash-notebook-server", None)
    if server is None:
        for where, running in list(jupyter_dash._servers.items()):
            if running.app is app.server:
                server = jupyter_dash._servers.pop(where)
    if server is not None:
        server.shutdown()
    maintenance = app.server.extensions.get("costdash-maintenance")
    if maintenance is not None:
        maintenance.stop()
    shutil.rmtree(folder, ignore_errors=True)
