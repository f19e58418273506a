"""Explore's ROC and cost figures built without plotly's validators are the validated figures
(the same JSON), and a plot whose legend is one row has its bottom margin laid out by the
server (issue 23: the first paint after an upload)."""

from __future__ import annotations

import json
import tempfile
from pathlib import Path

import numpy as np
import pytest
from plotly.io.json import to_json_plotly

from costdash.io import load_predictions
from dashboard.figures import cost_figure, roc_figure
from dashboard.figures.common import FIXED_BOTTOM, LEGEND_MAX, base_layout
from dashboard.viewmodel import build_view_model, restrict_view_model


@pytest.fixture(scope="module")
def few_view(breast_cancer_csv):
    return build_view_model(load_predictions(breast_cancer_csv), dataset_id="x" * 32,
                            name="bc.csv", max_points=50)


@pytest.fixture(scope="module")
def many_view():
    """20 classifiers at 5 % prevalence (past LEGEND_MAX; some dominated)."""
    rng = np.random.default_rng(23)
    y = rng.random(3000) < 0.05
    lines = ["y_true," + ",".join(f"m{k:02d}" for k in range(20))]
    scores = [np.round(rng.normal(size=y.size) + y * (0.2 + 0.1 * k), 4) for k in range(20)]
    lines += [",".join([str(int(y[i])), *(repr(float(s[i])) for s in scores)])
              for i in range(y.size)]
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "many.csv"
        path.write_text("\n".join(lines) + "\n")
        return build_view_model(load_predictions(path), dataset_id="y" * 32, max_points=80)


def as_json(fig) -> dict:
    return json.loads(to_json_plotly(fig))


ROC_OPTIONS = [{}, {"log_fpr_scale": True}, {"hull_only": True}, {"thin": True},
               {"thin": True, "log_fpr_scale": True, "hull_only": True}]
COST_OPTIONS = [{}, {"log_pc_scale": True}, {"hull_only": True}, {"lines": True},
                {"lines": True, "log_pc_scale": True, "max_lines": 7}]


@pytest.mark.parametrize("legend", [None, False])
@pytest.mark.parametrize("which", ["few", "many", "subset"])
def test_unvalidated_figures_are_the_validated_ones(few_view, many_view, which, legend):
    view = {"few": few_view, "many": many_view,
            "subset": restrict_view_model(many_view, ["m03", "m11", "m19"])}[which]
    for options in ROC_OPTIONS:
        fast = roc_figure(view, legend=legend, validate=False, **options)
        checked = roc_figure(view, legend=legend, **options)
        assert as_json(fast) == as_json(checked), options
        # What Explore's view load reads of it, and what the tests read, as from any figure.
        assert list(fast.layout.xaxis.range) == list(checked.layout.xaxis.range)
        assert [(t.uid, t.meta, len(t.x)) for t in fast.data] == [
            (t.uid, t.meta, len(t.x)) for t in checked.data]
    for options in COST_OPTIONS:
        fast = cost_figure(view, legend=legend, validate=False, **options)
        assert as_json(fast) == as_json(cost_figure(view, legend=legend, **options)), options
    # The empty figures of a page with no data set.
    assert as_json(roc_figure(None, validate=False)) == as_json(roc_figure(None))
    assert as_json(cost_figure(None, validate=False)) == as_json(cost_figure(None))


def test_typed_arrays_and_template_as_validated(many_view):
    """Numbers go as typed arrays, the template written out (a named template means nothing to
    plotly.js), and the unvalidated figure leaves the shared template alone."""
    fig = as_json(roc_figure(many_view, legend=False, thin=True, validate=False))
    curve = [t for t in fig["data"] if t["uid"].startswith("roc-")][0]
    assert set(curve["x"]) == {"dtype", "bdata"}
    assert isinstance(fig["layout"]["template"], dict) and fig["layout"]["template"]["layout"]
    assert base_layout()["template"] == "simple_white"


def test_one_row_legend_has_its_margin_laid_out(many_view, few_view):
    """Past LEGEND_MAX classifiers (the page's list is the legend) the plots' own legend is one
    row: the x axis's automargin is off (it made Plotly draw the plot twice) and the bottom
    margin is where automargin settled; with the classifiers in the legend (its rows depend
    on the width) automargin stays."""
    assert len(many_view["models"]) > LEGEND_MAX
    for fig in (roc_figure(many_view, legend=False), cost_figure(many_view, legend=False),
                roc_figure(many_view, legend=False, log_fpr_scale=True),
                cost_figure(many_view, legend=False, log_pc_scale=True, lines=True)):
        assert fig.layout.xaxis.automargin is False and fig.layout.margin.b == FIXED_BOTTOM
        assert fig.layout.yaxis.automargin is True
        shown = [t.name for t in fig.data if t.showlegend is not False]
        assert shown in (["ROC convex hull"], ["lower envelope"]), shown
    for fig in (roc_figure(few_view), cost_figure(few_view), roc_figure(many_view),
                cost_figure(many_view)):
        assert fig.layout.xaxis.automargin is True
        assert fig.layout.margin.b == base_layout()["margin"]["b"]
