"""Operating conditions: PC(+) (paper 000 eq. 1), iso-performance slopes, extreme values."""

from __future__ import annotations

import math
from fractions import Fraction

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from costdash.conditions import (
    OperatingCondition,
    pc_from_conditions,
    pc_from_slope,
    slope_from_pc,
)
from costdash.errors import ParameterError


def exact_pc(p, cfn, cfp) -> Fraction:
    """PC(+) = p(+)C(-|+) / (p(+)C(-|+) + p(-)C(+|-)), exactly, from the float inputs."""
    p, cfn, cfp = Fraction(p), Fraction(cfn), Fraction(cfp)
    return p * cfn / (p * cfn + (1 - p) * cfp)


def rel_err(value: float, exact: Fraction) -> float:
    return float(abs(Fraction(value) - exact) / exact)


def test_pc_by_hand():
    # p(+) = 0.2, C(-|+) = 5, C(+|-) = 1: PC(+) = 1 / (1 + 0.8) = 5/9
    c = OperatingCondition(p_pos=0.2, cost_fn=5.0, cost_fp=1.0)
    assert c.pc == pytest.approx(5 / 9, rel=1e-15)
    assert c.one_minus_pc == pytest.approx(4 / 9, rel=1e-15)
    assert c.slope == pytest.approx(0.8, rel=1e-15)  # m = 0.8 * 1 / (0.2 * 5)
    assert c.cost_scale == pytest.approx(0.2 * 5 + 0.8 * 1)
    # equal costs: PC(+) is p(+)
    assert OperatingCondition(0.3).pc == pytest.approx(0.3, rel=1e-15)
    assert OperatingCondition(0.5).pc == 0.5 and OperatingCondition(0.5).slope == 1.0


def test_slopes_of_scenarios_a_and_b():
    # negatives outnumber positives 10:1; A: equal costs -> 10; B: FN 100x FP -> 1/10
    a = OperatingCondition(p_pos=1 / 11)
    b = OperatingCondition(p_pos=1 / 11, cost_fn=100.0, cost_fp=1.0)
    assert a.slope == pytest.approx(10.0, rel=1e-14)
    assert b.slope == pytest.approx(0.1, rel=1e-14)
    assert a.pc == pytest.approx(1 / 11, rel=1e-14)
    assert b.pc == pytest.approx(1 / (1 + 0.1), rel=1e-14)  # = 100 / 110
    assert a.log_slope == pytest.approx(math.log(10), rel=1e-15)


def test_sensitivity_range_of_the_paper():
    # 10:1, C(+|-) in [$5, $10], C(-|+) in [$500, $1000] -> slopes in [1/20, 1/5]
    corners = [OperatingCondition(1 / 11, fn, fp).slope for fn in (500, 1000) for fp in (5, 10)]
    assert min(corners) == pytest.approx(1 / 20, rel=1e-14)
    assert max(corners) == pytest.approx(1 / 5, rel=1e-14)


@settings(max_examples=200, deadline=None)
@given(st.floats(1e-6, 1 - 1e-6), st.floats(1e-3, 1e3), st.floats(1e-3, 1e3))
def test_pc_matches_exact_fraction_and_conversions_round_trip(p, cfn, cfp):
    c = OperatingCondition(p, cfn, cfp)
    exact = exact_pc(p, cfn, cfp)
    assert rel_err(c.pc, exact) < 1e-13
    assert rel_err(c.one_minus_pc, 1 - exact) < 1e-13
    assert float(pc_from_conditions(p, cfn, cfp)) == pytest.approx(c.pc, rel=1e-13)
    assert float(pc_from_slope(c.slope)) == pytest.approx(c.pc, rel=1e-13)
    assert float(slope_from_pc(c.pc)) == pytest.approx(c.slope, rel=1e-9)
    # from_pc: equal costs with p(+) = PC(+) gives back the same PC(+) and slope
    back = OperatingCondition.from_pc(c.pc)
    assert back.pc == pytest.approx(c.pc, rel=1e-13)
    assert back.slope == pytest.approx(c.slope, rel=1e-9)
    assert (back.cost_fn, back.cost_fp) == (1.0, 1.0)


def test_conversion_functions_vectorised_and_ends():
    x = np.array([0.0, 0.25, 0.5, 1.0])
    np.testing.assert_allclose(slope_from_pc(x), [np.inf, 3.0, 1.0, 0.0])
    np.testing.assert_allclose(pc_from_slope([np.inf, 3.0, 1.0, 0.0]), x)
    np.testing.assert_allclose(pc_from_conditions([0.2, 0.5], [5.0, 1.0], [1.0, 3.0]),
                               [5 / 9, 1 / 4], rtol=1e-14)


@pytest.mark.parametrize("p, cfn, cfp", [
    (1e-9, 1.0, 1.0),          # PC(+) ~ 1e-9
    (1 - 1e-9, 1.0, 1.0),      # 1 - PC(+) ~ 1e-9
    (0.5, 1e9, 1.0),           # cost ratio 1e9: 1 - PC(+) ~ 1e-9
    (0.5, 1.0, 1e9),           # PC(+) ~ 1e-9
    (1e-9, 1.0, 1e9),          # both: PC(+) ~ 1e-18
    (1 - 1e-9, 1e9, 1.0),      # both: 1 - PC(+) ~ 1e-18
    (1e-9, 1e9, 1.0),          # they cancel: PC(+) ~ 1/2
    (1e-12, 7.0, 3e8),
])
def test_extreme_priors_and_cost_ratios_keep_relative_precision(p, cfn, cfp):
    c = OperatingCondition(p, cfn, cfp)
    exact = exact_pc(p, cfn, cfp)
    assert rel_err(c.pc, exact) < 1e-12
    assert rel_err(c.one_minus_pc, 1 - exact) < 1e-12
    # the slope itself: m = p(-)C(+|-) / (p(+)C(-|+))
    m_exact = (1 - Fraction(p)) * Fraction(cfp) / (Fraction(p) * Fraction(cfn))
    assert rel_err(c.slope, m_exact) < 1e-12
    # the textbook formula loses the small side here; ours does not
    assert c.pc + c.one_minus_pc == pytest.approx(1.0, abs=1e-15)


def test_beyond_float_range_is_ordered_not_an_error():
    c = OperatingCondition(p_pos=1e-300, cost_fn=1e-10, cost_fp=1e300)
    assert c.slope == math.inf
    assert c.log_slope == pytest.approx(math.log(1e300) - math.log(1e-300) - math.log(1e-10))
    assert c.pc == 0.0 or c.pc < 1e-300
    assert c.one_minus_pc == 1.0


@settings(max_examples=200, deadline=None)
@given(st.floats(1e-6, 1 - 1e-6), st.floats(1e-3, 1e3), st.floats(1e-3, 1e3),
       st.integers(0, 20), st.integers(0, 20), st.integers(1, 20), st.integers(1, 20))
def test_expected_cost_identity(p, cfn, cfp, fp, tp, n_neg_extra, n_pos_extra):
    n_neg, n_pos = fp + n_neg_extra, tp + n_pos_extra
    fpr, tpr = fp / n_neg, tp / n_pos
    c = OperatingCondition(p, cfn, cfp)
    ne = c.normalized_cost(fpr, tpr)
    direct = p * (1 - tpr) * cfn + (1 - p) * fpr * cfp  # paper 004 eq. 3
    assert c.expected_cost(ne) == pytest.approx(direct, rel=1e-12, abs=1e-300)
    # NE = E[C] / (p(+)C(-|+) + p(-)C(+|-)) (eq. 5), between 0 and 1
    assert ne == pytest.approx(direct / (p * cfn + (1 - p) * cfp), rel=1e-12, abs=1e-300)
    assert 0.0 <= ne <= 1.0 + 1e-15


def test_normalized_cost_by_hand():
    # FP = 0.09, TP = 0.36 (paper 004 §2.2): NE = 0.09 at PC(+) = 0, 0.64 at 1, linear between
    assert OperatingCondition.from_pc(0.5).normalized_cost(0.09, 0.36) == pytest.approx(0.365)
    c = OperatingCondition(0.25, cost_fn=2.0, cost_fp=3.0)  # PC = 0.5 / (0.5 + 2.25) = 2/11
    assert c.pc == pytest.approx(2 / 11)
    assert c.normalized_cost(0.2, 0.7) == pytest.approx(0.3 * 2 / 11 + 0.2 * 9 / 11)
    assert c.expected_cost(c.normalized_cost(0.2, 0.7)) == pytest.approx(
        0.25 * 0.3 * 2.0 + 0.75 * 0.2 * 3.0)


@pytest.mark.parametrize("kwargs", [
    {"p_pos": 0.0}, {"p_pos": 1.0}, {"p_pos": -0.1}, {"p_pos": 1.5}, {"p_pos": math.nan},
    {"p_pos": math.inf}, {"p_pos": 0.5, "cost_fn": 0.0}, {"p_pos": 0.5, "cost_fn": -1.0},
    {"p_pos": 0.5, "cost_fp": 0.0}, {"p_pos": 0.5, "cost_fp": math.nan},
    {"p_pos": 0.5, "cost_fn": math.inf}, {"p_pos": 0.5, "cost_fp": -math.inf},
])
def test_invalid_conditions_raise_parameter_error(kwargs):
    with pytest.raises(ParameterError):
        OperatingCondition(**kwargs)


# --- costs of the correct decisions (Weka's full cost/benefit matrix) ----------------------------

def test_benefits_hand_worked():
    # p = 0.2, C(-|+) = 10, C(+|-) = 2, a detected positive earns 5 (C(+|+) = -5), C(-|-) = 0.
    cond = OperatingCondition(0.2, 10.0, 2.0, cost_tp=-5.0)
    assert cond.fn_difference == 15.0 and cond.fp_difference == 2.0
    assert cond.slope == pytest.approx(0.8 * 2 / (0.2 * 15), rel=1e-15)
    assert cond.pc == pytest.approx(3 / 4.6, rel=1e-15)
    assert cond.constant_cost == pytest.approx(-1.0, rel=1e-15)
    # By the four cells at (FPR, TPR) = (0.1, 0.8): 0.2 (0.8·-5 + 0.2·10) + 0.8 (0.1·2 + 0.9·0).
    by_cells = 0.2 * (0.8 * -5 + 0.2 * 10) + 0.8 * (0.1 * 2 + 0.9 * 0)
    assert cond.expected_cost(cond.normalized_cost(0.1, 0.8)) == pytest.approx(by_cells, rel=1e-12)


@given(st.floats(1e-6, 1 - 1e-6), st.floats(1e-3, 1e3), st.floats(1e-3, 1e3),
       st.floats(-1e3, 1e3), st.floats(-1e3, 1e3), st.floats(0, 1), st.floats(0, 1))
def test_benefits_shift_the_money_and_decide_through_the_differences(p, fn, fp, tp, tn, f, t):
    if not (fn - tp > 0 and fp - tn > 0):
        with pytest.raises(ParameterError, match="must be positive"):
            OperatingCondition(p, fn, fp, tp, tn)
        return
    full = OperatingCondition(p, fn, fp, tp, tn)  # any positive difference is taken
    if not (fn - tp > 1e-6 and fp - tn > 1e-6):
        return  # a difference of ~1e-19 (found by hypothesis): the comparisons lose every digit
    differences = OperatingCondition(p, fn - tp, fp - tn)
    assert full.pc == pytest.approx(differences.pc, rel=1e-9)
    assert full.normalized_cost(f, t) == pytest.approx(differences.normalized_cost(f, t),
                                                        rel=1e-9, abs=1e-15)
    by_cells = p * (t * tp + (1 - t) * fn) + (1 - p) * (f * fp + (1 - f) * tn)
    got = full.expected_cost(full.normalized_cost(f, t))
    assert got == pytest.approx(by_cells, rel=1e-9, abs=1e-9 * (abs(fn) + abs(fp) + abs(tp)
                                                                 + abs(tn)))


def test_a_gain_dressed_as_a_cost_is_refused_in_words():
    with pytest.raises(ParameterError, match=r"C\(−\|\+\) − C\(\+\|\+\) must be positive"):
        OperatingCondition(0.1, 5.0, 1.0, cost_tp=5.0)
    with pytest.raises(ParameterError, match=r"C\(\+\|−\) − C\(−\|−\) must be positive"):
        OperatingCondition(0.1, 5.0, 1.0, cost_tn=2.0)


# --- the saving against the trivial choices, in the money shown ----------------------------------

def test_saving_is_a_share_of_the_money_the_trivial_choice_costs():
    # Issue 24: p(+) 0.02, C(−|+) 40, C(+|−) 2, C(+|+) −5. Flagging nothing costs
    # 0.02 · 40 = 0.8 a case whatever C(+|+) is (no positive is detected); a choice costing
    # −0.0616 a case saves 0.8616, 107.7 % of it, not the 96 % of the part above the constant.
    cond = OperatingCondition(0.02, 40.0, 2.0, cost_tp=-5.0)
    assert cond.pc <= cond.one_minus_pc  # flagging nothing is the better trivial choice
    assert cond.trivial_expected_cost == pytest.approx(0.8, rel=1e-14)
    # The normalized cost of a choice costing -0.0616 a case: (-0.0616 - constant) / scale.
    ne = (-0.0616 - cond.constant_cost) / cond.cost_scale
    assert cond.expected_cost(ne) == pytest.approx(-0.0616, rel=1e-12)
    assert cond.saving_money(ne) == pytest.approx(0.8616, rel=1e-12)
    assert cond.saving_vs_trivial(ne) == pytest.approx(0.8616 / 0.8, rel=1e-12)
    assert 1 - ne / cond.trivial_normalized_cost == pytest.approx(0.957, abs=1e-3)  # the old basis


@given(st.floats(1e-4, 1 - 1e-4), st.floats(1e-2, 1e2), st.floats(1e-2, 1e2),
       st.floats(-1e2, 1e2), st.floats(-1e2, 1e2), st.floats(0, 1), st.floats(0, 1))
def test_saving_equals_the_difference_of_the_money_by_cells(p, fn, fp, tp, tn, f, t):
    if not (fn - tp > 1e-3 and fp - tn > 1e-3):
        return
    cond = OperatingCondition(p, fn, fp, tp, tn)
    P, FN, FP, TP, TN = map(Fraction, (p, fn, fp, tp, tn))

    def money(fpr, tpr):        # exact, by the four cells
        fpr, tpr = Fraction(fpr), Fraction(tpr)
        return P * (tpr * TP + (1 - tpr) * FN) + (1 - P) * (fpr * FP + (1 - fpr) * TN)

    trivial = min(money(0, 0), money(1, 1))
    saved = trivial - money(f, t)
    scale = float(abs(FN) + abs(FP) + abs(TP) + abs(TN))
    assert cond.trivial_expected_cost == pytest.approx(float(trivial), rel=1e-9,
                                                       abs=1e-12 * scale)
    ne = cond.normalized_cost(f, t)
    assert cond.saving_money(ne) == pytest.approx(float(saved), rel=1e-9, abs=1e-12 * scale)
    share = cond.saving_vs_trivial(ne)
    if cond.trivial_expected_cost > 0:
        # The percentage is of the money: trivial x (1 - share) is what the choice costs.
        assert cond.trivial_expected_cost * (1 - share) == pytest.approx(
            cond.expected_cost(ne), rel=1e-9, abs=1e-9 * scale)
    else:
        assert math.isnan(share)   # no share of a cost that is none, or a gain
