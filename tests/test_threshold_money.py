"""Money against threshold and the top-fraction table, against brute force over the rows and
against scikit-learn's curves where they overlap (issue 28, items 1 and 2)."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from sklearn.metrics import precision_recall_curve

from costdash import analyze
from costdash.conditions import OperatingCondition
from costdash.dataset import Dataset, ScoredClassifier
from costdash.errors import ParameterError
from costdash.roc import roc_curve, roc_from_score_counts
from costdash.threshold_money import cost_by_threshold, top_fraction_table


def _rows(seed: int, n: int = 400, ties: bool = True):
    rng = np.random.default_rng(seed)
    y = rng.random(n) < 0.3
    score = rng.normal(size=n) + 1.1 * y
    if ties:
        score = np.round(score, 1)
    return y, score


def _brute_cost(y, score, t, cond: OperatingCondition) -> float:
    flagged = score >= t
    tp, fp = np.sum(flagged & y), np.sum(flagged & ~y)
    fn, tn = np.sum(~flagged & y), np.sum(~flagged & ~y)
    p, n_pos, n_neg = cond.p_pos, y.sum(), (~y).sum()
    return (p * (tp / n_pos * cond.cost_tp + fn / n_pos * cond.cost_fn)
            + (1 - p) * (fp / n_neg * cond.cost_fp + tn / n_neg * cond.cost_tn))


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_every_threshold_costs_what_the_rows_say(seed):
    y, score = _rows(seed)
    cond = OperatingCondition(p_pos=0.05, cost_fn=40.0, cost_fp=2.0, cost_tp=1.0, cost_tn=0.5)
    curve = cost_by_threshold(roc_curve(y, score, name="m"), cond)
    thresholds = curve.threshold[1:]
    assert np.array_equal(thresholds, np.unique(score)[::-1])    # one point per distinct score
    brute = np.array([_brute_cost(y, score, t, cond) for t in thresholds])
    np.testing.assert_allclose(curve.expected_cost[1:], brute, rtol=1e-12, atol=1e-12)
    # flag nothing: every positive missed, every negative passed
    assert curve.expected_cost[0] == pytest.approx(0.05 * 40 + 0.95 * 0.5, rel=1e-12)
    assert curve.at(thresholds[3]) == 4


@pytest.mark.parametrize("seed", [3, 4])
def test_cheapest_threshold_is_what_the_analysis_chooses(seed):
    y, score = _rows(seed, ties=False)
    data = Dataset(source="t", layout="wide", positive_label="1",
                   scored=(ScoredClassifier("m", y, score),))
    cond = OperatingCondition(p_pos=0.2, cost_fn=5.0, cost_fp=1.0)
    curve = cost_by_threshold(data.scored[0], cond)
    op = analyze(data, cond).operating_point
    assert curve.best_expected_cost == pytest.approx(op.expected_cost, rel=1e-12)
    assert curve.expected_cost.min() == curve.best_expected_cost


def test_score_counts_give_what_their_rows_give():
    y, score = _rows(5)
    values, inverse = np.unique(score, return_inverse=True)
    pos = np.bincount(inverse, weights=y).astype(np.int64)
    neg = np.bincount(inverse, weights=~y).astype(np.int64)
    from_counts = roc_from_score_counts(values, pos, neg, name="m")
    cond = OperatingCondition(p_pos=0.3, cost_fn=3.0, cost_fp=1.0)
    a = cost_by_threshold(roc_curve(y, score, name="m"), cond)
    b = cost_by_threshold(from_counts, cond)
    assert np.array_equal(a.expected_cost, b.expected_cost)
    ta, tb = top_fraction_table(roc_curve(y, score), condition=cond), \
        top_fraction_table(from_counts, condition=cond)
    assert np.array_equal(ta.flagged, tb.flagged) and np.array_equal(ta.positives, tb.positives)


def test_top_fraction_table_by_brute_force_and_capacity():
    y, score = _rows(6, n=1000)
    table = top_fraction_table(roc_curve(y, score), condition=OperatingCondition(
        p_pos=0.3, cost_fn=1.0, cost_fp=1.0))
    n = y.size
    for k, f in enumerate(table.fraction):
        # the largest cutoff set of whole ties within the fraction
        candidates = [t for t in np.unique(score) if np.sum(score >= t) <= f * n + 1e-9]
        if candidates:
            t = min(candidates)
            assert table.threshold[k] == t
            assert table.flagged[k] == np.sum(score >= t)
            assert table.positives[k] == np.sum((score >= t) & y)
        else:
            assert table.flagged[k] == 0 and np.isnan(table.threshold[k])
    assert table.flagged[-1] == n and table.recall[-1] == 1.0 and table.lift[-1] == \
        pytest.approx(1.0)
    assert np.all(table.flagged <= np.floor(table.fraction * n + 1e-9))
    assert table.row_for_capacity(0.25) == 1          # deciles 0.1, 0.2 fit; 0.3 does not
    assert table.row_for_capacity(0.0) == -1


def test_cumulative_precision_matches_scikit_learn():
    y, score = _rows(7, ties=False)
    precision, recall, thresholds = precision_recall_curve(y, score)
    table = top_fraction_table(roc_curve(y, score))
    for k in range(table.fraction.size):
        i = np.searchsorted(thresholds, table.threshold[k])
        assert thresholds[i] == table.threshold[k]
        assert table.precision[k] == pytest.approx(precision[i], rel=1e-12)
        assert table.recall[k] == pytest.approx(recall[i], rel=1e-12)


def test_bad_fractions_are_named():
    y, score = _rows(8)
    with pytest.raises(ParameterError, match="increasing numbers in"):
        top_fraction_table(roc_curve(y, score), [0.5, 0.2])
    with pytest.raises(ParameterError, match=r"\(0, 1\]"):
        top_fraction_table(roc_curve(y, score), [0.0, 1.5])


@settings(max_examples=50, deadline=None)
@given(st.lists(st.tuples(st.booleans(), st.integers(0, 6)), min_size=2, max_size=40)
       .filter(lambda rows: 0 < sum(r[0] for r in rows) < len(rows)),
       st.floats(0.01, 0.99), st.floats(0.1, 50), st.floats(0.1, 50))
def test_no_threshold_beats_the_hull_choice(rows, p_pos, cost_fn, cost_fp):
    y = np.array([r[0] for r in rows])
    score = np.array([r[1] for r in rows], dtype=float)
    cond = OperatingCondition(p_pos=p_pos, cost_fn=cost_fn, cost_fp=cost_fp)
    data = Dataset(source="h", layout="wide", positive_label="1",
                   scored=(ScoredClassifier("m", y, score),))
    curve = cost_by_threshold(data.scored[0], cond)
    chosen = analyze(data, cond).operating_point.expected_cost
    assert curve.best_expected_cost == pytest.approx(chosen, rel=1e-9, abs=1e-12)
    assert np.all(curve.expected_cost >= chosen - 1e-9 * max(1.0, abs(chosen)))
