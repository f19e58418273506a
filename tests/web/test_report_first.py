"""The first report after an upload (issue 23, session 13): the threshold choice's condition-free
curves computed for ``choice.json`` (or the Threshold choice page) are kept in the report's
thinning too, so the report computes none; what is kept is the text the report's own
computation gives."""

from __future__ import annotations

import json

import pytest

from costdash.choice_summary import choice_base, choice_curves
from dashboard.results import SHARED_CHOICE_POINTS, _pack

from .test_report_content import stored  # noqa: F401 - the fixture


def _kept_curves(services, data_id: str, points: int) -> str | None:
    free = {"models": None, "calibration": None, "beta": None, "max_points": points}
    return services.results.peek("choice-curves", data_id, free, scope="full", checked=False)


@pytest.mark.slow
def test_choice_json_keeps_the_reports_curves_and_the_report_computes_none(
        stored, monkeypatch):  # noqa: F811
    app, data_id, dataset = stored
    services = app.server.extensions["costdash"]
    client = app.server.test_client()
    base = f"/api/v1/datasets/{data_id}"
    (report_points,) = SHARED_CHOICE_POINTS
    assert _kept_curves(services, data_id, report_points) is None
    assert client.get(f"{base}/choice.json?p_pos=0.05").status_code == 200
    kept = _kept_curves(services, data_id, report_points)
    assert kept is not None and _kept_curves(services, data_id, 4000) is not None
    # The same text the report's own computation of its thinning gives.
    own = json.dumps(_pack(choice_curves(choice_base(dataset), max_points=report_points)),
                     allow_nan=False, separators=(",", ":"))
    assert kept == own
    assert json.loads(kept)["light"]["classifiers"]  # not an empty pack

    def no_curves(*_args, **_kwargs):
        raise AssertionError("the report computed the choice curves again")

    # Its one-time warm-up (small reports of their own: finish_setup's at a worker's start)
    # first; the report's child is forked from this process: it inherits the refusal.
    from dashboard.report import warm_figures

    warm_figures()
    monkeypatch.setattr("costdash.choice_summary.choice_curves", no_curves)
    reply = client.get(f"{base}/report.html?p_pos=0.07")
    assert reply.status_code == 200
    assert b'id="choice' in reply.data


@pytest.mark.slow
def test_a_report_first_computes_only_its_own_thinning(stored):  # noqa: F811
    """Nothing smaller to share: the report's curves are made alone, and kept."""
    app, data_id, _dataset = stored
    services = app.server.extensions["costdash"]
    client = app.server.test_client()
    assert client.get(f"/api/v1/datasets/{data_id}/report.html?p_pos=0.07").status_code == 200
    assert _kept_curves(services, data_id, SHARED_CHOICE_POINTS[0]) is not None
    assert _kept_curves(services, data_id, 4000) is None
