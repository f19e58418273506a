"""Robust choices over a box of conditions (costdash.robust, ``costdash decide --*-range``): the
minimax-regret choice against brute force over every (classifier, threshold) on a grid of the
box that includes its edges and every envelope breakpoint; the Bayes choice against exact
integration; the PC(+)-only variant against a grid and quadrature."""

from __future__ import annotations

import json

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import integrate
from scipy.stats import beta as beta_dist

from costdash.analysis import analyze
from costdash.cli import main
from costdash.conditions import OperatingCondition
from costdash.costspace import lower_envelope
from costdash.dataset import Dataset, ScoredClassifier
from costdash.demo import DEMOS, load_demo
from costdash.errors import ParameterError
from costdash.robust import (
    ConditionBox,
    candidates_of,
    robust_choice,
    robust_choice_pc,
    robust_to_dict,
)
from tests.strategies import brute_force_roc, shared_label_classifiers


def dataset_of(y, scores) -> Dataset:
    return Dataset(source="test", layout="wide", positive_label="1",
                   scored=tuple(ScoredClassifier(f"m{i}", np.asarray(y, bool),
                                                 np.asarray(s, float))
                                for i, s in enumerate(scores)))


def brute_candidates(y, scores):
    """(name, threshold, FPR, TPR) of every threshold of every classifier, counted by brute
    force, with the two trivial choices."""
    n_pos = int(np.sum(y))
    n_neg = y.size - n_pos
    out = [("all-negative", None, 0.0, 0.0), ("all-positive", None, 1.0, 1.0)]
    for i, s in enumerate(scores):
        tp, fp, thr = brute_force_roc(y, s)
        out += [(f"m{i}", float(t), f / n_neg, p / n_pos)
                for p, f, t in zip(tp[1:], fp[1:], thr[1:])]
    return out


def grid_of_box(box: ConditionBox, hull_pc: np.ndarray, k: int = 5):
    """Conditions on a grid of the box: k values per range (edges included) and, for every
    pair of costs on the grid, each p(+) at which PC(+) meets an envelope breakpoint."""
    ps = np.linspace(*box.p_pos, k)
    fns = np.linspace(*box.cost_fn, k)
    fps = np.linspace(*box.cost_fp, k)
    out = []
    for fn in fns:
        for fp in fps:
            a, b = fn - box.cost_tp, fp - box.cost_tn
            # PC(+) = pa / (pa + (1 - p)b) = x  <=>  p = xb / (xb + (1 - x)a)
            extra = [x * b / (x * b + (1 - x) * a) for x in hull_pc if 0 < x < 1]
            for p in np.r_[ps, [p for p in extra if box.p_pos[0] <= p <= box.p_pos[1]]]:
                out.append((p, fn, fp))
    return out


def brute_regret(cands, grid, cost_tp=0.0, cost_tn=0.0):
    """Regret per case of each candidate at each grid condition, against the best candidate
    there (every threshold of every classifier, no hull)."""
    f = np.array([c[2] for c in cands])
    t = np.array([c[3] for c in cands])
    cols = []
    for p, fn, fp in grid:
        cost = p * (1 - t) * (fn - cost_tp) + (1 - p) * f * (fp - cost_tn)
        cols.append(cost - cost.min())
    return np.array(cols).T


@st.composite
def boxes(draw):
    p_lo = draw(st.floats(0.02, 0.9))
    p_hi = draw(st.floats(p_lo, 0.98))
    fn_lo = draw(st.floats(0.5, 20))
    fn_hi = draw(st.floats(fn_lo, 60))
    fp_lo = draw(st.floats(0.5, 20))
    fp_hi = draw(st.floats(fp_lo, 60))
    return ConditionBox((p_lo, p_hi), (fn_lo, fn_hi), (fp_lo, fp_hi))


@settings(max_examples=60, deadline=None)
@given(shared_label_classifiers(max_classifiers=3, max_n=25), boxes(),
       st.sampled_from([1.0, 250.0]))
def test_minimax_regret_against_brute_force_on_a_grid(data, box, volume):
    y, scores = data
    analysis = analyze(dataset_of(y, scores))
    result = robust_choice(analysis, box, volume=volume)
    cands = brute_candidates(y, scores)
    grid = grid_of_box(box, lower_envelope(analysis.hull).pc)
    worst = brute_regret(cands, grid).max(axis=1) * volume
    best = worst.min()
    # The same minimax value (the corners, which are on the grid, are where the worst case is).
    assert result.minimax_regret.value == pytest.approx(best, rel=1e-9, abs=1e-12)
    # and the reported choice attains it on the grid
    mm = result.minimax_regret
    chosen = [i for i, c in enumerate(cands) if (c[2], c[3]) == (mm.fpr, mm.tpr)]
    assert chosen and min(worst[i] for i in chosen) == pytest.approx(best, rel=1e-9, abs=1e-12)
    # The named classifier and threshold realise that ROC point.
    if mm.threshold is not None:
        flagged = scores[int(mm.classifier[1:])] >= mm.threshold
        assert (np.sum(flagged & ~y) / np.sum(~y), np.sum(flagged & y) / np.sum(y)) == \
            (mm.fpr, mm.tpr)
    else:
        assert mm.classifier in ("all-negative", "all-positive")
    # Regret is never worse anywhere on the grid than at the box's corners (convexity).
    corners = [(c.p_pos, c.cost_fn, c.cost_fp) for c in box.corner_conditions()]
    at_corners = brute_regret(cands, corners).max(axis=1) * volume
    np.testing.assert_allclose(worst, at_corners, rtol=1e-9, atol=1e-12)


@settings(max_examples=60, deadline=None)
@given(shared_label_classifiers(max_classifiers=3, max_n=25), boxes())
def test_bayes_choice_is_the_least_expected_cost_over_the_box(data, box):
    y, scores = data
    result = robust_choice(analyze(dataset_of(y, scores)), box, volume=10.0)
    cands = brute_candidates(y, scores)
    f = np.array([c[2] for c in cands])
    t = np.array([c[3] for c in cands])
    # The expected cost is multilinear in (p, C(-|+), C(+|-)): 2-point Gauss-Legendre per range
    # is exact for the uniform box.
    x, w = np.polynomial.legendre.leggauss(2)
    expected = np.zeros(len(cands))
    for (p, wp) in zip(*[(np.mean(box.p_pos) + np.ptp(box.p_pos) / 2 * x), w / 2]):
        for (fn, wfn) in zip(*[(np.mean(box.cost_fn) + np.ptp(box.cost_fn) / 2 * x), w / 2]):
            for (fp, wfp) in zip(*[(np.mean(box.cost_fp) + np.ptp(box.cost_fp) / 2 * x), w / 2]):
                expected += wp * wfn * wfp * (p * (1 - t) * fn + (1 - p) * f * fp)
    assert result.bayes.value == pytest.approx(expected.min() * 10.0, rel=1e-12)
    assert result.bayes_max_regret >= result.minimax_regret.value - 1e-9


def test_switching_saving_and_policy_on_the_demo():
    analysis = analyze(load_demo("breast-cancer"))
    box = ConditionBox((0.05, 0.4), (5.0, 50.0), (1.0, 2.0))
    result = robust_choice(analysis, box, volume=1000.0)
    # Expected saving of switching against a fine midpoint rule over the box.
    m = 80
    p = box.p_pos[0] + (np.arange(m) + 0.5) / m * np.ptp(box.p_pos)
    fn = box.cost_fn[0] + (np.arange(m) + 0.5) / m * np.ptp(box.cost_fn)
    fp = box.cost_fp[0] + (np.arange(m) + 0.5) / m * np.ptp(box.cost_fp)
    P, FN, FP = np.meshgrid(p, fn, fp, indexing="ij")
    hull = analysis.hull
    f, t = hull.fpr[:, None], hull.tpr[:, None]
    best = np.min(P.ravel() * FN.ravel() * (1 - t) + (1 - P.ravel()) * FP.ravel() * f, axis=0)
    b = result.bayes
    bayes = P * FN * (1 - b.tpr) + (1 - P) * FP * b.fpr
    saving = (bayes.mean() - best.mean()) * 1000.0
    assert result.switching_saving == pytest.approx(saving, rel=2e-3)
    assert result.worth_switching and len(result.optimal_choices) > 1
    # A tolerance above the worst-case regret: one fixed choice is enough.
    relaxed = robust_choice(analysis, box, volume=1000.0,
                            tolerance=result.minimax_regret.value * 1.01)
    assert not relaxed.worth_switching
    # A box inside one policy piece: the fixed choice is optimal everywhere, no regret.
    d = analyze(load_demo("breast-cancer"), OperatingCondition(0.3, 1.0, 1.0))
    v = d.operating_point.vertex
    tight = robust_choice(d, ConditionBox((0.3, 0.3 + 1e-6), (1.0, 1.0), (1.0, 1.0)))
    assert tight.minimax_regret.value == pytest.approx(0.0, abs=1e-9)
    assert (tight.minimax_regret.fpr, tight.minimax_regret.tpr) == (v.fpr, v.tpr)
    assert not tight.worth_switching


def test_costs_of_correct_decisions_shift_money_not_regret():
    analysis = analyze(load_demo("breast-cancer"))
    plain = robust_choice(analysis, ConditionBox((0.1, 0.3), (20.0, 40.0), (1.0, 3.0)))
    gains = robust_choice(analysis, ConditionBox((0.1, 0.3), (10.0, 30.0), (1.0, 3.0),
                                                 cost_tp=-10.0))
    assert gains.minimax_regret == plain.minimax_regret
    assert gains.bayes.value == pytest.approx(plain.bayes.value + 0.2 * -10.0)


@pytest.mark.parametrize("a,b", [(2.0, 5.0), (1.0, 1.0), (0.7, 0.9)])
def test_pc_only_choices_against_a_grid_and_quadrature(a, b):
    analysis = analyze(load_demo("rare-digit"))
    result = robust_choice_pc(analysis, (a, b))
    cands = candidates_of(analysis)
    lo, hi = result.pc_range
    assert lo == pytest.approx(beta_dist.ppf(0.025, a, b))
    env = lower_envelope(analysis.hull)
    xs = np.union1d(np.linspace(lo, hi, 201), env.pc[(env.pc >= lo) & (env.pc <= hi)])
    ne = np.outer(1 - cands.tpr, xs) + np.outer(cands.fpr, 1 - xs)
    worst = (ne - env(xs)[None, :]).max(axis=1)
    assert result.minimax_regret.value == pytest.approx(worst.min(), abs=1e-12)
    i = int(np.argmin(worst))
    assert worst[i] == pytest.approx(result.minimax_regret.value, abs=1e-12)
    expected = [integrate.quad(lambda x: ((1 - t) * x + f * (1 - x)) * beta_dist.pdf(x, a, b),
                               0, 1)[0] for f, t in zip(cands.fpr[::50], cands.tpr[::50])]
    assert result.bayes.value <= min(expected) + 1e-9


def test_bad_boxes_are_refused():
    with pytest.raises(ParameterError, match="range of p"):
        ConditionBox((0.4, 0.1), (1, 1), (1, 1))
    with pytest.raises(ParameterError, match="strictly between 0 and 1"):
        ConditionBox((0.1, 1.0), (1, 1), (1, 1))
    with pytest.raises(ParameterError):
        ConditionBox((0.1, 0.2), (0.0, 1.0), (1, 1))


def test_decide_cli_robust(capsys):
    path = DEMOS["breast-cancer"].path
    argv = ["decide", str(path), "--p-pos", "0.2", "--cost-fn", "10", "--p-pos-range", "0.05",
            "0.4", "--cost-fn-range", "5", "50", "--volume", "500"]
    assert main([*argv, "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert set(out) == {"decision", "policy", "robust"}
    robust = out["robust"]
    assert {"classifier", "threshold", "max_regret"} <= set(robust["minimax_regret"])
    assert {"classifier", "threshold", "expected_cost"} <= set(robust["bayes"])
    analysis = analyze(load_demo("breast-cancer"), OperatingCondition(0.2, 10.0, 1.0))
    box = ConditionBox((0.05, 0.4), (5.0, 50.0), (1.0, 1.0))
    expected = robust_to_dict(robust_choice(analysis, box, volume=500.0))
    assert robust == json.loads(json.dumps(expected))
    assert robust["box"]["cost_fp"] == [1.0, 1.0]  # not given: the condition's value
    assert main(argv) == 0
    text = capsys.readouterr().out
    line = next(l for l in text.splitlines() if l.startswith("robust: "))
    short = json.loads(line[len("robust: "):])
    assert short["minimax_regret"] == {k: robust["minimax_regret"][k]
                                       for k in ("classifier", "threshold", "max_regret")}
    assert main(["decide", str(path), "--cost-fp-range", "3", "1"]) == 2
