"""A cold ``report.html`` reuses the analysis the report's own threshold choice kept in the
web process (issue 23: the threshold-choice base, :meth:`dashboard.results.Results.
choice_base`): no classifier's scores are sorted again, and the report is byte for byte the
one computed from scratch; the report's figures written from plain dicts are the figures
plotly's validated ``go.Figure`` of the same dicts gives."""

from __future__ import annotations

import json

import plotly.graph_objects as go
import pytest

from costdash.view import View
from dashboard.api import report_inputs
from dashboard.figures.choice import threshold_choice_dict
from dashboard.figures.curves import gains_dict, pr_dict, reliability_dict
from dashboard.report import build_report
from dashboard.report.format import _figure_html, plain_figure

from .test_report_content import FIXED, VIEWS, stored  # noqa: F401 - the fixture


@pytest.mark.parametrize("max_points", [None, 400], ids=["full", "read-link"])
@pytest.mark.parametrize("which", sorted(VIEWS))
@pytest.mark.slow
def test_a_report_from_the_kept_analysis_is_the_same_report(stored, monkeypatch,  # noqa: F811
                                                            which, max_points):
    app, data_id, dataset = stored
    services = app.server.extensions["costdash"]
    view = View.parse(VIEWS[which])
    computed = build_report(dataset, view=view, max_points=max_points, **FIXED)
    scope = "full" if max_points is None else "thinned"
    # What the report route's own threshold choice keeps in the web process (a read link's:
    # the thinned scope's, its curves thinned to max_points).
    services.results.choice_base(data_id, scope, view.models, view.calibration)
    kept = report_inputs(services, data_id, max_points, view)
    assert "analysis" in kept

    def no_analysis(*_args, **_kwargs):
        raise AssertionError("the classifiers were analysed again")

    monkeypatch.setattr("dashboard.report.analyze", no_analysis)
    assert build_report(dataset, view=view, max_points=max_points, **FIXED, **kept) == computed


def test_nothing_is_computed_for_the_analysis_when_no_base_is_kept(stored):  # noqa: F811
    app, data_id, _dataset = stored
    services = app.server.extensions["costdash"]
    kept = report_inputs(services, data_id, None, View.parse({"p_pos": "0.3"}))
    assert "analysis" not in kept
    assert services.results.memoised(("choice-base", data_id, "full", None, None)) is None


def _parsed(spec: dict | go.Figure) -> dict:
    """The figure's data and layout as the report writes them."""
    text = _figure_html(spec, False, "f")
    start = text.index('Plotly.newPlot(') + len('Plotly.newPlot(')
    decoder = json.JSONDecoder()
    i = text.index(",", start) + 1
    out = []
    for _ in range(2):
        while text[i] in " \n,":
            i += 1
        value, i = decoder.raw_decode(text, i)
        out.append(value)
    return {"data": out[0], "layout": out[1]}


def test_the_plain_figures_are_the_validated_figures(stored):  # noqa: F811
    """Each ``*_dict`` builder, written by the report (:func:`plain_figure`), gives the JSON
    the report writes for ``go.Figure`` of the same dict (validated property by property:
    the page's figure)."""
    from costdash.analysis import analyze
    from costdash.choice_summary import choice_summary_of_view
    from costdash.curves import gains_curve, iso_f1, pr_curve, pr_hull, reliability
    from dashboard.figures.curves import Mark

    _app_, _id, dataset = stored
    analysis = analyze(dataset)
    index = {n: i for i, n in enumerate(dataset.names)}
    rocs = [c.roc for c in analysis.classifiers]
    v = analysis.operating_point.vertex
    marks = [Mark("current choice", v.classifier, v.threshold, v.fpr, v.tpr),
             Mark("pin 1", "beta", 0.5, 0.3, 0.6, slot=0)]
    summary = choice_summary_of_view(dataset, View.parse({"sens_p": "0.1,0.3"}), max_points=50)
    scored = [dataset.classifier(n) for n in dataset.names]
    rels = []
    for c in scored:
        try:
            rels.append(reliability(c.y_true, 1 / (1 + 2.0 ** -c.score), bins=10, name=c.name))
        except Exception:  # noqa: BLE001 - only probabilities have a diagram
            pass
    specs = [
        threshold_choice_dict(summary["classifiers"], index, pc_now=0.3, box_pc=(0.2, 0.4)),
        threshold_choice_dict([], index, message="nothing"),
        pr_dict([pr_curve(r, p_pos=0.1) for r in rocs], index,
                hull=pr_hull(analysis.hull, n_pos=dataset.n_pos, n_neg=dataset.n_neg,
                             p_pos=0.1), iso=iso_f1(), marks=marks),
        pr_dict([], {}),
        gains_dict([gains_curve(r) for r in rocs], index, capacity_share=0.2,
                   capacity_point=(0.2, 0.5), marks=marks),
        gains_dict([], {}),
        reliability_dict(rels, index, refused={"x": "no"}, counts=rels[0]),
        reliability_dict(rels, index),
        reliability_dict([], {}),
    ]
    assert len(rels) == 3
    for spec in specs:
        assert _parsed(plain_figure(spec)) == _parsed(go.Figure(spec))
