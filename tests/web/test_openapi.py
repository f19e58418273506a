"""The OpenAPI document (``dashboard.api.openapi_doc``) against the app it describes.

The document must be valid OpenAPI 3.1, list exactly the app's API routes, and describe what they
answer: every documented operation is called with the Flask test client on real files, each reply
is checked against the document (status documented, media type, body valid against its schema),
and one test calls them all and checks that every documented reply was seen.
"""

from __future__ import annotations

import functools
import json
import re
from dataclasses import dataclass, field
from pathlib import Path
from urllib.parse import urlsplit

import pytest
import sqlalchemy as sa
from hypothesis import HealthCheck, assume, given, settings
from jsonschema import Draft202012Validator
from openapi_spec_validator import validate as validate_openapi
from referencing import Registry, Resource
from referencing.jsonschema import DRAFT202012

from costdash.analysis import analysis_to_dict, analyze
from costdash.conditions import OperatingCondition
from costdash.demo import load_demo
from costdash.view import VIEW_FIELDS, View
from dashboard.config import Settings
from dashboard.factory import create_app
from dashboard.api.openapi_doc import openapi_document
from dashboard.report import CSV_NAMES
from dashboard.sharing import VIEW_KEYS
from tests.test_view import views
from tests.web.test_production_api import exercise_production

DOCUMENT_URI = "urn:costdash:openapi"
HTTP_METHODS = ("get", "put", "post", "delete", "options", "head", "patch", "trace")
TEST_SERVER = "http://localhost"  # the Flask test client's host


def templates_of(path: str) -> str:
    """A route with its parameter names erased: Flask's ``<conv:name>`` and OpenAPI's ``{name}``."""
    return re.sub(r"<[^>]+>|\{[^}]+\}", "{}", path)


def pointer(*parts: str) -> str:
    return "".join("/" + p.replace("~", "~0").replace("/", "~1") for p in parts)


@dataclass
class Api:
    """The Flask test client, checking each reply against the OpenAPI document.

    ``seen`` collects (method, documented path, status) of the replies checked.
    """

    client: object
    document: dict = field(default_factory=openapi_document)
    seen: set[tuple[str, str, str]] = field(default_factory=set)

    def __post_init__(self):
        resource = Resource.from_contents(self.document, default_specification=DRAFT202012)
        self.registry = Registry().with_resource(DOCUMENT_URI, resource)

    def documented_path(self, url: str) -> str:
        path = urlsplit(url).path
        matches = [p for p in self.document["paths"]
                   if re.fullmatch(re.sub(r"\\\{[^}]+\\\}", "[^/]+", re.escape(p)), path)]
        assert len(matches) == 1, f"{path} matches {matches} in the document"
        return matches[0]

    def schema_errors(self, instance, *location: str) -> list[str]:
        validator = Draft202012Validator(
            {"$ref": DOCUMENT_URI + "#" + pointer(*location)}, registry=self.registry,
            format_checker=Draft202012Validator.FORMAT_CHECKER)
        return [f"{list(e.absolute_path)}: {e.message}" for e in validator.iter_errors(instance)]

    def call(self, method: str, url: str, status: int, **kwargs):
        """Send a request, expect ``status``, and check the reply against the document."""
        response = self.client.open(url, method=method.upper(), **kwargs)
        body = response.get_data()
        assert response.status_code == status, body[:500]
        path = self.documented_path(url)
        replies = self.document["paths"][path][method]["responses"]
        assert str(status) in replies, f"{method} {path} answered {status}: not documented"
        content = replies[str(status)].get("content")
        if content is None:
            assert body == b""
        else:
            assert response.mimetype in content, (response.mimetype, list(content))
            if response.mimetype == "application/json":
                errors = self.schema_errors(
                    response.get_json(), "paths", path, method, "responses", str(status),
                    "content", "application/json", "schema")
                assert errors == [], errors
            else:
                assert body
        self.seen.add((method, path, str(status)))
        return response

    def documented_replies(self) -> set[tuple[str, str, str]]:
        return {(method, path, status)
                for path, item in self.document["paths"].items()
                for method, operation in item.items() if method in HTTP_METHODS
                for status in operation["responses"]}


def upload(path: Path, **fields: str | list[str]) -> dict:
    """Multipart form data of the Flask test client: the file in 'file', then ``fields``."""
    return {"data": {"file": (path.open("rb"), path.name), **fields},
            "content_type": "multipart/form-data"}


def bearer(token: str) -> dict:
    return {"Authorization": f"Bearer {token}"}


@pytest.fixture
def api(client) -> Api:
    return Api(client)


@pytest.fixture
def small_limit_api(tmp_path) -> Api:
    """An app that refuses uploads over 4 kB (the breast-cancer demo is larger)."""
    app = create_app(Settings.from_mapping({"data_dir": tmp_path / "small",
                                            "max_upload_bytes": 4096}))
    return Api(app.server.test_client())


# --- the document on its own -----------------------------------------------------------------

@pytest.mark.slow
def test_document_is_valid_openapi_3_1():
    document = openapi_document("http://127.0.0.1:8050")
    validate_openapi(document)
    assert document["openapi"] == "3.1.0"
    assert document["servers"] == [{"url": "http://127.0.0.1:8050"}]
    assert "servers" not in openapi_document()


def test_each_call_gets_a_fresh_document():
    first = openapi_document()
    first["paths"].clear()
    first["components"]["schemas"]["Error"]["properties"].clear()
    second = openapi_document()
    assert second["paths"] and second["components"]["schemas"]["Error"]["properties"]


def test_formats_are_checked_not_ignored():
    # jsonschema skips formats it has no checker for; date-time needs rfc3339-validator.
    assert "date-time" in Draft202012Validator.FORMAT_CHECKER.checkers


def test_every_api_route_is_documented_and_nothing_else(web_app):
    routes = {(templates_of(rule.rule), method.lower())
              for rule in web_app.server.url_map.iter_rules()
              if rule.rule.startswith("/api/v1/") or rule.rule == "/healthz"
              for method in rule.methods - {"HEAD", "OPTIONS"}}
    documented = {(templates_of(path), method)
                  for path, item in openapi_document()["paths"].items()
                  for method in item if method in HTTP_METHODS}
    assert routes == documented


def test_manage_operations_need_the_bearer_token_and_nothing_else_does():
    document = openapi_document()
    scheme = document["components"]["securitySchemes"]["manageToken"]
    assert scheme == {**scheme, "type": "http", "scheme": "bearer"}
    secured = {(path, method) for path, item in document["paths"].items()
               for method, operation in item.items()
               if operation.get("security") and {} not in operation["security"]}
    assert secured == {("/api/v1/analyses/{id_or_token}", "patch"),
                       ("/api/v1/analyses/{id_or_token}", "delete"),
                       ("/api/v1/analyses/{id_or_token}/link", "post"),
                       ("/api/v1/analyses/{id_or_token}/link", "delete")}
    # A read link's JSON takes the token optionally: with it, every ROC point (issue 11, 6).
    optional = {(path, method) for path, item in document["paths"].items()
                for method, operation in item.items() if {} in operation.get("security", [])}
    assert optional == {("/api/v1/analyses/{id_or_token}", "get")}
    assert "security" not in document


def test_analyze_schema_is_the_cli_contract(api):
    result = analysis_to_dict(analyze(load_demo("breast-cancer"),
                                      OperatingCondition(0.1, 3.0, 1.0)), max_points=50)
    location = ("components", "schemas", "AnalyzeResult")
    assert api.schema_errors(result, *location) == []
    # Closed at every level: an extra or a missing field is a change of the contract.
    assert api.schema_errors({**result, "extra": 1}, *location)
    assert api.schema_errors({k: v for k, v in result.items() if k != "hull"}, *location)
    changed = json.loads(json.dumps(result))
    changed["operating_point"]["chosen"] = "logreg"
    assert api.schema_errors(changed, *location)
    changed = json.loads(json.dumps(result))
    del changed["classifiers"][0]["roc"]["threshold"]
    assert api.schema_errors(changed, *location)


def test_saved_view_schema_names_every_view_key():
    properties = openapi_document()["components"]["schemas"]["SavedView"]["properties"]
    assert set(properties) == set(VIEW_KEYS) == {f.name for f in VIEW_FIELDS} - {"data"}
    view = openapi_document()["components"]["schemas"]["View"]["properties"]
    assert list(view) == [f.name for f in VIEW_FIELDS]


def _keywords(f) -> dict:
    out = {}
    if f.low is not None:
        out["exclusiveMinimum" if f.low_open else "minimum"] = f.low
    if f.high is not None:
        out["exclusiveMaximum" if f.high_open else "maximum"] = f.high
    return out


def test_view_bounds_and_defaults_are_the_parsers():
    """One source: every field's bounds, default and rule in the document are costdash.view's."""
    properties = openapi_document()["components"]["schemas"]["View"]["properties"]
    for f in VIEW_FIELDS:
        schema = properties[f.name]
        number = schema["items"] if f.kind == "range" else schema
        bounds = {k: v for k, v in number.items()
                  if k in ("minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum")}
        assert bounds == _keywords(f), f.name
        assert schema.get("default") == f.default, f.name
        assert f.requirement() in schema["description"], f.name
    assert properties["p_pos"]["exclusiveMinimum"] == 0
    assert properties["max_fpr"] == {**properties["max_fpr"], "minimum": 0, "maximum": 1}


@pytest.mark.parametrize("path", ["/api/v1/datasets/{dataset_id}/report.html",
                                  "/api/v1/datasets/{dataset_id}/{name}.csv"])
def test_export_query_parameters_are_the_view(path):
    parameters = openapi_document()["paths"][path]["get"]["parameters"]
    query = {p["name"]: p for p in parameters if p["in"] == "query"}
    assert set(query) - {"band", "standalone"} == set(VIEW_KEYS)
    view = openapi_document()["components"]["schemas"]["View"]["properties"]
    for name in set(VIEW_KEYS) - {"pins"}:
        assert {k: v for k, v in query[name]["schema"].items()} == \
            {k: v for k, v in view[name].items() if k != "description"}, name
    # Pins travel as the parser reads a query's text (issue 22, finding 11: the document said
    # a JSON array, which the parser refuses in a query or form field).
    assert query["pins"]["schema"]["type"] == "string"
    assert view["pins"]["type"] == "array"
    # Lists and ranges travel comma-separated, as the dashboard writes them.
    assert (query["models"]["style"], query["models"]["explode"]) == ("form", False)
    assert (query["sens_p"]["style"], query["sens_p"]["explode"]) == ("form", False)


@functools.cache
def schema_api() -> Api:
    """One document and schema registry for the property test's examples (building them is
    most of an example's time); :meth:`Api.schema_errors` changes neither."""
    return Api(client=None)


@settings(max_examples=50, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(views())
@pytest.mark.slow
def test_every_view_the_parser_accepts_is_valid_against_the_schema(view):
    assume(view.cost_tp < view.cost_fn and view.cost_tn < view.cost_fp)  # else parse refuses
    api = schema_api()
    assert api.schema_errors(view.to_json(), "components", "schemas", "View") == []
    saved = view.effective(0.25).to_json()
    saved.pop("data", None)
    assert api.schema_errors(saved, "components", "schemas", "SavedView") == []


@pytest.mark.parametrize("bad", [{"p_pos": 1}, {"p_pos": 0}, {"cost_fn": 0}, {"volume": -1},
                                 {"max_fpr": 1.5}, {"sens_p": [0.1]}, {"replicates": 0},
                                 {"level": 1}, {"unit": "x" * 13}, {"colour": "blue"}])
def test_values_the_parser_refuses_are_invalid_against_the_schema(bad):
    api = Api(client=None)
    json_view = {**View().with_values(p_pos=0.2).to_json(), **bad}
    assert api.schema_errors(json_view, "components", "schemas", "View")


def test_pins_as_the_document_writes_them_are_what_the_parser_reads():
    """In a query or a form, the documented text form parses; the JSON form the document used
    to show is refused by the parser and invalid against the document."""
    document = openapi_document()
    query = {p["name"]: p for p in document["paths"]["/api/v1/datasets/{dataset_id}/report.html"]
             ["get"]["parameters"]}
    form = document["components"]["schemas"]["AnalysisUpload"]["properties"]
    for schema in (query["pins"]["schema"], form["pins"]):
        validator = Draft202012Validator(schema)
        for text in ("gbm:0.5,logreg:0.42", "a:b:1e-3"):
            assert list(validator.iter_errors(text)) == []
            assert View.parse({"pins": text}, only=("pins",)).pins
        as_json = json.dumps([{"model": "gbm", "threshold": 0.5}])
        assert list(validator.iter_errors(as_json))
        with pytest.raises(ValueError):
            View.parse({"pins": as_json}, only=("pins",))


def test_csv_names_are_the_exports():
    item = openapi_document()["paths"]["/api/v1/datasets/{dataset_id}/{name}.csv"]["get"]
    (name,) = [p for p in item["parameters"] if p["name"] == "name"]
    assert name["schema"]["enum"] == list(CSV_NAMES)


# --- every operation, against the app ----------------------------------------------------------

def exercise_datasets(api: Api, demo: Path, broken: Path) -> None:
    record = api.call("post", "/api/v1/datasets", 200, **upload(demo)).get_json()
    assert record["classifiers"] == ["logreg", "forest", "gbm", "naive_bayes", "stump"]
    message = api.call("post", "/api/v1/datasets", 400, **upload(broken)).get_json()["error"]
    assert "broken.csv" in message
    api.call("post", "/api/v1/datasets", 400, data={"layout": "wide"},
             content_type="multipart/form-data")
    api.call("post", "/api/v1/datasets", 400, **upload(demo, colour="blue"))

    info = api.call("get", f"/api/v1/datasets/{record['id']}", 200).get_json()
    assert info["n_pos"] + info["n_neg"] == info["n"] == 569
    api.call("get", "/api/v1/datasets/" + "0" * 32, 404)

    report = f"/api/v1/datasets/{record['id']}/report.html"
    html = api.call("get", report + "?p_pos=0.2&cost_fn=5", 200).get_data(as_text=True)
    assert html.lstrip().lower().startswith("<!doctype html")
    api.call("get", report + "?p_pos=lots", 400)
    # Values each valid, not together; from a browser, as a page (issue 24).
    api.call("get", report + "?cost_fn=40&cost_tp=50", 400)
    api.call("get", report + "?cost_fn=40&cost_tp=50", 400, headers={"Accept": "text/html"})
    api.call("get", "/api/v1/datasets/" + "0" * 32 + "/report.html", 404)
    for name in CSV_NAMES:
        api.call("get", f"/api/v1/datasets/{record['id']}/{name}.csv", 200)
        api.call("get", f"/api/v1/datasets/{record['id']}/{name}.csv?models=gbm,logreg", 200)
    message = api.call("get", f"/api/v1/datasets/{record['id']}/hull.csv?models=gbm,nope",
                       400).get_json()["error"]
    assert "nope" in message
    message = api.call("get", f"/api/v1/datasets/{record['id']}/envelope.csv?level=1",
                       400).get_json()["error"]
    assert "Confidence level" in message and "strictly between 0 and 1" in message
    api.call("get", f"/api/v1/datasets/{record['id']}/everything.csv", 404)
    decision = f"/api/v1/datasets/{record['id']}/decision.json"
    got = api.call("get", decision + "?p_pos=0.02&cost_fn=30&cost_fp=1.5&models=gbm,logreg",
                   200).get_json()
    assert got["decision"]["classifier"] in ("gbm", "logreg")
    assert {p["classifier"] for p in got["policy"]} <= {"gbm", "logreg", "all-negative",
                                                        "all-positive"}
    message = api.call("get", decision + "?cost_fn=3&cost_tp=5", 400).get_json()["error"]
    assert "C(+|+) must be below C(−|+)" in message
    api.call("get", "/api/v1/datasets/" + "0" * 32 + "/decision.json", 404)
    choice = f"/api/v1/datasets/{record['id']}/choice.json"
    got = api.call("get", choice + "?p_pos=0.1&cost_fn=20&sens_p=0.05,0.2&sens_fn=10,40"
                   "&models=gbm,logreg&pins=gbm:0.5&calibration=platt&beta_a=2&beta_b=3",
                   200).get_json()
    assert got["robust_pc"]["beta"] == [2.0, 3.0]
    assert [c["name"] for c in got["classifiers"]] == ["logreg", "gbm"]
    assert got["robust"]["minimax_regret"]["classifier"] in ("gbm", "logreg")
    assert api.call("get", choice, 200).get_json()["robust"] is None  # no sensitivity box
    message = api.call("get", choice + "?calibration=magic", 400).get_json()["error"]
    assert "platt or isotonic" in message
    api.call("get", "/api/v1/datasets/" + "0" * 32 + "/choice.json", 404)
    money = f"/api/v1/datasets/{record['id']}/threshold-money.json"
    got = api.call("get", money + "?p_pos=0.1&cost_fn=20&model=gbm&capacity=100&pins=gbm:0.5",
                   200).get_json()
    assert got["classifier"] == "gbm" and got["top_fractions"]["capacity"] == 0
    api.call("get", money + "?models=gbm,nope", 400)
    api.call("get", "/api/v1/datasets/" + "0" * 32 + "/threshold-money.json", 404)
    api.call("get", "/api/v1/datasets/" + "0" * 32 + "/hull.csv", 404)
    api.call("delete", f"/api/v1/datasets/{record['id']}", 204)
    api.call("delete", f"/api/v1/datasets/{record['id']}", 404)
    api.call("get", f"/api/v1/datasets/{record['id']}", 404)


def exercise_analyses(api: Api, demo: Path, broken: Path) -> None:
    created = api.call("post", "/api/v1/analyses", 201, **upload(
        demo, p_pos="0.2", cost_fn="5", cost_fp="1", name="Screening",
        expires_in_days="30")).get_json()
    token = created["url"].rsplit("/", 1)[-1]
    assert created["url"] == f"{TEST_SERVER}/s/{token}"
    assert created["manage_url"] == f"{TEST_SERVER}/manage/{created['manage_token']}"
    assert created["expires_at"] is not None

    shared = api.call("get", f"/api/v1/analyses/{token}", 200).get_json()
    assert {k: shared["view"][k] for k in ("p_pos", "cost_fn", "cost_fp")} == \
        {"p_pos": 0.2, "cost_fn": 5.0, "cost_fp": 1.0}
    assert shared["operating_point"]["p_pos"] == 0.2
    assert shared["analysis"]["name"] == "Screening"
    assert "dataset_id" not in shared["analysis"]  # issue 22: a read link holds no data id
    assert shared["analysis"]["roc_points"] == "at most 400 per classifier"
    # The owner (manage token) gets every ROC point and the data set's id; a malformed or
    # wrong token is refused.
    owner = api.call("get", f"/api/v1/analyses/{token}", 200,
                     headers=bearer(created["manage_token"])).get_json()
    assert owner["analysis"]["roc_points"] == "all"
    assert owner["analysis"]["dataset_id"] == created["dataset_id"]
    assert owner["hull"] == shared["hull"] and owner["envelope"] == shared["envelope"]
    api.call("get", f"/api/v1/analyses/{token}", 401, headers={"Authorization": "Basic x"})
    api.call("get", f"/api/v1/analyses/{token}", 403, headers=bearer("y" * 32))

    # Every view field goes with the analysis, and comes back in its view.
    full = api.call("post", "/api/v1/analyses", 201, **upload(
        demo, p_pos="0.05", cost_fn="20", volume="250", unit="$", models="gbm,logreg",
        sens_p="0.01,0.1", max_fpr="0.2", capacity="40", lines="1")).get_json()
    shared = api.call("get", f"/api/v1/analyses/{full['url'].rsplit('/', 1)[-1]}",
                      200).get_json()
    assert shared["view"] == {"p_pos": 0.05, "cost_fn": 20.0, "cost_fp": 1.0, "volume": 250.0,
                              "unit": "$", "models": ["gbm", "logreg"], "lines": True,
                              "sens_p": [0.01, 0.1], "max_fpr": 0.2, "capacity": 40.0}
    assert [c["name"] for c in shared["classifiers"]] == ["gbm", "logreg"]

    api.call("post", "/api/v1/analyses", 400, **upload(demo, p_pos="1.5"))
    message = api.call("post", "/api/v1/analyses", 400,
                       **upload(demo, volume="-3")).get_json()["error"]
    assert message == "Volume must be a number at least 0; got '-3'."
    api.call("post", "/api/v1/analyses", 400, **upload(broken))
    api.call("get", "/api/v1/analyses/" + "x" * 32, 404)

    analysis = f"/api/v1/analyses/{created['id']}"
    changed = api.call("patch", analysis, 200, json={"name": "Renamed", "expires_in_days": None},
                       headers=bearer(created["manage_token"])).get_json()
    assert changed["analysis"]["name"] == "Renamed" and changed["analysis"]["expires_at"] is None
    api.call("patch", analysis, 400, json=["not", "an", "object"],
             headers=bearer(created["manage_token"]))
    api.call("patch", analysis, 401, json={"name": "x"})
    api.call("patch", analysis, 403, json={"name": "x"}, headers=bearer("y" * 32))
    api.call("patch", "/api/v1/analyses/" + "0" * 16, 404, json={"name": "x"},
             headers=bearer(created["manage_token"]))

    # The read-only link replaced, then revoked, then made again; the analysis stays, and the
    # manage token's replies say how often the link was opened.
    link = f"{analysis}/link"
    owner = bearer(created["manage_token"])
    before = api.call("get", f"/api/v1/analyses/{token}", 200, headers=owner).get_json()
    assert before["analysis"]["opens"] == 1  # the read without a token above
    replaced = api.call("post", link, 200, headers=owner).get_json()["analysis"]
    new_token = replaced["url"].rsplit("/", 1)[-1]
    assert new_token != token and replaced["opens"] == 1
    api.call("get", f"/api/v1/analyses/{token}", 404)
    api.call("get", f"/api/v1/analyses/{new_token}", 200)
    revoked = api.call("delete", link, 200, headers=owner).get_json()["analysis"]
    assert revoked["url"] is None and revoked["opens"] == 2
    api.call("get", f"/api/v1/analyses/{new_token}", 404)
    token = api.call("post", link, 200, headers=owner).get_json()["analysis"]["url"] \
        .rsplit("/", 1)[-1]
    for method in ("post", "delete"):
        api.call(method, link, 401)
        api.call(method, link, 403, headers=bearer(token))
        api.call(method, "/api/v1/analyses/" + "0" * 16 + "/link", 404, headers=owner)

    api.call("delete", analysis, 401, headers={"Authorization": "Basic abc"})
    api.call("delete", analysis, 403, headers=bearer(token))  # the read-only token manages nothing
    api.call("delete", analysis, 204, headers=bearer(created["manage_token"]))
    api.call("delete", analysis, 404, headers=bearer(created["manage_token"]))
    api.call("get", f"/api/v1/analyses/{token}", 404)


def exercise_service(api: Api) -> None:
    served = api.call("get", "/api/v1/openapi.json", 200).get_json()
    assert served == openapi_document(TEST_SERVER)
    assert api.call("get", "/healthz", 200).get_json() == {"status": "ok"}


def exercise_gate(api: Api, demo: Path) -> None:
    """Issue 22, finding 7: an uncached report or threshold choice with no compute slot free is
    refused at once, 429 when the client's own slot is held, 503 when the site's are, both with
    Retry-After; a cached one is answered all the same, and so is a threshold choice at a new
    condition whose condition-free curves the worker keeps (issue 23: only its own part is
    computed); one with a new Beta needs new curves."""
    from dashboard.jobs.gate import LEASE_SECONDS
    from dashboard.storage.sharedstate import give_back, take_slot

    services = api.client.application.extensions["costdash"]
    data_id = api.call("post", "/api/v1/datasets", 200, **upload(demo)).get_json()["id"]
    base = f"/api/v1/datasets/{data_id}"
    for path in ("report.html", "choice.json"):
        api.call("get", f"{base}/{path}?p_pos=0.2", 200)
    sites = [take_slot(services.store, "site:all", services.settings.max_heavy_jobs,
                       LEASE_SECONDS) for _ in range(services.settings.max_heavy_jobs)]
    mine = take_slot(services.store, "client:127.0.0.1",
                     services.settings.max_heavy_jobs_per_client, LEASE_SECONDS)
    try:
        for held, status in (([mine], 429), (sites, 503)):
            api.call("get", f"{base}/choice.json?p_pos=0.7", 200)  # its own part only
            for path, new in (("report.html", "p_pos=0.7"), ("choice.json", "p_pos=0.7&beta_a=2")):
                api.call("get", f"{base}/{path}?p_pos=0.2", 200)  # cached: no slot taken
                refused = api.call("get", f"{base}/{path}?{new}", status)
                assert "not started" in refused.get_json()["error"]
                assert int(refused.headers["Retry-After"]) > 0
            # A browser following "Download report" gets a page saying so.
            page = api.call("get", f"{base}/report.html?p_pos=0.7", status,
                            headers={"Accept": "text/html,application/xhtml+xml,*/*;q=0.8"})
            assert page.mimetype == "text/html" and int(page.headers["Retry-After"]) > 0
            assert "not made yet" in page.get_data(as_text=True)
            for lease in held:
                give_back(services.store, lease)
    finally:
        for lease in [mine, *sites]:
            give_back(services.store, lease)


@pytest.mark.slow
def test_gate(api, breast_cancer_csv):
    exercise_gate(api, breast_cancer_csv)


def exercise_upload_limit(api: Api, demo: Path) -> None:
    for url in ("/api/v1/datasets", "/api/v1/analyses"):
        message = api.call("post", url, 413, **upload(demo)).get_json()["error"]
        assert "limit" in message


def exercise_server_failure(api: Api, demo: Path) -> None:
    """A bug while storing the upload: a JSON 500, not an HTML page."""
    def fail(_record):
        raise RuntimeError("a bug")

    services = api.client.application.extensions["costdash"]
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(services.views, "prime", fail)
        for url in ("/api/v1/datasets", "/api/v1/analyses"):
            api.call("post", url, 500, **upload(demo))


def exercise_storage_down(api: Api, demo: Path) -> None:
    """Every operation that reads or writes the database, with the database unreachable."""
    dataset = api.call("post", "/api/v1/datasets", 200, **upload(demo)).get_json()
    created = api.call("post", "/api/v1/analyses", 201, **upload(demo)).get_json()
    token = created["url"].rsplit("/", 1)[-1]
    services = api.client.application.extensions["costdash"]
    analysis = f"/api/v1/analyses/{created['id']}"
    with pytest.MonkeyPatch.context() as patch:
        # A database file that cannot be opened: the driver's real connection error.
        patch.setattr(services.store, "engine",
                      sa.create_engine("sqlite:////nonexistent-dir/costdash.db"))
        for url in ("/api/v1/datasets", "/api/v1/analyses"):
            api.call("post", url, 503, **upload(demo))
        for url in (f"/api/v1/datasets/{dataset['id']}",
                    f"/api/v1/datasets/{dataset['id']}/hull.csv",
                    f"/api/v1/datasets/{dataset['id']}/report.html",
                    f"/api/v1/datasets/{dataset['id']}/decision.json",
                    f"/api/v1/datasets/{dataset['id']}/choice.json",
                    f"/api/v1/datasets/{dataset['id']}/threshold-money.json",
                    f"/api/v1/analyses/{token}"):
            api.call("get", url, 503)
        api.call("delete", f"/api/v1/datasets/{dataset['id']}", 503)
        api.call("patch", analysis, 503, json={"name": "x"},
                 headers=bearer(created["manage_token"]))
        api.call("delete", analysis, 503, headers=bearer(created["manage_token"]))
        for method in ("post", "delete"):
            api.call(method, f"{analysis}/link", 503, headers=bearer(created["manage_token"]))
        assert api.call("get", "/healthz", 503).get_json()["status"] == "error"
    # Back up, nothing was lost.
    api.call("get", f"/api/v1/analyses/{token}", 200)


def exercise_long_addresses(api: Api) -> None:
    """Every operation answers an address over 8,000 bytes with its documented 414 (issue 22,
    finding 11: gunicorn's own 414 was undocumented)."""
    long_query = "?unit=" + "x" * 8_100
    for path, item in api.document["paths"].items():
        url = path.replace("{dataset_id}", "0" * 32).replace("{id_or_token}", "0" * 16) \
            .replace("{name}", "hull")
        for method in item:
            message = api.call(method, url + long_query, 414).get_json()["error"]
            assert "over the limit of 8,000" in message


@pytest.mark.slow
def test_datasets_and_exports(api, breast_cancer_csv, bad_csv):
    exercise_datasets(api, breast_cancer_csv, bad_csv)


def test_analyses(api, breast_cancer_csv, bad_csv):
    exercise_analyses(api, breast_cancer_csv, bad_csv)


def test_openapi_and_health(api):
    exercise_service(api)


def test_upload_limit(small_limit_api, breast_cancer_csv):
    exercise_upload_limit(small_limit_api, breast_cancer_csv)


def test_server_failure(api, breast_cancer_csv):
    exercise_server_failure(api, breast_cancer_csv)


def test_storage_down(api, breast_cancer_csv):
    exercise_storage_down(api, breast_cancer_csv)


@pytest.mark.slow
def test_every_documented_reply_is_exercised(api, small_limit_api, breast_cancer_csv, bad_csv):
    exercise_datasets(api, breast_cancer_csv, bad_csv)
    exercise_analyses(api, breast_cancer_csv, bad_csv)
    exercise_service(api)
    exercise_server_failure(api, breast_cancer_csv)
    exercise_storage_down(api, breast_cancer_csv)
    exercise_gate(api, breast_cancer_csv)
    exercise_upload_limit(small_limit_api, breast_cancer_csv)
    exercise_long_addresses(api)
    exercise_production(api, small_limit_api)
    assert api.documented_replies() - (api.seen | small_limit_api.seen) == set()
