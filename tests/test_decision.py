"""costdash.decision and ``costdash decide``: the policy table is the envelope, exactly."""

from __future__ import annotations

import json
from fractions import Fraction

import numpy as np
import pytest

from costdash import OperatingCondition, analyze
from costdash.cli import main
from costdash.decision import decide, decision_to_dict, sklearn_snippet
from costdash.demo import DEMOS, load_demo

DECISION_KEYS = {"classifier", "threshold", "p_pos", "cost_fn", "cost_fp", "cost_tp", "cost_tn",
                 "pc", "normalized_cost", "expected_cost", "valid_pc", "valid_p_pos"}


def exact_costs(analysis, pc: Fraction) -> list[Fraction]:
    """Each hull vertex's normalized cost at ``pc`` in exact arithmetic, from integer counts."""
    d = analysis.dataset
    out = []
    for f, t in zip(analysis.hull.fpr, analysis.hull.tpr):
        fp, tp = round(f * d.n_neg), round(t * d.n_pos)
        out.append((1 - Fraction(tp, d.n_pos)) * pc + Fraction(fp, d.n_neg) * (1 - pc))
    return out


@pytest.mark.parametrize("demo", list(DEMOS))
def test_policy_pieces_name_an_optimal_choice_at_every_pc(demo):
    analysis = analyze(load_demo(demo))
    policy = decide(analysis).policy
    assert policy[0].pc_lo == 0.0 and policy[-1].pc_hi == 1.0
    assert all(a.pc_hi == b.pc_lo for a, b in zip(policy, policy[1:]))
    index = {(c, f, t): k for k, (c, f, t) in enumerate(
        zip(analysis.hull.classifier, analysis.hull.fpr, analysis.hull.tpr))}
    rng = np.random.default_rng(3)
    for x in rng.random(1000):
        piece = next(p for p in policy if p.pc_lo <= x <= p.pc_hi)
        costs = exact_costs(analysis, Fraction(float(x)))
        assert costs[index[(piece.classifier, piece.fpr, piece.tpr)]] == min(costs)


def test_decision_holds_where_it_says():
    analysis = analyze(load_demo("breast-cancer"), OperatingCondition(0.02, 30.0, 1.5))
    d = decide(analysis)
    assert d.classifier == analysis.operating_point.vertex.classifier
    assert d.valid_pc[0] <= d.pc <= d.valid_pc[1]
    for pc, p in zip(d.valid_pc, d.valid_p_pos):
        assert OperatingCondition(p, 30.0, 1.5).pc == pytest.approx(pc, rel=1e-12)
    # Just inside the interval the same choice; just outside another one.
    lo, hi = d.valid_pc
    for x, same in ((lo + 1e-6, True), (hi - 1e-6, True), (hi + 1e-6, False)):
        chosen = analyze(load_demo("breast-cancer"), OperatingCondition.from_pc(x))
        assert (chosen.operating_point.vertex.threshold == d.threshold) is same


def test_benefits_move_the_money_not_the_choice():
    data = load_demo("breast-cancer")
    plain = decide(analyze(data, OperatingCondition(0.1, 25.0, 2.0)))
    gains = decide(analyze(data, OperatingCondition(0.1, 15.0, 2.0, cost_tp=-10.0)))
    assert (gains.classifier, gains.threshold, gains.valid_pc) == \
        (plain.classifier, plain.threshold, plain.valid_pc)
    assert gains.expected_cost == pytest.approx(plain.expected_cost + 0.1 * -10.0, rel=1e-12)


def test_decide_json_contract(capsys):
    path = DEMOS["breast-cancer"].path
    assert main(["decide", str(path), "--p-pos", "0.02", "--cost-fn", "30", "--cost-fp", "1.5",
                 "--cost-tp=-5", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert set(out) == {"decision", "policy"}
    assert set(out["decision"]) == DECISION_KEYS
    assert out["decision"]["cost_tp"] == -5.0
    assert [set(p) for p in out["policy"]] == [{"pc_lo", "pc_hi", "classifier", "threshold"}] \
        * len(out["policy"])
    expected = decision_to_dict(decide(analyze(
        load_demo("breast-cancer"), OperatingCondition(0.02, 30.0, 1.5, cost_tp=-5.0))))
    assert out == json.loads(json.dumps(expected))


def test_decide_refuses_a_gain_dressed_as_a_cost(capsys):
    path = DEMOS["breast-cancer"].path
    assert main(["decide", str(path), "--cost-fn", "3", "--cost-tp", "5"]) == 2
    assert "C(+|+) must be below C(−|+)" in capsys.readouterr().err


def test_sklearn_fixed_threshold_classifier_makes_the_same_decision():
    import sklearn
    from sklearn.base import BaseEstimator, ClassifierMixin
    from sklearn.model_selection import FixedThresholdClassifier

    class Scores(ClassifierMixin, BaseEstimator):
        """Returns the predictions file's score (column 0) as the positive class's probability."""

        def fit(self, X, y):
            self.classes_ = np.array([0, 1])
            return self

        def predict_proba(self, X):
            s = np.asarray(X)[:, 0]
            return np.column_stack([1 - s, s])

    data = load_demo("breast-cancer")
    d = decide(analyze(data, OperatingCondition(0.02, 30.0, 1.5)))
    scores = data.classifier(d.classifier).score
    y = data.classifier(d.classifier).y_true.astype(int)
    model = FixedThresholdClassifier(Scores(), threshold=d.threshold,
                                     response_method="predict_proba").fit(scores[:, None], y)
    flagged = model.predict(scores[:, None]).astype(bool)
    point = next(p for p in d.policy if p.threshold == d.threshold)
    assert flagged[y == 1].mean() == pytest.approx(point.tpr, abs=1e-12)
    assert flagged[y == 0].mean() == pytest.approx(point.fpr, abs=1e-12)
    assert sklearn.__version__ and "FixedThresholdClassifier" in sklearn_snippet(d)
