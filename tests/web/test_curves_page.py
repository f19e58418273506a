"""The Curves page without a browser: its figure builders draw the core's arrays, and its
handler (``curves_view``) puts the core's numbers on the page for a stored data set."""

from __future__ import annotations

import math

import numpy as np
import pytest
from sklearn.metrics import brier_score_loss, precision_recall_curve

from costdash import OperatingCondition, analyze
from costdash.curves import (gains_curve, iso_f1, pr_curve, pr_hull, pr_point, reliability,
                             score_histograms)
from costdash.demo import DEMOS, load_demo
from costdash.hull import classifier_hull
from costdash.io import load_predictions
from costdash.roc import roc_curve
from dashboard.figures.curves import (Mark, gains_figure, histogram_figure, pr_figure,
                                      reliability_figure)
from dashboard.pages import PAGES, curves
from dashboard.shell import route
from dashboard.storage import LoaderOptions

from .helpers import find

Y = np.array([1, 0, 1, 1, 0, 0, 1, 0, 0, 0], bool)
S = np.array([0.9, 0.8, 0.7, 0.6, 0.55, 0.5, 0.4, 0.3, 0.2, 0.1])


def by_uid(fig):
    return {t.uid: t for t in fig.data}


# --- figures -------------------------------------------------------------------------------------

def test_pr_figure_draws_the_core_arrays_and_marks():
    roc = roc_curve(Y, S, name="a")
    pr = pr_curve(roc, p_pos=0.1)
    hull = pr_hull(classifier_hull(roc), n_pos=4, n_neg=6, p_pos=0.1)
    mark = Mark("current choice", "a", 0.6, fpr=1 / 6, tpr=0.75)
    fig = pr_figure([pr], {"a": 3}, hull=hull, iso=iso_f1(), marks=[mark])
    t = by_uid(fig)
    assert np.array_equal(t["pr-3"].x, pr.recall) and np.array_equal(t["pr-3"].y, pr.precision)
    assert np.array_equal(t["pr-3"].customdata, pr.threshold)
    assert t["pr-3"].meta == {"role": "curve", "classifier": "a"}
    assert np.array_equal(t["pr-hull"].y, hull.precision)
    assert [k for k in t if k.startswith("iso-f1-")] == ["iso-f1-0", "iso-f1-1", "iso-f1-2",
                                                         "iso-f1-3"]
    recall, precision = pr_point(1 / 6, 0.75, prior=0.1)
    assert list(t["mark-choice"].x) == [recall] and list(t["mark-choice"].y) == [precision]
    assert fig.data[-1].uid == "hover" and len(fig.data[-1].x) == 0
    assert fig.layout.yaxis.title.text == "Precision at p(+) = 0.1"
    # A choice that flags nothing has no precision: not marked.
    nothing = Mark("current choice", "all-negative", math.nan, 0.0, 0.0)
    assert "mark-choice" not in by_uid(pr_figure([pr], {"a": 0}, marks=[nothing]))


def test_gains_figure_draws_gains_lift_capacity_and_marks():
    g = gains_curve(roc_curve(Y, S, name="a"), p_pos=0.2)
    mark = Mark("pin 1", "a", 0.6, fpr=1 / 6, tpr=0.75, slot=0)
    fig = gains_figure([g], {"a": 1}, capacity_share=0.3, capacity_point=(0.3, 0.8),
                       marks=[mark])
    t = by_uid(fig)
    assert np.array_equal(t["gains-1"].x, g.flagged) and np.array_equal(t["gains-1"].y, g.gain)
    assert np.array_equal(t["lift-1"].y, g.lift[1:])
    assert list(t["capacity"].x) == [0.3, 0.3]
    assert list(t["capacity-best"].y) == [0.8]
    share = 0.2 * 0.75 + 0.8 / 6
    assert list(t["mark-pin-0"].x) == [pytest.approx(share)]
    assert list(t["mark-pin-0-2"].y) == [pytest.approx(0.75 / share)]
    assert [fig.data[-2].uid, fig.data[-1].uid] == ["hover", "hover-lift"]
    assert fig.data[-1].yaxis == "y2"


def test_histogram_figure_marks_only_its_classifier():
    h = score_histograms(Y, S, bins=5, name="a")
    marks = [Mark("current choice", "a", 0.6, 0.1, 0.7),
             Mark("pin 1", "b", 0.3, 0.2, 0.8, slot=0),
             Mark("pin 2", "a", 0.45, 0.3, 0.9, slot=1)]
    fig = histogram_figure(h, marks=marks)
    t = by_uid(fig)
    assert np.array_equal(t["hist-pos"].y, h.share_positives)
    assert np.array_equal(t["hist-neg"].y, h.share_negatives)
    assert list(t["mark-choice"].x) == [0.6, 0.6]
    assert list(t["mark-pin-1"].x) == [0.45, 0.45]
    assert "mark-pin-0" not in t                  # b's threshold means nothing on a's scores
    assert fig.data[-1].meta["top"] == pytest.approx(max(h.share_positives.max(),
                                                         h.share_negatives.max()) * 1.08)


def test_reliability_figure_draws_filled_bins_and_names_the_refused():
    r = reliability(Y, S, bins=4, name="a")
    fig = reliability_figure([r], {"a": 0}, refused={"b": "not probabilities"})
    t = by_uid(fig)
    assert np.array_equal(t["rel-0"].x, r.mean_score[r.filled])
    assert np.array_equal(t["rel-0"].y, r.observed[r.filled])
    assert t["rel-0"].name == f"a (Brier {r.brier:.4f})"
    assert "b" in fig.layout.annotations[0].text
    empty = reliability_figure([], {}, refused={"b": "x"})
    assert "none can be calibrated" in empty.layout.annotations[0].text


# --- the page's handler ---------------------------------------------------------------------------

def ref_of(data_id, **extra):
    return {"id": data_id, "model": None, "models": [], "pins": [], "cost_tp": 0.0,
            "cost_tn": 0.0, "volume": 1000.0, **extra}


def test_curves_view_puts_the_core_numbers_on_the_page(services):
    record = services.put_demo("breast-cancer")
    out = curves.curves_view(services, ref_of(record.id, models=["logreg", "gbm"]), None,
                             0.05, 10, 1, None)
    assert out.error == ""
    dataset = load_predictions(DEMOS["breast-cancer"].path, models=["logreg", "gbm"])
    chosen = analyze(dataset, OperatingCondition(0.05, 10.0, 1.0)).operating_point.vertex
    mark = by_uid(out.pr)["mark-choice"]
    assert mark.name == f"current choice: {chosen.classifier}"
    assert list(mark.y) == [pytest.approx(pr_point(chosen.fpr, chosen.tpr, prior=0.05)[1])]
    assert out.model == chosen.classifier          # the scores shown: the choice's classifier
    assert {t.uid for t in out.rel.data} >= {"rel-0", "rel-2"}
    table = find(out.table, "curves-row-choice-recall")
    assert table.children == f"{chosen.tpr:.4g}"
    demo = load_demo("breast-cancer")
    gbm = demo.classifier("gbm")
    brier = find(out.brier[0], "curves-brier-2")
    assert brier.children == f"{brier_score_loss(gbm.y_true, gbm.score):.4f}"


@pytest.mark.slow
def test_curves_view_at_the_prevalence_is_scikit_learns_pr_curve(services):
    record = services.put_demo("breast-cancer")
    first = curves.curves_view(services, ref_of(record.id, models=["forest"]), None, None, 1, 1,
                               None)
    assert first.p_pos == pytest.approx(212 / 569)     # the empty box gets the prevalence
    out = curves.curves_view(services, ref_of(record.id, models=["forest"]), "forest",
                             first.p_pos, 1, 1, None)
    forest = load_demo("breast-cancer").classifier("forest")
    precision, recall, _ = precision_recall_curve(forest.y_true, forest.score,
                                                  drop_intermediate=False)
    trace = by_uid(out.pr)["pr-1"]
    assert trace.y.size == precision.size - 1      # the view model keeps every point here
    assert np.array_equal(trace.y, precision[:-1][::-1])
    assert np.array_equal(trace.x, recall[:-1][::-1])
    assert out.pr.layout.yaxis.title.text == "Precision (test set's counts)"


def test_curves_view_refuses_ranking_scores_for_reliability_and_names_bad_values(
        services, predictions_csv):
    record = services.store.put(predictions_csv, "predictions.csv", LoaderOptions())
    out = curves.curves_view(services, ref_of(record.id), None, 0.1, 5, 1, 300)
    assert not [t for t in out.rel.data if t.uid.startswith("rel-")]
    def text(node) -> str:
        if isinstance(node, (list, tuple)):
            return "".join(text(n) for n in node)
        return str(node) if not hasattr(node, "children") else text(node.children or "")

    # One line per reason, naming the classifiers, not one paragraph each (issue 23).
    notes = [text(p) for p in out.brier[1:] if p is not None]
    assert len(notes) == 1 and "for 3 classifiers (alpha, beta, gamma)" in notes[0]
    assert "probabilities in [0, 1]" in notes[0]
    assert by_uid(out.gains)["capacity"].x == (0.3, 0.3)
    bad = curves.curves_view(services, ref_of(record.id), None, 1.5, 5, 1, None)
    assert "p(+) must be a number strictly between 0 and 1" in bad.error.children
    none = curves.curves_view(services, None, None, None, 1, 1, None)
    assert none.message == curves.NO_DATA


def test_the_page_is_routed_with_the_view(services):
    record = services.put_demo("breast-cancer")
    content, classes = route("/curves", f"?data={record.id}&p_pos=0.02&capacity=50&"
                             "models=gbm,logreg&pins=gbm:0.5", services)
    assert find(content, "curves-p-pos").value == 0.02
    assert find(content, "curves-capacity").value == 50
    ref = find(content, "curves-ref").data
    assert ref["models"] == ["gbm", "logreg"] and ref["pins"] == [["gbm", 0.5]]
    active = [p.path for p, c in zip(PAGES, classes) if "active" in c.split()]
    assert active == ["/curves"]


# --- the report's Curves section -----------------------------------------------------------------

def test_report_has_the_curves_and_their_readouts():
    from costdash.view import View
    from dashboard.report import build_report, percent, readout

    dataset = load_demo("breast-cancer")
    view = View.parse("models=logreg,gbm&p_pos=0.05&cost_fn=10&cost_fp=1&volume=1000"
                      "&capacity=120&pins=gbm:0.5")
    html = build_report(dataset, view=view)
    section = html[html.index('<section id="curves">'):]
    section = section[:section.index("</section>")]
    for key in ("pr", "gains", "hist", "rel"):
        assert f'id="curves-{key}-figure"' in section
    assert html.count("plotly.js v") <= 2          # plotly.js embedded once, not per figure
    chosen = analyze(load_predictions(DEMOS["breast-cancer"].path, models=["logreg", "gbm"]),
                     OperatingCondition(0.05, 10.0, 1.0)).operating_point.vertex
    _, precision = pr_point(chosen.fpr, chosen.tpr, prior=0.05)
    row = section[section.index("current choice"):]
    row = row[:row.index("</tr>")]
    assert f"<td>{readout(precision)}</td>" in row and f"<td>{readout(chosen.tpr)}</td>" in row
    assert "pin 1" in section and f"Within the capacity ({percent(0.12)} of cases)" in section
    gbm = dataset.classifier("gbm")
    assert f"<td>{readout(brier_score_loss(gbm.y_true, gbm.score))}</td>" in section
    assert "precision is at p(+) = 0.05" in section.lower()


def test_report_names_classifiers_whose_scores_are_not_probabilities(predictions_csv):
    from dashboard.report import build_report

    html = build_report(load_predictions(predictions_csv))
    section = html[html.index('<section id="curves">'):]
    assert "alpha&#x27;s scores run from" in section or "alpha's scores run from" in section
    assert "on the test set&#x27;s counts" in section or "on the test set's counts" in section


# --- the read-only link ---------------------------------------------------------------------------

def test_a_read_only_link_shows_curves_without_recording_the_data(services, breast_cancer_csv):
    record = services.store.put(breast_cancer_csv, "b.csv")
    new = services.sharing.create(record.id, name="Shared", view={
        "p_pos": 0.2, "cost_fn": 10, "cost_fp": 1, "models": ["gbm", "logreg"],
        "pins": [{"model": "gbm", "threshold": 0.5}], "capacity": 100})
    token = new.record.share_token
    content, _ = route(f"/s/{token}/curves", "?p_pos=0.3", services)
    assert find(content, "shared-view-curves") is not None
    assert find(content, "shared-view-explore").href == f"/s/{token}"
    assert find(content, "curves-p-pos").value == 0.3          # the viewer's what-if
    ref = find(content, "curves-ref").data
    assert ref["id"] == f"share:{token}" and ref["shared"] is True     # no handle (issue 22)
    assert ref["models"] == ["gbm", "logreg"] and ref["pins"] == [["gbm", 0.5]]
    assert find(content, "curves-data-id").data is None          # never in the address
    text = str(content.to_plotly_json())
    assert new.manage_token not in text and record.id not in text
    out = curves.curves_view(services, ref, None, 0.3, 10, 1, 100)
    assert out.data_id is None and out.error == ""
    assert "mark-pin-0" in by_uid(out.pr)
    # Explore stays the link's first page; an unknown sub-page is not found.
    content, _ = route(f"/s/{token}", "", services)
    assert find(content, "shared-view-explore") is not None
    content, _ = route(f"/s/{token}/folds", "", services)
    assert "Page not found" in str(content.to_plotly_json())
