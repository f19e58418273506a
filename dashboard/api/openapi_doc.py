"""The OpenAPI 3.1 description of the HTTP API, served at ``GET /api/v1/openapi.json``.

It covers every route under ``/api/v1`` (:mod:`dashboard.api`) and ``/healthz``: the request
bodies (multipart uploads with their form fields, the JSON of a PATCH), every reply's schema (the
``costdash analyze --json`` contract of :func:`costdash.analysis.analysis_to_dict` included), the
error replies and the bearer token that manages a saved analysis.

The schemas are JSON Schema 2020-12, as OpenAPI 3.1 has them, so a client (or the tests) can
validate replies with any JSON Schema validator. Replies of the stable contracts are closed
(``additionalProperties: false``): a field added on the server must be added here too.

The view -- its JSON object (``View``, ``SavedView``), the form fields of a saved analysis and
the query parameters of the report and CSV exports -- is generated from
:func:`costdash.view.view_schema`, the table the server's parser and the browser's validator
are built from, so its names, bounds and defaults cannot drift from what the server accepts.
"""

from __future__ import annotations

import copy
import typing
from typing import Any

import costdash
from costdash.dataset import Layout
from costdash.view import MAX_NAMES, view_schema
from dashboard.api.production import OPENAPI_PATH as PRODUCTION_PATH
from dashboard.report import CSV_NAMES
from dashboard.sharing import MAX_EXPIRY_DAYS, MAX_NAME, VIEW_KEYS

__all__ = ["openapi_document"]

OPENAPI_VERSION = "3.1.0"
JSON = "application/json"
MULTIPART = "multipart/form-data"


def _ref(name: str) -> dict[str, str]:
    return {"$ref": f"#/components/schemas/{name}"}


def _nullable(schema: dict[str, Any]) -> dict[str, Any]:
    """``schema`` or null (JSON Schema 2020-12 has no ``nullable``)."""
    return {"anyOf": [schema, {"type": "null"}]}


def _closed(properties: dict[str, Any], *, description: str,
            optional: tuple[str, ...] = ()) -> dict[str, Any]:
    """An object with exactly these properties, all required but ``optional``."""
    return {"type": "object", "description": description, "properties": properties,
            "required": [name for name in properties if name not in optional],
            "additionalProperties": False}


def _json_reply(description: str, schema: dict[str, Any]) -> dict[str, Any]:
    return {"description": description, "content": {JSON: {"schema": schema}}}


def _error(description: str) -> dict[str, Any]:
    return _json_reply(description, _ref("Error"))


def _path_parameter(name: str, description: str, **schema: Any) -> dict[str, Any]:
    return {"name": name, "in": "path", "required": True, "description": description,
            "schema": {"type": "string", **schema}}


NUMBERS = {"type": "array", "items": {"type": "number"}}
RATE = {"type": "number", "minimum": 0, "maximum": 1}
COUNT = {"type": "integer", "minimum": 0}
THRESHOLD = _nullable({"type": "number"})
EXPIRES_IN_DAYS = {"type": "number", "exclusiveMinimum": 0, "maximum": MAX_EXPIRY_DAYS,
                   "description": "Days from now until the analysis and its links expire."}
ANALYSIS_NAME = {"type": "string", "minLength": 1,
                 "description": f"Whitespace is collapsed; longer than {MAX_NAME} characters "
                                "is cut."}

STORAGE_DOWN = _error("The database is unreachable; nothing was changed. Try again later.")

# --- schemas ---------------------------------------------------------------------------------

_DATASET_SUMMARY = {
    "id": {"type": "string",
           "description": "The data set's id: a hash of the file's bytes, loader options and "
                          "format, so the same upload gets the same id."},
    "name": {"type": "string", "description": "The uploaded file's name."},
    "n": {**COUNT, "description": "Number of examples."},
    "classifiers": {"type": "array", "items": {"type": "string"},
                    "description": "The classifiers' names, in file order."},
}

_ANALYZE_RESULT = {
    "dataset": _ref("AnalyzedDataset"),
    "classifiers": {"type": "array", "items": _ref("ClassifierSummary")},
    "hull": {"type": "array", "items": _ref("HullVertex"), "minItems": 2,
             "description": "The ROC convex hull of all classifiers, ordered by FPR from "
                            "all-negative (0, 0) to all-positive (1, 1), collinear points "
                            "dropped."},
    "envelope": _ref("Envelope"),
    "operating_point": _ref("OperatingPoint"),
}

_RANGE = {"type": "array", "items": {"type": "number"}, "minItems": 2, "maxItems": 2}

# --- the view, from costdash.view.view_schema() ------------------------------------------------

_VIEW_FIELDS = {f["name"]: f for f in view_schema()}


def _bounds(field: dict[str, Any]) -> dict[str, Any]:
    """A field's bounds as JSON Schema keywords (strict ones as ``exclusive*``)."""
    out: dict[str, Any] = {}
    if field["low"] is not None:
        out["exclusiveMinimum" if field["low_open"] else "minimum"] = field["low"]
    if field["high"] is not None:
        out["exclusiveMaximum" if field["high_open"] else "maximum"] = field["high"]
    return out


_PIN_TEXT = r"[^,]*[^,\s][^,]*:-?(\d+\.?\d*|\.\d+)([eE][-+]?\d+)?"
PINS_TEXT = f"^{_PIN_TEXT}(,{_PIN_TEXT})*$"
"""Pins as the query and form fields write them: ``gbm:0.5,logreg:0.42`` (a name, a colon,
a finite number)."""


def view_field_schema(name: str, *, as_text: bool = False) -> dict[str, Any]:
    """The JSON Schema of one view field's value (as the view's JSON holds it).

    Numbers carry their bounds, ranges are two numbers within them, lists of names arrays of
    strings; the description is the field's label, its meaning and its rule in words. With
    ``as_text``, as a query parameter or form field holds it where that differs from the JSON:
    pins are one string of ``classifier:threshold`` items (the parser reads a field's text so;
    as JSON objects they would be refused).
    """
    field = _VIEW_FIELDS[name]
    kind = field["kind"]
    number = {"type": "integer" if kind == "int" else "number", **_bounds(field)}
    text = {"type": "string", "minLength": 1, "maxLength": field["max_length"]}
    schema: dict[str, Any] = {
        "float": number, "int": number,
        "range": {"type": "array", "items": number, "minItems": 2, "maxItems": 2},
        "names": {"type": "array", "items": text, "minItems": 1, "maxItems": MAX_NAMES},
        "flag": {"type": "boolean"},
        "id": {"type": "string", "pattern": "^[0-9a-f]{32}$"},
        "name": text,
        # Longer text is cut, not refused; what the server keeps is never longer.
        "text": {"type": "string", "maxLength": field["max_length"]},
        # JSON: [{"model", "threshold"}]; the query: gbm:0.5,logreg:0.42.
        "pins": {"type": "array", "minItems": 1, "maxItems": field["max_items"], "items": {
            "type": "object", "required": ["model", "threshold"], "additionalProperties": False,
            "properties": {"model": {**text, "pattern": "^[^,]+$"},
                           "threshold": {"type": "number"}}}},
    }[kind]
    if as_text and kind == "pins":
        schema = {"type": "string", "pattern": PINS_TEXT,
                  "examples": ["gbm:0.5,logreg:0.42"]}
    schema = {**schema, "description": f"{field['doc']} {field['requirement']}."}
    if field["default"] is not None:
        schema["default"] = field["default"]
    return schema


def view_query_parameters(names: typing.Iterable[str]) -> list[dict[str, Any]]:
    """Query parameters of these view fields: lists and ranges comma-separated (form style,
    not exploded: ``models=gbm,logreg``, ``sens_p=0.001,0.1``), as the dashboard's links."""
    out = []
    for name in names:
        schema = view_field_schema(name, as_text=True)
        parameter = {"name": name, "in": "query", "required": False,
                     "description": schema.pop("description"), "schema": schema}
        if schema["type"] == "array":
            parameter.update(style="form", explode=False)
        out.append(parameter)
    return out


ALWAYS_WRITTEN = tuple(n for n, f in _VIEW_FIELDS.items() if f["always"])
"""Fields every written view holds, at their defaults too (conditions, volume, unit)."""

_ANALYSIS_INFO = {
    "id": {"type": "string", "description": "The analysis's id (used with the manage token)."},
    "name": {"type": "string"},
    "dataset_id": {"type": "string",
                   "description": "The analysis's own read-only id of its data set (never the "
                                  "uploader's): what its link's pages and exports read."},
    "created_at": {"type": "string", "format": "date-time"},
    "expires_at": _nullable({"type": "string", "format": "date-time"}),
    "url": _nullable({"type": "string", "format": "uri-reference",
                      "description": "The read-only link: absolute on the service's public "
                                     "address (COSTDASH_PUBLIC_URL), relative (/s/...) when "
                                     "none is set and the request's Host is not this "
                                     "machine's; null once the owner revoked it."}),
    "opens": {"type": "integer", "minimum": 0,
              "description": "How many times the read-only link was opened (a page of it or "
                             "its JSON without the manage token); in replies to the manage "
                             "token only. Nothing about who opened it is kept."},
    "last_opened_at": _nullable({"type": "string", "format": "date-time",
                                 "description": "When it was last opened (manage token "
                                                "only)."}),
}
_MANAGED_ONLY = ("opens", "last_opened_at")

# Form fields of an upload that say how to read the file, named like the command line's options.
_LOADER_FIELDS = {
    "layout": {"type": "string", "enum": ["auto", *typing.get_args(Layout)], "default": "auto",
               "description": "auto picks counts when there are tp, fp, fn, tn columns, long "
                              "when there are model and score columns, else wide."},
    "label_column": {"type": "string", "description": "Column of true labels (default: "
                                                      "detected). Also accepted as "
                                                      "label-column, like every field here."},
    "model_column": {"type": "string", "description": "Long layout: column naming the "
                                                      "classifier."},
    "score_column": {"type": "string", "description": "Long layout: column of scores."},
    "fold_column": {"type": "string", "description": "Column of fold or run ids (default: "
                                                     "detected)."},
    "positive": {"type": "string", "description": "The positive class label, when the labels "
                                                  "are not an obvious pair such as 0/1."},
    "models": {"type": "array", "items": {"type": "string"},
               "description": "Keep only these classifiers, in this order: repeat the field, or "
                              "send one comma-separated value. A saved analysis's view ticks "
                              "the classifiers kept."},
    "drop_missing": {"type": "boolean", "default": False,
                     "description": "Drop rows with a missing label or score instead of failing "
                                    "(true/false, 1/0, yes/no, on/off)."},
    "target_class": {"type": "string",
                     "description": "One-vs-rest on a multiclass file (y_true of k >= 3 classes "
                                    "and, per classifier, a score column per class named "
                                    "<classifier>:<class>, as predict_proba gives): analysed "
                                    "exactly as the binary file of y_true == CLASS and the "
                                    "columns <classifier>:CLASS. A property of the data set "
                                    "(part of its id), not of a view."},
    "segment_column": {"type": "string",
                       "description": "Wide layout: a column of each row's segment (region, "
                                      "product, site), kept with the data set for the Segments "
                                      "page, decision.json's segments and the report."},
}

_FILE_FIELD = {
    "file": {"type": "string", "contentMediaType": "application/octet-stream",
             "description": "The predictions file: CSV or TSV (gzip too), Parquet or JSON lines; "
                            "the format is detected from the content and the file name."},
}

_FILE_ENCODING = {"file": {"contentType": "application/octet-stream, text/csv, "
                                          "text/tab-separated-values, application/gzip, "
                                          "application/vnd.apache.parquet, "
                                          "application/x-ndjson"}}

_NUMBER = {"type": "number"}
_MAYBE_NUMBER = _nullable(_NUMBER)
_PAIR = {"type": "array", "items": _NUMBER, "minItems": 2, "maxItems": 2}
_CHOICE_PICK = {"classifier": {"type": "string", "description": "all-negative and "
                               "all-positive for the trivial choices."},
                "threshold": _nullable({"type": "number", "description": "Flag score >= "
                                        "threshold; null for a trivial choice."}),
                "fpr": RATE, "tpr": RATE}

CHOICE_SCHEMAS: dict[str, Any] = {
    "ThresholdChoiceCurve": _closed({
        "pc": {**NUMBERS, "description": "PC(+), non-decreasing from 0 to 1; a value repeated "
                                         "is a jump (drawn as a vertical segment)."},
        "cost": {**NUMBERS, "description": "Normalized expected cost at each pc."},
        "expected_loss": {**_NUMBER, "description": "Mean normalized cost with PC(+) uniform "
                                                    "(or the view's Beta)."},
        "cost_proportion_loss": {**_NUMBER, "description": "The papers' loss over uniform cost "
                                                           "proportions, costs summing to 2."},
        "threshold": _nullable({"type": "number", "description": "fixed only."}),
    }, optional=("threshold",), description="One threshold-choice method's cost curve "
                                            "(docs/threshold-choice.md)."),
    "ThresholdChoice": _closed(
        {m: _nullable(_ref("ThresholdChoiceCurve"))
         for m in ("score_driven", "rate_driven", "fixed", "optimal")},
        description="The curves of each way of choosing thresholds: score-driven (Brier curve; "
                    "null when the scores are not probabilities), rate-driven, fixed and "
                    "optimal (the classifier's own lower envelope)."),
    "ThresholdChoiceGaps": _closed({
        "calibration_loss": _MAYBE_NUMBER, "rate_loss": _MAYBE_NUMBER,
        "fixed_loss": _MAYBE_NUMBER,
        "score_driven_refused": _nullable({"type": "string"}),
        "beta": _PAIR,
        "calibration": _nullable({"type": "string", "enum": ["platt", "isotonic"]}),
        "calibrated_brier_score": _MAYBE_NUMBER,
    }, description="The gaps between the methods' expected losses (score-driven, rate-driven, "
                   "fixed minus optimal) and why a curve is missing."),
    "ClassifierChoice": _closed({
        "name": {"type": "string"},
        "auc": _MAYBE_NUMBER,
        "h_measure": {**_NUMBER, "description": "Hand's H-measure (default severity ratio "
                                                "n+/n-, as the hmeasure package)."},
        "h_measure_beta": _PAIR,
        "brier_score": _nullable({**_NUMBER, "description": "Null when the scores are not in "
                                                            "[0, 1]."}),
        "threshold_choice": _ref("ThresholdChoice"),
        "threshold_choice_gaps": _ref("ThresholdChoiceGaps"),
        "fixed_from": {"type": "string", "enum": ["pin", "conditions", "threshold"],
                       "description": "The fixed curve's threshold: the view's pin for the "
                                      "classifier, else its own best at the conditions."},
    }, description="One ticked classifier: the keys costdash analyze --json adds, and where the "
                   "fixed threshold came from."),
    "DecisionCurves": _closed({
        "thresholds": {**NUMBERS, "description": "Threshold probabilities p_t."},
        "net_benefit": {"type": "object", "required": ["all", "none"],
                        "additionalProperties": _nullable(NUMBERS),
                        "description": "Per classifier (null when refused), all (treat-all) "
                                       "and none (treat-none): TP/n - FP/n * p_t/(1 - p_t), "
                                       "flagging score >= p_t."},
        "refused": {"type": "object", "additionalProperties": {"type": "string"}},
        "current": _closed({
            "pt": {**RATE, "description": "C(+|-)/(C(-|+) + C(+|-)) of the view's costs (their "
                                          "differences with costs of correct decisions)."},
            "cost_ratio": _MAYBE_NUMBER,
            "pc_at_prevalence": {**RATE, "description": "The PC(+) p_t means at the test set's "
                                                        "prevalence."},
            "net_benefit": {"type": "object", "additionalProperties": _MAYBE_NUMBER},
            "treat_all": _MAYBE_NUMBER,
        }, description="The view's threshold probability and each net benefit there."),
        "prevalence": RATE,
        "calibration": {"type": "string", "enum": ["platt", "isotonic"]},
    }, optional=("refused", "calibration"),
        description="costdash dca --json, with the view's p_t (docs/threshold-choice.md)."),
    "RobustChoice": _closed({
        "minimax_regret": _closed({
            **_CHOICE_PICK, "max_regret": {**_NUMBER, "description": "Per period."},
            "worst_condition": _closed({"p_pos": _NUMBER, "cost_fn": _NUMBER,
                                        "cost_fp": _NUMBER, "pc": RATE},
                                       description="A box corner where it is reached."),
        }, description="The fixed choice with the smallest worst-case regret over the box."),
        "bayes": _closed({**_CHOICE_PICK, "expected_cost": _NUMBER, "max_regret": _NUMBER},
                         description="The least expected cost, conditions uniform over the "
                                     "box."),
        "box": _closed({"p_pos": _RANGE, "cost_fn": _RANGE, "cost_fp": _RANGE,
                        "cost_tp": _NUMBER, "cost_tn": _NUMBER},
                       description="The view's sensitivity ranges; a range not set is the "
                                   "condition's value."),
        "volume": _NUMBER,
        "switching": _closed({
            "worth_it": {"type": "boolean"}, "tolerance": _NUMBER,
            "expected_saving": _NUMBER,
            "optimal_choices": {"type": "array", "items": _closed(
                {"classifier": {"type": "string"}, "threshold": THRESHOLD},
                description="A policy-table row the box reaches.")},
        }, description="Whether switching by condition is worth it."),
        "pc_range": _RANGE,
        "policy": {"type": "array", "items": _closed({
            "pc_lo": RATE, "pc_hi": RATE, "classifier": {"type": "string"},
            "threshold": THRESHOLD}, description="A piece of the policy table.")},
    }, description="costdash decide's robust JSON, plus the box's PC(+) range and the pieces "
                   "of the policy table within it (money per period of volume cases)."),
    "ChoiceResult": _closed({
        "conditions": _closed({"p_pos": _NUMBER, "cost_fn": _NUMBER, "cost_fp": _NUMBER,
                               "cost_tp": _NUMBER, "cost_tn": _NUMBER, "pc": RATE},
                              description="The view's conditions."),
        "prevalence": RATE,
        "volume": _NUMBER, "unit": {"type": "string"},
        "beta": {**_PAIR, "description": "The Beta over PC(+) of the expected losses."},
        "calibration": _nullable({"type": "string", "enum": ["platt", "isotonic"]}),
        "classifiers": {"type": "array", "items": _ref("ClassifierChoice")},
        "decision_curves": _ref("DecisionCurves"),
        "robust": _nullable(_ref("RobustChoice")),
        "robust_refused": _nullable({"type": "string", "description": "Why robust is null."}),
        "robust_pc": _nullable(_closed({
            "beta": _PAIR, "pc_range": _RANGE,
            "bayes": _closed({**_CHOICE_PICK, "expected_cost": _NUMBER},
                             description="Least expected normalized cost, PC(+) ~ Beta."),
            "minimax_regret": _closed({**_CHOICE_PICK, "max_regret": _NUMBER},
                                      description="Smallest worst normalized regret over "
                                                  "pc_range."),
        }, description="With beta_a/beta_b: the robust choices under PC(+) ~ Beta(a, b), in "
                       "normalized cost (the minimax over the Beta's central 95%).")),
    }, description="Beyond the envelope: the Threshold choice page's JSON."),
}

SCHEMAS: dict[str, Any] = {
    "Error": _closed({"error": {"type": "string", "description": "What went wrong, for a human."}},
                     description="Every error reply."),
    "DatasetSummary": _closed(_DATASET_SUMMARY, description="A stored data set."),
    "UploadedDataset": _closed({
        **_DATASET_SUMMARY,
        "target_class": _nullable({"type": "string",
                                   "description": "The target class it was read for."}),
        "segment_column": _nullable({"type": "string",
                                     "description": "Its segment column."}),
    }, description="A stored data set, as the upload answers."),
    "UploadError": _closed({
        "error": {"type": "string", "description": "What went wrong, for a human."},
        "target_classes": {"type": "array", "items": {"type": "string"},
                           "description": "A multiclass file with a score column per class: "
                                          "the classes to send as target_class."},
    }, optional=("target_classes",), description="The upload's error reply."),
    "DatasetInfo": _closed({
        **_DATASET_SUMMARY,
        "n_pos": COUNT, "n_neg": COUNT,
        "positive_label": {"type": "string"},
        "layout": {"type": "string", "enum": list(typing.get_args(Layout))},
        "read_only": {"type": "boolean",
                      "description": "True for a read-only link's id: it reads what the link's "
                                     "page shows; only an upload's own id deletes or shares."},
    }, description="A stored data set with its class counts."),
    "AnalyzedDataset": _closed({
        "n": COUNT, "n_pos": COUNT, "n_neg": COUNT,
        "positive_label": {"type": "string"},
        "n_folds": {**COUNT, "description": "0 when the file has no fold column."},
        "source": {"type": "string", "description": "The file's name."},
        "layout": {"type": "string", "enum": list(typing.get_args(Layout))},
    }, description="The data set analysed."),
    "RocCurve": _closed({
        "fpr": NUMBERS, "tpr": NUMBERS,
        "threshold": {"type": "array", "items": THRESHOLD},
    }, description="From (0, 0) with threshold null (nothing flagged), one point per distinct "
                   "score in decreasing order (positive iff score >= threshold), to (1, 1)."),
    "ClassifierSummary": _closed({
        "name": {"type": "string"},
        "auc": _nullable({"type": "number"}),
        "roc": _ref("RocCurve"),
        "operating_range": _nullable(_RANGE),
        "cost_area": _nullable({"type": "number"}),
        "on_hull": {"type": "boolean"},
    }, description="One classifier. operating_range: the open PC(+) interval where its lower "
                   "envelope is strictly below both trivial classifiers (null when empty); "
                   "cost_area: the area under its lower envelope."),
    "HullVertex": _closed({
        "fpr": RATE, "tpr": RATE,
        "classifier": {"type": "string",
                       "description": "all-negative and all-positive at the ends."},
        "threshold": THRESHOLD,
    }, description="A vertex of the ROC convex hull."),
    "Envelope": _closed({"pc": NUMBERS, "cost": NUMBERS},
                        description="The exact lower envelope in cost space (the hull's dual): "
                                    "breakpoints from PC(+) = 0 to 1."),
    "OperatingPoint": _closed({
        "p_pos": {"type": "number"}, "cost_fn": {"type": "number"},
        "cost_fp": {"type": "number"},
        "pc": {**RATE, "description": "PC(+), the probability-cost of the condition."},
        "slope": _nullable({"type": "number"}),
        "classifier": {"type": "string"},
        "threshold": THRESHOLD,
        "fpr": RATE, "tpr": RATE,
        "normalized_cost": {"type": "number"},
        "expected_cost": {"type": "number", "description": "Per example, the constant part "
                                                           "p(+)C(+|+) + p(-)C(-|-) included."},
        "cost_tp": {"type": "number", "description": "C(+|+), cost of a true positive (a "
                                                     "benefit is negative)."},
        "cost_tn": {"type": "number", "description": "C(-|-), cost of a true negative."},
    }, description="The best hull vertex under the condition; slope is the iso-performance "
                   "slope p(-)(C(+|-) - C(-|-)) / (p(+)(C(-|+) - C(+|+)))."),
    "DecisionResult": _closed({
        "decision": _closed({
            "classifier": {"type": "string"}, "threshold": THRESHOLD,
            "p_pos": {"type": "number"}, "cost_fn": {"type": "number"},
            "cost_fp": {"type": "number"}, "cost_tp": {"type": "number"},
            "cost_tn": {"type": "number"}, "pc": RATE,
            "normalized_cost": {"type": "number"},
            "expected_cost": {"type": "number", "description": "Per case, the constant part "
                                                               "of correct decisions included."},
            "valid_pc": {**_RANGE, "description": "PC(+) interval where the choice stays "
                                                  "optimal."},
            "valid_p_pos": {**_RANGE, "description": "The same interval as p(+), at the "
                                                     "view's costs."},
            "segment_column": {"type": "string", "description": "A data set with segments: "
                                                                "its segment column."},
            "segments": {"type": "array", "items": _closed({
                "segment": {"type": "string"}, "n": COUNT, "p_pos": RATE,
                "classifier": {"type": "string"}, "threshold": THRESHOLD,
                "expected_cost": {"type": "number"},
                "regret_vs_shared": {"type": "number", "minimum": 0},
                "shared_expected_cost": {"type": "number"}},
                description="One segment (costdash decide --segment-column): the optimal "
                            "classifier and threshold on its rows at its p(+) (its "
                            "prevalence) and the view's costs, and what the shared choice "
                            "costs there more per case."),
                "description": "A threshold per segment, in order of first appearance."},
            "segment_saving_per_case": {"type": "number", "minimum": 0,
                                        "description": "Mean regret over every row."},
            "segments_error": {"type": "string",
                               "description": "Why no policy per segment could be made (a "
                                              "segment with one class)."},
        }, description="The choice at the view's conditions.",
            optional=("segment_column", "segments", "segment_saving_per_case",
                      "segments_error")),
        "policy": {"type": "array", "items": _closed({
            "pc_lo": RATE, "pc_hi": RATE, "classifier": {"type": "string"},
            "threshold": THRESHOLD}, description="One piece of the policy."),
            "description": "The lower envelope's pieces in order, covering PC(+) from 0 to 1; "
                           "trivial choices are all-negative / all-positive with a null "
                           "threshold."},
    }, description="costdash decide --json."),
    **CHOICE_SCHEMAS,
    "AnalyzeResult": _closed(_ANALYZE_RESULT,
                             description="The JSON of costdash analyze --json (no NaN or "
                                         "infinity anywhere)."),
    "View": _closed({name: view_field_schema(name) for name in _VIEW_FIELDS},
                    optional=tuple(_VIEW_FIELDS),
                    description="A dashboard view as JSON: every control a user can set. Unset "
                                "fields are left out; the conditions, volume and unit are "
                                "always written. The same fields are the query parameters of "
                                "every page and export, lists and ranges comma-separated."),
    "SavedView": _closed({name: view_field_schema(name) for name in VIEW_KEYS},
                         optional=tuple(n for n in VIEW_KEYS
                                        if n not in ALWAYS_WRITTEN),
                         description="The view saved with an analysis (a View without the "
                                     "data set), with the operating condition actually "
                                     "analysed: p(+) unset is the data's prevalence, costs "
                                     "unset are 1."),
    "AnalysisInfo": _closed(_ANALYSIS_INFO, optional=_MANAGED_ONLY,
                            description="A saved analysis (no secrets)."),
    "SharedAnalysis": _closed({
        **_ANALYZE_RESULT,
        "view": _ref("SavedView"),
        "analysis": _closed({
            **_ANALYSIS_INFO,
            "dataset_id": {**_ANALYSIS_INFO["dataset_id"],
                           "description": "The analysis's own read-only id of its data set: "
                                          "in replies to the manage token only (a read link's "
                                          "holder gets no data set id)."},
            "roc_points": {"type": "string",
                           "description": "'all' with the manage token, else 'at most N per "
                                          "classifier'."},
        }, optional=(*_MANAGED_ONLY, "dataset_id"),
            description="The saved analysis (no secrets) and the resolution of its ROC arrays."),
    }, description="A saved analysis: the costdash analyze --json of its data set under the "
                   "saved condition, the saved view, and the analysis itself. Each classifier's "
                   "ROC arrays are thinned to the dashboard's resolution (hull and envelope "
                   "exact) unless the manage token is sent: a read link shows the curves, not "
                   "the predictions."),
    "AnalysisCreated": _closed({
        "id": _ANALYSIS_INFO["id"],
        "url": _ANALYSIS_INFO["url"]["anyOf"][0],
        "manage_url": {"type": "string", "format": "uri-reference",
                       "description": "Rename, set the expiry or delete, in a browser. Keep it "
                                      "private: it is shown only this once. Absolute or "
                                      "relative as url."},
        "manage_token": {"type": "string",
                         "description": "The bearer token of PATCH and DELETE; shown only "
                                        "this once."},
        "name": _ANALYSIS_INFO["name"],
        "dataset_id": _ANALYSIS_INFO["dataset_id"],
        "expires_at": _ANALYSIS_INFO["expires_at"],
    }, description="A newly saved analysis with its two links."),
    "AnalysisUpdate": {
        "type": "object",
        "description": "What to change; fields left out stay as they are.",
        "properties": {
            "name": ANALYSIS_NAME,
            "expires_in_days": _nullable({**EXPIRES_IN_DAYS,
                                          "description": "Days from now; null: never "
                                                         "expires."}),
        },
        "additionalProperties": False,
    },
    "AnalysisUpdated": _closed({"analysis": _ref("AnalysisInfo")},
                               description="The analysis after the change."),
    "DatasetUpload": {
        "type": "object",
        "properties": {**_FILE_FIELD, **_LOADER_FIELDS},
        "required": ["file"],
        "additionalProperties": False,
    },
    "AnalysisUpload": {
        "type": "object",
        "properties": {
            **_FILE_FIELD, **_LOADER_FIELDS,
            # The view saved with it: every field but the data set (the upload is the data).
            # models is also a loader option: the stored data keeps those, the view ticks them.
            **{name: view_field_schema(name, as_text=True) for name in VIEW_KEYS
               if name != "models"},
            "name": {**ANALYSIS_NAME, "description": "Default: the file's name. "
                                                     + ANALYSIS_NAME["description"]},
            "expires_in_days": {**EXPIRES_IN_DAYS, "description": EXPIRES_IN_DAYS["description"]
                                + " Default: never."},
        },
        "required": ["file"],
        "additionalProperties": False,
    },
    "Health": _closed({"status": {"const": "ok"}}, description="The server can read its store."),
    "Unhealthy": _closed({"status": {"const": "error"},
                          "error": {"type": "string", "description": "The failure's type."}},
                         description="The store cannot be read."),
}

# --- operations ------------------------------------------------------------------------------

_DATASET_ID = _path_parameter("dataset_id", "The id an upload returned.")
_VIEW_QUERY = view_query_parameters(VIEW_KEYS)
"""The view of an export (the Explore page links the whole view's query string); a ``data``
parameter is ignored: the path names the data set."""
_BAND_QUERY = [
    {"name": "band", "in": "query", "required": False, "style": "form", "explode": True,
     "schema": {"type": "array", "items": {"type": "string"}},
     "description": "Classifiers whose bootstrap cost band to include (repeatable; default: the "
                    "view's model, else every scored classifier), among the ticked ones. Only "
                    "bands already computed on the Confidence page with the view's threshold, "
                    "replicates and seed are included, read at its level: a report never "
                    "starts a bootstrap."},
]
_BAD_VIEW = _error("A view value that is not a number or out of its bounds (the message names "
                   "the field and its bounds), values each valid but not together (a correct "
                   "decision's cost at or above its error's, or above the low end of that "
                   "error's sensitivity range), or ticked classifiers the data set does not "
                   "have.")
_MANAGED = [{"manageToken": []}]
_ANALYSIS_ID = _path_parameter("id_or_token", "The analysis's id (not its read-only token).")
_NO_TOKEN = _error("No or malformed Authorization header: send 'Authorization: Bearer "
                   "<manage_token>'.")
_WRONG_TOKEN = _error("The token does not manage this analysis.")
_UPLOAD_ERRORS = {
    "400": _error("No file, or a file or option the loader rejects, too many rows or "
                  "classifiers included (its message names the file, column and rows)."),
    "413": _error("The file is over the server's upload limit (COSTDASH_MAX_UPLOAD_MB, default "
                  "200 MB)."),
    "500": _error("The server failed while reading the file; the error is in its log."),
    "503": STORAGE_DOWN,
}


def _export_responses(ok: dict[str, Any], bad_view: dict[str, Any] = _BAD_VIEW,
                      not_found: str = "No data set with this id.") -> dict[str, Any]:
    """The replies of an export of a data set under the view in the query."""
    return {"200": ok, "400": bad_view, "404": _error(not_found), "503": STORAGE_DOWN}


def _gated(responses: dict[str, Any], what: str) -> dict[str, Any]:
    """An export computed through the compute gate when it is not cached (issue 22): refused at
    once, with Retry-After, when no slot is free; stopped past the computation time limit."""
    retry = {"Retry-After": {"description": "Seconds after which trying again makes sense.",
                             "schema": {"type": "integer", "minimum": 0}}}
    return {**responses,
            "429": {**_error(f"The client already has its share of computations running, or "
                             f"is over its rate limit; the {what} was not started (a cached "
                             "one is always answered)."), "headers": retry},
            "503": {**_error(f"The database is unreachable; or the server is busy with other "
                             f"computations and the {what} was not started, or it ran past "
                             "the time limit of one computation (COSTDASH_HEAVY_TIMEOUT_SECONDS) "
                             "and was stopped (then with Retry-After)."), "headers": retry}}


def _also_as_pages(responses: dict[str, Any], statuses: tuple[str, ...]) -> dict[str, Any]:
    """The report's replies of ``statuses`` also as a small HTML page, for a client that reads
    HTML before JSON (a browser following "Download report"): the same message, and a way back
    (with Retry-After for 429 and 503)."""
    out = dict(responses)
    for status in statuses:
        reply = out[status]
        out[status] = {**reply, "description": reply["description"] + " A client whose Accept "
                       "puts text/html before application/json gets it as an HTML page.",
                       "content": {**reply["content"],
                                   "text/html": {"schema": {"type": "string"}}}}
    return out


def _multipart(schema_name: str, description: str) -> dict[str, Any]:
    return {"required": True, "description": description,
            "content": {MULTIPART: {"schema": _ref(schema_name), "encoding": _FILE_ENCODING}}}


PATHS: dict[str, Any] = {
    "/api/v1/datasets": {
        "post": {
            "operationId": "uploadDataset", "tags": ["datasets"],
            "summary": "Upload a predictions file",
            "description": "Stores the file (once per content and options) for the dashboard's "
                           "pages.",
            "requestBody": _multipart("DatasetUpload", "The file and how to read it."),
            "responses": {"200": _json_reply("Stored.", _ref("UploadedDataset")),
                          **_UPLOAD_ERRORS,
                          "400": _json_reply(_UPLOAD_ERRORS["400"]["description"] + " A "
                                             "multiclass file without target_class also lists "
                                             "its target_classes.", _ref("UploadError"))},
        },
    },
    "/api/v1/datasets/{dataset_id}": {
        "get": {
            "operationId": "getDataset", "tags": ["datasets"],
            "summary": "A stored data set",
            "parameters": [_DATASET_ID],
            "responses": {"200": _json_reply("The data set.", _ref("DatasetInfo")),
                          "404": _error("No data set with this id."), "503": STORAGE_DOWN},
        },
        "delete": {
            "operationId": "deleteDataset", "tags": ["datasets"],
            "summary": "Delete an upload",
            "description": "The id an upload returned is the right to it: deleting it removes "
                           "that upload only (the same file uploaded by someone else, and "
                           "analyses shared from it, keep their own handles).",
            "parameters": [_DATASET_ID],
            "responses": {"204": {"description": "Deleted."},
                          "404": _error("No upload with this id (or a read-only link's id)."),
                          "503": STORAGE_DOWN},
        },
    },
    "/api/v1/datasets/{dataset_id}/report.html": {
        "get": {
            "operationId": "getDatasetReport", "tags": ["exports"],
            "summary": "HTML report of a data set under a condition",
            "description": "What the Explore page shows for the view in the query: only the "
                           "ticked classifiers, the choice and the money figures under its "
                           "conditions, volume and unit, its sensitivity ranges and "
                           "constraints, bands with their settings, every setting, and a link "
                           "back to the view. Its plots load plotly.js from this server (at a "
                           "fingerprinted address, cached a year) unless standalone is set or "
                           "the server's own address is not known, when plotly.js is inside "
                           "the file (about 5 MB more; it then opens offline).",
            "parameters": [_DATASET_ID, *_VIEW_QUERY, *_BAND_QUERY,
                           {"name": "standalone", "in": "query", "required": False,
                            "schema": {"type": "string", "enum": ["1", "true", "yes"]},
                            "description": "Embed plotly.js: one file that opens offline."}],
            "responses": _also_as_pages(_gated(_also_as_pages(_export_responses(
                {"description": "The report, as an attachment.",
                 "content": {"text/html": {"schema": {"type": "string"}}}}), ("400", "404")),
                "report"), ("429", "503")),
        },
    },
    "/api/v1/datasets/{dataset_id}/{name}.csv": {
        "get": {
            "operationId": "getDatasetCsv", "tags": ["exports"],
            "summary": "A CSV table of a data set's analysis",
            "description": "Of the ticked classifiers of the view in the query (all when "
                           "models is absent): hull: their ROC convex hull; envelope: its "
                           "lower envelope's breakpoints; operating_ranges: each one's PC(+) "
                           "range. The other view parameters are checked, not used.",
            "parameters": [_DATASET_ID,
                           _path_parameter("name", "Which table.", enum=list(CSV_NAMES)),
                           *_VIEW_QUERY],
            "responses": _export_responses(
                {"description": "The table, as an attachment.",
                 "content": {"text/csv": {"schema": {"type": "string"}}}},
                not_found="No data set with this id, or no table of this name."),
        },
    },
    "/api/v1/datasets/{dataset_id}/decision.json": {
        "get": {
            "operationId": "getDatasetDecision", "tags": ["exports"],
            "summary": "The decision to deploy under the view's conditions, and its policy",
            "description": "The JSON of costdash decide --json for the ticked classifiers of "
                           "the view in the query: the classifier and threshold (score >= "
                           "threshold is positive), the PC(+) and p(+) intervals over which it "
                           "stays optimal, and the policy table of the whole PC(+) axis.",
            "parameters": [_DATASET_ID, *_VIEW_QUERY],
            "responses": _export_responses(
                _json_reply("The decision, as an attachment.", _ref("DecisionResult"))),
        },
    },
    "/api/v1/datasets/{dataset_id}/choice.json": {
        "get": {
            "operationId": "getDatasetChoice", "tags": ["exports"],
            "summary": "What each way of choosing thresholds costs, decision curves and robust "
                       "choices, for the view",
            "description": "The Threshold choice page's numbers for the ticked classifiers of "
                           "the view in the query: each one's threshold-choice curves with "
                           "their expected losses (PC(+) uniform, or Beta(beta_a, beta_b)), the "
                           "named gaps, H-measure and Brier score (the keys costdash analyze "
                           "--json adds; the fixed curve at the view's pin for the classifier, "
                           "else its best threshold at the conditions; calibration=platt or "
                           "isotonic for the calibrated scores' score-driven curve), the "
                           "decision curves with the view's p_t, and the minimax-regret and "
                           "Bayes choices over its sensitivity box (sens_p, sens_fn, sens_fp) "
                           "in money per period. Curves are thinned to at most 4000 points "
                           "(the losses stay exact).",
            "parameters": [_DATASET_ID, *_VIEW_QUERY],
            "responses": _gated(_export_responses(
                _json_reply("The numbers, as an attachment.", _ref("ChoiceResult")),
                bad_view=_error("A view value that is not a number or out of its bounds, a "
                                "calibration other than platt or isotonic, or ticked "
                                "classifiers the data set does not have.")),
                "threshold choice"),
        },
    },
    "/api/v1/datasets/{dataset_id}/threshold-money.json": {
        "get": {
            "operationId": "getDatasetThresholdMoney", "tags": ["exports"],
            "summary": "Money against the threshold of one classifier, its top-fraction table "
                       "and calibrate-then-choose, for the view",
            "description": "For the view in the query (issue 28): the expected cost per case of "
                           "every threshold of one classifier (the view's model, else the one "
                           "the conditions choose; at most 2000 points, the cheapest and the "
                           "pins kept), its cheapest threshold and the view's pins for it, the "
                           "top-fraction table (deciles, and the capacity over the volume as "
                           "its own row) with cumulative precision, lift, positives captured "
                           "and cost, and flagging from the conditions' threshold probability "
                           "before and after Platt and isotonic calibration on folds beside "
                           "the best threshold. A read-only handle's curves are the thinned "
                           "ones its link shows.",
            "parameters": [_DATASET_ID, *_VIEW_QUERY],
            "responses": _export_responses(_json_reply(
                "The numbers, as an attachment.", _closed({
                    "classifier": {"type": "string"}, "volume": _NUMBER,
                    "unit": {"type": "string"},
                    "conditions": _closed({"p_pos": _NUMBER, "cost_fn": _NUMBER,
                                           "cost_fp": _NUMBER, "cost_tp": _NUMBER,
                                           "cost_tn": _NUMBER, "pc": RATE},
                                          description="The view's conditions."),
                    "cheapest": _closed({"threshold": THRESHOLD, "expected_cost": _NUMBER},
                                        description="The cheapest threshold (null: flag "
                                                    "nothing) and its expected cost per case."),
                    "pins": {"type": "array", "items": _closed(
                        {"threshold": _NUMBER, "expected_cost": _NUMBER},
                        description="A pin of this classifier and its expected cost per "
                                    "case.")},
                    "curve": _closed({"threshold": {"type": "array", "items": THRESHOLD},
                                      "fpr": NUMBERS, "tpr": NUMBERS, "expected_cost": NUMBERS},
                                     description="Flag score >= threshold (null first: flag "
                                                 "nothing): its ROC point and expected cost "
                                                 "per case."),
                    "top_fractions": {"type": "object", "description": "Per fraction of the "
                                      "cases with the highest scores: threshold, flagged, "
                                      "positives, precision, lift, recall, expected_cost; "
                                      "capacity is the capacity row's index (or null)."},
                    "calibrate_then_choose": {"type": "object", "description": "tau (the "
                                              "threshold probability), prevalence and rows "
                                              "(scores, platt, isotonic, best) with threshold, "
                                              "flagged, expected_cost, regret and refused; or "
                                              "error."},
                }, description="Issue 28's views for one classifier.")),
                bad_view=_error("A view value that is not a number or out of its bounds, or "
                                "ticked classifiers the data set does not have.")),
        },
    },
    "/api/v1/analyses": {
        "post": {
            "operationId": "createAnalysis", "tags": ["analyses"],
            "summary": "Save an analysis behind a read-only link",
            "description": "Uploads the file and saves it with an operating condition. The "
                           "reply's url can be shared; manage_url and manage_token control the "
                           "analysis and are shown only in this reply.",
            "requestBody": _multipart("AnalysisUpload",
                                      "The file, how to read it, and the saved condition."),
            "responses": {"201": _json_reply("Saved.", _ref("AnalysisCreated")),
                          **_UPLOAD_ERRORS},
        },
    },
    "/api/v1/analyses/{id_or_token}": {
        "get": {
            "operationId": "getAnalysis", "tags": ["analyses"],
            "summary": "A saved analysis, by its read-only token",
            "description": "Without an Authorization header each classifier's ROC arrays are "
                           "thinned (hull and envelope exact); with the analysis's manage token "
                           "as a bearer token, every point.",
            "security": [{}, *_MANAGED],
            "parameters": [_path_parameter(
                "id_or_token", "The read-only token: the last path segment of the analysis's "
                               "url.")],
            "responses": {
                "200": _json_reply("The analysis.", _ref("SharedAnalysis")),
                "401": _NO_TOKEN, "403": _WRONG_TOKEN,
                "404": _error("No live analysis has this token: it was deleted, it expired, "
                              "or it is mistyped."),
                "503": STORAGE_DOWN,
            },
        },
        "patch": {
            "operationId": "updateAnalysis", "tags": ["analyses"],
            "summary": "Rename an analysis or change its expiry",
            "security": _MANAGED,
            "parameters": [_ANALYSIS_ID],
            "requestBody": {"required": True,
                            "content": {JSON: {"schema": _ref("AnalysisUpdate")}}},
            "responses": {
                "200": _json_reply("Changed.", _ref("AnalysisUpdated")),
                "400": _error("Not a JSON object, an unknown field, or a value out of range."),
                "401": _NO_TOKEN, "403": _WRONG_TOKEN,
                "404": _error("No analysis has this id."), "503": STORAGE_DOWN,
            },
        },
        "delete": {
            "operationId": "deleteAnalysis", "tags": ["analyses"],
            "summary": "Delete an analysis",
            "description": "Its links answer 404 from then on; its data set goes too unless "
                           "another analysis uses it.",
            "security": _MANAGED,
            "parameters": [_ANALYSIS_ID],
            "responses": {
                "204": {"description": "Deleted."},
                "401": _NO_TOKEN, "403": _WRONG_TOKEN,
                "404": _error("No analysis has this id."), "503": STORAGE_DOWN,
            },
        },
    },
    "/api/v1/analyses/{id_or_token}/link": {
        "post": {
            "operationId": "replaceLink", "tags": ["analyses"],
            "summary": "Give an analysis a new read-only link",
            "description": "A new token, in the reply's url; the old link answers 404 from "
                           "now on, and so does everything it opened (the read-only data set "
                           "id changes too). Also opens a link again after a revoke.",
            "security": _MANAGED,
            "parameters": [_ANALYSIS_ID],
            "responses": {
                "200": _json_reply("The analysis with its new link.", _ref("AnalysisUpdated")),
                "401": _NO_TOKEN, "403": _WRONG_TOKEN,
                "404": _error("No analysis has this id."), "503": STORAGE_DOWN,
            },
        },
        "delete": {
            "operationId": "revokeLink", "tags": ["analyses"],
            "summary": "Revoke an analysis's read-only link, keeping the analysis",
            "description": "The link (and what it opened) answers 404 from now on; the reply's "
                           "url is null. POST gives a new link.",
            "security": _MANAGED,
            "parameters": [_ANALYSIS_ID],
            "responses": {
                "200": _json_reply("The analysis, without a link.", _ref("AnalysisUpdated")),
                "401": _NO_TOKEN, "403": _WRONG_TOKEN,
                "404": _error("No analysis has this id."), "503": STORAGE_DOWN,
            },
        },
    },
    "/api/v1/analyses/{manage_token}/production": PRODUCTION_PATH,
    "/api/v1/openapi.json": {
        "get": {
            "operationId": "getOpenApi", "tags": ["service"],
            "summary": "This description",
            "responses": {"200": _json_reply(
                "The OpenAPI document.",
                {"type": "object", "required": ["openapi", "info", "paths"],
                 "properties": {"openapi": {"const": OPENAPI_VERSION}}})},
        },
    },
    "/healthz": {
        "get": {
            "operationId": "getHealth", "tags": ["service"],
            "summary": "Health check for load balancers",
            "responses": {"200": _json_reply("Healthy.", _ref("Health")),
                          "503": _json_reply("Unhealthy.", _ref("Unhealthy"))},
        },
    },
}

_TOO_LONG = _error("The address (path and query) is over 8,000 bytes. (A request line over "
                   "8,190 bytes is refused by the server in front, with its own body.)")
for _item in PATHS.values():
    for _operation in _item.values():
        _operation["responses"].setdefault("414", _TOO_LONG)

_DOCUMENT: dict[str, Any] = {
    "openapi": OPENAPI_VERSION,
    "info": {
        "title": "costdash",
        "version": costdash.__version__,
        "summary": "Cost-sensitive classifier selection: upload predictions, save analyses "
                   "behind links.",
        "description": "Every error reply is JSON {\"error\": message}. Uploads are "
                       "multipart/form-data with the file in the field 'file'. A method a "
                       "path does not have answers 405 with an Allow header naming those it "
                       "has.",
    },
    "tags": [
        {"name": "datasets", "description": "Uploaded predictions files."},
        {"name": "exports", "description": "Reports and tables of a stored data set."},
        {"name": "analyses", "description": "Saved analyses: read-only links and their "
                                            "management."},
        {"name": "service", "description": "Health and this description."},
    ],
    "paths": PATHS,
    "components": {
        "schemas": SCHEMAS,
        "securitySchemes": {
            "manageToken": {"type": "http", "scheme": "bearer",
                            "description": "The manage_token returned when the analysis was "
                                           "saved."},
        },
    },
}


def openapi_document(server_url: str | None = None) -> dict[str, Any]:
    """The OpenAPI 3.1 document of the HTTP API.

    Parameters
    ----------
    server_url : str, optional
        The server's root URL (``http://host:port``, no trailing slash), listed as the document's
        server; without it, clients resolve the paths against wherever they fetched it.

    Returns
    -------
    dict
        A fresh copy, ready for :func:`json.dumps`; the caller may change it.
    """
    document = copy.deepcopy(_DOCUMENT)
    if server_url:
        document["servers"] = [{"url": server_url}]
    return document
