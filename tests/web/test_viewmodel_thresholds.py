"""The readable thresholds the browser shows come with the view model (issue 24): each hull
vertex's text is :meth:`costdash.analysis.ClassifierSummary.readable_threshold` of its
classifier, for the classifiers' own hulls, the overall hull, a hull of some classifiers
(``restrict_view_model``) and the client's copy."""

from __future__ import annotations

from costdash.analysis import analyze
from costdash.demo import DEMOS
from costdash.io import load_predictions
from dashboard.viewmodel import build_view_model, client_model, restrict_view_model


def expected_texts(hull: dict, summaries: dict) -> list:
    return [None if t is None else summaries[name].readable_threshold(t)
            for name, t in zip(hull["classifier"], hull["threshold"])]


def test_every_hull_vertex_carries_its_readable_threshold():
    dataset = load_predictions(DEMOS["breast-cancer"].path)
    summaries = {c.name: c for c in analyze(dataset).classifiers}
    view = build_view_model(dataset, dataset_id="x")
    shorter = 0
    for entry in view["classifiers"]:
        hull = entry["hull"]
        assert hull["threshold_text"] == expected_texts(hull, summaries)
        shorter += sum(len(text) < len(repr(t)) for text, t in
                       zip(hull["threshold_text"], hull["threshold"]) if t is not None)
    assert shorter > 20            # the demo's scores carry 16-17 digits; what is shown, few
    assert view["hull"]["threshold_text"] == expected_texts(view["hull"], summaries)
    some = restrict_view_model(view, ["logreg", "stump"])
    assert some["hull"]["threshold_text"] == expected_texts(some["hull"], summaries)
    assert set(some["hull"]["classifier"]) <= {"logreg", "stump", "all-negative",
                                               "all-positive"}
    client = client_model(some, {c["name"]: "#000" for c in view["classifiers"]})
    assert client["hull"]["threshold_text"] == some["hull"]["threshold_text"]
    for entry in client["classifiers"]:
        own = summaries[entry["name"]]
        assert entry["hull"]["threshold_text"] == [
            None if t is None else own.readable_threshold(t) for t in entry["hull"]["threshold"]]
    # The trivial corners have none.
    assert view["hull"]["threshold_text"][0] is None and view["hull"]["threshold_text"][-1] is None
