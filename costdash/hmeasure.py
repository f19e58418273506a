"""The H-measure (Hand 2009; Hand & Anagnostopoulos 2014), read off the classifier's envelope.

With cost proportion c = C(+|-)/(C(-|+) + C(+|-)) (the false positive's share) and the data's
class proportions π₀ = n₋/n, π₁ = n₊/n, the loss of the best threshold at c is

    L(c) = min over the ROC hull of  c·π₀·FPR + (1 - c)·π₁·(1 - TPR)
         = (π₁(1 - c) + π₀c) · E(x(c)),          x(c) = π₁(1 - c) / (π₁(1 - c) + π₀c),

E being the classifier's lower envelope in cost space (x = PC(+) at the data's prevalence); the
trivial classifiers' loss is L_max(c) = min(cπ₀, (1 - c)π₁). With c ~ Beta(a, b),

    H = 1 - ∫ L(c) Beta(c; a, b) dc / ∫ L_max(c) Beta(c; a, b) dc.

On each envelope piece L is linear in c, so both integrals are exact sums of regularized incomplete
beta functions (as :func:`costdash.beta_weighted_cost`).

The Beta follows Hand & Anagnostopoulos (2014) and the ``hmeasure`` package: for a severity ratio
SR = C(+|-)/C(-|+) > 0 (the mode of c/(1 - c)), a = 2 and b = 1 + 1/SR, so SR = 1 is Hand's
Beta(2, 2); by default SR = n₊/n₋, which puts the mode at PC(+) = 1/2. A Beta(a, b) of one's own
can be given instead.

Change of variables to cost space: ∫ L(c) u(c) dc = ∫ E(x) w(x) dx with
w(x) ∝ x^(b-1) (1 - x)^(a-1) / (π₁(1 - x) + π₀x)^(a+b+1); with balanced classes w is the
Beta(b, a) density, so H = 1 - beta_weighted_cost(E, b, a) / beta_weighted_cost(trivial, b, a).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from scipy.special import betainc

from costdash.costspace import LowerEnvelope, lower_envelope
from costdash.errors import ParameterError
from costdash.hull import classifier_hull
from costdash.roc import RocCurve

__all__ = ["HMeasure", "h_measure", "h_measure_beta"]


@dataclass(frozen=True)
class HMeasure:
    """The H-measure of one classifier and what it was computed with.

    Attributes
    ----------
    h : float
        1 - loss / max_loss, in [0, 1] for a classifier on or above the diagonal.
    loss : float
        Expected minimum loss ∫ L(c) Beta(c; a, b) dc.
    max_loss : float
        The same for the better trivial classifier.
    a, b : float
        The Beta distribution of the cost proportion c.
    severity_ratio : float or None
        The severity ratio the Beta came from (None when a Beta was given).
    """

    h: float
    loss: float
    max_loss: float
    a: float
    b: float
    severity_ratio: float | None


def h_measure_beta(severity_ratio: float) -> tuple[float, float]:
    """Hand & Anagnostopoulos's Beta for a severity ratio SR > 0: (2, 1 + 1/SR)."""
    if not (severity_ratio > 0 and math.isfinite(severity_ratio)):
        raise ParameterError(f"the severity ratio must be a positive finite number, got "
                             f"{severity_ratio!r}")
    return 2.0, 1.0 + 1.0 / severity_ratio


def _linear_beta_integral(c0, c1, slope, intercept, a: float, b: float) -> float:
    """Σ ∫_{c0}^{c1} (slope·c + intercept) Beta(c; a, b) dc."""
    mass = betainc(a, b, c1) - betainc(a, b, c0)
    first = a / (a + b) * (betainc(a + 1.0, b, c1) - betainc(a + 1.0, b, c0))
    return float(np.sum(slope * first + intercept * mass))


def h_measure(roc: RocCurve, *, severity_ratio: float | None = None,
              beta: tuple[float, float] | None = None,
              envelope: LowerEnvelope | None = None) -> HMeasure:
    """The H-measure of one classifier.

    Parameters
    ----------
    roc : RocCurve
    severity_ratio : float, optional
        SR = C(+|-)/C(-|+) at the Beta's mode; default n₊/n₋ (the ``hmeasure`` package's).
    beta : (float, float), optional
        A Beta(a, b) over the cost proportion instead (excludes ``severity_ratio``).
    envelope : LowerEnvelope, optional
        The classifier's own envelope, when already computed.
    """
    n_pos, n_neg = roc.n_pos, roc.n_neg
    pi1 = n_pos / (n_pos + n_neg)
    pi0 = 1.0 - pi1
    if beta is not None:
        if severity_ratio is not None:
            raise ParameterError("give a severity ratio or a Beta, not both")
        a, b = (float(v) for v in beta)
        if not (a > 0 and b > 0 and math.isfinite(a) and math.isfinite(b)):
            raise ParameterError(f"Beta parameters must be positive and finite, got {beta!r}")
        sr = None
    else:
        sr = n_pos / n_neg if severity_ratio is None else float(severity_ratio)
        a, b = h_measure_beta(sr)
    env = envelope if envelope is not None else lower_envelope(classifier_hull(roc))
    f = env.hull.fpr[env.vertex]
    t = env.hull.tpr[env.vertex]
    # Piece k covers PC(+) in [pc_k, pc_(k+1)], i.e. c in [c(pc_(k+1)), c(pc_k)].
    x = env.pc
    c = pi1 * (1.0 - x) / (pi1 * (1.0 - x) + pi0 * x)
    c_lo, c_hi = c[1:], c[:-1]
    # L(c) = c·π₀F + (1 - c)·π₁(1 - T) = c·(π₀F - π₁(1 - T)) + π₁(1 - T)
    loss = _linear_beta_integral(c_lo, c_hi, pi0 * f - pi1 * (1.0 - t), pi1 * (1.0 - t), a, b)
    # L_max: all-positive costs cπ₀, all-negative (1 - c)π₁; all-positive is cheaper for c < π₁.
    edges_lo = np.array([0.0, pi1])
    edges_hi = np.array([pi1, 1.0])
    max_loss = _linear_beta_integral(edges_lo, edges_hi, np.array([pi0, -pi1]),
                                     np.array([0.0, pi1]), a, b)
    return HMeasure(h=1.0 - loss / max_loss, loss=loss, max_loss=max_loss, a=a, b=b,
                    severity_ratio=sr)
