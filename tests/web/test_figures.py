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
from dashboard.figures.axes import fpr_floor, log_odds, pc_of_log_odds
from dashboard.figures.common import LEGEND_MAX
from dashboard.figures.palette import (CLASSIFIER_COLORS, OKABE_ITO, UNIQUE_STYLES,
                                       classifier_style, swatch_svg)
from dashboard.figures.ranges import envelope_pieces, ranges_figure
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
        index = [c.name for c in analysis.classifiers].index(s.name)
        # Its own style whether dominated or not (faded when dominated): no two alike.
        assert (t.line.color, t.line.dash, t.marker.symbol) == \
            tuple(vars(classifier_style(index)).values())
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
    for s in analysis.classifiers:
        t = trace(fig, f"env:{s.name}")
        np.testing.assert_array_equal(t.x, s.envelope.pc)
        np.testing.assert_array_equal(t.y, s.envelope.cost)
    assert not [t for t in fig.data if t.uid.startswith("range-")]   # their own strip chart
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


# --- many classifiers, rare events (issue 10 items 5 and 7) ------------------------------------

def test_styles_are_unique_for_sixty_classifiers():
    styles = [classifier_style(i) for i in range(UNIQUE_STYLES)]
    assert UNIQUE_STYLES >= 50
    assert len({(st.color, st.dash) for st in styles}) == UNIQUE_STYLES
    assert all(st.color != OKABE_ITO["black"] for st in styles)     # black is the hull's
    # The swatch draws the style: its colour, its dash pattern (none when solid), its marker.
    svg = swatch_svg(classifier_style(13))
    assert classifier_style(13).dash == "dash" and 'stroke-dasharray="9,6"' in svg
    assert svg.count(classifier_style(13).color) == 3
    assert "stroke-dasharray" not in swatch_svg(classifier_style(3))


@pytest.fixture(scope="module")
def many_view():
    """24 classifiers on one data set: past LEGEND_MAX, some dominated."""
    import pandas as pd
    import tempfile
    from pathlib import Path

    rng = np.random.default_rng(4)
    y = rng.random(4000) < 0.05
    cols = {"y_true": y.astype(int)}
    for k in range(24):
        cols[f"m{k:02d}"] = rng.normal(size=y.size) + y * (0.3 + 0.1 * k)
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "many.csv"
        pd.DataFrame(cols).to_csv(path, index=False)
        return build_view_model(load_predictions(path), dataset_id="y" * 32, max_points=60)


def test_legends_never_eat_the_plot(many_view, view):
    assert len(many_view["models"]) > LEGEND_MAX
    for fig in (roc_figure(many_view, legend=False), cost_figure(many_view, legend=False)):
        # The classifier list is the legend: no classifier's trace in the plot's own legend.
        assert not [t for t in fig.data if t.meta and t.showlegend is not False]
    for fig in (roc_figure(many_view), cost_figure(many_view)):     # the report's: bounded
        assert fig.layout.legend.maxheight is not None and fig.layout.legend.maxheight <= 0.25
    assert roc_figure(view).layout.legend.maxheight is None          # a few: the usual legend


def test_hull_only_leaves_out_the_dominated(many_view):
    dominated = set(many_view["dominated"])
    assert dominated and len(dominated) < len(many_view["models"])
    for fig in (roc_figure(many_view, hull_only=True), cost_figure(many_view, hull_only=True)):
        shown = {t.meta for t in fig.data if t.meta}
        assert shown == set(many_view["models"]) - dominated
    assert {t.meta for t in roc_figure(many_view).data if t.meta} == set(many_view["models"])


def test_log_fpr_axis(view, analysis):
    fig = roc_figure(view, log_fpr_scale=True)
    floor = fpr_floor(view["n_neg"])
    assert floor == 0.5 / analysis.dataset.n_neg
    vertices = trace(fig, "hull-vertices")
    np.testing.assert_allclose(vertices.x, np.log10(np.maximum(analysis.hull.fpr, floor)))
    np.testing.assert_array_equal(vertices.y, analysis.hull.tpr)
    # The hull's straight edges are sampled (curves on this axis) and pass through each vertex.
    hull = trace(fig, "hull")
    assert len(hull.x) > 3 * len(vertices.x)
    x, y = np.asarray(hull.x), np.asarray(hull.y)
    off_floor = x > np.log10(floor)              # FPR = 0 is drawn on the floor
    np.testing.assert_allclose(np.interp(10.0 ** x[off_floor], analysis.hull.fpr,
                                         analysis.hull.tpr), y[off_floor], atol=1e-9)
    assert set(y[~off_floor]) <= set(analysis.hull.tpr[analysis.hull.fpr == 0])
    assert fig.layout.xaxis.ticktext[0] == "0" and fig.layout.xaxis.tickvals[0] == \
        pytest.approx(np.log10(floor))
    assert fig.layout.yaxis.scaleanchor is None                    # log x, linear y


def test_log_odds_pc_axis(view, analysis):
    fig = cost_figure(view, log_pc_scale=True)
    env = trace(fig, "envelope")
    pc = np.asarray(env.customdata, dtype=float)
    np.testing.assert_allclose(env.x, log_odds(pc))
    np.testing.assert_allclose(pc_of_log_odds(env.x), pc, rtol=1e-9)
    np.testing.assert_allclose(env.y, analysis.envelope(pc), atol=1e-12)
    inner = analysis.envelope.pc[(analysis.envelope.pc > pc[0]) & (analysis.envelope.pc < pc[-1])]
    assert np.isin(inner, pc).all()                                # corners drawn exactly
    lines = cost_figure(view, lines=True, log_pc_scale=True, max_lines=5)
    t = next(t for t in lines.data if t.uid.startswith("lines-"))
    assert np.isnan(np.asarray(t.y, dtype=float)).sum() == 5        # one gap after each line
    assert log_odds(0.0) == -8 and log_odds(1.0) == 8 and log_odds(0.5) == 0
    # Each tick sits at exactly the PC(+) its label says.
    ax = fig.layout.xaxis
    for value, label in zip(ax.tickvals, ax.ticktext):
        pc = float(label.replace("1−", "").replace("10⁻", "1e-").translate(
            str.maketrans("⁰¹²³⁴⁵⁶⁷⁸⁹", "0123456789")))
        pc = 1 - pc if label.startswith("1−") else pc
        assert pc_of_log_odds(value) == pytest.approx(pc, rel=1e-12)


def test_operating_ranges_strip_chart(many_view):
    pieces = envelope_pieces(many_view)
    fig = ranges_figure(many_view)
    best = [t for t in fig.data if t.uid.startswith("best-")]
    assert [t.meta for t in best] == list(pieces)                    # one row each, in order
    # The pieces tile [0, 1]: the envelope, classifier by classifier.
    spans = sorted((b, b + w) for t in best for b, w in zip(t.base, t.x))
    assert spans[0][0] == 0.0 and spans[-1][1] == pytest.approx(1.0)
    for (_, hi), (lo, _) in zip(spans, spans[1:]):
        assert lo == pytest.approx(hi)
    for t in best:                                                   # labelled
        assert all("–" in text for text in t.text)
    entries = {c["name"]: c for c in many_view["classifiers"]}
    for t in fig.data:
        if t.uid.startswith("range-"):
            rng = entries[t.meta]["operating_range"]
            assert (t.base[0], t.base[0] + t.x[0]) == pytest.approx(tuple(rng))
    assert fig.layout.height == 78 + 26 * len(pieces)
    log = ranges_figure(many_view, log_pc_scale=True)
    assert log.layout.xaxis.range == (-5.0, 5.0)
