"""HTTP routes beside the Dash app: ``POST /api/v1/datasets`` (upload) and ``GET`` of a record.

The upload is plain ``multipart/form-data`` streamed to disk by Werkzeug (never base64 through a
Dash callback): field ``file`` holds the predictions file, the other fields are loader options
named like the command line's (``positive``, ``layout``, ``label_column`` or ``label-column``,
``model_column``, ``score_column``, ``fold_column``, ``models``, ``drop_missing``,
``target_class``, ``segment_column``).

Replies: ``200 {"id", "name", "n", "classifiers", "target_class", "segment_column"}``;
``400 {"error": message}`` for a file or option the loader rejects (its message as it is; with
``"target_classes"`` when a multiclass file needs a target class); ``413 {"error": message}`` above the size limit;
``507`` when the disk is full. Temp files of a request go when it ends, however it ends.

Every view a route reads -- the form of ``POST /api/v1/analyses``, the query of the report and
CSV exports, a saved analysis -- is read by the one parser, :class:`costdash.view.View`: a bad
value is a 400 naming the field and its bounds, and conditions left out mean what they mean
everywhere (:meth:`~costdash.view.View.condition`).
"""

from __future__ import annotations

import errno
import json
import logging
import re
import time
from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager, contextmanager, nullcontext
from typing import Any

from flask import Blueprint, Flask, current_app, g, jsonify, request
from werkzeug.datastructures import MultiDict
from werkzeug.exceptions import ClientDisconnected, RequestEntityTooLarge

from costdash.analysis import analyze
from costdash.band_choice import band_choice
from costdash.decision import decide, decision_to_dict
from costdash.errors import CostdashError, InputFileError
from costdash.view import View
from dashboard.jobs.bandcache import BandCache, cost_band_key
from dashboard.jobs.gate import ComputeRefused, client_key, heavy_work, run_bounded
from dashboard.responses import link_root
from dashboard.services import Services
from dashboard.sharing import (VIEW_KEYS, AnalysisNotFound, NotAuthorized, analysis_summary,
                               clean_name, expiry_from_days, iso, saved_view)
from dashboard.storage import (AnalysisRecord, DatasetNotFound, DatasetRecord, LoaderOptions,
                               StorageFull, StorageUnavailable, valid_id)
from dashboard.uploads import UPLOAD_PREFIX, HashingFile, UploadRequest, sweep_upload_files

__all__ = ["UPLOAD_PREFIX", "HashingFile", "UploadRequest", "api", "install_api", "report_inputs",
           "sweep_upload_files"]

log = logging.getLogger(__name__)

FORM_OVERHEAD = 256 * 1024
"""Room for the multipart framing and option fields on top of the file size limit."""

MAX_FORM_FIELD = 500 * 1024
MAX_FORM_PARTS = 200
"""Werkzeug's limits on the non-file form fields (names and options are short)."""


def _size(n: int) -> str:
    for unit, scale in (("GB", 1024**3), ("MB", 1024**2), ("kB", 1024)):
        if n >= scale:
            return f"{n / scale:.1f} {unit}"
    return f"{n} bytes"


def _error(message: str, status: int):
    return jsonify({"error": message}), status


class UploadRejected(Exception):
    """An upload refused before the loader ran; carries the reply."""

    def __init__(self, response: Any):
        super().__init__("upload rejected")
        self.response = response


ANALYSIS_FIELDS = (*(k for k in VIEW_KEYS if k != "models"), "name", "expires_in_days")
"""Form fields of ``POST /api/v1/analyses`` that are not loader options: the view (but
``models``, which is both: the loader keeps those classifiers and the view ticks them), the name
and the expiry."""


def check_name_and_expiry(name: str | None, expires_in_days: str | None) -> None:
    """Refuse a bad name or expiry before anything is stored."""
    if name is not None:
        clean_name(name)
    expiry_from_days(expires_in_days, 0.0)


def safe_filename(name: str) -> str:
    """The file's own name: no directories (``../../x.csv`` is ``x.csv``), no control chars."""
    base = name.replace("\\", "/").rsplit("/", 1)[-1]
    base = "".join(ch for ch in base if ch.isprintable()).strip()
    return base[:200] or "upload"


def effective_view(view: View, prevalence: float) -> dict[str, Any]:
    """A saved view as the API shows it: its JSON with the conditions actually analysed (p(+)
    unset is the data's prevalence)."""
    return view.effective(prevalence).to_json()


def query_view(dataset_id: str) -> View:
    """The view in the request's query string (strict; unknown parameters ignored), of the
    data set the path names (a ``data`` in the query is not this route's business).

    Raises
    ------
    ParameterError
        A bad value, naming the field and its bounds.
    """
    view = View.parse(request.args.to_dict(flat=False), only=VIEW_KEYS)
    return view.with_values(data=dataset_id)


api = Blueprint("costdash_api", __name__, url_prefix="/api/v1")
"""The routes under ``/api/v1``; each app registers it (:func:`install_api`), and its route
functions find that app's :class:`~dashboard.services.Services` with :func:`_services`."""


def _services() -> Services:
    """The services of the app serving the request."""
    return current_app.extensions["costdash"]


def _limit() -> int:
    return _services().settings.max_upload_bytes


def _too_large(size: int | None = None):
    what = f"The file is {_size(size)}" if size else "The file is too large"
    return _error(f"{what}, over the {_size(_limit())} upload limit.", 413)


@api.errorhandler(RequestEntityTooLarge)
def _on_too_large(_exc):
    if request.content_length is not None and \
            request.content_length <= _limit() + FORM_OVERHEAD:
        # Werkzeug's form limits, not the file's size.
        return _error(f"The form is too large: a field over {_size(MAX_FORM_FIELD)} or more "
                      f"than {MAX_FORM_PARTS:,} fields. Send the file in 'file' and only the "
                      "documented options.", 413)
    return _too_large()


def receive_upload(form_fields: dict[str, Any], new_dataset: list[str]) -> DatasetRecord:
    """Store the request's file (field ``file``) read with the loader options in
    ``form_fields``; raises :class:`UploadRejected` with the reply to send otherwise.
    The new handle is appended to ``new_dataset``."""
    services, limit = _services(), _limit()
    f = request.files.get("file")
    if f is None or not f.filename:
        raise UploadRejected(_error("No file: send the predictions file in the multipart "
                                    "field 'file'.", 400))
    stream = f.stream
    if isinstance(stream, HashingFile):
        stream.flush()
        if stream.size > limit:
            raise UploadRejected(_too_large(stream.size))
        source, sha = stream.path, stream.sha256
    else:  # a request class other than ours (should not happen): read it whole
        data = stream.read()
        if len(data) > limit:
            raise UploadRejected(_too_large(len(data)))
        source, sha = data, None
    options = LoaderOptions.from_form(form_fields)

    phases = _phases()
    t = time.perf_counter()
    record = services.store.put(source, safe_filename(f.filename), options, sha256=sha)
    new_dataset.append(record.id)  # this request's own handle: undone if the request fails
    phases["store"] = time.perf_counter() - t  # reading the file and writing it
    t = time.perf_counter()
    services.views.prime(record)
    phases["prime"] = time.perf_counter() - t
    return record


def _phases() -> dict[str, float]:
    """The request's upload phases in seconds (``Server-Timing`` of the upload route)."""
    if "upload_phases" not in g:
        g.upload_phases = {}
    return g.upload_phases


def _discard(new_dataset: list[str]) -> None:
    """Remove the handle this request made before failing (and data nothing else needs)."""
    services = _services()
    for dataset_id in new_dataset:
        try:
            services.store.discard_dataset(dataset_id)
            services.views.forget(dataset_id)
        except Exception:  # noqa: BLE001 - the original failure is the one to report
            log.exception("could not remove the data set %s of a failed upload", dataset_id)


def handle_upload(reply):
    """Run ``reply(new_dataset)`` (which receives an upload) turning every failure into a JSON
    error, and remove the request's temporary files whatever happens."""
    limit = _limit()
    # Before anything reads the form: a body over the limit is refused unread.
    request.max_content_length = limit + FORM_OVERHEAD
    request.max_form_memory_size = MAX_FORM_FIELD
    request.max_form_parts = MAX_FORM_PARTS
    if request.content_length is not None and request.content_length > limit + FORM_OVERHEAD:
        return _too_large(request.content_length)
    new_dataset: list[str] = []
    try:
        # Reading the form (inside the try: a chunked body over the limit or a client that
        # hangs up fails here, and its temp file must go too; UploadRequest.close removes
        # every temp file of the request in any case).
        t = time.perf_counter()
        request.files  # noqa: B018 - parses the form
        _phases()["form"] = time.perf_counter() - t
        return reply(new_dataset)
    except UploadRejected as rejected:
        return rejected.response
    except (RequestEntityTooLarge, StorageUnavailable, ClientDisconnected):
        _discard(new_dataset)
        raise
    except CostdashError as exc:
        _discard(new_dataset)
        return _error(str(exc), 400)
    except OSError as exc:
        _discard(new_dataset)
        if exc.errno in (errno.ENOSPC, errno.EDQUOT):
            raise StorageFull("the server's disk is full") from exc
        name = getattr(request.files.get("file"), "filename", None)
        log.exception("upload of %r failed", name)
        return _error("The server failed while reading the file; the error is in its log.", 500)
    except Exception:  # noqa: BLE001 - a JSON reply beats an HTML 500 page for the browser
        _discard(new_dataset)
        name = getattr(request.files.get("file"), "filename", None)
        log.exception("upload of %r failed", name)
        return _error("The server failed while reading the file; the error is in its log.", 500)
    finally:
        request.close()  # the temp files, now (Flask would at the end of the request)


@api.post("/datasets")
def create_dataset():
    # Server-Timing (issue 23): the route's wall and CPU time (this thread's; pyarrow's reader
    # threads not counted), readable in the browser's Resource Timing and the benchmark's.
    t, cpu = time.perf_counter(), time.thread_time()
    response = current_app.make_response(handle_upload(_create_dataset))
    # Its phases too: receiving the form, reading and storing the file, priming the view model.
    response.headers["Server-Timing"] = ", ".join([
        f"total;dur={(time.perf_counter() - t) * 1000:.1f}",
        f"cpu;dur={(time.thread_time() - cpu) * 1000:.1f}",
        *(f"{name};dur={seconds * 1000:.1f}" for name, seconds in _phases().items())])
    return response


def _create_dataset(new_dataset: list[str]):
    """The upload's reply (see :func:`handle_upload`): the record's summary with the data set's
    ``target_class`` and ``segment_column`` (issue 28); a multiclass file refused for want of a
    target class answers 400 with ``target_classes``, the classes to choose from."""
    try:
        record = receive_upload(request.form, new_dataset)
    except InputFileError as exc:
        f = request.files.get("file")
        stream = getattr(f, "stream", None)
        options = LoaderOptions.from_form(request.form)  # read already: it is valid
        if options.target_class is None and isinstance(stream, HashingFile):
            from costdash.one_vs_rest import target_classes_of

            try:
                classes = target_classes_of(stream.path, name=safe_filename(f.filename),
                                            label_column=options.label_column,
                                            max_bytes=_limit())
            except CostdashError:
                classes = ()
            if classes:
                return jsonify({"error": str(exc), "target_classes": list(classes)}), 400
        raise
    return jsonify({**record.summary(), "target_class": record.options.target_class,
                    "segment_column": record.options.segment_column})


# --- shared analyses (dashboard.sharing) -----------------------------------------------------------

def _links(record: AnalysisRecord, manage_token: str | None = None) -> dict[str, Any]:
    root = link_root() or ""
    out: dict[str, Any] = {"url": None if record.revoked else f"{root}/s/{record.share_token}"}
    if manage_token is not None:
        out["manage_url"] = f"{root}/manage/{manage_token}"
    return out


def _save_analysis(new_dataset: list[str]):
    """The reply of ``POST /analyses`` once the form is read (see :func:`handle_upload`)."""
    loader_fields = MultiDict([(k, v) for k, v in request.form.items(multi=True)
                               if k not in ANALYSIS_FIELDS])
    # Checked before anything is stored.
    view = View.parse(request.form.to_dict(flat=False), only=VIEW_KEYS)
    check_name_and_expiry(request.form.get("name"), request.form.get("expires_in_days"))
    record = receive_upload(loader_fields, new_dataset)
    if view.models:  # the loader matched the names its way: tick what it kept
        view = view.with_values(models=list(record.classifiers))
    # This upload's own file name: the stored record may carry another uploader's.
    name = request.form.get("name") or safe_filename(request.files["file"].filename)
    services = _services()
    new = services.sharing.create(record.id, name=name, view=view.to_json(),
                                  expires_in_days=request.form.get("expires_in_days"))
    # The caller asked for an analysis, not an upload to keep: the analysis reads the data
    # through its own handle, and deleting it leaves nothing of this request behind.
    services.store.discard_dataset(record.id)
    services.views.forget(record.id)
    new_dataset.clear()
    body = {"id": new.record.id, **_links(new.record, new.manage_token),
            "manage_token": new.manage_token, "name": new.record.name,
            "dataset_id": new.record.dataset_id, "expires_at": iso(new.record.expires_at)}
    return jsonify(body), 201


@api.post("/analyses")
def create_analysis():
    return handle_upload(_save_analysis)


@api.get("/analyses/<token>")
def get_analysis(token: str):
    services = _services()
    try:
        record = services.sharing.open(token)
    except AnalysisNotFound as exc:
        return _error(str(exc), 404)
    # A read link hands out a picture of the curves, not the predictions: each classifier's
    # ROC thinned to the dashboard's resolution (from every point, with the counts, one could
    # rebuild each classifier's scores and labels), hull and envelope exact. The manage token
    # (the owner's) gets every point.
    full = bool(request.headers.get("Authorization"))
    if full:
        try:
            services.sharing.authorize(record.id, request.headers.get("Authorization"))
        except NotAuthorized as exc:
            return _error(str(exc), 401 if exc.missing else 403)
    if not full:
        services.sharing.record_open(record)
    max_points = None if full else services.settings.max_roc_points
    view = saved_view(record.view)
    stored = services.store.info(record.dataset_id)
    try:
        if stored is None:
            raise DatasetNotFound(f"no data set with id '{record.dataset_id}' is stored here")
        text = services.views.analysis_json_text(record.dataset_id, view,
                                                 max_points=max_points)
    except DatasetNotFound as exc:
        return _error(str(exc), 404)
    summary = analysis_summary(record, managed=full)
    if not full:
        # Issue 22: a read link's holder never holds a data handle, not even the read-only
        # one (with it, every route of the data set answers); the owner's answer keeps it.
        del summary["dataset_id"]
    extra = {"view": effective_view(view, stored.prevalence),
             "analysis": {**summary, **_links(record),
                          "roc_points": "all" if full else f"at most {max_points} per classifier"}}
    # The analysis is a JSON object without these two keys: append them to its text.
    body = text[:-1] + "," + json.dumps(extra, separators=(",", ":"))[1:]
    return current_app.response_class(body, mimetype="application/json")


def _managed_record(analysis_id: str) -> AnalysisRecord:
    return _services().sharing.authorize(analysis_id, request.headers.get("Authorization"))


@api.patch("/analyses/<analysis_id>")
def update_analysis(analysis_id: str):
    sharing = _services().sharing
    try:
        record = _managed_record(analysis_id)
        body = request.get_json(silent=True)
        if not isinstance(body, dict):
            return _error("send a JSON object such as {\"name\": \"...\", "
                          "\"expires_in_days\": 30}", 400)
        unknown = set(body) - {"name", "expires_in_days"}
        if unknown:
            return _error(f"unknown field(s): {', '.join(sorted(unknown))}; known: name, "
                          "expires_in_days", 400)
        if "name" in body:
            record = sharing.rename(record, body["name"])
        if "expires_in_days" in body:
            record = sharing.set_expiry(record, body["expires_in_days"])
    except NotAuthorized as exc:
        return _error(str(exc), 401 if exc.missing else 403)
    except AnalysisNotFound as exc:
        return _error(str(exc), 404)
    except StorageUnavailable:
        raise
    except CostdashError as exc:
        return _error(str(exc), 400)
    return _managed_reply(record)


def _managed_reply(record: AnalysisRecord):
    return jsonify({"analysis": {**analysis_summary(record, managed=True), **_links(record)}})


@api.post("/analyses/<analysis_id>/link")
def replace_link(analysis_id: str):
    """A new read-only link; the old one answers 404 from now on (the analysis stays)."""
    return _relink(analysis_id, lambda sharing, record: sharing.replace_link(record))


@api.delete("/analyses/<analysis_id>/link")
def revoke_link(analysis_id: str):
    """No read-only link any more (the analysis stays; POST makes a new one)."""
    return _relink(analysis_id, lambda sharing, record: sharing.revoke_link(record))


def _relink(analysis_id: str, change: Callable[[Any, AnalysisRecord], AnalysisRecord]):
    try:
        record = change(_services().sharing, _managed_record(analysis_id))
    except NotAuthorized as exc:
        return _error(str(exc), 401 if exc.missing else 403)
    except AnalysisNotFound as exc:
        return _error(str(exc), 404)
    return _managed_reply(record)


@api.delete("/analyses/<analysis_id>")
def delete_analysis(analysis_id: str):
    try:
        _services().sharing.delete(_managed_record(analysis_id))
    except NotAuthorized as exc:
        return _error(str(exc), 401 if exc.missing else 403)
    except AnalysisNotFound as exc:
        return _error(str(exc), 404)
    return "", 204


@api.delete("/datasets/<dataset_id>")
def delete_dataset(dataset_id: str):
    """Delete an upload: its handle is the right to it, and only that handle goes (the same
    bytes uploaded by someone else, and analyses shared from it, stay)."""
    services = _services()
    if not (valid_id(dataset_id) and services.store.discard_dataset(dataset_id)):
        return _error(f"no data set with id '{dataset_id}'", 404)
    services.views.forget(dataset_id)
    return "", 204


@api.get("/openapi.json")
def openapi():
    from dashboard.api.openapi_doc import openapi_document

    return jsonify(openapi_document(link_root()))


@api.get("/datasets/<dataset_id>")
def dataset_info(dataset_id: str):
    record = _services().store.info(dataset_id) if valid_id(dataset_id) else None
    if record is None:
        return _error(f"no data set with id '{dataset_id}'", 404)
    # A read-only link's handle reads what its page shows; only an upload's handle deletes
    # or shares (``read_only`` says which this is).
    return jsonify({**record.summary(), "n_pos": record.n_pos, "n_neg": record.n_neg,
                    "positive_label": record.positive_label, "layout": record.layout,
                    "read_only": record.read_only})


# --- static exports: the HTML report and the CSV tables (dashboard.report) ------------------------

def computed_bands(dataset_id: str, record, view: View) -> tuple[list, list[str]]:
    """Bootstrap bands already computed for this data set (on the Confidence page), of the
    ticked classifiers only: those of the ``band`` parameters (repeatable), else of the
    view's ``model``, else of every scored classifier; at the view's ``threshold``,
    band choice (``method``, ``simultaneous``: :func:`costdash.band_choice.band_choice`,
    the same key as the page's), ``replicates`` and ``seed``, read at its ``level``. A
    report never starts a job: a band not computed yet is simply left out. Returns the bands
    and their cache keys (part of the report's own key: a band computed later makes a new
    report). ``record`` is the data set's record (nothing is loaded: its view model names the
    scored classifiers)."""
    model = _services().views.full(dataset_id)
    scored = [c["name"] for c in model["classifiers"] if c["scored"]]
    ticked = set(view.selected([c["name"] for c in model["classifiers"]]))
    asked = request.args.getlist("band")
    if asked:
        wanted = list(dict.fromkeys(asked))
    elif view.model is not None:
        wanted = [view.model]
    else:
        wanted = scored
    cache = BandCache(_services().views.cache)
    # Scored classifiers only: a fixed threshold is the only "fixed" question here.
    choice = band_choice(getattr(view, "method", None), getattr(view, "simultaneous", False),
                         fixed=view.threshold is not None)
    bands, keys = [], []
    for model_name in wanted:
        if model_name not in scored or model_name not in ticked:
            continue
        key = cost_band_key(dataset_id, model_name, view.threshold, view.replicates,
                            view.seed, choice)
        band = cache.get(key)
        if band is not None:
            bands.append(band.at_level(view.level))
            keys.append(key)
    return bands, keys


def _download_name(record_name: str, suffix: str) -> str:
    stem = re.sub(r"[^A-Za-z0-9._-]+", "_", record_name.rsplit(".", 1)[0]).strip("._")
    return f"{stem or 'costdash'}-{suffix}"


def _attachment(response, record_name: str, suffix: str):
    """``response``, saved by the browser as ``<data set>-<suffix>``."""
    response.headers["Content-Disposition"] = (
        f'attachment; filename="{_download_name(record_name, suffix)}"')
    return response


def _wants_html() -> bool:
    """Whether the client reads HTML before JSON (a browser following a "Download report"
    link does; an API client, which sends no Accept or asks for JSON, gets JSON)."""
    return request.accept_mimetypes.best_match(["application/json", "text/html"]) == "text/html"


def _readable_error(dataset_id: str, reply: tuple[Any, int]):
    """A JSON error reply of the report as a small HTML page: what is wrong, in the same
    words, and a way back to the view on Explore (which shows the value it had to leave out)."""
    from html import escape

    from dashboard.responses import page

    response, status = reply
    message = escape(response.get_json()["error"])
    if status == 404:
        return page("Report not available", (
            f"<h1>No report: this data set is not here</h1><p>{message}</p>"
            "<p><a href='/explore'>Open costdash</a> to analyse your predictions.</p>"), status)
    query = request.query_string.decode("utf-8", "replace")
    back = escape(f"/explore?data={dataset_id}" + (f"&{query}" if query else ""), quote=True)
    return page("Report not made", (
        f"<h1>The report could not be made for this view</h1><p>{message}</p>"
        f"<p><a href='{back}'>Open this view on Explore</a> to correct it, then download the "
        "report again.</p>"), status)


def _view_of(dataset_id: str):
    """``((record, view), None)``: a stored data set's record (nothing loaded) and the query's
    view; or ``(None, error reply)``: 404 for an unknown data set, 400 for a bad view value."""
    record = _services().store.info(dataset_id) if valid_id(dataset_id) else None
    if record is None:
        return None, _error(f"no data set with id '{dataset_id}'", 404)
    try:
        view = query_view(dataset_id)
    except CostdashError as exc:
        return None, _error(str(exc), 400)
    return (record, view), None


def _result(dataset_id: str, make: Callable[[Any, View], str]):
    """``((record, text), None)``: ``make(record, view)`` of the query's view (a result of the
    results service, its text), or ``(None, error reply)``: 404 for an unknown or vanished data
    set, 400 for a bad view value or a ticked classifier the data lacks."""
    found, error = _view_of(dataset_id)
    if error is not None:
        return None, error
    record, view = found
    try:
        return (record, make(record, view)), None
    except StorageUnavailable:
        raise
    except DatasetNotFound:
        return None, _error(f"no data set with id '{dataset_id}'", 404)
    except CostdashError as exc:
        return None, _error(str(exc), 400)


REPORT_CHOICE_POINTS = 400
"""Points per threshold-choice curve in a report (:data:`dashboard.report.choice.CHOICE_MAX_POINTS`;
not imported: the report's plotly modules load only when a report is built)."""


@api.get("/datasets/<dataset_id>/report.html")
def dataset_report(dataset_id: str):
    """The report of the query's view, through the results service (kind ``report``): built
    once per data set, view and the bands computed by then, then served from the cache; in the
    thinned scope for a read-only handle (:func:`dashboard.report.build_report`'s
    ``max_points``).

    It loads plotly.js from this server (the file Dash serves dcc.Graph, at a fingerprinted
    address cached for a year: :func:`dashboard.report.format.plotly_js_url`), 5 MB less to
    download; ``?standalone=1`` embeds it (a file that opens offline), and so does every report
    when the server's own address is not known (:func:`dashboard.responses.link_root`: a
    relative address would not resolve in a downloaded file)."""
    from dashboard.report import build_report
    from dashboard.report.format import plotly_js_url
    from dashboard.results import calibrated_entry_texts, keep_calibrated, run_alongside

    services = _services()
    results = services.results
    standalone_asked = request.args.get("standalone", "").lower() in ("1", "true", "yes")

    def report(record, view: View) -> str:
        scope = "thinned" if record.read_only else "full"
        bands, band_keys = computed_bands(dataset_id, record, view)
        url = link_root()
        standalone = standalone_asked or url is None
        plotly_src = None if standalone else plotly_js_url(url)
        search = view.without("data").to_search()
        standalone_url = None if url is None else (
            f"{url}/api/v1/datasets/{dataset_id}/report.html{search}"
            f"{'&' if search else '?'}standalone=1")

        def build(scope_: str) -> str:
            # Only a report not cached yet gets here: it takes one slot of the compute gate
            # (issue 22, finding 7: ~3.3 s of CPU each, 16 at once held /healthz for 25 s)
            # and computes in child processes stopped at the slot's deadline.
            with heavy_work(services, client_key(), "report", handle=dataset_id) as deadline:
                def bounded(fn: Callable[[], Any]) -> Any:
                    return run_bounded(fn, timeout=deadline.seconds_left(), what="report")

                def choice_text() -> str:
                    # Its threshold choice through the same door as the page's and
                    # choice.json's (the condition-free curves shared with them), under the
                    # same slot.
                    return results.choice_text(dataset_id, view, max_points=REPORT_CHOICE_POINTS,
                                               run=lambda: nullcontext(bounded))

                max_points = results.max_points(scope_)
                # Issue 23: a choice whose base is not kept yet (no Threshold choice page or
                # choice.json before this report) is computed here while the child builds the
                # other sections (two processes), from the analysis made here once for both.
                alongside = not results.choice_ready(dataset_id, view, scope_,
                                                     max_points=REPORT_CHOICE_POINTS)
                dataset = None  # read in the child (a Parquet read), unless read here
                if alongside:
                    dataset = services.store.get(dataset_id)
                    analysis = results.choice_analysis(dataset_id, scope_, view.models,
                                                       dataset=dataset)
                else:
                    choice = json.loads(choice_text())
                # What the dashboard already keeps (the cached view model, calibrated curves),
                # read here: the child inherits it instead of analysing the data again.
                kept = report_inputs(services, dataset_id, max_points, view)
                if alongside:
                    kept["analysis"] = analysis  # the report's own (build_report's analysis)

                def child(later: Callable[[], str] | None = None) -> list:
                    fitted: dict = {}
                    html = build_report(
                        services.store.get(dataset_id) if dataset is None else dataset,
                        view=view, name=record.name,
                        bands=bands or None, dashboard_url=url, max_points=max_points,
                        choice=choice if later is None else (lambda: json.loads(later())),
                        plotly_src=plotly_src, standalone_url=standalone_url, fitted=fitted,
                        **kept)
                    return [html, calibrated_entry_texts(fitted, max_points)]

                def choice_here() -> str:
                    results.choice_base(dataset_id, scope_, view.models, view.calibration,
                                        analysis=analysis)  # kept: choice_text uses it
                    return choice_text()

                html, fitted_texts = (run_alongside(bounded, child, choice_here) if alongside
                                      else bounded(child))
                # The calibrations the child fitted do not depend on the view (issue 23: ~0.9
                # CPU s at 200,000 scores): kept here, as the Curves page keeps them (a child
                # writes nothing to the cache), the next view's report reads them.
                keep_calibrated(results, dataset_id, fitted_texts, scope_)
                return html

        return results.text("report", dataset_id,
                            {"view": view.to_json(), "bands": band_keys, "url": url,
                             "name": record.name, "plotly": plotly_src}, build, scope=scope,
                            checked=False)

    try:
        found, error = _result(dataset_id, report)
    except ComputeRefused as exc:
        if not _wants_html():
            raise  # the gate's handler: JSON with Retry-After
        # A browser following "Download report": a page saying so, with the same status.
        from html import escape

        from dashboard.responses import page

        busy = page("Report not made yet", (
            f"<h1>The report was not made yet</h1><p>{escape(exc.message)}</p>"
            "<p>Download it again in a moment.</p>"), exc.status)
        busy.headers["Retry-After"] = str(exc.retry_after)
        return busy
    if error is not None:
        return _readable_error(dataset_id, error) if _wants_html() else error
    record, html = found
    response = _attachment(current_app.response_class(html, mimetype="text/html"), record.name,
                           "report.html")
    response.headers["X-Content-Type-Options"] = "nosniff"
    return response


@api.get("/datasets/<dataset_id>/<name>.csv")
def dataset_csv(dataset_id: str, name: str):
    """A table of the ticked classifiers (their overall hull and envelope); the view's
    conditions do not change it, but a bad one is still refused. Through the results service
    (kind ``csv``: once per data set, ticked classifiers and table)."""
    from dashboard.report import CSV_NAMES, csv_exports

    services = _services()

    def table(record, view: View) -> str:
        if name not in CSV_NAMES:
            raise _NoSuchExport(name)

        def build(_scope: str) -> str:
            dataset = services.store.get(dataset_id)
            analysis = analyze(dataset, view.condition(dataset.prevalence), models=view.models)
            return csv_exports(analysis)[f"{name}.csv"]

        return services.results.text(
            "csv", dataset_id, {"name": name, "models": list(view.models or ())}, build,
            scope="thinned" if record.read_only else "full", checked=False)

    try:
        found, error = _result(dataset_id, table)
    except _NoSuchExport:
        return _error(f"no export named '{name}.csv'; exports: "
                      + ", ".join(f"{n}.csv" for n in CSV_NAMES), 404)
    if error is not None:
        return error
    record, text = found
    return _attachment(current_app.response_class(text, mimetype="text/csv"), record.name,
                       name + ".csv")


class _NoSuchExport(Exception):
    """A CSV name that is not one of :data:`dashboard.report.CSV_NAMES`."""


DECISION_FIELDS = ("models", "p_pos", "cost_fn", "cost_fp", "cost_tp", "cost_tn")
"""The view fields a decision depends on (its key)."""


@api.get("/datasets/<dataset_id>/decision.json")
def dataset_decision(dataset_id: str):
    """The decision to deploy for the view in the query (``costdash decide --json``), through
    the results service (kind ``decision``): from the ticked classifiers' hull (exact, the one
    every page shows), with nothing loaded but the cached view model; for a data set with a
    segment column also ``decision.segments`` (:func:`dashboard.results.segments_result`,
    computed through the compute gate; refused, ``segments_error`` says so, uncached)."""
    services = _services()

    def decision(record, view: View) -> str:
        refused: list[ComputeRefused] = []

        def build(_scope: str) -> str:
            from costdash.analysis import Analysis, choose
            from costdash.costspace import lower_envelope

            hull = services.views.hull(dataset_id, list(view.models) if view.models else None)
            condition = view.condition(record.prevalence)
            # decide reads only the hull, its envelope and the choice at the conditions.
            analysis = Analysis(dataset=None, classifiers=(), hull=hull,  # type: ignore[arg-type]
                                envelope=lower_envelope(hull),
                                operating_point=choose(hull, condition))
            out = decision_to_dict(decide(analysis))
            if record.options.segment_column is not None:
                # A policy per segment, as ``costdash decide --segment-column`` adds it.
                from dashboard.results import segments_result

                try:
                    found = segments_result(services.results, dataset_id, view,
                                            run=gated(services, "segments", dataset_id))
                except ComputeRefused as exc:  # the decision stands; the segments say why not
                    refused.append(exc)            # (and it is not cached so)
                    found = {"segment_column": record.options.segment_column,
                             "error": exc.message}
                if "segments" in found:
                    out["decision"].update(segments=found["segments"],
                                           segment_column=found["segment_column"],
                                           segment_saving_per_case=found["saving_per_case"])
                elif found.get("error"):
                    out["decision"].update(segment_column=found["segment_column"],
                                           segments_error=found["error"])
            return json.dumps(out, allow_nan=False)

        relevant = {k: v for k, v in view.to_json().items() if k in DECISION_FIELDS}
        return services.results.text("decision", dataset_id, {"view": relevant}, build,
                                     scope="thinned" if record.read_only else "full",
                                     checked=False, keep=lambda _text: not refused)

    found, error = _result(dataset_id, decision)
    if error is not None:
        return error
    record, text = found
    return _attachment(current_app.response_class(text, mimetype="application/json"),
                       record.name, "decision.json")


CHOICE_MAX_POINTS = 4000
"""Each threshold-choice curve of ``choice.json`` is thinned to at most this many points (the
expected losses stay exact; ``analyze --json`` gives every point); through a read-only handle to
at most ``max_roc_points``, from ROC curves thinned as much."""


@api.get("/datasets/<dataset_id>/choice.json")
def dataset_choice(dataset_id: str):
    """Beyond the envelope for the view in the query (the Threshold choice page): each ticked
    classifier's threshold-choice curves, H-measure and Brier score (the keys ``analyze
    --json`` adds), decision curves, and the robust choices over the view's sensitivity box.
    Through the results service (:meth:`dashboard.results.Results.choice_text`): a new
    condition computes only its own part."""
    services = _services()
    found, error = _result(dataset_id, lambda record, view: services.results.choice_text(
        dataset_id, view, max_points=CHOICE_MAX_POINTS,
        run=gated(services, "threshold choice", dataset_id)))
    if error is not None:
        return error
    record, text = found
    return _attachment(current_app.response_class(text, mimetype="application/json"),
                       record.name, "choice.json")


@api.get("/datasets/<dataset_id>/threshold-money.json")
def dataset_threshold_money(dataset_id: str):
    """Issue 28 for the view in the query: money against the threshold of one classifier (the
    view's ``model``, else the current choice's), its cheapest threshold and the view's pins
    for it, the top-fraction table with the capacity's row, and "calibrate, then choose" (the
    Threshold choice and Curves pages' numbers), through the results service (kinds
    ``threshold-money``, ``calibrate-choose``); the thinned curves for a read-only handle."""
    services = _services()

    def make(record, view: View) -> str:
        from costdash.errors import ParameterError
        from costdash.hull import optimal_vertex
        from dashboard.results import calibrate_choose_result, threshold_money_result

        names = [c["name"] for c in services.views.full(dataset_id)["classifiers"]]
        unknown = [m for m in view.models or () if m not in names]
        if unknown:
            raise ParameterError(f"no classifier named {', '.join(unknown)} in this data set")
        ticked = view.selected(names) or names
        condition = view.condition(record.prevalence)
        if view.model in ticked:
            model = view.model
        else:
            best = optimal_vertex(services.views.hull(dataset_id, ticked), condition).classifier
            model = best if best in ticked else ticked[0]
        share = (None if view.capacity is None or view.volume <= 0
                 else float(view.capacity) / float(view.volume))
        pins = [t for n, t in view.pins or () if n == model]
        money = threshold_money_result(services.results, services.views, dataset_id, model,
                                       condition, share, pins)
        return json.dumps({
            "classifier": model, "volume": view.volume, "unit": view.unit,
            "conditions": {"p_pos": condition.p_pos, "cost_fn": condition.cost_fn,
                           "cost_fp": condition.cost_fp, "cost_tp": condition.cost_tp,
                           "cost_tn": condition.cost_tn, "pc": condition.pc},
            "cheapest": money["cheapest"], "pins": money["pins"],
            "curve": {k: money[k] for k in ("threshold", "fpr", "tpr", "expected_cost")},
            "top_fractions": money["table"],
            "calibrate_then_choose": calibrate_choose_result(
                services.results, services.views, dataset_id, model, condition)},
            allow_nan=False)

    found, error = _result(dataset_id, make)
    if error is not None:
        return error
    record, text = found
    return _attachment(current_app.response_class(text, mimetype="application/json"),
                       record.name, "threshold-money.json")


def gated(services: Services, what: str, handle: str
          ) -> Callable[[], AbstractContextManager[Callable[[Callable[[], Any]], Any]]]:
    """The ``run`` of :meth:`dashboard.results.Results.choice_text`'s misses: a slot of the
    compute gate (:func:`dashboard.jobs.gate.heavy_work`), counted against this request's client
    and ``handle``, whose ``bounded(fn)`` runs ``fn`` in a child process stopped at the slot's
    deadline. Raises :class:`dashboard.jobs.gate.ComputeRefused` (answered 429/503 with
    ``Retry-After``)."""
    client = client_key()

    @contextmanager
    def run() -> Iterator[Callable[[Callable[[], Any]], Any]]:
        with heavy_work(services, client, what, handle=handle) as deadline:
            yield lambda fn: run_bounded(fn, timeout=deadline.seconds_left(), what=what)

    return run


def healthz():
    """``GET /healthz``, a load balancer's probe: answers only when the store can be read."""
    try:
        _services().store.ping()
    except Exception as exc:  # noqa: BLE001 - any storage failure means "not healthy"
        return jsonify({"status": "error", "error": type(exc).__name__}), 503
    return jsonify({"status": "ok"})


def install_api(server: Flask, services: Services) -> None:
    """Serve the API on ``server``: the upload request class, the body limit, the
    :data:`api` routes and ``/healthz`` (``services`` must be ``server.extensions["costdash"]``,
    where the routes read them)."""
    server.request_class = UploadRequest
    if server.config.get("MAX_CONTENT_LENGTH") is None:
        # Every route, not only the upload routes: a form with a file part sent anywhere is
        # spooled to the data dir until the request ends.
        server.config["MAX_CONTENT_LENGTH"] = services.settings.max_upload_bytes + FORM_OVERHEAD
    server.register_blueprint(api)
    server.add_url_rule("/healthz", "healthz", healthz)


def report_inputs(services: Any, dataset_id: str, max_points: int | None,
                  view: View | None = None) -> dict[str, Any]:
    """:func:`dashboard.report.build_report`'s ``view_model`` and ``calibrated`` of a stored
    data set, from what the dashboard already keeps, for a report in the scope of
    ``max_points``; call it in the web process before the report is built in a child process
    (issue 23).

    * ``view_model``: the cached view model (:meth:`dashboard.services.ViewModels.full`,
      computed when the data set was stored), when its points per curve are the report's
      (``settings.max_roc_points`` is :func:`dashboard.report.report_points` of
      ``max_points``): a cold report then analyses no classifier twice and packs no curve
      again.
    * ``calibrated``: the calibrated curves the Curves page has already computed through the
      results service (:func:`dashboard.results.calibrated_roc_result`, kind
      ``calibrated-roc``, read without computing; thinned as the report thins them), under
      the same condition.
    * ``analysis`` (with ``view``): the view's ticked classifiers analysed, from the
      threshold-choice base kept in this process (:meth:`dashboard.results.Results.
      choice_base`, memoised when the report's own threshold choice was computed just
      before), when it is kept: the report child then sorts no classifier's scores again.
      Never computed here.

    It also loads plotly's validators in this process once
    (:func:`dashboard.report.warm_figures`): a child
    process forked from it then builds its figures without importing them again.

    Parameters
    ----------
    services : dashboard.services.Services
    dataset_id : str
        The handle the report is asked through (checked live by the caller).
    max_points : int or None
        The report's ``max_points`` (:meth:`dashboard.results.Results.max_points` of the
        handle's scope).
    view : View, optional
        The report's view (its ticked classifiers and calibration name the base).

    Returns
    -------
    dict
        Keyword arguments for :func:`build_report` (empty when nothing kept is the report's).
    """
    from dashboard.report import report_points, warm_figures
    from dashboard.results import calibrated_roc_texts

    warm_figures()
    if services.settings.max_roc_points != report_points(max_points):
        return {}
    view_model = services.views.full(dataset_id)
    names = [c["name"] for c in view_model["classifiers"]]
    scope = "full" if max_points is None else "thinned"
    kept = {"view_model": view_model,
            "calibrated": calibrated_roc_texts(services.results, dataset_id, names, scope)}
    # The base is thinned to the scope's max_points (Results.max_points), as the report's
    # analysis is; it is read, never computed, in this process.
    base = None if view is None else services.results.kept_choice_base(
        dataset_id, scope, view.models, view.calibration)
    if base is not None and services.results.max_points(scope) == max_points:
        kept["analysis"] = base.analysis
    return kept
