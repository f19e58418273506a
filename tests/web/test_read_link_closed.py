"""A read link is a closed world (issue 22, findings 1-3), server side.

Inside ``/s/<token>`` the pages keep the link's data reference (``share:<token>``), never the
owner's upload handle nor the analysis's read-only handle; the callbacks resolve it on the server
(:meth:`dashboard.sharing.ShareService.scope`) to the classifiers the owner ticked; the nav stays
in the link; and a viewer's pins answer from the thinned curve the link already shows, so a pin
walk recovers no point beyond it. The browser side is ``test_e2e_read_link_closed.py``.
"""

from __future__ import annotations

import io
import json
import sys

import numpy as np
import pytest
from dash import no_update

from costdash.roc import roc_of
from costdash.view import View
from dashboard import ids
from dashboard.config import Settings
from dashboard.factory import create_app
from dashboard.pages import PAGES, choice, curves, explore
from dashboard.sharing import share_reference
from dashboard.shell import route_outputs

MAX_POINTS = 60
"""The thinning of these tests' app: below the demo's distinct scores per classifier (~500)."""


def _json(value) -> str:
    return json.dumps(value, default=lambda o: o.to_plotly_json() if hasattr(o, "to_plotly_json")
                      else repr(o))


@pytest.fixture
def app(tmp_path):
    return create_app(Settings.from_mapping({"data_dir": tmp_path / "data",
                                             "max_roc_points": MAX_POINTS}))


@pytest.fixture
def link(app, breast_cancer_csv):
    """An owner's upload shared with two of its five classifiers ticked and one pin saved:
    (services, owner's handle, token, read-only handle)."""
    services = app.server.extensions["costdash"]
    client = app.server.test_client()
    reply = client.post("/api/v1/datasets", data={
        "file": (io.BytesIO(breast_cancer_csv.read_bytes()), "owner.csv")},
        content_type="multipart/form-data")
    owner = reply.get_json()["id"]
    with app.server.test_request_context("/_dash-update-component", method="POST"):
        shared = explore.share_view(services, {"data": owner, "p_pos": 0.2,
                                               "models": ["logreg", "gbm"],
                                               "pins": [{"model": "gbm", "threshold": 0.5}]},
                                    "Q3", None, "http://localhost/")
    token = _json(shared).split("http://localhost/s/")[1].split('"')[0]
    handle = services.sharing.open(token).dataset_id
    assert handle != owner and services.store.info(handle).read_only
    return services, owner, token, handle


def test_the_scope_of_a_share_reference_is_the_owners_view(link):
    services, owner, token, handle = link
    scope = services.sharing.scope(share_reference(token))
    assert (scope.data_id, scope.read_only, scope.classifiers) == (handle, True,
                                                                    ("logreg", "gbm"))
    assert scope.saved_pins == (("gbm", 0.5),)
    assert handle not in scope.revision and token not in scope.revision
    # The owner's handle keeps everything; the read-only handle (the API's) only the view.
    mine = services.sharing.scope(owner)
    assert (mine.data_id, mine.read_only, mine.classifiers) == (owner, False, None)
    assert services.sharing.scope(handle).classifiers == ("logreg", "gbm")


@pytest.mark.parametrize("sub", ["", "/curves", "/choice", "/segments"])
def test_a_read_links_page_and_nav_hold_no_handle_and_stay_in_the_link(link, sub):
    services, owner, token, handle = link
    out = route_outputs(f"/s/{token}{sub}", "?p_pos=0.3", services)
    text = _json(out)
    assert owner not in text and handle not in text
    n = len(PAGES)
    hrefs, styles, brand = out[1 + n:1 + 2 * n], out[1 + 2 * n:1 + 3 * n], out[1 + 3 * n]
    assert all(h.startswith(f"/s/{token}") for h in hrefs), hrefs
    assert brand == f"/s/{token}"
    offered = {p.slug: h for p, h, s in zip(PAGES, hrefs, styles) if s is None}
    assert set(offered) == {"explore", "curves", "choice", "production", "segments"}
    assert offered["curves"].startswith(f"/s/{token}/curves?")
    assert "data=" not in "".join(hrefs)
    # A viewer's ?data= does not bring another data set into the link's pages.
    assert "data=" not in _json(route_outputs(f"/s/{token}{sub}", f"?data={owner}",
                                              services)[1 + n:1 + 2 * n])


def test_the_owners_nav_is_unchanged(link):
    services, owner, _token, _handle = link
    out = route_outputs("/explore", f"?data={owner}", services)
    n = len(PAGES)
    assert [h.split("?")[0] for h in out[1 + n:1 + 2 * n]] == [p.path for p in PAGES]
    assert all(f"data={owner}" in h for h in out[1 + n:1 + 2 * n])
    assert all(s is None for s in out[1 + 2 * n:1 + 3 * n]) and out[1 + 3 * n] == "/explore"


def test_explores_callbacks_answer_a_share_reference_without_a_handle(link):
    services, owner, token, handle = link
    ref = {"id": share_reference(token), "models": None}
    out = explore.cached_view(services, ref, None, None, lines=[], hull_only=[], log_fpr=[],
                              log_pc=[])
    reply = dict(zip(explore.ViewOutputs.OUTPUTS, out))
    assert reply["error"] == "" and reply["current"] is no_update
    text = _json({k: v for k, v in reply.items() if k != "current"})
    assert owner not in text and handle not in text
    # Only the classifiers the owner ticked, not even by name.
    assert reply["models"] == ["logreg", "gbm"]
    assert "forest" not in text and "naive_bayes" not in text and "stump" not in text
    # From the cache the same (and still no session write).
    again = explore.cached_view(services, ref, None, None, lines=[], hull_only=[], log_fpr=[],
                                log_pc=[])
    assert again[explore.ViewOutputs.OUTPUTS.index("current")] is no_update
    # Ticking another classifier by hand gets nothing of it.
    out = explore.load_view(services, ref, ["forest", "logreg"], False, ids.MODELS_INPUT)
    assert out.models == ["logreg"] and "forest" not in _json(out.client)
    # The owner's handle still opens every classifier and writes the session's data set.
    mine = explore.load_view(services, {"id": owner}, None, False, ids.DATASET_REF)
    assert len(mine.models) == 5 and mine.current == {"id": owner, "name": "owner.csv"}


def test_other_what_ifs_through_a_share_reference_name_no_handle(link):
    services, owner, token, handle = link
    key = {"id": share_reference(token), "models": None}
    sens = explore.sensitivity_result(services, key, True, (0.1, 0.5), (1, 5), (1, 5))
    assert set(sens["classifiers"]) <= {"logreg", "gbm"}
    grid = explore.pin_grid_result(services, key, "forest")
    assert grid is None                               # not in the link's view
    cons = explore.constraint_result(services, key, {"max_fpr": 0.1})
    single = explore.single_threshold_result(services, key, cons)
    assert single["np"]["classifier"] in {"logreg", "gbm"}
    # The single threshold is a point of the thinned curve the link shows.
    entry = next(c for c in services.views.full(handle)["classifiers"]
                 if c["name"] == single["np"]["classifier"])
    assert single["np"]["threshold"] in entry["roc"]["threshold"]
    text = _json([sens, grid, cons, single])
    assert owner not in text and handle not in text


def test_curves_and_choice_answer_a_share_reference_without_a_handle(link):
    services, owner, token, handle = link
    ref = curves.reference(View(data=share_reference(token)), shared=True)
    out = curves.curves_view(services, ref, None, None, None, None, None)
    assert out.error == "" and out.data_id is None
    assert [o["value"] for o in out.options] == ["logreg", "gbm"]
    text = _json(out.as_tuple())
    assert owner not in text and handle not in text
    cref = choice.reference(View(data=share_reference(token)), shared=True)
    out = choice.choice_view(services, cref, None, None, None)
    assert out.error == "" and out.data_id is None
    text = _json(out.as_tuple())
    assert owner not in text and handle not in text and "forest" not in text


@pytest.mark.slow
def test_a_pin_walk_through_a_read_link_recovers_no_point_beyond_the_thinned_curve(link):
    """Finding 3: 300 pins just above consecutive distinct scores gave 300 exact points."""
    services, owner, token, _handle = link
    dataset = services.store.get(owner)
    scores = np.unique(next(c for c in dataset.scored if c.name == "gbm").score)
    assert scores.size > 300 > MAX_POINTS
    walk = [float(np.nextafter(s, np.inf)) for s in scores[-301:-1]]

    def points(reference: str) -> set[tuple]:
        key, found = {"id": reference, "models": None}, set()
        for t in walk:
            (pin,) = explore.pinned_result(services, key, {
                "id": reference, "pins": [{"model": "gbm", "threshold": t}]})
            assert "error" not in pin
            found.add((pin["tp"], pin["fp"], pin["point_threshold"]))
        return found

    shared = points(share_reference(token))
    assert len(shared) <= MAX_POINTS
    # Each answer is a point of the thinned curve the link shows.
    grid = explore.pin_grid_result(services, {"id": share_reference(token)}, "gbm")
    assert {p[2] for p in shared} <= set(grid["threshold"]) | {None}
    # The owner's handle keeps exact pins: the same walk finds every score (the test can fail).
    exact = points(owner)
    assert len(exact) >= 290
    roc = roc_of(next(c for c in dataset.scored if c.name == "gbm"))
    assert {p[2] for p in exact} <= set(roc.threshold.tolist()) | {None}


def test_the_owners_saved_pin_answers_exactly_through_the_link(link):
    services, owner, token, _handle = link
    state = {"pins": [{"model": "gbm", "threshold": 0.5}]}
    shared = explore.pinned_result(services, {"id": share_reference(token), "models": None},
                                   {**state, "id": share_reference(token)})
    mine = explore.pinned_result(services, {"id": owner, "models": None}, {**state, "id": owner})
    assert shared == mine


def test_a_dead_link_resolves_to_nothing(link):
    services, _owner, token, _handle = link
    record = services.sharing.open(token)
    services.sharing.revoke_link(record)
    out = explore.load_view(services, {"id": share_reference(token)}, None, False,
                            ids.DATASET_REF)
    assert out.error and out.client is no_update
    assert services.sharing.page_ref({"id": share_reference(token)}) is None


def test_a_pin_walk_on_the_links_curves_page_recovers_no_point_beyond_the_thinned_curve(link):
    """The Curves page of a read link prices its pins exactly at their thresholds: the
    resolver first moves a viewer's pins onto the thinned curve (the owner's saved pin stays)."""
    services, owner, token, handle = link
    dataset = services.store.get(owner)
    scores = np.unique(next(c for c in dataset.scored if c.name == "gbm").score)
    walk = [["gbm", float(np.nextafter(s, np.inf))] for s in scores[-301:-1]]
    ref = {"id": share_reference(token), "pins": [*walk, ["gbm", 0.5]]}
    resolved = services.sharing.page_ref(ref, services.views.full)
    grid = set(explore.pin_grid_result(services, {"id": share_reference(token)}, "gbm")
               ["threshold"])
    moved = {t for _, t in resolved["pins"][:-1]}
    assert len(moved) <= MAX_POINTS and moved <= grid | {sys.float_info.max}
    assert resolved["pins"][-1] == ["gbm", 0.5]              # the owner's, as saved
    # The owner's handle is not moved: the same walk keeps 300 thresholds.
    mine = services.sharing.page_ref({"id": owner, "pins": walk}, services.views.full)
    assert len({t for _, t in mine["pins"]}) == 300
    # The page draws them (a pin at a thinned threshold is a point of the thinned curve).
    view = View(data=share_reference(token), pins=(("gbm", walk[0][1]),))
    out = curves.curves_view(services, curves.reference(view, shared=True), None, None, None,
                             None, None)
    assert out.error == "" and handle not in _json(out.as_tuple())


def test_the_pages_a_read_link_does_not_grant_refuse_its_handle(link):
    """Compare, Confidence and Folds compute from every row; a read-only handle (the read
    link's JSON names it) opens none of them, an upload handle all."""
    from dashboard.pages import compare, confidence, folds
    from dashboard.sharing import READ_LINK_PAGES_ONLY

    services, owner, _token, handle = link
    for data, refused in ((handle, True), (owner, False)):
        loads = [compare.load(services, View(data=data), None).error,
                 confidence.load(services, View(data=data), None).error,
                 folds.folds_view(services, {"id": data}, None, None, None, None).error]
        assert [e == READ_LINK_PAGES_ONLY for e in loads] == [refused] * 3, (data, loads)
