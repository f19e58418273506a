"""Threshold-choice curves (costdash.choice_curves): the papers' identities on random data,
checked in exact arithmetic by oracles that share no code with costdash, then the floats against
those oracles.

Normalisation (docs/threshold-choice.md): c = C(+|-)/(C(-|+) + C(+|-)) is the cost proportion,
the loss at c is Q(c) = 2[c(1 - π)FPR + (1 - c)π(1 - TPR)] (costs summing to 2, the papers'
b = 2) and ``cost_proportion_loss`` is ∫₀¹ Q dc with c uniform; ``expected_loss`` is the mean
normalized expected cost with PC(+) uniform on [0, 1].
"""

from __future__ import annotations

import json
from fractions import Fraction

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import integrate
from scipy.stats import beta as beta_dist
from sklearn.isotonic import IsotonicRegression

from costdash.choice_curves import (
    brier_score,
    fixed_threshold_curve,
    optimal_curve,
    rate_driven_curve,
    score_driven_curve,
    threshold_choice,
)
from costdash.cli import main
from costdash.costspace import lower_envelope
from costdash.demo import DEMOS, load_demo
from costdash.errors import ParameterError
from costdash.hull import classifier_hull
from costdash.roc import roc_curve, roc_from_counts
from tests.strategies import brute_force_roc

# --- random probability scores ------------------------------------------------------------------


@st.composite
def probability_scores(draw, max_n: int = 30):
    """(y, scores as floats, scores as exact Fractions): both classes present; scores in [0, 1]
    on a coarse grid (many ties, 0 and 1 included) or dyadic (exact in float64)."""
    n = draw(st.integers(2, max_n))
    rest = draw(st.lists(st.booleans(), min_size=n - 2, max_size=n - 2))
    y = draw(st.permutations([True, False, *rest]))
    denominator = draw(st.sampled_from([1, 2, 4, 10, 64, 1024]))
    k = draw(st.lists(st.integers(0, denominator), min_size=n, max_size=n))
    exact = [Fraction(v, denominator) for v in k]
    s = np.array([float(v) for v in exact])
    # Floats of k/10 are not k/10: the oracle works on the floats' exact values.
    exact = [Fraction(float(v)) for v in s]
    return np.asarray(y, dtype=bool), s, exact


def exact_counts(y, exact_scores, c):
    """(FPR, TPR) as Fractions of flagging score >= c, counted by brute force."""
    n_pos = sum(1 for v in y if v)
    n_neg = len(y) - n_pos
    tp = sum(1 for v, s in zip(y, exact_scores) if v and s >= c)
    fp = sum(1 for v, s in zip(y, exact_scores) if not v and s >= c)
    return Fraction(fp, n_neg), Fraction(tp, n_pos)


def exact_brier_curve_area(y, exact_scores) -> Fraction:
    """∫₀¹ Q(c) dc with threshold c, exactly: between consecutive distinct scores the counts are
    constant and Q is linear in c (midpoint rule is exact)."""
    pi = Fraction(sum(1 for v in y if v), len(y))
    cuts = sorted({Fraction(0), Fraction(1), *exact_scores})
    total = Fraction(0)
    for lo, hi in zip(cuts, cuts[1:]):
        mid = (lo + hi) / 2
        f, t = exact_counts(y, exact_scores, mid)
        total += (hi - lo) * 2 * (mid * (1 - pi) * f + (1 - mid) * pi * (1 - t))
    return total


def exact_auc(y, exact_scores) -> Fraction:
    """Mann-Whitney: pairs ranked right, ties one half."""
    pos = [s for v, s in zip(y, exact_scores) if v]
    neg = [s for v, s in zip(y, exact_scores) if not v]
    wins = sum((Fraction(1) if p > q else Fraction(1, 2) if p == q else Fraction(0)
                for p in pos for q in neg), Fraction(0))
    return wins / (len(pos) * len(neg))


def exact_rate_driven_loss(y, score) -> Fraction:
    """∫₀¹ Q dc flagging the fraction r = 1 - c of cases, ROC point linear in the rate between
    the brute-force ROC points; Q is quadratic in r on each piece, so Simpson's rule is exact."""
    tp, fp, _ = brute_force_roc(y, score)
    n_pos = int(np.sum(y))
    n_neg = y.size - n_pos
    n = y.size
    pi = Fraction(n_pos, n)
    pts = [(Fraction(int(a) + int(b), n), Fraction(int(b), n_neg), Fraction(int(a), n_pos))
           for a, b in zip(tp, fp)]
    total = Fraction(0)
    for (r0, f0, t0), (r1, f1, t1) in zip(pts, pts[1:]):
        def q(r):
            w = (r - r0) / (r1 - r0)
            f, t = f0 + w * (f1 - f0), t0 + w * (t1 - t0)
            return 2 * ((1 - r) * (1 - pi) * f + r * pi * (1 - t))
        total += (r1 - r0) / 6 * (q(r0) + 4 * q((r0 + r1) / 2) + q(r1))
    return total


def exact_envelope_area(y, score) -> Fraction:
    """Area under min over every ROC point's cost line (trivial ones included), exactly: the
    minimum of lines is linear between consecutive pairwise crossings."""
    tp, fp, _ = brute_force_roc(y, score)
    n_pos = int(np.sum(y))
    n_neg = y.size - n_pos
    lines = [(Fraction(int(b), n_neg), Fraction(int(a), n_pos)) for a, b in zip(tp, fp)]
    xs = {Fraction(0), Fraction(1)}
    for i, (f1, t1) in enumerate(lines):
        for f2, t2 in lines[i + 1:]:
            # (1 - t1)x + f1(1 - x) = (1 - t2)x + f2(1 - x)
            den = (t2 - t1) + (f2 - f1)
            if den != 0:
                x = (f2 - f1) / den
                if 0 < x < 1:
                    xs.add(x)
    xs = sorted(xs)
    env = [min((1 - t) * x + f * (1 - x) for f, t in lines) for x in xs]
    return sum((x1 - x0) * (e0 + e1) / 2 for x0, x1, e0, e1 in zip(xs, xs[1:], env, env[1:]))


def exact_score_driven_expected_loss(y, exact_scores) -> Fraction:
    """∫₀¹ NE(x) dx flagging score >= c(x), c(x) = π(1 - x)/(π(1 - x) + (1 - π)x), exactly."""
    n_pos = sum(1 for v in y if v)
    pi = Fraction(n_pos, len(y))

    def x_of(c):
        return pi * (1 - c) / (pi * (1 - c) + (1 - pi) * c)

    def c_of(x):
        return pi * (1 - x) / (pi * (1 - x) + (1 - pi) * x)

    cuts = sorted({Fraction(0), Fraction(1), *(x_of(s) for s in exact_scores)})
    total = Fraction(0)
    for lo, hi in zip(cuts, cuts[1:]):
        f, t = exact_counts(y, exact_scores, c_of((lo + hi) / 2))
        total += (hi - lo) * ((1 - t) * (lo + hi) / 2 + f * (1 - (lo + hi) / 2))
    return total


# --- the identities, exactly, then the floats against them -----------------------------------

@settings(max_examples=60, deadline=None)
@given(probability_scores())
def test_brier_curve_area_over_cost_proportions_is_the_brier_score(data):
    y, s, exact = data
    area = exact_brier_curve_area(y, exact)
    exact_bs = sum((sc - (1 if v else 0)) ** 2 for v, sc in zip(y, exact)) / len(y)
    assert area == exact_bs  # the identity, in exact arithmetic
    curve = score_driven_curve(roc_curve(y, s))
    assert curve.cost_proportion_loss == pytest.approx(float(exact_bs), abs=1e-13)
    assert brier_score(y, s) == pytest.approx(float(exact_bs), abs=1e-15)
    assert threshold_choice(roc=roc_curve(y, s)).brier_score == pytest.approx(float(exact_bs),
                                                                              abs=1e-14)


@settings(max_examples=60, deadline=None)
@given(probability_scores())
def test_rate_driven_loss_is_linear_in_auc(data):
    y, s, exact = data
    loss = exact_rate_driven_loss(y, s)
    pi = Fraction(int(np.sum(y)), y.size)
    auc = exact_auc(y, exact)
    assert loss == Fraction(1, 3) + pi * (1 - pi) * (1 - 2 * auc)  # exact
    roc = roc_curve(y, s)
    assert roc.auc == pytest.approx(float(auc), abs=1e-15)
    assert rate_driven_curve(roc).cost_proportion_loss == pytest.approx(float(loss), abs=1e-13)


@settings(max_examples=60, deadline=None)
@given(probability_scores())
def test_optimal_expected_loss_is_the_envelope_area(data):
    y, s, _ = data
    roc = roc_curve(y, s)
    exact = exact_envelope_area(y, s)
    curve = optimal_curve(roc)
    env = lower_envelope(classifier_hull(roc))
    assert curve.expected_loss == pytest.approx(env.area, abs=1e-15)
    assert curve.expected_loss == pytest.approx(float(exact), abs=1e-14)
    np.testing.assert_array_equal(curve.pc, env.pc)
    np.testing.assert_allclose(curve.cost, env.cost, atol=1e-15)


@settings(max_examples=40, deadline=None)
@given(probability_scores())
def test_score_driven_curve_in_cost_space_exactly(data):
    y, s, exact = data
    curve = score_driven_curve(roc_curve(y, s))
    assert curve.expected_loss == pytest.approx(float(exact_score_driven_expected_loss(y, exact)),
                                                abs=1e-13)
    assert curve.pc[0] == 0.0 and curve.pc[-1] == 1.0 and np.all(np.diff(curve.pc) >= 0)
    # Every drawn point is the cost of flagging score >= c(x) there (left and right limits at a
    # jump: one of the two pieces meeting there).
    pi = float(np.mean(y))
    for x, cost in zip(curve.pc, curve.cost):
        candidates = []
        for eps in (-1e-9, 0.0, 1e-9):
            xe = min(max(x + eps, 0.0), 1.0)
            c = pi * (1 - xe) / (pi * (1 - xe) + (1 - pi) * xe)
            flagged = s >= c
            f = np.sum(flagged & ~y) / np.sum(~y)
            t = np.sum(flagged & y) / np.sum(y)
            candidates.append((1 - t) * x + f * (1 - x))
        assert min(abs(cost - v) for v in candidates) < 1e-12


@settings(max_examples=40, deadline=None)
@given(probability_scores(), st.integers(0, 10))
def test_fixed_threshold_is_one_cost_line_and_its_loss_the_error_rate(data, k):
    y, s, _ = data
    t = k / 10
    curve = fixed_threshold_curve(roc_curve(y, s), t)
    flagged = s >= t
    f = np.sum(flagged & ~y) / np.sum(~y)
    tp = np.sum(flagged & y) / np.sum(y)
    np.testing.assert_allclose(curve.cost, [f, 1 - tp], atol=1e-15)
    assert curve.expected_loss == pytest.approx((f + 1 - tp) / 2, abs=1e-15)
    assert curve.cost_proportion_loss == pytest.approx(np.mean(flagged != y), abs=1e-14)


@settings(max_examples=40, deadline=None)
@given(probability_scores())
def test_optimal_loss_over_cost_proportions_is_the_brier_score_after_isotonic_calibration(data):
    """The hull's thresholds are what perfectly calibrated (PAV) scores would pick, so the
    optimal curve's area over cost proportions is their Brier score (the refinement loss)."""
    y, s, _ = data
    calibrated = IsotonicRegression(out_of_bounds="clip").fit(s, y).predict(s)
    assert optimal_curve(roc_curve(y, s)).cost_proportion_loss == pytest.approx(
        np.mean((calibrated - y) ** 2), abs=1e-13)


@settings(max_examples=60, deadline=None)
@given(probability_scores())
def test_the_optimal_curve_is_never_above_the_others(data):
    y, s, _ = data
    tc = threshold_choice(y, s, fixed_threshold=0.5)
    for other in (tc.score_driven, tc.rate_driven, tc.fixed):
        assert other.expected_loss >= tc.optimal.expected_loss - 1e-13
        assert other.cost_proportion_loss >= tc.optimal.cost_proportion_loss - 1e-13
        assert np.all(tc.optimal.cost - 1e-12 <= lower_envelope(classifier_hull(
            roc_curve(y, s)))(tc.optimal.pc))
    assert tc.calibration_loss == pytest.approx(
        tc.score_driven.expected_loss - tc.optimal.expected_loss)
    assert tc.rate_loss >= -1e-13 and tc.fixed_loss >= -1e-13


# --- Beta-weighted expected losses against quadrature ---------------------------------------

@pytest.mark.slow
@pytest.mark.parametrize("a,b", [(2.0, 2.0), (0.6, 1.5), (3.0, 0.8)])
@pytest.mark.parametrize("demo", list(DEMOS))
def test_beta_expected_losses_against_quadrature(demo, a, b):
    data = load_demo(demo)
    c = data.scored[0]
    roc = roc_curve(c.y_true, c.score)
    weight = beta_dist(a, b).pdf
    for curve in (score_driven_curve(roc, beta=(a, b)), optimal_curve(roc, beta=(a, b)),
                  fixed_threshold_curve(roc, 0.5, beta=(a, b))):
        # piecewise linear: integrate each piece (jumps are pieces of zero width)
        total = 0.0
        for x0, x1, y0, y1 in zip(curve.pc[:-1], curve.pc[1:], curve.cost[:-1], curve.cost[1:]):
            if x1 > x0:
                total += integrate.quad(lambda x: (y0 + (y1 - y0) * (x - x0) / (x1 - x0))
                                        * weight(x), x0, x1, epsabs=1e-14, epsrel=1e-13)[0]
        assert curve.expected_loss == pytest.approx(total, abs=1e-9)
    if demo != "breast-cancer":  # adaptive quadrature on every rate piece: one demo is enough
        return
    rate = rate_driven_curve(roc, beta=(a, b))
    from costdash.choice_curves import _rate_cost

    nodes = np.union1d(rate.pc, [])
    total = sum(integrate.quad(lambda x: float(_rate_cost(roc, np.array([x]))[0]) * weight(x),
                               x0, x1, epsabs=1e-14, epsrel=1e-12, limit=200)[0]
                for x0, x1 in zip(nodes[:-1], nodes[1:]))
    assert rate.expected_loss == pytest.approx(total, abs=1e-9)


def test_uniform_rate_driven_expected_loss_against_a_fine_trapezoid():
    data = load_demo("breast-cancer")
    for c in data.scored:
        roc = roc_curve(c.y_true, c.score)
        from costdash.choice_curves import _rate_cost

        x = np.union1d(np.linspace(0, 1, 400001), rate_driven_curve(roc).pc)
        assert rate_driven_curve(roc).expected_loss == pytest.approx(
            np.trapezoid(_rate_cost(roc, x), x), abs=1e-9)


# --- refusals and counted classifiers ---------------------------------------------------------

def test_scores_outside_zero_one_are_refused_with_the_reason():
    y = np.array([0, 1, 0, 1, 1], dtype=bool)
    s = np.array([-1.5, 2.0, 0.3, 0.9, 3.5])
    with pytest.raises(ParameterError, match=r"not within \[0, 1\]"):
        brier_score(y, s)
    with pytest.raises(ParameterError, match="not probabilities"):
        score_driven_curve(roc_curve(y, s))
    tc = threshold_choice(y, s)
    assert tc.score_driven is None and tc.brier_score is None and tc.calibration_loss is None
    assert "[-1.5, 3.5]" in tc.score_driven_refused
    assert tc.rate_driven is not None and tc.optimal is not None


def test_counted_classifier_has_no_score_driven_curve():
    roc = roc_from_counts([0, 3, 5], [0, 1, 4], [5, 2, 0], [6, 5, 2])
    tc = threshold_choice(roc=roc)
    assert tc.score_driven is None and "no scores" in tc.score_driven_refused
    assert tc.brier_score is None
    assert tc.optimal.expected_loss == pytest.approx(lower_envelope(classifier_hull(roc)).area)


# --- costdash analyze --threshold-choice ------------------------------------------------------

def _no_constants(name):
    raise AssertionError(f"non-standard JSON constant {name}")


def test_analyze_json_threshold_choice(capsys, tmp_path):
    rng = np.random.default_rng(4)
    n = 200
    y = rng.random(n) < 0.3
    prob = np.round(1 / (1 + np.exp(-(rng.normal(size=n) + 1.5 * y))), 3)
    margin = np.round(rng.normal(size=n) + y, 2)  # not probabilities
    path = tmp_path / "p.csv"
    path.write_text("y_true,prob,margin\n" + "".join(
        f"{int(a)},{b},{c}\n" for a, b, c in zip(y, prob, margin)))
    assert main(["analyze", str(path), "--threshold-choice", "--json", "--h-severity", "0.5"]) == 0
    out = json.loads(capsys.readouterr().out, parse_constant=_no_constants)
    by_name = {c["name"]: c for c in out["classifiers"]}
    p, m = by_name["prob"], by_name["margin"]
    for c in (p, m):
        assert {"h_measure", "brier_score", "threshold_choice", "threshold_choice_gaps"} <= set(c)
        assert set(c["threshold_choice"]) == {"score_driven", "rate_driven", "fixed", "optimal"}
        assert c["threshold_choice"]["optimal"]["expected_loss"] == pytest.approx(c["cost_area"],
                                                                                  abs=1e-15)
        assert c["h_measure_beta"] == [2.0, 3.0]  # severity ratio 0.5: Beta(2, 1 + 1/0.5)
    assert p["brier_score"] == pytest.approx(np.mean((prob - y) ** 2), abs=1e-15)
    sd = p["threshold_choice"]["score_driven"]
    assert set(sd) == {"pc", "cost", "expected_loss", "cost_proportion_loss"}
    assert sd["cost_proportion_loss"] == pytest.approx(p["brier_score"], abs=1e-13)
    assert p["threshold_choice_gaps"]["calibration_loss"] == pytest.approx(
        sd["expected_loss"] - p["threshold_choice"]["optimal"]["expected_loss"])
    assert m["brier_score"] is None and m["threshold_choice"]["score_driven"] is None
    assert "not probabilities" in m["threshold_choice_gaps"]["score_driven_refused"]
    rd = m["threshold_choice"]["rate_driven"]
    auc = m["auc"]
    pi = float(np.mean(y))
    assert rd["cost_proportion_loss"] == pytest.approx(1 / 3 + pi * (1 - pi) * (1 - 2 * auc),
                                                       abs=1e-13)
    # The fixed curve defaults to each classifier's own best threshold at the given conditions.
    fixed = p["threshold_choice"]["fixed"]
    t = fixed["threshold"]
    flagged = prob >= t
    assert fixed["cost"] == pytest.approx([np.sum(flagged & ~y) / np.sum(~y),
                                           1 - np.sum(flagged & y) / np.sum(y)], abs=1e-15)


def test_analyze_readable_threshold_choice_and_default_output(capsys):
    path = DEMOS["breast-cancer"].path
    assert main(["analyze", str(path), "--json"]) == 0
    default = json.loads(capsys.readouterr().out)
    assert "h_measure" in default["classifiers"][0]  # part of the default JSON (issue 13)
    assert main(["analyze", str(path), "--json", "--no-threshold-choice"]) == 0
    plain = json.loads(capsys.readouterr().out)
    assert "h_measure" not in plain["classifiers"][0]
    assert main(["analyze", str(path), "--threshold-choice"]) == 0
    text = capsys.readouterr().out
    assert "Threshold choice" in text and "calib. loss" in text


# --- calibration on folds (costdash.calibration) --------------------------------------------

@settings(max_examples=60, deadline=None)
@given(st.integers(4, 40).flatmap(lambda n: st.tuples(
    st.lists(st.booleans(), min_size=n, max_size=n),
    st.lists(st.integers(-6, 6), min_size=n, max_size=n),
    st.lists(st.integers(1, 4), min_size=n, max_size=n))))
def test_isotonic_fit_matches_scikit_learn(data):
    from costdash.calibration import fit_isotonic

    labels, ks, ws = data
    y = np.array(labels, dtype=bool)
    s = np.array(ks, dtype=float) / 2.0
    w = np.array(ws, dtype=float)
    ours = fit_isotonic(s, y, w)
    theirs = IsotonicRegression(out_of_bounds="clip").fit(s, y, sample_weight=w)
    grid = np.linspace(-4, 4, 161)
    np.testing.assert_allclose(ours(grid), theirs.predict(grid), atol=1e-12)


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_platt_fit_is_the_smoothed_target_maximum_likelihood(seed):
    from scipy.optimize import minimize
    from scipy.special import log_expit

    from costdash.calibration import fit_platt

    rng = np.random.default_rng(seed)
    n = 300
    y = rng.random(n) < 0.3
    s = np.round(rng.normal(size=n) * 3 + 2 * y, 2)
    w = rng.integers(1, 4, size=n).astype(float) if seed else None
    ww = np.ones(n) if w is None else w
    n_pos, n_neg = ww[y].sum(), ww[~y].sum()
    target = np.where(y, (n_pos + 1) / (n_pos + 2), 1 / (n_neg + 2))

    def loss(theta):
        eta = theta[0] * s + theta[1]
        return -np.sum(ww * (target * log_expit(eta) + (1 - target) * log_expit(-eta)))

    best = minimize(loss, [0.1, 0.0], method="Nelder-Mead",
                    options={"xatol": 1e-12, "fatol": 1e-14, "maxiter": 20000})
    cal = fit_platt(s, y, w)
    np.testing.assert_allclose(cal.params, best.x, atol=1e-7)
    assert loss(cal.params) <= best.fun + 1e-10
    p = cal(s)
    r = ww * (p - target)
    np.testing.assert_allclose([np.dot(r, s), r.sum()], [0.0, 0.0], atol=1e-8)


@pytest.mark.parametrize("method", ["platt", "isotonic"])
def test_cross_fitting_maps_each_fold_by_a_fit_on_the_others(method):
    from costdash.calibration import calibrate_classifier, cross_fit, fit_isotonic, fit_platt

    data = load_demo("breast-cancer")
    c = data.scored[3]  # naive Bayes: badly calibrated
    calibrated = cross_fit(c.score, c.y_true, c.fold, method)
    fit = fit_platt if method == "platt" else fit_isotonic
    for k in np.unique(c.fold):
        held = c.fold == k
        expected = fit(c.score[~held], c.y_true[~held])(c.score[held])
        np.testing.assert_array_equal(calibrated[held], expected)
        if method == "isotonic":
            sk = IsotonicRegression(out_of_bounds="clip").fit(c.score[~held], c.y_true[~held])
            np.testing.assert_allclose(calibrated[held], sk.predict(c.score[held]), atol=1e-12)
    roc = calibrate_classifier(c, method)
    ref = roc_curve(c.y_true, calibrated)
    np.testing.assert_array_equal(roc.tp, ref.tp)
    np.testing.assert_array_equal(roc.fp, ref.fp)
    tc = threshold_choice(roc=roc_curve(c.y_true, c.score), calibrated=roc, calibration=method)
    assert tc.calibrated_brier_score == pytest.approx(np.mean((calibrated - c.y_true) ** 2),
                                                      abs=1e-14)
    assert tc.score_driven.cost_proportion_loss == pytest.approx(tc.calibrated_brier_score,
                                                                 abs=1e-13)


def test_analyze_calibrates_margins_on_request(capsys, tmp_path):
    rng = np.random.default_rng(8)
    n = 300
    y = rng.random(n) < 0.35
    margin = np.round(rng.normal(size=n) * 2 + 2 * y - 1, 3)
    path = tmp_path / "m.csv"
    path.write_text("y_true,svm\n" + "".join(f"{int(a)},{b}\n" for a, b in zip(y, margin)))
    assert main(["analyze", str(path), "--calibrate", "isotonic", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)["classifiers"][0]
    gaps = out["threshold_choice_gaps"]
    assert out["brier_score"] is None and gaps["calibration"] == "isotonic"
    assert out["threshold_choice"]["score_driven"] is not None
    from costdash.calibration import cross_fit, default_folds

    calibrated = cross_fit(margin, y, default_folds(y), "isotonic")
    assert gaps["calibrated_brier_score"] == pytest.approx(np.mean((calibrated - y) ** 2),
                                                           abs=1e-14)
    assert main(["dca", str(path), "--calibrate", "platt", "--json",
                 "--thresholds", "0.2:0.2:0.1"]) == 0
    nb = json.loads(capsys.readouterr().out)["net_benefit"]["svm"]
    cal = cross_fit(margin, y, default_folds(y), "platt")
    flagged = cal >= 0.2
    assert nb == pytest.approx([np.sum(flagged & y) / n - np.sum(flagged & ~y) / n * 0.25],
                               abs=1e-15)
