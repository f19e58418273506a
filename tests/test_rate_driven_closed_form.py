"""The rate-driven curve's expected loss with PC(+) uniform, in closed form (issue 23): against
an 80-digit evaluation of the same integral derived another way (in PC(+), by polynomial
division), K2 against its formula at 80 digits, and the cases the closed form leaves to the
quadrature."""

from __future__ import annotations

from decimal import Decimal, localcontext

import numpy as np
import pytest

import costdash.choice_curves as cc
from costdash.roc import roc_curve, roc_from_counts


def reference_loss(roc) -> Decimal:
    """∫₀¹ NE(x) dx at 80 digits, piece by piece in PC(+): on a rate piece F = aF + sF r and
    T = aT + sT r, so NE(x) = A + Bx + (1 - π)(C + Dx) x / (π + dx) with d = 1 - 2π, and the
    rational part is a polynomial plus rem / (dx + π) (a logarithm)."""
    with localcontext() as ctx:
        ctx.prec = 80
        n = roc.n_pos + roc.n_neg
        pi = Decimal(roc.n_pos) / n
        d = 1 - 2 * pi
        tp = [Decimal(int(v)) for v in roc.tp]
        fp = [Decimal(int(v)) for v in roc.fp]
        total = Decimal(0)
        for j in range(len(tp) - 1):
            r0, r1 = (tp[j] + fp[j]) / n, (tp[j + 1] + fp[j + 1]) / n
            f0, f1 = fp[j] / roc.n_neg, fp[j + 1] / roc.n_neg
            t0, t1 = tp[j] / roc.n_pos, tp[j + 1] / roc.n_pos
            s_f, s_t = (f1 - f0) / (r1 - r0), (t1 - t0) / (r1 - r0)
            a_f, a_t = f0 - s_f * r0, t0 - s_t * r0
            big_a, big_b, big_c, big_d = a_f, 1 - a_t - a_f, s_f, -(s_t + s_f)
            x0 = pi * r0 / (pi * r0 + (1 - pi) * (1 - r0))
            x1 = pi * r1 / (pi * r1 + (1 - pi) * (1 - r1))
            poly = big_a * (x1 - x0) + big_b * (x1 * x1 - x0 * x0) / 2
            if d == 0:
                rational = (big_c * (x1 ** 2 - x0 ** 2) / 2 + big_d * (x1 ** 3 - x0 ** 3) / 3) / pi
            else:  # D x² + C x = (d x + π)(q1 x + q0) + rem
                q1 = big_d / d
                q0 = (big_c - q1 * pi) / d
                rem = -q0 * pi
                rational = (q1 * (x1 ** 2 - x0 ** 2) / 2 + q0 * (x1 - x0)
                            + rem / d * ((d * x1 + pi) / (d * x0 + pi)).ln())
            total += poly + (1 - pi) * rational
        return total


def _random_curves(count: int, seed: int):
    rng = np.random.default_rng(seed)
    for trial in range(count):
        n = int(rng.integers(4, 300))
        if trial % 4 == 0:  # prevalence exactly 1/2: d = 0, η = 0 on every piece
            y = np.arange(n) % 2 == 0
            rng.shuffle(y)
        else:
            y = rng.random(n) < rng.uniform(0.02, 0.98)
            y[0], y[1] = True, False
        yield roc_curve(y, np.round(rng.random(n) + y * rng.uniform(-0.5, 1.5),
                                    int(rng.integers(1, 4))))


def test_uniform_rate_driven_loss_against_80_digits():
    worst = 0.0
    for roc in _random_curves(48, seed=7):
        exact = reference_loss(roc)
        got = cc.rate_driven_curve(roc).expected_loss
        worst = max(worst, abs(float((Decimal(got) - exact) / exact)))
    # Measured: 3.6e-16 (the quadrature it replaced: 2.7e-16 on these curves).
    assert worst <= 2e-15


@pytest.mark.parametrize("eta", [-0.95, -0.76, -0.75, -0.74, -0.5, -1e-3, -1e-9, 0.0, 1e-12,
                                 1e-4, 0.3, 0.74, 0.75, 0.76, 3.0, 18.0, 1e3])
def test_k2_against_its_formula_at_80_digits(eta):
    with localcontext() as ctx:
        ctx.prec = 80
        e = Decimal(eta)
        if eta == 0.0:
            exact = Decimal(1) / 3
        else:
            w = 1 + e
            exact = (w.ln() + 2 / w - 1 / (2 * w * w) - Decimal(3) / 2) / e ** 3
        got = cc._k2(np.array([eta, 0.0]))[0]  # with another value: the series and the form
        assert abs(float((Decimal(got) - exact) / exact)) <= 4e-15


def test_every_k2_in_one_call_is_each_ones():
    etas = np.array([-0.9, -1e-6, 0.0, 0.2, 0.8, 5.0])
    np.testing.assert_array_equal(cc._k2(etas), [cc._k2(np.array([e]))[0] for e in etas])


def test_rates_out_of_order_fall_back_to_the_quadrature():
    # Confusion matrices that are not one ranking's: flagged rates (tp + fp) / n go down from
    # the second point to the third; the curve is still drawn and integrated (Gauss-Legendre).
    roc = roc_from_counts([40, 10], [5, 30], [10, 40], [95, 70])
    rates = cc._rates(roc)
    assert not np.all(rates[1:] > rates[:-1])
    curve = cc.rate_driven_curve(roc)
    lo, hi = curve.pc[:-1], curve.pc[1:]
    half = (hi - lo)[:, None] / 2.0
    nodes = (lo + hi)[:, None] / 2.0 + half * cc._GAUSS_X[None, :]
    pieces = np.sum(cc._rate_cost(roc, nodes) * cc._GAUSS_W[None, :], axis=1) * half[:, 0]
    assert lo.size < cc._RATE_CHUNK  # one chunk: the same operations, so the same number
    assert curve.expected_loss == float(np.sum(pieces))


def test_sorted_union_is_union1d():
    rng = np.random.default_rng(5)
    grid = np.linspace(0.0, 1.0, 201)
    for breaks in (np.sort(rng.random(500)), np.round(np.sort(rng.random(2000)), 2),
                   np.array([0.0, 0.0, 0.5, 1.0]), np.array([]), rng.random(50)):
        np.testing.assert_array_equal(cc._sorted_union(breaks, grid), np.union1d(breaks, grid))
