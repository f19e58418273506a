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


# --- the base, its curves and the per-condition part (issue 23) ------------------------------------

def _tied_dataset(seed: int):
    """Three classifiers of 400 rows with heavy ties (scores on a 0.05 grid), so that many
    ROC points of one classifier are dominated by another's and some coincide."""
    import io

    import numpy as np
    import pandas as pd

    from costdash import load_predictions

    rng = np.random.default_rng(seed)
    y = rng.random(400) < 0.3
    table = {"y": y.astype(int)}
    for k, shift in enumerate((1.5, 1.0, 0.3)):
        s = 1 / (1 + np.exp(-(rng.normal(size=400) + shift * y)))
        table[f"m{k}"] = np.round(s / 0.05) * 0.05
    text = pd.DataFrame(table).to_csv(index=False)
    return load_predictions(io.BytesIO(text.encode()), label_column="y")


@pytest.mark.parametrize("seed", range(6))
def test_robust_choices_among_undominated_candidates_are_the_same(seed):
    """The base keeps only the candidates no other one dominates; over any box where both
    errors cost, the minimax-regret and Bayes picks (ties included) are those of all points."""
    from costdash.choice_summary import _undominated, choice_base
    from costdash.robust import ConditionBox, candidates_of, robust_choice, robust_choice_pc

    base = choice_base(_tied_dataset(seed))
    small = base.candidates
    assert candidates_of(small).fpr.size < candidates_of(base.analysis).fpr.size
    assert _undominated(small).classifiers[0].roc.size == small.classifiers[0].roc.size
    for p, fn, fp in (((0.05, 0.4), (1.0, 10.0), (1.0, 1.0)), ((0.3, 0.3), (2.0, 2.0), (1.0, 5.0)),
                      ((0.01, 0.9), (1.0, 50.0), (0.5, 2.0))):
        cond = OperatingCondition(p[0], fn[0], fp[0])
        box = ConditionBox.around(cond, p, fn, fp)
        assert robust_choice(small, box) == robust_choice(base.analysis, box)
    for beta in ((1.0, 1.0), (2.0, 5.0), (0.5, 0.5)):
        assert robust_choice_pc(small, beta) == robust_choice_pc(base.analysis, beta)


def test_the_thinned_base_answers_from_the_thinned_curves(dataset):
    """A read-only link's base: every ROC curve (the calibrated ones too) at most
    ``max_roc_points``, so every threshold it reports is one of the thinned curve's."""
    from costdash.choice_summary import choice_at, choice_base, choice_curves

    base = choice_base(dataset, calibrate="platt", max_roc_points=30)
    assert all(c.roc.size <= 30 for c in base.analysis.classifiers)
    assert all(r.size <= 30 for r in base.calibrated.values())
    curves = choice_curves(base, max_points=30)
    out = choice_at(base, curves, OperatingCondition(0.2, 3.0, 1.0), sens_p=(0.1, 0.4),
                    pins={"gbm": 0.4321}, max_points=30)
    shown = {c.name: set(c.roc.threshold[1:].tolist()) for c in base.analysis.classifiers}
    for pick in (out["robust"]["minimax_regret"], out["robust"]["bayes"]):
        assert pick["threshold"] is None or pick["threshold"] in shown[pick["classifier"]]
    assert all(len((c["threshold_choice"][m] or {"pc": []})["pc"]) <= 30
               for c in out["classifiers"] for m in c["threshold_choice"])
