"""A new condition on Threshold choice (issue 23): what the results service keeps and reads.

The cache keeps a view's summary without its curves (a marked text, spliced back from the
condition-free curves); the worker keeps the decoded curves. Another worker, which keeps
nothing yet, answers the same bytes from the cache alone, and a new condition there is the
summary computed from scratch."""

from __future__ import annotations

import io
import json

import numpy as np
import pytest

from costdash.choice_summary import choice_summary_of_view
from costdash.view import View
from dashboard.config import Settings
from dashboard.factory import create_app


def _csv(n: int = 4000, seed: int = 11) -> bytes:
    rng = np.random.default_rng(seed)
    y = rng.random(n) < 0.1
    lines = ["y_true,alpha,beta,gamma"]
    cols = [1 / (1 + np.exp(-(rng.normal(size=n) + shift * y))) for shift in (1.5, 0.9, 0.4)]
    lines += [f"{int(y[i])}," + ",".join(f"{c[i]:.7f}" for c in cols) for i in range(n)]
    return ("\n".join(lines) + "\n").encode()


@pytest.fixture
def app(tmp_path):
    return create_app(Settings.from_mapping({"data_dir": tmp_path / "data",
                                             "cache_url": "simple://"}))


def _cached(services, kind: str, data_id: str) -> list[str]:
    """The cached texts of one kind of result of a data set."""
    keys = [k for k in services.results.keys_of(data_id) if k.startswith(f"result:{kind}:")]
    return [services.results.cache.get(k) for k in keys]


def test_the_cache_keeps_summaries_without_their_curves(app):
    services, client = app.server.extensions["costdash"], app.server.test_client()
    reply = client.post("/api/v1/datasets", data={"file": (io.BytesIO(_csv()), "p.csv")},
                        content_type="multipart/form-data")
    data_id = reply.get_json()["id"]
    base = f"/api/v1/datasets/{data_id}/choice.json"
    first = client.get(f"{base}?p_pos=0.2&cost_fn=3")
    second = client.get(f"{base}?p_pos=0.05&cost_fn=9&sens_p=0.02,0.1&pins=beta:0.3")
    assert first.status_code == second.status_code == 200
    # The curves of choice.json's thinning and of the report's (made with them, issue 23).
    curves, report_curves = sorted(_cached(services, "choice-curves", data_id), key=len,
                                   reverse=True)
    assert len(report_curves) < len(curves) / 3
    summaries = _cached(services, "choice", data_id)
    assert len(summaries) == 2
    # Each cached summary is a fraction of the answer it gives: its curves are not in it.
    assert all(len(s) < len(first.data) / 3 for s in summaries)
    assert len(curves) > len(first.data) / 2

    # Another worker: nothing kept in the process, everything read from the cache.
    services.results._memo.clear()
    again = client.get(f"{base}?p_pos=0.2&cost_fn=3")
    assert again.data == first.data
    query = "p_pos=0.11&cost_fn=6&sens_fn=2,12"
    served = client.get(f"{base}?{query}").get_json()
    view = View.parse({k: [v] for k, v in (p.split("=") for p in query.split("&"))})
    direct = choice_summary_of_view(services.store.get(data_id), view, max_points=4000)
    assert json.dumps(served, sort_keys=True) == json.dumps(direct, sort_keys=True)
    assert served["classifiers"][0]["threshold_choice"]["rate_driven"]["pc"]  # spliced in
