"""H-measure (costdash.hmeasure) against the ``hmeasure`` package (a test-only dependency), against
:func:`costdash.beta_weighted_cost` by the change of variables between the cost proportion and
PC(+), and against an exact oracle."""

from __future__ import annotations

from fractions import Fraction

import numpy as np
import pytest
from hmeasure import h_score
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import integrate
from scipy.special import beta as beta_function

from costdash.costspace import lower_envelope
from costdash.criteria import beta_weighted_cost
from costdash.demo import DEMOS, load_demo
from costdash.errors import ParameterError
from costdash.hmeasure import h_measure, h_measure_beta
from costdash.hull import classifier_hull, convex_hull
from costdash.roc import roc_curve, roc_from_counts
from tests.strategies import brute_force_roc, labelled_scores


def synthetic(seed: int, n: int, prevalence: float, digits: int):
    rng = np.random.default_rng(seed)
    y = rng.random(n) < prevalence
    s = np.round(1 / (1 + np.exp(-(rng.normal(size=n) + 1.4 * y))), digits)
    return y, s


DATA_SETS = {
    **{f"demo-{name}": None for name in DEMOS},
    "synthetic-ties": synthetic(1, 400, 0.25, 2),
    "synthetic-continuous": synthetic(2, 300, 0.6, 12),
}


def data_set(name):
    if name.startswith("demo-"):
        data = load_demo(name[5:])
        return [(c.y_true, c.score) for c in data.scored]
    return [DATA_SETS[name]]


@pytest.mark.parametrize("severity", [None, 1.0, 0.3, 4.0])
@pytest.mark.parametrize("name", list(DATA_SETS))
def test_agrees_with_the_hmeasure_package(name, severity):
    for y, s in data_set(name):
        ours = h_measure(roc_curve(y, s), severity_ratio=severity).h
        theirs = h_score(y.astype(float), s, severity_ratio=severity)
        assert ours == pytest.approx(theirs, abs=1e-9)


def test_default_severity_is_the_class_ratio():
    y, s = DATA_SETS["synthetic-ties"]
    roc = roc_curve(y, s)
    default = h_measure(roc)
    assert default.severity_ratio == roc.n_pos / roc.n_neg
    assert (default.a, default.b) == h_measure_beta(roc.n_pos / roc.n_neg)
    assert h_measure(roc, beta=(default.a, default.b)).h == default.h
    assert h_measure(roc, severity_ratio=1.0).a == 2.0 and h_measure(roc, severity_ratio=1.0).b == 2.0


@st.composite
def balanced(draw):
    """Labelled scores with as many positives as negatives."""
    k = draw(st.integers(1, 15))
    y = np.array([True] * k + [False] * k)
    s = np.array(draw(st.lists(st.integers(0, 8), min_size=2 * k, max_size=2 * k)), dtype=float)
    return y, s


@settings(max_examples=80, deadline=None)
@given(balanced(), st.floats(0.3, 6.0), st.floats(0.3, 6.0))
def test_change_of_variables_to_beta_weighted_cost_with_balanced_classes(data, a, b):
    """With π₀ = π₁ the cost proportion c and PC(+) x satisfy x = 1 - c, so c ~ Beta(a, b) is
    x ~ Beta(b, a), and H = 1 - E[envelope] / E[trivial envelope], both by beta_weighted_cost."""
    y, s = data
    roc = roc_curve(y, s)
    env = lower_envelope(classifier_hull(roc))
    trivial = lower_envelope(convex_hull([roc_from_counts([0, 1], [0, 1], [1, 0], [1, 0])]))
    expected = 1 - beta_weighted_cost(env, b, a) / beta_weighted_cost(trivial, b, a)
    assert h_measure(roc, beta=(a, b)).h == pytest.approx(expected, abs=1e-12)


@pytest.mark.parametrize("name", ["synthetic-ties", "demo-rare-digit"])
def test_change_of_variables_in_general(name):
    """For any class proportions: ∫ L(c) u(c) dc = ∫ E(x) w(x) dx with
    w(x) = π₀π₁/e(x) · π₀π₁/e(x)² · u(c(x)), e(x) = π₁(1 - x) + π₀x (docs)."""
    y, s = data_set(name)[0]
    roc = roc_curve(y, s)
    h = h_measure(roc)
    pi1 = roc.n_pos / (roc.n_pos + roc.n_neg)
    pi0 = 1 - pi1
    env = lower_envelope(classifier_hull(roc))
    a, b = h.a, h.b

    def w(x):
        e = pi1 * (1 - x) + pi0 * x
        c = pi1 * (1 - x) / e
        return (pi0 * pi1 / e) * (pi0 * pi1 / e**2) * c ** (a - 1) * (1 - c) ** (b - 1) \
            / beta_function(a, b)

    loss = sum(integrate.quad(lambda x: env(x) * w(x), x0, x1, epsabs=1e-15, epsrel=1e-13)[0]
               for x0, x1 in zip(env.pc[:-1], env.pc[1:]))
    max_loss = sum(integrate.quad(lambda x: min(x, 1 - x) * w(x), x0, x1, epsabs=1e-15,
                                  epsrel=1e-13)[0] for x0, x1 in ((0, 0.5), (0.5, 1)))
    assert h.loss == pytest.approx(loss, rel=1e-9)
    assert h.max_loss == pytest.approx(max_loss, rel=1e-9)


@settings(max_examples=60, deadline=None)
@given(labelled_scores(max_n=25, kinds=("ties", "two", "integer")))
def test_against_an_exact_oracle_with_beta_2_2(data):
    """Beta(2, 2): u(c) = 6c(1 - c), so on each piece the integrand is a polynomial and the
    integrals are exact Fractions; the minimum over every brute-force ROC point is taken at
    the midpoint of each interval between pairwise crossings in c."""
    y, s = data
    tp, fp, _ = brute_force_roc(y, s)
    n_pos = int(np.sum(y))
    n_neg = y.size - n_pos
    pi1 = Fraction(n_pos, y.size)
    pi0 = 1 - pi1
    pts = [(Fraction(int(f), n_neg), Fraction(int(t), n_pos)) for t, f in zip(tp, fp)]

    def line(f, t):  # L(c) = α c + β
        return pi0 * f - pi1 * (1 - t), pi1 * (1 - t)

    lines = [line(f, t) for f, t in pts]
    cuts = {Fraction(0), Fraction(1)}
    for i, (a1, b1) in enumerate(lines):
        for a2, b2 in lines[i + 1:]:
            if a1 != a2:
                c = (b2 - b1) / (a1 - a2)
                if 0 < c < 1:
                    cuts.add(c)
    cuts = sorted(cuts)

    def integral(alpha, beta_, lo, hi):  # ∫ (α c + β) 6 c (1 - c) dc
        def prim(c):
            return 6 * (alpha * (c**3 / 3 - c**4 / 4) + beta_ * (c**2 / 2 - c**3 / 3))
        return prim(hi) - prim(lo)

    loss = Fraction(0)
    for lo, hi in zip(cuts, cuts[1:]):
        mid = (lo + hi) / 2
        alpha, beta_ = min(lines, key=lambda ab: ab[0] * mid + ab[1])
        loss += integral(alpha, beta_, lo, hi)
    max_loss = integral(pi0, Fraction(0), Fraction(0), pi1) + integral(-pi1, pi1, pi1, Fraction(1))
    got = h_measure(roc_curve(y, s), severity_ratio=1.0)
    assert got.loss == pytest.approx(float(loss), abs=1e-14)
    assert got.max_loss == pytest.approx(float(max_loss), abs=1e-14)
    assert got.h == pytest.approx(float(1 - loss / max_loss), abs=1e-12)
    assert -1e-12 <= got.h <= 1 + 1e-12


def test_perfect_and_uninformative_classifiers():
    y = np.array([0, 0, 1, 1, 0, 1], dtype=bool)
    assert h_measure(roc_curve(y, y.astype(float))).h == pytest.approx(1.0, abs=1e-15)
    assert h_measure(roc_curve(y, np.zeros(6))).h == pytest.approx(0.0, abs=1e-15)


def test_bad_parameters_are_refused():
    roc = roc_curve([0, 1], [0.2, 0.7])
    with pytest.raises(ParameterError):
        h_measure(roc, severity_ratio=0.0)
    with pytest.raises(ParameterError):
        h_measure(roc, severity_ratio=1.0, beta=(2, 2))
    with pytest.raises(ParameterError):
        h_measure(roc, beta=(0, 2))
