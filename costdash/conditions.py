"""Operating conditions: the class prior p(+) and the two misclassification costs.

Everything funnels through the log of the iso-performance slope,

    log m = log p(-) + log C(+|-) - log p(+) - log C(-|+),

because priors down to 1e-9 and cost ratios up to 1e9 put PC(+) within 1e-18 of 0 or 1, where the
textbook ratio would round 1 - PC(+) to zero. PC(+) = 1 / (1 + m) (paper 000 eq. 1 divided through
by p(+)C(-|+)), so PC(+) and 1 - PC(+) are both logistic functions of log m, each computed without
cancellation.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from numpy.typing import ArrayLike, NDArray

from costdash.errors import ParameterError


def _expit_neg(log_m: float) -> float:
    """1 / (1 + exp(log_m)) without overflow for large |log_m|."""
    if log_m >= 0:
        e = math.exp(-log_m)
        return e / (1.0 + e)
    return 1.0 / (1.0 + math.exp(log_m))


@dataclass(frozen=True)
class OperatingCondition:
    """One set of operating conditions.

    Attributes
    ----------
    p_pos : float
        Probability of the positive class, in (0, 1).
    cost_fn : float
        C(-|+), the cost of a false negative (a positive classified negative), > 0.
    cost_fp : float
        C(+|-), the cost of a false positive (a negative classified positive), > 0.
    cost_tp, cost_tn : float
        C(+|+) and C(-|-), the costs of the correct decisions (default 0; a benefit is a
        negative cost), as in Weka's cost/benefit matrix. Each must be below the cost of the
        matching error.

    Notes
    -----
    Decisions depend only on the differences C(-|+) - C(+|+) and C(+|-) - C(-|-): the expected
    cost of a ROC point (FPR, TPR) is

        p(+)[TPR C(+|+) + (1 - TPR) C(-|+)] + p(-)[FPR C(+|-) + (1 - FPR) C(-|-)]
          = p(+)C(+|+) + p(-)C(-|-)                                   (the constant part)
          + p(+)(1 - TPR)(C(-|+) - C(+|+)) + p(-)FPR(C(+|-) - C(-|-)),

    so PC(+), the slope and the normalized cost use the differences, and the money figures add
    the constant part (:attr:`constant_cost`).
    """

    p_pos: float
    cost_fn: float = 1.0
    cost_fp: float = 1.0
    cost_tp: float = 0.0
    cost_tn: float = 0.0

    def __post_init__(self) -> None:
        if not (0.0 < self.p_pos < 1.0) or not math.isfinite(self.p_pos):
            raise ParameterError(f"p(+) must lie strictly between 0 and 1, got {self.p_pos!r}")
        for name, value in (("cost_fn", self.cost_fn), ("cost_fp", self.cost_fp)):
            if not (value > 0.0) or not math.isfinite(value):
                raise ParameterError(f"{name} must be a positive finite number, got {value!r}")
        for name, value in (("cost_tp", self.cost_tp), ("cost_tn", self.cost_tn)):
            if not math.isfinite(value):
                raise ParameterError(f"{name} must be a finite number, got {value!r}")
        for error, right, what in ((self.cost_fn, self.cost_tp, "C(−|+) − C(+|+)"),
                                   (self.cost_fp, self.cost_tn, "C(+|−) − C(−|−)")):
            if not error - right > 0.0:
                raise ParameterError(
                    f"{what} must be positive (an error must cost more than the correct "
                    f"decision, or every case would best be decided wrongly); got "
                    f"{error:g} − {right:g} = {error - right:g}")

    @property
    def fn_difference(self) -> float:
        """C(-|+) - C(+|+): what a missed positive costs beyond a detected one."""
        return self.cost_fn - self.cost_tp

    @property
    def fp_difference(self) -> float:
        """C(+|-) - C(-|-): what a false alarm costs beyond a correct rejection."""
        return self.cost_fp - self.cost_tn

    @property
    def constant_cost(self) -> float:
        """p(+)C(+|+) + p(-)C(-|-): the part of the expected cost no decision changes."""
        return self.p_pos * self.cost_tp + (1.0 - self.p_pos) * self.cost_tn

    @property
    def log_slope(self) -> float:
        """Natural log of the iso-performance slope m = p(-)C(+|-) / (p(+)C(-|+)), with the
        costs' differences (see Notes)."""
        return (math.log1p(-self.p_pos) + math.log(self.fp_difference)
                - math.log(self.p_pos) - math.log(self.fn_difference))

    @property
    def slope(self) -> float:
        """The iso-performance slope m in ROC space (paper 001); may be 0 or inf past float range."""
        try:
            return math.exp(self.log_slope)
        except OverflowError:
            return math.inf

    @property
    def pc(self) -> float:
        """PC(+), the probability-cost value (paper 000 eq. 1): the x of cost space."""
        return _expit_neg(self.log_slope)

    @property
    def one_minus_pc(self) -> float:
        """1 - PC(+), computed directly so it keeps full relative precision near PC(+) = 1."""
        return _expit_neg(-self.log_slope)

    @property
    def cost_scale(self) -> float:
        """p(+)(C(-|+) - C(+|+)) + p(-)(C(+|-) - C(-|-)): normalized expected cost times this,
        plus :attr:`constant_cost`, is the cost per example."""
        return self.p_pos * self.fn_difference + (1.0 - self.p_pos) * self.fp_difference

    def expected_cost(self, normalized_cost: float) -> float:
        """Expected cost per example, in the costs' units, of a given normalized expected cost
        (the constant part of correct decisions included)."""
        return normalized_cost * self.cost_scale + self.constant_cost

    def normalized_cost(self, fpr: float, tpr: float) -> float:
        """Normalized expected cost of the ROC point (fpr, tpr) under these conditions."""
        return (1.0 - tpr) * self.pc + fpr * self.one_minus_pc

    @property
    def trivial_normalized_cost(self) -> float:
        """Normalized cost of the better trivial classifier: min(PC(+), 1 - PC(+)) (flagging
        nothing costs PC(+), flagging everything 1 - PC(+); paper 000 §2)."""
        return min(self.pc, self.one_minus_pc)

    @property
    def trivial_expected_cost(self) -> float:
        """Expected cost per example of the better trivial classifier, the constant part of
        correct decisions included (the money "flagging nothing" or "flagging everything"
        costs)."""
        return self.expected_cost(self.trivial_normalized_cost)

    def saving_money(self, normalized_cost: float) -> float:
        """Expected cost per example that ``normalized_cost`` saves against the better trivial
        classifier (negative when it costs more): the constant part cancels."""
        return (self.trivial_normalized_cost - normalized_cost) * self.cost_scale

    def saving_vs_trivial(self, normalized_cost: float) -> float:
        """The saving (:meth:`saving_money`) as a fraction of the money the better trivial
        classifier costs (:attr:`trivial_expected_cost`), so that the percentage matches the
        money shown beside it; NaN when that cost is zero or a gain (benefits of correct
        decisions above the errors' cost), where a share of it means nothing."""
        trivial = self.trivial_expected_cost
        return self.saving_money(normalized_cost) / trivial if trivial > 0.0 else math.nan

    def expected_counts(self, fpr: float, tpr: float, volume: float) -> tuple[float, float,
                                                                              float, float]:
        """Expected (TP, FN, FP, TN) among ``volume`` cases at the ROC point (fpr, tpr)."""
        positives, negatives = self.p_pos * volume, (1.0 - self.p_pos) * volume
        return (tpr * positives, (1.0 - tpr) * positives, fpr * negatives,
                (1.0 - fpr) * negatives)

    @classmethod
    def from_pc(cls, pc: float) -> OperatingCondition:
        """Equal costs and p(+) = PC(+): the canonical conditions behind a PC(+) value."""
        return cls(p_pos=pc, cost_fn=1.0, cost_fp=1.0)


DEFAULT_COST = 1.0
"""A misclassification cost not given."""


def default_condition(prevalence: float, p_pos: float | None = None,
                      cost_fn: float | None = None, cost_fp: float | None = None,
                      cost_tp: float | None = None, cost_tn: float | None = None
                      ) -> OperatingCondition:
    """The conditions meant when some are not given: p(+) is the data's prevalence, the errors
    cost 1 and the correct decisions 0.

    The one place this rule is written: the CLI, :func:`costdash.analyze`, the view
    (:meth:`costdash.view.View.condition`), the API, the report and every page use it.
    """
    return OperatingCondition(prevalence if p_pos is None else p_pos,
                              DEFAULT_COST if cost_fn is None else cost_fn,
                              DEFAULT_COST if cost_fp is None else cost_fp,
                              0.0 if cost_tp is None else cost_tp,
                              0.0 if cost_tn is None else cost_tn)


def pc_from_slope(slope: ArrayLike) -> NDArray[np.float64]:
    """PC(+) = 1 / (1 + m) for iso-performance slopes m >= 0 (inf gives 0)."""
    m = np.asarray(slope, dtype=np.float64)
    with np.errstate(divide="ignore", over="ignore"):
        return 1.0 / (1.0 + m)


def slope_from_pc(pc: ArrayLike) -> NDArray[np.float64]:
    """The iso-performance slope m = (1 - PC(+)) / PC(+) (inf at PC(+) = 0)."""
    x = np.asarray(pc, dtype=np.float64)
    with np.errstate(divide="ignore"):
        return (1.0 - x) / x


def pc_from_conditions(p_pos: ArrayLike, cost_fn: ArrayLike, cost_fp: ArrayLike) -> NDArray[np.float64]:
    """Vectorised PC(+) (paper 000 eq. 1), computed through log m like :class:`OperatingCondition`."""
    p = np.asarray(p_pos, dtype=np.float64)
    log_m = np.log1p(-p) + np.log(cost_fp) - np.log(p) - np.log(cost_fn)
    with np.errstate(over="ignore"):
        return 1.0 / (1.0 + np.exp(log_m))
