"""Robust choices over a box of conditions (costdash.robust, ``costdash decide --*-range``): the
minimax-regret choice against brute force over every (classifier, threshold) on a grid of the
box that includes its edges and every envelope breakpoint; the Bayes choice against exact
integration; the PC(+)-only variant against a grid and quadrature."""

from __future__ import annotations

import json
from fractions import Fraction

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


@pytest.mark.slow
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


@pytest.mark.slow
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


# --- the expected saving of switching, against independent exact integrals ---------------------

def _points(analysis):
    """The ROC points that can cost least, as exact fractions (counts over class sizes): the
    upper-left convex hull of every point of every classifier and the trivial ones, by the
    monotone chain in exact arithmetic (not costdash's hull). A cost linear in (F, T) is least
    at one of them, and only their ties can be kinks of the least cost."""
    out = {(Fraction(0), Fraction(0)), (Fraction(1), Fraction(1))}
    for c in analysis.classifiers:
        roc = c.roc
        out |= {(Fraction(int(f), roc.n_neg), Fraction(int(t), roc.n_pos))
                for f, t in zip(roc.fp, roc.tp)}
    hull: list[tuple[Fraction, Fraction]] = []
    for pt in sorted(out, key=lambda q: (q[0], -q[1])):
        while len(hull) >= 2 and ((hull[-1][0] - hull[-2][0]) * (pt[1] - hull[-2][1])
                                  - (hull[-1][1] - hull[-2][1]) * (pt[0] - hull[-2][0])) >= 0:
            hull.pop()
        hull.append(pt)
    return hull


def _ties(points, value_of_pair):
    """Where two points cost the same, for each pair (value_of_pair(ΔF, ΔT), None to skip)."""
    found = set()
    for i, (f1, t1) in enumerate(points):
        for f2, t2 in points[i + 1:]:
            x = value_of_pair(f2 - f1, t2 - t1)
            if x is not None:
                found.add(x)
    return found


def exact_saving_one_range(analysis, box: ConditionBox, fpr: float, tpr: float) -> Fraction:
    """E[cost of (fpr, tpr)] - E[least cost over all points] per case, in exact fractions, for
    a box where one of p(+), C(-|+), C(+|-) is a range: the least cost is then piecewise linear
    in it with kinks where two points tie, so the trapezoid rule between the kinks is exact."""
    ranges = [tuple(Fraction(v) for v in r) for r in (box.p_pos, box.cost_fn, box.cost_fp)]
    (which,) = [k for k, (lo, hi) in enumerate(ranges) if lo < hi]
    tp_cost, tn_cost = Fraction(box.cost_tp), Fraction(box.cost_tn)
    points = _points(analysis)

    def cost(x, f, t):
        p, fn, fp = (x if k == which else ranges[k][0] for k in range(3))
        return p * (fn - tp_cost) * (1 - t) + (1 - p) * (fp - tn_cost) * f

    def least(x):
        return min(cost(x, f, t) for f, t in points)

    lo, hi = ranges[which]
    # cost is linear in x: a tie between two points is where the difference's line crosses 0
    def tie(d_f, d_t, lo=lo, hi=hi):
        g_lo = cost(lo, d_f, d_t) - cost(lo, 0, 0)
        g_hi = cost(hi, d_f, d_t) - cost(hi, 0, 0)
        if g_lo == g_hi:
            return None
        x = lo + (hi - lo) * g_lo / (g_lo - g_hi)
        return x if lo < x < hi else None

    knots = sorted({lo, hi} | _ties(points, tie))
    mean_least = sum((least(a) + least(b)) / 2 * (b - a)
                     for a, b in zip(knots[:-1], knots[1:])) / (hi - lo)
    mean_fixed = cost((lo + hi) / 2, Fraction(fpr), Fraction(tpr))   # linear in x
    return mean_fixed - mean_least


def quad_saving(analysis, box: ConditionBox, fpr: float, tpr: float) -> float:
    """The same over a box of three ranges: the least cost integrated exactly in C(-|+)
    (trapezoids between the ties), then over C(+|-) between the values where a tie crosses
    C(-|+)'s ends, where that integral is a quadratic polynomial (3-point Gauss-Legendre is
    exact), then by scipy's quad over p(+) between the values where a tie passes a corner of
    the box, so that every piece quad sees is smooth (rational)."""
    pts = _points(analysis)
    f = np.array([float(x) for x, _ in pts])
    t = np.array([float(y) for _, y in pts])
    (p0, p1), (a0, a1), (b0, b1) = box.p_pos, box.cost_fn, box.cost_fp
    a0, a1, b0, b1 = a0 - box.cost_tp, a1 - box.cost_tp, b0 - box.cost_tn, b1 - box.cost_tn
    i, j = np.triu_indices(f.size, 1)
    d_f, d_t = f[j] - f[i], t[j] - t[i]
    pairs = (d_f > 0) & (d_t > 0)
    d_f, d_t = d_f[pairs], d_t[pairs]

    def over_a(p, b):
        knots = (1 - p) * b * d_f / (p * d_t)
        knots = np.unique(np.r_[a0, a1, knots[(knots > a0) & (knots < a1)]])
        least = np.min(p * np.outer(knots, 1 - t) + (1 - p) * b * f, axis=1)
        return np.sum((least[1:] + least[:-1]) / 2 * np.diff(knots)) / (a1 - a0)

    nodes, weights = np.polynomial.legendre.leggauss(3)

    def over_b(p):
        cuts = np.r_[[p * a * d_t / ((1 - p) * d_f) for a in (a0, a1)]].ravel()
        cuts = np.unique(np.r_[b0, b1, cuts[(cuts > b0) & (cuts < b1)]])
        total = 0.0
        for lo, hi in zip(cuts[:-1], cuts[1:]):
            bs = (lo + hi) / 2 + (hi - lo) / 2 * nodes
            total += (hi - lo) / 2 * sum(w * over_a(p, b) for w, b in zip(weights, bs))
        return total / (b1 - b0)

    cuts = np.r_[[b * d_f / (a * d_t + b * d_f) for a in (a0, a1) for b in (b0, b1)]].ravel()
    cuts = cuts[(cuts > p0) & (cuts < p1)]
    mean_least = integrate.quad(over_b, p0, p1, points=cuts if cuts.size else None,
                                limit=cuts.size + 100, epsabs=0, epsrel=1e-12)[0] / (p1 - p0)
    mean_fixed = ((p0 + p1) / 2 * (a0 + a1) / 2 * (1 - tpr)
                  + (1 - (p0 + p1) / 2) * (b0 + b1) / 2 * fpr)
    return mean_fixed - mean_least


def test_switching_saving_of_the_issue_is_exact():
    """Issue 24: p(+) 0.15, C(-|+) in [2, 30], C(+|-) 1, C(+|+) -1 (the Gauss-Legendre rule was
    0.15% off here, 6.152000 where the exact saving is 6.142682 per 1,000 cases)."""
    analysis = analyze(load_demo("breast-cancer"))
    box = ConditionBox((0.15, 0.15), (2.0, 30.0), (1.0, 1.0), cost_tp=-1.0)
    result = robust_choice(analysis, box, volume=1000.0)
    exact = exact_saving_one_range(analysis, box, result.bayes.fpr, result.bayes.tpr) * 1000
    assert type(result.switching_saving) is float
    assert result.switching_saving == pytest.approx(float(exact), rel=1e-13)
    assert float(exact) == pytest.approx(6.142682, abs=5e-7)


@settings(max_examples=60, deadline=None)
@given(shared_label_classifiers(max_classifiers=3, max_n=25), st.integers(0, 2),
       st.floats(0.02, 0.9), st.floats(0.05, 0.97), st.floats(0.5, 20), st.floats(0.5, 20),
       st.floats(1.01, 50), st.sampled_from([(0.0, 0.0), (-1.0, 0.25)]))
def test_switching_saving_over_one_range_against_exact_fractions(data, which, p, p_hi, fn, fp,
                                                                  stretch, correct):
    y, scores = data
    analysis = analyze(dataset_of(y, scores))
    ranges = [(p, p), (fn, fn), (fp, fp)]
    lo = ranges[which][0]
    ranges[which] = (lo, max(p_hi, lo * 1.01) if which == 0 else lo * stretch)
    box = ConditionBox(*ranges, cost_tp=correct[0], cost_tn=correct[1])
    result = robust_choice(analysis, box)
    exact = exact_saving_one_range(analysis, box, result.bayes.fpr, result.bayes.tpr)
    scale = box.centre.cost_scale   # the saving can be 0: compare on the costs' scale
    assert result.switching_saving == pytest.approx(float(exact), rel=1e-12, abs=1e-13 * scale)


@pytest.mark.slow
@pytest.mark.parametrize("box", [
    ConditionBox((0.05, 0.4), (5.0, 50.0), (1.0, 2.0)),
    ConditionBox((0.2, 0.9), (1.0, 3.0), (0.5, 4.0), cost_tp=-0.5, cost_tn=0.25),
    ConditionBox((0.01, 0.03), (2.0, 2.0), (1.0, 40.0)),   # two ranges
])
def test_switching_saving_over_the_box_against_nested_quadrature(box):
    # 80 rows, three overlapping classifiers with ties: a hull of 9 vertices, 2-6 of them
    # optimal somewhere in each box.
    rng = np.random.default_rng(5)
    y = rng.random(80) < 0.4
    analysis = analyze(dataset_of(y, [np.round(rng.normal(size=80) + k * y, 2)
                                      for k in (0.8, 1.2, 1.6)]))
    result = robust_choice(analysis, box, volume=1000.0)
    if box.cost_fn[0] == box.cost_fn[1]:   # the oracle integrates C(-|+) over a range
        box = ConditionBox(box.p_pos, (box.cost_fn[0], box.cost_fn[0] * (1 + 1e-12)),
                           box.cost_fp, box.cost_tp, box.cost_tn)
    oracle = quad_saving(analysis, box, result.bayes.fpr, result.bayes.tpr) * 1000.0
    assert result.worth_switching and len(result.optimal_choices) > 1
    # On the costs' scale: the third box's saving is 1e-6 of its expected cost.
    assert result.switching_saving == pytest.approx(
        oracle, rel=1e-10, abs=1e-12 * box.centre.cost_scale * 1000.0)


@pytest.mark.slow
def test_switching_saving_and_policy_on_the_demo():
    analysis = analyze(load_demo("breast-cancer"))
    box = ConditionBox((0.05, 0.4), (5.0, 50.0), (1.0, 2.0))
    result = robust_choice(analysis, box, volume=1000.0)
    oracle = quad_saving(analysis, box, result.bayes.fpr, result.bayes.tpr) * 1000.0
    assert result.switching_saving == pytest.approx(oracle, rel=1e-10)
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


@pytest.mark.slow
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
