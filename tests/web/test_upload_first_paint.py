"""Explore's ROC figure draws each curve with the points visible at the plot's resolution
(issue 23: the first paint after an upload): every point drawn is one of the curve's own,
with its exact values and threshold, every hull vertex is drawn, and no point left out is
farther than the tolerance from the line drawn."""

from __future__ import annotations

import io

import numpy as np
import pytest

from costdash.io import load_predictions
from dashboard.figures.axes import fpr_floor, log_fpr
from dashboard.figures.common import PIXEL_TOLERANCE, threshold_text, visible_points
from dashboard.figures.roc import roc_figure
from dashboard.pages import explore
from dashboard.services import payload_json
from dashboard.viewmodel import build_view_model


def _segment_distance(px, py, ax, ay, bx, by):
    dx, dy = bx - ax, by - ay
    sq = dx * dx + dy * dy
    t = 0.0 if sq == 0 else min(1.0, max(0.0, ((px - ax) * dx + (py - ay) * dy) / sq))
    return float(np.hypot(px - ax - t * dx, py - ay - t * dy))


def _farthest_left_out(x, y, kept):
    """The largest distance of a point left out to the segment between its kept neighbours."""
    worst = 0.0
    for a, b in zip(kept[:-1], kept[1:]):
        for i in range(a + 1, b):
            worst = max(worst, _segment_distance(x[i], y[i], x[a], y[a], x[b], y[b]))
    return worst


def test_visible_points_keep_ends_marked_and_gaps_and_stay_within_tolerance():
    rng = np.random.default_rng(3)
    x = np.sort(rng.random(500))
    y = np.sqrt(x) + rng.normal(scale=0.002, size=500)
    y[200] = np.nan
    keep = np.zeros(500, dtype=bool)
    keep[[17, 333]] = True
    kept = visible_points(x, y, x_span=1.0, y_span=1.0, keep=keep)
    assert kept[0] == 0 and kept[-1] == 499 and np.all(np.diff(kept) > 0)
    assert {17, 333, 199, 200, 201} <= set(kept.tolist())
    assert len(kept) < 400   # something was left out...
    finite = [k for k in kept.tolist()]
    pieces = [np.array([k for k in finite if k < 200]), np.array([k for k in finite if k > 200])]
    for piece in pieces:     # ...and nothing left out is over the tolerance from the line
        assert _farthest_left_out(x, y, piece) <= PIXEL_TOLERANCE + 1e-15


def test_the_tolerance_is_in_axis_spans():
    x = np.linspace(0.0, 1.0, 101)
    y = np.zeros(101)
    y[50] = 0.004    # 0.004 of a span of 1: drawn; of a span of 100: below a pixel
    assert 50 in visible_points(x, y, x_span=1.0, y_span=1.0).tolist()
    assert visible_points(x, y, x_span=1.0, y_span=100.0).tolist() == [0, 100]


@pytest.fixture(scope="module")
def view():
    rng = np.random.default_rng(11)
    n = 20_000
    y = rng.random(n) < 0.1
    cols = {"y_true": y.astype(int)}
    for k in range(4):
        cols[f"m{k}"] = np.round(rng.normal(size=n) + y * (0.5 + k * 0.5), 5)
    text = ",".join(cols) + "\n" + "\n".join(
        ",".join(str(cols[c][i]) for c in cols) for i in range(n)) + "\n"
    dataset = load_predictions(io.BytesIO(text.encode()), name="p.csv")
    return build_view_model(dataset, dataset_id="x", max_points=400)


@pytest.mark.parametrize("log_fpr_scale", [False, True])
def test_thinned_roc_traces_are_the_curves_own_points_with_every_hull_vertex(view,
                                                                             log_fpr_scale):
    full = roc_figure(view, log_fpr_scale=log_fpr_scale)
    thin = roc_figure(view, log_fpr_scale=log_fpr_scale, thin=True)
    assert [t.uid for t in full.data] == [t.uid for t in thin.data]
    floor = fpr_floor(view["n_neg"])
    spans = [r[1] - r[0] for r in (thin.layout.xaxis.range, thin.layout.yaxis.range)]
    entries = {f"roc-{c['index']}": c for c in view["classifiers"]}
    for t_full, t_thin in zip(full.data, thin.data):
        if t_thin.uid not in entries:   # chance, hull: the same traces
            assert payload_json(t_thin) == payload_json(t_full)
            continue
        c = entries[t_thin.uid]
        roc = c["roc"]
        assert len(t_full.x) == len(roc["fpr"]) and len(t_thin.x) < len(t_full.x) / 2
        # Each point drawn is one of the curve's, exactly, in order, with its threshold.
        index = {(f, t): i for i, (f, t) in enumerate(zip(roc["fpr"], roc["tpr"]))}
        fpr = ([float(np.float64(v)) for v in t_thin.text] if log_fpr_scale else None)
        drawn = []
        for k, (x, y) in enumerate(zip(t_thin.x, t_thin.y)):
            i = next(i for (f, t), i in index.items() if t == y and
                     x == (log_fpr(np.array([f]), floor)[0] if log_fpr_scale else f))
            drawn.append(i)
            assert t_thin.customdata[k] == threshold_text(roc["threshold"][i])
            if fpr is not None:
                assert t_thin.text[k] == f"{roc['fpr'][i]:.4g}"
        assert drawn == sorted(drawn) and drawn[0] == 0 and drawn[-1] == len(roc["fpr"]) - 1
        # Every vertex of the classifier's own hull that the curve holds is drawn.
        hull = set(zip(c["hull"]["fpr"], c["hull"]["tpr"]))
        on_hull = {i for (f, t), i in index.items() if (f, t) in hull}
        assert on_hull and on_hull <= set(drawn)
        # Below a pixel: no point left out is farther than the tolerance from the line.
        xs = np.asarray(t_full.x, dtype=float) / spans[0]
        ys = np.asarray(t_full.y, dtype=float) / spans[1]
        assert _farthest_left_out(xs, ys, drawn) <= PIXEL_TOLERANCE + 1e-12


def test_explore_draws_the_thinned_curves_and_the_same_readout_inputs(services,
                                                                      predictions_csv):
    record = services.store.put(predictions_csv, "p.csv")
    ref = {"id": record.id, "name": "p.csv", "models": None}
    out = explore.load_view(services, ref, None, False, "dataset-ref")
    full = services.views.full(record.id)
    drawn = {t.uid: len(t.x) for t in out.roc.data}
    assert drawn == {t.uid: len(t.x) for t in roc_figure(full, thin=True).data}
    # The browser's readouts come from the client model, which the thinning leaves alone:
    # every hull vertex with its exact rates and threshold text.
    hulls = {c["name"]: c["hull"] for c in out.client["classifiers"]}
    for c in full["classifiers"]:
        assert hulls[c["name"]]["fpr"] == c["hull"]["fpr"]
        assert hulls[c["name"]]["threshold_text"] == c["hull"]["threshold_text"]
