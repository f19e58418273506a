""":meth:`ClassifierSummary.readable_threshold` keeps the sorted scores it searches.

The view model asks for a readable threshold at every hull vertex of every classifier; the
summary sorts its finite distinct scores once and keeps them. The texts must be the ones
:func:`costdash.analysis.readable_threshold` gives on the classifier's own scores, whatever the
order of the calls, and the summary must stay frozen.
"""

from __future__ import annotations

import dataclasses
import math

import numpy as np
import pytest

from costdash.analysis import analyze, readable_threshold, summarize_classifier
from costdash.demo import DEMOS
from costdash.io import load_predictions
from costdash.roc import roc_curve


def _summaries(seed: int):
    rng = np.random.default_rng(seed)
    n = 4000
    y = rng.random(n) < 0.2
    for name, s in {
        "tied": np.round(rng.random(n) + 0.3 * y, 2),
        "close": 0.4999996 + 1e-7 * (rng.normal(size=n) + y),
        "negative": -rng.exponential(size=n) * 1e5 * (1.5 - y),
    }.items():
        yield name, s, summarize_classifier(roc_curve(y, s, name=name))


def _probes(scores: np.ndarray, hull_thresholds) -> list[float]:
    """Hull vertices, every 97th distinct score, points between scores, above all and below
    all (the last flags everything)."""
    distinct = np.unique(scores)
    mids = (distinct[:-1] + distinct[1:]) / 2
    probes = [float(t) for t in hull_thresholds if math.isfinite(t)]
    probes += [float(v) for v in distinct[::97]] + [float(v) for v in mids[::89]]
    probes += [float(distinct[-1]) * 2 + 1, float(distinct[0]) - abs(float(distinct[0])) - 1]
    return probes


@pytest.mark.parametrize("seed", [0, 1])
def test_texts_are_those_of_the_full_score_array_in_any_order(seed):
    for name, scores, summary in _summaries(seed):
        ordered = np.sort(np.asarray(scores, dtype=np.float64))
        probes = _probes(scores, summary.hull.threshold)
        expected = [readable_threshold(ordered, t) for t in probes]
        # Asked in the given order, then reversed, then again on a fresh summary in reverse:
        # the kept array must not depend on which threshold made it.
        assert [summary.readable_threshold(t) for t in probes] == expected, name
        assert [summary.readable_threshold(t) for t in probes[::-1]] == expected[::-1], name
        fresh = summarize_classifier(summary.roc)
        assert [fresh.readable_threshold(t) for t in probes[::-1]] == expected[::-1], name


def test_no_threshold_reads_none_and_makes_nothing():
    _, _, summary = next(_summaries(2))
    for t in (None, math.nan, math.inf, -math.inf):
        assert summary.readable_threshold(t) == "none"
    assert summary._increasing_scores is None


def test_scores_sorted_once_kept_read_only_and_summary_still_frozen():
    _, scores, summary = next(_summaries(3))
    assert summary._increasing_scores is None
    t = float(np.median(scores))
    summary.readable_threshold(t)
    kept = summary._increasing_scores
    assert kept is not None and not kept.flags.writeable
    assert np.array_equal(kept, np.unique(scores))
    summary.readable_threshold(t + 0.01)
    assert summary._increasing_scores is kept
    with pytest.raises(dataclasses.FrozenInstanceError):
        summary.operating_range = None
    with pytest.raises(dataclasses.FrozenInstanceError):
        summary._increasing_scores = None
    # A copy with another ROC must not inherit the scores kept for this one.
    other = roc_curve([0, 1, 0, 1], [0.1, 0.2, 0.3, 0.4], name="other")
    copied = dataclasses.replace(summary, roc=other)
    assert copied._increasing_scores is None
    assert copied.readable_threshold(0.35) == readable_threshold([0.1, 0.2, 0.3, 0.4], 0.35)


def test_field_is_private_to_the_constructor_and_the_repr():
    _, _, summary = next(_summaries(4))
    summary.readable_threshold(float(summary.roc.threshold[1]))
    assert "_increasing_scores" not in repr(summary)
    with pytest.raises(TypeError):
        type(summary)(roc=summary.roc, hull=summary.hull, envelope=summary.envelope,
                      operating_range=summary.operating_range, _increasing_scores=None)


def test_demo_analysis_texts_are_those_of_the_full_scores():
    analysis = analyze(load_predictions(DEMOS["breast-cancer"].path))
    checked = 0
    for summary, classifier in zip(analysis.classifiers, analysis.dataset.scored):
        ordered = np.sort(np.asarray(classifier.score, dtype=np.float64))
        for t in _probes(ordered, summary.hull.threshold):
            assert summary.readable_threshold(t) == readable_threshold(ordered, t)
            checked += 1
    assert checked > 20
