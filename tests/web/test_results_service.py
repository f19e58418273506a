"""The one door for derived results (issue 23, :mod:`dashboard.results`): one key scheme that
delete and expiry clear, condition-free parts computed once and reused at new conditions, a
bound per kind and data set, and the capability's scope (a read-only handle gets the thinned
curves only)."""

from __future__ import annotations

import io
import json

import numpy as np
import pytest

from dashboard.config import Settings
from dashboard.factory import create_app
from dashboard.pages import choice as choice_page
from dashboard.pages import curves as curves_page
from dashboard.pages import explore as explore_page

LIMIT = 40
"""``max_roc_points`` of these apps: far fewer than the distinct scores of :func:`_csv`."""


def _csv(n: int = 1500, seed: int = 5) -> bytes:
    """Two classifiers with probability scores, every score distinct (n + 1 ROC points)."""
    rng = np.random.default_rng(seed)
    y = rng.random(n) < 0.3
    lines = ["y_true,alpha,beta"]
    a = 1 / (1 + np.exp(-(rng.normal(size=n) + 1.5 * y)))
    b = 1 / (1 + np.exp(-(rng.normal(size=n) + 0.8 * y)))
    lines += [f"{int(y[i])},{a[i]:.9f},{b[i]:.9f}" for i in range(n)]
    return ("\n".join(lines) + "\n").encode()


@pytest.fixture
def app(tmp_path):
    """An app on a per-process SimpleCache, whose keys a test can list."""
    return create_app(Settings.from_mapping({"data_dir": tmp_path / "data",
                                             "cache_url": "simple://",
                                             "max_roc_points": LIMIT}))


@pytest.fixture
def services(app):
    return app.server.extensions["costdash"]


@pytest.fixture
def client(app):
    return app.server.test_client()


def _upload(client) -> str:
    reply = client.post("/api/v1/datasets", data={"file": (io.BytesIO(_csv()), "p.csv")},
                        content_type="multipart/form-data")
    assert reply.status_code == 200, reply.get_json()
    return reply.get_json()["id"]


def _share(client, **fields: str) -> dict:
    reply = client.post("/api/v1/analyses", data={
        "file": (io.BytesIO(_csv()), "p.csv"), "name": "Q3", "sens_p": "0.1,0.5",
        "pins": "alpha:0.6", **fields}, content_type="multipart/form-data")
    assert reply.status_code == 201, reply.get_json()
    return reply.get_json()


class Tally:
    """Counts and values recorded from this process and the child processes the compute gate
    forks (issue 22: uncached results are computed in children), through a file."""

    def __init__(self, path):
        self.path = path
        path.write_text("")

    def add(self, value) -> None:
        with open(self.path, "a") as f:  # one short line: appends do not interleave
            f.write(json.dumps(value) + "\n")

    def values(self) -> list:
        return [json.loads(line) for line in self.path.read_text().splitlines()]

    def counts(self, names) -> dict[str, int]:
        seen = self.values()
        return {n: seen.count(n) for n in names}


def _keys(services) -> list[str]:
    """Every key in the app's SimpleCache (without the prefix)."""
    backend = services.views.cache.cache
    return [k.removeprefix("costdash:") for k in backend._cache]


def _derived(services, dataset_id: str) -> list[str]:
    return [k for k in _keys(services) if dataset_id in k]


def _touch_everything(client, services, dataset_id: str) -> None:
    """Every derived result of a data set, through each route and page handler."""
    base = f"/api/v1/datasets/{dataset_id}"
    for query in ("", "?p_pos=0.2&cost_fn=3&sens_p=0.1,0.4", "?calibration=platt"):
        assert client.get(f"{base}/choice.json{query}").status_code == 200
    for path in ("report.html", "decision.json", "hull.csv", "envelope.csv",
                 "operating_ranges.csv"):
        assert client.get(f"{base}/{path}?p_pos=0.25").status_code == 200, path
    curves_page.score_summaries(services, dataset_id)
    curves_page.pinned_points(services, dataset_id, [("alpha", 0.5), ("beta", 0.7)])
    key = {"id": dataset_id, "models": None}
    pins = explore_page.pinned_result(services, key, {"id": dataset_id, "pins": [
        {"model": "alpha", "threshold": 0.5}, {"model": "beta", "threshold": 0.25}]})
    assert all("error" not in p for p in pins)
    single = explore_page.single_threshold_result(services, key, {"np": {"limit": 0.1}})
    assert "error" not in single["np"]


def test_keys_follow_the_one_scheme_and_name_the_scope(client, services):
    data_id = _upload(client)
    _touch_everything(client, services, data_id)
    results = services.results
    keys = results.keys_of(data_id)
    kinds = {k.split(":")[1] for k in keys}
    assert {"choice-curves", "choice", "report", "decision", "csv", "curves-scores",
            "pin-point", "pin", "single"} <= kinds
    for key in keys:
        _, kind, version, dataset, scope, digest = key.split(":")
        assert (version, dataset) == (results.version, data_id)
        assert scope in ("full", "page") and len(digest) == 32
    assert all(k in _keys(services) for k in keys)


@pytest.mark.slow
def test_deleting_a_data_set_leaves_no_derived_key(client, services):
    data_id = _upload(client)
    _touch_everything(client, services, data_id)
    assert len(_derived(services, data_id)) >= 10
    assert client.delete(f"/api/v1/datasets/{data_id}").status_code == 204
    assert _derived(services, data_id) == []


@pytest.mark.slow
def test_a_deleted_or_expired_analysis_leaves_no_derived_key(client, services):
    """Deleting an analysis and its expiry go through the same door: the read-only handle's
    (thinned) results go with it."""
    import time

    deleted, expiring = _share(client), _share(client, expires_in_days="1")
    for made in (deleted, expiring):
        _touch_everything(client, services, made["dataset_id"])
        assert any(":thinned:" in k for k in _derived(services, made["dataset_id"]))
    reply = client.delete(f"/api/v1/analyses/{deleted['id']}",
                          headers={"Authorization": f"Bearer {deleted['manage_token']}"})
    assert reply.status_code == 204
    assert _derived(services, deleted["dataset_id"]) == []
    assert _derived(services, expiring["dataset_id"]) != []
    assert services.sharing.purge_expired(now=time.time() + 2 * 86400) >= 1
    assert _derived(services, expiring["dataset_id"]) == []


def test_a_new_condition_computes_only_its_own_part(client, services, monkeypatch, tmp_path):
    """Two conditions (and a box and pins) on Threshold choice: the base and the
    condition-free curves are computed once, the per-condition part twice (counted across the
    compute gate's child process, where the curves are computed); a cached view computes
    nothing."""
    import costdash.choice_summary as core

    names = ("choice_base", "choice_curves", "choice_at")
    tally = Tally(tmp_path / "calls")
    for name in names:
        real = getattr(core, name)

        def counted(*args, _real=real, _name=name, **kwargs):
            tally.add(_name)
            return _real(*args, **kwargs)

        monkeypatch.setattr(core, name, counted)
    data_id = _upload(client)
    first = client.get(f"/api/v1/datasets/{data_id}/choice.json?p_pos=0.2&cost_fn=2")
    second = client.get(f"/api/v1/datasets/{data_id}/choice.json?p_pos=0.05&cost_fn=9"
                        "&sens_p=0.02,0.1&pins=alpha:0.7")
    assert first.status_code == second.status_code == 200
    assert tally.counts(names) == {"choice_base": 1, "choice_curves": 1, "choice_at": 2}
    again = client.get(f"/api/v1/datasets/{data_id}/choice.json?p_pos=0.2&cost_fn=2")
    assert again.data == first.data
    assert tally.counts(names) == {"choice_base": 1, "choice_curves": 1, "choice_at": 2}
    a, b = first.get_json(), second.get_json()
    assert a["conditions"]["p_pos"] == 0.2 and b["conditions"]["p_pos"] == 0.05
    assert [c["threshold_choice"]["score_driven"] for c in a["classifiers"]] == \
        [c["threshold_choice"]["score_driven"] for c in b["classifiers"]]
    assert b["robust"] is not None and b["classifiers"][0]["fixed_from"] == "pin"
    # The page reads the same curves (its own thinning: one more condition-free entry).
    from costdash.view import View

    page = choice_page.choice_json(services, data_id, View(data=data_id, p_pos=0.3))
    assert tally.counts(names) == {"choice_base": 1, "choice_curves": 2, "choice_at": 3}
    assert page["conditions"]["p_pos"] == 0.3


@pytest.mark.slow
def test_the_reused_curves_give_the_summary_computed_from_scratch(client, services):
    """What the service serves at a second condition is what the core computes directly."""
    from costdash.choice_summary import choice_summary_of_view
    from costdash.view import View

    data_id = _upload(client)
    client.get(f"/api/v1/datasets/{data_id}/choice.json?p_pos=0.5")
    query = "p_pos=0.1&cost_fn=4&sens_p=0.05,0.2&sens_fp=1,3&beta_a=2"
    served = client.get(f"/api/v1/datasets/{data_id}/choice.json?{query}").get_json()
    view = View.parse({k: [v] for k, v in (p.split("=") for p in query.split("&"))})
    direct = choice_summary_of_view(services.store.get(data_id), view, max_points=4000)
    assert json.dumps(served, sort_keys=True) == json.dumps(direct, sort_keys=True)


def test_entries_of_one_kind_are_bounded_per_data_set(client, services):
    services.results.entries_per_kind = 3
    data_id = _upload(client)
    for p in (0.1, 0.2, 0.3, 0.4, 0.5):
        assert client.get(f"/api/v1/datasets/{data_id}/choice.json?p_pos={p}").status_code == 200
    kept = [k for k in _keys(services) if k.startswith(f"result:choice:") and data_id in k]
    # + the curves, in choice.json's thinning and the report's (issue 23)
    assert len(kept) == 3 and len(services.results.keys_of(data_id)) == 3 + 2


def test_a_read_only_handle_gets_no_more_than_the_thinned_curves(client, services,
                                                                 monkeypatch, tmp_path):
    """choice.json and the report through a read-only handle: every classifier curve at most
    ``max_roc_points`` points; through the upload's own handle the curves have more."""
    import dashboard.report.format as report_format
    from dashboard.report import warm_figures

    made = _share(client)
    handle = made["dataset_id"]
    owner = _upload(client)
    query = "?p_pos=0.2&sens_p=0.1,0.5&pins=alpha:0.612345"

    def longest(body: dict) -> int:
        return max(len((c["threshold_choice"][m] or {"pc": []})["pc"])
                   for c in body["classifiers"] for m in c["threshold_choice"])

    seen = client.get(f"/api/v1/datasets/{handle}/choice.json{query}").get_json()
    full = client.get(f"/api/v1/datasets/{owner}/choice.json{query}").get_json()
    assert longest(seen) <= LIMIT < longest(full)
    # Robust picks and pins come from the thinned curve: its thresholds only.
    thinned = {c["name"]: set(t for t in c["roc"]["threshold"] if t is not None)
               for c in services.views.full(handle)["classifiers"]}
    mm = seen["robust"]["minimax_regret"]
    assert mm["threshold"] is None or mm["threshold"] in thinned[mm["classifier"]]

    drawn = Tally(tmp_path / "drawn")  # the report is built in the gate's child process
    real = report_format._figure_html

    def record(fig, *args, **kwargs):
        # Each classifier's own curves (the decision curves are a fixed grid of 99 threshold
        # probabilities, computed from the thinned curve; iso-F1 lines and the interpolated
        # hull are the server's grids).
        if "dca" not in str(args):
            traces = fig["data"] if isinstance(fig, dict) else fig.to_dict()["data"]
            for t in traces:
                meta = t.get("meta")
                if t.get("x") is not None and (t.get("name") in ("alpha", "beta") or (
                        isinstance(meta, dict) and meta.get("classifier"))):
                    drawn.add(len(t["x"]))
        return real(fig, *args, **kwargs)

    # The web process's first report warms plotly with two small reports of its own; done here,
    # before recording, so that only this data set's figures are counted.
    warm_figures()
    for module in ("dashboard.report", "dashboard.report.curves", "dashboard.report.choice"):
        monkeypatch.setattr(f"{module}._figure_html", record)
    assert client.get(f"/api/v1/datasets/{handle}/report.html{query}").status_code == 200
    assert drawn.values() and max(drawn.values()) <= LIMIT
    drawn = Tally(tmp_path / "drawn")
    assert client.get(f"/api/v1/datasets/{owner}/report.html{query}").status_code == 200
    assert max(drawn.values()) > LIMIT


@pytest.mark.slow
def test_a_second_report_comes_from_the_cache(client, services, monkeypatch, tmp_path):
    import dashboard.report as report

    built = Tally(tmp_path / "built")
    real = report.build_report
    monkeypatch.setattr(report, "build_report",
                        lambda *a, **k: built.add(1) or real(*a, **k))
    data_id = _upload(client)
    first = client.get(f"/api/v1/datasets/{data_id}/report.html?p_pos=0.3")
    second = client.get(f"/api/v1/datasets/{data_id}/report.html?p_pos=0.3")
    assert first.data == second.data and built.values() == [1]
    client.get(f"/api/v1/datasets/{data_id}/report.html?p_pos=0.4")
    assert built.values() == [1, 1]


def test_peek_and_put_index_what_a_page_computes_itself(client, services):
    """A page that computes its misses together (Explore's pins: one load for all) reads and
    writes through :meth:`Results.peek` / :meth:`Results.put`: indexed, bounded, forgotten."""
    results = services.results
    data_id = _upload(client)
    assert results.peek("pin", data_id, ["alpha", 0.5], scope="full") is None
    for t in (0.1, 0.2, 0.3):
        results.put("pin", data_id, ["alpha", t], json.dumps({"t": t}), scope="full", bound=2)
    assert results.peek("pin", data_id, ["alpha", 0.1], scope="full") is None  # the oldest
    assert json.loads(results.peek("pin", data_id, ["alpha", 0.3], scope="full")) == {"t": 0.3}
    assert results.peek("pin", data_id, ["alpha", 0.3], scope="thinned") is None
    services.views.forget(data_id)
    assert results.peek("pin", data_id, ["alpha", 0.3], scope="full") is None
    assert _derived(services, data_id) == []


@pytest.mark.slow
def test_uncached_choices_and_reports_go_through_the_gate_and_cached_ones_do_not(tmp_path):
    """Issue 22, finding 7: with every compute slot of the site held, an uncached choice.json
    (whose condition-free curves are not computed yet: a new Beta), report.html and Threshold
    choice page are refused at once (503 with Retry-After, the page's error line), while the
    views already cached are still answered, and so is a new condition of a cached choice
    (issue 23: only its own part is computed, tens of ms, from what the process keeps)."""
    from costdash.view import View
    from dashboard.jobs.gate import gate_for

    app = create_app(Settings.from_mapping({"data_dir": tmp_path / "data",
                                            "cache_url": "simple://", "max_heavy_jobs": 1}))
    services = app.server.extensions["costdash"]
    client = app.server.test_client()
    data_id = _upload(client)
    base = f"/api/v1/datasets/{data_id}"
    warm = {path: client.get(f"{base}/{path}?p_pos=0.3")
            for path in ("choice.json", "report.html")}
    assert all(r.status_code == 200 for r in warm.values())
    page_ref = {"id": data_id, "view": {"p_pos": 0.3}, "home": "/explore", "revision": 1}
    assert choice_page.choice_view(services, page_ref, None, None, None).error == ""
    with gate_for(services).slot("something else", client="198.51.100.7"):
        for path, reply in warm.items():
            again = client.get(f"{base}/{path}?p_pos=0.3")
            assert again.status_code == 200 and again.data == reply.data, path
            cold = client.get(f"{base}/{path}?p_pos=0.31&beta_a=2")
            assert cold.status_code == 503, (path, cold.status_code)
            assert int(cold.headers["Retry-After"]) > 0
            assert "busy" in cold.get_json()["error"]
        new_condition = client.get(f"{base}/choice.json?p_pos=0.31&cost_fn=3&sens_p=0.1,0.4")
        assert new_condition.status_code == 200
        assert new_condition.get_json()["conditions"]["p_pos"] == 0.31
        assert client.get(f"{base}/report.html?p_pos=0.31").status_code == 503
        assert choice_page.choice_view(services, page_ref, None, None, None).error == ""
        assert choice_page.choice_view(services, {**page_ref, "view": {"p_pos": 0.31}},
                                       None, None, None).error == ""
        refused = choice_page.choice_view(services, {**page_ref, "view": {"p_pos": 0.31}},
                                          None, 2, None)
        assert "not started" in refused.error
    # The slot given back.
    assert client.get(f"{base}/choice.json?p_pos=0.31&beta_a=2").status_code == 200


@pytest.mark.slow
def test_deleting_an_analysis_drops_the_calibrations_its_report_kept(client, services):
    """A cold report keeps the shown classifier's calibrations (kind ``calibration-maps``,
    handed back by its child process, issue 23) under the one key scheme: deleting the
    analysis drops them with every other result."""
    made = _share(client)
    data_id = made["dataset_id"]
    assert client.get(f"/api/v1/datasets/{data_id}/report.html?model=beta").status_code == 200
    kept = [k for k in _derived(services, data_id) if k.startswith("result:calibration-maps:")]
    assert len(kept) == 2 and set(kept) <= set(services.results.keys_of(data_id))
    reply = client.delete(f"/api/v1/analyses/{made['id']}",
                          headers={"Authorization": f"Bearer {made['manage_token']}"})
    assert reply.status_code == 204
    assert _derived(services, data_id) == []
