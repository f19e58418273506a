"""Figure builders and the view model: trace data equal the core's arrays."""

from __future__ import annotations

import json

import numpy as np
import plotly.graph_objects as go
import pytest

from costdash import analyze
from costdash.costspace import cost_line
from costdash.io import load_predictions
from costdash.roc import thin_indices
from dashboard.figures import classifier_colors, cost_figure, roc_figure
from dashboard.figures.cost import range_bar_y
from dashboard.figures.palette import CLASSIFIER_COLORS, OKABE_ITO
from dashboard.viewmodel import (INF_LOG, build_view_model, client_model, hull_from_entry,
                                 restrict_view_model)

MAX_POINTS = 50


@pytest.fixture(scope="module")
def dataset(breast_cancer_csv):
    return load_predictions(breast_cancer_csv)


@pytest.fixture(scope="module")
def analysis(dataset):
    return analyze(dataset)


@pytest.fixture(scope="module")
def view(dataset):
    return build_view_model(dataset, dataset_id="x" * 32, name="bc.csv", max_points=MAX_POINTS)


def trace(fig: go.Figure, uid: str):
    """The trace with this uid; ``"kind:name"`` finds a classifier's trace by its ``meta``."""
    kind, _, name = uid.partition(":")
    if name:
        found = [t for t in fig.data if t.uid.startswith(kind + "-") and t.meta == name]
    else:
        found = [t for t in fig.data if t.uid == uid]
    assert len(found) == 1, f"no single trace {uid!r}: {[t.uid for t in fig.data]}"
    return found[0]


def test_view_model_is_strict_json(view):
    text = json.dumps(view, allow_nan=False)
    assert json.loads(text) == view


def test_view_model_matches_core(view, analysis, dataset):
    assert view["prevalence"] == dataset.prevalence
    assert (view["n_pos"], view["n_neg"]) == (dataset.n_pos, dataset.n_neg)
    assert view["hull"]["classifier"] == list(analysis.hull.classifier)
    np.testing.assert_array_equal(view["hull"]["fpr"], analysis.hull.fpr)
    with np.errstate(divide="ignore"):
        logs = np.clip(np.log(analysis.hull.segment_slopes), -INF_LOG, INF_LOG)
    np.testing.assert_array_equal(view["hull"]["log_edges"], logs)
    np.testing.assert_array_equal(view["envelope"]["pc"], analysis.envelope.pc)
    assert view["dominated"] == list(analysis.hull.dominated(dataset.names))
    for c, s in zip(view["classifiers"], analysis.classifiers):
        assert c["name"] == s.name and c["auc"] == s.roc.auc
        assert c["operating_range"] == (list(s.operating_range) if s.operating_range else None)
        i = s.roc.point_at_threshold(0.5)
        assert (c["at_fixed"]["fpr"], c["at_fixed"]["tpr"]) == (s.roc.fpr[i], s.roc.tpr[i])
        assert len(c["roc"]["fpr"]) <= MAX_POINTS


def test_hull_entry_round_trip(view, analysis):
    hull = hull_from_entry(view["hull"])
    np.testing.assert_array_equal(hull.tpr, analysis.hull.tpr)
    np.testing.assert_array_equal(hull.threshold, analysis.hull.threshold)  # NaN in the same places
    assert hull.classifier == analysis.hull.classifier


def test_restrict_to_all_is_the_core_hull(view, analysis):
    again = restrict_view_model(view, [c["name"] for c in view["classifiers"]])
    assert again["hull"] == view["hull"] and again["envelope"] == view["envelope"]


def test_restrict_to_subset_equals_analysis_of_subset(view, breast_cancer_csv):
    subset = ["stump", "naive_bayes"]
    restricted = restrict_view_model(view, subset)
    expected = analyze(load_predictions(breast_cancer_csv, models=subset))
    assert restricted["models"] == ["naive_bayes", "stump"]          # data set order
    assert restricted["hull"]["classifier"] == list(expected.hull.classifier)
    np.testing.assert_array_equal(restricted["hull"]["fpr"], expected.hull.fpr)
    np.testing.assert_array_equal(restricted["hull"]["tpr"], expected.hull.tpr)
    np.testing.assert_array_equal(restricted["envelope"]["cost"], expected.envelope.cost)
    with pytest.raises(KeyError):
        restrict_view_model(view, ["nope"])
    with pytest.raises(ValueError):
        restrict_view_model(view, [])


def test_roc_figure_traces(view, analysis):
    fig = roc_figure(view)
    hull = trace(fig, "hull")
    assert isinstance(hull.x, np.ndarray)                         # sent as a typed array
    np.testing.assert_array_equal(hull.x, analysis.hull.fpr)
    np.testing.assert_array_equal(hull.y, analysis.hull.tpr)
    assert hull.line.color == OKABE_ITO["black"]
    for s in analysis.classifiers:
        t = trace(fig, f"roc:{s.name}")
        idx = thin_indices(s.roc.size, MAX_POINTS)
        np.testing.assert_array_equal(t.x, s.roc.fpr[idx])
        np.testing.assert_array_equal(t.y, s.roc.tpr[idx])
        assert t.legendgroup == s.name
        assert "operating range" in t.hovertemplate and "threshold" in t.hovertemplate
        dominated = s.name not in analysis.hull.classifier
        assert (t.line.dash == "dash") == dominated
        assert (t.opacity < 1) == dominated
        assert t.name.endswith("(dominated)") == dominated
    layout = fig.layout
    assert layout.xaxis.title.text == "False positive rate (FPR)"
    assert layout.yaxis.title.text == "True positive rate (TPR)"
    assert layout.yaxis.scaleanchor == "x" and layout.yaxis.scaleratio == 1
    assert layout.shapes == ()                                    # drawn in the browser


def test_empty_figures():
    assert [t.uid for t in roc_figure(None).data] == ["chance"]
    assert [t.uid for t in cost_figure(None).data] == ["all-negative", "all-positive"]


def test_cost_figure_envelopes(view, analysis):
    fig = cost_figure(view)
    env = trace(fig, "envelope")
    np.testing.assert_array_equal(env.x, analysis.envelope.pc)
    np.testing.assert_array_equal(env.y, analysis.envelope.cost)
    np.testing.assert_array_equal(trace(fig, "all-negative").y, [0, 1])
    np.testing.assert_array_equal(trace(fig, "all-positive").y, [1, 0])
    n = len(analysis.classifiers)
    for position, s in enumerate(analysis.classifiers):
        t = trace(fig, f"env:{s.name}")
        np.testing.assert_array_equal(t.x, s.envelope.pc)
        np.testing.assert_array_equal(t.y, s.envelope.cost)
        if s.operating_range:
            bar = trace(fig, f"range:{s.name}")
            np.testing.assert_array_equal(bar.x, s.operating_range)
            assert list(bar.y) == [range_bar_y(position, n)] * 2 and bar.y[0] < 0
    assert fig.layout.xaxis.title.text == "PC(+) (probability × cost)"
    assert fig.layout.yaxis.title.text == "Normalized expected cost"


def test_cost_figure_lines(view, analysis):
    fig = cost_figure(view, lines=True, max_lines=10)
    assert not [t for t in fig.data if t.uid.startswith("env-")]
    for s in analysis.classifiers:
        t = trace(fig, f"lines:{s.name}")
        roc_idx = thin_indices(s.roc.size, MAX_POINTS)
        idx = roc_idx[thin_indices(roc_idx.size, 10)]
        f, tp = s.roc.fpr[idx], s.roc.tpr[idx]
        np.testing.assert_array_equal(t.x[0::3], 0.0)
        np.testing.assert_array_equal(t.x[1::3], 1.0)
        np.testing.assert_allclose(t.y[0::3], cost_line(f, tp, 0.0))
        np.testing.assert_allclose(t.y[1::3], cost_line(f, tp, 1.0))
        assert np.isnan(t.y[2::3]).all()                            # gaps between lines
    assert fig.layout.yaxis.range[1] == 1.0


def test_colours_fixed_per_classifier(view):
    names = [c["name"] for c in view["classifiers"]]
    colors = classifier_colors(names)
    assert colors == {n: CLASSIFIER_COLORS[i] for i, n in enumerate(names)}
    sub = restrict_view_model(view, names[2:])
    fig = roc_figure(sub)
    for name in names[2:]:                      # deselecting others keeps each one's colour
        assert trace(fig, f"roc:{name}").line.color == colors[name]
        assert trace(cost_figure(sub), f"env:{name}").line.color == colors[name]


def test_client_model_is_small_and_has_no_curves(view):
    names = [c["name"] for c in view["classifiers"]]
    client = client_model(view, classifier_colors(names))
    assert "roc" not in json.dumps(client)
    assert [c["name"] for c in client["classifiers"]] == names
    assert client["hull"]["log_edges"] == view["hull"]["log_edges"]
    assert len(json.dumps(client)) < len(json.dumps(view)) / 3
