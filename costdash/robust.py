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
        over the Bayes choice, conditions uniform over the box: integrated in closed form
        between the policy's breakpoints, exact up to rounding.
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

    saving = _switching_saving(hull, box, cands.fpr[i_bayes], cands.tpr[i_bayes]) * volume

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


# --- the expected saving of switching, in closed form -------------------------------------------
#
# With U = P·A and W = (1 - P)·B (P = p(+), A = C(-|+) - C(+|+), B = C(+|-) - C(-|-), independent
# and uniform over their ranges), the cost per case of ROC point (F, T) is U(1 - T) + WF plus the
# constant part. Walking the hull from the Bayes vertex, the best vertex for (U, W) gains
# (ΔT·U - ΔF·W)+ on each edge to the right and (ΔF·W - ΔT·U)+ on each edge to the left (the edges'
# slopes decrease, so the gains are positive on a run of edges next to the Bayes vertex and 0
# beyond), so the saving is a sum of expected hinges E[(s·P·A - (1 - P)·B)+], each a positive
# quantity computed without subtracting two large expected costs.
#
# One hinge, written with r = B/A and y = r/(s + r) (the p(+) at which the edge's two ends cost
# the same): E[(s·P·A - (1 - P)·B)+] = E[A·ψ(B/A)], ψ(r) = (s + r)·E[(P - y)+], which is linear in
# r for y <= p0, 0 for y >= p1, and s(p1 - y)²/(2(p1 - p0)(1 - y)) between. E[A·g(B/A)] is the
# integral of g against the density of r weighted by A: c0 + c3/r³ on each of at most three
# pieces (A and B both ranges: (min(a1, b1/r)³ - max(a0, b0/r)³)/(3 Δa Δb); A a single value:
# a²/Δb; B a single value: b²/(Δa r³)). So every piece integrates in closed form: powers of r on
# the linear part, powers of y and 1 - y with one logarithm (substituting y) between. Differences
# are written in the pieces' widths (log1p, products) so narrow pieces keep their precision.

_NARROW = 2.0 ** -26
"""A range narrower than this fraction of its size is taken as its midpoint. The closed forms
divide by the width, losing about eps·size/width of relative precision; the midpoint is off by
at most width/size (the hinge is convex and piecewise linear): both stay below ~1.5e-8."""


def _span(lo: float, hi: float) -> tuple[float, float]:
    if hi - lo <= _NARROW * max(abs(lo), abs(hi)):
        mid = (lo + hi) / 2.0
        return mid, mid
    return float(lo), float(hi)


def _density_pieces(a: tuple[float, float], b: tuple[float, float]
                    ) -> list[tuple[float, float, float, float]]:
    """(r_from, r_to, c0, c3): E[A·g(B/A)] = Σ ∫ g(r)(c0 + c3/r³) dr over the pieces (A, B
    ranges, at least one of them wider than a single value)."""
    (a0, a1), (b0, b1) = a, b
    if a0 == a1:
        return [(b0 / a0, b1 / a0, a0 * a0 / (b1 - b0), 0.0)]
    if b0 == b1:
        return [(b0 / a1, b0 / a0, 0.0, b0 * b0 / (a1 - a0))]
    k = 1.0 / (3.0 * (a1 - a0) * (b1 - b0))
    cuts = sorted({b0 / a1, b0 / a0, b1 / a1, b1 / a0})
    pieces = []
    for lo, hi in zip(cuts[:-1], cuts[1:]):
        mid = (lo + hi) / 2.0
        c0 = ((a1 ** 3 if mid < b1 / a1 else 0.0) - (a0 ** 3 if mid > b0 / a0 else 0.0)) * k
        c3 = ((b1 ** 3 if mid > b1 / a1 else 0.0) - (b0 ** 3 if mid < b0 / a0 else 0.0)) * k
        pieces.append((lo, hi, c0, c3))
    return pieces


def _hinge(s: float, p: tuple[float, float], q: tuple[float, float], a: tuple[float, float],
           b: tuple[float, float]) -> float:
    """E[(s·P·A - (1 - P)·B)+] for independent P uniform on ``p`` (``q`` = 1 - its ends, given
    so that a mirrored call keeps them exact), A on ``a`` and B on ``b`` (a range of one value:
    that value). Needs s > 0, 0 < p0 <= p1 < 1 and positive A, B."""
    (p0, p1), (q0, q1) = p, q
    mean_p, mean_q = (p0 + p1) / 2.0, (q0 + q1) / 2.0
    r_lo, r_hi = s * p0 / q0, s * p1 / q1   # ψ is linear up to r_lo, 0 from r_hi
    dp = p1 - p0

    def psi(r: float) -> float:
        if r <= r_lo:
            return s * mean_p - r * mean_q
        if r >= r_hi:
            return 0.0
        y, v = r / (s + r), s / (s + r)
        return s * (p1 - y) ** 2 / (2.0 * dp * v)

    if a[0] == a[1] and b[0] == b[1]:
        return a[0] * psi(b[0] / a[0])
    total = 0.0
    for lo, hi, c0, c3 in _density_pieces(a, b):
        cuts = [lo, *sorted(x for x in (r_lo, r_hi) if lo < x < hi), hi]
        for x0, x1 in zip(cuts[:-1], cuts[1:]):
            mid, width = (x0 + x1) / 2.0, x1 - x0
            if width <= 0.0 or mid >= r_hi:
                continue
            if mid <= r_lo:   # ψ = d0 + d1·r
                d0, d1 = s * mean_p, -mean_q
                total += (c0 * width * (d0 + d1 * mid)
                          + c3 * width * (d0 * mid / (x0 * x0 * x1 * x1) + d1 / (x0 * x1)))
                continue
            # y from y0 to y1 (v = 1 - y from v0 down to v1), of width dy.
            y0, y1 = x0 / (s + x0), x1 / (s + x1)
            v0, v1 = s / (s + x0), s / (s + x1)
            dy = s * width / ((s + x0) * (s + x1))
            # ∫ (v - q1)²/v³ dv over [v1, v0] and ∫ (p1 - y)²/y³ dy over [y0, y1]
            i0 = (math.log1p(dy / v1) - 2.0 * q1 * dy / (v0 * v1)
                  + q1 * q1 * dy * (v0 + v1) / (2.0 * v0 * v0 * v1 * v1))
            i3 = (p1 * p1 * dy * (y0 + y1) / (2.0 * y0 * y0 * y1 * y1)
                  - 2.0 * p1 * dy / (y0 * y1) + math.log1p(dy / y0))
            total += (c0 * s * s * i0 + c3 * i3 / s) / (2.0 * dp)
    return total


def _switching_saving(hull: RocHull, box: ConditionBox, fpr: float, tpr: float) -> float:
    """Expected cost per case of the fixed choice (fpr, tpr), the Bayes one, minus that of the
    best hull vertex for each condition, conditions uniform over ``box``: in closed form (see
    the notes above), exact up to rounding."""
    p = _span(*box.p_pos)
    q = (1.0 - p[0], 1.0 - p[1])
    a = _span(box.cost_fn[0] - box.cost_tp, box.cost_fn[1] - box.cost_tp)
    b = _span(box.cost_fp[0] - box.cost_tn, box.cost_fp[1] - box.cost_tn)
    mean_u = (p[0] + p[1]) / 2.0 * (a[0] + a[1]) / 2.0
    mean_w = (q[0] + q[1]) / 2.0 * (b[0] + b[1]) / 2.0
    expected = mean_u * (1.0 - hull.tpr) + mean_w * hull.fpr
    v = int(np.argmin(expected))
    saving = mean_u * (1.0 - tpr) + mean_w * fpr - float(expected[v])
    d_f, d_t = np.diff(hull.fpr), np.diff(hull.tpr)
    # W/U lies in [lowest, highest] over the box: an edge steeper than every W/U gains on the
    # whole box (linear: the gain's mean), one flatter than every W/U nowhere; only the edges
    # between (the policy table's rows the box reaches) need a hinge.
    lowest = q[1] * b[0] / (p[1] * a[1])
    highest = q[0] * b[1] / (p[0] * a[0])
    with np.errstate(divide="ignore"):
        slope = d_t / d_f
    right = np.arange(d_f.size) >= v   # edge j joins vertices j and j + 1
    always = np.where(right, slope >= highest, slope <= lowest)
    gain = np.where(right, d_t * mean_u - d_f * mean_w, d_f * mean_w - d_t * mean_u)
    saving += float(np.sum(gain[always]))
    sometimes = np.flatnonzero((slope > lowest) & (slope < highest))
    for j in sometimes.tolist():
        if right[j]:
            saving += float(d_f[j]) * _hinge(float(slope[j]), p, q, a, b)
        else:   # (ΔF·W - ΔT·U)+: the same hinge with the roles of the classes swapped
            saving += float(d_t[j]) * _hinge(float(d_f[j] / d_t[j]), (q[1], q[0]),
                                             (p[1], p[0]), b, a)
    return float(saving)


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
