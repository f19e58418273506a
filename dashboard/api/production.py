"""``POST /api/v1/analyses/<manage token>/production``: push a production batch to a saved
analysis and get the watch of all its batches back (issue 25).

The body is a production file in the upload formats (CSV/TSV, gzip, Parquet, JSON lines):
multipart with the file in the field ``file``, or the file itself as the body. Optional fields
(form or query): ``period`` (the batch's period label when the file has no period column;
default: the file name's stem), ``period_column`` (the file's period column; default: a column
named period/date/day/week/month/batch), ``method`` (``em`` or ``acc``). The reply is
:func:`costdash.monitor.watch_to_dict` of every batch kept for the analysis, at its saved view's
conditions (the deployed choice: the view's ``model`` and ``threshold``, else the policy's
choice there), plus ``notes`` and the new ``batch`` id. A period the new batch leaves alerting
is posted to ``COSTDASH_ALERT_WEBHOOK`` (:func:`dashboard.storage.production.post_alerts`).

Counted against the client's upload limit (``COSTDASH_RATE_LIMIT_UPLOADS``), with the upload
routes: 429 with ``Retry-After`` beyond it.
"""

from __future__ import annotations

from typing import Any

from flask import Blueprint, Flask, current_app, jsonify, request

from costdash.errors import CostdashError
from costdash.monitor import watch_to_dict
from dashboard.storage.production import (ProductionStore, alert_payloads, period_guess,
                                          post_alerts, production_columns, read_batch,
                                          watch_batches)
from dashboard.services import Services
from dashboard.sharing import AnalysisNotFound, saved_view

__all__ = ["OPENAPI_PATH", "install_production_api", "production_api"]

production_api = Blueprint("costdash_production", __name__, url_prefix="/api/v1")

METHODS = ("em", "acc")


def _error(message: str, status: int) -> Any:
    return jsonify({"error": message}), status


def _field(name: str) -> str | None:
    value = request.form.get(name) if request.form else None
    value = value if value is not None else request.args.get(name)
    return value.strip() if isinstance(value, str) and value.strip() else None


@production_api.post("/analyses/<manage_token>/production")
def push_production(manage_token: str) -> Any:
    """Keep one production batch for the analysis; answer the watch of all its batches."""
    services: Services = current_app.extensions["costdash"]
    settings = services.settings
    try:
        record = services.sharing.managed(manage_token)
    except AnalysisNotFound as exc:
        return _error(str(exc), 404)
    if record.expired():
        return _error("this analysis has expired; renew it on its manage page first", 404)
    method = _field("method") or "em"
    if method not in METHODS:
        return _error(f"method must be one of {', '.join(METHODS)}, not {method!r}", 400)
    upload = request.files.get("file")
    if upload is not None:
        name, raw = upload.filename or "production", upload.read(settings.max_upload_bytes + 1)
    elif request.content_length:
        name, raw = _field("name") or "production", request.get_data(cache=False)
    else:
        return _error("send a production file: multipart with the field 'file', or the file "
                      "as the body", 400)
    if len(raw) > settings.max_upload_bytes:
        return _error(f"{name} is over the upload limit of "
                      f"{settings.max_upload_bytes / 1024**2:g} MB", 413)
    view = saved_view(record.view)
    try:
        reference = services.store.get(record.dataset_id)
        deployed = view.model if view.model and view.threshold is not None else None
        period_column = period_guess(
            production_columns(raw, name, settings.max_upload_bytes), _field("period_column"))
        if _field("period_column") and period_column is None:
            return _error(f"{name}: there is no period column {_field('period_column')!r}", 400)
        batch = read_batch(raw, name, classifier=deployed, period_column=period_column,
                           period=_field("period"), max_bytes=settings.max_upload_bytes,
                           max_rows=settings.max_rows)
        store = ProductionStore(services.store)
        scope = f"analysis:{record.id}"
        batch_id, notes = store.add(scope, batch)
        table = store.table(scope)
        try:
            result = watch_batches(reference, table, view, method=method)
        except CostdashError:
            store.remove(scope, batch_id)  # a batch the watch cannot read is not kept
            raise
    except CostdashError as exc:
        return _error(str(exc), 400)
    touched = batch.table["period"].astype(str).unique()
    post_alerts(settings.alert_webhook, alert_payloads(result, touched, record.id))
    return jsonify({**watch_to_dict(result), "notes": [*batch.notes, *notes],
                    "batch": batch_id})


def install_production_api(server: Flask) -> None:
    """Serve :data:`production_api` on ``server``, counted with the uploads (call after
    :func:`dashboard.limits.install_limits`)."""
    server.register_blueprint(production_api)
    limits = server.extensions["costdash-limits"]
    endpoint = "costdash_production.push_production"
    server.view_functions[endpoint] = limits.limiter.shared_limit(
        server.extensions["costdash"].settings.rate_limit_uploads,
        scope="uploads")(server.view_functions[endpoint])


_ERROR = {"$ref": "#/components/schemas/Error"}


def _reply(description: str, schema: dict[str, Any] = _ERROR) -> dict[str, Any]:
    return {"description": description, "content": {"application/json": {"schema": schema}}}


_PERIOD = {
    "type": "object", "additionalProperties": False,
    "required": ["period", "n", "p_pos", "p_pos_low", "p_pos_high", "pc", "pc_low", "pc_high",
                 "choice", "deployed_optimal", "regret_per_period", "alert"],
    "properties": {
        "period": {"type": ["string", "number"]}, "n": {"type": "integer", "minimum": 0},
        **{k: {"type": "number"} for k in ("p_pos", "p_pos_low", "p_pos_high", "pc", "pc_low",
                                            "pc_high", "regret_per_period")},
        "choice": {"type": "object", "required": ["classifier", "threshold"],
                   "properties": {"classifier": {"type": "string"},
                                  "threshold": {"type": ["number", "null"]}}},
        "deployed_optimal": {"type": "boolean"}, "alert": {"type": "boolean"},
    },
}

OPENAPI_PATH: dict[str, Any] = {
    "post": {
        "operationId": "pushProduction", "tags": ["analyses"],
        "summary": "Push a production batch; the p(+) watch of all batches",
        "description": "Unlabelled production scores of the deployed classifier (a 'score' "
                       "column or the classifier's, optionally 'n' score counts and a period "
                       "column), kept with the analysis (its newest 200 batches). The reply "
                       "estimates p(+) per period with an interval, its PC(+) at the saved "
                       "view's conditions, the policy's choice there, the regret of the "
                       "deployed choice and whether it alerts (docs/production.md). Counted "
                       "against the client's upload limit. An alerting period is posted to "
                       "COSTDASH_ALERT_WEBHOOK when set.",
        "parameters": [{"name": "manage_token", "in": "path", "required": True,
                        "description": "The analysis's manage token.",
                        "schema": {"type": "string"}}],
        "requestBody": {"required": True, "content": {
            "multipart/form-data": {"schema": {
                "type": "object", "required": ["file"],
                "properties": {
                    "file": {"type": "string", "contentMediaType": "application/octet-stream"},
                    "period": {"type": "string", "description": "The batch's period label "
                               "(without a period column; default: the file name's stem)."},
                    "period_column": {"type": "string"},
                    "method": {"type": "string", "enum": list(METHODS)}}}},
            "application/octet-stream": {"schema": {"type": "string"}}}},
        "responses": {
            "200": _reply("The watch of every batch kept.", {
                "type": "object",
                "required": ["method", "level", "deployed", "periods", "notes", "batch"],
                "properties": {
                    "method": {"type": "string", "enum": list(METHODS)},
                    "level": {"type": "number"},
                    "deployed": {"type": "object", "required": ["classifier", "threshold"]},
                    "periods": {"type": "array", "items": _PERIOD},
                    "notes": {"type": "array", "items": {"type": "string"}},
                    "batch": {"type": "string"}}}),
            "400": _reply("The file cannot be read (the message names file, column and row), "
                          "or a bad method or period column."),
            "404": _reply("No analysis has this manage token, or it expired."),
            "413": _reply("The file is over the upload limit."),
            "429": _reply("Over the client's upload limit; see Retry-After."),
            "503": _reply("The database is not reachable."),
        },
    },
}
"""The route's OpenAPI path item (``dashboard/api/openapi_doc.py`` lists it)."""
