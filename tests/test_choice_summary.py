"""``costdash.choice_summary``: the three parts of the Threshold choice page from the core, and
the reuse of their condition-free curves under other conditions giving the same answer."""

from __future__ import annotations

import json

import pytest

from costdash import OperatingCondition, analyze
from costdash.choice_summary import choice_summary, condition_free, threshold_probability
from costdash.demo import load_demo
from costdash.errors import ParameterError


@pytest.fixture(scope="module")
def dataset():
    return load_demo("breast-cancer")


@pytest.mark.parametrize("calibrate", [None, "isotonic"])
@pytest.mark.parametrize("beta", [None, (2.0, 3.0)])
def test_reused_curves_give_the_same_summary(dataset, calibrate, beta):
    before = analyze(dataset, OperatingCondition(0.3, 2.0, 1.0))
    curves = condition_free(choice_summary(before, beta=beta, calibrate=calibrate,
                                           max_points=2000))
    assert all("fixed" not in c["threshold_choice"] for c in curves["classifiers"])
    assert "current" not in curves["decision_curves"]
    now = analyze(dataset, OperatingCondition(0.1, 20.0, 1.0))
    for options in ({}, {"pins": {"gbm": 0.5}},
                    {"sens_p": (0.05, 0.2), "sens_fn": (10.0, 40.0), "volume": 500.0}):
        direct = choice_summary(now, beta=beta, calibrate=calibrate, max_points=2000, **options)
        reused = choice_summary(now, beta=beta, calibrate=calibrate, max_points=2000,
                                curves=json.loads(json.dumps(curves)), **options)
        assert reused == direct
        # The fixed curve moved with the conditions (the curves came from other ones).
        gbm = {c["name"]: c for c in reused["classifiers"]}["gbm"]
        assert gbm["fixed_from"] == ("pin" if "pins" in options else "conditions")


def test_reused_curves_must_hold_the_classifiers(dataset):
    few = analyze(dataset, OperatingCondition(0.3, 2.0, 1.0), models=["gbm"])
    curves = condition_free(choice_summary(few))
    with pytest.raises(ParameterError, match="logreg"):
        choice_summary(analyze(dataset, OperatingCondition(0.3, 2.0, 1.0)), curves=curves)


def test_threshold_probability_is_the_cost_proportion():
    assert threshold_probability(OperatingCondition(0.2, 4.0, 1.0)) == pytest.approx(0.2)
    # With costs of the correct decisions, their differences: (3 - 1) / ((4 - (-2)) + 2).
    assert threshold_probability(OperatingCondition(0.2, 4.0, 3.0, -2.0, 1.0)) == \
        pytest.approx(2.0 / 8.0)
