"""The threshold choice's undominated candidates (:func:`costdash.choice_summary._undominated`)
without a row-wise ``np.unique`` (issue 23): the same points as the former code, kept here as the
reference, on curves with ties, repeated points across classifiers and counted classifiers."""

from __future__ import annotations

import io
from dataclasses import replace

import numpy as np
import pandas as pd
import pytest

from costdash import load_predictions
from costdash.analysis import ClassifierSummary, analyze
from costdash.choice_summary import _undominated
from costdash.roc import RocCurve


def _reference(analysis):
    """The former code's exact pass (before issue 23's session 13) over every candidate: without
    the cheap first pass under the hull vertices' staircase, whose points are dominated by those
    vertices (candidates themselves), so the exact pass alone gives the same set."""
    survivors = []
    for c in analysis.classifiers:
        roc = c.roc
        idx = np.arange(1, roc.size)
        survivors.append(idx[~((roc.fp[idx] == roc.n_neg) & (roc.tp[idx] == roc.n_pos))])
    fpr = np.concatenate([[0.0, 1.0], *(c.roc.fpr[k] for c, k in
                                          zip(analysis.classifiers, survivors))])
    tpr = np.concatenate([[0.0, 1.0], *(c.roc.tpr[k] for c, k in
                                          zip(analysis.classifiers, survivors))])
    unique, inverse = np.unique(np.column_stack((fpr, tpr)), axis=0, return_inverse=True)
    order = np.lexsort((-unique[:, 1], unique[:, 0]))
    t = unique[order, 1]
    dominated = np.empty(unique.shape[0], dtype=bool)
    dominated[order] = np.maximum.accumulate(np.concatenate(([-np.inf], t[:-1]))) >= t
    keep = ~dominated[np.ravel(inverse)][2:]
    out, start = [], 0
    for c, surviving in zip(analysis.classifiers, survivors):
        kept = surviving[keep[start:start + surviving.size]]
        start += surviving.size
        out.append(np.concatenate(([0], kept)).astype(np.int64))
    return out


def _analysis(seed: int, n: int, k: int, decimals: int):
    rng = np.random.default_rng(seed)
    y = rng.random(n) < 0.2
    y[:2] = [True, False]
    cols = {}
    for j in range(k):
        s = rng.normal(size=n) + y * rng.uniform(0.0, 2.0)
        cols[f"m{j}"] = np.round(1 / (1 + np.exp(-s)), decimals)
    cols["copy"] = cols["m0"]  # the same points in two classifiers
    text = pd.DataFrame({"y": y.astype(int), **cols}).to_csv(index=False)
    return analyze(load_predictions(io.BytesIO(text.encode()), label_column="y"))


@pytest.mark.parametrize("seed,n,k,decimals", [(1, 300, 3, 1), (2, 2000, 5, 2), (3, 5000, 8, 6),
                                               (4, 50, 2, 0)])
def test_the_same_candidates_as_the_former_code(seed, n, k, decimals):
    analysis = _analysis(seed, n, k, decimals)
    got = _undominated(analysis)
    for c, small, idx in zip(analysis.classifiers, got.classifiers, _reference(analysis)):
        np.testing.assert_array_equal(small.roc.tp, c.roc.tp[idx])
        np.testing.assert_array_equal(small.roc.fp, c.roc.fp[idx])
        np.testing.assert_array_equal(small.roc.threshold, c.roc.threshold[idx])


def test_counted_points_equal_to_scored_ones_are_kept_alike():
    analysis = _analysis(5, 400, 3, 1)
    c = analysis.classifiers[0]
    # A counted classifier made of the first classifier's points: every point repeated.
    twin = RocCurve(name="twin", tp=c.roc.tp.copy(), fp=c.roc.fp.copy(),
                    threshold=np.full(c.roc.size, np.nan), n_pos=c.roc.n_pos,
                    n_neg=c.roc.n_neg)
    analysis = replace(analysis, classifiers=(*analysis.classifiers, ClassifierSummary(
        roc=twin, hull=c.hull, envelope=c.envelope, operating_range=c.operating_range)))
    got = _undominated(analysis)
    for c, small, idx in zip(analysis.classifiers, got.classifiers, _reference(analysis)):
        np.testing.assert_array_equal(small.roc.tp, c.roc.tp[idx])
        np.testing.assert_array_equal(small.roc.fp, c.roc.fp[idx])


def test_an_analysis_on_two_threads_is_the_same_analysis():
    """:func:`costdash.choice_summary.choice_analysis` sorts on two threads (issue 23)."""
    import io as _io

    from costdash.choice_summary import choice_analysis

    rng = np.random.default_rng(9)
    y = (rng.random(3000) < 0.1).astype(int)
    cols = {f"m{j}": np.round(rng.random(3000) * 0.5 + y * 0.1 * j, 3) for j in range(5)}
    text = pd.DataFrame({"y": y, **cols}).to_csv(index=False)
    dataset = load_predictions(_io.BytesIO(text.encode()), label_column="y")
    for models in (None, ("m3", "m1")):
        one = analyze(dataset, models=models)
        two = choice_analysis(dataset, models=models)
        assert [c.name for c in two.classifiers] == [c.name for c in one.classifiers]
        for a, b in zip(one.classifiers, two.classifiers):
            np.testing.assert_array_equal(a.roc.tp, b.roc.tp)
            np.testing.assert_array_equal(a.roc.fp, b.roc.fp)
            np.testing.assert_array_equal(a.roc.threshold, b.roc.threshold)
            np.testing.assert_array_equal(a.hull.fpr, b.hull.fpr)
        np.testing.assert_array_equal(one.hull.fpr, two.hull.fpr)
        assert repr(one.operating_point) == repr(two.operating_point)  # NaN thresholds
