"""Pinned thresholds (``costdash.pinned``) against brute force over the scores.

The oracles share no code with costdash: the confusion matrix is recounted from the scores
(``score >= threshold``), the PC(+) interval where the threshold is optimal for its classifier is
solved exactly (Fractions) from "its cost line is at or below every other threshold's", and the
prices at operating conditions are sums over the examples, each weighted to the conditions'
p(+), of what its decision costs.
"""

from __future__ import annotations

import functools
import math
from fractions import Fraction

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from strategies import brute_force_roc, labelled_scores

from costdash.conditions import OperatingCondition
from costdash.costspace import lower_envelope
from costdash.errors import ParameterError
from costdash.hull import classifier_hull
from costdash.pinned import pin_threshold, point_metrics
from costdash.roc import roc_curve, roc_from_counts

PROPERTY = settings(max_examples=300, deadline=None,
                    suppress_health_check=[HealthCheck.too_slow])


# --- oracles -------------------------------------------------------------------------------------

def counts_at(y, score, t):
    flagged = score >= t
    return (int(np.sum(y & flagged)), int(np.sum(~y & flagged)), int(np.sum(y & ~flagged)),
            int(np.sum(~y & ~flagged)))


@functools.lru_cache(maxsize=16)
def _brute_force_rates(y_bytes: bytes, score_bytes: bytes) -> tuple[tuple[Fraction, Fraction],
                                                                    ...]:
    """Every threshold's (TPR, FPR) of the classifier, exactly, by brute force: once per data
    set, not once per threshold a test asks about (that was most of the tests' time)."""
    y = np.frombuffer(y_bytes, dtype=bool)
    score = np.frombuffer(score_bytes, dtype=np.float64)
    n_pos, n_neg = int(y.sum()), int((~y).sum())
    all_tp, all_fp, _ = brute_force_roc(y, score)
    return tuple((Fraction(tk, n_pos), Fraction(fk, n_neg))
                 for tk, fk in zip(all_tp.tolist(), all_fp.tolist()))


def exact_optimal_interval(y, score, tp, fp):
    """The closed PC(+) interval where the point (fp, tp) costs no more than any threshold of
    the classifier (all distinct scores, plus flagging nothing): Fractions, or None."""
    n_pos, n_neg = int(y.sum()), int((~y).sum())
    f, t = Fraction(fp, n_neg), Fraction(tp, n_pos)
    rates = _brute_force_rates(np.asarray(y, dtype=bool).tobytes(),
                               np.asarray(score, dtype=np.float64).tobytes())
    lo, hi = Fraction(0), Fraction(1)
    for tpr_k, fpr_k in rates:
        # cost(x) - cost_k(x) = B + (A - B) x <= 0 with A = TPR_k - TPR, B = FPR - FPR_k
        a, b = tpr_k - t, f - fpr_k
        slope = a - b
        if slope == 0:
            if b > 0:
                return None
        elif slope > 0:
            hi = min(hi, -b / slope)
        else:
            lo = max(lo, -b / slope)
    return (lo, hi) if lo <= hi else None


def thresholds_to_try(score, draw_extra):
    distinct = np.unique(score)
    mids = (distinct[1:] + distinct[:-1]) / 2
    return [*distinct.tolist(), *mids.tolist(), float(distinct[-1]) + 1.0,
            float(distinct[0]) - 1.0, *draw_extra]


# --- the point and its intervals ------------------------------------------------------------------

@pytest.mark.slow
@PROPERTY
@given(labelled_scores(max_n=40), st.lists(st.floats(-1e6, 1e6), max_size=3))
def test_pin_equals_brute_force(data, extra):
    y, score = data
    roc = roc_curve(y, score, name="m")
    for t in thresholds_to_try(score, extra):
        pin = pin_threshold(roc, t)
        tp, fp, fn, tn = counts_at(y, score, t)
        assert (pin.tp, pin.fp, pin.fn, pin.tn) == (tp, fp, fn, tn), t
        assert (pin.fpr, pin.tpr) == (fp / (fp + tn), tp / (tp + fn))
        flagged = score[score >= t]
        if flagged.size:
            assert pin.point_threshold == flagged.min()
        else:
            assert math.isnan(pin.point_threshold)
        assert (pin.classifier, pin.threshold) == ("m", t)

        exact = exact_optimal_interval(y, score, tp, fp)
        if exact is None:
            assert pin.optimal_pc is None and not pin.on_hull, t
        else:
            # Both ends are ratios of integers, rounded once: equal to the exact ones rounded.
            assert pin.optimal_pc == (float(exact[0]), float(exact[1])), t

        f, r = Fraction(fp, fp + tn), Fraction(tp, tp + fn)
        if r > f:
            lo, hi = f / (f + r), (1 - f) / (2 - f - r)
            assert pin.beats_trivial_pc == pytest.approx((float(lo), float(hi)), rel=1e-12)
        else:
            assert pin.beats_trivial_pc is None


@pytest.mark.slow
@PROPERTY
@given(labelled_scores(max_n=40))
def test_a_hull_vertex_is_optimal_on_its_envelope_piece(data):
    y, score = data
    roc = roc_curve(y, score, name="m")
    hull = classifier_hull(roc)
    envelope = lower_envelope(hull)
    pieces = {int(v): (envelope.pc[k], envelope.pc[k + 1])
              for k, v in enumerate(envelope.vertex)}
    for v in range(1, hull.size - 1):               # the non-trivial vertices
        pin = pin_threshold(roc, hull.threshold[v])
        assert (pin.fpr, pin.tpr) == (hull.fpr[v], hull.tpr[v])
        if v in pieces:
            assert pin.optimal_pc == pytest.approx(pieces[v], abs=1e-15, rel=1e-12)


def test_hand_cases():
    # Scores of 4 positives and 4 negatives; ROC points (FP, TP): (0,0) (0,2) (1,2) (1,3) (2,4)
    # (4,4). Hull: (0,0) (0,2) (1,3) (2,4) (4,4); (1,2) is under it.
    y = np.array([1, 1, 0, 1, 1, 0, 0, 0], dtype=bool)
    s = np.array([0.9, 0.9, 0.8, 0.7, 0.6, 0.6, 0.2, 0.1])
    roc = roc_curve(y, s, name="gbm")
    under = pin_threshold(roc, 0.8)                   # flags 0.9, 0.9, 0.8: (1, 2)
    assert (under.tp, under.fp, under.fn, under.tn) == (2, 1, 2, 3)
    assert under.optimal_pc is None and not under.on_hull
    assert under.beats_trivial_pc == pytest.approx((1 / 3, 0.75 / 1.25))
    top = pin_threshold(roc, 0.85)                    # between scores: acts as >= 0.9
    assert top.point_threshold == 0.9 and (top.tp, top.fp) == (2, 0)
    # Vertex (0, 2): from PC(+) 0 (vertical first edge) to the edge to (1, 3):
    # ΔFP·P / (ΔFP·P + ΔTP·N) = 4 / (4 + 4) = 0.5.
    assert top.optimal_pc == (0.0, 0.5)
    nothing = pin_threshold(roc, 5.0)
    assert (nothing.tp, nothing.fp) == (0, 0) and math.isnan(nothing.point_threshold)
    assert nothing.optimal_pc == (0.0, 0.0)           # ties with (0, 2) at PC(+) = 0 only
    assert nothing.beats_trivial_pc is None
    everything = pin_threshold(roc, -5.0)
    assert (everything.tp, everything.fp) == (4, 4) and everything.point_threshold == 0.1
    # Last hull edge (2,4) -> (4,4) is horizontal: flagging everything is optimal at 1 only.
    assert everything.optimal_pc == (1.0, 1.0)
    # Inside an edge: (1,3) -> (2,4) ... no ROC point; (0,2) -> (1,3) neither. A collinear
    # point: add one by counts.
    counted = roc_from_counts([0, 2, 1, 4], [0, 2, 1, 4], [4, 2, 3, 0], [4, 2, 3, 0],
                              threshold=[9.0, 2.0, 5.0, 1.0], name="c")
    mid = pin_threshold(counted, 3.0)                 # the point (2, 2) on the diagonal
    assert (mid.tp, mid.fp) == (1, 1)
    assert mid.optimal_pc == (0.5, 0.5)


def test_refusals():
    roc = roc_curve([0, 1, 0, 1], [0.1, 0.4, 0.3, 0.9], name="m")
    with pytest.raises(ParameterError, match="finite"):
        pin_threshold(roc, math.nan)
    counted = roc_from_counts([3], [1], [1], [3], name="c")
    with pytest.raises(ParameterError, match="c has no score thresholds"):
        pin_threshold(counted, 0.5)


def test_a_large_classifier_against_brute_force():
    rng = np.random.default_rng(4)
    n = 20_000
    y = rng.random(n) < 0.07
    score = np.round(rng.normal(size=n) + 1.3 * y, 2)          # many ties
    roc = roc_curve(y, score, name="big")
    for t in (-10.0, -0.5, 0.0, 0.37, 1.0, 1.005, 2.5, 10.0):
        pin = pin_threshold(roc, t)
        assert (pin.tp, pin.fp, pin.fn, pin.tn) == counts_at(y, score, t)
        exact = exact_optimal_interval(y, score, pin.tp, pin.fp) if pin.on_hull else None
        if exact is not None:
            assert pin.optimal_pc == (float(exact[0]), float(exact[1]))


# --- prices at operating conditions ---------------------------------------------------------------

def brute_price(y, score, t, cond, volume):
    """Weighted sums over the examples: each positive weighs p(+)·volume / P, each negative
    p(−)·volume / N; the cost of a case is the cost of its decision."""
    flagged = score >= t
    w = np.where(y, cond.p_pos / y.sum(), (1 - cond.p_pos) / (~y).sum()) * volume
    tp, fp = w[y & flagged].sum(), w[~y & flagged].sum()
    fn, tn = w[y & ~flagged].sum(), w[~y & ~flagged].sum()
    cost = (tp * cond.cost_tp + fn * cond.cost_fn + fp * cond.cost_fp + tn * cond.cost_tn) / volume
    return tp, fn, fp, tn, cost


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(labelled_scores(max_n=40), st.floats(1e-4, 1 - 1e-4), st.floats(0.01, 100),
       st.floats(0.01, 100), st.floats(-50, 0), st.floats(-50, 0), st.floats(1, 1e6))
@pytest.mark.slow
def test_point_metrics_equal_brute_force(data, p, cost_fn, cost_fp, cost_tp, cost_tn, volume):
    y, score = data
    cond = OperatingCondition(p, cost_fn, cost_fp, cost_tp, cost_tn)
    # The best choice by brute force: every threshold of the classifier, and flagging nothing.
    candidates = [*np.unique(score).tolist(), float(score.max()) + 1.0]
    best_t = min(candidates, key=lambda t: brute_price(y, score, t, cond, volume)[4])
    best_cost = brute_price(y, score, best_t, cond, volume)[4]
    roc = roc_curve(y, score, name="m")
    best = pin_threshold(roc, best_t)
    scale = abs(cond.cost_scale) + abs(cond.constant_cost)
    for t in candidates[::3] + [best_t]:
        pin = pin_threshold(roc, t)
        m = point_metrics(cond, pin.fpr, pin.tpr, best=(best.fpr, best.tpr), volume=volume)
        tp, fn, fp, tn, cost = brute_price(y, score, t, cond, volume)
        assert (m.tp, m.fn, m.fp, m.tn) == pytest.approx((tp, fn, fp, tn), rel=1e-9, abs=1e-9)
        assert m.recall == pytest.approx(tp / (tp + fn), rel=1e-12)
        assert m.specificity == pytest.approx(tn / (tn + fp), rel=1e-12)
        if tp + fp > 0:
            assert m.precision == pytest.approx(tp / (tp + fp), rel=1e-9)
        else:
            assert math.isnan(m.precision)
        if tn + fn > 0:
            assert m.npv == pytest.approx(tn / (tn + fn), rel=1e-9)
        else:
            assert math.isnan(m.npv)
        assert m.f1 == pytest.approx(2 * tp / (2 * tp + fp + fn), rel=1e-9, abs=1e-15)
        assert m.expected_cost == pytest.approx(cost, rel=1e-9, abs=1e-12 * scale)
        assert m.period_cost == pytest.approx(cost * volume, rel=1e-9, abs=1e-12 * scale * volume)
        assert m.regret == pytest.approx(cost - best_cost, rel=1e-9, abs=1e-12 * scale)
        assert m.regret >= -1e-12 * scale
        assert m.period_regret == pytest.approx(m.regret * volume)
        if best_cost > 0:
            assert m.regret_share == pytest.approx(m.regret / best_cost)
        else:
            assert math.isnan(m.regret_share)
