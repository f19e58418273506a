"""costdash.calibrated_choice: the threshold probability's cost before and after calibration,
against counting case by case and scikit-learn's isotonic regression."""

from __future__ import annotations

import math

import numpy as np
import pytest
from sklearn.isotonic import IsotonicRegression

from costdash.calibrated_choice import choose_after_calibration
from costdash.calibration import calibrate_classifier, default_folds
from costdash.conditions import OperatingCondition
from costdash.dataset import ScoredClassifier
from costdash.roc import roc_curve


def _cost(y, flag, c: OperatingCondition) -> float:
    """Expected cost per case of flagging ``flag``, counted."""
    tpr = (flag & y).sum() / y.sum()
    fpr = (flag & ~y).sum() / (~y).sum()
    return (c.p_pos * (tpr * c.cost_tp + (1 - tpr) * c.cost_fn)
            + (1 - c.p_pos) * (fpr * c.cost_fp + (1 - fpr) * c.cost_tn))


def _tau(c: OperatingCondition, prevalence: float) -> float:
    """Bayes: flag when the posterior odds at p(+) exceed the cost ratio of the differences."""
    odds = ((c.cost_fp - c.cost_tn) / (c.cost_fn - c.cost_tp)
            * (1 - c.p_pos) / c.p_pos * prevalence / (1 - prevalence))
    return odds / (1 + odds)


@pytest.mark.parametrize("seed", range(5))
@pytest.mark.parametrize("cond", [OperatingCondition(0.1, 20.0, 1.0),
                                  OperatingCondition(0.5, 1.0, 3.0, cost_tp=-1.0, cost_tn=0.5),
                                  OperatingCondition(0.02, 50.0, 1.0)])
def test_rows_are_the_counted_cost_at_tau_and_the_cheapest_threshold(seed, cond):
    rng = np.random.default_rng(seed)
    y = rng.random(400) < 0.25
    score = np.round(1 / (1 + np.exp(-(rng.normal(size=400) + 1.5 * y - 1))), 2)   # ties
    roc = roc_curve(y, score, name="m")
    out = choose_after_calibration(roc, {}, cond)
    tau = _tau(cond, y.mean())
    assert out.tau == pytest.approx(tau, rel=1e-12)
    assert out.row("scores").expected_cost == pytest.approx(_cost(y, score >= tau, cond),
                                                            rel=1e-12, abs=1e-12)
    every = [_cost(y, score >= t, cond) for t in np.r_[np.inf, np.unique(score)]]
    assert out.best.expected_cost == pytest.approx(min(every), rel=1e-12, abs=1e-12)
    assert out.regret("scores") >= -1e-12
    assert out.regret("best") == 0.0


def test_calibrated_row_against_scikit_learn_isotonic_on_folds():
    rng = np.random.default_rng(7)
    n = 2000
    truth = rng.random(n)
    y = rng.random(n) < truth
    score = np.round(truth ** 4, 3)         # far below the true probabilities, with ties
    cond = OperatingCondition(float(y.mean()), 1.0, 1.0)
    clf = ScoredClassifier(name="m", y_true=y, score=score)
    iso = calibrate_classifier(clf, "isotonic")
    out = choose_after_calibration(roc_curve(y, score, name="m"), {"isotonic": iso,
                                                                   "platt": "no fit"}, cond)
    fold = default_folds(y)
    calibrated = np.empty(n)
    for k in np.unique(fold):
        held = fold == k
        fit = IsotonicRegression(out_of_bounds="clip").fit(score[~held], y[~held])
        calibrated[held] = fit.predict(score[held])
    tau = _tau(cond, y.mean())
    assert out.row("isotonic").expected_cost == pytest.approx(
        _cost(y, calibrated >= tau, cond), rel=1e-12)
    # The scores are far below the truth: calibrating them wins money back at tau.
    assert out.row("isotonic").expected_cost < out.row("scores").expected_cost
    assert out.row("platt").refused == "no fit" and math.isnan(out.row("platt").expected_cost)


def test_tau_is_one_half_at_equal_costs_and_the_data_prevalence():
    y = np.array([0, 0, 1, 1, 0, 1], dtype=bool)
    roc = roc_curve(y, np.array([0.1, 0.4, 0.35, 0.8, 0.6, 0.9]))
    out = choose_after_calibration(roc, {}, OperatingCondition(0.5, 1.0, 1.0))
    assert out.tau == pytest.approx(0.5)
    assert out.row("scores").threshold == 0.6


def test_ranking_scores_have_no_threshold_probability():
    y = np.array([0, 1, 0, 1], dtype=bool)
    out = choose_after_calibration(roc_curve(y, np.array([-2.0, 1.5, 0.3, 3.0])), {},
                                   OperatingCondition(0.5, 1.0, 1.0))
    assert "not within [0, 1]" in out.row("scores").refused
    assert out.best.threshold == 1.5 and out.best.refused is None
