"""The Production page's handlers without a browser (issue 25): batches uploaded, a period
column chosen again, the watch drawn and tabled as the core computes it, bad files named in one
line while what is shown stays, read-only handles without upload, batches scoped to their data
set and deleted with it, the view's conditions and deployed choice, the webhook."""

from __future__ import annotations

import base64
import io
from dataclasses import replace

import pandas as pd
import pytest

from costdash.monitor import watch
from costdash.production_io import load_production
from costdash.view import View
from dashboard.config import Settings
from dashboard.factory import create_app
from dashboard.pages import production as page
from dashboard.storage.production import ProductionStore
from dashboard.shell import route
from tests.web.helpers import find, make_predictions
from tests.web.test_production_api import Hook, production_csv


def data_url(raw: bytes) -> str:
    return "data:text/csv;base64," + base64.b64encode(raw).decode()


@pytest.fixture
def hook():
    h = Hook()
    yield h
    h.close()


@pytest.fixture
def app_services(tmp_path, hook):
    app = create_app(Settings.from_mapping({"data_dir": tmp_path / "data",
                                            "maintenance_seconds": 0,
                                            "alert_webhook": hook.url}))
    services = app.server.extensions["costdash"]
    csv = make_predictions().to_csv(index=False).encode()
    record = services.store.put(csv, "reference.csv")
    return app, services, record.id


def upload(services, ref, raw: bytes, name: str, **kw):
    return page.production_view(services, ref, trigger=page.UPLOAD, contents=data_url(raw),
                                filename=name, p_pos=0.2, cost_fn=1, cost_fp=1, **kw)


def trace(fig, uid: str):
    return next(t for t in fig.data if t.uid == uid)


@pytest.mark.slow
def test_two_periods_are_estimated_drawn_and_tabled(app_services, hook):
    _app, services, ref = app_services
    first = upload(services, ref, production_csv(0.2, seed=1), "2026-01.csv")
    assert first.error == "" and first.batch["scope"] == f"data:{ref}"
    second = upload(services, ref, production_csv(0.85, seed=2), "2026-02.csv")
    estimate = trace(second.figure, "estimate")
    assert list(estimate.x) == ["2026-01", "2026-02"]
    assert list(trace(second.figure, "alert").x) == ["2026-02"]
    # The policy's ranges are drawn as bands and the deployed range as dashed lines.
    assert sum(s.type == "rect" for s in second.figure.layout.shapes) >= 2
    assert sum(s.type == "line" and s.line.dash == "dash"
               for s in second.figure.layout.shapes) == 2
    # The core's numbers on the same batches.
    reference = services.store.get(ref)
    table = pd.concat([load_production(io.BytesIO(production_csv(p, seed=s)), name="x.csv"
                                       ).table.assign(period=lab)
                       for p, s, lab in ((0.2, 1, "2026-01"), (0.85, 2, "2026-02"))])
    expected = watch(reference, table, period="period", p_pos=0.2)
    assert list(estimate.y) == pytest.approx([p.pc for p in expected.periods], abs=1e-12)
    text = str(second.table)
    assert "ALERT" in text and f"{expected.periods[1].regret_per_period:.4g}" in text
    assert "Alerts: 2026-02." in second.summary
    assert "2026-01.csv (4,000 cases" in second.batches
    (alert,) = hook.wait_for(1)
    assert alert["period"] == "2026-02" and alert["analysis"] is None


@pytest.mark.slow
def test_a_bad_file_is_one_line_and_keeps_what_is_shown(app_services):
    _app, services, ref = app_services
    upload(services, ref, production_csv(0.2), "ok.csv")
    bad = upload(services, ref, b"score\n0.1\n0.2\nnope\n", "bad.csv")
    assert bad.error == "bad.csv: column 'score' row 3: 'nope' is not a finite number (1 such rows)"
    # Figure and table untouched (no_update), and nothing of the bad file kept.
    assert bad.figure is page.no_update and bad.table is page.no_update
    assert [b.source for b in ProductionStore(services.store).batches(f"data:{ref}")] == \
        ["ok.csv"]
    garbage = page.production_view(services, ref, trigger=page.UPLOAD, contents="nonsense",
                                   filename="x.csv")
    assert garbage.error == "x.csv: could not read the upload"


@pytest.mark.slow
def test_period_column_chosen_and_chosen_again(app_services):
    _app, services, ref = app_services
    raw = (production_csv(0.2, n=500, seed=3, period="w1")
           + production_csv(0.5, n=500, seed=4, period="w2").split(b"\n", 1)[1])
    out = upload(services, ref, raw, "weeks.csv")
    assert out.column == "week" and {"label": "week", "value": "week"} in out.columns
    assert list(trace(out.figure, "estimate").x) == ["w1", "w2"]
    # Cleared: the same upload is read again as one period, in place of the first reading.
    again = page.production_view(services, ref, trigger=page.PERIOD_COLUMN,
                                 contents=data_url(raw), filename="weeks.csv",
                                 period_column=None, last_batch=out.batch)
    assert list(trace(again.figure, "estimate").x) == ["weeks"]
    assert len(ProductionStore(services.store).batches(f"data:{ref}")) == 1


@pytest.mark.slow
def test_the_views_deployed_choice_and_conditions(app_services):
    _app, services, ref = app_services
    upload(services, ref, production_csv(0.2), "a.csv")
    out = page.production_view(services, ref, model="gamma", threshold=0.4, p_pos=None,
                               cost_fn=1, cost_fp=1)
    assert out.summary.startswith("Deployed: gamma ≥ 0.4")
    assert out.p_pos == pytest.approx(services.store.info(ref).prevalence)
    acc = page.production_view(services, ref, model="alpha", threshold=0.8, p_pos=0.2,
                               cost_fn=1, cost_fp=1, method="acc")
    assert "by acc" in acc.summary
    wrong = page.production_view(services, ref, p_pos=2, cost_fn=1, cost_fp=1)
    assert "p(+)" in str(wrong.error) and wrong.figure is page.no_update
    # cost_tp/cost_tn come from the view in the address.
    tn = page.production_view(services, ref, p_pos=0.2, cost_fn=1, cost_fp=1,
                              view=View(cost_tn=-0.5))
    assert tn.summary != page.production_view(services, ref, p_pos=0.2, cost_fn=1,
                                              cost_fp=1).summary


@pytest.mark.slow
def test_scope_clear_and_delete(app_services):
    app, services, ref = app_services
    other = services.store.put(make_predictions(seed=9).to_csv(index=False).encode(),
                               "other.csv").id
    upload(services, ref, production_csv(0.2), "a.csv")
    assert page.production_view(services, other).table == page.NO_BATCHES
    cleared = page.production_view(services, ref, trigger=page.CLEAR)
    assert cleared.table == page.NO_BATCHES
    upload(services, ref, production_csv(0.2), "b.csv")
    client = app.server.test_client()
    assert client.delete(f"/api/v1/datasets/{ref}").status_code == 204
    assert ProductionStore(services.store).count() == 0


@pytest.mark.slow
def test_read_only_handle_shows_the_analysis_batches_without_upload(app_services):
    app, services, ref = app_services
    client = app.server.test_client()
    csv = make_predictions().to_csv(index=False).encode()
    created = client.post("/api/v1/analyses", data={"file": (io.BytesIO(csv), "r.csv"),
                                                     "p_pos": "0.2"}).get_json()
    client.post(f"/api/v1/analyses/{created['manage_token']}/production",
                data={"file": (io.BytesIO(production_csv(0.85)), "pushed.csv")})
    handle = created["dataset_id"]
    out = page.production_view(services, handle, trigger=page.UPLOAD,
                               contents=data_url(production_csv(0.2)), filename="no.csv",
                               p_pos=0.2, cost_fn=1, cost_fp=1)
    assert out.upload_hidden is True and out.notes == page.READ_ONLY
    assert list(trace(out.figure, "estimate").x) == ["pushed"]
    content, _ = route("/production", f"?data={handle}", services)
    assert find(content, page.UPLOAD_BOX).hidden is True
    # A read link's reference (what its pages keep in the browser) reaches the same batches,
    # and the layout a read link's route would build hides the upload.
    token = created["url"].rsplit("/", 1)[-1]
    shared = page.production_view(services, f"share:{token}", p_pos=0.2, cost_fn=1, cost_fp=1)
    assert list(trace(shared.figure, "estimate").x) == ["pushed"] and shared.upload_hidden
    record = replace(services.sharing.open(token), dataset_id=f"share:{token}")
    built = page.layout({}, services, shared=record)
    assert find(built, page.UPLOAD_BOX).hidden is True and handle not in str(built)
    # ... and the read link routes it: /s/<token>/production, in the link's own nav.
    routed_content, _ = route(f"/s/{token}/production", "", services)
    assert find(routed_content, page.UPLOAD_BOX).hidden is True
    assert handle not in str(routed_content) and find(routed_content, page.GRAPH) is not None


def test_the_page_is_routed_with_its_ids(app_services):
    _app, services, ref = app_services
    content, classes = route("/production", f"?data={ref}&p_pos=0.3", services)
    for id_ in (page.UPLOAD, page.PERIOD_COLUMN, page.METHOD, page.MODEL, page.THRESHOLD,
                page.GRAPH, page.TABLE, page.ERROR):
        assert find(content, id_) is not None, id_
    assert find(content, page.P_POS).value == 0.3
    assert any("active" in c for c in classes)
    empty, _ = route("/production", "", services)
    assert page.NO_DATA in str(empty)
