"""Choices that hold up when the operating conditions are only known to lie in ranges.

Given a box of conditions (ranges of p(+), C(-|+) and C(+|-); the sensitivity box of paper 001)
or a Beta distribution over PC(+), recommend a *fixed* choice (one classifier, one threshold):

* **Bayes**: the least expected cost with the conditions uniform over the box (p(+), C(-|+) and
  C(+|-) independent), or with PC(+) ~ Beta(a, b);
* **minimax regret**: the smallest worst-case regret against the lower envelope of all classifiers
  (what the best choice for the true conditions would have saved), in money per period;

and say how much switching by condition (the policy table of :mod:`costdash.decision`) is worth.

Why corners suffice. With u = p(+)(C(-|+) - C(+|+)) and w = (1 - p(+))(C(+|-) - C(-|-)), the
expected cost of ROC point (F, T) is u(1 - T) + wF plus a part no choice changes, so the regret
of a fixed point, max over hull vertices v of u(T_v - T) + w(F - F_v), is a maximum of linear
functions of (u, w): convex. The box's image in (u, w) lies in the convex hull of the images of
its 8 corners (for fixed costs (u, w) moves on a segment as p(+) varies), so the worst-case
regret is at a corner. (In cost space alone: NE_v(x) minus the concave envelope is convex in
PC(+), so over a PC(+) interval it is worst at an end.)

The Bayes choice needs only the mean of (u, w): E[u] = E[p(+)]·E[C(-|+) - C(+|+)] and
E[w] = E[1 - p(+)]·E[C(+|-) - C(-|-)] (independence), so it is the hull vertex optimal at the
box's centre; with PC(+) ~ Beta(a, b), the vertex optimal at PC(+) = a/(a + b).
"""

from __future__ import annotations

import itertools
import math
from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray

from costdash.analysis import Analysis
from costdash.conditions import OperatingCondition
from costdash.costspace import lower_envelope
from costdash.criteria import sensitivity
from costdash.errors import ParameterError
from costdash.hull import ALL_NEGATIVE, ALL_POSITIVE, RocHull, optimal_indices

__all__ = ["Candidates", "ConditionBox", "RobustChoice", "RobustPcChoice", "RobustPick",
           "candidates_of", "regret_at", "robust_choice", "robust_choice_pc", "robust_to_dict"]


@dataclass(frozen=True)
class ConditionBox:
    """Ranges of p(+) and of the two misclassification costs (the costs of the correct
    decisions fixed), every corner a valid :class:`~costdash.conditions.OperatingCondition`."""

    p_pos: tuple[float, float]
    cost_fn: tuple[float, float]
    cost_fp: tuple[float, float]
    cost_tp: float = 0.0
    cost_tn: float = 0.0

    def __post_init__(self) -> None:
        for name, (lo, hi) in (("p(+)", self.p_pos), ("C(-|+)", self.cost_fn),
                               ("C(+|-)", self.cost_fp)):
            if not (math.isfinite(lo) and math.isfinite(hi)) or lo > hi:
                raise ParameterError(f"the range of {name} must be two finite numbers LO <= HI; "
                                     f"got {lo!r} {hi!r}")
        for corner in self.corner_conditions():  # each checked as a condition
            del corner

    @classmethod
    def around(cls, condition: OperatingCondition, p_pos: tuple[float, float] | None = None,
               cost_fn: tuple[float, float] | None = None,
               cost_fp: tuple[float, float] | None = None) -> ConditionBox:
        """The box with the given ranges, the condition's own value for those not given."""
        c = condition
        return cls(p_pos or (c.p_pos, c.p_pos), cost_fn or (c.cost_fn, c.cost_fn),
                   cost_fp or (c.cost_fp, c.cost_fp), c.cost_tp, c.cost_tn)

    def corner_conditions(self) -> list[OperatingCondition]:
        """The 8 corners (fewer distinct ones when a range is a single value)."""
        out = []
        for p, fn, fp in itertools.product(*(sorted(set(r)) for r in
                                             (self.p_pos, self.cost_fn, self.cost_fp))):
            out.append(OperatingCondition(p, fn, fp, self.cost_tp, self.cost_tn))
        return out

    @property
    def centre(self) -> OperatingCondition:
        """The mean condition: each range's midpoint."""
        return OperatingCondition(sum(self.p_pos) / 2.0, sum(self.cost_fn) / 2.0,
                                  sum(self.cost_fp) / 2.0, self.cost_tp, self.cost_tn)


@dataclass(frozen=True, eq=False)
class Candidates:
    """Every fixed choice: each ROC point of each classifier, and the two trivial ones.

    ``threshold`` is NaN for the trivial choices and for counted points without one.
    """

    classifier: tuple[str, ...]
    threshold: NDArray[np.float64]
    fpr: NDArray[np.float64]
    tpr: NDArray[np.float64]


def candidates_of(analysis: Analysis) -> Candidates:
    """The candidates of an analysis: every (classifier, threshold) of every ROC curve (its
    first point, flagging nothing, is the all-negative choice), then all-positive."""
    names: list[str] = [ALL_NEGATIVE]
    thr = [np.array([np.nan])]
    fpr = [np.array([0.0])]
    tpr = [np.array([0.0])]
    for c in analysis.classifiers:
        roc = c.roc
        keep = np.arange(1, roc.size)
        # The last point flags everything: the all-positive choice, added once below.
        keep = keep[~((roc.fp[keep] == roc.n_neg) & (roc.tp[keep] == roc.n_pos))]
        names += [c.name] * keep.size
        thr.append(roc.threshold[keep])
        fpr.append(roc.fpr[keep])
        tpr.append(roc.tpr[keep])
    names.append(ALL_POSITIVE)
    thr.append(np.array([np.nan]))
    fpr.append(np.array([1.0]))
    tpr.append(np.array([1.0]))
    return Candidates(tuple(names), np.concatenate(thr), np.concatenate(fpr), np.concatenate(tpr))


@dataclass(frozen=True)
class RobustPick:
    """One recommended fixed choice; ``value`` is what it was chosen on (worst-case regret or
    expected cost, see :class:`RobustChoice`)."""

    classifier: str
    threshold: float | None
    fpr: float
    tpr: float
    value: float


@dataclass(frozen=True)
class RobustChoice:
    """Robust fixed choices over a box of conditions, in money per period.

    Attributes
    ----------
    box : ConditionBox
    volume : float
        Cases per period: every money figure is per case times ``volume``.
    minimax_regret : RobustPick
        ``value`` = its worst-case regret over the box, per period.
    worst_condition : OperatingCondition
        A corner where that worst case is reached.
    bayes : RobustPick
        ``value`` = its expected cost per period with the conditions uniform over the box.
    bayes_max_regret : float
        The Bayes choice's worst-case regret over the box, per period.
    switching_saving : float
        Expected saving per period of the policy table (the best choice for each condition)
        over the Bayes choice, conditions uniform over the box (Gauss-Legendre, 24 nodes per
        range; see :func:`robust_choice`).
    optimal_choices : tuple of (str, float or None)
        The (classifier, threshold) pairs optimal somewhere in the box (the policy table's
        rows the box reaches), from the corners' PC(+) range.
    worth_switching : bool
        True when no fixed choice keeps the worst-case regret within ``tolerance``: the policy
        table (switch by condition) is then worth it.
    tolerance : float
    """

    box: ConditionBox
    volume: float
    minimax_regret: RobustPick
    worst_condition: OperatingCondition
    bayes: RobustPick
    bayes_max_regret: float
    switching_saving: float
    optimal_choices: tuple[tuple[str, float | None], ...]
    worth_switching: bool
    tolerance: float


_CHUNK = 1 << 18


def _threshold(value: float) -> float | None:
    return float(value) if math.isfinite(value) else None


def _pick(cands: Candidates, i: int, value: float) -> RobustPick:
    return RobustPick(classifier=cands.classifier[i], threshold=_threshold(cands.threshold[i]),
                      fpr=float(cands.fpr[i]), tpr=float(cands.tpr[i]), value=float(value))


def _uw(conditions: list[OperatingCondition]) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
    u = np.array([c.p_pos * c.fn_difference for c in conditions])
    w = np.array([(1.0 - c.p_pos) * c.fp_difference for c in conditions])
    return u, w


def _best_cost(hull: RocHull, u: NDArray[np.float64], w: NDArray[np.float64]) -> NDArray[np.float64]:
    """min over hull vertices of u(1 - T) + wF, for each (u, w) (vectorised)."""
    with np.errstate(divide="ignore"):
        log_m = np.log(w) - np.log(u)
    k = optimal_indices(hull, log_m)
    return u * (1.0 - hull.tpr[k]) + w * hull.fpr[k]


def regret_at(cands: Candidates, hull: RocHull, conditions: list[OperatingCondition]
              ) -> NDArray[np.float64]:
    """Regret per case of every candidate (rows) at every condition (columns)."""
    u, w = _uw(conditions)
    best = _best_cost(hull, u, w)
    return (np.outer(1.0 - cands.tpr, u) + np.outer(cands.fpr, w)) - best[None, :]


def robust_choice(analysis: Analysis, box: ConditionBox, *, volume: float = 1.0,
                  tolerance: float = 0.0) -> RobustChoice:
    """Bayes and minimax-regret fixed choices over ``box``, and whether switching pays.

    Parameters
    ----------
    analysis : Analysis
        Its classifiers' ROC curves give the candidates (every threshold of every classifier,
        and the trivial choices); its hull the envelope regret is measured against.
    box : ConditionBox
    volume : float, optional
        Cases per period for the money figures (default 1: per case).
    tolerance : float, optional
        Worst-case regret per period one accepts from a fixed choice (default 0).
    """
    if not (volume > 0 and math.isfinite(volume)):
        raise ParameterError(f"volume must be a positive number, got {volume!r}")
    cands = candidates_of(analysis)
    hull = analysis.hull
    corners = box.corner_conditions()
    # In chunks: every threshold of 20 classifiers of 1M scores is 20M candidates.
    worst = np.empty(cands.fpr.size)
    u_c, w_c = _uw(corners)
    best_c = _best_cost(hull, u_c, w_c)
    for start in range(0, worst.size, _CHUNK):
        stop = start + _CHUNK
        part = (np.outer(1.0 - cands.tpr[start:stop], u_c) + np.outer(cands.fpr[start:stop], w_c)
                - best_c[None, :])
        worst[start:stop] = part.max(axis=1)
    i_mm = int(np.argmin(worst))
    regret_mm = (u_c * (1.0 - cands.tpr[i_mm]) + w_c * cands.fpr[i_mm]) - best_c
    worst_corner = corners[int(np.argmax(regret_mm))]

    centre = box.centre
    u_bar = centre.p_pos * centre.fn_difference
    w_bar = (1.0 - centre.p_pos) * centre.fp_difference
    expected = u_bar * (1.0 - cands.tpr) + w_bar * cands.fpr
    i_bayes = int(np.argmin(expected))
    constant = centre.constant_cost  # E[p C(+|+) + (1 - p) C(-|-)], linear in p
    bayes_cost = float(expected[i_bayes]) + constant

    # E over the box of the envelope's cost: tensor Gauss-Legendre (the integrand is piecewise
    # smooth, so this is approximate, to ~1e-4 relative; the choices above are exact).
    x, wts = np.polynomial.legendre.leggauss(24)
    axes = []
    for lo, hi in (box.p_pos, box.cost_fn, box.cost_fp):
        axes.append(((lo + hi) / 2.0 + (hi - lo) / 2.0 * x, wts / 2.0))
    (p, wp), (fn, wfn), (fp, wfp) = axes
    P, FN, FP = np.meshgrid(p, fn, fp, indexing="ij")
    W = wp[:, None, None] * wfn[None, :, None] * wfp[None, None, :]
    u = (P * (FN - box.cost_tp)).ravel()
    w = ((1.0 - P) * (FP - box.cost_tn)).ravel()
    policy_cost = float(np.sum(W.ravel() * _best_cost(hull, u, w)))
    saving = (float(expected[i_bayes]) - policy_cost) * volume

    reach = sensitivity(hull, box.p_pos, box.cost_fn, box.cost_fp, cost_tp=box.cost_tp,
                        cost_tn=box.cost_tn)
    choices = tuple(dict.fromkeys((hull.classifier[k], _threshold(hull.threshold[k]))
                                  for k in reach.vertices))
    return RobustChoice(
        box=box, volume=float(volume),
        minimax_regret=_pick(cands, i_mm, worst[i_mm] * volume), worst_condition=worst_corner,
        bayes=_pick(cands, i_bayes, bayes_cost * volume),
        bayes_max_regret=float(worst[i_bayes] * volume), switching_saving=max(saving, 0.0),
        optimal_choices=choices, worth_switching=bool(worst[i_mm] * volume > tolerance),
        tolerance=float(tolerance))


@dataclass(frozen=True)
class RobustPcChoice:
    """Robust fixed choices when only a distribution of PC(+) is known (normalized costs).

    ``bayes.value`` is the expected normalized cost with PC(+) ~ Beta(a, b);
    ``minimax_regret.value`` the worst normalized regret over ``pc_range``.
    """

    beta: tuple[float, float]
    pc_range: tuple[float, float]
    bayes: RobustPick
    minimax_regret: RobustPick


def robust_choice_pc(analysis: Analysis, beta: tuple[float, float] = (1.0, 1.0),
                     pc_range: tuple[float, float] | None = None) -> RobustPcChoice:
    """Bayes (PC(+) ~ Beta(a, b)) and minimax-regret (over ``pc_range``, by default the Beta's
    central 95% interval) fixed choices, in normalized cost."""
    from scipy.stats import beta as beta_dist

    a, b = (float(v) for v in beta)
    if not (a > 0 and b > 0 and math.isfinite(a) and math.isfinite(b)):
        raise ParameterError(f"Beta parameters must be positive and finite, got {beta!r}")
    if pc_range is None:
        pc_range = (float(beta_dist.ppf(0.025, a, b)), float(beta_dist.ppf(0.975, a, b)))
    lo, hi = pc_range
    if not 0.0 <= lo <= hi <= 1.0:
        raise ParameterError(f"a PC(+) range must satisfy 0 <= LO <= HI <= 1, got {pc_range!r}")
    cands = candidates_of(analysis)
    mean = a / (a + b)
    expected = (1.0 - cands.tpr) * mean + cands.fpr * (1.0 - mean)
    i_bayes = int(np.argmin(expected))
    ends = np.array([lo, hi])
    ne = np.outer(1.0 - cands.tpr, ends) + np.outer(cands.fpr, 1.0 - ends)
    env = lower_envelope(analysis.hull)(ends)
    worst = (ne - env[None, :]).max(axis=1)
    i_mm = int(np.argmin(worst))
    return RobustPcChoice(beta=(a, b), pc_range=(float(lo), float(hi)),
                          bayes=_pick(cands, i_bayes, expected[i_bayes]),
                          minimax_regret=_pick(cands, i_mm, worst[i_mm]))


def robust_to_dict(choice: RobustChoice) -> dict:
    """The ``"robust"`` JSON of ``costdash decide``: ``{"minimax_regret": {classifier,
    threshold, max_regret}, "bayes": {classifier, threshold, expected_cost}, ...}`` (money per
    period; a trivial choice's threshold is null)."""
    box = choice.box
    wc = choice.worst_condition
    mm, by = choice.minimax_regret, choice.bayes
    return {
        "minimax_regret": {"classifier": mm.classifier, "threshold": mm.threshold,
                           "max_regret": mm.value, "fpr": mm.fpr, "tpr": mm.tpr,
                           "worst_condition": {"p_pos": wc.p_pos, "cost_fn": wc.cost_fn,
                                               "cost_fp": wc.cost_fp, "pc": wc.pc}},
        "bayes": {"classifier": by.classifier, "threshold": by.threshold,
                  "expected_cost": by.value, "fpr": by.fpr, "tpr": by.tpr,
                  "max_regret": choice.bayes_max_regret},
        "box": {"p_pos": list(box.p_pos), "cost_fn": list(box.cost_fn),
                "cost_fp": list(box.cost_fp), "cost_tp": box.cost_tp, "cost_tn": box.cost_tn},
        "volume": choice.volume,
        "switching": {"worth_it": choice.worth_switching, "tolerance": choice.tolerance,
                      "expected_saving": choice.switching_saving,
                      "optimal_choices": [{"classifier": c, "threshold": t}
                                          for c, t in choice.optimal_choices]},
    }
