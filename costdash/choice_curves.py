"""What each way of choosing thresholds costs, in cost space (beyond the lower envelope).

The lower envelope is the cost of the best threshold chosen with hindsight. Hernández-Orallo,
Flach & Ferri ("Brier curves", ICML 2011; "A unified view of performance metrics", JMLR 2012)
compare it with thresholds chosen by a rule. Those papers are not in ``/work/shared/papers``;
everything here is derived from the definitions below (see ``docs/threshold-choice.md``).

The module is not named after :func:`threshold_choice`: a submodule of that name would be bound
as ``costdash.threshold_choice`` once imported, shadowing the function.

Notation. π = n₊/n is the data's prevalence, ROC point (F, T) = (FPR, TPR), x = PC(+) and
NE(x) = x(1 - T) + (1 - x)F the normalized expected cost (cost space). The *cost proportion*

    c = C(+|-) / (C(-|+) + C(+|-))                      (the false positive's share of the costs)

meets PC(+) at the data's prevalence through

    x(c) = π(1 - c) / (π(1 - c) + (1 - π)c),      c(x) = π(1 - x) / (π(1 - x) + (1 - π)x),

a decreasing bijection of [0, 1]. The papers' loss at cost proportion c, with the costs
normalised to C(-|+) + C(+|-) = 2 (their b = 2), is

    Q(c) = 2[c(1 - π)F + (1 - c)π(1 - T)] = 2(π(1 - c) + (1 - π)c) · NE(x(c)).

Threshold-choice methods, at condition x (cost proportion c = c(x)):

* **score-driven** (the Brier curve): flag score >= c, i.e. read scores as posterior
  probabilities at prevalence π and apply the Bayes rule. ∫₀¹ Q dc = the Brier score.
* **rate-driven**: flag the fraction r = 1 - c of all cases (ties and fractions by randomising
  between neighbouring ROC points, i.e. linear interpolation in the rate). ∫₀¹ Q dc =
  1/3 + π(1 - π)(1 - 2 AUC).
* **fixed**: one threshold whatever the conditions: one cost line; ∫₀¹ Q dc = the error rate.
* **optimal**: the best ROC-hull vertex at each condition: the classifier's own lower envelope.

Each curve reports two expected losses: ``expected_loss``, the mean of NE with PC(+) uniform (or
Beta(a, b)) on [0, 1], the measure of :attr:`costdash.LowerEnvelope.area` and
:func:`costdash.beta_weighted_cost`, so the gaps between methods are comparable with cost areas
(``calibration_loss`` = score-driven − optimal, and so on); and ``cost_proportion_loss``, the
papers' ∫₀¹ Q(c) dc with c uniform (b = 2), for which the identities above hold.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace

import numpy as np
from numpy.typing import ArrayLike, NDArray
from scipy.special import betainc, betaln

from costdash.costspace import LowerEnvelope, lower_envelope
from costdash.errors import ParameterError
from costdash.hull import classifier_hull
from costdash.roc import RocCurve, roc_curve

__all__ = [
    "METHODS",
    "ThresholdChoice",
    "ThresholdChoiceCurve",
    "brier_score",
    "cost_proportion_from_pc",
    "fixed_point_curve",
    "fixed_threshold_curve",
    "optimal_curve",
    "pc_from_cost_proportion",
    "probability_problem",
    "rate_driven_curve",
    "rate_driven_loss_from_auc",
    "score_driven_curve",
    "gaps_to_dict",
    "threshold_choice",
    "threshold_choice_to_dict",
]

METHODS = ("score_driven", "rate_driven", "fixed", "optimal")
"""The threshold-choice methods, in the order they are reported."""

_GAUSS_X, _GAUSS_W = np.polynomial.legendre.leggauss(8)
_RATE_CHUNK = 4096
"""Intervals per pass of the rate-driven quadrature (8 nodes each: 256 kB per temporary)."""


def _check_beta(beta: tuple[float, float]) -> tuple[float, float]:
    a, b = (float(v) for v in beta)
    if not (a > 0 and b > 0 and math.isfinite(a) and math.isfinite(b)):
        raise ParameterError(f"Beta parameters must be positive and finite, got a={a!r}, b={b!r}")
    return a, b


def _check_prevalence(prevalence: float) -> float:
    if not 0.0 < prevalence < 1.0:
        raise ParameterError(f"prevalence must lie strictly between 0 and 1, got {prevalence!r}")
    return float(prevalence)


def pc_from_cost_proportion(c: ArrayLike, prevalence: float) -> NDArray[np.float64]:
    """PC(+) at the data's prevalence π of cost proportion(s) c = C(+|-)/(C(-|+) + C(+|-)).

    x = π(1 - c) / (π(1 - c) + (1 - π)c); decreasing, x(0) = 1, x(1) = 0.
    """
    pi = _check_prevalence(prevalence)
    c = np.asarray(c, dtype=np.float64)
    return pi * (1.0 - c) / (pi * (1.0 - c) + (1.0 - pi) * c)


def cost_proportion_from_pc(pc: ArrayLike, prevalence: float) -> NDArray[np.float64]:
    """The inverse of :func:`pc_from_cost_proportion`: c = π(1 - x) / (π(1 - x) + (1 - π)x)."""
    pi = _check_prevalence(prevalence)
    x = np.asarray(pc, dtype=np.float64)
    return pi * (1.0 - x) / (pi * (1.0 - x) + (1.0 - pi) * x)


def probability_problem(score: ArrayLike) -> str | None:
    """Why ``score`` cannot be read as probabilities (None when every score lies in [0, 1])."""
    s = np.asarray(score, dtype=np.float64)
    if s.size == 0:
        return "no scores"
    if np.isnan(s).any():
        return "no scores (confusion-matrix counts only)"
    lo, hi = float(np.min(s)), float(np.max(s))
    if lo < 0.0 or hi > 1.0:
        return (f"scores range over [{lo:.6g}, {hi:.6g}], not within [0, 1]: they are not "
                f"probabilities (calibrate them first, e.g. Platt or isotonic on held-out folds)")
    return None


def brier_score(y_true: ArrayLike, score: ArrayLike) -> float:
    """Mean squared difference between the scores and the 0/1 labels.

    Raises
    ------
    ParameterError
        When the scores are not probabilities (not all in [0, 1]), with the reason.
    """
    y = np.asarray(y_true, dtype=bool)
    s = np.asarray(score, dtype=np.float64)
    problem = probability_problem(s)
    if problem is not None:
        raise ParameterError(f"no Brier score: {problem}")
    return float(np.mean((s - y) ** 2))


def rate_driven_loss_from_auc(auc: float, prevalence: float) -> float:
    """The papers' expected loss of rate-driven thresholds over uniform cost proportions (b = 2):
    1/3 + π(1 - π)(1 - 2 AUC)."""
    pi = _check_prevalence(prevalence)
    return 1.0 / 3.0 + pi * (1.0 - pi) * (1.0 - 2.0 * auc)


@dataclass(frozen=True, eq=False)
class ThresholdChoiceCurve:
    """One threshold-choice method's cost curve in cost space and its expected losses.

    Attributes
    ----------
    method : str
        One of :data:`METHODS`.
    pc, cost : ndarray of float64
        The curve: PC(+) non-decreasing from 0 to 1 and the normalized expected cost there. A
        repeated PC(+) is a jump (the score-driven curve is discontinuous at each score);
        between points the curve is linear, except for the rate-driven curve, which is sampled
        (exact at its breakpoints and on a grid).
    expected_loss : float
        Mean normalized expected cost with PC(+) ~ Beta(``beta``) (uniform by default).
    cost_proportion_loss : float
        ∫₀¹ Q(c) dc over uniform cost proportions at the data's prevalence, costs normalised to
        C(-|+) + C(+|-) = 2 (the papers' b = 2; see the module docstring).
    beta : (float, float)
        The Beta distribution of PC(+) behind ``expected_loss``.
    threshold : float or None
        The fixed threshold (``fixed`` only).
    """

    method: str
    pc: NDArray[np.float64]
    cost: NDArray[np.float64]
    expected_loss: float
    cost_proportion_loss: float
    beta: tuple[float, float] = (1.0, 1.0)
    threshold: float | None = None


@dataclass(frozen=True, eq=False)
class ThresholdChoice:
    """The threshold-choice curves of one classifier, and the gaps between them.

    ``score_driven`` is None, with ``score_driven_refused`` saying why, when the scores are not
    probabilities; ``fixed`` is None when no fixed threshold was asked for. With a
    ``calibration`` (e.g. ``"platt"``), ``score_driven`` is the curve of the calibrated scores
    (cross-fitted on folds, :mod:`costdash.calibration`) and ``calibrated_brier_score`` their
    Brier score; ``brier_score`` stays the raw scores' (None when they are not probabilities).
    """

    name: str
    prevalence: float
    optimal: ThresholdChoiceCurve
    rate_driven: ThresholdChoiceCurve | None
    score_driven: ThresholdChoiceCurve | None
    fixed: ThresholdChoiceCurve | None
    brier_score: float | None
    score_driven_refused: str | None = None
    calibration: str | None = None
    calibrated_brier_score: float | None = None

    def curve(self, method: str) -> ThresholdChoiceCurve | None:
        if method not in METHODS:
            raise ParameterError(f"unknown threshold-choice method {method!r}; "
                                 f"one of {', '.join(METHODS)}")
        return getattr(self, method)

    def _gap(self, curve: ThresholdChoiceCurve | None) -> float | None:
        return None if curve is None else curve.expected_loss - self.optimal.expected_loss

    @property
    def calibration_loss(self) -> float | None:
        """Score-driven minus optimal expected loss: what reading the scores as probabilities
        costs against the best thresholds (None without a score-driven curve)."""
        return self._gap(self.score_driven)

    @property
    def rate_loss(self) -> float | None:
        """Rate-driven minus optimal expected loss: what flagging a rate instead of choosing
        the best threshold costs."""
        return self._gap(self.rate_driven)

    @property
    def fixed_loss(self) -> float | None:
        """Fixed-threshold minus optimal expected loss: what one threshold for all conditions
        costs (None without a fixed threshold)."""
        return self._gap(self.fixed)


# --- piecewise-linear curves with one ROC point per piece ----------------------------------------

def _beta_linear(x0: NDArray[np.float64], x1: NDArray[np.float64], y0: NDArray[np.float64],
                 y1: NDArray[np.float64], a: float, b: float) -> float:
    """∫ y(x) Beta(x; a, b) dx over pieces on which y is linear from y0 at x0 to y1 at x1
    (zero-width pieces, the jumps, contribute nothing)."""
    keep = x1 > x0
    x0, x1, y0, y1 = x0[keep], x1[keep], y0[keep], y1[keep]
    if a == 1.0 and b == 1.0:
        return float(np.sum((x1 - x0) * (y0 + y1) / 2.0))
    slope = (y1 - y0) / (x1 - x0)
    intercept = y0 - slope * x0
    mass = betainc(a, b, x1) - betainc(a, b, x0)
    first = a / (a + b) * (betainc(a + 1.0, b, x1) - betainc(a + 1.0, b, x0))
    return float(np.sum(slope * first + intercept * mass))


def _point_pieces(method: str, edges: NDArray[np.float64], fpr: NDArray[np.float64],
                  tpr: NDArray[np.float64], prevalence: float, beta: tuple[float, float],
                  threshold: float | None = None) -> ThresholdChoiceCurve:
    """A curve made of one ROC point (fpr[k], tpr[k]) on each PC(+) interval edges[k:k+2]."""
    x0, x1 = edges[:-1], edges[1:]
    y0 = (1.0 - tpr) * x0 + fpr * (1.0 - x0)
    y1 = (1.0 - tpr) * x1 + fpr * (1.0 - x1)
    keep = x1 > x0
    pc = np.column_stack((x0[keep], x1[keep])).ravel()
    cost = np.column_stack((y0[keep], y1[keep])).ravel()
    # Drop the repeated point where two pieces meet without a jump.
    same = np.zeros(pc.size, dtype=bool)
    same[2::2] = (pc[2::2] == pc[1:-1:2]) & (cost[2::2] == cost[1:-1:2])
    pc, cost = pc[~same], cost[~same]
    a, b = beta
    expected = _beta_linear(x0, x1, y0, y1, a, b)
    # Q(c) = 2[c(1 - π)F + (1 - c)π(1 - T)]: linear in c over [c(x1), c(x0)]; exact at the midpoint.
    pi = prevalence
    c_hi = cost_proportion_from_pc(x0, pi)
    c_lo = cost_proportion_from_pc(x1, pi)
    c_mid = (c_hi + c_lo) / 2.0
    q_mid = 2.0 * (c_mid * (1.0 - pi) * fpr + (1.0 - c_mid) * pi * (1.0 - tpr))
    return ThresholdChoiceCurve(method=method, pc=pc, cost=cost, expected_loss=expected,
                                cost_proportion_loss=float(np.sum((c_hi - c_lo) * q_mid)),
                                beta=beta, threshold=threshold)


def _prevalence_of(roc: RocCurve) -> float:
    return roc.n_pos / (roc.n_pos + roc.n_neg)


def optimal_curve(roc: RocCurve, *, beta: tuple[float, float] = (1.0, 1.0),
                  envelope: LowerEnvelope | None = None) -> ThresholdChoiceCurve:
    """The best threshold at every condition: the classifier's own lower envelope.

    Parameters
    ----------
    roc : RocCurve
    beta : (float, float), optional
        Beta(a, b) distribution of PC(+) for ``expected_loss`` (uniform by default, which gives
        the envelope's area).
    envelope : LowerEnvelope, optional
        The classifier's envelope when already computed (its hull must be ``roc``'s).
    """
    beta = _check_beta(beta)
    env = envelope if envelope is not None else lower_envelope(classifier_hull(roc))
    hull = env.hull
    curve = _point_pieces("optimal", env.pc, hull.fpr[env.vertex], hull.tpr[env.vertex],
                          _prevalence_of(roc), beta)
    # The envelope is continuous: draw its own breakpoints (no rounding-level jumps).
    return replace(curve, pc=env.pc.copy(), cost=env.cost.copy())


def fixed_threshold_curve(roc: RocCurve, threshold: float, *,
                          beta: tuple[float, float] = (1.0, 1.0)) -> ThresholdChoiceCurve:
    """One threshold (flag score >= ``threshold``) whatever the conditions: one cost line.

    ``threshold`` may be +inf (flag nothing) or -inf (flag everything), not NaN.
    """
    if math.isnan(threshold):
        raise ParameterError("a fixed threshold must be a number, got NaN")
    return fixed_point_curve(roc, int(roc.point_at_threshold(threshold)), beta=beta,
                             threshold=float(threshold))


def fixed_point_curve(roc: RocCurve, index: int, *, beta: tuple[float, float] = (1.0, 1.0),
                      threshold: float | None = None) -> ThresholdChoiceCurve:
    """The ``fixed`` curve of ROC point ``index`` (e.g. a counted classifier's point, which
    has no threshold)."""
    beta = _check_beta(beta)
    if not 0 <= index < roc.size:
        raise ParameterError(f"no ROC point {index} (the curve has {roc.size})")
    if threshold is None and math.isfinite(roc.threshold[index]):
        threshold = float(roc.threshold[index])
    edges = np.array([0.0, 1.0])
    return _point_pieces("fixed", edges, roc.fpr[[index]], roc.tpr[[index]],
                         _prevalence_of(roc), beta, threshold=threshold)


def score_driven_curve(roc: RocCurve, *, beta: tuple[float, float] = (1.0, 1.0)
                       ) -> ThresholdChoiceCurve:
    """The Brier curve: at PC(+) = x flag score >= c(x), the cost proportion (module docstring).

    Exact: between the PC(+) values x(s) of consecutive distinct scores s the flagged set, hence
    the ROC point, is fixed, so the curve is linear there and jumps at each x(s).

    Raises
    ------
    ParameterError
        When the scores (``roc``'s thresholds) are not all in [0, 1], with the reason.
    """
    beta = _check_beta(beta)
    scores = roc.threshold[1:]  # the distinct scores, decreasing
    if np.isnan(scores).any():
        raise ParameterError("no score-driven curve: the classifier has no scores (counts only)")
    problem = probability_problem(scores)
    if problem is not None:
        raise ParameterError(f"no score-driven curve: {problem}")
    pi = _prevalence_of(roc)
    # Point k (flag the k highest distinct scores) is used while c lies in (s_k, s_(k-1)],
    # i.e. for PC(+) in [x(s_(k-1)), x(s_k)); x increases as the scores decrease.
    edges = np.concatenate(([0.0], pc_from_cost_proportion(scores, pi), [1.0]))
    edges = np.maximum.accumulate(np.clip(edges, 0.0, 1.0))  # rounding must not reorder them
    return _point_pieces("score_driven", edges, roc.fpr, roc.tpr, pi, beta)


def _rates(roc: RocCurve) -> NDArray[np.float64]:
    """Each ROC point's rate of flagged cases, (TP + FP) / n."""
    return (roc.tp.astype(np.float64) + roc.fp) / (roc.n_pos + roc.n_neg)


def _rate_point(roc: RocCurve, rate: NDArray[np.float64],
                rates: NDArray[np.float64] | None = None
                ) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
    r = _rates(roc) if rates is None else rates  # given: computed once per curve, not per call
    return np.interp(rate, r, roc.fpr), np.interp(rate, r, roc.tpr)


def _rate_cost(roc: RocCurve, x: NDArray[np.float64],
               rates: NDArray[np.float64] | None = None) -> NDArray[np.float64]:
    pi = _prevalence_of(roc)
    rate = 1.0 - cost_proportion_from_pc(x, pi)
    f, t = _rate_point(roc, rate, rates)
    return x * (1.0 - t) + (1.0 - x) * f


def rate_driven_curve(roc: RocCurve, *, beta: tuple[float, float] = (1.0, 1.0),
                      grid: int = 201) -> ThresholdChoiceCurve:
    """Flag the fraction r = 1 - c(x) of all cases at PC(+) = x (module docstring).

    A rate between two ROC points' rates is realised by randomising between them, so the ROC
    point moves linearly in the rate along the ROC polyline and the curve is continuous; in
    PC(+) it is not linear (r is a Möbius function of x), so it is returned at its breakpoints
    (where r meets an ROC point's rate) and on a ``grid``-point grid.

    ``cost_proportion_loss`` is exact (Simpson's rule on pieces where Q is quadratic in c).
    ``expected_loss`` with PC(+) uniform (the default) is exact too: the closed form of each
    rate piece's integral (:func:`_uniform_rate_loss`); with another Beta it is integrated in
    PC(+) by 8-point Gauss-Legendre on every interval between those points (endpoint
    singularities of a Beta with a < 1 or b < 1 by QUADPACK's algebraic weights), to about
    1e-12.
    """
    beta = _check_beta(beta)
    if grid < 2:
        raise ParameterError(f"grid needs at least 2 points, got {grid}")
    pi = _prevalence_of(roc)
    rates = _rates(roc)
    # Q(r) = 2[(1 - r)(1 - π)F(r) + rπ(1 - T(r))], c = 1 - r, quadratic on each rate piece.
    r0, r1 = rates[:-1], rates[1:]
    rm = (r0 + r1) / 2.0

    def q(r: NDArray[np.float64], f: NDArray[np.float64] | None = None,
          t: NDArray[np.float64] | None = None) -> NDArray[np.float64]:
        if f is None or t is None:
            f, t = _rate_point(roc, r, rates)
        return 2.0 * ((1.0 - r) * (1.0 - pi) * f + r * pi * (1.0 - t))

    # At the ROC points' own rates the interpolation is the points themselves (np.interp
    # returns fp[j] where x == xp[j]): no search for them.
    cp_loss = float(np.sum((r1 - r0) / 6.0 * (q(r0, roc.fpr[:-1], roc.tpr[:-1]) + 4.0 * q(rm)
                                              + q(r1, roc.fpr[1:], roc.tpr[1:]))))
    breaks = np.clip(pi * rates / (pi * rates + (1.0 - pi) * (1.0 - rates)), 0.0, 1.0)
    pc = _sorted_union(breaks, np.linspace(0.0, 1.0, grid))
    cost = _rate_cost(roc, pc, rates)
    a, b = beta
    if a == 1.0 and b == 1.0 and np.all(rates[1:] > rates[:-1]):
        return ThresholdChoiceCurve(method="rate_driven", pc=pc, cost=cost,
                                    expected_loss=_uniform_rate_loss(roc, rates, pi),
                                    cost_proportion_loss=cp_loss, beta=beta)
    # Another Beta, or rates out of order (confusion matrices that are not one ranking's):
    # Gauss-Legendre on the intervals.
    lo, hi = pc[:-1], pc[1:]
    pieces = np.empty(lo.size)
    # In chunks of intervals whose 8 nodes' temporaries stay in cache (a curve of 150,000
    # breakpoints has 1.2 million nodes); the same operations on the same numbers, so the same
    # result bit for bit. The uniform density is exactly 1: no logarithms (issue 23).
    uniform = a == 1.0 and b == 1.0
    for start in range(0, lo.size, _RATE_CHUNK):
        stop = min(start + _RATE_CHUNK, lo.size)
        half = (hi[start:stop] - lo[start:stop])[:, None] / 2.0
        nodes = (lo[start:stop] + hi[start:stop])[:, None] / 2.0 + half * _GAUSS_X[None, :]
        values = _rate_cost(roc, nodes, rates)
        if not uniform:
            log_density = ((a - 1.0) * np.log(nodes) + (b - 1.0) * np.log1p(-nodes)
                           - betaln(a, b))
            values = values * np.exp(log_density)
        pieces[start:stop] = np.sum(values * _GAUSS_W[None, :], axis=1) * half[:, 0]
    for k, singular in ((0, a < 1.0), (pieces.size - 1, b < 1.0)):
        if singular:
            pieces[k] = _singular_end_piece(roc, float(lo[k]), float(hi[k]), a, b)
    return ThresholdChoiceCurve(method="rate_driven", pc=pc, cost=cost,
                                expected_loss=float(np.sum(pieces)),
                                cost_proportion_loss=cp_loss, beta=beta)


def _sorted_union(breaks: NDArray[np.float64], grid: NDArray[np.float64]
                  ) -> NDArray[np.float64]:
    """``np.union1d(breaks, grid)`` (the sorted distinct values of both) for an increasing
    ``grid``, by merging when ``breaks`` is already in order (it is, but for rounding): no sort
    of the ~150,000 breakpoints (issue 23)."""
    if breaks.size and not np.all(breaks[1:] >= breaks[:-1]):
        return np.union1d(breaks, grid)
    merged = np.insert(breaks, np.searchsorted(breaks, grid), grid)
    keep = np.empty(merged.size, dtype=bool)
    keep[:1] = True
    np.not_equal(merged[1:], merged[:-1], out=keep[1:])
    return merged[keep]


_K2_SERIES_BELOW = 0.75
"""|eta| under which K2(eta) is summed as its power series (above, its closed form has lost
at most two digits to cancellation)."""


def _k2(eta: NDArray[np.float64]) -> NDArray[np.float64]:
    """K2(eta) = ∫₀¹ s² / (1 + eta s)³ ds for eta > -1.

    Closed form (log(1 + eta) + 2/(1 + eta) - 1/(2(1 + eta)²) - 3/2) / eta³, whose terms cancel
    as eta -> 0; there the series sum_k (k + 1)(k + 2) / (2(k + 3)) (-eta)^k, to 1e-18 of its
    first term (a few terms for the ~1e-4 of a curve of 150,000 points)."""
    out = np.empty_like(eta)
    small = np.abs(eta) < _K2_SERIES_BELOW
    if small.any():
        e = eta[small]
        top = float(np.max(np.abs(e)))
        terms = 0
        while top > 0.0 and (terms + 1) * (terms + 2) / (2.0 * (terms + 3)) * top ** terms > 1e-18:
            terms += 1
        acc = np.zeros_like(e)
        for k in range(terms, -1, -1):  # Horner
            acc *= -e
            acc += (k + 1) * (k + 2) / (2.0 * (k + 3))
        out[small] = acc
    big = ~small
    if big.any():
        e = eta[big]
        w = 1.0 + e
        out[big] = (np.log1p(e) + 2.0 / w - 0.5 / (w * w) - 1.5) / (e * e * e)
    return out


def _uniform_rate_loss(roc: RocCurve, rates: NDArray[np.float64], pi: float) -> float:
    """∫₀¹ NE(x) dx of the rate-driven curve, exactly (to rounding), for increasing ``rates``.

    In the rate r the PC(+) is x(r) = πr / D(r), D(r) = πr + (1 - π)(1 - r), with
    dx/dr = π(1 - π) / D², and NE(x(r)) = N(r) / D(r), N(r) = πr(1 - T) + (1 - π)(1 - r)F. On
    the rate piece [r_j, r_j + Δ] F and T are linear, so with r = r_j + ρ, N = n0 + n1ρ + n2ρ²
    and D = D_j(1 + ηρ/Δ), η = (2π - 1)Δ / D_j, and the piece's integral is

        π(1 - π) Δ / D_j³ · (n0 K0(η) + n1Δ K1(η) + n2Δ² K2(η)),  K_m(η) = ∫₀¹ sᵐ/(1 + ηs)³ ds,

    with K0 = (η + 2) / (2(1 + η)²), K1 = 1 / (2(1 + η)²) and :func:`_k2`. (1 + η = D_(j+1)/D_j
    lies within [π/(1 - π), (1 - π)/π].) Agrees with an 80-digit evaluation to a few units in
    the last place (tests/test_rate_driven_closed_form.py), and with the Gauss-Legendre
    quadrature it replaces to 3e-16 relative on 20 curves of 150,000 points, at a sixth of its
    time (issue 23).
    """
    fpr, tpr = roc.fpr, roc.tpr
    r, f, t = rates[:-1], fpr[:-1], tpr[:-1]
    dr, df, dt = np.diff(rates), np.diff(fpr), np.diff(tpr)
    d0 = pi * r + (1.0 - pi) * (1.0 - r)
    eta = (2.0 * pi - 1.0) * dr / d0
    n0 = pi * r * (1.0 - t) + (1.0 - pi) * (1.0 - r) * f
    n1 = pi * ((1.0 - t) * dr - r * dt) + (1.0 - pi) * ((1.0 - r) * df - f * dr)  # n1·Δ
    n2 = -(pi * dt + (1.0 - pi) * df) * dr                                          # n2·Δ²
    w = 1.0 + eta
    k1 = 0.5 / (w * w)
    pieces = dr / (d0 * d0 * d0) * (n0 * ((eta + 2.0) * k1) + n1 * k1 + n2 * _k2(eta))
    return pi * (1.0 - pi) * float(np.sum(pieces))


def _singular_end_piece(roc: RocCurve, lo: float, hi: float, a: float, b: float) -> float:
    """∫ NE(x) Beta(x; a, b) dx over [lo, hi] with QUADPACK's algebraic end-point weights."""
    norm = math.exp(-betaln(a, b))
    if lo == 0.0:  # weight x^(a-1); the other factor is smooth here
        def f(x: float) -> float:
            return float(_rate_cost(roc, np.array([x]))[0]) * (1.0 - x) ** (b - 1.0)
        wvar = (a - 1.0, 0.0)
    else:  # hi == 1: weight (1 - x)^(b-1)
        def f(x: float) -> float:
            return float(_rate_cost(roc, np.array([x]))[0]) * x ** (a - 1.0)
        wvar = (0.0, b - 1.0)
    # Imported here: scipy.integrate brings scipy.optimize, .linalg, .sparse and more, a third
    # of a second that only a Beta with a < 1 or b < 1 needs (issue 23, analyze --json).
    from scipy import integrate

    value, _ = integrate.quad(f, lo, hi, weight="alg", wvar=wvar, epsabs=1e-14, epsrel=1e-12)
    return norm * value


def _brier_from_roc(roc: RocCurve) -> float:
    """The Brier score from the ROC counts: each distinct score s with its tp and fp examples
    adds tp(1 - s)² + fp s²."""
    s = roc.threshold[1:]
    tp = np.diff(roc.tp.astype(np.float64))
    fp = np.diff(roc.fp.astype(np.float64))
    return float(np.sum(tp * (1.0 - s) ** 2 + fp * s ** 2) / (roc.n_pos + roc.n_neg))


def threshold_choice(y_true: ArrayLike | None = None, score: ArrayLike | None = None, *,
                     roc: RocCurve | None = None, name: str = "",
                     fixed_threshold: float | None = None,
                     fixed_point: int | None = None,
                     beta: tuple[float, float] = (1.0, 1.0),
                     envelope: LowerEnvelope | None = None,
                     calibrated: RocCurve | None = None,
                     calibration: str | None = None) -> ThresholdChoice:
    """Every threshold-choice curve of one classifier, with its Brier score.

    Parameters
    ----------
    y_true, score : array-like, optional
        Labels and scores (or give ``roc``).
    roc : RocCurve, optional
        The classifier's ROC curve (a counted classifier's has no scores: no score-driven curve,
        no Brier score).
    name : str, optional
    fixed_threshold : float, optional
        Adds the ``fixed`` curve at this threshold.
    fixed_point : int, optional
        Or at this ROC point (index into ``roc``), e.g. the one chosen at today's conditions.
    beta : (float, float), optional
        Beta(a, b) over PC(+) for every ``expected_loss`` (uniform by default).
    envelope : LowerEnvelope, optional
        The classifier's own envelope, when already computed.
    calibrated : RocCurve, optional
        The ROC curve of the classifier's calibrated scores (e.g.
        :func:`costdash.calibration.calibrate_classifier`): the score-driven curve is then
        theirs. ``calibration`` names the method.
    """
    if roc is None:
        if y_true is None or score is None:
            raise ParameterError("give y_true and score, or roc")
        roc = roc_curve(y_true, score, name=name)
    beta = _check_beta(beta)
    optimal = optimal_curve(roc, beta=beta, envelope=envelope)
    rate = rate_driven_curve(roc, beta=beta)
    refused: str | None = None
    score_driven: ThresholdChoiceCurve | None = None
    try:
        score_driven = score_driven_curve(roc if calibrated is None else calibrated, beta=beta)
    except ParameterError as exc:
        refused = str(exc)
    bs: float | None = None
    if score is not None and y_true is not None:
        if probability_problem(score) is None:
            bs = brier_score(y_true, score)
    elif probability_problem(roc.threshold[1:]) is None:
        bs = _brier_from_roc(roc)
    if fixed_threshold is not None and fixed_point is not None:
        raise ParameterError("give a fixed threshold or a fixed point, not both")
    fixed = (fixed_threshold_curve(roc, fixed_threshold, beta=beta)
             if fixed_threshold is not None
             else None if fixed_point is None else fixed_point_curve(roc, fixed_point, beta=beta))
    return ThresholdChoice(name=name or roc.name, prevalence=_prevalence_of(roc), optimal=optimal,
                           rate_driven=rate, score_driven=score_driven, fixed=fixed,
                           brier_score=bs, score_driven_refused=refused,
                           calibration=None if calibrated is None else (calibration or "given"),
                           calibrated_brier_score=(None if calibrated is None
                                                   else _brier_from_roc(calibrated)))


def _curve_dict(curve: ThresholdChoiceCurve | None, max_points: int | None) -> dict | None:
    if curve is None:
        return None
    pc, cost = curve.pc, curve.cost
    if max_points is not None and pc.size > max_points:
        from costdash.roc import thin_indices

        idx = thin_indices(pc.size, max_points)
        pc, cost = pc[idx], cost[idx]
    out = {"pc": pc.tolist(), "cost": cost.tolist(), "expected_loss": curve.expected_loss,
           "cost_proportion_loss": curve.cost_proportion_loss}
    if curve.method == "fixed":
        out["threshold"] = (curve.threshold if curve.threshold is not None
                            and math.isfinite(curve.threshold) else None)
    return out


def threshold_choice_to_dict(choice: ThresholdChoice, *, max_points: int | None = None) -> dict:
    """``{"score_driven" | "rate_driven" | "fixed" | "optimal": {"pc", "cost", "expected_loss",
    "cost_proportion_loss"} | null}`` (``fixed`` also has ``threshold``); ``max_points`` thins
    the curves for display (the losses stay exact)."""
    return {m: _curve_dict(getattr(choice, m), max_points) for m in METHODS}


def gaps_to_dict(choice: ThresholdChoice) -> dict:
    """The named gaps between the methods' expected losses, and why a curve is missing."""
    return {"calibration_loss": choice.calibration_loss, "rate_loss": choice.rate_loss,
            "fixed_loss": choice.fixed_loss, "score_driven_refused": choice.score_driven_refused,
            "beta": list(choice.optimal.beta), "calibration": choice.calibration,
            "calibrated_brier_score": choice.calibrated_brier_score}
